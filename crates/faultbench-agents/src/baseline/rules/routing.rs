//! The control plane: routing daemons that should run and do not, forwarding switched off,
//! OSPF adjacencies and RIP peers that a link's two configurations expect but that are not
//! up (with the configuration difference that explains it: area, timers, passive interface,
//! version, network statement), BGP sessions that are down (address typo, AS mismatch,
//! missing neighbour statement, TCP 179 filtered), prefixes a router does not advertise or
//! filters inbound, and null routes swallowing a LAN.

use super::{Ctx, Finding};
use crate::baseline::filter::{self, Packet, Verdict};
use crate::baseline::frr::Config;
use crate::baseline::ip4::Net;
use crate::baseline::lan::Attachment;
use crate::baseline::probe::RouteKind;
use crate::baseline::topo::Role;
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

/// The findings of this family.
pub fn findings(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(daemons(cx));
    out.extend(ospf_links(cx));
    out.extend(rip_links(cx));
    out.extend(bgp(cx));
    out.extend(advertisement(cx));
    out.extend(null_routes(cx));
    out.extend(process_numbers(cx));
    out
}

/// Protocols whose peers must share a number (`router eigrp 100`): the router whose number
/// differs from every neighbour running the same protocol.
fn process_numbers(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    let numbered = |r: &str, proto: &str| -> Option<String> {
        cfg(cx, r)?
            .other
            .keys()
            .find_map(|k| k.strip_prefix(&format!("{proto} ")).map(str::to_string))
    };
    let mut blamed = BTreeSet::new();
    for proto in ["eigrp", "isis"] {
        for (a, b) in router_links(cx) {
            let (Some(na), Some(nb)) = (numbered(&a.device, proto), numbered(&b.device, proto))
            else {
                continue;
            };
            if na == nb {
                continue;
            }
            // The odd one: the router whose number none of its other neighbours share.
            let agrees = |me: &Attachment, n: &str| {
                router_links(cx)
                    .into_iter()
                    .filter_map(|(x, y)| {
                        if x.device == me.device {
                            Some(y)
                        } else if y.device == me.device {
                            Some(x)
                        } else {
                            None
                        }
                    })
                    .filter(|p| numbered(&p.device, proto).as_deref() == Some(n))
                    .count()
            };
            let me = if agrees(a, &na) < agrees(b, &nb) {
                a
            } else {
                b
            };
            let (mine, theirs) = if std::ptr::eq(me, a) {
                (&na, &nb)
            } else {
                (&nb, &na)
            };
            if blamed.insert(me.device.clone()) {
                out.push(Finding::on(
                    &me.device,
                    3,
                    format!(
                        "{} AS/process mismatch: {} runs `router {proto} {mine}` while its neighbour uses `router {proto} {theirs}`, so they never form a neighbourship",
                        proto.to_ascii_uppercase(),
                        me.device
                    ),
                    format!("configure `router {proto} {theirs}` on {}", me.device),
                ));
            }
        }
    }
    out
}

fn cfg<'a>(cx: &'a Ctx, r: &str) -> Option<&'a Config> {
    cx.obs.routers.get(r).and_then(|s| s.config.as_ref())
}

/// Pairs of routers sharing an L2 domain and a subnet: (a on r1, b on r2).
fn router_links<'a>(cx: &'a Ctx) -> Vec<(&'a Attachment, &'a Attachment)> {
    let mut out = Vec::new();
    for atts in cx.model.domains.values() {
        let routers: Vec<&Attachment> = atts
            .iter()
            .filter(|a| cx.model.role(&a.device) == Role::Router && a.net.len < 32)
            .collect();
        for (i, a) in routers.iter().enumerate() {
            for b in routers.iter().skip(i + 1) {
                if a.device != b.device {
                    out.push((*a, *b));
                }
            }
        }
    }
    out
}

