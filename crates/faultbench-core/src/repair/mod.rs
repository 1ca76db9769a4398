//! Repair verification: did the agent fix the fault on the live network, and what else did it
//! change?
//!
//! After an agent of the repair task ([`crate::task::Task::Repair`]) ends, and before anything
//! is reverted, [`verify_repair`] asks the lab itself:
//!
//! 1. **Fault gone** — the scenario's `[POST-INJECT-CHECK]` no longer holds: at least one check
//!    ran and failed, and every check could run (a check whose device is gone says nothing).
//!    A scenario of several faults ([`Scenario::fault_groups`]) needs a failed check in *each*
//!    fault's group: fixing one of two faults is not a repair.
//!    When the agent changed something, a fault that still holds is re-checked within a
//!    bounded retry, so a network still re-converging gets its time.
//! 2. **Network healthy** — the topology's baseline probes all hold (waited for within a bound
//!    once the fault is gone; one round otherwise, for the record).
//! 3. **Collateral** — the state snapshot taken before the injection is compared with the one
//!    taken after the agent; each difference is *in scope* (on what the scenario's
//!    `[INJECTION]`/`[FIX]` touch, [`FaultScope`]), *derived* (a learned route, a carrier that
//!    followed its peer) or *collateral* (everything else). A device readable before and
//!    unreadable after counts as collateral.
//! 4. **Persistence** (optional, [`RepairOptions::persist`]) — the routing daemons of the
//!    devices the agent changed are restarted and fault and baseline checked again
//!    ([`PersistenceReport`]).
//!
//! The verdict ([`RepairVerdict`]): for a real fault `repaired`, `repaired_with_collateral`,
//! `partial` (fault gone, baseline not whole) or `not_repaired`; for a false premise (nothing
//! injected) `untouched` or `unneeded_change` — the repair task's over-diagnosis.
//!
//! The function needs only a [`Lab`], the scenario, the baseline and two snapshots, so a lab
//! can check its own agent's repair in a unit test on a mock network:
//!
//! ```
//! use faultbench_core::emulator::{Command, EmuError, ExecOutput, Lab};
//! use faultbench_core::lab::Baseline;
//! use faultbench_core::repair::{RepairOptions, RepairVerdict, verify_repair};
//! use faultbench_core::scenario::ScenarioSpec;
//! use faultbench_core::snapshot::{Snapshot, SnapshotOptions};
//! use std::sync::Mutex;
//! use std::time::Duration;
//!
//! /// One router whose ospfd can be killed and started again.
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
//!             "systemctl start frr" => { *down = false; ExecOutput::ok("") }
//!             "pgrep ospfd" if *down => ExecOutput::failed(1, ""),
//!             "pgrep ospfd" => ExecOutput::ok("7\n"),
//!             _ => ExecOutput::failed(127, "not found"),
//!         })
//!     }
//!     async fn teardown(&self) -> Result<(), EmuError> { Ok(()) }
//! }
//! let scenario = ScenarioSpec::parse(&std::fs::read_to_string(concat!(
//!     env!("CARGO_MANIFEST_DIR"), "/tests/data/minimal.txt")).unwrap()).unwrap();
//! let baseline = Baseline::parse("[[probe]]\nname = 'ospfd runs'\nkind = 'daemon'\n\
//!     device = 'r1'\ncommand = 'pgrep ospfd'\nexpect = 'nonempty'\n").unwrap();
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let lab = Router::default();
//! let snap = SnapshotOptions::default();
//! let pre = Snapshot::take(&lab, &snap).await;
//! lab.exec("r1", &Command::shell("pkill ospfd"), Duration::from_secs(1)).await.unwrap();
//! // … the agent works; suppose it starts FRR again:
//! lab.exec("r1", &Command::shell("systemctl start frr"), Duration::from_secs(1)).await.unwrap();
//! let after = Snapshot::take(&lab, &snap).await;
//! let report = verify_repair(&lab, &scenario, &baseline, &pre, &after, true, &RepairOptions::default()).await;
//! assert_eq!(report.verdict, RepairVerdict::Repaired, "{}", report.reason);
//! # });
//! ```

