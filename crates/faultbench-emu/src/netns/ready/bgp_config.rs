//! BGP sessions that the lab's own configuration can never bring up, proven from both ends.
//!
//! A session between router A (neighbour `p`) and router B (who owns `p`) comes up when one
//! side opens a TCP connection the other accepts and both OPEN messages carry the AS the other
//! expects:
//!
//! - A opens a connection to `p` from its *source address* — the address of its
//!   `update-source`, else the address of the interface whose subnet holds `p` (when `p` lies
//!   on no subnet of A the source depends on routing and is taken as unknown). It does not
//!   open one at all to an eBGP neighbour on no connected subnet without `ebgp-multihop`
//!   (`ttl-security`, `disable-connected-check`), nor to a `passive` one;
//! - B accepts it only from an address it names in a neighbour statement (or a `bgp listen
//!   range`);
//! - the other direction likewise, with B's neighbour statements that name an address of A;
//! - A's `remote-as` must be B's AS (`internal`: A's own, `external`: any other), and B's
//!   `remote-as` for A must be A's.
//!
//! When neither direction can work, or the AS numbers cannot match, the neighbour is reported
//! as unable to come up rather than waited for. Anything not known for sure — a source that
//! depends on routing, confederations, `local-as`, dynamic or unnumbered neighbours on B —
//! proves nothing: the session is then awaited as before.
//!
//! The configuration is bgpd's `show running-config` (the default instance; `router bgp N vrf
//! X` blocks are skipped, since `show bgp neighbors json` lists the default instance only).

use super::net::NetView;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// What a neighbour statement expects of the far end's AS.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RemoteAs {
    Number(u32),
    /// `remote-as internal`: the router's own AS.
    Internal,
    /// `remote-as external`: any AS but its own.
    External,
}

impl RemoteAs {
    fn parse(s: &str) -> Option<RemoteAs> {
        match s {
            "internal" => Some(RemoteAs::Internal),
            "external" => Some(RemoteAs::External),
            n => n.parse().ok().map(RemoteAs::Number),
        }
    }

    /// Does a peer of AS `theirs` match, for a router of AS `own`?
    fn accepts(self, own: u32, theirs: u32) -> bool {
        match self {
            RemoteAs::Number(n) => n == theirs,
            RemoteAs::Internal => own == theirs,
            RemoteAs::External => own != theirs,
        }
    }

    fn is_external(self, own: u32) -> bool {
        match self {
            RemoteAs::Number(n) => n != own,
            RemoteAs::Internal => false,
            RemoteAs::External => true,
        }
    }
}

impl std::fmt::Display for RemoteAs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteAs::Number(n) => write!(f, "{n}"),
            RemoteAs::Internal => write!(f, "internal"),
            RemoteAs::External => write!(f, "external"),
        }
    }
}

/// One `neighbor X …` (after its peer group's settings were applied).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct NeighbourConfig {
    pub remote_as: Option<RemoteAs>,
    /// `update-source`: an address or an interface name.
    pub update_source: Option<String>,
    /// `ebgp-multihop`, `ttl-security` or `disable-connected-check`: an eBGP neighbour may be
    /// off every connected subnet.
    pub multihop: bool,
    /// `passive`: never opens a connection itself.
    pub passive: bool,
    /// Its peer group, if any.
    group: Option<String>,
    /// It names a peer group (not a neighbour).
    is_group: bool,
}

/// The parts of bgpd's configuration that decide whether sessions can come up.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct BgpConfig {
    pub asn: u32,
    /// Neighbour address (or interface, for unnumbered ones) → its settings.
    pub neighbours: BTreeMap<String, NeighbourConfig>,
    /// `bgp listen range`: sessions from addresses no neighbour statement names are accepted.
    pub listens: bool,
    /// A confederation or a `local-as`: the AS an OPEN carries is not simply `asn`.
    pub as_varies: bool,
}

