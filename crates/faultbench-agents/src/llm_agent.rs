//! [`LlmAgent`]: the one agent type behind ReAct and SADE.
//!
//! Both run the same tool-calling loop ([`crate::llm_loop`]) on a chat model and take the same
//! options (prices, output cap, ticket hint); they differ only in what an [`AgentStyle`] says: the
//! agent's name, its system prompt, whether a model that stops without a diagnosis block is
//! reminded once, and whether the run's toolbox is wrapped with tools of the agent's own. So
//! the options and the [`Agent`] implementation are written once here, and [`crate::ReactAgent`]
//! and [`crate::SadeAgent`] are this type with their style.

use crate::llm_loop::{LoopOptions, effective_cap, run_tool_loop};
use crate::prompt::prompt_version;
use faultbench_core::agent::{Agent, AgentInput, AgentOutcome, TicketHint};
use faultbench_core::toolbox::Toolbox;
use faultbench_llm::{ChatModel, PriceTable};
use std::marker::PhantomData;
use std::sync::Arc;

/// What distinguishes one LLM agent from another on the shared loop.
pub trait AgentStyle: Send + Sync + 'static {
    /// The agent's name (`react`, `sade`).
    const NAME: &'static str;
    /// Whether a model that stops without a parsable diagnosis block is asked once for it.
    const NUDGE_MISSING_BLOCK: bool;
    /// The system prompt for a run whose tools are named `tool_names`.
    fn system(tool_names: &[String], hint: TicketHint) -> String;
    /// Every prompt text the agent sends besides the user message, with the tool list left
    /// as a placeholder: what [`Agent::prompt_version`] hashes.
    fn prompt_texts(hint: TicketHint) -> Vec<String>;
    /// The toolbox the model sees, given the run's (the run's itself unless the style adds
    /// tools of its own).
    fn toolbox(tools: Arc<dyn Toolbox>) -> Arc<dyn Toolbox> {
        tools
    }
}

/// An LLM agent of style `S` on a chat model.
pub struct LlmAgent<S: AgentStyle> {
    model: Arc<dyn ChatModel>,
    prices: PriceTable,
    max_output_tokens: Option<u32>,
    ticket_hint: TicketHint,
    // `fn() -> S`: the style is a type-level choice only, never stored (keeps the agent
    // Send + Sync whatever S is).
    style: PhantomData<fn() -> S>,
}

impl<S: AgentStyle> LlmAgent<S> {
    /// An agent on `model`, priced with the default table, without a ticket hint and with
    /// the model client's output cap.
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        LlmAgent {
            model,
            prices: PriceTable::defaults(),
            max_output_tokens: None,
            ticket_hint: TicketHint::None,
            style: PhantomData,
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
impl<S: AgentStyle> Agent for LlmAgent<S> {
    fn name(&self) -> &str {
        S::NAME
    }

    fn model(&self) -> Option<&str> {
        Some(self.model.model())
    }

    /// A hash of the style's prompt texts with the tool list left as a placeholder (the tool
    /// set is the run's, recorded through the tool policy).
    fn prompt_version(&self) -> Option<String> {
        let texts = S::prompt_texts(self.ticket_hint);
        let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
        Some(prompt_version(&refs))
    }

    fn max_output_tokens(&self) -> Option<u32> {
        Some(effective_cap(self.model.as_ref(), self.max_output_tokens))
    }

    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let toolbox = S::toolbox(tools);
        let names: Vec<String> = toolbox.specs().into_iter().map(|s| s.name).collect();
        let options = LoopOptions {
            system: S::system(&names, self.ticket_hint),
            max_output_tokens: self.max_output_tokens,
            nudge_missing_block: S::NUDGE_MISSING_BLOCK,
        };
        run_tool_loop(self.model.as_ref(), &self.prices, &options, input, toolbox).await
    }
}
