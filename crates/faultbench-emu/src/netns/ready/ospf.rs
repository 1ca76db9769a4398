//! OSPFv2 (ospfd): reading FRR's JSON into the link-state model of [`super::linkstate`].
//!
//! Three commands, as FRR 8.4 answers them: `show ip ospf json` (router id; `spfTimerDueInMsecs`
//! only while an SPF run is scheduled; `spfLastExecutedMsecs`, the time since the last run; per
//! area the number of LSAs of each type and the sum of their checksums — a digest of the
//! database, since a checksum covers the sequence number — and the same for AS-external LSAs), `show ip ospf interface json` (`interfaces` → name →
//! `state`, `area`, `ipAddress`/`ipAddressPrefixlen`, `networkType`, `timerMsecs` (hello),
//! `timerDeadSecs`, `timerPassiveIface`, `nbrCount`, `vlinkPeer`), `show ip ospf neighbor json`
//! (`neighbors` → router id → list of `nbrState` = `State/Role`, `ifaceName` = `eth0:10.0.12.1`,
//! `retransmitCounter`, `requestCounter`, `dbSummaryCounter`).

use super::linkstate::{LinkState, LsIface, LsNeighbour, digest};
use super::net::IpNet;
use serde_json::Value;

/// The commands to send, in the order [`parse`] takes their answers.
pub(super) const COMMANDS: [&str; 3] = [
    "show ip ospf json",
    "show ip ospf interface json",
    "show ip ospf neighbor json",
];

/// Builds the model from the four answers; `None` when no OSPF instance is configured.
pub(super) fn parse(instance: &Value, interfaces: &Value, neighbours: &Value) -> Option<LinkState> {
    let router_id = instance["routerId"].as_str()?.to_string();
    let mut st = LinkState {
        router_id,
        spf_due_ms: instance["spfTimerDueInMsecs"].as_u64(),
        spf_last_ms: instance["spfLastExecutedMsecs"].as_u64(),
        ..LinkState::default()
    };
    if let Some(m) = interfaces["interfaces"].as_object() {
        for (name, i) in m {
            if i["ifUp"] == Value::Bool(false) || i["ospfEnabled"] == Value::Bool(false) {
                continue;
            }
            let addr = i["ipAddress"].as_str().and_then(|a| {
                IpNet::parse(&format!(
                    "{a}/{}",
                    i["ipAddressPrefixlen"].as_u64().unwrap_or(32)
                ))
            });
            st.ifaces.push(LsIface {
                name: name.clone(),
                state: i["state"].as_str().unwrap_or("").to_string(),
                area: i["area"].as_str().unwrap_or("").to_string(),
                addr,
                passive: i["timerPassiveIface"].as_bool().unwrap_or(false),
                hello_ms: i["timerMsecs"].as_u64().unwrap_or(0),
                dead_s: i["timerDeadSecs"].as_u64().unwrap_or(0),
                network_type: i["networkType"].as_str().unwrap_or("").to_ascii_uppercase(),
                nbr_count: i["nbrCount"].as_u64().unwrap_or(0),
                vlink_peer: i["vlinkPeer"].as_str().map(str::to_string),
            });
        }
    }
    if let Some(m) = neighbours["neighbors"].as_object() {
        for (rid, list) in m {
            for n in list.as_array().into_iter().flatten() {
                let full = n["nbrState"].as_str().unwrap_or("");
                let (state, role) = full.split_once('/').unwrap_or((full, ""));
                let iface = n["ifaceName"].as_str().unwrap_or("");
                st.neighbours.push(LsNeighbour {
                    router_id: rid.clone(),
                    state: state.to_string(),
                    role: role.to_string(),
                    iface: iface.split(':').next().unwrap_or(iface).to_string(),
                    address: n["ifaceAddress"].as_str().unwrap_or("").to_string(),
                    retransmit: n["retransmitCounter"].as_u64().unwrap_or(0),
                    request: n["requestCounter"].as_u64().unwrap_or(0),
                    summary: n["dbSummaryCounter"].as_u64().unwrap_or(0),
                });
            }
        }
    }
    for (area, body) in instance["areas"].as_object().into_iter().flatten() {
        st.area_db
            .insert(area.clone(), counters_digest(body, "lsa"));
    }
    st.as_db = counters_digest(instance, "lsaAs") ^ counters_digest(instance, "lsaExternal");
    st.as_lsas = instance["lsaExternalCounter"].as_u64().unwrap_or(0)
        + instance["lsaAsopaqueCounter"].as_u64().unwrap_or(0);
    st.externals = instance["lsaExternalCounter"].as_u64().unwrap_or(0)
        + instance["areas"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(_, a)| a["lsaNssaNumber"].as_u64())
            .sum::<u64>();
    Some(st)
}

