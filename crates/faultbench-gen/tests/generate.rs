//! Generation without a live lab: determinism, refusals of bad family files and labs,
//! families that match nothing, and hostile values from lab files.

use faultbench_gen::family::{self, Family};
use faultbench_gen::generate::{Candidates, GenOptions, Plan, enumerate, plan, select};
use faultbench_gen::model::LabModel;
use faultbench_gen::ticket::PlainTickets;
use std::path::{Path, PathBuf};

fn topology(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../topologies")
        .join(name)
}

fn opts(seed: u64, count: Option<usize>) -> GenOptions {
    GenOptions {
        seed,
        count,
        families: vec![],
        shard: (1, 1),
        id_prefix: "kath2".into(),
    }
}

/// Every file under `dir` with its bytes, sorted (to prove a directory did not change).
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let found = faultbench_core::fsutil::find_files(dir, |_| true).unwrap();
    for f in found.files {
        let bytes = std::fs::read(&f).unwrap();
        out.push((f, bytes));
    }
    out
}

/// Every candidate's id and text, in order.
fn texts(c: &Candidates) -> Vec<(String, String)> {
    c.variants
        .iter()
        .flatten()
        .map(|v| (v.id.clone(), v.text.clone()))
        .collect()
}

fn ids(p: &Plan) -> Vec<String> {
    p.variants.iter().map(|v| v.id.clone()).collect()
}

#[test]
fn same_inputs_give_byte_identical_candidates_from_fresh_reads() {
    // Two enumerations, each from its own read of the lab directory, on labs that together
    // bind every target kind: simple_bgp (hosts, routers, BGP sessions) whole, and the OSPF
    // links, network statements and services of ospf_enterprise_static.
    let families = family::builtin().unwrap();
    let ospf_and_services: Vec<String> = [
        "ospf-area-mismatch",
        "ospf-timer-mismatch",
        "ospf-network-removed",
        "service-stopped",
        "service-port-blocked",
        "routing-daemon-killed",
    ]
    .map(String::from)
    .to_vec();
    for (topo, only) in [
        ("simple_bgp", vec![]),
        ("ospf_enterprise_static", ospf_and_services),
    ] {
        let dir = topology(topo);
        let mut o = opts(1, None);
        o.families = only;
        let read = || LabModel::load(&dir, topo).unwrap();
        let a = enumerate(&read(), &families, &o, &PlainTickets).unwrap();
        let b = enumerate(&read(), &families, &o, &PlainTickets).unwrap();
        assert!(texts(&a).len() >= 20, "{topo}: {}", texts(&a).len());
        assert_eq!(texts(&a), texts(&b), "{topo}");
        // The sample of a seed is the same from either enumeration.
        let mut s = opts(1, Some(12));
        s.families = o.families.clone();
        let (pa, pb) = (select(&a, &s), select(&b, &s));
        assert_eq!(pa.variants.len(), 12);
        assert_eq!(
            pa.variants.iter().map(|v| &v.text).collect::<Vec<_>>(),
            pb.variants.iter().map(|v| &v.text).collect::<Vec<_>>()
        );
        // `plan` is `enumerate` then `select`.
        assert_eq!(
            ids(&plan(&read(), &families, &s, &PlainTickets).unwrap()),
            ids(&pa)
        );
    }
}

