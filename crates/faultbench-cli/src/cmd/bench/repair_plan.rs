//! What `--task repair` needs before anything runs: the full tool policy (an agent that may
//! not change the network cannot repair it) and, for every injected fault, a `[FIX]` and
//! `[POST-INJECT-CHECK]` lines (false premises need neither).

use anyhow::bail;
use faultbench_core::ScenarioFile;
use faultbench_core::repair::check_repairable;
use faultbench_core::task::Task;
use std::sync::Arc;

/// Refuses a repair plan the lab could not verify, naming every file at fault.
pub fn check(
    task: Task,
    policy: &str,
    persist: bool,
    scenarios: &[Arc<ScenarioFile>],
) -> anyhow::Result<()> {
    if task != Task::Repair {
        if persist {
            bail!("--repair-persist belongs to the repair task: add --task repair");
        }
        return Ok(());
    }
    if policy.trim() != "full" {
        bail!(
            "--task repair needs --policy full: under `{policy}` the tools refuse every change, so no agent could repair anything"
        );
    }
    let refused: Vec<String> = scenarios
        .iter()
        .filter_map(|s| check_repairable(s.as_ref()).err())
        .map(|e| e.to_string())
        .collect();
    if !refused.is_empty() {
        bail!(
            "{} scenario(s) cannot be run with --task repair:\n  {}",
            refused.len(),
            refused.join("\n  ")
        );
    }
    Ok(())
}
