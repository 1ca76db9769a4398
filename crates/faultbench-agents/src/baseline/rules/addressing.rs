//! Layer 3 addressing: an address or netmask that disagrees with the rest of its LAN, a
//! default gateway nobody on the LAN holds (or that is not a router), a host with no
//! address or no default route when its neighbours have one, an address held twice on
//! one LAN, a host that landed in another VLAN than its subnet.

use super::{Ctx, Finding};
use crate::baseline::ip4::Net;
use crate::baseline::lan::Attachment;
use crate::baseline::probe::RouteKind;
use crate::baseline::topo::DeviceKind;
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

/// Addresses something else points at: gateways, route next hops, BGP neighbours, resolvers.
pub fn referenced(cx: &Ctx) -> BTreeMap<Ipv4Addr, BTreeSet<String>> {
    let mut refs: BTreeMap<Ipv4Addr, BTreeSet<String>> = BTreeMap::new();
    for node in cx.model.nodes.values() {
        let Some(f) = &node.facts else { continue };
        for r in &f.routes {
            for v in &r.via {
                refs.entry(*v).or_default().insert(node.name.clone());
            }
        }
        for ns in &f.nameservers {
            refs.entry(*ns).or_default().insert(node.name.clone());
        }
    }
    for (r, st) in &cx.obs.routers {
        if let Some(b) = st.config.as_ref().and_then(|c| c.bgp.as_ref()) {
            for peer in b.neighbors.keys() {
                if let Ok(ip) = peer.parse() {
                    refs.entry(ip).or_default().insert(r.clone());
                }
            }
        }
    }
    refs
}

/// The findings of this family.
pub fn findings(cx: &Ctx) -> Vec<Finding> {
    let refs = referenced(cx);
    let mut out = Vec::new();
    out.extend(unaddressed(cx));
    out.extend(consensus(cx, &refs));
    out.extend(gateways(cx));
    out.extend(duplicates(cx, &refs));
    out.extend(missing_routes(cx));
    out
}

fn unaddressed(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for node in cx.model.nodes.values().filter(|n| cx.model.is_end(&n.name)) {
        let Some(f) = &node.facts else { continue };
        let cabled = cx
            .topo
            .devices
            .get(&node.name)
            .map(|d| d.links.keys().cloned().collect::<Vec<_>>())
            .unwrap_or_default();
        let up_cabled = cabled
            .iter()
            .any(|i| f.ifaces.get(i).is_some_and(|x| x.admin_up));
        if f.addresses().is_empty() && up_cabled {
            let dhcp = f.runs("dhclient") || f.runs("udhcpc") || f.runs("dhcpcd");
            let what = if dhcp {
                format!(
                    "{} has no IPv4 address: its DHCP client got no lease",
                    node.name
                )
            } else {
                format!("{} has no IPv4 address on its LAN interface", node.name)
            };
            out.push(Finding::on(
                &node.name,
                3,
                what,
                "restore the address (static configuration or DHCP)",
            ));
        }
    }
    out
}

