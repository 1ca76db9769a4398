//! The lab phases of a scenario, written once: deploy → healthy baseline → `[INJECTION]` →
//! `[POST-INJECT-CHECK]` → (agent) → presence watch → `[FIX]` revert.
//!
//! `scenario check` ([`crate::check`]) walks a scenario through them without an agent; the run
//! pipeline ([`crate::pipeline`]) puts the agent, the state snapshots and the judge in between.
//! Both take their timeouts and retries from one [`PhaseOptions`], and both turn the reports
//! these functions return into their own output (a [`crate::check::ScenarioCheck`], a
//! [`crate::record::RunRecord`]).
//!
//! ```
//! use faultbench_core::phases::{PhaseOptions, FaultVerdict, inject_and_verify};
//! use faultbench_core::emulator::{Command, EmuError, ExecOutput, Lab};
//! use faultbench_core::scenario::ScenarioSpec;
//! use std::sync::Mutex;
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
//! let scenario = ScenarioSpec::parse(&std::fs::read_to_string(concat!(
//!     env!("CARGO_MANIFEST_DIR"), "/tests/data/minimal.txt")).unwrap()).unwrap();
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let fault = inject_and_verify(&Router::default(), &scenario, &PhaseOptions::default()).await;
//! assert_eq!(fault.verdict, FaultVerdict::Took);
//! # });
//! ```

use crate::emulator::{Command, EmuError, Emulator, Lab, LabRequest};
use crate::inject::{
    InjectionReport, InjectionStatus, VerifyReport, VerifyRetry, apply_injection, verify_injection,
};
use crate::lab::{Baseline, ProbeResult, Topology, verify};
use crate::pipeline::revert_commands;
use crate::scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Timeouts and retries of the lab phases, shared by `scenario check` and the run pipeline.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PhaseOptions {
    /// How long a freshly deployed lab may take to pass its healthy baseline (routing
    /// convergence, DHCP, STP…).
    pub baseline_wait: Duration,
    /// Pause between baseline rounds.
    pub baseline_interval: Duration,
    /// Timeout of each baseline probe.
    pub probe_timeout: Duration,
    /// Timeout of each injection and revert command.
    pub command_timeout: Duration,
    /// Retry of `[POST-INJECT-CHECK]` after the injection.
    pub verify: VerifyRetry,
    /// After the `[FIX]` commands ran, how long the baseline may take to hold again.
    pub revert_wait: Duration,
    /// Retry of the presence watch after the agent (the fault's checks, or the baseline of a
    /// network with nothing injected). The first round that holds ends it, so a fault that is
    /// still there costs one round.
    pub watch: VerifyRetry,
}

impl Default for PhaseOptions {
    /// Baseline within 60 s (rounds every 0.25 s, probes bounded by 15 s); injection and revert
    /// commands bounded by 30 s; post-injection checks every 0.25 s for up to 30 s; the
    /// baseline back within 8 s after a revert; the presence watch retried every 0.5 s for up
    /// to 5 s.
    fn default() -> Self {
        PhaseOptions {
            baseline_wait: Duration::from_secs(60),
            baseline_interval: Duration::from_millis(250),
            probe_timeout: Duration::from_secs(15),
            command_timeout: Duration::from_secs(30),
            verify: VerifyRetry::default(),
            revert_wait: Duration::from_secs(8),
            watch: VerifyRetry {
                interval: Duration::from_millis(500),
                deadline: Duration::from_secs(5),
                command_timeout: Duration::from_secs(15),
            },
        }
    }
}

/// The baseline as it stood in the last round of [`wait_for_baseline`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaselineReport {
    /// Per-probe results of the last round, in file order.
    pub results: Vec<ProbeResult>,
    /// Rounds run.
    pub attempts: u32,
    /// Time until the last round ended.
    pub elapsed: Duration,
}

impl BaselineReport {
    /// Every probe held in the last round.
    pub fn passed(&self) -> bool {
        self.results.iter().all(|r| r.passed)
    }

