//! BGP (bgpd): configured neighbours, their sessions and what is still to be sent.
//!
//! BGP has converged when every configured neighbour is `Established` with empty message
//! queues, and every update subgroup has sent all it has to send: no coalesce timer running
//! (a new session's first UPDATE waits for it, 1 s by default), an empty packet queue and
//! advertise list, and a subgroup version that caught up with the table version (FRR bumps the
//! table version for each prefix it processes and the subgroup's when it has dealt with it).
//! Received prefixes first wait in bgpd's route-processing work queue (held 50 ms, longer under
//! load) before best-path selection bumps the table version; while any wait there, a router
//! may still have routes to pass on although every subgroup looks caught up.
//!
//! A neighbour that provably cannot come up is reported instead of waited for: its address has
//! no route (neither connected nor learned), no device of the lab owns it, the device that
//! owns it runs no bgpd, or the two configurations can never agree (AS numbers, update
//! sources, an eBGP neighbour off every connected subnet without multihop: see `bgp_config`). That proof is only as good as the routing table, which is why other
//! protocols are judged at the same time: while the IGP is still converging, the lab is not
//! ready anyway, and a peer whose route appears becomes a neighbour to wait for.
//!
//! FRR 8.4 answers `show bgp neighbors json` (address → `bgpState`, `remoteAs`),
//! `show bgp summary json` (address family → `tableVersion`, `peers` → `state`, `peerState`,
//! `inq`, `outq`) and, as text only, `show bgp <afi> <safi> update-groups` (`Coalesce Time: N`
//! with `(Running)`, `Version: N`, `Packet queue length: N`, `Advertise list: empty`) and
//! `show work-queues` (items waiting per queue; the route-processing one is `process_queue`).

use super::bgp_config::{self, BgpConfig};
use super::model::{Assessment, ProtocolItem};
use super::net::NetView;
use serde_json::Value;
use std::collections::BTreeMap;
use std::net::IpAddr;

/// One configured neighbour.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct BgpPeer {
    /// Its address, or the interface of an unnumbered neighbour.
    pub key: String,
    pub state: String,
    pub admin_down: bool,
    pub inq: u64,
    pub outq: u64,
    /// The device has a route to the peer's address (`None`: not looked up).
    pub routed: Option<bool>,
}

impl BgpPeer {
    /// The peer's address, unless it is an unnumbered (interface) neighbour.
    pub fn addr(&self) -> Option<IpAddr> {
        self.key.parse().ok()
    }
}

/// One update subgroup.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct Subgroup {
    /// `ipv4Unicast`, as in the summary.
    pub family: String,
    pub name: String,
    pub coalescing: bool,
    pub version: u64,
    pub queued: u64,
    pub advertise_empty: bool,
}

/// What one bgpd reports.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(super) struct BgpState {
    pub peers: Vec<BgpPeer>,
    /// Address family (summary key, e.g. `ipv4Unicast`) → table version.
    pub table_version: BTreeMap<String, u64>,
    pub subgroups: Vec<Subgroup>,
    /// Prefixes waiting in the route-processing work queue.
    pub processing: u64,
    /// What its running configuration says of its neighbours (read once).
    pub config: Option<BgpConfig>,
}

/// The update-groups command of a summary address family (`ipv4Unicast` →
/// `show bgp ipv4 unicast update-groups`).
pub(super) fn update_groups_command(family: &str) -> Option<String> {
    if family == "l2VpnEvpn" {
        return Some("show bgp l2vpn evpn update-groups".into());
    }
    let afi = family.get(..4).filter(|a| *a == "ipv4" || *a == "ipv6")?;
    let safi = match &family[4..] {
        "LabeledUnicast" => "labeled-unicast".to_string(),
        "" => return None,
        s => s.to_ascii_lowercase(),
    };
    Some(format!("show bgp {afi} {safi} update-groups"))
}

