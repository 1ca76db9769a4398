//! Where a packet goes, hop by hop, from the routes, addresses, links and filters the probes
//! read — the same walk an engineer does with `ip route get` on each router.
//!
//! A ping that failed is explained by the first hop where the walk (there, or the reply's
//! walk back) stops: no route, a blackhole, a next hop nobody on the segment owns, a link
//! that is down, forwarding switched off, a filter rule, or a loop. A walk that reaches the
//! destination and back while the real ping failed points below IP (L2) or at something the
//! probes cannot see.

use super::filter::{self, FilterVerdict, Packet};
use super::lan::Model;
use super::probe::RouteKind;
use std::net::Ipv4Addr;

/// Why a walk stopped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    /// Reached the device owning the destination.
    Delivered,
    /// No route matches.
    NoRoute,
    /// A blackhole/unreachable/prohibit route matched (the route line).
    NullRoute(String),
    /// The next hop is owned by no device on the outgoing segment.
    NextHopMissing(Ipv4Addr),
    /// The outgoing interface is down (admin down or no carrier).
    LinkDown(String),
    /// The device would have to forward, but IPv4 forwarding is off.
    ForwardingOff,
    /// A filter rule (or policy) drops the packet (the rule line, the chain).
    Filtered(String, &'static str),
    /// The packet came back to a device it had crossed.
    Loop(Vec<String>),
    /// The device was not probed; nothing more is known.
    Unknown,
}

/// One walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Walk {
    /// Devices crossed, in order (the last is where it stopped).
    pub hops: Vec<String>,
    /// How it ended.
    pub stop: Stop,
    /// The source address after NAT on the way (when a rule rewrote it): (new source, rule,
    /// device).
    pub snat: Option<(Ipv4Addr, String, String)>,
}

impl Walk {
    /// The device where the walk stopped.
    pub fn at(&self) -> &str {
        self.hops.last().map(String::as_str).unwrap_or("")
    }
}

/// Walks a packet from `from` (a device) with source `src` to `dst`.
pub fn walk(m: &Model, from: &str, src: Ipv4Addr, dst: Ipv4Addr, reply: bool) -> Walk {
    let mut hops: Vec<String> = Vec::new();
    let mut dev = from.to_string();
    let mut iif: Option<String> = None;
    let mut src = src;
    let mut snat = None;
    for _ in 0..32 {
        if hops.contains(&dev) {
            let mut cycle = hops.clone();
            cycle.push(dev);
            return Walk {
                hops: cycle.clone(),
                stop: Stop::Loop(cycle),
                snat,
            };
        }
        hops.push(dev.clone());
        let done = |stop: Stop, hops: Vec<String>, snat: Option<(Ipv4Addr, String, String)>| Walk {
            hops,
            stop,
            snat,
        };
        let Some(f) = m.facts(&dev) else {
            return done(Stop::Unknown, hops, snat);
        };
        let rules = filter::parse(&f.iptables);
        let mut pkt = Packet {
            src,
            dst,
            proto: "icmp",
            dport: None,
            iif: iif.clone(),
            oif: None,
            reply,
        };
        // Delivered here?
        if f.holds(dst) {
            if iif.is_some()
                && let FilterVerdict::Drop(line) = rules.verdict("INPUT", &pkt)
            {
                return done(Stop::Filtered(line, "INPUT"), hops, snat);
            }
            return done(Stop::Delivered, hops, snat);
        }
        let transit = iif.is_some();
        if transit && f.forwarding == Some(false) {
            return done(Stop::ForwardingOff, hops, snat);
        }
        let Some(route) = f.route_for(dst) else {
            return done(Stop::NoRoute, hops, snat);
        };
        if route.kind != RouteKind::Unicast {
            return done(Stop::NullRoute(route.line.clone()), hops, snat);
        }
        let oif = route.dev.clone().unwrap_or_default();
        pkt.oif = Some(oif.clone());
        let chain = if transit { "FORWARD" } else { "OUTPUT" };
        if let FilterVerdict::Drop(line) = rules.verdict(chain, &pkt) {
            return done(Stop::Filtered(line, chain), hops, snat);
        }
        if let Some(r) = rules.snat(&pkt) {
            let to = r
                .line
                .split_whitespace()
                .skip_while(|w| *w != "--to-source")
                .nth(1)
                .and_then(|a| a.split([':', '-']).next())
                .and_then(|a| a.parse().ok());
            let new = to.or_else(|| {
                f.ifaces
                    .get(&oif)
                    .and_then(|i| i.addrs.first())
                    .map(|n| n.addr)
            });
            if let Some(new) = new
                && new != src
            {
                src = new;
                snat = Some((new, r.line.clone(), dev.clone()));
            }
        }
        if let Some(i) = f.ifaces.get(&oif)
            && (!i.admin_up || !i.carrier)
        {
            return done(Stop::LinkDown(oif), hops, snat);
        }
        let next_ip = route.via.first().copied().unwrap_or(dst);
        let domain = m.domain(&dev, &oif);
        let Some(owner) = m
            .owner_in(next_ip, domain)
            .filter(|a| domain.is_some() || a.device != dev)
        else {
            // "Nobody holds it" is only known when every device there was probed.
            let seen = domain.is_some_and(|d| m.domain_seen(d));
            let stop = if seen {
                Stop::NextHopMissing(next_ip)
            } else {
                Stop::Unknown
            };
            return done(stop, hops, snat);
        };
        if owner.device == dev {
            return done(Stop::NextHopMissing(next_ip), hops, snat);
        }
        // The receiving side's link must be up too.
        if let Some(i) = m
            .facts(&owner.device)
            .and_then(|f| f.ifaces.get(&owner.iface))
            && (!i.admin_up || !i.carrier)
        {
            let mut h = hops;
            h.push(owner.device.clone());
            return done(Stop::LinkDown(owner.iface.clone()), h, snat);
        }
        iif = Some(owner.iface.clone());
        dev = owner.device.clone();
    }
    Walk {
        hops: hops.clone(),
        stop: Stop::Loop(hops),
        snat,
    }
}

