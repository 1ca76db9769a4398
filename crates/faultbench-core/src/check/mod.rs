//! Scenario check: does a scenario's fault really happen on its lab?
//!
//! [`check_scenario`] walks one scenario through the first half of a benchmark run, with no
//! agent, using the same phase functions and options as the run pipeline ([`crate::phases`]):
//! deploy the topology on an [`Emulator`] → wait until the healthy baseline holds
//! ([`wait_for_baseline`]) → apply `[INJECTION]` → verify `[POST-INJECT-CHECK]` with a bounded
//! retry → (with `revert`, run the `[FIX]` and wait for the baseline again) → tear the lab down
//! (always, whatever happened before). The answer is one of three outcomes:
//!
//! - [`CheckOutcome::Passed`]: the fault took (or, for a false premise, the healthy network is
//!   what the ticket contradicts);
//! - [`CheckOutcome::UnsupportedOnHost`]: the host cannot emulate what the scenario needs —
//!   never a pass, never charged to the scenario;
//! - [`CheckOutcome::Failed`]: anything else, with the [`Stage`] where it stopped and why.
//!
//! ```
//! use faultbench_core::check::{check_scenario, CheckOptions, CheckOutcome, Stage};
//! use faultbench_core::emulator::{Command, EmuError, Emulator, ExecOutput, Lab, LabRequest};
//! use faultbench_core::lab::Topology;
//! use faultbench_core::scenario::ScenarioSpec;
//! use std::sync::{Arc, Mutex};
//! use std::time::Duration;
//!
//! /// One router whose ospfd can be killed.
//! #[derive(Debug, Default)]
//! struct Router { down: Mutex<bool> }
//! #[async_trait::async_trait]
//! impl Lab for Router {
//!     fn name(&self) -> &str { "demo-1" }
//!     fn devices(&self) -> Vec<String> { vec!["r1".into()] }
//!     async fn exec(&self, _d: &str, c: &Command, _t: Duration) -> Result<ExecOutput, EmuError> {
//!         let mut down = self.down.lock().unwrap();
//!         Ok(match c.to_string().as_str() {
//!             "pkill ospfd" => { *down = true; ExecOutput::ok("") }
//!             "pgrep ospfd" if *down => ExecOutput::failed(1, ""),
//!             "pgrep ospfd" => ExecOutput::ok("7\n"),
//!             _ => ExecOutput::failed(127, "not found"),
//!         })
//!     }
//!     async fn teardown(&self) -> Result<(), EmuError> { Ok(()) }
//! }
//! struct OneRouter;
//! #[async_trait::async_trait]
//! impl Emulator for OneRouter {
//!     fn name(&self) -> &str { "demo" }
//!     async fn deploy(&self, _r: &LabRequest) -> Result<Arc<dyn Lab>, EmuError> {
//!         Ok(Arc::new(Router::default()))
//!     }
//! }
//!
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("lab.conf"), "r1[0]=A\n").unwrap();
//! std::fs::write(dir.path().join("baseline.toml"), "[[probe]]\nname = 'ospfd runs'\n\
//!     kind = 'daemon'\ndevice = 'r1'\ncommand = 'pgrep ospfd'\nexpect = 'nonempty'\n").unwrap();
//! let topology = Topology { id: "Demo".into(), dir: dir.path().into() };
//! let scenario = ScenarioSpec::parse(&std::fs::read_to_string(concat!(
//!     env!("CARGO_MANIFEST_DIR"), "/tests/data/minimal.txt")).unwrap()).unwrap();
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let report = check_scenario(&OneRouter, &topology, &scenario, &CheckOptions::default()).await;
//! assert_eq!(report.outcome, CheckOutcome::Passed, "{}", report.reason);
//! assert_eq!(report.stage, Stage::Done);
//! # });
//! ```

