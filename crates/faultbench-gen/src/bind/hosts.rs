//! Targets of hosts, gateways, paths and services.

use super::{Binding, actors, binding, ip_of, served_by, set, set_list};
use crate::graph::{Cut, pick, reach, same_lan, segment_of};
use crate::model::{DeviceModel, IfaceModel, Ipv4Net, LabModel};
use std::collections::BTreeSet;
use std::net::Ipv4Addr;

/// A VRRP gateway is "yes": the router is the master, and traffic back toward its LAN may
/// take the backup router (equal-cost routes), so a family acting on that direction at the
/// master alone does not always show.
fn yes_no(virtual_gateway: bool) -> &'static str {
    if virtual_gateway { "yes" } else { "no" }
}

pub(super) fn host_interface(m: &LabModel) -> Vec<Binding> {
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
                set(
                    &mut b,
                    "gw_virtual",
                    yes_no(r.virtual_gateways.contains(&gw)),
                );
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
            set_list(&mut b, "spare_gw", near_unused(m, net, gw, SPARE_GW));
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

/// How many mistyped gateways a host offers (the unused addresses nearest its real one).
const SPARE_GW: usize = 4;

/// Up to `n` addresses of `net` near `gw` (gw±1, gw±2, …) that no device holds: what a
/// gateway typed one or two digits off looks like.
pub(super) fn near_unused(m: &LabModel, net: Ipv4Net, gw: Ipv4Addr, n: usize) -> Vec<Ipv4Addr> {
    let g = i64::from(u32::from(gw));
    let lo = i64::from(u32::from(net.network().addr));
    let hi = lo + (1i64 << (32 - u32::from(net.len))) - 1;
    let mut out = Vec::new();
    for d in 1..=64i64 {
        for c in [g - d, g + d] {
            // Neither the network nor the broadcast address.
            if c <= lo || c >= hi || out.len() >= n {
                continue;
            }
            let Ok(a) = u32::try_from(c).map(Ipv4Addr::from) else {
                continue;
            };
            if m.owner_of(a).is_none() {
                out.push(a);
            }
        }
    }
    out
}

/// One binding per (victim, far) pair: a host with a gateway and a host on another LAN it
/// reaches through it. `control` is another host that still reaches `far` (the victim's LAN
/// first), so a fault on the pair's path proves itself selective.
pub(super) fn host_pair(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    let hosts: Vec<&DeviceModel> = m.end_hosts().collect();
    let healthy = Cut::default();
    for v in hosts.iter().copied() {
        let (Some((iface, net)), Some(gw)) = (v.primary(), v.default_gw) else {
            continue;
        };
        let Some((gr, gi)) = m.gateway_of(v) else {
            continue;
        };
        for f in hosts.iter().copied() {
            let Some((_, fnet)) = f.primary() else {
                continue;
            };
            if f.name == v.name || same_lan(f, v) || !reach(m, v, f, &healthy) {
                continue;
            }
            let mut b = binding(format!("{}->{}", v.name, f.name));
            set(&mut b, "device", &v.name);
            set(&mut b, "iface", &iface.name);
            set(&mut b, "ip", net.addr);
            set(&mut b, "cidr", net);
            set(&mut b, "subnet", net.network());
            set(&mut b, "gw", gw);
            set(&mut b, "gw_router", &gr.name);
            set(&mut b, "gw_iface", gi.l3_name());
            set(
                &mut b,
                "gw_virtual",
                yes_no(gr.virtual_gateways.contains(&gw)),
            );
            if let Some((fr, _)) = m.gateway_of(f) {
                set(&mut b, "far_gw_router", &fr.name);
                set(
                    &mut b,
                    "far_gw_virtual",
                    yes_no(
                        f.default_gw
                            .is_some_and(|g| fr.virtual_gateways.contains(&g)),
                    ),
                );
                set(
                    &mut b,
                    "far_gw_same",
                    if fr.name == gr.name { "yes" } else { "no" },
                );
            }
            set(&mut b, "far_subnet", fnet.network());
            // An address of the far LAN nobody holds: what answers to it reach is nothing.
            if let Some(a) = unused_in(m, fnet) {
                set(&mut b, "far_spare", a);
            }
            set_list(&mut b, "spare_gw", near_unused(m, net, gw, SPARE_GW));
            set(&mut b, "victim", &v.name);
            set(&mut b, "victim_ip", net.addr);
            set(&mut b, "far", &f.name);
            set(&mut b, "far_ip", fnet.addr);
            let controls: Vec<&DeviceModel> = hosts
                .iter()
                .copied()
                .filter(|c| c.name != v.name && c.name != f.name && reach(m, c, f, &healthy))
                .collect();
            let same_lan: Vec<&DeviceModel> = controls
                .iter()
                .copied()
                .filter(|c| same_lan(c, v))
                .collect();
            if let Some(c) = pick(&same_lan, &b.target).or_else(|| pick(&controls, &b.target))
                && let Some(ip) = ip_of(c)
            {
                set(&mut b, "control", &c.name);
                set(&mut b, "control_ip", ip);
            }
            out.push(b);
        }
    }
    out
}

/// An address outside `net`, unused in the model: the third octet shifted by 40 (a typo-like
/// change), or the second for prefixes longer than /24.
pub(super) fn typo_ip(m: &LabModel, net: Ipv4Net) -> Option<Ipv4Addr> {
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
pub(super) fn unused_in(m: &LabModel, net: Ipv4Net) -> Option<Ipv4Addr> {
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

pub(super) fn router_lan_interface(m: &LabModel) -> Vec<Binding> {
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

pub(super) fn lan_params(b: &mut Binding, r: &DeviceModel, i: &IfaceModel, net: Ipv4Net) {
    set(b, "device", &r.name);
    set(b, "iface", i.l3_name());
    set(b, "ip", net.addr);
    set(b, "len", net.len);
    set(b, "cidr", net);
    set(b, "subnet", net.network());
}

pub(super) fn router_path(m: &LabModel) -> Vec<Binding> {
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
                            && !same_lan(a, victim)
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

pub(super) fn service(m: &LabModel) -> Vec<Binding> {
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
            gateway_params(m, &mut b, s, &clients);
            out.push(b);
        }
    }
    out
}

/// The server's side of its gateway, for a rule there that only traffic from beyond the LAN
/// meets: `gw_router` (the router holding the server's default gateway), `gw_only` (`yes` when
/// no other router is on the server's LAN, so everything from beyond it enters through that
/// router), `server_spare` (an address of the server's subnet nobody holds) and `far_client`
/// (a client on another LAN).
fn gateway_params(m: &LabModel, b: &mut Binding, s: &DeviceModel, clients: &[&DeviceModel]) {
    let Some((seg, net)) = s.primary().map(|(i, n)| (i.segment, n)) else {
        return;
    };
    if let Some((g, _)) = m.gateway_of(s) {
        set(b, "gw_router", &g.name);
        let others = m
            .devices
            .iter()
            .filter(|d| d.is_router() && d.name != g.name)
            .any(|d| {
                d.interfaces
                    .iter()
                    .any(|i| i.segment == seg && !i.addrs.is_empty())
            });
        set(b, "gw_only", if others { "no" } else { "yes" });
    }
    if let Some(a) = unused_in(m, net) {
        set(b, "server_spare", a);
    }
    let far: Vec<&DeviceModel> = clients
        .iter()
        .copied()
        .filter(|c| !same_lan(c, s))
        .collect();
    if let Some(c) = pick(&far, &format!("{}/far", b.target))
        && let Some(ip) = ip_of(c)
    {
        set(b, "far_client", &c.name);
        set(b, "far_client_ip", ip);
    }
}
