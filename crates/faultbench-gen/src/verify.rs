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

use crate::journal::{JournalEntry, PhaseTimes};
use crate::render::Variant;
use crate::symptom::{self, ObservedSymptoms};
use faultbench_core::Scenario;
use faultbench_core::emulator::{Emulator, Lab};
use faultbench_core::lab::{Baseline, Topology};
use faultbench_core::phases::{self, FaultVerdict, PhaseOptions};
use faultbench_core::pipeline::revert_commands;
use faultbench_core::snapshot::{
    Aspect, SNAPSHOT_SCRIPT_IP_ONLY, Snapshot, SnapshotOptions, read_device_with,
};
use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The phase options of a generation run: those of `scenario check`, with the given bounds,
/// and rounds spaced 100 ms apart (not 250 ms). A generated variant's checks, baseline and
/// pristine check are polled until the state they wait for shows; the spacing only bounds how
/// late a state that has arrived is seen, and one round of checks is short (a ping or two).
pub fn phase_options(baseline_timeout: Duration, verify_timeout: Duration) -> PhaseOptions {
    let defaults = PhaseOptions::default();
    PhaseOptions {
        baseline_wait: baseline_timeout,
        baseline_interval: Duration::from_millis(100),
        revert_wait: baseline_timeout,
        verify: faultbench_core::inject::VerifyRetry {
            interval: Duration::from_millis(100),
            deadline: verify_timeout,
            ..defaults.verify
        },
        ..defaults
    }
}

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
    pub observed: Option<ObservedSymptoms>,
    /// For a multi-fault scenario: each fault's probes (injection order) measured with every
    /// fault in place (empty otherwise).
    pub observed_faults: Vec<ObservedSymptoms>,
    /// Where the seconds went.
    pub phases: PhaseTimes,
}

impl Verification {
    /// The journal entry of `v` with this outcome.
    pub fn entry(&self, v: &Variant, seed: u64, topology: &str) -> JournalEntry {
        JournalEntry {
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
            phases: Some(round_phases(&self.phases)),
            draw: 0,
        }
    }
}

fn round_phases(p: &PhaseTimes) -> PhaseTimes {
    let r = |x: f64| (x * 100.0).round() / 100.0;
    PhaseTimes {
        deploy: r(p.deploy),
        fresh_baseline: r(p.fresh_baseline),
        inject: r(p.inject),
        checks: r(p.checks),
        observe: r(p.observe),
        fix: r(p.fix),
        restored: r(p.restored),
        pristine: r(p.pristine),
        teardown: r(p.teardown),
    }
}

/// An added packet-filter chain that accepts everything and holds no rule (what `iptables -A`
/// then `-D` leaves behind): it filters nothing, so the lab is as good as pristine. A rule that
/// remains is its own item and is never ignored.
fn empty_chain(summary: &str) -> bool {
    summary.contains(" packet_filter: added ") && summary.trim_end().ends_with("policy accept;")
}

/// The devices a variant's commands run on: the `[INJECTION]`'s and the `[FIX]`'s.
pub fn touched_devices(lab: &dyn Lab, variant: &Variant) -> BTreeSet<String> {
    let injected: Vec<String> = variant
        .spec
        .injection()
        .devices()
        .into_iter()
        .map(str::to_string)
        .collect();
    let mut touched: BTreeSet<String> = injected.iter().cloned().collect();
    if let Some(fix) = variant.spec.fix() {
        touched.extend(
            revert_commands(fix, &lab.devices(), &injected)
                .into_iter()
                .map(|c| c.device),
        );
    }
    touched
}