fn daemons(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    let any_frr = cx
        .model
        .nodes
        .values()
        .any(|n| n.facts.as_ref().is_some_and(|f| f.runs("zebra")));
    for node in cx.model.with_role(Role::Router) {
        let r = node.name.as_str();
        let Some(f) = &node.facts else { continue };
        if f.forwarding == Some(false) {
            out.push(Finding::on(
                r,
                3,
                format!("IPv4 forwarding is disabled on {r} (net.ipv4.ip_forward = 0): it drops all transit traffic"),
                format!("enable forwarding: sysctl -w net.ipv4.ip_forward=1 on {r}"),
            ));
        }
        let frr_down = cx.obs.routers.get(r).is_some_and(|s| s.frr_down);
        let expects_frr = !f.enabled_daemons.is_empty() || f.has_frr_conf || any_frr;
        if f.full
            && !f.runs("zebra")
            && expects_frr
            && (frr_down || !f.enabled_daemons.is_empty() || f.has_frr_conf)
        {
            let missing: Vec<&str> = f.enabled_daemons.iter().map(String::as_str).collect();
            out.push(Finding::on(
                r,
                3,
                format!(
                    "FRR is not running on {r}: zebra{} {} not running (routing daemon down; vtysh cannot connect)",
                    if missing.is_empty() { String::new() } else { format!(" and {}", missing.join(", ")) },
                    if missing.is_empty() { "is" } else { "are" }
                ),
                format!("restart FRR on {r} (/etc/init.d/frr restart)"),
            ));
            continue;
        }
        let st = cx.obs.routers.get(r);
        let absent = |d: &str| {
            if f.full {
                !f.runs(d)
            } else {
                st.is_some_and(|s| match d {
                    "ospfd" => s.ospf_absent,
                    "bgpd" => s.bgp_absent,
                    "ripd" => s.rip_absent,
                    _ => false,
                })
            }
        };
        for d in &f.enabled_daemons {
            if absent(d) {
                out.push(Finding::on(
                    r,
                    3,
                    format!("{d} is enabled on {r} (/etc/frr/daemons) but not running: the routing daemon is down"),
                    format!("start {d} again on {r} (/etc/init.d/frr restart)"),
                ));
            }
        }
        if f.vrrp_configured && f.full && !f.runs("keepalived") {
            out.push(Finding::on(
                r,
                3,
                format!("keepalived (VRRP) is configured on {r} but not running"),
                format!("start keepalived on {r}"),
            ));
        }
        if f.dhcp_configured && f.full && !(f.runs("dhcpd") || f.listens(67)) {
            out.push(Finding::on(
                r,
                3,
                format!(
                    "the DHCP server (isc-dhcp-server, dhcpd) is configured on {r} but not running"
                ),
                format!("start isc-dhcp-server on {r}"),
            ));
        }
    }
    // A daemon a neighbour runs and configures towards this router, absent here.
    for (a, b) in router_links(cx) {
        for (me, peer) in [(a, b), (b, a)] {
            let Some(f) = cx.model.facts(&me.device) else {
                continue;
            };
            if !f.full || !f.runs("zebra") {
                continue;
            }
            let Some(pc) = cfg(cx, &peer.device) else {
                continue;
            };
            let expects = [
                (
                    "ospfd",
                    pc.ospf_area(&peer.iface, peer.net).is_some() && !pc.ospf_passive(&peer.iface),
                ),
                (
                    "ripd",
                    pc.rip_covers(&peer.iface, peer.net) && !pc.rip_passive(&peer.iface),
                ),
                (
                    "bgpd",
                    pc.bgp
                        .as_ref()
                        .is_some_and(|bg| bg.neighbors.contains_key(&me.net.addr.to_string())),
                ),
            ];
            for (d, expected) in expects {
                if expected && !f.runs(d) && !f.enabled_daemons.contains(d) {
                    out.push(Finding::on(
                        &me.device,
                        3,
                        format!(
                            "{d} is not running on {}, while its neighbour {} runs it and expects {} as a peer on that link (routing daemon down)",
                            me.device, peer.device, me.device
                        ),
                        format!("start {d} again on {} (/etc/init.d/frr restart)", me.device),
                    ));
                }
            }
        }
    }
    out
}

/// How much a passive interface facing an OSPF neighbour that does send hellos harms:
/// 3 when the passive side or its neighbour lacks routes to the other's OSPF subnets (what
/// the adjacency should have carried) or the passive setting changed at run time; 2 (a fault
/// only if failing traffic involves it) when routes still arrive another way.
fn passive_harm(cx: &Ctx, mc: &Config, me: &Attachment, other: &Attachment) -> Option<u8> {
    if super::drift::touches(cx, &me.device, &["passive", &me.iface]) {
        return Some(3);
    }
    let oc = cfg(cx, &other.device)?;
    let missing = |from: &Attachment, to: &Attachment, to_cfg: &Config| {
        let (Some(ff), Some(tf)) = (cx.model.facts(&from.device), cx.model.facts(&to.device))
        else {
            return false;
        };
        tf.addresses()
            .into_iter()
            .filter(|(i, n)| *i != to.iface && n.len < 32 && to_cfg.ospf_area(i, *n).is_some())
            .any(|(_, n)| {
                !ff.addresses().iter().any(|(_, x)| x.contains(n.addr))
                    && ff.route_for(n.addr).is_none_or(|r| r.dest.len == 0)
            })
    };
    if missing(other, me, mc) || missing(me, other, oc) {
        Some(3)
    } else {
        Some(2)
    }
}

