//! Replies as they stream in, and what is kept when the caller stops waiting.
//!
//! A streaming client writes every piece it receives into a [`Progress`] (a shared
//! [`Partial`]: text so far, tool calls so far, usage if the server reported it). The caller
//! owns the `Progress`, so when it abandons the call — [`chat_until`] at a deadline — it still
//! holds everything the server produced, and turns it into a [`ChatResponse`] whose stop reason
//! is [`StopReason::Deadline`]. Nothing here depends on the client cooperating: the call is cut
//! by dropping its future, whatever the server is doing (silent, stalled, streaming forever).
//!
//! **Usage of a cut or usage-less reply.** Tokens the server reported are used as they are.
//! What it did not report is estimated — input from the request's text, output from the text
//! and tool arguments received — at [`CHARS_PER_TOKEN`] characters per token, and the reply is
//! marked [`ChatResponse::usage_estimated`]. A cut reply's input is always counted: the request
//! was sent, and a hosted API bills a prompt it has started on.

use crate::model::ChatModel;
use crate::types::{ChatRequest, ChatResponse, LlmError, Message, StopReason, ToolCall};
use faultbench_core::Usage;
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// Characters per token assumed when a token count has to be estimated (English prose and JSON
/// average about four with the common tokenizers).
pub const CHARS_PER_TOKEN: usize = 4;

/// Longest reply text (plus tool arguments) kept from one stream, in bytes; a server streaming
/// beyond it is cut off (a 4,096-token reply is about 16 KB).
pub const MAX_REPLY_BYTES: usize = 4 << 20;

/// Tokens in `chars` characters of text, estimated.
pub fn estimate_tokens(chars: usize) -> u64 {
    chars.div_ceil(CHARS_PER_TOKEN) as u64
}

/// The characters of a request the model reads: system prompt, messages, tool definitions.
pub fn request_chars(req: &ChatRequest) -> usize {
    let mut n = req.system.as_deref().map_or(0, str::len);
    for m in &req.messages {
        n += match m {
            Message::User(t) => t.len(),
            Message::Assistant { text, tool_calls } => {
                text.len()
                    + tool_calls
                        .iter()
                        .map(|c| c.name.len() + c.arguments.to_string().len())
                        .sum::<usize>()
            }
            Message::ToolResult { content, .. } => content.len(),
        };
    }
    for t in &req.tools {
        n += t.name.len() + t.description.len() + t.parameters.to_string().len();
    }
    n
}

/// An error the server reported inside a streamed reply (an `error` chunk or event), after the
/// HTTP status said the call succeeded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("error inside the stream: {message}")]
pub struct StreamError {
    /// The server's message (or the whole error object when it has none).
    pub message: String,
}

/// A tool call being streamed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PartialCall {
    /// Provider id, once sent.
    pub id: Option<String>,
    /// Tool name so far.
    pub name: String,
    /// Argument text so far (JSON once complete).
    pub arguments: String,
}

/// What one reply has produced so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Partial {
    /// Text so far.
    pub text: String,
    /// Tool calls so far, in order.
    pub calls: Vec<PartialCall>,
    /// Token counts the server reported (fields it did not report stay 0).
    pub usage: Usage,
    /// The server reported the input side of `usage`.
    pub input_reported: bool,
    /// The server reported the output side of `usage`.
    pub output_reported: bool,
    /// The model the server named.
    pub model: Option<String>,
    /// The stop reason the server gave, once it gave one.
    pub stop: Option<StopReason>,
    /// Bytes of reply text and tool arguments kept (bounded by [`MAX_REPLY_BYTES`]).
    pub kept_bytes: usize,
}

impl Partial {
    /// Appends reply text; false once [`MAX_REPLY_BYTES`] is reached (the rest is dropped).
    pub fn push_text(&mut self, s: &str) -> bool {
        if !self.room_for(s) {
            return false;
        }
        self.text.push_str(s);
        true
    }

    /// Appends argument text to call `index`, creating it (and any before it) when new.
    pub fn push_arguments(&mut self, index: usize, s: &str) -> bool {
        if !self.room_for(s) {
            return false;
        }
        self.call(index).arguments.push_str(s);
        true
    }

    /// Call `index`, created (with any before it) when new. Indices beyond a sane count are
    /// folded onto the last call rather than allocating without bound.
    pub fn call(&mut self, index: usize) -> &mut PartialCall {
        let index = index.min(255);
        while self.calls.len() <= index {
            self.calls.push(PartialCall::default());
        }
        &mut self.calls[index]
    }

    fn room_for(&mut self, s: &str) -> bool {
        if self.kept_bytes + s.len() > MAX_REPLY_BYTES {
            self.stop = Some(StopReason::Other("reply_too_large".into()));
            return false;
        }
        self.kept_bytes += s.len();
        true
    }

    /// The reply this amounts to. `stop` overrides the server's (a cut), and missing usage is
    /// estimated against `req`.
    pub fn to_response(&self, req: &ChatRequest, stop: Option<StopReason>) -> ChatResponse {
        let tool_calls: Vec<ToolCall> = self
            .calls
            .iter()
            .enumerate()
            .filter(|(_, c)| !c.name.is_empty() || !c.arguments.is_empty() || c.id.is_some())
            .map(|(i, c)| {
                let id =
                    c.id.clone()
                        .filter(|s| !s.is_empty())
                        .unwrap_or_else(|| format!("call_{i}"));
                ToolCall::new(id, c.name.clone(), parse_arguments(&c.arguments))
            })
            .collect();
        let stop = stop
            .or_else(|| self.stop.clone())
            .unwrap_or(if tool_calls.is_empty() {
                StopReason::EndTurn
            } else {
                StopReason::ToolUse
            });
        let mut usage = self.usage;
        if !self.input_reported {
            usage.input_tokens = estimate_tokens(request_chars(req));
            usage.cache_read_tokens = 0;
            usage.cache_write_tokens = 0;
        }
        if !self.output_reported {
            let args: usize = self
                .calls
                .iter()
                .map(|c| c.name.len() + c.arguments.len())
                .sum();
            usage.output_tokens = estimate_tokens(self.text.len() + args);
        }
        ChatResponse {
            text: self.text.clone(),
            tool_calls,
            usage,
            usage_estimated: !(self.input_reported && self.output_reported),
            latency_ms: 0,
            stop,
            model: self.model.clone().unwrap_or_else(|| req.model.clone()),
        }
    }
}

