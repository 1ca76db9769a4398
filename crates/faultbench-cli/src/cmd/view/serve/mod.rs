//! A small static file server for the viewer's folder, for a browser on this machine.
//!
//! HTTP is hyper's (HTTP/1.1, one request per connection); what is ours is which file a request
//! gets and the bounds on every connection:
//!
//! - Requests: GET and HEAD (anything else `405`). The request head must arrive within
//!   [`Limits::read_timeout`] (hyper's header-read timeout: the connection is closed).
//! - Files: only regular files under the site folder, opened from the folder's descriptor one
//!   component at a time without following links, and checked on the opened handle — no path
//!   is checked and then opened again, so a link swapped in meanwhile is never followed
//!   ([`open`]). Anything else is a `404`.
//! - Responses stream from the opened handle in pieces of at most [`FRAME`] bytes, and hyper
//!   buffers at most [`BUF_MAX`] before it stops taking pieces: memory per connection stays
//!   under [`CHUNK`] beside hyper's read buffer, whatever the file's size. Each write must make
//!   progress within [`Limits::write_timeout`] ([`WriteDeadline`]) and the whole response must go
//!   out within [`Limits::response_deadline`] of its request; otherwise the connection is
//!   dropped, so a reader that stops reading holds nothing for long.
//! - At most [`Limits::max_connections`] connections are served at once. As many more are
//!   answered `503 Service Unavailable` with `Retry-After: 1` (their request head is read
//!   first: closing a connection with an unread request resets it, and the client would lose
//!   the answer); beyond both, connections wait in the kernel's listen queue until a slot
//!   frees. An answer rather than a queue because the pages need no second request (everything
//!   is inline): a full server means something else holds its connections, and a page waiting
//!   behind that would just hang.
//! - Every response we write carries the site's Content-Security-Policy
//!   ([`faultbench_view::html::site_policy`], the policy the index page carries in its `<meta>`
//!   tag, plus `frame-ancestors 'none'`, which only a header can say), and
//!   `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, `Cache-Control: no-store`.
//!   (A request hyper cannot parse gets hyper's own bodiless `400`.)

pub mod open;
#[cfg(test)]
mod tests;

use bytes::Bytes;
use http_body_util::{BodyExt, Full, StreamBody, combinators::BoxBody};
use hyper::body::{Frame, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioIo, TokioTimer};
use open::{Refusal, SiteFile, content_type};
use rustix::fs::{Mode, OFlags};
use std::convert::Infallible;
use std::future::Future;
use std::io::Read;
use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU16, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The most of a file held in memory per connection (see [`FRAME`]).
pub const CHUNK: usize = 64 * 1024;
/// What hyper buffers for writing before it stops taking pieces of the body (its minimum).
pub const BUF_MAX: usize = 8 * 1024;
/// The size of one piece of a streamed file: a write then carries at most what hyper had
/// buffered (less than [`BUF_MAX`]) and one piece, never more than [`CHUNK`].
pub const FRAME: usize = CHUNK - BUF_MAX;
/// A pause after a failed accept (out of descriptors, say) so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The server's bounds on time and connections.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Connections served at once (as many more get a `503`).
    pub max_connections: usize,
    /// Time for the request head to arrive.
    pub read_timeout: Duration,
    /// Time for each write of the response to make progress.
    pub write_timeout: Duration,
    /// Time for the whole response, from the request's arrival.
    pub response_deadline: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            max_connections: 32,
            read_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(10),
            response_deadline: Duration::from_secs(120),
        }
    }
}

/// The site folder, held open: every file is opened beneath this descriptor.
pub struct Site {
    root: OwnedFd,
    csp: HeaderValue,
}

impl Site {
    /// Opens the site folder (the folder itself may be reached through a link: it is the
    /// user's `--out` or our own temporary folder).
    pub fn open(root: &Path) -> std::io::Result<Self> {
        let root = rustix::fs::open(
            root,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        let csp = format!(
            "{}; frame-ancestors 'none'",
            faultbench_view::html::site_policy()
        );
        let csp = HeaderValue::try_from(csp).map_err(std::io::Error::other)?;
        Ok(Self { root, csp })
    }

    fn open_target(&self, target: &str) -> Result<SiteFile, Refusal> {
        open::open_target(self.root.as_fd(), target)
    }
}

/// How one connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The whole response, with this status, went out.
    Answered(u16),
    /// The request head did not arrive within the read timeout.
    RequestTimedOut,
    /// The client did not take a piece of the response within the write timeout.
    WriteTimedOut,
    /// The response was not done within the response deadline.
    DeadlineExceeded,
    /// The connection failed or ended without a request, or the file ended early (changed
    /// while sent).
    Broken,
}

type Body = BoxBody<Bytes, std::io::Error>;

fn text(t: &'static str) -> Body {
    Full::new(Bytes::from_static(t.as_bytes()))
        .map_err(|never| match never {})
        .boxed()
}

