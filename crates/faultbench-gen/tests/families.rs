//! The shipped family library: its size and spread, list parameters, and the VLAN part of the
//! lab model that gives the VLAN campuses their host families (no live lab needed).

use faultbench_gen::family::{self, LAYERS};
use faultbench_gen::generate::{GenOptions, plan};
use faultbench_gen::model::LabModel;
use faultbench_gen::ticket::PlainTickets;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn topology(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../topologies")
        .join(name)
}

fn all(prefix: &str) -> GenOptions {
    GenOptions {
        seed: 1,
        count: None,
        families: vec![],
        shard: (1, 1),
        id_prefix: prefix.into(),
    }
}

#[test]
fn at_least_forty_families_parse_and_cover_every_layer() {
    let families = family::builtin().unwrap();
    assert!(families.len() >= 40, "{} families", families.len());
    let ids: BTreeSet<&str> = families.iter().map(|f| f.family.id.as_str()).collect();
    assert_eq!(ids.len(), families.len(), "family ids are unique");
    let layers: BTreeSet<&str> = families.iter().map(|f| f.family.layer.as_str()).collect();
    for l in LAYERS {
        assert!(layers.contains(l), "no family of layer {l}");
    }
    // Every built-in file goes through the same validation a user's file does.
    for (name, text) in family::BUILTIN {
        family::Family::parse(text, Path::new(name)).unwrap();
    }
}

#[test]
fn list_parameters_multiply_only_the_families_that_use_them() {
    let model = LabModel::load(&topology("Kath5"), "Kath5").unwrap();
    let families = family::builtin().unwrap();
    let p = plan(&model, &families, &all("kath5"), &PlainTickets).unwrap();
    let get = |id: &str| p.families.iter().find(|f| f.family == id).unwrap();
    let (hello, timer) = (get("ospf-hello-mismatch"), get("ospf-timer-mismatch"));
    // Same target kind and links; the hello family has one variant per wrong interval.
    assert_eq!(hello.targets, timer.targets);
    assert!(
        hello.candidates >= 29 * hello.targets - hello.targets,
        "{hello:?}"
    );
    assert_eq!(timer.candidates, timer.targets);
    // Each variant of one link names a different interval, and never the link's own.
    let one_link: Vec<&str> = p
        .variants
        .iter()
        .filter(|v| v.family == "ospf-hello-mismatch")
        .map(|v| v.target.as_str())
        .collect();
    let first = one_link[0];
    let texts: Vec<&str> = p
        .variants
        .iter()
        .filter(|v| v.family == "ospf-hello-mismatch" && v.target == first)
        .map(|v| v.text.as_str())
        .collect();
    let intervals: BTreeSet<String> = texts
        .iter()
        .filter_map(|t| {
            let at = t.find("ip ospf hello-interval ")? + "ip ospf hello-interval ".len();
            Some(t[at..].split('\'').next()?.to_string())
        })
        .collect();
    assert_eq!(intervals.len(), texts.len(), "{intervals:?}");
}

#[test]
fn vlan_gateways_of_a_campus_are_modelled_so_its_hosts_get_families() {
    // Kath4: mswitch0 routes VLANs 10/20/30 on sub-interfaces of a bridge whose ports are
    // set in a shell loop, one of them a bond.
    let model = LabModel::load(&topology("Kath4"), "Kath4").unwrap();
    let pc5 = model.device("pc5").unwrap();
    let (gw, gi) = model.gateway_of(pc5).expect("pc5's gateway is modelled");
    assert_eq!((gw.name.as_str(), gi.name.as_str()), ("mswitch0", "vlan10"));
    let families = family::builtin().unwrap();
    let p = plan(&model, &families, &all("kath4"), &PlainTickets).unwrap();
    let get = |id: &str| p.families.iter().find(|f| f.family == id).unwrap();
    assert!(get("host-link-down").candidates >= 10);
    // Hosts of two VLANs on one layer-2 segment are far from each other (routed), never
    // promised as the same LAN.
    let pairs: Vec<&str> = p
        .variants
        .iter()
        .filter(|v| v.family == "host-blackhole-route")
        .map(|v| v.target.as_str())
        .collect();
    assert!(pairs.contains(&"pc5->pc9"), "{pairs:?}");
    assert!(!pairs.contains(&"pc5->pc6"), "pc5 and pc6 share VLAN 10");
}

