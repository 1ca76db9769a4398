//! The same IPv4 address on two devices of one link: the lab's own mistake, named at once.
//!
//! Two devices on one collision domain holding one address can never work as the lab means:
//! an OSPF or RIP router drops the other's packets as its own (so their adjacency never
//! forms, and readiness would wait for it until the timeout), and ARP answers for the address
//! come from either. Kathará deploys such a lab the same way; faultbench says so right after
//! the startups instead of letting the lab look slow. Each device's addresses are what the
//! kernel holds (`ip -j -4 addr show` in the device, after the startups), so addresses from
//! any source count (startup lines, ifupdown, scripts the startup runs). Interfaces lab.conf
//! does not place on a collision domain (bridges, bonds, tunnels) are left out: which link
//! they sit on is not known from lab.conf.

use super::{ProblemKind, StartupProblem};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::net::Ipv4Addr;

/// Longest `ip -j -4 addr show` output read from one device.
pub(crate) const IP_OUTPUT_CAP: usize = 1 << 20;

/// One IPv4 address of one interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct IfAddr {
    pub iface: String,
    pub addr: Ipv4Addr,
    pub prefix: u8,
}

/// Parses `ip -j -4 addr show` (interfaces with their `addr_info`); anything unexpected is
/// skipped.
pub(crate) fn parse_ip_json(text: &str) -> Vec<IfAddr> {
    let Ok(Value::Array(ifaces)) = serde_json::from_str::<Value>(text) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for i in &ifaces {
        let Some(name) = i["ifname"].as_str() else {
            continue;
        };
        for a in i["addr_info"].as_array().into_iter().flatten() {
            if a["family"].as_str() != Some("inet") {
                continue;
            }
            let (Some(addr), Some(prefix)) = (
                a["local"].as_str().and_then(|s| s.parse::<Ipv4Addr>().ok()),
                a["prefixlen"].as_u64().and_then(|p| u8::try_from(p).ok()),
            ) else {
                continue;
            };
            if !addr.is_loopback() && prefix <= 32 {
                out.push(IfAddr {
                    iface: name.to_string(),
                    addr,
                    prefix,
                });
            }
        }
    }
    out
}

/// One device as the check sees it.
pub(crate) struct Holder<'a> {
    pub device: &'a str,
    /// `ethN` → collision domain, from lab.conf.
    pub domains: &'a HashMap<String, String>,
    pub addrs: Vec<IfAddr>,
}

/// The link an interface sits on: its collision domain, `DOMAIN.V` for a VLAN sub-interface
/// `ethN.V` (VLANs of one domain are separate links).
fn link(domains: &HashMap<String, String>, iface: &str) -> Option<String> {
    match iface.split_once('.') {
        Some((base, vlan)) => domains.get(base).map(|d| format!("{d}.{vlan}")),
        None => domains.get(iface).cloned(),
    }
}

/// (device, interface, prefix length) holding an address on a link.
type Holding<'a> = (&'a str, &'a str, u8);

