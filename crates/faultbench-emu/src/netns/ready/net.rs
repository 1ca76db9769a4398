//! Where devices meet: interfaces, their addresses and the collision domains they sit on.
//!
//! Protocol checks need to know which routers *should* become neighbours (an OSPF interface
//! with nobody on its segment may stay `Waiting` forever without harm; one that shares a
//! segment with another OSPF router may not) and who owns an address (a BGP peer whose address
//! belongs to a device without bgpd can never come up). Two interfaces share a segment when
//! lab.conf puts them on the same collision domain (`ethN`, or `ethN.V` for VLAN V on it) and
//! their subnets agree; interfaces lab.conf does not know (bridges, bonds, SVIs made by the
//! startup files) share a segment when their subnets are equal.

use serde_json::Value;
use std::collections::HashMap;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An address with its prefix length, e.g. `10.0.12.1/30`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct IpNet {
    pub addr: IpAddr,
    pub prefix: u8,
}

impl IpNet {
    /// Parses `10.0.12.1/30` (a bare address counts as a host prefix).
    pub fn parse(s: &str) -> Option<IpNet> {
        let (a, p) = s.split_once('/').unwrap_or((s, ""));
        let addr: IpAddr = a.trim().parse().ok()?;
        let max = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = if p.is_empty() { max } else { p.parse().ok()? };
        (prefix <= max).then_some(IpNet { addr, prefix })
    }

    /// The network address (host bits cleared).
    pub fn network(&self) -> IpAddr {
        match self.addr {
            IpAddr::V4(a) => {
                let bits = u32::from(a);
                let mask = u32::MAX
                    .checked_shl(32 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V4(Ipv4Addr::from(bits & mask))
            }
            IpAddr::V6(a) => {
                let bits = u128::from(a);
                let mask = u128::MAX
                    .checked_shl(128 - u32::from(self.prefix))
                    .unwrap_or(0);
                IpAddr::V6(Ipv6Addr::from(bits & mask))
            }
        }
    }

    /// `ip` lies in this subnet.
    pub fn contains(&self, ip: IpAddr) -> bool {
        IpNet {
            addr: ip,
            prefix: self.prefix,
        }
        .network()
            == self.network()
            && ip.is_ipv4() == self.addr.is_ipv4()
    }

    /// Same network address and prefix length.
    pub fn same_subnet(&self, other: &IpNet) -> bool {
        self.prefix == other.prefix && self.network() == other.network()
    }
}

impl std::fmt::Display for IpNet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.addr, self.prefix)
    }
}

/// One device's view of the network: its interfaces (as zebra reports them), the collision
/// domain of each lab.conf interface, and every address it owns.
#[derive(Debug, Clone, Default)]
pub(super) struct NetView {
    pub device: String,
    /// `ethN` → collision domain, from lab.conf.
    pub domains: HashMap<String, String>,
    /// Interface → addresses (from zebra's `show interface brief json`; empty without zebra).
    pub ifaces: HashMap<String, Vec<IpNet>>,
    /// Every address of the device (from the kernel, so hosts without FRR have them too).
    pub local: Vec<IpAddr>,
    /// IPv6 link-local addresses and their interfaces (RIPng and OSPFv3 speak from them).
    pub link_local: Vec<(Ipv6Addr, String)>,
}

impl NetView {
    /// A device of a test lab from `(interface, collision domain, address/prefix)` triples.
    #[cfg(test)]
    pub fn for_test(device: &str, ifs: &[(&str, &str, &str)]) -> NetView {
        NetView {
            device: device.into(),
            domains: ifs
                .iter()
                .map(|(i, d, _)| (i.to_string(), d.to_string()))
                .collect(),
            ifaces: ifs
                .iter()
                .map(|(i, _, a)| (i.to_string(), vec![IpNet::parse(a).unwrap()]))
                .collect(),
            ..NetView::default()
        }
    }

    /// The segment an interface sits on: its collision domain, with `.V` for a VLAN
    /// sub-interface `ethN.V`; `None` for interfaces lab.conf does not know.
    pub fn segment(&self, ifname: &str) -> Option<String> {
        let (base, vlan) = match ifname.split_once('.') {
            Some((b, v)) => (b, Some(v)),
            None => (ifname, None),
        };
        let domain = self.domains.get(base)?;
        Some(match vlan {
            Some(v) => format!("{domain}.{v}"),
            None => domain.clone(),
        })
    }

