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