/// Per L2 domain, the subnet most members agree on; members outside it are misconfigured.
fn consensus(cx: &Ctx, refs: &BTreeMap<Ipv4Addr, BTreeSet<String>>) -> Vec<Finding> {
    let mut out = Vec::new();
    for atts in cx.model.domains.values() {
        let voters: Vec<&Attachment> = atts.iter().filter(|a| a.net.len < 32).collect();
        let mut groups: BTreeMap<Net, Vec<&Attachment>> = BTreeMap::new();
        for a in &voters {
            groups.entry(a.net.network()).or_default().push(a);
        }
        if groups.len() < 2 {
            continue;
        }
        let key = |g: &Vec<&Attachment>| {
            let referenced = g.iter().filter(|a| refs.contains_key(&a.net.addr)).count();
            let routers = g
                .iter()
                .filter(|a| cx.model.role(&a.device) == DeviceKind::Router)
                .count();
            (g.len(), referenced, routers)
        };
        let best = groups.values().map(key).max().unwrap_or((0, 0, 0));
        if groups.values().filter(|g| key(g) == best).count() > 1 {
            continue; // no majority: designs do this (a reused or odd link), so say nothing
        }
        let (major, members) = groups
            .iter()
            .find(|(_, g)| key(g) == best)
            .map(|(n, g)| (*n, g.clone()))
            .expect("a best group exists");
        let gw: Option<&Attachment> = members
            .iter()
            .find(|a| cx.model.role(&a.device) == DeviceKind::Router)
            .copied()
            .or(members.first().copied());
        for (net, g) in &groups {
            if *net == major {
                continue;
            }
            for a in g {
                let both_routers = cx.model.role(&a.device) == DeviceKind::Router
                    && members
                        .iter()
                        .all(|m| cx.model.role(&m.device) == DeviceKind::Router)
                    && members.len() == 1;
                let weight = if both_routers { 1 } else { 2 };
                let reference = gw
                    .map(|m| format!("{} {} has {}", m.device, m.iface, m.net))
                    .unwrap_or_default();
                let same_range = major.contains(a.net.addr) || a.net.network().covers(&major);
                let what = if same_range {
                    format!(
                        "wrong netmask on {} {}: it has {} (netmask {}) while its LAN uses {} (netmask {}; {reference})",
                        a.device,
                        a.iface,
                        a.net,
                        a.net.netmask(),
                        major,
                        major.netmask()
                    )
                } else {
                    format!(
                        "wrong address on {} {}: {} is outside its LAN's subnet {} ({reference})",
                        a.device, a.iface, a.net, major
                    )
                };
                let fix = if same_range {
                    format!(
                        "set the prefix length back to /{} on {} {}",
                        major.len, a.device, a.iface
                    )
                } else {
                    format!("give {} {} an address inside {}", a.device, a.iface, major)
                };
                out.push(Finding::on(&a.device, weight, what, fix));
            }
        }
    }
    out
}

/// The switch an end host is cabled to, with the port.
fn access_switch(cx: &Ctx, host: &str, iface: &str) -> Option<(String, String)> {
    let seg = cx.topo.devices.get(host)?.links.get(iface)?;
    cx.topo
        .devices
        .values()
        .filter(|d| d.name != host && cx.model.role(&d.name) == DeviceKind::Switch)
        .find_map(|d| {
            d.links
                .iter()
                .find(|(_, s)| *s == seg)
                .map(|(i, _)| (d.name.clone(), i.clone()))
        })
}

