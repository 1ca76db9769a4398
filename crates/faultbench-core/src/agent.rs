//! Agents: given a ticket, a topology summary and a toolbox, investigate and answer with a
//! `=== DIAGNOSIS ===` block.
//!
//! An agent sees exactly [`AgentInput`] — the user message the paper's agents receive — and the
//! tools. It never sees the scenario id, category, ground truth or injection: the pipeline
//! builds the input from the ticket alone (Inspect AI's task / solver / scorer split).
//!
//! ```
//! use faultbench_core::agent::{Agent, AgentInput, AgentOutcome, Budget};
//! use faultbench_core::toolbox::Toolbox;
//! use std::sync::Arc;
//!
//! /// Never looks at the network; always says "healthy".
//! struct Optimist;
//! #[async_trait::async_trait]
//! impl Agent for Optimist {
//!     fn name(&self) -> &str { "optimist" }
//!     async fn run(&self, _input: &AgentInput, _tools: Arc<dyn Toolbox>) -> AgentOutcome {
//!         AgentOutcome::answer("=== DIAGNOSIS ===\nis_anomaly: false\nfaulty_devices: none\n\
//!             diagnosis_text:\nEverything answers.\n=== END ===")
//!     }
//! }
//!
//! # struct NoTools;
//! # #[async_trait::async_trait]
//! # impl Toolbox for NoTools {
//! #     fn specs(&self) -> Vec<faultbench_core::toolbox::ToolSpec> { vec![] }
//! #     async fn call(&self, n: &str, _a: serde_json::Value) -> Result<faultbench_core::toolbox::ToolOutput, faultbench_core::toolbox::ToolError> {
//! #         Err(faultbench_core::toolbox::ToolError::UnknownTool(n.into()))
//! #     }
//! # }
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let input = AgentInput::new("Topology: Lab\n\nDevices:\n  pc1: eth0=A", "pc1 is slow", Budget::default());
//! assert!(input.prompt.starts_with("# Topology overview (devices + L2 connectivity)\n"));
//! let out = Optimist.run(&input, Arc::new(NoTools)).await;
//! assert_eq!(out.diagnosis().is_anomaly, Some(false));
//! # });
//! ```

use crate::diagnosis::Diagnosis;
use crate::toolbox::{ToolCallRecord, Toolbox};
use serde::{Deserialize, Serialize};
use std::ops::{Add, AddAssign};
use std::sync::Arc;
use std::time::Duration;

/// The per-run budget every agent gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Budget {
    /// Maximum model turns (calls to the model). The paper uses 20.
    pub max_turns: u32,
    /// Wall-clock cap for the whole agent phase, in seconds.
    pub wall_clock_secs: u64,
}

impl Default for Budget {
    fn default() -> Self {
        Budget {
            max_turns: 20,
            wall_clock_secs: 1800,
        }
    }
}

impl Budget {
    /// The wall-clock cap as a duration.
    pub fn wall_clock(&self) -> Duration {
        Duration::from_secs(self.wall_clock_secs)
    }
}

/// What an agent receives.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInput {
    /// The exact user message: topology overview, then the ticket.
    pub prompt: String,
    /// The ticket alone.
    pub ticket: String,
    /// The topology summary alone.
    pub topology_summary: String,
    /// The budget.
    pub budget: Budget,
    /// The task ([`crate::task::Task::Diagnose`] unless the run asks for a repair).
    #[serde(default, skip_serializing_if = "crate::task::Task::is_diagnose")]
    pub task: crate::task::Task,
}

impl AgentInput {
    /// Builds the paper's user message:
    /// `# Topology overview (devices + L2 connectivity)\n{summary}\n\n# Symptom (user report)\n{ticket}`.
    pub fn new(topology_summary: &str, ticket: &str, budget: Budget) -> Self {
        AgentInput {
            prompt: format!(
                "# Topology overview (devices + L2 connectivity)\n{topology_summary}\n\n# Symptom (user report)\n{ticket}"
            ),
            ticket: ticket.to_string(),
            topology_summary: topology_summary.to_string(),
            budget,
            task: crate::task::Task::Diagnose,
        }
    }