/// Reads `show bgp neighbors json` and `show bgp summary json`.
pub(super) fn parse(neighbors: &Value, summary: &Value) -> BgpState {
    let mut st = BgpState::default();
    for (key, n) in neighbors.as_object().into_iter().flatten() {
        if !n.is_object() {
            continue;
        }
        st.peers.push(BgpPeer {
            key: key.clone(),
            state: n["bgpState"].as_str().unwrap_or("").to_string(),
            admin_down: n["adminShutDown"].as_bool().unwrap_or(false),
            ..BgpPeer::default()
        });
    }
    for (family, body) in summary.as_object().into_iter().flatten() {
        let Some(peers) = body["peers"].as_object() else {
            continue;
        };
        st.table_version
            .insert(family.clone(), body["tableVersion"].as_u64().unwrap_or(0));
        for (key, p) in peers {
            let admin = p["peerState"].as_str() == Some("Admin")
                || p["state"].as_str().is_some_and(|s| s.contains("Admin"));
            match st.peers.iter_mut().find(|x| &x.key == key) {
                Some(x) => {
                    // The summary is the fresher answer (the neighbour list may be cached).
                    if let Some(state) = p["state"].as_str() {
                        x.state = state.split(' ').next().unwrap_or(state).to_string();
                    }
                    x.inq += p["inq"].as_u64().unwrap_or(0);
                    x.outq += p["outq"].as_u64().unwrap_or(0);
                    x.admin_down |= admin;
                }
                None => st.peers.push(BgpPeer {
                    key: key.clone(),
                    state: p["state"].as_str().unwrap_or("").to_string(),
                    admin_down: admin,
                    inq: p["inq"].as_u64().unwrap_or(0),
                    outq: p["outq"].as_u64().unwrap_or(0),
                    routed: None,
                }),
            }
        }
    }
    st
}

/// Reads the text of `show bgp <afi> <safi> update-groups` for `family`.
pub(super) fn parse_update_groups(family: &str, text: &str) -> Vec<Subgroup> {
    let mut out: Vec<Subgroup> = Vec::new();
    let mut group = String::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(g) = t.strip_prefix("Update-group ") {
            group = g.trim_end_matches(':').to_string();
        } else if let Some(s) = t.strip_prefix("Update-subgroup ") {
            out.push(Subgroup {
                family: family.to_string(),
                name: format!("update group {group}.{}", s.trim_end_matches(':')),
                ..Subgroup::default()
            });
        } else if let Some(sg) = out.last_mut() {
            if let Some(v) = t.strip_prefix("Coalesce Time:") {
                sg.coalescing = v.contains("Running");
            } else if let Some(v) = t.strip_prefix("Version:") {
                sg.version = v.trim().parse().unwrap_or(0);
            } else if let Some(v) = t.strip_prefix("Packet queue length:") {
                sg.queued = v.trim().parse().unwrap_or(0);
            } else if let Some(v) = t.strip_prefix("Advertise list:") {
                sg.advertise_empty = v.trim() == "empty";
            }
        }
    }
    out
}

/// Judges every bgpd of the lab. `nets` holds every device (hosts too: they may own a peer's
/// address); `speakers` the names of devices running bgpd.
/// Items waiting in bgpd's route-processing queue, from `show work-queues` (columns: an
/// optional `P` for a plugged queue, items, hold ms, runs, yields, three cycle counts, name).
pub(super) fn parse_work_queues(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            let numbers = usize::from(words.first() == Some(&"P"));
            let name = words.get(numbers + 8..)?.join(" ");
            if !name.starts_with("process_queue") {
                return None;
            }
            words.get(numbers)?.parse::<u64>().ok()
        })
        .sum()
}

