//! RIP (ripd) and RIPng (ripngd): convergence as a fixed point of the routing tables.
//!
//! RIP delays each triggered update by a random 1 to 5 s (RFC 2453, 3.10.1; hard-coded in
//! ripd), so a quiet table says little before 5 s have passed. Its state says more: the tables
//! of all routers are final when no router would change anything on receiving its neighbours'
//! current tables — for every router R and every neighbour N that sends on their shared
//! segment, every route N holds (except those N learned over that segment: split horizon)
//! reaches R with N's metric + 1, and R's route is at least that good; every route R learned
//! from N has exactly N's metric + 1. Before that, every router must have heard from each
//! neighbour at least once (its `Routing Information Sources`).
//!
//! A `network` statement that matches no interface enables nothing; it is reported (the lab's
//! author meant something by it), not waited for.
//!
//! Filters and offsets (distribute-lists, offset-lists, route-maps) can keep tables apart for
//! good. Differences in the tables are therefore *soft*: they stop blocking once the lab's
//! routes have not changed for longer than the triggered-update window ([`QUIET`]).
//!
//! FRR 8.4 has no JSON for RIP: this reads the text of `show ip rip` / `show ipv6 ripng` (one
//! line per route; RIPng puts the next hop on a second line) and `show ip rip status` /
//! `show ipv6 ripng status` (the interface table with send and receive versions, the passive
//! interfaces, the routing information sources).

use super::model::{Assessment, ProtocolItem};
use super::net::{IpNet, NetView, same_segment};
use std::net::IpAddr;
use std::time::Duration;

/// The triggered-update window (5 s) plus a margin.
pub(super) const QUIET: Duration = Duration::from_millis(5500);

/// RIP's infinity.
const INFINITY: u32 = 16;

/// One route of a RIP table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct RipRoute {
    pub prefix: IpNet,
    pub metric: u32,
    /// The neighbour it was learned from (`None`: the router's own).
    pub via: Option<IpAddr>,
    /// The interface it was learned on (RIPng shows it; RIP does not).
    pub iface: Option<String>,
}

/// One RIP-enabled interface.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct RipIface {
    pub name: String,
    /// Versions sent and accepted (`["2"]`, `["1", "2"]`).
    pub send: Vec<String>,
    pub recv: Vec<String>,
    pub passive: bool,
}

/// What one ripd or ripngd reports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct RipState {
    pub routes: Vec<RipRoute>,
    pub ifaces: Vec<RipIface>,
    /// Neighbours heard from.
    pub sources: Vec<IpAddr>,
    /// `Routing for Networks`: prefixes and interface names RIP is configured on.
    pub networks: Vec<String>,
}

impl RipState {
    /// RIP is configured on this device (its interfaces may not be enabled yet).
    pub fn configured(&self) -> bool {
        !self.networks.is_empty() || !self.ifaces.is_empty()
    }

    /// `ifname` (with addresses `addrs`) falls under a `network` statement.
    fn covers(&self, ifname: &str, addrs: &[IpNet]) -> bool {
        self.networks.iter().any(|n| {
            n == ifname
                || IpNet::parse(n).is_some_and(|net| addrs.iter().any(|a| net.contains(a.addr)))
        })
    }
}

/// Reads `show ip rip` or `show ipv6 ripng`.
pub(super) fn parse_routes(text: &str) -> Vec<RipRoute> {
    let mut out = Vec::new();
    let mut pending: Option<Vec<String>> = None;
    for line in text.lines() {
        let words: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        let starts_route = words.first().is_some_and(|w| {
            w.len() >= 4
                && w.as_bytes()[1] == b'('
                && w.ends_with(')')
                && w.as_bytes()[0].is_ascii_uppercase()
        });
        let words = if starts_route {
            if words.len() <= 2 {
                // RIPng: the next hop and the rest follow on the next line.
                pending = Some(words);
                continue;
            }
            words
        } else if let Some(mut head) = pending.take() {
            head.extend(words);
            head
        } else {
            continue;
        };
        if let Some(r) = route(&words) {
            out.push(r);
        }
    }
    out
}