/// A response with the site's headers (`len` is the Content-Length, also for HEAD).
fn response(
    site: &Site,
    status: StatusCode,
    content_type: &'static str,
    len: u64,
    body: Body,
) -> Response<Body> {
    let mut r = Response::new(body);
    *r.status_mut() = status;
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    h.insert(header::CONTENT_LENGTH, HeaderValue::from(len));
    h.insert(header::CONTENT_SECURITY_POLICY, site.csp.clone());
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn plain(site: &Site, status: StatusCode, t: &'static str, head_only: bool) -> Response<Body> {
    let body = if head_only { text("") } else { text(t) };
    response(
        site,
        status,
        "text/plain; charset=utf-8",
        t.len() as u64,
        body,
    )
}

/// The answer to a request (the file is opened here, so a `200` holds its handle).
fn answer<B>(site: &Site, req: &Request<B>) -> Response<Body> {
    let head_only = req.method() == Method::HEAD;
    if req.method() != Method::GET && !head_only {
        return plain(
            site,
            StatusCode::METHOD_NOT_ALLOWED,
            "only GET and HEAD\n",
            false,
        );
    }
    let target = req.uri().path_and_query().map_or("/", |p| p.as_str());
    match site.open_target(target) {
        Ok(file) => {
            let (ct, len) = (content_type(&file.rel), file.len);
            let body = if head_only {
                text("")
            } else {
                file_body(file.file, len)
            };
            response(site, StatusCode::OK, ct, len, body)
        }
        Err(_) => plain(site, StatusCode::NOT_FOUND, "not found\n", head_only),
    }
}

/// The answer to a connection over the cap.
fn busy<B>(site: &Site, req: &Request<B>) -> Response<Body> {
    let mut r = plain(
        site,
        StatusCode::SERVICE_UNAVAILABLE,
        "busy; try again\n",
        req.method() == Method::HEAD,
    );
    r.headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    r
}

/// `len` bytes of `file` as a body of pieces of at most [`FRAME`] bytes, each read on the
/// blocking pool when hyper asks for it. A file that ends early or fails ends the body with an
/// error (hyper then drops the connection).
fn file_body(file: std::fs::File, len: u64) -> Body {
    let pieces = futures_util::stream::unfold((Some(file), len), |(file, left)| async move {
        let mut file = file?;
        if left == 0 {
            return None;
        }
        let want = usize::try_from(left).map_or(FRAME, |l| l.min(FRAME));
        let read = tokio::task::spawn_blocking(move || {
            let mut buf = vec![0u8; want];
            let read = file.read(&mut buf).map(|n| {
                buf.truncate(n);
                buf
            });
            (file, read)
        })
        .await;
        let ended =
            |why: &str| std::io::Error::new(std::io::ErrorKind::UnexpectedEof, why.to_string());
        Some(match read {
            Ok((file, Ok(buf))) if !buf.is_empty() => {
                let n = buf.len() as u64;
                (Ok(Frame::data(Bytes::from(buf))), (Some(file), left - n))
            }
            Ok((_, Ok(_))) => (Err(ended("the file ended early")), (None, 0)),
            Ok((_, Err(e))) => (Err(e), (None, 0)),
            Err(_) => (Err(ended("the file read was cancelled")), (None, 0)),
        })
    });
    BodyExt::boxed(StreamBody::new(pieces))
}

/// A connection whose writes must each make progress within `timeout`: a write that stays
/// blocked that long (the client stopped reading) fails with `TimedOut`, which ends the
/// connection. Reads pass through.
pub struct WriteDeadline<S> {
    inner: S,
    timeout: Duration,
    stalled: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<S> WriteDeadline<S> {
    /// `inner` with writes bounded by `timeout`.
    pub fn new(inner: S, timeout: Duration) -> Self {
        Self {
            inner,
            timeout,
            stalled: None,
        }
    }

    /// Progress (or a result) clears the clock; waiting starts it, and once it has run out the
    /// write fails.
    fn bound<T>(
        &mut self,
        cx: &mut Context<'_>,
        r: Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        if r.is_ready() {
            self.stalled = None;
            return r;
        }
        let timeout = self.timeout;
        let clock = self
            .stalled
            .get_or_insert_with(|| Box::pin(tokio::time::sleep(timeout)));
        if clock.as_mut().poll(cx).is_ready() {
            self.stalled = None;
            return Poll::Ready(Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "the client took nothing within the write timeout",
            )));
        }
        Poll::Pending
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for WriteDeadline<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for WriteDeadline<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.bound(cx, r)
    }
    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let r = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.bound(cx, r)
    }
    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_flush(cx);
        self.bound(cx, r)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let r = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.bound(cx, r)
    }
}

/// Whether `e` (or what caused it) is an I/O timeout of ours.
fn write_timed_out(e: &hyper::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = std::error::Error::source(e);
    while let Some(c) = cause {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::TimedOut)
        {
            return true;
        }
        cause = c.source();
    }
    false
}

