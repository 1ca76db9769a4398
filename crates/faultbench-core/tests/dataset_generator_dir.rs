//! `faultbench generate`'s working folder (`<topo>_Q/gen/`) is recognised by the dataset
//! scan: its journals are noted, never taken for scenarios or flagged as misplaced, and a
//! `gen/` folder holding anything else stays misplaced.

use faultbench_core::dataset::{Dataset, StatsOptions};
use std::fs;

#[test]
fn the_generators_journals_are_noted_not_flagged() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("kath3_Q").join("gen");
    fs::create_dir_all(&g).unwrap();
    fs::write(g.join(".journal-1-of-1.jsonl"), "{}\n").unwrap();
    fs::write(g.join("baseline.generated.toml"), "").unwrap();
    fs::write(g.join("kath3-gen-x.txt"), "not parsed").unwrap();
    let ds = Dataset::scan(dir.path()).unwrap();
    assert!(ds.misplaced.is_empty(), "{:?}", ds.misplaced);
    assert_eq!(ds.generator.len(), 1);
    assert_eq!((ds.generator[0].journals, ds.generator[0].planned), (1, 1));
    assert!(ds.files.is_empty(), "journal folder scanned for scenarios");
    let st = ds.stats(&StatsOptions::default());
    assert!(st.violations.is_empty(), "{:?}", st.violations);
    assert_eq!(st.notes.len(), 1);
    assert!(st.notes[0].message.contains("1 planned variant"));
}

#[test]
fn a_gen_folder_with_other_files_stays_misplaced() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("kath3_Q").join("gen");
    fs::create_dir_all(&g).unwrap();
    fs::write(g.join(".journal-1-of-1.jsonl"), "{}\n").unwrap();
    fs::write(g.join("notes.md"), "stray").unwrap();
    let ds = Dataset::scan(dir.path()).unwrap();
    assert!(ds.generator.is_empty());
    assert_eq!(ds.misplaced, vec![g.clone()]);
    // A link named `gen` is not followed or recognised.
    let dir2 = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir2.path().join("kath3_Q")).unwrap();
    std::os::unix::fs::symlink(dir.path(), dir2.path().join("kath3_Q").join("gen")).unwrap();
    let ds2 = Dataset::scan(dir2.path()).unwrap();
    assert!(ds2.generator.is_empty());
    assert!(!ds2.stats(&StatsOptions::default()).violations.is_empty());
}

#[test]
fn an_empty_gen_folder_is_what_a_run_without_variants_leaves() {
    // `generate --count 0 --false-premise 9` verifies no variant and writes no journal.
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("nika_bgp_Q").join("gen")).unwrap();
    let ds = Dataset::scan(dir.path()).unwrap();
    assert!(ds.misplaced.is_empty());
    assert_eq!(ds.generator.len(), 1);
    assert!(ds.stats(&StatsOptions::default()).violations.is_empty());
}
