//! `faultbench mcp` driven by the official MCP Python client (PyPI `mcp`), on a mock network
//! and on a live netns lab (root). The client script is
//! `crates/faultbench-emu/tests/mcp_client.py`; the Python comes from the venv that
//! `scripts/install-deps.sh` creates (override with `FAULTBENCH_MCP_PYTHON`).

use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_faultbench");

fn emu_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../faultbench-emu/tests")
}

/// Runs the client script; returns its JSON report.
fn run_client(marker: &Path, hosts: [&str; 3], server_args: &[&str]) -> serde_json::Value {
    let out = Command::new(faultbench_testkit::mcp_python())
        .arg(emu_dir().join("mcp_client.py"))
        .arg(BIN)
        .arg(marker)
        .args(hosts)
        .arg("--")
        .args(server_args)
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "client failed:\n{stdout}\n{stderr}");
    assert!(!marker.exists(), "the injection marker was created");
    serde_json::from_str(stdout.trim().lines().last().unwrap_or(""))
        .unwrap_or_else(|e| panic!("no JSON report ({e}):\n{stdout}\n{stderr}"))
}

fn check_report(v: &serde_json::Value) {
    assert_eq!(v["tools"], 22);
    assert_eq!(v["bad_arguments_refused"], 5);
    assert_eq!(v["injections_refused"], 8);
    assert!(
        v["unknown_tool_error"]
            .as_str()
            .unwrap()
            .contains("unknown tool")
    );
}

#[test]
fn python_client_against_a_mock_network() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("marker");
    let record = dir.path().join("calls.jsonl");
    let mock = emu_dir().join("data/mock/triangle.toml");
    let v = run_client(
        &marker,
        ["pc1", "pc2", "r1"],
        &[
            "--mock",
            mock.to_str().unwrap(),
            "--record",
            record.to_str().unwrap(),
        ],
    );
    check_report(&v);
    // Every call the client made is in the record, with its flags.
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&record)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3 + 5 + 1 + 8 + 1 + 1, "{lines:#?}");
    assert_eq!(lines[0]["tool"], "ping_pair");
    assert!(
        lines
            .iter()
            .all(|l| l["duration_ms"].is_u64() && l["output_chars"].is_u64())
    );
    assert_eq!(
        lines
            .iter()
            .filter(|l| l["error"]
                .as_str()
                .is_some_and(|e| e.contains("invalid arguments")))
            .count(),
        5 + 8
    );
}

/// Brings a lab up with the CLI and takes it down when dropped.
struct LiveLab(String);
impl LiveLab {
    fn up(name: &str) -> LiveLab {
        let dir = emu_dir().join("labs/h6_tools");
        let out = Command::new(BIN)
            .args(["lab", "up", dir.to_str().unwrap(), "--name", name])
            .output()
            .expect("faultbench runs");
        assert!(
            out.status.success(),
            "lab up failed (needs root and FRR):\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        LiveLab(name.to_string())
    }
}
impl Drop for LiveLab {
    fn drop(&mut self) {
        let _ = Command::new(BIN).args(["lab", "down", &self.0]).output();
    }
}

#[test]
fn python_client_against_a_live_netns_lab() {
    let name = format!("h6m-{}", std::process::id() % 100_000);
    let lab = LiveLab::up(&name);
    let dir = tempfile::tempdir().unwrap();
    // The marker sits where a host shell would create it if an argument ever reached one.
    let marker = dir.path().join("injected");
    let v = run_client(
        &marker,
        ["pc1", "web1", "r1"],
        &["--lab", &lab.0, "--policy", "full"],
    );
    check_report(&v);
    assert!(v["frr_show_ip_route_lines"].as_u64().unwrap() > 8, "{v}");
    // vtysh got `show version; touch …` as one word and refused it; no shell ran it.
    assert!(
        v["frr_exec_injection"]
            .as_str()
            .unwrap()
            .contains("exit code"),
        "{v}"
    );
    drop(lab);
}
