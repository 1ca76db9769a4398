//! A small static file server for the viewer's folder: GET/HEAD only, files under the folder
//! only (no `..`, no links out), the pages' CSP repeated as a header, one request per
//! connection, bounded request size and time.

use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const MAX_REQUEST: usize = 8 * 1024;
const READ_TIMEOUT: Duration = Duration::from_secs(10);

fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The file a request path names, if it is a regular file inside `root`.
pub fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next()?;
    let decoded = percent_decode(path)?;
    if decoded.contains('\0') || decoded.contains('\\') {
        return None;
    }
    let rel = decoded.trim_start_matches('/');
    let rel = if rel.is_empty() || rel.ends_with('/') {
        format!("{rel}index.html")
    } else {
        rel.to_string()
    };
    let rel = Path::new(&rel);
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let full = root.join(rel);
    // No symbolic link anywhere on the way: the site has none, so one would be planted.
    let mut p = root.to_path_buf();
    for c in rel.components() {
        p.push(c);
        let meta = std::fs::symlink_metadata(&p).ok()?;
        if meta.file_type().is_symlink() {
            return None;
        }
    }
    std::fs::symlink_metadata(&full)
        .ok()
        .filter(|m| m.is_file())
        .map(|_| full)
}

async fn respond(mut sock: TcpStream, root: &Path) {
    let mut buf = vec![0u8; MAX_REQUEST];
    let mut n = 0;
    let head_done =
        |b: &[u8]| b.windows(4).any(|w| w == b"\r\n\r\n") || b.windows(2).any(|w| w == b"\n\n");
    let read = tokio::time::timeout(READ_TIMEOUT, async {
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
    let request = String::from_utf8_lossy(&buf[..n]);
    let mut parts = request.lines().next().unwrap_or("").split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let (status, ctype, body): (&str, &str, Vec<u8>) = if read.is_err() {
        (
            "408 Request Timeout",
            "text/plain",
            b"request timeout\n".to_vec(),
        )
    } else if method != "GET" && method != "HEAD" {
        (
            "405 Method Not Allowed",
            "text/plain",
            b"only GET and HEAD\n".to_vec(),
        )
    } else {
        match resolve(root, target).and_then(|p| std::fs::read(&p).ok().map(|b| (p, b))) {
            Some((p, b)) => ("200 OK", content_type(&p), b),
            None => ("404 Not Found", "text/plain", b"not found\n".to_vec()),
        }
    };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = sock.write_all(head.as_bytes()).await;
    if method != "HEAD" {
        let _ = sock.write_all(&body).await;
    }
    let _ = sock.shutdown().await;
}

/// Serves `root` at `addr` until Ctrl-C.
pub async fn serve(root: &Path, addr: SocketAddr) -> anyhow::Result<()> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|e| anyhow::anyhow!("--serve {addr}: cannot listen: {e}"))?;
    let local = listener.local_addr()?;
    println!(
        "serving {} at http://{local}/ (Ctrl-C to stop)",
        root.display()
    );
    let root = root.to_path_buf();
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {
                eprintln!("stopped");
                return Ok(());
            }
            accepted = listener.accept() => {
                let Ok((sock, _)) = accepted else { continue };
                let root = root.clone();
                tokio::spawn(async move { respond(sock, &root).await });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn only_files_inside_the_site() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("runs")).unwrap();
        std::fs::write(root.join("index.html"), "x").unwrap();
        std::fs::write(root.join("runs/a.html"), "x").unwrap();
        assert_eq!(resolve(root, "/").unwrap(), root.join("index.html"));
        assert_eq!(
            resolve(root, "/runs/a.html?x=1").unwrap(),
            root.join("runs/a.html")
        );
        assert!(resolve(root, "/../etc/passwd").is_none());
        assert!(resolve(root, "/runs/%2e%2e/%2e%2e/etc/passwd").is_none());
        assert!(resolve(root, "/runs").is_none(), "a folder is not a file");
        std::os::unix::fs::symlink("/etc/passwd", root.join("link.html")).unwrap();
        assert!(resolve(root, "/link.html").is_none());
        assert!(resolve(root, "/runs/a.html%00").is_none());
    }
}