    /// The probes that did not hold, one line each: `name (device: command): detail`.
    pub fn failures(&self) -> Vec<String> {
        self.results
            .iter()
            .filter(|r| !r.passed)
            .map(|r| {
                format!(
                    "{} ({}: {}): {}",
                    r.probe.name, r.probe.device, r.probe.command, r.detail
                )
            })
            .collect()
    }
}

/// Runs the baseline in rounds until every probe holds or `deadline` has passed (a zero
/// deadline runs exactly one round).
pub async fn wait_for_baseline(
    lab: &dyn Lab,
    baseline: &Baseline,
    deadline: Duration,
    interval: Duration,
    probe_timeout: Duration,
) -> BaselineReport {
    let start = Instant::now();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let results = verify(lab, baseline, probe_timeout).await;
        let done = results.iter().all(|r| r.passed);
        if done || start.elapsed() + interval > deadline {
            return BaselineReport {
                results,
                attempts,
                elapsed: start.elapsed(),
            };
        }
        tokio::time::sleep(interval).await;
    }
}

/// A deployed lab, or why there is none.
#[derive(Debug)]
pub struct DeployReport {
    /// The lab.
    pub lab: Result<Arc<dyn Lab>, EmuError>,
    /// When the deploy started (Unix milliseconds): nothing in a fresh lab is older.
    pub started_unix_ms: u64,
    /// How long `Emulator::deploy` took.
    pub elapsed: Duration,
}

/// The current time in Unix milliseconds.
pub fn unix_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

/// Deploys `topology` (under `name`, or a name the emulator picks).
pub async fn deploy(
    emulator: &dyn Emulator,
    topology: &Topology,
    name: Option<String>,
) -> DeployReport {
    let mut request = LabRequest::new(&topology.dir);
    request.name = name;
    let started_unix_ms = unix_ms();
    let t = Instant::now();
    let lab = emulator.deploy(&request).await;
    DeployReport {
        lab,
        started_unix_ms,
        elapsed: t.elapsed(),
    }
}

/// Waits for the healthy baseline of a freshly deployed lab, as `opts` say.
pub async fn wait_for_healthy(
    lab: &dyn Lab,
    baseline: &Baseline,
    opts: &PhaseOptions,
) -> BaselineReport {
    wait_for_baseline(
        lab,
        baseline,
        opts.baseline_wait,
        opts.baseline_interval,
        opts.probe_timeout,
    )
    .await
}

/// Where the fault stands after [`inject_and_verify`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict", content = "reason")]
pub enum FaultVerdict {
    /// A negative control: nothing to inject (a false premise).
    NothingToInject,
    /// Every step applied and every `[POST-INJECT-CHECK]` held.
    Took,
    /// The host cannot emulate what a step needs.
    Unsupported(String),
    /// A step failed.
    InjectionFailed(String),
    /// The steps applied but the checks never held.
    DidNotTake(String),
}

/// The injection and its verification.
#[derive(Debug, Clone, PartialEq)]
pub struct FaultReport {
    /// The steps as executed (empty for a negative control).
    pub injection: InjectionReport,
    /// The post-injection checks (`None` when the injection did not apply).
    pub verification: Option<VerifyReport>,
    /// Time spent on the steps.
    pub injection_elapsed: Duration,
    /// The outcome.
    pub verdict: FaultVerdict,
}

/// Runs `[INJECTION]` and then `[POST-INJECT-CHECK]` with the options' retry. A scenario that
/// injects nothing runs nothing.
pub async fn inject_and_verify(
    lab: &dyn Lab,
    scenario: &dyn Scenario,
    opts: &PhaseOptions,
) -> FaultReport {
    let t = Instant::now();
    let injection = apply_injection(lab, scenario.injection(), opts.command_timeout).await;
    let injection_elapsed = t.elapsed();
    let why = injection.reason().unwrap_or_default();
    let verdict = match injection.status() {
        InjectionStatus::NothingToInject => FaultVerdict::NothingToInject,
        InjectionStatus::Unsupported => FaultVerdict::Unsupported(why),
        InjectionStatus::Failed => FaultVerdict::InjectionFailed(why),
        InjectionStatus::Applied => {
            let verification =
                verify_injection(lab, scenario.post_inject_checks(), &opts.verify).await;
            let verdict = if verification.passed() {
                FaultVerdict::Took
            } else {
                FaultVerdict::DidNotTake(verification.reason().unwrap_or_default())
            };
            return FaultReport {
                injection,
                verification: Some(verification),
                injection_elapsed,
                verdict,
            };
        }
    };
    FaultReport {
        injection,
        verification: None,
        injection_elapsed,
        verdict,
    }
}

