//! Which end hosts reach which, on the lab model and with a part of it cut: the source of
//! every variant's symptom (victim, far host, control pair).
//!
//! The network is a graph of routers and layer-2 segments (a router joins every segment it
//! has an addressed interface on). Two hosts on one segment reach each other; otherwise each
//! host's default gateway must lead, router by router, to the other's. Routing protocols are
//! assumed to have converged on every path the graph offers, which is what the healthy
//! baseline of a lab shows; where that is not so, the live verification drops the variant.

use crate::model::{DeviceModel, LabModel};
use std::collections::{BTreeSet, VecDeque};

/// What a fault removes from the graph.
#[derive(Debug, Clone, Default)]
pub struct Cut<'a> {
    /// A router that no longer forwards.
    pub router: Option<&'a str>,
    /// A router's attachment to a segment that no longer carries traffic.
    pub edge: Option<(&'a str, usize)>,
}

#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Node<'a> {
    R(&'a str),
    S(usize),
}

/// The segment of a host's primary interface.
pub fn segment_of(h: &DeviceModel) -> Option<usize> {
    h.primary().map(|(i, _)| i.segment)
}

/// Whether two hosts share a LAN: one segment and one subnet (hosts of different VLANs or
/// subnets on one layer-2 segment still talk through a router).
pub fn same_lan(a: &DeviceModel, b: &DeviceModel) -> bool {
    match (a.primary(), b.primary()) {
        (Some((ia, na)), Some((ib, nb))) => ia.segment == ib.segment && na.contains(nb.addr),
        _ => false,
    }
}

/// Whether host `a` reaches host `b` with `cut` applied.
pub fn reach(m: &LabModel, a: &DeviceModel, b: &DeviceModel, cut: &Cut) -> bool {
    let (Some(sa), Some(sb)) = (segment_of(a), segment_of(b)) else {
        return false;
    };
    if let Some((_, ip)) = b.primary()
        && m.unreachable.contains(&(a.name.clone(), ip.addr))
    {
        return false;
    }
    if same_lan(a, b) {
        return true;
    }
    let (Some((ga, ia)), Some((gb, ib))) = (m.gateway_of(a), m.gateway_of(b)) else {
        return false;
    };
    if ia.segment != sa || ib.segment != sb {
        return false;
    }
    let attached = |r: &str, s: usize| cut.router != Some(r) && cut.edge != Some((r, s));
    if !attached(&ga.name, sa) || !attached(&gb.name, sb) {
        return false;
    }
    let mut seen = BTreeSet::new();
    let mut q = VecDeque::from([Node::R(ga.name.as_str())]);
    while let Some(n) = q.pop_front() {
        if !seen.insert(n.clone()) {
            continue;
        }
        match n {
            Node::R(r) if r == gb.name => return true,
            Node::R(r) => {
                if let Some(d) = m.device(r) {
                    for i in d.interfaces.iter().filter(|i| !i.addrs.is_empty()) {
                        if attached(r, i.segment) {
                            q.push_back(Node::S(i.segment));
                        }
                    }
                }
            }
            Node::S(s) => {
                for d in m.devices.iter().filter(|d| d.is_router()) {
                    let on = d
                        .interfaces
                        .iter()
                        .any(|i| i.segment == s && !i.addrs.is_empty());
                    if on && attached(&d.name, s) {
                        q.push_back(Node::R(d.name.as_str()));
                    }
                }
            }
        }
    }
    false
}

/// FNV-1a: a stable hash for deterministic choices (never for security).
pub fn stable_hash(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// A deterministic pick among `items` keyed by `key` (so different targets pick differently).
pub fn pick<'a, T>(items: &[&'a T], key: &str) -> Option<&'a T> {
    if items.is_empty() {
        return None;
    }
    let k = usize::try_from(stable_hash(key) % items.len() as u64).unwrap_or(0);
    Some(items[k])
}
