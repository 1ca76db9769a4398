//! Live verification of a multi-fault scenario, on a fresh lab of its own.
//!
//! 1. The fresh lab's baseline holds; its state is snapshotted.
//! 2. **Each injection takes**: the faults are injected one after the other, and after each,
//!    the checks the file keeps for it hold.
//! 3. **Together**: the file's whole `[POST-INJECT-CHECK]` holds in one round — what the
//!    benchmark checks before an agent starts. Then **what a user sees** is measured on this
//!    lab: each fault's probes ([`crate::symptom::observe`], the single variants' reader) with
//!    every fault in place, so a masked fault's probes show the mask's symptom, not their
//!    own. The observations go to the journal and the ticket is written from them
//!    ([`observed_ticket`]).
//! 4. **One fix at a time**, in the `[FIX]`'s order (masking faults first): after each fix the
//!    faults not yet fixed still hold their checks (no fix undid another fault), and the last
//!    fault left holds *all* of its own single-fault checks, its connectivity controls
//!    included — for a masking pair, the hidden fault proven on its own once its mask is gone.
//! 5. After the last fix the baseline holds again, and the repair task's oracle
//!    ([`faultbench_core::repair::faults_gone`]) finds every fault gone.
//!
//! The lab is then compared with its fresh snapshot (differences are noted, not failures, as
//! for single variants) and torn down: a multi-fault scenario never shares a lab.

use super::compose::MultiVariant;
use crate::graph::stable_hash;
use crate::symptom::{self, ObservedSymptoms};
use crate::tickets::{self, TicketError};
use crate::verify::Verification;
use faultbench_core::emulator::{Emulator, Lab};
use faultbench_core::inject::{InjectionStatus, apply_injection, verify_injection};
use faultbench_core::lab::{Baseline, Topology};
use faultbench_core::phases::{self, PhaseOptions};
use faultbench_core::repair::faults_gone;
use faultbench_core::scenario::{PostInjectCheck, Scenario, ScenarioSpec};
use faultbench_core::snapshot::{Snapshot, SnapshotOptions};
use std::time::{Duration, Instant};

/// Verifies `mv` on a freshly deployed lab (torn down before returning).
pub async fn verify_multi(
    emulator: &dyn Emulator,
    topology: &Topology,
    baseline: &Baseline,
    mv: &MultiVariant,
    opts: &PhaseOptions,
) -> Verification {
    let t = Instant::now();
    let d = phases::deploy(emulator, topology, None).await;
    let lab = match d.lab {
        Ok(l) => l,
        Err(e) => return outcome(t, Err(("deploy", format!("deploy: {e}")))),
    };
    let r = run_stages(lab.as_ref(), baseline, mv, opts).await;
    let _ = lab.teardown().await;
    outcome(t, r)
}

/// The scenario of `mv` with its ticket written from `observed` (each fault's probes on the
/// lab carrying every fault, as [`run_stages`] measures them): the composed file's ticket is
/// only a placeholder until the combined lab has been looked at.
pub fn observed_ticket(
    mv: &MultiVariant,
    observed: &[ObservedSymptoms],
) -> Result<ScenarioSpec, TicketError> {
    // Masking faults first: what a user notices first leads the ticket.
    let ordered: Vec<ObservedSymptoms> = mv
        .fix_order
        .iter()
        .filter_map(|&k| observed.get(k).cloned())
        .collect();
    let ticket = tickets::correct_multi(&ordered, stable_hash(&mv.variant.id));
    tickets::with_ticket(&mv.variant.spec, &ticket)
}

/// A verified stage run: notes, and each fault's probes with every fault in place.
type Passed = (String, Vec<ObservedSymptoms>);

fn outcome(t: Instant, r: Result<Passed, (&str, String)>) -> Verification {
    let (passed, stage, reason, observed_faults) = match r {
        Ok((note, obs)) => (true, String::new(), note, obs),
        Err((stage, why)) => (false, stage.to_string(), why, Vec::new()),
    };
    Verification {
        passed,
        stage,
        reason,
        seconds: t.elapsed().as_secs_f64(),
        reused: false,
        observed: None,
        observed_faults,
        // Multi-fault verification is not split into the single-fault phases.
        phases: Default::default(),
    }
}

async fn holds(
    lab: &dyn Lab,
    checks: &[PostInjectCheck],
    opts: &PhaseOptions,
) -> Result<(), String> {
    let r = verify_injection(lab, checks, &opts.verify).await;
    if r.passed() {
        Ok(())
    } else {
        Err(r.reason().unwrap_or_default())
    }
}

