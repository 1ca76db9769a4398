//! The phases of one run.

use super::revert::revert_commands;
use super::{Runner, WarmLab};
use crate::agent::{Agent, AgentInput, AgentOutcome};
use crate::emulator::{Command, EmuError, LabRequest};
use crate::inject::{InjectionStatus, apply_injection, verify_injection};
use crate::judge::JudgeInput;
use crate::lab::{Baseline, Topology, TopologySummary, verify};
use crate::record::{
    AgentPhase, BaselinePhase, CheckPhase, CleanupPhase, DeployPhase, InjectionPhase,
    InjectionStepResult, JudgePhase, Phases, RECORD_SCHEMA, RunKey, RunRecord, ScenarioSnapshot,
    now_rfc3339,
};
use crate::scenario::{CheckVerdict, Scenario};
use crate::status::{RunStatus, status_after_agent};
use crate::toolbox::{RecordingToolbox, Toolbox};
use std::sync::Arc;
use std::time::Instant;

fn ms(since: Instant) -> u64 {
    since.elapsed().as_millis() as u64
}

/// Everything prepared before the lab phase.
struct Prepared {
    topology: Topology,
    baseline: Baseline,
    summary: String,
    devices: Vec<String>,
}

fn prepare(runner: &Runner, scenario: &dyn Scenario) -> Result<Prepared, String> {
    let topology = runner
        .topologies
        .resolve(scenario.topology())
        .map_err(|e| e.to_string())?;
    let lab = topology.lab().map_err(|e| e.to_string())?;
    let baseline = topology.baseline().map_err(|e| e.to_string())?;
    let summary = TopologySummary::for_lab(&lab).map_err(|e| e.to_string())?;
    Ok(Prepared {
        devices: lab
            .conf
            .device_names()
            .iter()
            .map(|s| s.to_string())
            .collect(),
        topology,
        baseline,
        summary: summary.text,
    })
}

pub(super) async fn run(
    runner: &Runner,
    agent: &Arc<dyn Agent>,
    label: &str,
    scenario: &dyn Scenario,
    pass: u32,
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
        phases: Phases::default(),
        diagnosis: None,
        scores: None,
        error: None,
        faultbench_version: env!("CARGO_PKG_VERSION").to_string(),
    };
    let (status, error) = phases(runner, agent, scenario, &mut rec).await;
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
) -> (RunStatus, Option<String>) {
    let cfg = &runner.config;
    let prep = match prepare(runner, scenario) {
        Ok(p) => p,
        Err(e) => return (RunStatus::PipelineError, Some(e)),
    };

    // 1. Lab: reuse a verified warm lab of the same topology, or deploy.
    let t = Instant::now();
    let mut warm_slot = runner.warm.lock().await;
    let reuse = warm_slot
        .as_ref()
        .is_some_and(|w| w.topology == prep.topology.id && w.verified && cfg.warm_labs);
    let (lab, tools, warm) = if reuse {
        let w = warm_slot.take().expect("checked above");
        (w.lab, w.tools, true)
    } else {
        if let Some(old) = warm_slot.take() {
            let _ = old.lab.teardown().await;
        }
        match runner
            .emulator
            .deploy(&LabRequest::new(&prep.topology.dir))
            .await
        {
            Ok(lab) => {
                let tools = runner.tools.toolbox(lab.clone());
                (lab, tools, false)
            }
            Err(e) => {
                rec.phases.deploy = Some(DeployPhase {
                    emulator: runner.emulator.kind().to_string(),
                    ok: false,
                    duration_ms: ms(t),
                    error: Some(e.to_string()),
                    ..Default::default()
                });
                let status = match e {
                    EmuError::Unsupported { .. } => RunStatus::UnsupportedOnHost,
                    _ => RunStatus::DeployIncomplete,
                };
                return (status, Some(e.to_string()));
            }
        }
    };
    drop(warm_slot);
    rec.phases.deploy = Some(DeployPhase {
        emulator: runner.emulator.kind().to_string(),
        lab_name: lab.name().to_string(),
        warm,
        ok: true,
        duration_ms: if warm { 0 } else { ms(t) },
        error: None,
    });

    // 2. Healthy baseline (already verified by the previous run's revert when warm).
    let t = Instant::now();
    if warm {
        rec.phases.baseline = Some(BaselinePhase {
            ok: true,
            failures: Vec::new(),
            probes: prep.baseline.probes.len(),
            attempts: 0,
            duration_ms: 0,
        });
    } else {
        let mut attempts = 0;
        let failures = loop {
            attempts += 1;
            let results = verify(lab.as_ref(), &prep.baseline, cfg.command_timeout).await;
            let failures: Vec<_> = results.into_iter().filter(|r| !r.passed).collect();
            if failures.is_empty() || t.elapsed() >= cfg.baseline_wait {
                break failures;
            }
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        };
        let ok = failures.is_empty();
        let reason = failures
            .iter()
            .map(|f| format!("{}: {}", f.probe.name, f.detail))
            .collect::<Vec<_>>()
            .join("; ");
        rec.phases.baseline = Some(BaselinePhase {
            ok,
            failures,
            probes: prep.baseline.probes.len(),
            attempts,
            duration_ms: ms(t),
        });
        if !ok {
            let _ = lab.teardown().await;
            return (
                RunStatus::DeployIncomplete,
                Some(format!(
                    "healthy baseline does not hold after {} s: {reason}",
                    cfg.baseline_wait.as_secs()
                )),
            );
        }
    }

    // 3. Injection and its verification.
    let t = Instant::now();
    let injection = apply_injection(lab.as_ref(), scenario.injection(), cfg.command_timeout).await;
    let inj_status = injection.status();
    rec.phases.injection = Some(InjectionPhase {
        applied: inj_status != InjectionStatus::NothingToInject,
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
        duration_ms: ms(t),
    });
    if inj_status == InjectionStatus::Unsupported {
        let _ = lab.teardown().await;
        return (RunStatus::UnsupportedOnHost, injection.reason());
    }
    if inj_status != InjectionStatus::NothingToInject {
        let t = Instant::now();
        let report =
            verify_injection(lab.as_ref(), scenario.post_inject_checks(), &cfg.retry).await;
        let passed = report.passed();
        rec.phases.post_inject_check = Some(CheckPhase {
            passed,
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
            duration_ms: ms(t),
        });
        if !passed {
            let _ = lab.teardown().await;
            let mut why = report.reason().unwrap_or_default();
            if let Some(step) = injection.reason() {
                why = format!("{step}; {why}");
            }
            return (RunStatus::InjectionFailed, Some(why));
        }
    }

    // 4. The agent.
    let input = AgentInput::new(&prep.summary, scenario.ticket(), cfg.budget);
    rec.agent_input_prompt = Some(input.prompt.clone());
    let recording = Arc::new(RecordingToolbox::new(tools.clone()));
    let t = Instant::now();
    let mut outcome = run_agent(runner, agent, &input, recording.clone()).await;
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
        duration_ms: ms(t),
    });

    // 5. The judge.
    let mut error = match status {
        RunStatus::AgentError => agent_error,
        RunStatus::NoSubmission | RunStatus::NoOutput => Some(
            agent_error.unwrap_or_else(|| "budget exhausted without a parsable verdict".into()),
        ),
        _ => None,
    };
    if status == RunStatus::Scored {
        let t = Instant::now();
        let digest = crate::record::digest_of(rec);
        let input = JudgeInput::new(scenario, &diagnosis).with_digest(&digest);
        let verdict = tokio::time::timeout(cfg.judge_timeout, runner.judge.judge(&input))
            .await
            .unwrap_or_else(|_| {
                Err(crate::judge::JudgeError::Unavailable(format!(
                    "the judge did not finish within {} s (RunConfig::judge_timeout)",
                    cfg.judge_timeout.as_secs()
                )))
            });
        match verdict {
            Ok(scores) => {
                rec.phases.judge = Some(JudgePhase::scored(runner.judge.name(), &scores, ms(t)));
                rec.scores = Some(scores);
            }
            Err(e) => {
                status = RunStatus::JudgeFailed;
                error = Some(e.to_string());
                rec.phases.judge = Some(JudgePhase::failed(
                    runner.judge.name(),
                    &e.to_string(),
                    ms(t),
                ));
            }
        }
    }

    // 6. Revert and verify (keep warm) or tear down.
    rec.phases.cleanup = Some(cleanup(runner, scenario, &prep, lab, tools).await);
    (status, error)
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

