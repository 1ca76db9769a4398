//! Run isolation and state snapshots on real labs (Linux namespaces + FRR; root, as in CI).
//!
//! - **Isolation.** In one job, a fault run (`simple-bgp-router2-bgpd-killed`, whose scripted
//!   agent floods pings, turns on FRR file logging and resets BGP) is followed by a
//!   false-premise run of the same topology whose scripted agent reads telemetry, FRR's
//!   logging state, log files, interface counters and route ages. With fresh labs (and the
//!   next lab prestarted while the first run works) it sees nothing from before its own
//!   deploy; with `--reuse-labs` the same checks find the previous run's history — the test
//!   can fail.
//! - **What the agent changed.** An agent that adds one route and stops one daemon shows
//!   exactly those two changes in `agent_changes`.
//! - **Quiet networks diff empty.** Two snapshots of a converged lab, with telemetry
//!   sampling and baseline probes in between, are equal on four topologies.

use async_trait::async_trait;
use faultbench::core::agent::{Agent, AgentInput, AgentOutcome};
use faultbench::core::phases::PhaseOptions;
use faultbench::core::pipeline::{LabQueue, RunOptions, Runner, ToolboxFactory};
use faultbench::core::record::{LabOrigin, RunRecord};
use faultbench::core::snapshot::{Aspect, ChangeKind, Snapshot, SnapshotOptions};
use faultbench::core::toolbox::Toolbox;
use faultbench::core::{Emulator, LabRequest, RunStatus, Scenario, ScenarioFile};
use faultbench::emu::netns::NetnsEmulator;
use faultbench::emu::tools::telemetry::rfc3339;
use faultbench::emu::tools::{NikaToolsFactory, ToolOptions};
use faultbench::judge::RubricJudge;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn emulator() -> Arc<NetnsEmulator> {
    faultbench::emu::netns::preflight().unwrap_or_else(|e| {
        panic!("live lab tests need root, FRR and the lab packages (scripts/install-deps.sh): {e}")
    });
    Arc::new(NetnsEmulator::new())
}

fn scenario(rel: &str) -> ScenarioFile {
    ScenarioFile::load(repo().join("dataset").join(rel)).unwrap()
}

fn runner(reuse_labs: bool) -> Runner {
    let tools = NikaToolsFactory::new()
        .with_config(ToolOptions::fast())
        .with_telemetry_interval(Some(Duration::from_secs(1)));
    Runner::new(
        emulator(),
        Arc::new(Observer::default()),
        Arc::new(RubricJudge::new()),
    )
    .with_tools(Arc::new(tools))
    .with_topologies(faultbench::core::lab::TopologyResolver::new([
        repo().join("topologies")
    ]))
    .with_config(RunOptions {
        reuse_labs,
        // On a loaded machine BGP may take more than the default 8 s to re-form after the
        // revert; the reuse case must really reuse.
        phases: PhaseOptions {
            revert_wait: Duration::from_secs(30),
            ..Default::default()
        },
        ..Default::default()
    })
}

async fn call(tools: &dyn Toolbox, name: &str, args: Value) -> String {
    match tools.call(name, args.clone()).await {
        Ok(o) => o.text,
        Err(e) => panic!("{name}({args}): {e}"),
    }
}

fn answer(anomaly: bool, devices: &str) -> AgentOutcome {
    AgentOutcome::answer(format!(
        "=== DIAGNOSIS ===\nis_anomaly: {anomaly}\nfaulty_devices: {devices}\ndiagnosis_text:\nscripted\n=== END ==="
    ))
}

/// The fault run's agent: leaves traces an isolated next run must not see.
struct Polluter;

#[async_trait]
impl Agent for Polluter {
    fn name(&self) -> &str {
        "polluter"
    }
    async fn run(&self, _input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        // Telemetry samples the dead bgpd meanwhile (every second in this test).
        tokio::time::sleep(Duration::from_millis(2500)).await;
        let shell = |device: &str, command: &str| json!({"host_name": device, "command": command});
        call(
            tools.as_ref(),
            "exec_shell",
            shell("router1", "ping -f -c 3000 -q 193.10.11.2"),
        )
        .await;
        call(
            tools.as_ref(),
            "exec_shell",
            shell(
                "router1",
                "vtysh -c 'configure terminal' -c 'log file /var/log/frr/frr.log debugging' && vtysh -c 'clear ip bgp *'",
            ),
        )
        .await;
        answer(true, "router2")
    }
}

