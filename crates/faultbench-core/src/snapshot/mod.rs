//! State snapshots of a running lab, and what changed between two of them.
//!
//! A [`Snapshot`] holds, per device, the aspects of its state an agent (or a fault) can change
//! and that a troubleshooting verdict depends on ([`Aspect`]): links and their up/down and
//! carrier states, addresses, routes, forwarding sysctls, running routing daemons and
//! services, packet-filter and NAT rules, and the running FRR configuration. Every value is
//! *normalised*: counters, uptimes, timers, address lifetimes, route expiries, nexthop ids and
//! rule counters are dropped, so two snapshots of a quiet network are equal.
//!
//! Snapshots go through the emulator trait: [`Lab::device_state`] reads one device, by
//! default by running [`SNAPSHOT_SCRIPT`] through [`Lab::exec`] (one command per device,
//! devices in parallel), so it works on netns, Kathará and any backend that can run a shell;
//! a mock network overrides it to answer from its model. An aspect whose command fails is
//! recorded as [`AspectState::Failed`] and never compared: a snapshot never stops a run.
//!
//! [`Snapshot::diff`] lists the differences as [`StateChange`]s, one per added, removed or
//! changed item, each with a one-line summary. The run pipeline takes a snapshot right before
//! the agent starts and right after it ends and records the difference as `agent_changes`.
//!
//! ```
//! use faultbench_core::emulator::{Command, EmuError, ExecOutput, Lab};
//! use faultbench_core::snapshot::{Aspect, ChangeKind, Snapshot, SnapshotOptions};
//! use std::sync::Mutex;
//! use std::time::Duration;
//!
//! /// A host whose routing table is a list of lines, in `ip -j route` form.
//! #[derive(Debug, Default)]
//! struct Host { routes: Mutex<Vec<String>> }
//! #[async_trait::async_trait]
//! impl Lab for Host {
//!     fn name(&self) -> &str { "demo-1" }
//!     fn devices(&self) -> Vec<String> { vec!["pc1".into()] }
//!     async fn exec(&self, _d: &str, c: &Command, _t: Duration) -> Result<ExecOutput, EmuError> {
//!         let routes = self.routes.lock().unwrap().join(",");
//!         // The snapshot script is one shell command; answer its `ip` part (addresses, then
//!         // routes), leave the rest unanswered.
//!         assert!(c.to_string().contains("ip -j -batch"));
//!         Ok(ExecOutput::ok(format!("[]\n[{routes}]\n@@ip 0\n")))
//!     }
//!     async fn teardown(&self) -> Result<(), EmuError> { Ok(()) }
//! }
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let lab = Host::default();
//! let before = Snapshot::take(&lab, &SnapshotOptions::default()).await;
//! lab.routes.lock().unwrap().push(r#"{"dst":"198.51.100.0/24","gateway":"10.0.0.1","dev":"eth0"}"#.into());
//! let after = Snapshot::take(&lab, &SnapshotOptions::default()).await;
//! let changes = before.diff(&after);
//! assert_eq!(changes.len(), 1);
//! assert_eq!((changes[0].aspect, changes[0].change), (Aspect::Routes, ChangeKind::Added));
//! assert_eq!(changes[0].summary, "pc1 routes: added 198.51.100.0/24 (via 10.0.0.1 dev eth0)");
//! // The parts that could not be read are recorded, not compared.
//! assert!(before.failures().iter().any(|f| f.starts_with("pc1 services:")));
//! # });
//! ```

mod diff;
mod parse;

pub use diff::{ChangeKind, StateChange};
pub use parse::{
    FRR_DAEMONS, SNAPSHOT_SCRIPT, SNAPSHOT_SCRIPT_IP_ONLY, SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG,
    frr_config_from_daemons, parse_device,
};

