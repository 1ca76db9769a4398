//! Inputs that are not what their names say, and data that speaks to the terminal (issue 30,
//! items 4–6): a FIFO where a file belongs must be refused at once instead of blocking `open`
//! (with the signals caught, forever); escape sequences in records must reach the terminal
//! escaped; a 1 MB value must not come back whole in an error. docs/security.md catalogues them.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

struct Output {
    code: Option<i32>,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

impl Output {
    fn text(&self) -> String {
        format!(
            "{}{}",
            String::from_utf8_lossy(&self.stdout),
            String::from_utf8_lossy(&self.stderr)
        )
    }
}

/// Runs the binary with a deadline; `None` when it had to be killed (it hung). Its output is
/// read while it runs, so that a large output cannot fill the pipe and stall it.
fn faultbench_within(args: &[&str], secs: u64) -> Option<Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut r: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = r.read_to_end(&mut buf);
            buf
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let status = ends_within(&mut child, secs)?;
    Some(Output {
        code: status.code(),
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    })
}

fn faultbench(args: &[&str]) -> Output {
    faultbench_within(args, 120).expect("finishes")
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn bench_args<'a>(runs: &'a str, dataset: &'a str, topologies: &'a str) -> Vec<&'a str> {
    vec![
        "bench",
        "--emulator",
        "mock",
        "--agents",
        "baseline",
        "--dataset",
        dataset,
        "--topologies",
        topologies,
        "--runs-root",
        runs,
        "--no-report",
    ]
}

/// A runs root of the fixture's two scenarios, run by the baseline agent on the mock emulator.
fn mock_runs_root(dir: &Path) -> PathBuf {
    let runs = dir.join("runs");
    let (ds, topo) = (fixtures().join("dataset"), fixtures().join("topologies"));
    let mut args = bench_args(
        runs.to_str().unwrap(),
        ds.to_str().unwrap(),
        topo.to_str().unwrap(),
    );
    args.extend(["--scope", "all"]);
    let out = faultbench(&args);
    assert_eq!(out.code, Some(0), "{}", out.text());
    runs
}

