//! Breaking a running lab the way a scenario says, and proving that the break took.
//!
//! Two steps, both generic over any [`Lab`] (namespaces, Kathará, a mock):
//!
//! 1. [`apply_injection`] runs every *applied* step of a scenario's `[INJECTION]` (a step with a
//!    command on a real device) with `sh -c` inside that device, in file order, and stops at
//!    the first step that does not succeed. A step whose command exits with
//!    [`UNSUPPORTED_EXIT`] — the code this project's in-device emulations use for "this
//!    kernel cannot do that" — is reported as [`StepStatus::Unsupported`], never as a failure
//!    of the scenario. A negative control (false premise) has no applied step and yields
//!    [`InjectionStatus::NothingToInject`].
//! 2. [`verify_injection`] runs all `[POST-INJECT-CHECK]` lines with the release's
//!    [`Expectation`] rules, in rounds (all checks of a round run concurrently), until one
//!    round passes entirely or the [`VerifyRetry`] deadline is reached. A fault "takes" when
//!    every check holds *at the same time*; per-check verdicts and reasons come from the last
//!    round.
//!
//! ```
//! use faultbench_core::emulator::{Command, EmuError, ExecOutput, Lab};
//! use faultbench_core::inject::{apply_injection, verify_injection, InjectionStatus, VerifyRetry};
//! use faultbench_core::scenario::{parse_checks, parse_injection};
//! use std::sync::Mutex;
//! use std::time::Duration;
//!
//! /// One router whose ospfd can be killed.
//! #[derive(Debug, Default)]
//! struct Router { ospfd_running: Mutex<bool> }
//! #[async_trait::async_trait]
//! impl Lab for Router {
//!     fn name(&self) -> &str { "demo" }
//!     fn devices(&self) -> Vec<String> { vec!["r1".into()] }
//!     async fn exec(&self, _d: &str, cmd: &Command, _t: Duration) -> Result<ExecOutput, EmuError> {
//!         let mut up = self.ospfd_running.lock().unwrap();
//!         Ok(match cmd.to_string().as_str() {
//!             "pkill ospfd" => { *up = false; ExecOutput::ok("") }
//!             "pgrep ospfd" if *up => ExecOutput::ok("4242\n"),
//!             "pgrep ospfd" => ExecOutput::failed(1, ""),
//!             _ => ExecOutput::failed(127, "not found"),
//!         })
//!     }
//!     async fn teardown(&self) -> Result<(), EmuError> { Ok(()) }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let lab = Router { ospfd_running: Mutex::new(true) };
//! let injection = parse_injection("device: r1\ncmd: pkill ospfd").unwrap();
//! let checks = parse_checks("r1  pgrep ospfd  => expect empty").unwrap();
//!
//! let applied = apply_injection(&lab, &injection, Duration::from_secs(5)).await;
//! assert_eq!(applied.status(), InjectionStatus::Applied);
//! let verified = verify_injection(&lab, &checks, &VerifyRetry::default()).await;
//! assert!(verified.passed());
//! assert_eq!(verified.attempts, 1);
//! # });
//! ```

use crate::emulator::{Command, EmuError, ExecOutput, Lab, UNSUPPORTED_EXIT};
use crate::scenario::{Expectation, Injection, PostInjectCheck};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// How much of a command's output a report keeps (the rest is cut with a marker).
const KEEP_OUTPUT: usize = 2000;

/// What happened to one injection step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum StepStatus {
    /// The command ran and exited 0.
    Applied,
    /// The host cannot emulate what the command asked for (exit code [`UNSUPPORTED_EXIT`] or
    /// an emulator that refused with [`EmuError::Unsupported`]).
    Unsupported {
        /// Why, as the emulation explained it.
        reason: String,
    },
    /// The command could not run, timed out or exited non-zero.
    Failed {
        /// Why.
        reason: String,
    },
    /// Not run because an earlier step did not apply.
    Skipped,
}

/// One injection step and its outcome.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepReport {
    /// The device the command ran on.
    pub device: String,
    /// The script (run with `sh -c` inside the device).
    pub command: String,
    /// The outcome.
    pub status: StepStatus,
    /// The command's output, when it ran (output cut to a few KiB).
    pub output: Option<ExecOutput>,
}

/// The overall outcome of [`apply_injection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InjectionStatus {
    /// A negative control: the scenario injects nothing.
    NothingToInject,
    /// Every step applied.
    Applied,
    /// A step needs something this host cannot emulate.
    Unsupported,
    /// A step failed.
    Failed,
}

