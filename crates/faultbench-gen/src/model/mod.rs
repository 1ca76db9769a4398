//! The lab model: what a fault family can apply to, read from a lab directory.
//!
//! [`LabModel::load`] reads `lab.conf` (devices, interfaces, collision domains), each device's
//! role from evidence ([`faultbench_core::lab::roles`]), and from the startups and file trees:
//! interface addresses and default routes (`ip addr add`, `ifconfig`, `ip route add default`,
//! `route add default gw`), the routing daemons enabled (`etc/frr/daemons`,
//! `etc/quagga/daemons`) and their configuration (`etc/frr/frr.conf`, Quagga per-daemon
//! files, `vtysh -c` in startups), and services started by the startup (web, DNS, DHCP).
//!
//! Layer-2 *segments* join the collision domains a switch bridges, so the hosts on one LAN
//! and the router port that serves them are found even when several switches sit between
//! them. What the files cannot tell (a host addressed by DHCP, a router configured by a
//! mechanism we do not read) is a [`ModelGap`]; [`LabModel::complete_live`] fills gaps from a
//! running healthy lab. The lab directory is only read, never written.

pub mod frr;
pub mod live;
pub mod net;
mod read;
pub mod shell;
pub mod vrrp;

pub use frr::{Bgp, BgpNeighbor, Ospf, OspfIface, Rip, RoutingConfig, StaticRoute};
pub use net::Ipv4Net;

use faultbench_core::lab::{LabDir, Role};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;
use std::path::{Path, PathBuf};

/// A lab the model cannot be built from: the file, what is wrong, and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {what} ({fix})")]
pub struct ModelError {
    /// The file (or folder) at fault.
    pub file: PathBuf,
    /// What is missing or wrong.
    pub what: String,
    /// How to fix it.
    pub fix: String,
}

/// One interface of a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct IfaceModel {
    /// `ethN`.
    pub name: String,
    /// The collision domain from lab.conf.
    pub domain: String,
    /// The layer-2 segment (index into [`LabModel::segments`]).
    pub segment: usize,
    /// IPv4 addresses (of the bridge, for the first port of a bridge that holds them).
    pub addrs: Vec<Ipv4Net>,
    /// The bridge this interface is a port of (`br0`): the layer-3 interface a fault acts on.
    pub bridge: Option<String>,
}

impl IfaceModel {
    /// The interface addresses live on: the bridge for a bridge port, else the interface.
    pub fn l3_name(&self) -> &str {
        self.bridge.as_deref().unwrap_or(&self.name)
    }
}

/// A service a device runs, with the fixed commands that stop and start it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Service {
    /// `web`, `dns` or `dhcp`.
    pub kind: String,
    /// The program (`apache2`, `nginx`, `named`, `dnsmasq`, …).
    pub program: String,
    /// The port it serves.
    pub port: u16,
    /// `tcp` or `udp`.
    pub proto: String,
    /// A command that stops it.
    pub stop: String,
    /// A command that starts it again as the startup did.
    pub start: String,
    /// The process name `pgrep -x` finds.
    pub process: String,
}

/// One device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceModel {
    /// Name from lab.conf.
    pub name: String,
    /// `router`, `switch`, `host`, or `server`.
    pub role: String,
    /// Why (the evidence).
    pub role_why: String,
    /// Interfaces in lab.conf order.
    pub interfaces: Vec<IfaceModel>,
    /// Default gateway.
    pub default_gw: Option<Ipv4Addr>,
    /// Routing daemons enabled (`ospfd`, `bgpd`, `ripd`, …).
    pub daemons: BTreeSet<String>,
    /// Their configuration.
    pub routing: RoutingConfig,
    /// Where the routing configuration was read (`r1/etc/frr/frr.conf`, `r1.startup`).
    pub routing_from: Vec<String>,
    /// The device has an `etc/frr/frr.conf` (so `vtysh -b` re-applies it).
    pub has_frr_conf: bool,
    /// Services.
    pub services: Vec<Service>,
    /// `dev[privileged]="true"` in lab.conf: only then may the device change kernel settings
    /// (sysctls), as in Kathará.
    pub privileged: bool,
    /// The `vtysh -c` statements of the startup, in order, when every one of them is plain
    /// text (letters, digits, spaces and `._/:-`); `None` when one is not (it could not be
    /// re-applied safely) or there are none.
    pub startup_vtysh: Option<Vec<String>>,
    /// Virtual gateway addresses this device answers for as the VRRP master (keepalived):
    /// traffic toward the LAN behind them may come back through the backup router too.
    pub virtual_gateways: BTreeSet<Ipv4Addr>,
}

