//! Every built-in family verified live (needs root, FRR and iproute2; CI runs it as root): one
//! variant of each family, on the smallest shipped topology it applies to, must inject, hold
//! its post-injection checks and be fixed back to the baseline, on shared labs reused only after
//! a pristine check.
//!
//! Families that need a device allowed to change kernel settings (`privileged == yes`) match
//! no shipped topology; they run on a copy of simple_bgp whose routers are privileged, as a
//! user's lab may declare them. The reverse-path families need a LAN with a second router
//! beside the gateway (only Kath1's VRRP pairs have one, and Kath1 is the largest lab); they
//! run on a five-device lab of that shape written by the test, its gateway privileged.

use faultbench_core::lab::Topology;
use faultbench_core::phases::PhaseOptions;
use faultbench_emu::netns::NetnsEmulator;
use faultbench_gen::family::{self, Family};
use faultbench_gen::generate::{GenOptions, plan};
use faultbench_gen::model::LabModel;
use faultbench_gen::ticket::PlainTickets;
use faultbench_gen::verify::verify_variant;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Shipped topologies, smallest first (the live cost grows with the device count).
const ORDER: [&str; 6] = [
    "simple_bgp",
    "dc_clos_bgp",
    "ospf_enterprise_static",
    "Kath5",
    "Kath2",
    "Kath3",
];

fn shipped(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../topologies")
        .join(name)
}

/// simple_bgp with both routers privileged, in a temporary folder.
fn privileged_simple_bgp(tmp: &Path) -> PathBuf {
    let src = shipped("simple_bgp");
    let dst = tmp.join("simple_bgp");
    let found = faultbench_core::fsutil::find_files(&src, |_| true).unwrap();
    for f in found.files {
        let rel = f.strip_prefix(&src).unwrap();
        let to = dst.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&f, &to).unwrap();
    }
    let conf = dst.join("lab.conf");
    let mut text = std::fs::read_to_string(&conf).unwrap();
    text.push_str("\nrouter1[privileged]=\"true\"\nrouter2[privileged]=\"true\"\n");
    std::fs::write(&conf, text).unwrap();
    dst
}

/// A LAN (pc1, pc2) with two routers: r1, the hosts' gateway, which also serves pc3's LAN,
/// and r2, joined to r1 by a link of their own. r1 is privileged. Written into `tmp`.
fn two_router_lan(tmp: &Path) -> PathBuf {
    let dst = tmp.join("two_router_lan");
    std::fs::create_dir_all(&dst).unwrap();
    let files: [(&str, &str); 7] = [
        (
            "lab.conf",
            "r1[0]=lana\nr1[1]=lanb\nr1[2]=link12\nr1[image]=\"kathara/base\"\n\
             r1[privileged]=\"true\"\nr2[0]=lana\nr2[1]=link12\nr2[image]=\"kathara/base\"\n\
             pc1[0]=lana\npc1[image]=\"kathara/base\"\npc2[0]=lana\npc2[image]=\"kathara/base\"\n\
             pc3[0]=lanb\npc3[image]=\"kathara/base\"\n",
        ),
        (
            "r1.startup",
            "ip addr add 10.0.1.1/24 dev eth0\nip addr add 10.0.2.1/24 dev eth1\n\
             ip addr add 10.0.12.1/30 dev eth2\n",
        ),
        (
            "r2.startup",
            "ip addr add 10.0.1.2/24 dev eth0\nip addr add 10.0.12.2/30 dev eth1\n\
             ip route add 10.0.2.0/24 via 10.0.12.1\n",
        ),
        (
            "pc1.startup",
            "ip addr add 10.0.1.11/24 dev eth0\nip route add default via 10.0.1.1\n",
        ),
        (
            "pc2.startup",
            "ip addr add 10.0.1.12/24 dev eth0\nip route add default via 10.0.1.1\n",
        ),
        (
            "pc3.startup",
            "ip addr add 10.0.2.13/24 dev eth0\nip route add default via 10.0.2.1\n",
        ),
        (
            "baseline.toml",
            "[[probe]]\nname = \"pc1 reaches pc3 through r1\"\nkind = \"reach\"\ndevice = \"pc1\"\n\
             command = \"ping -c2 -i0.2 -W1 10.0.2.13\"\nexpect = \"0% loss\"\n\n\
             [[probe]]\nname = \"pc2 reaches pc3 through r1\"\nkind = \"reach\"\ndevice = \"pc2\"\n\
             command = \"ping -c2 -i0.2 -W1 10.0.2.13\"\nexpect = \"0% loss\"\n\n\
             [[probe]]\nname = \"pc1 reaches the second router of its LAN\"\nkind = \"reach\"\n\
             device = \"pc1\"\ncommand = \"ping -c2 -i0.2 -W1 10.0.1.2\"\nexpect = \"0% loss\"\n",
        ),
    ];
    for (name, text) in files {
        std::fs::write(dst.join(name), text).unwrap();
    }
    dst
}

