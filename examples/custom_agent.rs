//! Bring your own agent: implement `Agent`, run it on a mock network, judge it.
//!
//! `cargo run --example custom_agent` prints the agent's diagnosis and its scores.

use faultbench::core::agent::{Agent, AgentInput, AgentOutcome, Budget};
use faultbench::core::judge::{Judge, JudgeInput};
use faultbench::core::{Command, Emulator, LabRequest, ScenarioSpec, Toolbox};
use faultbench::emu::mock::MockEmulator;
use faultbench::emu::tools::{NikaTools, ToolConfig};
use faultbench::judge::RubricJudge;
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;

/// A user's agent: ping everything; if something fails, ask each router whether OSPF runs.
struct OspfHunch;

#[async_trait::async_trait]
impl Agent for OspfHunch {
    fn name(&self) -> &str {
        "ospf-hunch"
    }

    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let mut calls = 1;
        let reach = match tools.call("get_reachability", json!({})).await {
            Ok(out) => out.text,
            Err(e) => return AgentOutcome::failed(e.to_string()),
        };
        let (mut verdict, mut blamed, mut why) =
            (false, vec![], "Every host pair answers.".to_string());
        if reach.contains("\"down\"") {
            verdict = true;
            why = "Some host pairs cannot reach each other.".into();
            // Routers are the devices named r<digit> in the topology summary.
            let routers = input
                .topology_summary
                .lines()
                .filter_map(|l| l.trim().split(':').next())
                .filter(|d| d.starts_with('r') && d[1..].starts_with(|c: char| c.is_ascii_digit()));
            for r in routers {
                calls += 1;
                let args = json!({"router_name": r, "command": "show ip ospf neighbor"});
                if let Ok(out) = tools.call("frr_exec", args).await
                    && out.text.contains("is not running")
                {
                    blamed.push(r.to_string());
                    why = format!(
                        "ospfd is not running on {r}, so its networks vanish from OSPF. Fix: restart FRR on {r}."
                    );
                }
            }
        }
        let devices = if blamed.is_empty() {
            "none".to_string()
        } else {
            blamed.join(", ")
        };
        let mut out = AgentOutcome::answer(format!(
            "=== DIAGNOSIS ===\nis_anomaly: {verdict}\nfaulty_devices: {devices}\ndiagnosis_text:\n{why}\n=== END ==="
        ));
        out.tool_calls = calls;
        out
    }
}

const SCENARIO: &str = "Scenario: two-sites-r1-ospfd-down\nTopology: two-sites\nFault family: routing daemon down\n\n\
[PROMPT-TO-AGENT]\nThe web server web1 stopped answering users on pc1 this morning. Please restart web1.\n\n\
[INJECTION]\ndevice: r1\ncmd: pkill ospfd\n\n[POST-INJECT-CHECK]\nr1  pgrep ospfd  => expect empty\n\n\
[GROUND-TRUTH]\nospfd is not running on r1, so r1 stops advertising pc1's LAN; web1 is healthy.\n\n\
[FIX]\nRestart FRR (ospfd) on r1.\n\n[SCORING-AXES]\nassert-identifies: r1\nassert-not-identifies: web1\n\
must-identify-ospfd-down\nbonus-explains-route-withdrawal\n\n\
[NIKA-LABEL]\nnika_label: frr_service_down\nnika_category: SERVICE_FAILURE\nin_taxonomy: true\n";

const SUMMARY: &str = "Topology: two-sites\n\nDevices:\n  pc1: eth0=lan1\n  pc2: eth0=lan2\n  r1: eth0=lan1, eth1=wan\n  \
r2: eth0=lan2, eth1=wan\n  web1: eth0=lan2\n\nCollision domains (shared L2 segments):\n  lan1: pc1.eth0, r1.eth0\n  \
lan2: pc2.eth0, r2.eth0, web1.eth0\n  wan: r1.eth1, r2.eth1";

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let scenario = ScenarioSpec::parse(SCENARIO)?;
    // A declarative mock network (no root, no daemons); `pkill ospfd` on r1 switches its fault on.
    let mock = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/faultbench-agents/tests/data/two-sites.toml"
    );
    let lab = MockEmulator::new().deploy(&LabRequest::new(mock)).await?;
    lab.exec("r1", &Command::shell("pkill ospfd"), Duration::from_secs(5))
        .await?;

    let tools = Arc::new(NikaTools::new(lab.clone()).with_config(ToolConfig::fast()));
    let input = AgentInput::new(SUMMARY, scenario.ticket(), Budget::default());
    let outcome = OspfHunch.run(&input, tools).await;
    let diagnosis = outcome.diagnosis();
    println!("{}\n", outcome.final_text);

    let scores = RubricJudge::new()
        .judge(&JudgeInput::new(&scenario, &diagnosis))
        .await?;
    println!(
        "outcome {:.3}  fix {:?}  reasoning {:?}  ({} tool calls)",
        scores.outcome, scores.fix, scores.reasoning, outcome.tool_calls
    );
    for v in &scores.per_axis {
        println!(
            "  {:<6} {:<40} {:.1}  {}",
            v.kind, v.axis, v.score, v.rationale
        );
    }
    lab.teardown().await?;
    Ok(())
}
