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

use crate::model::ChatModel;
use crate::retry::{RetryPolicy, excerpt, http_client, post_json};
use crate::types::{ChatRequest, ChatResponse, LlmError, Message, StopReason, ToolCall};
use faultbench_core::Usage;
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
    http: reqwest::Client,
    provider: String,
    model: String,
    base_url: String,
    api_key: String,
    policy: RetryPolicy,
    default_max_tokens: u32,
    prompt_caching: bool,
    headers: Vec<(String, String)>,
}

impl AnthropicClient {
    /// A client for `model` at `base_url` (e.g. `https://api.anthropic.com`).
    pub fn new(
        model: impl Into<String>,
        base_url: impl Into<String>,
        api_key: impl Into<String>,
    ) -> Result<Self, LlmError> {
        let base_url = base_url.into().trim_end_matches('/').to_string();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "base URL `{base_url}` must start with http:// or https:// (e.g. https://api.anthropic.com)"
            )));
        }
        Ok(AnthropicClient {
            http: http_client()?,
            provider: "anthropic".into(),
            model: model.into(),
            base_url,
            api_key: api_key.into(),
            policy: RetryPolicy::default(),
            default_max_tokens: 16_000,
            prompt_caching: true,
            headers: Vec::new(),
        })
    }

    /// Names the provider in errors.
    pub fn named(mut self, provider: impl Into<String>) -> Self {
        self.provider = provider.into();
        self
    }

    /// Sets the retry policy.
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// The `max_tokens` sent when a request sets none (the API requires the field).
    pub fn with_default_max_tokens(mut self, max: u32) -> Self {
        self.default_max_tokens = max;
        self
    }

    /// Turns prompt-cache breakpoints on or off.
    pub fn with_prompt_caching(mut self, on: bool) -> Self {
        self.prompt_caching = on;
        self
    }

    /// Adds a header sent with every request (e.g. `anthropic-beta`).
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The messages URL. A base URL that already ends in `/v1` is accepted as well.
    pub fn endpoint(&self) -> String {
        if self.base_url.ends_with("/v1") {
            format!("{}/messages", self.base_url)
        } else {
            format!("{}/v1/messages", self.base_url)
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
            "max_tokens": req.max_output_tokens.unwrap_or(self.default_max_tokens),
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
        body
    }

    /// Reads a Messages API response body.
    pub fn parse_response(&self, body: &Value) -> Result<ChatResponse, LlmError> {
        let malformed = |detail: String| LlmError::Malformed {
            provider: self.provider.clone(),
            detail,
        };
        let blocks = body
            .get("content")
            .and_then(Value::as_array)
            .ok_or_else(|| {
                malformed(format!(
                    "no `content` array in {}",
                    excerpt(&body.to_string())
                ))
            })?;
        let mut texts = Vec::new();
        let mut tool_calls = Vec::new();
        for (i, b) in blocks.iter().enumerate() {
            match b.get("type").and_then(Value::as_str) {
                Some("text") => texts.push(b.get("text").and_then(Value::as_str).unwrap_or("")),
                Some("tool_use") => {
                    let name = b
                        .get("name")
                        .and_then(Value::as_str)
                        .ok_or_else(|| malformed(format!("tool_use block {i} has no name")))?;
                    let id = b.get("id").and_then(Value::as_str).unwrap_or_default();
                    let id = if id.is_empty() {
                        format!("toolu_{i}")
                    } else {
                        id.to_string()
                    };
                    let input = b.get("input").cloned().unwrap_or_else(|| json!({}));
                    tool_calls.push(ToolCall::new(id, name, input));
                }
                // Thinking and other block kinds carry nothing the agent needs.
                _ => {}
            }
        }
        let stop = match body.get("stop_reason").and_then(Value::as_str) {
            Some("end_turn") | Some("stop_sequence") | None => StopReason::EndTurn,
            Some("tool_use") => StopReason::ToolUse,
            Some("max_tokens") => StopReason::MaxTokens,
            Some("refusal") => StopReason::ContentFilter,
            Some(other) => StopReason::Other(other.to_string()),
        };
        let n = |k: &str| {
            body.get("usage")
                .and_then(|u| u.get(k))
                .and_then(Value::as_u64)
                .unwrap_or(0)
        };
        Ok(ChatResponse {
            text: texts.join("\n"),
            tool_calls,
            usage: Usage {
                input_tokens: n("input_tokens"),
                cache_read_tokens: n("cache_read_input_tokens"),
                cache_write_tokens: n("cache_creation_input_tokens"),
                output_tokens: n("output_tokens"),
            },
            latency_ms: 0,
            stop,
            model: body
                .get("model")
                .and_then(Value::as_str)
                .unwrap_or(&self.model)
                .to_string(),
        })
    }
}

#[async_trait::async_trait]
impl ChatModel for AnthropicClient {
    fn model(&self) -> &str {
        &self.model
    }

    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let mut headers = self.headers.clone();
        headers.push(("x-api-key".into(), self.api_key.clone()));
        headers.push(("anthropic-version".into(), ANTHROPIC_VERSION.into()));
        let body = self.request_body(req);
        let ok = post_json(
            &self.http,
            &self.provider,
            &self.endpoint(),
            &headers,
            &body,
            &self.policy,
        )
        .await?;
        let mut resp = self.parse_response(&ok.body)?;
        resp.latency_ms = ok.elapsed.as_millis() as u64;
        Ok(resp)
    }
}
