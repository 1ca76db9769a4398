//! `faultbench generate` without a live lab: the dry run lists candidates per family and says
//! which match nothing, is deterministic, and bad arguments or family files are refused before
//! anything is deployed.

#[path = "support/cli.rs"]
mod support;
use support::faultbench;

#[test]
fn dry_run_lists_families_and_says_what_matches_nothing() {
    let args = [
        "generate",
        "--topology",
        "simple_bgp",
        "--seed",
        "3",
        "--count",
        "5",
        "--dry-run",
    ];
    let (code, out, err) = faultbench(&args);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("bgp-neighbor-shutdown"), "{out}");
    assert!(
        out.contains("ospf-passive-interface")
            && out.contains("matches nothing: the lab has no ospf_link"),
        "{out}"
    );
    assert!(out.contains("5 selected"), "{out}");
    let (_, again, _) = faultbench(&args);
    assert_eq!(out, again, "the same seed plans the same sample");
}

#[test]
fn bad_arguments_and_family_files_are_refused() {
    let (code, _, err) = faultbench(&[
        "generate",
        "--topology",
        "simple_bgp",
        "--shard",
        "3/2",
        "--dry-run",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("1 <= K <= N"), "{err}");
    let (code, _, err) = faultbench(&[
        "generate",
        "--topology",
        "simple_bgp",
        "--families",
        "no-such-family",
        "--dry-run",
    ]);
    assert_ne!(code, 0);
    assert!(
        err.contains("unknown family no-such-family") && err.contains("host-link-down"),
        "{err}"
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("bad.toml"),
        "[family]\nid = \"x\"\nlayer = 3\n",
    )
    .unwrap();
    let d = dir.path().to_str().unwrap();
    let (code, _, err) = faultbench(&[
        "generate",
        "--topology",
        "simple_bgp",
        "--family-dir",
        d,
        "--dry-run",
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("bad.toml:3:"), "{err}");
    let (code, _, err) = faultbench(&["generate", "--lab", "/nonexistent/lab", "--dry-run"]);
    assert_ne!(code, 0);
    assert!(err.contains("/nonexistent/lab"), "{err}");
}