mod clock;
mod persist;
mod scope;
mod verdict;

pub use clock::{RepairClock, TimeToRepair};
pub use persist::{PersistenceReport, check_persistence};
pub use scope::{DeviceScope, FaultScope, is_derived};
pub use verdict::{RepairVerdict, decide};

use crate::emulator::Lab;
use crate::inject::{CheckRun, VerifyRetry, check_round};
use crate::lab::{Baseline, ProbeResult};
use crate::phases::wait_for_baseline;
use crate::scenario::{FaultGroup, PostInjectCheck, Scenario};
use crate::snapshot::{Aspect, Snapshot, StateChange};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// A scenario the repair task cannot verify: a real fault without `[FIX]` or without
/// `[POST-INJECT-CHECK]` lines (false premises need neither).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{where_}: scenario `{scenario}` has no {missing}; the repair task needs a [FIX] (to know the fault's scope) and [POST-INJECT-CHECK] lines (to know whether the fault is gone) for every injected fault — add them, or leave the scenario out of repair runs"
)]
pub struct NotRepairable {
    /// The scenario's file (or `scenario <id>` when it came from code).
    pub where_: String,
    /// Its id.
    pub scenario: String,
    /// What is missing (`[FIX]`, `[POST-INJECT-CHECK] lines`, or both).
    pub missing: String,
}

/// Checks that the repair task can verify `scenario` (refused at plan time otherwise).
///
/// ```
/// use faultbench_core::repair::check_repairable;
/// use faultbench_core::scenario::ScenarioSpec;
/// let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/minimal.txt")).unwrap();
/// assert!(check_repairable(&ScenarioSpec::parse(&text).unwrap()).is_ok());
/// let no_fix = text.replace("[FIX]\n", "[DIAGNOSTIC-PROCESS]\n");
/// let err = check_repairable(&ScenarioSpec::parse(&no_fix).unwrap()).unwrap_err();
/// assert!(err.to_string().contains("has no [FIX]"), "{err}");
/// ```
pub fn check_repairable(scenario: &dyn Scenario) -> Result<(), NotRepairable> {
    if scenario.injection().is_negative_control() {
        return Ok(());
    }
    let mut missing = Vec::new();
    if scenario.fix().is_none() {
        missing.push("[FIX]");
    }
    if scenario.post_inject_checks().is_empty() {
        missing.push("[POST-INJECT-CHECK] lines");
    }
    if missing.is_empty() {
        return Ok(());
    }
    Err(NotRepairable {
        where_: scenario
            .path()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| format!("scenario {}", scenario.id())),
        scenario: scenario.id().to_string(),
        missing: missing.join(" and "),
    })
}

fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

/// Knobs of [`verify_repair`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepairOptions {
    /// Re-checks of a fault that still holds after an agent that changed something (the
    /// presence watch's bounded retry: the network may still be re-converging).
    pub fault_retry: VerifyRetry,
    /// Once the fault is gone, how long the baseline may take to hold.
    pub baseline_wait: Duration,
    /// Pause between baseline rounds.
    pub baseline_interval: Duration,
    /// Timeout of each baseline probe.
    pub probe_timeout: Duration,
    /// While the agent works, how often the harness re-runs the fault's checks to time the
    /// repair ([`RepairClock`]).
    pub watch_interval: Duration,
    /// Restart the changed devices' routing daemons and check again (`--repair-persist`).
    pub persist: bool,
    /// After that restart, how long fault and baseline may take to settle.
    pub persist_wait: Duration,
    /// Timeout of each restart command.
    pub command_timeout: Duration,
}