use crate::emulator::{EmuError, Emulator, Lab};
use crate::inject::{InjectionReport, VerifyReport};
use crate::lab::{Baseline, Topology};
use crate::phases::{FaultVerdict, PhaseOptions};
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod shared;
pub use crate::phases::{BaselineReport, wait_for_baseline};
pub use shared::{SharedLab, check_sharing};

/// How a scenario check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckOutcome {
    /// The scenario does what it says on this host.
    Passed,
    /// Something went wrong (see the stage and reason).
    Failed,
    /// The host cannot emulate what the scenario needs.
    UnsupportedOnHost,
}

impl CheckOutcome {
    /// `passed`, `failed`, `unsupported_on_host`.
    pub fn as_str(self) -> &'static str {
        match self {
            CheckOutcome::Passed => "passed",
            CheckOutcome::Failed => "failed",
            CheckOutcome::UnsupportedOnHost => "unsupported_on_host",
        }
    }
}

/// Where a check stopped ([`Stage::Done`] when it went through).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Stage {
    /// Reading the topology's files (lab.conf, baseline.toml).
    Topology,
    /// Bringing the lab up.
    Deploy,
    /// Waiting for the healthy baseline.
    Baseline,
    /// Running `[INJECTION]`.
    Injection,
    /// Running `[POST-INJECT-CHECK]`.
    Verification,
    /// Running the `[FIX]` commands and waiting for the baseline again (with `revert`).
    Revert,
    /// Tearing the lab down.
    Teardown,
    /// Every stage completed.
    Done,
}

/// Knobs of [`check_scenario`]: the phase options the benchmark uses, plus what only a check
/// does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckOptions {
    /// Timeouts and retries of the phases (shared with the run pipeline).
    pub phases: PhaseOptions,
    /// Instance name of the lab (the emulator picks a unique one when `None`).
    pub lab_name: Option<String>,
    /// After the fault took, also run the `[FIX]` commands and require the healthy baseline
    /// to hold again within `phases.revert_wait`.
    #[serde(default)]
    pub revert: bool,
}

impl Default for CheckOptions {
    /// [`PhaseOptions::default`], except that a revert may take as long as the first
    /// baseline (`baseline_wait`, 60 s): a check wants to know whether the `[FIX]` works at
    /// all, not whether it works fast.
    fn default() -> Self {
        let phases = PhaseOptions::default();
        CheckOptions {
            phases: PhaseOptions {
                revert_wait: phases.baseline_wait,
                ..phases
            },
            lab_name: None,
            revert: false,
        }
    }
}

/// Wall time of each stage, in milliseconds (0 when the stage did not run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StageTimes {
    /// `Emulator::deploy`.
    pub deploy_ms: u64,
    /// Deploy returned → baseline held (or gave up).
    pub baseline_ms: u64,
    /// All injection steps.
    pub injection_ms: u64,
    /// All verification rounds.
    pub verification_ms: u64,
    /// `Lab::teardown`.
    pub teardown_ms: u64,
}

/// Everything a scenario check found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioCheck {
    /// The scenario id.
    pub scenario: String,
    /// The topology id.
    pub topology: String,
    /// How it ended.
    pub outcome: CheckOutcome,
    /// Where it stopped.
    pub stage: Stage,
    /// One-line explanation (what passed, or what failed and why).
    pub reason: String,
    /// True for a negative control (nothing injected).
    pub false_premise: bool,
    /// The lab instance, once deployed.
    pub lab: Option<String>,
    /// The check ran on a lab an earlier no-injection check had used (see [`check_sharing`]).
    #[serde(default)]
    pub reused_lab: bool,
    /// The baseline as it stood when the check moved on (or gave up).
    pub baseline: Option<BaselineReport>,
    /// The injection steps.
    pub injection: Option<InjectionReport>,
    /// The post-injection verification.
    pub verification: Option<VerifyReport>,
    /// Stage timings.
    pub times: StageTimes,
}