/// What the false-premise run's agent saw.
#[derive(Debug, Default, Clone)]
struct Seen {
    telemetry: Vec<Value>,
    show_logging: String,
    files: String,
    tx_packets: String,
    routes: String,
}

/// The false-premise run's agent: reads telemetry, logging, files, counters and routes.
#[derive(Default)]
struct Observer {
    seen: Mutex<Option<Seen>>,
}

#[async_trait]
impl Agent for Observer {
    fn name(&self) -> &str {
        "observer"
    }
    async fn run(&self, _input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let t = tools.as_ref();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let mut seen = Seen::default();
        for m in ["processes", "interface", "routes", "device"] {
            let mut offset = 0;
            loop {
                let text = call(
                    t,
                    "influx_query_measurement",
                    json!({"measurement": m, "limit": 1000, "offset": offset}),
                )
                .await;
                let v: Value = serde_json::from_str(&text).unwrap_or_else(|_| json!({}));
                seen.telemetry
                    .extend(v["rows"].as_array().cloned().unwrap_or_default());
                match v["next_offset"].as_u64() {
                    Some(n) => offset = n,
                    None => break,
                }
            }
        }
        let frr = |cmd: &str| json!({"router_name": "router1", "command": cmd});
        seen.show_logging = call(t, "frr_exec", frr("show logging")).await;
        seen.routes = call(t, "frr_exec", frr("show ip route json")).await;
        let shell = |command: &str| json!({"host_name": "router1", "command": command});
        seen.files = call(
            t,
            "exec_shell",
            shell("find /var/log /var/tmp/frr -mindepth 1 -exec stat -c '%Y %n' {} +"),
        )
        .await;
        seen.tx_packets = call(
            t,
            "exec_shell",
            shell("cat /sys/class/net/eth0/statistics/tx_packets"),
        )
        .await;
        *self.seen.lock().unwrap() = Some(seen);
        answer(false, "none")
    }
}

/// Everything the observer saw that is older than its own lab (`deploy_ms`) or comes from
/// the fault run; `uptime_cap` is how old anything of its lab can be.
fn leaks(seen: &Seen, deploy_ms: u64, uptime_cap: Duration) -> Vec<String> {
    let mut out = Vec::new();
    let deployed = rfc3339(deploy_ms);
    assert!(!seen.telemetry.is_empty(), "the observer read telemetry");
    for row in &seen.telemetry {
        let time = row["time"].as_str().unwrap_or("");
        if time < deployed.as_str() {
            out.push(format!(
                "telemetry row from {time}, before the deploy at {deployed}"
            ));
            break;
        }
    }
    if seen
        .telemetry
        .iter()
        .any(|r| r["process"] == "bgpd" && r["running"] == false)
    {
        out.push("telemetry shows a bgpd that is not running".into());
    }
    if !seen.show_logging.contains("File logging: disabled") {
        out.push(format!("FRR logging was changed: {}", seen.show_logging));
    }
    let deploy_s = deploy_ms / 1000;
    let mut files = 0;
    for line in seen.files.lines() {
        let Some((mtime, path)) = line.split_once(' ') else {
            continue;
        };
        let Ok(mtime) = mtime.parse::<u64>() else {
            continue;
        };
        files += 1;
        if mtime < deploy_s {
            out.push(format!("{path} was written before the deploy"));
        }
    }
    assert!(files > 0, "the observer listed files: {}", seen.files);
    let first = seen.tx_packets.lines().next().unwrap_or("");
    let tx: u64 = first.trim().parse().unwrap_or_else(|_| {
        panic!("tx_packets: {}", seen.tx_packets);
    });
    if tx >= 3000 {
        out.push(format!(
            "router1 eth0 has sent {tx} packets (the fault run's flood)"
        ));
    }
    let routes: Value = serde_json::from_str(&seen.routes)
        .unwrap_or_else(|e| panic!("show ip route json: {e}: {}", seen.routes));
    let mut checked = 0;
    for (prefix, entries) in routes.as_object().unwrap() {
        for e in entries.as_array().unwrap() {
            let up = e["uptime"].as_str().unwrap_or("");
            let secs: Vec<u64> = up.split(':').filter_map(|p| p.parse().ok()).collect();
            if secs.len() != 3 {
                continue;
            }
            checked += 1;
            let age = secs[0] * 3600 + secs[1] * 60 + secs[2];
            if age > uptime_cap.as_secs() + 2 {
                out.push(format!("route {prefix} is {up} old, older than the lab"));
            }
        }
    }
    assert!(checked > 0, "route ages were read: {}", seen.routes);
    out
}

