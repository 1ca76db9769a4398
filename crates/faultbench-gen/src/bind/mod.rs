//! Targets: what a family enumerates on the lab model, and the parameters each target gives
//! its templates.
//!
//! A target kind walks the model and yields one [`Binding`] per resource it can break (an
//! interface, a BGP session, a daemon, a network statement, …), with the parameters the
//! family's templates use: the resource itself, and the symptom's actors from [`crate::graph`]:
//! a `victim` that loses reachability, the `far` host it loses, and a `control` host that
//! keeps reaching it. Optional parameters are simply absent (a family tests them with `has`).
//!
//! Every plain parameter must pass [`template::safe_value`]; a binding with a value that does
//! not (a name or address from a hostile lab file) is rejected with the reason. Parameters
//! listed in [`Binding::commands`] are whole commands the generator built from quoted parts.

mod asym;
mod hosts;
mod routing;

use crate::graph::{Cut, pick, reach, same_lan};
use crate::model::{DeviceModel, LabModel};
use crate::template::{self, Params};
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

/// A target kind and the parameters it provides (beyond [`COMMON_PARAMS`]).
#[derive(Debug)]
pub struct TargetSpec {
    /// Name used in `[applies] target`.
    pub name: &'static str,
    /// What it enumerates.
    pub about: &'static str,
    /// Its parameters (optional ones may be absent in a binding).
    pub params: &'static [&'static str],
}

/// Parameters every target provides.
pub const COMMON_PARAMS: [&str; 1] = ["topology"];

macro_rules! with_actors {
    ($($p:literal),* $(,)?) => {
        &[$($p,)* "victim", "victim_ip", "far", "far_ip", "control", "control_ip"]
    };
}

/// Every target kind.
pub const TARGETS: &[TargetSpec] = &[
    TargetSpec {
        name: "host_interface",
        about: "an end host's addressed interface (victim = the host)",
        params: with_actors!(
            "device",
            "iface",
            "ip",
            "len",
            "cidr",
            "subnet",
            "gw",
            "gw_router",
            "gw_virtual",
            "typo_ip",
            "narrow_len",
            "wrong_gw",
            "spare_gw"
        ),
    },
    TargetSpec {
        name: "host_pair",
        about: "an end host (victim) and a host on another LAN it reaches (far), through the victim's gateway",
        params: with_actors!(
            "device",
            "iface",
            "ip",
            "cidr",
            "subnet",
            "gw",
            "gw_router",
            "gw_iface",
            "gw_virtual",
            "far_subnet",
            "far_gw_router",
            "far_gw_same",
            "far_gw_virtual",
            "spare_gw",
            "far_spare"
        ),
    },
    TargetSpec {
        name: "router_lan_interface",
        about: "a router interface that is the default gateway of a LAN's hosts",
        params: with_actors!("device", "iface", "ip", "len", "cidr", "subnet", "new_ip"),
    },
    TargetSpec {
        name: "router_path",
        about: "a router serving a LAN, and a far LAN its hosts reach through it",
        params: with_actors!(
            "device",
            "victim_subnet",
            "far_subnet",
            "far_direct",
            "frr",
            "privileged",
            "alt",
            "alt_ip"
        ),
    },
    TargetSpec {
        name: "ospf_link",
        about: "an OSPF adjacency on a router-to-router segment",
        params: with_actors!(
            "device",
            "iface",
            "ip",
            "neighbor",
            "neighbor_ip",
            "area",
            "network",
            "network_exact",
            "wrong_area",
            "hello",
            "dead",
            "new_hello",
            "new_dead",
            "hello_restore",
            "dead_restore",
            "cost_restore",
            "bad_hello",
            "bad_dead"
        ),
    },
    TargetSpec {
        name: "lan_network",
        about: "a routing protocol's network statement announcing a LAN",
        params: with_actors!(
            "device", "iface", "protocol", "daemon", "network", "area", "asn", "subnet"
        ),
    },
    TargetSpec {
        name: "bgp_neighbor",
        about: "a configured BGP session",
        params: with_actors!(
            "device",
            "asn",
            "neighbor",
            "neighbor_ip",
            "remote_as",
            "wrong_as",
            "iface",
            "as_typo",
            "ebgp"
        ),
    },
    TargetSpec {
        name: "routing_daemon",
        about: "a routing daemon that runs and is configured",
        params: with_actors!("device", "daemon", "reapply"),
    },
    TargetSpec {
        name: "service",
        about: "a service (web, DNS, DHCP) a server runs",
        params: &[
            "device",
            "kind",
            "program",
            "port",
            "proto",
            "process",
            "stop",
            "start",
            "server_ip",
            "client",
            "client_ip",
            "gw_router",
            "gw_only",
            "server_spare",
            "far_client",
            "far_client_ip",
        ],
    },
    TargetSpec {
        name: "lan_second_router",
        about: "an end host whose LAN has a second router that shares a subnet with the host's gateway on another of its interfaces",
        params: with_actors!(
            "device",
            "iface",
            "gw",
            "gw_virtual",
            "privileged",
            "peer",
            "peer_ip",
            "peer_lan_ip",
            "via_iface"
        ),
    },
];

