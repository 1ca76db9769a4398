//! How a run ended.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The status of one run (the public release's vocabulary plus `unsupported_on_host` and the
/// presence watch's `fault_vanished` and `baseline_broke`).
///
/// Only [`RunStatus::Scored`] runs are *answered* and enter score means. `no_submission` and
/// `no_output` are *timeouts*: results, counted and reported beside the scores. The
/// infrastructure statuses are never charged to the agent and are re-run on `--resume`;
/// `judge_failed` keeps the diagnosis and is completed by re-judging.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunStatus {
    /// Answered and judged.
    Scored,
    /// The turn budget ran out without a parsable verdict (timeout).
    NoSubmission,
    /// The agent produced no final text at all (timeout).
    NoOutput,
    /// The judge failed; the diagnosis is kept for re-judging.
    JudgeFailed,
    /// The agent crashed or its provider failed before answering.
    AgentError,
    /// The lab did not come up (or its healthy baseline did not hold).
    DeployIncomplete,
    /// The post-injection check never passed; the agent did not run.
    InjectionFailed,
    /// A harness error.
    PipelineError,
    /// The host kernel cannot emulate what the scenario needs.
    UnsupportedOnHost,
    /// After the agent, the injected fault no longer held although the agent changed nothing:
    /// the fault healed itself during the run, so the run measured nothing.
    FaultVanished,
    /// After the agent, the healthy baseline of a network with nothing injected no longer held
    /// although the agent changed nothing.
    BaselineBroke,
}

impl RunStatus {
    /// Every status.
    pub const ALL: [RunStatus; 11] = [
        RunStatus::Scored,
        RunStatus::NoSubmission,
        RunStatus::NoOutput,
        RunStatus::JudgeFailed,
        RunStatus::AgentError,
        RunStatus::DeployIncomplete,
        RunStatus::InjectionFailed,
        RunStatus::PipelineError,
        RunStatus::UnsupportedOnHost,
        RunStatus::FaultVanished,
        RunStatus::BaselineBroke,
    ];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RunStatus::Scored => "scored",
            RunStatus::NoSubmission => "no_submission",
            RunStatus::NoOutput => "no_output",
            RunStatus::JudgeFailed => "judge_failed",
            RunStatus::AgentError => "agent_error",
            RunStatus::DeployIncomplete => "deploy_incomplete",
            RunStatus::InjectionFailed => "injection_failed",
            RunStatus::PipelineError => "pipeline_error",
            RunStatus::UnsupportedOnHost => "unsupported_on_host",
            RunStatus::FaultVanished => "fault_vanished",
            RunStatus::BaselineBroke => "baseline_broke",
        }
    }

    /// Answered (enters score means).
    pub fn is_answered(self) -> bool {
        self == RunStatus::Scored
    }

    /// A timeout: the budget ended without a parsable verdict.
    pub fn is_timeout(self) -> bool {
        matches!(self, RunStatus::NoSubmission | RunStatus::NoOutput)
    }

    /// A result of the agent (answered or timed out), as opposed to a harness problem.
    pub fn is_agent_result(self) -> bool {
        self.is_answered() || self.is_timeout()
    }

    /// Should `--resume` run it again from scratch?
    pub fn needs_rerun(self) -> bool {
        matches!(
            self,
            RunStatus::AgentError
                | RunStatus::DeployIncomplete
                | RunStatus::InjectionFailed
                | RunStatus::PipelineError
                | RunStatus::FaultVanished
                | RunStatus::BaselineBroke
        )
    }

    /// Should it be re-judged (without re-running the agent)?
    pub fn needs_rejudge(self) -> bool {
        self == RunStatus::JudgeFailed
    }
}

impl fmt::Display for RunStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RunStatus {
    type Err = crate::category::UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        RunStatus::ALL
            .into_iter()
            .find(|st| st.as_str() == s.trim())
            .ok_or_else(|| crate::category::UnknownName {
                what: "run status",
                got: s.to_string(),
                expected: "scored, no_submission, no_output, judge_failed, agent_error, deploy_incomplete, injection_failed, pipeline_error, unsupported_on_host, fault_vanished, baseline_broke",
            })
    }
}

/// Decides a run's status from what the agent returned, with the release's precedence:
/// an error without a budget hit and without a parsable block is `agent_error`; empty final text
/// is `no_output`; a budget hit without a parsable block is `no_submission`; everything else goes
/// to the judge (`scored`, or `judge_failed` if the judge then fails).
pub fn status_after_agent(outcome: &crate::agent::AgentOutcome) -> RunStatus {
    let parsed_ok = outcome.diagnosis().parsed_ok;
    let budget_hit = outcome.hit_max_turns || outcome.hit_wall_clock;
    if outcome.error.is_some() && !budget_hit && !parsed_ok {
        RunStatus::AgentError
    } else if outcome.final_text.trim().is_empty() {
        RunStatus::NoOutput
    } else if budget_hit && !parsed_ok {
        RunStatus::NoSubmission
    } else {
        RunStatus::Scored
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::AgentOutcome;

    #[test]
    fn precedence() {
        let block = "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1\ndiagnosis_text:\nx\n=== END ===";
        let mut o = AgentOutcome::failed("boom");
        assert_eq!(status_after_agent(&o), RunStatus::AgentError);
        o.hit_max_turns = true;
        assert_eq!(status_after_agent(&o), RunStatus::NoOutput);
        o.final_text = "still looking".into();
        assert_eq!(status_after_agent(&o), RunStatus::NoSubmission);
        o.final_text = block.into();
        assert_eq!(status_after_agent(&o), RunStatus::Scored);
        let free_text = AgentOutcome::answer("r1 is broken");
        assert_eq!(status_after_agent(&free_text), RunStatus::Scored);
        for s in RunStatus::ALL {
            assert_eq!(s.as_str().parse::<RunStatus>().unwrap(), s);
        }
    }
}