/// `0`, `0.0.0.0` and `1`, `0.0.0.1` are the same area.
fn area_id(a: &str) -> u32 {
    a.parse::<u32>()
        .ok()
        .or_else(|| a.parse::<Ipv4Addr>().ok().map(u32::from))
        .unwrap_or(u32::MAX)
}

fn ospf_up_between(cx: &Ctx, a: &Attachment, b: &Attachment) -> Option<bool> {
    let view = |me: &Attachment, other: &Attachment| {
        cx.obs
            .routers
            .get(&me.device)
            .and_then(|s| s.ospf.as_ref())
            .map(|ns| ns.iter().any(|n| n.addr == Some(other.net.addr) && n.up()))
    };
    match (view(a, b), view(b, a)) {
        (Some(x), Some(y)) => Some(x && y),
        (Some(x), None) | (None, Some(x)) => Some(x),
        (None, None) => None,
    }
}

/// The OSPF areas of a router's other interfaces.
fn other_areas(cx: &Ctx, c: &Config, me: &Attachment) -> BTreeSet<u32> {
    cx.model
        .facts(&me.device)
        .map(|f| {
            f.addresses()
                .into_iter()
                .filter(|(i, _)| *i != me.iface)
                .filter_map(|(i, n)| c.ospf_area(&i, n))
                .map(|a| area_id(&a))
                .collect()
        })
        .unwrap_or_default()
}

