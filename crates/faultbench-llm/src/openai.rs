//! The OpenAI Chat Completions wire format, for any compatible server.
//!
//! `POST {base_url}/chat/completions` with `Authorization: Bearer <key>` (omitted when no key is
//! configured, as local servers need none). Tools go out as `{"type": "function", "function":
//! {name, description, parameters}}`; tool calls come back with their arguments as a JSON
//! string (some servers send an object; both are read). Usage: `prompt_tokens` includes the
//! cached part (`prompt_tokens_details.cached_tokens`), so uncached input = prompt − cached and
//! cache reads = cached; this API bills no cache writes.
//!
//! Every request carries an output cap (`max_completion_tokens` for OpenAI's own endpoint,
//! `max_tokens` for other servers, configurable): the request's own, else the client's
//! ([`crate::DEFAULT_MAX_OUTPUT_TOKENS`] unless configured). Replies are streamed by default
//! (`stream: true` with `stream_options.include_usage`, so the last chunk carries the usage) and
//! assembled by [`crate::openai_stream`]; a server that answers with one JSON body instead is
//! read as well. Missing usage is estimated and marked ([`crate::partial`]).

use crate::client::{ClientBase, WireFormat, client_methods, http_chat_model};
use crate::openai_stream::{apply_chunk, finish_reason, usage_of};
use crate::partial::{Partial, StreamError};
use crate::retry::excerpt;
use crate::streaming::Applied;
use crate::types::{ChatRequest, LlmError, Message};
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
    base: ClientBase,
    api_key: Option<String>,
    max_tokens_field: MaxTokensField,
}

impl OpenAiClient {
    /// A client for `model` at `base_url` (e.g. `https://api.openai.com/v1`).
    pub fn new(
        model: impl Into<String>,
        base_url: impl Into<String>,
        api_key: Option<String>,
    ) -> Result<Self, LlmError> {
        let base = ClientBase::new(
            "openai",
            model.into(),
            base_url.into(),
            "https://api.openai.com/v1",
        )?;
        // The official API wants `max_completion_tokens`; other servers mostly `max_tokens`.
        let max_tokens_field = if base.base_url.contains("api.openai.com") {
            MaxTokensField::MaxCompletionTokens
        } else {
            MaxTokensField::MaxTokens
        };
        Ok(OpenAiClient {
            base,
            api_key: api_key.filter(|k| !k.is_empty()),
            max_tokens_field,
        })
    }

    client_methods!();

    /// Chooses the output-cap field.
    pub fn with_max_tokens_field(mut self, field: MaxTokensField) -> Self {
        self.max_tokens_field = field;
        self
    }

    /// The chat-completions URL.
    pub fn endpoint(&self) -> String {
        format!("{}/chat/completions", self.base.base_url)
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
        let field = match self.max_tokens_field {
            MaxTokensField::MaxCompletionTokens => "max_completion_tokens",
            MaxTokensField::MaxTokens => "max_tokens",
        };
        body[field] = json!(req.max_output_tokens.unwrap_or(self.base.max_output_tokens));
        if req.json_object {
            body["response_format"] = json!({"type": "json_object"});
        }
        if self.base.stream {
            body["stream"] = json!(true);
            body["stream_options"] = json!({"include_usage": true});
        }
        body
    }
}

impl WireFormat for OpenAiClient {
    const NO_ANSWER: &'static str = "`choices`";

    fn base(&self) -> &ClientBase {
        &self.base
    }

    fn request_headers(&self) -> Vec<(String, String)> {
        let mut headers = self.base.headers.clone();
        if let Some(key) = &self.api_key {
            headers.push(("authorization".into(), format!("Bearer {key}")));
        }
        headers
    }

    fn parse_partial(&self, body: &Value) -> Result<Partial, LlmError> {
        let malformed = |detail: String| LlmError::Malformed {
            provider: self.base.provider.clone(),
            detail,
        };
        let choice = body.pointer("/choices/0").ok_or_else(|| {
            malformed(format!("no `choices[0]` in {}", excerpt(&body.to_string())))
        })?;
        let message = choice
            .get("message")
            .ok_or_else(|| malformed("`choices[0]` has no `message`".into()))?;
        let mut p = Partial::default();
        match message.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => p.text = s.clone(),
            // Some servers send content parts: keep the text ones.
            Some(Value::Array(parts)) => {
                p.text = parts
                    .iter()
                    .filter_map(|x| x.get("text").and_then(Value::as_str))
                    .collect::<Vec<_>>()
                    .join(
                        "
",
                    );
            }
            Some(other) => return Err(malformed(format!("unexpected `content`: {other}"))),
        }
        if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
            for (i, c) in calls.iter().enumerate() {
                let call = p.call(i);
                // A call without a name stays nameless: the agent answers it with an
                // unknown-tool error instead of failing the whole reply.
                call.name = c
                    .pointer("/function/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                // llama.cpp and some proxies omit ids; tool results still need one.
                call.id = c.get("id").and_then(Value::as_str).map(str::to_string);
                call.arguments = match c.pointer("/function/arguments") {
                    None | Some(Value::Null) => String::new(),
                    Some(Value::String(raw)) => raw.clone(),
                    Some(other) => other.to_string(),
                };
            }
        }
        let finish = choice.get("finish_reason").and_then(Value::as_str);
        p.stop = Some(finish_reason(finish, !p.calls.is_empty()));
        if let Some(u) = body.get("usage").filter(|u| u.is_object()) {
            usage_of(&mut p, u);
        }
        p.model = body
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string);
        if p.model.is_none() {
            p.model = Some(self.base.model.clone());
        }
        Ok(p)
    }

    fn apply(_: Option<&str>, chunk: &Value, p: &mut Partial) -> Result<Applied, StreamError> {
        let room = apply_chunk(p, chunk)?;
        Ok(Applied {
            done: !room,
            answered: chunk.pointer("/choices/0").is_some(),
        })
    }
}

http_chat_model!(OpenAiClient);
