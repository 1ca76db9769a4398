//! The repair task on real labs (Linux namespaces + FRR; root, as in CI), with scripted agents
//! that change the network through the agents' own tools:
//!
//! - applying the scenario's `[FIX]` → `repaired` (and, with the persistence check, the fix
//!   survives an FRR restart); the repair clock saw the fault go while the agent worked;
//! - the `[FIX]` plus an unrelated interface shut → `repaired_with_collateral`, naming it;
//! - restarting the wrong daemon → `not_repaired`;
//! - a route added on a healthy network (false premise) → `unneeded_change`;
//! - only reading a healthy network → `untouched`;
//! - killing a device's init (from the host, as an agent with more power than the tools might)
//!   → `not_repaired` with the checks that could not run; the run ends and the lab goes.
//!
//! Each run gets a fresh `simple_bgp` lab (pc1 – router1 – router2 – pc2).

use async_trait::async_trait;
use faultbench::core::agent::{Agent, AgentInput, AgentOutcome};
use faultbench::core::pipeline::{RunOptions, Runner, revert_commands};
use faultbench::core::record::RunRecord;
use faultbench::core::repair::{RepairOptions, RepairVerdict};
use faultbench::core::snapshot::Aspect;
use faultbench::core::task::{REPAIR_INSTRUCTIONS, Task};
use faultbench::core::toolbox::Toolbox;
use faultbench::core::{Emulator, Lab, LabRequest, RunStatus, Scenario, ScenarioFile};
use faultbench::emu::netns::{NetnsEmulator, NetnsLab};
use faultbench::emu::tools::{NikaToolsFactory, ToolOptions};
use faultbench::judge::RubricJudge;
use serde_json::json;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn scenario(rel: &str) -> ScenarioFile {
    ScenarioFile::load(repo().join("dataset/nika_bgp_Q").join(rel)).unwrap()
}

const BGPD_KILLED: &str = "base/simple-bgp-router2-bgpd-killed.txt";
const FALSE_PREMISE: &str = "cex/simple-bgp-false-premise-leftover-static-route.txt";

/// A scripted agent: runs its shell commands (device, command) through `exec_shell` after a
/// short pause, and remembers the prompt it was given.
struct Scripted {
    commands: Vec<(String, String)>,
    prompt: Mutex<String>,
}

impl Scripted {
    fn new(commands: Vec<(String, String)>) -> Arc<Scripted> {
        Arc::new(Scripted {
            commands,
            prompt: Mutex::new(String::new()),
        })
    }
}

#[async_trait]
impl Agent for Scripted {
    fn name(&self) -> &str {
        "scripted"
    }
    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        *self.prompt.lock().unwrap() = input.prompt.clone();
        // Reads first, as any agent would (and so that the repair clock runs a round or more
        // while the fault is still there).
        tools
            .call("frr_show_ip_route", json!({"router_name": "router1"}))
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let mut did = Vec::new();
        for (device, command) in &self.commands {
            let out = tools
                .call(
                    "exec_shell",
                    json!({"host_name": device, "command": command}),
                )
                .await;
            assert!(out.is_ok(), "{device}: {command}: {out:?}");
            did.push(format!("`{command}` on {device}"));
        }
        // Let the network settle as a careful agent would before answering.
        tokio::time::sleep(Duration::from_secs(3)).await;
        AgentOutcome::answer(format!(
            "=== DIAGNOSIS ===\nis_anomaly: {}\nfaulty_devices: router2\ndiagnosis_text:\nI ran {}.\n=== END ===",
            !self.commands.is_empty(),
            if did.is_empty() {
                "nothing".to_string()
            } else {
                did.join(", ")
            }
        ))
    }
}

async fn run(agent: Arc<dyn Agent>, scenario: &ScenarioFile, persist: bool) -> RunRecord {
    run_on(Arc::new(NetnsEmulator::new()), agent, scenario, persist).await
}

async fn run_on(
    emulator: Arc<dyn Emulator>,
    agent: Arc<dyn Agent>,
    scenario: &ScenarioFile,
    persist: bool,
) -> RunRecord {
    faultbench::emu::netns::preflight().unwrap_or_else(|e| {
        panic!("live lab tests need root, FRR and the lab packages (scripts/install-deps.sh): {e}")
    });
    let runner = Runner::new(emulator, agent, Arc::new(RubricJudge::new()))
        .with_tools(Arc::new(
            NikaToolsFactory::new().with_config(ToolOptions::fast()),
        ))
        .with_topologies(faultbench::core::lab::TopologyResolver::new([
            repo().join("topologies")
        ]))
        .with_config(RunOptions {
            task: Task::Repair,
            repair: RepairOptions {
                persist,
                // Under a loaded CI machine BGP may need more than the default to re-form.
                baseline_wait: Duration::from_secs(30),
                persist_wait: Duration::from_secs(40),
                ..Default::default()
            },
            ..Default::default()
        });
    let rec = runner.run(scenario).await;
    runner.shutdown().await;
    rec
}

