//! One model call over HTTP, streamed, with retries — the part both wire formats share.
//!
//! Each attempt POSTs the body; a 2xx event stream is read event by event into the caller's
//! [`Progress`] through the format's `apply` function, a 2xx JSON body (a server that ignored
//! `stream: true`) through its `parse_json`. A retried attempt starts the reply over. A stream
//! that carried nothing of a reply is malformed; one that closed before its end keeps what came,
//! with the stop reason `incomplete_stream`.

use crate::partial::{Partial, Progress, StreamError};
use crate::retry::{
    Attempt, RetryPolicy, excerpt, is_event_stream, read_events, read_json, send, with_retries,
};
use crate::types::{ChatRequest, ChatResponse, LlmError, StopReason};
use serde_json::Value;

/// What applying one streamed event did.
pub(crate) struct Applied {
    /// The reply is complete (or too large to keep reading).
    pub done: bool,
    /// The event carried part of a reply (not only keep-alives or metadata).
    pub answered: bool,
}

/// Everything one HTTP call needs.
pub(crate) struct HttpCall<'a> {
    pub http: &'a reqwest::Client,
    pub provider: &'a str,
    pub endpoint: &'a str,
    pub headers: &'a [(String, String)],
    pub body: &'a Value,
    pub policy: &'a RetryPolicy,
}

/// Runs the call. `apply(event name, data, partial)` reads one event (`Err`: an error the
/// server reported inside the stream, retried); `no_answer` says what was missing when no
/// event answered.
pub(crate) async fn call<J, E>(
    c: &HttpCall<'_>,
    req: &ChatRequest,
    progress: &Progress,
    parse_json: J,
    apply: E,
    no_answer: &str,
) -> Result<ChatResponse, LlmError>
where
    J: Fn(&Value) -> Result<Partial, LlmError>,
    E: Fn(Option<&str>, &Value, &mut Partial) -> Result<Applied, StreamError>,
{
    let provider = c.provider;
    let (mut reply, elapsed) = with_retries(provider, c.policy, || async {
        progress.reset();
        let resp = send(c.http, provider, c.endpoint, c.headers, c.body).await?;
        if !is_event_stream(&resp) {
            let json = read_json(provider, resp).await?;
            let p = parse_json(&json).map_err(Attempt::Fatal)?;
            return Ok(p.to_response(req, None));
        }
        let mut answered = false;
        let finished = read_events(resp, |ev| {
            if ev.data.trim() == "[DONE]" {
                return Ok(true);
            }
            let data: Value = serde_json::from_str(&ev.data).map_err(|e| {
                Attempt::Fatal(LlmError::Malformed {
                    provider: provider.to_string(),
                    detail: format!("a streamed event is not JSON ({e}): {}", excerpt(&ev.data)),
                })
            })?;
            let a = progress
                .update(|p| apply(ev.event.as_deref(), &data, p))
                .map_err(|e| Attempt::Retry {
                    why: e.to_string(),
                    wait: None,
                })?;
            answered |= a.answered;
            Ok(a.done)
        })
        .await?;
        if !answered {
            return Err(Attempt::Fatal(LlmError::Malformed {
                provider: provider.to_string(),
                detail: format!("the stream carried no {no_answer}"),
            }));
        }
        Ok(progress.update(|p| {
            if !finished && p.stop.is_none() {
                p.stop = Some(StopReason::Other("incomplete_stream".into()));
            }
            p.to_response(req, None)
        }))
    })
    .await?;
    reply.latency_ms = elapsed.as_millis() as u64;
    Ok(reply)
}
