//! Lab directories' text files: `lab.conf`, `lab.dep` and `baseline.toml` (the input split at
//! NUL bytes). Parsing never panics; a parsed lab has a start order and a topology summary.
#![no_main]

use faultbench_core::lab::{Baseline, LabDir, TopologySummary};
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0');
    let conf = parts.next().unwrap_or("");
    let dep = parts.next();
    if let Some(baseline) = parts.next() {
        let _ = Baseline::parse(baseline);
    }
    if let Ok(lab) = LabDir::parse(Path::new("/lab"), conf, dep) {
        let order = lab.start_order();
        assert_eq!(order.len(), lab.conf.device_names().len());
        let _ = TopologySummary::from_lab_conf("T", &lab.conf);
        let _ = lab.name();
    }
});