impl ScenarioCheck {
    fn new(scenario: &dyn Scenario, topology: &Topology) -> Self {
        ScenarioCheck {
            scenario: scenario.id().to_string(),
            topology: topology.id.clone(),
            outcome: CheckOutcome::Failed,
            stage: Stage::Topology,
            reason: String::new(),
            false_premise: scenario.injection().is_negative_control(),
            lab: None,
            reused_lab: false,
            baseline: None,
            injection: None,
            verification: None,
            times: StageTimes::default(),
        }
    }

    fn stop(&mut self, stage: Stage, outcome: CheckOutcome, reason: String) {
        self.stage = stage;
        self.outcome = outcome;
        self.reason = reason;
    }
}

fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// A fresh report for `scenario` and the baseline of `topology`; without a baseline (it cannot
/// be read) the report has already stopped at [`Stage::Topology`].
fn begin(topology: &Topology, scenario: &dyn Scenario) -> (ScenarioCheck, Option<Baseline>) {
    let mut report = ScenarioCheck::new(scenario, topology);
    match topology.baseline() {
        Ok(baseline) => (report, Some(baseline)),
        Err(e) => {
            report.stop(Stage::Topology, CheckOutcome::Failed, e.to_string());
            (report, None)
        }
    }
}

/// Checks one scenario on a fresh lab of `topology` and tears the lab down again.
pub async fn check_scenario(
    emulator: &dyn Emulator,
    topology: &Topology,
    scenario: &dyn Scenario,
    opts: &CheckOptions,
) -> ScenarioCheck {
    let (mut report, baseline) = begin(topology, scenario);
    let Some(baseline) = baseline else {
        return report;
    };
    let Some(lab) = deploy(emulator, topology, opts, &mut report).await else {
        return report;
    };
    run_on_lab(&lab, &baseline, scenario, opts, &mut report).await;
    let t = Instant::now();
    let down = lab.teardown().await;
    report.times.teardown_ms = ms(t.elapsed());
    if let Err(e) = down {
        let reason = if report.outcome == CheckOutcome::Passed {
            format!("teardown: {e}")
        } else {
            format!("{}; teardown also failed: {e}", report.reason)
        };
        report.stop(Stage::Teardown, CheckOutcome::Failed, reason);
    }
    report
}

/// Deploys `topology` for a check; on failure records why in `report` and returns `None`.
async fn deploy(
    emulator: &dyn Emulator,
    topology: &Topology,
    opts: &CheckOptions,
    report: &mut ScenarioCheck,
) -> Option<Arc<dyn Lab>> {
    let deployed = crate::phases::deploy(emulator, topology, opts.lab_name.clone()).await;
    report.times.deploy_ms = ms(deployed.elapsed);
    match deployed.lab {
        Ok(lab) => {
            report.lab = Some(lab.name().to_string());
            Some(lab)
        }
        Err(e) => {
            let outcome = match e {
                EmuError::Unsupported { .. } => CheckOutcome::UnsupportedOnHost,
                _ => CheckOutcome::Failed,
            };
            report.stop(Stage::Deploy, outcome, format!("deploy: {e}"));
            None
        }
    }
}

