//! How the harness starts a command inside a device: through the small
//! [`nsexec`](super::nsexec) entry when one is found, else by forking itself.
//!
//! Forking the harness copies its page tables (hundreds of megabytes of mappings, many
//! threads): measured, that copy was half of the harness's own CPU during a bring-up or a
//! run, which runs hundreds of `ip`, `vtysh` and `sh` commands in devices. `posix_spawn` of a
//! small program shares the address space until the `exec` and costs no such copy; the entry
//! then does the namespace work in a process of its own.
//!
//! The entry is the `faultbench-netshim` program (its `nsexec` applet), found as
//! [`device_spawn`] says. Without it — a library user's test binary, say — commands are
//! started as before, by a fork with an in-process hook ([`super::exec`]); both ways give the
//! same result (namespaces, PID namespace membership, capabilities, system-call filter,
//! environment, process group, exit status), so callers do not see which was used. The choice
//! is printed once with `FAULTBENCH_TIMING` set.

use super::exec::{self, GroupGuard};
use super::nsexec;
use super::state::ProcId;
use crate::shims::{BINARY_ENV, INSTALLED_DIRS, SHIM_BINARY};
use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::OnceLock;
use std::time::Duration;
use tokio::io::AsyncReadExt;

/// Environment variable choosing how device commands start: `off` forces the fork of the
/// harness; a path names the entry program (a `faultbench-netshim`); unset searches for it.
pub const SPAWN_ENV: &str = "FAULTBENCH_NSEXEC";

/// How this process starts commands inside lab devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceSpawn {
    /// `posix_spawn` of this `faultbench-netshim`, whose `nsexec` applet enters the device.
    Entry(PathBuf),
    /// A fork of this process that enters the device before `exec` (no entry found, or
    /// `FAULTBENCH_NSEXEC=off`); `why` says which.
    Fork {
        /// Why the entry is not used.
        why: String,
    },
}

impl std::fmt::Display for DeviceSpawn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSpawn::Entry(p) => write!(f, "posix_spawn of {} {}", p.display(), nsexec::APPLET),
            DeviceSpawn::Fork { why } => write!(f, "fork of this process ({why})"),
        }
    }
}

/// How device commands start in this process, decided once: `FAULTBENCH_NSEXEC` if set, else
/// `FAULTBENCH_NETSHIM` (the netshim the shims use) if set, else a
/// `faultbench-netshim` beside the running executable (or one folder up, for test binaries
/// in `target/*/deps`), in `/usr/local/lib/faultbench`, `/usr/lib/faultbench`, or on `PATH`;
/// else the fork.
pub fn device_spawn() -> &'static DeviceSpawn {
    static CHOICE: OnceLock<DeviceSpawn> = OnceLock::new();
    CHOICE.get_or_init(|| {
        // `FAULTBENCH_NETSHIM` names the netshim for the shims; it is the entry too.
        let setting = std::env::var_os(SPAWN_ENV).or_else(|| std::env::var_os(BINARY_ENV));
        let choice = choose(
            setting.as_deref(),
            std::env::current_exe().ok().as_deref(),
            std::env::var_os("PATH").as_deref(),
        );
        if std::env::var_os("FAULTBENCH_TIMING").is_some() {
            eprintln!("[faultbench timing] device commands: {choice}");
        }
        choice
    })
}

fn choose(
    setting: Option<&std::ffi::OsStr>,
    exe: Option<&Path>,
    path: Option<&std::ffi::OsStr>,
) -> DeviceSpawn {
    match setting {
        Some(s) if s == "off" => {
            return DeviceSpawn::Fork {
                why: format!("{SPAWN_ENV}=off"),
            };
        }
        Some(s) if !s.is_empty() => {
            let p = PathBuf::from(s);
            return if p.is_file() {
                DeviceSpawn::Entry(p)
            } else {
                DeviceSpawn::Fork {
                    why: format!("{SPAWN_ENV}={} is not a file", p.display()),
                }
            };
        }
        _ => {}
    }
    let mut candidates = crate::shims::netshim_candidates(exe);
    if let Some(path) = path {
        candidates.extend(std::env::split_paths(path).map(|d| d.join(SHIM_BINARY)));
    }
    match candidates.into_iter().find(|p| p.is_file()) {
        Some(p) => DeviceSpawn::Entry(p),
        None => DeviceSpawn::Fork {
            why: format!(
                "no `{SHIM_BINARY}` beside the executable, in {} or on PATH",
                INSTALLED_DIRS.join(", ")
            ),
        },
    }
}

/// Why a device command did not start.
#[derive(Debug)]
pub(super) enum SpawnFailure {
    /// The device could not be entered (it is gone, a namespace refused), or the entry program
    /// could not be started.
    Enter(io::Error),
    /// The command itself could not be executed (not found, not executable).
    Exec(io::Error),
}

/// A command started in a device.
pub(super) struct Spawned {
    pub child: tokio::process::Child,
    /// The entry's status pipe, which says what the command cost once it has ended (`None`
    /// for the fork, which cannot).
    pub status: Option<tokio::net::unix::pipe::Receiver>,
}

impl Spawned {
    /// After the command ended: the CPU it and the entry used (bounded wait, since the record
    /// is written before the entry exits; `None` when the entry was killed or there is none).
    pub(super) async fn cpu(&mut self) -> Option<Duration> {
        let rx = self.status.as_mut()?;
        let mut b = [0u8; nsexec::STATUS_LEN];
        tokio::time::timeout(Duration::from_millis(100), rx.read_exact(&mut b))
            .await
            .ok()?
            .ok()?;
        nsexec::Record::decode(&b)
            .filter(|r| r.stage == nsexec::STAGE_CPU)
            .map(|r| Duration::from_micros(r.value))
    }
}

