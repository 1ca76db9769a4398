//! Outputs beside an untrusted runs root (issue 30, items 2 and 3): a runs root may come from
//! someone else, so anything below it may be a planted link. `view`, `report`, `merge` and
//! `judge runs --write` must write nothing outside their output folder: a link where they write
//! is refused (named in the error) and its target left untouched; `merge` refuses a target that
//! nests with a source before it writes anything, and refuses a record whose agent name is a
//! path step (`..`). Each test failed on the code before the fix; docs/security.md lists them.

use std::collections::BTreeSet;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
#[path = "support/cli.rs"]
mod cli;
use cli::{faultbench, fixtures};

/// Every entry under `dir` (files, folders and links; links are not followed), relative to it.
fn entries_under(dir: &Path) -> BTreeSet<PathBuf> {
    fn walk(base: &Path, d: &Path, out: &mut BTreeSet<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(d) else { return };
        for e in rd.flatten() {
            let p = e.path();
            out.insert(p.strip_prefix(base).unwrap().to_path_buf());
            if e.file_type().unwrap().is_dir() {
                walk(base, &p, out);
            }
        }
    }
    let mut out = BTreeSet::new();
    walk(dir, dir, &mut out);
    out
}

fn dirs_under(dir: &Path) -> usize {
    entries_under(dir)
        .iter()
        .filter(|p| {
            std::fs::symlink_metadata(dir.join(p))
                .unwrap()
                .file_type()
                .is_dir()
        })
        .count()
}