fn gateways(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    // Gateways used per domain, to compare a host with its neighbours.
    let mut used: BTreeMap<usize, Vec<(String, Ipv4Addr)>> = BTreeMap::new();
    for node in cx.model.nodes.values().filter(|n| cx.model.is_end(&n.name)) {
        let Some(f) = &node.facts else { continue };
        if let Some(r) = f.default_route()
            && let (Some(g), Some(dev)) = (r.via.first(), r.dev.as_ref())
            && let Some(d) = cx.model.domain(&node.name, dev)
        {
            used.entry(d).or_default().push((node.name.clone(), *g));
        }
    }
    for node in cx.model.nodes.values().filter(|n| cx.model.is_end(&n.name)) {
        let Some(f) = &node.facts else { continue };
        let Some(r) = f.default_route().filter(|r| r.kind == RouteKind::Unicast) else {
            continue;
        };
        let (Some(g), Some(dev)) = (r.via.first().copied(), r.dev.clone()) else {
            continue;
        };
        let h = node.name.as_str();
        let on_link = f.addresses().iter().any(|(_, n)| n.contains(g));
        if !on_link {
            out.push(Finding::on(
                h,
                3,
                format!("the default gateway {g} of {h} is outside its own subnet"),
                format!("point the default route of {h} at its LAN's gateway"),
            ));
            continue;
        }
        let domain = cx.model.domain(h, &dev);
        if domain.is_none_or(|d| !cx.model.domain_seen(d)) {
            continue;
        }
        if let Some(owner) = cx.model.owner_in(g, domain) {
            if cx.model.is_end(&owner.device) && owner.device != h {
                out.push(Finding::on(
                    h,
                    3,
                    format!(
                        "wrong default gateway on {h}: {g} is the address of {}, an end host, not a router",
                        owner.device
                    ),
                    format!("set the default route of {h} to its LAN's router"),
                ));
            }
            continue;
        }
        // Nobody on the LAN holds the gateway address, as far as the model sees. Traffic
        // through it is the stronger evidence: a gateway that answers, or that carries the
        // host's traffic to other subnets, is held by someone the model misses.
        if gateway_answers(cx, h, g) {
            continue;
        }
        let siblings: Vec<&(String, Ipv4Addr)> = domain
            .and_then(|d| used.get(&d))
            .map(|v| v.iter().filter(|(n, _)| n != h).collect())
            .unwrap_or_default();
        let good_sibling = siblings
            .iter()
            .find(|(_, sg)| *sg != g && cx.model.owner_in(*sg, domain).is_some());
        let lan_routers: Vec<&Attachment> = domain
            .and_then(|d| cx.model.domains.get(&d))
            .map(|atts| {
                atts.iter()
                    .filter(|a| cx.model.role(&a.device) == DeviceKind::Router)
                    .collect()
            })
            .unwrap_or_default();
        let elsewhere = cx.model.owners.get(&g).and_then(|o| o.first());
        if let (Some(owner), Some((sw, port))) = (elsewhere, access_switch(cx, h, &dev)) {
            let bridge = cx
                .model
                .facts(&sw)
                .and_then(|sf| sf.ifaces.get(&port))
                .and_then(|p| p.master.clone())
                .unwrap_or_else(|| "no bridge".into());
            out.push(Finding::on(
                &sw,
                2,
                format!(
                    "{h} cannot reach its gateway {g} ({} {}) at layer 2: port {port} of switch {sw} is in {bridge}, a different VLAN/bridge from the gateway's (access port in the wrong VLAN)",
                    owner.device, owner.iface
                ),
                format!("put port {port} of {sw} back into the VLAN/bridge of {h}'s subnet"),
            ).affecting([h]));
            continue;
        }
        if let Some((other, sg)) = good_sibling {
            out.push(Finding::on(
                h,
                3,
                format!(
                    "wrong default gateway on {h}: it uses {g}, which no device on its LAN holds, while {other} uses {sg}"
                ),
                format!("set the default route of {h} to via {sg}"),
            ));
            continue;
        }
        let vrrp: Vec<&str> = lan_routers
            .iter()
            .map(|a| a.device.as_str())
            .filter(|d| {
                cx.model
                    .facts(d)
                    .is_some_and(|rf| rf.vrrp_configured || rf.runs("keepalived"))
            })
            .collect();
        if !vrrp.is_empty() {
            let stopped: Vec<&str> = vrrp
                .iter()
                .copied()
                .filter(|d| {
                    cx.model
                        .facts(d)
                        .is_some_and(|rf| rf.full && !rf.runs("keepalived"))
                })
                .collect();
            for d in if stopped.is_empty() { &vrrp } else { &stopped } {
                out.push(Finding::on(
                    d,
                    if stopped.is_empty() { 2 } else { 3 },
                    format!(
                        "the virtual gateway address {g} (VRRP) of {h}'s LAN is held by no router; keepalived is {} on {d}",
                        if stopped.contains(d) { "not running" } else { "running but not master" }
                    ),
                    format!("restart keepalived (VRRP) on {d}"),
                ));
            }
            continue;
        }
        if !siblings.is_empty()
            && siblings.iter().all(|(_, sg)| *sg == g)
            && let Some(rt) = lan_routers.iter().find(|a| a.net.contains(g))
        {
            out.push(Finding::on(
                &rt.device,
                2,
                format!(
                    "wrong interface address on {} {}: it has {} but every host on the LAN ({h} and {}) uses {g} as gateway, which no device holds",
                    rt.device,
                    rt.iface,
                    rt.net,
                    siblings.len()
                ),
                format!("give {} {} the gateway address {g}", rt.device, rt.iface),
            ).affecting(siblings.iter().map(|(n, _)| n.clone()).chain([h.to_string()])));
            continue;
        }
        let hint = lan_routers
            .iter()
            .find(|a| a.net.contains(g))
            .map(|a| format!("; the LAN's router {} has {}", a.device, a.net.addr))
            .unwrap_or_default();
        out.push(Finding::on(
            h,
            3,
            format!("wrong default gateway on {h}: {g} is held by no device on its LAN{hint}"),
            format!("set the default route of {h} to its router's address"),
        ));
    }
    out
}

/// Traffic shows that `gateway` works for `host`: a ping to it answered, or a ping (or a
/// reachability pair) from the host to an address outside its own subnets, routed through
/// the gateway, answered.
pub fn gateway_answers(cx: &Ctx, host: &str, gateway: Ipv4Addr) -> bool {
    let Some(f) = cx.model.facts(host) else {
        return false;
    };
    let through_gateway = |dst: Ipv4Addr| {
        dst == gateway
            || (!f.addresses().iter().any(|(_, n)| n.contains(dst))
                && f.route_for(dst).is_some_and(|r| r.via.contains(&gateway)))
    };
    let pinged = cx
        .obs
        .pings
        .iter()
        .any(|p| p.src == host && p.received > 0 && through_gateway(p.dst));
    let reached = cx.obs.reach.iter().any(|(src, _, ip, status)| {
        src == host && status == "ok" && ip.is_some_and(through_gateway)
    });
    pinged || reached
}

