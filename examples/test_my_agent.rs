//! The unit-test pattern: test your agent with `#[tokio::test]` against a declarative mock
//! network (`examples/mock/Duo/mock.toml`): no root, no daemons, milliseconds per test.
//!
//! `cargo test --example test_my_agent` runs the two tests below.

use faultbench::core::agent::{Agent, AgentInput, AgentOutcome, Budget};
use faultbench::core::inject::{InjectionStatus, apply_injection};
use faultbench::core::{Diagnosis, Emulator, LabRequest, Scenario, ScenarioFile, Toolbox};
use faultbench::emu::{mock::MockEmulator, tools::NikaTools};
use serde_json::json;
use std::{sync::Arc, time::Duration};

/// The agent under test: blames the router whose OSPF daemon is not running.
struct OspfCheck;

#[async_trait::async_trait]
impl Agent for OspfCheck {
    fn name(&self) -> &str {
        "ospf-check"
    }
    async fn run(&self, _input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let mut d = Diagnosis {
            is_anomaly: Some(false),
            ..Default::default()
        };
        for r in ["r1", "r2"] {
            let args = json!({"router_name": r, "command": "show ip ospf neighbor"});
            if let Ok(out) = tools.call("frr_exec", args).await
                && out.text.contains("is not running")
            {
                (d.is_anomaly, d.text) = (Some(true), format!("ospfd is down on {r}"));
                d.faulty_devices.push(r.into());
            }
        }
        AgentOutcome::from_diagnosis(d)
    }
}

/// Deploys the mock network, applies the scenario's injection when `faulty`, runs the agent.
async fn diagnose(faulty: bool) -> Diagnosis {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mock");
    let request = LabRequest::new(dir.join("Duo/mock.toml"));
    let lab = MockEmulator::new().deploy(&request).await.unwrap();
    let scenario = ScenarioFile::load(dir.join("duo-r1-ospfd-down.txt")).unwrap();
    if faulty {
        let t = Duration::from_secs(5);
        let report = apply_injection(lab.as_ref(), scenario.injection(), t).await;
        assert_eq!(report.status(), InjectionStatus::Applied, "{report:?}");
    }
    let input = AgentInput::new("Topology: Duo", scenario.ticket(), Budget::default());
    let outcome = OspfCheck
        .run(&input, Arc::new(NikaTools::new(lab.clone())))
        .await;
    lab.teardown().await.unwrap();
    outcome.diagnosis()
}

#[tokio::test]
async fn blames_the_router_whose_ospfd_was_killed() {
    let d = diagnose(true).await;
    assert_eq!(
        (d.is_anomaly, d.faulty_devices),
        (Some(true), vec!["r1".into()])
    );
}

#[tokio::test]
async fn says_healthy_on_a_healthy_network() {
    let d = diagnose(false).await;
    assert_eq!((d.is_anomaly, d.faulty_devices.len()), (Some(false), 0));
}

#[tokio::main]
async fn main() {
    println!(
        "{:?}\n(the tests: cargo test --example test_my_agent)",
        diagnose(true).await
    );
}
