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

use crate::graph::{Cut, pick, reach, segment_of};
use crate::model::{DeviceModel, IfaceModel, Ipv4Net, LabModel};
use crate::template::{self, Params, shell_quote};
use std::collections::BTreeSet;
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
            "typo_ip",
            "narrow_len",
            "wrong_gw"
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
            "cost_restore"
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
            "wrong_as"
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
        ],
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
}

/// Every binding of target `kind` on `model`, and the bindings rejected for an unsafe value.
pub fn bind(model: &LabModel, kind: &str) -> (Vec<Binding>, Vec<String>) {
    let raw = match kind {
        "host_interface" => host_interface(model),
        "router_lan_interface" => router_lan_interface(model),
        "router_path" => router_path(model),
        "ospf_link" => ospf_link(model),
        "lan_network" => lan_network(model),
        "bgp_neighbor" => bgp_neighbor(model),
        "routing_daemon" => routing_daemon(model),
        "service" => service(model),
        _ => Vec::new(),
    };
    let mut ok = Vec::new();
    let mut rejected = Vec::new();
    for mut b in raw {
        b.params.insert("topology".into(), model.topology.clone());
        let bad = b
            .params
            .iter()
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
    }
}

fn set(b: &mut Binding, k: &str, v: impl ToString) {
    b.params.insert(k.to_string(), v.to_string());
}

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
        .filter(|f| f.name != victim.name && segment_of(f) != segment_of(victim))
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
        .filter(|c| segment_of(c) == segment_of(victim))
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

/// An address outside `net`, unused in the model: the third octet shifted by 40 (a typo-like
/// change), or the second for prefixes longer than /24.
fn typo_ip(m: &LabModel, net: Ipv4Net) -> Option<Ipv4Addr> {
    let o = net.addr.octets();
    for shift in [40u8, 50, 60] {
        let cand = if net.len <= 24 {
            Ipv4Addr::new(o[0], o[1], o[2].wrapping_add(shift), o[3])
        } else {
            Ipv4Addr::new(o[0], o[1].wrapping_add(shift), o[2], o[3])
        };
        if !net.contains(cand) && m.owner_of(cand).is_none() {
            return Some(cand);
        }
    }
    None
}

/// The highest host address of `net` no device holds.
fn unused_in(m: &LabModel, net: Ipv4Net) -> Option<Ipv4Addr> {
    // From the top of the prefix down, a bounded number of tries (a /8 holds 16 M addresses).
    let base = u32::from(net.network().addr);
    let size = 1u64 << (32 - u32::from(net.len));
    let last = if net.len >= 31 {
        size - 1
    } else {
        size.saturating_sub(2)
    };
    let first = u64::from(net.len < 31);
    (first..=last)
        .rev()
        .take(1024)
        .filter_map(|i| u32::try_from(i).ok().map(|i| Ipv4Addr::from(base + i)))
        .find(|a| m.owner_of(*a).is_none())
}

fn host_interface(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    for h in m.end_hosts() {
        let Some((iface, net)) = h.primary() else {
            continue;
        };
        let mut b = binding(format!("{}:{}", h.name, iface.name));
        set(&mut b, "device", &h.name);
        set(&mut b, "iface", &iface.name);
        set(&mut b, "ip", net.addr);
        set(&mut b, "len", net.len);
        set(&mut b, "cidr", net);
        set(&mut b, "subnet", net.network());
        if let Some(gw) = h.default_gw {
            set(&mut b, "gw", gw);
            if let Some((r, _)) = m.gateway_of(h) {
                set(&mut b, "gw_router", &r.name);
            }
            // The shortest longer prefix that leaves the gateway off-link.
            if let Some(l) = (net.len + 1..=30)
                .find(|l| Ipv4Net::new(net.addr, *l).is_some_and(|n| !n.contains(gw)))
            {
                set(&mut b, "narrow_len", l);
            }
            if let Some(w) = unused_in(m, net) {
                set(&mut b, "wrong_gw", w);
            }
        }
        if let Some(t) = typo_ip(m, net) {
            set(&mut b, "typo_ip", t);
        }
        if actors(m, &mut b, h, &Cut::default(), true) {
            out.push(b);
        }
    }
    out
}