fn ospf_links(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (a, b) in router_links(cx) {
        let (Some(ca), Some(cb)) = (cfg(cx, &a.device), cfg(cx, &b.device)) else {
            continue;
        };
        if ca.ospf.is_none() || cb.ospf.is_none() {
            continue;
        }
        let (aa, ab) = (ca.ospf_area(&a.iface, a.net), cb.ospf_area(&b.iface, b.net));
        let link = format!("{} {} - {} {}", a.device, a.iface, b.device, b.iface);
        if aa.is_none() && ab.is_none() {
            continue;
        }
        if ospf_up_between(cx, a, b) != Some(false) {
            continue;
        }
        // One side's address left the link's subnet (re-addressed interface).
        if a.net.network() != b.net.network() {
            for (me, mc, other) in [(a, ca, b), (b, cb, a)] {
                let covers_peer = mc
                    .ospf
                    .as_ref()
                    .is_some_and(|o| o.networks.iter().any(|(n, _)| n.contains(other.net.addr)));
                if covers_peer && mc.ospf_area(&me.iface, me.net).is_none() {
                    out.push(Finding::on(
                        &me.device,
                        3,
                        format!(
                            "wrong interface address on {} {}: {} is outside the link's subnet {} that its own OSPF network statement and its neighbour {} ({}) use, so the OSPF adjacency on {link} is down",
                            me.device, me.iface, me.net, other.net.network(), other.device, other.net
                        ),
                        format!("restore the address of {} {} inside {}", me.device, me.iface, other.net.network()),
                    ));
                }
            }
            continue;
        }
        let pa = ca.ospf_passive(&a.iface) && aa.is_some();
        let pb = cb.ospf_passive(&b.iface) && ab.is_some();
        if pa != pb {
            let (me, mc, other) = if pa { (a, ca, b) } else { (b, cb, a) };
            // Passive towards a neighbour that does not run OSPF on the link is a design (an
            // edge towards a customer or provider): no adjacency is meant there.
            if aa.is_none() || ab.is_none() {
                continue;
            }
            let harm = passive_harm(cx, mc, me, other);
            if let Some(weight) = harm {
                out.push(Finding::on(
                    &me.device,
                    weight,
                    format!(
                        "OSPF passive-interface {} on {} suppresses hellos towards {}: the adjacency on {link} never forms",
                        me.iface, me.device, other.device
                    ),
                    format!("no passive-interface {} under router ospf on {}", me.iface, me.device),
                ));
            }
            continue;
        }
        if pa && pb {
            continue;
        }
        match (&aa, &ab) {
            (Some(x), Some(y)) if area_id(x) != area_id(y) => {
                let moved = |e: &Attachment| {
                    super::drift::touches(cx, &e.device, &["router ospf |", "area"])
                };
                let (mut odd_a, mut odd_b) = (moved(a), moved(b));
                if odd_a == odd_b {
                    odd_a = !other_areas(cx, ca, a).contains(&area_id(x));
                    odd_b = !other_areas(cx, cb, b).contains(&area_id(y));
                }
                let blame: Vec<(&Attachment, &String)> = match (odd_a, odd_b) {
                    (true, false) => vec![(a, x)],
                    (false, true) => vec![(b, y)],
                    _ => vec![(a, x), (b, y)],
                };
                for (me, area) in blame {
                    out.push(Finding::on(
                        &me.device,
                        3,
                        format!(
                            "OSPF area mismatch on {link}: {} puts {} in area {area} while the other side uses area {}; the adjacency is down",
                            me.device,
                            me.iface,
                            if std::ptr::eq(me, a) { y } else { x }
                        ),
                        format!("put {} {} back in the area its neighbour uses (network statement)", me.device, me.iface),
                    ));
                }
                continue;
            }
            (Some(_), None) | (None, Some(_)) => {
                let me = if aa.is_none() { a } else { b };
                out.push(Finding::on(
                    &me.device,
                    2,
                    format!(
                        "OSPF network statement missing on {}: no network statement covers {} ({}), so no adjacency forms on {link}",
                        me.device, me.iface, me.net.network()
                    ),
                    format!("add `network {} area …` under router ospf on {}", me.net.network(), me.device),
                ));
                continue;
            }
            _ => {}
        }
        // Timers and network type.
        let mut diffs = Vec::new();
        for (key, default) in [
            ("hello-interval", "10"),
            ("dead-interval", ""),
            ("network", "broadcast"),
        ] {
            let va = ca.iface_value(&a.iface, &["ip", "ospf", key]);
            let vb = cb.iface_value(&b.iface, &["ip", "ospf", key]);
            let norm = |v: &Option<String>| v.clone().unwrap_or_else(|| default.to_string());
            if norm(&va) != norm(&vb) {
                diffs.push((key, default, va, vb));
            }
        }
        if !diffs.is_empty() {
            for (key, default, va, vb) in diffs {
                let me = odd_side(cx, (a, &va), (b, &vb), key, default);
                let (mine, theirs, other) = if std::ptr::eq(me, a) {
                    (&va, &vb, b)
                } else {
                    (&vb, &va, a)
                };
                let show = |v: &Option<String>| {
                    v.clone().unwrap_or_else(|| {
                        format!(
                            "the default ({})",
                            if default.is_empty() {
                                "4 x hello"
                            } else {
                                default
                            }
                        )
                    })
                };
                out.push(Finding::on(
                    &me.device,
                    3,
                    format!(
                        "OSPF timer/network-type mismatch on {link}: {} {} has ip ospf {key} {} while {} uses {}; both ends must agree, so the adjacency is down",
                        me.device,
                        me.iface,
                        show(mine),
                        other.device,
                        show(theirs)
                    ),
                    format!(
                        "set ip ospf {key} on {} {} back to {}",
                        me.device,
                        me.iface,
                        theirs.clone().unwrap_or_else(|| "the default".into())
                    ),
                ));
            }
            continue;
        }
        for me in [a, b] {
            out.push(Finding::on(
                &me.device,
                2,
                format!("the OSPF adjacency on {link} is not Full although both sides configure OSPF on it"),
                "compare the two interfaces' OSPF settings (area, timers, MTU, authentication)",
            ));
        }
    }
    out
}