impl DeviceModel {
    /// Hosts and servers.
    pub fn is_end_host(&self) -> bool {
        matches!(self.role.as_str(), "host" | "server")
    }
    /// Routers.
    pub fn is_router(&self) -> bool {
        self.role == "router"
    }
    /// The first address of the first addressed interface.
    pub fn primary(&self) -> Option<(&IfaceModel, Ipv4Net)> {
        self.interfaces
            .iter()
            .find_map(|i| i.addrs.first().map(|a| (i, *a)))
    }
    /// The interface holding `ip`.
    pub fn iface_with(&self, ip: Ipv4Addr) -> Option<&IfaceModel> {
        self.interfaces
            .iter()
            .find(|i| i.addrs.iter().any(|a| a.addr == ip))
    }
}

/// The former name of [`ModelGap`] (one public name per concept across the crates:
/// faultbench-report has the `MemorisationGap`; issue 28).
#[deprecated(note = "renamed to `ModelGap`; the old name goes in the next release")]
pub type Gap = ModelGap;

/// Something the files do not say of a device's model, and what would say it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelGap {
    /// The device.
    pub device: String,
    /// What is unknown.
    pub what: String,
    /// The files that were read.
    pub read: String,
    /// Filled from the live lab.
    pub completed_live: bool,
}

/// A layer-2 segment: collision domains joined by switches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Segment {
    /// Its collision domains, sorted.
    pub domains: Vec<String>,
}

/// The model of a lab.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LabModel {
    /// Topology name.
    pub topology: String,
    /// Devices in lab.conf order.
    pub devices: Vec<DeviceModel>,
    /// Layer-2 segments, ordered by their first domain.
    pub segments: Vec<Segment>,
    /// What the files did not say.
    pub gaps: Vec<ModelGap>,
    /// Host → address pairs that do *not* answer on the healthy lab although the topology
    /// connects them (a firewall policy, NAT, an ACL by design), measured by
    /// [`LabModel::calibrate_reach`]; the symptom graph never promises them.
    pub unreachable: BTreeSet<(String, Ipv4Addr)>,
    /// [`LabModel::calibrate_reach`] ran.
    pub calibrated: bool,
}