impl BgpConfig {
    /// Neighbours given by address (not peer groups, not interfaces).
    fn numbered(&self) -> impl Iterator<Item = (IpAddr, &NeighbourConfig)> {
        self.neighbours
            .iter()
            .filter(|(_, n)| !n.is_group)
            .filter_map(|(k, n)| k.parse::<IpAddr>().ok().map(|a| (a, n)))
    }

    /// It has unnumbered (`neighbor eth0 interface`) neighbours, whose far end is not named.
    fn has_unnumbered(&self) -> bool {
        self.neighbours
            .iter()
            .any(|(k, n)| !n.is_group && k.parse::<IpAddr>().is_err())
    }
}

/// Reads the default instance of bgpd's running configuration; `None` without one.
pub(super) fn parse(config: &str) -> Option<BgpConfig> {
    let mut cfg: Option<BgpConfig> = None;
    let mut inside = false;
    for line in config.lines() {
        let top = !line.starts_with(' ');
        let w: Vec<&str> = line.split_whitespace().collect();
        if top {
            inside = false;
            if w.first() == Some(&"router") && w.get(1) == Some(&"bgp") && cfg.is_none() {
                // `router bgp N vrf X` is another instance.
                if w.len() == 3
                    && let Ok(asn) = w[2].parse()
                {
                    cfg = Some(BgpConfig {
                        asn,
                        ..BgpConfig::default()
                    });
                    inside = true;
                }
            }
            continue;
        }
        let Some(c) = cfg.as_mut().filter(|_| inside) else {
            continue;
        };
        match w.as_slice() {
            ["bgp", "listen", "range", ..] => c.listens = true,
            ["bgp", "confederation", ..] => c.as_varies = true,
            ["neighbor", name, rest @ ..] => {
                let n = c.neighbours.entry(name.to_string()).or_default();
                match rest {
                    ["peer-group"] => n.is_group = true,
                    ["peer-group", g] => n.group = Some(g.to_string()),
                    ["remote-as", r] => n.remote_as = RemoteAs::parse(r),
                    ["interface", "remote-as", r] => n.remote_as = RemoteAs::parse(r),
                    ["interface", "peer-group", g] => n.group = Some(g.to_string()),
                    ["update-source", s] => n.update_source = Some(s.to_string()),
                    ["ebgp-multihop" | "ttl-security", ..] | ["disable-connected-check"] => {
                        n.multihop = true;
                    }
                    ["passive"] => n.passive = true,
                    ["local-as", ..] => c.as_varies = true,
                    _ => {}
                }
            }
            _ => {}
        }
    }
    let mut c = cfg?;
    // Members take their group's settings where they set none themselves.
    let groups: BTreeMap<String, NeighbourConfig> = c
        .neighbours
        .iter()
        .filter(|(_, n)| n.is_group)
        .map(|(k, n)| (k.clone(), n.clone()))
        .collect();
    for n in c.neighbours.values_mut() {
        if let Some(g) = n.group.as_ref().and_then(|g| groups.get(g)) {
            n.remote_as = n.remote_as.or(g.remote_as);
            n.update_source = n.update_source.clone().or(g.update_source.clone());
            n.multihop |= g.multihop;
            n.passive |= g.passive;
        }
    }
    Some(c)
}

/// One end of a session: the device, its addresses and its bgpd configuration.
pub(super) type End<'a> = (&'a NetView, &'a BgpConfig);

/// The address `x` opens connections to `peer` from, when its configuration and subnets say.
fn source(x: &NetView, n: &NeighbourConfig, peer: IpAddr) -> Option<(IpAddr, String)> {
    if let Some(us) = &n.update_source {
        if let Ok(a) = us.parse::<IpAddr>() {
            return Some((a, format!("update-source {us}")));
        }
        return x
            .addrs(us, peer.is_ipv4())
            .first()
            .map(|a| (a.addr, format!("update-source {us}")));
    }
    x.ifaces.iter().find_map(|(ifname, addrs)| {
        addrs
            .iter()
            .find(|a| a.contains(peer) && a.addr != peer)
            .map(|a| (a.addr, format!("its {ifname} address")))
    })
}

