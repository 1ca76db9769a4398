//! # The `netns` backend: Kathará labs on Linux namespaces with real FRR and services
//!
//! A Kathará lab directory (lab.conf, `<device>.startup`, `<device>/` trees, lab.dep, shared/)
//! runs here without Docker. The model, container by container:
//!
//! - **A device** is a set of fresh namespaces — network, UTS (hostname = device name), mount,
//!   PID, IPC, cgroup — held by a PID 1 (`bash -s` reading a pipe nobody writes, so it just reaps
//!   orphans). Inside, the host's `/usr` is read-only, `/etc` and `/var` are writable overlays
//!   (the device's files over the host's), `/tmp`, `/run`, `/root`… are its own tmpfs, and `/proc`
//!   and `/sys` show only the device. `ps` lists the device's processes; `kill -9 -1` reaches
//!   nothing else. See `layout` for the exact file system and `init` for how it is built.
//! - **A collision domain** is a bridge in a switch namespace of its own, as on Kathará (one
//!   member going down leaves the others' carrier up); with [`LinkModel::Veth`] a two-member
//!   domain is a veth pair instead. Interfaces are `eth0`, `eth1`, … in lab.conf order.
//!   Nothing is created in the host's network namespace. See `topo`.
//! - **Kathará's runtime** is mimicked: IPv4 forwarding on, `rp_filter` off, IPv6 off (unless
//!   `ipv6=true`), `/proc/sys` read-only (unless `privileged=true`), the device tree copied over
//!   `/` (`r1/etc/frr/frr.conf` is `/etc/frr/frr.conf`), `/etc/frr` owned by `frr`, then
//!   `shared.startup` and `<device>.startup` run with `bash -x` into `/var/log/startup.log`, then
//!   the `exec` options, then `/tmp/EOS` is touched.
//! - **Services**: `systemctl`, `service` and `/etc/init.d/*` work as in Kathará's images.
//!   `/etc/init.d/frr` is FRR's packaged script, as in Kathará's FRR image: it starts `watchfrr`
//!   with the daemons its `daemons` file enables, watchfrr starts them and restarts any that
//!   dies (after about 5 s), so a daemon-kill fault stops watchfrr first. Plain `vtysh` talks to
//!   the device's own FRR. dnsmasq, bind9, isc-dhcp-server,
//!   isc-dhcp-relay, keepalived, apache2, nginx run through their packaged init scripts.
//!   The images' other conventions — ifupdown's `/etc/network/interfaces`, the Quagga image's
//!   `/etc/init.d/quagga` (run by FRR's daemons) and `/etc/zebra`, `/etc/init.d/bind` — are in
//!   the lab image layer (see `image`).
//! - **Docker's embedded DNS**: as in a container on a user-defined Docker network, every device
//!   has two sockets on `127.0.0.11` (held by one process per lab outside the devices) and
//!   Docker's `nat` rules sending port 53 to them; nothing answers, as on Kathará. `/etc/hosts`
//!   and the empty `/etc/resolv.conf` are the ones Kathará leaves. See [`dns`].
//! - **Kernel emulations**: the lab's shim folder (mounted at `/usr/local/sbin`, first in
//!   `PATH`) holds the wrappers of [`crate::shims`] for what this kernel lacks.
//! - **Lifecycle**: [`NetnsEmulator::deploy_lab`] first refuses a lab needing what this host
//!   cannot give it — an image such as P4 or Open vSwitch, a kernel feature that is missing and
//!   not emulated (see `needs`) — then brings all devices up in parallel, runs the startups (in
//!   lab.dep order), waits — bounded — for routing to settle ([`ready`]), and holds each device
//!   against its files: failed startup commands, addresses not applied, enabled daemons not
//!   running ([`NetnsLab::startup_problems`], see `health`). Each
//!   instance has a folder under [`LABS_DIR`] so any process can [`attach`] to it; teardown is a
//!   `SIGKILL` per PID 1 (the kernel removes the namespaces with everything in them) plus that
//!   folder (and the DNS holder). [`gc`] collects what killed processes left behind.
//!
//! Exec: [`faultbench_core::Lab::exec`] enters the device's namespaces (as `nsenter`
//! would) under the device's system-call filter (`seccomp`), with a timeout that kills the
//! command's whole process group and a 1 MiB cap per output stream.

