//! Failing traffic, explained: every failing ping is walked hop by hop
//! ([`crate::baseline::path`]) and the place where the walk stops names the device and the
//! component (a null route, a filter rule, a loop, a source NAT nobody routes back, a next
//! hop nobody holds). Failures the walk cannot explain are reported as such, with the
//! device every failing path shares and no working path crosses.

use super::{Ctx, Finding};
use crate::baseline::filter;
use crate::baseline::lan::Attachment;
use crate::baseline::path::{self, Stop, Walk};
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

/// What the failing traffic says.
#[derive(Debug, Default)]
pub struct PathReport {
    /// Findings located by the walks.
    pub findings: Vec<Finding>,
    /// Devices taking part in failing traffic (sources, destinations, where walks stop).
    pub involved: BTreeSet<String>,
    /// Failing pairs explained only by a filter that looks like a deliberate access policy.
    pub by_policy: Vec<String>,
    /// Failing pairs (src, dst) in total.
    pub failing: Vec<(String, Ipv4Addr)>,
    /// Failing pairs the walks could not explain.
    pub unexplained: Vec<(String, Ipv4Addr)>,
}

/// Whether end hosts are expected to reach `ip`: a lab address on a LAN (a domain with end
/// hosts, or a stub LAN whose subnet other routers learn). Addresses outside the lab (no
/// Internet) and router addresses on transit links (often not advertised) fail by design in
/// many networks.
pub fn expected_reachable(cx: &Ctx, ip: Ipv4Addr) -> bool {
    cx.model.owners.get(&ip).is_some_and(|owners| {
        owners.iter().any(|a| {
            cx.model.is_end(&a.device)
                || cx.model.domain(&a.device, &a.iface).is_some_and(|d| {
                    cx.model
                        .domains
                        .get(&d)
                        .is_some_and(|atts| atts.iter().any(|x| cx.model.is_end(&x.device)))
                        || advertised_stub(cx, a, d)
                })
        })
    })
}

/// A router's LAN with nobody else on it (a lab's LAN without emulated hosts) whose subnet
/// other routers have learnt: the network advertises it, so hosts are meant to reach it.
fn advertised_stub(cx: &Ctx, a: &Attachment, domain: usize) -> bool {
    let alone = cx.model.domain_devices(domain).len() == 1 && a.net.len < 31;
    alone
        && cx.model.nodes.values().any(|n| {
            n.name != a.device
                && n.facts.as_ref().is_some_and(|f| {
                    f.route_for(a.net.addr)
                        .is_some_and(|r| r.dest.len > 0 && r.proto != "kernel")
                })
        })
}

/// All failing (source device, destination address) pairs, sweep and `get_reachability`.
pub fn failing_pairs(cx: &Ctx) -> Vec<(String, Ipv4Addr, bool)> {
    let mut out: Vec<(String, Ipv4Addr, bool)> = Vec::new();
    for p in cx
        .obs
        .pings
        .iter()
        .filter(|p| !p.ok() && expected_reachable(cx, p.dst))
    {
        out.push((p.src.clone(), p.dst, p.dead()));
    }
    for (src, _, ip, status) in &cx.obs.reach {
        if status == "ok" {
            continue;
        }
        if let Some(ip) = ip
            && !out.iter().any(|(s, d, _)| s == src && d == ip)
        {
            out.push((src.clone(), *ip, status != "unstable"));
        }
    }
    out
}

/// Successful (source, destination) pairs.
fn working_pairs(cx: &Ctx) -> Vec<(String, Ipv4Addr)> {
    let mut out: Vec<(String, Ipv4Addr)> = cx
        .obs
        .pings
        .iter()
        .filter(|p| p.ok())
        .map(|p| (p.src.clone(), p.dst))
        .collect();
    for (src, _, ip, status) in &cx.obs.reach {
        if status == "ok"
            && let Some(ip) = ip
        {
            out.push((src.clone(), *ip));
        }
    }
    out
}