/// Serves one request on `io` within `limits`: the site's answer, or `503` when `refuse`.
async fn serve_io<I>(io: I, site: Arc<Site>, limits: &Limits, refuse: bool) -> Outcome
where
    I: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let status = Arc::new(AtomicU16::new(0));
    let started = Arc::new(tokio::sync::Notify::new());
    let service = {
        let (status, started) = (status.clone(), started.clone());
        hyper::service::service_fn(move |req: Request<Incoming>| {
            started.notify_one();
            let r = if refuse {
                busy(&site, &req)
            } else {
                answer(&site, &req)
            };
            status.store(r.status().as_u16(), Ordering::SeqCst);
            std::future::ready(Ok::<_, Infallible>(r))
        })
    };
    let mut http = hyper::server::conn::http1::Builder::new();
    // Title-case header names, as the server wrote them before hyper did (HTTP does not care;
    // scripts that grep a response might).
    http.keep_alive(false)
        .title_case_headers(true)
        .timer(TokioTimer::new())
        .header_read_timeout(limits.read_timeout)
        .max_buf_size(BUF_MAX);
    let conn = http.serve_connection(
        TokioIo::new(WriteDeadline::new(io, limits.write_timeout)),
        service,
    );
    // The response deadline runs from the request's arrival.
    let deadline = async {
        started.notified().await;
        tokio::time::sleep(limits.response_deadline).await;
    };
    tokio::select! {
        served = conn => match served {
            Ok(()) => match status.load(Ordering::SeqCst) {
                0 => Outcome::Broken,
                s => Outcome::Answered(s),
            },
            Err(e) if e.is_timeout() => Outcome::RequestTimedOut,
            Err(e) if write_timed_out(&e) => Outcome::WriteTimedOut,
            Err(_) => Outcome::Broken,
        },
        () = deadline => Outcome::DeadlineExceeded,
    }
}

/// Serves one connection: its request, then the answer, then a clean close.
pub async fn handle(sock: TcpStream, site: Arc<Site>, limits: &Limits) -> Outcome {
    serve_io(sock, site, limits, false).await
}

/// Answers one connection over the cap with a `503`.
async fn refuse(sock: TcpStream, site: Arc<Site>, limits: &Limits) -> Outcome {
    serve_io(sock, site, limits, true).await
}

/// What the next accepted connection gets.
enum Slot {
    Serve(OwnedSemaphorePermit),
    Refuse(OwnedSemaphorePermit),
}

/// Waits for a free slot, serving slots first; `None` if the semaphores were closed.
async fn free_slot(serving: &Arc<Semaphore>, refusing: &Arc<Semaphore>) -> Option<Slot> {
    if let Ok(p) = serving.clone().try_acquire_owned() {
        return Some(Slot::Serve(p));
    }
    tokio::select! {
        biased;
        p = serving.clone().acquire_owned() => p.ok().map(Slot::Serve),
        p = refusing.clone().acquire_owned() => p.ok().map(Slot::Refuse),
    }
}

/// Accepts connections on `listener` and serves `site` until `stop` resolves.
pub async fn run(
    listener: TcpListener,
    site: Arc<Site>,
    limits: Limits,
    stop: impl Future<Output = ()>,
) {
    let serving = Arc::new(Semaphore::new(limits.max_connections));
    let refusing = Arc::new(Semaphore::new(limits.max_connections));
    let limits = Arc::new(limits);
    tokio::pin!(stop);
    loop {
        let slot = tokio::select! {
            biased;
            () = &mut stop => return,
            slot = free_slot(&serving, &refusing) => slot,
        };
        let Some(slot) = slot else { return };
        let accepted = tokio::select! {
            biased;
            () = &mut stop => return,
            accepted = listener.accept() => accepted,
        };
        let Ok((sock, _)) = accepted else {
            tokio::time::sleep(ACCEPT_BACKOFF).await;
            continue;
        };
        // A serving slot may have freed while this one waited for a connection.
        let slot = match slot {
            Slot::Refuse(p) => serving
                .clone()
                .try_acquire_owned()
                .map_or(Slot::Refuse(p), Slot::Serve),
            s @ Slot::Serve(_) => s,
        };
        let (site, limits) = (site.clone(), limits.clone());
        tokio::spawn(async move {
            match slot {
                Slot::Serve(_permit) => handle(sock, site, &limits).await,
                Slot::Refuse(_permit) => refuse(sock, site, &limits).await,
            }
        });
    }
}

/// Serves the folder `root` at `addr` until `stop` resolves (Ctrl-C or SIGTERM in the CLI).
pub async fn serve(
    root: &Path,
    addr: SocketAddr,
    limits: Limits,
    stop: impl Future<Output = ()>,
) -> anyhow::Result<()> {
    let site = Site::open(root)
        .map_err(|e| anyhow::anyhow!("{}: cannot open the site folder: {e}", root.display()))?;
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("--serve {addr}: cannot listen: {e}"))?;
    let local = listener.local_addr()?;
    println!(
        "serving {} at http://{local}/ (Ctrl-C to stop)",
        root.display()
    );
    run(listener, Arc::new(site), limits, stop).await;
    eprintln!("stopped");
    Ok(())
}