impl LabModel {
    /// Reads the model of the lab in `dir` (named `topology`).
    pub fn load(dir: &Path, topology: &str) -> Result<LabModel, ModelError> {
        let lab = LabDir::load(dir).map_err(|e| ModelError {
            file: e.file.clone(),
            what: format!("line {}: {}", e.line, e.message),
            fix: e.expected.clone(),
        })?;
        if lab.conf.devices.is_empty() {
            return Err(ModelError {
                file: dir.join("lab.conf"),
                what: "no device".into(),
                fix: "declare devices as `name[0]=domain`".into(),
            });
        }
        let roles =
            faultbench_core::lab::roles::LabRoles::for_lab(&lab).map_err(|e| ModelError {
                file: dir.join("topology.toml"),
                what: e.to_string(),
                fix: "correct topology.toml or remove it".into(),
            })?;
        let mut devices = Vec::new();
        let mut gaps = Vec::new();
        for d in &lab.conf.devices {
            let decision = roles.decision(&d.name);
            let role = match decision.map(|x| &x.role) {
                Some(Role::Router) => "router",
                Some(Role::Switch) => "switch",
                Some(Role::Server(_)) => "server",
                _ => "host",
            };
            let facts = read::device_facts(&lab, &d.name)?;
            let mut bridged = BTreeSet::new();
            let top = |port: &str| top_master(&facts.bridge_of, port);
            let mut interfaces = d
                .interfaces
                .iter()
                .map(|i| {
                    let name = i.name();
                    let bridge = top(&name);
                    let mut addrs = facts.addrs.get(&name).cloned().unwrap_or_default();
                    // The bridge's addresses go to its first port in lab.conf order.
                    if let Some(b) = &bridge
                        && bridged.insert(b.clone())
                    {
                        addrs.extend(facts.addrs.get(b).cloned().unwrap_or_default());
                    }
                    IfaceModel {
                        name,
                        domain: i.domain.clone(),
                        segment: 0,
                        addrs,
                        bridge,
                    }
                })
                .collect::<Vec<_>>();
            // A VLAN sub-interface with addresses is a layer-3 interface of its own on the
            // parent's segment (a router-on-a-stick port, a switch's SVI).
            for (vlan, parent) in &facts.vlan_parent {
                let Some(addrs) = facts.addrs.get(vlan).filter(|a| !a.is_empty()) else {
                    continue;
                };
                let parent_top = top(parent).unwrap_or_else(|| parent.clone());
                let port = interfaces.iter().find(|i| {
                    i.name == *parent
                        || i.name == parent_top
                        || i.bridge.as_deref() == Some(&parent_top)
                });
                if let Some(port) = port {
                    let domain = port.domain.clone();
                    interfaces.push(IfaceModel {
                        name: vlan.clone(),
                        domain,
                        segment: 0,
                        addrs: addrs.clone(),
                        bridge: None,
                    });
                }
            }
            let dev = DeviceModel {
                name: d.name.clone(),
                role: role.into(),
                role_why: decision.map(|x| x.because.clone()).unwrap_or_default(),
                interfaces,
                default_gw: facts.default_gw,
                daemons: facts.daemons,
                routing: facts.routing,
                routing_from: facts.routing_from,
                has_frr_conf: facts.has_frr_conf,
                services: facts.services,
                startup_vtysh: facts.startup_vtysh,
                virtual_gateways: facts.virtual_gateways,
                privileged: d
                    .option("privileged")
                    .is_some_and(|v| v.eq_ignore_ascii_case("true")),
            };
            gaps.extend(gaps_of(&dev, &facts.read));
            devices.push(dev);
        }
        let mut model = LabModel {
            topology: topology.to_string(),
            devices,
            segments: Vec::new(),
            gaps,
            unreachable: BTreeSet::new(),
            calibrated: false,
        };
        model.join_segments();
        Ok(model)
    }