    /// The interface's addresses of one family.
    pub fn addrs(&self, ifname: &str, v4: bool) -> Vec<IpNet> {
        self.ifaces
            .get(ifname)
            .map(|a| {
                a.iter()
                    .filter(|n| n.addr.is_ipv4() == v4)
                    .copied()
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The device owns `ip`.
    pub fn owns(&self, ip: IpAddr) -> bool {
        self.local.contains(&ip) || self.ifaces.values().flatten().any(|n| n.addr == ip)
    }

    /// The interface holding link-local address `ip`.
    pub fn link_local_iface(&self, ip: Ipv6Addr) -> Option<&str> {
        self.link_local
            .iter()
            .find(|(a, _)| *a == ip)
            .map(|(_, i)| i.as_str())
    }
}

/// Do interface `a_if` of `a` (address `a_addr`) and `b_if` of `b` sit on one segment?
/// Known collision domains must be equal; subnets, when both are known, too. Interfaces
/// lab.conf does not know are matched on their subnets alone.
pub(super) fn same_segment(
    a: &NetView,
    a_if: &str,
    a_addr: Option<&IpNet>,
    b: &NetView,
    b_if: &str,
    b_addr: Option<&IpNet>,
) -> bool {
    if a.device == b.device {
        return false;
    }
    let subnets = match (a_addr, b_addr) {
        (Some(x), Some(y)) => Some(
            x.network()
                == IpNet {
                    addr: y.addr,
                    prefix: x.prefix,
                }
                .network(),
        ),
        _ => None,
    };
    match (a.segment(a_if), b.segment(b_if)) {
        (Some(x), Some(y)) => x == y && subnets != Some(false),
        _ => subnets == Some(true) && a_addr.map(|x| x.prefix) == b_addr.map(|y| y.prefix),
    }
}

/// Parses zebra's `show interface brief json`: interface → addresses.
pub(super) fn parse_interface_brief(v: &Value) -> HashMap<String, Vec<IpNet>> {
    let mut out = HashMap::new();
    if let Some(m) = v.as_object() {
        for (name, i) in m {
            let addrs = i["addresses"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().and_then(IpNet::parse))
                        .collect()
                })
                .unwrap_or_default();
            out.insert(name.clone(), addrs);
        }
    }
    out
}

/// The local addresses of a network namespace: IPv4 from `/proc/PID/net/fib_trie` (entries
/// marked `/32 host LOCAL`), IPv6 from `/proc/PID/net/if_inet6`; and the link-local ones with
/// their interfaces.
pub(super) fn parse_local_addrs(
    fib_trie: &str,
    if_inet6: &str,
) -> (Vec<IpAddr>, Vec<(Ipv6Addr, String)>) {
    let mut out = Vec::new();
    let mut link_local = Vec::new();
    let mut last: Option<Ipv4Addr> = None;
    for line in fib_trie.lines() {
        let t = line.trim_start_matches([' ', '|', '+', '-']).trim();
        if let Ok(a) = t.parse::<Ipv4Addr>() {
            last = Some(a);
        } else if t.starts_with("/32 host LOCAL")
            && let Some(a) = last
            && !a.is_loopback()
            && !out.contains(&IpAddr::V4(a))
        {
            out.push(IpAddr::V4(a));
        }
    }
    for line in if_inet6.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(bits) = words.first().and_then(|h| u128::from_str_radix(h, 16).ok()) else {
            continue;
        };
        let a = Ipv6Addr::from(bits);
        if a.is_loopback() {
            continue;
        }
        out.push(IpAddr::V6(a));
        if a.is_unicast_link_local()
            && let Some(ifname) = words.get(5)
        {
            link_local.push((a, ifname.to_string()));
        }
    }
    (out, link_local)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dev(name: &str, domains: &[(&str, &str)], ifaces: &[(&str, &str)]) -> NetView {
        NetView {
            device: name.into(),
            domains: domains
                .iter()
                .map(|(i, d)| (i.to_string(), d.to_string()))
                .collect(),
            ifaces: ifaces
                .iter()
                .map(|(i, a)| (i.to_string(), vec![IpNet::parse(a).unwrap()]))
                .collect(),
            local: Vec::new(),
            link_local: Vec::new(),
        }
    }

