//! Running a command inside a device.
//!
//! A command enters every namespace of the device's PID 1 (`setns` on the descriptors of
//! `/proc/<pid>/ns/*`, opened before the fork), then forks once more — as `nsenter` does — so
//! that it is a member of the device's PID namespace: `ps` shows it, `kill -9 -1` from it
//! reaches only the device. The intermediate process waits on the host side and exits with the
//! command's status. The command runs under the device's [system-call filter](super::seccomp),
//! with a clean environment (the device's `PATH`, `HOME`, `HOSTNAME` and lab.conf `env`), stdin
//! from `/dev/null`, and its own process group: a timeout kills that whole group, i.e. the
//! command and every child that did not detach itself. Daemons the command starts (they call
//! `setsid`) keep running, as after a `docker exec`.
//!
//! The work is done by the small [`nsexec`](super::nsexec) entry, started with `posix_spawn`,
//! when one is found ([`super::spawn`]); otherwise by the hook below, in a fork of this process.
//! The interactive variant ([`interactive_command`], one command per `faultbench lab exec`)
//! always uses the hook: its stdin is the terminal, so it has no status pipe to report on.
//!
//! Output is capped per stream; what goes beyond the cap is read and dropped, and `truncated`
//! is set. Once the command has exited, output still held open by a background child is
//! collected for a short grace period only.

use super::nsexec::NAMESPACES;
use super::seccomp;
use super::spawn::{SpawnFailure, spawn_piped};
use super::state::ProcId;
use faultbench_core::emulator::ExecOutput;
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::io::{AsyncRead, AsyncReadExt};

/// Default cap per stream (stdout and stderr each).
pub const DEFAULT_OUTPUT_CAP: usize = 1 << 20;
/// How long to keep reading after the command exited (background children may hold the pipes).
const DRAIN_GRACE: Duration = Duration::from_millis(100);

/// Opens the namespace descriptors of a device's PID 1.
fn open_namespaces(init: ProcId) -> std::io::Result<Vec<OwnedFd>> {
    if !init.alive() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "the device is not running",
        ));
    }
    NAMESPACES
        .iter()
        .map(|ns| std::fs::File::open(format!("/proc/{}/ns/{ns}", init.pid)).map(OwnedFd::from))
        .collect()
}

/// A `tokio` command that runs `argv` inside the device held by `init`, in a process group of
/// its own (so a timeout can kill the whole tree).
pub(crate) fn device_command(
    init: ProcId,
    argv: &[String],
    env: &[(String, String)],
) -> std::io::Result<tokio::process::Command> {
    let mut cmd = interactive_command(init, argv, env)?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    Ok(cmd)
}

/// Like [`device_command`], but in the caller's process group and with the caller's stdio, so
/// that a terminal can drive it (`faultbench lab exec r1 -- vtysh`).
pub(crate) fn interactive_command(
    init: ProcId,
    argv: &[String],
    env: &[(String, String)],
) -> std::io::Result<tokio::process::Command> {
    let fds = open_namespaces(init)?;
    let filter = seccomp::program();
    let mut cmd = tokio::process::Command::new(&argv[0]);
    cmd.args(&argv[1..])
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())));
    let raw: Vec<i32> = fds.iter().map(|f| f.as_raw_fd()).collect();
    // SAFETY: the closure runs between fork and exec and only makes system calls on data
    // prepared here (`raw`, `filter`); `fds` keeps the descriptors open until then.
    unsafe {
        cmd.pre_exec(move || {
            let _keep = &fds;
            enter(&raw, &filter)
        });
    }
    Ok(cmd)
}

