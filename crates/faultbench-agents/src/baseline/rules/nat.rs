//! Traffic to the outside that leaves the campus untranslated.
//!
//! A host on a private address reaches the Internet only through source NAT at the edge
//! router (MASQUERADE or SNAT in its nat POSTROUTING chain). When a ping from such a host to
//! an outside device fails, the walk ([`crate::baseline::path`]) shows the packet crossing
//! the edge with its private source and dying upstream — dropped by the provider's filter
//! for private sources, or answered into a network with no route back to private space. The
//! edge is then the culprit, not the provider that drops what it should:
//!
//! - **3** the edge has no source-NAT rule at all (the rules were flushed or never loaded),
//!   or it translates the other end-host LANs but not this one (a subnet's rules removed);
//! - **1** it translates only sources that are not end-host LANs: a partial NAT that keeps,
//!   say, management networks off the Internet looks deliberate.
//!
//! Both need the upstream to drop the private source visibly (a filter rule); a packet that
//! is merely not routed back gives weight 2, since many labs without NAT look like that.

use super::{Ctx, Finding};
use crate::baseline::filter::{self, Packet};
use crate::baseline::outside::{is_outside_addr, is_private};
use crate::baseline::path::{self, Stop};
use std::net::Ipv4Addr;

/// Findings for failing pings to the outside.
pub fn findings(cx: &Ctx) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    for ping in cx.obs.pings.iter().filter(|p| p.dead()) {
        if !is_outside_addr(cx.model, ping.dst) {
            continue;
        }
        if let Some(f) = untranslated(cx, &ping.src, ping.dst)
            && !out
                .iter()
                .any(|o| o.device == f.device && o.weight == f.weight)
        {
            out.push(f);
        }
    }
    out
}

/// Why `src`'s traffic to `dst` fails, if it leaves an edge router untranslated.
fn untranslated(cx: &Ctx, src: &str, dst: Ipv4Addr) -> Option<Finding> {
    let src_ip = path::source_for(cx.model, src, dst)?;
    if !is_private(src_ip) {
        return None;
    }
    let (there, back) = path::round_trip(cx.model, src, dst);
    if there.snat.is_some() {
        return None;
    }
    let (lost, cap) = match (&there.stop, &back) {
        (Stop::Filtered(line, _), _) => (
            format!(
                "{} drops private (RFC 1918) sources arriving from the campus (`{line}`)",
                there.at()
            ),
            3,
        ),
        (Stop::Delivered, Some(b)) if b.stop != Stop::Delivered => (
            format!("{} has no way back to the private address {src_ip}", b.at()),
            2,
        ),
        _ => return None,
    };
    // The edge: the first router on the way that holds both private and public addresses.
    let edge = there.hops.iter().skip(1).find(|d| {
        d.as_str() != there.at()
            && cx.model.facts(d).is_some_and(|f| {
                let addrs: Vec<Ipv4Addr> = f.addresses().into_iter().map(|(_, n)| n.addr).collect();
                addrs.iter().any(|a| is_private(*a) && !a.is_loopback())
                    && addrs.iter().any(|a| !is_private(*a))
            })
    })?;
    let facts = cx.model.facts(edge)?;
    let wan = facts
        .route_for(dst)
        .and_then(|r| r.dev.clone())
        .unwrap_or_else(|| "its outside interface".into());
    let rules = filter::parse(&facts.iptables);
    let nat: Vec<&str> = rules
        .rules
        .iter()
        .filter(|r| {
            r.table == "nat"
                && r.chain == "POSTROUTING"
                && matches!(r.target.as_str(), "SNAT" | "MASQUERADE")
        })
        .map(|r| r.line.as_str())
        .chain(
            facts
                .nft
                .iter()
                .filter(|l| l.contains("masquerade") || l.contains("snat"))
                .map(String::as_str),
        )
        .collect();
    let subnet = cx
        .model
        .primary_addr(src)
        .map(|n| n.network().to_string())
        .unwrap_or_else(|| src_ip.to_string());
    if nat.is_empty() {
        return Some(
            Finding::on(
                edge,
                cap,
                format!(
                    "NAT missing on {edge}: its iptables nat POSTROUTING chain has no MASQUERADE or SNAT rule (source NAT flushed or never loaded), so traffic from {src} ({src_ip}) to the Internet ({dst}) leaves {edge} through {wan} with its private source address, and {lost}"
                ),
                format!(
                    "re-add the source NAT (MASQUERADE/PAT) on {edge} for every inside subnet leaving through {wan}, e.g. `iptables -t nat -A POSTROUTING -s {subnet} -o {wan} -j MASQUERADE`, as its startup configuration does"
                ),
            )
            .affecting([src.to_string()]),
        );
    }
    let others = translated_lans(cx, &rules, src, dst, &wan);
    if others.is_empty() {
        return Some(Finding::on(
            edge,
            1,
            format!(
                "{src} ({src_ip}) is left out of {edge}'s source NAT, which translates only other sources (`{}`); {lost} — a partial NAT like this is usually deliberate",
                nat[0]
            ),
            format!("add {subnet} to the source NAT on {edge} if it should reach the Internet"),
        ));
    }
    Some(
        Finding::on(
            edge,
            cap,
            format!(
                "NAT rule missing on {edge} for {subnet}: its iptables nat POSTROUTING chain translates the other host LANs ({}) but has no MASQUERADE or SNAT rule for {subnet}, so traffic from {src} ({src_ip}) to the Internet ({dst}) leaves through {wan} untranslated, and {lost}; the other subnets are unaffected, which rules out routing and the uplink",
                others.join(", ")
            ),
            format!(
                "re-add the PAT rule for {subnet} on {edge}: `iptables -t nat -A POSTROUTING -s {subnet} -o {wan} -j MASQUERADE` (and the same for each other outside interface, as the other subnets have)"
            ),
        )
        .affecting([src.to_string()]),
    )
}

/// The end-host LANs other than `src`'s whose traffic to `dst` the edge translates, as
/// `subnet (host)`.
fn translated_lans(
    cx: &Ctx,
    rules: &filter::Ruleset,
    src: &str,
    dst: Ipv4Addr,
    wan: &str,
) -> Vec<String> {
    let own = cx.model.primary_addr(src).map(|n| n.network());
    let mut out: Vec<String> = Vec::new();
    let mut seen = Vec::new();
    for node in cx.model.nodes.values().filter(|n| cx.model.is_end(&n.name)) {
        let Some(net) = cx.model.primary_addr(&node.name) else {
            continue;
        };
        if !is_private(net.addr) || Some(net.network()) == own || seen.contains(&net.network()) {
            continue;
        }
        seen.push(net.network());
        let pkt = Packet {
            src: net.addr,
            dst,
            proto: "icmp",
            dport: None,
            iif: None,
            oif: Some(wan.to_string()),
            reply: false,
        };
        if rules.snat(&pkt).is_some() {
            out.push(format!("{} ({})", net.network(), node.name));
        }
    }
    out
}

#[cfg(test)]
#[path = "nat_tests.rs"]
mod tests;
