//! Shared test fixtures: the `two-sites` mock network behind NIKA's 22 tools.
#![allow(dead_code)]

use faultbench_core::Lab;
use faultbench_core::agent::{AgentInput, Budget};
use faultbench_core::toolbox::Toolbox;
use faultbench_emu::mock::{MockLab, MockNetwork};
use faultbench_emu::tools::{NikaTools, ToolOptions};
use std::sync::Arc;

pub const SUMMARY: &str = "Topology: two-sites\n\nDevices:\n  pc1: eth0=lan1\n  pc2: eth0=lan2\n  r1: eth0=lan1, eth1=wan\n  r2: eth0=lan2, eth1=wan\n  web1: eth0=lan2\n\n\
Collision domains (shared L2 segments):\n  lan1: pc1.eth0, r1.eth0\n  lan2: pc2.eth0, r2.eth0, web1.eth0\n  wan: r1.eth1, r2.eth1";

/// The mock lab, with ospfd dead on r1 when `faulty`.
pub fn lab(faulty: bool) -> Arc<MockLab> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/two-sites.toml");
    let net = MockNetwork::load(path).expect("mock file parses");
    let lab = Arc::new(MockLab::new("two-sites", Arc::new(net)));
    if faulty {
        lab.set_state("r1_ospfd_down", true).unwrap();
    }
    lab
}

/// The 22 tools over the mock lab.
pub fn tools(lab: Arc<MockLab>) -> Arc<dyn Toolbox> {
    let lab: Arc<dyn Lab> = lab;
    Arc::new(NikaTools::new(lab).with_config(ToolOptions::fast()))
}

pub fn input(ticket: &str, max_turns: u32) -> AgentInput {
    AgentInput::new(
        SUMMARY,
        ticket,
        Budget {
            max_turns,
            wall_clock_secs: 60,
        },
    )
}