/// The two walks of a ping from device `from` to address `dst`: the request, and the reply
/// from the device owning `dst` back to the (possibly translated) source.
pub fn round_trip(m: &Model, from: &str, dst: Ipv4Addr) -> (Walk, Option<Walk>) {
    let Some(src) = source_for(m, from, dst) else {
        return (
            Walk {
                hops: vec![from.to_string()],
                stop: Stop::NoRoute,
                snat: None,
            },
            None,
        );
    };
    let there = walk(m, from, src, dst, false);
    if there.stop != Stop::Delivered {
        return (there, None);
    }
    let back_src = there.snat.as_ref().map(|(a, _, _)| *a).unwrap_or(src);
    let back = walk(m, there.at(), dst, back_src, true);
    (there, Some(back))
}

/// The source address `from` would use towards `dst` (its outgoing interface's address).
pub fn source_for(m: &Model, from: &str, dst: Ipv4Addr) -> Option<Ipv4Addr> {
    let f = m.facts(from)?;
    let out = f.route_for(dst).and_then(|r| r.dev.clone());
    out.and_then(|o| {
        f.ifaces
            .get(&o)
            .and_then(|i| i.addrs.first())
            .map(|n| n.addr)
    })
    .or_else(|| m.primary_addr(from).map(|n| n.addr))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::probe;
    use crate::baseline::topo::SummaryTopology;
    use std::collections::BTreeMap;

    const UP: &str = "<BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500";

    fn dev(links: &[&str], addrs: &str, routes: &str, ipt: &str, fwd: u8) -> probe::Facts {
        let links: Vec<String> = links
            .iter()
            .enumerate()
            .map(|(i, l)| format!("{}: {l}", i + 2))
            .collect();
        probe::parse(&format!(
            "@@fwd\n{fwd}\n@@link\n{}\n@@addr\n{addrs}\n@@proc\nbash\n@@ipt\n{ipt}\n@@route\n{routes}\n@@end\n",
            links.join("\n")
        ))
    }

    fn lab(r1_routes: &str, r1_ipt: &str, r1_fwd: u8) -> Model {
        let topo = SummaryTopology::parse(
            "Devices:\n  pc1: eth0=A\n  r1: eth0=A, eth1=B\n  r2: eth0=B, eth1=C\n  pc2: eth0=C\n",
        );
        let mut fs = BTreeMap::new();
        fs.insert(
            "pc1".to_string(),
            dev(
                &[&format!("eth0: {UP} state UP")],
                "eth0 10.0.1.2/24",
                "default via 10.0.1.1 dev eth0\n10.0.1.0/24 dev eth0 proto kernel",
                "",
                1,
            ),
        );
        fs.insert(
            "r1".to_string(),
            dev(
                &[
                    &format!("eth0: {UP} state UP"),
                    &format!("eth1: {UP} state UP"),
                ],
                "eth0 10.0.1.1/24\neth1 10.0.12.1/30",
                r1_routes,
                r1_ipt,
                r1_fwd,
            ),
        );
        fs.insert(
            "r2".to_string(),
            dev(
                &[&format!("eth0: {UP} state UP"), &format!("eth1: {UP} state UP")],
                "eth0 10.0.12.2/30\neth1 10.0.2.1/24",
                "10.0.1.0/24 via 10.0.12.1 dev eth0 proto ospf\n10.0.12.0/30 dev eth0 proto kernel\n10.0.2.0/24 dev eth1 proto kernel",
                "",
                1,
            ),
        );
        fs.insert(
            "pc2".to_string(),
            dev(
                &[&format!("eth0: {UP} state UP")],
                "eth0 10.0.2.2/24",
                "default via 10.0.2.1 dev eth0\n10.0.2.0/24 dev eth0 proto kernel",
                "",
                1,
            ),
        );
        Model::build(&topo, &fs)
    }

    const R1_OK: &str = "10.0.1.0/24 dev eth0 proto kernel\n10.0.12.0/30 dev eth1 proto kernel\n10.0.2.0/24 via 10.0.12.2 dev eth1 proto ospf";

    #[test]
    fn healthy_round_trip() {
        let m = lab(R1_OK, "", 1);
        let (there, back) = round_trip(&m, "pc1", "10.0.2.2".parse().unwrap());
        assert_eq!(there.stop, Stop::Delivered);
        assert_eq!(there.hops, vec!["pc1", "r1", "r2", "pc2"]);
        assert_eq!(back.unwrap().stop, Stop::Delivered);
    }

    #[test]
    fn each_break_is_located() {
        let dst: Ipv4Addr = "10.0.2.2".parse().unwrap();
        let m = lab(
            "10.0.1.0/24 dev eth0 proto kernel\n10.0.12.0/30 dev eth1 proto kernel",
            "",
            1,
        );
        let (w, _) = round_trip(&m, "pc1", dst);
        assert_eq!((w.at(), w.stop.clone()), ("r1", Stop::NoRoute));
        let m = lab(
            &format!("{R1_OK}\nblackhole 10.0.2.0/24 proto static"),
            "",
            1,
        );
        let (w, _) = round_trip(&m, "pc1", dst);
        assert!(matches!(w.stop, Stop::NullRoute(_)) && w.at() == "r1");
        let m = lab(R1_OK, "", 0);
        assert_eq!(round_trip(&m, "pc1", dst).0.stop, Stop::ForwardingOff);
        let m = lab(R1_OK, "*filter\n-A FORWARD -d 10.0.2.0/24 -j DROP", 1);
        assert!(matches!(
            round_trip(&m, "pc1", dst).0.stop,
            Stop::Filtered(_, "FORWARD")
        ));
        // A source NAT nobody routes back: the request arrives, the reply is lost at r2.
        let m = lab(
            R1_OK,
            "*nat\n-A POSTROUTING -s 10.0.1.0/24 -o eth1 -j SNAT --to-source 100.64.0.1",
            1,
        );
        let (there, back) = round_trip(&m, "pc1", dst);
        assert_eq!(there.stop, Stop::Delivered);
        assert_eq!(there.snat.as_ref().unwrap().0.to_string(), "100.64.0.1");
        let back = back.unwrap();
        assert_eq!((back.at(), &back.stop), ("r2", &Stop::NoRoute));
        let m = lab(
            "10.0.1.0/24 dev eth0 proto kernel\n10.0.12.0/30 dev eth1 proto kernel\n10.0.2.0/24 via 10.0.1.2 dev eth0 proto static",
            "",
            1,
        );
        assert!(matches!(round_trip(&m, "pc1", dst).0.stop, Stop::Loop(_)));
    }
}
