//! A line-level gatekeeper in front of rmcp's stdio transport.
//!
//! rmcp reads newline-delimited JSON-RPC and, by design, ignores a line that is not JSON (see
//! rust-sdk issue 938) and buffers a line of any length. A client that sends a broken line
//! then waits forever for an answer. This layer reads the client's bytes first:
//!
//! - a line longer than [`MAX_LINE_BYTES`] is discarded as it arrives (never buffered whole)
//!   and answered with `-32600 Invalid Request`;
//! - a line that is not JSON is answered with `-32700 Parse error` (`id: null`);
//! - JSON that is not an MCP client message is answered with `-32600` (with the request's id
//!   when it has one, so the client's pending call ends);
//! - everything else goes to rmcp unchanged.
//!
//! Answers from rmcp and from this layer are written whole lines at a time by one writer, so
//! they never interleave. Error texts quote at most 200 characters of what was received. To
//! avoid an error storm with a peer that echoes what it gets, at most [`MAX_ERROR_REPLIES`]
//! framing errors are answered per session (the rest are reported on stderr).

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// Longest accepted message line, in bytes.
pub const MAX_LINE_BYTES: usize = 4 << 20;

/// Framing errors answered per session.
pub const MAX_ERROR_REPLIES: usize = 1000;

/// At most `max` characters of an untrusted text, with a marker saying how much was cut.
pub fn capped(text: &str, max: usize) -> String {
    let mut out: String = text.chars().take(max).collect();
    if out.len() < text.len() {
        out.push_str(&format!("… ({} bytes in all)", text.len()));
    }
    out
}

fn error(id: Value, code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// What to do with one complete line.
enum Verdict {
    Forward,
    Skip,
    Answer(Value),
}

fn judge_line(line: &[u8]) -> Verdict {
    let line = line.strip_prefix(b"\xef\xbb\xbf").unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Verdict::Answer(error(
                Value::Null,
                -32700,
                format!("Parse error: {}", capped(&e.to_string(), 200)),
            ));
        }
    };
    match serde_json::from_value::<rmcp::model::ClientJsonRpcMessage>(value.clone()) {
        Ok(_) => Verdict::Forward,
        Err(e) => {
            let id = value
                .get("id")
                .filter(|i| i.is_string() || i.is_number())
                .cloned();
            let is_request = value.get("method").is_some_and(Value::is_string);
            match (id, is_request) {
                // A notification (no id) gets no answer, by JSON-RPC; let rmcp see it.
                (None, true) => Verdict::Forward,
                (id, _) => Verdict::Answer(error(
                    id.unwrap_or(Value::Null),
                    -32600,
                    format!("Invalid Request: {}", capped(&e.to_string(), 200)),
                )),
            }
        }
    }
}

/// Reads lines from `read` (at most [`MAX_LINE_BYTES`] held), forwarding valid ones to `to_rmcp`
/// and sending answers for the others to `answers`.
async fn front<R: AsyncRead + Unpin>(
    read: R,
    mut to_rmcp: impl AsyncWrite + Unpin,
    answers: mpsc::Sender<Value>,
) {
    let mut reader = BufReader::new(read);
    let mut line: Vec<u8> = Vec::new();
    let mut oversized = false;
    let mut replies = 0usize;
    loop {
        let (done, used) = match reader.fill_buf().await {
            Ok([]) | Err(_) => break,
            Ok(buf) => match buf.iter().position(|b| *b == b'\n') {
                Some(i) => {
                    if !oversized {
                        line.extend_from_slice(&buf[..i]);
                    }
                    (true, i + 1)
                }
                None => {
                    if !oversized {
                        line.extend_from_slice(buf);
                    }
                    (false, buf.len())
                }
            },
        };
        reader.consume(used);
        if line.len() > MAX_LINE_BYTES {
            oversized = true;
            line = Vec::new();
        }
        if !done {
            continue;
        }
        let verdict = if oversized {
            Verdict::Answer(error(
                Value::Null,
                -32600,
                format!("Invalid Request: message over {MAX_LINE_BYTES} bytes"),
            ))
        } else {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            judge_line(&line)
        };
        match verdict {
            Verdict::Skip => {}
            Verdict::Forward => {
                line.push(b'\n');
                if to_rmcp.write_all(&line).await.is_err() {
                    break;
                }
            }
            Verdict::Answer(v) => {
                replies += 1;
                if replies <= MAX_ERROR_REPLIES {
                    if answers.send(v).await.is_err() {
                        break;
                    }
                } else if replies == MAX_ERROR_REPLIES + 1 {
                    eprintln!(
                        "faultbench mcp: more than {MAX_ERROR_REPLIES} malformed messages; no longer answering them"
                    );
                }
            }
        }
        line.clear();
        oversized = false;
    }
    let _ = to_rmcp.shutdown().await;
}