/// Which end of a link changed an interface setting: the one whose running configuration
/// drifted from its saved file on that statement; else the one that disagrees with how
/// most OSPF interfaces of the network are set; else the one with a non-default value.
fn odd_side<'a>(
    cx: &Ctx,
    (a, va): (&'a Attachment, &Option<String>),
    (b, vb): (&'a Attachment, &Option<String>),
    key: &str,
    default: &str,
) -> &'a Attachment {
    let moved = |x: &Attachment| {
        super::drift::touches(cx, &x.device, &[&format!("interface {} |", x.iface), key])
    };
    match (moved(a), moved(b)) {
        (true, false) => return a,
        (false, true) => return b,
        _ => {}
    }
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for (x, y) in router_links(cx) {
        for end in [x, y] {
            if let Some(c) = cfg(cx, &end.device)
                && c.ospf_area(&end.iface, end.net).is_some()
            {
                let v = c
                    .iface_value(&end.iface, &["ip", "ospf", key])
                    .unwrap_or_else(|| default.to_string());
                *counts.entry(v).or_default() += 1;
            }
        }
    }
    let best = counts.values().copied().max().unwrap_or(0);
    let usual: Vec<&String> = counts
        .iter()
        .filter(|(_, c)| **c == best)
        .map(|(v, _)| v)
        .collect();
    if let [usual] = usual.as_slice() {
        let norm = |v: &Option<String>| v.clone().unwrap_or_else(|| default.to_string());
        match (norm(va) == **usual, norm(vb) == **usual) {
            (false, true) => return a,
            (true, false) => return b,
            _ => {}
        }
    }
    if va.is_none() && vb.is_some() { b } else { a }
}

fn rip_links(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    // The version most RIP routers run.
    let versions: Vec<(String, String)> = cx
        .obs
        .routers
        .iter()
        .filter_map(|(r, s)| {
            let c = s.config.as_ref()?;
            let rip = c.rip.as_ref()?;
            Some((
                r.clone(),
                rip.version.clone().unwrap_or_else(|| "default".into()),
            ))
        })
        .collect();
    let majority = {
        let mut counts: BTreeMap<&str, usize> = Default::default();
        for (_, v) in &versions {
            *counts.entry(v.as_str()).or_default() += 1;
        }
        let best = counts.values().copied().max().unwrap_or(0);
        let tops: Vec<&str> = counts
            .iter()
            .filter(|(_, c)| **c == best)
            .map(|(v, _)| *v)
            .collect();
        (tops.len() == 1).then(|| tops[0].to_string())
    };
    for (a, b) in router_links(cx) {
        let (Some(ca), Some(cb)) = (cfg(cx, &a.device), cfg(cx, &b.device)) else {
            continue;
        };
        if ca.rip.is_none() || cb.rip.is_none() {
            continue;
        }
        let heard = |me: &Attachment, other: &Attachment| {
            cx.obs
                .routers
                .get(&me.device)
                .and_then(|s| s.rip.as_ref())
                .map(|st| st.sources.contains(&other.net.addr))
        };
        let (ha, hb) = (heard(a, b), heard(b, a));
        if ha != Some(false) && hb != Some(false) {
            continue;
        }
        let link = format!("{} {} - {} {}", a.device, a.iface, b.device, b.iface);
        let mut found = false;
        for (me, mc) in [(a, ca), (b, cb)] {
            let v = mc
                .rip
                .as_ref()
                .and_then(|r| r.version.clone())
                .unwrap_or_else(|| "default".into());
            if let Some(m) = &majority
                && *m != v
            {
                found = true;
                out.push(Finding::on(
                    &me.device,
                    3,
                    format!(
                        "RIP version mismatch: {} runs RIP version {v} while the other RIP routers use version {m}; updates on {link} are ignored",
                        me.device
                    ),
                    format!("set `version {m}` under router rip on {}", me.device),
                ));
            }
            if mc.rip_passive(&me.iface) {
                found = true;
                out.push(Finding::on(
                    &me.device,
                    3,
                    format!("RIP passive-interface {} on {} stops updates towards its neighbour on {link}", me.iface, me.device),
                    format!("no passive-interface {} under router rip on {}", me.iface, me.device),
                ));
            }
            if !mc.rip_covers(&me.iface, me.net) {
                found = true;
                out.push(Finding::on(
                    &me.device,
                    3,
                    format!(
                        "RIP network statement missing on {}: no `network` covers {} ({}), so it exchanges no routes on {link}",
                        me.device, me.iface, me.net.network()
                    ),
                    format!("add `network {}` under router rip on {}", me.net.network(), me.device),
                ));
            }
        }
        if !found {
            out.push(Finding::general(
                2,
                format!("RIP updates are not exchanged on {link} although both routers configure RIP there"),
                "compare the two routers' RIP settings and filters (UDP 520)",
            ));
        }
    }
    out
}

