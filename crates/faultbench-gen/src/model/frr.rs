//! FRR configuration, as `frr.conf`, Quagga per-daemon files, `show running-config` and the
//! `vtysh -c` sequences of startup scripts all write it: one statement per line, sections
//! opened by `router …` / `interface …` and closed by `exit` or the next section.
//!
//! Only what fault families need is kept: OSPF networks, areas, passive interfaces, costs and
//! timers; BGP AS, neighbours and networks; RIP networks; static routes; redistribution. Every
//! value is parsed into its type (addresses, numbers, interface names of a strict alphabet), so
//! a hostile configuration line can only be ignored, never carried into a command.

use super::net::Ipv4Net;
use serde::Serialize;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// Longest configuration line considered (longer lines are ignored).
const MAX_LINE: usize = 512;

/// OSPF settings of one interface (`interface eth0` / `ip ospf …`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct OspfIface {
    /// `ip ospf area A`.
    pub area: Option<String>,
    /// `ip ospf cost N`.
    pub cost: Option<u32>,
    /// `ip ospf hello-interval N`.
    pub hello: Option<u32>,
    /// `ip ospf dead-interval N`.
    pub dead: Option<u32>,
    /// `ip ospf passive`.
    pub passive: bool,
}

/// `router ospf`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Ospf {
    /// `network P area A`.
    pub networks: Vec<(Ipv4Net, String)>,
    /// `passive-interface IF`.
    pub passive: Vec<String>,
    /// `passive-interface default`.
    pub passive_default: bool,
    /// `redistribute X`.
    pub redistribute: Vec<String>,
}

/// A BGP neighbour.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct BgpNeighbor {
    /// Its address.
    pub ip: Ipv4Addr,
    /// `remote-as`.
    pub remote_as: u32,
}

/// `router bgp N`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Bgp {
    /// Local AS.
    pub asn: u32,
    /// Neighbours with a numeric `remote-as`.
    pub neighbors: Vec<BgpNeighbor>,
    /// `network P` (any address family block of IPv4 unicast).
    pub networks: Vec<Ipv4Net>,
    /// `redistribute X`.
    pub redistribute: Vec<String>,
}

/// `router rip`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Rip {
    /// `network P` (prefixes; interface-name networks are kept in `iface_networks`).
    pub networks: Vec<Ipv4Net>,
    /// `network IF`.
    pub iface_networks: Vec<String>,
    /// `redistribute X`.
    pub redistribute: Vec<String>,
}

/// A static route (`ip route P NH`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StaticRoute {
    /// Destination.
    pub prefix: Ipv4Net,
    /// Next hop: an address, an interface or `blackhole`/`Null0`.
    pub via: String,
}

/// The routing configuration of one device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RoutingConfig {
    /// `router ospf`.
    pub ospf: Option<Ospf>,
    /// Per-interface OSPF settings.
    pub ospf_ifaces: BTreeMap<String, OspfIface>,
    /// `router bgp`.
    pub bgp: Option<Bgp>,
    /// `router rip`.
    pub rip: Option<Rip>,
    /// Static routes (FRR `ip route` or kernel `ip route add` from startups).
    pub static_routes: Vec<StaticRoute>,
}

/// Whether `s` can be an interface name here (Linux allows more; labs use `eth0`, `lo`,
/// `br0`, `eth0.10`).
pub fn valid_iface(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 15
        && s.chars().next().is_some_and(|c| c.is_ascii_alphanumeric())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

/// An OSPF area: a number or a dotted quad.
fn area(s: &str) -> Option<String> {
    if s.parse::<u32>().is_ok() || s.parse::<Ipv4Addr>().is_ok() {
        Some(s.to_string())
    } else {
        None
    }
}

/// `P` as a prefix, or `A M` (address and dotted mask) as Quagga sometimes writes it.
fn prefix(words: &[&str]) -> Option<Ipv4Net> {
    let first = words.first()?;
    if first.contains('/') {
        return first.parse().ok();
    }
    let addr: Ipv4Addr = first.parse().ok()?;
    let mask: Ipv4Addr = words.get(1)?.parse().ok()?;
    Ipv4Net::new(addr, super::net::mask_len(mask)?)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    Top,
    Ospf,
    Bgp,
    Rip,
    Iface,
    Other,
}

/// Reads configuration statements (lines of a file, or the `-c` arguments of `vtysh`) into
/// `cfg`. Unknown statements are ignored.
pub struct FrrReader<'a> {
    cfg: &'a mut RoutingConfig,
    ctx: Ctx,
    iface: String,
}