    #[test]
    fn subnets_and_networks() {
        let n = IpNet::parse("10.0.12.1/30").unwrap();
        assert_eq!(n.network().to_string(), "10.0.12.0");
        assert!(n.contains("10.0.12.2".parse().unwrap()));
        assert!(!n.contains("10.0.12.5".parse().unwrap()));
        assert!(n.same_subnet(&IpNet::parse("10.0.12.2/30").unwrap()));
        assert!(!n.same_subnet(&IpNet::parse("10.0.12.2/24").unwrap()));
        let v6 = IpNet::parse("2001:db8::1/64").unwrap();
        assert_eq!(v6.network().to_string(), "2001:db8::");
        assert_eq!(
            IpNet::parse("0.0.0.0/0").unwrap().network().to_string(),
            "0.0.0.0"
        );
        assert!(IpNet::parse("10.0.0.1/33").is_none());
        assert!(IpNet::parse("eth0").is_none());
    }

    #[test]
    fn segments_follow_collision_domains_then_subnets() {
        // Kath5 gives r1's and r3's LANs the same address on different collision domains.
        let r1 = dev(
            "r1",
            &[("eth5", "F"), ("eth0", "A")],
            &[("eth5", "30.1.1.1/8"), ("eth0", "12.1.1.1/8")],
        );
        let r3 = dev("r3", &[("eth4", "N")], &[("eth4", "30.1.1.1/8")]);
        let r2 = dev("r2", &[("eth0", "A")], &[("eth0", "12.1.1.2/8")]);
        let a = |d: &NetView, i: &str| d.addrs(i, true).first().copied();
        assert!(!same_segment(
            &r1,
            "eth5",
            a(&r1, "eth5").as_ref(),
            &r3,
            "eth4",
            a(&r3, "eth4").as_ref()
        ));
        assert!(same_segment(
            &r1,
            "eth0",
            a(&r1, "eth0").as_ref(),
            &r2,
            "eth0",
            a(&r2, "eth0").as_ref()
        ));
        // Interfaces made by startup files (no collision domain): subnets decide.
        let s1 = dev("s1", &[], &[("vlan10", "192.168.10.1/24")]);
        let s2 = dev("s2", &[("eth0", "T")], &[("eth0.10", "192.168.10.2/24")]);
        assert_eq!(s2.segment("eth0.10").as_deref(), Some("T.10"));
        assert!(same_segment(
            &s1,
            "vlan10",
            a(&s1, "vlan10").as_ref(),
            &s2,
            "eth0.10",
            a(&s2, "eth0.10").as_ref()
        ));
    }

    #[test]
    fn reads_zebra_interfaces_and_kernel_addresses() {
        let v: Value =
            serde_json::from_str(include_str!("testdata/zebra_interface_brief.json")).unwrap();
        let ifaces = parse_interface_brief(&v);
        assert_eq!(ifaces["eth0"][0].to_string(), "112.1.1.1/8");
        let trie = "Main:\n  +-- 0.0.0.0/0 3 0 5\n     |-- 10.0.12.0\n        /30 link UNICAST\n     |-- 10.0.12.1\n        /32 host LOCAL\nLocal:\n     |-- 10.0.12.1\n        /32 host LOCAL\n     |-- 127.0.0.1\n        /32 host LOCAL\n";
        let v6 = "20010db8000000000000000000000001 02 40 00 80 eth0\n00000000000000000000000000000001 01 80 10 80 lo\n";
        let (local, _) = parse_local_addrs(trie, v6);
        assert_eq!(
            local,
            vec![
                "10.0.12.1".parse::<IpAddr>().unwrap(),
                "2001:db8::1".parse().unwrap()
            ]
        );
        let (_, ll) = parse_local_addrs("", include_str!("testdata/ripng_r2_if_inet6.txt"));
        assert!(ll.contains(&(
            "fe80::8844:9ff:fea1:540b".parse().unwrap(),
            "eth1".to_string()
        )));
        assert_eq!(ll.len(), 3);
    }
}