impl Default for RepairOptions {
    /// Fault re-checked every 0.5 s for up to 5 s; baseline within 10 s (rounds every 0.25 s,
    /// probes bounded by 15 s); the repair clock every 2 s; no persistence check (20 s to
    /// settle when asked).
    fn default() -> Self {
        RepairOptions {
            fault_retry: VerifyRetry {
                interval: Duration::from_millis(500),
                deadline: Duration::from_secs(5),
                command_timeout: Duration::from_secs(15),
            },
            baseline_wait: Duration::from_secs(10),
            baseline_interval: Duration::from_millis(250),
            probe_timeout: Duration::from_secs(15),
            watch_interval: Duration::from_secs(2),
            persist: false,
            persist_wait: Duration::from_secs(20),
            command_timeout: Duration::from_secs(30),
        }
    }
}

/// The fault's checks after the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultCheck {
    /// The fault no longer holds: a check ran and failed, and every check could run.
    pub gone: bool,
    /// Checks that could not run (device gone or unresponsive), one line each.
    pub unverifiable: Vec<String>,
    /// Every check's outcome in the last round.
    pub checks: Vec<CheckRun>,
    /// In a scenario of several faults, those whose checks all still held in the last round
    /// (empty for a single fault, and when every fault is gone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub still_present: Vec<String>,
    /// Rounds run.
    pub attempts: u32,
    /// Time spent, in milliseconds.
    pub duration_ms: u64,
}

/// The baseline probes after the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BaselineCheck {
    /// Every probe held in the last round.
    pub healthy: bool,
    /// Every probe's outcome in the last round.
    pub probes: Vec<ProbeResult>,
    /// Rounds run.
    pub attempts: u32,
    /// Time spent, in milliseconds.
    pub duration_ms: u64,
}

/// Everything the repair verification found (`repair` in `result.json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RepairReport {
    /// The verdict.
    pub verdict: RepairVerdict,
    /// Why, in one line.
    pub reason: String,
    /// The fault's checks (absent for a false premise: nothing was injected).
    pub fault: Option<FaultCheck>,
    /// The baseline probes.
    pub baseline: BaselineCheck,
    /// Devices the fault's scope covers.
    pub scope: Vec<String>,
    /// Differences from before the injection outside the fault's scope.
    pub collateral: Vec<StateChange>,
    /// Differences from before the injection inside the fault's scope (what is left of the
    /// fault, or how the fix differs from the original state).
    pub in_scope: Vec<StateChange>,
    /// Differences that follow from others (learned routes, carrier).
    pub derived: Vec<StateChange>,
    /// Snapshot parts that could not be read before the injection or after the agent.
    pub unreadable: Vec<String>,
    /// When the fault's checks first stopped holding while the agent worked, in milliseconds
    /// after the agent started (set by the run pipeline's [`RepairClock`]).
    #[serde(default)]
    pub time_to_repair_ms: Option<u64>,
    /// Rounds the repair clock ran.
    #[serde(default)]
    pub clock_rounds: u32,
    /// No clock round saw the fault gone (the agent fixed it after the last one):
    /// `time_to_repair_ms` is the agent's end, an upper bound.
    #[serde(default)]
    pub time_to_repair_at_agent_end: bool,
    /// The persistence check, when asked for.
    #[serde(default)]
    pub persistence: Option<PersistenceReport>,
    /// How long the snapshot before the injection took, in milliseconds.
    #[serde(default)]
    pub pre_injection_snapshot_ms: u64,
    /// That snapshot was taken while the lab was prepared (right after its baseline held,
    /// in the background for a prestarted lab), not on the run's path.
    #[serde(default)]
    pub pre_injection_snapshot_at_prepare: bool,
    /// How long this verification took (fault, baseline, diff; not the persistence check).
    pub duration_ms: u64,
}