/// The end hosts whose gateway is `ip`.
fn served_by(m: &LabModel, ip: Ipv4Addr) -> Vec<&DeviceModel> {
    m.end_hosts().filter(|h| h.default_gw == Some(ip)).collect()
}

fn router_lan_interface(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    for r in m.devices.iter().filter(|d| d.is_router()) {
        for i in &r.interfaces {
            let Some(net) = i.addrs.first().copied() else {
                continue;
            };
            let served = served_by(m, net.addr);
            let Some(victim) = pick(&served, &format!("{}:{}", r.name, i.name)) else {
                continue;
            };
            let mut b = binding(format!("{}:{}", r.name, i.name));
            lan_params(&mut b, r, i, net);
            if let Some(n) = unused_in(m, net).filter(|a| *a != net.addr) {
                set(&mut b, "new_ip", n);
            }
            let cut = Cut {
                router: None,
                edge: Some((&r.name, i.segment)),
            };
            if actors(m, &mut b, victim, &cut, false) {
                out.push(b);
            }
        }
    }
    out
}

fn lan_params(b: &mut Binding, r: &DeviceModel, i: &IfaceModel, net: Ipv4Net) {
    set(b, "device", &r.name);
    set(b, "iface", i.l3_name());
    set(b, "ip", net.addr);
    set(b, "len", net.len);
    set(b, "cidr", net);
    set(b, "subnet", net.network());
}

fn router_path(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    let hosts: Vec<&DeviceModel> = m.end_hosts().collect();
    for r in m.devices.iter().filter(|d| d.is_router()) {
        for i in &r.interfaces {
            let Some(net) = i.addrs.first().copied() else {
                continue;
            };
            let served = served_by(m, net.addr);
            let Some(victim) = pick(&served, &format!("{}:{}", r.name, i.name)) else {
                continue;
            };
            // One binding per far LAN (by its subnet), represented by one host.
            let mut far_nets = BTreeSet::new();
            for far in hosts.iter().copied() {
                let Some((_, fnet)) = far.primary() else {
                    continue;
                };
                if segment_of(far) == Some(i.segment)
                    || !reach(m, victim, far, &Cut::default())
                    || !far_nets.insert(fnet.network())
                {
                    continue;
                }
                let mut b = binding(format!("{}:{}->{}", r.name, net.network(), fnet.network()));
                set(&mut b, "device", &r.name);
                set(&mut b, "victim_subnet", net.network());
                set(&mut b, "far_subnet", fnet.network());
                let direct = r
                    .interfaces
                    .iter()
                    .any(|x| x.segment == far.primary().map_or(usize::MAX, |p| p.0.segment));
                set(&mut b, "far_direct", if direct { "yes" } else { "no" });
                set(
                    &mut b,
                    "frr",
                    if r.daemons.is_empty() { "no" } else { "yes" },
                );
                set(
                    &mut b,
                    "privileged",
                    if r.privileged { "yes" } else { "no" },
                );
                set(&mut b, "victim", &victim.name);
                set(&mut b, "victim_ip", ip_of(victim).unwrap_or(net.addr));
                set(&mut b, "far", &far.name);
                set(&mut b, "far_ip", fnet.addr);
                // alt: a host on another far LAN the victim keeps reaching (the fault is selective;
                // a host on the victim's own LAN would prove nothing about the router).
                let alts: Vec<&DeviceModel> = hosts
                    .iter()
                    .copied()
                    .filter(|a| {
                        a.primary()
                            .is_some_and(|(_, an)| !fnet.network().contains(an.addr))
                            && a.name != victim.name
                            && segment_of(a) != segment_of(victim)
                            && reach(m, victim, a, &Cut::default())
                    })
                    .collect();
                if let Some(a) = pick(&alts, &b.target) {
                    set(&mut b, "alt", &a.name);
                    set(&mut b, "alt_ip", ip_of(a).unwrap_or(net.addr));
                }
                // control: a host not behind this router that reaches far without it.
                let cut = Cut {
                    router: Some(&r.name),
                    edge: None,
                };
                let controls: Vec<&DeviceModel> = hosts
                    .iter()
                    .copied()
                    .filter(|c| c.name != far.name && reach(m, c, far, &cut))
                    .collect();
                if let Some(c) = pick(&controls, &b.target) {
                    set(&mut b, "control", &c.name);
                    set(&mut b, "control_ip", ip_of(c).unwrap_or(net.addr));
                }
                out.push(b);
            }
        }
    }
    out
}