/// Starts `argv` in the device of `init` with stdin `/dev/null`, stdout and stderr piped, in
/// a process group of its own (see [`super::exec`]). Returns once the command runs.
pub(super) async fn spawn_piped(
    init: ProcId,
    argv: &[String],
    env: &[(String, String)],
) -> Result<Spawned, SpawnFailure> {
    if argv.is_empty() {
        return Err(SpawnFailure::Exec(io::Error::new(
            io::ErrorKind::InvalidInput,
            "empty command",
        )));
    }
    match device_spawn() {
        DeviceSpawn::Entry(entry) => via_entry(entry, nsexec::APPLET, init, argv, env).await,
        DeviceSpawn::Fork { .. } => Ok(Spawned {
            child: exec::device_command(init, argv, env)
                .map_err(SpawnFailure::Enter)?
                .spawn()
                .map_err(SpawnFailure::Exec)?,
            status: None,
        }),
    }
}

/// Starts the [`devstate`](super::devstate) reader in the device held by `init`, like
/// [`spawn_piped`] starts a command; `None` when no entry program is there to run it (the
/// caller then runs the snapshot script).
pub(super) async fn spawn_state_reader(
    init: ProcId,
    env: &[(String, String)],
    known_generation: Option<u32>,
) -> Option<Result<Spawned, SpawnFailure>> {
    let args: Vec<String> = known_generation
        .map(super::devstate::known_generation_arg)
        .into_iter()
        .collect();
    match device_spawn() {
        DeviceSpawn::Entry(entry) => {
            Some(via_entry(entry, super::devstate::APPLET, init, &args, env).await)
        }
        DeviceSpawn::Fork { .. } => None,
    }
}

fn not_running() -> io::Error {
    io::Error::new(io::ErrorKind::NotFound, "the device is not running")
}

async fn via_entry(
    entry: &Path,
    applet: &str,
    init: ProcId,
    argv: &[String],
    env: &[(String, String)],
) -> Result<Spawned, SpawnFailure> {
    if !init.alive() {
        return Err(SpawnFailure::Enter(not_running()));
    }
    let (reader, writer) = io::pipe().map_err(SpawnFailure::Enter)?;
    // Nothing here may turn std's `posix_spawn` path off: no `pre_exec`, no uid/gid, and the
    // program is a path (a `PATH` in the environment would otherwise force a fork).
    let mut cmd = tokio::process::Command::new(entry);
    // The command's environment goes as arguments, the entry itself starts with none: it
    // comes from lab.conf, and the entry runs on the host (`LD_PRELOAD` there would load a
    // library into a root process outside any device).
    cmd.arg0(SHIM_BINARY)
        .arg(applet)
        .arg(init.pid.to_string())
        .arg(init.start.to_string())
        .args(env.iter().map(|(k, v)| format!("{k}={v}")))
        .arg("--")
        .args(argv)
        .env_clear()
        .stdin(Stdio::from(writer))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0);
    let spawned = cmd.spawn();
    // Our copy of the status pipe's write end goes with the command.
    drop(cmd);
    let mut child = spawned.map_err(SpawnFailure::Enter)?;
    // An abandoned spawn (its future dropped) must not leave the command running.
    let mut guard = GroupGuard::new(child.id());
    let mut record = [0u8; nsexec::STATUS_LEN];
    let mut rx = None;
    let read = async {
        let r = rx.insert(tokio::net::unix::pipe::Receiver::from_owned_fd(
            OwnedFd::from(reader),
        )?);
        r.read_exact(&mut record).await
    }
    .await;
    let decoded = nsexec::Record::decode(&record).filter(|_| read.is_ok());
    if let Some(r) = decoded
        && r.stage == nsexec::STAGE_STARTED
    {
        guard.disarm();
        return Ok(Spawned { child, status: rx });
    }
    guard.kill();
    let _ = child.wait().await;
    Err(match (read, decoded) {
        (Err(e), _) => SpawnFailure::Enter(io::Error::new(
            e.kind(),
            format!("{SHIM_BINARY} {applet} ended before the command started: {e}"),
        )),
        (Ok(_), Some(r)) if r.stage == nsexec::STAGE_EXEC => {
            SpawnFailure::Exec(io::Error::from_raw_os_error(r.errno))
        }
        (Ok(_), Some(r)) if r.errno == libc::ESRCH => SpawnFailure::Enter(not_running()),
        (Ok(_), Some(r)) => SpawnFailure::Enter(io::Error::from_raw_os_error(r.errno)),
        (Ok(_), None) => SpawnFailure::Enter(io::Error::other("unreachable: a full record")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::OsStr;

    #[test]
    fn the_setting_wins_over_the_search() {
        let off = choose(Some(OsStr::new("off")), None, None);
        assert!(matches!(off, DeviceSpawn::Fork { ref why } if why.contains("=off")));
        let missing = choose(Some(OsStr::new("/nonexistent/nsexec")), None, None);
        assert!(matches!(missing, DeviceSpawn::Fork { ref why } if why.contains("not a file")));
    }

    #[test]
    fn the_entry_is_found_beside_the_executable_or_one_folder_up() {
        let dir = tempfile::tempdir().expect("tempdir");
        let deps = dir.path().join("deps");
        std::fs::create_dir(&deps).expect("mkdir");
        let exe = deps.join("some-test");
        std::fs::write(dir.path().join(SHIM_BINARY), b"").expect("write");
        assert_eq!(
            choose(None, Some(&exe), None),
            DeviceSpawn::Entry(dir.path().join(SHIM_BINARY))
        );
        std::fs::write(deps.join(SHIM_BINARY), b"").expect("write");
        assert_eq!(
            choose(None, Some(&exe), None),
            DeviceSpawn::Entry(deps.join(SHIM_BINARY))
        );
    }
}