/// Verifies an agent's repair on the live `lab` (see the module documentation): `pre` is the
/// snapshot taken before the injection (for a false premise, any snapshot before the agent),
/// `after` the one taken after the agent; `agent_changed` says whether the agent's own
/// snapshots differ (only then is a fault that still holds re-checked). With
/// [`RepairOptions::persist`] the persistence check runs after a repair.
pub async fn verify_repair(
    lab: &dyn Lab,
    scenario: &dyn Scenario,
    baseline: &Baseline,
    pre: &Snapshot,
    after: &Snapshot,
    agent_changed: bool,
    opts: &RepairOptions,
) -> RepairReport {
    let t = Instant::now();
    let negative = scenario.injection().is_negative_control();
    let scope = FaultScope::of(scenario, &lab.devices());
    let (collateral, in_scope, derived) = partition(&scope, pre, after);
    // The fault's checks and a first baseline round run at the same time (both only read);
    // the baseline is then waited for only where it can still come: after a fault that is
    // gone, or after a false premise the agent changed.
    let fault_check = async {
        if negative {
            None
        } else {
            Some(
                faults_gone(
                    lab,
                    &scenario.fault_groups(),
                    &opts.fault_retry,
                    agent_changed,
                )
                .await,
            )
        }
    };
    let first_round = wait_for_baseline(
        lab,
        baseline,
        Duration::ZERO,
        opts.baseline_interval,
        opts.probe_timeout,
    );
    let (fault, first) = tokio::join!(fault_check, first_round);
    let wait = match &fault {
        Some(f) if f.gone => opts.baseline_wait,
        None if agent_changed || !collateral.is_empty() => opts.baseline_wait,
        _ => Duration::ZERO,
    };
    let b = if first.passed() || wait.is_zero() {
        first
    } else {
        tokio::time::sleep(opts.baseline_interval).await;
        let mut more = wait_for_baseline(
            lab,
            baseline,
            wait.saturating_sub(first.elapsed + opts.baseline_interval),
            opts.baseline_interval,
            opts.probe_timeout,
        )
        .await;
        more.attempts += first.attempts;
        more.elapsed += first.elapsed + opts.baseline_interval;
        more
    };
    let health = BaselineCheck {
        healthy: b.passed(),
        probes: b.results.clone(),
        attempts: b.attempts,
        duration_ms: ms(b.elapsed),
    };
    let (verdict, reason) = decide(fault.as_ref(), &health, &b.failures(), &collateral);
    let mut unreadable: Vec<String> = pre
        .failures()
        .into_iter()
        .map(|f| format!("before the injection: {f}"))
        .collect();
    unreadable.extend(
        after
            .failures()
            .into_iter()
            .map(|f| format!("after the agent: {f}")),
    );
    let mut report = RepairReport {
        verdict,
        reason,
        fault,
        baseline: health,
        scope: scope
            .device_names()
            .into_iter()
            .map(str::to_string)
            .collect(),
        collateral,
        in_scope,
        derived,
        unreadable,
        time_to_repair_ms: None,
        clock_rounds: 0,
        time_to_repair_at_agent_end: false,
        persistence: None,
        pre_injection_snapshot_ms: ms(pre.elapsed),
        pre_injection_snapshot_at_prepare: false,
        duration_ms: 0,
    };
    report.duration_ms = ms(t.elapsed());
    if opts.persist && verdict.fault_gone() {
        // The devices the fix lives on: the fault's scope and whatever else the agent changed.
        let mut devices: Vec<String> = report.scope.clone();
        for c in report.in_scope.iter().chain(&report.collateral) {
            if !devices.contains(&c.device) {
                devices.push(c.device.clone());
            }
        }
        report.persistence =
            Some(check_persistence(lab, scenario, baseline, after, &devices, opts).await);
    }
    report
}

