//! Issue 19, finding 3: the MCP bridge an external agent talks to. Its URL's path is the
//! secret; request bodies are bounded (a 400 MB POST took the harness to 1.4 GB).
//! Raw HTTP over TCP, as any local process could send it.

mod common;

use faultbench_agents::external::McpBridge;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Sends `head` and then up to `body_len` bytes of `x` (stopping if the server closes), and
/// reads the status code of the answer.
async fn post(addr: &str, head: &str, body_len: usize) -> u16 {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(head.as_bytes()).await.unwrap();
    let chunk = vec![b'x'; 64 * 1024];
    let mut sent = 0;
    while sent < body_len {
        let n = chunk.len().min(body_len - sent);
        if s.write_all(&chunk[..n]).await.is_err() {
            break;
        }
        sent += n;
    }
    status(&mut s).await
}

async fn status(s: &mut tokio::net::TcpStream) -> u16 {
    let mut buf = [0u8; 12];
    let read = tokio::time::timeout(std::time::Duration::from_secs(20), s.read_exact(&mut buf));
    match read.await {
        Ok(Ok(_)) => String::from_utf8_lossy(&buf[9..]).parse().unwrap_or(0),
        _ => 0,
    }
}

#[tokio::test]
async fn tokens_are_random_and_bodies_are_bounded() {
    let a = McpBridge::start(common::tools(common::lab(false)))
        .await
        .unwrap();
    let b = McpBridge::start(common::tools(common::lab(false)))
        .await
        .unwrap();
    let token = |u: &str| u.rsplit('/').next().unwrap().to_string();
    let (ta, tb) = (token(a.url()), token(b.url()));
    assert_ne!(ta, tb);
    assert_eq!(ta.len(), 64, "256 bits, hex: {ta}");
    assert!(ta.bytes().all(|c| c.is_ascii_hexdigit()));

    let url = a.url().strip_prefix("http://").unwrap();
    let (addr, path) = url.split_once('/').unwrap();
    let path = format!("/{path}");

    // A small request on the right path works; a wrong token is 404.
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let head = |p: &str, len: usize| {
        format!(
            "POST {p} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {len}\r\n\r\n"
        )
    };
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("{}{ping}", head(&path, ping.len())).as_bytes())
        .await
        .unwrap();
    let mut buf = [0u8; 12];
    s.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"HTTP/1.1 200");
    let wrong = format!("/mcp/{}", "0".repeat(64));
    assert_eq!(post(addr, &head(&wrong, 2), 2).await, 404);

    // Bodies over 1 MiB are answered 413, announced or not, without reading them whole.
    assert_eq!(
        post(addr, &head(&path, 400 << 20), 0).await,
        413,
        "announced 400 MB"
    );
    let chunked = format!(
        "POST {path} HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n"
    );
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(chunked.as_bytes()).await.unwrap();
    let piece = format!("{:x}\r\n{}\r\n", 64 * 1024, "x".repeat(64 * 1024));
    for _ in 0..17 {
        if s.write_all(piece.as_bytes()).await.is_err() {
            break;
        }
    }
    assert_eq!(status(&mut s).await, 413, "an unannounced body over 1 MiB");
    // The bridge still serves.
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("{}{ping}", head(&path, ping.len())).as_bytes())
        .await
        .unwrap();
    let mut buf = [0u8; 12];
    s.read_exact(&mut buf).await.unwrap();
    assert_eq!(&buf, b"HTTP/1.1 200");
}