impl<'a> FrrReader<'a> {
    /// A reader adding to `cfg`.
    pub fn new(cfg: &'a mut RoutingConfig) -> Self {
        FrrReader {
            cfg,
            ctx: Ctx::Top,
            iface: String::new(),
        }
    }

    /// Reads a whole configuration text.
    pub fn read_text(&mut self, text: &str) {
        for line in text.lines() {
            self.statement(line);
        }
    }

    /// Reads one statement.
    pub fn statement(&mut self, line: &str) {
        if line.len() > MAX_LINE {
            return;
        }
        let line = line.trim();
        if line.is_empty() || line.starts_with('!') || line.starts_with('#') {
            return;
        }
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["exit" | "end" | "quit", ..] => {
                self.ctx = Ctx::Top;
                return;
            }
            ["exit-address-family"] | ["address-family", ..] => return,
            ["configure" | "write", ..] | ["conf", "t"] => return,
            ["router", "ospf", ..] => {
                self.ctx = Ctx::Ospf;
                self.cfg.ospf.get_or_insert_with(Ospf::default);
                return;
            }
            ["router", "bgp", asn, ..] => {
                match asn.parse::<u32>() {
                    Ok(asn) => {
                        self.ctx = Ctx::Bgp;
                        self.cfg.bgp.get_or_insert_with(Bgp::default).asn = asn;
                    }
                    Err(_) => self.ctx = Ctx::Other,
                }
                return;
            }
            ["router", "rip"] => {
                self.ctx = Ctx::Rip;
                self.cfg.rip.get_or_insert_with(Rip::default);
                return;
            }
            ["router" | "line" | "route-map", ..] | ["key", "chain", ..] => {
                self.ctx = Ctx::Other;
                return;
            }
            ["interface", name, ..] => {
                if valid_iface(name) {
                    self.ctx = Ctx::Iface;
                    self.iface = (*name).to_string();
                } else {
                    self.ctx = Ctx::Other;
                }
                return;
            }
            ["ip", "route", rest @ ..] => {
                // Top-level only in FRR; a static route is never inside a section.
                if let Some(p) = prefix(rest) {
                    let skip = if rest[0].contains('/') { 1 } else { 2 };
                    if let Some(via) = rest.get(skip).filter(|v| next_hop(v)) {
                        self.ctx = Ctx::Top;
                        self.cfg.static_routes.push(StaticRoute {
                            prefix: p,
                            via: (*via).to_string(),
                        });
                    }
                }
                return;
            }
            _ => {}
        }
        match self.ctx {
            Ctx::Ospf => self.ospf(&w),
            Ctx::Bgp => self.bgp(&w),
            Ctx::Rip => self.rip(&w),
            Ctx::Iface => self.iface(&w),
            Ctx::Top | Ctx::Other => {}
        }
    }

    fn ospf(&mut self, w: &[&str]) {
        let Some(o) = self.cfg.ospf.as_mut() else {
            return;
        };
        match w {
            ["network", rest @ ..] => {
                let skip = if rest.first().is_some_and(|p| p.contains('/')) {
                    1
                } else {
                    2
                };
                if let (Some(p), Some(&"area"), Some(a)) = (
                    prefix(rest),
                    rest.get(skip),
                    rest.get(skip + 1).and_then(|a| area(a)),
                ) {
                    o.networks.push((p, a));
                }
            }
            ["passive-interface", "default"] => o.passive_default = true,
            ["passive-interface", name] if valid_iface(name) => o.passive.push((*name).into()),
            ["redistribute", what, ..] if valid_iface(what) => o.redistribute.push((*what).into()),
            _ => {}
        }
    }

    fn bgp(&mut self, w: &[&str]) {
        let Some(b) = self.cfg.bgp.as_mut() else {
            return;
        };
        match w {
            ["neighbor", ip, "remote-as", asn] => {
                if let (Ok(ip), Ok(remote_as)) = (ip.parse(), asn.parse()) {
                    b.neighbors.push(BgpNeighbor { ip, remote_as });
                }
            }
            ["network", rest @ ..] => {
                if let Some(p) = prefix(rest) {
                    b.networks.push(p);
                }
            }
            ["redistribute", what, ..] if valid_iface(what) => b.redistribute.push((*what).into()),
            _ => {}
        }
    }

    fn rip(&mut self, w: &[&str]) {
        let Some(r) = self.cfg.rip.as_mut() else {
            return;
        };
        match w {
            ["network", p] if p.contains('/') => {
                if let Ok(p) = p.parse() {
                    r.networks.push(p);
                }
            }
            ["network", name] if valid_iface(name) => r.iface_networks.push((*name).into()),
            ["redistribute", what, ..] if valid_iface(what) => r.redistribute.push((*what).into()),
            _ => {}
        }
    }

    fn iface(&mut self, w: &[&str]) {
        let entry = self.cfg.ospf_ifaces.entry(self.iface.clone()).or_default();
        let num = |s: &str| s.parse::<u32>().ok();
        match w {
            ["ip", "ospf", "area", a] => entry.area = area(a),
            ["ip", "ospf", "cost", n] => entry.cost = num(n),
            ["ip", "ospf", "hello-interval", n] => entry.hello = num(n),
            ["ip", "ospf", "dead-interval", n] => entry.dead = num(n),
            ["ip", "ospf", "passive"] => entry.passive = true,
            _ => {}
        }
    }
}

