//! Emulators: something that can bring up a lab, run commands inside its devices, and tear it
//! down again.
//!
//! The model is Kathará's: a *lab* is a set of named *devices* (routers, switches, hosts,
//! servers) joined by *collision domains*; a lab is described by a Kathará lab directory
//! (`lab.conf`, `<device>.startup`, `<device>/` file trees). An [`Emulator`] turns such a
//! directory into a running [`Lab`]; every probe, injection and agent tool call goes through
//! [`Lab::exec`], so the same scenario runs on Linux namespaces, on Kathará, or on a mock.
//!
//! ```
//! use faultbench_core::emulator::{Command, EmuError, Emulator, ExecOutput, Lab, LabRequest};
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! /// A one-device "network" whose device echoes what it is asked to run.
//! #[derive(Debug)]
//! struct EchoLab;
//! #[async_trait::async_trait]
//! impl Lab for EchoLab {
//!     fn name(&self) -> &str { "echo-1" }
//!     fn devices(&self) -> Vec<String> { vec!["r1".into()] }
//!     async fn exec(&self, device: &str, cmd: &Command, _t: Duration) -> Result<ExecOutput, EmuError> {
//!         if device != "r1" { return Err(EmuError::UnknownDevice { lab: self.name().into(), device: device.into() }); }
//!         Ok(ExecOutput::ok(cmd.to_string()))
//!     }
//!     async fn teardown(&self) -> Result<(), EmuError> { Ok(()) }
//! }
//! struct Echo;
//! #[async_trait::async_trait]
//! impl Emulator for Echo {
//!     fn name(&self) -> &str { "echo" }
//!     async fn deploy(&self, _req: &LabRequest) -> Result<Arc<dyn Lab>, EmuError> { Ok(Arc::new(EchoLab)) }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let lab = Echo.deploy(&LabRequest::new("topologies/any")).await.unwrap();
//! let out = lab.exec("r1", &Command::shell("vtysh -c 'show ip route'"), Duration::from_secs(5)).await.unwrap();
//! assert_eq!(out.stdout, "vtysh -c 'show ip route'");
//! assert!(out.success());
//! assert!(lab.exec("r9", &Command::argv(["true"]), Duration::from_secs(1)).await.is_err());
//! lab.teardown().await.unwrap();
//! # });
//! ```

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Exit code an in-device command uses to say "this host cannot emulate what I was asked to do"
/// (e.g. a `netem` delay on a kernel without netem). Injections that end with it give the run the
/// status `unsupported_on_host` instead of a silent pass or an `injection_failed`.
pub const UNSUPPORTED_EXIT: i32 = 95;

/// A command to run inside a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Command {
    /// Run a program with arguments, no shell involved.
    Argv(Vec<String>),
    /// Run a script with `sh -c` *inside the device* (never on the host).
    Shell(String),
}

impl Command {
    /// A shell script run with `sh -c` inside the device.
    pub fn shell(script: impl Into<String>) -> Self {
        Command::Shell(script.into())
    }

    /// A program and its arguments.
    pub fn argv<I, S>(args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Command::Argv(args.into_iter().map(Into::into).collect())
    }

    /// The argv to execute inside the device (`sh -c SCRIPT` for shell commands).
    pub fn to_argv(&self) -> Vec<String> {
        match self {
            Command::Argv(a) => a.clone(),
            Command::Shell(s) => vec!["sh".into(), "-c".into(), s.clone()],
        }
    }
}

impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Command::Shell(s) => f.write_str(s),
            Command::Argv(a) => f.write_str(&a.join(" ")),
        }
    }
}

/// What a command did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecOutput {
    /// Standard output (lossily decoded as UTF-8, capped).
    pub stdout: String,
    /// Standard error (lossily decoded as UTF-8, capped).
    pub stderr: String,
    /// Exit code; `None` when the command was killed (timeout or signal).
    pub exit_code: Option<i32>,
    /// The command ran past its timeout and was killed.
    pub timed_out: bool,
    /// Output exceeded the lab's cap and was cut.
    pub truncated: bool,
    /// Wall time of the command in milliseconds.
    pub duration_ms: u64,
}

