//! `react`: a plain reason–act loop over function calling, as the release's ReAct agent.
//!
//! The model gets a short system prompt (role, the tools by name, reason–act cycles, the
//! evidence rule and the answer format — [`react_system`]) and the paper's user message; each
//! reply may request several tools, all of them executed; the first reply without tool calls
//! is the answer. No playbooks, no nudges, nothing about the ticket's reliability unless the
//! [`TicketHint`] asks for it.

use crate::llm_agent::{AgentStyle, LlmAgent};
use crate::prompt::{TOOLS_PLACEHOLDER, react_system};
use faultbench_core::agent::TicketHint;

/// The ReAct agent: an [`LlmAgent`] in the [`ReactStyle`].
///
/// ```
/// use faultbench_agents::ReactAgent;
/// use faultbench_core::agent::{Agent, AgentInput, Budget};
/// use faultbench_llm::{ChatResponse, ScriptedModel, ToolCall};
/// # use faultbench_core::toolbox::{Toolbox, ToolSpec, ToolOutput, ToolError};
/// # struct Net;
/// # #[async_trait::async_trait]
/// # impl Toolbox for Net {
/// #     fn specs(&self) -> Vec<ToolSpec> { vec![ToolSpec::new("get_reachability", "ping all hosts", serde_json::json!({"type":"object"}))] }
/// #     async fn call(&self, _n: &str, _a: serde_json::Value) -> Result<ToolOutput, ToolError> { Ok(ToolOutput::text("all ok")) }
/// # }
/// use serde_json::json;
/// use std::sync::Arc;
///
/// let model = Arc::new(ScriptedModel::new("scripted", vec![
///     ChatResponse::tool_calls("Check reachability first.", vec![ToolCall::new("c1", "get_reachability", json!({}))]),
///     ChatResponse::text("=== DIAGNOSIS ===\nis_anomaly: false\nfaulty_devices: none\ndiagnosis_text:\nAll hosts answer.\n=== END ==="),
/// ]));
/// let agent = ReactAgent::new(model);
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let out = agent.run(&AgentInput::new("Devices: pc1", "pc1 is offline", Budget::default()), Arc::new(Net)).await;
/// assert_eq!(out.diagnosis().is_anomaly, Some(false));
/// assert_eq!((out.turns.len(), out.tool_calls), (2, 1));
/// # });
/// ```
pub type ReactAgent = LlmAgent<ReactStyle>;

/// The ReAct [`AgentStyle`]: the short reason–act system prompt, no reminder, the run's tools as
/// they are.
pub struct ReactStyle;

impl AgentStyle for ReactStyle {
    const NAME: &'static str = "react";
    const NUDGE_MISSING_BLOCK: bool = false;

    fn system(tool_names: &[String], hint: TicketHint) -> String {
        react_system(tool_names, hint)
    }

    fn prompt_texts(hint: TicketHint) -> Vec<String> {
        vec![react_system(&[TOOLS_PLACEHOLDER.to_string()], hint)]
    }
}