pub(super) fn assess(
    routers: &[(&NetView, &BgpState)],
    nets: &[NetView],
    speakers: &[&str],
    a: &mut Assessment,
) {
    let configs: Vec<bgp_config::End<'_>> = routers
        .iter()
        .filter_map(|(n, st)| st.config.as_ref().map(|c| (*n, c)))
        .collect();
    for (net, st) in routers {
        let dev = net.device.as_str();
        for p in &st.peers {
            let subject = format!("peer {}", p.key);
            if p.admin_down {
                a.state(&ProtocolItem::new(
                    dev,
                    "bgpd",
                    subject,
                    "administratively down",
                ));
                continue;
            }
            if p.state == "Established" {
                if p.inq + p.outq > 0 {
                    a.block(ProtocolItem::new(
                        dev,
                        "bgpd",
                        subject,
                        format!("Established, {} messages queued", p.inq + p.outq),
                    ));
                } else {
                    a.state(&ProtocolItem::new(dev, "bgpd", subject, "Established"));
                }
                continue;
            }
            let why = why_unable(p, nets, speakers).or_else(|| {
                let ours = configs.iter().find(|(n, _)| n.device == net.device)?;
                let addr = p.addr()?;
                let theirs = configs.iter().find(|(n, _)| n.owns(addr))?;
                bgp_config::why_never(*ours, addr, *theirs)
            });
            match why {
                Some(why) => a.cannot(ProtocolItem::new(
                    dev,
                    "bgpd",
                    subject,
                    format!("{} ({why})", p.state),
                )),
                None => a.block(ProtocolItem::new(dev, "bgpd", subject, &p.state)),
            }
        }
        if st.processing > 0 {
            a.block(ProtocolItem::new(
                dev,
                "bgpd",
                "route processing",
                format!("{} prefixes waiting for best-path selection", st.processing),
            ));
        }
        for sg in &st.subgroups {
            let table = st.table_version.get(&sg.family).copied().unwrap_or(0);
            let subject = format!("{} ({})", sg.name, sg.family);
            let why = if sg.coalescing {
                Some("coalesce timer running (first UPDATE not sent yet)".to_string())
            } else if sg.version < table {
                Some(format!("at table version {} of {table}", sg.version))
            } else if sg.queued > 0 {
                Some(format!("{} packets queued", sg.queued))
            } else if !sg.advertise_empty {
                Some("advertise list not empty".to_string())
            } else {
                None
            };
            match why {
                Some(w) => a.block(ProtocolItem::new(dev, "bgpd", subject, w)),
                None => a.state(&ProtocolItem::new(dev, "bgpd", subject, "all sent")),
            }
        }
    }
}