use crate::emulator::{Command, Lab};
use futures_util::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// One aspect of a device's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Aspect {
    /// Interfaces: admin state, carrier, MTU, MAC, bridge/bond master, root qdisc.
    Links,
    /// IPv4 and global IPv6 addresses per interface.
    Addresses,
    /// IPv4 routes of every table but `local` (which follows from the addresses).
    Routes,
    /// Forwarding and related sysctls (`ip_forward`, per-interface `forwarding`, `rp_filter`,
    /// `proxy_arp`, `icmp_echo_ignore_all`, IPv6 forwarding).
    Sysctls,
    /// Routing daemons and services that are running (by process name).
    Services,
    /// Packet-filter and NAT rules (`nft list ruleset`, else `iptables-save`).
    PacketFilter,
    /// FRR's running configuration, as `vtysh -c 'show running-config'` shows it (merged over
    /// the daemons).
    FrrConfig,
    /// The named states of a modelled network that are on (mock networks, which answer
    /// snapshots from their model rather than by running commands).
    ModelStates,
}

impl Aspect {
    /// Every aspect, in report order.
    pub const ALL: [Aspect; 8] = [
        Aspect::Links,
        Aspect::Addresses,
        Aspect::Routes,
        Aspect::Sysctls,
        Aspect::Services,
        Aspect::PacketFilter,
        Aspect::FrrConfig,
        Aspect::ModelStates,
    ];

    /// The snake_case name (`links`, `frr_config`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Aspect::Links => "links",
            Aspect::Addresses => "addresses",
            Aspect::Routes => "routes",
            Aspect::Sysctls => "sysctls",
            Aspect::Services => "services",
            Aspect::PacketFilter => "packet_filter",
            Aspect::FrrConfig => "frr_config",
            Aspect::ModelStates => "model_states",
        }
    }

    /// The aspect with this name.
    pub fn from_name(name: &str) -> Option<Aspect> {
        Aspect::ALL.into_iter().find(|a| a.as_str() == name)
    }
}

impl std::fmt::Display for Aspect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What was read for one aspect of one device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AspectState {
    /// Normalised items: key → value (the value is empty when the key says it all; a count
    /// such as `×2` when a line occurs more than once).
    Items(BTreeMap<String, String>),
    /// The aspect does not exist on the device right now, and why (e.g. `FRR is not
    /// running`): a state of its own, compared like items.
    Absent(String),
    /// It could not be read (the command failed or timed out): why. Never compared.
    Failed(String),
}

/// The state of one device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceState {
    /// Each aspect read (an aspect a backend does not model is left out, and not compared).
    pub aspects: BTreeMap<Aspect, AspectState>,
}

impl DeviceState {
    /// A device whose every aspect failed for the same reason.
    pub fn failed(reason: impl Into<String>) -> DeviceState {
        let reason = reason.into();
        DeviceState {
            aspects: Aspect::ALL
                .into_iter()
                .filter(|a| *a != Aspect::ModelStates)
                .map(|a| (a, AspectState::Failed(reason.clone())))
                .collect(),
        }
    }

    /// FRR runs on the device and its configuration is still to be read by the backend (the
    /// device was read with [`SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG`]).
    pub fn frr_config_pending(&self) -> bool {
        matches!(self.aspects.get(&Aspect::FrrConfig),
            Some(AspectState::Failed(why)) if why == parse::FRR_CONFIG_PENDING)
    }

    /// The FRR daemons running on the device, among [`FRR_DAEMONS`] (empty when the services
    /// could not be read).
    pub fn frr_daemons(&self) -> Vec<&'static str> {
        let running = self.items(Aspect::Services);
        FRR_DAEMONS
            .into_iter()
            .filter(|d| running.is_some_and(|r| r.contains_key(*d)))
            .collect()
    }

    /// The items of an aspect, when it was read.
    pub fn items(&self, aspect: Aspect) -> Option<&BTreeMap<String, String>> {
        match self.aspects.get(&aspect) {
            Some(AspectState::Items(i)) => Some(i),
            _ => None,
        }
    }
}

/// Knobs of [`Snapshot::take`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SnapshotOptions {
    /// Timeout of one device's snapshot command.
    pub timeout: Duration,
    /// Devices read at the same time.
    pub parallelism: usize,
}