/// What the presence watch found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PresenceReport {
    /// `fault` (the `[POST-INJECT-CHECK]` re-run) or `baseline` (nothing was injected: the
    /// healthy baseline re-run).
    pub watched: String,
    /// It still held.
    pub held: bool,
    /// Rounds run.
    pub attempts: u32,
    /// What did not hold (empty when it held).
    pub failures: Vec<String>,
    /// Time spent.
    pub elapsed: Duration,
}

/// Re-checks that the situation the agent was given still stands: the fault's
/// `[POST-INJECT-CHECK]` when something was injected, the healthy baseline otherwise. One round
/// when it holds; retried within `opts.watch` when it does not (a check can fail once under
/// load).
pub async fn watch_presence(
    lab: &dyn Lab,
    scenario: &dyn Scenario,
    baseline: &Baseline,
    opts: &PhaseOptions,
) -> PresenceReport {
    if scenario.injection().is_negative_control() {
        let r = wait_for_baseline(
            lab,
            baseline,
            opts.watch.deadline,
            opts.watch.interval,
            opts.watch.command_timeout,
        )
        .await;
        PresenceReport {
            watched: "baseline".into(),
            held: r.passed(),
            attempts: r.attempts,
            failures: r.failures(),
            elapsed: r.elapsed,
        }
    } else {
        let r = verify_injection(lab, scenario.post_inject_checks(), &opts.watch).await;
        PresenceReport {
            watched: "fault".into(),
            held: r.passed(),
            attempts: r.attempts,
            failures: r
                .failures()
                .map(|c| format!("{} `{}`: {}", c.check.device, c.check.command, c.reason))
                .collect(),
            elapsed: r.elapsed,
        }
    }
}

/// What running the `[FIX]` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevertReport {
    /// Remedy commands found in `[FIX]` and run.
    pub commands: usize,
    /// The first command that could not run or timed out.
    pub problem: Option<String>,
    /// The baseline afterwards.
    pub baseline: BaselineReport,
}

impl RevertReport {
    /// The healthy baseline holds again.
    pub fn restored(&self) -> bool {
        self.baseline.passed()
    }
}

/// Runs the scenario's `[FIX]` commands (each on the device the text names, else on the
/// injected devices) and waits up to `opts.revert_wait` for the healthy baseline; with no
/// command to run, the baseline gets one round (waiting would not make it better).
pub async fn revert(
    lab: &dyn Lab,
    baseline: &Baseline,
    scenario: &dyn Scenario,
    opts: &PhaseOptions,
) -> RevertReport {
    let injected: Vec<String> = scenario
        .injection()
        .devices()
        .into_iter()
        .map(str::to_string)
        .collect();
    let commands = match scenario.fix().filter(|_| !injected.is_empty()) {
        Some(fix) => revert_commands(fix, &lab.devices(), &injected),
        None => Vec::new(),
    };
    let mut problem = None;
    for c in &commands {
        let out = lab
            .exec(
                &c.device,
                &Command::shell(c.command.clone()),
                opts.command_timeout,
            )
            .await;
        let issue = match out {
            Err(e) => Some(format!("[FIX] `{}` on {}: {e}", c.command, c.device)),
            Ok(o) if o.timed_out => {
                Some(format!("[FIX] `{}` on {} timed out", c.command, c.device))
            }
            Ok(_) => None,
        };
        if problem.is_none() {
            problem = issue;
        }
    }
    let wait = if commands.is_empty() {
        Duration::ZERO
    } else {
        opts.revert_wait
    };
    let baseline = wait_for_baseline(
        lab,
        baseline,
        wait,
        opts.baseline_interval,
        opts.probe_timeout,
    )
    .await;
    RevertReport {
        commands: commands.len(),
        problem,
        baseline,
    }
}