fn connected(x: &NetView, peer: IpAddr) -> bool {
    x.ifaces.values().flatten().any(|a| a.contains(peer))
}

/// Why `x` never opens a connection to `peer` (neighbour settings `n`), if it does not.
fn never_connects(x: End<'_>, n: &NeighbourConfig, peer: IpAddr) -> Option<String> {
    let (net, cfg) = x;
    if n.passive {
        return Some(format!("{} is passive towards {peer}", net.device));
    }
    let external = n.remote_as.is_some_and(|r| r.is_external(cfg.asn));
    if external && !n.multihop && !connected(net, peer) {
        return Some(format!(
            "{peer} is on no subnet of {} and the eBGP session has no ebgp-multihop",
            net.device
        ));
    }
    None
}

/// Why the session of `a`'s neighbour `p` with `b` (the device owning `p`) can never come up,
/// if the two configurations prove it.
pub(super) fn why_never(a: End<'_>, p: IpAddr, b: End<'_>) -> Option<String> {
    let (anet, acfg) = a;
    let (bnet, bcfg) = b;
    let na = acfg.neighbours.get(&p.to_string())?;
    let ases_known = !acfg.as_varies && !bcfg.as_varies;
    if ases_known
        && let Some(r) = na.remote_as
        && !r.accepts(acfg.asn, bcfg.asn)
    {
        return Some(format!(
            "{} is AS {}, not the remote-as {r} {} configures",
            bnet.device, bcfg.asn, anet.device
        ));
    }
    if bcfg.listens || bcfg.has_unnumbered() || acfg.listens {
        return None;
    }
    // B's neighbour statements naming an address of A, and whether their AS fits A's.
    let towards_a: Vec<(IpAddr, &NeighbourConfig)> =
        bcfg.numbered().filter(|(ip, _)| anet.owns(*ip)).collect();
    if towards_a.is_empty() {
        return Some(format!(
            "{} has no neighbour statement for any address of {}",
            bnet.device, anet.device
        ));
    }
    let as_ok = |nb: &NeighbourConfig| {
        !ases_known || nb.remote_as.is_none_or(|r| r.accepts(bcfg.asn, acfg.asn))
    };
    if ases_known && towards_a.iter().all(|(_, nb)| !as_ok(nb)) {
        let (ip, nb) = towards_a[0];
        return Some(format!(
            "{} expects AS {} from {} (neighbor {ip} remote-as {}), but {} is AS {}",
            bnet.device,
            nb.remote_as.map_or("?".into(), |r| r.to_string()),
            anet.device,
            nb.remote_as.map_or("?".into(), |r| r.to_string()),
            anet.device,
            acfg.asn
        ));
    }
    // A → B: A connects from its source; B must name that address (with a fitting AS).
    let a_to_b = match never_connects(a, na, p) {
        Some(why) => why,
        None => {
            let (src, how) = source(anet, na, p)?;
            match bcfg.numbered().find(|(ip, _)| *ip == src) {
                Some((_, nb)) if as_ok(nb) => return None,
                Some((_, nb)) => format!(
                    "{} connects from {src} ({how}), which {} names with remote-as {}, but {} is AS {}",
                    anet.device,
                    bnet.device,
                    nb.remote_as.map_or("?".into(), |r| r.to_string()),
                    anet.device,
                    acfg.asn
                ),
                None => format!(
                    "{} connects from {src} ({how}), which {} names in no neighbour statement",
                    anet.device, bnet.device
                ),
            }
        }
    };
    // B → A: one of B's neighbours of A must connect from `p`, the address A expects.
    let mut why = vec![a_to_b];
    for (ip, nb) in towards_a.iter().filter(|(_, nb)| as_ok(nb)) {
        match never_connects(b, nb, *ip) {
            Some(w) => why.push(w),
            None => {
                let (src, how) = source(bnet, nb, *ip)?;
                if src == p {
                    return None;
                }
                why.push(format!(
                    "{} connects to {ip} from {src} ({how}), not from {p}, the address {} expects",
                    bnet.device, anet.device
                ));
            }
        }
    }
    Some(why.join("; "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const R1: &str = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nfrr defaults traditional\nhostname r1\n!\nrouter bgp 65000\n bgp router-id 1.1.1.1\n neighbor 2.2.2.2 remote-as 65000\n neighbor 2.2.2.2 update-source lo\n neighbor 10.0.13.2 remote-as 65003\n neighbor 3.3.3.3 remote-as 65003\n !\n address-family ipv4 unicast\n  network 192.168.1.0/24\n exit-address-family\nexit\n!\nrouter bgp 65000 vrf blue\n neighbor 9.9.9.9 remote-as 1\nexit\n!\nend\n";

    fn net(name: &str, ifs: &[(&str, &str)]) -> NetView {
        let mut n = NetView::for_test(
            name,
            &ifs.iter().map(|(i, a)| (*i, "X", *a)).collect::<Vec<_>>(),
        );
        n.local = n.ifaces.values().flatten().map(|a| a.addr).collect();
        n
    }

    #[test]
    fn reads_the_default_instance_with_groups() {
        let c = parse(R1).unwrap();
        assert_eq!(c.asn, 65000);
        assert_eq!(c.neighbours.len(), 3, "{c:#?}");
        assert_eq!(c.neighbours["2.2.2.2"].update_source.as_deref(), Some("lo"));
        assert!(
            !c.neighbours.contains_key("9.9.9.9"),
            "the vrf instance is skipped"
        );
        let g = parse(
            "router bgp 1\n neighbor G peer-group\n neighbor G remote-as external\n neighbor G ebgp-multihop 2\n neighbor 10.0.0.2 peer-group G\n neighbor eth1 interface remote-as internal\n bgp listen range 10.9.0.0/16 peer-group G\n",
        )
        .unwrap();
        let m = &g.neighbours["10.0.0.2"];
        assert_eq!((m.remote_as, m.multihop), (Some(RemoteAs::External), true));
        assert!(g.listens && g.has_unnumbered());
        assert_eq!(parse("router ospf\n"), None);
    }

    #[test]
    fn mismatched_update_sources_never_meet() {
        // r1 peers r2's loopback from its own; r2 peers r1's link address from its link address.
        let r1 = net("r1", &[("lo", "1.1.1.1/32"), ("eth0", "10.0.12.1/30")]);
        let r2 = net("r2", &[("lo", "2.2.2.2/32"), ("eth0", "10.0.12.2/30")]);
        let c1 = parse("router bgp 65000\n neighbor 2.2.2.2 remote-as 65000\n neighbor 2.2.2.2 update-source lo\n").unwrap();
        let c2 = parse("router bgp 65000\n neighbor 10.0.12.1 remote-as 65000\n").unwrap();
        let why = why_never((&r1, &c1), "2.2.2.2".parse().unwrap(), (&r2, &c2)).unwrap();
        assert_eq!(
            why,
            "r1 connects from 1.1.1.1 (update-source lo), which r2 names in no neighbour statement; \
             r2 connects to 10.0.12.1 from 10.0.12.2 (its eth0 address), not from 2.2.2.2, the address r1 expects"
        );
        // r2's side of the same pair: its connection is refused, r1's never arrives.
        assert!(why_never((&r2, &c2), "10.0.12.1".parse().unwrap(), (&r1, &c1)).is_some());
        // With update-source lo on r2 too (and r2 naming r1's loopback) they meet.
        let c2 = parse("router bgp 65000\n neighbor 1.1.1.1 remote-as 65000\n neighbor 1.1.1.1 update-source lo\n").unwrap();
        assert_eq!(
            why_never((&r1, &c1), "2.2.2.2".parse().unwrap(), (&r2, &c2)),
            None
        );
        // One side matching is enough: r2 naming 1.1.1.1 accepts r1's connection.
        let c2 = parse("router bgp 65000\n neighbor 1.1.1.1 remote-as 65000\n").unwrap();
        assert_eq!(
            why_never((&r1, &c1), "2.2.2.2".parse().unwrap(), (&r2, &c2)),
            None
        );
    }

    #[test]
    fn wrong_ases_and_missing_statements_are_named() {
        let r1 = net("r1", &[("eth0", "10.0.12.1/30")]);
        let r2 = net("r2", &[("eth0", "10.0.12.2/30")]);
        let p: IpAddr = "10.0.12.2".parse().unwrap();
        let c1 = parse("router bgp 65001\n neighbor 10.0.12.2 remote-as 65099\n").unwrap();
        let c2 = parse("router bgp 65002\n neighbor 10.0.12.1 remote-as 65001\n").unwrap();
        assert_eq!(
            why_never((&r1, &c1), p, (&r2, &c2)).as_deref(),
            Some("r2 is AS 65002, not the remote-as 65099 r1 configures")
        );
        let c1 = parse("router bgp 65001\n neighbor 10.0.12.2 remote-as 65002\n").unwrap();
        let c2 = parse("router bgp 65002\n neighbor 10.0.12.1 remote-as 65007\n").unwrap();
        assert_eq!(
            why_never((&r1, &c1), p, (&r2, &c2)).as_deref(),
            Some(
                "r2 expects AS 65007 from r1 (neighbor 10.0.12.1 remote-as 65007), but r1 is AS 65001"
            )
        );
        let c2 = parse("router bgp 65002\n neighbor 10.0.99.1 remote-as 65001\n").unwrap();
        assert_eq!(
            why_never((&r1, &c1), p, (&r2, &c2)).as_deref(),
            Some("r2 has no neighbour statement for any address of r1")
        );
        // A listen range or a local-as proves nothing.
        let c2 = parse("router bgp 65002\n bgp listen range 10.0.0.0/8 peer-group G\n").unwrap();
        assert_eq!(why_never((&r1, &c1), p, (&r2, &c2)), None);
        let c1 = parse("router bgp 65001\n neighbor 10.0.12.2 remote-as 65099\n neighbor 10.0.12.2 local-as 65099\n").unwrap();
        let c2 = parse("router bgp 65002\n neighbor 10.0.12.1 remote-as 65099\n").unwrap();
        assert_eq!(why_never((&r1, &c1), p, (&r2, &c2)), None);
    }

    #[test]
    fn ebgp_off_every_connected_subnet_needs_multihop() {
        let r1 = net("r1", &[("eth0", "10.0.12.1/30")]);
        let r2 = net("r2", &[("lo", "2.2.2.2/32"), ("eth0", "10.0.12.2/30")]);
        let p: IpAddr = "2.2.2.2".parse().unwrap();
        let c1 = parse("router bgp 65001\n neighbor 2.2.2.2 remote-as 65002\n").unwrap();
        let c2 = parse("router bgp 65002\n neighbor 10.0.12.1 remote-as 65001\n").unwrap();
        assert_eq!(
            why_never((&r1, &c1), p, (&r2, &c2)).as_deref(),
            Some(
                "2.2.2.2 is on no subnet of r1 and the eBGP session has no ebgp-multihop; \
                 r2 connects to 10.0.12.1 from 10.0.12.2 (its eth0 address), not from 2.2.2.2, the address r1 expects"
            )
        );
        let c1 = parse("router bgp 65001\n neighbor 2.2.2.2 remote-as 65002\n neighbor 2.2.2.2 ebgp-multihop 2\n").unwrap();
        // Now r1 connects, but from an address that depends on its routes: nothing is proven.
        assert_eq!(why_never((&r1, &c1), p, (&r2, &c2)), None);
    }
}
