//! Talking to an FRR daemon on its vty socket, as `vtysh` does.
//!
//! Every daemon listens on `/run/frr/<daemon>.vty` inside the device (reached from the host
//! through `/proc/<pid>/root`). A command is sent terminated by NUL; the answer ends with three
//! NULs and a status byte. This costs a fraction of a millisecond, where starting `vtysh` costs
//! about 30 ms.

use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Longest answer read from one command (a large LSDB or BGP table stays far below it).
const MAX_ANSWER: usize = 8 * 1024 * 1024;

/// Sends one command to an FRR daemon's vty socket and returns its output. The session
/// starts in FRR's view mode, where `show running-config` is unknown: use
/// [`vty_enable_command`] for that.
pub async fn vty_command(
    socket: &Path,
    command: &str,
    timeout: Duration,
) -> std::io::Result<String> {
    vty_session(socket, &[command], timeout).await
}

/// Like [`vty_command`], after `enable` on the same session (what `vtysh` does first).
pub async fn vty_enable_command(
    socket: &Path,
    command: &str,
    timeout: Duration,
) -> std::io::Result<String> {
    vty_session(socket, &["enable", command], timeout).await
}

/// Runs `commands` in order on one vty session; returns the last one's output.
async fn vty_session(
    socket: &Path,
    commands: &[&str],
    timeout: Duration,
) -> std::io::Result<String> {
    let work = async {
        let mut s = tokio::net::UnixStream::connect(socket).await?;
        let mut last = String::new();
        for command in commands {
            let mut msg = command.as_bytes().to_vec();
            msg.push(0);
            s.write_all(&msg).await?;
            let mut out = Vec::new();
            let mut buf = [0u8; 16 * 1024];
            loop {
                let n = s.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
                let l = out.len();
                if l >= 4 && out[l - 4..l - 1] == [0, 0, 0] {
                    out.truncate(l - 4);
                    break;
                }
                if l > MAX_ANSWER {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("`{command}` answered more than {MAX_ANSWER} bytes"),
                    ));
                }
            }
            last = String::from_utf8_lossy(&out).into_owned();
        }
        Ok(last)
    };
    tokio::time::timeout(timeout, work)
        .await
        .unwrap_or_else(|_| {
            Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "vty timeout",
            ))
        })
}

/// A daemon's vty socket inside a device, found without leaving the device's file tree.
///
/// After an agent has worked in a device, anything under its `/run/frr` may be a link an
/// agent made: a plain `/proc/<pid>/root/run/frr/<daemon>.vty` would follow an absolute link
/// to the *host's* file of that name. `openat2(RESOLVE_IN_ROOT)` resolves every link inside
/// the device's root instead, and the result must be a socket; it is then reached through its
/// `/proc/self/fd` entry, which names exactly the file opened.
#[derive(Debug)]
pub struct DeviceSocket {
    fd: std::os::fd::OwnedFd,
}

impl DeviceSocket {
    /// Opens `/run/frr/<daemon>.vty` of the device whose init is `pid`. `daemon` must be a
    /// plain name (letters and digits).
    pub fn open(pid: i32, daemon: &str) -> std::io::Result<DeviceSocket> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        if daemon.is_empty() || !daemon.bytes().all(|b| b.is_ascii_alphanumeric()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                format!("`{daemon}` is not a daemon name"),
            ));
        }
        let root = std::fs::File::open(format!("/proc/{pid}/root"))?;
        let rel = std::ffi::CString::new(format!("run/frr/{daemon}.vty"))
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        // SAFETY: an all-zero `open_how` is its documented default; every field is plain data.
        let mut how: libc::open_how = unsafe { std::mem::zeroed() };
        how.flags = (libc::O_PATH | libc::O_CLOEXEC) as u64;
        how.resolve = libc::RESOLVE_IN_ROOT | libc::RESOLVE_NO_MAGICLINKS;
        // SAFETY: openat2(2) with a valid directory fd, a NUL-terminated path and a pointer to
        // an `open_how` of the size passed; the returned fd is owned below.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_openat2,
                root.as_raw_fd(),
                rel.as_ptr(),
                &raw const how,
                std::mem::size_of::<libc::open_how>(),
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the kernel just returned this fd to us, and nothing else owns it.
        let fd = unsafe { OwnedFd::from_raw_fd(fd as i32) };
        let meta = std::fs::metadata(format!("/proc/self/fd/{}", fd.as_raw_fd()))?;
        if !std::os::unix::fs::FileTypeExt::is_socket(&meta.file_type()) {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("/run/frr/{daemon}.vty in the device is not a socket"),
            ));
        }
        Ok(DeviceSocket { fd })
    }

    /// The path to connect to (valid while `self` lives).
    pub fn path(&self) -> std::path::PathBuf {
        use std::os::fd::AsRawFd;
        std::path::PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
    }
}
