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
