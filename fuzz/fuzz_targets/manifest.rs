//! Run registries (`MANIFEST.csv`, ours or someone else's): reading never panics, every number
//! read is finite, and the whole report (tables, CSV, Markdown, JSON, charts) renders.
#![no_main]

use faultbench_report::{Report, RunIndex};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let mut input = faultbench_core::record::MANIFEST_HEADER.as_bytes().to_vec();
    input.push(b'\n');
    input.extend_from_slice(data);
    for bytes in [data, &input[..]] {
        let Ok(reg) = RunIndex::from_csv_bytes(bytes, Path::new("MANIFEST.csv")) else {
            continue;
        };
        for r in &reg.rows {
            for x in [r.outcome_score, r.fix_score, r.reasoning_score].into_iter().flatten() {
                assert!(x.is_finite());
            }
            assert!(r.cost_usd.is_finite() && r.wall_seconds.is_finite());
        }
        let report = Report::new(&reg, None);
        let _ = (report.csv(), report.markdown(), report.json(), report.charts());
    }
});
