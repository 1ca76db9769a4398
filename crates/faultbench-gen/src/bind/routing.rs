//! Targets of routing protocols: OSPF links, network statements, BGP sessions, daemons.

use super::{Binding, actors, binding, ip_of, served_by, set, set_list};
use crate::graph::{Cut, pick, reach, segment_of};
use crate::model::{DeviceModel, IfaceModel, Ipv4Net, LabModel};
use faultbench_core::text::for_shell;
use std::collections::BTreeSet;
use std::net::Ipv4Addr;

/// Hello intervals a mistyped interface may carry (seconds): every value up to 30.
const BAD_HELLO: std::ops::RangeInclusive<u32> = 1..=30;
/// Dead intervals a mistyped interface may carry (seconds).
const BAD_DEAD: [u32; 24] = [
    3, 4, 5, 6, 8, 10, 12, 15, 16, 20, 24, 25, 30, 35, 36, 39, 41, 45, 48, 50, 60, 80, 100, 120,
];

/// Numbers one keystroke away from `asn`: a digit one up or down, two neighbouring digits
/// swapped, a digit doubled or dropped; never `asn` itself, `avoid` (the local AS) or 0.
pub(super) fn as_typos(asn: u32, avoid: u32) -> Vec<u32> {
    let d: Vec<u8> = asn.to_string().bytes().collect();
    let mut cands: Vec<Vec<u8>> = Vec::new();
    for k in 0..d.len() {
        for delta in [1i8, -1] {
            let mut x = d.clone();
            let v = i16::from(x[k]) + i16::from(delta);
            if (i16::from(b'0')..=i16::from(b'9')).contains(&v) {
                x[k] = u8::try_from(v).unwrap_or(b'0');
                cands.push(x);
            }
        }
        if k + 1 < d.len() && d[k] != d[k + 1] {
            let mut x = d.clone();
            x.swap(k, k + 1);
            cands.push(x);
        }
        let mut dropped = d.clone();
        dropped.remove(k);
        cands.push(dropped);
        let mut doubled = d.clone();
        doubled.insert(k, d[k]);
        cands.push(doubled);
    }
    let mut out: Vec<u32> = Vec::new();
    for c in cands {
        // A leading zero is not a number anyone types.
        if c.first().is_none_or(|x| *x == b'0') {
            continue;
        }
        let Ok(v) = String::from_utf8(c).unwrap_or_default().parse::<u32>() else {
            continue;
        };
        if v != asn && v != avoid && !out.contains(&v) {
            out.push(v);
        }
    }
    out.sort_unstable();
    out
}

pub(super) fn ospf_link(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    for r in m.devices.iter().filter(|d| d.is_router()) {
        let Some(ospf) = &r.routing.ospf else {
            continue;
        };
        for i in &r.interfaces {
            let Some(net) = i.addrs.first().copied() else {
                continue;
            };
            let covering = ospf.networks.iter().find(|(p, _)| p.contains(net.addr));
            let if_area = r
                .routing
                .ospf_ifaces
                .get(i.l3_name())
                .and_then(|x| x.area.clone());
            let Some(area) = covering.map(|(_, a)| a.clone()).or(if_area) else {
                continue;
            };
            let on = routers_on(m, i.segment);
            let hosts_here = m.end_hosts().any(|h| segment_of(h) == Some(i.segment));
            if on.len() != 2 || hosts_here {
                continue;
            }
            let Some((n, ni)) = on.iter().find(|(d, _)| d.name != r.name) else {
                continue;
            };
            if n.routing.ospf.is_none() {
                continue;
            }
            let mut b = binding(format!("{}:{}", r.name, i.l3_name()));
            set(&mut b, "device", &r.name);
            set(&mut b, "iface", i.l3_name());
            set(&mut b, "ip", net.addr);
            set(&mut b, "neighbor", &n.name);
            if let Some(a) = ni.addrs.first() {
                set(&mut b, "neighbor_ip", a.addr);
            }
            set(&mut b, "area", &area);
            if let Ok(a) = area.parse::<u32>() {
                set(&mut b, "wrong_area", a.saturating_add(1));
            }
            if let Some((p, _)) = covering {
                set(&mut b, "network", p);
                let only = r
                    .interfaces
                    .iter()
                    .filter(|x| x.addrs.iter().any(|a| p.contains(a.addr)))
                    .count()
                    == 1;
                set(&mut b, "network_exact", if only { "yes" } else { "no" });
            }
            let oi = r
                .routing
                .ospf_ifaces
                .get(i.l3_name())
                .cloned()
                .unwrap_or_default();
            let (hello, dead) = (oi.hello.unwrap_or(10), oi.dead.unwrap_or(40));
            set(&mut b, "hello", hello);
            set(&mut b, "dead", dead);
            let (nh, nd) = if (hello, dead) == (2, 8) {
                (3, 12)
            } else {
                (2, 8)
            };
            set(&mut b, "new_hello", nh);
            set(&mut b, "new_dead", nd);
            // Any other value breaks the adjacency: OSPF neighbours must agree on both.
            set_list(&mut b, "bad_hello", BAD_HELLO.filter(|v| *v != hello));
            set_list(&mut b, "bad_dead", BAD_DEAD.iter().filter(|v| **v != dead));
            let restore = |name: &str, v: Option<u32>| match v {
                Some(v) => format!("ip ospf {name} {v}"),
                None => format!("no ip ospf {name}"),
            };
            for (k, v) in [
                ("hello_restore", restore("hello-interval", oi.hello)),
                ("dead_restore", restore("dead-interval", oi.dead)),
                ("cost_restore", restore("cost", oi.cost)),
            ] {
                set(&mut b, k, v);
                b.commands.insert(k.to_string());
            }
            let cut = Cut {
                router: None,
                edge: Some((&r.name, i.segment)),
            };
            separated(m, &mut b, &cut);
            out.push(b);
        }
    }
    out
}