/// The AS a router presents to the peer at `peer_addr`.
fn presented_as(c: &Config, peer_addr: &str) -> Option<u32> {
    let b = c.bgp.as_ref()?;
    Some(
        b.neighbors
            .get(peer_addr)
            .and_then(|n| n.local_as)
            .unwrap_or(b.asn),
    )
}

fn as_matches(expected: &str, presented: u32, own: u32) -> bool {
    match expected {
        "external" => presented != own,
        "internal" => presented == own,
        n => n.parse::<u32>().is_ok_and(|e| e == presented),
    }
}

fn drops_tcp179(cx: &Ctx, dev: &str, src: Ipv4Addr, dst: Ipv4Addr) -> Option<String> {
    let f = cx.model.facts(dev)?;
    let rules = filter::parse(&f.iptables);
    for (chain, s, d) in [("INPUT", src, dst), ("OUTPUT", dst, src)] {
        let p = Packet {
            src: s,
            dst: d,
            proto: "tcp",
            dport: Some(179),
            iif: None,
            oif: None,
            reply: false,
        };
        if let Verdict::Drop(line) = rules.verdict(chain, &p) {
            return Some(line);
        }
    }
    None
}

fn bgp(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (r, st) in &cx.obs.routers {
        let (Some(c), Some(sessions)) = (st.config.as_ref(), st.bgp.as_ref()) else {
            continue;
        };
        let Some(b) = c.bgp.as_ref() else { continue };
        for (peer, n) in &b.neighbors {
            let Ok(ip) = peer.parse::<Ipv4Addr>() else {
                continue;
            };
            let up = sessions.iter().any(|s| s.peer == *peer && s.up);
            if up {
                continue;
            }
            let state = sessions
                .iter()
                .find(|s| s.peer == *peer)
                .map(|s| s.state.clone())
                .unwrap_or_else(|| "not listed".into());
            if n.shutdown {
                out.push(Finding::on(
                    r,
                    3,
                    format!("BGP neighbor {peer} is administratively shut down on {r} (neighbor {peer} shutdown)"),
                    format!("no neighbor {peer} shutdown under router bgp on {r}"),
                ));
                continue;
            }
            let my_att = cx
                .model
                .facts(r)
                .and_then(|f| f.addresses().into_iter().find(|(_, a)| a.contains(ip)));
            let Some(owner) = cx.model.owners.get(&ip).and_then(|o| o.first()) else {
                // Nobody holds the neighbour address: a typo here, or the peer was re-addressed.
                let across: Option<&Attachment> = my_att.as_ref().and_then(|(i, _)| {
                    let d = cx.model.domain(r, i)?;
                    cx.model
                        .domains
                        .get(&d)?
                        .iter()
                        .find(|a| a.device != *r && cx.model.role(&a.device) == Role::Router)
                });
                match across {
                    Some(p) if !p.net.contains(ip) => {
                        out.push(Finding::on(
                            &p.device,
                            2,
                            format!(
                                "wrong interface address on {} {}: {} is outside the link's subnet; {r} still peers with {peer} (BGP session {state})",
                                p.device, p.iface, p.net
                            ),
                            format!("restore the address of {} {}", p.device, p.iface),
                        ));
                    }
                    Some(p) => out.push(Finding::on(
                        r,
                        3,
                        format!(
                            "BGP neighbor address typo on {r}: neighbor {peer} matches no device; the router on that link, {}, has {} (session {state})",
                            p.device, p.net.addr
                        ),
                        format!("fix the neighbor statement on {r}: neighbor {} remote-as …", p.net.addr),
                    )),
                    None => out.push(Finding::on(
                        r,
                        3,
                        format!("BGP neighbor {peer} configured on {r} matches no device in the lab (neighbor address typo; session {state})"),
                        format!("fix the neighbor address under router bgp on {r}"),
                    )),
                }
                continue;
            };
            let p = owner.device.as_str();
            let Some(pc) = cfg(cx, p) else { continue };
            let Some(pb) = pc.bgp.as_ref() else {
                continue; // bgpd not running there: the daemon rule speaks
            };
            let my_addr = my_att.map(|(_, a)| a.addr);
            let back = my_addr.and_then(|a| pb.neighbors.get(&a.to_string()).map(|n| (a, n)));
            let Some((my_addr, back_n)) = back else {
                out.push(Finding::on(
                    p,
                    3,
                    format!(
                        "BGP neighbor statement missing on {p}: {r} peers with {peer} but {p} has no neighbor statement for {r}'s address (session {state})"
                    ),
                    format!("add `neighbor <{r}'s address> remote-as {}` under router bgp on {p}", b.asn),
                ));
                continue;
            };
            // AS numbers, both directions.
            let expected_p = n.remote_as.clone().unwrap_or_default();
            let presented_p = presented_as(pc, &my_addr.to_string()).unwrap_or(pb.asn);
            let expected_r = back_n.remote_as.clone().unwrap_or_default();
            let presented_r = presented_as(c, peer).unwrap_or(b.asn);
            let bad1 = !as_matches(&expected_p, presented_p, b.asn);
            let bad2 = !as_matches(&expected_r, presented_r, pb.asn);
            if bad1 || bad2 {
                let (who, what) = if bad1 && back_n.local_as.is_some() {
                    (
                        p,
                        format!(
                            "{p} presents AS {presented_p} to {r} through a local-as override, but {r} expects remote-as {expected_p}"
                        ),
                    )
                } else if bad2 && n.local_as.is_some() {
                    (
                        r.as_str(),
                        format!(
                            "{r} presents AS {presented_r} to {p} through a local-as override, but {p} expects remote-as {expected_r}"
                        ),
                    )
                } else if bad1 && !bad2 {
                    (
                        r.as_str(),
                        format!(
                            "{r} has `neighbor {peer} remote-as {expected_p}` but {p} is AS {presented_p}"
                        ),
                    )
                } else if bad2 && !bad1 {
                    (
                        p,
                        format!(
                            "{p} has `neighbor {my_addr} remote-as {expected_r}` but {r} is AS {presented_r}"
                        ),
                    )
                } else {
                    (
                        r.as_str(),
                        format!(
                            "{r} (AS {presented_r}) and {p} (AS {presented_p}) each expect a different AS from the other ({expected_p} / {expected_r})"
                        ),
                    )
                };
                out.push(Finding::on(
                    who,
                    3,
                    format!("BGP AS mismatch (wrong remote-as): {what}; the session stays {state}"),
                    format!("make the remote-as/local-as on {who} match the peer's AS"),
                ));
                continue;
            }
            let mut filtered = false;
            for (dev, src, dst) in [(r.as_str(), ip, my_addr), (p, my_addr, ip)] {
                if let Some(line) = drops_tcp179(cx, dev, src, dst) {
                    filtered = true;
                    out.push(Finding::on(
                        dev,
                        3,
                        format!("a firewall rule on {dev} blocks BGP (TCP port 179): `{line}` (iptables), so the session {r}-{p} stays {state}"),
                        format!("delete the iptables rule `{line}` on {dev}"),
                    ));
                }
            }
            if !filtered {
                out.push(Finding::on(
                    r,
                    2,
                    format!("the BGP session from {r} to {p} ({peer}) is not established (state {state})"),
                    "check the link and the neighbor configuration on both sides",
                ));
            }
        }
    }
    out
}

