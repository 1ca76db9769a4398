//! Mock networks for unit tests: no root, no daemons, deterministic answers.
//!
//! Two kinds:
//!
//! - **Scripted** ([`MockNetwork`] → [`MockLab`]): a TOML file declares the devices, some named
//!   *states* (e.g. `ospfd_down`), and *rules*: device + command pattern → stdout, stderr, exit
//!   code. A rule may require states (`when = ["ospfd_down"]`, or `"!ospfd_down"` for "off") and
//!   may switch states on or off when it answers (`set`, `clear`) — that is how an injection
//!   command such as `pkill ospfd` on r1 changes what `pgrep ospfd` and pings answer later.
//! - **Replay** ([`RecordingLab`] → [`ExecTrace`] JSON → [`ReplayLab`]): record what a real lab
//!   answered and serve it again.
//!
//! ## The mock file
//!
//! ```toml
//! name = "tiny"
//! states = ["ospfd_down"]          # every state a rule uses must be declared
//! initially_on = []                # states on at deploy (default: none)
//!
//! [default]                        # answer to commands no rule matches (this is the default)
//! exit_code = 127
//! stderr = "mock: `{command}` is not scripted for device `{device}` (command not found in mock)"
//!
//! [[device]]
//! name = "pc1"
//! role = "host"
//! interface = [{ name = "eth0", addr = "10.0.1.2/24" }]   # answers `ip -j addr`; optional
//!                                  # `link = "lan1"` names its link (default: the subnet)
//!
//! [[rule]]
//! device = "r1"                    # a name, a list of names, or "*"
//! command = "pgrep ospfd"          # the pattern
//! match = "exact"                  # exact (default; whitespace-normalised) | prefix | contains | regex
//! stdout = "412\n"
//!
//! [[rule]]
//! device = "r1"
//! command = "pgrep ospfd"
//! when = "ospfd_down"              # applies only while the state is on
//! exit_code = 1
//!
//! [[rule]]
//! device = "r1"
//! command = "pkill ospfd"
//! match = "contains"
//! set = "ospfd_down"               # answering switches the state on
//! ```
//!
//! **Which rule answers:** among the rules whose device, pattern and `when` conditions hold, the
//! one with the most `when` conditions wins (a fault rule overrides the healthy one wherever it
//! is written), then a rule naming its devices beats a `"*"` rule; ties go to the first in the
//! file. With no rule, a device's declared facts answer
//! `hostname` and `ip -j addr` (JSON in iproute2's shape, from its `interface` list); anything
//! else gets the `[default]` reply. Rule texts may use `{device}`, `{command}` and a regex's
//! named groups (`(?P<ip>…)` → `{ip}`). `delay_ms` makes a command take time (a delay past
//! the caller's timeout is a timeout); `timeout = true` answers at once as a timed-out command.
//!
//! Commands are matched on their *text*: a shell script as written, an argv joined with shell
//! quoting ([`command_text`]), so `vtysh -c 'show ip route'` matches both forms.
//!
//! **As a topology.** A folder `<root>/<ID>/` holding `mock.toml` and `baseline.toml` is a
//! topology the pipeline runs scenarios on (`Runner`, `faultbench bench --emulator mock`);
//! no `lab.conf` is needed. The devices and their links come from the `[[device]]` entries:
//! interface `ethN` is interface `N`, cabled to the link named by its `link` field or, without
//! one, to its IPv4 subnet (interfaces addressed on one subnet share a link). A `lab.conf`
//! beside it, when present, is used instead (see `faultbench_core::lab::MOCK_FILE`).
//!
//! ## Example
//!
//! ```
//! use faultbench_core::{Command, Emulator, LabRequest};
//! use faultbench_emu::mock::MockEmulator;
//! use std::time::Duration;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mock/triangle.toml");
//! let lab = MockEmulator::new().deploy(&LabRequest::new(file)).await.unwrap();
//! let t = Duration::from_secs(5);
//! let pgrep = Command::shell("pgrep ospfd");
//! assert!(lab.exec("r1", &pgrep, t).await.unwrap().success());
//!
//! // The scenario's injection switches the `r1_ospfd_down` state on …
//! lab.exec("r1", &Command::shell("pkill -9 ospfd"), t).await.unwrap();
//! // … so the same probe now fails, and pc1 loses pc2.
//! assert_eq!(lab.exec("r1", &pgrep, t).await.unwrap().exit_code, Some(1));
//! let ping = lab.exec("pc1", &Command::shell("ping -c 2 10.0.2.2"), t).await.unwrap();
//! assert!(ping.stdout.contains("100% packet loss"));
//!
//! // Unscripted commands say so.
//! let out = lab.exec("pc1", &Command::argv(["nmap", "10.0.0.0/8"]), t).await.unwrap();
//! assert_eq!(out.exit_code, Some(127));
//! assert!(out.stderr.contains("command not found in mock"));
//! # });
//! ```

mod lab;
mod replay;
mod spec;
mod text;