/// The `[FIX]` of a scenario as (device, command) pairs, as `scenario check --revert` runs it.
fn fix_of(s: &ScenarioFile) -> Vec<(String, String)> {
    let devices: Vec<String> = ["pc1", "router1", "router2", "pc2"]
        .map(String::from)
        .to_vec();
    let injected: Vec<String> = s
        .injection()
        .devices()
        .into_iter()
        .map(String::from)
        .collect();
    let cmds = revert_commands(s.fix().unwrap(), &devices, &injected);
    assert!(!cmds.is_empty());
    cmds.into_iter().map(|c| (c.device, c.command)).collect()
}

fn repair(rec: &RunRecord) -> &faultbench::core::repair::RepairReport {
    assert_eq!(rec.status, RunStatus::Scored, "{:?}", rec.error);
    assert_eq!(rec.task, Task::Repair);
    rec.repair
        .as_ref()
        .expect("a repair run has a repair report")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn applying_the_fix_is_repaired_and_persists() {
    let s = scenario(BGPD_KILLED);
    let agent = Scripted::new(fix_of(&s));
    let rec = run(agent.clone(), &s, true).await;
    let r = repair(&rec);
    assert_eq!(r.verdict, RepairVerdict::Repaired, "{}", r.reason);
    assert!(r.fault.as_ref().unwrap().gone);
    assert!(r.baseline.healthy && !r.baseline.probes.is_empty());
    assert!(r.collateral.is_empty(), "{:?}", r.collateral);
    // The agent's restart shows in scope: bgpd is back on router2.
    assert!(
        rec.agent_changes
            .iter()
            .any(|c| c.device == "router2" && c.aspect == Aspect::Services && c.item == "bgpd"),
        "{:?}",
        rec.agent_changes
    );
    // The repair clock saw the fault go while the agent worked (after its 2.5 s of reading,
    // before it answered).
    let ttr = r.time_to_repair_ms.expect("the clock saw the repair");
    let agent_ms = rec.phases.agent.as_ref().unwrap().duration_ms;
    assert!(ttr >= 2000 && ttr <= agent_ms, "{ttr} ms of {agent_ms} ms");
    assert!(r.clock_rounds >= 1);
    assert!(
        r.pre_injection_snapshot_at_prepare,
        "taken when the lab was prepared"
    );
    let p = r.persistence.as_ref().expect("persistence was asked for");
    assert_eq!(p.restarted, vec!["router2".to_string()]);
    assert!(p.held, "{:?}", p.failures);
    // The agent was asked to repair, in the repair task's words.
    assert!(agent.prompt.lock().unwrap().ends_with(REPAIR_INSTRUCTIONS));
    // The record says it all in result.json.
    let json = serde_json::to_value(&rec).unwrap();
    assert_eq!(json["task"], "repair");
    assert_eq!(json["repair"]["verdict"], "repaired");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fix_and_an_unrelated_interface_shut_is_collateral() {
    let s = scenario(BGPD_KILLED);
    let mut commands = fix_of(&s);
    // pc1's loopback: outside the fault, and no baseline probe needs it.
    commands.push(("pc1".into(), "ip link set lo down".into()));
    let rec = run(Scripted::new(commands), &s, false).await;
    let r = repair(&rec);
    assert_eq!(
        r.verdict,
        RepairVerdict::RepairedWithCollateral,
        "{}",
        r.reason
    );
    assert!(
        r.collateral
            .iter()
            .any(|c| c.device == "pc1" && c.aspect == Aspect::Links && c.item == "lo"),
        "{:?}",
        r.collateral
    );
    assert!(
        r.collateral.iter().all(|c| c.device == "pc1"),
        "{:?}",
        r.collateral
    );
    assert!(r.reason.contains("pc1 links: lo"), "{}", r.reason);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarting_the_wrong_daemon_is_not_repaired() {
    let s = scenario(BGPD_KILLED);
    let rec = run(
        Scripted::new(vec![(
            "router2".into(),
            "service frr restart staticd".into(),
        )]),
        &s,
        false,
    )
    .await;
    let r = repair(&rec);
    assert_eq!(r.verdict, RepairVerdict::NotRepaired, "{}", r.reason);
    let f = r.fault.as_ref().unwrap();
    assert!(!f.gone && f.checks.iter().all(|c| c.passed));
    assert!(
        !r.baseline.healthy,
        "bgpd is still down: the baseline cannot hold"
    );
    assert_eq!(r.time_to_repair_ms, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_route_added_on_a_healthy_network_is_an_unneeded_change() {
    let s = scenario(FALSE_PREMISE);
    assert!(s.injection().is_negative_control());
    let rec = run(
        Scripted::new(vec![(
            "router1".into(),
            "ip route add 198.51.100.0/24 via 193.10.11.2".into(),
        )]),
        &s,
        false,
    )
    .await;
    let r = repair(&rec);
    assert_eq!(r.verdict, RepairVerdict::UnneededChange, "{}", r.reason);
    assert!(r.fault.is_none());
    assert!(
        r.collateral.iter().any(|c| c.device == "router1"
            && c.aspect == Aspect::Routes
            && c.item.starts_with("198.51.100.0/24")),
        "{:?}",
        r.collateral
    );
    assert!(
        r.baseline.healthy,
        "the extra route breaks nothing the baseline checks"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_reading_a_healthy_network_leaves_it_untouched() {
    let s = scenario(FALSE_PREMISE);
    let rec = run(Scripted::new(Vec::new()), &s, false).await;
    let r = repair(&rec);
    assert_eq!(r.verdict, RepairVerdict::Untouched, "{}", r.reason);
    assert!(r.collateral.is_empty() && rec.agent_changes.is_empty());
    assert!(r.baseline.healthy);
}

/// Deploys netns labs and keeps a handle on the last one, so that a test agent can do what no
/// tool allows (kill a device's init from the host).
#[derive(Default)]
struct Exposing {
    inner: NetnsEmulator,
    last: Mutex<Option<Arc<NetnsLab>>>,
}

#[async_trait]
impl Emulator for Exposing {
    fn name(&self) -> &str {
        "netns"
    }
    async fn deploy(
        &self,
        request: &LabRequest,
    ) -> Result<Arc<dyn Lab>, faultbench::core::EmuError> {
        let lab = Arc::new(self.inner.deploy_lab(request).await?);
        *self.last.lock().unwrap() = Some(lab.clone());
        Ok(lab)
    }
}

/// Kills router2's PID 1 from the host, then answers.
struct InitKiller(Arc<Exposing>);

#[async_trait]
impl Agent for InitKiller {
    fn name(&self) -> &str {
        "init-killer"
    }
    async fn run(&self, _input: &AgentInput, _tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let lab = self.0.last.lock().unwrap().clone().expect("a deployed lab");
        let pid = lab.device_pid("router2").expect("router2 runs");
        let status = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        tokio::time::sleep(Duration::from_millis(500)).await;
        AgentOutcome::answer(
            "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: router2\ndiagnosis_text:\nI restarted router2 the hard way.\n=== END ===",
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_a_device_init_is_not_repaired_and_the_lab_goes() {
    let s = scenario(BGPD_KILLED);
    let emulator = Arc::new(Exposing::default());
    let rec = run_on(
        emulator.clone(),
        Arc::new(InitKiller(emulator.clone())),
        &s,
        false,
    )
    .await;
    let r = repair(&rec);
    assert_eq!(r.verdict, RepairVerdict::NotRepaired, "{}", r.reason);
    let f = r.fault.as_ref().unwrap();
    assert!(
        !f.unverifiable.is_empty() && f.unverifiable.iter().all(|u| u.starts_with("router2")),
        "{:?}",
        f.unverifiable
    );
    assert!(r.reason.contains("could not run"), "{}", r.reason);
    assert!(!r.baseline.healthy);
    assert!(
        r.collateral
            .iter()
            .any(|c| c.device == "router2" && c.item == "device")
            || r.unreadable.iter().any(|u| u.contains("router2")),
        "router2's state is gone: {:?} {:?}",
        r.collateral,
        r.unreadable
    );
    let cleanup = rec.phases.cleanup.as_ref().expect("the lab was cleaned up");
    assert_eq!(cleanup.action, "teardown");
    // Nothing of the lab is left on the host: no instance, no device's PID 1 — not even as a
    // zombie, and that includes router2's, which the agent killed long before teardown.
    let lab = emulator.last.lock().unwrap().take().unwrap();
    let name = lab.name().to_string();
    let pids: Vec<i32> = ["pc1", "router1", "router2", "pc2"]
        .iter()
        .filter_map(|d| lab.device_pid(d))
        .collect();
    assert_eq!(pids.len(), 4);
    drop(lab);
    assert!(
        !faultbench::emu::netns::list()
            .iter()
            .any(|i| i.name == name),
        "instance {name} left behind"
    );
    for pid in pids {
        assert!(
            !std::path::Path::new(&format!("/proc/{pid}")).exists(),
            "device init {pid} of {name} still runs"
        );
    }
}