mod device_state;
pub(crate) mod devstate;
pub mod dns;
mod emulator;
mod exec;
pub mod fast_timers;
mod gc;
mod health;
mod image;
pub(crate) mod init;
mod lab;
pub mod labgen;
pub(crate) mod layout;
pub(crate) mod needs;
pub(crate) mod nsexec;
pub(crate) mod prepare;
pub mod ready;
mod reaper;
mod renice;
pub mod requirements;
pub(crate) mod seccomp;
mod spawn;
mod state;
pub(crate) mod topo;
mod unbridge;

pub use emulator::{DEVICE_PATH, NetnsEmulator, preflight, which};
pub use exec::DEFAULT_OUTPUT_CAP;
pub use gc::{GcReport, gc};
pub use health::{ProblemKind, StartupProblem};
pub use lab::NetnsLab;
pub use ready::{DeviceSocket, ProtocolItem, Readiness, vty_command, vty_enable_command};
pub use requirements::{Requirement, has_overlayfs, install_command, requirements};
pub use spawn::{DeviceSpawn, device_spawn};
pub use state::{InstanceNameError, LABS_DIR, LabState, NodeState, Phase, ProcId, check_name};

#[cfg(doc)]
use faultbench_core::emulator::LinkModel;
use faultbench_core::emulator::{EmuError, Lab};
use std::sync::Arc;

/// Re-attaches to a running lab by instance name (from any process). The handle does not own
/// the lab: dropping it leaves the lab running; [`Lab::teardown`] stops it.
///
/// ```
/// use faultbench_core::emulator::{Command, Lab, LabRequest};
/// use faultbench_emu::netns::{self, NetnsEmulator};
/// use std::time::Duration;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let dir = tempfile::tempdir().unwrap();
/// std::fs::write(dir.path().join("lab.conf"), "h1[0]=A\n").unwrap();
/// let name = format!("doc-attach-{}", std::process::id());
/// let lab = NetnsEmulator::new()
///     .deploy_lab(&LabRequest::new(dir.path()).named(&name))
///     .await
///     .unwrap();
/// lab.detach().unwrap(); // keep it running when `lab` is dropped
/// drop(lab);
///
/// // Later, from any process: find it by name.
/// assert!(netns::list().iter().any(|s| s.name == name));
/// let again = netns::attach(&name).unwrap();
/// let out = again.exec("h1", &Command::argv(["hostname"]), Duration::from_secs(5)).await.unwrap();
/// assert_eq!(out.stdout, "h1\n");
/// again.teardown().await.unwrap();
/// assert!(netns::attach(&name).is_err());
/// # });
/// ```
pub fn attach(name: &str) -> Result<Arc<dyn Lab>, EmuError> {
    Ok(Arc::new(attach_lab(name)?))
}

/// [`attach`], returning the concrete type.
pub fn attach_lab(name: &str) -> Result<NetnsLab, EmuError> {
    check_name(name).map_err(|e| EmuError::InvalidLab(e.to_string()))?;
    let st = LabState::load(name).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            EmuError::NotRunning(name.to_string())
        } else {
            EmuError::Other(format!("lab `{name}`: unreadable state: {e}"))
        }
    })?;
    Ok(NetnsLab::new(st, false, Readiness::default(), Vec::new()))
}

/// The running instances (state of each), sorted by name.
pub fn list() -> Vec<LabState> {
    state::instance_names()
        .iter()
        .filter_map(|n| LabState::load(n).ok())
        .collect()
}
