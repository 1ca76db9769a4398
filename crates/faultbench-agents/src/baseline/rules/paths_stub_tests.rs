//! Which addresses hosts are expected to reach: a stub LAN's address when the network
//! advertises it, not a transit link's.

use super::*;
use crate::baseline::claims::Claims;
use crate::baseline::gather::Observations;
use crate::baseline::lan::Model;
use crate::baseline::probe;
use crate::baseline::topo::SummaryTopology;

const UP: &str = "<BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500";

fn facts(addrs: &str, procs: &str, routes: &str) -> crate::baseline::probe::Facts {
    probe::parse(&format!(
        "@@fwd\n1\n@@link\n2: eth0@if3: {UP} state UP\n3: eth1@if4: {UP} state UP\n@@addr\n{addrs}\n@@proc\n{procs}\n@@listen\n@@route\n{routes}\n@@end\n"
    ))
}

/// pc - r1 - (transit T) - r2 - stub LAN S with nobody else on it.
fn reachable(stub_learnt: bool) -> (bool, bool) {
    let topo = SummaryTopology::parse(
        "Devices:\n  pc: eth0=L\n  r1: eth0=L, eth1=T\n  r2: eth0=T, eth1=S\n",
    );
    let learnt = if stub_learnt {
        "\n10.0.9.0/24 via 10.0.12.2 dev eth1 proto ospf metric 20"
    } else {
        ""
    };
    let mut fs = BTreeMap::new();
    fs.insert(
        "pc".to_string(),
        facts("eth0 10.0.1.10/24", "bash", "default via 10.0.1.1 dev eth0"),
    );
    fs.insert(
        "r1".to_string(),
        facts(
            "eth0 10.0.1.1/24\neth1 10.0.12.1/30",
            "zebra ospfd",
            &format!("10.0.12.0/30 dev eth1 proto kernel scope link{learnt}"),
        ),
    );
    fs.insert(
        "r2".to_string(),
        facts(
            "eth0 10.0.12.2/30\neth1 10.0.9.1/24",
            "zebra ospfd",
            "10.0.1.0/24 via 10.0.12.1 dev eth0 proto ospf metric 20",
        ),
    );
    let model = Model::build(&topo, &fs);
    let obs = Observations::default();
    let claims = Claims::default();
    let cx = Ctx {
        topo: &topo,
        model: &model,
        obs: &obs,
        claims: &claims,
    };
    (
        expected_reachable(&cx, "10.0.9.1".parse().unwrap()),
        expected_reachable(&cx, "10.0.12.2".parse().unwrap()),
    )
}

#[test]
fn an_advertised_stub_lan_is_expected_reachable() {
    assert_eq!(reachable(true), (true, false), "stub yes, transit no");
    assert_eq!(reachable(false), (false, false), "nobody learns the stub");
}
