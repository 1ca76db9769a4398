//! The external agents' MCP bridge in a build without the `mcp-bridge` feature (the
//! quickstart's build of the CLI): starting it says how to get it; transport `faultbench`
//! (`faultbench mcp` over stdio) does not need it.

use faultbench_core::toolbox::{ToolCallRecord, Toolbox};
use std::sync::Arc;

/// What the server would tell the CLI about its tools (part of the prompt version).
pub const BRIDGE_INSTRUCTIONS: &str = super::INSTRUCTIONS;

/// Never made in this build: [`McpBridge::start`] always fails.
pub enum McpBridge {}

// As the real bridge's (which stops its server), so that the agent drops it the same way.
impl Drop for McpBridge {
    fn drop(&mut self) {
        match *self {}
    }
}

impl McpBridge {
    /// Fails: this build has no bridge.
    pub async fn start(_tools: Arc<dyn Toolbox>) -> std::io::Result<McpBridge> {
        Err(std::io::Error::other(
            "this build has no MCP bridge (cargo feature `mcp-bridge` of faultbench-agents, on \
             by default; the quickstart's build leaves it out): rebuild with default features or \
             use transport `faultbench`",
        ))
    }

    /// The endpoint URL.
    pub fn url(&self) -> &str {
        match *self {}
    }

    /// Calls served so far.
    pub fn records(&self) -> Vec<ToolCallRecord> {
        match *self {}
    }
}