/// The `network PREFIX area AREA` statements of `router ospf` (the default instance) in
/// ospfd's running configuration.
pub(super) fn network_statements(config: &str) -> Vec<(IpNet, String)> {
    let mut out = Vec::new();
    let mut inside = false;
    for line in config.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        if !line.starts_with(' ') {
            inside = w.as_slice() == ["router", "ospf"];
            continue;
        }
        if inside
            && let ["network", prefix, "area", area] = w.as_slice()
            && let Some(net) = IpNet::parse(prefix)
        {
            out.push((net, area.to_string()));
        }
    }
    out
}

/// Digest of the LSA counters and checksum sums whose names start with `prefix` (link-local
/// opaque LSAs excluded: they differ between the links of one router by design).
fn counters_digest(v: &Value, prefix: &str) -> u64 {
    let mut fields: Vec<String> = v
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.starts_with(prefix) && !k.starts_with("lsaOpaqueLink"))
        .map(|(k, x)| format!("{k}={x}"))
        .collect();
    digest(&mut fields)
}

#[cfg(test)]
mod tests {
    use super::super::linkstate::assess;
    use super::super::model::Assessment;
    use super::super::net::NetView;
    use super::*;

    fn load(tag: &str, r: &str) -> LinkState {
        let f = |n: &str| -> Value {
            let path = format!(
                "{}/src/netns/ready/testdata/ospf_bcast_{tag}_{r}_{n}.json",
                env!("CARGO_MANIFEST_DIR")
            );
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
        };
        parse(&f("instance"), &f("interface"), &f("neighbor")).unwrap()
    }

    /// The readiness test lab `ospf_broadcast`: r1, r2, r3 in a triangle of /30 veths.
    fn nets() -> Vec<NetView> {
        let d = NetView::for_test;
        vec![
            d(
                "r1",
                &[
                    ("eth0", "R1R2", "10.0.12.1/30"),
                    ("eth1", "R1R3", "10.0.13.1/30"),
                    ("eth2", "LAN1", "192.168.1.1/24"),
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
                    ("eth1", "R1R3", "10.0.13.2/30"),
                    ("eth2", "LAN3", "192.168.3.1/24"),
                ],
            ),
        ]
    }

