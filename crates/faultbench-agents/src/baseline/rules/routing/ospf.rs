//! OSPF adjacencies a link's two configurations expect but that are not up, and the
//! configuration difference that explains each (area, timers, network type, passive interface).

use super::*;

/// How much a passive interface facing an OSPF neighbour that does send hellos harms:
/// 3 when the passive side or its neighbour lacks routes to the other's OSPF subnets (what
/// the adjacency should have carried) or the passive setting changed at run time; 2 (a fault
/// only if failing traffic involves it) when routes still arrive another way.
pub(super) fn passive_harm(
    cx: &Ctx,
    mc: &Config,
    me: &Attachment,
    other: &Attachment,
) -> Option<u8> {
    if super::super::drift::touches(cx, &me.device, &["passive", &me.iface]) {
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
pub(super) fn area_id(a: &str) -> u32 {
    a.parse::<u32>()
        .ok()
        .or_else(|| a.parse::<Ipv4Addr>().ok().map(u32::from))
        .unwrap_or(u32::MAX)
}

pub(super) fn ospf_up_between(cx: &Ctx, a: &Attachment, b: &Attachment) -> Option<bool> {
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
pub(super) fn other_areas(cx: &Ctx, c: &Config, me: &Attachment) -> BTreeSet<u32> {
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

pub(super) fn ospf_links(cx: &Ctx) -> Vec<Finding> {
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
                    super::super::drift::touches(cx, &e.device, &["router ospf |", "area"])
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
pub(super) fn odd_side<'a>(
    cx: &Ctx,
    (a, va): (&'a Attachment, &Option<String>),
    (b, vb): (&'a Attachment, &Option<String>),
    key: &str,
    default: &str,
) -> &'a Attachment {
    let moved = |x: &Attachment| {
        super::super::drift::touches(cx, &x.device, &[&format!("interface {} |", x.iface), key])
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
