//! Housekeeping the backends need (the backends themselves are built by name from the
//! registries of `faultbench_emu::registry` and `faultbench_judge::registry`).

/// Removes leftovers of killed runs (netns labs of dead processes); labs of live processes and
/// detached labs are never touched.
pub fn gc_netns() {
    let report = faultbench_emu::netns::gc();
    for (lab, why) in &report.removed {
        eprintln!("gc: removed leftover lab {lab} ({why})");
    }
}
