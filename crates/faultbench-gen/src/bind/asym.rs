//! The `lan_second_router` target: a host whose LAN has a second router that also shares a
//! segment with the host's gateway, the one shape in which an asymmetric route can be built
//! *and predicted* from the lab model alone.
//!
//! Strict reverse-path filtering drops a packet when the route back to its source leaves by
//! another interface than the one it came in on. Our labs route symmetrically, so a family
//! has to make the asymmetry itself: a host route on the gateway `G` for the host `X` via the
//! second router `N`. `N` holds an address of `X`'s subnet on the LAN, so its connected route
//! delivers `X` directly (no routing protocol can send it back through `G`), and forwarding
//! keeps working. Only packets *from* `X` entering `G` on the LAN now fail the strict check;
//! every other host of the LAN still passes it (its route back is the LAN itself).

use super::{Binding, actors, binding, set};
use crate::graph::{Cut, pick};
use crate::model::{DeviceModel, IfaceModel, Ipv4Net, LabModel};

/// The routers other than `g` with an address of `lan` (the subnet of the host) on segment
/// `seg`, each with a subnet it shares with `g` on another interface of `g` than `lan_iface`, as (router, its address on the
/// LAN, its address on the shared segment, `g`'s layer-3 interface on the shared segment).
fn second_routers<'a>(
    m: &'a LabModel,
    g: &'a DeviceModel,
    seg: usize,
    lan: Ipv4Net,
    lan_iface: &str,
) -> Vec<(&'a DeviceModel, Ipv4Net, Ipv4Net, &'a IfaceModel)> {
    let mut out = Vec::new();
    for n in m
        .devices
        .iter()
        .filter(|d| d.is_router() && d.name != g.name)
    {
        let Some(on_lan) = n
            .interfaces
            .iter()
            .filter(|i| i.segment == seg)
            .flat_map(|i| i.addrs.iter().copied())
            .find(|a| lan.contains(a.addr) && a.len == lan.len)
        else {
            continue;
        };
        // A subnet both routers hold an address of on another layer-3 interface of `g` than
        // the LAN's (on another segment, or another VLAN of the same one): the next hop must
        // be on-link for `g`, and the route back must leave by another interface.
        let shared = n
            .interfaces
            .iter()
            .flat_map(|ni| ni.addrs.iter().map(move |a| (ni, *a)))
            .filter(|(_, na)| !lan.contains(na.addr))
            .find_map(|(ni, na)| {
                g.interfaces
                    .iter()
                    .filter(|gi| gi.segment == ni.segment && gi.l3_name() != lan_iface)
                    .find(|gi| gi.addrs.iter().any(|ga| ga.contains(na.addr)))
                    .map(|gi| (na, gi))
            });
        if let Some((na, gi)) = shared {
            out.push((n, on_lan, na, gi));
        }
    }
    out
}

pub(super) fn lan_second_router(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    for x in m.end_hosts() {
        let (Some((_, net)), Some(gw)) = (x.primary(), x.default_gw) else {
            continue;
        };
        let Some((g, gi)) = m.gateway_of(x) else {
            continue;
        };
        if gi.segment != x.primary().map_or(usize::MAX, |(i, _)| i.segment) {
            continue;
        }
        let lan = net.network();
        let seconds = second_routers(m, g, gi.segment, lan, gi.l3_name());
        let key = format!("{}@{}", x.name, g.name);
        let refs: Vec<&(&DeviceModel, Ipv4Net, Ipv4Net, &IfaceModel)> = seconds.iter().collect();
        let Some((n, n_lan, n_shared, via)) = pick(&refs, &key).copied() else {
            continue;
        };
        let mut b = binding(format!("{}:{}@{}", g.name, x.name, n.name));
        set(&mut b, "device", &g.name);
        set(&mut b, "iface", gi.l3_name());
        set(&mut b, "gw", gw);
        set(
            &mut b,
            "gw_virtual",
            if g.virtual_gateways.contains(&gw) {
                "yes"
            } else {
                "no"
            },
        );
        set(
            &mut b,
            "privileged",
            if g.privileged { "yes" } else { "no" },
        );
        set(&mut b, "peer", &n.name);
        set(&mut b, "peer_ip", n_shared.addr);
        set(&mut b, "peer_lan_ip", n_lan.addr);
        set(&mut b, "via_iface", via.l3_name());
        // The host loses everything beyond its LAN; `far` is one such host, `control` one
        // that still reaches it (the host's LAN first).
        if actors(m, &mut b, x, &Cut::default(), true) {
            out.push(b);
        }
    }
    out
}
