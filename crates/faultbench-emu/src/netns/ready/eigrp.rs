//! EIGRP (eigrpd): what its state shows.
//!
//! EIGRP sends its updates at once and reliably, so its state says enough: every router that
//! shares a segment with another EIGRP router of the same AS has it as a neighbour, no
//! neighbour has unacknowledged packets queued (`Q Cnt`), and every topology entry is Passive
//! (none Active, waiting for replies to a query). The lab's quiet period covers the rest.
//!
//! FRR 8.4 has no JSON for EIGRP: this reads the text of `show ip eigrp neighbors` and
//! `show ip eigrp topology`, and the `router eigrp` section of the running configuration for
//! the interfaces EIGRP runs on (`network` statements, `passive-interface`).

use super::model::{Assessment, ProtocolItem};
use super::net::{IpNet, NetView, same_segment};
use std::net::IpAddr;

/// The configuration of `router eigrp` that decides where EIGRP runs.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct EigrpConfig {
    pub asn: u32,
    pub networks: Vec<IpNet>,
    pub passive: Vec<String>,
}

/// What one eigrpd reports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct EigrpState {
    pub config: EigrpConfig,
    /// (address, interface, packets queued).
    pub neighbours: Vec<(IpAddr, String, u64)>,
    /// Topology entries that are not Passive: (prefix, code).
    pub unsettled: Vec<(String, String)>,
}

/// Reads `router eigrp` from a running configuration (`None` without one).
pub(super) fn parse_config(config: &str) -> Option<EigrpConfig> {
    let mut out: Option<EigrpConfig> = None;
    let mut inside = false;
    for line in config.lines() {
        let t = line.trim();
        if let Some(asn) = t.strip_prefix("router eigrp ") {
            inside = true;
            out = Some(EigrpConfig {
                asn: asn.split_whitespace().next()?.parse().ok()?,
                ..EigrpConfig::default()
            });
        } else if !line.starts_with(' ') {
            inside = false;
        } else if inside && let Some(c) = out.as_mut() {
            if let Some(n) = t.strip_prefix("network ").and_then(IpNet::parse) {
                c.networks.push(n);
            } else if let Some(i) = t.strip_prefix("passive-interface ") {
                c.passive.push(i.trim().to_string());
            }
        }
    }
    out
}

/// Reads `show ip eigrp neighbors`.
pub(super) fn parse_neighbours(text: &str) -> Vec<(IpAddr, String, u64)> {
    text.lines()
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            let addr = w.get(1)?.parse().ok()?;
            w.first()?.parse::<u32>().ok()?;
            Some((addr, w.get(2)?.to_string(), w.get(7)?.parse().unwrap_or(0)))
        })
        .collect()
}

/// Reads `show ip eigrp topology`: the entries that are not Passive.
pub(super) fn parse_topology(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            let code = w.next()?;
            let prefix = w.next()?.trim_end_matches(',');
            let is_entry = code.len() <= 2
                && code.chars().all(|c| "PAUQRrs".contains(c))
                && IpNet::parse(prefix).is_some();
            (is_entry && code != "P").then(|| (prefix.to_string(), code.to_string()))
        })
        .collect()
}

/// The interfaces of `net` EIGRP runs on and speaks from, with their address.
fn speaking(net: &NetView, c: &EigrpConfig) -> Vec<(String, IpNet)> {
    let mut out = Vec::new();
    for (name, addrs) in &net.ifaces {
        if c.passive.contains(name) {
            continue;
        }
        if let Some(a) = addrs
            .iter()
            .find(|a| a.addr.is_ipv4() && c.networks.iter().any(|n| n.contains(a.addr)))
        {
            out.push((name.clone(), *a));
        }
    }
    out.sort_by(|x, y| x.0.cmp(&y.0));
    out
}

