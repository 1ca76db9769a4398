//! Provider-neutral chat types: a request (system prompt, messages, tools), a response (text,
//! tool calls, usage) and the error every client returns.
//!
//! The conversation model is the intersection of the OpenAI Chat Completions and Anthropic
//! Messages APIs: user text, assistant text with tool calls, and tool results answering those
//! calls by id. Each client translates it to its wire format.

use faultbench_core::Usage;
use faultbench_core::toolbox::ToolSpec;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool the model may call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Tool name (`ping_pair`).
    pub name: String,
    /// What it does, shown to the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: Value,
}

impl ToolDef {
    /// A tool definition.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        ToolDef {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}

impl From<&ToolSpec> for ToolDef {
    fn from(spec: &ToolSpec) -> Self {
        // Strict OpenAI-compatible servers reject a `$schema` key inside `parameters`.
        let mut parameters = spec.input_schema.clone();
        if let Some(obj) = parameters.as_object_mut() {
            obj.remove("$schema");
        }
        ToolDef::new(spec.name.clone(), spec.description.clone(), parameters)
    }
}

/// A tool call the model asked for.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// Provider-assigned id, echoed back in the [`Message::ToolResult`].
    pub id: String,
    /// Tool name.
    pub name: String,
    /// Arguments. Normally a JSON object; when the model wrote arguments that are not valid
    /// JSON, the raw text as a JSON string (agents report that back as an error).
    pub arguments: Value,
}

impl ToolCall {
    /// A tool call.
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: Value) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments,
        }
    }
}

/// One message of the conversation (the system prompt lives in [`ChatRequest::system`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Message {
    /// Text from the user.
    User(String),
    /// An earlier model reply: its text and the tool calls it made.
    Assistant {
        /// Text of the reply (may be empty when it only called tools).
        text: String,
        /// Tool calls of the reply.
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call.
    ToolResult {
        /// The [`ToolCall::id`] it answers.
        call_id: String,
        /// The tool's output as the model should see it.
        content: String,
        /// The call failed (unknown tool, bad arguments, command error).
        is_error: bool,
    },
}

impl Message {
    /// A user message.
    pub fn user(text: impl Into<String>) -> Self {
        Message::User(text.into())
    }

    /// The assistant message that records `response` in the history.
    pub fn from_response(response: &ChatResponse) -> Self {
        Message::Assistant {
            text: response.text.clone(),
            tool_calls: response.tool_calls.clone(),
        }
    }

    /// A tool result.
    pub fn tool_result(
        call_id: impl Into<String>,
        content: impl Into<String>,
        is_error: bool,
    ) -> Self {
        Message::ToolResult {
            call_id: call_id.into(),
            content: content.into(),
            is_error,
        }
    }
}

/// A chat request.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// Model name as the provider knows it (`gpt-5`, `claude-sonnet-4-6`, `llama3.1:8b`).
    pub model: String,
    /// System prompt.
    pub system: Option<String>,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// Tools the model may call (empty: none).
    pub tools: Vec<ToolDef>,
    /// Cap on output tokens. `None`: the client's configured cap
    /// ([`crate::ChatModel::max_output_tokens`], [`crate::DEFAULT_MAX_OUTPUT_TOKENS`] unless
    /// configured) — the HTTP clients never send a request without one.
    pub max_output_tokens: Option<u32>,
    /// Ask for a single JSON object as the answer where the provider supports it (OpenAI
    /// `response_format`); otherwise an instruction is added to the system prompt.
    pub json_object: bool,
}

impl ChatRequest {
    /// A request for `model` with one user message.
    pub fn new(model: impl Into<String>, user: impl Into<String>) -> Self {
        ChatRequest {
            model: model.into(),
            messages: vec![Message::user(user)],
            ..Default::default()
        }
    }

    /// Sets the system prompt.
    pub fn with_system(mut self, system: impl Into<String>) -> Self {
        self.system = Some(system.into());
        self
    }

    /// Sets the tools.
    pub fn with_tools(mut self, tools: Vec<ToolDef>) -> Self {
        self.tools = tools;
        self
    }

    /// Asks for a JSON object answer.
    pub fn json(mut self) -> Self {
        self.json_object = true;
        self
    }
}

/// Why the model stopped.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A finished answer.
    #[default]
    EndTurn,
    /// It wants tool results.
    ToolUse,
    /// The output-token cap cut it off.
    MaxTokens,
    /// A provider filter stopped it.
    ContentFilter,
    /// The caller stopped waiting (a wall-clock cap): the reply holds what had streamed in.
    Deadline,
    /// Anything else, as the provider named it.
    Other(String),
}

/// A model reply.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// Text of the reply (text blocks joined by newlines).
    pub text: String,
    /// Tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Tokens billed for this call.
    pub usage: Usage,
    /// Some of `usage` is estimated from text (the server reported none, or the reply was cut
    /// before its usage arrived); see [`crate::partial`].
    #[serde(default)]
    pub usage_estimated: bool,
    /// Wall time of the call including retries, in milliseconds.
    pub latency_ms: u64,
    /// Why it stopped.
    pub stop: StopReason,
    /// The model that answered (as the provider reports it).
    pub model: String,
}

impl ChatResponse {
    /// A plain text reply (handy for scripted models).
    pub fn text(text: impl Into<String>) -> Self {
        ChatResponse {
            text: text.into(),
            ..Default::default()
        }
    }

    /// A reply that calls tools.
    pub fn tool_calls(text: impl Into<String>, calls: Vec<ToolCall>) -> Self {
        ChatResponse {
            text: text.into(),
            tool_calls: calls,
            stop: StopReason::ToolUse,
            ..Default::default()
        }
    }

    /// Sets the usage.
    pub fn with_usage(mut self, usage: Usage) -> Self {
        self.usage = usage;
        self
    }

    /// The reply was cut by the caller's deadline ([`crate::chat_until`]).
    pub fn is_cut(&self) -> bool {
        self.stop == StopReason::Deadline
    }
}

/// Why a chat call failed. Every variant says which provider and what to do about it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// Configuration problem (missing key, unknown provider, bad config file).
    #[error("LLM configuration: {0}")]
    Config(String),
    /// The provider refused the request (4xx other than 408/429): retrying will not help.
    #[error("{provider} rejected the request (HTTP {status}): {message}")]
    Rejected {
        /// Provider name.
        provider: String,
        /// HTTP status.
        status: u16,
        /// The provider's error message.
        message: String,
    },
    /// Retryable failures (429, 5xx, timeouts, connection errors) went on for every attempt.
    #[error("{provider} kept failing: {attempts} attempts in {elapsed_ms} ms; last error: {last}")]
    GaveUp {
        /// Provider name.
        provider: String,
        /// Attempts made.
        attempts: u32,
        /// Time spent, in milliseconds.
        elapsed_ms: u64,
        /// The last failure.
        last: String,
    },
    /// The provider answered 200 with a body this client cannot read.
    #[error("{provider} sent a malformed response: {detail}")]
    Malformed {
        /// Provider name.
        provider: String,
        /// What was wrong, with a short excerpt of the body.
        detail: String,
    },
    /// A scripted model ran out of responses.
    #[error("scripted model `{0}` has no response left")]
    ScriptExhausted(String),
}

impl LlmError {
    /// Whether the error came from the provider being unavailable (as opposed to a bad request
    /// or configuration).
    pub fn is_transient(&self) -> bool {
        matches!(self, LlmError::GaveUp { .. })
    }
}
