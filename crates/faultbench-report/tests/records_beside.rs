//! `ReportOptions::with_records`: the full records beside a registry give the report its
//! per-axis counts, whether the source is a runs root or its `MANIFEST.csv`.

use faultbench_report::ReportOptions;
use serde_json::json;

fn runs_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("base80/T/s1/a/p1");
    std::fs::create_dir_all(&dir).unwrap();
    let record = json!({
        "key": {"layer": "base", "pass": 1, "topology": "T", "scenario_id": "s1", "agent": "a"},
        "scores": {"must_passed": 2, "must_total": 3, "bonus_passed": 0, "bonus_total": 1},
    });
    std::fs::write(dir.join("result.json"), record.to_string()).unwrap();
    std::fs::write(root.path().join("MANIFEST.csv"), "").unwrap();
    root
}

#[test]
fn records_below_a_runs_root_or_beside_its_manifest_are_read() {
    let root = runs_root();
    for source in [root.path().to_path_buf(), root.path().join("MANIFEST.csv")] {
        let (opts, notes) = ReportOptions::tables_only().with_records(&source);
        assert_eq!(opts.details.len(), 1, "{source:?}: {notes:?}");
        assert!(notes.is_empty(), "{notes:?}");
    }
    // Any other file: no records looked for.
    let (opts, _) = ReportOptions::tables_only().with_records(&root.path().join("other.csv"));
    assert!(opts.details.is_empty());
}
