//! # faultbench-llm
//!
//! Chat models for faultbench's agents and judges, behind one small trait, [`ChatModel`]:
//!
//! - [`OpenAiClient`]: the OpenAI Chat Completions wire format with tool calling, for any base
//!   URL (OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM);
//! - [`AnthropicClient`]: the Anthropic Messages API with tool use and prompt caching;
//! - [`ScriptedModel`]: canned replies for tests, recording every request.
//!
//! Both HTTP clients retry 429, 5xx and timeouts with exponential backoff, honour
//! `Retry-After`, and give up after a bounded number of attempts with [`LlmError::GaveUp`].
//! Usage is normalised to [`faultbench_core::Usage`] (uncached input, cache read, cache write,
//! output) and a [`PriceTable`] turns it into dollars. [`LlmConfig`] picks the provider for a
//! model name from environment variables (`OPENAI_API_KEY`, `OPENAI_BASE_URL`,
//! `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`) and an optional TOML file.

#![warn(missing_docs)]

pub mod model;
pub mod scripted;
pub mod types;

pub use faultbench_core::Usage;
pub use model::ChatModel;
pub use scripted::ScriptedModel;
pub use types::{ChatRequest, ChatResponse, LlmError, Message, StopReason, ToolCall, ToolDef};
