//! `bench --shard K/N` and `faultbench merge` on the mock emulator: one topology's 25
//! scenarios run as 3 shards and merged give the same MANIFEST rows (keys, statuses, scores)
//! as the unsharded run; merge refuses roots of different configurations (naming both roots
//! and the field) and one run recorded twice with different results, writing nothing.
//!
//! The 25 scenarios are written by the test on the fixture topology `Tri` (its mock network):
//! a fault the mock models (scored), a false premise (scored), and a fault on a device the lab
//! lacks (`injection_failed`), so that statuses differ between runs.

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

/// 25 scenarios of topology Tri, three kinds in turn.
fn dataset(dir: &Path) -> PathBuf {
    let ds = dir.join("dataset");
    let src = fixtures().join("dataset/tri_Q");
    let fault = std::fs::read_to_string(src.join("base/tri-r1-ospfd-down.txt")).unwrap();
    let premise = std::fs::read_to_string(src.join("cex/tri-false-premise-web-slow.txt")).unwrap();
    for i in 0..25 {
        let (layer, text, old) = match i % 3 {
            0 => ("base", fault.clone(), "tri-r1-ospfd-down"),
            1 => ("cex", premise.clone(), "tri-false-premise-web-slow"),
            _ => (
                "base",
                fault.replace("device: r1", "device: r9"),
                "tri-r1-ospfd-down",
            ),
        };
        let id = format!("tri-s{i:02}");
        let folder = ds.join("tri_Q").join(layer);
        std::fs::create_dir_all(&folder).unwrap();
        let text = text.replace(&format!("Scenario: {old}"), &format!("Scenario: {id}"));
        std::fs::write(folder.join(format!("{id}.txt")), text).unwrap();
    }
    ds
}

fn faultbench(args: &[&str]) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(args)
        .output()
        .unwrap();
    let text = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn bench(ds: &Path, root: &Path, extra: &[&str]) -> (i32, String) {
    let topo = fixtures().join("topologies");
    let mut args = vec![
        "bench",
        "--emulator",
        "mock",
        "--scope",
        "all",
        "--topology",
        "Tri",
        "--no-report",
        "--dataset",
        ds.to_str().unwrap(),
        "--topologies",
        topo.to_str().unwrap(),
        "--runs-root",
        root.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    faultbench(&args)
}

/// (arm, pass, topology, scenario, agent, status, outcome) of every MANIFEST row, sorted.
fn rows(root: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(root.join("MANIFEST.csv")).unwrap();
    let mut v: Vec<Vec<String>> = text
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split(',').collect();
            [0, 1, 2, 3, 4, 6, 9]
                .iter()
                .map(|&i| c[i].to_string())
                .collect()
        })
        .collect();
    v.sort();
    v
}

#[test]
fn three_shards_merged_equal_the_unsharded_run() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = dataset(tmp.path());
    let whole = tmp.path().join("whole");
    let (code, out) = bench(&ds, &whole, &["--jobs", "2"]);
    assert_eq!(code, 0, "{out}");
    let expected = rows(&whole);
    assert_eq!(expected.len(), 25, "{expected:?}");
    let statuses: std::collections::BTreeSet<&str> =
        expected.iter().map(|r| r[5].as_str()).collect();
    assert_eq!(
        statuses.into_iter().collect::<Vec<_>>(),
        ["injection_failed", "scored"]
    );

    let mut shards = Vec::new();
    let mut seen = 0;
    for k in 1..=3 {
        let root = tmp.path().join(format!("shard{k}"));
        let (code, out) = bench(&ds, &root, &["--shard", &format!("{k}/3")]);
        assert_eq!(code, 0, "{out}");
        let n = rows(&root).len();
        assert!((8..=9).contains(&n), "shard {k}/3 ran {n} runs");
        seen += n;
        let id = std::fs::read_to_string(root.join("identity.json")).unwrap();
        assert!(id.contains(&format!("\"shard\": \"{k}/3\"")), "{id}");
        shards.push(root);
    }
    assert_eq!(seen, 25, "the shards partition the plan");

    // A shard root is resumed only as that shard.
    let (code, out) = bench(&ds, &shards[0], &["--shard", "2/3", "--resume"]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("shard"), "{out}");

    let merged = tmp.path().join("merged");
    let mut args = vec!["merge"];
    args.extend(shards.iter().map(|p| p.to_str().unwrap()));
    args.extend(["--into", merged.to_str().unwrap()]);
    let (code, out) = faultbench(&args);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("25 run(s) copied"), "{out}");
    assert_eq!(rows(&merged), expected, "merged shards = unsharded run");
    let id = std::fs::read_to_string(merged.join("identity.json")).unwrap();
    assert!(!id.contains("\"shard\""), "{id}");

    // Merging again into the same root copies nothing and changes nothing.
    let (code, out) = faultbench(&args);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("0 run(s) copied, 25 already there"), "{out}");
    assert_eq!(rows(&merged), expected);

    // A missing shard is reported.
    let partial = tmp.path().join("partial");
    let (code, out) = faultbench(&[
        "merge",
        shards[0].to_str().unwrap(),
        "--into",
        partial.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("shard(s) 2/3, 3/3"), "{out}");
}

#[test]
fn merge_refuses_other_configurations_and_disagreeing_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let ds = dataset(tmp.path());
    let a = tmp.path().join("a");
    let b = tmp.path().join("b");
    let c = tmp.path().join("c");
    assert_eq!(bench(&ds, &a, &["--shard", "1/3"]).0, 0);
    assert_eq!(
        bench(&ds, &b, &["--shard", "2/3", "--max-turns", "10"]).0,
        0
    );
    // The same shard again: the same keys, other records (times differ).
    assert_eq!(bench(&ds, &c, &["--shard", "1/3"]).0, 0);
    let into = tmp.path().join("into");
    let (code, out) = faultbench(&[
        "merge",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--into",
        into.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}");
    for needle in [
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "max_turns",
        "`20`",
        "`10`",
    ] {
        assert!(out.contains(needle), "{needle} missing: {out}");
    }
    assert!(!into.exists(), "nothing written");

    let (code, out) = faultbench(&[
        "merge",
        a.to_str().unwrap(),
        c.to_str().unwrap(),
        "--into",
        into.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}");
    assert!(out.contains("with different results"), "{out}");
    assert!(
        out.contains(a.to_str().unwrap()) && out.contains(c.to_str().unwrap()),
        "{out}"
    );
    assert!(!into.exists(), "nothing written");

    // Shards of different splits are refused too.
    let d = tmp.path().join("d");
    assert_eq!(bench(&ds, &d, &["--shard", "1/2"]).0, 0);
    let (code, out) = faultbench(&[
        "merge",
        a.to_str().unwrap(),
        d.to_str().unwrap(),
        "--into",
        into.to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("shard is `1/3` in") && out.contains("`1/2` in"),
        "{out}"
    );
}
