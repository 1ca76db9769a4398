//! `faultbench validate | stats | list` on the public release's files (found through
//! `faultbench-testkit`: every file present, a subset in a partial copy) and on corrupted
//! copies of a file of our own dataset.

use faultbench_testkit::release_for_test;
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_faultbench"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let out = cmd.output().expect("faultbench runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn validate_accepts_every_release_file() {
    let Some(release) = release_for_test() else {
        return;
    };
    let n = release.scenario_files().len();
    assert!(n > 0, "no scenario files in {}", release.describe());
    let (code, out, _) = run(bin().arg("validate").args(release.topology_folders()));
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains(&format!("{n} file(s): {n} valid, 0 invalid")),
        "{out}"
    );
}

#[test]
fn validate_rejects_each_corruption_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = std::fs::read_to_string(
        repo().join("dataset/kath2_Q/base/kath2-router1-rip-auth-mismatch.txt"),
    )
    .unwrap();
    let mut big = good.clone();
    while big.len() < 50 * 1024 * 1024 {
        big.push_str(&"y".repeat(4095));
        big.push('\n');
    }
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("cut", good.as_bytes()[..good.len() / 2].to_vec()),
        ("unknown", good.replace("[FIX]", "[REMEDY]").into_bytes()),
        (
            "noheader",
            good.replace("Scenario: kath2-router1-rip-auth-mismatch\n", "")
                .into_bytes(),
        ),
        (
            "dup",
            format!("{good}\n[GROUND-TRUTH]\nagain\n").into_bytes(),
        ),
        ("binary", (0u8..=255).cycle().take(3000).collect()),
        ("empty", Vec::new()),
        ("huge", big.into_bytes()),
    ];
    for (name, bytes) in &cases {
        std::fs::write(dir.path().join(format!("{name}.txt")), bytes).unwrap();
    }
    let (code, out, err) = run(bin().arg("validate").arg(dir.path()));
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("7 file(s): 0 valid, 7 invalid"), "{out}");
    for (name, _) in &cases {
        let prefix = format!(
            "error: {}:",
            dir.path().join(format!("{name}.txt")).display()
        );
        let line = out
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("{name}: {out}"));
        let lineno: usize = line[prefix.len()..]
            .split(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert!(lineno >= 1, "{line}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn stats_counts_equal_files_present() {
    let Some(release) = release_for_test() else {
        return;
    };
    let (code, out, _) = run(bin().arg("stats").arg(release.dataset()).arg("--json"));
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut present = std::collections::BTreeMap::<String, u64>::new();
    for f in release.scenario_files() {
        let layer = f.parent().unwrap().file_name().unwrap();
        *present
            .entry(layer.to_string_lossy().into_owned())
            .or_default() += 1;
    }
    for (layer, n) in &present {
        assert_eq!(v["layers"][layer].as_u64(), Some(*n), "layer {layer}");
    }
    assert_eq!(v["scenarios"].as_u64(), Some(present.values().sum()));
    assert_eq!(
        v["identifiers"]["naive_no_detail"]["mean"].as_f64(),
        Some(0.0)
    );
}

/// Ten Kath2 files of the release (`layer`, `id`): two base faults, three `cex` tickets (one of
/// each kind) and the five persona rewrites of the false premise.
const KATH2_SAMPLE: [(&str, &str); 10] = [
    ("base", "kath2-pc1-wrong-netmask"),
    ("base", "kath2-router0-ripd-down"),
    ("cex", "kath2-false-premise-dept-gateway-flapping"),
    ("cex", "kath2-router0-ripd-down-misdirected"),
    ("cex", "kath2-pc1-wrong-netmask-misdescribed"),
    ("novice", "kath2-false-premise-dept-gateway-flapping-novice"),
    ("naive", "kath2-false-premise-dept-gateway-flapping-naive"),
    (
        "novice_confident",
        "kath2-false-premise-dept-gateway-flapping-novice-confident",
    ),
    (
        "naive_unsure",
        "kath2-false-premise-dept-gateway-flapping-naive-unsure",
    ),
    (
        "naive_no_detail",
        "kath2-false-premise-dept-gateway-flapping-naive-no-detail",
    ),
];

#[test]
fn list_scopes_and_manifest() {
    let Some(release) = release_for_test() else {
        return;
    };
    // A dataset of exactly these files, whatever else the checkout holds.
    let sample = tempfile::tempdir().unwrap();
    let ds = sample.path().join("dataset");
    for (layer, id) in KATH2_SAMPLE {
        let to = ds.join("kath2_Q").join(layer).join(format!("{id}.txt"));
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(release.scenario("kath2_Q", layer, id), &to).unwrap();
    }
    let (code, out, _) = run(bin().args(["list", "--scope", "all", "--dataset"]).arg(&ds));
    assert_eq!(code, 0);
    let ids: Vec<&str> = out.lines().collect();
    // base first (sorted), then cex (sorted)
    assert_eq!(
        ids,
        vec![
            "kath2-pc1-wrong-netmask",
            "kath2-router0-ripd-down",
            "kath2-false-premise-dept-gateway-flapping",
            "kath2-pc1-wrong-netmask-misdescribed",
            "kath2-router0-ripd-down-misdirected"
        ]
    );
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("m.csv");
    let (code, _, _) = run(bin()
        .args([
            "list",
            "--scope",
            "novice_confident",
            "--topology",
            "Kath2",
            "--dataset",
        ])
        .arg(&ds)
        .arg("--out")
        .arg(&csv));
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&csv).unwrap();
    let rows: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        rows,
        vec![
            "scenario",
            "kath2-false-premise-dept-gateway-flapping-novice-confident"
        ]
    );
    let (code, _, err) = run(bin().args(["list", "--scope", "vip", "--dataset"]).arg(&ds));
    assert_eq!(code, 2);
    assert!(err.contains("novice_confident"), "{err}");
}