impl ExecOutput {
    /// A successful command with the given stdout (handy for mocks and tests).
    pub fn ok(stdout: impl Into<String>) -> Self {
        ExecOutput {
            stdout: stdout.into(),
            exit_code: Some(0),
            ..Default::default()
        }
    }

    /// A failed command with the given exit code and stderr.
    pub fn failed(code: i32, stderr: impl Into<String>) -> Self {
        ExecOutput {
            stderr: stderr.into(),
            exit_code: Some(code),
            ..Default::default()
        }
    }

    /// Exit code 0 and no timeout.
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && !self.timed_out
    }
}

/// How a lab's collision domains are wired.
///
/// On Kathará every collision domain is a Docker network, a Linux bridge: a device that sets
/// its interface down leaves the carrier of the other members up (a switch port stays up).
/// [`LinkModel::Switch`] reproduces that and is the default; [`LinkModel::Veth`] wires a
/// two-member domain as a bare veth pair, where one end going down drops the other's carrier
/// (a back-to-back cable), which only the `netns` backend can do.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkModel {
    /// Every collision domain is a bridge (Kathará's model).
    #[default]
    Switch,
    /// Two-member collision domains are veth pairs; larger ones are bridges.
    Veth,
}

impl LinkModel {
    /// `switch` or `veth`.
    pub fn as_str(self) -> &'static str {
        match self {
            LinkModel::Switch => "switch",
            LinkModel::Veth => "veth",
        }
    }
}

impl fmt::Display for LinkModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for LinkModel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "switch" => Ok(LinkModel::Switch),
            "veth" => Ok(LinkModel::Veth),
            other => Err(format!(
                "unknown link model `{other}` (expected `switch`, Kathará's, or `veth`)"
            )),
        }
    }
}

/// What to deploy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LabRequest {
    /// A Kathará lab directory (lab.conf, startup files, device trees).
    pub dir: PathBuf,
    /// Instance name; a unique one is generated when `None`. Several instances of the same
    /// directory may run at once under different names.
    pub name: Option<String>,
}

impl LabRequest {
    /// Deploy `dir` under a generated instance name.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        LabRequest {
            dir: dir.into(),
            name: None,
        }
    }

    /// Deploy under a chosen instance name.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }
}

/// Emulator failures.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmuError {
    /// The device does not exist in the lab.
    #[error("device `{device}` not found in lab `{lab}`")]
    UnknownDevice {
        /// Lab instance name.
        lab: String,
        /// Requested device.
        device: String,
    },
    /// The lab (or part of it) did not come up.
    #[error("lab `{lab}` did not deploy: {reason}")]
    DeployIncomplete {
        /// Lab instance name.
        lab: String,
        /// What failed.
        reason: String,
    },
    /// The lab directory is invalid.
    #[error("{0}")]
    InvalidLab(String),
    /// This host cannot emulate something the lab or fault needs.
    #[error("unsupported on this host: {feature} ({reason})")]
    Unsupported {
        /// The missing capability (e.g. `netem`).
        feature: String,
        /// Why it cannot be emulated.
        reason: String,
    },
    /// The lab has been torn down.
    #[error("lab `{0}` is not running")]
    NotRunning(String),
    /// Missing privileges or packages.
    #[error("environment: {0}")]
    Environment(String),
    /// Anything else, with context.
    #[error("{0}")]
    Other(String),
}

/// A running lab.
///
/// Implementations must be safe to call concurrently (tools, telemetry and probes share a lab)
/// and make [`Lab::teardown`] idempotent.
#[async_trait::async_trait]
pub trait Lab: Send + Sync + fmt::Debug {
    /// The instance name (unique among running labs).
    fn name(&self) -> &str;

    /// The device names, in lab.conf order.
    fn devices(&self) -> Vec<String>;