fn result_files(runs: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![runs.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let ft = e.file_type().unwrap();
            if ft.is_dir() {
                stack.push(e.path());
            } else if e.file_name() == "result.json" {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// Findings: `validate FIFO`, `scenario check FIFO`, `bench --manifest FIFO` (and `report` of
/// a registry that is a FIFO) blocked in `open` forever — the last with SIGTERM and SIGINT
/// caught and ignored. Each now exits at once with an error naming the FIFO.
#[test]
fn a_fifo_given_as_input_is_refused_at_once() {
    let tmp = tempfile::tempdir().unwrap();
    let fifo = tmp.path().join("scenario.txt");
    mkfifo(&fifo);
    let manifest = tmp.path().join("manifest.csv");
    mkfifo(&manifest);
    let registry = tmp.path().join("MANIFEST.csv");
    mkfifo(&registry);
    let runs = tmp.path().join("runs");
    let (ds, topo) = (fixtures().join("dataset"), fixtures().join("topologies"));
    let mut bench = bench_args(
        runs.to_str().unwrap(),
        ds.to_str().unwrap(),
        topo.to_str().unwrap(),
    );
    bench.extend(["--manifest", manifest.to_str().unwrap()]);
    let report_out = tmp.path().join("report");
    let cases: Vec<(Vec<&str>, &Path)> = vec![
        (vec!["validate", fifo.to_str().unwrap()], &fifo),
        (vec!["scenario", "check", fifo.to_str().unwrap()], &fifo),
        (bench, &manifest),
        (
            vec![
                "report",
                registry.to_str().unwrap(),
                "--out",
                report_out.to_str().unwrap(),
            ],
            &registry,
        ),
    ];
    for (args, named) in cases {
        let out = faultbench_within(&args, 20)
            .unwrap_or_else(|| panic!("`faultbench {}` blocked on the FIFO", args.join(" ")));
        let text = out.text();
        assert_ne!(out.code, Some(0), "{args:?}: {text}");
        assert!(
            text.contains(&named.display().to_string()) && text.contains("FIFO"),
            "{args:?}: the error names the FIFO: {text}"
        );
    }
    assert!(!runs.exists(), "nothing was written for a refused manifest");
}

/// Spawns a bench whose agent waits an hour and returns it once its runs have started (the
/// `configuration:` note is sent when the runs root is opened for the runs), with the rest of
/// its standard error.
fn waiting_bench(tmp: &Path) -> (std::process::Child, std::thread::JoinHandle<String>) {
    let runs = tmp.join("runs");
    let (ds, topo) = (fixtures().join("dataset"), fixtures().join("topologies"));
    let mut args = bench_args(
        runs.to_str().unwrap(),
        ds.to_str().unwrap(),
        topo.to_str().unwrap(),
    );
    args.extend(["--scope", "all"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(&args)
        .env("FAULTBENCH_AGENT_DELAY_SECS", "3600")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("configuration:") {
            break;
        }
    }
    assert!(seen.contains("configuration:"), "the runs started: {seen}");
    let rest = std::thread::spawn(move || {
        lines.map_while(Result::ok).fold(seen, |mut acc, l| {
            acc.push_str(&l);
            acc.push('\n');
            acc
        })
    });
    (child, rest)
}

/// Waits up to `secs` for the child to end.
fn ends_within(child: &mut std::process::Child, secs: u64) -> Option<std::process::ExitStatus> {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < deadline {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// SIGTERM and SIGINT end a bench that waits on its runs: the handlers that turn them into a
/// cancellation are installed only around the runs (planning keeps the default action), and
/// the cancellation ends the process with 130 after tearing the labs down.
#[test]
fn sigterm_and_sigint_end_a_waiting_bench() {
    use std::os::unix::process::ExitStatusExt;
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let tmp = tempfile::tempdir().unwrap();
        let (mut child, rest) = waiting_bench(tmp.path());
        // SAFETY: kill(2) on the pid of a child we spawned and have not reaped.
        assert_eq!(unsafe { libc::kill(child.id() as i32, sig) }, 0);
        let status = ends_within(&mut child, 20);
        let err = rest.join().unwrap();
        let status = status.unwrap_or_else(|| panic!("signal {sig} did not end the bench: {err}"));
        // Either the cancellation ran (130), or the signal came before its handler was in
        // place and ended the process by its default action.
        assert!(
            status.code() == Some(130) || status.signal() == Some(sig),
            "signal {sig}: {status:?}\n{err}"
        );
        if status.code() == Some(130) {
            assert!(err.contains("interrupted"), "{err}");
        }
    }
}

/// No raw ESC (0x1b) or C1 CSI (U+009B, bytes C2 9B) in `out`.
fn assert_no_control(what: &str, out: &[u8]) {
    let text = String::from_utf8_lossy(out);
    assert!(
        !out.contains(&0x1b) && !text.contains('\u{9b}') && !text.contains('\u{7}'),
        "{what} printed a raw control character: {text:?}"
    );
}

/// Finding: escape sequences in records (an agent name clearing the screen, a diagnosis
/// retitling the window, a C1 CSI) and in file names were printed raw by `report`, `judge`,
/// `view`, `stats` and `validate`. They are now shown as visible escapes.
#[test]
fn escape_sequences_from_records_and_files_are_shown_escaped() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = mock_runs_root(tmp.path());
    let evil = "evil\u{1b}[2J\u{1b}]0;pwned\u{7}\u{9b}31m";
    for path in result_files(&runs) {
        edit_json(&path, |v| {
            v["key"]["agent"] = serde_json::json!(evil);
            v["model"] = serde_json::json!("m\u{1b}[31mred");
            v["diagnosis"]["text"] = serde_json::json!("diag \u{1b}[2J \u{1b}]8;;http://x\u{1b}\\");
            v["error"] = serde_json::json!("err\u{1b}[2J");
        });
    }
    // Without a registry the report reads the records themselves.
    std::fs::remove_file(runs.join("MANIFEST.csv")).unwrap();
    // A run folder whose name holds an escape sequence (judge labels runs by their folder).
    let first = result_files(&runs).remove(0);
    let agent_dir = first.parent().unwrap().parent().unwrap();
    std::fs::rename(agent_dir, agent_dir.with_file_name("x\u{1b}[2Jy")).unwrap();

    let report_dir = tmp.path().join("report");
    let out = faultbench(&[
        "report",
        runs.to_str().unwrap(),
        "--out",
        report_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{}", out.text());
    assert_no_control("report (stdout)", &out.stdout);
    assert_no_control("report (stderr)", &out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("evil\\x1b[2J\\x1b]0;pwned\\x07\\u{9b}31m"),
        "the agent is shown, escaped: {stdout}"
    );

    let out = faultbench(&["judge", "runs", runs.to_str().unwrap()]);
    assert_eq!(out.code, Some(0), "{}", out.text());
    assert_no_control("judge runs (stdout)", &out.stdout);
    assert_no_control("judge runs (stderr)", &out.stderr);
    assert!(out.text().contains("x\\x1b[2Jy"), "{}", out.text());

    let view_dir = tmp.path().join("view");
    let out = faultbench(&[
        "view",
        runs.to_str().unwrap(),
        "--out",
        view_dir.to_str().unwrap(),
    ]);
    assert_eq!(out.code, Some(0), "{}", out.text());
    assert_no_control("view (stdout)", &out.stdout);
    assert_no_control("view (stderr)", &out.stderr);

    // A dataset with a broken scenario whose file name holds escape sequences.
    let dataset = tmp.path().join("dataset");
    let base = dataset.join("tri_Q/base");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::copy(
        fixtures().join("dataset/tri_Q/base/tri-r1-ospfd-down.txt"),
        base.join("tri-r1-ospfd-down.txt"),
    )
    .unwrap();
    std::fs::write(
        base.join("bad\u{1b}[2J\u{9b}1;1H.txt"),
        "not a scenario \u{9b}31m\n",
    )
    .unwrap();
    let topologies = fixtures().join("topologies");
    for args in [
        vec![
            "stats",
            dataset.to_str().unwrap(),
            "--topologies",
            topologies.to_str().unwrap(),
        ],
        vec!["validate", dataset.to_str().unwrap()],
        vec![
            "list",
            "--dataset",
            dataset.to_str().unwrap(),
            "--scope",
            "all",
        ],
    ] {
        let out = faultbench(&args);
        assert_no_control(&format!("{args:?} (stdout)"), &out.stdout);
        assert_no_control(&format!("{args:?} (stderr)"), &out.stderr);
        assert!(
            out.text().contains("bad\\x1b[2J\\u{9b}1;1H.txt"),
            "{args:?}: the file is named, escaped: {}",
            out.text()
        );
    }
}

/// Findings: a 900 KB scenario header value came back whole from `validate`, and a 1 MB value
/// in a record (a string where a number belongs) came back whole — twice — from `report` and
/// `judge`. Values quoted in messages are now cut to 200 characters with the bytes left out;
/// the manifest and registry errors, already cut, now say how much.
#[test]
fn a_megabyte_value_is_quoted_as_an_excerpt() {
    let tmp = tempfile::tempdir().unwrap();
    let scenario =
        std::fs::read_to_string(fixtures().join("dataset/tri_Q/base/tri-r1-ospfd-down.txt"))
            .unwrap();
    let big = "x".repeat(1_000_000);
    let bad_scenario = tmp.path().join("tri-r1-ospfd-down.txt");
    std::fs::write(
        &bad_scenario,
        scenario.replace(
            "Fault family: routing daemon down",
            &format!("Ticket style: {}", &big[..900_000]),
        ),
    )
    .unwrap();
    let out = faultbench(&["validate", bad_scenario.to_str().unwrap()]);
    assert_eq!(out.code, Some(1), "{}", out.text());
    assert!(
        out.text().len() < 1024,
        "validate: {} bytes",
        out.text().len()
    );
    assert!(
        out.text().contains("… (899800 more bytes)"),
        "{}",
        out.text()
    );

    // A scenario id of 1 MB in a bench manifest.
    let manifest = tmp.path().join("m.csv");
    std::fs::write(&manifest, format!("scenario\n{big}\n")).unwrap();
    let runs = tmp.path().join("runs-m");
    let (ds, topo) = (fixtures().join("dataset"), fixtures().join("topologies"));
    let mut bench = bench_args(
        runs.to_str().unwrap(),
        ds.to_str().unwrap(),
        topo.to_str().unwrap(),
    );
    bench.extend(["--manifest", manifest.to_str().unwrap()]);
    let out = faultbench(&bench);
    assert_eq!(out.code, Some(2), "{}", out.text());
    assert!(out.text().len() < 1024, "bench: {} bytes", out.text().len());
    assert!(
        out.text().contains("… (999800 more bytes)"),
        "{}",
        out.text()
    );

    // A 1 MB count in a registry row, and a 1 MB string where a record has a number.
    let runs = mock_runs_root(tmp.path());
    let registry = std::fs::read_to_string(runs.join("MANIFEST.csv")).unwrap();
    let mut lines: Vec<String> = registry.lines().map(str::to_string).collect();
    let mut fields: Vec<String> = lines[1].split(',').map(str::to_string).collect();
    fields[12] = big.clone(); // tool_calls
    lines[1] = fields.join(",");
    let bad_registry = tmp.path().join("registry/MANIFEST.csv");
    std::fs::create_dir_all(bad_registry.parent().unwrap()).unwrap();
    std::fs::write(&bad_registry, lines.join("\n") + "\n").unwrap();
    let report_dir = tmp.path().join("report-r");
    let out = faultbench(&[
        "report",
        bad_registry.to_str().unwrap(),
        "--out",
        report_dir.to_str().unwrap(),
    ]);
    assert!(
        out.stderr.len() < 1024,
        "report: {} bytes",
        out.stderr.len()
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("more bytes)"),
        "{}",
        out.text()
    );

    std::fs::remove_file(runs.join("MANIFEST.csv")).unwrap();
    for path in result_files(&runs) {
        edit_json(&path, |v| v["key"]["pass"] = serde_json::json!(big));
    }
    let report_dir = tmp.path().join("report");
    for args in [
        vec![
            "report",
            runs.to_str().unwrap(),
            "--out",
            report_dir.to_str().unwrap(),
        ],
        vec!["judge", "runs", runs.to_str().unwrap()],
    ] {
        let out = faultbench(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.stderr.len() < 4096,
            "{args:?}: {} bytes of errors for two records",
            out.stderr.len()
        );
        assert!(err.contains("more bytes)"), "{args:?}: {err}");
    }
}
