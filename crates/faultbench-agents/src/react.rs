//! `react`: a plain reason–act loop over function calling, as the release's ReAct agent.
//!
//! The model gets a short system prompt (role, the tools by name, reason–act cycles, the
//! evidence rule and the answer format — [`react_system`]) and the paper's user message; each
//! reply may request several tools, all of them executed; the first reply without tool calls
//! is the answer. No playbooks, no nudges, nothing about the ticket's reliability unless the
//! [`TicketHint`] asks for it.

use crate::llm_loop::{LoopOptions, run_tool_loop};
use crate::prompt::{TOOLS_PLACEHOLDER, prompt_version, react_system};
use faultbench_core::agent::{Agent, AgentInput, AgentOutcome, TicketHint};
use faultbench_core::toolbox::Toolbox;
use faultbench_llm::{ChatModel, PriceTable};
use std::sync::Arc;

/// The ReAct agent.
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
pub struct ReactAgent {
    model: Arc<dyn ChatModel>,
    prices: PriceTable,
    max_output_tokens: Option<u32>,
    ticket_hint: TicketHint,
}

impl ReactAgent {
    /// A ReAct agent on `model`, priced with the default table.
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        ReactAgent {
            model,
            prices: PriceTable::defaults(),
            max_output_tokens: None,
            ticket_hint: TicketHint::None,
        }
    }

    /// Tells the agent (or not) that the ticket may be inaccurate.
    pub fn with_ticket_hint(mut self, hint: TicketHint) -> Self {
        self.ticket_hint = hint;
        self
    }

    /// Uses `prices` for `cost_usd`.
    pub fn with_prices(mut self, prices: PriceTable) -> Self {
        self.prices = prices;
        self
    }

    /// Caps each reply's output tokens (default: the model client's configured cap).
    pub fn with_max_output_tokens(mut self, max: u32) -> Self {
        self.max_output_tokens = Some(max);
        self
    }
}

#[async_trait::async_trait]
impl Agent for ReactAgent {
    fn name(&self) -> &str {
        "react"
    }

    fn model(&self) -> Option<&str> {
        Some(self.model.model())
    }

    /// A hash of the system prompt with the tool list left as a placeholder (the tool set is
    /// the run's, recorded through the tool policy).
    fn prompt_version(&self) -> Option<String> {
        let system = react_system(&[TOOLS_PLACEHOLDER.to_string()], self.ticket_hint);
        Some(prompt_version(&[&system]))
    }

    fn max_output_tokens(&self) -> Option<u32> {
        Some(crate::llm_loop::effective_cap(
            self.model.as_ref(),
            self.max_output_tokens,
        ))
    }

    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let names: Vec<String> = tools.specs().into_iter().map(|s| s.name).collect();
        let settings = LoopOptions {
            system: react_system(&names, self.ticket_hint),
            max_output_tokens: self.max_output_tokens,
            nudge_missing_block: false,
        };
        run_tool_loop(self.model.as_ref(), &self.prices, &settings, input, tools).await
    }
}
