//! A scriptable HTTP server on 127.0.0.1 for tests of streaming and of misbehaving servers
//! (feature `test-support`).
//!
//! wiremock answers with whole bodies; real servers stream slowly, stall, or never stop. This
//! server speaks just enough HTTP/1.1 over raw TCP to do all of that: each request (read with
//! its `Content-Length` body and recorded as JSON) gets the [`ServerReply`] a script chooses, and the
//! connection is closed after it (`Connection: close`, so a streamed body ends at the close).
//! Everything it does is bounded: a "forever" stream stops when the client goes away or after
//! [`FOREVER_LIMIT`], and the server task ends with the test's runtime.

use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Longest a [`ServerReply::Sse`] with a `forever` tail streams.
pub const FOREVER_LIMIT: Duration = Duration::from_secs(300);

/// The former name of [`ServerReply`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `ServerReply`; the old name goes in the next release")]
pub type Reply = ServerReply;

/// What the server does with one request.
#[derive(Debug, Clone)]
pub enum ServerReply {
    /// `200` with a JSON body.
    Json(Value),
    /// A status and a body.
    Status(u16, String),
    /// `200 text/event-stream`: each event after its delay, then (if given) the same piece
    /// every interval until the client leaves or [`FOREVER_LIMIT`] passes.
    Sse {
        /// `(delay before, raw event text)`, e.g. `data: {...}\n\n`.
        events: Vec<(Duration, String)>,
        /// Then repeat this piece at this interval.
        forever: Option<(Duration, String)>,
    },
    /// Reads the request and never answers (the connection stays open).
    Stall,
    /// Accepts the connection and never reads from it.
    Mute,
}

impl ServerReply {
    /// An SSE reply from `data:` payloads sent without delay (`[DONE]` is not added).
    pub fn sse(data: &[Value]) -> ServerReply {
        ServerReply::Sse {
            events: data.iter().map(|d| (Duration::ZERO, event(d))).collect(),
            forever: None,
        }
    }
}

/// One `data:` event.
pub fn event(data: &Value) -> String {
    format!("data: {data}\n\n")
}

/// An OpenAI stream chunk carrying `text`.
pub fn openai_text(text: &str) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]})
}

/// An OpenAI stream chunk with a finish reason.
pub fn openai_finish(reason: &str) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]})
}

/// The usage chunk `stream_options.include_usage` asks for.
pub fn openai_usage(prompt: u64, completion: u64) -> Value {
    json!({"object": "chat.completion.chunk", "choices": [],
           "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}})
}

/// An OpenAI stream chunk starting tool call `index` with its whole arguments text (`id`
/// omitted when `None`, as llama.cpp does).
pub fn openai_tool(index: u32, id: Option<&str>, name: &str, arguments: &str) -> Value {
    let mut call = json!({"index": index, "type": "function", "function": {"name": name, "arguments": arguments}});
    if let Some(id) = id {
        call["id"] = json!(id);
    }
    json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"tool_calls": [call]}, "finish_reason": null}]})
}

/// A whole streamed OpenAI reply: text, then `[DONE]`, with a usage chunk when given.
pub fn openai_reply(text: &str, usage: Option<(u64, u64)>) -> ServerReply {
    let mut data = vec![openai_text(text), openai_finish("stop")];
    if let Some((p, c)) = usage {
        data.push(openai_usage(p, c));
    }
    let mut r = ServerReply::sse(&data);
    if let ServerReply::Sse { events, .. } = &mut r {
        events.push((Duration::ZERO, "data: [DONE]\n\n".into()));
    }
    r
}

type Script = dyn Fn(usize, &Value) -> ServerReply + Send + Sync;

/// The running server.
pub struct TestServer {
    addr: std::net::SocketAddr,
    requests: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<()>,
}

impl TestServer {
    /// Starts a server answering request *n* (from 0) with `script(n, body)`.
    pub async fn start(
        script: impl Fn(usize, &Value) -> ServerReply + Send + Sync + 'static,
    ) -> std::io::Result<TestServer> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let script: Arc<Script> = Arc::new(script);
        let recorded = requests.clone();
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                let (script, recorded) = (script.clone(), recorded.clone());
                tokio::spawn(async move {
                    let _ = serve(sock, script, recorded).await;
                });
            }
        });
        Ok(TestServer {
            addr,
            requests,
            task,
        })
    }

    /// Starts a server that answers every request with `reply`.
    pub async fn always(reply: ServerReply) -> std::io::Result<TestServer> {
        TestServer::start(move |_, _| reply.clone()).await
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// `http://127.0.0.1:PORT` (for the Anthropic client).
    pub fn root_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Request bodies received so far (those with a body that was read).
    pub fn requests(&self) -> Vec<Value> {
        self.requests.lock().map(|r| r.clone()).unwrap_or_default()
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    mut sock: TcpStream,
    script: Arc<Script>,
    recorded: Arc<Mutex<Vec<Value>>>,
) -> std::io::Result<()> {
    // Decide before reading whether this connection is muted: the script sees the request
    // number only then.
    let n = recorded.lock().map(|r| r.len()).unwrap_or(0);
    if matches!(script(n, &Value::Null), ServerReply::Mute) {
        tokio::time::sleep(FOREVER_LIMIT).await;
        return Ok(());
    }
    let body = read_request(&mut sock).await?;
    let n = {
        let mut r = recorded.lock().unwrap_or_else(|e| e.into_inner());
        r.push(body.clone());
        r.len() - 1
    };
    match script(n, &body) {
        ServerReply::Json(v) => {
            let b = v.to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                b.len()
            );
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(b.as_bytes()).await?;
        }
        ServerReply::Status(code, b) => {
            let head = format!(
                "HTTP/1.1 {code} X\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                b.len()
            );
            sock.write_all(head.as_bytes()).await?;
            sock.write_all(b.as_bytes()).await?;
        }
        ServerReply::Sse { events, forever } => {
            sock.write_all(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n",
            )
            .await?;
            for (delay, ev) in events {
                tokio::time::sleep(delay).await;
                sock.write_all(ev.as_bytes()).await?;
                sock.flush().await?;
            }
            if let Some((every, piece)) = forever {
                let until = tokio::time::Instant::now() + FOREVER_LIMIT;
                while tokio::time::Instant::now() < until {
                    tokio::time::sleep(every).await;
                    // A client that left ends the loop with a write error.
                    sock.write_all(piece.as_bytes()).await?;
                    sock.flush().await?;
                }
            }
        }
        ServerReply::Stall => tokio::time::sleep(FOREVER_LIMIT).await,
        ServerReply::Mute => {}
    }
    sock.shutdown().await
}

/// Reads one request: the head up to the empty line, then `Content-Length` bytes of body.
async fn read_request(sock: &mut TcpStream) -> std::io::Result<Value> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 20 {
            return Err(std::io::Error::other("request head too long"));
        }
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            return Err(std::io::Error::other("closed before the request ended"));
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0);
    if len > 64 << 20 {
        return Err(std::io::Error::other("request body too long"));
    }
    while buf.len() < head_end + len {
        let n = sock.read(&mut chunk).await?;
        if n == 0 {
            break;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let body = &buf[head_end..buf.len().min(head_end + len)];
    Ok(serde_json::from_slice(body).unwrap_or(Value::Null))
}
