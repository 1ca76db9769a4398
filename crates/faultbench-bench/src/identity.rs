//! The run identity of a bench, and the check against the runs root's
//! stored one ([`faultbench_core::identity`] has the rules).

use crate::BenchError;
use crate::resolve::{AgentChoice, JudgeChoice};
use faultbench_core::ScenarioFile;
use faultbench_core::agent::{Budget, TicketHint};
use faultbench_core::identity::{
    AgentIdentity, IDENTITY_SCHEMA, JudgeIdentity, RunIdentity, ScenarioSet, holds_runs,
    reconcile_at,
};
use faultbench_core::scenario::Scenario;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

/// The settings of one invocation that make up its configuration.
pub(crate) struct Settings<'a> {
    pub agents: &'a [AgentChoice],
    pub judge: &'a JudgeChoice,
    pub ticket_hint: TicketHint,
    pub tool_policy: String,
    pub telemetry: bool,
    pub budget: Budget,
    pub reuse_labs: bool,
    pub emulator: &'a str,
    /// How the emulator wires collision domains (`None` for mock networks).
    pub link_model: Option<faultbench_core::emulator::LinkModel>,
    pub task: faultbench_core::task::Task,
    pub repair_persist: bool,
    pub scenarios: &'a [Arc<ScenarioFile>],
}

/// The configuration of this invocation.
pub(crate) fn build(s: &Settings<'_>) -> RunIdentity {
    let agents: BTreeMap<String, AgentIdentity> = s
        .agents
        .iter()
        .map(|a| {
            let pv = a.agent.prompt_version();
            (
                a.label.clone(),
                AgentIdentity::new(&a.label, a.model.as_deref(), pv.as_deref())
                    .with_max_output_tokens(a.agent.max_output_tokens()),
            )
        })
        .collect();
    let j = &s.judge.judge;
    let scenarios: Vec<&dyn Scenario> = s.scenarios.iter().map(|x| x.as_ref() as _).collect();
    RunIdentity {
        schema: IDENTITY_SCHEMA,
        faultbench_version: env!("CARGO_PKG_VERSION").to_string(),
        created_at: faultbench_core::record::now_rfc3339(),
        adopted: false,
        agents,
        ticket_hint: s.ticket_hint.to_string(),
        judge: JudgeIdentity::new(&s.judge.kind, j.profile()),
        tool_policy: s.tool_policy.clone(),
        telemetry: s.telemetry,
        max_turns: s.budget.max_turns,
        wall_clock_secs: s.budget.wall_clock_secs,
        reuse_labs: s.reuse_labs,
        emulator: s.emulator.to_string(),
        link_model: s.link_model.map(|m| m.to_string()),
        task: s.task.to_string(),
        repair_persist: s.repair_persist,
        scenarios: ScenarioSet::of(&scenarios),
        extra: BTreeMap::new(),
    }
}

/// What the runs root says about this configuration.
#[derive(Clone, Debug)]
pub struct IdentityVerdict {
    /// The identity to store (the stored one, extended; or this one for a new root).
    pub to_store: RunIdentity,
    /// One line about how this configuration relates to the root's.
    pub note: String,
}

/// Compares `new` with the identity stored in `root` without writing anything; an error lists
/// every differing field.
pub(crate) fn check(
    root: &Path,
    new: &RunIdentity,
    adopt: bool,
) -> Result<IdentityVerdict, BenchError> {
    let stored = RunIdentity::load(root)?;
    let has_runs = holds_runs(root);
    let to_store = reconcile_at(root, stored.as_ref(), has_runs, new, adopt)?;
    let note = match &stored {
        None if to_store.adopted => format!(
            "{} holds runs made before faultbench recorded configurations; this configuration will be recorded as theirs (--adopt-config)",
            root.display()
        ),
        None => format!(
            "{} is new: this configuration will be recorded in it",
            root.display()
        ),
        Some(s) => {
            let agents: Vec<&String> = to_store
                .agents
                .keys()
                .filter(|k| !s.agents.contains_key(*k))
                .collect();
            let files = to_store.scenarios.count - s.scenarios.count;
            let mut added = Vec::new();
            if !agents.is_empty() {
                added.push(format!(
                    "agent(s) {}",
                    agents
                        .iter()
                        .map(|a| a.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ));
            }
            if files > 0 {
                added.push(format!("{files} scenario file(s)"));
            }
            if added.is_empty() {
                format!("matches the configuration recorded in {}", root.display())
            } else {
                format!(
                    "matches the configuration recorded in {}, adding {}",
                    root.display(),
                    added.join(" and ")
                )
            }
        }
    };
    Ok(IdentityVerdict { to_store, note })
}