#[test]
fn same_seed_gives_the_same_sample_and_another_seed_differs() {
    let dir = topology("Kath2");
    let before = tree(&dir);
    let families = family::builtin().unwrap();
    let model = LabModel::load(&dir, "Kath2").unwrap();
    // What enumeration reads is the model: a second read of the lab is the same model.
    assert_eq!(LabModel::load(&dir, "Kath2").unwrap(), model);
    // Kath2's 4,681 candidates are rendered once; every sample below is drawn from them.
    let cands = enumerate(&model, &families, &opts(1, None), &PlainTickets).unwrap();
    let a = select(&cands, &opts(1, Some(40)));
    assert_eq!(a.variants.len(), 40);
    assert_eq!(ids(&select(&cands, &opts(1, Some(40)))), ids(&a));
    let c = select(&cands, &opts(2, Some(40)));
    assert_ne!(ids(&a), ids(&c), "another seed picks another sample");
    // Ids come from content: a variant selected under both seeds has the same id and text.
    let common = a
        .variants
        .iter()
        .find(|v| c.variants.iter().any(|w| w.id == v.id))
        .expect("two samples of 40 out of ~200 share a variant");
    let twin = c.variants.iter().find(|w| w.id == common.id).unwrap();
    assert_eq!(common.text, twin.text);
    // No two variants share normalised content; every candidate's id is its content's.
    let all = select(&cands, &opts(1, None));
    assert_eq!(all.variants.len(), texts(&cands).len());
    let mut hashes: Vec<&str> = all.variants.iter().map(|v| v.hash.as_str()).collect();
    hashes.sort_unstable();
    let n = hashes.len();
    hashes.dedup();
    assert_eq!(hashes.len(), n);
    for v in &all.variants {
        assert!(v.id.starts_with("kath2-gen-"), "{}", v.id);
        assert!(v.id.ends_with(&v.hash[..10]), "{} {}", v.id, v.hash);
    }
    // Every sampled file parses back to itself, with its id.
    for v in a.variants.iter().chain(&c.variants) {
        let spec = faultbench_core::scenario::ScenarioSpec::parse(&v.text).unwrap();
        assert_eq!(spec.to_text(), v.text);
        assert_eq!(spec.id(), v.id);
    }
    // The sample spans families: 40 variants over more than 10 families.
    let fams: std::collections::BTreeSet<&str> =
        a.variants.iter().map(|v| v.family.as_str()).collect();
    assert!(fams.len() >= 10, "{fams:?}");
    // Shards partition the sample.
    let mut shards = Vec::new();
    for k in 1..=3 {
        let mut o = opts(1, Some(40));
        o.shard = (k, 3);
        shards.extend(ids(&select(&cands, &o)));
    }
    shards.sort();
    let mut sorted = ids(&a);
    sorted.sort();
    assert_eq!(shards, sorted);
    assert_eq!(tree(&dir), before, "the lab directory is only read");
}

const GOOD: &str = r#"[family]
id = "demo"
title = "demo"
layer = "link"
fault_family = "demo"
nika_label = "link_down"
nika_category = "LINK_FAILURE"
in_taxonomy = true

[applies]
target = "host_interface"

[inject]
device = "{device}"
action = "down"
cmd = ["ip link set dev {iface} down"]

[[check]]
device = "{victim}"
cmd = "ping -c2 -W1 {far_ip}"
expect = "loss>0"

[symptom]
kind = "unreachable"

[fix]
device = "{device}"
steps = ["ip link set dev {iface} up"]
text = "up"

[truth]
component = "c"
mechanism = "m"
root_cause = "r"
fix = "f"

[axes]
identifies = ["{device}"]
component = "c"
"#;

fn parse_err(text: &str) -> family::FamilyError {
    Family::parse(text, Path::new("families/demo.toml")).unwrap_err()
}

#[test]
fn family_file_errors_name_file_line_and_fix() {
    assert!(Family::parse(GOOD, Path::new("families/demo.toml")).is_ok());
    let cases = [
        // (broken text, expected line, words in the message)
        (
            GOOD.replace("target = \"host_interface\"", "target = \"hots_interface\""),
            11,
            "unknown target `hots_interface`",
        ),
        (
            GOOD.replace("layer = \"link\"", "layer = \"physics\""),
            4,
            "unknown layer",
        ),
        (
            GOOD.replace("ping -c2 -W1 {far_ip}", "ping {far_addr}"),
            20,
            "`{far_addr}` is not a parameter",
        ),
        (
            GOOD.replace("in_taxonomy = true", "in_taxonomy = yes"),
            8,
            "",
        ),
        (
            GOOD.replace("kind = \"unreachable\"", "kind = \"slow\""),
            24,
            "unknown symptom kind",
        ),
        (
            GOOD.replace(
                "[applies]\ntarget = \"host_interface\"",
                "[applies]\ntarget = \"host_interface\"\nwhere = [\"nonsense here now ok\"]",
            ),
            12,
            "is not a condition",
        ),
        (
            GOOD.replace(
                "[applies]\ntarget = \"host_interface\"",
                "[applies]\ntarget = \"host_interface\"\nwhere = [\"has neighbor_ip\"]",
            ),
            12,
            "does not provide",
        ),
        (
            GOOD.replace("text = \"up\"", "text = \"up\"\ncolour = \"red\""),
            30,
            "unknown field",
        ),
        (
            GOOD.replace("ip link set dev {iface} up", "ip link set dev {iface up"),
            28,
            "unbalanced brace",
        ),
    ];
    for (text, line, words) in cases {
        let e = parse_err(&text);
        let shown = e.to_string();
        assert_eq!(e.line, line, "{shown}");
        assert!(
            shown.starts_with(&format!("families/demo.toml:{line}: ")),
            "{shown}"
        );
        assert!(shown.contains(words), "{shown}");
        assert!(shown.contains('('), "a fix is given: {shown}");
    }
}