/// Whether `dev` has a specific (non-default) route covering `net`.
fn knows(cx: &Ctx, dev: &str, net: Net) -> bool {
    cx.model.facts(dev).is_some_and(|f| {
        f.routes
            .iter()
            .any(|r| r.dest.len > 0 && r.dest.covers(&net) && r.kind == RouteKind::Unicast)
    })
}

fn advertisement(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    let routers: Vec<&str> = cx
        .obs
        .routers
        .iter()
        .filter(|(_, s)| s.config.is_some())
        .map(|(r, _)| r.as_str())
        .collect();
    for atts in cx.model.domains.values() {
        if !atts.iter().any(|a| cx.model.is_end(&a.device)) {
            continue;
        }
        for a in atts.iter().filter(|a| routers.contains(&a.device.as_str())) {
            let lan = a.net.network();
            let others: Vec<&str> = routers
                .iter()
                .copied()
                .filter(|o| *o != a.device && cx.model.facts(o).is_some())
                .filter(|o| !atts.iter().any(|x| x.device == *o))
                .collect();
            let lacking: Vec<&str> = others
                .iter()
                .copied()
                .filter(|o| !knows(cx, o, lan))
                .collect();
            if others.is_empty() || lacking.is_empty() {
                continue;
            }
            let c = cfg(cx, &a.device).expect("filtered");
            let r = a.device.as_str();
            let all_lack = lacking.len() == others.len();
            let who = lacking.join(", ");
            if let Some(b) = &c.bgp {
                let announced =
                    b.networks.contains(&lan) || b.redistribute.iter().any(|k| k == "connected");
                if !announced && all_lack {
                    let near = b.networks.iter().find(|n| {
                        !atts.iter().any(|x| n.contains(x.net.addr))
                            && !cx
                                .model
                                .facts(r)
                                .is_some_and(|f| f.routes.iter().any(|rt| rt.dest == **n))
                    });
                    let what = match near {
                        Some(n) => format!(
                            "BGP network statement mistyped on {r}: `network {n}` matches no route on {r}, so its LAN {lan} is never advertised ({who} have no route to it)"
                        ),
                        None => format!(
                            "BGP network statement missing on {r}: its LAN {lan} is not announced (no `network {lan}`), so {who} have no route to it"
                        ),
                    };
                    out.push(Finding::on(
                        r,
                        3,
                        what,
                        format!("announce it: `network {lan}` under router bgp on {r}"),
                    ));
                    continue;
                }
                if announced {
                    // Announced but missing somewhere: an inbound filter there?
                    for o in &lacking {
                        let Some(oc) = cfg(cx, o).and_then(|x| x.bgp.as_ref()) else {
                            continue;
                        };
                        for (peer, n) in &oc.neighbors {
                            if n.inbound.is_empty() {
                                continue;
                            }
                            let plists: Vec<String> = n
                                .inbound
                                .iter()
                                .map(|p| {
                                    let name = p.split_whitespace().nth(1).unwrap_or("");
                                    let lines = cfg(cx, o)
                                        .and_then(|x| x.prefix_lists.get(name))
                                        .map(|l| l.join(" / "))
                                        .unwrap_or_default();
                                    if lines.is_empty() {
                                        p.clone()
                                    } else {
                                        format!("{p} ({lines})")
                                    }
                                })
                                .collect();
                            out.push(Finding::on(
                                o,
                                3,
                                format!(
                                    "BGP inbound filter on {o}: the session with {peer} applies {}, and {o} has no route to {lan} although {r} announces it (prefix-list/route-map drops the peer's route)",
                                    plists.join(", ")
                                ),
                                format!("remove the inbound prefix-list/route-map from neighbor {peer} on {o}"),
                            ));
                        }
                    }
                }
            }
            if c.ospf.is_some()
                && c.ospf_area(&a.iface, a.net).is_none()
                && !c
                    .ospf
                    .as_ref()
                    .is_some_and(|o| o.originates.iter().any(|x| x.contains("connected")))
                && all_lack
            {
                out.push(Finding::on(
                    r,
                    3,
                    format!(
                        "OSPF network statement missing on {r}: no network statement covers its LAN {lan} on {}, so {who} have no OSPF route to it",
                        a.iface
                    ),
                    format!("add `network {lan} area …` under router ospf on {r}"),
                ));
            }
            if c.rip.is_some() && !c.rip_covers(&a.iface, a.net) && all_lack {
                out.push(Finding::on(
                    r,
                    3,
                    format!("RIP network statement missing on {r}: its LAN {lan} ({}) is not in RIP, so {who} have no route to it", a.iface),
                    format!("add `network {lan}` under router rip on {r}"),
                ));
            }
        }
    }
    out
}

fn null_routes(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    let lan_addrs: Vec<(Ipv4Addr, &str)> = cx
        .model
        .domains
        .values()
        .flatten()
        .filter(|a| cx.model.is_end(&a.device))
        .map(|a| (a.net.addr, a.device.as_str()))
        .collect();
    for node in cx.model.with_role(Role::Router) {
        let Some(f) = &node.facts else { continue };
        let mut seen = BTreeSet::new();
        for (ip, host) in &lan_addrs {
            let Some(r) = f.route_for(*ip) else { continue };
            if r.kind == RouteKind::Unicast || !seen.insert(r.line.clone()) {
                continue;
            }
            out.push(Finding::on(
                &node.name,
                2,
                format!(
                    "{} has a {} route `{}` that swallows traffic to {ip} ({host}) (static blackhole route)",
                    node.name,
                    if r.kind == RouteKind::Blackhole { "blackhole" } else { "reject" },
                    r.line
                ),
                format!("delete the route: ip route del {} on {} (and its `ip route` in FRR)", r.dest, node.name),
            ).affecting([*host]));
        }
    }
    out
}

#[cfg(test)]
#[path = "routing_passive_tests.rs"]
mod passive_tests;
