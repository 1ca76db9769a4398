//! What was found working, in words a reader can check: protocol sessions that are up, the
//! state of each device the ticket names, and the ticket's claims the evidence contradicts.
//! Every sentence here rests on a probe the run made; nothing is asserted without one.

use super::claims::Mechanism;
use super::rules::paths::expected_reachable;
use super::rules::{Ctx, Finding};
use super::topo::DeviceKind;

/// Protocol state that is healthy: BGP sessions Established, OSPF adjacencies Full, RIP
/// neighbours heard, each with the routers involved.
pub fn protocol_facts(cx: &Ctx) -> Vec<String> {
    let mut bgp_up = Vec::new();
    let mut ospf_up = Vec::new();
    let mut rip = Vec::new();
    for (r, st) in &cx.obs.routers {
        for s in st.bgp.iter().flatten().filter(|s| s.up) {
            let peer = owner(cx, &s.peer);
            if r.as_str() < peer.as_str() || !cx.obs.routers.contains_key(&peer) {
                bgp_up.push(format!("{r}-{peer} ({})", s.peer));
            }
        }
        for n in st.ospf.iter().flatten().filter(|n| n.up()) {
            let peer = n
                .addr
                .map(|a| owner(cx, &a.to_string()))
                .unwrap_or_default();
            if r.as_str() < peer.as_str() {
                ospf_up.push(format!("{r}-{peer}"));
            }
        }
        for src in st.rip.iter().flat_map(|x| x.sources.iter()) {
            rip.push(format!("{r} hears {}", owner(cx, &src.to_string())));
        }
    }
    let mut out = Vec::new();
    if !bgp_up.is_empty() {
        out.push(format!("BGP sessions Established: {}", bgp_up.join(", ")));
    }
    if !ospf_up.is_empty() {
        out.push(format!("OSPF adjacencies Full: {}", ospf_up.join(", ")));
    }
    if !rip.is_empty() {
        out.push(format!("RIP updates received ({})", rip.join(", ")));
    }
    out
}

fn owner(cx: &Ctx, addr: &str) -> String {
    addr.parse()
        .ok()
        .and_then(|ip| cx.model.owners.get(&ip))
        .and_then(|o| o.first())
        .map(|a| a.device.clone())
        .unwrap_or_else(|| addr.to_string())
}

/// One sentence per device (at most four): what it is and what was seen working on it.
pub fn device_notes(cx: &Ctx, devices: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for d in devices.iter().take(4) {
        let Some(f) = cx.model.facts(d) else { continue };
        let addrs: Vec<String> = f
            .addresses()
            .iter()
            .map(|(i, n)| format!("{i} {n}"))
            .collect();
        let mut parts: Vec<String> = Vec::new();
        match cx.model.role(d) {
            DeviceKind::Host | DeviceKind::Server => {
                if !addrs.is_empty() {
                    parts.push(format!("has {}", addrs.join(", ")));
                }
                if let Some(gw) = f.default_route().and_then(|r| r.via.first()) {
                    parts.push(format!("its default route via {gw} is in place"));
                }
                let mine: Vec<_> = f.addresses().iter().map(|(_, n)| n.addr).collect();
                let pings: Vec<bool> = cx
                    .obs
                    .pings
                    .iter()
                    .filter(|p| {
                        (p.src == *d || mine.contains(&p.dst)) && expected_reachable(cx, p.dst)
                    })
                    .map(|p| p.ok())
                    .chain(
                        cx.obs
                            .reach
                            .iter()
                            .filter(|(s, t, _, _)| s == d || t == d)
                            .map(|(_, _, _, st)| st == "ok"),
                    )
                    .collect();
                if !pings.is_empty() {
                    let ok = pings.iter().filter(|x| **x).count();
                    parts.push(if ok == pings.len() {
                        format!(
                            "all {} pings to and from it answer with 0% loss",
                            pings.len()
                        )
                    } else {
                        format!("{ok} of its {} pings answer", pings.len())
                    });
                }
            }
            DeviceKind::Router => {
                let daemons = f.routing_daemons();
                if !daemons.is_empty() {
                    parts.push(format!("runs {}", daemons.join(", ")));
                }
                if let Some(st) = cx.obs.routers.get(d) {
                    let up: Vec<String> = st
                        .bgp
                        .iter()
                        .flatten()
                        .filter(|s| s.up)
                        .map(|s| format!("{} ({})", s.peer, owner(cx, &s.peer)))
                        .collect();
                    if !up.is_empty() {
                        parts.push(format!(
                            "its BGP sessions with {} are Established",
                            up.join(", ")
                        ));
                    }
                    let full = st.ospf.iter().flatten().filter(|n| n.up()).count();
                    if full > 0 {
                        parts.push(format!("OSPF adjacencies Full: {full}"));
                    }
                }
                let lans = f
                    .routes
                    .iter()
                    .filter(|r| r.proto != "kernel" && r.dest.len > 0)
                    .count();
                if lans > 0 {
                    parts.push(format!("routes learned or static: {lans}"));
                }
                let up_ifaces: Vec<&str> = f
                    .ifaces
                    .values()
                    .filter(|i| !i.addrs.is_empty() && i.admin_up && i.carrier)
                    .map(|i| i.name.as_str())
                    .collect();
                if !up_ifaces.is_empty() {
                    parts.push(format!("interfaces {} up", up_ifaces.join(", ")));
                }
            }
            DeviceKind::Switch => {
                let ports: Vec<&str> = f
                    .ifaces
                    .values()
                    .filter(|i| i.master.is_some() && i.admin_up)
                    .map(|i| i.name.as_str())
                    .collect();
                parts.push(format!("bridges {} (all up)", ports.join(", ")));
            }
        }
        if f.full && f.iptables.iter().all(|l| !l.starts_with("-A")) {
            parts.push("no packet filter rules".into());
        }
        if !parts.is_empty() {
            out.push(format!("{d}: {}", parts.join(", ")));
        }
    }
    out
}

