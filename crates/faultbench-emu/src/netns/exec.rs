//! Running a command inside a device.
//!
//! A command enters all namespaces of the device's PID 1 with `nsenter` (which forks once more
//! so the command is a member of the device's PID namespace: `ps` shows it, `kill -9 -1` from
//! it reaches only the device). It gets a clean environment (the device's `PATH`, `HOME`,
//! `HOSTNAME` and lab.conf `env`), stdin from `/dev/null`, and its own process group on the
//! host side: a timeout kills that whole group, i.e. the command and every child that did not
//! detach itself. Daemons the command starts (they call `setsid`) keep running, as after a
//! `docker exec`.
//!
//! Output is capped per stream; what goes beyond the cap is read and dropped, and `truncated`
//! is set. Once the command has exited, output still held open by a background child is
//! collected for a short grace period only.

use super::state::ProcId;
use faultbench_core::emulator::ExecOutput;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt};

/// Default cap per stream (stdout and stderr each).
pub const DEFAULT_OUTPUT_CAP: usize = 1 << 20;
/// How long to keep reading after the command exited (background children may hold the pipes).
const DRAIN_GRACE: Duration = Duration::from_millis(100);

/// The `nsenter` prefix that enters every namespace of `init`.
pub(crate) fn nsenter_args(init: ProcId) -> Vec<String> {
    vec![
        "-t".into(),
        init.pid.to_string(),
        "-m".into(),
        "-u".into(),
        "-i".into(),
        "-n".into(),
        "-p".into(),
        "-C".into(),
        "--".into(),
    ]
}

/// A `tokio` command that runs `argv` inside the device held by `init`.
pub(crate) fn device_command(
    init: ProcId,
    argv: &[String],
    env: &[(String, String)],
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("nsenter");
    cmd.args(nsenter_args(init))
        .args(argv)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    cmd
}

/// Kills a process group when dropped, unless disarmed: an abandoned exec (its future dropped)
/// must not leave the command running.
struct GroupGuard(Option<i32>);

impl GroupGuard {
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            // SAFETY: kill(2) on a process group we created.
            unsafe {
                libc::kill(-pgid, libc::SIGKILL);
            }
        }
    }
}

impl Drop for GroupGuard {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What a stream produced so far: bytes kept and whether some were dropped. Shared with the
/// reader task so that output read before a background child stalled the pipe is not lost.
type Captured = std::sync::Arc<std::sync::Mutex<(Vec<u8>, bool)>>;

/// Reads up to `cap` bytes into `into`, then discards the rest.
async fn read_capped<R: AsyncRead + Unpin>(mut r: R, cap: usize, into: Captured) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                let mut g = into.lock().unwrap_or_else(|e| e.into_inner());
                let room = cap.saturating_sub(g.0.len());
                if n > room {
                    g.1 = true;
                }
                g.0.extend_from_slice(&buf[..n.min(room)]);
            }
        }
    }
}

fn spawn_reader<R: AsyncRead + Unpin + Send + 'static>(
    r: Option<R>,
    cap: usize,
) -> (tokio::task::JoinHandle<()>, Captured) {
    let cap_buf: Captured = Default::default();
    let c = cap_buf.clone();
    let task = tokio::spawn(async move {
        if let Some(r) = r {
            read_capped(r, cap, c).await;
        }
    });
    (task, cap_buf)
}

/// Runs `argv` in the device of `init` with a timeout and an output cap per stream.
pub(crate) async fn run(
    init: ProcId,
    argv: &[String],
    env: &[(String, String)],
    timeout: Duration,
    cap: usize,
) -> std::io::Result<ExecOutput> {
    let started = Instant::now();
    let mut child = device_command(init, argv, env).spawn()?;
    let mut guard = GroupGuard(child.id().map(|p| p as i32));
    let (out_task, out_buf) = spawn_reader(child.stdout.take(), cap);
    let (err_task, err_buf) = spawn_reader(child.stderr.take(), cap);
    let (status, timed_out) = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(status) => (status.ok(), false),
        Err(_) => {
            guard.kill();
            (child.wait().await.ok(), true)
        }
    };
    if !timed_out {
        // The command is done; what is left of its group are background children.
        guard.0 = None;
    }
    for task in [out_task, err_task] {
        let abort = task.abort_handle();
        if tokio::time::timeout(DRAIN_GRACE, task).await.is_err() {
            abort.abort();
        }
    }
    let take = |c: &Captured| {
        let g = c.lock().unwrap_or_else(|e| e.into_inner());
        (String::from_utf8_lossy(&g.0).into_owned(), g.1)
    };
    let (stdout, out_cut) = take(&out_buf);
    let (stderr, err_cut) = take(&err_buf);
    let exit_code = if timed_out {
        None
    } else {
        status.and_then(|s| s.code())
    };
    Ok(ExecOutput {
        stdout,
        stderr,
        exit_code,
        timed_out,
        truncated: out_cut || err_cut,
        duration_ms: started.elapsed().as_millis() as u64,
    })
}