/// A runs root made by `bench --emulator mock` over the fixture dataset (one topology, `Tri`).
fn mock_root(runs: &Path) {
    let (code, out, err) = faultbench(&[
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
        "--scope",
        "all",
        "--no-report",
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
}

/// A file outside every root, whose content must survive.
fn victim(dir: &Path) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join("victim.txt");
    std::fs::write(&p, "precious").unwrap();
    p
}

fn assert_untouched(victim: &Path) {
    assert_eq!(
        std::fs::read_to_string(victim).unwrap(),
        "precious",
        "{} was overwritten",
        victim.display()
    );
}

/// `RUNS/view/index.html` planted as a link made `faultbench view RUNS` overwrite its target;
/// `RUNS/view` (or `RUNS/view/runs`) as a link to a folder put the whole site there.
#[test]
fn view_never_writes_through_a_link_in_the_runs_root() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    mock_root(&runs);
    let outside = tmp.path().join("outside");
    let victim = victim(&outside);

    // A link at the index page's name.
    std::fs::create_dir_all(runs.join("view")).unwrap();
    symlink(&victim, runs.join("view/index.html")).unwrap();
    let (code, out, err) = faultbench(&["view", runs.to_str().unwrap()]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("view/index.html: is a symbolic link"),
        "the error names the link: {err}"
    );
    assert_untouched(&victim);

    // The site folder itself, and a folder of it, as links to a folder outside.
    for planted in ["view", "view/runs"] {
        std::fs::remove_dir_all(runs.join("view")).unwrap();
        if planted == "view/runs" {
            std::fs::create_dir(runs.join("view")).unwrap();
        }
        symlink(&outside, runs.join(planted)).unwrap();
        let before = entries_under(&outside);
        let (code, out, err) = faultbench(&["view", runs.to_str().unwrap()]);
        assert_ne!(code, 0, "{planted}: {out}\n{err}");
        assert!(
            err.contains(&format!("{planted}: is a symbolic link")),
            "{planted}: {err}"
        );
        assert_eq!(before, entries_under(&outside), "{planted}: wrote outside");
        std::fs::remove_file(runs.join(planted)).unwrap();
        std::fs::create_dir_all(runs.join("view")).unwrap();
    }
    assert_untouched(&victim);

    // Without links the default site builds; `--out` a link the user names is followed.
    let (code, out, err) = faultbench(&["view", runs.to_str().unwrap()]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(runs.join("view/index.html").is_file());
    let site = tmp.path().join("site");
    std::fs::create_dir(&site).unwrap();
    symlink(&site, tmp.path().join("site-link")).unwrap();
    let (code, out, err) = faultbench(&[
        "view",
        runs.to_str().unwrap(),
        "--out",
        tmp.path().join("site-link").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(site.join("index.html").is_file());
}

/// `RUNS/report` planted as a link made `faultbench report RUNS` write its files into the link's
/// target; `RUNS/compare` likewise for `report --compare`.
#[test]
fn report_never_writes_through_a_planted_report_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    mock_root(&runs);
    let outside = tmp.path().join("outside");
    let victim = victim(&outside);
    symlink(&outside, runs.join("report")).unwrap();
    symlink(&outside, runs.join("compare")).unwrap();
    let before = entries_under(&outside);
    let r = runs.to_str().unwrap();
    for args in [
        vec!["report", r, "--resamples", "0", "--print", "false"],
        vec![
            "report",
            "--compare",
            r,
            r,
            "--resamples",
            "0",
            "--print",
            "false",
        ],
    ] {
        let (code, out, err) = faultbench(&args);
        assert_ne!(code, 0, "{args:?}: {out}\n{err}");
        assert!(err.contains(": is a symbolic link"), "{args:?}: {err}");
        assert_eq!(before, entries_under(&outside), "{args:?}: wrote outside");
    }
    assert_untouched(&victim);

    // A link at a file's name in a real report folder is refused too.
    std::fs::remove_file(runs.join("report")).unwrap();
    std::fs::create_dir(runs.join("report")).unwrap();
    symlink(&victim, runs.join("report/report.md")).unwrap();
    let (code, _, err) = faultbench(&["report", r, "--resamples", "0", "--print", "false"]);
    assert_ne!(code, 0, "{err}");
    assert!(err.contains("report.md: is a symbolic link"), "{err}");
    assert_untouched(&victim);
}

/// `merge RUNS --into RUNS/…` copied the source into itself (448 nested folders when the target
/// was inside a run folder) before anything refused it. Now a target inside, equal to or a link
/// to a source — or holding one — is refused before anything is created.
#[test]
fn merge_into_a_folder_nested_with_a_source_is_refused_before_writing() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    mock_root(&runs);
    let run_dir = entries_under(&runs)
        .into_iter()
        .find(|p| p.ends_with("result.json"))
        .map(|p| runs.join(p.parent().unwrap()))
        .unwrap();
    symlink(&runs, tmp.path().join("runs-link")).unwrap();
    let cases = [
        (runs.join("merged"), "is inside the source"),
        (run_dir.join("merged"), "is inside the source"),
        (
            tmp.path().join("runs-link/Tri/merged"),
            "is inside the source",
        ),
        (
            tmp.path().join("runs-link"),
            "is both a source and the target",
        ),
        (tmp.path().to_path_buf(), "is inside the target"),
    ];
    for (into, why) in cases {
        let dirs = dirs_under(tmp.path());
        let before = entries_under(tmp.path());
        let (code, out, err) = faultbench(&[
            "merge",
            runs.to_str().unwrap(),
            "--into",
            into.to_str().unwrap(),
        ]);
        assert_ne!(code, 0, "{}: {out}\n{err}", into.display());
        assert!(err.contains(why), "{}: {err}", into.display());
        assert!(err.contains("nothing was written"), "{err}");
        assert_eq!(
            dirs,
            dirs_under(tmp.path()),
            "{}: folders created",
            into.display()
        );
        assert_eq!(before, entries_under(tmp.path()), "{}", into.display());
    }
}

/// A link already in an existing target (`merged/Tri -> /elsewhere`) was followed when run
/// folders were copied, so the runs landed outside the target. Now the merge refuses it before
/// it writes anything.
#[test]
fn merge_never_writes_through_a_link_in_an_existing_target() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    mock_root(&runs);
    let outside = tmp.path().join("outside");
    let victim = victim(&outside);
    let merged = tmp.path().join("merged");
    std::fs::create_dir(&merged).unwrap();
    symlink(&outside, merged.join("Tri")).unwrap();
    let before = entries_under(tmp.path());
    let (code, out, err) = faultbench(&[
        "merge",
        runs.to_str().unwrap(),
        "--into",
        merged.to_str().unwrap(),
    ]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(err.contains("merged/Tri: is a symbolic link"), "{err}");
    assert_eq!(
        before,
        entries_under(tmp.path()),
        "nothing written anywhere"
    );
    assert_untouched(&victim);

    // A link at the target's identity or registry is refused the same way.
    std::fs::remove_file(merged.join("Tri")).unwrap();
    for name in ["identity.json", "MANIFEST.csv"] {
        symlink(&victim, merged.join(name)).unwrap();
        let before = entries_under(tmp.path());
        let (code, _, err) = faultbench(&[
            "merge",
            runs.to_str().unwrap(),
            "--into",
            merged.to_str().unwrap(),
        ]);
        assert_ne!(code, 0, "{name}: {err}");
        // identity.json is refused already by its reader ("not a regular file (a link …)").
        assert!(
            err.contains(&format!("{name}: ")) && err.contains("link"),
            "{err}"
        );
        assert_eq!(before, entries_under(tmp.path()), "{name}");
        std::fs::remove_file(merged.join(name)).unwrap();
    }
    assert_untouched(&victim);

    // Without links the merge works.
    let (code, out, err) = faultbench(&[
        "merge",
        runs.to_str().unwrap(),
        "--into",
        merged.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{out}\n{err}");
}

/// An agent name `..` was accepted in a record's key: its run folder
/// `Tri/<layer>__<id>/../p1` is `Tri/p1`, shared by every scenario of the topology, so merge put
/// two runs into one folder and MANIFEST.csv listed one. Now such a record is refused, named.
#[test]
fn a_record_whose_agent_is_dot_dot_is_refused_naming_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    mock_root(&runs);
    let records: Vec<PathBuf> = entries_under(&runs)
        .into_iter()
        .filter(|p| p.ends_with("result.json"))
        .map(|p| runs.join(p))
        .collect();
    assert!(records.len() >= 2, "{records:?}");
    for path in &records[..2] {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        v["key"]["agent"] = serde_json::json!("..");
        std::fs::write(path, v.to_string()).unwrap();
    }
    let merged = tmp.path().join("merged");
    let (code, out, err) = faultbench(&[
        "merge",
        runs.to_str().unwrap(),
        "--into",
        merged.to_str().unwrap(),
    ]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(
        err.contains(&records[0].display().to_string()) && err.contains("invalid agent name"),
        "the record is named: {err}"
    );
    assert!(!merged.exists(), "nothing was written");
}

/// Agent names are made folder-safe (`a:b` → `a_b`), so two distinct agents can name one run
/// folder: merge copied both there, the second over the first, and MANIFEST.csv listed one.
/// Now the merge refuses, naming both runs, before it writes anything.
#[test]
fn merge_refuses_two_runs_that_would_share_a_folder() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    mock_root(&runs);
    let records: Vec<PathBuf> = entries_under(&runs)
        .into_iter()
        .filter(|p| p.ends_with("result.json"))
        .map(|p| runs.join(p))
        .collect();
    let read = |p: &Path| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let first = read(&records[0]);
    for (path, agent) in [(&records[0], "a_b"), (&records[1], "a:b")] {
        let mut v = read(path);
        v["key"] = first["key"].clone();
        v["key"]["agent"] = serde_json::json!(agent);
        std::fs::write(path, v.to_string()).unwrap();
    }
    let merged = tmp.path().join("merged");
    let (code, out, err) = faultbench(&[
        "merge",
        runs.to_str().unwrap(),
        "--into",
        merged.to_str().unwrap(),
    ]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("would share the folder") && err.contains("a:b") && err.contains("a_b"),
        "{err}"
    );
    assert!(!merged.exists(), "nothing was written");
}

/// The public release's record format (a false-premise ticket the rubric judges).
const RELEASE_RECORD: &str = r#"{
  "scenario": {"scenario_id": "lab-false-premise-x", "topology": "Lab",
    "fault_family": "negative-control (false premise)", "prompt_to_agent": "pc1 is down",
    "injection": {"device": "none", "action": "none", "command": null, "note": "no fault"},
    "pre_check": [], "post_inject_check": [], "ground_truth": "Healthy.", "fix_spec": "",
    "scoring_axes": ["assert-no-anomaly", "assert-no-faulty-devices", "bonus-notes: pc1 up"],
    "scenario_class": "false-premise", "ticket_style": "naive"},
  "agent": "sade",
  "phases": {"agent": {"diagnosis_text": "All good.", "is_anomaly": false,
      "faulty_devices": [], "parsed_ok": true},
    "score": {"must_passed": 2, "must_total": 2, "bonus_passed": 0, "bonus_total": 1,
      "outcome_score": 0.7, "fix_score": null, "reasoning_score": 0.5,
      "reasoning_dims": {"grounding": 0.5, "causality": 0.4, "coverage": 0.6},
      "per_axis": [{"axis": "assert-no-anomaly", "kind": "assert", "score": 1.0, "rationale": "ok"}],
      "judge_model": "gpt-5-mini", "reasoning_mode": "trace", "error": null}}
}"#;

/// `judge runs ROOT --write` wrote a release record's verdict with a call that follows links,
/// so `rejudged-rubric.json` planted as a link overwrote its target.
#[test]
fn judge_write_never_writes_through_a_planted_link() {
    let tmp = tempfile::tempdir().unwrap();
    let outside = tmp.path().join("outside");
    let victim = victim(&outside);
    let root = tmp.path().join("release");
    let run = root.join("cex120/Lab/lab-false-premise-x/sade/p1");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(run.join("result.json"), RELEASE_RECORD).unwrap();
    symlink(&victim, run.join("rejudged-rubric.json")).unwrap();
    let (code, out, err) = faultbench(&["judge", "runs", root.to_str().unwrap(), "--write"]);
    assert_ne!(code, 0, "{out}\n{err}");
    assert!(
        err.contains("rejudged-rubric.json: is a symbolic link"),
        "the link is named: {err}"
    );
    assert_untouched(&victim);

    // Once the link is gone, the verdict is stored beside the record.
    std::fs::remove_file(run.join("rejudged-rubric.json")).unwrap();
    let (code, out, err) = faultbench(&["judge", "runs", root.to_str().unwrap(), "--write"]);
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(run.join("rejudged-rubric.json").is_file());
}
