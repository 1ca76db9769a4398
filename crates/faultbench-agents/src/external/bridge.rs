//! An MCP server over HTTP that serves the run's toolbox to an external agent.
//!
//! It speaks the MCP *streamable HTTP* transport in its simplest allowed form: every JSON-RPC
//! request is a `POST` answered with one `application/json` response; notifications get
//! `202 Accepted`; there is no server-initiated stream (`GET` → 405). Methods: `initialize`,
//! `ping`, `tools/list`, `tools/call`. It listens on 127.0.0.1 only, under a random path, so
//! other local processes cannot drive the lab.
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
use std::time::{Instant, SystemTime, UNIX_EPOCH};
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

fn random_token() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.write_u32(std::process::id());
    let a = h.finish();
    let mut h2 = std::collections::hash_map::RandomState::new().build_hasher();
    h2.write_u64(a);
    format!("{a:016x}{:016x}", h2.finish())
}

impl McpBridge {
    /// Starts serving `tools` on an ephemeral localhost port.
    pub async fn start(tools: Arc<dyn Toolbox>) -> std::io::Result<McpBridge> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let token = random_token();
        let url = format!("http://127.0.0.1:{port}/mcp/{token}");
        let state = Arc::new(State {
            tools,
            log: Mutex::new(Vec::new()),
            session: random_token(),
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
    if req.uri().path() != path {
        return reply(StatusCode::NOT_FOUND, None, None);
    }
    match *req.method() {
        Method::POST => {}
        Method::DELETE => return reply(StatusCode::OK, None, None),
        _ => return reply(StatusCode::METHOD_NOT_ALLOWED, None, None),
    }
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
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
                return Some(rpc_error(id, -32602, &format!("unknown tool `{name}`")));
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
                &format!("method `{other}` not found"),
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