/// The routers (other than `r`) with an addressed interface on segment `s`.
fn routers_on(m: &LabModel, s: usize) -> Vec<(&DeviceModel, &IfaceModel)> {
    m.devices
        .iter()
        .filter(|d| d.is_router())
        .filter_map(|d| {
            d.interfaces
                .iter()
                .find(|i| i.segment == s && !i.addrs.is_empty())
                .map(|i| (d, i))
        })
        .collect()
}

/// A victim/far pair the loss of `cut` separates (searched over all host pairs).
fn separated(m: &LabModel, b: &mut Binding, cut: &Cut) {
    let hosts: Vec<&DeviceModel> = m.end_hosts().collect();
    let mut victims = Vec::new();
    for v in &hosts {
        if hosts
            .iter()
            .any(|f| reach(m, v, f, &Cut::default()) && !reach(m, v, f, cut))
        {
            victims.push(*v);
        }
    }
    if let Some(v) = pick(&victims, &b.target) {
        actors(m, b, v, cut, false);
    }
}

fn ospf_link(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    for r in m.devices.iter().filter(|d| d.is_router()) {
        let Some(ospf) = &r.routing.ospf else {
            continue;
        };
        for i in &r.interfaces {
            let Some(net) = i.addrs.first().copied() else {
                continue;
            };
            let covering = ospf.networks.iter().find(|(p, _)| p.contains(net.addr));
            let if_area = r
                .routing
                .ospf_ifaces
                .get(&i.name)
                .and_then(|x| x.area.clone());
            let Some(area) = covering.map(|(_, a)| a.clone()).or(if_area) else {
                continue;
            };
            let on = routers_on(m, i.segment);
            let hosts_here = m.end_hosts().any(|h| segment_of(h) == Some(i.segment));
            if on.len() != 2 || hosts_here {
                continue;
            }
            let Some((n, ni)) = on.iter().find(|(d, _)| d.name != r.name) else {
                continue;
            };
            if n.routing.ospf.is_none() {
                continue;
            }
            let mut b = binding(format!("{}:{}", r.name, i.l3_name()));
            set(&mut b, "device", &r.name);
            set(&mut b, "iface", i.l3_name());
            set(&mut b, "ip", net.addr);
            set(&mut b, "neighbor", &n.name);
            if let Some(a) = ni.addrs.first() {
                set(&mut b, "neighbor_ip", a.addr);
            }
            set(&mut b, "area", &area);
            if let Ok(a) = area.parse::<u32>() {
                set(&mut b, "wrong_area", a.saturating_add(1));
            }
            if let Some((p, _)) = covering {
                set(&mut b, "network", p);
                let only = r
                    .interfaces
                    .iter()
                    .filter(|x| x.addrs.iter().any(|a| p.contains(a.addr)))
                    .count()
                    == 1;
                set(&mut b, "network_exact", if only { "yes" } else { "no" });
            }
            let oi = r
                .routing
                .ospf_ifaces
                .get(&i.name)
                .cloned()
                .unwrap_or_default();
            let (hello, dead) = (oi.hello.unwrap_or(10), oi.dead.unwrap_or(40));
            set(&mut b, "hello", hello);
            set(&mut b, "dead", dead);
            let (nh, nd) = if (hello, dead) == (2, 8) {
                (3, 12)
            } else {
                (2, 8)
            };
            set(&mut b, "new_hello", nh);
            set(&mut b, "new_dead", nd);
            let restore = |name: &str, v: Option<u32>| match v {
                Some(v) => format!("ip ospf {name} {v}"),
                None => format!("no ip ospf {name}"),
            };
            for (k, v) in [
                ("hello_restore", restore("hello-interval", oi.hello)),
                ("dead_restore", restore("dead-interval", oi.dead)),
                ("cost_restore", restore("cost", oi.cost)),
            ] {
                set(&mut b, k, v);
                b.commands.insert(k.to_string());
            }
            let cut = Cut {
                router: None,
                edge: Some((&r.name, i.segment)),
            };
            separated(m, &mut b, &cut);
            out.push(b);
        }
    }
    out
}

