//! Live verification of generated variants: the checks of `scenario check`, on shared labs.
//!
//! Each job keeps one lab. A variant runs on it as a scenario runs in the benchmark: the
//! healthy baseline must hold, the `[INJECTION]` must apply and every `[POST-INJECT-CHECK]`
//! must hold ([`faultbench_core::phases::inject_and_verify`]), and the `[FIX]` must bring the
//! baseline back ([`faultbench_core::phases::revert`]). The lab then goes to the job's next
//! variant only if it is *pristine*: its baseline holds and a state snapshot
//! ([`faultbench_core::snapshot`]) equals the one taken when it was fresh. Anything else
//! (a fix that leaves a rule or an address behind, a failed variant) tears the lab down and the
//! next variant gets a fresh one, so no variant is verified on a lab another one has changed.

use crate::journal::Entry;
use crate::render::Variant;
use crate::symptom::{self, Observed};
use faultbench_core::emulator::{Emulator, Lab};
use faultbench_core::lab::{Baseline, Topology};
use faultbench_core::phases::{self, FaultVerdict, PhaseOptions};
use faultbench_core::snapshot::{Snapshot, SnapshotOptions};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A lab kept between variants, with its fresh state.
pub struct KeptLab {
    lab: Arc<dyn Lab>,
    pristine: Snapshot,
}

impl KeptLab {
    /// The lab (healthy and pristine while it sits in a slot).
    pub fn lab(&self) -> &dyn Lab {
        self.lab.as_ref()
    }

    /// Tears the lab down.
    pub async fn release(self) {
        let _ = self.lab.teardown().await;
    }
}

/// What verifying one variant found.
#[derive(Debug, Clone, PartialEq)]
pub struct Verification {
    /// Verified.
    pub passed: bool,
    /// Where it stopped (empty when it passed).
    pub stage: String,
    /// Why, or notes.
    pub reason: String,
    /// Seconds spent (deploys included).
    pub seconds: f64,
    /// The lab was reused from an earlier variant.
    pub reused: bool,
    /// What a user saw while the fault held (only when it took).
    pub observed: Option<Observed>,
    /// For a multi-fault scenario: each fault's probes (injection order) measured with every
    /// fault in place (empty otherwise).
    pub observed_faults: Vec<Observed>,
}

impl Verification {
    /// The journal entry of `v` with this outcome.
    pub fn entry(&self, v: &Variant, seed: u64, topology: &str) -> Entry {
        Entry {
            seed,
            id: v.id.clone(),
            family: v.family.clone(),
            topology: topology.to_string(),
            hash: v.hash.clone(),
            verdict: if self.passed { "verified" } else { "failed" }.into(),
            stage: self.stage.clone(),
            reason: self.reason.clone(),
            seconds: (self.seconds * 10.0).round() / 10.0,
            symptoms: self.observed.clone(),
            fault_symptoms: self.observed_faults.clone(),
        }
    }
}

/// An added packet-filter chain that accepts everything and holds no rule (what `iptables -A`
/// then `-D` leaves behind): it filters nothing, so the lab is as good as pristine. A rule that
/// remains is its own item and is never ignored.
fn empty_chain(summary: &str) -> bool {
    summary.contains(" packet_filter: added ") && summary.trim_end().ends_with("policy accept;")
}