#[test]
fn families_matching_nothing_say_why() {
    let model = LabModel::load(&topology("simple_bgp"), "simple_bgp").unwrap();
    let families = family::builtin().unwrap();
    let p = plan(&model, &families, &opts(1, None), &PlainTickets).unwrap();
    let why = |id: &str| {
        p.families
            .iter()
            .find(|f| f.family == id)
            .unwrap()
            .empty_because
            .clone()
    };
    assert!(
        why("ospf-passive-interface")
            .unwrap()
            .contains("the lab has no ospf_link")
    );
    assert!(
        why("rip-network-removed")
            .unwrap()
            .contains("meets `where` [protocol == rip]")
    );
    assert!(why("service-stopped").unwrap().contains("no service"));
    assert_eq!(why("bgp-neighbor-shutdown"), None);
    let bgp = p
        .families
        .iter()
        .find(|f| f.family == "bgp-neighbor-shutdown")
        .unwrap();
    assert_eq!((bgp.candidates, bgp.targets), (2, 2));
    // Unknown --families are refused with the known list.
    let mut o = opts(1, None);
    o.families = vec!["bgp-nieghbor-shutdown".into()];
    let e = plan(&model, &families, &o, &PlainTickets).unwrap_err();
    assert!(
        e.to_string().contains("bgp-nieghbor-shutdown")
            && e.to_string().contains("bgp-neighbor-shutdown")
    );
}

#[test]
fn hostile_lab_values_never_reach_a_command() {
    let dir = tempfile::tempdir().unwrap();
    let w = |n: &str, t: &str| {
        let p = dir.path().join(n);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, t).unwrap();
    };
    w(
        "lab.conf",
        "r1[0]=A\nr1[1]=B\nr1[2]=C\nr2[0]=C\nr2[1]=D\npc1[0]=A\npc2[0]=B\npc3[0]=D\n",
    );
    w(
        "r1.startup",
        "ip addr add 10.0.1.1/24 dev eth0\nip addr add 10.0.2.1/24 dev eth1\nip addr add 10.9.0.1/24 dev eth2\n\
         ip addr add 10.0.3.1/24 dev 'eth0;reboot'\n\
         vtysh -c 'configure terminal' -c 'router rip' -c 'network 10.0.0.0/8' -c 'network $(reboot)' -c end\n\
         service apache2';reboot' start\n",
    );
    w("r1/etc/frr/daemons", "ripd=yes\n");
    w(
        "r2.startup",
        "ip addr add 10.9.0.2/24 dev eth0\nip addr add 10.0.4.1/24 dev eth1\n",
    );
    w(
        "r2/etc/frr/frr.conf",
        "router bgp 65002\n neighbor 10.9.0.1;reboot remote-as 1\n neighbor 10.9.0.1 remote-as 6500$(id)\n\
         network 10.0.4.0/24';reboot'\nexit\ninterface eth0`id`\n ip ospf cost 5\n",
    );
    for (h, net) in [("pc1", "10.0.1"), ("pc2", "10.0.2"), ("pc3", "10.0.4")] {
        w(
            &format!("{h}.startup"),
            &format!(
                "ip addr add {net}.2/24 dev eth0\nip route add default via {net}.1\nip route add default via \"$(reboot)\"\n"
            ),
        );
    }
    let model = LabModel::load(dir.path(), "Hostile").unwrap();
    let r1 = model.device("r1").unwrap();
    assert!(r1.interfaces.iter().all(|i| !i.name.contains(';')));
    assert_eq!(
        r1.startup_vtysh, None,
        "a statement holding `$(` cannot be re-applied"
    );
    assert!(r1.services.is_empty());
    let r2 = model.device("r2").unwrap();
    let bgp = r2.routing.bgp.as_ref().unwrap();
    assert!(bgp.neighbors.is_empty() && bgp.networks.is_empty());
    assert!(r2.routing.ospf_ifaces.is_empty());
    let families = family::builtin().unwrap();
    let mut o = opts(1, None);
    o.id_prefix = "hostile".into();
    let p = plan(&model, &families, &o, &PlainTickets).unwrap();
    assert!(!p.variants.is_empty());
    for v in &p.variants {
        for bad in ["reboot", "$(", "`id`", ";reboot"] {
            assert!(!v.text.contains(bad), "{bad} in {}", v.id);
        }
    }
    // routing_daemon needs a configuration it can re-apply: r1's is refused.
    assert!(
        !p.variants
            .iter()
            .any(|v| v.family == "routing-daemon-killed" && v.target.starts_with("r1:"))
    );
}