/// In the forked child: join the device's namespaces, fork into its PID namespace, drop the
/// capabilities a container lacks, install the filter. The intermediate process waits and mirrors the command's exit status.
fn enter(ns_fds: &[i32], filter: &[seccomp::SockFilter]) -> std::io::Result<()> {
    // SAFETY: (the whole function) async-signal-safe system calls only.
    unsafe {
        for fd in ns_fds {
            if libc::setns(*fd, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        let pid = libc::fork();
        if pid < 0 {
            return Err(std::io::Error::last_os_error());
        }
        if pid > 0 {
            // Nothing of the parent's may stay open here: the spawning side learns that the
            // exec happened when the last copy of its status pipe closes.
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
            let mut status = 0;
            loop {
                let r = libc::waitpid(pid, &mut status, 0);
                if r == pid {
                    break;
                }
                if r < 0 && *libc::__errno_location() != libc::EINTR {
                    libc::_exit(127);
                }
            }
            if libc::WIFEXITED(status) {
                libc::_exit(libc::WEXITSTATUS(status));
            }
            let sig = libc::WTERMSIG(status);
            libc::signal(sig, libc::SIG_DFL);
            libc::kill(libc::getpid(), sig);
            libc::_exit(128 + sig);
        }
        seccomp::drop_container_caps()?;
        seccomp::install(filter)
    }
}

/// Kills a process group when dropped, unless disarmed: an abandoned exec (its future dropped)
/// must not leave the command running.
pub(super) struct GroupGuard(Option<i32>);

impl GroupGuard {
    /// Guards the group led by `pid` (a child started with `process_group(0)`).
    pub(super) fn new(pid: Option<u32>) -> Self {
        GroupGuard(pid.map(|p| p as i32))
    }

    /// The group is no longer ours to kill.
    pub(super) fn disarm(&mut self) {
        self.0 = None;
    }

    pub(super) fn kill(&mut self) {
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
    let spawned = match spawn_piped(init, argv, env).await {
        Ok(c) => c,
        // The program does not exist in the device: answer like a shell would.
        Err(SpawnFailure::Exec(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Ok(ExecOutput {
                stderr: format!("{}: command not found\n", argv[0]),
                exit_code: Some(127),
                duration_ms: started.elapsed().as_millis() as u64,
                ..Default::default()
            });
        }
        Err(SpawnFailure::Exec(e) | SpawnFailure::Enter(e)) => return Err(e),
    };
    collect(init, spawned, started, timeout, cap).await
}

/// Runs the [`devstate`](super::devstate) reader in the device of `init` (its output is that
/// of the snapshot script without FRR's configuration, the ruleset left out when its nftables
/// generation is still `known_generation`); `None` when this process has no entry program to
/// run it.
pub(crate) async fn run_state_reader(
    init: ProcId,
    env: &[(String, String)],
    known_generation: Option<u32>,
    timeout: Duration,
    cap: usize,
) -> Option<std::io::Result<ExecOutput>> {
    let started = Instant::now();
    Some(
        match super::spawn::spawn_state_reader(init, env, known_generation).await? {
            Ok(spawned) => collect(init, spawned, started, timeout, cap).await,
            Err(SpawnFailure::Exec(e) | SpawnFailure::Enter(e)) => Err(e),
        },
    )
}

/// Waits for a started command (killing its group at `timeout`) and gathers its output.
async fn collect(
    init: ProcId,
    mut spawned: super::spawn::Spawned,
    started: Instant,
    timeout: Duration,
    cap: usize,
) -> std::io::Result<ExecOutput> {
    let child = &mut spawned.child;
    let mut guard = GroupGuard::new(child.id());
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
        guard.disarm();
        if let Some(cpu) = spawned.cpu().await {
            ledger::add(init, cpu);
        }
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

/// The CPU the commands run in each device used (through the entry, which measures it), by the
/// device's PID 1: no scan of a lab's processes sees a command once it has ended, since its
/// parent (the entry) is outside the lab. A lab's `cpu_used` adds its devices' sums.
pub(crate) mod ledger {
    use super::ProcId;
    use std::collections::HashMap;
    use std::sync::Mutex;
    use std::time::Duration;

    static SPENT: Mutex<Option<HashMap<(i32, u64), Duration>>> = Mutex::new(None);

    pub(crate) fn add(init: ProcId, cpu: Duration) {
        let mut g = SPENT.lock().unwrap_or_else(|e| e.into_inner());
        *g.get_or_insert_with(HashMap::new)
            .entry((init.pid, init.start))
            .or_default() += cpu;
    }

    /// What the commands in these devices used so far.
    pub(crate) fn sum(inits: impl Iterator<Item = ProcId>) -> Duration {
        let g = SPENT.lock().unwrap_or_else(|e| e.into_inner());
        let Some(m) = g.as_ref() else {
            return Duration::ZERO;
        };
        inits.filter_map(|i| m.get(&(i.pid, i.start))).sum()
    }

    /// Drops the sums of devices that are gone (their lab was torn down).
    pub(crate) fn forget(inits: impl Iterator<Item = ProcId>) {
        let mut g = SPENT.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = g.as_mut() {
            for i in inits {
                m.remove(&(i.pid, i.start));
            }
        }
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn sums_are_kept_per_device_and_forgotten_with_it() {
            // PIDs no real process has, so that parallel tests never share a key.
            let a = ProcId {
                pid: -101,
                start: 1,
            };
            let b = ProcId {
                pid: -102,
                start: 1,
            };
            let a_again = ProcId {
                pid: -101,
                start: 2,
            };
            add(a, Duration::from_millis(3));
            add(a, Duration::from_millis(4));
            add(b, Duration::from_millis(10));
            assert_eq!(sum([a].into_iter()), Duration::from_millis(7));
            assert_eq!(sum([a, b].into_iter()), Duration::from_millis(17));
            assert_eq!(
                sum([a_again].into_iter()),
                Duration::ZERO,
                "a recycled PID is another device"
            );
            forget([a, b].into_iter());
            assert_eq!(sum([a, b].into_iter()), Duration::ZERO);
        }
    }
}
