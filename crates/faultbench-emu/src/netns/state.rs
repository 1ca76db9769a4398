//! Lab instances on disk: `/run/faultbench/labs/<name>/state.json`.
//!
//! Every running lab has a folder named after its instance. `state.json` says which processes
//! hold the lab's namespaces (the devices' and switches' PID 1s, each identified by PID *and*
//! start time so a recycled PID is never mistaken for ours) and who owns the lab:
//!
//! - a lab deployed by a program is *owned* by that process: when the process is gone, the lab
//!   is a leftover that [`gc`](super::gc) removes (and every deploy collects such leftovers);
//! - `faultbench lab up` *detaches* the lab: it keeps running until `faultbench lab down`.
//!
//! Any process can re-attach to a lab by name, which is how `faultbench lab exec` and the MCP
//! server reach labs they did not start.

use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// Root of all lab instance folders.
pub const LABS_DIR: &str = "/run/faultbench/labs";
/// Empty folder every device mounts its new root on during setup (in its own mount namespace).
pub(crate) const SETUP_ROOT: &str = "/run/faultbench/.root";
/// Environment variable set on every device's PID 1: `<lab>/<device>`. `gc` uses it to find
/// device processes whose lab folder is gone.
pub(crate) const INIT_MARK: &str = "FAULTBENCH_INIT";

/// A process, identified beyond PID reuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcId {
    /// Host PID.
    pub pid: i32,
    /// Start time in clock ticks since boot (`/proc/<pid>/stat` field 22).
    pub start: u64,
}

impl ProcId {
    /// This process.
    pub fn current() -> ProcId {
        let pid = std::process::id() as i32;
        ProcId {
            pid,
            start: start_time(pid).unwrap_or(0),
        }
    }

    /// Identify a live process.
    pub fn of(pid: i32) -> Option<ProcId> {
        start_time(pid).map(|start| ProcId { pid, start })
    }

    /// Collects the exit status of this process if it is our child and has ended (a zombie),
    /// so that nothing of it stays in the process table. The start time is checked first so a
    /// reused PID — another child of ours — is never reaped by mistake.
    pub(crate) fn reap_if_ended(&self) {
        if let Some(('Z', start)) = stat(self.pid)
            && start == self.start
        {
            // SAFETY: waitpid(2) on a specific PID without blocking; it fails harmlessly when
            // the process is not our child.
            unsafe { libc::waitpid(self.pid, std::ptr::null_mut(), libc::WNOHANG) };
        }
    }

    /// The process still runs (and is not a zombie).
    pub fn alive(&self) -> bool {
        match stat(self.pid) {
            Some((state, start)) => start == self.start && state != 'Z' && state != 'X',
            None => false,
        }
    }
}

/// `(state, starttime)` from `/proc/<pid>/stat`.
fn stat(pid: i32) -> Option<(char, u64)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    parse_stat(&text)
}

/// `(state, starttime)` from the text of a `/proc/<pid>/stat` file.
pub(crate) fn parse_stat(text: &str) -> Option<(char, u64)> {
    // The command name may contain spaces and parentheses: fields start after the last `)`.
    let rest = text.get(text.rfind(')')? + 2..)?;
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let state = fields.first()?.chars().next()?;
    let start = fields.get(19)?.parse().ok()?;
    Some((state, start))
}

fn start_time(pid: i32) -> Option<u64> {
    stat(pid).map(|(_, s)| s)
}

/// Lifecycle of an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Being brought up.
    Deploying,
    /// Up and converged (or past the settle cap).
    Running,
    /// Being torn down.
    TearingDown,
}

/// One device or switch of a running lab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NodeState {
    /// Device name (switches: `sw-<domain>`).
    pub name: String,
    /// Its PID 1, `None` until spawned.
    pub init: Option<ProcId>,
    /// Environment for commands run in it (lab.conf `env` plus the defaults).
    #[serde(default)]
    pub env: Vec<(String, String)>,
    /// Shell for its startup file (lab.conf `shell`, default `/bin/bash`).
    #[serde(default)]
    pub shell: String,
}