/// The target kind called `name`.
pub fn target(name: &str) -> Option<&'static TargetSpec> {
    TARGETS.iter().find(|t| t.name == name)
}

/// The names of every target kind.
pub fn target_names() -> Vec<&'static str> {
    TARGETS.iter().map(|t| t.name).collect()
}

/// One resource a target found, with its parameters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The resource, e.g. `router1:eth0` or `router1->193.10.11.2`.
    pub target: String,
    /// Parameter values.
    pub params: Params,
    /// Parameters that are whole commands (exempt from the plain-value check).
    pub commands: BTreeSet<String>,
    /// Parameters with several values (`spare_gw`, `hello_values`, …): a family that uses one
    /// yields one variant per value; a family that does not is not multiplied.
    pub lists: BTreeMap<String, Vec<String>>,
}

/// Every binding of target `kind` on `model`, and the bindings rejected for an unsafe value.
pub fn bind(model: &LabModel, kind: &str) -> (Vec<Binding>, Vec<String>) {
    let raw = match kind {
        "host_interface" => hosts::host_interface(model),
        "host_pair" => hosts::host_pair(model),
        "router_lan_interface" => hosts::router_lan_interface(model),
        "router_path" => hosts::router_path(model),
        "ospf_link" => routing::ospf_link(model),
        "lan_network" => routing::lan_network(model),
        "bgp_neighbor" => routing::bgp_neighbor(model),
        "routing_daemon" => routing::routing_daemon(model),
        "service" => hosts::service(model),
        "lan_second_router" => asym::lan_second_router(model),
        _ => Vec::new(),
    };
    let mut ok = Vec::new();
    let mut rejected = Vec::new();
    for mut b in raw {
        b.params.insert("topology".into(), model.topology.clone());
        let bad = b
            .params
            .iter()
            .chain(
                b.lists
                    .iter()
                    .flat_map(|(k, vs)| vs.iter().map(move |v| (k, v))),
            )
            .find(|(k, v)| !b.commands.contains(*k) && !template::safe_value(v));
        match bad {
            Some((k, v)) => rejected.push(format!(
                "{}: parameter `{k}` = {:?} is not a plain name or address",
                b.target, v
            )),
            None => ok.push(b),
        }
    }
    (ok, rejected)
}

fn binding(target: String) -> Binding {
    Binding {
        target,
        params: Params::new(),
        commands: BTreeSet::new(),
        lists: BTreeMap::new(),
    }
}

/// Sets list parameter `k` (left out when `vs` is empty, so `has k` tells).
fn set_list(b: &mut Binding, k: &str, vs: impl IntoIterator<Item = impl ToString>) {
    let vs: Vec<String> = vs.into_iter().map(|v| v.to_string()).collect();
    if !vs.is_empty() {
        b.lists.insert(k.to_string(), vs);
    }
}

fn set(b: &mut Binding, k: &str, v: impl ToString) {
    b.params.insert(k.to_string(), v.to_string());
}

/// Parameters that bindings give as lists (one variant per value).
pub const LIST_PARAMS: [&str; 4] = ["spare_gw", "bad_hello", "bad_dead", "as_typo"];

fn ip_of(h: &DeviceModel) -> Option<Ipv4Addr> {
    h.primary().map(|(_, a)| a.addr)
}

/// Sets victim, far and control: `far` is a host the victim reaches now but not with `cut`;
/// `control` is another host that still reaches `far` with `cut`.
fn actors(m: &LabModel, b: &mut Binding, victim: &DeviceModel, cut: &Cut, isolated: bool) -> bool {
    let hosts: Vec<&DeviceModel> = m.end_hosts().collect();
    let healthy = Cut::default();
    let fars: Vec<&DeviceModel> = hosts
        .iter()
        .copied()
        .filter(|f| f.name != victim.name && !same_lan(f, victim))
        .filter(|f| reach(m, victim, f, &healthy))
        .filter(|f| isolated || !reach(m, victim, f, cut))
        .collect();
    let Some(far) = pick(&fars, &b.target) else {
        return false;
    };
    let controls: Vec<&DeviceModel> = hosts
        .iter()
        .copied()
        .filter(|c| c.name != victim.name && c.name != far.name)
        .filter(|c| reach(m, c, far, cut) && reach(m, c, far, &healthy))
        .collect();
    // A control on the victim's own LAN says the most (same switch, same gateway).
    let same_lan: Vec<&DeviceModel> = controls
        .iter()
        .copied()
        .filter(|c| same_lan(c, victim))
        .collect();
    let control = pick(&same_lan, &b.target).or_else(|| pick(&controls, &b.target));
    for (k, h) in [
        ("victim", Some(victim)),
        ("far", Some(far)),
        ("control", control),
    ] {
        if let Some(h) = h
            && let Some(ip) = ip_of(h)
        {
            set(b, k, &h.name);
            set(b, &format!("{k}_ip"), ip);
        }
    }
    true
}

/// The end hosts whose gateway is `ip`.
fn served_by(m: &LabModel, ip: Ipv4Addr) -> Vec<&DeviceModel> {
    m.end_hosts().filter(|h| h.default_gw == Some(ip)).collect()
}
