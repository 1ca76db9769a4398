//! What `--task repair` needs before anything runs: the full tool policy (an agent that may
//! not change the network cannot repair it) and, for every injected fault, a `[FIX]` and
//! `[POST-INJECT-CHECK]` lines (false premises need neither).

use crate::BenchError;
use faultbench_core::ScenarioFile;
use faultbench_core::repair::check_repairable;
use faultbench_core::task::Task;
use std::sync::Arc;

/// Refuses a repair plan the lab could not verify, naming every file at fault.
pub(crate) fn check(
    task: Task,
    policy: &str,
    persist: bool,
    scenarios: &[Arc<ScenarioFile>],
) -> Result<(), BenchError> {
    if task != Task::Repair {
        if persist {
            return Err(BenchError::PersistWithoutRepair);
        }
        return Ok(());
    }
    if policy.trim() != "full" {
        return Err(BenchError::RepairNeedsFullPolicy(policy.to_string()));
    }
    let refused: Vec<String> = scenarios
        .iter()
        .filter_map(|s| check_repairable(s.as_ref()).err())
        .map(|e| e.to_string())
        .collect();
    if !refused.is_empty() {
        return Err(BenchError::NotRepairable(refused));
    }
    Ok(())
}