pub(super) fn lan_network(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    for r in m.devices.iter().filter(|d| d.is_router()) {
        let rc = &r.routing;
        let mut statements: Vec<(&str, &str, Ipv4Net, Option<String>)> = Vec::new();
        if let Some(o) = &rc.ospf
            && !o.redistribute.iter().any(|x| x == "connected")
        {
            for (p, a) in &o.networks {
                statements.push(("ospf", "ospfd", *p, Some(a.clone())));
            }
        }
        if let Some(x) = &rc.rip
            && !x.redistribute.iter().any(|x| x == "connected")
        {
            for p in &x.networks {
                statements.push(("rip", "ripd", *p, None));
            }
        }
        if let Some(x) = &rc.bgp
            && !x.redistribute.iter().any(|x| x == "connected")
        {
            for p in &x.networks {
                statements.push(("bgp", "bgpd", *p, None));
            }
        }
        for (proto, daemon, p, area) in statements {
            let covered: Vec<&IfaceModel> = r
                .interfaces
                .iter()
                .filter(|i| i.addrs.iter().any(|a| p.contains(a.addr)))
                .collect();
            let [i] = covered.as_slice() else {
                continue;
            };
            let Some(net) = i.addrs.first().copied() else {
                continue;
            };
            if routers_on(m, i.segment).len() != 1 {
                continue;
            }
            let served = served_by(m, net.addr);
            let key = format!("{}:{proto}:{p}", r.name);
            let Some(victim) = pick(&served, &key) else {
                continue;
            };
            let mut b = binding(key);
            set(&mut b, "device", &r.name);
            set(&mut b, "iface", i.l3_name());
            set(&mut b, "protocol", proto);
            set(&mut b, "daemon", daemon);
            set(&mut b, "network", p);
            set(&mut b, "subnet", net.network());
            if let Some(a) = area {
                set(&mut b, "area", a);
            }
            if let Some(bgp) = &rc.bgp {
                set(&mut b, "asn", bgp.asn);
            }
            // The LAN disappears from every other router: cut the router from the LAN as
            // far as the rest of the network is concerned.
            let cut = Cut {
                router: None,
                edge: Some((&r.name, i.segment)),
            };
            if actors(m, &mut b, victim, &cut, false) {
                out.push(b);
            }
        }
    }
    out
}

pub(super) fn bgp_neighbor(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    for r in m.devices.iter().filter(|d| d.is_router()) {
        let Some(bgp) = &r.routing.bgp else {
            continue;
        };
        for nb in &bgp.neighbors {
            let mut b = binding(format!("{}->{}", r.name, nb.ip));
            set(&mut b, "device", &r.name);
            set(&mut b, "asn", bgp.asn);
            set(&mut b, "neighbor_ip", nb.ip);
            set(&mut b, "remote_as", nb.remote_as);
            set(&mut b, "wrong_as", nb.remote_as.wrapping_add(10));
            set_list(&mut b, "as_typo", as_typos(nb.remote_as, bgp.asn));
            set(
                &mut b,
                "ebgp",
                if nb.remote_as == bgp.asn { "no" } else { "yes" },
            );
            if let Some(i) = r
                .interfaces
                .iter()
                .find(|i| i.addrs.iter().any(|a| a.contains(nb.ip)))
            {
                set(&mut b, "iface", i.l3_name());
            }
            let owner = m.owner_of(nb.ip);
            if let Some((n, ni)) = owner {
                set(&mut b, "neighbor", &n.name);
                // A session over a two-router segment is that segment's only use here.
                if routers_on(m, ni.segment).len() == 2 {
                    let cut = Cut {
                        router: None,
                        edge: Some((&r.name, ni.segment)),
                    };
                    separated(m, &mut b, &cut);
                }
            }
            out.push(b);
        }
    }
    out
}