pub use lab::{ExecRecord, MockLab};
pub use replay::{ExecTrace, RecordingLab, ReplayLab, TraceEntry};
#[allow(deprecated)]
pub use spec::{Condition, Rule};
pub use spec::{
    DeviceSpec, InterfaceSpec, MAX_MOCK_FILE_BYTES, MockNetwork, MockRule, MockSpecError, Pattern,
    Reply, StateCondition, normalize,
};
#[allow(deprecated)]
pub use text::{command_text, quote};

use faultbench_core::{EmuError, Emulator, Lab, LabRequest};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a [`MockEmulator`] deploys.
#[derive(Debug, Clone)]
enum Source {
    /// Read the request's path: a `.toml` mock file, a `.json` trace, or a directory holding
    /// `mock.toml` or `trace.json`.
    FromRequest,
    /// Always this scripted network.
    Network(Arc<MockNetwork>),
    /// Always this trace.
    Trace(Arc<ExecTrace>),
}

/// An [`Emulator`] for mock networks.
///
/// `MockEmulator::new()` deploys whatever the request's path names: a mock file (`*.toml`), a
/// recorded trace (`*.json`), or a directory containing `mock.toml` (preferred) or `trace.json`
/// — so a topology directory can carry its own mock. `with_network` / `with_trace` deploy a
/// fixed network whatever the request says. Every deploy is a fresh instance with its own states.
#[derive(Debug)]
pub struct MockEmulator {
    source: Source,
    counter: AtomicU64,
}

impl Default for MockEmulator {
    fn default() -> Self {
        Self::new()
    }
}

impl MockEmulator {
    /// Deploys the mock file or trace named by each request.
    pub fn new() -> Self {
        MockEmulator {
            source: Source::FromRequest,
            counter: AtomicU64::new(0),
        }
    }

    /// Deploys `net` for every request.
    pub fn with_network(net: MockNetwork) -> Self {
        MockEmulator {
            source: Source::Network(Arc::new(net)),
            counter: AtomicU64::new(0),
        }
    }

    /// Replays `trace` for every request.
    pub fn with_trace(trace: ExecTrace) -> Self {
        MockEmulator {
            source: Source::Trace(Arc::new(trace)),
            counter: AtomicU64::new(0),
        }
    }

    fn instance_name(&self, req: &LabRequest, base: &str) -> String {
        match &req.name {
            Some(n) => n.clone(),
            None => {
                let n = self.counter.fetch_add(1, Ordering::Relaxed) + 1;
                format!("{base}-{n}")
            }
        }
    }
}

/// Resolves a request path to a mock file or a trace.
fn resolve(dir: &Path) -> Result<PathBuf, EmuError> {
    if dir.is_file() {
        return Ok(dir.to_path_buf());
    }
    for candidate in ["mock.toml", "trace.json"] {
        let p = dir.join(candidate);
        if p.is_file() {
            return Ok(p);
        }
    }
    Err(EmuError::InvalidLab(format!(
        "{}: no mock network here (expected a .toml mock file, a .json exec trace, or a directory containing mock.toml or trace.json)",
        dir.display()
    )))
}

/// Loads a lab from a mock file or trace path.
pub fn load_lab(path: &Path, name: Option<String>) -> Result<Arc<dyn Lab>, EmuError> {
    let file = resolve(path)?;
    let is_json = file.extension().is_some_and(|e| e == "json");
    if is_json {
        let trace = ExecTrace::load(&file).map_err(|e| EmuError::InvalidLab(e.to_string()))?;
        let mut lab = ReplayLab::new(trace);
        if let Some(n) = name {
            lab = lab.named(n);
        }
        Ok(Arc::new(lab))
    } else {
        let net = MockNetwork::load(&file).map_err(|e| EmuError::InvalidLab(e.to_string()))?;
        let n = name.unwrap_or_else(|| net.name.clone());
        Ok(Arc::new(MockLab::new(n, Arc::new(net))))
    }
}

#[async_trait::async_trait]
impl Emulator for MockEmulator {
    fn name(&self) -> &str {
        "mock"
    }

    async fn deploy(&self, request: &LabRequest) -> Result<Arc<dyn Lab>, EmuError> {
        match &self.source {
            Source::Network(net) => Ok(Arc::new(MockLab::new(
                self.instance_name(request, &net.name),
                net.clone(),
            ))),
            Source::Trace(t) => {
                let name = self.instance_name(request, &t.lab);
                Ok(Arc::new(ReplayLab::new((**t).clone()).named(name)))
            }
            Source::FromRequest => {
                let file = resolve(&request.dir)?;
                let base = file
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "mock".into());
                let base = if base == "mock" || base == "trace" {
                    // A topology directory's own mock: name instances after the directory.
                    request
                        .dir
                        .file_name()
                        .map(|s| s.to_string_lossy().into_owned())
                        .unwrap_or(base)
                } else {
                    base
                };
                load_lab(&file, Some(self.instance_name(request, &base)))
            }
        }
    }
}
