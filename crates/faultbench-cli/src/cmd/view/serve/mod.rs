//! A small static file server for the viewer's folder, for a browser on this machine.
//!
//! - Requests: GET and HEAD only, one per connection (`Connection: close`), a request head of
//!   at most 8 KiB that must arrive within [`Limits::read_timeout`] (else `408`).
//! - Files: only regular files under the site folder, opened from the folder's descriptor one
//!   component at a time without following links, and checked on the opened handle — no path
//!   is checked and then opened again, so a link swapped in meanwhile is never followed
//!   ([`open`]). Anything else is a `404`.
//! - Responses stream from the opened handle in [`CHUNK`]-sized pieces: memory per connection
//!   is the request buffer plus one chunk, whatever the file's size. Each piece must be taken by
//!   the client within [`Limits::write_timeout`] and the whole response must go out within
//!   [`Limits::response_deadline`]; otherwise the connection is dropped, so a reader that stops
//!   reading holds nothing for long.
//! - At most [`Limits::max_connections`] connections are served at once. As many more are
//!   answered `503 Service Unavailable` with `Retry-After: 1` (their request head is read
//!   first: closing a connection with an unread request resets it, and the client would lose
//!   the answer); beyond both, connections wait in the kernel's listen queue until a slot
//!   frees. An answer rather than a queue because the pages need no second request (everything
//!   is inline): a full server means something else holds its connections, and a page waiting
//!   behind that would just hang.
//! - Every response carries the site's Content-Security-Policy
//!   ([`faultbench_view::html::site_policy`], the policy the index page carries in its `<meta>`
//!   tag, plus `frame-ancestors 'none'`, which only a header can say), and
//!   `X-Content-Type-Options: nosniff`, `Referrer-Policy: no-referrer`, `Cache-Control: no-store`.

pub mod open;
#[cfg(test)]
mod tests;

use open::{Refusal, SiteFile, content_type};
use rustix::fs::{Mode, OFlags};
use std::future::Future;
use std::io::Read;
use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The size of one piece of a streamed file: the most of it held in memory per connection.
pub const CHUNK: usize = 64 * 1024;
const MAX_REQUEST: usize = 8 * 1024;
/// A pause after a failed accept (out of descriptors, say) so the loop does not spin.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// The server's bounds on time and connections.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Connections served at once (as many more get a `503`).
    pub max_connections: usize,
    /// Time for the request head to arrive.
    pub read_timeout: Duration,
    /// Time for the client to take each piece of the response.
    pub write_timeout: Duration,
    /// Time for the whole response.
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
    csp: String,
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
        Ok(Self {
            root,
            csp: format!(
                "{}; frame-ancestors 'none'",
                faultbench_view::html::site_policy()
            ),
        })
    }

    /// The Content-Security-Policy header sent with every response.
    pub fn csp(&self) -> &str {
        &self.csp
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
    /// The client did not take a piece of the response within the write timeout.
    WriteTimedOut,
    /// The response was not done within the response deadline.
    DeadlineExceeded,
    /// The connection failed, or the file ended early (changed while sent).
    Broken,
}

/// A response about to be sent.
struct Answer {
    status: u16,
    reason: &'static str,
    content_type: &'static str,
    extra_headers: &'static str,
    body: Body,
    head_only: bool,
}

enum Body {
    Text(&'static str),
    File(SiteFile),
}

impl Answer {
    fn text(status: u16, reason: &'static str, text: &'static str) -> Self {
        Self {
            status,
            reason,
            content_type: "text/plain; charset=utf-8",
            extra_headers: "",
            body: Body::Text(text),
            head_only: false,
        }
    }

    fn len(&self) -> u64 {
        match &self.body {
            Body::Text(t) => t.len() as u64,
            Body::File(f) => f.len,
        }
    }

