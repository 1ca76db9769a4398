//! The [`ChatModel`] trait every client implements.

use crate::partial::Progress;
use crate::types::{ChatRequest, ChatResponse, LlmError};
use std::sync::Arc;

/// A chat model with tool calling.
///
/// Implementations: [`crate::OpenAiClient`] (any OpenAI-compatible server),
/// [`crate::AnthropicClient`] and [`crate::ScriptedModel`] for tests. A request carries its own
/// model name; [`ChatModel::model`] is the name the client was built for, which callers put in
/// requests and reports.
///
/// ```
/// use faultbench_llm::{ChatModel, ChatRequest, ChatResponse, LlmError};
///
/// /// Answers every question with "42".
/// struct DeepThought;
/// #[async_trait::async_trait]
/// impl ChatModel for DeepThought {
///     fn model(&self) -> &str { "deep-thought" }
///     async fn chat(&self, _req: &ChatRequest) -> Result<ChatResponse, LlmError> {
///         Ok(ChatResponse::text("42"))
///     }
/// }
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let model: Box<dyn ChatModel> = Box::new(DeepThought);
/// let reply = model.chat(&ChatRequest::new(model.model(), "The answer?")).await.unwrap();
/// assert_eq!(reply.text, "42");
/// # });
/// ```
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// The model name requests should carry.
    fn model(&self) -> &str;

    /// The output-token cap sent when a request sets none (`None`: the client sends no cap of
    /// its own, as scripted models).
    fn max_output_tokens(&self) -> Option<u32> {
        None
    }

    /// Sends one request and returns the reply, retrying transient failures internally.
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError>;

    /// Like [`ChatModel::chat`], writing the reply into `progress` as it streams in, so that a
    /// caller that stops waiting keeps what was produced ([`crate::chat_until`]). The default
    /// streams nothing: a cut call keeps no text.
    async fn chat_streamed(
        &self,
        req: &ChatRequest,
        progress: &Progress,
    ) -> Result<ChatResponse, LlmError> {
        let _ = progress;
        self.chat(req).await
    }
}

#[async_trait::async_trait]
impl<T: ChatModel + ?Sized> ChatModel for Arc<T> {
    fn model(&self) -> &str {
        (**self).model()
    }
    fn max_output_tokens(&self) -> Option<u32> {
        (**self).max_output_tokens()
    }
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        (**self).chat(req).await
    }
    async fn chat_streamed(
        &self,
        req: &ChatRequest,
        progress: &Progress,
    ) -> Result<ChatResponse, LlmError> {
        (**self).chat_streamed(req, progress).await
    }
}

#[async_trait::async_trait]
impl<T: ChatModel + ?Sized> ChatModel for Box<T> {
    fn model(&self) -> &str {
        (**self).model()
    }
    fn max_output_tokens(&self) -> Option<u32> {
        (**self).max_output_tokens()
    }
    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        (**self).chat(req).await
    }
    async fn chat_streamed(
        &self,
        req: &ChatRequest,
        progress: &Progress,
    ) -> Result<ChatResponse, LlmError> {
        (**self).chat_streamed(req, progress).await
    }
}