async fn run_on_lab(
    lab: &Arc<dyn Lab>,
    baseline: &Baseline,
    scenario: &dyn Scenario,
    opts: &CheckOptions,
    report: &mut ScenarioCheck,
) {
    let lab = lab.as_ref();
    let phases = &opts.phases;
    let t = Instant::now();
    let base = crate::phases::wait_for_healthy(lab, baseline, phases).await;
    report.times.baseline_ms = ms(t.elapsed());
    let held = base.passed();
    let total = base.results.len();
    let failures = base.failures();
    report.baseline = Some(base);
    if !held {
        report.stop(
            Stage::Baseline,
            CheckOutcome::Failed,
            format!(
                "baseline did not hold within {:.0} s ({} of {total} probes failed): {}",
                phases.baseline_wait.as_secs_f64(),
                failures.len(),
                failures.join("; ")
            ),
        );
        return;
    }
    if report.false_premise {
        report.stop(
            Stage::Done,
            CheckOutcome::Passed,
            format!("false premise: nothing to inject, baseline holds ({total} probes)"),
        );
        return;
    }

    let fault = crate::phases::inject_and_verify(lab, scenario, phases).await;
    report.times.injection_ms = ms(fault.injection_elapsed);
    report.times.verification_ms = fault.verification.as_ref().map_or(0, |v| ms(v.elapsed));
    let attempts = fault.verification.as_ref().map_or(0, |v| v.attempts);
    report.injection = Some(fault.injection);
    report.verification = fault.verification;
    match fault.verdict {
        FaultVerdict::Took | FaultVerdict::NothingToInject => {}
        FaultVerdict::Unsupported(why) => {
            report.stop(Stage::Injection, CheckOutcome::UnsupportedOnHost, why);
            return;
        }
        FaultVerdict::InjectionFailed(why) => {
            report.stop(Stage::Injection, CheckOutcome::Failed, why);
            return;
        }
        FaultVerdict::DidNotTake(why) => {
            report.stop(
                Stage::Verification,
                CheckOutcome::Failed,
                format!("post-injection checks did not hold after {attempts} round(s): {why}"),
            );
            return;
        }
    }
    let mut summary = format!(
        "baseline holds ({total} probes), injection applied, {} check(s) hold after {attempts} round(s)",
        scenario.post_inject_checks().len()
    );
    if opts.revert {
        match revert(lab, baseline, scenario, phases).await {
            Ok(n) => summary.push_str(&format!(", {n} [FIX] command(s) restore the baseline")),
            Err(why) => {
                report.stop(Stage::Revert, CheckOutcome::Failed, why);
                return;
            }
        }
    }
    report.stop(Stage::Done, CheckOutcome::Passed, summary);
}

