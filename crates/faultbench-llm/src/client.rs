//! What every HTTP chat client holds and how it is configured, written once for
//! [`crate::OpenAiClient`] and [`crate::AnthropicClient`].
//!
//! The wire formats differ (request bodies, stream events, auth headers); the rest does not:
//! a validated base URL, the model, the provider name used in errors, the retry policy, the
//! output cap sent when a request sets none, streaming on or off and extra headers. Each
//! client keeps that in a [`ClientBase`] and gets the same builder methods from
//! [`client_methods!`], so the public methods stay on the client types themselves. The
//! call itself (headers, body, retries, streaming) is [`chat_over_http`] for any
//! [`WireFormat`], which is all a client implements besides its request body.

use crate::DEFAULT_MAX_OUTPUT_TOKENS;
use crate::partial::{Partial, Progress, StreamError};
use crate::retry::{RetryPolicy, http_client};
use crate::streaming::{Applied, HttpCall, call};
use crate::types::{ChatRequest, ChatResponse, LlmError};
use serde_json::Value;

/// The provider-independent part of an HTTP chat client.
pub(crate) struct ClientBase {
    pub http: reqwest::Client,
    /// Names the provider in errors (`openai`, `vllm`, `anthropic`, …).
    pub provider: String,
    pub model: String,
    /// Without a trailing `/`.
    pub base_url: String,
    pub policy: RetryPolicy,
    /// Sent when a request sets no cap (at least 1).
    pub max_output_tokens: u32,
    pub stream: bool,
    /// Extra headers sent with every request.
    pub headers: Vec<(String, String)>,
}

impl ClientBase {
    /// A client base for `model` at `base_url`; `example` is a working base URL the error
    /// message shows when `base_url` is not HTTP(S).
    pub fn new(
        provider: &str,
        model: String,
        base_url: String,
        example: &str,
    ) -> Result<Self, LlmError> {
        let base_url = base_url.trim_end_matches('/').to_string();
        if !(base_url.starts_with("http://") || base_url.starts_with("https://")) {
            return Err(LlmError::Config(format!(
                "base URL `{base_url}` must start with http:// or https:// (e.g. {example})"
            )));
        }
        Ok(ClientBase {
            http: http_client()?,
            provider: provider.to_string(),
            model,
            base_url,
            policy: RetryPolicy::default(),
            max_output_tokens: DEFAULT_MAX_OUTPUT_TOKENS,
            stream: true,
            headers: Vec::new(),
        })
    }
}

/// What a wire format adds to a [`ClientBase`]: where to post, how to authenticate, the
/// request body, and how to read a JSON reply and a streamed event.
pub(crate) trait WireFormat: Sync {
    /// What a stream that carried no reply lacked (for the error message).
    const NO_ANSWER: &'static str;
    fn base(&self) -> &ClientBase;
    /// The extra headers plus the format's authentication headers.
    fn request_headers(&self) -> Vec<(String, String)>;
    /// A whole JSON reply (a server that ignored `stream: true`) as a [`Partial`]: usage it
    /// lacks is then estimated by [`Partial::to_response`] against the request.
    fn parse_partial(&self, body: &Value) -> Result<Partial, LlmError>;
    /// One streamed event (`event`: its SSE event name, if any).
    fn apply(event: Option<&str>, data: &Value, p: &mut Partial) -> Result<Applied, StreamError>;
}

/// One model call of a client in wire format `W` (posting `body` to `endpoint`), streamed into
/// `progress`; a reply that names no model gets the client's.
pub(crate) async fn chat_over_http<W: WireFormat>(
    client: &W,
    endpoint: String,
    body: Value,
    req: &ChatRequest,
    progress: &Progress,
) -> Result<ChatResponse, LlmError> {
    let base = client.base();
    let headers = client.request_headers();
    let c = HttpCall {
        http: &base.http,
        provider: &base.provider,
        endpoint: &endpoint,
        headers: &headers,
        body: &body,
        policy: &base.policy,
    };
    let mut reply = call(
        &c,
        req,
        progress,
        |j| client.parse_partial(j),
        W::apply,
        W::NO_ANSWER,
    )
    .await?;
    if reply.model.is_empty() {
        reply.model.clone_from(&base.model);
    }
    Ok(reply)
}

/// [`crate::ChatModel`] for a client type that implements [`WireFormat`] and has inherent
/// `endpoint()` and `request_body(req)` methods.
macro_rules! http_chat_model {
    ($client:ty) => {
        #[async_trait::async_trait]
        impl $crate::model::ChatModel for $client {
            fn model(&self) -> &str {
                &self.base.model
            }

            fn max_output_tokens(&self) -> Option<u32> {
                Some(self.base.max_output_tokens)
            }

            async fn chat(
                &self,
                req: &$crate::types::ChatRequest,
            ) -> Result<$crate::types::ChatResponse, $crate::types::LlmError> {
                self.chat_streamed(req, &$crate::partial::Progress::new())
                    .await
            }

            async fn chat_streamed(
                &self,
                req: &$crate::types::ChatRequest,
                progress: &$crate::partial::Progress,
            ) -> Result<$crate::types::ChatResponse, $crate::types::LlmError> {
                // The client's own `endpoint` and `request_body` (public, shown in tests).
                let (endpoint, body) = (self.endpoint(), self.request_body(req));
                $crate::client::chat_over_http(self, endpoint, body, req, progress).await
            }
        }
    };
}
pub(crate) use http_chat_model;

/// The builder methods and `parse_response` every HTTP chat client has, on a [`WireFormat`]
/// type with a `base: ClientBase` field.
macro_rules! client_methods {
    () => {
        /// Names the provider in errors (e.g. `vllm`).
        pub fn named(mut self, provider: impl Into<String>) -> Self {
            self.base.provider = provider.into();
            self
        }

        /// Sets the retry policy.
        pub fn with_retry(mut self, policy: $crate::retry::RetryPolicy) -> Self {
            self.base.policy = policy;
            self
        }

        /// The output cap sent when a request sets none (at least 1).
        pub fn with_max_output_tokens(mut self, max: u32) -> Self {
            self.base.max_output_tokens = max.max(1);
            self
        }

        /// Streams replies (the default) or asks for one JSON body (for servers that reject
        /// streaming; a call cut by a deadline then keeps no text).
        pub fn with_streaming(mut self, on: bool) -> Self {
            self.base.stream = on;
            self
        }

        /// Adds a header sent with every request (e.g. `OpenAI-Organization`, `anthropic-beta`).
        pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
            self.base.headers.push((name.into(), value.into()));
            self
        }

        /// Reads a whole (not streamed) response body that answered `req` (usage the server
        /// did not report is estimated against `req` and marked).
        pub fn parse_response(
            &self,
            req: &$crate::types::ChatRequest,
            body: &serde_json::Value,
        ) -> Result<$crate::types::ChatResponse, $crate::types::LlmError> {
            let partial = $crate::client::WireFormat::parse_partial(self, body)?;
            Ok(partial.to_response(req, None))
        }
    };
}
pub(crate) use client_methods;
