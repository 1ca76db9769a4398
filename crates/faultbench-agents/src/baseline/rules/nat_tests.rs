//! pc (10.1.0.100) and pc2 (10.2.0.100) — r1 (campus 10.1.0.1 and 10.2.0.1, WAN
//! 203.0.113.2) — isp (203.0.113.1, a web host 172.253.62.100 on its loopback, dropping
//! private sources from the customer).

use super::*;
use crate::baseline::claims::Claims;
use crate::baseline::gather::{Observations, Ping};
use crate::baseline::lan::Model;
use crate::baseline::outside;
use crate::baseline::probe;
use crate::baseline::topo::SummaryTopology;
use std::collections::BTreeMap;

const UP: &str = "<BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP";
const LO: &str = "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 state UNKNOWN";

fn facts(links: &[&str], addrs: &str, routes: &str, ipt: &str) -> probe::Facts {
    let mut l = vec![LO.to_string()];
    l.extend(
        links
            .iter()
            .enumerate()
            .map(|(i, n)| format!("{}: {n}: {UP}", i + 2)),
    );
    probe::parse(&format!(
        "@@fwd\n1\n@@link\n{}\n@@addr\n{addrs}\n@@proc\nbash\n@@ipt\n{ipt}\n@@route\n{routes}\n@@end\n",
        l.join("\n")
    ))
}

fn model(r1_nat: &str) -> (SummaryTopology, Model) {
    let topo = SummaryTopology::parse(
        "Devices:\n  pc: eth0=LAN\n  pc2: eth0=LAN2\n  r1: eth0=LAN, eth1=WAN, eth2=LAN2\n  isp: eth0=WAN\n",
    );
    let mut fs = BTreeMap::new();
    fs.insert(
        "pc".to_string(),
        facts(
            &["eth0"],
            "eth0 10.1.0.100/24",
            "default via 10.1.0.1 dev eth0\n10.1.0.0/24 dev eth0 proto kernel",
            "",
        ),
    );
    fs.insert(
        "pc2".to_string(),
        facts(
            &["eth0"],
            "eth0 10.2.0.100/24",
            "default via 10.2.0.1 dev eth0\n10.2.0.0/24 dev eth0 proto kernel",
            "",
        ),
    );
    fs.insert(
        "r1".to_string(),
        facts(
            &["eth0", "eth1", "eth2"],
            "eth0 10.1.0.1/24\neth1 203.0.113.2/30 dynamic\neth2 10.2.0.1/24",
            "default via 203.0.113.1 dev eth1\n10.1.0.0/24 dev eth0 proto kernel\n203.0.113.0/30 dev eth1 proto kernel\n10.2.0.0/24 dev eth2 proto kernel",
            r1_nat,
        ),
    );
    fs.insert(
        "isp".to_string(),
        facts(
            &["eth0"],
            "eth0 203.0.113.1/30\nlo 172.253.62.100/32",
            "default via 203.0.113.2 dev eth0\n203.0.113.0/30 dev eth0 proto kernel",
            "*filter\n-A INPUT -i eth0 -s 10.0.0.0/8 -j DROP\n-A FORWARD -i eth0 -s 10.0.0.0/8 -j DROP",
        ),
    );
    let m = Model::build(&topo, &fs);
    (topo, m)
}

fn run(r1_nat: &str, received: u32) -> Vec<Finding> {
    let (topo, m) = model(r1_nat);
    let obs = Observations {
        pings: vec![Ping {
            src: "pc".into(),
            dst: "172.253.62.100".parse().unwrap(),
            received,
            sent: 3,
        }],
        ..Default::default()
    };
    let claims = Claims::default();
    findings(&Ctx {
        topo: &topo,
        model: &m,
        obs: &obs,
        claims: &claims,
    })
}

#[test]
fn a_flushed_nat_table_is_blamed_on_the_edge_router() {
    let f = run("", 0);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].device.as_deref(), Some("r1"));
    assert_eq!(f[0].weight, 3);
    assert!(f[0].what.contains("MASQUERADE"), "{}", f[0].what);
    assert!(
        f[0].what.contains("isp drops private"),
        "the upstream drop is the mechanism: {}",
        f[0].what
    );
    assert!(f[0].fix.contains("-s 10.1.0.0/24 -o eth1 -j MASQUERADE"));
    assert_eq!(f[0].affects, vec!["pc".to_string()]);
}

#[test]
fn working_nat_or_working_pings_give_nothing() {
    let nat = "*nat\n-A POSTROUTING -s 10.1.0.0/24 -o eth1 -j MASQUERADE";
    assert!(
        run(nat, 0).is_empty(),
        "translated traffic is not this rule's"
    );
    assert!(
        run("", 3).is_empty(),
        "a ping that answers needs no explanation"
    );
}

#[test]
fn a_host_lan_left_out_of_the_nat_its_siblings_get_is_blamed() {
    let nat = "*nat\n-A POSTROUTING -s 10.2.0.0/24 -o eth1 -j MASQUERADE";
    let f = run(nat, 0);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].device.as_deref(), f[0].weight), (Some("r1"), 3));
    assert!(
        f[0].what.contains("10.2.0.0/24 (pc2)") && f[0].what.contains("for 10.1.0.0/24"),
        "names the translated sibling and the missing subnet: {}",
        f[0].what
    );
    assert!(f[0].fix.contains("-s 10.1.0.0/24 -o eth1 -j MASQUERADE"));
}

#[test]
fn a_nat_that_only_skips_non_host_networks_looks_deliberate() {
    // The edge translates a management range only; the host LANs were never in it.
    let nat = "*nat\n-A POSTROUTING -s 10.99.0.0/24 -o eth1 -j MASQUERADE";
    let f = run(nat, 0);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].device.as_deref(), f[0].weight), (Some("r1"), 1));
    assert!(f[0].what.contains("deliberate"));
}

#[test]
fn the_outside_is_tested_only_for_internet_tickets() {
    let (topo, m) = model("");
    let internet = Claims::extract("pc cannot reach anything on the Internet", &topo);
    assert_eq!(
        outside::targets(&m, &internet),
        vec!["172.253.62.100".parse::<std::net::Ipv4Addr>().unwrap()],
        "the loopback web host of the only outside device"
    );
    assert_eq!(outside::sources(&m, &internet), vec!["pc".to_string()]);
    let lan = Claims::extract("pc cannot reach r1", &topo);
    assert!(outside::targets(&m, &lan).is_empty());
    assert!(outside::is_outside(&m, "isp") && !outside::is_outside(&m, "r1"));
}