struct Pair {
    fault: RunRecord,
    observed: RunRecord,
    leaks: Vec<String>,
}

/// The fault run, then the false-premise run, in one job: fresh labs with the second one
/// prestarted (as `faultbench bench` does), or `--reuse-labs`.
async fn fault_then_false_premise(reuse_labs: bool) -> Pair {
    let runner = runner(reuse_labs);
    let fault = scenario("nika_bgp_Q/base/simple-bgp-router2-bgpd-killed.txt");
    let premise = scenario("nika_bgp_Q/cex/simple-bgp-false-premise-router-id-clash.txt");
    let polluter: Arc<dyn Agent> = Arc::new(Polluter);
    let observer = Arc::new(Observer::default());
    let observer_dyn: Arc<dyn Agent> = observer.clone();
    let (first, second) = if reuse_labs {
        let first = runner.run_with(&polluter, "polluter", &fault, 1).await;
        let second = runner
            .run_with(&observer_dyn, "observer", &premise, 1)
            .await;
        (first, second)
    } else {
        let mut labs = LabQueue::new(runner.lab_preparer());
        labs.push(fault.topology());
        let lab = labs.pop().await.unwrap();
        labs.push(premise.topology()); // prestart: prepared while the fault run works
        let first = runner
            .run_prepared(&polluter, "polluter", &fault, 1, lab)
            .await;
        let lab = labs.pop().await.unwrap();
        let second = runner
            .run_prepared(&observer_dyn, "observer", &premise, 1, lab)
            .await;
        labs.shutdown().await;
        (first, second)
    };
    runner.shutdown().await;
    let deploy = second.phases.deploy.clone().unwrap();
    let seen = observer
        .seen
        .lock()
        .unwrap()
        .clone()
        .unwrap_or_else(|| panic!("the observer did not run: {:?}", second.error));
    // Nothing of the observer's lab can be older than the time since its deploy started.
    let age = Duration::from_millis(faultbench::core::phases::unix_ms() - deploy.started_unix_ms);
    let leaks = leaks(&seen, deploy.started_unix_ms, age);
    Pair {
        fault: first,
        observed: second,
        leaks,
    }
}

#[test]
fn a_false_premise_run_after_a_fault_run_sees_nothing_of_it() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let fresh = rt.block_on(fault_then_false_premise(false));
    assert_eq!(
        fresh.fault.status,
        RunStatus::Scored,
        "{:?}",
        fresh.fault.error
    );
    assert_eq!(
        fresh.observed.status,
        RunStatus::Scored,
        "{:?}",
        fresh.observed.error
    );
    let d1 = fresh.fault.phases.deploy.as_ref().unwrap();
    let d2 = fresh.observed.phases.deploy.as_ref().unwrap();
    assert_eq!((d1.lab, d2.lab), (LabOrigin::Fresh, LabOrigin::Fresh));
    assert_ne!(d1.lab_name, d2.lab_name);
    assert!(
        d2.prestarted,
        "the second lab was prepared while the fault run worked: {d2:?}"
    );
    // The fault run's agent changed router1's FRR configuration: recorded.
    assert!(
        fresh
            .fault
            .agent_changes
            .iter()
            .any(|c| c.device == "router1" && c.aspect == Aspect::FrrConfig),
        "{:?}",
        fresh.fault.agent_changes
    );
    assert!(
        fresh.leaks.is_empty(),
        "a fresh lab leaked the previous run's history: {:#?}",
        fresh.leaks
    );

    // The same sequence on a reused lab: the checks above do find the history.
    let reused = rt.block_on(fault_then_false_premise(true));
    assert_eq!(
        reused.observed.phases.deploy.as_ref().unwrap().lab,
        LabOrigin::Reused,
        "{:?}",
        reused.fault.phases.cleanup
    );
    let l = reused.leaks.join("\n");
    for needle in [
        "telemetry shows a bgpd that is not running",
        "FRR logging was changed",
        "(the fault run's flood)",
        "older than the lab",
        "before the deploy",
    ] {
        assert!(l.contains(needle), "`{needle}` not found in:\n{l}");
    }
}

/// Adds one route and stops one daemon.
struct Changer;