/// The variety table: two tickets that differ only in an identifier share a skeleton, so
/// their category shows one skeleton holding 100%; a third, different ticket halves nothing of
/// it but counts in `all`.
#[test]
fn stats_reports_ticket_variety_per_category() {
    let dir = tempfile::tempdir().unwrap();
    let base = dir.path().join("nika_bgp_Q/base");
    std::fs::create_dir_all(&base).unwrap();
    let src = repo().join("dataset/nika_bgp_Q/base");
    let one = std::fs::read_to_string(src.join("simple-bgp-pc1-address-typo.txt")).unwrap();
    let set_ticket = |text: &str, ticket: &str| {
        let start = text.find("[PROMPT-TO-AGENT]\n").unwrap() + "[PROMPT-TO-AGENT]\n".len();
        let end = start + text[start..].find("\n[").unwrap();
        format!("{}{ticket}\n{}", &text[..start], &text[end..])
    };
    let t = "Since lunch pc1 cannot reach 200.1.1.2 at all and the team waits on it.";
    std::fs::write(
        base.join("simple-bgp-pc1-address-typo.txt"),
        set_ticket(&one, t),
    )
    .unwrap();
    let two = std::fs::read_to_string(src.join("simple-bgp-pc2-eth0-down.txt")).unwrap();
    let t2 = t.replace("200.1.1.2", "195.11.14.2");
    std::fs::write(
        base.join("simple-bgp-pc2-eth0-down.txt"),
        set_ticket(&two, &t2),
    )
    .unwrap();
    let (code, out, err) = run(bin()
        .arg("stats")
        .arg(dir.path())
        .arg("--topologies")
        .arg(repo().join("topologies")));
    assert!(code == 0 || code == 1, "{err}");
    assert!(out.contains("Ticket variety"), "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("| Correct-Fault |"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(row.starts_with("| Correct-Fault | 2 |"), "{row}");
    assert!(row.ends_with("| 100.0% |"), "one skeleton for both: {row}");
    // 14 words, 11 four-grams each; the replaced address changes 4 of them.
    assert!(
        row.contains("| 7.5 |"),
        "(11 + 4) / 2 distinct 4-grams per ticket: {row}"
    );
}
