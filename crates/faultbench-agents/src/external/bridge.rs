//! An MCP server over HTTP that serves the run's toolbox to an external agent.
//!
//! It speaks the MCP *streamable HTTP* transport in its simplest allowed form: every JSON-RPC
//! request is a `POST` answered with one `application/json` response; notifications get
//! `202 Accepted`; there is no server-initiated stream (`GET` → 405). Methods: `initialize`,
//! `ping`, `tools/list`, `tools/call`. It listens on 127.0.0.1 only, under a secret path, so
//! other local processes cannot drive the lab:
//!
//! - the path's token is 256 bits from the operating system's random source (`getrandom`),
//!   compared in constant time;
//! - a request body is read up to [`MAX_BODY_BYTES`] (1 MiB) and never further: a larger one
//!   (announced by `content-length` or not) is answered `413 Payload Too Large`;
//! - the URL reaches the agent only through its MCP config file, written `0600` in a `0700`
//!   working directory (see [`super`]); it is never put in the agent's environment.
//!
//! Because it calls the very toolbox the pipeline handed to the agent, every call goes through
//! the run's policy and recorder exactly as an in-process agent's would. It also keeps its own
//! log, which becomes the outcome's `tool_log`.

use faultbench_core::toolbox::{ToolCallRecord, Toolbox};
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Instant;
use tokio::net::TcpListener;

/// The protocol versions this server accepts (newest first).
pub const PROTOCOL_VERSIONS: [&str; 3] = ["2025-06-18", "2025-03-26", "2024-11-05"];

struct State {
    tools: Arc<dyn Toolbox>,
    log: Mutex<Vec<ToolCallRecord>>,
    session: String,
}

/// What the bridge tells the CLI about its tools when the MCP session starts (part of the
/// external agents' prompt version).
pub const BRIDGE_INSTRUCTIONS: &str =
    "Tools that probe a live emulated network. Commands run inside lab devices only.";

