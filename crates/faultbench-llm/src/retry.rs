//! Sending a JSON request with bounded retries.
//!
//! Retried: HTTP 408, 429, every 5xx (Anthropic's 529 "overloaded" included), request
//! timeouts and connection errors — plus any status the provider marks `x-should-retry: true`.
//! The wait before attempt *n + 1* is the provider's `retry-after-ms` / `Retry-After` (seconds
//! or an HTTP date) when it sends one, otherwise `initial_backoff · 2ⁿ⁻¹` capped at
//! `max_backoff`, with ±20 % jitter so that parallel runs do not retry in lockstep. A provider
//! asking for a longer wait than `max_retry_after` is not waited for: the call fails at once
//! with [`LlmError::GaveUp`], as it does after `max_attempts`. Nothing here can hang: every
//! attempt has a timeout and the number of attempts is bounded.

use crate::sse::{SseEvent, SseParser};
use crate::types::LlmError;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// How hard to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetryPolicy {
    /// Attempts in total, the first included (at least 1).
    pub max_attempts: u32,
    /// Backoff before the second attempt, in milliseconds; doubled each time.
    pub initial_backoff_ms: u64,
    /// Cap on one backoff, in milliseconds.
    pub max_backoff_ms: u64,
    /// Timeout of one attempt (connect, send, whole response), in milliseconds.
    pub request_timeout_ms: u64,
    /// Longest `Retry-After` honoured, in milliseconds; longer asks end the call.
    pub max_retry_after_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: 6,
            initial_backoff_ms: 1_000,
            max_backoff_ms: 60_000,
            request_timeout_ms: 600_000,
            max_retry_after_ms: 120_000,
        }
    }
}

impl RetryPolicy {
    /// The backoff before attempt `attempt + 1` (attempt counts from 1), before jitter.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u64 << attempt.saturating_sub(1).min(30);
        Duration::from_millis(
            self.initial_backoff_ms
                .saturating_mul(factor)
                .min(self.max_backoff_ms),
        )
    }
}

/// Classification of one failed attempt.
pub(crate) enum Attempt {
    /// Worth another try, after the provider's requested wait if it gave one.
    Retry { why: String, wait: Option<Duration> },
    /// Final.
    Fatal(LlmError),
}

impl Attempt {
    /// A transport failure (connection refused or reset, a body cut short): retried.
    pub(crate) fn transport(e: &reqwest::Error) -> Self {
        Attempt::Retry {
            why: format!("transport error: {}", error_chain(e)),
            wait: None,
        }
    }
}

/// Runs `attempt` until it succeeds, fails for good, or `policy` says stop; each attempt is
/// bounded by `policy.request_timeout_ms` (connect, send and the whole response, streamed or
/// not, so that a server trickling its body cannot stall a run). Returns the result and the
/// time spent including retries.
pub(crate) async fn with_retries<T, F, Fut>(
    provider: &str,
    policy: &RetryPolicy,
    mut attempt: F,
) -> Result<(T, Duration), LlmError>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, Attempt>>,
{
    let started = Instant::now();
    let max_attempts = policy.max_attempts.max(1);
    let timeout = Duration::from_millis(policy.request_timeout_ms.max(1));
    let mut n = 0;
    loop {
        n += 1;
        let outcome = match tokio::time::timeout(timeout, attempt()).await {
            Ok(r) => r,
            Err(_) => Err(Attempt::Retry {
                why: format!("no complete response within {:.1} s", timeout.as_secs_f64()),
                wait: None,
            }),
        };
        let (why, wait) = match outcome {
            Ok(v) => return Ok((v, started.elapsed())),
            Err(Attempt::Fatal(e)) => return Err(e),
            Err(Attempt::Retry { why, wait }) => (why, wait),
        };
        let gave_up = |last: String| LlmError::GaveUp {
            provider: provider.to_string(),
            attempts: n,
            elapsed_ms: started.elapsed().as_millis() as u64,
            last,
        };
        if n >= max_attempts {
            return Err(gave_up(why));
        }
        let wait = match wait {
            Some(w) if w > Duration::from_millis(policy.max_retry_after_ms) => {
                return Err(gave_up(format!(
                    "{why}; the provider asked to retry after {:.1} s, longer than the {:.1} s cap (retry.max_retry_after_ms)",
                    w.as_secs_f64(),
                    policy.max_retry_after_ms as f64 / 1000.0
                )));
            }
            Some(w) => w,
            None => jitter(policy.backoff(n)),
        };
        tokio::time::sleep(wait).await;
    }
}

/// POSTs `body` to `url` with `headers` and returns the response once its status is 2xx; any
/// other status is read and classified (retryable or final).
pub(crate) async fn send(
    http: &reqwest::Client,
    provider: &str,
    url: &str,
    headers: &[(String, String)],
    body: &Value,
) -> Result<reqwest::Response, Attempt> {
    let mut req = http.post(url).json(body);
    for (k, v) in headers {
        req = req.header(k, v);
    }
    let resp = req.send().await.map_err(|e| Attempt::transport(&e))?;
    let status = resp.status().as_u16();
    if (200..300).contains(&status) {
        return Ok(resp);
    }
    let wait = retry_after(resp.headers());
    let should_retry = resp
        .headers()
        .get("x-should-retry")
        .and_then(|v| v.to_str().ok())
        .map(|v| v.eq_ignore_ascii_case("true"));
    let text = resp.text().await.map_err(|e| Attempt::transport(&e))?;
    let message = error_message(&text);
    let retryable = match should_retry {
        Some(flag) => flag,
        None => status == 408 || status == 429 || status >= 500,
    };
    if retryable {
        Err(Attempt::Retry {
            why: format!("HTTP {status}: {message}"),
            wait,
        })
    } else {
        Err(Attempt::Fatal(LlmError::Rejected {
            provider: provider.to_string(),
            status,
            message,
        }))
    }
}

