//! The run's toolbox served to an external agent over MCP *streamable HTTP*: rmcp's HTTP
//! server with the handler of `faultbench mcp` ([`McpServer`]), so both transports answer
//! `tools/list` and `tools/call` with the same code.
//!
//! The server is stateless and answers each `POST` with one `application/json` response
//! (notifications get `202 Accepted`; there is no server-initiated stream, so `GET` is `405`).
//! It listens on 127.0.0.1 only, under a secret path, so other local processes cannot drive
//! the lab. In front of rmcp, each request first passes a gate of ours:
//!
//! - the path's token is 256 bits from the operating system's random source (`getrandom`),
//!   compared in constant time; any other path is `404` before rmcp sees the request. The
//!   token is the guard against other processes and browsers (DNS rebinding), so rmcp's `Host`
//!   allow-list is off: a rebinding page cannot know the path;
//! - a body announced over [`MAX_BODY_BYTES`] (1 MiB) is `413 Payload Too Large` without
//!   reading it; rmcp itself stops reading any body at the same cap (chunked ones included);
//! - a request without an `Accept` header is taken to accept what the server sends
//!   (`application/json`), as HTTP says; rmcp would refuse it.
//!
//! The URL reaches the agent only through its MCP config file, written `0600` in a `0700`
//! working directory (see [`super`]); it is never put in the agent's environment.
//!
//! Because it calls the very toolbox the pipeline handed to the agent, every call goes through
//! the run's policy and recorder exactly as an in-process agent's would. It also keeps its own
//! log (a [`RecordingToolbox`] around it), which becomes the outcome's `tool_log`.

use faultbench_core::toolbox::{RecordingToolbox, ToolCallRecord, Toolbox};
use faultbench_emu::tools::mcp::McpServer;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::header::{ACCEPT, CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HeaderValue};
use hyper::{Request, Response, StatusCode};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::net::TcpListener;

/// What the server tells the CLI about its tools when the MCP session starts (part of the
/// external agents' prompt version).
pub const BRIDGE_INSTRUCTIONS: &str = super::INSTRUCTIONS;

/// Largest request body read, in bytes (a `tools/call` is a few hundred bytes).
pub const MAX_BODY_BYTES: usize = 1 << 20;

type Service = StreamableHttpService<McpServer, NeverSessionManager>;
type Body = BoxBody<Bytes, Infallible>;

/// A running server; stops when dropped.
pub struct McpBridge {
    url: String,
    tools: Arc<RecordingToolbox<Arc<dyn Toolbox>>>,
    service: Arc<Service>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for McpBridge {
    fn drop(&mut self) {
        self.task.abort();
        // Ends requests still in flight on open connections.
        self.service.config.cancellation_token.cancel();
    }
}

/// 256 bits from the operating system's random source, as hex.
fn random_token() -> std::io::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::getrandom(&mut bytes)
        .map_err(|e| std::io::Error::other(format!("no random source: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Compares in time independent of where the inputs differ (the lengths are not secret: every
/// token has the same length).
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    let diff = a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y));
    // Keep the optimiser from turning the fold into an early exit.
    std::hint::black_box(diff) == 0
}

impl McpBridge {
    /// Starts serving `tools` on an ephemeral localhost port.
    pub async fn start(tools: Arc<dyn Toolbox>) -> std::io::Result<McpBridge> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let path: Arc<str> = format!("/mcp/{}", random_token()?).into();
        let url = format!("http://127.0.0.1:{port}{path}");
        let tools = Arc::new(RecordingToolbox::new(tools));
        let handler = McpServer::new(tools.clone()).with_instructions(BRIDGE_INSTRUCTIONS);
        let config = StreamableHttpServerConfig::default()
            .with_legacy_session_mode(false)
            .with_json_response(true)
            .with_sse_keep_alive(None)
            .with_max_request_body_bytes(MAX_BODY_BYTES)
            .disable_allowed_hosts();
        let service: Arc<Service> = Arc::new(StreamableHttpService::new(
            move || Ok(handler.clone()),
            Arc::new(NeverSessionManager::default()),
            config,
        ));
        let serving = service.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (service, path) = (serving.clone(), path.clone());
                tokio::spawn(async move {
                    let answer = hyper::service::service_fn(move |req| {
                        let (service, path) = (service.clone(), path.clone());
                        async move { Ok::<_, Infallible>(gate(&service, &path, req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), answer)
                        .await;
                });
            }
        });
        Ok(McpBridge {
            url,
            tools,
            service,
            task,
        })
    }

    /// The endpoint URL (including its secret path).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Calls served so far.
    pub fn records(&self) -> Vec<ToolCallRecord> {
        self.tools.records()
    }
}

/// The checks of the module docs, then rmcp.
async fn gate(service: &Service, path: &str, mut req: Request<Incoming>) -> Response<Body> {
    if !constant_time_eq(req.uri().path().as_bytes(), path.as_bytes()) {
        return empty(StatusCode::NOT_FOUND);
    }
    let announced = req
        .headers()
        .get(CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return too_large();
    }
    if !req.headers().contains_key(ACCEPT) {
        req.headers_mut().insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
    }
    let mut resp = service.handle(req).await;
    if resp.status() == StatusCode::PAYLOAD_TOO_LARGE {
        // The rest of the body is never read: do not wait for it on this connection.
        resp.headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    resp
}

fn empty(status: StatusCode) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::new()).boxed());
    *r.status_mut() = status;
    r
}

/// `413` with a JSON-RPC error, and the connection is closed (the body is never read).
fn too_large() -> Response<Body> {
    let err = serde_json::json!({"jsonrpc": "2.0", "id": null, "error": {
        "code": -32600, "message": format!("request body over {MAX_BODY_BYTES} bytes")}});
    let mut r = Response::new(Full::new(Bytes::from(err.to_string())).boxed());
    *r.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
    let h = r.headers_mut();
    h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    h.insert(CONNECTION, HeaderValue::from_static("close"));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_compare_is_a_compare() {
        assert!(constant_time_eq(b"/mcp/abc", b"/mcp/abc"));
        assert!(!constant_time_eq(b"/mcp/abc", b"/mcp/abd"));
        assert!(!constant_time_eq(b"/mcp/abc", b"/mcp/ab"));
        assert!(constant_time_eq(b"", b""));
    }
}
