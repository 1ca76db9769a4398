//! The run pipeline's statuses and warm-lab reuse, on an in-test lab whose one fault can be
//! switched on (`break`) and off (`repair`).

use async_trait::async_trait;
use faultbench_core::agent::{Agent, AgentInput, AgentOutcome};
use faultbench_core::emulator::{
    Command, EmuError, Emulator, ExecOutput, Lab, LabRequest, UNSUPPORTED_EXIT,
};
use faultbench_core::inject::RetryPolicy;
use faultbench_core::judge::{Judge, JudgeError, JudgeInput, Scores};
use faultbench_core::lab::TopologyResolver;
use faultbench_core::pipeline::{RunConfig, Runner};
use faultbench_core::toolbox::Toolbox;
use faultbench_core::{RunStatus, ScenarioSpec};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

#[derive(Debug, Default)]
struct Net {
    broken: AtomicBool,
    healthy_at_start: bool,
    torn_down: AtomicUsize,
}

#[derive(Debug)]
struct NetLab(Arc<Net>, String);

#[async_trait]
impl Lab for NetLab {
    fn name(&self) -> &str {
        &self.1
    }
    fn devices(&self) -> Vec<String> {
        vec!["r1".into(), "pc1".into()]
    }
    async fn exec(&self, _d: &str, c: &Command, _t: Duration) -> Result<ExecOutput, EmuError> {
        let net = &self.0;
        Ok(match c.to_string().as_str() {
            "ip link set eth0 down" => {
                net.broken.store(true, Ordering::SeqCst);
                ExecOutput::ok("")
            }
            "ip link set eth0 up" => {
                net.broken.store(false, Ordering::SeqCst);
                ExecOutput::ok("")
            }
            "netem delay" => ExecOutput::failed(
                UNSUPPORTED_EXIT,
                "faultbench: unsupported on this host: netem delay",
            ),
            "noop" => ExecOutput::ok(""),
            "ping" if net.broken.load(Ordering::SeqCst) || !net.healthy_at_start => {
                ExecOutput::ok("1 packets transmitted, 0 received, 100% packet loss")
            }
            "ping" => ExecOutput::ok("1 packets transmitted, 1 received, 0% packet loss"),
            other => ExecOutput::failed(127, format!("{other}: not found")),
        })
    }
    async fn teardown(&self) -> Result<(), EmuError> {
        self.0.torn_down.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

struct NetEmu {
    net: Arc<Net>,
    deploys: AtomicUsize,
    fail: bool,
}

#[async_trait]
impl Emulator for NetEmu {
    fn kind(&self) -> &str {
        "test"
    }
    async fn deploy(&self, _r: &LabRequest) -> Result<Arc<dyn Lab>, EmuError> {
        let n = self.deploys.fetch_add(1, Ordering::SeqCst);
        if self.fail {
            return Err(EmuError::DeployIncomplete {
                lab: "x".into(),
                reason: "r1 did not start".into(),
            });
        }
        self.net.broken.store(false, Ordering::SeqCst);
        Ok(Arc::new(NetLab(self.net.clone(), format!("lab{n}"))))
    }
}

enum Behaviour {
    Answer(&'static str),
    Panic,
    Exhaust,
}

struct Scripted(Behaviour);

#[async_trait]
impl Agent for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        assert!(input.prompt.contains("# Symptom (user report)"));
        assert!(!input.prompt.contains("GROUND-TRUTH"));
        let _ = tools.call("anything", serde_json::json!({})).await;
        match self.0 {
            Behaviour::Answer(verdict) => AgentOutcome::answer(format!(
                "=== DIAGNOSIS ===\nis_anomaly: {verdict}\nfaulty_devices: {}\ndiagnosis_text:\nx\n=== END ===",
                if verdict == "true" { "r1" } else { "none" }
            )),
            Behaviour::Panic => panic!("model client exploded"),
            Behaviour::Exhaust => AgentOutcome {
                hit_max_turns: true,
                final_text: "still investigating".into(),
                ..Default::default()
            },
        }
    }
}

struct AssertJudge(bool);

#[async_trait]
impl Judge for AssertJudge {
    fn name(&self) -> &str {
        "asserts"
    }
    async fn judge(&self, i: &JudgeInput<'_>) -> Result<Scores, JudgeError> {
        if !self.0 {
            return Err(JudgeError::Unavailable("HTTP 503 three times".into()));
        }
        let mut s = Scores::new("asserts");
        for a in faultbench_core::Scenario::scoring_axes(i.scenario) {
            let pass = a
                .assertion()
                .is_some_and(|x| faultbench_core::judge::check_assertion(&x, i.diagnosis));
            s.push_axis(faultbench_core::judge::AxisVerdict::new(a, pass, ""));
        }
        s.finish(faultbench_core::judge::OutcomeRule::Release);
        Ok(s)
    }
}

fn topology(healthy_probe: &str) -> tempfile::TempDir {
    let root = tempfile::tempdir().unwrap();
    let t = root.path().join("T");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(t.join("lab.conf"), "r1[0]=A\npc1[0]=A\n").unwrap();
    std::fs::write(
        t.join("baseline.toml"),
        format!("[[probe]]\nname='pc1 reaches r1'\nkind='reach'\ndevice='pc1'\ncommand='{healthy_probe}'\nexpect='0% loss'\n"),
    )
    .unwrap();
    root
}

fn scenario(id: &str, cmd: Option<&str>, fix: &str) -> ScenarioSpec {
    let injection = match cmd {
        Some(c) => format!("device: r1\ncmd: {c}"),
        None => "device: none\nnote: healthy".into(),
    };
    let checks = if cmd.is_some() {
        "pc1  ping  => expect loss>0"
    } else {
        "# none"
    };
    let fix = if fix.is_empty() {
        String::new()
    } else {
        format!("[FIX]\n{fix}\n\n")
    };
    let axes = if cmd.is_some() {
        "assert-identifies: r1"
    } else {
        "assert-no-anomaly\nassert-no-faulty-devices"
    };
    ScenarioSpec::parse(&format!(
        "Scenario: {id}\nTopology: T\n\n[PROMPT-TO-AGENT]\npc1 cannot reach r1\n\n[INJECTION]\n{injection}\n\n[POST-INJECT-CHECK]\n{checks}\n\n[GROUND-TRUTH]\nx\n\n{fix}[SCORING-AXES]\n{axes}\n\n[NIKA-LABEL]\nnika_label: none\nnika_category: NOVEL\nin_taxonomy: false\n"
    ))
    .unwrap()
}

struct Setup {
    runner: Runner,
    emu: Arc<NetEmu>,
    _root: tempfile::TempDir,
}

fn setup(agent: Behaviour, judge_ok: bool, healthy: bool, deploy_fails: bool) -> Setup {
    let root = topology("ping");
    let net = Arc::new(Net {
        healthy_at_start: healthy,
        ..Default::default()
    });
    let emu = Arc::new(NetEmu {
        net,
        deploys: AtomicUsize::new(0),
        fail: deploy_fails,
    });
    let config = RunConfig {
        baseline_wait: Duration::from_millis(300),
        retry: RetryPolicy {
            interval: Duration::from_millis(10),
            deadline: Duration::from_millis(50),
            command_timeout: Duration::from_secs(1),
        },
        ..Default::default()
    };
    let runner = Runner::new(
        emu.clone(),
        Arc::new(Scripted(agent)),
        Arc::new(AssertJudge(judge_ok)),
    )
    .with_topologies(TopologyResolver::new([root.path()]))
    .with_config(config);
    Setup {
        runner,
        emu,
        _root: root,
    }
}

#[tokio::test]
async fn scored_run_records_every_phase_and_reuses_the_lab_warm() {
    let s = setup(Behaviour::Answer("true"), true, true, false);
    let sc = scenario(
        "t-r1-broken",
        Some("ip link set eth0 down"),
        "`ip link set eth0 up` on r1",
    );
    let first = s.runner.run(&sc).await;
    assert_eq!(first.status, RunStatus::Scored, "{:?}", first.error);
    assert_eq!(first.scores.as_ref().unwrap().outcome, 1.0);
    let p = &first.phases;
    assert!(!p.deploy.as_ref().unwrap().warm);
    assert!(p.baseline.as_ref().unwrap().ok);
    assert!(p.injection.as_ref().unwrap().applied);
    assert!(p.post_inject_check.as_ref().unwrap().passed);
    assert_eq!(
        p.agent.as_ref().unwrap().outcome.tool_log.len(),
        1,
        "tool calls are recorded"
    );
    assert_eq!(p.cleanup.as_ref().unwrap().action, "reverted");
    assert!(
        first
            .agent_input_prompt
            .as_deref()
            .unwrap()
            .starts_with("# Topology overview")
    );

    let second = s.runner.run_pass(&sc, 2).await;
    assert_eq!(second.status, RunStatus::Scored);
    assert!(second.phases.deploy.as_ref().unwrap().warm);
    assert_eq!(
        s.emu.deploys.load(Ordering::SeqCst),
        1,
        "second run reused the warm lab"
    );
    s.runner.shutdown().await;
    assert_eq!(s.emu.net.torn_down.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_unverified_revert_means_a_redeploy() {
    let s = setup(Behaviour::Answer("true"), true, true, false);
    let sc = scenario(
        "t-r1-broken",
        Some("ip link set eth0 down"),
        "Ask someone to fix it.",
    );
    let first = s.runner.run(&sc).await;
    assert_eq!(first.phases.cleanup.as_ref().unwrap().action, "teardown");
    let second = s.runner.run(&sc).await;
    assert!(!second.phases.deploy.as_ref().unwrap().warm);
    assert_eq!(s.emu.deploys.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn infrastructure_statuses() {
    let s = setup(Behaviour::Answer("true"), true, true, true);
    let r = s
        .runner
        .run(&scenario("t-x", Some("ip link set eth0 down"), ""))
        .await;
    assert_eq!(r.status, RunStatus::DeployIncomplete);
    assert!(r.error.unwrap().contains("r1 did not start"));

    let s = setup(Behaviour::Answer("true"), true, false, false);
    let r = s
        .runner
        .run(&scenario("t-x", Some("ip link set eth0 down"), ""))
        .await;
    assert_eq!(r.status, RunStatus::DeployIncomplete);
    assert!(r.error.unwrap().contains("pc1 reaches r1"));
    assert!(r.phases.agent.is_none());

    let s = setup(Behaviour::Answer("true"), true, true, false);
    let r = s
        .runner
        .run(&scenario("t-x", Some("netem delay"), ""))
        .await;
    assert_eq!(r.status, RunStatus::UnsupportedOnHost);
    assert!(r.error.unwrap().contains("netem delay"));

    let r = s.runner.run(&scenario("t-x", Some("noop"), "")).await;
    assert_eq!(r.status, RunStatus::InjectionFailed);
    assert!(
        r.phases.agent.is_none(),
        "the agent never starts when the fault did not take"
    );
    assert!(r.phases.post_inject_check.as_ref().unwrap().attempts >= 2);
}

#[tokio::test]
async fn agent_and_judge_statuses() {
    let sc = scenario("t-false-premise-slow", None, "");
    let s = setup(Behaviour::Panic, true, true, false);
    let r = s.runner.run(&sc).await;
    assert_eq!(r.status, RunStatus::AgentError);
    assert!(r.error.unwrap().contains("panicked"));

    let s = setup(Behaviour::Exhaust, true, true, false);
    let r = s.runner.run(&sc).await;
    assert_eq!(r.status, RunStatus::NoSubmission);
    assert!(r.scores.is_none());

    let s = setup(Behaviour::Answer("false"), false, true, false);
    let r = s.runner.run(&sc).await;
    assert_eq!(r.status, RunStatus::JudgeFailed);
    assert!(
        r.diagnosis.is_some(),
        "the diagnosis is kept for re-judging"
    );
    assert!(r.error.unwrap().contains("503"));

    let s = setup(Behaviour::Answer("false"), true, true, false);
    let r = s.runner.run(&sc).await;
    assert_eq!(r.status, RunStatus::Scored);
    assert_eq!(r.scores.unwrap().outcome, 1.0);
    assert!(!r.phases.injection.unwrap().applied);
}