    fn head(&self, csp: &str) -> String {
        format!(
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nContent-Security-Policy: {csp}\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\nCache-Control: no-store\r\n{}Connection: close\r\n\r\n",
            self.status,
            self.reason,
            self.content_type,
            self.len(),
            self.extra_headers,
        )
    }
}

/// The answer to a request head (the file is opened here, so a `200` holds its handle).
fn answer(site: &Site, request: &str) -> Answer {
    let mut words = request
        .lines()
        .next()
        .unwrap_or_default()
        .split_whitespace();
    let (method, target) = (
        words.next().unwrap_or_default(),
        words.next().unwrap_or_default(),
    );
    if method != "GET" && method != "HEAD" {
        return Answer::text(405, "Method Not Allowed", "only GET and HEAD\n");
    }
    let mut answer = match site.open_target(target) {
        Ok(file) => Answer {
            status: 200,
            reason: "OK",
            content_type: content_type(&file.rel),
            extra_headers: "",
            body: Body::File(file),
            head_only: false,
        },
        Err(_) => Answer::text(404, "Not Found", "not found\n"),
    };
    answer.head_only = method == "HEAD";
    answer
}

/// Reads a request head; `None` if it did not arrive in time.
async fn read_head<R: AsyncRead + Unpin>(sock: &mut R, timeout: Duration) -> Option<String> {
    let mut buf = vec![0u8; MAX_REQUEST];
    let mut n = 0;
    let head_done =
        |b: &[u8]| b.windows(4).any(|w| w == b"\r\n\r\n") || b.windows(2).any(|w| w == b"\n\n");
    let read = tokio::time::timeout(timeout, async {
        while n < MAX_REQUEST {
            match sock.read(&mut buf[n..]).await {
                Ok(0) | Err(_) => break,
                Ok(k) => {
                    n += k;
                    if head_done(&buf[..n]) {
                        break;
                    }
                }
            }
        }
    })
    .await;
    read.ok()
        .map(|()| String::from_utf8_lossy(&buf[..n]).into_owned())
}

/// Why a response stopped before its end.
enum Cut {
    TimedOut,
    Broken,
}

impl From<Cut> for Outcome {
    fn from(c: Cut) -> Self {
        match c {
            Cut::TimedOut => Outcome::WriteTimedOut,
            Cut::Broken => Outcome::Broken,
        }
    }
}

async fn write<W: AsyncWrite + Unpin>(
    w: &mut W,
    bytes: &[u8],
    timeout: Duration,
) -> Result<(), Cut> {
    match tokio::time::timeout(timeout, w.write_all(bytes)).await {
        Ok(Ok(())) => Ok(()),
        Ok(Err(_)) => Err(Cut::Broken),
        Err(_) => Err(Cut::TimedOut),
    }
}

/// Sends `len` bytes of `file` in pieces of at most [`CHUNK`], each within `timeout`. Reads
/// run on the blocking pool; the one buffer travels there and back.
async fn stream_file<W: AsyncWrite + Unpin>(
    w: &mut W,
    mut file: std::fs::File,
    len: u64,
    timeout: Duration,
) -> Result<(), Cut> {
    let mut buf = vec![0u8; CHUNK];
    let mut left = len;
    while left > 0 {
        let want = usize::try_from(left).map_or(CHUNK, |l| l.min(CHUNK));
        let (f, b, read) = tokio::task::spawn_blocking(move || {
            let read = file.read(&mut buf[..want]);
            (file, buf, read)
        })
        .await
        .map_err(|_| Cut::Broken)?;
        (file, buf) = (f, b);
        let n = match read {
            Ok(0) | Err(_) => return Err(Cut::Broken),
            Ok(n) => n,
        };
        write(w, &buf[..n], timeout).await?;
        left -= n as u64;
    }
    Ok(())
}

/// Writes `answer`: the head, then (unless HEAD) the body.
async fn send<W: AsyncWrite + Unpin>(
    w: &mut W,
    answer: Answer,
    csp: &str,
    write_timeout: Duration,
) -> Outcome {
    let status = answer.status;
    if let Err(c) = write(w, answer.head(csp).as_bytes(), write_timeout).await {
        return c.into();
    }
    if answer.head_only {
        return Outcome::Answered(status);
    }
    let sent = match answer.body {
        Body::Text(t) => write(w, t.as_bytes(), write_timeout).await,
        Body::File(f) => stream_file(w, f.file, f.len, write_timeout).await,
    };
    match sent {
        Ok(()) => Outcome::Answered(status),
        Err(c) => c.into(),
    }
}

/// Answers the request `request` on `w` within the limits (the part of a connection after its
/// request head is read).
async fn respond<W: AsyncWrite + Unpin>(
    w: &mut W,
    request: Option<&str>,
    site: &Site,
    limits: &Limits,
) -> Outcome {
    let answer = match request {
        Some(r) => answer(site, r),
        None => Answer::text(408, "Request Timeout", "request timeout\n"),
    };
    tokio::time::timeout(
        limits.response_deadline,
        send(w, answer, site.csp(), limits.write_timeout),
    )
    .await
    .unwrap_or(Outcome::DeadlineExceeded)
}

/// Serves one connection: its request, then the answer, then a clean close.
pub async fn handle(mut sock: TcpStream, site: &Site, limits: &Limits) -> Outcome {
    let request = read_head(&mut sock, limits.read_timeout).await;
    let outcome = respond(&mut sock, request.as_deref(), site, limits).await;
    if matches!(outcome, Outcome::Answered(_)) {
        let _ = tokio::time::timeout(limits.write_timeout, sock.shutdown()).await;
    }
    outcome
}

/// Answers one connection over the cap with a `503`.
async fn refuse(mut sock: TcpStream, site: &Site, limits: &Limits) -> Outcome {
    if read_head(&mut sock, limits.read_timeout).await.is_none() {
        return Outcome::Broken;
    }
    let mut answer = Answer::text(503, "Service Unavailable", "busy; try again\n");
    answer.extra_headers = "Retry-After: 1\r\n";
    let outcome = tokio::time::timeout(
        limits.response_deadline,
        send(&mut sock, answer, site.csp(), limits.write_timeout),
    )
    .await
    .unwrap_or(Outcome::DeadlineExceeded);
    let _ = tokio::time::timeout(limits.write_timeout, sock.shutdown()).await;
    outcome
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
                Slot::Serve(_permit) => handle(sock, &site, &limits).await,
                Slot::Refuse(_permit) => refuse(sock, &site, &limits).await,
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
