//! The repair task's part of a run: a snapshot before the injection, the repair clock while
//! the agent works, and the verification after it ([`crate::repair`]), which stands in for the
//! presence watch.

use super::Runner;
use crate::emulator::Lab;
use crate::lab::Baseline;
use crate::phases::PresenceReport;
use crate::repair::{RepairClock, RepairReport, TimeToRepair, verify_repair};
use crate::scenario::Scenario;
use crate::snapshot::Snapshot;
use crate::task::Task;
use std::sync::Arc;
use std::time::Duration;

/// How the agent's phase ended, as the verification needs it.
pub(super) struct AgentEnd<'a> {
    /// The snapshot right before the agent.
    pub before: &'a Snapshot,
    /// The snapshot right after it.
    pub after: &'a Snapshot,
    /// The two differ.
    pub changed: bool,
    /// How long the agent worked.
    pub duration_ms: u64,
}

/// The repair task's state during one run (nothing in the diagnose task).
pub(super) struct Repairing {
    pre_injection: Option<Snapshot>,
    /// The pre-injection snapshot was taken while the lab was prepared (off the run's path).
    prepared: bool,
    clock: Option<RepairClock>,
    /// What the clock saw, once stopped at the agent's end.
    timed: Option<TimeToRepair>,
}

impl Repairing {
    /// Before the injection: in the repair task, the snapshot collateral is measured against
    /// (a false premise injects nothing, so the snapshot before the agent serves).
    pub(super) async fn before_injection(
        runner: &Runner,
        lab: &dyn Lab,
        scenario: &dyn Scenario,
        healthy: Option<Snapshot>,
    ) -> Result<Option<Repairing>, String> {
        if runner.config.task != Task::Repair {
            return Ok(None);
        }
        crate::repair::check_repairable(scenario).map_err(|e| e.to_string())?;
        let (pre_injection, prepared) = if scenario.injection().is_negative_control() {
            (None, false)
        } else if let Some(s) = healthy {
            (Some(s), true)
        } else {
            (
                Some(Snapshot::take(lab, &runner.config.snapshot).await),
                false,
            )
        };
        Ok(Some(Repairing {
            pre_injection,
            prepared,
            clock: None,
            timed: None,
        }))
    }

    /// Right before the agent starts: the repair clock (for an injected fault).
    pub(super) fn agent_starts(
        &mut self,
        runner: &Runner,
        lab: &Arc<dyn Lab>,
        scenario: &dyn Scenario,
    ) {
        if scenario.injection().is_negative_control() {
            return;
        }
        let o = &runner.config.repair;
        self.clock = Some(RepairClock::start(
            lab.clone(),
            scenario.fault_groups(),
            o.watch_interval,
            o.fault_retry.command_timeout,
        ));
    }

    /// The moment the agent ends: the clock stops, so no round after the agent's end (during
    /// the snapshot that follows) can count as the agent's repair.
    pub(super) async fn agent_ends(&mut self) {
        if let Some(c) = self.clock.take() {
            self.timed = Some(c.stop().await);
        }
    }

    /// After the agent and its snapshot: the verification, and the presence report it implies
    /// (the fault still there, or the false premise's baseline still whole).
    pub(super) async fn after_agent(
        self,
        runner: &Runner,
        lab: &dyn Lab,
        scenario: &dyn Scenario,
        baseline: &Baseline,
        end: AgentEnd<'_>,
    ) -> (RepairReport, PresenceReport) {
        let AgentEnd {
            before,
            after,
            changed: agent_changed,
            duration_ms: agent_ms,
        } = end;
        // The clock was stopped (and read) by `agent_ends`.
        let clock = self.timed;
        let pre = self.pre_injection.as_ref().unwrap_or(before);
        let mut report = verify_repair(
            lab,
            scenario,
            baseline,
            pre,
            after,
            agent_changed,
            &runner.config.repair,
        )
        .await;
        if let Some(c) = clock {
            // A round that ended as the agent did is read at the agent's end: the clock
            // starts a moment before the agent's own timer, and the agent's time bounds it.
            report.time_to_repair_ms = c.cleared_after_ms.map(|ms| ms.min(agent_ms));
            report.clock_rounds = c.rounds;
        }
        if report.time_to_repair_ms.is_none() && report.verdict.fault_gone() {
            // The fault went after the clock's last round: it was gone by the agent's end at
            // the latest (an upper bound, and said so).
            report.time_to_repair_ms = Some(agent_ms);
            report.time_to_repair_at_agent_end = true;
        }
        if self.pre_injection.is_none() {
            report.pre_injection_snapshot_ms = 0;
        }
        report.pre_injection_snapshot_at_prepare = self.prepared;
        let presence = presence_of(&report);
        (report, presence)
    }
}

/// The presence watch's view of a repair verification: for an injected fault, "held" means
/// the fault's checks still hold; for a false premise, that the baseline holds.
fn presence_of(r: &RepairReport) -> PresenceReport {
    let elapsed = Duration::from_millis(r.duration_ms);
    match &r.fault {
        Some(f) => PresenceReport {
            watched: "fault".into(),
            held: !f.gone,
            attempts: f.attempts,
            failures: f
                .checks
                .iter()
                .filter(|c| !c.passed)
                .map(|c| format!("{} `{}`: {}", c.check.device, c.check.command, c.reason))
                .collect(),
            elapsed,
        },
        None => PresenceReport {
            watched: "baseline".into(),
            held: r.baseline.healthy,
            attempts: r.baseline.attempts,
            failures: r
                .baseline
                .probes
                .iter()
                .filter(|p| !p.passed)
                .map(|p| {
                    format!(
                        "{} ({}: {}): {}",
                        p.probe.name, p.probe.device, p.probe.command, p.detail
                    )
                })
                .collect(),
            elapsed,
        },
    }
}