/// `CODE NETWORK NEXTHOP METRIC FROM TAG [TIME]` (RIP) or
/// `CODE NETWORK NEXTHOP VIA METRIC TAG [TIME]` (RIPng).
fn route(w: &[String]) -> Option<RipRoute> {
    let prefix = IpNet::parse(w.get(1)?)?;
    let self_route = w.iter().any(|x| x == "self");
    if prefix.addr.is_ipv4() {
        let metric = w.get(3)?.parse().ok()?;
        let via = (!self_route).then(|| w.get(4)?.parse().ok()).flatten();
        Some(RipRoute {
            prefix,
            metric,
            via,
            iface: None,
        })
    } else {
        let metric = w.get(4)?.parse().ok()?;
        let via = (!self_route).then(|| w.get(2)?.parse().ok()).flatten();
        let iface = (!self_route).then(|| w.get(3).cloned()).flatten();
        Some(RipRoute {
            prefix,
            metric,
            via,
            iface,
        })
    }
}

/// Reads `show ip rip` / `show ipv6 ripng` and the matching `status`.
pub(super) fn parse(routes: &str, status: &str) -> RipState {
    let (ifaces, sources, networks) = parse_status(status);
    RipState {
        routes: parse_routes(routes),
        ifaces,
        sources,
        networks,
    }
}

/// Reads `show ip rip status` or `show ipv6 ripng status`: interfaces, sources, networks.
fn parse_status(text: &str) -> (Vec<RipIface>, Vec<IpAddr>, Vec<String>) {
    #[derive(PartialEq)]
    enum Part {
        Other,
        Interfaces,
        Passive,
        Sources,
        Networks,
    }
    let mut part = Part::Other;
    let mut ifaces: Vec<RipIface> = Vec::new();
    let mut sources = Vec::new();
    let mut networks = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("Interface") && t.contains("Send") {
            part = Part::Interfaces;
            continue;
        }
        if t.starts_with("Passive Interface") {
            part = Part::Passive;
            continue;
        }
        if t.starts_with("Routing Information Sources") {
            part = Part::Sources;
            continue;
        }
        if t.starts_with("Routing for Networks") {
            part = Part::Networks;
            continue;
        }
        if t.starts_with("Distance:") {
            part = Part::Other;
            continue;
        }
        let words: Vec<&str> = t.split_whitespace().collect();
        match part {
            Part::Interfaces if !words.is_empty() => {
                let versions: Vec<&str> = words[1..]
                    .iter()
                    .copied()
                    .filter(|v| v.parse::<u8>().is_ok())
                    .collect();
                // `eth0 2 2`, `eth0 1 2 1 2` (send 1 and 2, receive 1 and 2) or `eth0 2 1 2`.
                let (send, recv) = match versions.len() {
                    0 => (vec![], vec![]),
                    1 => (versions.clone(), versions.clone()),
                    2 => (vec![versions[0]], vec![versions[1]]),
                    3 => (vec![versions[0]], versions[1..].to_vec()),
                    _ => (versions[..2].to_vec(), versions[2..].to_vec()),
                };
                ifaces.push(RipIface {
                    name: words[0].to_string(),
                    send: send.iter().map(|s| s.to_string()).collect(),
                    recv: recv.iter().map(|s| s.to_string()).collect(),
                    passive: false,
                });
            }
            Part::Passive if !words.is_empty() => {
                if let Some(i) = ifaces.iter_mut().find(|i| i.name == words[0]) {
                    i.passive = true;
                }
            }
            Part::Sources => {
                if let Some(a) = words.first().and_then(|w| w.parse::<IpAddr>().ok()) {
                    sources.push(a);
                }
            }
            Part::Networks if !words.is_empty() => networks.push(words[0].to_string()),
            _ => {}
        }
    }
    (ifaces, sources, networks)
}