/// Reads a successful response's body as one JSON document.
pub(crate) async fn read_json(provider: &str, resp: reqwest::Response) -> Result<Value, Attempt> {
    let text = resp.text().await.map_err(|e| Attempt::transport(&e))?;
    serde_json::from_str::<Value>(&text).map_err(|e| {
        Attempt::Fatal(LlmError::Malformed {
            provider: provider.to_string(),
            detail: format!("body is not JSON ({e}): {}", excerpt(&text)),
        })
    })
}

/// Reads a successful response as an event stream, handing each event to `on_event` until it
/// returns `Ok(true)` (the reply is complete) or the stream ends. Returns whether `on_event`
/// ended it (false: the server closed the stream first).
pub(crate) async fn read_events(
    mut resp: reqwest::Response,
    mut on_event: impl FnMut(SseEvent) -> Result<bool, Attempt>,
) -> Result<bool, Attempt> {
    let mut parser = SseParser::new();
    while let Some(bytes) = resp.chunk().await.map_err(|e| Attempt::transport(&e))? {
        let events = parser.push(&bytes).map_err(|e| Attempt::Retry {
            why: e.to_string(),
            wait: None,
        })?;
        for ev in events {
            if on_event(ev)? {
                return Ok(true);
            }
        }
    }
    match parser.finish() {
        Some(ev) => on_event(ev),
        None => Ok(false),
    }
}

/// Whether a successful response is an event stream (a server may ignore `stream: true` and
/// answer with one JSON body; both are read).
pub(crate) fn is_event_stream(resp: &reqwest::Response) -> bool {
    resp.headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim_start().starts_with("text/event-stream"))
}

/// The provider's requested wait: `retry-after-ms` (OpenAI), else `Retry-After` as seconds or
/// an HTTP date.
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = get("retry-after-ms")
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|ms| ms.is_finite() && *ms >= 0.0)
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = get("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let at = parse_http_date(value)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(Duration::from_secs(at.saturating_sub(now)))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) to Unix seconds.
///
/// Only the fixed form that senders must generate (six words ending in `GMT`); the obsolete
/// RFC 850 and asctime forms, which `httpdate` would also read, are not taken from a provider.
pub(crate) fn parse_http_date(s: &str) -> Option<u64> {
    let s = s.trim();
    if s.split_whitespace().count() != 6 || !s.ends_with(" GMT") {
        return None;
    }
    let at = httpdate::parse_http_date(s).ok()?;
    at.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs())
}

/// ±20 % jitter from the process's random hasher seed (no RNG dependency needed).
fn jitter(d: Duration) -> Duration {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    let unit = (h.finish() % 10_001) as f64 / 10_000.0; // 0..=1
    d.mul_f64(0.8 + 0.4 * unit)
}

/// The provider's error message (`{"error": {"message": ...}}` in both APIs), or an excerpt.
fn error_message(body: &str) -> String {
    serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|v| {
            v.pointer("/error/message")
                .or_else(|| v.get("error").filter(|e| e.is_string()))
                .or_else(|| v.get("message"))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .unwrap_or_else(|| excerpt(body))
}

/// The first 300 characters of a body, for error messages.
pub(crate) fn excerpt(body: &str) -> String {
    let trimmed = body.trim();
    if trimmed.is_empty() {
        return "(empty body)".to_string();
    }
    let cut: String = trimmed.chars().take(300).collect();
    if cut.len() < trimmed.len() {
        format!("{cut}…")
    } else {
        cut
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

/// Builds the shared HTTP client (rustls with the ring provider, no native TLS).
pub(crate) fn http_client() -> Result<reqwest::Client, LlmError> {
    // Installing fails harmlessly when a provider is already installed for the process.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(20))
        .build()
        .map_err(|e| LlmError::Config(format!("cannot build the HTTP client: {}", error_chain(&e))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_dates() {
        assert_eq!(
            parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(parse_http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(parse_http_date("06 Nov 1994"), None);
    }

    #[test]
    fn retry_after_forms() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_secs(2)));
        h.insert("retry-after-ms", "150".parse().unwrap());
        assert_eq!(retry_after(&h), Some(Duration::from_millis(150)));
        let mut h = reqwest::header::HeaderMap::new();
        h.insert(
            "retry-after",
            "Thu, 01 Jan 1970 00:00:00 GMT".parse().unwrap(),
        );
        assert_eq!(
            retry_after(&h),
            Some(Duration::ZERO),
            "a past date means now"
        );
        h.insert("retry-after", "soon".parse().unwrap());
        assert_eq!(retry_after(&h), None);
    }

    #[test]
    fn backoff_doubles_and_caps() {
        let p = RetryPolicy {
            initial_backoff_ms: 100,
            max_backoff_ms: 350,
            ..RetryPolicy::default()
        };
        assert_eq!(p.backoff(1), Duration::from_millis(100));
        assert_eq!(p.backoff(2), Duration::from_millis(200));
        assert_eq!(p.backoff(3), Duration::from_millis(350));
        assert_eq!(p.backoff(64), Duration::from_millis(350));
        for _ in 0..50 {
            let j = jitter(Duration::from_millis(1000));
            assert!(j >= Duration::from_millis(800) && j <= Duration::from_millis(1200));
        }
    }

    #[test]
    fn error_messages() {
        assert_eq!(
            error_message(r#"{"error":{"message":"bad key","type":"auth"}}"#),
            "bad key"
        );
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#
            ),
            "Overloaded"
        );
        assert_eq!(
            error_message("<html>gateway</html>"),
            "<html>gateway</html>"
        );
        assert_eq!(error_message(""), "(empty body)");
    }
}