/// Walks every failing pair and names where it breaks.
pub fn explain(cx: &Ctx) -> PathReport {
    let mut rep = PathReport::default();
    let mut grouped: BTreeMap<(String, String), (Finding, Vec<String>)> = BTreeMap::new();
    let failing = failing_pairs(cx);
    for (src, dst, dead) in &failing {
        rep.failing.push((src.clone(), *dst));
        rep.involved.insert(src.clone());
        if let Some(o) = cx.model.owners.get(dst).and_then(|o| o.first()) {
            rep.involved.insert(o.device.clone());
        }
        if !dead {
            // Partial loss: a lossy link or shaping, not a broken path.
            rep.unexplained.push((src.clone(), *dst));
            continue;
        }
        let (there, back) = path::round_trip(cx.model, src, *dst);
        let broken: Option<(&Walk, bool)> = if there.stop != Stop::Delivered {
            Some((&there, false))
        } else {
            back.as_ref()
                .filter(|b| b.stop != Stop::Delivered)
                .map(|b| (b, true))
        };
        let Some((w, is_reply)) = broken else {
            rep.unexplained.push((src.clone(), *dst));
            continue;
        };
        let pair = format!("{src} -> {dst}");
        rep.involved.insert(w.at().to_string());
        match locate(cx, w, src, *dst, is_reply, &there) {
            Located::Finding(f) => {
                let key = (f.device.clone().unwrap_or_default(), f.what.clone());
                grouped
                    .entry(key)
                    .or_insert_with(|| (f, Vec::new()))
                    .1
                    .push(pair);
            }
            Located::Policy(text) => rep.by_policy.push(format!("{pair}: {text}")),
            Located::Nothing => rep.unexplained.push((src.clone(), *dst)),
        }
    }
    for (_, (mut f, pairs)) in grouped {
        let shown: Vec<&str> = pairs.iter().take(3).map(String::as_str).collect();
        f.what = format!(
            "{} (failing pings: {}{})",
            f.what,
            shown.join(", "),
            if pairs.len() > 3 {
                format!(" and {} more", pairs.len() - 3)
            } else {
                String::new()
            }
        );
        rep.findings.push(f);
    }
    if !rep.unexplained.is_empty() {
        rep.findings.extend(common_hop(cx, &rep.unexplained));
    }
    rep
}

enum Located {
    Finding(Finding),
    Policy(String),
    Nothing,
}

/// A destination as the report names it: the subnet of the device holding it.
fn dest_label(cx: &Ctx, ip: Ipv4Addr) -> String {
    match cx.model.owners.get(&ip).and_then(|o| o.first()) {
        Some(a) => format!("{} ({})", a.net.network(), a.device),
        None => ip.to_string(),
    }
}