/// `state.json`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabState {
    /// Instance name.
    pub name: String,
    /// The lab directory it was deployed from.
    pub dir: PathBuf,
    /// `LAB_NAME` or the directory name.
    pub lab_name: String,
    /// Milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// The owning process; `None` when detached.
    pub owner: Option<ProcId>,
    /// Lifecycle phase.
    pub phase: Phase,
    /// Devices in lab.conf order.
    pub devices: Vec<NodeState>,
    /// Switch namespaces (collision domains with more than two members, or one).
    pub switches: Vec<NodeState>,
    /// How the running lab deviates from its directory's files (e.g. `lab up --fast-timers`),
    /// one line each.
    #[serde(default)]
    pub deviations: Vec<String>,
    /// How the lab's collision domains are wired (`switch`, Kathará's, or `veth`); absent in
    /// states written before the model was recorded (those wired two-member domains as veths).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_model: Option<faultbench_core::emulator::LinkModel>,
    /// The process holding the devices' Docker-DNS sockets (see [`super::dns`]); absent in
    /// states written before it existed, and while the lab is being deployed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dns: Option<ProcId>,
}

impl LabState {
    /// The folder of instance `name`.
    pub fn folder(name: &str) -> PathBuf {
        Path::new(LABS_DIR).join(name)
    }

    /// Reads `state.json` of instance `name`.
    pub fn load(name: &str) -> io::Result<LabState> {
        let text = std::fs::read_to_string(Self::folder(name).join("state.json"))?;
        serde_json::from_str(&text).map_err(io::Error::other)
    }

    /// Writes `state.json` atomically.
    pub fn save(&self) -> io::Result<()> {
        let dir = Self::folder(&self.name);
        let tmp = dir.join(".state.json.tmp");
        std::fs::write(
            &tmp,
            serde_json::to_vec_pretty(self).map_err(io::Error::other)?,
        )?;
        std::fs::rename(tmp, dir.join("state.json"))
    }

    /// Every process that holds part of the lab.
    pub fn inits(&self) -> impl Iterator<Item = ProcId> + '_ {
        self.devices
            .iter()
            .chain(self.switches.iter())
            .filter_map(|n| n.init)
    }

    /// [`LabState::inits`] and the DNS holder: every process teardown and `gc` must kill.
    pub fn processes(&self) -> impl Iterator<Item = ProcId> + '_ {
        self.inits().chain(self.dns)
    }

    /// Owned by a process that no longer exists.
    pub fn orphaned(&self) -> bool {
        self.owner.is_some_and(|o| !o.alive())
    }
}

/// Names of all instance folders.
pub fn instance_names() -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(LABS_DIR)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.path().is_dir())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// A lab instance name [`check_name`] refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid lab instance name `{name}`: use 1-40 lowercase letters, digits, `-` or `_`, starting with a letter or digit"
)]
pub struct InstanceNameError {
    /// The name as given.
    pub name: String,
}

/// Instance names: lowercase letters, digits, `-` and `_`, 1–40 characters, starting with a
/// letter or digit (they become folder names).
pub fn check_name(name: &str) -> Result<(), InstanceNameError> {
    let ok = !name.is_empty()
        && name.len() <= 40
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(InstanceNameError {
            name: name.to_string(),
        })
    }
}

/// Host PIDs of device init processes (found by [`INIT_MARK`] in their environment), with the
/// `<lab>/<device>` they belong to.
pub(crate) fn marked_inits() -> Vec<(ProcId, String)> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir("/proc") else {
        return out;
    };
    let needle = format!("{INIT_MARK}=");
    for e in rd.flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(env) = std::fs::read(format!("/proc/{pid}/environ")) else {
            continue;
        };
        for var in env.split(|b| *b == 0) {
            if let Some(v) = var.strip_prefix(needle.as_bytes())
                && let Some(id) = ProcId::of(pid)
            {
                out.push((id, String::from_utf8_lossy(v).into_owned()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_alive_and_a_recycled_pid_is_not() {
        let me = ProcId::current();
        assert!(me.alive());
        assert!(
            !ProcId {
                start: me.start + 1,
                ..me
            }
            .alive()
        );
        assert!(ProcId::of(i32::MAX).is_none());
    }

    #[test]
    fn names_are_checked() {
        assert!(check_name("kath2-1a2b").is_ok());
        let e = check_name("Kath2").unwrap_err();
        assert_eq!(e.name, "Kath2");
        assert!(e.to_string().contains("lowercase letters"), "{e}");
        assert!(check_name("-x").is_err());
        assert!(check_name("a/b").is_err());
        assert!(check_name("").is_err());
    }
}