#[async_trait]
impl Agent for Changer {
    fn name(&self) -> &str {
        "changer"
    }
    async fn run(&self, _input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        call(
            tools.as_ref(),
            "exec_shell",
            json!({"host_name": "host_1_1_1_1", "command": "ip route add 198.51.100.0/24 dev eth0"}),
        )
        .await;
        call(
            tools.as_ref(),
            "systemctl_ops",
            json!({"host_name": "web_server_0", "service_name": "apache2", "operation": "stop"}),
        )
        .await;
        answer(false, "none")
    }
}

#[test]
fn agent_changes_list_exactly_what_the_agent_changed() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let rec = rt.block_on(async {
        let runner = runner(false);
        let s = scenario(
            "nika_ospf_Q/cex/ospf-enterprise-false-premise-building2-cannot-reach-building1.txt",
        );
        let agent: Arc<dyn Agent> = Arc::new(Changer);
        runner.run_with(&agent, "changer", &s, 1).await
    });
    assert!(rec.phases.agent.is_some(), "{:?}", rec.error);
    let got: Vec<(&str, Aspect, ChangeKind, &str)> = rec
        .agent_changes
        .iter()
        .map(|c| (c.device.as_str(), c.aspect, c.change, c.item.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "host_1_1_1_1",
                Aspect::Routes,
                ChangeKind::Added,
                "198.51.100.0/24"
            ),
            (
                "web_server_0",
                Aspect::Services,
                ChangeKind::Removed,
                "apache2"
            ),
        ],
        "{:#?}",
        rec.agent_changes
    );
    assert_eq!(
        rec.agent_changes[0].summary,
        "host_1_1_1_1 routes: added 198.51.100.0/24 (dev eth0 scope link)"
    );
    let snaps = rec.phases.snapshots.as_ref().unwrap();
    assert!(snaps.unreadable.is_empty(), "{:?}", snaps.unreadable);
    // The agent broke the healthy network itself: its result stands, the watch says so.
    let w = rec.phases.presence.as_ref().unwrap();
    assert_eq!(w.watched, "baseline");
    assert!(!w.held);
    assert_eq!(rec.status, RunStatus::Scored, "{:?}", rec.error);
}

#[test]
fn snapshots_of_a_quiet_network_are_equal() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let emu = emulator();
        for topology in ["simple_bgp", "ospf_enterprise_static", "Kath2", "Kath4"] {
            let t = faultbench::core::lab::TopologyResolver::new([repo().join("topologies")])
                .resolve(topology)
                .unwrap();
            let lab = emu.deploy(&LabRequest::new(&t.dir)).await.unwrap();
            let baseline = t.baseline().unwrap();
            let healthy = faultbench::core::phases::wait_for_healthy(
                lab.as_ref(),
                &baseline,
                &Default::default(),
            )
            .await;
            assert!(healthy.passed(), "{topology}: {:?}", healthy.failures());
            // Telemetry samples the lab meanwhile, as in a run.
            let _tools = NikaToolsFactory::new()
                .with_telemetry_interval(Some(Duration::from_millis(500)))
                .toolbox(lab.clone());
            let opts = SnapshotOptions::default();
            let before = Snapshot::take(lab.as_ref(), &opts).await;
            let probes = faultbench::core::phases::wait_for_healthy(
                lab.as_ref(),
                &baseline,
                &Default::default(),
            )
            .await;
            assert!(probes.passed());
            tokio::time::sleep(Duration::from_secs(5)).await;
            let after = Snapshot::take(lab.as_ref(), &opts).await;
            eprintln!(
                "{topology}: {} devices, snapshots {:.2} s and {:.2} s",
                before.devices.len(),
                before.elapsed.as_secs_f64(),
                after.elapsed.as_secs_f64()
            );
            assert!(
                before.failures().is_empty(),
                "{topology}: {:?}",
                before.failures()
            );
            // netns reads FRR's configuration from the daemons' vty sockets: the same items
            // as `vtysh -c 'show running-config'` (the generic reading) on every device.
            for (device, state) in &before.devices {
                let via_vtysh =
                    faultbench::core::snapshot::read_device(lab.as_ref(), device, opts.timeout)
                        .await;
                assert_eq!(
                    state.aspects.get(&Aspect::FrrConfig),
                    via_vtysh.aspects.get(&Aspect::FrrConfig),
                    "{topology} {device}"
                );
            }
            let changes = before.diff(&after);
            lab.teardown().await.unwrap();
            assert!(
                changes.is_empty(),
                "{topology}: a quiet network changed: {:#?}",
                changes
            );
        }
    });
}
