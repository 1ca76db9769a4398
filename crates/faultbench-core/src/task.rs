//! The task an agent is given: diagnose (the paper's task) or repair.
//!
//! In **diagnose** the agent investigates and answers with a `=== DIAGNOSIS ===` block; the
//! judge scores the text. In **repair** the agent gets the same ticket, summary, tools and
//! budget, plus one added section asking it to fix the fault on the live network and to say in
//! its diagnosis what it changed; after it ends, the lab itself says whether the fault is gone,
//! the healthy baseline holds and what else changed ([`crate::repair`]).
//!
//! ```
//! use faultbench_core::task::{Task, REPAIR_INSTRUCTIONS};
//! use faultbench_core::agent::{AgentInput, Budget};
//! assert_eq!("repair".parse::<Task>().unwrap(), Task::Repair);
//! assert_eq!(Task::default(), Task::Diagnose);
//! let plain = AgentInput::new("Devices:\n  pc1: eth0=A", "pc1 is offline", Budget::default());
//! let repair = plain.clone().with_task(Task::Repair);
//! assert!(repair.prompt.starts_with(&plain.prompt));
//! assert!(repair.prompt.ends_with(REPAIR_INSTRUCTIONS));
//! assert_eq!(plain.clone().with_task(Task::Diagnose), plain);
//! ```

use serde::{Deserialize, Serialize};

/// What the agent is asked to do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Task {
    /// Find the fault and describe it (the paper's task).
    #[default]
    Diagnose,
    /// Find the fault, fix it on the live network, and describe what was done.
    Repair,
}

impl Task {
    /// Every task, in order.
    pub const ALL: [Task; 2] = [Task::Diagnose, Task::Repair];

    /// `diagnose` or `repair`.
    pub fn as_str(self) -> &'static str {
        match self {
            Task::Diagnose => "diagnose",
            Task::Repair => "repair",
        }
    }

    /// True for the paper's task (used to leave the field out of older-style records).
    pub fn is_diagnose(&self) -> bool {
        *self == Task::Diagnose
    }
}

impl std::fmt::Display for Task {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A task name that is neither `diagnose` nor `repair`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown task `{0}` (expected one of: diagnose, repair)")]
pub struct UnknownTask(pub String);

impl std::str::FromStr for Task {
    type Err = UnknownTask;
    fn from_str(s: &str) -> Result<Self, UnknownTask> {
        Task::ALL
            .into_iter()
            .find(|t| t.as_str() == s.trim())
            .ok_or_else(|| UnknownTask(s.to_string()))
    }
}

/// The heading of the section the repair task adds to the agent's user message.
pub const REPAIR_HEADING: &str = "# Your task";

/// What the repair task asks, in this project's words. It adds the duty to act and to report
/// the action; it says nothing about whether the ticket can be trusted (the same information as
/// the diagnose task, so that over-diagnosis stays measurable as an unneeded change).
pub const REPAIR_INSTRUCTIONS: &str = "\
You are allowed to change this network, and you are expected to. Work out what causes the \
problem described above and fix it on the live devices with the tools you have (configuration \
commands, service actions, shell commands), then check that the fix works. Change only what \
the fault requires. End, as always, with the `=== DIAGNOSIS ===` block; in diagnosis_text, \
state which commands you ran on which device, or that you changed nothing.";