/// Stages 1–5 on `lab`; `Ok` carries a note (differences left behind) and each fault's
/// probes measured with every fault in place (injection order), `Err` the stage and why.
pub async fn run_stages(
    lab: &dyn Lab,
    baseline: &Baseline,
    mv: &MultiVariant,
    opts: &PhaseOptions,
) -> Result<Passed, (&'static str, String)> {
    let base = phases::wait_for_healthy(lab, baseline, opts).await;
    if !base.passed() {
        return Err((
            "baseline",
            format!(
                "fresh lab: baseline did not hold: {}",
                base.failures().join("; ")
            ),
        ));
    }
    let pristine = Snapshot::take(lab, &SnapshotOptions::default()).await;
    for (k, c) in mv.components.iter().enumerate() {
        let applied = apply_injection(lab, c.spec.injection(), opts.command_timeout).await;
        if applied.status() != InjectionStatus::Applied {
            return Err((
                "injection",
                format!(
                    "fault {} ({}): {}",
                    k + 1,
                    mv.label(k),
                    applied.reason().unwrap_or_default()
                ),
            ));
        }
        holds(lab, &mv.groups[k].checks, opts).await.map_err(|w| {
            (
                "verification",
                format!("fault {} ({}) did not take: {w}", k + 1, mv.label(k)),
            )
        })?;
    }
    holds(lab, mv.variant.spec.post_inject_checks(), opts)
        .await
        .map_err(|w| {
            (
                "verification",
                format!("the faults do not hold together: {w}"),
            )
        })?;
    // What a user sees with every fault in place: each fault's own probes, on this lab.
    let mut observed = Vec::with_capacity(mv.components.len());
    for c in &mv.components {
        observed.push(symptom::observe(lab, &c.symptom, &c.faulted_device()).await);
    }
    let n = mv.fix_order.len();
    let quick = PhaseOptions {
        revert_wait: Duration::ZERO,
        ..opts.clone()
    };
    for (step, &k) in mv.fix_order.iter().enumerate() {
        let last = step + 1 == n;
        let c = &mv.components[k];
        let rev = phases::revert(lab, baseline, &c.spec, if last { opts } else { &quick }).await;
        if rev.commands == 0 {
            return Err((
                "revert",
                format!("fault {} has no runnable [FIX] command", k + 1),
            ));
        }
        if let Some(p) = rev.problem {
            return Err(("revert", p));
        }
        if last {
            if !rev.restored() {
                return Err((
                    "revert",
                    format!(
                        "the fixes did not restore the baseline: {}",
                        rev.baseline.failures().join("; ")
                    ),
                ));
            }
            break;
        }
        let left: Vec<usize> = mv.fix_order[step + 1..].to_vec();
        for &j in &left {
            holds(lab, &mv.groups[j].checks, opts).await.map_err(|w| {
                (
                    "isolation",
                    format!(
                        "fixing fault {} ({}) also changed fault {} ({}): {w}",
                        k + 1,
                        mv.label(k),
                        j + 1,
                        mv.label(j)
                    ),
                )
            })?;
        }
        if let [only] = left[..] {
            holds(lab, mv.components[only].spec.post_inject_checks(), opts)
                .await
                .map_err(|w| {
                    (
                        "isolation",
                        format!(
                            "fault {} ({}) alone does not hold its own checks: {w}",
                            only + 1,
                            mv.label(only)
                        ),
                    )
                })?;
        }
    }
    let gone = faults_gone(lab, &mv.variant.spec.fault_groups(), &opts.verify, false).await;
    if !gone.gone {
        return Err((
            "revert",
            format!(
                "after every fix the repair oracle still sees a fault: {}",
                gone.still_present.join("; ")
            ),
        ));
    }
    let now = Snapshot::take(lab, &SnapshotOptions::default()).await;
    let residue: Vec<String> = pristine
        .diff(&now)
        .into_iter()
        .map(|c| c.summary)
        .filter(|s| {
            !(s.contains(" packet_filter: added ") && s.trim_end().ends_with("policy accept;"))
        })
        .collect();
    let note = if residue.is_empty() {
        String::new()
    } else {
        format!(
            "the fixes restore the baseline but leave {} difference(s): {}",
            residue.len(),
            residue
                .iter()
                .take(3)
                .cloned()
                .collect::<Vec<_>>()
                .join("; ")
        )
    };
    Ok((note, observed))
}