/// The lab's state as far as a variant that ran its commands on `touched` can have changed
/// it: every aspect of the touched devices, and the links, addresses and routes of every
/// other device that runs a routing daemon or forwards (what routing protocols change on a
/// device no command ran on). Sysctls, processes, packet filters and FRR's configuration
/// change only by a command on the device itself, and a device that neither runs a routing
/// daemon nor forwards (an end host, a switch) changes its routes only when its own links or
/// addresses do; so those are not read again (and not compared). A peer's link that went
/// down with a touched device's comes back with it, which the touched device's own links show.
async fn touched_snapshot(
    lab: &dyn Lab,
    pristine: &Snapshot,
    touched: &BTreeSet<String>,
) -> Snapshot {
    let opts = SnapshotOptions::default();
    let t = Instant::now();
    // A device that runs an FRR daemon or forwards (a router with another routing daemon, or
    // one whose state could not be read) is read again; an end host or a switch is not.
    let routing = |d: &str| {
        pristine.devices.get(d).is_none_or(|s| {
            !s.frr_daemons().is_empty()
                || s.items(Aspect::Services).is_none()
                || s.items(Aspect::Sysctls)
                    .is_none_or(|x| x.get("net.ipv4.ip_forward").is_none_or(|v| v != "0"))
        })
    };
    let reads = lab.devices().into_iter().filter_map(|d| {
        let full = touched.contains(&d);
        (full || routing(&d)).then_some(async move {
            let state = if full {
                lab.device_state(&d, opts.timeout).await
            } else {
                read_device_with(lab, &d, SNAPSHOT_SCRIPT_IP_ONLY, opts.timeout).await
            };
            (d, state)
        })
    });
    let devices = futures_util::future::join_all(reads)
        .await
        .into_iter()
        .collect();
    Snapshot {
        lab: lab.name().to_string(),
        taken_unix_ms: phases::unix_ms(),
        elapsed: t.elapsed(),
        devices,
    }
}

/// The differences from `pristine` to `now` that make a lab unfit for another variant.
fn residue(pristine: &Snapshot, now: &Snapshot) -> Vec<String> {
    pristine
        .diff(now)
        .into_iter()
        .map(|c| c.summary)
        .filter(|s| !empty_chain(s))
        .collect()
}

/// Pauses between pristine checks: short at first (most fixes leave nothing to settle, or
/// settle within a few hundred ms), then longer so a slow routing protocol is not polled
/// needlessly.
fn settle_pause(round: u32) -> Duration {
    Duration::from_millis(match round {
        0..=2 => 100,
        3..=5 => 250,
        _ => 500,
    })
}

