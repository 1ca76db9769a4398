//! Reading a lab's own files for what they promise, never following a link.
//!
//! A device tree may hold links (they are copied as links and resolve inside the device); on
//! the host the same link would lead anywhere, e.g. `r1/etc` → `/etc`. The same holds for a
//! running device's files read through `/proc/PID/root`, which whoever runs in the device can
//! change at any moment. The path is therefore walked one component at a time from a handle
//! on `root` (`openat` with `O_NOFOLLOW`, each directory as `O_DIRECTORY`), so that no
//! component can be a link, not even one swapped in while the walk runs; the file itself is
//! opened `O_NOFOLLOW | O_NONBLOCK` (a FIFO does not block) and read only if the handle is a
//! regular file.

use std::ffi::CString;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Files larger than this are not read (no startup or daemons file comes near).
const MAX: u64 = 1024 * 1024;

/// The text of `rel` under `root`, if it is a regular file reached without links.
pub(super) fn read(root: &Path, rel: &str) -> Option<String> {
    let f = std::fs::File::from(open_beneath(root, rel)?);
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX {
        return None;
    }
    let mut s = String::new();
    f.take(MAX).read_to_string(&mut s).ok()?;
    Some(s)
}

/// `openat(dir, name, flags)`.
fn open_at(dir: Option<&OwnedFd>, name: &[u8], flags: libc::c_int) -> Option<OwnedFd> {
    let c = CString::new(name).ok()?;
    let at = dir.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    // SAFETY: `c` is a valid NUL-terminated string and `at` an open directory handle (or
    // AT_FDCWD); the returned descriptor, when valid, is owned by nobody else.
    let fd = unsafe { libc::openat(at, c.as_ptr(), flags | libc::O_CLOEXEC) };
    // SAFETY: a non-negative return of openat(2) is a new descriptor this process owns.
    (fd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Opens `rel` under `root` for reading, with no link in any component of `rel` (`root`
/// itself is trusted: it is the lab directory or a device's `/proc/PID/root`).
fn open_beneath(root: &Path, rel: &str) -> Option<OwnedFd> {
    let mut parts = Vec::new();
    for part in Path::new(rel).components() {
        let std::path::Component::Normal(p) = part else {
            return None;
        };
        parts.push(p.as_bytes());
    }
    let (file, dirs) = parts.split_last()?;
    let mut dir = open_at(
        None,
        root.as_os_str().as_bytes(),
        libc::O_PATH | libc::O_DIRECTORY,
    )?;
    for d in dirs {
        // A link opened O_PATH | O_NOFOLLOW is the link itself, which O_DIRECTORY refuses.
        dir = open_at(
            Some(&dir),
            d,
            libc::O_PATH | libc::O_DIRECTORY | libc::O_NOFOLLOW,
        )?;
    }
    open_at(
        Some(&dir),
        file,
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_behind_links_are_not_read() {
        let t = tempfile::tempdir().unwrap();
        let host = t.path().join("host");
        std::fs::create_dir_all(host.join("frr")).unwrap();
        std::fs::write(host.join("frr/daemons"), "HOST\n").unwrap();
        let lab = t.path().join("lab");
        std::fs::create_dir_all(lab.join("r1/etc/frr")).unwrap();
        std::fs::write(lab.join("r1/etc/frr/daemons"), "zebra=yes\n").unwrap();
        std::fs::create_dir_all(lab.join("r2")).unwrap();
        std::os::unix::fs::symlink(&host, lab.join("r2/etc")).unwrap();
        std::fs::create_dir_all(lab.join("r3/etc/frr")).unwrap();
        std::os::unix::fs::symlink(host.join("frr/daemons"), lab.join("r3/etc/frr/daemons"))
            .unwrap();
        assert_eq!(
            read(&lab, "r1/etc/frr/daemons").as_deref(),
            Some("zebra=yes\n")
        );
        assert_eq!(read(&lab, "r2/etc/frr/daemons"), None);
        assert_eq!(read(&lab, "r3/etc/frr/daemons"), None);
        assert_eq!(read(&lab, "../host/frr/daemons"), None);
        assert_eq!(read(&lab, "r1/etc/frr"), None, "a folder is not a file");
        // A FIFO is refused without blocking.
        let fifo = std::ffi::CString::new(lab.join("r1/etc/fifo").as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid path string.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        assert_eq!(read(&lab, "r1/etc/fifo"), None);
    }
}
