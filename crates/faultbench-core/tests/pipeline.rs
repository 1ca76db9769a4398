//! The run pipeline's statuses, fresh labs and prestarting, `--reuse-labs`, what the agent
//! changed, and the presence watch, on an in-test lab whose one fault can be switched on
//! (`break`) and off (`repair`).

use async_trait::async_trait;
use faultbench_core::agent::{Agent, AgentInput, AgentOutcome};
use faultbench_core::emulator::{
    Command, EmuError, Emulator, ExecOutput, Lab, LabRequest, UNSUPPORTED_EXIT,
};
use faultbench_core::inject::VerifyRetry;
use faultbench_core::judge::{Judge, JudgeError, JudgeInput, Scores};
use faultbench_core::lab::TopologyResolver;
use faultbench_core::phases::PhaseOptions;
use faultbench_core::pipeline::{LabQueue, RunOptions, Runner};
use faultbench_core::record::LabOrigin;
use faultbench_core::snapshot::{Aspect, AspectState, ChangeKind, DeviceState};
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
    /// `Lab::renice` calls: lab name and niceness.
    reniced: std::sync::Mutex<Vec<(String, i32)>>,
    /// Labs answer snapshots from their state (eth0 up or down); otherwise the snapshot
    /// command is unknown to them and every aspect is unreadable.
    visible_state: bool,
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
    fn renice(&self, nice: i32) -> Result<usize, EmuError> {
        self.0.reniced.lock().unwrap().push((self.1.clone(), nice));
        Ok(1)
    }
    async fn device_state(&self, device: &str, timeout: Duration) -> DeviceState {
        if !self.0.visible_state {
            return faultbench_core::snapshot::read_device(self, device, timeout).await;
        }
        let link = if self.0.broken.load(Ordering::SeqCst) {
            "down"
        } else {
            "up"
        };
        let mut st = DeviceState::default();
        st.aspects.insert(
            Aspect::Links,
            AspectState::Items([("eth0".to_string(), link.to_string())].into()),
        );
        st
    }
}

struct NetEmu {
    net: Arc<Net>,
    deploys: AtomicUsize,
    fail: bool,
}