/// Judges every eigrpd of the lab.
pub(super) fn assess(routers: &[(&NetView, &EigrpState)], a: &mut Assessment) {
    for (i, (net, st)) in routers.iter().enumerate() {
        let dev = net.device.as_str();
        for (name, addr) in speaking(net, &st.config) {
            for (j, (pnet, p)) in routers.iter().enumerate() {
                if i == j {
                    continue;
                }
                for (pname, paddr) in speaking(pnet, &p.config) {
                    if !same_segment(net, &name, Some(&addr), pnet, &pname, Some(&paddr)) {
                        continue;
                    }
                    if st.config.asn != p.config.asn {
                        if i < j {
                            a.cannot(ProtocolItem::new(
                                dev,
                                "eigrpd",
                                format!("{name} and {} {pname}", pnet.device),
                                format!(
                                    "share a segment but cannot become neighbours (AS {} and {})",
                                    st.config.asn, p.config.asn
                                ),
                            ));
                        }
                        continue;
                    }
                    let subject = format!("neighbour {} ({name})", paddr.addr);
                    if st.neighbours.iter().any(|(x, _, _)| *x == paddr.addr) {
                        a.state(&ProtocolItem::new(dev, "eigrpd", subject, "up"));
                    } else {
                        a.block(ProtocolItem::new(
                            dev,
                            "eigrpd",
                            subject,
                            format!("{} not a neighbour yet", pnet.device),
                        ));
                    }
                }
            }
        }
        for (addr, iface, q) in &st.neighbours {
            if *q > 0 {
                a.block(ProtocolItem::new(
                    dev,
                    "eigrpd",
                    format!("neighbour {addr} ({iface})"),
                    format!("{q} packets unacknowledged"),
                ));
            }
        }
        for (prefix, code) in &st.unsettled {
            a.block(ProtocolItem::new(
                dev,
                "eigrpd",
                format!("route {prefix}"),
                format!("{code} (not Passive)"),
            ));
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

    #[test]
    fn reads_neighbours_topology_and_config() {
        let n = parse_neighbours(&data("eigrp_neighbors.txt"));
        assert_eq!(n.len(), 2, "{n:?}");
        assert!(n.contains(&("112.1.1.2".parse().unwrap(), "eth0".to_string(), 0)));
        let topo = data("eigrp_topology.txt");
        assert!(parse_topology(&topo).is_empty());
        let active = topo.replacen("P  102.1.1.0/24", "A  102.1.1.0/24", 1);
        assert_eq!(
            parse_topology(&active),
            vec![("102.1.1.0/24".to_string(), "A".to_string())]
        );
        let c = parse_config("router eigrp 100\n network 112.0.0.0/8\n network 103.0.0.0/8\n passive-interface eth1\nexit\n!\nrouter ospf\n network 1.0.0.0/8 area 0\n").unwrap();
        assert_eq!(
            (c.asn, c.networks.len(), c.passive.clone()),
            (100, 2, vec!["eth1".to_string()])
        );
        assert_eq!(parse_config("router ospf\n"), None);
    }

    #[test]
    fn a_missing_neighbour_on_a_shared_segment_blocks() {
        // Kath5's r11 and r12 on collision domain between them (112.0.0.0/8).
        let net = |d: &str, a: &str| NetView {
            device: d.into(),
            domains: [("eth0".to_string(), "K".to_string())]
                .into_iter()
                .collect(),
            ifaces: [("eth0".to_string(), vec![IpNet::parse(a).unwrap()])]
                .into_iter()
                .collect(),
            ..NetView::default()
        };
        let (n11, n12) = (net("r11", "112.1.1.1/8"), net("r12", "112.1.1.2/8"));
        let config = parse_config("router eigrp 100\n network 112.0.0.0/8\n").unwrap();
        let s11 = EigrpState {
            config: config.clone(),
            ..EigrpState::default()
        };
        let s12 = EigrpState {
            config,
            neighbours: vec![("112.1.1.1".parse().unwrap(), "eth0".into(), 0)],
            unsettled: vec![],
        };
        let mut a = Assessment::default();
        assess(&[(&n11, &s11), (&n12, &s12)], &mut a);
        let b: Vec<String> = a.blockers.iter().map(|b| b.item.to_string()).collect();
        assert_eq!(
            b,
            vec!["r11 eigrpd neighbour 112.1.1.2 (eth0): r12 not a neighbour yet"]
        );
    }
}