/// A running bridge; stops when dropped.
pub struct McpBridge {
    url: String,
    state: Arc<State>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for McpBridge {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Largest request body read, in bytes (a `tools/call` is a few hundred bytes).
pub const MAX_BODY_BYTES: usize = 1 << 20;

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
        let token = random_token()?;
        let url = format!("http://127.0.0.1:{port}/mcp/{token}");
        let state = Arc::new(State {
            tools,
            log: Mutex::new(Vec::new()),
            session: random_token()?,
        });
        let path = format!("/mcp/{token}");
        let st = state.clone();
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let st = st.clone();
                let path = path.clone();
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(move |req| {
                        let st = st.clone();
                        let path = path.clone();
                        async move { Ok::<_, std::convert::Infallible>(handle(st, &path, req).await) }
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Ok(McpBridge { url, state, task })
    }

    /// The endpoint URL (including its secret path).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Calls served so far.
    pub fn records(&self) -> Vec<ToolCallRecord> {
        self.state.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

fn reply(status: StatusCode, body: Option<Value>, session: Option<&str>) -> Response<Full<Bytes>> {
    let mut b = Response::builder().status(status);
    if let Some(s) = session {
        b = b.header("mcp-session-id", s);
    }
    let bytes = match body {
        Some(v) => {
            b = b.header("content-type", "application/json");
            Bytes::from(v.to_string())
        }
        None => Bytes::new(),
    };
    b.body(Full::new(bytes))
        .unwrap_or_else(|_| Response::new(Full::new(Bytes::new())))
}

async fn handle(st: Arc<State>, path: &str, req: Request<Incoming>) -> Response<Full<Bytes>> {
    if !constant_time_eq(req.uri().path().as_bytes(), path.as_bytes()) {
        return reply(StatusCode::NOT_FOUND, None, None);
    }
    match *req.method() {
        Method::POST => {}
        Method::DELETE => return reply(StatusCode::OK, None, None),
        _ => return reply(StatusCode::METHOD_NOT_ALLOWED, None, None),
    }
    let announced = req
        .headers()
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if announced.is_some_and(|n| n > MAX_BODY_BYTES as u64) {
        return too_large();
    }
    // Read at most the limit, whatever the headers said (chunked bodies have none).
    let body = match http_body_util::Limited::new(req.into_body(), MAX_BODY_BYTES)
        .collect()
        .await
    {
        Ok(b) => b.to_bytes(),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return too_large(),
        Err(_) => return reply(StatusCode::BAD_REQUEST, None, None),
    };
    let msg: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => {
            let err = rpc_error(Value::Null, -32700, &format!("parse error: {e}"));
            return reply(StatusCode::BAD_REQUEST, Some(err), None);
        }
    };
    let session = Some(st.session.as_str());
    match msg {
        Value::Array(batch) => {
            let mut out = Vec::new();
            for m in batch {
                if let Some(r) = dispatch(&st, m).await {
                    out.push(r);
                }
            }
            if out.is_empty() {
                reply(StatusCode::ACCEPTED, None, session)
            } else {
                reply(StatusCode::OK, Some(Value::Array(out)), session)
            }
        }
        m => match dispatch(&st, m).await {
            Some(r) => reply(StatusCode::OK, Some(r), session),
            None => reply(StatusCode::ACCEPTED, None, session),
        },
    }
}

/// `413`, and the connection is closed (the rest of the body is never read).
fn too_large() -> Response<Full<Bytes>> {
    let err = rpc_error(
        Value::Null,
        -32600,
        &format!("request body over {MAX_BODY_BYTES} bytes"),
    );
    let mut r = reply(StatusCode::PAYLOAD_TOO_LARGE, Some(err), None);
    r.headers_mut().insert(
        hyper::header::CONNECTION,
        hyper::header::HeaderValue::from_static("close"),
    );
    r
}

/// At most `max` characters of an untrusted value, for an error message.
fn echo(value: &str, max: usize) -> String {
    let mut out: String = value.chars().take(max).collect();
    if out.len() < value.len() {
        out.push_str(&format!("… ({} bytes)", value.len()));
    }
    out
}

fn rpc_error(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Answers one JSON-RPC message; `None` for notifications and responses.
async fn dispatch(st: &State, msg: Value) -> Option<Value> {
    let id = msg.get("id").cloned()?;
    let method = msg.get("method").and_then(Value::as_str).unwrap_or("");
    let params = msg.get("params").cloned().unwrap_or(Value::Null);
    let result = match method {
        "initialize" => {
            let asked = params.get("protocolVersion").and_then(Value::as_str);
            let version = asked
                .filter(|v| PROTOCOL_VERSIONS.contains(v))
                .unwrap_or(PROTOCOL_VERSIONS[0]);
            json!({
                "protocolVersion": version,
                "capabilities": {"tools": {"listChanged": false}},
                "serverInfo": {"name": "faultbench", "version": env!("CARGO_PKG_VERSION")},
                "instructions": BRIDGE_INSTRUCTIONS
            })
        }
        "ping" => json!({}),
        "tools/list" => {
            let tools: Vec<Value> = st
                .tools
                .specs()
                .into_iter()
                .map(|s| json!({"name": s.name, "description": s.description, "inputSchema": s.input_schema}))
                .collect();
            json!({"tools": tools})
        }
        "tools/call" => {
            let name = params.get("name").and_then(Value::as_str).unwrap_or("");
            if !st.tools.specs().iter().any(|s| s.name == name) {
                return Some(rpc_error(
                    id,
                    -32602,
                    &format!("unknown tool `{}`", echo(name, 200)),
                ));
            }
            let args = params
                .get("arguments")
                .cloned()
                .filter(Value::is_object)
                .unwrap_or_else(|| json!({}));
            call_tool(st, name, args).await
        }
        other => {
            return Some(rpc_error(
                id,
                -32601,
                &format!("method `{}` not found", echo(other, 200)),
            ));
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

async fn call_tool(st: &State, name: &str, args: Value) -> Value {
    let started = Instant::now();
    let result = st.tools.call(name, args.clone()).await;
    let duration_ms = started.elapsed().as_millis() as u64;
    let (text, is_error, rec_err, truncated, timed_out, refused) = match &result {
        Ok(o) => (
            o.text.clone(),
            o.is_error,
            o.is_error.then(|| "command failed".to_string()),
            o.truncated,
            o.timed_out,
            false,
        ),
        Err(e) => (
            format!("ERROR: {e}"),
            true,
            Some(e.to_string()),
            false,
            false,
            matches!(e, faultbench_core::toolbox::ToolError::Refused { .. }),
        ),
    };
    if let Ok(mut log) = st.log.lock() {
        let seq = log.len() as u32 + 1;
        log.push(ToolCallRecord {
            seq,
            tool: name.to_string(),
            args,
            output_chars: text.chars().count(),
            output: text.clone(),
            duration_ms,
            truncated,
            timed_out,
            refused,
            error: rec_err,
        });
    }
    json!({"content": [{"type": "text", "text": text}], "isError": is_error})
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

    #[test]
    fn echoes_are_capped() {
        let long = "x".repeat(100_000);
        let e = echo(&long, 200);
        assert!(e.len() < 230 && e.ends_with("(100000 bytes)"), "{e}");
        assert_eq!(echo("ping_pair", 200), "ping_pair");
    }
}
