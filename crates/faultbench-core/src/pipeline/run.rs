//! The phases of one run on a prepared lab.

use super::Runner;
use super::prepared::{LabPlan, PreparedLab, ReadyLab};
use super::repairing::{AgentEnd, Repairing};
use crate::agent::{Agent, AgentInput, AgentOutcome};
use crate::inject::{InjectionReport, VerifyReport};
use crate::judge::JudgeInput;
use crate::phases::{FaultVerdict, PresenceReport};
use crate::record::{
    AgentPhase, CheckPhase, CleanupPhase, InjectionPhase, InjectionStepResult, JudgePhase, Phases,
    PresencePhase, RECORD_SCHEMA, RunKey, RunRecord, ScenarioSnapshot, SnapshotPhase, now_rfc3339,
};
use crate::scenario::{CheckVerdict, Scenario};
use crate::snapshot::Snapshot;
use crate::status::{RunStatus, status_after_agent};
use crate::toolbox::{RecordingToolbox, Toolbox};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn ms(d: Duration) -> u64 {
    d.as_millis().try_into().unwrap_or(u64::MAX)
}

pub(super) async fn run(
    runner: &Runner,
    agent: &Arc<dyn Agent>,
    label: &str,
    scenario: &dyn Scenario,
    pass: u32,
    lab: PreparedLab,
) -> RunRecord {
    let t0 = Instant::now();
    let mut rec = RunRecord {
        schema: RECORD_SCHEMA,
        key: RunKey {
            topology: scenario.topology_id().clone(),
            layer: scenario.layer(),
            scenario_id: scenario.scenario_id().clone(),
            agent: label.to_string(),
            pass,
        },
        model: agent.model().map(str::to_string),
        status: RunStatus::PipelineError,
        started_at: now_rfc3339(),
        finished_at: String::new(),
        wall_seconds: 0.0,
        scenario: ScenarioSnapshot::of(scenario),
        agent_input_prompt: None,
        telemetry: runner.config.telemetry,
        phases: Phases::default(),
        agent_changes: Vec::new(),
        task: Default::default(),
        repair: None,
        diagnosis: None,
        scores: None,
        error: None,
        faultbench_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let (status, error) = phases(runner, agent, scenario, &mut rec, lab).await;
    rec.status = status;
    rec.error = error;
    rec.finished_at = now_rfc3339();
    rec.wall_seconds = (t0.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    rec
}

/// Runs the phases, filling `rec`; returns the status and the error behind it.
async fn phases(
    runner: &Runner,
    agent: &Arc<dyn Agent>,
    scenario: &dyn Scenario,
    rec: &mut RunRecord,
    mut prepared: PreparedLab,
) -> (RunStatus, Option<String>) {
    let cfg = &runner.config;
    // 1–2. The lab, deployed (or kept) and verified healthy.
    rec.phases.deploy = Some(prepared.deploy.clone());
    rec.phases.baseline = prepared.baseline.clone();
    if let Some((status, why)) = prepared.failure.take() {
        return (status, Some(why));
    }
    let (Some(plan), Some(mut ready)) = (prepared.plan.clone(), prepared.ready.take()) else {
        return (
            RunStatus::PipelineError,
            Some("the prepared lab holds no running lab".into()),
        );
    };
    let lab = ready.lab.clone();
    rec.task = cfg.task;
    let healthy = ready.healthy.take();
    let mut repairing = match Repairing::before_injection(runner, lab.as_ref(), scenario, healthy)
        .await
    {
        Ok(r) => r,
        Err(why) => {
            rec.phases.cleanup = Some(teardown(&ready, "the scenario cannot be repaired").await);
            return (RunStatus::PipelineError, Some(why));
        }
    };

    // 3. Injection and its verification.
    let fault = crate::phases::inject_and_verify(lab.as_ref(), scenario, &cfg.phases).await;
    rec.phases.injection = Some(injection_phase(&fault.injection, fault.injection_elapsed));
    rec.phases.post_inject_check = fault.verification.as_ref().map(check_phase);
    let failed = match fault.verdict {
        FaultVerdict::Took | FaultVerdict::NothingToInject => None,
        FaultVerdict::Unsupported(why) => Some((RunStatus::UnsupportedOnHost, why)),
        FaultVerdict::InjectionFailed(why) => Some((RunStatus::InjectionFailed, why)),
        FaultVerdict::DidNotTake(why) => Some((RunStatus::InjectionFailed, why)),
    };
    if let Some((status, why)) = failed {
        rec.phases.cleanup = Some(teardown(&ready, "the run stopped before the agent").await);
        return (status, Some(why));
    }

    // 4. The agent, between two state snapshots.
    let before = Snapshot::take(lab.as_ref(), &cfg.snapshot).await;
    let input = AgentInput::new(&plan.summary, scenario.ticket(), cfg.budget).with_task(cfg.task);
    rec.agent_input_prompt = Some(input.prompt.clone());
    let recording = Arc::new(RecordingToolbox::new(ready.tools.clone()));
    if let Some(r) = repairing.as_mut() {
        r.agent_starts(runner, &lab, scenario);
    }
    let t = Instant::now();
    let mut outcome = run_agent(runner, agent, &input, recording.clone()).await;
    let agent_ms = ms(t.elapsed());
    if let Some(r) = repairing.as_mut() {
        r.agent_ends().await;
    }
    // The snapshot after the agent and, in the diagnose task, the presence watch both only
    // read the lab and neither depends on the other: they run at the same time (the watch's
    // pings that must fail spend most of their time waiting, the snapshot mostly CPU). The
    // repair verification needs the snapshot, so it follows it.
    let watch_now = repairing.is_none() && status_after_agent(&outcome) != RunStatus::AgentError;
    let (after, early_watch) = if watch_now {
        let (after, w) = tokio::join!(
            Snapshot::take(lab.as_ref(), &cfg.snapshot),
            crate::phases::watch_presence(lab.as_ref(), scenario, &plan.baseline, &cfg.phases)
        );
        (after, Some(w))
    } else {
        (Snapshot::take(lab.as_ref(), &cfg.snapshot).await, None)
    };
    rec.agent_changes = before.diff(&after);
    rec.phases.snapshots = Some(snapshot_phase(&before, &after));
    if outcome.tool_log.is_empty() {
        outcome.tool_log = recording.records();
    }
    if outcome.tool_calls == 0 {
        outcome.tool_calls = outcome.tool_log.len() as u32;
    }
    let diagnosis = outcome.diagnosis();
    let mut status = status_after_agent(&outcome);
    let agent_error = outcome.error.clone();
    rec.diagnosis = (!outcome.final_text.trim().is_empty()).then(|| diagnosis.clone());
    rec.phases.agent = Some(AgentPhase {
        outcome,
        duration_ms: agent_ms,
    });
    let mut error = match status {
        RunStatus::AgentError => agent_error,
        RunStatus::NoSubmission | RunStatus::NoOutput => Some(
            agent_error.unwrap_or_else(|| "budget exhausted without a parsable verdict".into()),
        ),
        _ => None,
    };

    // 5. Presence watch: does the situation the agent was given still stand? (In the repair
    //    task, the repair verification answers it.)
    if status != RunStatus::AgentError {
        let w = match repairing {
            Some(r) => {
                let changed = !rec.agent_changes.is_empty();
                let (report, w) = r
                    .after_agent(
                        runner,
                        lab.as_ref(),
                        scenario,
                        &plan.baseline,
                        AgentEnd {
                            before: &before,
                            after: &after,
                            changed,
                            duration_ms: agent_ms,
                        },
                    )
                    .await;
                rec.repair = Some(report);
                w
            }
            None => match early_watch {
                Some(w) => w,
                None => {
                    crate::phases::watch_presence(
                        lab.as_ref(),
                        scenario,
                        &plan.baseline,
                        &cfg.phases,
                    )
                    .await
                }
            },
        };
        if let Some((vanished, why)) = vanished(&w, rec.agent_changes.is_empty()) {
            status = vanished;
            error = Some(why);
        }
        rec.phases.presence = Some(presence_phase(w));
    }

    // 6. The judge, while the lab is torn down: it reads only the diagnosis and the record,
    //    never the lab. (Reusing labs, the revert must finish before the lab is kept, and the
    //    judge runs first as before.)
    let cleanup = async {
        if cfg.reuse_labs {
            None
        } else {
            Some(teardown(&ready, "fresh lab").await)
        }
    };
    let judged = async {
        if status != RunStatus::Scored {
            return None;
        }
        let t = Instant::now();
        let digest = crate::record::digest_of(&*rec);
        let input = JudgeInput::new(scenario, &diagnosis).with_digest(&digest);
        let verdict = tokio::time::timeout(cfg.judge_timeout, runner.judge.judge(&input))
            .await
            .unwrap_or_else(|_| {
                Err(crate::judge::JudgeError::Unavailable(
                    format!(
                        "the judge did not finish within {} s (RunOptions::judge_timeout)",
                        cfg.judge_timeout.as_secs()
                    )
                    .into(),
                ))
            });
        Some((verdict, ms(t.elapsed())))
    };
    let (torn_down, judged) = tokio::join!(cleanup, judged);
    match judged {
        Some((Ok(scores), took)) => {
            rec.phases.judge = Some(JudgePhase::scored(runner.judge.name(), &scores, took));
            rec.scores = Some(scores);
        }
        Some((Err(e), took)) => {
            status = RunStatus::JudgeFailed;
            error = Some(e.to_string());
            rec.phases.judge = Some(JudgePhase::failed(
                runner.judge.name(),
                &e.to_string(),
                took,
            ));
        }
        None => {}
    }

    // 7. Torn down above, or (reusing labs) revert and keep.
    rec.phases.cleanup = Some(match torn_down {
        Some(c) => c,
        None => revert_and_keep(runner, scenario, plan, &prepared, ready).await,
    });
    (status, error)
}

/// The infrastructure status of a run whose situation did not stand after the agent, when the
/// agent changed nothing (with changes, the agent may have repaired or broken it: that is its
/// result, and the changes are in the record).
fn vanished(w: &PresenceReport, agent_changed_nothing: bool) -> Option<(RunStatus, String)> {
    if w.held || !agent_changed_nothing {
        return None;
    }
    let (status, what) = if w.watched == "baseline" {
        (
            RunStatus::BaselineBroke,
            "the healthy baseline no longer held after the agent",
        )
    } else {
        (
            RunStatus::FaultVanished,
            "the injected fault no longer held after the agent",
        )
    };
    Some((
        status,
        format!(
            "{what}, which changed nothing in the network: {}",
            w.failures.join("; ")
        ),
    ))
}

/// Runs the agent in its own task, so that a panic becomes an `agent_error` and the wall-clock
/// cap is enforced even for an agent that ignores it.
async fn run_agent(
    runner: &Runner,
    agent: &Arc<dyn Agent>,
    input: &AgentInput,
    tools: Arc<RecordingToolbox<Arc<dyn Toolbox>>>,
) -> AgentOutcome {
    let agent = agent.clone();
    let input_owned = input.clone();
    let cap = input.budget.wall_clock() + runner.config.agent_grace;
    let task = tokio::spawn(async move { agent.run(&input_owned, tools).await });
    let abort = task.abort_handle();
    match tokio::time::timeout(cap, task).await {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(join)) => {
            let what = if join.is_panic() {
                "panicked"
            } else {
                "was cancelled"
            };
            AgentOutcome::failed(format!("the agent {what}: {join}"))
        }
        Err(_) => {
            abort.abort();
            AgentOutcome {
                hit_wall_clock: true,
                error: Some(format!(
                    "the agent ignored its wall-clock cap and was stopped after {} s",
                    cap.as_secs()
                )),
                ..Default::default()
            }
        }
    }
}

async fn teardown(ready: &ReadyLab, why: &str) -> CleanupPhase {
    let t = Instant::now();
    let r = ready.lab.teardown().await;
    CleanupPhase {
        action: "teardown".into(),
        ok: r.is_ok(),
        detail: Some(match r {
            Ok(()) => why.to_string(),
            Err(e) => format!("{why}; teardown error: {e}"),
        }),
        duration_ms: ms(t.elapsed()),
    }
}

/// `--reuse-labs`: runs the `[FIX]` and keeps the lab for the next run of its topology when
/// the baseline holds again; tears it down otherwise.
async fn revert_and_keep(
    runner: &Runner,
    scenario: &dyn Scenario,
    plan: Arc<LabPlan>,
    prepared: &PreparedLab,
    ready: ReadyLab,
) -> CleanupPhase {
    let t = Instant::now();
    let r = crate::phases::revert(
        ready.lab.as_ref(),
        &plan.baseline,
        scenario,
        &runner.config.phases,
    )
    .await;
    if r.restored() {
        let kept = PreparedLab::kept(
            plan,
            prepared.topology().to_string(),
            ready,
            runner.emulator.as_ref(),
        );
        if let Some(old) = runner.warm.lock().await.replace(kept) {
            old.release().await;
        }
        return CleanupPhase {
            action: "reverted".into(),
            ok: true,
            detail: Some(format!(
                "{} revert command(s); baseline holds; lab kept for the next run",
                r.commands
            )),
            duration_ms: ms(t.elapsed()),
        };
    }
    let down = ready.lab.teardown().await;
    CleanupPhase {
        action: "teardown".into(),
        ok: down.is_ok(),
        detail: Some(format!(
            "{} revert command(s); baseline does not hold ({}); lab torn down{}",
            r.commands,
            r.baseline.failures().join("; "),
            down.err()
                .map(|e| format!(" (teardown error: {e})"))
                .unwrap_or_default()
        )),
        duration_ms: ms(t.elapsed()),
    }
}

fn injection_phase(injection: &InjectionReport, elapsed: Duration) -> InjectionPhase {
    InjectionPhase {
        applied: !injection.steps.is_empty(),
        steps: injection
            .steps
            .iter()
            .map(|s| InjectionStepResult {
                device: s.device.clone(),
                cmd: s.command.clone(),
                exit_code: s.output.as_ref().and_then(|o| o.exit_code),
                stdout: s
                    .output
                    .as_ref()
                    .map(|o| o.stdout.clone())
                    .unwrap_or_default(),
                stderr: s
                    .output
                    .as_ref()
                    .map(|o| o.stderr.clone())
                    .unwrap_or_default(),
                duration_ms: s.output.as_ref().map(|o| o.duration_ms).unwrap_or(0),
            })
            .collect(),
        duration_ms: ms(elapsed),
    }
}

fn check_phase(report: &VerifyReport) -> CheckPhase {
    CheckPhase {
        passed: report.passed(),
        attempts: report.attempts,
        checks: report
            .checks
            .iter()
            .map(|c| {
                (
                    c.check.clone(),
                    CheckVerdict {
                        passed: c.passed,
                        advisory: c.advisory,
                        rationale: c.reason.clone(),
                    },
                )
            })
            .collect(),
        duration_ms: ms(report.elapsed),
    }
}

fn snapshot_phase(before: &Snapshot, after: &Snapshot) -> SnapshotPhase {
    let mut unreadable: Vec<String> = before
        .failures()
        .into_iter()
        .map(|f| format!("before: {f}"))
        .collect();
    unreadable.extend(after.failures().into_iter().map(|f| format!("after: {f}")));
    SnapshotPhase {
        devices: before.devices.len(),
        before_ms: ms(before.elapsed),
        after_ms: ms(after.elapsed),
        unreadable,
    }
}

fn presence_phase(w: PresenceReport) -> PresencePhase {
    PresencePhase {
        watched: w.watched,
        held: w.held,
        attempts: w.attempts,
        failures: w.failures,
        duration_ms: ms(w.elapsed),
    }
}