fn duplicates(cx: &Ctx, refs: &BTreeMap<Ipv4Addr, BTreeSet<String>>) -> Vec<Finding> {
    let mut out = Vec::new();
    for (ip, owners) in &cx.model.owners {
        if owners.len() < 2 {
            continue;
        }
        let by_domain: BTreeMap<Option<usize>, Vec<&Attachment>> =
            owners.iter().fold(BTreeMap::new(), |mut m, a| {
                m.entry(cx.model.domain(&a.device, &a.iface))
                    .or_default()
                    .push(a);
                m
            });
        for (dom, same) in by_domain {
            let devices: BTreeSet<&str> = same.iter().map(|a| a.device.as_str()).collect();
            if dom.is_none() || devices.len() < 2 {
                continue;
            }
            let names: Vec<&str> = devices.iter().copied().collect();
            // Blame hosts before routers, and the holder nothing refers to.
            let mut blame: Vec<&str> = names
                .iter()
                .copied()
                .filter(|d| cx.model.is_end(d))
                .collect();
            if blame.is_empty() {
                blame = names.clone();
            }
            let _ = refs;
            for d in blame.iter().take(2) {
                out.push(Finding::on(
                    d,
                    3,
                    format!(
                        "IP address conflict: {ip} is configured on {} on the same LAN (duplicate address, ARP flaps between them)",
                        names.join(" and ")
                    ),
                    format!("give {d} its own unique address"),
                ));
            }
        }
    }
    // Reuse across separate LANs: designs do that; note it only.
    out
}

fn missing_routes(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    let ends: Vec<&str> = cx
        .model
        .nodes
        .values()
        .filter(|n| cx.model.is_end(&n.name) && n.facts.is_some())
        .map(|n| n.name.as_str())
        .collect();
    let with_default = ends
        .iter()
        .filter(|d| {
            cx.model
                .facts(d)
                .is_some_and(|f| f.default_route().is_some())
        })
        .count();
    for h in &ends {
        let f = cx.model.facts(h).expect("filtered");
        if f.addresses().is_empty() {
            continue;
        }
        let learned: BTreeSet<Net> = f
            .routes
            .iter()
            .filter(|r| r.proto != "kernel")
            .map(|r| r.dest)
            .collect();
        if f.default_route().is_none() && learned.is_empty() && with_default >= 1 {
            out.push(Finding::on(
                h,
                2,
                format!("{h} has no default route (no gateway configured), unlike the other hosts"),
                format!("add the default route via its LAN's gateway on {h}"),
            ));
            continue;
        }
        // Static routes its LAN neighbours all have and it lacks.
        let dom = f
            .addresses()
            .first()
            .and_then(|(i, _)| cx.model.domain(h, i));
        let siblings: Vec<&str> = ends
            .iter()
            .copied()
            .filter(|o| o != h)
            .filter(|o| {
                cx.model
                    .facts(o)
                    .and_then(|of| of.addresses().first().map(|(i, _)| cx.model.domain(o, i)))
                    .flatten()
                    == dom
            })
            .collect();
        if siblings.is_empty() || dom.is_none() {
            continue;
        }
        let common: Option<BTreeSet<Net>> = siblings.iter().fold(None, |acc, o| {
            let theirs: BTreeSet<Net> = cx
                .model
                .facts(o)
                .map(|of| {
                    of.routes
                        .iter()
                        .filter(|r| r.proto != "kernel")
                        .map(|r| r.dest)
                        .collect()
                })
                .unwrap_or_default();
            Some(match acc {
                None => theirs,
                Some(a) => a.intersection(&theirs).copied().collect(),
            })
        });
        for net in common.unwrap_or_default().difference(&learned) {
            let what = if net.len == 0 {
                format!(
                    "{h} has no default route, while its LAN neighbours ({}) have one",
                    siblings.join(", ")
                )
            } else {
                format!(
                    "{h} lacks the static route to {net} that its LAN neighbours ({}) have",
                    siblings.join(", ")
                )
            };
            out.push(Finding::on(
                h,
                2,
                what,
                format!("add the missing route to {net} on {h}"),
            ));
        }
    }
    out
}
