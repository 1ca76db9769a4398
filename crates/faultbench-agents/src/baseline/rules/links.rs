//! Layer 1/2: interfaces shut or missing on used links, ports left out of their bridge,
//! MTU mismatches on a segment, traffic shaping (netem loss/delay, rate limits).

use super::{Ctx, Finding};
use crate::baseline::topo::DeviceKind;
use std::collections::BTreeMap;

/// The other ends of a cabled interface: (device, interface) on the same segment.
fn peers(cx: &Ctx, device: &str, iface: &str) -> Vec<(String, String)> {
    let Some(seg) = cx.topo.devices.get(device).and_then(|d| d.links.get(iface)) else {
        return Vec::new();
    };
    cx.topo
        .devices
        .values()
        .filter(|d| d.name != device)
        .flat_map(|d| {
            d.links
                .iter()
                .filter(|(_, s)| *s == seg)
                .map(|(i, _)| (d.name.clone(), i.clone()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The peer side is in use: admin up, or addressed, or a bridge port.
fn peer_in_use(cx: &Ctx, dev: &str, iface: &str) -> bool {
    match cx.model.facts(dev).and_then(|f| f.ifaces.get(iface)) {
        Some(i) => i.admin_up || !i.addrs.is_empty() || i.master.is_some(),
        None => cx.model.facts(dev).is_none(),
    }
}

/// The findings of this family.
pub fn findings(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (name, dev) in &cx.topo.devices {
        let Some(f) = cx.model.facts(name) else {
            continue;
        };
        for iface in dev.links.keys() {
            let ps = peers(cx, name, iface);
            if ps.is_empty() {
                continue;
            }
            let towards: Vec<&str> = ps.iter().map(|(d, _)| d.as_str()).collect();
            let towards = towards.join(", ");
            let Some(i) = f.ifaces.get(iface) else {
                if f.full {
                    out.push(Finding::on(
                        name,
                        2,
                        format!("interface {iface} of {name} (cabled to {towards}) does not exist"),
                        format!("recreate interface {iface} on {name}"),
                    ));
                }
                continue;
            };
            // Ports shut by design carry no address and bridge nothing; a shut port that
            // does either (or a host's NIC) was in use.
            let used = !i.addrs.is_empty() || i.master.is_some() || cx.model.is_end(name);
            if !i.admin_up && used && ps.iter().any(|(d, pi)| peer_in_use(cx, d, pi)) {
                out.push(Finding::on(
                    name,
                    3,
                    format!(
                        "interface {iface} of {name} is administratively down (state DOWN), so its link to {towards} is cut"
                    ),
                    format!("bring the interface up: ip link set dev {iface} up on {name}"),
                ));
            }
        }
        // Interfaces that are not cables (SVIs, VLAN sub-interfaces, bonds, bridges, dummy
        // loopbacks) shut while they carry an address or other ports.
        for i in f.ifaces.values() {
            if dev.links.contains_key(&i.name) || i.admin_up {
                continue;
            }
            let members: Vec<&str> = f
                .ifaces
                .values()
                .filter(|m| m.master.as_deref() == Some(&i.name))
                .map(|m| m.name.as_str())
                .collect();
            let what = if !i.addrs.is_empty() {
                let a: Vec<String> = i.addrs.iter().map(|n| n.to_string()).collect();
                format!(
                    "interface {} of {name} ({}) is administratively down, so the subnet it serves is unreachable",
                    i.name,
                    a.join(", ")
                )
            } else if !members.is_empty() {
                format!(
                    "{} of {name} (over {}) is administratively down, so nothing crosses it",
                    i.name,
                    members.join(", ")
                )
            } else {
                continue;
            };
            out.push(Finding::on(
                name,
                3,
                what,
                format!("bring it up: ip link set dev {} up on {name}", i.name),
            ));
        }
        // Bridge membership: a cabled, unaddressed port left out while its siblings are in.
        let bridged: Vec<&String> = dev
            .links
            .keys()
            .filter(|i| f.ifaces.get(*i).is_some_and(|x| x.master.is_some()))
            .collect();
        if !bridged.is_empty() && cx.model.role(name) != DeviceKind::Host {
            for iface in dev.links.keys() {
                let Some(i) = f.ifaces.get(iface) else {
                    continue;
                };
                if i.master.is_some() || !i.addrs.is_empty() || !i.admin_up {
                    continue;
                }
                if f.masters().contains(iface)
                    || f.ifaces.keys().any(|k| k.starts_with(&format!("{iface}.")))
                {
                    // A bond or a trunk with VLAN sub-interfaces.
                    continue;
                }
                let ps = peers(cx, name, iface);
                let live: Vec<&str> = ps
                    .iter()
                    .filter(|(d, _)| {
                        cx.model.is_end(d)
                            || cx
                                .model
                                .facts(d)
                                .is_some_and(|pf| !pf.addresses().is_empty())
                    })
                    .map(|(d, _)| d.as_str())
                    .collect();
                if live.is_empty() {
                    continue;
                }
                let bridge = bridged
                    .first()
                    .and_then(|b| f.ifaces.get(*b))
                    .and_then(|b| b.master.clone())
                    .unwrap_or_default();
                out.push(Finding::on(
                    name,
                    2,
                    format!(
                        "port {iface} of {name} (towards {}) is not a member of bridge {bridge}, unlike its other ports: frames from {} are not switched (L2 port removed from the bridge)",
                        live.join(", "),
                        live.join(", ")
                    ),
                    format!("add the port back: ip link set dev {iface} master {bridge} on {name}"),
                ).affecting(live.iter().copied()));
            }
        }
        for line in &f.shaping {
            let dev_name = line
                .split_whitespace()
                .skip_while(|w| *w != "dev")
                .nth(1)
                .unwrap_or("?");
            out.push(Finding::on(
                name,
                3,
                format!("traffic control on {name} {dev_name}: `{}` (tc qdisc netem/tbf adds loss, delay or a rate limit)", line.trim()),
                format!("delete the qdisc: tc qdisc del dev {dev_name} root on {name}"),
            ));
        }
    }
    out.extend(mtu(cx));
    out
}

/// Interfaces of one L2 domain that disagree on the MTU.
fn mtu(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for atts in cx.model.domains.values() {
        let mut mtus: Vec<(String, String, u32)> = Vec::new();
        for a in atts {
            if let Some(m) = cx
                .model
                .facts(&a.device)
                .and_then(|f| f.ifaces.get(&a.iface))
                .and_then(|i| i.mtu)
                && !mtus.iter().any(|(d, i, _)| *d == a.device && *i == a.iface)
            {
                mtus.push((a.device.clone(), a.iface.clone(), m));
            }
        }
        let mut count: BTreeMap<u32, usize> = BTreeMap::new();
        for (_, _, m) in &mtus {
            *count.entry(*m).or_default() += 1;
        }
        if count.len() < 2 {
            continue;
        }
        let best = count.values().copied().max().unwrap_or(0);
        let tied = count.values().filter(|c| **c == best).count() > 1;
        let usual = if tied {
            1500
        } else {
            count
                .iter()
                .find(|(_, c)| **c == best)
                .map(|(m, _)| *m)
                .unwrap_or(1500)
        };
        for (d, i, m) in &mtus {
            if *m == usual {
                continue;
            }
            let others: Vec<&str> = mtus
                .iter()
                .filter(|(od, _, om)| od != d && *om == usual)
                .map(|(od, _, _)| od.as_str())
                .collect();
            if others.is_empty() {
                continue;
            }
            out.push(Finding::on(
                d,
                3,
                format!(
                    "MTU mismatch: interface {i} of {d} has MTU {m} while {} on the same link use MTU {usual}; full-size packets are dropped",
                    others.join(", ")
                ),
                format!("set the MTU back: ip link set dev {i} mtu {usual} on {d}"),
            ));
        }
    }
    out
}
