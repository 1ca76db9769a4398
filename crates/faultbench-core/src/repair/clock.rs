//! Time to repair: while the agent works, the harness re-runs the fault's checks from outside
//! the agent's view and notes when they first stopped holding.
//!
//! The checks run through the lab directly (never through the agent's toolbox, so they are in
//! no trace and cost no tool call); their traffic (a few pings per round) is the only trace
//! they leave in the network.

use crate::emulator::Lab;
use crate::scenario::{FaultGroup, PostInjectCheck};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// What the repair clock saw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeToRepair {
    /// Milliseconds after the agent started at which a round first found the fault gone
    /// (every check ran, one failed); `None` when no round did.
    pub cleared_after_ms: Option<u64>,
    /// Rounds run.
    pub rounds: u32,
}

/// A background task timing the repair of one run.
/// Dropping it (a run that ends without [`RepairClock::stop`]) stops the task too.
pub struct RepairClock {
    task: Option<tokio::task::JoinHandle<TimeToRepair>>,
    stop: tokio::sync::watch::Sender<bool>,
}

impl RepairClock {
    /// Starts checking the faults' `groups` on `lab` every `interval`, the first round one
    /// interval after the start (the agent has done nothing before). Stops by itself once a
    /// round finds every fault gone (each group has a failed check, every check ran).
    pub fn start(
        lab: Arc<dyn Lab>,
        groups: Vec<FaultGroup>,
        interval: Duration,
        command_timeout: Duration,
    ) -> RepairClock {
        let checks: Vec<PostInjectCheck> = groups.iter().flat_map(|g| g.checks.clone()).collect();
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let t0 = Instant::now();
        let task = tokio::spawn(async move {
            let mut out = TimeToRepair::default();
            if checks.is_empty() {
                return out;
            }
            loop {
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = stopped.changed() => return out,
                }
                let round = tokio::select! {
                    r = crate::inject::check_round(lab.as_ref(), &checks, command_timeout) => r,
                    _ = stopped.changed() => return out,
                };
                out.rounds += 1;
                let ran = round.iter().all(|c| !c.could_not_run());
                if ran && super::still_present(&groups, &round).is_empty() {
                    out.cleared_after_ms =
                        Some(t0.elapsed().as_millis().try_into().unwrap_or(u64::MAX));
                    return out;
                }
            }
        });
        RepairClock {
            task: Some(task),
            stop,
        }
    }

    /// Stops the clock (a round in flight is abandoned) and returns what it saw.
    pub async fn stop(mut self) -> TimeToRepair {
        let _ = self.stop.send(true);
        match self.task.take() {
            Some(t) => t.await.unwrap_or_default(),
            None => TimeToRepair::default(),
        }
    }
}

impl Drop for RepairClock {
    fn drop(&mut self) {
        if let Some(t) = self.task.take() {
            t.abort();
        }
    }
}
