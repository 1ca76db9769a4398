//! The server over real sockets (on 127.0.0.1:0) and over a recording writer.

use super::{CHUNK, Limits, Outcome, Site, handle, run, serve_io};
use std::net::SocketAddr;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpSocket, TcpStream};

/// Longer than any test should take: only a hung server reaches it.
const HUNG: Duration = Duration::from_secs(60);
/// Bigger than any socket buffers between a server and a client that does not read.
const BIG: usize = 16 * 1024 * 1024;

fn site_with_files(dir: &Path) -> std::path::PathBuf {
    let root = dir.join("site");
    std::fs::create_dir_all(root.join("runs")).unwrap();
    std::fs::write(root.join("index.html"), "<p>index</p>").unwrap();
    let big: Vec<u8> = (0..BIG).map(|i| (i % 251) as u8).collect();
    std::fs::write(root.join("big.bin"), big).unwrap();
    root
}

/// Starts the server; dropping the sender stops it.
async fn start(root: &Path, limits: Limits) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let site = Arc::new(Site::open(root).unwrap());
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(run(listener, site, limits, async move {
        let _ = rx.await;
    }));
    (addr, tx)
}

/// One request; the response's head (status line and headers) and body.
async fn request(addr: SocketAddr, method: &str, target: &str) -> (String, Vec<u8>) {
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(format!("{method} {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    let mut raw = Vec::new();
    tokio::time::timeout(HUNG, s.read_to_end(&mut raw))
        .await
        .expect("no response")
        .unwrap();
    split(&raw)
}

fn split(raw: &[u8]) -> (String, Vec<u8>) {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .expect("a response head");
    (
        String::from_utf8_lossy(&raw[..end]).into_owned(),
        raw[end + 4..].to_vec(),
    )
}

fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.eq_ignore_ascii_case(name).then_some(v.trim())
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn every_response_carries_the_pages_csp_and_nosniff() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    std::fs::create_dir_all(&runs).unwrap();
    let root = tmp.path().join("site");
    faultbench_view::build(&runs, &root).unwrap();
    let (addr, _stop) = start(&root, Limits::default()).await;

    let (head, body) = request(addr, "GET", "/").await;
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    let csp = header(&head, "Content-Security-Policy").expect("a CSP header");
    // The policy the index page carries in its <meta> tag, plus what only a header can say.
    let page_policy = csp
        .strip_suffix("; frame-ancestors 'none'")
        .expect("frame-ancestors 'none'");
    let body = String::from_utf8(body).unwrap();
    assert!(
        body.contains(&format!(
            "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
            faultbench_view::html::esc(page_policy)
        )),
        "{csp}"
    );
    assert_eq!(header(&head, "X-Content-Type-Options"), Some("nosniff"));
    assert_eq!(header(&head, "Referrer-Policy"), Some("no-referrer"));

    for (method, target, status) in [
        ("GET", "/nothing.html", "404"),
        ("POST", "/", "405"),
        ("HEAD", "/index.html", "200"),
    ] {
        let (head, body) = request(addr, method, target).await;
        assert!(head.starts_with(&format!("HTTP/1.1 {status}")), "{head}");
        assert_eq!(header(&head, "Content-Security-Policy"), Some(csp));
        assert_eq!(header(&head, "X-Content-Type-Options"), Some("nosniff"));
        if method == "HEAD" {
            assert!(body.is_empty());
            let len = std::fs::metadata(root.join("index.html")).unwrap().len();
            assert_eq!(
                header(&head, "Content-Length"),
                Some(len.to_string().as_str())
            );
        }
    }
}

/// What a [`Recorder`] was given: the size of each write and the bytes.
#[derive(Default)]
struct Written {
    writes: Vec<usize>,
    data: Vec<u8>,
}

/// A connection that sends `request`, then nothing (it never closes), takes every write at
/// once and remembers its size.
struct Recorder {
    request: Vec<u8>,
    read: usize,
    written: Arc<Mutex<Written>>,
}

impl AsyncRead for Recorder {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let left = &self.request[self.read..];
        if left.is_empty() {
            return Poll::Pending;
        }
        let n = left.len().min(buf.remaining());
        buf.put_slice(&left[..n]);
        self.read += n;
        Poll::Ready(Ok(()))
    }
}

