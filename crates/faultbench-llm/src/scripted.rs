//! A scripted model for tests: replies come from a queue (or a function of the request), and
//! every request is recorded for assertions.

use crate::model::ChatModel;
use crate::types::{ChatRequest, ChatResponse, LlmError};
use std::collections::VecDeque;
use std::sync::Mutex;

type Responder = Box<dyn Fn(&ChatRequest) -> Result<ChatResponse, LlmError> + Send + Sync>;

/// A model that plays back prepared replies.
///
/// ```
/// use faultbench_llm::{ChatModel, ChatRequest, ChatResponse, ScriptedModel, ToolCall};
/// use serde_json::json;
///
/// let model = ScriptedModel::new("scripted", vec![
///     ChatResponse::tool_calls("", vec![ToolCall::new("c1", "get_reachability", json!({}))]),
///     ChatResponse::text("all good"),
/// ]);
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let first = model.chat(&ChatRequest::new("scripted", "hi")).await.unwrap();
/// assert_eq!(first.tool_calls[0].name, "get_reachability");
/// assert_eq!(model.chat(&ChatRequest::new("scripted", "again")).await.unwrap().text, "all good");
/// assert!(model.chat(&ChatRequest::new("scripted", "more")).await.is_err()); // script exhausted
/// assert_eq!(model.requests().len(), 3);
/// # });
/// ```
pub struct ScriptedModel {
    name: String,
    queue: Mutex<VecDeque<Result<ChatResponse, LlmError>>>,
    responder: Option<Responder>,
    requests: Mutex<Vec<ChatRequest>>,
}

impl ScriptedModel {
    /// Plays `replies` in order; a request after the last one fails with
    /// [`LlmError::ScriptExhausted`].
    pub fn new(name: impl Into<String>, replies: Vec<ChatResponse>) -> Self {
        ScriptedModel {
            name: name.into(),
            queue: Mutex::new(replies.into_iter().map(Ok).collect()),
            responder: None,
            requests: Mutex::new(Vec::new()),
        }
    }

    /// Answers every request with `f(request)` (after the queue, if any, is used up).
    pub fn from_fn(
        name: impl Into<String>,
        f: impl Fn(&ChatRequest) -> Result<ChatResponse, LlmError> + Send + Sync + 'static,
    ) -> Self {
        ScriptedModel {
            responder: Some(Box::new(f)),
            ..ScriptedModel::new(name, Vec::new())
        }
    }

    /// Appends a reply to the queue.
    pub fn push(&self, reply: ChatResponse) {
        self.lock_queue().push_back(Ok(reply));
    }

    /// Appends a failure to the queue.
    pub fn push_error(&self, error: LlmError) {
        self.lock_queue().push_back(Err(error));
    }

    /// Every request received so far.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// Replies still queued.
    pub fn remaining(&self) -> usize {
        self.lock_queue().len()
    }

    fn lock_queue(&self) -> std::sync::MutexGuard<'_, VecDeque<Result<ChatResponse, LlmError>>> {
        // A panic while holding the lock cannot leave the queue inconsistent: recover it.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[async_trait::async_trait]
impl ChatModel for ScriptedModel {
    fn model(&self) -> &str {
        &self.name
    }

    async fn chat(&self, req: &ChatRequest) -> Result<ChatResponse, LlmError> {
        if let Ok(mut r) = self.requests.lock() {
            r.push(req.clone());
        }
        let next = self.lock_queue().pop_front();
        let mut reply = match (next, &self.responder) {
            (Some(r), _) => r?,
            (None, Some(f)) => f(req)?,
            (None, None) => return Err(LlmError::ScriptExhausted(self.name.clone())),
        };
        if reply.model.is_empty() {
            reply.model = self.name.clone();
        }
        Ok(reply)
    }
}