#[cfg(unix)]
#[test]
fn a_lab_file_that_is_a_link_is_refused_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lab.conf"), "pc1[0]=A\n").unwrap();
    std::os::unix::fs::symlink("/etc/passwd", dir.path().join("pc1.startup")).unwrap();
    let e = LabModel::load(dir.path(), "L").unwrap_err();
    assert!(e.file.ends_with("pc1.startup"), "{e}");
    assert!(e.to_string().contains("symbolic link"), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let e = LabModel::load(empty.path(), "L").unwrap_err();
    assert!(e.to_string().contains("lab.conf"), "{e}");
}

#[test]
fn pairs_the_healthy_lab_does_not_connect_are_never_promised() {
    let dir = tempfile::tempdir().unwrap();
    let w = |n: &str, t: &str| std::fs::write(dir.path().join(n), t).unwrap();
    w(
        "lab.conf",
        "r1[0]=A\nr1[1]=B\npc1[0]=A\npc2[0]=B\npc3[0]=B\n",
    );
    w(
        "r1.startup",
        "ip addr add 10.0.1.1/24 dev eth0\nip addr add 10.0.2.1/24 dev eth1\n",
    );
    w(
        "pc1.startup",
        "ip addr add 10.0.1.2/24 dev eth0\nip route add default via 10.0.1.1\n",
    );
    w(
        "pc2.startup",
        "ip addr add 10.0.2.2/24 dev eth0\nip route add default via 10.0.2.1\n",
    );
    w(
        "pc3.startup",
        "ip addr add 10.0.2.3/24 dev eth0\nip route add default via 10.0.2.1\n",
    );
    let families = family::builtin().unwrap();
    let mut model = LabModel::load(dir.path(), "Demo").unwrap();
    let mut o = opts(1, None);
    o.families = vec!["host-link-down".into()];
    let before = plan(&model, &families, &o, &PlainTickets).unwrap();
    assert_eq!(before.variants.len(), 3);
    // Measured on the live lab (both directions, as calibrate_reach pings from every host):
    // pc1 and the hosts of B do not answer each other (a policy).
    for (h, ip) in [
        ("pc1", "10.0.2.2"),
        ("pc1", "10.0.2.3"),
        ("pc2", "10.0.1.2"),
        ("pc3", "10.0.1.2"),
    ] {
        model.unreachable.insert((h.into(), ip.parse().unwrap()));
    }
    let after = plan(&model, &families, &o, &PlainTickets).unwrap();
    // Nobody has a far host left on another LAN: no variant can promise its symptom.
    assert!(after.variants.is_empty());
    let f = &after.families[0];
    assert!(
        f.empty_because
            .as_deref()
            .unwrap_or("")
            .contains("host_interface"),
        "{f:?}"
    );
}

#[test]
fn kath1_vrrp_gateways_give_host_families_but_not_acls_on_the_return_path() {
    let model = LabModel::load(&topology("Kath1"), "Kath1").unwrap();
    let pc1 = model.devices.iter().find(|d| d.name == "pc1").unwrap();
    // pc1's gateway 10.1.0.1 is the VRRP address dswa1 is the master of (keepalived.conf).
    let (gw, iface) = model.gateway_of(pc1).expect("pc1's gateway is on its LAN");
    assert_eq!((gw.name.as_str(), iface.name.as_str()), ("dswa1", "br0.10"));
    assert!(gw.virtual_gateways.contains(&"10.1.0.1".parse().unwrap()));
    // Its backup answers for nothing while the master is up.
    let backup = model.devices.iter().find(|d| d.name == "dswa2").unwrap();
    assert!(
        !backup
            .virtual_gateways
            .contains(&"10.1.0.1".parse().unwrap())
    );
    let families = family::builtin().unwrap();
    let mut o = opts(1, None);
    o.id_prefix = "kath1".into();
    o.families = [
        "host-link-down",
        "gateway-acl-host-pair",
        "gateway-acl-return-path",
        "far-gateway-acl",
    ]
    .map(String::from)
    .to_vec();
    let c = enumerate(&model, &families, &o, &PlainTickets).unwrap();
    let count = |f: &str| {
        c.families
            .iter()
            .find(|p| p.family == f)
            .map_or(0, |p| p.candidates)
    };
    assert!(count("host-link-down") >= 5, "{}", count("host-link-down"));
    assert!(count("gateway-acl-host-pair") > 0);
    // Traffic back to a VRRP LAN may come through the backup router: no ACL on that direction.
    assert_eq!(count("gateway-acl-return-path"), 0);
    assert_eq!(count("far-gateway-acl"), 0);
}
