//! `faultbench report --gap HAND GENERATED` on two benchmark roots (mock emulator, baseline
//! agent): the gap files are written, with a category table and a fault-family table read
//! from the runs' records.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

fn bench_root(runs: &Path) {
    let o = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(["bench", "--emulator", "mock", "--agents", "baseline"])
        .args(["--scope", "all", "--passes", "1"])
        .arg("--dataset")
        .arg(fixtures().join("dataset"))
        .arg("--topologies")
        .arg(fixtures().join("topologies"))
        .arg("--runs-root")
        .arg(runs)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn report_gap_writes_category_and_family_tables() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("hand"), tmp.path().join("gen"));
    bench_root(&a);
    bench_root(&b);
    let out = tmp.path().join("gap");
    let o = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args([
            "report",
            "--resamples",
            "300",
            "--seed",
            "3",
            "--print",
            "false",
        ])
        .arg("--gap")
        .arg(&a)
        .arg(&b)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("gap.json")).unwrap()).unwrap();
    let cats = json["by_category"].as_array().unwrap();
    assert!(!cats.is_empty(), "{json}");
    // The same deterministic agent on the same scenarios: no gap.
    for r in cats {
        assert!(r["gap"].as_f64().unwrap().abs() < 1e-9, "{r}");
    }
    assert!(
        !json["by_family"].as_array().unwrap().is_empty(),
        "families from the records: {json}"
    );
    let md = std::fs::read_to_string(out.join("gap.md")).unwrap();
    assert!(
        md.contains("Memorisation gap") && md.contains("Correct-Fault"),
        "{md}"
    );
    assert!(out.join("gap.csv").is_file());
    // One source only is a usage error.
    let o = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(["report", "--gap"])
        .arg(&a)
        .output()
        .unwrap();
    assert!(!o.status.success());
}
