//! What the facade's tests share: the examples' mock network and an agent that answers it.

use faultbench::core::agent::{Agent, AgentInput, AgentOutcome};
use faultbench::core::{Diagnosis, Toolbox};
use std::path::PathBuf;
use std::sync::Arc;

/// `examples/mock`: the Duo mock network and its scenario.
pub fn mock_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/mock")
}

/// Blames r1 without looking (the right answer on the examples' scenario).
pub struct BlamesR1;

#[async_trait::async_trait]
impl Agent for BlamesR1 {
    fn name(&self) -> &str {
        "blames-r1"
    }
    async fn run(&self, _: &AgentInput, _: Arc<dyn Toolbox>) -> AgentOutcome {
        AgentOutcome::from_diagnosis(Diagnosis {
            is_anomaly: Some(true),
            faulty_devices: vec!["r1".into()],
            text: "ospfd (the OSPF routing daemon) stopped on r1; r1 no longer advertises \
                   pc1's LAN. Fix: systemctl start frr on r1."
                .into(),
            parsed_ok: true,
        })
    }
}
