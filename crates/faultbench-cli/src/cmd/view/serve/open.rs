//! From a request target to an open file of the site, never through a link.
//!
//! The site is written by us and holds no links, FIFOs or devices; any such thing was planted.
//! Checking a path and then opening it lets a link be swapped in between the two, so nothing
//! here looks a path up twice: the target's folders are opened one at a time from the site
//! root's descriptor with `openat(O_DIRECTORY | O_NOFOLLOW)`, the file last with
//! `openat(O_NOFOLLOW | O_NONBLOCK)` (a FIFO opens without waiting for a writer), and the
//! opened handle is then asked (`fstat`) whether it is a regular file. A link at any component
//! fails the open itself.

use rustix::fs::{Mode, OFlags, openat};
use rustix::io::Errno;
use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// An opened file of the site.
#[derive(Debug)]
pub struct SiteFile {
    /// The open handle, a regular file.
    pub file: File,
    /// Its size when opened: the response's Content-Length.
    pub len: u64,
    /// Its path inside the site, `/`-separated (`runs/a.html`).
    pub rel: String,
}

/// Why a request target is not served (all are a 404 to the client).
#[derive(Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Not a plain path inside the site (`..`, `.`, an empty component, NUL, a backslash,
    /// a bad percent escape).
    BadPath,
    /// Nothing there (or a component that is not a folder — or a link to one).
    Missing,
    /// The file is a symbolic link.
    Link,
    /// Something other than a regular file: a folder, FIFO, socket or device.
    NotAFile,
    /// Any other failure to open (permissions, I/O).
    Unreadable(std::io::ErrorKind),
}

/// The components of the file a request target names, inside the site: query and fragment
/// dropped, percent escapes decoded, `index.html` for a folder (`/`, `/runs/`).
pub fn components(target: &str) -> Result<Vec<String>, Refusal> {
    let path = target.split(['?', '#']).next().unwrap_or_default();
    let decoded = percent_decode(path).ok_or(Refusal::BadPath)?;
    if decoded.contains(['\0', '\\']) {
        return Err(Refusal::BadPath);
    }
    let rel = decoded.trim_start_matches('/');
    let rel = if rel.is_empty() || rel.ends_with('/') {
        format!("{rel}index.html")
    } else {
        rel.to_string()
    };
    let parts: Vec<String> = rel.split('/').map(str::to_string).collect();
    if parts.iter().any(|p| p.is_empty() || p == "." || p == "..") {
        return Err(Refusal::BadPath);
    }
    Ok(parts)
}

/// Opens the file `target` names under the folder `root`, refusing links anywhere on the way
/// and anything but a regular file (see the module documentation).
pub fn open_target(root: BorrowedFd<'_>, target: &str) -> Result<SiteFile, Refusal> {
    let parts = components(target)?;
    let Some((name, folders)) = parts.split_last() else {
        return Err(Refusal::BadPath);
    };
    let mut folder: Option<OwnedFd> = None;
    for part in folders {
        let at = folder.as_ref().map_or(root, AsFd::as_fd);
        let next = openat(
            at,
            part.as_str(),
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(refusal)?;
        folder = Some(next);
    }
    let at = folder.as_ref().map_or(root, AsFd::as_fd);
    let fd = openat(
        at,
        name.as_str(),
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(refusal)?;
    let file = File::from(fd);
    let meta = file.metadata().map_err(|e| Refusal::Unreadable(e.kind()))?;
    if !meta.file_type().is_file() {
        return Err(Refusal::NotAFile);
    }
    Ok(SiteFile {
        file,
        len: meta.len(),
        rel: parts.join("/"),
    })
}

fn refusal(e: Errno) -> Refusal {
    match e {
        // O_NOFOLLOW on a link; with O_DIRECTORY Linux says ENOTDIR instead.
        Errno::LOOP => Refusal::Link,
        Errno::NOENT | Errno::NOTDIR => Refusal::Missing,
        e => Refusal::Unreadable(std::io::Error::from(e).kind()),
    }
}

/// `s` with its percent escapes decoded, or `None` for a malformed escape (`%` not followed by
/// two hex digits; `percent-encoding` would keep it as text) or bytes that are not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let well_formed = b.iter().enumerate().all(|(i, &c)| {
        c != b'%'
            || b.get(i + 1..i + 3)
                .is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit))
    });
    if !well_formed {
        return None;
    }
    percent_encoding::percent_decode_str(s)
        .decode_utf8()
        .ok()
        .map(|c| c.into_owned())
}

