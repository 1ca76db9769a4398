//! Run records (`result.json` from another person's runs root): reading never panics, a record
//! that reads has a run folder inside any root, and its registry row round-trips.
#![no_main]

use faultbench_core::record::{RunRecord, digest_of};
use faultbench_report::parse_row;
use faultbench_core::scenario::ScenarioSpec;
use libfuzzer_sys::fuzz_target;
use std::path::{Component, Path};

fuzz_target!(|data: &[u8]| {
    let Ok(rec) = serde_json::from_slice::<RunRecord>(data) else {
        return;
    };
    let dir = rec
        .key
        .dir(Path::new("/runs"))
        .expect("a record that reads has a run folder");
    assert!(dir.starts_with("/runs"), "{}", dir.display());
    assert!(
        dir.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_))),
        "{}",
        dir.display()
    );
    let row = rec.manifest_row();
    let back = parse_row(&row.to_csv());
    // The registry refuses negative costs and times (with the line): only valid rows must
    // read back unchanged.
    let valid = |x: f64| x.is_finite() && x >= 0.0;
    if valid(row.cost_usd) && valid(row.wall_seconds) {
        assert_eq!(back.expect("our own row reads back"), row);
    }
    let _ = digest_of(&rec);
    let _ = ScenarioSpec::parse(&rec.scenario.text);
});