#[test]
fn a_sample_smaller_than_the_families_is_not_the_first_ids() {
    let model = LabModel::load(&topology("Kath5"), "Kath5").unwrap();
    let families = family::builtin().unwrap();
    let fams = |seed: u64| -> BTreeSet<String> {
        let o = GenOptions {
            seed,
            count: Some(6),
            ..all("kath5")
        };
        let p = plan(&model, &families, &o, &PlainTickets).unwrap();
        assert_eq!(p.variants.len(), 6);
        p.variants.iter().map(|v| v.family.clone()).collect()
    };
    let (a, b) = (fams(1), fams(2));
    assert_eq!(a.len(), 6, "six variants of six families: {a:?}");
    assert_eq!(a, fams(1), "same seed, same families");
    assert_ne!(a, b, "another seed visits the families in another order");
    let first_six: BTreeSet<String> = {
        let all = plan(&model, &families, &all("kath5"), &PlainTickets).unwrap();
        all.families
            .iter()
            .filter(|f| f.candidates > 0)
            .take(6)
            .map(|f| f.family.clone())
            .collect()
    };
    assert!(a != first_six || b != first_six, "{a:?}");
}

/// pc1 and pc2 on one LAN with their gateway r1 and a second router r2 (joined to r1 by a
/// link of their own when `link`); pc3 behind r1.
fn two_router_lan(dir: &Path, link: bool) {
    let w = |n: &str, t: &str| std::fs::write(dir.join(n), t).unwrap();
    let mut conf =
        String::from("r1[0]=lana\nr1[1]=lanb\nr2[0]=lana\npc1[0]=lana\npc2[0]=lana\npc3[0]=lanb\n");
    let mut r1 =
        String::from("ip addr add 10.0.1.1/24 dev eth0\nip addr add 10.0.2.1/24 dev eth1\n");
    let mut r2 = String::from("ip addr add 10.0.1.2/24 dev eth0\n");
    if link {
        conf.push_str("r1[2]=link12\nr2[1]=link12\n");
        r1.push_str("ip addr add 10.0.12.1/30 dev eth2\n");
        r2.push_str("ip addr add 10.0.12.2/30 dev eth1\n");
    }
    conf.push_str("r1[privileged]=\"true\"\n");
    w("lab.conf", &conf);
    w("r1.startup", &r1);
    w("r2.startup", &r2);
    for (h, ip, gw) in [
        ("pc1", "10.0.1.11", "10.0.1.1"),
        ("pc2", "10.0.1.12", "10.0.1.1"),
        ("pc3", "10.0.2.13", "10.0.2.1"),
    ] {
        w(
            &format!("{h}.startup"),
            &format!("ip addr add {ip}/24 dev eth0\nip route add default via {gw}\n"),
        );
    }
}

const NAT_RP: [&str; 3] = [
    "gateway-rp-filter-asymmetric",
    "gateway-rpfilter-rule-asymmetric",
    "gateway-snat-unroutable",
];

fn nat_rp_plan(model: &LabModel) -> faultbench_gen::generate::GenerationPlan {
    let families = family::builtin().unwrap();
    let o = GenOptions {
        families: NAT_RP.iter().map(|s| s.to_string()).collect(),
        ..all("t")
    };
    plan(model, &families, &o, &PlainTickets).unwrap()
}

#[test]
fn reverse_path_families_need_a_second_router_reached_by_another_interface() {
    let tmp = tempfile::tempdir().unwrap();
    two_router_lan(tmp.path(), true);
    let model = LabModel::load(tmp.path(), "two").unwrap();
    let p = nat_rp_plan(&model);
    let count = |id: &str| p.variants.iter().filter(|v| v.family == id).count();
    // One variant per host of the two-router LAN (pc3's LAN has one router).
    assert_eq!(count("gateway-rp-filter-asymmetric"), 2);
    assert_eq!(count("gateway-rpfilter-rule-asymmetric"), 2);
    for v in p
        .variants
        .iter()
        .filter(|v| v.family != "gateway-snat-unroutable")
    {
        // The route back leaves by r1's link to r2 (eth2); the filter sits on the LAN (eth0).
        assert!(
            v.text
                .contains("ip route add 10.0.1.11/32 via 10.0.12.2 dev eth2")
                || v.text
                    .contains("ip route add 10.0.1.12/32 via 10.0.12.2 dev eth2"),
            "{}",
            v.text
        );
        assert!(v.text.contains("device: r1"), "{}", v.text);
        assert!(
            v.text.contains("/proc/sys/net/ipv4/conf/eth0/rp_filter")
                || v.text.contains("-i eth0 -m rpfilter --invert -j DROP"),
            "{}",
            v.text
        );
        // The victim still reaches r2 on the LAN, and the far host is pc3.
        assert!(
            v.text.contains("ping -c2 -i0.2 -W1 10.0.1.2 "),
            "{}",
            v.text
        );
        assert!(
            v.text.contains("ping -c2 -i0.2 -W1 10.0.2.13 "),
            "{}",
            v.text
        );
    }
    // Without the link, r2 shares no other subnet with r1: no asymmetric route can be built.
    let tmp = tempfile::tempdir().unwrap();
    two_router_lan(tmp.path(), false);
    let model = LabModel::load(tmp.path(), "two").unwrap();
    let p = nat_rp_plan(&model);
    assert!(
        p.variants
            .iter()
            .all(|v| v.family == "gateway-snat-unroutable")
    );
    let rp = p
        .families
        .iter()
        .find(|f| f.family == "gateway-rpfilter-rule-asymmetric")
        .unwrap();
    assert!(
        rp.empty_because
            .as_deref()
            .unwrap()
            .contains("no lan_second_router"),
        "{rp:?}"
    );
    // Kath2 has one router per LAN: only the NAT family applies.
    let kath2 = LabModel::load(&topology("Kath2"), "Kath2").unwrap();
    let p = nat_rp_plan(&kath2);
    assert!(
        p.variants
            .iter()
            .all(|v| v.family == "gateway-snat-unroutable")
    );
}