fn next_hop(s: &str) -> bool {
    s.parse::<Ipv4Addr>().is_ok() || valid_iface(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_ospf_bgp_rip_and_static_statements() {
        let mut cfg = RoutingConfig::default();
        FrrReader::new(&mut cfg).read_text(
            "interface eth0\n ip ospf hello-interval 1\n ip ospf dead-interval 3\n ip ospf cost 20\nexit\n\
             router ospf\n network 172.16.0.0/31 area 0\n network 10.0.0.0 0.0.0.255 area 1\n passive-interface eth1\n redistribute connected\nexit\n\
             router bgp 1\n neighbor 193.10.11.2 remote-as 2\n neighbor x remote-as 3\n address-family ipv4 unicast\n  network 195.11.14.0/24\n exit-address-family\nexit\n\
             router rip\n network 10.0.0.0/8\n network eth2\nexit\nip route 0.0.0.0/0 10.0.0.254\n\
             interface eth0;reboot\n ip ospf cost 1\n",
        );
        let o = cfg.ospf.as_ref().unwrap();
        assert_eq!(
            o.networks.len(),
            1,
            "the wildcard-mask form is not a netmask"
        );
        assert_eq!(o.networks[0].1, "0");
        assert_eq!(o.passive, vec!["eth1"]);
        let e0 = &cfg.ospf_ifaces["eth0"];
        assert_eq!((e0.hello, e0.dead, e0.cost), (Some(1), Some(3), Some(20)));
        assert_eq!(
            cfg.ospf_ifaces.len(),
            1,
            "a hostile interface name is ignored"
        );
        let b = cfg.bgp.as_ref().unwrap();
        assert_eq!(b.asn, 1);
        assert_eq!(b.neighbors.len(), 1);
        assert_eq!(b.networks[0].to_string(), "195.11.14.0/24");
        let r = cfg.rip.as_ref().unwrap();
        assert_eq!(r.networks.len(), 1);
        assert_eq!(r.iface_networks, vec!["eth2"]);
        assert_eq!(cfg.static_routes[0].via, "10.0.0.254");
    }
}