#[async_trait]
impl Emulator for NetEmu {
    fn name(&self) -> &str {
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
    /// Answers, and meanwhile the network flips its fault on or off by itself (a lease
    /// renewal, a daemon restarted by something in the lab).
    AnswerWhileNetworkFlips(&'static str, Arc<Net>, bool),
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
        let behaviour = match &self.0 {
            Behaviour::AnswerWhileNetworkFlips(v, net, broken) => {
                net.broken.store(*broken, Ordering::SeqCst);
                Behaviour::Answer(v)
            }
            Behaviour::Answer(v) => Behaviour::Answer(v),
            Behaviour::Panic => Behaviour::Panic,
            Behaviour::Exhaust => Behaviour::Exhaust,
        };
        match behaviour {
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
            Behaviour::AnswerWhileNetworkFlips(..) => unreachable!("mapped above"),
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
    let net = Arc::new(Net {
        healthy_at_start: healthy,
        ..Default::default()
    });
    setup_on(net, agent, judge_ok, deploy_fails, false)
}

/// A network that comes up healthy; with `visible_state`, its labs answer snapshots.
fn healthy_net(visible_state: bool) -> Arc<Net> {
    Arc::new(Net {
        healthy_at_start: true,
        visible_state,
        ..Default::default()
    })
}

fn fast_phases() -> PhaseOptions {
    let fast = VerifyRetry {
        interval: Duration::from_millis(10),
        deadline: Duration::from_millis(50),
        command_timeout: Duration::from_secs(1),
    };
    PhaseOptions {
        baseline_wait: Duration::from_millis(300),
        baseline_interval: Duration::from_millis(10),
        verify: fast,
        watch: fast,
        ..Default::default()
    }
}

fn setup_on(
    net: Arc<Net>,
    agent: Behaviour,
    judge_ok: bool,
    deploy_fails: bool,
    reuse_labs: bool,
) -> Setup {
    let root = topology("ping");
    let emu = Arc::new(NetEmu {
        net,
        deploys: AtomicUsize::new(0),
        fail: deploy_fails,
    });
    let config = RunOptions {
        phases: fast_phases(),
        reuse_labs,
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
async fn scored_run_records_every_phase_on_a_fresh_lab_each_time() {
    let s = setup(Behaviour::Answer("true"), true, true, false);
    let sc = scenario(
        "t-r1-broken",
        Some("ip link set eth0 down"),
        "`ip link set eth0 up` on r1",
    );
    let first = s.runner.run(&sc).await;
    assert_eq!(first.status, RunStatus::Scored, "{:?}", first.error);
    assert_eq!(first.scores.as_ref().unwrap().outcome, 1.0);
    assert!(first.telemetry, "telemetry is on by default and recorded");
    let p = &first.phases;
    let deploy = p.deploy.as_ref().unwrap();
    assert_eq!(deploy.lab, LabOrigin::Fresh);
    assert!(deploy.started_unix_ms > 0);
    assert!(p.baseline.as_ref().unwrap().ok);
    assert!(p.injection.as_ref().unwrap().applied);
    assert!(p.post_inject_check.as_ref().unwrap().passed);
    assert_eq!(
        p.agent.as_ref().unwrap().outcome.tool_log.len(),
        1,
        "tool calls are recorded"
    );
    let presence = p.presence.as_ref().unwrap();
    assert_eq!((presence.watched.as_str(), presence.held), ("fault", true));
    assert_eq!(presence.attempts, 1, "one round when the fault holds");
    // The in-test lab does not know the snapshot command: recorded, not compared.
    let snaps = p.snapshots.as_ref().unwrap();
    assert_eq!(snaps.devices, 2);
    assert!(
        snaps.unreadable.iter().any(|u| u.contains("exit 127")),
        "{:?}",
        snaps.unreadable
    );
    assert!(first.agent_changes.is_empty());
    assert_eq!(p.cleanup.as_ref().unwrap().action, "teardown");
    assert!(
        first
            .agent_input_prompt
            .as_deref()
            .unwrap()
            .starts_with("# Topology overview")
    );

    let second = s.runner.run_pass(&sc, 2).await;
    assert_eq!(second.status, RunStatus::Scored);
    assert_eq!(second.phases.deploy.as_ref().unwrap().lab, LabOrigin::Fresh);
    assert_eq!(s.emu.deploys.load(Ordering::SeqCst), 2, "a lab per run");
    assert_eq!(s.emu.net.torn_down.load(Ordering::SeqCst), 2);
    s.runner.shutdown().await;
    assert_eq!(s.emu.net.torn_down.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn reuse_labs_keeps_a_lab_after_a_verified_revert() {
    let net = healthy_net(false);
    let s = setup_on(net, Behaviour::Answer("true"), true, false, true);
    let sc = scenario(
        "t-r1-broken",
        Some("ip link set eth0 down"),
        "`ip link set eth0 up` on r1",
    );
    let first = s.runner.run(&sc).await;
    assert_eq!(first.phases.cleanup.as_ref().unwrap().action, "reverted");
    let second = s.runner.run_pass(&sc, 2).await;
    assert_eq!(second.status, RunStatus::Scored);
    let deploy = second.phases.deploy.as_ref().unwrap();
    assert_eq!(deploy.lab, LabOrigin::Reused);
    assert_eq!(deploy.duration_ms, 0);
    assert_eq!(
        s.emu.deploys.load(Ordering::SeqCst),
        1,
        "second run reused the lab"
    );
    s.runner.shutdown().await;
    assert_eq!(s.emu.net.torn_down.load(Ordering::SeqCst), 1);

    // Without a [FIX] the harness can run, the baseline does not come back: redeploy.
    let net = healthy_net(false);
    let s = setup_on(net, Behaviour::Answer("true"), true, false, true);
    let sc = scenario(
        "t-r1-broken",
        Some("ip link set eth0 down"),
        "Ask someone to fix it.",
    );
    let first = s.runner.run(&sc).await;
    assert_eq!(first.phases.cleanup.as_ref().unwrap().action, "teardown");
    let second = s.runner.run(&sc).await;
    assert_eq!(second.phases.deploy.as_ref().unwrap().lab, LabOrigin::Fresh);
    assert_eq!(s.emu.deploys.load(Ordering::SeqCst), 2);
}

#[tokio::test]
async fn a_queue_prestarts_labs_and_tears_down_what_it_holds() {
    let s = setup(Behaviour::Answer("false"), true, true, false);
    let sc = scenario("t-false-premise-slow", None, "");
    let mut queue = LabQueue::new(s.runner.lab_preparer());
    queue.push("T");
    queue.push("T");
    queue.push("T");
    assert_eq!(queue.len(), 3);
    tokio::time::sleep(Duration::from_millis(50)).await;
    let lab = queue.pop().await.unwrap();
    assert!(lab.lab().is_some(), "{:?}", lab.failure());
    let agent = Arc::new(Scripted(Behaviour::Answer("false"))) as Arc<dyn Agent>;
    let rec = s.runner.run_prepared(&agent, "scripted", &sc, 1, lab).await;
    assert_eq!(rec.status, RunStatus::Scored, "{:?}", rec.error);
    let deploy = rec.phases.deploy.as_ref().unwrap();
    assert!(deploy.prestarted);
    assert_eq!(deploy.lab, LabOrigin::Fresh);
    // Prepared in the background (niced), it is back at normal priority for its run.
    assert!(
        s.emu
            .net
            .reniced
            .lock()
            .unwrap()
            .contains(&(deploy.lab_name.clone(), 0)),
        "{:?}",
        s.emu.net.reniced.lock().unwrap()
    );
    // Two labs are still queued (deployed in the background): shutting the queue down tears
    // them down, as a Ctrl-C or an error must.
    queue.shutdown().await;
    assert_eq!(s.emu.deploys.load(Ordering::SeqCst), 3);
    assert_eq!(s.emu.net.torn_down.load(Ordering::SeqCst), 3);

    // A prepared lab dropped unused is torn down too.
    let lab = s.runner.prepare_lab("T").await;
    drop(lab);
    for _ in 0..100 {
        if s.emu.net.torn_down.load(Ordering::SeqCst) == 4 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(s.emu.net.torn_down.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_lab_a_run_waits_for_gets_normal_priority_before_its_baseline_holds() {
    // The baseline never holds here (pings fail for the whole 300 ms wait), so the lab is
    // still being checked when the run asks for it, and it never becomes ready: a renice
    // can only come from the run waiting for it.
    let s = setup(Behaviour::Answer("false"), true, false, false);
    let mut queue = LabQueue::new(s.runner.lab_preparer());
    queue.push("T");
    let lab = queue.pop().await.unwrap();
    assert!(lab.lab().is_none(), "the baseline was not to hold");
    // Once or twice (the run may ask just as the deploy returns: both sides then renice).
    let reniced = s.emu.net.reniced.lock().unwrap().clone();
    assert!(!reniced.is_empty(), "no renice");
    assert!(
        reniced.iter().all(|r| *r == ("lab0".to_string(), 0)),
        "{reniced:?}"
    );
    queue.shutdown().await;
}

#[tokio::test]
async fn presence_watch_marks_vanished_faults_and_broken_baselines() {
    // The fault heals itself while the agent works, and nothing the snapshots see changed.
    let net = healthy_net(false);
    let agent = Behaviour::AnswerWhileNetworkFlips("true", net.clone(), false);
    let s = setup_on(net, agent, true, false, false);
    let sc = scenario("t-r1-broken", Some("ip link set eth0 down"), "");
    let r = s.runner.run(&sc).await;
    assert_eq!(r.status, RunStatus::FaultVanished, "{:?}", r.error);
    assert!(r.scores.is_none(), "never scored");
    assert!(r.phases.judge.is_none());
    let w = r.phases.presence.as_ref().unwrap();
    assert!(
        !w.held && w.attempts >= 2,
        "retried before concluding: {w:?}"
    );
    assert!(r.error.unwrap().contains("changed nothing"));
    assert!(RunStatus::FaultVanished.needs_rerun());

    // A network with nothing injected breaks while the agent works.
    let net = healthy_net(false);
    let agent = Behaviour::AnswerWhileNetworkFlips("false", net.clone(), true);
    let s = setup_on(net, agent, true, false, false);
    let r = s
        .runner
        .run(&scenario("t-false-premise-slow", None, ""))
        .await;
    assert_eq!(r.status, RunStatus::BaselineBroke, "{:?}", r.error);
    assert_eq!(r.phases.presence.as_ref().unwrap().watched, "baseline");
    assert!(RunStatus::BaselineBroke.needs_rerun());

    // The same healing, seen by the snapshots: the run keeps its result and the record
    // shows the change.
    let net = healthy_net(true);
    let agent = Behaviour::AnswerWhileNetworkFlips("true", net.clone(), false);
    let s = setup_on(net, agent, true, false, false);
    let r = s.runner.run(&sc).await;
    assert_eq!(r.status, RunStatus::Scored, "{:?}", r.error);
    assert!(!r.phases.presence.as_ref().unwrap().held);
    assert_eq!(r.agent_changes.len(), 2, "eth0 came up on both devices");
    let c = &r.agent_changes[0];
    assert_eq!((c.aspect, c.change), (Aspect::Links, ChangeKind::Changed));
    assert_eq!(c.summary, "pc1 links: eth0 changed: down → up");
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

/// A judge that never answers (a hung LLM endpoint).
struct SilentJudge;

#[async_trait]
impl Judge for SilentJudge {
    fn name(&self) -> &str {
        "silent"
    }
    async fn judge(&self, _i: &JudgeInput<'_>) -> Result<Scores, JudgeError> {
        std::future::pending().await
    }
}

/// Issue 19, finding 5: the judge ran inline without a timeout, so a hung judge hung the run.
#[tokio::test]
async fn a_judge_that_never_answers_is_judge_failed_with_the_diagnosis_kept() {
    let s = setup(Behaviour::Answer("true"), true, true, false);
    let config = RunOptions {
        judge_timeout: Duration::from_millis(300),
        ..s.runner.config().clone()
    };
    let runner = Runner::new(
        s.emu.clone(),
        Arc::new(Scripted(Behaviour::Answer("true"))),
        Arc::new(SilentJudge),
    )
    .with_topologies(TopologyResolver::new([s._root.path()]))
    .with_config(config);
    let sc = scenario(
        "t-r1-broken",
        Some("ip link set eth0 down"),
        "`ip link set eth0 up` on r1",
    );
    let rec = tokio::time::timeout(Duration::from_secs(30), runner.run(&sc))
        .await
        .expect("the run finishes although the judge never answers");
    assert_eq!(rec.status, RunStatus::JudgeFailed);
    assert!(rec.diagnosis.is_some(), "the diagnosis is kept");
    let err = rec.error.unwrap();
    assert!(err.contains("did not finish within"), "{err}");
    assert_eq!(
        rec.phases.judge.unwrap().error.as_deref(),
        Some(err.as_str())
    );
}