impl Default for SnapshotOptions {
    /// 15 s per device, 32 devices at a time.
    fn default() -> Self {
        SnapshotOptions {
            timeout: Duration::from_secs(15),
            parallelism: 32,
        }
    }
}

/// The state of every device of a lab at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// The lab instance.
    pub lab: String,
    /// When the snapshot started (Unix milliseconds).
    pub taken_unix_ms: u64,
    /// How long it took.
    pub elapsed: Duration,
    /// Device → state.
    pub devices: BTreeMap<String, DeviceState>,
}

impl Snapshot {
    /// Reads every device of `lab` (through [`Lab::device_state`], in parallel).
    pub async fn take(lab: &dyn Lab, opts: &SnapshotOptions) -> Snapshot {
        let taken_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        let t = Instant::now();
        // At most `parallelism` devices read at once (they share the host's CPUs).
        let devices: BTreeMap<String, DeviceState> = stream::iter(lab.devices())
            .map(|d| async move {
                let state = lab.device_state(&d, opts.timeout).await;
                (d, state)
            })
            .buffer_unordered(opts.parallelism.max(1))
            .collect()
            .await;
        Snapshot {
            lab: lab.name().to_string(),
            taken_unix_ms,
            elapsed: t.elapsed(),
            devices,
        }
    }

    /// The aspects that could not be read, one line each: `device aspect: reason`.
    pub fn failures(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (device, state) in &self.devices {
            for (aspect, s) in &state.aspects {
                if let AspectState::Failed(why) = s {
                    out.push(format!("{device} {aspect}: {why}"));
                }
            }
        }
        out
    }

    /// What differs from `self` to `after`: one change per added, removed or changed item,
    /// in device, aspect and item order. Aspects that could not be read in either snapshot
    /// are not compared.
    pub fn diff(&self, after: &Snapshot) -> Vec<StateChange> {
        diff::diff(self, after)
    }
}

/// Reads one device's state by running [`SNAPSHOT_SCRIPT`] on it: the default of
/// [`Lab::device_state`].
pub async fn read_device<L: Lab + ?Sized>(lab: &L, device: &str, timeout: Duration) -> DeviceState {
    read_device_with(lab, device, SNAPSHOT_SCRIPT, timeout).await
}

/// Reads one device's state by running `script` ([`SNAPSHOT_SCRIPT`] or
/// [`SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG`]) on it and parsing its output.
pub async fn read_device_with<L: Lab + ?Sized>(
    lab: &L,
    device: &str,
    script: &str,
    timeout: Duration,
) -> DeviceState {
    match lab.exec(device, &Command::shell(script), timeout).await {
        Err(e) => DeviceState::failed(format!("could not run: {e}")),
        Ok(o) => state_from_output(o),
    }
}

/// A device's state from the output of [`SNAPSHOT_SCRIPT`] (or of a backend's own reader that
/// prints the same parts and markers): the parts that completed, the rest recorded as not
/// read, and why.
pub fn state_from_output(o: crate::emulator::ExecOutput) -> DeviceState {
    match o {
        o if !o.timed_out
            && !o.success()
            && !o.stdout.contains("\n@@")
            && !o.stdout.starts_with("@@") =>
        {
            // Not even the first part ran (no shell, a refused command…).
            let said = o.stderr.lines().next().unwrap_or("").trim().to_string();
            let code = o
                .exit_code
                .map_or("killed".to_string(), |c| format!("exit {c}"));
            DeviceState::failed(if said.is_empty() {
                code
            } else {
                format!("{code}: {said}")
            })
        }
        o => {
            let mut state = parse_device(&o.stdout);
            if o.timed_out {
                // The parts that completed are kept; the rest is already `Failed`.
                for s in state.aspects.values_mut() {
                    if let AspectState::Failed(why) = s {
                        *why = format!("timed out after {} ms ({why})", o.duration_ms);
                    }
                }
            }
            state
        }
    }
}
