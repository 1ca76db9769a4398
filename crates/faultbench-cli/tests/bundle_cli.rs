//! `faultbench keygen` → `bench` (mock) → `pack` → `verify` → `leaderboard` through the
//! shipped binary: exit codes, the rule named on failure, and the release's registry as a
//! registry-only entry.

#[path = "support/cli.rs"]
mod support;

use support::{faultbench, fixtures};

fn s(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn pack_verify_and_leaderboard_from_the_command_line() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let f = fixtures();
    let (code, out, err) = faultbench(&[
        "bench",
        "--emulator",
        "mock",
        "--agents",
        "baseline",
        "--scope",
        "all",
        "--dataset",
        s(&f.join("dataset")),
        "--topologies",
        s(&f.join("topologies")),
        "--runs-root",
        s(&runs),
        "--passes",
        "2",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    let keys = tmp.path().join("keys");
    let (code, out, err) = faultbench(&["keygen", "--out", s(&keys)]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("fingerprint"), "{out}");
    let bundle = tmp.path().join("b.fbundle");
    let (code, out, err) = faultbench(&[
        "pack",
        s(&runs),
        "--out",
        s(&bundle),
        "--key",
        s(&keys.join("bundle.key")),
        "--resamples",
        "100",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("packed 4 run(s)") && out.contains("signed by key"),
        "{out}"
    );

    let pubkey = keys.join("bundle.pub");
    let (code, out, err) =
        faultbench(&["verify", s(&bundle), "--pubkey", s(&pubkey), "--allow-mock"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        out.contains("ok    scores") && out.contains("verified:"),
        "{out}"
    );
    // Without --allow-mock: a mock root is not a leaderboard result, and the rule says so.
    let (code, out, err) = faultbench(&["verify", s(&bundle), "--pubkey", s(&pubkey)]);
    assert_eq!(code, 1, "{out}\n{err}");
    assert!(
        err.contains("rule protocol") && err.contains("mock"),
        "{err}"
    );

    let board = tmp.path().join("board");
    let (code, out, err) = faultbench(&[
        "leaderboard",
        s(&bundle),
        "--out",
        s(&board),
        "--allow-mock",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(out.contains("verified-mock"), "{out}");
    let html = std::fs::read_to_string(board.join("index.html")).unwrap();
    assert!(html.contains("baseline") && html.contains("id=\"board\""));
    assert!(board.join("bundles/1-b/view/index.html").is_file());
}

/// The release's registry on the leaderboard: a registry-only entry with the paper's agents,
/// its viewer built, nothing ranked.
#[test]
fn the_release_registry_is_a_registry_only_entry() {
    let Some(release) = faultbench_testkit::release_for_test() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let board = tmp.path().join("board");
    let manifest = release.manifest();
    let (code, out, err) = faultbench(&[
        "leaderboard",
        "--registry",
        s(&manifest),
        "--out",
        s(&board),
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert_eq!(
        out.matches("registry-only").count(),
        3,
        "three agents: {out}"
    );
    let html = std::fs::read_to_string(board.join("index.html")).unwrap();
    assert!(html.contains("registry only (unsigned)") && html.contains("sade"));
    assert!(html.contains("No bundle is verified: nothing is ranked."));
    assert!(
        board
            .join("registries/1-MANIFEST/view/index.html")
            .is_file()
    );
}
