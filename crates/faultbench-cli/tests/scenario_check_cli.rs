//! `faultbench scenario check` as a user runs it: real labs (root, as in CI), real exit codes.
//!
//! One release file passes, a fault the kernel cannot emulate (a netem delay) comes out as
//! `UNSUPPORTED` — never as a pass — and a file naming no known topology fails before any lab
//! is deployed.

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn check(args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(["scenario", "check"])
        .args(args)
        .output()
        .expect("run faultbench");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A scenario in the release's format, written for this test.
fn scenario(dir: &Path, id: &str, topology: &str, injection: &str, checks: &str) -> PathBuf {
    let text = format!(
        "==================================================
Scenario: {id}
Topology: {topology}
Fault family: test
==================================================

[PROMPT-TO-AGENT]
Everything in the Internet Lab feels slow.

[INJECTION]
{injection}

[POST-INJECT-CHECK]
{checks}

[GROUND-TRUTH]
An artificial delay on router2.

[FIX]
Remove the qdisc.

[SCORING-AXES]
assert-identifies: router2

[NIKA-LABEL]
nika_label: none
nika_category: NOVEL
in_taxonomy: false
"
    );
    let path = dir.join(format!("{id}.txt"));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn usage_errors_exit_2_with_a_hint() {
    let (code, _, err) = check(&[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no scenario given"), "{err}");
    let empty = tempfile::tempdir().unwrap();
    let (code, _, err) = check(&["--all".as_ref(), empty.path().as_os_str()]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no .txt scenario files"), "{err}");
}

#[test]
fn an_unknown_topology_fails_before_deploying() {
    let dir = tempfile::tempdir().unwrap();
    let f = scenario(
        dir.path(),
        "nowhere-r1-delay",
        "Nowhere",
        "device: r1\ncmd: true",
        "r1  true  => expect empty",
    );
    let (code, out, err) = check(&[f.as_os_str()]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("FAIL") && out.contains("no topology `Nowhere`"),
        "{out}"
    );
    assert!(
        out.contains("Kath2"),
        "the error lists the available topologies: {out}"
    );
}

#[test]
fn a_release_file_passes_and_an_unemulatable_fault_is_unsupported() {
    let Some(release) = faultbench_testkit::release_for_test() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let delay = scenario(
        dir.path(),
        "kath2-router2-delay",
        "Kath2",
        "device: router2\ncmd: tc qdisc add dev eth1 root netem delay 200ms",
        "pc2  ping -c1 -W2 1.0.0.5  => expect 0% loss",
    );
    let release = release.scenario("kath2_Q", "base", "kath2-router1-ip-forward-off");
    let json = dir.path().join("report.json");
    let (code, out, err) = check(&[
        release.as_os_str(),
        delay.as_os_str(),
        "--jobs".as_ref(),
        "2".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    assert_eq!(code, 3, "only unsupported non-passes exit 3\n{out}{err}");
    let line = |id: &str| {
        out.lines()
            .find(|l| l.contains(id))
            .unwrap_or_else(|| panic!("no line for {id}:\n{out}"))
            .to_string()
    };
    assert!(
        line("kath2-router1-ip-forward-off").contains("PASS"),
        "{out}"
    );
    let unsupported = line("kath2-router2-delay");
    assert!(unsupported.contains("UNSUPPORTED"), "{out}");
    assert!(
        unsupported.contains("netem"),
        "the reason names the missing feature: {out}"
    );
    assert!(
        out.contains("1 passed, 0 failed, 1 unsupported on this host"),
        "{out}"
    );
    let reports: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let outcomes: Vec<&str> = reports
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(outcomes, ["passed", "unsupported_on_host"]);
    assert_eq!(reports[1]["stage"], "injection");
    assert!(reports[0]["times"]["deploy_ms"].as_u64().unwrap() > 0);
}

#[test]
fn share_labs_reuses_one_pristine_lab_for_scenarios_without_injection() {
    let ds = repo().join("dataset/nika_bgp_Q");
    let standard = ds.join("cex/simple-bgp-false-premise-interas-mtu-blackhole.txt");
    let novice = ds.join("novice/simple-bgp-false-premise-interas-mtu-blackhole-novice.txt");
    let fault = ds.join("base/simple-bgp-pc2-eth0-down.txt");
    let other = ds.join("cex/simple-bgp-false-premise-pc1-gateway-silent.txt");
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("report.json");
    let (code, out, err) = check(&[
        standard.as_os_str(),
        novice.as_os_str(),
        fault.as_os_str(),
        other.as_os_str(),
        "--share-labs".as_ref(),
        "--json".as_ref(),
        json.as_os_str(),
    ]);
    assert_eq!(code, 0, "{out}{err}");
    let reports: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let reports = reports.as_array().unwrap();
    let field = |i: usize, k: &str| reports[i][k].clone();
    let reused: Vec<bool> = (0..4).map(|i| field(i, "reused_lab") == true).collect();
    // The injecting scenario gets a fresh lab and leaves the shared one untouched for the next.
    assert_eq!(reused, [false, true, false, true], "{reports:#?}");
    assert_eq!(field(0, "lab"), field(1, "lab"));
    assert_eq!(field(0, "lab"), field(3, "lab"));
    assert_ne!(field(0, "lab"), field(2, "lab"));
    assert_eq!(
        field(1, "times")["deploy_ms"],
        0,
        "a reused lab is not deployed"
    );
    assert!(field(2, "injection").is_object(), "the fault was injected");
    assert_eq!(
        field(2, "file"),
        fault.display().to_string(),
        "each report names its file"
    );

    // Every lab, the shared one included, is gone afterwards.
    let ls = Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(["lab", "ls"])
        .output()
        .unwrap();
    let ls = String::from_utf8_lossy(&ls.stdout);
    for i in 0..4 {
        let name = field(i, "lab");
        let name = name.as_str().unwrap();
        assert!(!ls.contains(name), "lab {name} left running:\n{ls}");
    }
}
