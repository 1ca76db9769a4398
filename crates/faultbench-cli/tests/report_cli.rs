//! `faultbench report` with intervals and `faultbench report --compare` on real (mock-emulator)
//! benchmark roots.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

fn faultbench(args: &[&str], paths: &[&Path]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_faultbench"));
    c.args(args);
    for p in paths {
        c.arg(p);
    }
    c.output().unwrap()
}

fn bench_root(runs: &Path) {
    let o = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args([
            "bench",
            "--emulator",
            "mock",
            "--agents",
            "baseline",
            "--scope",
            "all",
            "--passes",
            "2",
        ])
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
fn report_writes_intervals_and_compare_flags_identity_differences() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    bench_root(&a);
    bench_root(&b);

    let out = tmp.path().join("rep");
    let o = faultbench(
        &[
            "report",
            "--resamples",
            "300",
            "--seed",
            "7",
            "--print",
            "false",
        ],
        &[&a],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o2 = faultbench(
        &[
            "report",
            "--resamples",
            "300",
            "--seed",
            "7",
            "--print",
            "false",
            "--out",
        ],
        &[&out, &a],
    );
    assert!(
        o2.status.success(),
        "{}",
        String::from_utf8_lossy(&o2.stderr)
    );
    let stats = std::fs::read_to_string(out.join("statistics.csv")).unwrap();
    let cf = stats
        .lines()
        .find(|l| l.starts_with("Table 4,Correct-Fault,baseline,"))
        .unwrap_or_else(|| panic!("{stats}"));
    let f: Vec<&str> = cf.split(',').collect();
    assert!(!f[4].is_empty() && !f[5].is_empty(), "an interval: {cf}");
    // Same seed, same file.
    assert_eq!(
        std::fs::read_to_string(a.join("report/statistics.csv")).unwrap(),
        stats
    );
    assert!(out.join("variation.svg").is_file());

    std::fs::write(
        a.join("identity.json"),
        r#"{"judge": "rubric", "turns": 20}"#,
    )
    .unwrap();
    std::fs::write(
        b.join("identity.json"),
        r#"{"judge": "rubric", "turns": 30}"#,
    )
    .unwrap();
    let cmp = tmp.path().join("cmp");
    let o = faultbench(
        &["report", "--resamples", "200", "--print", "false", "--out"],
        &[&cmp],
    );
    assert_eq!(o.status.code(), Some(2), "a source or --compare is needed");
    let o = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(["report", "--resamples", "200", "--print", "false", "--out"])
        .arg(&cmp)
        .arg("--compare")
        .arg(&a)
        .arg(&b)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let md = std::fs::read_to_string(cmp.join("compare.md")).unwrap();
    assert!(
        md.contains("DIFFERENT run identities (1 fields): turns: 20 vs 30"),
        "{md}"
    );
    assert!(md.contains("B − A"), "{md}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("DIFFERENT run identities"));
    assert!(cmp.join("compare.csv").is_file() && cmp.join("compare.json").is_file());
}