/// Why a neighbour that is not up can never come up, if that is provable.
fn why_unable(p: &BgpPeer, nets: &[NetView], speakers: &[&str]) -> Option<String> {
    let addr = p.addr()?;
    if p.routed == Some(false) {
        return Some("no route to its address".into());
    }
    match nets.iter().find(|n| n.owns(addr)) {
        None => Some("no device of the lab has this address".into()),
        Some(owner) if !speakers.contains(&owner.device.as_str()) => {
            Some(format!("{} runs no bgpd", owner.device))
        }
        Some(_) => None,
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

    fn state(tag: &str) -> BgpState {
        let v = |f: &str| -> Value { serde_json::from_str(&data(f)).unwrap() };
        let mut st = parse(
            &v(&format!("bgp_{tag}_r3_neighbors.json")),
            &v(&format!("bgp_{tag}_r3_summary.json")),
        );
        st.subgroups = parse_update_groups(
            "ipv4Unicast",
            &data(&format!("bgp_{tag}_r3_update_groups.txt")),
        );
        st
    }

    /// The readiness test lab `bgp_unreachable_peer`, seen from r3.
    fn nets() -> Vec<NetView> {
        let d = |name: &str, addrs: &[&str]| NetView {
            device: name.into(),
            local: addrs.iter().map(|a| a.parse().unwrap()).collect(),
            ..NetView::default()
        };
        vec![
            d("r2", &["10.0.12.2", "10.0.23.1"]),
            d("r3", &["10.0.23.2", "192.168.3.1"]),
            d("h2", &["192.168.3.10"]),
        ]
    }

    #[test]
    fn a_new_session_waits_for_its_coalesce_timer() {
        let st = state("t05");
        assert_eq!(st.table_version["ipv4Unicast"], 2);
        assert_eq!(st.subgroups.len(), 1);
        assert!(st.subgroups[0].coalescing);
        let nets = nets();
        let mut a = Assessment::default();
        assess(&[(&nets[1], &st)], &nets, &["r2", "r3"], &mut a);
        let b: Vec<String> = a.blockers.iter().map(|b| b.item.to_string()).collect();
        assert_eq!(
            b,
            vec![
                "r3 bgpd update group 1.1 (ipv4Unicast): coalesce timer running (first UPDATE not sent yet)"
            ]
        );
        // The host's address: reported, not waited for.
        assert_eq!(a.unable.len(), 1);
        assert_eq!(
            a.unable[0].to_string(),
            "r3 bgpd peer 192.168.3.10: Active (h2 runs no bgpd)"
        );
    }

    #[test]
    fn everything_sent_means_converged() {
        let st = state("t07");
        let nets = nets();
        let mut a = Assessment::default();
        assess(&[(&nets[1], &st)], &nets, &["r2", "r3"], &mut a);
        assert!(a.blockers.is_empty(), "{:?}", a.blockers);
        assert_eq!(a.states["r3 bgpd peer 10.0.23.1"], "Established");
    }

    #[test]
    fn unreachable_and_unowned_peers_cannot_come_up_but_reachable_ones_are_awaited() {
        let nets = nets();
        let peer = |key: &str, routed| BgpPeer {
            key: key.into(),
            state: "Active".into(),
            routed,
            ..BgpPeer::default()
        };
        assert_eq!(
            why_unable(&peer("10.0.99.2", Some(false)), &nets, &["r2", "r3"]).as_deref(),
            Some("no route to its address")
        );
        assert_eq!(
            why_unable(&peer("10.9.9.9", Some(true)), &nets, &["r2", "r3"]).as_deref(),
            Some("no device of the lab has this address")
        );
        // r2 runs bgpd and is routed: wait for it.
        assert_eq!(
            why_unable(&peer("10.0.23.1", Some(true)), &nets, &["r2", "r3"]),
            None
        );
        // An unnumbered neighbour cannot be proven unable.
        assert_eq!(why_unable(&peer("eth0", None), &nets, &["r3"]), None);
    }

    #[test]
    fn prefixes_waiting_for_best_path_selection_hold_convergence_back() {
        let idle = data("bgp_work_queues.txt");
        assert_eq!(parse_work_queues(&idle), 0);
        let busy = idle.replace(
            "         0    50        1        0       1      1        1      1 process_queue",
            "P        3    50        1        0       1      1        1      1 process_queue",
        );
        assert_eq!(parse_work_queues(&busy), 3);
        let mut st = state("t07");
        st.processing = 3;
        let nets = nets();
        let mut a = Assessment::default();
        assess(&[(&nets[1], &st)], &nets, &["r2", "r3"], &mut a);
        let b: Vec<String> = a.blockers.iter().map(|b| b.item.to_string()).collect();
        assert_eq!(
            b,
            vec!["r3 bgpd route processing: 3 prefixes waiting for best-path selection"]
        );
    }

    #[test]
    fn update_group_commands_per_family() {
        assert_eq!(
            update_groups_command("ipv4Unicast").as_deref(),
            Some("show bgp ipv4 unicast update-groups")
        );
        assert_eq!(
            update_groups_command("ipv6Unicast").as_deref(),
            Some("show bgp ipv6 unicast update-groups")
        );
        assert_eq!(
            update_groups_command("l2VpnEvpn").as_deref(),
            Some("show bgp l2vpn evpn update-groups")
        );
        assert_eq!(update_groups_command("x"), None);
    }
}