/// What [`apply_injection`] did, step by step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InjectionReport {
    /// The applied steps of the injection, in order (steps after a failure are `Skipped`).
    pub steps: Vec<StepReport>,
}

impl InjectionReport {
    /// The overall outcome: the first step that did not apply decides.
    pub fn status(&self) -> InjectionStatus {
        if self.steps.is_empty() {
            return InjectionStatus::NothingToInject;
        }
        for s in &self.steps {
            match s.status {
                StepStatus::Applied | StepStatus::Skipped => {}
                StepStatus::Unsupported { .. } => return InjectionStatus::Unsupported,
                StepStatus::Failed { .. } => return InjectionStatus::Failed,
            }
        }
        InjectionStatus::Applied
    }

    /// A one-line explanation of the first step that did not apply, if any.
    pub fn reason(&self) -> Option<String> {
        self.steps.iter().find_map(|s| match &s.status {
            StepStatus::Unsupported { reason } => Some(format!(
                "{}: `{}` is unsupported on this host: {reason}",
                s.device,
                first_line(&s.command)
            )),
            StepStatus::Failed { reason } => Some(format!(
                "{}: `{}` failed: {reason}",
                s.device,
                first_line(&s.command)
            )),
            _ => None,
        })
    }
}

/// Runs the applied steps of `injection` on `lab`, in order, each bounded by `timeout`, and
/// stops at the first step that does not apply (later steps are reported as `Skipped`).
pub async fn apply_injection(
    lab: &dyn Lab,
    injection: &Injection,
    timeout: Duration,
) -> InjectionReport {
    let mut steps = Vec::new();
    let mut stopped = false;
    for step in injection.applied_steps() {
        let command = step.cmd.clone().unwrap_or_default();
        if stopped {
            steps.push(StepReport {
                device: step.device.clone(),
                command,
                status: StepStatus::Skipped,
                output: None,
            });
            continue;
        }
        let result = lab
            .exec(&step.device, &Command::shell(command.clone()), timeout)
            .await;
        let (status, output) = classify(result);
        stopped = status != StepStatus::Applied;
        steps.push(StepReport {
            device: step.device.clone(),
            command,
            status,
            output: output.map(trim_output),
        });
    }
    InjectionReport { steps }
}

fn classify(result: Result<ExecOutput, EmuError>) -> (StepStatus, Option<ExecOutput>) {
    match result {
        Err(EmuError::Unsupported { feature, reason }) => (
            StepStatus::Unsupported {
                reason: format!("{feature}: {reason}"),
            },
            None,
        ),
        Err(e) => (
            StepStatus::Failed {
                reason: format!("could not run: {e}"),
            },
            None,
        ),
        Ok(o) if o.timed_out => (
            StepStatus::Failed {
                reason: format!("timed out after {} ms", o.duration_ms),
            },
            Some(o),
        ),
        Ok(o) if o.exit_code == Some(UNSUPPORTED_EXIT) => {
            let said = last_words(&o.stderr, &o.stdout);
            let reason = if said.is_empty() {
                format!("exit code {UNSUPPORTED_EXIT} (unsupported on this host)")
            } else {
                said
            };
            (StepStatus::Unsupported { reason }, Some(o))
        }
        Ok(o) if o.success() => (StepStatus::Applied, Some(o)),
        Ok(o) => {
            let code = o
                .exit_code
                .map_or_else(|| "killed by a signal".to_string(), |c| format!("exit {c}"));
            let said = last_words(&o.stderr, &o.stdout);
            let reason = if said.is_empty() {
                code
            } else {
                format!("{code}: {said}")
            };
            (StepStatus::Failed { reason }, Some(o))
        }
    }
}

/// How long and how often [`verify_injection`] retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyRetry {
    /// Pause between rounds.
    pub interval: Duration,
    /// Give up once this much time has passed since the first round started (a round that
    /// has started always completes).
    pub deadline: Duration,
    /// Timeout of each check command.
    pub command_timeout: Duration,
}

impl Default for VerifyRetry {
    /// Every 0.25 s for up to 30 s, each command bounded by 15 s. Short rounds matter: the
    /// fault usually shows within a second, and the wait is harness overhead in every run.
    fn default() -> Self {
        VerifyRetry {
            interval: Duration::from_millis(250),
            deadline: Duration::from_secs(30),
            command_timeout: Duration::from_secs(15),
        }
    }
}

impl VerifyRetry {
    /// A single round, no retry.
    pub fn once(command_timeout: Duration) -> Self {
        VerifyRetry {
            interval: Duration::ZERO,
            deadline: Duration::ZERO,
            command_timeout,
        }
    }
}

