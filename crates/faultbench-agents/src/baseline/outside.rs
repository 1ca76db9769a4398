//! The lab's "Internet": devices that hold only public addresses (an ISP router with web
//! hosts on its loopback), seen from campus hosts on private addresses.
//!
//! Lab traffic is tested by the sweep; traffic to the outside is not expected to work in
//! every lab (many have no Internet at all), so it is tested only when the ticket reports an
//! Internet problem, from the host the ticket names, to at most two outside devices. A
//! failure there is explained by [`crate::baseline::rules::nat`].

use super::claims::{ClaimedSymptom, Claims};
use super::gather::{Observations, Prober, ping_and_record};
use super::lan::Model;
use std::net::Ipv4Addr;

/// RFC 1918 space, shared address space (RFC 6598), loopback and link-local: addresses
/// that never appear as a source on the Internet.
pub fn is_private(ip: Ipv4Addr) -> bool {
    let [a, b, ..] = ip.octets();
    ip.is_private()
        || ip.is_loopback()
        || ip.is_link_local()
        || (a == 100 && (64..128).contains(&b))
}

/// Whether `device` is outside: probed, addressed, and every address public.
pub fn is_outside(model: &Model, device: &str) -> bool {
    model.facts(device).is_some_and(|f| {
        let addrs: Vec<Ipv4Addr> = f
            .addresses()
            .into_iter()
            .map(|(_, n)| n.addr)
            .filter(|a| !a.is_loopback())
            .collect();
        !addrs.is_empty() && addrs.iter().all(|a| !is_private(*a))
    })
}

/// The outside device holding `ip` (on an interface or its loopback), if any.
pub fn outside_owner(model: &Model, ip: Ipv4Addr) -> Option<&str> {
    if is_private(ip) {
        return None;
    }
    model
        .nodes
        .values()
        .filter(|n| is_outside(model, &n.name))
        .find(|n| n.facts.as_ref().is_some_and(|f| f.holds(ip)))
        .map(|n| n.name.as_str())
}

/// Whether `ip` belongs to an outside device.
pub fn is_outside_addr(model: &Model, ip: Ipv4Addr) -> bool {
    outside_owner(model, ip).is_some()
}

/// The hosts to test from: up to two end hosts the ticket names, else the first end host,
/// each with a private address (a host with a public one needs no translation). Two,
/// because tickets often contrast a working host with a failing one.
pub fn sources(model: &Model, claims: &Claims) -> Vec<String> {
    let private_end =
        |d: &str| model.is_end(d) && model.primary_addr(d).is_some_and(|n| is_private(n.addr));
    let named: Vec<String> = claims
        .devices
        .iter()
        .filter(|d| private_end(d))
        .take(2)
        .cloned()
        .collect();
    if !named.is_empty() {
        return named;
    }
    model
        .nodes
        .keys()
        .find(|d| private_end(d))
        .cloned()
        .into_iter()
        .collect()
}

/// Up to two outside addresses to test: those the ticket names first, then one per outside
/// device (a loopback address when it has one: that is where labs put "web sites").
pub fn targets(model: &Model, claims: &Claims) -> Vec<Ipv4Addr> {
    if !claims.symptoms.contains(&ClaimedSymptom::Internet) {
        return Vec::new();
    }
    let mut out: Vec<Ipv4Addr> = claims
        .addresses
        .iter()
        .filter_map(|a| a.parse().ok())
        .filter(|ip| is_outside_addr(model, *ip))
        .collect();
    for node in model.nodes.values().filter(|n| is_outside(model, &n.name)) {
        if out.len() >= 2 {
            break;
        }
        let Some(f) = &node.facts else { continue };
        if out.iter().any(|ip| f.holds(*ip)) {
            continue;
        }
        let pick = f
            .loopbacks
            .first()
            .map(|n| n.addr)
            .or_else(|| f.addresses().first().map(|(_, n)| n.addr));
        if let Some(ip) = pick {
            out.push(ip);
        }
    }
    out.truncate(2);
    out
}

/// Pings the outside from campus hosts when the ticket reports an Internet problem.
pub async fn pings(p: &mut Prober, obs: &mut Observations, model: &Model, claims: &Claims) {
    let targets = targets(model, claims);
    for src in sources(model, claims) {
        for &ip in &targets {
            let owner = outside_owner(model, ip).unwrap_or("?").to_string();
            let Some(outcome) = ping_and_record(p, obs, &src, ip).await else {
                return;
            };
            obs.checked.push(format!(
                "Internet ping {src} -> {ip} (on {owner}): {outcome}"
            ));
        }
    }
}