    /// The same input for `task`: the repair task appends its instructions
    /// ([`crate::task::REPAIR_INSTRUCTIONS`]) as a last section of the user message; the
    /// diagnose task leaves the paper's message as it is.
    pub fn with_task(mut self, task: crate::task::Task) -> Self {
        if task == crate::task::Task::Repair && self.task != task {
            self.prompt = format!(
                "{}\n\n{}\n{}",
                self.prompt,
                crate::task::REPAIR_HEADING,
                crate::task::REPAIR_INSTRUCTIONS
            );
        }
        self.task = task;
        self
    }
}

/// Token usage, split as providers bill it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Input tokens read from the provider's cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's cache.
    pub cache_write_tokens: u64,
    /// Output tokens (including reasoning tokens).
    pub output_tokens: u64,
}

impl Usage {
    /// All input tokens (uncached + cache read + cache write), as the paper's Table 8 counts
    /// (saturating: counts come from providers' answers, which are not trusted).
    pub fn total_input(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }
}

/// Saturating: a provider answering `u64::MAX` tokens must not wrap a run's total to a small
/// number (or panic in a debug build).
impl Add for Usage {
    type Output = Usage;
    fn add(self, o: Usage) -> Usage {
        Usage {
            input_tokens: self.input_tokens.saturating_add(o.input_tokens),
            cache_read_tokens: self.cache_read_tokens.saturating_add(o.cache_read_tokens),
            cache_write_tokens: self.cache_write_tokens.saturating_add(o.cache_write_tokens),
            output_tokens: self.output_tokens.saturating_add(o.output_tokens),
        }
    }
}

impl AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        *self = *self + o;
    }
}

/// One model turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// 1-based turn number.
    pub index: u32,
    /// Text the model wrote this turn (its notes or final answer).
    pub text: String,
    /// Tool calls it requested this turn (name and arguments), in order.
    pub tool_calls: Vec<RequestedCall>,
    /// Tokens of this turn.
    pub usage: Usage,
    /// Model latency in milliseconds.
    pub latency_ms: u64,
    /// The wall-clock cap cut this turn while the model was still answering: `text`, the tool
    /// calls and `usage` are what it had produced by then (none of its calls were executed).
    #[serde(default, skip_serializing_if = "is_false")]
    pub cut: bool,
    /// Some of `usage` is estimated from the text (the server reported none, or the turn was
    /// cut before its usage arrived).
    #[serde(default, skip_serializing_if = "is_false")]
    pub usage_estimated: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A tool call as the model requested it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestedCall {
    /// Tool name.
    pub tool: String,
    /// Arguments.
    pub args: serde_json::Value,
}

/// Everything an agent returns. Agents never fail with `Err`: problems are recorded in
/// `error`, so that partial work (turns, tokens, cost) is never lost.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentOutcome {
    /// The final message (should contain the diagnosis block).
    pub final_text: String,
    /// The turn budget ran out before a final answer.
    pub hit_max_turns: bool,
    /// The wall-clock cap ran out.
    pub hit_wall_clock: bool,
    /// An error that stopped the agent (provider failure, crash of an external agent…).
    pub error: Option<String>,
    /// Every turn.
    pub turns: Vec<Turn>,
    /// Total usage.
    pub usage: Usage,
    /// Cost in USD, when a price is known.
    pub cost_usd: Option<f64>,
    /// Number of tool calls executed.
    pub tool_calls: u32,
    /// Model name, when a model was used.
    pub model: Option<String>,
    /// The output-token cap every model call of the run was sent with (LLM agents).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Tool calls recorded by the agent itself (external agents report them from the MCP log).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_log: Vec<ToolCallRecord>,
}

impl AgentOutcome {
    /// A finished answer with no further detail.
    pub fn answer(final_text: impl Into<String>) -> Self {
        AgentOutcome {
            final_text: final_text.into(),
            ..Default::default()
        }
    }

    /// A finished answer from a structured verdict: its final text is `d.render()`, the
    /// `=== DIAGNOSIS ===` block every judge reads.
    ///
    /// ```
    /// use faultbench_core::{AgentOutcome, Diagnosis};
    /// let d = Diagnosis { is_anomaly: Some(true), faulty_devices: vec!["r1".into()],
    ///     text: "ospfd is down on r1".into(), parsed_ok: true };
    /// let out = AgentOutcome::from_diagnosis(d.clone());
    /// assert_eq!(out.diagnosis(), d);
    /// ```
    pub fn from_diagnosis(d: Diagnosis) -> Self {
        AgentOutcome::answer(d.render())
    }

