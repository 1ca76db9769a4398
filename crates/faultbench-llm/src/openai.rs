//! The OpenAI Chat Completions wire format, for any compatible server.
//!
//! `POST {base_url}/chat/completions` with `Authorization: Bearer <key>` (omitted when no key is
//! configured, as local servers need none). Tools go out as `{"type": "function", "function":
//! {name, description, parameters}}`; tool calls come back with their arguments as a JSON
//! string (some servers send an object; both are read). Usage: `prompt_tokens` includes the
//! cached part (`prompt_tokens_details.cached_tokens`), so uncached input = prompt − cached and
//! cache reads = cached; this API bills no cache writes.

use crate::model::ChatModel;
use crate::retry::{RetryPolicy, excerpt, http_client, post_json};
use crate::types::{ChatRequest, ChatResponse, LlmError, Message, StopReason, ToolCall};
use faultbench_core::Usage;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// Which request field caps the output length. OpenAI's reasoning models (gpt-5, o-series)
/// only accept `max_completion_tokens`; many local servers only know `max_tokens`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    /// `max_completion_tokens` (OpenAI today).
    #[default]
    MaxCompletionTokens,
    /// `max_tokens` (vLLM, Ollama, llama.cpp server, older models).
    MaxTokens,
}

/// A client for an OpenAI-compatible server.
///
/// ```
/// use faultbench_llm::{ChatModel, OpenAiClient};
///
/// // Ollama's OpenAI-compatible endpoint: no key needed.
/// let ollama = OpenAiClient::new("llama3.1:8b", "http://localhost:11434/v1", None).unwrap();
/// assert_eq!(ollama.model(), "llama3.1:8b");
/// assert_eq!(ollama.endpoint(), "http://localhost:11434/v1/chat/completions");
/// ```
pub struct OpenAiClient {
    http: reqwest::Client,
    provider: String,
    model: String,
    base_url: String,
    api_key: Option<String>,
    policy: RetryPolicy,
    max_tokens_field: MaxTokensField,
    headers: Vec<(String, String)>,
}