/// The verdict on one check in the last round.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRun {
    /// The check.
    pub check: PostInjectCheck,
    /// Whether it held.
    pub passed: bool,
    /// True when the expectation was not understood and the pass is only advisory (the
    /// release's rule for unknown expectations).
    pub advisory: bool,
    /// Why (the expectation's rationale, or why the command could not run).
    pub reason: String,
    /// What the command printed (cut to a few KiB).
    pub stdout: String,
}

/// What [`verify_injection`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifyReport {
    /// Per-check verdicts of the last round, in check order.
    pub checks: Vec<CheckRun>,
    /// Rounds run (0 when there were no checks).
    pub attempts: u32,
    /// Time from the first round's start to the last round's end.
    pub elapsed: Duration,
}

impl CheckRun {
    /// The check's command could not run or timed out (its device is gone, its init was
    /// killed…): the check says nothing about the fault either way.
    pub fn could_not_run(&self) -> bool {
        self.reason.starts_with(COULD_NOT_RUN) || self.reason.starts_with(TIMED_OUT)
    }
}

const COULD_NOT_RUN: &str = "could not run: ";
const TIMED_OUT: &str = "timed out after ";

impl VerifyReport {
    /// Every check held in the same round (vacuously true without checks).
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|c| c.passed)
    }

    /// The checks that did not hold.
    pub fn failures(&self) -> impl Iterator<Item = &CheckRun> {
        self.checks.iter().filter(|c| !c.passed)
    }

    /// A one-line summary of the failures, e.g. for a status line.
    pub fn reason(&self) -> Option<String> {
        let parts: Vec<String> = self
            .failures()
            .map(|c| {
                format!(
                    "{} `{}` => expect {}: {}",
                    c.check.device, c.check.command, c.check.expect, c.reason
                )
            })
            .collect();
        (!parts.is_empty()).then(|| parts.join("; "))
    }
}

/// Runs `checks` on `lab` in rounds until all hold in one round or `policy` gives up.
pub async fn verify_injection(
    lab: &dyn Lab,
    checks: &[PostInjectCheck],
    policy: &VerifyRetry,
) -> VerifyReport {
    let start = Instant::now();
    if checks.is_empty() {
        return VerifyReport {
            checks: Vec::new(),
            attempts: 0,
            elapsed: Duration::ZERO,
        };
    }
    let mut attempts = 0;
    loop {
        attempts += 1;
        let round = futures_util::future::join_all(
            checks
                .iter()
                .map(|c| run_check(lab, c, policy.command_timeout)),
        )
        .await;
        let all_passed = round.iter().all(|c| c.passed);
        if all_passed || start.elapsed() + policy.interval > policy.deadline {
            return VerifyReport {
                checks: round,
                attempts,
                elapsed: start.elapsed(),
            };
        }
        tokio::time::sleep(policy.interval).await;
    }
}

/// Runs every check once, all at the same time, and returns their verdicts in check order.
pub async fn check_round(
    lab: &dyn Lab,
    checks: &[PostInjectCheck],
    timeout: Duration,
) -> Vec<CheckRun> {
    futures_util::future::join_all(checks.iter().map(|c| run_check(lab, c, timeout))).await
}

async fn run_check(lab: &dyn Lab, check: &PostInjectCheck, timeout: Duration) -> CheckRun {
    let out = lab
        .exec(
            &check.device,
            &Command::shell(check.command.clone()),
            timeout,
        )
        .await;
    let (passed, advisory, reason, stdout) = match out {
        Err(e) => (false, false, format!("{COULD_NOT_RUN}{e}"), String::new()),
        Ok(o) if o.timed_out => (
            false,
            false,
            format!("{TIMED_OUT}{} ms", o.duration_ms),
            o.stdout,
        ),
        Ok(o) => {
            let v = Expectation::parse(&check.expect).check(&o.stdout);
            let mut reason = v.rationale;
            if !v.passed && !o.stderr.trim().is_empty() {
                reason.push_str(&format!("; stderr: {}", cut(o.stderr.trim(), 300)));
            }
            (v.passed, v.advisory, reason, o.stdout)
        }
    };
    CheckRun {
        check: check.clone(),
        passed,
        advisory,
        reason,
        stdout: cut(&stdout, KEEP_OUTPUT),
    }
}

