//! `faultbench bench` end to end on the mock emulator: archive, registry, report, resume, and
//! infrastructure failures retried on resume.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

fn bench(runs: &Path, topologies: &Path, extra: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .arg("bench")
        .args([
            "--emulator",
            "mock",
            "--agents",
            "baseline",
            "--scope",
            "all",
        ])
        .arg("--dataset")
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(topologies)
        .arg("--runs-root")
        .arg(runs)
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn manifest_rows(runs: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(runs.join("MANIFEST.csv"))
        .unwrap()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

#[test]
fn archives_every_run_reports_and_refuses_to_overwrite() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let (code, out, err) = bench(
        &runs,
        &fixtures().join("topologies"),
        &["--passes", "2", "--jobs", "2"],
    );
    assert_eq!(code, 0, "{out}\n{err}");
    let rows = manifest_rows(&runs);
    assert_eq!(rows.len(), 4, "2 scenarios × 2 passes");
    for r in &rows {
        assert_eq!(r[6], "scored", "{r:?}\n{err}");
        let dir = runs
            .join(&r[2])
            .join(format!(
                "{}__{}",
                if r[0] == "base80" { "base" } else { "cex" },
                r[3]
            ))
            .join("baseline")
            .join(&r[1]);
        assert!(dir.join("result.json").is_file(), "{}", dir.display());
        assert!(dir.join("trace.jsonl").is_file());
    }
    assert!(runs.join("report/report.html").is_file());
    assert!(out.contains("Table 4"), "{out}");

    let (code, _, err) = bench(&runs, &fixtures().join("topologies"), &["--passes", "2"]);
    assert_eq!(code, 2, "re-running into a used runs root needs --resume");
    assert!(err.contains("--resume"), "{err}");
    let (code, _, err) = bench(
        &runs,
        &fixtures().join("topologies"),
        &["--passes", "2", "--resume"],
    );
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("nothing to run"), "{err}");
    assert_eq!(manifest_rows(&runs).len(), 4);
}

#[test]
fn a_lab_that_does_not_deploy_is_deploy_incomplete_and_retried_on_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let topo = tmp.path().join("topologies/Tri");
    std::fs::create_dir_all(&topo).unwrap();
    for f in ["lab.conf", "baseline.toml"] {
        std::fs::copy(fixtures().join("topologies/Tri").join(f), topo.join(f)).unwrap();
    }
    // No mock.toml: the mock emulator cannot deploy this lab.
    let runs = tmp.path().join("runs");
    let (code, _, err) = bench(&runs, &tmp.path().join("topologies"), &[]);
    assert_eq!(code, 0, "{err}");
    let rows = manifest_rows(&runs);
    assert!(rows.iter().all(|r| r[6] == "deploy_incomplete"), "{rows:?}");
    let report = std::fs::read_to_string(runs.join("report/report.md")).unwrap();
    assert!(report.contains("deploy_incomplete 2"), "{report}");
    assert!(
        report.contains("| Correct-Fault | – | – | 0 |"),
        "never an agent result:\n{report}"
    );

    std::fs::copy(
        fixtures().join("topologies/Tri/mock.toml"),
        topo.join("mock.toml"),
    )
    .unwrap();
    let (code, _, err) = bench(&runs, &tmp.path().join("topologies"), &["--resume"]);
    assert_eq!(code, 0, "{err}");
    let rows = manifest_rows(&runs);
    assert_eq!(rows.len(), 2, "each run exactly once: {rows:?}");
    assert!(rows.iter().all(|r| r[6] == "scored"), "{rows:?}");
}

#[test]
fn dry_run_prints_plan_and_cost_and_runs_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args([
            "bench",
            "--experiment",
            "e1",
            "--agents",
            "baseline,react",
            "--dry-run",
            "--dataset",
        ])
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(fixtures().join("topologies"))
        .arg("--runs-root")
        .arg(&runs)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("plan: 12 run(s) to do"), "{stdout}");
    assert!(stdout.contains("estimated cost"), "{stdout}");
    assert_eq!(manifest_rows(&runs).len(), 0);
}

/// The triangle mock with every rule slowed down, so that a run takes a while.
fn slow_topology(dir: &Path, delay_ms: u32) {
    let topo = dir.join("Tri");
    std::fs::create_dir_all(&topo).unwrap();
    for f in ["lab.conf", "baseline.toml"] {
        std::fs::copy(fixtures().join("topologies/Tri").join(f), topo.join(f)).unwrap();
    }
    let mock = std::fs::read_to_string(fixtures().join("topologies/Tri/mock.toml")).unwrap();
    let slow = mock.replace("[[rule]]\n", &format!("[[rule]]\ndelay_ms = {delay_ms}\n"));
    std::fs::write(topo.join("mock.toml"), slow).unwrap();
}

#[test]
fn kill_minus_nine_then_resume_gives_every_run_exactly_once() {
    let tmp = tempfile::tempdir().unwrap();
    let topologies = tmp.path().join("topologies");
    slow_topology(&topologies, 40);
    let runs = tmp.path().join("runs");
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .arg("bench")
        .args([
            "--emulator",
            "mock",
            "--agents",
            "baseline",
            "--scope",
            "all",
            "--passes",
            "4",
        ])
        .arg("--dataset")
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(&topologies)
        .arg("--runs-root")
        .arg(&runs)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // Kill it hard once at least one run is archived (and before all are).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let n = std::fs::read_to_string(runs.join("MANIFEST.csv"))
            .map(|t| t.lines().count().saturating_sub(1))
            .unwrap_or(0);
        if n >= 1 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no run finished in 60 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = manifest_rows(&runs).len();
    assert!(
        before < 8,
        "the kill came too late to test anything ({before} runs done)"
    );

    let (code, _, err) = bench(&runs, &topologies, &["--passes", "4", "--resume"]);
    assert_eq!(code, 0, "{err}");
    let rows = manifest_rows(&runs);
    let mut keys: Vec<(String, String)> =
        rows.iter().map(|r| (r[3].clone(), r[1].clone())).collect();
    keys.sort();
    let n = keys.len();
    keys.dedup();
    assert_eq!(n, 8, "2 scenarios × 4 passes: {rows:?}");
    assert_eq!(keys.len(), 8, "no run twice");
    let (records, bad) = faultbench_core::record::scan_records(&runs);
    assert!(bad.is_empty());
    assert_eq!(records.len(), 8);
}