#[test]
fn source_nat_translates_to_an_unused_address_of_the_far_lan() {
    let tmp = tempfile::tempdir().unwrap();
    two_router_lan(tmp.path(), true);
    let model = LabModel::load(tmp.path(), "two").unwrap();
    let p = nat_rp_plan(&model);
    let snat: Vec<&str> = p
        .variants
        .iter()
        .filter(|v| v.family == "gateway-snat-unroutable")
        .map(|v| v.text.as_str())
        .collect();
    // Every (host, host on another LAN) pair: pc1/pc2 -> pc3 and back.
    assert_eq!(snat.len(), 4);
    let to_pc3 = snat
        .iter()
        .find(|t| t.contains("-s 10.0.1.11 -j SNAT"))
        .unwrap();
    // The highest address of pc3's LAN, which no device holds; the fix deletes that rule.
    assert!(
        to_pc3
            .contains("iptables -t nat -A POSTROUTING -s 10.0.1.11 -j SNAT --to-source 10.0.2.254"),
        "{to_pc3}"
    );
    assert!(
        to_pc3
            .contains("iptables -t nat -D POSTROUTING -s 10.0.1.11 -j SNAT --to-source 10.0.2.254"),
        "{to_pc3}"
    );
    assert!(model.owner_of("10.0.2.254".parse().unwrap()).is_none());
    // The control pair (pc2, same LAN, not translated) still reaches pc3.
    assert!(
        to_pc3.contains("pc2  ping -c2 -i0.2 -W1 10.0.2.13"),
        "{to_pc3}"
    );
}

#[test]
fn destination_nat_needs_a_lone_gateway_and_a_client_beyond_it() {
    let families = family::builtin().unwrap();
    let o = GenOptions {
        families: vec!["gateway-dnat-wrong-target".into()],
        ..all("t")
    };
    let model = LabModel::load(
        &topology("ospf_enterprise_static"),
        "ospf_enterprise_static",
    )
    .unwrap();
    let p = plan(&model, &families, &o, &PlainTickets).unwrap();
    assert!(!p.variants.is_empty());
    for v in &p.variants {
        let (ip, spare) = v
            .text
            .split_once("--to-destination ")
            .and_then(|(before, after)| {
                let spare = after.split_whitespace().next()?;
                let ip = before.rsplit_once(" -d ")?.1.split_whitespace().next()?;
                Some((ip, spare))
            })
            .unwrap();
        let (ip, spare): (std::net::Ipv4Addr, std::net::Ipv4Addr) = (
            ip.parse().unwrap(),
            spare
                .trim_end_matches('$')
                .trim_end_matches('\'')
                .parse()
                .unwrap(),
        );
        // The translated address is on the server's own LAN, and nobody holds it.
        let (server, _) = model.owner_of(ip).unwrap();
        assert!(server.primary().unwrap().1.contains(spare), "{}", v.text);
        assert!(model.owner_of(spare).is_none(), "{}", v.text);
        // The client that loses the port is on another LAN (it must pass the gateway).
        let client = v
            .text
            .lines()
            .find(|l| l.contains("/dev/tcp/"))
            .and_then(|l| l.split_whitespace().next())
            .and_then(|n| model.device(n))
            .unwrap();
        assert!(
            !faultbench_gen::graph::same_lan(client, server),
            "{}",
            v.text
        );
    }
    // Kath1's one service is DNS over UDP (the family rewrites TCP), on a LAN with two
    // routers (VRRP), where traffic from beyond may enter by either.
    let kath1 = LabModel::load(&topology("Kath1"), "Kath1").unwrap();
    let p = plan(&kath1, &families, &o, &PlainTickets).unwrap();
    assert!(p.variants.is_empty());
}