/// Judges every ripd (`daemon` = `ripd`) or ripngd (`ripngd`) of the lab.
pub(super) fn assess(daemon: &str, routers: &[(&NetView, &RipState)], a: &mut Assessment) {
    let v4 = daemon == "ripd";
    for (i, (net, st)) in routers.iter().enumerate() {
        let dev = net.device.as_str();
        // ripd enables its interfaces a moment after it starts: until then its tables mean
        // nothing. (Soft: an interface a network statement covers may stay disabled for
        // reasons not shown here.)
        for n in &st.networks {
            let matched = net.ifaces.iter().any(|(name, addrs)| {
                n == name
                    || IpNet::parse(n).is_some_and(|p| {
                        addrs
                            .iter()
                            .any(|x| x.addr.is_ipv4() == v4 && p.contains(x.addr))
                    })
            });
            if !matched && !net.ifaces.is_empty() {
                a.cannot(ProtocolItem::new(
                    dev,
                    daemon,
                    format!("network {n}"),
                    format!("matches no interface of {dev}: enables nothing"),
                ));
            }
        }
        let mut names: Vec<&String> = net.ifaces.keys().collect();
        names.sort();
        for name in names {
            let addrs = net.addrs(name, v4);
            if name != "lo" && st.covers(name, &addrs) && !st.ifaces.iter().any(|x| &x.name == name)
            {
                a.block_soft(
                    ProtocolItem::new(dev, daemon, format!("interface {name}"), "not enabled yet"),
                    QUIET,
                );
            }
        }
        for iface in &st.ifaces {
            let my_addr = net.addrs(&iface.name, v4).first().copied();
            for (j, (pnet, p)) in routers.iter().enumerate() {
                if i == j {
                    continue;
                }
                for other in p.ifaces.iter().filter(|o| !o.passive) {
                    let their_addr = pnet.addrs(&other.name, v4).first().copied();
                    if !same_segment(
                        net,
                        &iface.name,
                        my_addr.as_ref(),
                        pnet,
                        &other.name,
                        their_addr.as_ref(),
                    ) {
                        continue;
                    }
                    if let (Some(x), Some(y)) = (my_addr, their_addr)
                        && x.addr == y.addr
                    {
                        // ripd ignores updates from its own address.
                        a.cannot(ProtocolItem::new(
                            dev,
                            daemon,
                            format!("{} from {} {}", iface.name, pnet.device, other.name),
                            format!(
                                "updates are never accepted (both have the address {}: the lab's own duplicate address)",
                                x.addr
                            ),
                        ));
                        continue;
                    }
                    if !other.send.iter().any(|v| iface.recv.contains(v)) {
                        a.cannot(ProtocolItem::new(
                            dev,
                            daemon,
                            format!("{} from {} {}", iface.name, pnet.device, other.name),
                            format!(
                                "updates are never accepted (it sends version {}, {} accepts {})",
                                other.send.join(" and "),
                                iface.name,
                                iface.recv.join(" and ")
                            ),
                        ));
                        continue;
                    }
                    let Some(from) = speaker(pnet, &other.name, v4, st) else {
                        let item = ProtocolItem::new(
                            dev,
                            daemon,
                            format!("interface {}", iface.name),
                            format!("no update from {} yet", pnet.device),
                        );
                        if offers_anything((pnet, p), &other.name, v4) {
                            a.block(item);
                        } else {
                            a.state(&ProtocolItem {
                                state: format!("{} has nothing to send here", pnet.device),
                                ..item
                            });
                        }
                        continue;
                    };
                    table_against(daemon, (net, st), (pnet, p), &other.name, from, a);
                }
            }
        }
    }
}

/// The address `device`'s interface speaks from, if `listener` has heard from it.
fn speaker(device: &NetView, ifname: &str, v4: bool, listener: &RipState) -> Option<IpAddr> {
    listener.sources.iter().copied().find(|s| match s {
        IpAddr::V4(_) if v4 => device.addrs(ifname, true).iter().any(|n| n.addr == *s),
        IpAddr::V6(l) if !v4 => device.link_local_iface(*l) == Some(ifname),
        _ => false,
    })
}

/// Whether N's update on its interface `n_if` would carry any route. Split horizon keeps back
/// what N learned there, and a router does not advertise an interface's own subnet on it: a
/// router whose every route is of these sends no update on that segment at all, ever (Kath3's
/// router6, whose only RIP interface leads to router3, was waited for until the timeout).
fn offers_anything((nnet, n): (&NetView, &RipState), n_if: &str, v4: bool) -> bool {
    let own = nnet.addrs(n_if, v4);
    n.routes.iter().any(|r| {
        let learned_here = match (r.via, &r.iface) {
            (_, Some(i)) => i == n_if,
            (Some(via), None) => own.iter().any(|x| x.contains(via)),
            (None, None) => false,
        };
        let own_subnet = r.via.is_none() && own.iter().any(|x| x.same_subnet(&r.prefix));
        !learned_here && !own_subnet
    })
}

