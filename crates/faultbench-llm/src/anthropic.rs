//! The Anthropic Messages API with tool use and prompt caching.
//!
//! `POST {base_url}/v1/messages` with `x-api-key` and `anthropic-version: 2023-06-01`. The
//! system prompt is a top-level field; tool calls are `tool_use` content blocks; tool results
//! are `tool_result` blocks inside the next user message (consecutive results are merged into
//! one message, as the API requires). With prompt caching on (the default), cache breakpoints
//! go on the last tool definition, the system prompt and the newest message, so each turn of an
//! agent loop reads the previous turns from the cache. Usage is reported by the API already
//! split: `input_tokens` (uncached), `cache_read_input_tokens`, `cache_creation_input_tokens`,
//! `output_tokens`.
//!
//! The API requires `max_tokens`: the request's cap, else the client's
//! ([`crate::DEFAULT_MAX_OUTPUT_TOKENS`] unless configured). Replies are streamed by default
//! (`stream: true`, assembled by [`crate::anthropic_stream`]), so that a call cut by a deadline
//! keeps its text; input usage arrives first (`message_start`), output usage last.

use crate::anthropic_stream::{apply_event, stop_reason, usage_of};
use crate::client::{ClientBase, WireFormat, client_methods, http_chat_model};
use crate::partial::{Partial, StreamError};
use crate::retry::excerpt;
use crate::streaming::Applied;
use crate::types::{ChatRequest, LlmError, Message};
use serde_json::{Value, json};

/// The API version header this client speaks.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// A client for the Anthropic Messages API.
///
/// ```
/// use faultbench_llm::{AnthropicClient, ChatModel};
///
/// let claude = AnthropicClient::new("claude-sonnet-4-6", "https://api.anthropic.com", "sk-ant-…").unwrap();
/// assert_eq!(claude.endpoint(), "https://api.anthropic.com/v1/messages");
/// ```
pub struct AnthropicClient {
    base: ClientBase,
    api_key: String,
    prompt_caching: bool,
}

impl AnthropicClient {
    /// A client for `model` at `base_url` (e.g. `https://api.anthropic.com`).
    pub fn new(
        model: impl Into<String>,
        base_url: impl Into<String>,
        api_key: impl Into<String>,
    ) -> Result<Self, LlmError> {
        Ok(AnthropicClient {
            base: ClientBase::new(
                "anthropic",
                model.into(),
                base_url.into(),
                "https://api.anthropic.com",
            )?,
            api_key: api_key.into(),
            prompt_caching: true,
        })
    }

    client_methods!();

    /// Turns prompt-cache breakpoints on or off.
    pub fn with_prompt_caching(mut self, on: bool) -> Self {
        self.prompt_caching = on;
        self
    }

    /// The messages URL. A base URL that already ends in `/v1` is accepted as well.
    pub fn endpoint(&self) -> String {
        if self.base.base_url.ends_with("/v1") {
            format!("{}/messages", self.base.base_url)
        } else {
            format!("{}/v1/messages", self.base.base_url)
        }
    }