fn trim_output(mut o: ExecOutput) -> ExecOutput {
    if o.stdout.len() > KEEP_OUTPUT || o.stderr.len() > KEEP_OUTPUT {
        o.truncated = true;
    }
    o.stdout = cut(&o.stdout, KEEP_OUTPUT);
    o.stderr = cut(&o.stderr, KEEP_OUTPUT);
    o
}

/// The last non-empty line of stderr, else of stdout (where shells and shims explain).
fn last_words(stderr: &str, stdout: &str) -> String {
    let pick = |s: &str| {
        s.lines()
            .rev()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| cut(l, 300))
    };
    pick(stderr).or_else(|| pick(stdout)).unwrap_or_default()
}

fn first_line(s: &str) -> String {
    let line = s.lines().next().unwrap_or_default();
    if s.lines().nth(1).is_some() {
        format!("{} …", cut(line, 80))
    } else {
        cut(line, 80)
    }
}

fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…[cut]", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{parse_checks, parse_injection};
    use std::collections::HashMap;
    use std::sync::Mutex;

    /// A lab whose devices answer scripted commands; `apply` commands change state that later
    /// `probe` commands read, so retries and ordering can be observed.
    #[derive(Debug, Default)]
    struct ScriptLab {
        log: Mutex<Vec<(String, String)>>,
        /// command -> (exit code, stdout, stderr)
        answers: HashMap<String, (i32, String, String)>,
        /// `count` answers "0" until it has been asked this many times, then "1".
        flip_after: u32,
        asked: Mutex<u32>,
    }

    impl ScriptLab {
        fn answer(mut self, cmd: &str, code: i32, stdout: &str, stderr: &str) -> Self {
            self.answers
                .insert(cmd.into(), (code, stdout.into(), stderr.into()));
            self
        }
    }

    #[async_trait::async_trait]
    impl Lab for ScriptLab {
        fn name(&self) -> &str {
            "script"
        }
        fn devices(&self) -> Vec<String> {
            vec!["r1".into(), "pc1".into()]
        }
        async fn exec(
            &self,
            device: &str,
            command: &Command,
            _timeout: Duration,
        ) -> Result<ExecOutput, EmuError> {
            if !self.devices().iter().any(|d| d == device) {
                return Err(EmuError::UnknownDevice {
                    lab: "script".into(),
                    device: device.into(),
                });
            }
            let text = command.to_string();
            assert_eq!(command.to_argv()[..2], ["sh", "-c"], "must run via sh -c");
            self.log.lock().unwrap().push((device.into(), text.clone()));
            if text == "count" {
                let mut n = self.asked.lock().unwrap();
                *n += 1;
                let v = if *n > self.flip_after { "1" } else { "0" };
                return Ok(ExecOutput::ok(v));
            }
            if text == "sleepy" {
                return Ok(ExecOutput {
                    timed_out: true,
                    duration_ms: 5,
                    ..Default::default()
                });
            }
            let (code, out, err) = self.answers.get(&text).cloned().unwrap_or((
                127,
                String::new(),
                format!("sh: {text}: not found"),
            ));
            Ok(ExecOutput {
                stdout: out,
                stderr: err,
                exit_code: Some(code),
                ..Default::default()
            })
        }
        async fn teardown(&self) -> Result<(), EmuError> {
            Ok(())
        }
    }

    fn fast(deadline_ms: u64) -> VerifyRetry {
        VerifyRetry {
            interval: Duration::from_millis(5),
            deadline: Duration::from_millis(deadline_ms),
            command_timeout: Duration::from_secs(1),
        }
    }

    #[tokio::test]
    async fn negative_control_injects_nothing() {
        let lab = ScriptLab::default();
        let inj = parse_injection("device: none\naction: none\nnote: |\n  healthy").unwrap();
        let r = apply_injection(&lab, &inj, Duration::from_secs(1)).await;
        assert_eq!(r.status(), InjectionStatus::NothingToInject);
        assert!(r.reason().is_none());
        assert!(lab.log.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn steps_run_in_order_and_stop_at_the_first_failure() {
        let lab = ScriptLab::default().answer("a", 0, "", "").answer(
            "b",
            2,
            "",
            "RTNETLINK answers: File exists\n",
        );
        let inj =
            parse_injection("device: r1\ncmd: a\ndevice: pc1\ncmd: b\ndevice: r1\ncmd: c").unwrap();
        let r = apply_injection(&lab, &inj, Duration::from_secs(1)).await;
        assert_eq!(r.status(), InjectionStatus::Failed);
        assert_eq!(r.steps[0].status, StepStatus::Applied);
        assert!(
            matches!(&r.steps[1].status, StepStatus::Failed { reason } if reason == "exit 2: RTNETLINK answers: File exists")
        );
        assert_eq!(r.steps[2].status, StepStatus::Skipped);
        assert_eq!(
            *lab.log.lock().unwrap(),
            vec![
                ("r1".to_string(), "a".to_string()),
                ("pc1".into(), "b".into())
            ]
        );
        assert!(r.reason().unwrap().starts_with("pc1: `b` failed: exit 2"));
    }

    #[tokio::test]
    async fn unsupported_exit_is_its_own_outcome() {
        let lab = ScriptLab::default().answer(
            "tc qdisc add dev eth0 root netem delay 100ms",
            UNSUPPORTED_EXIT,
            "",
            "faultbench: netem is not available in this kernel (CONFIG_NET_SCH_NETEM unset)\n",
        );
        let inj = parse_injection("device: r1\ncmd: tc qdisc add dev eth0 root netem delay 100ms")
            .unwrap();
        let r = apply_injection(&lab, &inj, Duration::from_secs(1)).await;
        assert_eq!(r.status(), InjectionStatus::Unsupported);
        let reason = r.reason().unwrap();
        assert!(reason.contains("unsupported on this host"), "{reason}");
        assert!(reason.contains("CONFIG_NET_SCH_NETEM"), "{reason}");
    }

    #[tokio::test]
    async fn unknown_device_and_timeouts_are_failures() {
        let lab = ScriptLab::default();
        let inj = parse_injection("device: r9\ncmd: true").unwrap();
        let r = apply_injection(&lab, &inj, Duration::from_secs(1)).await;
        assert_eq!(r.status(), InjectionStatus::Failed);
        assert!(r.reason().unwrap().contains("device `r9` not found"));
        let inj = parse_injection("device: r1\ncmd: sleepy").unwrap();
        let r = apply_injection(&lab, &inj, Duration::from_secs(1)).await;
        assert!(r.reason().unwrap().contains("timed out"));
    }

    #[tokio::test]
    async fn checks_retry_until_they_hold_together() {
        let lab = ScriptLab {
            flip_after: 3,
            ..Default::default()
        }
        .answer("pgrep ospfd", 1, "", "");
        let checks =
            parse_checks("r1  pgrep ospfd  => expect empty\nr1  count  => expect 1").unwrap();
        let r = verify_injection(&lab, &checks, &fast(5_000)).await;
        assert!(r.passed(), "{:?}", r.reason());
        assert_eq!(r.attempts, 4);
        assert!(r.checks.iter().all(|c| c.passed && !c.advisory));
    }

    #[tokio::test]
    async fn checks_give_up_at_the_deadline_with_reasons() {
        let lab = ScriptLab::default().answer("pgrep ospfd", 0, "4242\n", "");
        let checks = parse_checks(
            "r1  pgrep ospfd  => expect empty\npc1  whatever  => expect sometimes\nr9  ls  => expect empty",
        )
        .unwrap();
        let r = verify_injection(&lab, &checks, &fast(40)).await;
        assert!(!r.passed());
        assert!(r.attempts >= 2, "retried: {}", r.attempts);
        assert!(!r.checks[0].passed);
        assert!(r.checks[0].reason.contains("empty"));
        assert_eq!(r.checks[0].stdout, "4242\n");
        assert!(r.checks[1].passed && r.checks[1].advisory);
        assert!(r.checks[2].reason.contains("could not run"));
        let why = r.reason().unwrap();
        assert!(why.contains("r1 `pgrep ospfd` => expect empty"), "{why}");
        assert_eq!(r.failures().count(), 2);
    }

    #[tokio::test]
    async fn once_runs_a_single_round_and_no_checks_pass_vacuously() {
        let lab = ScriptLab::default();
        let checks = parse_checks("r1  nope  => expect 0").unwrap();
        let r = verify_injection(&lab, &checks, &VerifyRetry::once(Duration::from_secs(1))).await;
        assert_eq!(r.attempts, 1);
        assert!(!r.passed());
        let r = verify_injection(&lab, &[], &VerifyRetry::default()).await;
        assert!(r.passed());
        assert_eq!(r.attempts, 0);
    }

    #[test]
    fn long_outputs_are_cut_on_char_boundaries() {
        let s = "é".repeat(2000);
        let c = cut(&s, 1001);
        assert!(c.ends_with("…[cut]"));
        assert!(c.len() < 1100);
        let o = trim_output(ExecOutput::ok("x".repeat(5000)));
        assert!(o.truncated);
    }
}