/// Tool-call arguments as written: empty → `{}`, JSON → the value, anything else → the raw
/// text as a JSON string (agents report that back to the model as an error).
pub fn parse_arguments(raw: &str) -> Value {
    if raw.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string()))
}

/// A shared [`Partial`]: the streaming client writes, the caller reads.
#[derive(Debug, Clone, Default)]
pub struct Progress(Arc<Mutex<Partial>>);

impl Progress {
    /// An empty progress.
    pub fn new() -> Self {
        Progress::default()
    }

    /// Changes the partial reply.
    pub fn update<R>(&self, f: impl FnOnce(&mut Partial) -> R) -> R {
        // A panic while holding the lock cannot leave a half-written reply worse than a cut
        // one: recover the data.
        let mut g = self.0.lock().unwrap_or_else(|e| e.into_inner());
        f(&mut g)
    }

    /// A copy of the partial reply.
    pub fn snapshot(&self) -> Partial {
        self.update(|p| p.clone())
    }

    /// Starts over (a retried attempt streams the reply again).
    pub fn reset(&self) {
        self.update(|p| *p = Partial::default());
    }
}

/// Calls `model` and waits at most until `deadline`. A reply that arrives in time is returned
/// as it is; at the deadline the call is abandoned and what the server had streamed so far is
/// returned with [`StopReason::Deadline`] (see the module docs for its usage).
///
/// ```
/// use faultbench_llm::{ChatRequest, ChatResponse, ScriptedModel, StopReason, chat_until};
/// use std::time::Duration;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model = ScriptedModel::new("m", vec![ChatResponse::text("hi")]);
/// let req = ChatRequest::new("m", "hello");
/// let soon = tokio::time::Instant::now() + Duration::from_secs(5);
/// assert_eq!(chat_until(&model, &req, soon).await.unwrap().text, "hi");
/// // Too late: nothing was produced, the input is still counted (estimated).
/// let cut = chat_until(&model, &req, tokio::time::Instant::now()).await.unwrap();
/// assert_eq!(cut.stop, StopReason::Deadline);
/// assert!(cut.usage_estimated && cut.usage.input_tokens > 0);
/// # });
/// ```
pub async fn chat_until(
    model: &dyn ChatModel,
    req: &ChatRequest,
    deadline: tokio::time::Instant,
) -> Result<ChatResponse, LlmError> {
    let progress = Progress::new();
    let started = Instant::now();
    if deadline <= tokio::time::Instant::now() {
        return Ok(cut(&progress, req, started));
    }
    match tokio::time::timeout_at(deadline, model.chat_streamed(req, &progress)).await {
        Ok(reply) => reply,
        Err(_) => Ok(cut(&progress, req, started)),
    }
}

fn cut(progress: &Progress, req: &ChatRequest, started: Instant) -> ChatResponse {
    let mut r = progress
        .snapshot()
        .to_response(req, Some(StopReason::Deadline));
    r.latency_ms = started.elapsed().as_millis() as u64;
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_tool_calls_and_estimates() {
        let req = ChatRequest::new("m", "x".repeat(400));
        let mut p = Partial::default();
        p.push_text("Checking r1.");
        p.call(0).name = "ping_pair".into();
        p.push_arguments(0, "{\"host_a\":");
        p.push_arguments(1, "{}");
        let r = p.to_response(&req, Some(StopReason::Deadline));
        assert_eq!(r.stop, StopReason::Deadline);
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(
            r.tool_calls[0].arguments,
            Value::String("{\"host_a\":".into())
        );
        assert_eq!(
            (r.tool_calls[1].id.as_str(), r.tool_calls[1].name.as_str()),
            ("call_1", "")
        );
        assert_eq!(r.usage.input_tokens, 100);
        assert_eq!(r.usage.output_tokens, estimate_tokens(12 + 9 + 10 + 2));
        assert!(r.usage_estimated);
        // Reported usage is used as it is.
        p.usage = Usage {
            input_tokens: 7,
            cache_read_tokens: 3,
            cache_write_tokens: 0,
            output_tokens: 2,
        };
        p.input_reported = true;
        p.output_reported = true;
        let r = p.to_response(&req, None);
        assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (7, 2));
        assert!(!r.usage_estimated);
        assert_eq!(r.stop, StopReason::ToolUse);
    }

    #[test]
    fn replies_are_bounded() {
        let mut p = Partial::default();
        let big = "y".repeat(MAX_REPLY_BYTES / 2);
        assert!(p.push_text(&big) && p.push_text(&big));
        assert!(!p.push_text("more"));
        assert_eq!(p.text.len(), MAX_REPLY_BYTES);
        assert_eq!(p.stop, Some(StopReason::Other("reply_too_large".into())));
        p.call(10_000).name = "x".into();
        assert_eq!(p.calls.len(), 256);
    }
}