/// The ticket's asserted mechanisms that the evidence contradicts.
pub fn rebuttals(cx: &Ctx, findings: &[Finding]) -> Vec<String> {
    let has = |words: &[&str]| {
        findings
            .iter()
            .filter(|f| f.weight >= 2)
            .any(|f| words.iter().any(|w| f.what.contains(w)))
    };
    let mut out = Vec::new();
    for m in &cx.claims.mechanisms {
        let text = match m {
            Mechanism::LinkDown
                if !has(&[
                    "administratively down",
                    "does not exist",
                    "link down",
                    "no carrier",
                ]) =>
            {
                "every cabled interface in use is up (no link is down)".to_string()
            }
            Mechanism::DaemonCrash
                if !has(&["not running", "FRR is not running"]) && !cx.obs.routers.is_empty() =>
            {
                "the routing daemons are running on every router".to_string()
            }
            Mechanism::Session => {
                let (mut up, mut total) = (0, 0);
                for st in cx.obs.routers.values() {
                    for s in st.bgp.iter().flatten() {
                        total += 1;
                        up += usize::from(s.up);
                    }
                }
                if total == 0 || up < total {
                    continue;
                }
                format!("all {total} BGP sessions are Established")
            }
            Mechanism::Filter
                if !has(&["firewall rule", "iptables", "filter"])
                    && cx.obs.facts.values().any(|f| f.full) =>
            {
                "no packet filter (iptables/nftables) drops the tested traffic".to_string()
            }
            Mechanism::Mtu if !has(&["MTU"]) => {
                "the interfaces on each link use the same MTU".to_string()
            }
            Mechanism::Loop if !has(&["loop"]) && !cx.obs.pings.is_empty() => {
                "no routing loop: the tested paths reach their destinations".to_string()
            }
            Mechanism::Address if !has(&["netmask", "wrong address", "conflict"]) => {
                "no address conflict or netmask mismatch exists on any LAN".to_string()
            }
            Mechanism::Gateway if !has(&["gateway"]) => {
                "every host's default gateway is a router address on its LAN".to_string()
            }
            Mechanism::Dns
                if cx.obs.dns.iter().any(|q| q.status != "timeout") && !has(&["DNS"]) =>
            {
                "the DNS servers answer queries".to_string()
            }
            _ => continue,
        };
        out.push(format!(
            "the ticket's claim of {} does not hold: {text}",
            m.describe()
        ));
    }
    out
}