fn locate(cx: &Ctx, w: &Walk, src: &str, dst: Ipv4Addr, is_reply: bool, there: &Walk) -> Located {
    let at = w.at().to_string();
    let dir = if is_reply { "the replies" } else { "traffic" };
    let target = if is_reply {
        match crate::baseline::path::source_for(cx.model, src, dst) {
            Some(ip) => dest_label(cx, ip),
            None => src.to_string(),
        }
    } else {
        dest_label(cx, dst)
    };
    // A reply lost after a source NAT on the way there: the NAT is the cause.
    if is_reply && let Some((new, rule, nat_dev)) = &there.snat {
        return Located::Finding(Finding::on(
            nat_dev,
            3,
            format!(
                "source NAT on {nat_dev} rewrites the source to {new} (`{rule}`, iptables nat POSTROUTING SNAT); the replies to {new} are lost at {at}, which has no route back"
            ),
            format!(
                "delete the SNAT rule on {nat_dev}: iptables -t nat -D {}",
                rule.trim_start_matches("-A ")
            ),
        ));
    }
    match &w.stop {
        Stop::Delivered | Stop::Unknown => Located::Nothing,
        Stop::NoRoute => Located::Finding(Finding::on(
            &at,
            2,
            format!("{at} has no route for {dir} to {target} (missing route)"),
            format!("restore the route to {target} on {at}"),
        )),
        Stop::NullRoute(line) => Located::Finding(Finding::on(
            &at,
            3,
            format!(
                "{at} drops {dir} to {target} with the route `{line}` (static blackhole/null route)"
            ),
            format!("delete the route `{line}` on {at}"),
        )),
        Stop::ForwardingOff => Located::Finding(Finding::on(
            &at,
            3,
            format!("{at} does not forward {dir} to {target}: IPv4 forwarding (ip_forward) is off"),
            format!("enable net.ipv4.ip_forward on {at}"),
        )),
        Stop::LinkDown(iface) => Located::Finding(Finding::on(
            &at,
            2,
            format!("{dir} to {target} leaves {at} through {iface}, which is down (link down)"),
            format!("bring {iface} up on {at}"),
        )),
        Stop::NextHopMissing(nh) => {
            let route = cx
                .model
                .facts(&at)
                .and_then(|f| f.route_for(dst).map(|r| (r.line.clone(), r.proto.clone())));
            let is_static = route
                .as_ref()
                .is_some_and(|(_, p)| matches!(p.as_str(), "static" | "boot"));
            let weight = if is_static && !cx.model.is_end(&at) {
                3
            } else {
                2
            };
            Located::Finding(Finding::on(
                &at,
                weight,
                format!(
                    "{at} sends {dir} to {target} via next hop {nh}, which no device on that link holds{}",
                    route
                        .map(|(l, _)| format!(" (route `{l}`)"))
                        .unwrap_or_default()
                ),
                format!("point the route on {at} at a real next hop"),
            ))
        }
        Stop::Filtered(line, chain) => {
            let rules = cx
                .model
                .facts(&at)
                .map(|f| filter::parse(&f.iptables))
                .unwrap_or_default();
            if rules.looks_deliberate(line) {
                Located::Policy(format!(
                    "dropped on {at} by `{line}`, part of an access policy with explicit permits"
                ))
            } else {
                Located::Finding(Finding::on(
                    &at,
                    3,
                    format!(
                        "a firewall rule on {at} drops {dir} to {target}: `{line}` (iptables {chain} chain, ACL/filter DROP)"
                    ),
                    format!(
                        "delete the rule on {at}: iptables -D {}",
                        line.trim_start_matches("-A ")
                    ),
                ))
            }
        }
        Stop::Loop(cycle) => {
            // The member of the loop that routes statically is the likely culprit.
            let culprit = cycle.iter().find_map(|d| {
                let r = cx.model.facts(d)?.route_for(dst)?;
                matches!(r.proto.as_str(), "static" | "boot")
                    .then(|| (d.clone(), r.line.clone()))
                    .filter(|(d, _)| !cx.model.is_end(d))
            });
            match culprit {
                Some((d, line)) => Located::Finding(Finding::on(
                    &d,
                    3,
                    format!(
                        "routing loop for {target} through {}: the static route `{line}` on {d} sends it the wrong way (misconfigured static route)",
                        cycle.join(" -> ")
                    ),
                    format!("delete or correct the static route `{line}` on {d}"),
                )),
                None => Located::Finding(Finding::general(
                    2,
                    format!("routing loop for {target} through {}", cycle.join(" -> ")),
                    "correct the routes of the routers in the loop",
                )),
            }
        }
    }
}

/// The device all unexplained failing paths cross and no working path crosses.
fn common_hop(cx: &Ctx, unexplained: &[(String, Ipv4Addr)]) -> Vec<Finding> {
    let hops = |src: &str, dst: Ipv4Addr| -> BTreeSet<String> {
        let (there, back) = path::round_trip(cx.model, src, dst);
        let mut s: BTreeSet<String> = there.hops.into_iter().collect();
        if let Some(b) = back {
            s.extend(b.hops);
        }
        s
    };
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for (s, d) in unexplained {
        for h in hops(s, *d) {
            *count.entry(h).or_default() += 1;
        }
    }
    let mut on_working: BTreeSet<String> = BTreeSet::new();
    for (s, d) in working_pairs(cx).iter().take(200) {
        on_working.extend(hops(s, *d));
    }
    let n = unexplained.len();
    let sample: Vec<String> = unexplained
        .iter()
        .take(3)
        .map(|(s, d)| format!("{s} -> {d}"))
        .collect();
    let suspects: Vec<&String> = count
        .iter()
        .filter(|(h, c)| **c == n && !on_working.contains(*h))
        .map(|(h, _)| h)
        .collect();
    match suspects.as_slice() {
        [one] => vec![Finding::on(
            one,
            2,
            format!(
                "{n} failing ping(s) ({}) all cross {one}, which no working path crosses, although every hop has a route",
                sample.join(", ")
            ),
            format!("inspect {one} below IP (bridge ports, VLANs, ARP) and its filters"),
        )],
        _ => vec![Finding::general(
            2,
            format!(
                "{n} ping(s) fail ({}) although every hop has a route and no filter or link state explains it",
                sample.join(", ")
            ),
            "inspect the L2 path (bridges, VLANs, ARP) of those pairs",
        )],
    }
}

#[cfg(test)]
#[path = "paths_stub_tests.rs"]
mod stub_tests;