/// Runs the scenario's `[FIX]` commands the way the benchmark's `--reuse-labs` revert does
/// ([`crate::phases::revert`]) and requires the baseline back. Returns the number of commands
/// run.
async fn revert(
    lab: &dyn Lab,
    baseline: &Baseline,
    scenario: &dyn Scenario,
    phases: &PhaseOptions,
) -> Result<usize, String> {
    if scenario.fix().is_none() {
        return Err("the scenario has no [FIX] to revert with".into());
    }
    let r = crate::phases::revert(lab, baseline, scenario, phases).await;
    if r.commands == 0 {
        return Err(
            "[FIX] holds no command the harness can run (`cmd` in backticks, then `on <device>`)"
                .into(),
        );
    }
    if let Some(p) = r.problem {
        return Err(p);
    }
    if r.restored() {
        Ok(r.commands)
    } else {
        Err(format!(
            "baseline did not come back within {:.0} s after the {} [FIX] command(s): {}",
            phases.revert_wait.as_secs_f64(),
            r.commands,
            r.baseline.failures().join("; ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::emulator::{Command, ExecOutput, LabRequest, UNSUPPORTED_EXIT};
    use crate::inject::VerifyRetry;
    use crate::scenario::ScenarioSpec;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A host `h1` whose link can be cut; counts teardowns.
    #[derive(Debug, Default)]
    struct LinkLab {
        cut: Mutex<bool>,
        torn: AtomicBool,
        fail_teardown: bool,
        /// Baseline probe fails for this many rounds first.
        slow_rounds: Mutex<u32>,
    }

    #[async_trait::async_trait]
    impl Lab for LinkLab {
        fn name(&self) -> &str {
            "link-1"
        }
        fn devices(&self) -> Vec<String> {
            vec!["h1".into()]
        }
        async fn exec(
            &self,
            _device: &str,
            cmd: &Command,
            _t: Duration,
        ) -> Result<ExecOutput, EmuError> {
            let mut cut = self.cut.lock().unwrap();
            Ok(match cmd.to_string().as_str() {
                "ip link set eth0 down" => {
                    *cut = true;
                    ExecOutput::ok("")
                }
                "tc qdisc add dev eth0 root netem delay 50ms" => ExecOutput::failed(
                    UNSUPPORTED_EXIT,
                    "faultbench: unsupported on this host: netem delay",
                ),
                "ping" => {
                    let mut slow = self.slow_rounds.lock().unwrap();
                    if *slow > 0 {
                        *slow -= 1;
                        ExecOutput::ok("1 packets transmitted, 0 received, 100% packet loss")
                    } else if *cut {
                        ExecOutput::ok("connect: Network is unreachable")
                    } else {
                        ExecOutput::ok("1 packets transmitted, 1 received, 0% packet loss")
                    }
                }
                _ => ExecOutput::failed(127, "not found"),
            })
        }
        async fn teardown(&self) -> Result<(), EmuError> {
            self.torn.store(true, Ordering::SeqCst);
            if self.fail_teardown {
                return Err(EmuError::Other("namespace busy".into()));
            }
            Ok(())
        }
    }

    struct OneLab(Arc<LinkLab>, Option<EmuError>);

    #[async_trait::async_trait]
    impl Emulator for OneLab {
        fn name(&self) -> &str {
            "test"
        }
        async fn deploy(&self, _r: &LabRequest) -> Result<Arc<dyn Lab>, EmuError> {
            match &self.1 {
                Some(e) => Err(e.clone()),
                None => Ok(self.0.clone()),
            }
        }
    }

    fn topology(baseline: Option<&str>) -> (tempfile::TempDir, Topology) {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("lab.conf"), "h1[0]=A\n").unwrap();
        if let Some(b) = baseline {
            std::fs::write(d.path().join("baseline.toml"), b).unwrap();
        }
        let t = Topology {
            id: "T".into(),
            dir: d.path().to_path_buf(),
        };
        (d, t)
    }

    const BASELINE: &str =
        "[[probe]]\nname='h1 up'\nkind='reach'\ndevice='h1'\ncommand='ping'\nexpect='0% loss'\n";

    fn scenario(injection: &str, checks: &str) -> ScenarioSpec {
        let text = format!(
            "==================================================\nScenario: t-x\nTopology: T\nFault family: link cut\n==================================================\n\n[PROMPT-TO-AGENT]\nh1 is cut off.\n\n[INJECTION]\n{injection}\n\n[POST-INJECT-CHECK]\n{checks}\n\n[GROUND-TRUTH]\nlink down\n\n[FIX]\nup\n\n[SCORING-AXES]\nassert-identifies: h1\n\n[NIKA-LABEL]\nnika_label: link_down\nnika_category: LINK_FAILURE\nin_taxonomy: true\n"
        );
        ScenarioSpec::parse(&text).unwrap()
    }

    fn fast() -> CheckOptions {
        CheckOptions {
            phases: PhaseOptions {
                baseline_wait: Duration::from_millis(500),
                baseline_interval: Duration::from_millis(5),
                verify: VerifyRetry {
                    interval: Duration::from_millis(5),
                    deadline: Duration::from_millis(100),
                    command_timeout: Duration::from_secs(1),
                },
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn a_fault_that_takes_passes_and_the_lab_is_torn_down() {
        let lab = Arc::new(LinkLab {
            slow_rounds: Mutex::new(2),
            ..Default::default()
        });
        let (_d, t) = topology(Some(BASELINE));
        let s = scenario(
            "device: h1\ncmd: ip link set eth0 down",
            "h1  ping  => expect loss>0",
        );
        let r = check_scenario(&OneLab(lab.clone(), None), &t, &s, &fast()).await;
        assert_eq!(r.outcome, CheckOutcome::Passed, "{}", r.reason);
        assert_eq!(r.stage, Stage::Done);
        assert_eq!(r.baseline.as_ref().unwrap().attempts, 3);
        assert!(lab.torn.load(Ordering::SeqCst));
        assert_eq!(r.lab.as_deref(), Some("link-1"));
    }

    #[tokio::test]
    async fn false_premise_passes_on_a_healthy_baseline() {
        let lab = Arc::new(LinkLab::default());
        let (_d, t) = topology(Some(BASELINE));
        let s = scenario(
            "device: none\naction: none (negative control)",
            "# none -- no injection",
        );
        let r = check_scenario(&OneLab(lab.clone(), None), &t, &s, &fast()).await;
        assert!(r.false_premise);
        assert_eq!(r.outcome, CheckOutcome::Passed);
        assert!(r.reason.starts_with("false premise"), "{}", r.reason);
        assert!(r.injection.is_none());
        assert!(lab.torn.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn a_broken_baseline_fails_before_injecting() {
        let lab = Arc::new(LinkLab {
            slow_rounds: Mutex::new(u32::MAX),
            ..Default::default()
        });
        let (_d, t) = topology(Some(BASELINE));
        let s = scenario(
            "device: h1\ncmd: ip link set eth0 down",
            "h1  ping  => expect loss>0",
        );
        let r = check_scenario(&OneLab(lab.clone(), None), &t, &s, &fast()).await;
        assert_eq!(r.outcome, CheckOutcome::Failed);
        assert_eq!(r.stage, Stage::Baseline);
        assert!(r.reason.contains("h1 up (h1: ping)"), "{}", r.reason);
        assert!(!*lab.cut.lock().unwrap(), "nothing was injected");
        assert!(lab.torn.load(Ordering::SeqCst));
    }

    #[tokio::test]
    async fn unsupported_injection_and_deploy_are_their_own_outcome() {
        let lab = Arc::new(LinkLab::default());
        let (_d, t) = topology(Some(BASELINE));
        let s = scenario(
            "device: h1\ncmd: tc qdisc add dev eth0 root netem delay 50ms",
            "h1  ping  => expect 0% loss",
        );
        let r = check_scenario(&OneLab(lab.clone(), None), &t, &s, &fast()).await;
        assert_eq!(r.outcome, CheckOutcome::UnsupportedOnHost);
        assert_eq!(r.stage, Stage::Injection);
        assert!(r.reason.contains("netem delay"), "{}", r.reason);
        assert!(lab.torn.load(Ordering::SeqCst));

        let e = EmuError::Unsupported {
            feature: "vrf".into(),
            reason: "CONFIG_NET_VRF unset".into(),
        };
        let r = check_scenario(&OneLab(lab, Some(e)), &t, &s, &fast()).await;
        assert_eq!(r.outcome, CheckOutcome::UnsupportedOnHost);
        assert_eq!(r.stage, Stage::Deploy);
    }

    #[tokio::test]
    async fn failing_checks_teardown_and_missing_baseline_fail_clearly() {
        let lab = Arc::new(LinkLab {
            fail_teardown: true,
            ..Default::default()
        });
        let (_d, t) = topology(Some(BASELINE));
        // The injection "works" but does not break what the check expects.
        let s = scenario(
            "device: h1\ncmd: ip link set eth0 down",
            "h1  ping  => expect 0% loss",
        );
        let r = check_scenario(&OneLab(lab, None), &t, &s, &fast()).await;
        assert_eq!(r.outcome, CheckOutcome::Failed);
        assert_eq!(r.stage, Stage::Teardown);
        assert!(
            r.reason.contains("post-injection checks did not hold"),
            "{}",
            r.reason
        );
        assert!(r.reason.contains("namespace busy"), "{}", r.reason);
        assert!(r.verification.as_ref().unwrap().attempts >= 2);

        let (_d2, t2) = topology(None);
        let r = check_scenario(
            &OneLab(Arc::new(LinkLab::default()), None),
            &t2,
            &s,
            &fast(),
        )
        .await;
        assert_eq!(r.stage, Stage::Topology);
        assert!(r.reason.contains("baseline.toml"));
    }
}
