//! Issue 30, item 4, end to end: inputs crafted to make the binary allocate without limit or
//! write without limit are refused with a clear message, or handled within a bound. Each test
//! reproduces one finding; docs/security.md catalogues them. (The memory and time of large
//! reports are measured by `scripts/report-bounds.sh`, not asserted here.)

use faultbench_core::identity::{IDENTITY_FILE, MAX_IDENTITY_BYTES, RunIdentity};
use std::path::{Path, PathBuf};
#[path = "support/cli.rs"]
mod cli;
use cli::{faultbench_within, fixtures};

fn faultbench(args: &[&str]) -> (i32, String, String) {
    faultbench_within(args, 300).expect("faultbench finished within 300 s")
}

/// A runs root holding only an identity that records `shard`.
fn root_with_shard(dir: &Path, name: &str, shard: &str) -> PathBuf {
    let root = dir.join(name);
    std::fs::create_dir_all(&root).unwrap();
    let mut id = RunIdentity::example();
    id.extra.insert("shard".into(), shard.into());
    id.write(&root).unwrap();
    root
}

/// `--shard 1/4294967295` was accepted (the bench ran, and recorded the shard for `merge` to
/// expand); a split is now at most 10,000 parts, refused before anything is written.
#[test]
fn a_shard_count_over_the_cap_is_refused_on_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let (code, _, err) = faultbench(&[
        "bench",
        "--emulator",
        "mock",
        "--agents",
        "baseline",
        "--dataset",
        fixtures().join("dataset").to_str().unwrap(),
        "--topologies",
        fixtures().join("topologies").to_str().unwrap(),
        "--runs-root",
        runs.to_str().unwrap(),
        "--no-report",
        "--scope",
        "all",
        "--shard",
        "1/4294967295",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--shard") && err.contains("N ≤ 10000"),
        "{err}"
    );
    assert!(!runs.exists(), "nothing written");
}

/// `"shard": "1/4294967295"` in an identity made `merge` list every missing shard: over 2.2 GB
/// of strings, then an abort. It is now refused at once, naming the root, writing nothing.
#[test]
fn merge_refuses_a_recorded_shard_count_over_the_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let a = root_with_shard(tmp.path(), "a", "1/4294967295");
    let b = root_with_shard(tmp.path(), "b", "2/4294967295");
    let into = tmp.path().join("merged");
    let (code, _, err) = faultbench_within(
        &[
            "merge",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
            "--into",
            into.to_str().unwrap(),
        ],
        60,
    )
    .expect("merge answers at once");
    assert_ne!(code, 0, "{err}");
    assert!(
        err.contains(&a.display().to_string()) && err.contains("records shard `1/4294967295`"),
        "{err}"
    );
    assert!(!into.exists(), "nothing written");
}

/// An identity.json of 8 MB (under the old 8 MiB cap) was parsed: 2.2 GB of memory. The
/// report now leaves it out with a warning naming the file and the cap.
#[test]
fn report_leaves_out_an_identity_over_the_size_cap() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    std::fs::create_dir_all(&root).unwrap();
    let text = serde_json::to_string(&RunIdentity::example()).unwrap();
    let padding = format!("[{}0]", "0,".repeat(4_000_000));
    let text = format!("{},\"x\":{padding}}}", text.strip_suffix('}').unwrap());
    assert!(text.len() > 8_000_000 && (text.len() as u64) < 8 << 20);
    std::fs::write(root.join(IDENTITY_FILE), text).unwrap();
    std::fs::write(
        root.join("MANIFEST.csv"),
        format!(
            "{}\nbase80,p1,Kath1,kath1-x,react,m,scored,True,True,1.0,1.0,0.9,10,8,100,5,50,0.1,200.5\n",
            faultbench_core::record::RELEASE_MANIFEST_HEADER
        ),
    )
    .unwrap();
    let out = tmp.path().join("report");
    let (code, _, err) = faultbench(&[
        "report",
        root.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resamples",
        "100",
        "--print",
        "false",
    ]);
    assert_eq!(code, 0, "{err}");
    let json = std::fs::read_to_string(out.join("report.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("identity.json")
            && warnings.contains(&format!("at most {MAX_IDENTITY_BYTES} bytes")),
        "{warnings}"
    );
    assert!(v["configuration"].is_null(), "the identity was not used");
}

/// A 2 MiB agent name made 549 MB of report files (and printed 57 MB of Markdown). The report
/// now shows it cut, and the whole output stays small.
#[test]
fn report_of_a_two_mebibyte_agent_name_is_small() {
    let tmp = tempfile::tempdir().unwrap();
    let reg = tmp.path().join("MANIFEST.csv");
    let name = "x".repeat(2 << 20);
    let mut text = format!("{}\n", faultbench_core::record::RELEASE_MANIFEST_HEADER);
    for agent in [name.as_str(), "short"] {
        for id in ["kath1-x", "kath1-false-premise-y"] {
            text.push_str(&format!(
                "base80,p1,Kath1,{id},{agent},m,scored,True,False,1.0,,0.5,3,10,0,0,5,0.5,1.5\n"
            ));
        }
    }
    std::fs::write(&reg, text).unwrap();
    let out = tmp.path().join("report");
    let (code, stdout, err) = faultbench(&[
        "report",
        reg.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--resamples",
        "100",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(stdout.len() < 100_000, "{} bytes printed", stdout.len());
    assert!(err.len() < 10_000, "{} bytes of warnings", err.len());
    assert!(
        err.contains("MANIFEST.csv:2: agent longer than 256 characters"),
        "{err}"
    );
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(
        md.contains(&format!("| {}… |", "x".repeat(79))),
        "cut label"
    );
    let total: u64 = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    assert!(total < 2_000_000, "the report's files take {total} bytes");
}

/// `--resamples` had no bound (each statistic's replicates are held together).
#[test]
fn resamples_over_the_cap_are_refused() {
    let (code, _, err) = faultbench(&["report", "x.csv", "--resamples", "1000001"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("from 0 to 1000000"), "{err}");
}
