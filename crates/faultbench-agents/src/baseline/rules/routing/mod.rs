//! The control plane: routing daemons that should run and do not, forwarding switched off,
//! OSPF adjacencies and RIP peers that a link's two configurations expect but that are not
//! up (with the configuration difference that explains it: area, timers, passive interface,
//! version, network statement), BGP sessions that are down (address typo, AS mismatch,
//! missing neighbour statement, TCP 179 filtered), prefixes a router does not advertise or
//! filters inbound, and null routes swallowing a LAN.

use super::{Ctx, Finding};
use crate::baseline::filter::{self, FilterVerdict, Packet};
use crate::baseline::frr::Config;
use crate::baseline::ip4::Net;
use crate::baseline::lan::Attachment;
use crate::baseline::probe::RouteKind;
use crate::baseline::topo::DeviceKind;
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

mod bgp;
mod ospf;
mod rip;

use bgp::bgp;
use ospf::ospf_links;
use rip::rip_links;

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
            .filter(|a| cx.model.role(&a.device) == DeviceKind::Router && a.net.len < 32)
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
    for node in cx.model.with_role(DeviceKind::Router) {
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
    for node in cx.model.with_role(DeviceKind::Router) {
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
mod passive_tests;