/// Splits the differences from `pre` to `after` into collateral, in-scope and derived ones.
/// A device read before and wholly unreadable after is collateral (the agent took it down).
pub fn partition(
    scope: &FaultScope,
    pre: &Snapshot,
    after: &Snapshot,
) -> (Vec<StateChange>, Vec<StateChange>, Vec<StateChange>) {
    let (mut collateral, mut in_scope, mut derived) = (Vec::new(), Vec::new(), Vec::new());
    for c in pre.diff(after) {
        if scope.contains(&c) {
            in_scope.push(c);
        } else if is_derived(&c) {
            derived.push(c);
        } else {
            collateral.push(c);
        }
    }
    for (device, state) in &after.devices {
        let gone = !state.aspects.is_empty()
            && state
                .aspects
                .values()
                .all(|a| matches!(a, crate::snapshot::AspectState::Failed(_)));
        let was = pre.devices.get(device).is_some_and(|s| {
            s.aspects
                .values()
                .any(|a| !matches!(a, crate::snapshot::AspectState::Failed(_)))
        });
        if gone && was && !scope.devices.get(device).is_some_and(|d| d.whole) {
            let why = after
                .failures()
                .into_iter()
                .find(|f| f.starts_with(&format!("{device} ")))
                .unwrap_or_default();
            collateral.push(StateChange {
                device: device.clone(),
                aspect: Aspect::Links,
                change: crate::snapshot::ChangeKind::Removed,
                item: "device".into(),
                before: Some("readable".into()),
                after: None,
                summary: format!("{device}: unreadable after the agent ({why})"),
            });
        }
    }
    (collateral, in_scope, derived)
}

/// Runs the fault's checks until they no longer hold (every check ran, one failed). With
/// `retry`, a fault that still holds (or a check that could not run) is re-checked within the
/// policy; without, one round decides.
pub async fn fault_gone(
    lab: &dyn Lab,
    checks: &[PostInjectCheck],
    policy: &VerifyRetry,
    retry: bool,
) -> FaultCheck {
    let group = FaultGroup {
        label: String::new(),
        checks: checks.to_vec(),
    };
    faults_gone(lab, std::slice::from_ref(&group), policy, retry).await
}

/// The labels of the groups whose checks all held in `round` (`round` is the groups' checks
/// concatenated in order): the faults still present. An unlabelled group is called `fault K`.
pub fn still_present(groups: &[FaultGroup], round: &[CheckRun]) -> Vec<String> {
    let mut at = 0;
    let mut out = Vec::new();
    for (k, g) in groups.iter().enumerate() {
        let part = round.get(at..at + g.checks.len()).unwrap_or_default();
        at += g.checks.len();
        if part.iter().all(|c| c.passed) {
            out.push(if g.label.is_empty() {
                format!("fault {}", k + 1)
            } else {
                g.label.clone()
            });
        }
    }
    out
}

/// [`fault_gone`] for a scenario of several faults ([`Scenario::fault_groups`]): gone only
/// when every check ran and *each* fault's group has a check that failed. One fault fixed
/// out of two leaves the fault present.
pub async fn faults_gone(
    lab: &dyn Lab,
    groups: &[FaultGroup],
    policy: &VerifyRetry,
    retry: bool,
) -> FaultCheck {
    let start = Instant::now();
    let checks: Vec<PostInjectCheck> = groups.iter().flat_map(|g| g.checks.clone()).collect();
    let mut attempts = 0;
    loop {
        attempts += 1;
        let round = check_round(lab, &checks, policy.command_timeout).await;
        let unverifiable: Vec<String> = round
            .iter()
            .filter(|c| c.could_not_run())
            .map(|c| format!("{} `{}`: {}", c.check.device, c.check.command, c.reason))
            .collect();
        let present = still_present(groups, &round);
        let gone = present.is_empty() && unverifiable.is_empty() && !checks.is_empty();
        if gone || !retry || start.elapsed() + policy.interval > policy.deadline {
            return FaultCheck {
                gone,
                unverifiable,
                checks: round,
                still_present: if groups.len() > 1 {
                    present
                } else {
                    Vec::new()
                },
                attempts,
                duration_ms: ms(start.elapsed()),
            };
        }
        tokio::time::sleep(policy.interval).await;
    }
}