fn lan_network(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    for r in m.devices.iter().filter(|d| d.is_router()) {
        let rc = &r.routing;
        let mut statements: Vec<(&str, &str, Ipv4Net, Option<String>)> = Vec::new();
        if let Some(o) = &rc.ospf
            && !o.redistribute.iter().any(|x| x == "connected")
        {
            for (p, a) in &o.networks {
                statements.push(("ospf", "ospfd", *p, Some(a.clone())));
            }
        }
        if let Some(x) = &rc.rip
            && !x.redistribute.iter().any(|x| x == "connected")
        {
            for p in &x.networks {
                statements.push(("rip", "ripd", *p, None));
            }
        }
        if let Some(x) = &rc.bgp
            && !x.redistribute.iter().any(|x| x == "connected")
        {
            for p in &x.networks {
                statements.push(("bgp", "bgpd", *p, None));
            }
        }
        for (proto, daemon, p, area) in statements {
            let covered: Vec<&IfaceModel> = r
                .interfaces
                .iter()
                .filter(|i| i.addrs.iter().any(|a| p.contains(a.addr)))
                .collect();
            let [i] = covered.as_slice() else {
                continue;
            };
            let Some(net) = i.addrs.first().copied() else {
                continue;
            };
            if routers_on(m, i.segment).len() != 1 {
                continue;
            }
            let served = served_by(m, net.addr);
            let key = format!("{}:{proto}:{p}", r.name);
            let Some(victim) = pick(&served, &key) else {
                continue;
            };
            let mut b = binding(key);
            set(&mut b, "device", &r.name);
            set(&mut b, "iface", i.l3_name());
            set(&mut b, "protocol", proto);
            set(&mut b, "daemon", daemon);
            set(&mut b, "network", p);
            set(&mut b, "subnet", net.network());
            if let Some(a) = area {
                set(&mut b, "area", a);
            }
            if let Some(bgp) = &rc.bgp {
                set(&mut b, "asn", bgp.asn);
            }
            // The LAN disappears from every other router: cut the router from the LAN as
            // far as the rest of the network is concerned.
            let cut = Cut {
                router: None,
                edge: Some((&r.name, i.segment)),
            };
            if actors(m, &mut b, victim, &cut, false) {
                out.push(b);
            }
        }
    }
    out
}

fn bgp_neighbor(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    for r in m.devices.iter().filter(|d| d.is_router()) {
        let Some(bgp) = &r.routing.bgp else {
            continue;
        };
        for nb in &bgp.neighbors {
            let mut b = binding(format!("{}->{}", r.name, nb.ip));
            set(&mut b, "device", &r.name);
            set(&mut b, "asn", bgp.asn);
            set(&mut b, "neighbor_ip", nb.ip);
            set(&mut b, "remote_as", nb.remote_as);
            set(&mut b, "wrong_as", nb.remote_as.wrapping_add(10));
            let owner = m.owner_of(nb.ip);
            if let Some((n, ni)) = owner {
                set(&mut b, "neighbor", &n.name);
                // A session over a two-router segment is that segment's only use here.
                if routers_on(m, ni.segment).len() == 2 {
                    let cut = Cut {
                        router: None,
                        edge: Some((&r.name, ni.segment)),
                    };
                    separated(m, &mut b, &cut);
                }
            }
            out.push(b);
        }
    }
    out
}