    fn judge(tag: &str) -> Assessment {
        let nets = nets();
        let states: Vec<LinkState> = ["r1", "r2", "r3"].iter().map(|r| load(tag, r)).collect();
        let pairs: Vec<(&NetView, &LinkState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ospfd", &pairs, &mut a);
        a
    }

    fn blockers(a: &Assessment) -> Vec<String> {
        a.blockers.iter().map(|b| b.item.to_string()).collect()
    }

    #[test]
    fn parses_frr_8_4_interfaces_neighbours_and_timers() {
        let r1 = load("t02", "r1");
        assert_eq!(r1.router_id, "1.1.1.1");
        let eth0 = r1.ifaces.iter().find(|i| i.name == "eth0").unwrap();
        assert_eq!(
            (eth0.state.as_str(), eth0.hello_ms, eth0.dead_s),
            ("Waiting", 1000, 3)
        );
        assert_eq!(eth0.addr.unwrap().to_string(), "10.0.12.1/30");
        let lan = r1.ifaces.iter().find(|i| i.name == "eth2").unwrap();
        assert_eq!((lan.hello_ms, lan.dead_s), (10000, 40));
        assert_eq!(r1.neighbours.len(), 1);
        let n = &r1.neighbours[0];
        assert_eq!(
            (
                n.router_id.as_str(),
                n.state.as_str(),
                n.role.as_str(),
                n.iface.as_str()
            ),
            ("2.2.2.2", "Init", "DROther", "eth0")
        );
    }

    #[test]
    fn interfaces_waiting_for_their_late_dead_interval_block_but_the_lonely_lan_does_not() {
        // 2.8 s after start: every router interface is Waiting (FRR started its wait timer
        // with the default 40 s), r1 has heard only r2 on eth0, nobody on eth1 yet.
        let a = judge("t02");
        let b = blockers(&a);
        assert!(
            b.iter()
                .any(|x| x == "r1 ospfd interface eth1: Waiting: no neighbour r3 (10.0.13.2) yet"),
            "{b:#?}"
        );
        assert!(
            b.iter()
                .any(|x| x.starts_with("r1 ospfd interface eth0: Waiting (DR election")),
            "{b:#?}"
        );
        assert!(
            b.iter()
                .any(|x| x == "r1 ospfd neighbour 2.2.2.2 (eth0): Init/DROther"),
            "{b:#?}"
        );
        // The host LAN (eth2) is Waiting too, with nobody to elect: no blocker.
        assert!(!b.iter().any(|x| x.contains("eth2")), "{b:#?}");
        assert!(a.unable.is_empty());
    }

    #[test]
    fn a_newer_lsa_not_yet_flooded_blocks() {
        // 53 s: r1 holds its router-LSA #8 while r2 still has #7 (r2 discarded #8, which
        // arrived within MinLSArrival); r1 keeps it on r2's retransmission list.
        let a = judge("t53");
        let b = blockers(&a);
        assert!(
            b.iter().any(
                |x| x.starts_with("r1 ospfd neighbour 2.2.2.2 (eth0): Full/DR, ")
                    && x.ends_with("LSAs awaiting acknowledgement")
            ),
            "{b:#?}"
        );
    }

    #[test]
    fn unacknowledged_duplicates_do_not_block() {
        // 58 s: every database holds the same instances; r1 still waits for r2's ack of one
        // LSA, which r2 already has. Routing is final.
        let r1 = load("t58", "r1");
        assert!(r1.neighbours.iter().any(|n| n.retransmit > 0));
        let a = judge("t58");
        assert!(a.blockers.is_empty(), "{:#?}", blockers(&a));
        assert_eq!(a.states["r1 ospfd interface eth0"], "Backup");
        assert_eq!(a.states["r1 ospfd neighbour 2.2.2.2 (eth0)"], "Full/DR");
    }

    #[test]
    fn a_converged_lab_has_no_blockers() {
        let a = judge("t63");
        assert!(a.blockers.is_empty(), "{:#?}", blockers(&a));
    }

    /// Issue 29: a lab redistributing RIP into OSPF was declared ready while r3 held the
    /// border's AS-external LSAs but not their routes: ospfd computes them 1 s after the SPF run.
    #[test]
    fn external_routes_are_awaited_until_their_timer_fired_after_the_last_spf_run() {
        let nets = nets();
        let with = |externals: u64, spf_last: u64| {
            let mut states: Vec<LinkState> =
                ["r1", "r2", "r3"].iter().map(|r| load("t63", r)).collect();
            states[2].externals = externals;
            states[2].spf_last_ms = Some(spf_last);
            let pairs: Vec<(&NetView, &LinkState)> = nets.iter().zip(states.iter()).collect();
            let mut a = Assessment::default();
            assess("ospfd", &pairs, &mut a);
            // A timer: shown, but its coming and going is no state change of the lab.
            let key = "r3 ospfd external routes";
            assert_eq!(a.timers.contains_key(key), !a.blockers.is_empty());
            assert!(!a.states.contains_key(key));
            blockers(&a)
        };
        assert_eq!(
            with(2, 400),
            vec![
                "r3 ospfd external routes: not computed yet (2 external LSAs; their routes follow each SPF run by 1 s)"
            ]
        );
        assert!(with(2, 1500).is_empty());
        assert!(with(0, 400).is_empty(), "no externals, nothing to wait for");
        // The counters come from `show ip ospf json`: AS-external plus every area's NSSA LSAs.
        let mut v: Value = serde_json::from_str(
            &std::fs::read_to_string(format!(
                "{}/src/netns/ready/testdata/ospf_bcast_t63_r1_instance.json",
                env!("CARGO_MANIFEST_DIR")
            ))
            .unwrap(),
        )
        .unwrap();
        v["lsaExternalCounter"] = 3.into();
        v["areas"]["0.0.0.0"]["lsaNssaNumber"] = 1.into();
        let st = parse(&v, &Value::Null, &Value::Null).unwrap();
        assert_eq!((st.externals, st.spf_last_ms), (4, Some(11054)));
    }

    #[test]
    fn network_statements_that_match_no_interface_are_reported() {
        let config = "hostname r1\n!\ninterface eth0\n ip ospf hello-interval 1\nexit\n!\nrouter ospf\n ospf router-id 1.1.1.1\n network 10.0.0.0/16 area 0\n network 172.16.9.0/24 area 0.0.0.1\nexit\n!\nrouter ospf vrf blue\n network 9.0.0.0/8 area 0\nexit\n";
        let n = network_statements(config);
        assert_eq!(
            n.iter()
                .map(|(p, a)| format!("{p} {a}"))
                .collect::<Vec<_>>(),
            vec!["10.0.0.0/16 0", "172.16.9.0/24 0.0.0.1"]
        );
        let nets = nets();
        let mut states: Vec<LinkState> =
            ["r1", "r2", "r3"].iter().map(|r| load("t63", r)).collect();
        states[0].networks = n;
        let pairs: Vec<(&NetView, &LinkState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ospfd", &pairs, &mut a);
        let u: Vec<String> = a.unable.iter().map(ToString::to_string).collect();
        assert_eq!(
            u,
            vec![
                "r1 ospfd network 172.16.9.0/24 area 0.0.0.1: matches no interface address of r1: enables nothing"
            ]
        );
        assert!(a.blockers.is_empty(), "{:#?}", blockers(&a));
    }

    #[test]
    fn virtual_links_and_point_to_point_neighbours() {
        let v = |f: &str| -> Value {
            serde_json::from_str(
                &std::fs::read_to_string(format!(
                    "{}/src/netns/ready/testdata/{f}",
                    env!("CARGO_MANIFEST_DIR")
                ))
                .unwrap(),
            )
            .unwrap()
        };
        let st = parse(
            &serde_json::json!({"routerId": "14.1.4.1"}),
            &v("ospf_vlink_interface.json"),
            &v("ospf_vlink_neighbor.json"),
        )
        .unwrap();
        let vl = st
            .ifaces
            .iter()
            .find(|i| i.network_type == "VIRTUALLINK")
            .unwrap();
        assert_eq!(vl.vlink_peer.as_deref(), Some("58.1.1.2"));
        let n = st
            .neighbours
            .iter()
            .find(|n| n.router_id == "39.1.1.1")
            .unwrap();
        assert_eq!((n.state.as_str(), n.role.as_str()), ("Full", "-"));
        let mut a = Assessment::default();
        let net = NetView {
            device: "r4".into(),
            ..NetView::default()
        };
        assess("ospfd", &[(&net, &st)], &mut a);
        assert!(a.blockers.is_empty(), "{:#?}", blockers(&a));
        assert_eq!(
            a.states["r4 ospfd virtual link to 58.1.1.2"],
            "Point-To-Point"
        );
    }

    #[test]
    fn incompatible_segment_neighbours_are_reported_not_waited_for() {
        let nets = nets();
        let mut r1 = load("t63", "r1");
        let mut r2 = load("t63", "r2");
        let r3 = load("t63", "r3");
        // r2's eth0 in another area: r1 and r2 can never become neighbours there.
        r2.ifaces
            .iter_mut()
            .find(|i| i.name == "eth0")
            .unwrap()
            .area = "0.0.0.1".into();
        r1.neighbours.retain(|n| n.router_id != "2.2.2.2");
        let states = [r1, r2, r3];
        let pairs: Vec<(&NetView, &LinkState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ospfd", &pairs, &mut a);
        assert_eq!(a.unable.len(), 1, "{:?}", a.unable);
        assert_eq!(
            a.unable[0].to_string(),
            "r1 ospfd eth0 and r2 eth0: share a segment but cannot become neighbours (areas 0.0.0.0 and 0.0.0.1)"
        );
        assert!(
            !blockers(&a).iter().any(|b| b.contains("no neighbour r2")),
            "{:#?}",
            blockers(&a)
        );
    }

    #[test]
    fn a_duplicate_address_on_a_segment_is_reported_not_waited_for() {
        let nets = nets();
        let mut r1 = load("t63", "r1");
        let mut r2 = load("t63", "r2");
        let r3 = load("t63", "r3");
        // r2's eth0 holds r1's address: each drops the other's hellos as its own.
        let eth0 = r2.ifaces.iter_mut().find(|i| i.name == "eth0").unwrap();
        eth0.addr = Some(IpNet::parse("10.0.12.1/30").unwrap());
        r1.neighbours.retain(|n| n.router_id != "2.2.2.2");
        r2.neighbours.retain(|n| n.router_id != "1.1.1.1");
        let states = [r1, r2, r3];
        let pairs: Vec<(&NetView, &LinkState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ospfd", &pairs, &mut a);
        assert_eq!(
            a.unable.iter().map(ToString::to_string).collect::<Vec<_>>(),
            vec![
                "r1 ospfd eth0 and r2 eth0: share a segment and the address 10.0.12.1: cannot become neighbours (the lab's own duplicate address)"
            ]
        );
        assert!(
            !blockers(&a).iter().any(|b| b.contains("no neighbour")),
            "{:#?}",
            blockers(&a)
        );
    }

    #[test]
    fn a_lab_with_an_area_border_router_waits_out_the_abr_task_timer() {
        let nets = nets();
        let states = [load("t63", "r1"), load("t63", "r2"), load("t63", "r3")];
        let pairs: Vec<(&NetView, &LinkState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ospfd", &pairs, &mut a);
        assert!(
            a.quiet < super::super::linkstate::ABR_TASK_QUIET,
            "one area: no ABR"
        );
        // r1's LAN in a stub area of its own: r1 becomes an ABR.
        let mut r1 = load("t63", "r1");
        r1.ifaces
            .iter_mut()
            .find(|i| i.name == "eth2")
            .unwrap()
            .area = "0.0.0.1 [Stub]".into();
        let states = [r1, load("t63", "r2"), load("t63", "r3")];
        let pairs: Vec<(&NetView, &LinkState)> = nets.iter().zip(states.iter()).collect();
        let mut a = Assessment::default();
        assess("ospfd", &pairs, &mut a);
        assert_eq!(a.quiet, super::super::linkstate::ABR_TASK_QUIET);
    }
}