    /// An agent that failed before answering.
    pub fn failed(error: impl Into<String>) -> Self {
        AgentOutcome {
            error: Some(error.into()),
            ..Default::default()
        }
    }

    /// The parsed diagnosis (lenient: never fails).
    pub fn diagnosis(&self) -> Diagnosis {
        Diagnosis::parse_lenient(&self.final_text)
    }
}

/// A troubleshooting agent.
#[async_trait::async_trait]
pub trait Agent: Send + Sync {
    /// Short name used in run paths and reports (`baseline`, `react`, `sade`, …).
    fn name(&self) -> &str;

    /// Model name, if the agent uses one.
    fn model(&self) -> Option<&str> {
        None
    }

    /// A short version of the prompt texts the agent sends (e.g. a content hash of its system
    /// prompt and instructions), recorded in a runs root's identity so that a changed prompt is
    /// a changed configuration. `None` for agents without prompts (the deterministic baseline).
    fn prompt_version(&self) -> Option<String> {
        None
    }

    /// Its name, model and prompt version in one value (what records and a runs root's
    /// identity hold). The default collects the three methods above.
    fn profile(&self) -> crate::profile::Profile {
        crate::profile::Profile::of(self.name(), self.model(), self.prompt_version())
    }

    /// The output-token cap each of its model calls is sent with, if it calls a model (part of
    /// a runs root's configuration, like the model).
    fn max_output_tokens(&self) -> Option<u32> {
        None
    }

    /// Investigates through `tools` and answers. Must respect `input.budget`.
    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome;
}

#[async_trait::async_trait]
impl<T: Agent + ?Sized> Agent for Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn model(&self) -> Option<&str> {
        (**self).model()
    }
    fn prompt_version(&self) -> Option<String> {
        (**self).prompt_version()
    }
    fn profile(&self) -> crate::profile::Profile {
        (**self).profile()
    }
    fn max_output_tokens(&self) -> Option<u32> {
        (**self).max_output_tokens()
    }
    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        (**self).run(input, tools).await
    }
}

#[async_trait::async_trait]
impl<T: Agent + ?Sized> Agent for Box<T> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn model(&self) -> Option<&str> {
        (**self).model()
    }
    fn prompt_version(&self) -> Option<String> {
        (**self).prompt_version()
    }
    fn profile(&self) -> crate::profile::Profile {
        (**self).profile()
    }
    fn max_output_tokens(&self) -> Option<u32> {
        (**self).max_output_tokens()
    }
    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        (**self).run(input, tools).await
    }
}

/// Whether LLM agents are told that the ticket may be inaccurate — an experiment arm of its own.
///
/// The paper's agents were told nothing about the ticket's reliability (trust in a wrong ticket
/// is what the benchmark measures), so [`TicketHint::None`] is the default and the faithful
/// setting. [`TicketHint::Skeptical`] adds one sentence saying the ticket may be inaccurate to
/// each LLM or external agent's instructions.
///
/// ```
/// use faultbench_core::agent::TicketHint;
/// assert_eq!("skeptical".parse::<TicketHint>().unwrap(), TicketHint::Skeptical);
/// assert_eq!(TicketHint::default().to_string(), "none");
/// assert!("maybe".parse::<TicketHint>().unwrap_err().to_string().contains("none, skeptical"));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TicketHint {
    /// No statement about the ticket (the paper's prompts).
    #[default]
    None,
    /// One added sentence: the ticket may be inaccurate.
    Skeptical,
}

impl TicketHint {
    /// Every hint, in order.
    pub const ALL: [TicketHint; 2] = [TicketHint::None, TicketHint::Skeptical];

    /// The name used on the command line and in files.
    pub fn as_str(self) -> &'static str {
        match self {
            TicketHint::None => "none",
            TicketHint::Skeptical => "skeptical",
        }
    }
}

impl std::fmt::Display for TicketHint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A ticket hint name that is neither `none` nor `skeptical`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown ticket hint `{0}` (expected one of: none, skeptical)")]
pub struct UnknownTicketHint(pub String);

impl std::str::FromStr for TicketHint {
    type Err = UnknownTicketHint;
    fn from_str(s: &str) -> Result<Self, UnknownTicketHint> {
        TicketHint::ALL
            .into_iter()
            .find(|h| h.as_str() == s.trim())
            .ok_or_else(|| UnknownTicketHint(s.to_string()))
    }
}
