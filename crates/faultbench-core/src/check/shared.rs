//! Sharing one pristine lab among the scenarios that inject nothing.
//!
//! A false-premise scenario and its five persona rewrites all describe the same healthy
//! network, so checking each of them on a freshly deployed lab repeats the same deployment six
//! times. [`check_sharing`] keeps the lab of a passing no-injection check and hands it to the
//! next no-injection scenario of the same topology, whose baseline is then checked again on it.
//! A lab is shared only while nothing has been injected into it: scenarios that inject still
//! get a fresh lab of their own (and tear it down), so every injection is verified exactly as
//! [`check_scenario`] verifies it.

use super::{CheckOptions, CheckOutcome, ScenarioCheck, begin, check_scenario, deploy, ms};
use crate::emulator::{EmuError, Emulator, Lab};
use crate::lab::Topology;
use crate::scenario::Scenario;
use std::sync::Arc;
use std::time::Instant;

/// A running lab into which nothing has been injected and whose last baseline check passed.
pub struct SharedLab {
    topology: String,
    lab: Arc<dyn Lab>,
}

impl SharedLab {
    /// The topology the lab was deployed from.
    pub fn topology(&self) -> &str {
        &self.topology
    }

    /// Tears the lab down.
    pub async fn release(self) -> Result<(), EmuError> {
        self.lab.teardown().await
    }
}

/// Checks `scenario` like [`check_scenario`], except that a scenario without injection runs on
/// `shared` when it holds a lab of the same topology (deploying one otherwise) and leaves a
/// lab whose baseline held in `shared` for the next one. A lab of another topology, or one
/// whose baseline failed, is torn down. Scenarios that inject are checked on a fresh lab and
/// leave `shared` as it is.
pub async fn check_sharing(
    emulator: &dyn Emulator,
    topology: &Topology,
    scenario: &dyn Scenario,
    opts: &CheckOptions,
    shared: &mut Option<SharedLab>,
) -> ScenarioCheck {
    if !scenario.injection().is_negative_control() {
        return check_scenario(emulator, topology, scenario, opts).await;
    }
    let (mut report, baseline) = begin(topology, scenario);
    let Some(baseline) = baseline else {
        return report;
    };
    let reusable = match shared.take() {
        Some(s) if s.topology == topology.id => Some(s.lab),
        Some(other) => {
            // Best effort: a lab that will not go down is found by `faultbench lab gc`.
            let _ = other.release().await;
            None
        }
        None => None,
    };
    let lab = match reusable {
        Some(lab) => {
            report.lab = Some(lab.name().to_string());
            report.reused_lab = true;
            lab
        }
        None => match deploy(emulator, topology, opts, &mut report).await {
            Some(lab) => lab,
            None => return report,
        },
    };
    super::run_on_lab(&lab, &baseline, scenario, opts, &mut report).await;
    if report.outcome == CheckOutcome::Passed {
        *shared = Some(SharedLab {
            topology: topology.id.clone(),
            lab,
        });
        return report;
    }
    let t = Instant::now();
    let down = lab.teardown().await;
    report.times.teardown_ms = ms(t.elapsed());
    if let Err(e) = down {
        report.reason = format!("{}; teardown also failed: {e}", report.reason);
    }
    report
}
