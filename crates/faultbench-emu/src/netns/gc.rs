//! Finding and removing what killed processes left behind.
//!
//! Everything a lab creates on the host is either a process (a device's or switch's PID 1,
//! which takes its namespaces, veths, bridges, mounts and daemons with it when killed) or a
//! file under `/run/faultbench/labs/<instance>/`. So collecting garbage means:
//!
//! - instances whose owner process is gone (a deploy or a test that was killed), whose devices
//!   all died, or whose folder has no readable `state.json`: kill their processes, delete the
//!   folder;
//! - device processes marked `FAULTBENCH_INIT=<instance>/<device>` that no instance lists:
//!   kill them;
//! - state folders the kernel-emulation shims left for network namespaces that are gone
//!   ([`crate::shims::collect_stale_state`]).
//!
//! Detached labs (`faultbench lab up`) and labs of live processes are never touched, and neither
//! is anything not marked as ours.

use super::lab::kill_all;
use super::state::{self, LabState, ProcId};
use std::time::Duration;

/// What a collection removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Instances removed (name and why).
    pub removed: Vec<(String, String)>,
    /// Stray device processes killed (`<instance>/<device>`).
    pub killed: Vec<String>,
    /// Kernel-emulation state folders of network namespaces that are gone (shims run with the
    /// host's `/run`, e.g. through `ip netns exec`).
    pub shim_state: Vec<crate::shims::Collected>,
}

/// A folder without state younger than this may be a deploy that has not saved yet.
const STATELESS_GRACE: Duration = Duration::from_secs(30);

/// Removes leftovers of killed processes. Safe to run at any time, also while other labs run.
pub fn gc() -> GcReport {
    let mut report = collect_instances();
    // Device processes that no instance accounts for.
    let mut stray: Vec<(ProcId, String)> = Vec::new();
    for (proc_id, mark) in state::marked_inits() {
        let lab = mark.split('/').next().unwrap_or_default();
        let listed = LabState::load(lab).is_ok_and(|st| st.processes().any(|p| p == proc_id));
        if !listed {
            stray.push((proc_id, mark));
        }
    }
    kill_all(stray.iter().map(|(p, _)| *p));
    report.killed = stray.into_iter().map(|(_, m)| m).collect();
    report.shim_state = crate::shims::collect_stale_state();
    report
}

/// The instance-folder part of [`gc`] (no scan of all processes): what every deploy runs first.
pub(crate) fn collect_instances() -> GcReport {
    let mut report = GcReport::default();
    for name in state::instance_names() {
        let folder = LabState::folder(&name);
        match LabState::load(&name) {
            Ok(st) => {
                let why = if st.orphaned() {
                    Some("its owner process is gone".to_string())
                } else if st.owner.is_none()
                    && st.phase == state::Phase::Running
                    && st.inits().next().is_some()
                    && !st.inits().any(|p| p.alive())
                {
                    Some("all its devices have stopped".to_string())
                } else {
                    None
                };
                if let Some(why) = why {
                    super::lab::destroy(&st);
                    report.removed.push((name, why));
                }
            }
            Err(_) => {
                let old = std::fs::metadata(&folder)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age > STATELESS_GRACE);
                if old {
                    let _ = std::fs::remove_dir_all(&folder);
                    report
                        .removed
                        .push((name, "it has no readable state.json".into()));
                }
            }
        }
    }
    report
}