/// `vtysh -c 'configure terminal' -c '…' … -c 'end'`, each statement quoted.
fn vtysh_command(statements: &[String]) -> String {
    let mut cmd = String::from("vtysh -c 'configure terminal'");
    for s in statements {
        cmd.push_str(" -c ");
        cmd.push_str(&shell_quote(s));
    }
    cmd.push_str(" -c 'end'");
    cmd
}

fn routing_daemon(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    for r in m.devices.iter().filter(|d| d.is_router()) {
        let reapply = if r.has_frr_conf {
            Some("vtysh -b".to_string())
        } else {
            r.startup_vtysh.as_deref().map(vtysh_command)
        };
        let Some(reapply) = reapply else {
            continue;
        };
        // A static or kernel default route survives the daemon's death and keeps traffic
        // flowing: no reachability symptom to promise.
        if !r.routing.static_routes.is_empty() || r.default_gw.is_some() {
            continue;
        }
        for daemon in &r.daemons {
            let mut b = binding(format!("{}:{daemon}", r.name));
            set(&mut b, "device", &r.name);
            set(&mut b, "daemon", daemon);
            set(&mut b, "reapply", &reapply);
            b.commands.insert("reapply".into());
            // Without its daemon the router keeps only its connected networks: its hosts
            // lose every LAN that is not attached to it.
            let attached: BTreeSet<usize> = r
                .interfaces
                .iter()
                .filter(|i| !i.addrs.is_empty())
                .map(|i| i.segment)
                .collect();
            let victims: Vec<&DeviceModel> = r
                .interfaces
                .iter()
                .filter_map(|i| i.addrs.first())
                .flat_map(|a| served_by(m, a.addr))
                .collect();
            if let Some(v) = pick(&victims, &b.target) {
                let hosts: Vec<&DeviceModel> = m.end_hosts().collect();
                let fars: Vec<&DeviceModel> = hosts
                    .iter()
                    .copied()
                    .filter(|f| segment_of(f).is_some_and(|s| !attached.contains(&s)))
                    .filter(|f| reach(m, v, f, &Cut::default()))
                    .collect();
                if let Some(f) = pick(&fars, &b.target) {
                    set(&mut b, "victim", &v.name);
                    set(
                        &mut b,
                        "victim_ip",
                        ip_of(v).unwrap_or(Ipv4Addr::UNSPECIFIED),
                    );
                    set(&mut b, "far", &f.name);
                    set(&mut b, "far_ip", ip_of(f).unwrap_or(Ipv4Addr::UNSPECIFIED));
                }
            }
            out.push(b);
        }
    }
    out
}

fn service(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    let hosts: Vec<&DeviceModel> = m.end_hosts().collect();
    for s in m.devices.iter().filter(|d| !d.services.is_empty()) {
        let Some(server_ip) = ip_of(s) else {
            continue;
        };
        for svc in &s.services {
            let mut b = binding(format!("{}:{}", s.name, svc.program));
            set(&mut b, "device", &s.name);
            set(&mut b, "kind", &svc.kind);
            set(&mut b, "program", &svc.program);
            set(&mut b, "port", svc.port);
            set(&mut b, "proto", &svc.proto);
            set(&mut b, "process", &svc.process);
            set(&mut b, "server_ip", server_ip);
            for (k, v) in [("stop", &svc.stop), ("start", &svc.start)] {
                set(&mut b, k, v);
                b.commands.insert(k.to_string());
            }
            let clients: Vec<&DeviceModel> = hosts
                .iter()
                .copied()
                .filter(|c| c.name != s.name && reach(m, c, s, &Cut::default()))
                .collect();
            if let Some(c) = pick(&clients, &b.target) {
                set(&mut b, "client", &c.name);
                set(&mut b, "client_ip", ip_of(c).unwrap_or(server_ip));
            }
            out.push(b);
        }
    }
    out
}
