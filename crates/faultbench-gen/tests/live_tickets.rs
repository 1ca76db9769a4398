//! Tickets on a real netns lab (needs root, FRR and iproute2): symptoms are measured while a
//! fault holds, every built-in false-premise claim bound on simple_bgp is shown false on the
//! healthy lab, and a claim that is true there is not.

use faultbench_core::lab::Topology;
use faultbench_core::phases::PhaseOptions;
use faultbench_emu::netns::NetnsEmulator;
use faultbench_gen::claims;
use faultbench_gen::family;
use faultbench_gen::generate::{GenOptions, plan};
use faultbench_gen::model::LabModel;
use faultbench_gen::symptom::Reach;
use faultbench_gen::ticket::PlainTickets;
use faultbench_gen::verify::verify_variant;
use std::path::Path;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symptoms_are_measured_and_false_premises_are_checked_live() {
    faultbench_emu::netns::preflight().expect("netns labs need root and the lab packages");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/simple_bgp");
    let topology = Topology {
        id: "simple_bgp".into(),
        dir: dir.clone(),
    };
    let baseline = topology.baseline().unwrap();
    let model = LabModel::load(&dir, "simple_bgp").unwrap();
    let families = family::builtin().unwrap();
    let opts = GenOptions {
        seed: 1,
        count: None,
        families: vec!["bgp-neighbor-shutdown".into()],
        shard: (1, 1),
        id_prefix: "nika_bgp".into(),
    };
    let p = plan(&model, &families, &opts, &PlainTickets).unwrap();
    let v = &p.variants[0];
    let emulator = NetnsEmulator::new();
    let mut slot = None;
    let r = verify_variant(
        &emulator,
        &topology,
        &baseline,
        v,
        &PhaseOptions::default(),
        &mut slot,
    )
    .await;
    let kept = slot.take();
    assert!(r.passed, "{} {}", r.stage, r.reason);
    let obs = r.observed.expect("a verified variant carries its symptoms");
    let failing = obs
        .failing_pair()
        .expect("the fault is visible from the victim");
    assert!(
        !matches!(failing.reach, Reach::Answers | Reach::Unknown),
        "{obs:?}"
    );
    assert!(obs.trace.is_some());
    // bgpd still runs and both interfaces have carrier while the session is shut down: the
    // facts a wrong-cause ticket contradicts.
    assert!(!obs.facts.is_empty(), "{obs:?}");

    let kept = kept.expect("the lab is pristine after the fix and kept");
    let all = claims::candidates(&model, &claims::builtin().unwrap());
    assert!(all.len() >= 4);
    let mut refused = Vec::new();
    for c in &all {
        let f = claims::refute(kept.lab(), c).await;
        if !f.false_on_lab {
            refused.push(format!("{} {:?}: {:?}", c.claim, c.params, f.failed));
        }
    }
    // A claim that is true: a host cannot reach an address nobody holds.
    let mut truthful = all
        .iter()
        .find(|c| c.claim == "host-unreachable")
        .unwrap()
        .clone();
    for k in &mut truthful.checks {
        k.command = k
            .command
            .replace(&truthful.params["b_ip"], "10.254.254.254");
    }
    let t = claims::refute(kept.lab(), &truthful).await;
    kept.release().await;
    assert!(refused.is_empty(), "{refused:#?}");
    assert!(!t.false_on_lab, "a true claim must not be refuted");
}