/// Every address held by two or more devices on one link: one problem per address, on the
/// first device (in the order given) that holds it, naming every holder.
pub(crate) fn find(holders: &[Holder<'_>]) -> Vec<StartupProblem> {
    let mut seen: BTreeMap<(String, Ipv4Addr), Vec<Holding<'_>>> = BTreeMap::new();
    for h in holders {
        for a in &h.addrs {
            if let Some(l) = link(h.domains, &a.iface) {
                let list = seen.entry((l, a.addr)).or_default();
                // One device with the address twice (two VLANs of one domain are distinct
                // links, so this is one link) is one holder.
                if !list.iter().any(|(d, _, _)| *d == h.device) {
                    list.push((h.device, &a.iface, a.prefix));
                }
            }
        }
    }
    let order = |d: &str| holders.iter().position(|h| h.device == d);
    let mut out: Vec<(Option<usize>, StartupProblem)> = seen
        .into_iter()
        .filter(|(_, list)| list.len() > 1)
        .map(|((link, addr), mut list)| {
            list.sort_by_key(|(d, _, _)| order(d));
            let (device, iface, prefix) = list[0];
            let others: Vec<String> = list[1..]
                .iter()
                .map(|(d, i, p)| format!("{d} {i} ({addr}/{p})"))
                .collect();
            (
                order(device),
                StartupProblem {
                    device: device.to_string(),
                    file: "lab.conf".to_string(),
                    line: 0,
                    kind: ProblemKind::DuplicateAddress,
                    what: format!(
                        "{device} {iface} has {addr}/{prefix}, and so does {} on the same collision domain {link}: the lab's own duplicate address (routers there cannot become neighbours; either device answers for {addr})",
                        others.join(", ")
                    ),
                },
            )
        })
        .collect();
    out.sort_by_key(|(o, _)| *o);
    out.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn domains(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs
            .iter()
            .map(|(i, d)| (i.to_string(), d.to_string()))
            .collect()
    }

    fn addr(iface: &str, a: &str) -> IfAddr {
        let (ip, p) = a.split_once('/').unwrap();
        IfAddr {
            iface: iface.into(),
            addr: ip.parse().unwrap(),
            prefix: p.parse().unwrap(),
        }
    }

    #[test]
    fn reads_ip_json() {
        let text = r#"[{"ifindex":1,"ifname":"lo","addr_info":[{"family":"inet","local":"127.0.0.1","prefixlen":8}]},
            {"ifindex":2,"ifname":"eth0","addr_info":[{"family":"inet","local":"220.0.0.1","prefixlen":30},{"family":"inet","local":"bogus","prefixlen":30}]},
            {"ifindex":3,"ifname":"eth1","addr_info":[{"family":"inet","local":"10.0.0.1","prefixlen":99}]}]"#;
        assert_eq!(parse_ip_json(text), vec![addr("eth0", "220.0.0.1/30")]);
        assert!(parse_ip_json("not json").is_empty());
        assert!(parse_ip_json(r#"{"ifname":"eth0"}"#).is_empty());
    }

    #[test]
    fn the_same_address_on_one_link_is_named_with_both_holders() {
        // As in a census lab: r4 and r6 both give themselves 220.0.0.1/30 on link B; r1 has
        // 100.0.2.1 on link E and r2 the same on link H (different links: not a duplicate here).
        let d4 = domains(&[("eth0", "A"), ("eth1", "B")]);
        let d6 = domains(&[("eth0", "B")]);
        let d1 = domains(&[("eth0", "E")]);
        let d2 = domains(&[("eth0", "H")]);
        let holders = [
            Holder {
                device: "r1",
                domains: &d1,
                addrs: vec![addr("eth0", "100.0.2.1/24")],
            },
            Holder {
                device: "r2",
                domains: &d2,
                addrs: vec![addr("eth0", "100.0.2.1/24")],
            },
            Holder {
                device: "r4",
                domains: &d4,
                addrs: vec![addr("eth0", "10.0.0.1/24"), addr("eth1", "220.0.0.1/30")],
            },
            Holder {
                device: "r6",
                domains: &d6,
                addrs: vec![addr("eth0", "220.0.0.1/30"), addr("br0", "10.0.0.1/24")],
            },
        ];
        let p = find(&holders);
        assert_eq!(p.len(), 1, "{p:#?}");
        assert_eq!(p[0].device, "r4");
        assert_eq!(p[0].kind, ProblemKind::DuplicateAddress);
        assert!(
            p[0].what.starts_with(
                "r4 eth1 has 220.0.0.1/30, and so does r6 eth0 (220.0.0.1/30) on the same collision domain B"
            ),
            "{}",
            p[0].what
        );
    }

    #[test]
    fn vlans_of_one_domain_are_separate_links() {
        let d = domains(&[("eth0", "T")]);
        let holders = [
            Holder {
                device: "s1",
                domains: &d,
                addrs: vec![addr("eth0.10", "192.168.0.1/24")],
            },
            Holder {
                device: "s2",
                domains: &d,
                addrs: vec![addr("eth0.20", "192.168.0.1/24")],
            },
        ];
        assert!(find(&holders).is_empty());
        let holders = [
            Holder {
                device: "s1",
                domains: &d,
                addrs: vec![addr("eth0.10", "192.168.0.1/24")],
            },
            Holder {
                device: "s2",
                domains: &d,
                addrs: vec![addr("eth0.10", "192.168.0.1/24")],
            },
        ];
        assert_eq!(find(&holders).len(), 1);
    }
}
