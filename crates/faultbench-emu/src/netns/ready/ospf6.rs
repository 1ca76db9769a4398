//! OSPFv3 (ospf6d): reading FRR's JSON into the link-state model of [`super::linkstate`].
//!
//! FRR 8.4 answers `show ipv6 ospf6 json` (`routerId`, `spfTimerActive`,
//! `spfTimerDueInMsecs`), `show ipv6 ospf6 interface json` (name → `attachedToArea`, `areaId`,
//! `type`, `ospf6InterfaceState`, `timerIntervalsConfigHello`/`Dead` in seconds),
//! `show ipv6 ospf6 neighbor detail json` (`RID%iface` → `interface`, `neighborState`
//! (`Twoway` for 2-Way), `neighborDRouter`, `neighborBdRouter`, `reTransListCount`,
//! `requestListCount`, `summaryListCount`) and `show ipv6 ospf6 database json`
//! (`areaScopedLinkStateDb` / `asScopedLinkStateDb` → `lsa` headers). Passive interfaces are
//! not in the JSON; they are read from the running configuration (`ipv6 ospf6 passive`).

use super::linkstate::{LinkState, LsIface, LsNeighbour, digest};
use serde_json::Value;
use std::collections::HashSet;

/// The commands to send, in the order [`parse`] takes their answers.
pub(super) const COMMANDS: [&str; 4] = [
    "show ipv6 ospf6 json",
    "show ipv6 ospf6 interface json",
    "show ipv6 ospf6 neighbor detail json",
    "show ipv6 ospf6 database json",
];

/// Area ids come as `0` in some answers and `0.0.0.0` in others.
fn dotted(area: &str) -> String {
    match area.parse::<u32>() {
        Ok(n) => std::net::Ipv4Addr::from(n).to_string(),
        Err(_) => area.to_string(),
    }
}

/// ospf6d's state names in ospfd's words.
fn state_name(s: &str) -> String {
    match s {
        "Twoway" => "2-Way".into(),
        "ExChange" => "Exchange".into(),
        "BDR" => "Backup".into(),
        "PointToPoint" => "Point-To-Point".into(),
        other => other.into(),
    }
}

/// The interfaces `ipv6 ospf6 passive` is configured on, from a running configuration.
pub(super) fn passive_interfaces(config: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut iface: Option<&str> = None;
    for line in config.lines() {
        let t = line.trim();
        if let Some(name) = t.strip_prefix("interface ") {
            iface = name.split_whitespace().next();
        } else if !line.starts_with(' ') {
            iface = None;
        } else if t == "ipv6 ospf6 passive"
            && let Some(i) = iface
        {
            out.insert(i.to_string());
        }
    }
    out
}

/// Builds the model from the four answers; `None` when no OSPFv3 instance is configured.
pub(super) fn parse(
    instance: &Value,
    interfaces: &Value,
    neighbours: &Value,
    db: &Value,
    passive: &HashSet<String>,
) -> Option<LinkState> {
    let router_id = instance["routerId"].as_str()?.to_string();
    let mut st = LinkState {
        router_id,
        spf_due_ms: (instance["spfTimerActive"] == Value::Bool(true))
            .then(|| instance["spfTimerDueInMsecs"].as_u64().unwrap_or(0)),
        ..LinkState::default()
    };
    for (name, i) in interfaces.as_object().into_iter().flatten() {
        if i["attachedToArea"] != Value::Bool(true) || i["status"].as_str() == Some("down") {
            continue;
        }
        st.ifaces.push(LsIface {
            name: name.clone(),
            state: state_name(i["ospf6InterfaceState"].as_str().unwrap_or("")),
            area: dotted(i["areaId"].as_str().unwrap_or("")),
            addr: None,
            passive: passive.contains(name),
            hello_ms: i["timerIntervalsConfigHello"].as_u64().unwrap_or(0) * 1000,
            dead_s: i["timerIntervalsConfigDead"].as_u64().unwrap_or(0),
            network_type: i["type"].as_str().unwrap_or("").to_ascii_uppercase(),
            nbr_count: 0,
            vlink_peer: None,
        });
    }
    for (key, n) in neighbours.as_object().into_iter().flatten() {
        let rid = key.split('%').next().unwrap_or(key).to_string();
        let role = if n["neighborDRouter"].as_str() == Some(&rid) {
            "DR"
        } else if n["neighborBdRouter"].as_str() == Some(&rid) {
            "Backup"
        } else {
            "DROther"
        };
        let iface = n["interface"].as_str().unwrap_or("").to_string();
        if let Some(i) = st.ifaces.iter_mut().find(|i| i.name == iface) {
            i.nbr_count += 1;
        }
        st.neighbours.push(LsNeighbour {
            router_id: rid,
            state: state_name(n["neighborState"].as_str().unwrap_or("")),
            role: role.to_string(),
            iface,
            address: n["linkLocalAddress"].as_str().unwrap_or("").to_string(),
            retransmit: n["reTransListCount"].as_u64().unwrap_or(0),
            request: n["requestListCount"].as_u64().unwrap_or(0),
            summary: n["summaryListCount"].as_u64().unwrap_or(0),
        });
    }
    for area in db["areaScopedLinkStateDb"].as_array().into_iter().flatten() {
        st.area_db.insert(
            dotted(area["areaId"].as_str().unwrap_or("")),
            lsa_digest(&area["lsa"]),
        );
    }
    st.as_lsas = instance["numberOfAsScopedLsa"].as_u64().unwrap_or(0);
    st.as_db = db["asScopedLinkStateDb"]
        .as_array()
        .map(|a| {
            let mut all: Vec<String> = a
                .iter()
                .map(|x| lsa_digest(&x["lsa"]).to_string())
                .collect();
            digest(&mut all)
        })
        .unwrap_or(0);
    Some(st)
}

