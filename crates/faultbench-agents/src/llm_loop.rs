//! The tool-calling loop shared by the LLM agents.
//!
//! One *turn* is one call to the model. A reply with tool calls has all of them executed (in
//! order) and their results appended; the first reply without tool calls ends the loop and its
//! text is the final answer. When `max_turns` calls have been made without such a reply, the
//! outcome has `hit_max_turns` (a timeout status, not an error); when the wall-clock cap runs
//! out, `hit_wall_clock`. A provider failure ends the loop with `error` set, keeping every turn,
//! token and dollar spent so far.
//!
//! **The wall clock is enforced here**, so that nothing is lost to it: each model call streams
//! through [`chat_until`] with the run's deadline, and a call still running at the deadline is
//! abandoned and recorded as a *cut* turn — the text and tool calls the model had produced, and
//! their usage (as the server reported it, else estimated and marked) — before the loop ends.
//! Tool calls get only the time left. The pipeline's own cap (wall clock + grace) stays as a
//! safety net for agents that do not keep theirs.
//!
//! **Every call has an output cap**: the agent's (`--max-output-tokens`), else the client's
//! configured one ([`faultbench_llm::DEFAULT_MAX_OUTPUT_TOKENS`] unless the LLM config sets
//! another); the outcome records it (`max_output_tokens`).
//!
//! **Nonsense from the model is answered, not fatal**: a call naming an unknown tool or device,
//! arguments that are not a JSON object, a call without a name — each gets an `ERROR …` tool
//! result the model can react to; a reply without tool calls is the answer (prose without a
//! block is scored leniently, as in the paper); missing call ids are made unique per run.

use faultbench_core::Diagnosis;
use faultbench_core::agent::{AgentInput, AgentOutcome, RequestedCall, Turn};
use faultbench_core::toolbox::Toolbox;
use faultbench_llm::{
    ChatModel, ChatRequest, ChatResponse, DEFAULT_MAX_OUTPUT_TOKENS, Message, PriceTable, ToolCall,
    ToolDef, chat_until,
};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;
use tokio::time::Instant;

/// Longest tool result the model sees, in characters (as the release's ReAct runner).
pub const RESULT_CAP: usize = 8000;

/// The one reminder sent (when [`LoopOptions::nudge_missing_block`] is on) to a model that
/// stopped without a parsable diagnosis block while turns remain.
pub const MISSING_BLOCK_NUDGE: &str = "Your reply has no complete `=== DIAGNOSIS ===` block with \
an `is_anomaly:` line. Reply now with only the final block in the required format.";

/// The former name of [`LoopOptions`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `LoopOptions`; the old name goes in the next release")]
pub type LoopSettings = LoopOptions;

/// How a loop runs.
#[derive(Debug, Clone)]
pub struct LoopOptions {
    /// System prompt.
    pub system: String,
    /// Output cap per model call (`None`: the client's configured cap).
    pub max_output_tokens: Option<u32>,
    /// When the model stops without a parsable diagnosis block and turns remain, ask once
    /// for the block (off for the faithful ReAct).
    pub nudge_missing_block: bool,
}

/// The output cap a loop sends: the agent's own, else the client's, else the default.
pub fn effective_cap(model: &dyn ChatModel, agent_cap: Option<u32>) -> u32 {
    agent_cap
        .or_else(|| model.max_output_tokens())
        .unwrap_or(DEFAULT_MAX_OUTPUT_TOKENS)
        .max(1)
}

/// Runs the loop: `model` drives, `tools` executes, `prices` turns usage into dollars.
pub async fn run_tool_loop(
    model: &dyn ChatModel,
    prices: &PriceTable,
    settings: &LoopOptions,
    input: &AgentInput,
    tools: Arc<dyn Toolbox>,
) -> AgentOutcome {
    let started = Instant::now();
    let deadline = started + input.budget.wall_clock();
    let defs: Vec<ToolDef> = tools.specs().iter().map(ToolDef::from).collect();
    let cap = effective_cap(model, settings.max_output_tokens);
    let mut req = ChatRequest {
        model: model.model().to_string(),
        system: Some(settings.system.clone()),
        messages: vec![Message::user(&input.prompt)],
        tools: defs,
        max_output_tokens: Some(cap),
        json_object: false,
    };
    let mut out = AgentOutcome {
        model: Some(model.model().to_string()),
        max_output_tokens: Some(cap),
        ..Default::default()
    };
    let mut finished = false;
    let mut nudged = false;
    let mut ids = HashSet::new();
    for index in 1..=input.budget.max_turns {
        if Instant::now() >= deadline {
            out.hit_wall_clock = true;
            break;
        }
        let mut reply = match chat_until(model, &req, deadline).await {
            Err(e) => {
                out.error = Some(format!("model call {index} failed: {e}"));
                break;
            }
            Ok(r) => r,
        };
        unique_ids(&mut reply, index, &mut ids);
        out.usage += reply.usage;
        out.turns.push(turn_of(index, &reply));
        if reply.is_cut() {
            // The deadline passed mid-answer: the turn is recorded, none of its calls run.
            out.hit_wall_clock = true;
            break;
        }
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
            let (content, is_error) =
                match tokio::time::timeout_at(deadline, execute(tools.as_ref(), call)).await {
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

/// The record of one reply.
fn turn_of(index: u32, reply: &ChatResponse) -> Turn {
    Turn {
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
        cut: reply.is_cut(),
        usage_estimated: reply.usage_estimated,
    }
}

/// Gives every call of the run a distinct id: servers that omit ids get `call_0`, `call_1`, …
/// from the client on every turn, and a tool result must answer exactly one call.
fn unique_ids(reply: &mut ChatResponse, turn: u32, seen: &mut HashSet<String>) {
    for (i, c) in reply.tool_calls.iter_mut().enumerate() {
        if !seen.insert(c.id.clone()) {
            let mut id = format!("call_{turn}_{i}");
            while !seen.insert(id.clone()) {
                id.push('_');
            }
            c.id = id;
        }
    }
}

/// Executes one requested call; returns what the model sees and whether it failed.
pub async fn execute(tools: &dyn Toolbox, call: &ToolCall) -> (String, bool) {
    if call.name.trim().is_empty() {
        return (
            "ERROR: the tool call names no tool; call one of the listed tools by its name".into(),
            true,
        );
    }
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