/// Waits until the state of `lab` (as [`touched_snapshot`] reads it) equals `pristine` (a
/// routing table may take a moment to settle after a fix); returns the differences left at
/// the deadline.
async fn settle_to(
    lab: &dyn Lab,
    pristine: &Snapshot,
    touched: &BTreeSet<String>,
    wait: Duration,
) -> Vec<String> {
    let t = Instant::now();
    let mut round = 0;
    loop {
        let now = touched_snapshot(lab, pristine, touched).await;
        let diff = residue(pristine, &now);
        if diff.is_empty() || t.elapsed() >= wait {
            return diff;
        }
        tokio::time::sleep(settle_pause(round)).await;
        round += 1;
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
    let mut times = PhaseTimes::default();
    let fail = |stage: &str, reason: String, reused: bool| Verification {
        passed: false,
        stage: stage.into(),
        reason,
        seconds: t.elapsed().as_secs_f64(),
        reused,
        observed: None,
        observed_faults: Vec::new(),
        phases: PhaseTimes::default(),
    };
    let reused = slot.is_some();
    let kept = match slot.take() {
        Some(k) => k,
        None => {
            let d = phases::deploy(emulator, topology, None).await;
            times.deploy = d.elapsed.as_secs_f64();
            let lab = match d.lab {
                Ok(l) => l,
                Err(e) => return fail("deploy", format!("deploy: {e}"), false),
            };
            let tb = Instant::now();
            let base = phases::wait_for_healthy(lab.as_ref(), baseline, opts).await;
            if !base.passed() {
                let _ = lab.teardown().await;
                return Verification {
                    phases: times,
                    ..fail(
                        "baseline",
                        format!(
                            "fresh lab: baseline did not hold: {}",
                            base.failures().join("; ")
                        ),
                        false,
                    )
                };
            }
            let pristine = Snapshot::take(lab.as_ref(), &SnapshotOptions::default()).await;
            times.fresh_baseline = tb.elapsed().as_secs_f64();
            KeptLab { lab, pristine }
        }
    };
    let lab = kept.lab.as_ref();
    let fault = phases::inject_and_verify(lab, &variant.spec, opts).await;
    times.inject = fault.injection_elapsed.as_secs_f64();
    times.checks = fault
        .verification
        .as_ref()
        .map_or(0.0, |v| v.elapsed.as_secs_f64());
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
    let to = Instant::now();
    let observed = if result.is_none() {
        Some(symptom::observe(lab, &variant.symptom, &variant.faulted_device()).await)
    } else {
        None
    };
    times.observe = to.elapsed().as_secs_f64();
    let tr = Instant::now();
    let rev = phases::revert(lab, baseline, &variant.spec, opts).await;
    times.restored = rev.baseline.elapsed.as_secs_f64();
    times.fix = (tr.elapsed().as_secs_f64() - times.restored).max(0.0);
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
    let tp = Instant::now();
    let residue = if rev.restored() {
        let touched = touched_devices(lab, variant);
        settle_to(lab, &kept.pristine, &touched, Duration::from_secs(5)).await
    } else {
        vec!["baseline not restored".into()]
    };
    times.pristine = tp.elapsed().as_secs_f64();
    let mut v = result.unwrap_or(Verification {
        passed: true,
        stage: String::new(),
        reason: String::new(),
        seconds: 0.0,
        reused,
        observed: None,
        observed_faults: Vec::new(),
        phases: PhaseTimes::default(),
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
        let td = Instant::now();
        kept.release().await;
        times.teardown = td.elapsed().as_secs_f64();
    }
    v.seconds = t.elapsed().as_secs_f64();
    v.phases = times;
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultbench_core::emulator::{Command, EmuError, ExecOutput};
    use std::collections::BTreeMap;
    use std::sync::Mutex;

    /// A router `r1` (ospfd, forwarding) and two hosts; each device's routes are a list of
    /// `ip -j` route objects, and every command run is logged.
    #[derive(Debug, Default)]
    struct Net {
        routes: Mutex<BTreeMap<String, Vec<String>>>,
        ran: Mutex<Vec<(String, bool)>>,
    }

    #[async_trait::async_trait]
    impl Lab for Net {
        fn name(&self) -> &str {
            "mock-1"
        }
        fn devices(&self) -> Vec<String> {
            vec!["h1".into(), "h2".into(), "r1".into()]
        }
        async fn exec(&self, d: &str, c: &Command, _t: Duration) -> Result<ExecOutput, EmuError> {
            let full = c.to_string().contains("@@services");
            self.ran.lock().unwrap().push((d.to_string(), full));
            let routes = self
                .routes
                .lock()
                .unwrap()
                .get(d)
                .cloned()
                .unwrap_or_default();
            let mut out = format!("[]\n[{}]\n@@ip 0\n", routes.join(","));
            if full {
                let (fwd, procs) = if d == "r1" {
                    (1, "zebra\nospfd\n")
                } else {
                    (0, "sh\n")
                };
                out.push_str(&format!(
                    "net/ipv4/ip_forward={fwd}\n@@sysctls 0\n{procs}@@services 0\n@@packet_filter 0\n@@frr_config absent\n"
                ));
            }
            Ok(ExecOutput::ok(out))
        }
        async fn teardown(&self) -> Result<(), EmuError> {
            Ok(())
        }
    }

    fn add_route(net: &Net, device: &str, dst: &str) {
        net.routes
            .lock()
            .unwrap()
            .entry(device.into())
            .or_default()
            .push(format!(
                r#"{{"dst":"{dst}","gateway":"10.0.0.1","dev":"eth0"}}"#
            ));
    }

    #[tokio::test]
    async fn the_pristine_check_reads_touched_devices_in_full_and_routers_routes_only() {
        let net = Net::default();
        let pristine = Snapshot::take(&net, &SnapshotOptions::default()).await;
        assert!(!pristine.devices["r1"].frr_daemons().is_empty());
        net.ran.lock().unwrap().clear();
        let touched: BTreeSet<String> = ["h2".to_string()].into();
        let now = touched_snapshot(&net, &pristine, &touched).await;
        assert!(residue(&pristine, &now).is_empty());
        let ran: BTreeSet<(String, bool)> = net.ran.lock().unwrap().drain(..).collect();
        assert_eq!(
            ran,
            [("h2".to_string(), true), ("r1".to_string(), false)].into(),
            "the touched host in full, the router's ip part, the other host not at all"
        );
        // A route a protocol left on the router, and one on the touched host, are residue.
        add_route(&net, "r1", "198.51.100.0/24");
        add_route(&net, "h2", "203.0.113.0/24");
        let now = touched_snapshot(&net, &pristine, &touched).await;
        let left = residue(&pristine, &now);
        assert_eq!(left.len(), 2, "{left:?}");
        assert!(
            left.iter()
                .any(|l| l.starts_with("r1 routes: added 198.51.100.0/24"))
        );
        assert!(
            left.iter()
                .any(|l| l.starts_with("h2 routes: added 203.0.113.0/24"))
        );
    }

    #[test]
    fn settle_pauses_start_short() {
        assert_eq!(settle_pause(0), Duration::from_millis(100));
        assert!(settle_pause(10) > settle_pause(3));
    }

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