/// Compares R's table with what N currently offers it through N's interface `n_if`, from
/// address `from`.
fn table_against(
    daemon: &str,
    (rnet, r): (&NetView, &RipState),
    (nnet, n): (&NetView, &RipState),
    n_if: &str,
    from: IpAddr,
    a: &mut Assessment,
) {
    let dev = rnet.device.as_str();
    // Split horizon: N keeps quiet about routes it learned on this interface.
    let learned_here = |route: &RipRoute| match (route.via, &route.iface) {
        (_, Some(i)) => i == n_if,
        (Some(via), None) => nnet.addrs(n_if, true).iter().any(|x| x.contains(via)),
        (None, None) => false,
    };
    for route in &n.routes {
        if learned_here(route) {
            continue;
        }
        let offered = (route.metric + 1).min(INFINITY);
        let ours = r
            .routes
            .iter()
            .find(|x| x.prefix.same_subnet(&route.prefix));
        let problem = match ours {
            Some(x) if x.via == Some(from) && x.metric != offered => Some(format!(
                "metric {} via {}, which now offers {offered}",
                x.metric, nnet.device
            )),
            Some(x) if offered < INFINITY && x.metric > offered => Some(format!(
                "metric {}, {} offers {offered}",
                x.metric, nnet.device
            )),
            None if offered < INFINITY => Some(format!(
                "not learned yet ({} offers metric {offered})",
                nnet.device
            )),
            _ => None,
        };
        if let Some(p) = problem {
            a.block_soft(
                ProtocolItem::new(dev, daemon, format!("route {}", route.prefix), p),
                QUIET,
            );
        }
    }
    for x in r.routes.iter().filter(|x| x.via == Some(from)) {
        if !n.routes.iter().any(|y| y.prefix.same_subnet(&x.prefix)) {
            a.block_soft(
                ProtocolItem::new(
                    dev,
                    daemon,
                    format!("route {}", x.prefix),
                    format!("{} no longer has it", nnet.device),
                ),
                QUIET,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(f: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/src/netns/ready/testdata/{f}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    fn state(prefix: &str) -> RipState {
        parse(
            &data(&format!("{prefix}_routes.txt")),
            &data(&format!("{prefix}_status.txt")),
        )
    }

    /// The readiness test lab `rip`: h1 - r1 - r2 - r3 - h2 (r1's LAN passive).
    fn nets() -> Vec<NetView> {
        let d = NetView::for_test;
        vec![
            d(
                "r1",
                &[
                    ("eth0", "R1R2", "10.0.12.1/30"),
                    ("eth1", "LAN1", "192.168.1.1/24"),
                ],
            ),
            d(
                "r2",
                &[
                    ("eth0", "R1R2", "10.0.12.2/30"),
                    ("eth1", "R2R3", "10.0.23.1/30"),
                ],
            ),
            d(
                "r3",
                &[
                    ("eth0", "R2R3", "10.0.23.2/30"),
                    ("eth1", "LAN3", "192.168.3.1/24"),
                ],
            ),
        ]
    }

    fn judge(tag: &str) -> Assessment {
        let nets = nets();
        let states: Vec<RipState> = ["r1", "r2", "r3"]
            .iter()
            .map(|r| state(&format!("rip_{tag}_{r}")))
            .collect();
        let pairs: Vec<(&NetView, &RipState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ripd", &pairs, &mut a);
        a
    }

    #[test]
    fn parses_ripd_tables_and_status() {
        let r1 = state("rip_t04_r1");
        assert_eq!(r1.routes.len(), 3);
        let far = r1
            .routes
            .iter()
            .find(|r| r.prefix.to_string() == "192.168.3.0/24")
            .unwrap();
        assert_eq!(
            (far.metric, far.via),
            (3, Some("10.0.12.2".parse().unwrap()))
        );
        assert!(r1.routes.iter().any(|r| r.via.is_none() && r.metric == 1));
        assert_eq!(r1.ifaces.len(), 2);
        assert!(r1.ifaces.iter().any(|i| i.name == "eth1" && i.passive));
        assert_eq!(r1.ifaces[0].send, vec!["2"]);
        assert_eq!(r1.sources, vec!["10.0.12.2".parse::<IpAddr>().unwrap()]);
    }

    #[test]
    fn routes_still_on_their_way_block_softly() {
        // 4.6 s: r1 learned r3's LAN but not yet the r2-r3 link (r2 offers it at metric 2).
        let a = judge("t04");
        let b: Vec<String> = a.blockers.iter().map(|b| b.item.to_string()).collect();
        assert!(
            b.contains(
                &"r1 ripd route 10.0.23.0/30: not learned yet (r2 offers metric 2)".to_string()
            ),
            "{b:#?}"
        );
        assert!(a.blockers.iter().all(|b| b.soft_after == Some(QUIET)));
    }

    #[test]
    fn a_fixed_point_is_converged() {
        let a = judge("t09");
        assert!(a.blockers.is_empty(), "{:#?}", a.blockers);
    }

    #[test]
    fn nothing_heard_from_a_neighbour_blocks_and_version_mismatches_are_reported() {
        let nets = nets();
        let mut r2 = state("rip_t09_r2");
        r2.sources.retain(|s| s.to_string() != "10.0.23.2");
        let mut r1 = state("rip_t09_r1");
        r1.ifaces.iter_mut().for_each(|i| i.send = vec!["1".into()]);
        let states = [r1, r2, state("rip_t09_r3")];
        let pairs: Vec<(&NetView, &RipState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ripd", &pairs, &mut a);
        let b: Vec<String> = a.blockers.iter().map(|b| b.item.to_string()).collect();
        assert!(
            b.contains(&"r2 ripd interface eth1: no update from r3 yet".to_string()),
            "{b:#?}"
        );
        assert!(a.blockers.iter().any(|b| b.soft_after.is_none()));
        assert_eq!(a.unable.len(), 1, "{:?}", a.unable);
        assert!(a.unable[0].to_string().starts_with(
            "r2 ripd eth0 from r1 eth0: updates are never accepted (it sends version 1"
        ));
    }

    #[test]
    fn a_neighbour_with_nothing_to_send_on_the_segment_is_not_awaited() {
        // r3 runs RIP on its r2 link only and has learned everything over it: split horizon
        // leaves its updates towards r2 empty, and an empty update is never sent.
        let nets = nets();
        let mut states: Vec<RipState> = ["r1", "r2", "r3"]
            .iter()
            .map(|r| state(&format!("rip_t09_{r}")))
            .collect();
        states[2]
            .routes
            .retain(|r| r.via.is_some() || r.prefix.to_string() == "10.0.23.0/30");
        states[1].sources.retain(|s| s.to_string() != "10.0.23.2");
        states[1]
            .routes
            .retain(|r| r.prefix.to_string() != "192.168.3.0/24");
        let pairs: Vec<(&NetView, &RipState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ripd", &pairs, &mut a);
        let b: Vec<String> = a.blockers.iter().map(|b| b.item.to_string()).collect();
        assert!(!b.iter().any(|x| x.contains("no update from r3")), "{b:#?}");
        assert_eq!(
            a.states["r2 ripd interface eth1"],
            "r3 has nothing to send here"
        );
        // With its LAN in its table, r3 has something to say, and is waited for.
        states[2] = state("rip_t09_r3");
        let pairs: Vec<(&NetView, &RipState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ripd", &pairs, &mut a);
        let b: Vec<String> = a.blockers.iter().map(|b| b.item.to_string()).collect();
        assert!(
            b.contains(&"r2 ripd interface eth1: no update from r3 yet".to_string()),
            "{b:#?}"
        );
    }

    #[test]
    fn interfaces_not_enabled_yet_block_softly() {
        // Right after it started, ripd lists its networks but no interface yet.
        let status = data("rip_t09_r2_status.txt");
        let early: String = status
            .lines()
            .filter(|l| !l.trim_start().starts_with("eth"))
            .map(|l| format!("{l}\n"))
            .collect();
        let mut states: Vec<RipState> = ["r1", "r2", "r3"]
            .iter()
            .map(|r| state(&format!("rip_t09_{r}")))
            .collect();
        states[1] = parse("", &early);
        assert!(states[1].configured() && states[1].ifaces.is_empty());
        let nets = nets();
        let pairs: Vec<(&NetView, &RipState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ripd", &pairs, &mut a);
        let b: Vec<String> = a.blockers.iter().map(|b| b.item.to_string()).collect();
        assert!(
            b.contains(&"r2 ripd interface eth0: not enabled yet".to_string()),
            "{b:#?}"
        );
        assert!(
            b.contains(&"r2 ripd interface eth1: not enabled yet".to_string()),
            "{b:#?}"
        );
    }

    #[test]
    fn a_network_statement_matching_no_interface_is_reported() {
        let nets = nets();
        let mut states: Vec<RipState> = ["r1", "r2", "r3"]
            .iter()
            .map(|r| state(&format!("rip_t09_{r}")))
            .collect();
        states[1].networks.push("172.16.0.0/16".into());
        states[1].networks.push("eth7".into());
        let pairs: Vec<(&NetView, &RipState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ripd", &pairs, &mut a);
        let u: Vec<String> = a.unable.iter().map(ToString::to_string).collect();
        assert_eq!(
            u,
            vec![
                "r2 ripd network 172.16.0.0/16: matches no interface of r2: enables nothing",
                "r2 ripd network eth7: matches no interface of r2: enables nothing",
            ]
        );
        assert!(a.blockers.is_empty(), "{:#?}", a.blockers);
    }

    #[test]
    fn ripng_next_hops_on_their_own_line() {
        let r1 = RipState {
            routes: parse_routes(&data("ripng_r1_routes.txt")),
            ..RipState::default()
        };
        let learned = r1.routes.iter().find(|r| r.via.is_some()).unwrap();
        assert_eq!(learned.prefix.to_string(), "2001:db8:ff::2/128");
        assert_eq!(learned.metric, 2);
        assert_eq!(r1.routes.len(), 5);
        let (ifaces, sources, networks) = parse_status(&data("ripng_r1_status.txt"));
        assert_eq!(networks, vec!["eth1".to_string()]);
        assert_eq!(ifaces.len(), 1);
        assert_eq!(
            (ifaces[0].send.clone(), ifaces[0].recv.clone()),
            (vec!["1".to_string()], vec!["1".to_string()])
        );
        assert_eq!(sources.len(), 1);
        assert_eq!(Some(&sources[0]), learned.via.as_ref());
    }

    #[test]
    fn ripng_converged_pair() {
        let mk = |r: &str| {
            let (local, link_local) =
                super::super::net::parse_local_addrs("", &data(&format!("ripng_{r}_if_inet6.txt")));
            let v: serde_json::Value =
                serde_json::from_str(&data(&format!("ripng_{r}_interfaces.json"))).unwrap();
            let net = NetView {
                device: r.into(),
                domains: [("eth0", "A"), ("eth1", "B"), ("eth2", "C")]
                    .iter()
                    .map(|(i, d)| (i.to_string(), d.to_string()))
                    .collect(),
                ifaces: super::super::net::parse_interface_brief(&v),
                local,
                link_local,
            };
            (
                net,
                parse(
                    &data(&format!("ripng_{r}_routes.txt")),
                    &data(&format!("ripng_{r}_status.txt")),
                ),
            )
        };
        let (n1, s1) = mk("r1");
        let (n2, s2) = mk("r2");
        let mut a = Assessment::default();
        assess("ripngd", &[(&n1, &s1), (&n2, &s2)], &mut a);
        assert!(a.blockers.is_empty(), "{:#?}", a.blockers);
        // Without r2's table reaching r1, its loopback is missing on r1.
        let mut s1b = s1.clone();
        s1b.routes.retain(|r| r.via.is_none());
        let mut a = Assessment::default();
        assess("ripngd", &[(&n1, &s1b), (&n2, &s2)], &mut a);
        let b: Vec<String> = a.blockers.iter().map(|b| b.item.to_string()).collect();
        assert_eq!(
            b,
            vec!["r1 ripngd route 2001:db8:ff::2/128: not learned yet (r2 offers metric 2)"]
        );
    }
}
