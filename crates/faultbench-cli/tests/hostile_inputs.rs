//! Crafted inputs a careful user could be handed (shared datasets, other people's runs roots):
//! the shipped binary must never write outside the runs root, never hang, never panic.
//! Each test reproduces one finding of issue 19 end to end; docs/security.md catalogues them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
#[path = "support/cli.rs"]
mod cli;
use cli::{faultbench, faultbench_within, fixtures};

/// Every file under `dir` (not following links), relative to it.
fn files_under(dir: &Path) -> BTreeSet<PathBuf> {
    fn walk(base: &Path, d: &Path, out: &mut BTreeSet<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                walk(base, &p, out);
            } else {
                out.insert(p.strip_prefix(base).unwrap().to_path_buf());
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

/// A copy of the fixture topology `Tri` (lab.conf, baseline, mock network) at `dir`.
fn tri_topology(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    for f in ["lab.conf", "baseline.toml", "mock.toml"] {
        std::fs::copy(fixtures().join("topologies/Tri").join(f), dir.join(f)).unwrap();
    }
}

/// The fixture's correct-fault scenario with its headers replaced.
fn scenario_with(id: &str, topology: &str) -> String {
    let text = std::fs::read_to_string(fixtures().join("dataset/tri_Q/base/tri-r1-ospfd-down.txt"))
        .unwrap();
    text.replace("Scenario: tri-r1-ospfd-down", &format!("Scenario: {id}"))
        .replace("Topology: Tri", &format!("Topology: {topology}"))
}

fn bench_mock(
    dataset: &Path,
    topologies: &Path,
    runs: &Path,
    extra: &[&str],
) -> (i32, String, String) {
    let mut args = vec![
        "bench",
        "--emulator",
        "mock",
        "--agents",
        "baseline",
        "--dataset",
        dataset.to_str().unwrap(),
        "--topologies",
        topologies.to_str().unwrap(),
        "--runs-root",
        runs.to_str().unwrap(),
        "--no-report",
    ];
    args.extend_from_slice(extra);
    faultbench(&args)
}

/// Finding 1: `Topology: /abs/dir` and `Scenario: ../../../../X` made `bench` write
/// `result.json`/`trace.jsonl` outside the runs root (and the topology lookup followed the header
/// to any folder). Now the scenario reader refuses such ids, naming the file and line, and
/// nothing is written anywhere but the runs root.
#[test]
fn path_headers_never_leave_the_runs_root() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    tri_topology(&outside.join("lab"));
    let topologies = tmp.path().join("topologies");
    tri_topology(&topologies.join("Tri"));
    let cases = [
        (
            "tri-abs-topology",
            outside.join("lab").display().to_string(),
        ),
        ("../../../../escaped", "Tri".to_string()),
        ("tri-dotdot-topology", "../outside/lab".to_string()),
    ];
    for (i, (id, topo)) in cases.iter().enumerate() {
        let dataset = tmp.path().join(format!("ds{i}"));
        let base = dataset.join("tri_Q/base");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::write(base.join("crafted.txt"), scenario_with(id, topo)).unwrap();
        let before = files_under(tmp.path());
        let runs = tmp.path().join(format!("runs{i}"));
        let (code, out, err) = bench_mock(&dataset, &topologies, &runs, &["--scope", "all"]);
        let after = files_under(tmp.path());
        let new: Vec<_> = after
            .difference(&before)
            .filter(|p| !p.starts_with(format!("runs{i}")))
            .collect();
        assert!(
            new.is_empty(),
            "case {id} / {topo}: wrote outside the runs root: {new:?}\n{out}\n{err}"
        );
        assert_ne!(
            code, 0,
            "case {id} / {topo}: a crafted header is refused\n{out}\n{err}"
        );
        assert!(
            err.contains("crafted.txt:2") || err.contains("crafted.txt:3"),
            "the error names the file and line: {err}"
        );
    }
}

/// Finding 1: a crafted `result.json` whose key names a path is an error naming the file, and
/// `judge runs ROOT --write` writes each record back where it was read — also when ROOT is a
/// sub-folder of a runs root (it used to write copies to `sub/Tri/Tri/…`).
#[test]
fn judge_write_goes_back_where_the_record_was_read() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let (code, out, err) = bench_mock(
        &fixtures().join("dataset"),
        &fixtures().join("topologies"),
        &runs,
        &["--scope", "all"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let before = files_under(tmp.path());
    let (code, out, err) = faultbench(&[
        "judge",
        "runs",
        runs.join("Tri").to_str().unwrap(),
        "--write",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let after = files_under(tmp.path());
    assert_eq!(before, after, "re-judging in place adds no file");
    assert!(!runs.join("Tri/Tri").exists());

    // A crafted record: its key points outside the root.
    let victim = files_under(&runs)
        .into_iter()
        .find(|p| p.ends_with("result.json"))
        .unwrap();
    let path = runs.join(&victim);
    let text = std::fs::read_to_string(&path).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["key"]["topology"] = serde_json::json!("../../escaped");
    std::fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
    let before = files_under(tmp.path());
    let (_, out, err) = faultbench(&["judge", "runs", runs.to_str().unwrap(), "--write"]);
    let after = files_under(tmp.path());
    let new: Vec<_> = after.difference(&before).collect();
    assert!(
        new.iter().all(|p| p.starts_with("runs")),
        "wrote outside the runs root: {new:?}\n{out}\n{err}"
    );
    assert!(!tmp.path().join("escaped").exists());
    assert!(
        err.contains(&path.display().to_string()) && err.contains("topology"),
        "the crafted record is named: {err}"
    );
}

fn manifest_rows(runs: &Path) -> Vec<String> {
    std::fs::read_to_string(runs.join("MANIFEST.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// Finding 4: a manifest repeating ids made `--jobs N` workers race on one run folder (exit 2,
/// "cannot archive a finished run … trace.jsonl: No such file or directory") and, with one job,
/// gave one result.json several MANIFEST rows. Repeats are now dropped at plan time with a
/// warning; each run is archived once.
#[test]
fn repeated_ids_run_once_each() {
    let tmp = tempfile::tempdir().unwrap();
    let manifest = tmp.path().join("m.csv");
    std::fs::write(
        &manifest,
        "scenario\ntri-r1-ospfd-down\ntri-false-premise-web-slow\ntri-r1-ospfd-down\ntri-r1-ospfd-down\ntri-false-premise-web-slow\n",
    )
    .unwrap();
    for jobs in ["1", "4"] {
        let runs = tmp.path().join(format!("runs-{jobs}"));
        let (code, out, err) = bench_mock(
            &fixtures().join("dataset"),
            &fixtures().join("topologies"),
            &runs,
            &["--manifest", manifest.to_str().unwrap(), "--jobs", jobs],
        );
        assert_eq!(code, 0, "--jobs {jobs}\n{out}\n{err}");
        assert!(
            err.contains("3 repeated"),
            "the repeats are reported: {err}"
        );
        let rows = manifest_rows(&runs);
        assert_eq!(rows.len(), 2, "one row per run: {rows:?}");
        let results = files_under(&runs)
            .into_iter()
            .filter(|p| p.ends_with("result.json"))
            .count();
        assert_eq!(results, 2);
    }
}

/// Finding 4: 2M ids in `--dry-run` used 6 GB. The plan now holds each run once, so the same
/// manifest plans in bounded memory (the child runs under a 768 MiB data limit).
#[test]
fn two_million_ids_plan_in_bounded_memory() {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let tmp = tempfile::tempdir().unwrap();
    let manifest = tmp.path().join("big.txt");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&manifest).unwrap());
    for i in 0..2_000_000u32 {
        let id = if i % 2 == 0 {
            "tri-r1-ospfd-down"
        } else {
            "tri-false-premise-web-slow"
        };
        writeln!(f, "{id}").unwrap();
    }
    f.flush().unwrap();
    drop(f);
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_faultbench"));
    cmd.args([
        "bench",
        "--emulator",
        "mock",
        "--dry-run",
        "--agents",
        "baseline",
    ])
    .arg("--manifest")
    .arg(&manifest)
    .arg("--dataset")
    .arg(fixtures().join("dataset"))
    .arg("--topologies")
    .arg(fixtures().join("topologies"))
    .arg("--runs-root")
    .arg(tmp.path().join("runs"));
    // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit {
                rlim_cur: 768 << 20,
                rlim_max: 768 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{:?}\n{stdout}\n{stderr}", out.status);
    assert!(stdout.contains("2 run(s) to do"), "{stdout}");
    assert!(stderr.contains("1999998 repeated"), "{stderr}");
}

/// Finding 6: symlink loops in a runs root hung `report` and `bench --resume` with growing
/// memory (the scans followed directory links); one self-link made 2 runs count as 82. Now the
/// walks never follow directory links: both finish and count each run once.
#[test]
fn symlink_loops_in_a_runs_root_are_not_followed() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let (code, out, err) = bench_mock(
        &fixtures().join("dataset"),
        &fixtures().join("topologies"),
        &runs,
        &["--scope", "all"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    std::os::unix::fs::symlink(".", runs.join("loop")).unwrap();
    std::os::unix::fs::symlink("..", runs.join("Tri/up")).unwrap();
    std::os::unix::fs::symlink("../..", runs.join("Tri/base__tri-r1-ospfd-down/upup")).unwrap();
    std::os::unix::fs::symlink(tmp.path(), runs.join("Tri/outside")).unwrap();

    // `bench --resume` opens the root (rebuilding the registry from the result.json files).
    let res = faultbench_within(
        &[
            "bench",
            "--emulator",
            "mock",
            "--agents",
            "baseline",
            "--scope",
            "all",
            "--dataset",
            fixtures().join("dataset").to_str().unwrap(),
            "--topologies",
            fixtures().join("topologies").to_str().unwrap(),
            "--runs-root",
            runs.to_str().unwrap(),
            "--resume",
            "--no-report",
        ],
        60,
    );
    let (code, out, err) = res.expect("bench --resume finishes");
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(err.contains("all 2 planned runs are finished"), "{err}");
    assert_eq!(manifest_rows(&runs).len(), 2);

    // `report` on the folder without its registry reads the result.json files.
    std::fs::remove_file(runs.join("MANIFEST.csv")).unwrap();
    let out_dir = tmp.path().join("report");
    let res = faultbench_within(
        &[
            "report",
            runs.to_str().unwrap(),
            "--out",
            out_dir.to_str().unwrap(),
        ],
        60,
    );
    let (code, out, err) = res.expect("report finishes");
    assert_eq!(code, 0, "{out}\n{err}");
    // (The report opens with the root's configuration, then the run count.)
    assert!(
        out.lines().any(|l| l == "2 runs (scored 2)"),
        "each run once: {out}"
    );
}
