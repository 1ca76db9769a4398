//! `faultbench bench` on real labs (Linux namespaces + FRR; needs root, as in CI): a kill -9 in
//! the middle of a benchmark, then `--resume`, leaves every planned run archived exactly once and
//! no lab of the killed process behind.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/netns")
}

fn bench_cmd(runs: &Path, passes: &str) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_faultbench"));
    c.arg("bench")
        .args([
            "--emulator",
            "netns",
            "--agents",
            "baseline",
            "--scope",
            "all",
            "--no-report",
        ])
        .args(["--passes", passes])
        .arg("--dataset")
        .arg(fixtures().join("dataset"))
        // The lab itself, not a link to it: a topology root's links out of the root are refused.
        .arg("--topologies")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../faultbench-emu/tests/labs"))
        .arg("--runs-root")
        .arg(runs);
    c
}

fn manifest_rows(runs: &Path) -> Vec<Vec<String>> {
    std::fs::read_to_string(runs.join("MANIFEST.csv"))
        .unwrap_or_default()
        .lines()
        .skip(1)
        .map(|l| l.split(',').map(str::to_string).collect())
        .collect()
}

/// Lab instances (under /run/faultbench/labs) whose recorded owner is `pid`.
fn labs_owned_by(pid: u32) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir("/run/faultbench/labs") else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| {
            let text = std::fs::read_to_string(e.path().join("state.json")).ok()?;
            let v: serde_json::Value = serde_json::from_str(&text).ok()?;
            (v["owner"]["pid"].as_u64() == Some(u64::from(pid)))
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect()
}

#[test]
fn kill_minus_nine_on_live_labs_then_resume() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let mut child = bench_cmd(&runs, "3")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(300);
    while manifest_rows(&runs).is_empty() {
        assert!(Instant::now() < deadline, "no run finished in 300 s");
        assert!(
            child.try_wait().unwrap().is_none(),
            "bench ended before the kill"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(
        !labs_owned_by(pid).is_empty() || manifest_rows(&runs).len() < 6,
        "nothing was in flight"
    );

    let out = bench_cmd(&runs, "3").arg("--resume").output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    let rows = manifest_rows(&runs);
    let mut keys: Vec<(String, String)> =
        rows.iter().map(|r| (r[3].clone(), r[1].clone())).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(
        (rows.len(), keys.len()),
        (6, 6),
        "2 scenarios × 3 passes, each once: {rows:?}"
    );
    for r in &rows {
        assert!(
            matches!(r[6].as_str(), "scored" | "no_submission" | "no_output"),
            "an agent result, not an infrastructure failure: {r:?}\n{err}"
        );
    }
    assert!(
        labs_owned_by(pid).is_empty(),
        "the killed bench left labs: {:?}",
        labs_owned_by(pid)
    );
    assert!(labs_owned_by(std::process::id()).is_empty());
}

/// Ctrl-C while a run works and the labs of the next runs are being prepared: the bench stops
/// (exit 130, resumable) and no lab of it is left, prestarted ones included.
#[test]
fn ctrl_c_tears_down_running_and_prestarted_labs() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let mut child = bench_cmd(&runs, "3")
        .args(["--prestart", "2"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let deadline = Instant::now() + Duration::from_secs(300);
    // Once a run is archived, the next run works and up to two more labs are prepared.
    while manifest_rows(&runs).is_empty() {
        assert!(Instant::now() < deadline, "no run finished in 300 s");
        assert!(child.try_wait().unwrap().is_none(), "bench ended early");
        std::thread::sleep(Duration::from_millis(100));
    }
    let mut alive = 0;
    while Instant::now() < deadline {
        alive = labs_owned_by(pid).len();
        if alive >= 2 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(alive >= 2, "a run's lab and a prestarted one were up");
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(pid as i32, libc::SIGINT) }, 0);
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert!(err.contains("--resume"), "{err}");
    assert!(
        labs_owned_by(pid).is_empty(),
        "labs left after Ctrl-C: {:?}",
        labs_owned_by(pid)
    );
}