    /// The request body for `req`.
    pub fn request_body(&self, req: &ChatRequest) -> Value {
        let cache = || json!({"type": "ephemeral"});
        // Turn the history into alternating user/assistant messages of content blocks.
        let mut messages: Vec<(String, Vec<Value>)> = Vec::new();
        let mut push = |role: &str, block: Value| match messages.last_mut() {
            Some((r, blocks)) if r == role => blocks.push(block),
            _ => messages.push((role.to_string(), vec![block])),
        };
        for m in &req.messages {
            match m {
                Message::User(text) => push("user", json!({"type": "text", "text": text})),
                Message::Assistant { text, tool_calls } => {
                    if !text.trim().is_empty() || tool_calls.is_empty() {
                        // The API rejects empty text blocks.
                        let text = if text.trim().is_empty() {
                            "(no text)"
                        } else {
                            text
                        };
                        push("assistant", json!({"type": "text", "text": text}));
                    }
                    for c in tool_calls {
                        let input = if c.arguments.is_object() {
                            c.arguments.clone()
                        } else {
                            json!({})
                        };
                        push(
                            "assistant",
                            json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                        );
                    }
                }
                Message::ToolResult {
                    call_id,
                    content,
                    is_error,
                } => push(
                    "user",
                    json!({"type": "tool_result", "tool_use_id": call_id,
                           "content": content, "is_error": is_error}),
                ),
            }
        }
        if let Some(last) = messages
            .last_mut()
            .and_then(|(_, b)| b.last_mut())
            .filter(|_| self.prompt_caching)
        {
            last["cache_control"] = cache();
        }
        let mut body = json!({
            "model": req.model,
            "max_tokens": req.max_output_tokens.unwrap_or(self.base.max_output_tokens),
            "messages": messages.into_iter()
                .map(|(role, content)| json!({"role": role, "content": content}))
                .collect::<Vec<_>>(),
        });
        let mut system = req.system.clone().unwrap_or_default();
        if req.json_object {
            // No JSON mode in this API: ask for it in words.
            if !system.is_empty() {
                system.push_str("\n\n");
            }
            system.push_str("Answer with a single JSON object and nothing else.");
        }
        if !system.is_empty() {
            let mut block = json!({"type": "text", "text": system});
            if self.prompt_caching {
                block["cache_control"] = cache();
            }
            body["system"] = json!([block]);
        }
        if !req.tools.is_empty() {
            let mut tools: Vec<Value> = req
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
                .collect();
            if let Some(last) = tools.last_mut().filter(|_| self.prompt_caching) {
                last["cache_control"] = cache();
            }
            body["tools"] = json!(tools);
        }
        if self.base.stream {
            body["stream"] = json!(true);
        }
        body
    }
}

impl WireFormat for AnthropicClient {
    const NO_ANSWER: &'static str = "`message_start`";

    fn base(&self) -> &ClientBase {
        &self.base
    }

    fn request_headers(&self) -> Vec<(String, String)> {
        let mut headers = self.base.headers.clone();
        headers.push(("x-api-key".into(), self.api_key.clone()));
        headers.push(("anthropic-version".into(), ANTHROPIC_VERSION.into()));
        headers
    }

    fn parse_partial(&self, body: &Value) -> Result<Partial, LlmError> {
        let blocks = body
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| LlmError::Malformed {
                provider: self.base.provider.clone(),
                detail: format!("no `content` array in {}", excerpt(&body.to_string())),
            })?;
        let mut p = Partial::default();
        let mut texts = Vec::new();
        for b in blocks {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => texts.push(b.get("text").and_then(Value::as_str).unwrap_or("")),
                Some("tool_use") => {
                    let i = p.calls.len();
                    let call = p.call(i);
                    // A nameless call is answered with an unknown-tool error by the agent.
                    call.name = b
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .into();
                    call.id = b
                        .get("id")
                        .and_then(Value::as_str)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string)
                        .or_else(|| Some(format!("toolu_{i}")));
                    call.arguments = b.get("input").map(Value::to_string).unwrap_or_default();
                }
                // Thinking and other block kinds carry nothing the agent needs.
                _ => {}
            }
        }
        p.text = texts.join(
            "
",
        );
        p.stop = Some(stop_reason(body.get("stop_reason").and_then(Value::as_str)));
        if let Some(u) = body.get("usage").filter(|u| u.is_object()) {
            usage_of(&mut p, u);
        }
        p.model = Some(
            body.get("model")
                .and_then(Value::as_str)
                .unwrap_or(&self.base.model)
                .to_string(),
        );
        Ok(p)
    }

    fn apply(event: Option<&str>, data: &Value, p: &mut Partial) -> Result<Applied, StreamError> {
        let kind = event
            .or_else(|| data.get("type").and_then(Value::as_str))
            .unwrap_or_default();
        Ok(Applied {
            done: apply_event(p, kind, data)?,
            answered: kind == "message_start",
        })
    }
}

http_chat_model!(AnthropicClient);