/// Waits until the snapshot of `lab` equals `pristine` (a routing table may take a moment to
/// settle after a fix); returns the differences left at the deadline.
async fn settle_to(lab: &dyn Lab, pristine: &Snapshot, wait: Duration) -> Vec<String> {
    let t = Instant::now();
    loop {
        let now = Snapshot::take(lab, &SnapshotOptions::default()).await;
        let diff: Vec<String> = pristine
            .diff(&now)
            .into_iter()
            .map(|c| c.summary)
            .filter(|s| !empty_chain(s))
            .collect();
        if diff.is_empty() || t.elapsed() >= wait {
            return diff;
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
}

/// Verifies `variant` on the job's lab in `slot` (deploying one when empty) and leaves a
/// pristine lab in `slot` for the next variant.
pub async fn verify_variant(
    emulator: &dyn Emulator,
    topology: &Topology,
    baseline: &Baseline,
    variant: &Variant,
    opts: &PhaseOptions,
    slot: &mut Option<KeptLab>,
) -> Verification {
    let t = Instant::now();
    let fail = |stage: &str, reason: String, reused: bool| Verification {
        passed: false,
        stage: stage.into(),
        reason,
        seconds: t.elapsed().as_secs_f64(),
        reused,
        observed: None,
        observed_faults: Vec::new(),
    };
    let reused = slot.is_some();
    let kept = match slot.take() {
        Some(k) => k,
        None => {
            let d = phases::deploy(emulator, topology, None).await;
            let lab = match d.lab {
                Ok(l) => l,
                Err(e) => return fail("deploy", format!("deploy: {e}"), false),
            };
            let base = phases::wait_for_healthy(lab.as_ref(), baseline, opts).await;
            if !base.passed() {
                let _ = lab.teardown().await;
                return fail(
                    "baseline",
                    format!(
                        "fresh lab: baseline did not hold: {}",
                        base.failures().join("; ")
                    ),
                    false,
                );
            }
            let pristine = Snapshot::take(lab.as_ref(), &SnapshotOptions::default()).await;
            KeptLab { lab, pristine }
        }
    };
    let lab = kept.lab.as_ref();
    let fault = phases::inject_and_verify(lab, &variant.spec, opts).await;
    let mut result = match fault.verdict {
        FaultVerdict::Took => None,
        FaultVerdict::NothingToInject => {
            Some(fail("injection", "nothing to inject".into(), reused))
        }
        FaultVerdict::Unsupported(w) => Some(fail(
            "injection",
            format!("unsupported on this host: {w}"),
            reused,
        )),
        FaultVerdict::InjectionFailed(w) => Some(fail("injection", w, reused)),
        FaultVerdict::DidNotTake(w) => Some(fail(
            "verification",
            format!("post-injection checks did not hold: {w}"),
            reused,
        )),
    };
    // Measure what a user sees while the fault holds: the tickets are written from this.
    let observed = if result.is_none() {
        Some(symptom::observe(lab, &variant.symptom, &variant.faulted_device()).await)
    } else {
        None
    };
    let rev = phases::revert(lab, baseline, &variant.spec, opts).await;
    if result.is_none() {
        if rev.commands == 0 {
            result = Some(fail(
                "revert",
                "[FIX] holds no runnable command".into(),
                reused,
            ));
        } else if let Some(p) = &rev.problem {
            result = Some(fail("revert", p.clone(), reused));
        } else if !rev.restored() {
            result = Some(fail(
                "revert",
                format!(
                    "the [FIX] did not restore the baseline: {}",
                    rev.baseline.failures().join("; ")
                ),
                reused,
            ));
        }
    }
    let residue = if rev.restored() {
        settle_to(lab, &kept.pristine, Duration::from_secs(5)).await
    } else {
        vec!["baseline not restored".into()]
    };
    let mut v = result.unwrap_or(Verification {
        passed: true,
        stage: String::new(),
        reason: String::new(),
        seconds: 0.0,
        reused,
        observed: None,
        observed_faults: Vec::new(),
    });
    if v.passed {
        v.observed = observed;
    }
    if residue.is_empty() {
        *slot = Some(kept);
    } else {
        if v.passed {
            v.reason = format!(
                "the fix restores the baseline but leaves {} difference(s) (lab not reused): {}",
                residue.len(),
                residue
                    .iter()
                    .take(3)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("; ")
            );
        }
        kept.release().await;
    }
    v.seconds = t.elapsed().as_secs_f64();
    v
}

#[cfg(test)]
mod tests {
    #[test]
    fn only_empty_accepting_chains_count_as_pristine() {
        assert!(super::empty_chain(
            "pc1 packet_filter: added table ip filter › chain OUTPUT › type filter hook output priority filter; policy accept;"
        ));
        assert!(!super::empty_chain(
            "pc1 packet_filter: added table ip filter › chain OUTPUT › ip daddr 10.0.0.1 counter drop"
        ));
        assert!(!super::empty_chain(
            "pc1 packet_filter: added table ip filter › chain INPUT › type filter hook input priority filter; policy drop;"
        ));
    }
}
