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
//! Every request they send carries an output cap ([`DEFAULT_MAX_OUTPUT_TOKENS`] unless the
//! request or the configuration sets another), and replies are streamed: [`chat_until`] stops
//! waiting at a deadline and keeps what the server had produced, with its usage (reported, or
//! estimated and marked so) — see [`partial`].
//! Usage is normalised to [`Usage`] (uncached input, cache read, cache write, output) and a
//! [`PriceTable`] turns it into dollars. [`LlmOptions`] picks the provider for a model name from
//! environment variables (`OPENAI_API_KEY`, `OPENAI_BASE_URL`, `ANTHROPIC_API_KEY`,
//! `ANTHROPIC_BASE_URL`) and an optional TOML file.
//!
//! ```no_run
//! use faultbench_llm::{ChatModel, ChatRequest, LlmOptions};
//!
//! # async fn demo() -> Result<(), faultbench_llm::LlmError> {
//! let config = LlmOptions::discover(None)?;
//! let model = config.connect("gpt-5")?; // OPENAI_API_KEY from the environment
//! let reply = model.chat(&ChatRequest::new(model.model(), "Say hi")).await?;
//! let cost = config.prices()?.cost(&reply.model, &reply.usage);
//! println!("{} ({:?} USD)", reply.text, cost);
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod anthropic;
pub mod anthropic_stream;
mod client;
pub mod config;
pub mod model;
pub mod openai;
pub mod openai_stream;
pub mod partial;
pub mod price;
pub mod retry;
pub mod scripted;
pub mod sse;
mod streaming;
#[cfg(feature = "test-support")]
pub mod testserver;
pub mod types;

/// The output-token cap of one model call when neither the request nor the LLM configuration
/// sets one. Without a cap a small local model can generate until the run's wall clock.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u32 = 4096;

pub use anthropic::AnthropicClient;
#[allow(deprecated)]
pub use config::{
    LlmConfig, LlmOptions, ModelRoute, ProviderConfig, ProviderKind, ProviderOptions, Resolved,
};
pub use faultbench_core::Usage;
pub use model::ChatModel;
pub use openai::{MaxTokensField, OpenAiClient};
pub use partial::{Partial, Progress, StreamError, chat_until};
pub use price::{Price, PriceTable};
pub use retry::RetryPolicy;
pub use scripted::ScriptedModel;
pub use types::{ChatRequest, ChatResponse, LlmError, Message, StopReason, ToolCall, ToolDef};