    /// Runs a command inside a device. A command that fails or times out is an `Ok` with the
    /// exit code / `timed_out` set; `Err` means the command could not be run at all.
    async fn exec(
        &self,
        device: &str,
        command: &Command,
        timeout: Duration,
    ) -> Result<ExecOutput, EmuError>;

    /// Stops everything the lab started and removes every trace of it. Idempotent. Runs on
    /// the runtime beside other runs' agents: a backend whose teardown has to block (wait for
    /// processes to end) does that part on a blocking thread itself.
    async fn teardown(&self) -> Result<(), EmuError>;

    /// The lab directory the lab was deployed from, when there is one: its files are the
    /// evidence of each device's role (`crate::lab::roles`), read before asking the devices.
    /// The default (`None`) suits backends without files, such as mock networks.
    fn lab_dir(&self) -> Option<std::path::PathBuf> {
        None
    }

    /// What this deployment set differently from the backend's defaults or the user's own
    /// settings, one line each, kept in the run record (e.g. the Kathará settings the harness
    /// wrote over the user's). The default: nothing.
    fn deploy_notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// CPU time (user + system) the lab's processes have used so far, those that ended
    /// included, where the backend can tell (`--prestart auto` caps its depth by it). The
    /// default: `None`.
    fn cpu_used(&self) -> Option<std::time::Duration> {
        None
    }

    /// The state of one device for a [`crate::snapshot::Snapshot`]. The default runs
    /// [`crate::snapshot::SNAPSHOT_SCRIPT`] through [`Lab::exec`]; a backend that cannot run
    /// it (e.g. a mock network) answers from its own model. Never fails: what cannot be read is
    /// an [`crate::snapshot::AspectState::Failed`].
    async fn device_state(&self, device: &str, timeout: Duration) -> crate::snapshot::DeviceState {
        crate::snapshot::read_device(self, device, timeout).await
    }

    /// Sets the CPU niceness of every process of the lab (every thread of each), returning
    /// how many threads were changed. A lab prepared in the background runs niced
    /// (the pipeline's `LabQueue`); the run that takes it sets 0 again so that its agent's
    /// lab is not slowed by the next one coming up. The default does nothing (a backend whose
    /// devices the harness does not start, such as Docker's, or a mock).
    fn renice(&self, nice: i32) -> Result<usize, EmuError> {
        let _ = nice;
        Ok(0)
    }
}

/// A backend that deploys labs.
#[async_trait::async_trait]
pub trait Emulator: Send + Sync {
    /// Short backend name: `netns`, `kathara`, `mock`, … (`name`, like every other trait).
    fn name(&self) -> &str;

    /// The former name of [`Emulator::name`]. An implementation now implements `name`.
    #[deprecated(note = "renamed to `name`; the old name goes in the next release")]
    fn kind(&self) -> &str {
        self.name()
    }

    /// Brings a lab up and waits (bounded) until its startups have run and routing settled.
    async fn deploy(&self, request: &LabRequest) -> Result<Arc<dyn Lab>, EmuError>;

    /// How this emulator wires collision domains (recorded with every run); `None` for a
    /// backend without real links (a mock network answers from its model).
    fn link_model(&self) -> Option<LinkModel> {
        None
    }

    /// Asks the emulator to finish every later [`Lab::teardown`] in the background (the call
    /// returns once the lab is out of use; removing it goes on while the caller works on), for
    /// drivers that run many labs one after another. Returns whether it will: the default, and
    /// every backend whose teardown is cheap, says no. A caller that turns it on must await
    /// [`Emulator::flush_teardowns`] before it exits.
    fn defer_teardowns(&self) -> bool {
        false
    }

    /// Waits until every teardown left to the background has finished; returns their errors
    /// (a lab whose teardown failed is named in its error and left for the backend's `gc`).
    async fn flush_teardowns(&self) -> Vec<EmuError> {
        Vec::new()
    }
}