/// `vtysh -c 'configure terminal' -c '…' … -c 'end'`, each statement quoted.
pub(super) fn vtysh_command(statements: &[String]) -> String {
    let mut cmd = String::from("vtysh -c 'configure terminal'");
    for s in statements {
        cmd.push_str(" -c ");
        cmd.push_str(&for_shell(s));
    }
    cmd.push_str(" -c 'end'");
    cmd
}

pub(super) fn routing_daemon(m: &LabModel) -> Vec<Binding> {
    let mut out = Vec::new();
    for r in m.devices.iter().filter(|d| d.is_router()) {
        let reapply = if r.has_frr_conf {
            Some("vtysh -b".to_string())
        } else {
            r.startup_vtysh.as_deref().map(vtysh_command)
        };
        let Some(reapply) = reapply else {
            continue;
        };
        // A static or kernel default route survives the daemon's death and keeps traffic
        // flowing: no reachability symptom to promise.
        if !r.routing.static_routes.is_empty() || r.default_gw.is_some() {
            continue;
        }
        for daemon in &r.daemons {
            let mut b = binding(format!("{}:{daemon}", r.name));
            set(&mut b, "device", &r.name);
            set(&mut b, "daemon", daemon);
            set(&mut b, "reapply", &reapply);
            b.commands.insert("reapply".into());
            // Without its daemon the router keeps only its connected networks: its hosts
            // lose every LAN that is not attached to it.
            let attached: BTreeSet<usize> = r
                .interfaces
                .iter()
                .filter(|i| !i.addrs.is_empty())
                .map(|i| i.segment)
                .collect();
            let victims: Vec<&DeviceModel> = r
                .interfaces
                .iter()
                .filter_map(|i| i.addrs.first())
                .flat_map(|a| served_by(m, a.addr))
                .collect();
            if let Some(v) = pick(&victims, &b.target) {
                let hosts: Vec<&DeviceModel> = m.end_hosts().collect();
                let fars: Vec<&DeviceModel> = hosts
                    .iter()
                    .copied()
                    .filter(|f| segment_of(f).is_some_and(|s| !attached.contains(&s)))
                    .filter(|f| reach(m, v, f, &Cut::default()))
                    .collect();
                if let Some(f) = pick(&fars, &b.target) {
                    set(&mut b, "victim", &v.name);
                    set(
                        &mut b,
                        "victim_ip",
                        ip_of(v).unwrap_or(Ipv4Addr::UNSPECIFIED),
                    );
                    set(&mut b, "far", &f.name);
                    set(&mut b, "far_ip", ip_of(f).unwrap_or(Ipv4Addr::UNSPECIFIED));
                }
            }
            out.push(b);
        }
    }
    out
}

/// A victim/far pair the loss of `cut` separates (searched over all host pairs).
pub(super) fn separated(m: &LabModel, b: &mut Binding, cut: &Cut) {
    let hosts: Vec<&DeviceModel> = m.end_hosts().collect();
    let mut victims = Vec::new();
    for v in &hosts {
        if hosts
            .iter()
            .any(|f| reach(m, v, f, &Cut::default()) && !reach(m, v, f, cut))
        {
            victims.push(*v);
        }
    }
    if let Some(v) = pick(&victims, &b.target) {
        actors(m, b, v, cut, false);
    }
}

/// The routers (other than `r`) with an addressed interface on segment `s`.
pub(super) fn routers_on(m: &LabModel, s: usize) -> Vec<(&DeviceModel, &IfaceModel)> {
    m.devices
        .iter()
        .filter(|d| d.is_router())
        .filter_map(|d| {
            d.interfaces
                .iter()
                .find(|i| i.segment == s && !i.addrs.is_empty())
                .map(|i| (d, i))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::as_typos;

    #[test]
    fn as_typos_are_one_keystroke_away_and_never_the_real_or_local_as() {
        let t = as_typos(65001, 65002);
        for x in [65000, 56001, 6501, 650001, 65011] {
            assert!(t.contains(&x), "{x} in {t:?}");
        }
        assert!(!t.contains(&65001) && !t.contains(&65002), "{t:?}");
        // No leading zero, no zero AS, no duplicates.
        assert!(as_typos(10, 1).iter().all(|v| *v != 0 && *v != 1));
        let mut d = t.clone();
        d.dedup();
        assert_eq!(d, t);
    }
}
