//! `--prestart` against the machine's memory: labs in flight are jobs × (1 + prestart), each
//! as large as the largest topology of the plan.

use crate::plan::Item;
use faultbench_core::lab::{LabDir, TopologyResolver};
use faultbench_core::pipeline::{MemoryBudget, estimate_lab_memory, prestart_limit};
use std::collections::BTreeSet;

/// The prestart depth to use: `requested`, lowered (with a message pushed on `notes`) when the
/// labs it puts in flight would not fit in memory. Mock labs take no memory worth counting.
pub(crate) fn bounded_prestart(
    emulator: &str,
    requested: usize,
    jobs: usize,
    items: &[Item],
    topologies: &TopologyResolver,
    notes: &mut Vec<String>,
) -> usize {
    if emulator == "mock" || items.is_empty() {
        return requested;
    }
    let names: BTreeSet<&str> = items.iter().map(|i| i.key.topology.as_str()).collect();
    let lab_bytes = names
        .iter()
        .filter_map(|n| topologies.resolve(n).ok())
        .filter_map(|t| LabDir::load(&t.dir).ok())
        .map(|l| estimate_lab_memory(&l))
        .max()
        .unwrap_or(0);
    let Some(budget) = MemoryBudget::of_this_machine() else {
        return requested;
    };
    let limit = prestart_limit(requested, jobs.min(items.len()), lab_bytes, budget);
    if let Some(m) = limit.message {
        notes.push(m);
    }
    limit.prestart
}