impl OpenAiClient {
    /// A client for `model` at `base_url` (e.g. `https://api.openai.com/v1`).
    pub fn new(
        model: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<String>,
    ) -> Result<Self, LlmError> {
        let base_url = base_url.into().trim_end_matches('/').to_string();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "base URL `{base_url}` must start with http:// or https:// (e.g. https://api.openai.com/v1)"
            )));
        }
        // The official API wants `max_completion_tokens`; other servers mostly `max_tokens`.
        let max_tokens_field = if base_url.contains("api.openai.com") {
            MaxTokensField::MaxCompletionTokens
        } else {
            MaxTokensField::MaxTokens
        };
        Ok(OpenAiClient {
            http: http_client()?,
            provider: "openai".to_string(),
            model: model.into(),
            base_url,
            api_key: api_key.filter(|k| !k.is_empty()),
            policy: RetryPolicy::default(),
            max_tokens_field,
            headers: Vec::new(),
        })
    }

    /// Names the provider in errors (e.g. `vllm`).
    pub fn named(mut self, provider: impl Into<String>) -> Self {
        self.provider = provider.into();
        self
    }

    /// Sets the retry policy.
    pub fn with_retry(mut self, policy: RetryPolicy) -> Self {
        self.policy = policy;
        self
    }

    /// Chooses the output-cap field.
    pub fn with_max_tokens_field(mut self, field: MaxTokensField) -> Self {
        self.max_tokens_field = field;
        self
    }

    /// Adds a header sent with every request (e.g. `OpenAI-Organization`).
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The chat-completions URL.
    pub fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }

    /// The request body for `req` (public so that tests and debugging can see the wire form).
    pub fn request_body(&self, req: &ChatRequest) -> Value {
        let mut messages = Vec::new();
        if let Some(system) = &req.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for m in &req.messages {
            messages.push(match m {
                Message::User(text) => json!({"role": "user", "content": text}),
                Message::Assistant { text, tool_calls } => {
                    let mut msg = json!({"role": "assistant", "content": text});
                    if !tool_calls.is_empty() {
                        msg["tool_calls"] = tool_calls
                            .iter()
                            .map(|c| {
                                let args = match &c.arguments {
                                    Value::String(raw) => raw.clone(),
                                    other => other.to_string(),
                                };
                                json!({"id": c.id, "type": "function",
                                       "function": {"name": c.name, "arguments": args}})
                            })
                            .collect();
                    }
                    msg
                }
                Message::ToolResult {
                    call_id,
                    content,
                    is_error,
                } => {
                    // The format has no error flag: say it in the text.
                    let content = if *is_error && !content.starts_with("ERROR") {
                        format!("ERROR: {content}")
                    } else {
                        content.clone()
                    };
                    json!({"role": "tool", "tool_call_id": call_id, "content": content})
                }
            });
        }
        let mut body = json!({"model": req.model, "messages": messages});
        if !req.tools.is_empty() {
            body["tools"] = req
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                        "name": t.name, "description": t.description, "parameters": t.parameters}})
                })
                .collect();
        }
        if let Some(max) = req.max_output_tokens {
            let field = match self.max_tokens_field {
                MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
                MaxTokensField::MaxTokens => "max_tokens",
            };
            body[field] = json!(max);
        }
        if req.json_object {
            body["response_format"] = json!({"type": "json_object"});
        }
        body
    }

    /// Reads a chat-completions response body.
    pub fn parse_response(&self, body: &Value) -> Result<ChatResponse, LlmError> {
        let malformed = |detail: String| LlmError::Malformed {
            provider: self.provider.clone(),
            detail,
        };
        let choice = body.pointer("/choices/0").ok_or_else(|| {
            malformed(format!("no `choices[0]` in {}", excerpt(&body.to_string())))
        })?;
        let message = choice
            .get("message")
            .ok_or_else(|| malformed("`choices[0]` has no `message`".into()))?;
        let text = match message.get("content") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s.clone(),
            // Some servers send content parts: keep the text ones.
            Some(Value::Array(parts)) => parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
            Some(other) => return Err(malformed(format!("unexpected `content`: {other}"))),
        };
        let mut tool_calls = Vec::new();
        if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
            for (i, c) in calls.iter().enumerate() {
                let name = c
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .ok_or_else(|| malformed(format!("tool call {i} has no function name")))?;
                let arguments = match c.pointer("/function/arguments") {
                    None | Some(Value::Null) => json!({}),
                    Some(Value::String(raw)) if raw.trim().is_empty() => json!({}),
                    Some(Value::String(raw)) => {
                        serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.clone()))
                    }
                    Some(other) => other.clone(),
                };
                // llama.cpp and some proxies omit ids; tool results still need one.
                let id = c
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("call_{i}"));
                tool_calls.push(ToolCall::new(id, name, arguments));
            }
        }
        let stop = match choice.get("finish_reason").and_then(Value::as_str) {
            Some("stop") | None => {
                if tool_calls.is_empty() {
                    StopReason::EndTurn
                } else {
                    StopReason::ToolUse
                }
            }
            Some("tool_calls") | Some("function_call") => StopReason::ToolUse,
            Some("length") => StopReason::MaxTokens,
            Some("content_filter") => StopReason::ContentFilter,
            Some(other) => StopReason::Other(other.to_string()),
        };
        let n = |p: &str| body.pointer(p).and_then(Value::as_u64).unwrap_or(0);
        let prompt = n("/usage/prompt_tokens");
        let cached = n("/usage/prompt_tokens_details/cached_tokens").min(prompt);
        let usage = Usage {
            input_tokens: prompt - cached,
            cache_read_tokens: cached,
            cache_write_tokens: 0,
            output_tokens: n("/usage/completion_tokens"),
        };
        Ok(ChatResponse {
            text,
            tool_calls,
            usage,
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
impl ChatModel for OpenAiClient {
    fn model(&self) -> &str {
        &self.model
    }

    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let mut headers = self.headers.clone();
        if let Some(key) = &self.api_key {
            headers.push(("authorization".into(), format!("Bearer {key}")));
        }
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