/// Writes rmcp's output lines and this layer's answers to `write`, one whole line at a time.
async fn back<W: AsyncWrite + Unpin>(
    from_rmcp: impl AsyncRead + Unpin,
    mut answers: mpsc::Receiver<Value>,
    mut write: W,
) {
    let mut lines = BufReader::new(from_rmcp);
    let mut buf = Vec::new();
    let mut rmcp_open = true;
    let mut answers_done = false;
    loop {
        tokio::select! {
            n = lines.read_until(b'\n', &mut buf), if rmcp_open => {
                match n {
                    Ok(0) | Err(_) => rmcp_open = false,
                    Ok(_) => {
                        if write.write_all(&buf).await.is_err() || write.flush().await.is_err() {
                            return;
                        }
                        buf.clear();
                    }
                }
            }
            a = answers.recv(), if !answers_done => {
                let Some(v) = a else {
                    answers_done = true;
                    if !rmcp_open {
                        return;
                    }
                    continue;
                };
                let mut line = v.to_string();
                line.push('\n');
                if write.write_all(line.as_bytes()).await.is_err() || write.flush().await.is_err() {
                    return;
                }
            }
        }
        if !rmcp_open && answers_done {
            return;
        }
    }
}

/// The streams to give rmcp, and the writer task to await once rmcp is done (so that the last
/// answers reach the client before the process exits).
pub struct Gate {
    /// What rmcp reads: the client's valid lines.
    pub rmcp_in: tokio::io::DuplexStream,
    /// Where rmcp writes its answers.
    pub rmcp_out: tokio::io::DuplexStream,
    /// The task writing to the client.
    pub writer: tokio::task::JoinHandle<()>,
}

/// Puts the gatekeeper between a client's byte streams and rmcp, starting the two tasks that
/// feed and drain it.
pub fn gate<R, W>(read: R, write: W) -> Gate
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let (to_rmcp, rmcp_in) = tokio::io::duplex(1 << 16);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 16);
    let (tx, rx) = mpsc::channel(64);
    tokio::spawn(front(read, to_rmcp, tx));
    let writer = tokio::spawn(back(from_rmcp, rx, write));
    Gate {
        rmcp_in,
        rmcp_out,
        writer,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(v: &Verdict) -> Option<i64> {
        match v {
            Verdict::Answer(a) => a["error"]["code"].as_i64(),
            _ => None,
        }
    }

    #[test]
    fn lines_are_sorted_into_forward_skip_and_answer() {
        assert!(matches!(judge_line(b"   "), Verdict::Skip));
        assert_eq!(code(&judge_line(b"{nope")), Some(-32700));
        assert_eq!(code(&judge_line(b"[1,2]")), Some(-32600));
        let ping = br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
        assert!(matches!(judge_line(ping), Verdict::Forward));
        let bad = br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":"x"}"#;
        match judge_line(bad) {
            Verdict::Answer(a) => assert_eq!(a["id"], "a"),
            _ => panic!("a malformed request is answered"),
        }
        let long = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":\"{}\"}}",
            "z".repeat(100_000)
        );
        match judge_line(long.as_bytes()) {
            Verdict::Answer(a) => assert!(a.to_string().len() < 1_000, "{a}"),
            _ => panic!("answered"),
        }
    }

    #[tokio::test]
    async fn oversized_lines_are_answered_without_being_held() {
        let (client, server) = tokio::io::duplex(1 << 16);
        let (sr, sw) = tokio::io::split(server);
        let Gate {
            mut rmcp_in,
            rmcp_out: _rmcp_out,
            ..
        } = gate(sr, sw);
        let (mut cr, mut cw) = tokio::io::split(client);
        let writer = tokio::spawn(async move {
            let chunk = vec![b'a'; 1 << 16];
            for _ in 0..((MAX_LINE_BYTES >> 16) + 4) {
                cw.write_all(&chunk).await.unwrap();
            }
            cw.write_all(b"\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n")
                .await
                .unwrap();
            cw
        });
        let mut answer = String::new();
        let mut r = BufReader::new(&mut cr);
        r.read_line(&mut answer).await.unwrap();
        let v: Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(v["error"]["code"], -32600);
        let mut forwarded = String::new();
        BufReader::new(&mut rmcp_in)
            .read_line(&mut forwarded)
            .await
            .unwrap();
        assert!(forwarded.contains("\"ping\""), "{forwarded}");
        drop(writer.await.unwrap());
    }
}