async fn cleanup(
    runner: &Runner,
    scenario: &dyn Scenario,
    prep: &Prepared,
    lab: Arc<dyn crate::emulator::Lab>,
    tools: Arc<dyn Toolbox>,
) -> CleanupPhase {
    let cfg = &runner.config;
    let t = Instant::now();
    if !cfg.warm_labs {
        let r = lab.teardown().await;
        return CleanupPhase {
            action: "teardown".into(),
            ok: r.is_ok(),
            detail: r.err().map(|e| e.to_string()),
            duration_ms: ms(t),
        };
    }
    let injected: Vec<String> = scenario
        .injection()
        .devices()
        .into_iter()
        .map(str::to_string)
        .collect();
    let mut ran = 0;
    if let Some(fix) = scenario.fix().filter(|_| !injected.is_empty()) {
        for c in revert_commands(fix, &prep.devices, &injected) {
            let _ = lab
                .exec(
                    &c.device,
                    &Command::shell(c.command.clone()),
                    cfg.command_timeout,
                )
                .await;
            ran += 1;
        }
    }
    let failures: Vec<String> = loop {
        let results = verify(lab.as_ref(), &prep.baseline, cfg.command_timeout).await;
        let failures: Vec<String> = results
            .iter()
            .filter(|r| !r.passed)
            .map(|r| format!("{}: {}", r.probe.name, r.detail))
            .collect();
        // Reverted routing needs a moment to re-converge; a revert that found nothing to run
        // will not get better by waiting.
        if failures.is_empty() || ran == 0 || t.elapsed() >= cfg.revert_wait {
            break failures;
        }
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
    };
    if failures.is_empty() {
        *runner.warm.lock().await = Some(WarmLab {
            topology: prep.topology.id.clone(),
            lab,
            tools,
            verified: true,
        });
        CleanupPhase {
            action: "reverted".into(),
            ok: true,
            detail: Some(format!(
                "{ran} revert command(s); baseline holds; lab kept warm"
            )),
            duration_ms: ms(t),
        }
    } else {
        let r = lab.teardown().await;
        CleanupPhase {
            action: "teardown".into(),
            ok: r.is_ok(),
            detail: Some(format!(
                "{ran} revert command(s); baseline does not hold ({}); lab torn down{}",
                failures.join("; "),
                r.err()
                    .map(|e| format!(" (teardown error: {e})"))
                    .unwrap_or_default()
            )),
            duration_ms: ms(t),
        }
    }
}
