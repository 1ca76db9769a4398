//! Persistence: does the repair survive a restart of the routing daemons?
//!
//! A fix made with `vtysh` in FRR's running state only, or a daemon started by hand with
//! settings its saved configuration does not have, is undone when the daemons restart. With
//! `--repair-persist` the harness restarts FRR (`service frr restart`) on every device in the
//! fault's scope or changed by the agent that runs it, waits for the baseline, and checks the
//! fault again. (A fault injected in running state only is itself undone by such a restart:
//! the check speaks for faults that survive one.)

use super::{RepairOptions, faults_gone};
use crate::emulator::{Command, Lab};
use crate::lab::Baseline;
use crate::phases::wait_for_baseline;
use crate::scenario::Scenario;
use crate::snapshot::{Aspect, Snapshot};
use serde::{Deserialize, Serialize};
use std::time::Instant;

/// What the persistence check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PersistenceReport {
    /// Devices whose routing daemons were restarted.
    pub restarted: Vec<String>,
    /// After the restart the fault is still gone and the baseline holds.
    pub held: bool,
    /// What did not hold (restart errors, fault checks holding again, baseline failures).
    pub failures: Vec<String>,
    /// Time spent, in milliseconds.
    pub duration_ms: u64,
}

/// Restarts FRR on those of `devices` that run it (per `after`), then waits up to
/// `opts.persist_wait` for the baseline and checks the fault once more.
pub async fn check_persistence(
    lab: &dyn Lab,
    scenario: &dyn Scenario,
    baseline: &Baseline,
    after: &Snapshot,
    devices: &[String],
    opts: &RepairOptions,
) -> PersistenceReport {
    let t = Instant::now();
    let runs_frr = |d: &str| {
        after
            .devices
            .get(d)
            .and_then(|s| s.items(Aspect::Services))
            .is_some_and(|s| s.contains_key("zebra"))
    };
    let mut restarted = Vec::new();
    let mut failures = Vec::new();
    for d in devices.iter().filter(|d| runs_frr(d)) {
        let out = lab
            .exec(
                d,
                &Command::shell("service frr restart"),
                opts.command_timeout,
            )
            .await;
        match out {
            Ok(o) if o.success() => restarted.push(d.clone()),
            Ok(o) => failures.push(format!(
                "{d}: `service frr restart` exit {:?}: {}",
                o.exit_code,
                o.stderr.lines().next().unwrap_or("")
            )),
            Err(e) => failures.push(format!("{d}: `service frr restart`: {e}")),
        }
    }
    let b = wait_for_baseline(
        lab,
        baseline,
        opts.persist_wait,
        opts.baseline_interval,
        opts.probe_timeout,
    )
    .await;
    failures.extend(b.failures().into_iter().map(|f| format!("baseline: {f}")));
    if !scenario.injection().is_negative_control() {
        let f = faults_gone(lab, &scenario.fault_groups(), &opts.fault_retry, false).await;
        if !f.gone {
            failures.push("the fault's checks hold again after the restart".into());
        }
    }
    PersistenceReport {
        restarted,
        held: failures.is_empty(),
        failures,
        duration_ms: t.elapsed().as_millis().try_into().unwrap_or(u64::MAX),
    }
}
