//! The passive-interface rule: a finding only when the neighbour does run OSPF on the link,
//! heavy only when routes the adjacency should carry are missing.

use super::*;
use crate::baseline::claims::Claims;
use crate::baseline::frr::Config;
use crate::baseline::gather::{Observations, RouterState};
use crate::baseline::lan::Model;
use crate::baseline::probe;
use crate::baseline::topo::SummaryTopology;

const UP: &str = "<BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500";

fn facts(addrs: &str, routes: &str) -> crate::baseline::probe::Facts {
    probe::parse(&format!(
        "@@fwd\n1\n@@link\n2: eth0@if3: {UP} state UP\n3: eth1@if4: {UP} state UP\n@@addr\n{addrs}\n@@proc\nzebra ospfd\n@@listen\n@@route\n{routes}\n@@end\n"
    ))
}

/// `edge` (passive on eth0, its LAN 10.0.2.0/24 on eth1) and `core` on link A.
/// `core_ospf_on_link`: core runs OSPF on its eth0 too; `core_learns_lan`: each has a route
/// to the other's subnets over another path.
fn passive_findings(core_ospf_on_link: bool, core_learns_lan: bool) -> Vec<Finding> {
    let topo = SummaryTopology::parse("Devices:\n  core: eth0=A, eth1=C\n  edge: eth0=A, eth1=B\n");
    // Routes over another path, both ways, when the design has one.
    let (learned, learned_back) = if core_learns_lan {
        (
            "\n10.0.2.0/24 via 10.0.13.3 dev eth1 proto ospf metric 20",
            "\n10.0.13.0/24 via 10.0.2.3 dev eth1 proto ospf metric 20",
        )
    } else {
        ("", "")
    };
    let mut fs = BTreeMap::new();
    fs.insert(
        "edge".to_string(),
        facts(
            "eth0 10.0.12.2/24\neth1 10.0.2.1/24",
            &format!("10.0.12.0/24 dev eth0 proto kernel scope link\n10.0.2.0/24 dev eth1 proto kernel scope link{learned_back}"),
        ),
    );
    fs.insert(
        "core".to_string(),
        facts(
            "eth0 10.0.12.1/24\neth1 10.0.13.1/24",
            &format!("10.0.12.0/24 dev eth0 proto kernel scope link\n10.0.13.0/24 dev eth1 proto kernel scope link{learned}"),
        ),
    );
    let model = Model::build(&topo, &fs);
    let edge_cfg = "interface eth0\n ip ospf area 0\n ip ospf passive\nexit\n!\ninterface eth1\n ip ospf area 0\nexit\n!\nrouter ospf\n redistribute connected\nexit\n";
    let core_cfg = if core_ospf_on_link {
        "router ospf\n network 10.0.12.0/24 area 0\n network 10.0.13.0/24 area 0\nexit\n"
    } else {
        "router ospf\n network 10.0.13.0/24 area 0\nexit\n"
    };
    let mut obs = Observations::default();
    for (r, c) in [("edge", edge_cfg), ("core", core_cfg)] {
        obs.routers.insert(
            r.to_string(),
            RouterState {
                config: Some(Config::parse(c)),
                ospf: Some(Vec::new()),
                ..Default::default()
            },
        );
    }
    let claims = Claims::default();
    let cx = Ctx {
        topo: &topo,
        model: &model,
        obs: &obs,
        claims: &claims,
    };
    ospf_links(&cx)
        .into_iter()
        .filter(|f| f.what.contains("passive"))
        .collect()
}

#[test]
fn passive_towards_a_neighbour_without_ospf_there_is_a_design() {
    assert!(passive_findings(false, false).is_empty());
}

#[test]
fn passive_that_cuts_routes_is_a_fault() {
    let f = passive_findings(true, false);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].device.as_deref(), Some("edge"));
    assert_eq!(f[0].weight, 3);
}

#[test]
fn passive_with_routes_arriving_another_way_needs_a_symptom() {
    let f = passive_findings(true, true);
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!(f[0].weight, 2);
}