/// The Content-Type of a site file, by its extension (the site has only these).
pub fn content_type(rel: &str) -> &'static str {
    match rel.rsplit_once('.').map(|(_, ext)| ext) {
        Some("html") => "text/html; charset=utf-8",
        Some("css") => "text/css; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("json") => "application/json",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::{Refusal, open_target};
    use std::io::Read;
    use std::os::fd::AsFd;
    use std::path::{Path, PathBuf};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    use std::time::Duration;

    fn open(root: &Path, target: &str) -> Result<super::SiteFile, Refusal> {
        let dir = std::fs::File::open(root).unwrap();
        open_target(dir.as_fd(), target)
    }

    /// The file served for `target`, as a path under `root`.
    fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
        open(root, target).ok().map(|f| root.join(f.rel))
    }

    fn read(root: &Path, target: &str) -> Result<String, Refusal> {
        let mut f = open(root, target)?;
        let mut s = String::new();
        f.file.read_to_string(&mut s).unwrap();
        Ok(s)
    }

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

    #[test]
    fn links_fifos_and_folders_are_never_opened() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("site");
        std::fs::create_dir_all(root.join("runs")).unwrap();
        std::fs::write(root.join("runs/a.html"), "page").unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "secret").unwrap();
        std::os::unix::fs::symlink(&secret, root.join("out.html")).unwrap();
        // Even a link to a file of the site: the site has none, so it was planted.
        std::os::unix::fs::symlink(root.join("runs/a.html"), root.join("in.html")).unwrap();
        std::os::unix::fs::symlink(root.join("runs"), root.join("alias")).unwrap();
        std::os::unix::fs::symlink(dir.path(), root.join("up")).unwrap();
        rustix::fs::mkfifoat(rustix::fs::CWD, root.join("fifo.html"), 0o644.into()).unwrap();

        assert_eq!(read(&root, "/runs/a.html").unwrap(), "page");
        assert_eq!(read(&root, "/out.html").unwrap_err(), Refusal::Link);
        assert_eq!(read(&root, "/in.html").unwrap_err(), Refusal::Link);
        // A link as a folder on the way: the same file through the real folder is served.
        assert!(read(&root, "/alias/a.html").is_err());
        assert!(read(&root, "/up/secret").is_err());
        assert_eq!(read(&root, "/runs").unwrap_err(), Refusal::NotAFile);
        assert_eq!(read(&root, "/runs/").unwrap_err(), Refusal::Missing);
        assert_eq!(read(&root, "/nothing.html").unwrap_err(), Refusal::Missing);
        assert_eq!(read(&root, "/runs/a.html/x").unwrap_err(), Refusal::Missing);
        assert_eq!(read(&root, "/runs//a.html").unwrap_err(), Refusal::BadPath);
        assert_eq!(read(&root, "/runs/./a.html").unwrap_err(), Refusal::BadPath);
        assert_eq!(read(&root, "/%zz").unwrap_err(), Refusal::BadPath);

        // A FIFO with no writer: opening must not wait for one.
        let (tx, rx) = std::sync::mpsc::channel();
        let fifo_root = root.clone();
        std::thread::spawn(move || {
            let _ = tx.send(read(&fifo_root, "/fifo.html"));
        });
        let fifo = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("opening a FIFO blocked");
        assert_eq!(fifo.unwrap_err(), Refusal::NotAFile);
    }

    #[test]
    fn a_link_swapped_in_between_requests_is_never_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("site");
        std::fs::create_dir_all(&root).unwrap();
        let secret = dir.path().join("secret");
        std::fs::write(&secret, "secret").unwrap();
        std::fs::write(root.join("page.html"), "page").unwrap();

        // A second thread keeps replacing page.html (atomically, by rename) with a link to
        // the secret and back with a regular file.
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicUsize::new(0));
        let swapper = {
            let (root, secret, stop, swaps) =
                (root.clone(), secret.clone(), stop.clone(), swaps.clone());
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let _ = std::fs::remove_file(root.join("link.tmp"));
                    std::os::unix::fs::symlink(&secret, root.join("link.tmp")).unwrap();
                    std::fs::rename(root.join("link.tmp"), root.join("page.html")).unwrap();
                    std::fs::write(root.join("file.tmp"), "page").unwrap();
                    std::fs::rename(root.join("file.tmp"), root.join("page.html")).unwrap();
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
            })
        };
        let mut requests = 0;
        while (requests < 3_000 || swaps.load(Ordering::Relaxed) < 1_000) && !swapper.is_finished()
        {
            requests += 1;
            // Renames are atomic: page.html is always there, a file or a link.
            match read(&root, "/page.html") {
                Ok(body) => assert_eq!(body, "page", "request {requests} served the link"),
                Err(e) => assert_eq!(e, Refusal::Link, "request {requests}"),
            }
        }
        stop.store(true, Ordering::Relaxed);
        swapper.join().unwrap();
    }
}
