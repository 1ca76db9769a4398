//! Constructors for parts that live in crates still being wired into the CLI: each returns a
//! clear error until its backend is available.

use anyhow::bail;
use faultbench_core::{Agent, Emulator, Judge};
use faultbench_llm::LlmConfig;
use std::sync::Arc;

/// The Linux-namespace emulator.
pub fn netns() -> anyhow::Result<Arc<dyn Emulator>> {
    bail!("the netns emulator is not available in this build yet")
}

/// The Kathará emulator.
pub fn kathara() -> anyhow::Result<Arc<dyn Emulator>> {
    bail!("the kathara emulator is not available in this build yet")
}

/// The LLM judge.
pub fn llm_judge(_llm: &LlmConfig, _model: Option<&str>) -> anyhow::Result<Arc<dyn Judge>> {
    bail!("the LLM judge is not available in this build yet")
}

/// The deterministic baseline agent.
pub fn baseline_agent() -> anyhow::Result<Arc<dyn Agent>> {
    Ok(Arc::new(faultbench_agents::BaselineAgent::new()))
}

/// An external MCP agent.
pub fn external_agent(
    name: &str,
    _model: Option<&str>,
) -> anyhow::Result<(Arc<dyn Agent>, Option<String>)> {
    bail!("external agent `{name}` is not available in this build yet")
}

/// Removes leftovers of killed runs (netns labs of dead processes).
pub fn gc_netns() {}