impl AsyncWrite for Recorder {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let mut w = self.written.lock().unwrap();
        w.writes.push(buf.len());
        w.data.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_large_file_goes_out_in_bounded_pieces() {
    let tmp = tempfile::tempdir().unwrap();
    let root = site_with_files(tmp.path());
    let site = Arc::new(Site::open(&root).unwrap());
    let written = Arc::new(Mutex::new(Written::default()));
    let conn = Recorder {
        request: b"GET /big.bin HTTP/1.1\r\nHost: x\r\n\r\n".to_vec(),
        read: 0,
        written: written.clone(),
    };
    let outcome = tokio::time::timeout(HUNG, serve_io(conn, site, &Limits::default(), false))
        .await
        .expect("the response never ended");
    assert_eq!(outcome, Outcome::Answered(200));
    let w = written.lock().unwrap();
    let (head, body) = split(&w.data);
    assert_eq!(
        header(&head, "Content-Length"),
        Some(BIG.to_string().as_str())
    );
    assert!(
        body == std::fs::read(root.join("big.bin")).unwrap(),
        "the file, whole"
    );
    // The head, then the body never more than a chunk at a time.
    let largest = w.writes.iter().max().copied().unwrap_or_default();
    assert!(largest <= CHUNK, "a write of {largest} bytes");
    assert!(w.writes.len() > BIG / CHUNK, "{} writes", w.writes.len());
}

/// A client with a small receive buffer that sends a request and then never reads.
async fn stalled_client(addr: SocketAddr, target: &str) -> TcpStream {
    let sock = TcpSocket::new_v4().unwrap();
    sock.set_recv_buffer_size(4096).unwrap();
    let mut s = sock.connect(addr).await.unwrap();
    s.write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
        .await
        .unwrap();
    s
}

async fn serve_one_stalled(limits: Limits) -> (Outcome, usize) {
    let tmp = tempfile::tempdir().unwrap();
    let root = site_with_files(tmp.path());
    let site = Arc::new(Site::open(&root).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut client = stalled_client(listener.local_addr().unwrap(), "/big.bin").await;
    let (sock, _) = listener.accept().await.unwrap();
    let outcome = tokio::time::timeout(HUNG, handle(sock, site, &limits))
        .await
        .expect("the server waited on a reader that never reads");
    // The server has let go: the client finds what the sockets buffered, then the end.
    let mut got = Vec::new();
    tokio::time::timeout(HUNG, client.read_to_end(&mut got))
        .await
        .expect("the connection stayed open")
        .unwrap();
    (outcome, got.len())
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reader_that_never_reads_is_dropped_at_the_write_timeout() {
    let (outcome, got) = serve_one_stalled(Limits {
        write_timeout: Duration::from_millis(200),
        response_deadline: HUNG,
        ..Limits::default()
    })
    .await;
    assert_eq!(outcome, Outcome::WriteTimedOut);
    assert!(got < BIG, "the whole file went out ({got} bytes)");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_response_past_its_deadline_is_dropped() {
    let (outcome, got) = serve_one_stalled(Limits {
        write_timeout: HUNG,
        response_deadline: Duration::from_millis(300),
        ..Limits::default()
    })
    .await;
    assert_eq!(outcome, Outcome::DeadlineExceeded);
    assert!(got < BIG, "the whole file went out ({got} bytes)");
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_over_the_cap_get_503_until_a_slot_frees() {
    let tmp = tempfile::tempdir().unwrap();
    let root = site_with_files(tmp.path());
    let (addr, _stop) = start(
        &root,
        Limits {
            max_connections: 2,
            read_timeout: HUNG,
            ..Limits::default()
        },
    )
    .await;
    // Two connections that send nothing hold both slots (the server accepts in order).
    let first = TcpStream::connect(addr).await.unwrap();
    let _second = TcpStream::connect(addr).await.unwrap();
    for _ in 0..3 {
        let (head, _) = request(addr, "GET", "/").await;
        assert!(head.starts_with("HTTP/1.1 503"), "{head}");
        assert_eq!(header(&head, "Retry-After"), Some("1"));
        assert!(header(&head, "Content-Security-Policy").is_some());
    }
    drop(first);
    // Once the server sees the first one gone, its slot serves again.
    let t0 = std::time::Instant::now();
    loop {
        let (head, body) = request(addr, "GET", "/").await;
        if head.starts_with("HTTP/1.1 200") {
            assert_eq!(body, b"<p>index</p>");
            break;
        }
        assert!(head.starts_with("HTTP/1.1 503"), "{head}");
        assert!(t0.elapsed() < HUNG, "the freed slot never served");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_request_head_that_never_comes_is_dropped_at_the_read_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let root = site_with_files(tmp.path());
    let site = Arc::new(Site::open(&root).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    // Half a request line, then silence.
    let mut client = TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    client.write_all(b"GET /index.ht").await.unwrap();
    let (sock, _) = listener.accept().await.unwrap();
    let limits = Limits {
        read_timeout: Duration::from_millis(300),
        ..Limits::default()
    };
    let t0 = std::time::Instant::now();
    let outcome = tokio::time::timeout(HUNG, handle(sock, site, &limits))
        .await
        .expect("the server waited on a head that never came");
    assert_eq!(outcome, Outcome::RequestTimedOut);
    assert!(
        t0.elapsed() >= Duration::from_millis(300),
        "{:?}",
        t0.elapsed()
    );
    // Nothing of the site went out, and the connection is closed.
    let mut got = Vec::new();
    tokio::time::timeout(HUNG, client.read_to_end(&mut got))
        .await
        .expect("the connection stayed open")
        .ok();
    assert!(!String::from_utf8_lossy(&got).contains("index"), "{got:?}");
}
