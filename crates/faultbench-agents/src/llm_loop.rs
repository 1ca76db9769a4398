//! The tool-calling loop shared by the LLM agents.
//!
//! One *turn* is one call to the model. A reply with tool calls has all of them executed (in
//! order) and their results appended; the first reply without tool calls ends the loop and its
//! text is the final answer. When `max_turns` calls have been made without such a reply, the
//! outcome has `hit_max_turns` (a timeout status, not an error); when the wall-clock cap runs
//! out, `hit_wall_clock`. A provider failure ends the loop with `error` set, keeping every turn,
//! token and dollar spent so far.

use faultbench_core::Diagnosis;
use faultbench_core::agent::{AgentInput, AgentOutcome, RequestedCall, Turn};
use faultbench_core::toolbox::Toolbox;
use faultbench_llm::{ChatModel, ChatRequest, Message, PriceTable, ToolCall, ToolDef};
use serde_json::Value;
use std::sync::Arc;
use std::time::Instant;

/// Longest tool result the model sees, in characters (as the release's ReAct runner).
pub const RESULT_CAP: usize = 8000;

/// The one reminder sent (when [`LoopSettings::nudge_missing_block`] is on) to a model that
/// stopped without a parsable diagnosis block while turns remain.
pub const MISSING_BLOCK_NUDGE: &str = "Your reply has no complete `=== DIAGNOSIS ===` block with \
an `is_anomaly:` line. Reply now with only the final block in the required format.";

/// How a loop runs.
#[derive(Debug, Clone)]
pub struct LoopSettings {
    /// System prompt.
    pub system: String,
    /// Output cap per model call.
    pub max_output_tokens: Option<u32>,
    /// When the model stops without a parsable diagnosis block and turns remain, ask once
    /// for the block (off for the faithful ReAct).
    pub nudge_missing_block: bool,
}

/// Runs the loop: `model` drives, `tools` executes, `prices` turns usage into dollars.
pub async fn run_tool_loop(
    model: &dyn ChatModel,
    prices: &PriceTable,
    settings: &LoopSettings,
    input: &AgentInput,
    tools: Arc<dyn Toolbox>,
) -> AgentOutcome {
    let started = Instant::now();
    let deadline = started + input.budget.wall_clock();
    let defs: Vec<ToolDef> = tools.specs().iter().map(ToolDef::from).collect();
    let mut req = ChatRequest {
        model: model.model().to_string(),
        system: Some(settings.system.clone()),
        messages: vec![Message::user(&input.prompt)],
        tools: defs,
        max_output_tokens: settings.max_output_tokens,
        json_object: false,
    };
    let mut out = AgentOutcome {
        model: Some(model.model().to_string()),
        ..Default::default()
    };
    let mut finished = false;
    let mut nudged = false;
    for index in 1..=input.budget.max_turns {
        let remaining = deadline.saturating_duration_since(Instant::now());
        if remaining.is_zero() {
            out.hit_wall_clock = true;
            break;
        }
        let reply = match tokio::time::timeout(remaining, model.chat(&req)).await {
            Err(_) => {
                out.hit_wall_clock = true;
                break;
            }
            Ok(Err(e)) => {
                out.error = Some(format!("model call {index} failed: {e}"));
                break;
            }
            Ok(Ok(r)) => r,
        };
        out.usage += reply.usage;
        out.turns.push(Turn {
            index,
            text: reply.text.clone(),
            tool_calls: reply
                .tool_calls
                .iter()
                .map(|c| RequestedCall {
                    tool: c.name.clone(),
                    args: c.arguments.clone(),
                })
                .collect(),
            usage: reply.usage,
            latency_ms: reply.latency_ms,
        });
        req.messages.push(Message::from_response(&reply));
        if reply.tool_calls.is_empty() {
            let parsed = Diagnosis::parse(&reply.text).is_ok();
            if !parsed && settings.nudge_missing_block && !nudged && index < input.budget.max_turns
            {
                nudged = true;
                req.messages.push(Message::user(MISSING_BLOCK_NUDGE));
                continue;
            }
            out.final_text = reply.text;
            finished = true;
            break;
        }
        for call in &reply.tool_calls {
            let remaining = deadline.saturating_duration_since(Instant::now());
            let (content, is_error) =
                match tokio::time::timeout(remaining, execute(tools.as_ref(), call)).await {
                    Ok(r) => r,
                    Err(_) => ("ERROR: the run's wall-clock cap ran out".to_string(), true),
                };
            out.tool_calls += 1;
            req.messages
                .push(Message::tool_result(&call.id, content, is_error));
        }
        if Instant::now() >= deadline {
            out.hit_wall_clock = true;
            break;
        }
    }
    if !finished {
        if out.error.is_none() && !out.hit_wall_clock {
            out.hit_max_turns = true;
        }
        // Whatever the model last wrote is its answer; a block in it still counts.
        out.final_text = out
            .turns
            .iter()
            .rev()
            .map(|t| t.text.clone())
            .find(|t| !t.trim().is_empty())
            .unwrap_or_default();
    }
    out.cost_usd = prices.cost(model.model(), &out.usage);
    out
}

/// Executes one requested call; returns what the model sees and whether it failed.
pub async fn execute(tools: &dyn Toolbox, call: &ToolCall) -> (String, bool) {
    let args = match &call.arguments {
        Value::Object(_) => call.arguments.clone(),
        Value::Null => Value::Object(Default::default()),
        Value::String(raw) => {
            return (
                format!(
                    "ERROR running {}: the arguments are not a JSON object: {}",
                    call.name,
                    cap(raw, 300)
                ),
                true,
            );
        }
        other => {
            return (
                format!(
                    "ERROR running {}: the arguments must be a JSON object, got {other}",
                    call.name
                ),
                true,
            );
        }
    };
    match tools.call(&call.name, args).await {
        Ok(out) => (cap(&out.text, RESULT_CAP), out.is_error),
        Err(e) => (format!("ERROR running {}: {e}", call.name), true),
    }
}

/// Cuts `text` to `max` characters with a marker.
pub fn cap(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_string(),
        Some((at, _)) => format!("{}\n[...truncated]", &text[..at]),
    }
}