fn lsa_digest(list: &Value) -> u64 {
    let mut headers: Vec<String> = list
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            format!(
                "{} {} {} {} {}",
                h["type"], h["lsId"], h["advRouter"], h["seqNum"], h["payload"]
            )
        })
        .collect();
    digest(&mut headers)
}

#[cfg(test)]
mod tests {
    use super::super::linkstate::assess;
    use super::super::model::Assessment;
    use super::super::net::NetView;
    use super::*;

    fn load(r: &str) -> LinkState {
        let f = |n: &str| -> Value {
            let path = format!(
                "{}/src/netns/ready/testdata/ospf6_{r}_{n}.json",
                env!("CARGO_MANIFEST_DIR")
            );
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
        };
        parse(
            &f("instance"),
            &f("interface"),
            &f("neighbor"),
            &f("database"),
            &HashSet::new(),
        )
        .unwrap()
    }

    fn net(r: &str) -> NetView {
        NetView {
            device: r.into(),
            domains: [("eth0".to_string(), "A".to_string())]
                .into_iter()
                .collect(),
            ..NetView::default()
        }
    }

    #[test]
    fn parses_ospf6d_json() {
        let r1 = load("r1");
        assert_eq!(r1.router_id, "1.1.1.1");
        assert_eq!(r1.spf_due_ms, None);
        let eth0 = r1.ifaces.iter().find(|i| i.name == "eth0").unwrap();
        assert_eq!(
            (
                eth0.state.as_str(),
                eth0.area.as_str(),
                eth0.hello_ms,
                eth0.dead_s
            ),
            ("DROther", "0.0.0.0", 1000, 3)
        );
        assert!(
            r1.ifaces.iter().all(|i| i.name != "eth1"),
            "eth1 runs no OSPFv3"
        );
        assert_eq!(r1.neighbours.len(), 2);
        assert!(
            r1.neighbours
                .iter()
                .any(|n| n.router_id == "3.3.3.3" && n.role == "DR" && n.state == "Full")
        );
        assert!(r1.area_db.contains_key("0.0.0.0"));
    }

    #[test]
    fn three_routers_on_one_segment_converged() {
        let (n1, n2, n3) = (net("r1"), net("r2"), net("r3"));
        let (s1, s2, s3) = (load("r1"), load("r2"), load("r3"));
        let mut a = Assessment::default();
        assess("ospf6d", &[(&n1, &s1), (&n2, &s2), (&n3, &s3)], &mut a);
        assert!(a.blockers.is_empty(), "{:#?}", a.blockers);
        // Without r3's hello, r1's segment still expects it.
        let mut s1b = s1.clone();
        s1b.neighbours.retain(|n| n.router_id != "3.3.3.3");
        let mut a = Assessment::default();
        assess("ospf6d", &[(&n1, &s1b), (&n2, &s2), (&n3, &s3)], &mut a);
        let b: Vec<String> = a.blockers.iter().map(|b| b.item.to_string()).collect();
        assert_eq!(
            b,
            vec!["r1 ospf6d interface eth0: DROther: no neighbour r3 yet"]
        );
    }

    #[test]
    fn passive_interfaces_from_the_running_config() {
        let p = passive_interfaces(
            "interface eth0\n ipv6 ospf6 area 0\n ipv6 ospf6 passive\nexit\n!\ninterface eth1\n ipv6 ospf6 area 0\nexit\n",
        );
        assert_eq!(p.into_iter().collect::<Vec<_>>(), vec!["eth0".to_string()]);
    }
}
