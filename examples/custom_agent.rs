//! Bring your own agent: implement `Agent`, run it through the pipeline on a mock network, get
//! its scores. No root, no daemons: the network is declared in `examples/mock/Duo/mock.toml`.
//!
//! `cargo run --example custom_agent` prints the run's status, the diagnosis and the scores.

use faultbench::core::agent::{Agent, AgentInput, AgentOutcome};
use faultbench::core::lab::TopologyResolver;
use faultbench::core::pipeline::Runner;
use faultbench::core::{Diagnosis, RunStatus, ScenarioFile, Toolbox};
use faultbench::emu::mock::MockEmulator;
use faultbench::emu::tools::NikaToolsFactory;
use faultbench::judge::RubricJudge;
use serde_json::json;
use std::sync::Arc;

/// A user's agent: ping pc1 → web1; if that fails, ask each router whether its OSPF runs.
struct OspfHunch;

#[async_trait::async_trait]
impl Agent for OspfHunch {
    fn name(&self) -> &str {
        "ospf-hunch"
    }

    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let mut d = Diagnosis::default();
        let ping = json!({"host_a": "pc1", "host_b": "web1", "count": 2});
        match tools.call("ping_pair", ping).await {
            Ok(out) => d.is_anomaly = Some(!out.text.contains(" 0% packet loss")),
            Err(e) => return AgentOutcome::failed(e.to_string()),
        }
        // Routers: the summary's devices with more than one interface (`r1: eth0=…, eth1=…`).
        let devices = input
            .topology_summary
            .lines()
            .filter_map(|l| l.split_once(": eth"));
        let routers = devices
            .filter(|(_, ifs)| ifs.contains(','))
            .map(|(d, _)| d.trim());
        for r in routers.filter(|_| d.is_anomaly == Some(true)) {
            let args = json!({"router_name": r, "command": "show ip ospf neighbor"});
            if let Ok(out) = tools.call("frr_exec", args).await
                && out.text.contains("is not running")
            {
                d.faulty_devices.push(r.to_string());
                d.text = format!(
                    "ospfd (the OSPF routing daemon) stopped on {r}, so {r} no longer \
                    advertises its LAN; web1 is healthy. Fix: systemctl start frr on {r}."
                );
            }
        }
        AgentOutcome::from_diagnosis(d) // writes the `=== DIAGNOSIS ===` block
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mock");
    let scenario = ScenarioFile::load(here.join("duo-r1-ospfd-down.txt"))?;
    let tools = NikaToolsFactory::new().with_telemetry_interval(None);
    let runner = Runner::new(
        Arc::new(MockEmulator::new()), // deploys `<topology>/mock.toml`
        Arc::new(OspfHunch),
        Arc::new(RubricJudge::new()),
    )
    .with_tools(Arc::new(tools))
    .with_topologies(TopologyResolver::new([here]));
    // Deploy, check the baseline, inject, verify, run the agent, judge, revert.
    let record = runner.run(&scenario).await;
    runner.shutdown().await;
    println!("status {} {:?}", record.status, record.error);
    let scores = record.scores.expect("scored");
    for v in &scores.per_axis {
        println!("  {:<6} {:.1}  {}", v.kind, v.score, v.axis);
    }
    println!("outcome {:.3}  fix {:?}", scores.outcome, scores.fix);
    anyhow::ensure!(record.status == RunStatus::Scored && scores.is_correct());
    Ok(())
}