/// Verifies one variant of each family in `wanted` that applies to the lab in `dir`; returns
/// the families it covered and the failures.
async fn verify_on(
    dir: &Path,
    name: &str,
    families: &[Family],
    wanted: &BTreeSet<String>,
) -> (BTreeSet<String>, Vec<String>) {
    let model = LabModel::load(dir, name).unwrap();
    let all = GenOptions {
        seed: 1,
        count: None,
        families: wanted.iter().cloned().collect(),
        shard: (1, 1),
        id_prefix: format!("live_{}", name.to_lowercase()),
    };
    let applies: Vec<String> = plan(&model, families, &all, &PlainTickets)
        .unwrap()
        .families
        .into_iter()
        .filter(|f| f.candidates > 0)
        .map(|f| f.family)
        .collect();
    if applies.is_empty() {
        return (BTreeSet::new(), Vec::new());
    }
    // Round robin over the families: a sample of one per family.
    let one_each = GenOptions {
        count: Some(applies.len()),
        families: applies.clone(),
        ..all
    };
    let p = plan(&model, families, &one_each, &PlainTickets).unwrap();
    let fams: BTreeSet<&str> = p.variants.iter().map(|v| v.family.as_str()).collect();
    assert_eq!(
        fams.len(),
        applies.len(),
        "one variant per family on {name}"
    );
    let topology = Topology {
        id: name.into(),
        dir: dir.to_path_buf(),
    };
    let baseline = topology.baseline().unwrap();
    let emulator = NetnsEmulator::new();
    // What `faultbench generate` verifies with by default (`--baseline-timeout 60
    // --verify-timeout 30`): the baseline may take as long after a fix as after a deploy (an
    // OSPF interface made active again first waits for a hello, up to 10 s).
    let phases: PhaseOptions =
        faultbench_gen::verify::phase_options(Duration::from_secs(60), Duration::from_secs(30));
    let mut slot = None;
    let mut failures = Vec::new();
    for v in &p.variants {
        let r = verify_variant(&emulator, &topology, &baseline, v, &phases, &mut slot).await;
        eprintln!(
            "{name}: {} {} ({:.1} s)",
            v.id,
            if r.passed { "verified" } else { "FAILED" },
            r.seconds
        );
        if !r.passed {
            failures.push(format!("{name}: {}: {} {}", v.id, r.stage, r.reason));
        }
    }
    if let Some(k) = slot {
        k.release().await;
    }
    (applies.into_iter().collect(), failures)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_family_verifies_live_on_the_smallest_topology_it_applies_to() {
    faultbench_emu::netns::preflight().expect("netns labs need root and the lab packages");
    let families = family::builtin().unwrap();
    let mut left: BTreeSet<String> = families.iter().map(|f| f.family.id.clone()).collect();
    let mut failures = Vec::new();
    let tmp = tempfile::tempdir().unwrap();
    let privileged = privileged_simple_bgp(tmp.path());
    let mut labs: Vec<(PathBuf, String)> = ORDER
        .iter()
        .map(|n| (shipped(n), (*n).to_string()))
        .collect();
    labs.push((privileged, "simple_bgp_privileged".into()));
    labs.push((two_router_lan(tmp.path()), "two_router_lan".into()));
    for (dir, name) in &labs {
        if left.is_empty() {
            break;
        }
        let (covered, failed) = verify_on(dir, name, &families, &left).await;
        left.retain(|f| !covered.contains(f));
        failures.extend(failed);
    }
    assert!(
        left.is_empty(),
        "families that apply to no topology tried: {left:?}"
    );
    assert!(failures.is_empty(), "{failures:#?}");
}