    fn join_segments(&mut self) {
        // Union-find over domain names: a switch joins all the domains of its ports.
        let mut parent: BTreeMap<String, String> = BTreeMap::new();
        fn find(p: &mut BTreeMap<String, String>, x: &str) -> String {
            let mut cur = x.to_string();
            while let Some(up) = p.get(&cur).filter(|u| **u != cur).cloned() {
                cur = up;
            }
            cur
        }
        for d in &self.devices {
            for i in &d.interfaces {
                parent
                    .entry(i.domain.clone())
                    .or_insert_with(|| i.domain.clone());
            }
        }
        // A switch joins all its ports; any other device joins the ports of each bridge.
        let mut groups_to_join: Vec<Vec<String>> = Vec::new();
        for d in &self.devices {
            if d.role == "switch" {
                groups_to_join.push(d.interfaces.iter().map(|i| i.domain.clone()).collect());
            } else {
                let bridges: BTreeSet<&str> = d
                    .interfaces
                    .iter()
                    .filter_map(|i| i.bridge.as_deref())
                    .collect();
                for b in bridges {
                    groups_to_join.push(
                        d.interfaces
                            .iter()
                            .filter(|i| i.bridge.as_deref() == Some(b))
                            .map(|i| i.domain.clone())
                            .collect(),
                    );
                }
            }
        }
        for group in groups_to_join {
            let mut doms = group.into_iter();
            if let Some(first) = doms.next() {
                for other in doms {
                    let (a, b) = (find(&mut parent, &first), find(&mut parent, &other));
                    if a != b {
                        let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                        parent.insert(hi, lo);
                    }
                }
            }
        }
        let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let names: Vec<String> = parent.keys().cloned().collect();
        for n in names {
            let root = find(&mut parent, &n);
            groups.entry(root).or_default().push(n);
        }
        self.segments = groups
            .into_values()
            .map(|domains| Segment { domains })
            .collect();
        let index: BTreeMap<String, usize> = self
            .segments
            .iter()
            .enumerate()
            .flat_map(|(k, s)| s.domains.iter().map(move |d| (d.clone(), k)))
            .collect();
        for d in &mut self.devices {
            for i in &mut d.interfaces {
                i.segment = index.get(&i.domain).copied().unwrap_or(0);
            }
        }
    }

    /// A device by name.
    pub fn device(&self, name: &str) -> Option<&DeviceModel> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// The end hosts with an address.
    pub fn end_hosts(&self) -> impl Iterator<Item = &DeviceModel> {
        self.devices
            .iter()
            .filter(|d| d.is_end_host() && d.primary().is_some())
    }

    /// The device and interface holding `ip`.
    pub fn owner_of(&self, ip: Ipv4Addr) -> Option<(&DeviceModel, &IfaceModel)> {
        self.devices
            .iter()
            .find_map(|d| d.iface_with(ip).map(|i| (d, i)))
    }

    /// The router (and its interface) an end host uses as its default gateway.
    pub fn gateway_of(&self, host: &DeviceModel) -> Option<(&DeviceModel, &IfaceModel)> {
        self.owner_of(host.default_gw?)
            .filter(|(d, _)| d.is_router())
    }

    /// Gaps not completed live.
    pub fn open_gaps(&self) -> impl Iterator<Item = &ModelGap> {
        self.gaps.iter().filter(|g| !g.completed_live)
    }

    /// A stable digest of the model (part of every variant's identity).
    pub fn digest(&self) -> String {
        let json = serde_json::to_string(self).unwrap_or_default();
        crate::content::sha256_hex(json.as_bytes())
    }
}

/// The outermost master of `port` (`eth0` → `bond0` → `br0` gives `br0`), or `None` when it
/// has none. Bounded: a loop in hostile files stops after a few steps.
fn top_master(bridge_of: &BTreeMap<String, String>, port: &str) -> Option<String> {
    let mut cur = bridge_of.get(port)?;
    for _ in 0..4 {
        match bridge_of.get(cur) {
            Some(up) if up != port => cur = up,
            _ => break,
        }
    }
    Some(cur.clone())
}

fn gaps_of(d: &DeviceModel, read: &str) -> Vec<ModelGap> {
    let mut gaps = Vec::new();
    let gap = |what: String| ModelGap {
        device: d.name.clone(),
        what,
        read: read.to_string(),
        completed_live: false,
    };
    if d.is_end_host() && d.primary().is_none() {
        gaps.push(gap(
            "no IPv4 address (DHCP, or set by a command we do not read)".into(),
        ));
    }
    let configured = |daemon: &str| match daemon {
        "ospfd" => d.routing.ospf.is_some(),
        "bgpd" => d.routing.bgp.is_some(),
        "ripd" => d.routing.rip.is_some(),
        _ => true,
    };
    for daemon in &d.daemons {
        if !configured(daemon) {
            gaps.push(gap(format!(
                "{daemon} is enabled but its configuration was not found"
            )));
        }
    }
    gaps
}
