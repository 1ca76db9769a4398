//! Generation verified on real netns labs (needs root, FRR and iproute2; CI runs it as root):
//! a seeded handful of simple_bgp variants must inject, hold their checks and be fixed, on
//! shared labs that are reused only after a pristine check.

use faultbench_core::lab::Topology;
use faultbench_core::phases::PhaseOptions;
use faultbench_emu::netns::NetnsEmulator;
use faultbench_gen::family;
use faultbench_gen::generate::{GenOptions, plan};
use faultbench_gen::model::LabModel;
use faultbench_gen::ticket::PlainTickets;
use faultbench_gen::verify::verify_variant;
use std::path::Path;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn simple_bgp_variants_verify_live_on_shared_pristine_labs() {
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
        seed: 7,
        count: Some(8),
        families: vec![],
        shard: (1, 1),
        id_prefix: "nika_bgp".into(),
    };
    let p = plan(&model, &families, &opts, &PlainTickets).unwrap();
    assert_eq!(p.variants.len(), 8);
    let emulator = NetnsEmulator::new();
    let phases = PhaseOptions::default();
    let mut slot = None;
    let mut reused = 0;
    let mut failures = Vec::new();
    for v in &p.variants {
        let r = verify_variant(&emulator, &topology, &baseline, v, &phases, &mut slot).await;
        reused += usize::from(r.reused);
        if !r.passed {
            failures.push(format!("{}: {} {}", v.id, r.stage, r.reason));
        }
    }
    if let Some(k) = slot {
        k.release().await;
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(
        reused >= 4,
        "labs are shared after a pristine check ({reused} reuses)"
    );

    // A variant whose checks cannot hold (the family claims loss where there is none) fails
    // at verification and is never counted as verified.
    let mut broken = p.variants[0].clone();
    let text = broken
        .text
        .replace("=> expect loss>0", "=> expect 0% loss")
        .replace("=> expect 1", "=> expect 7");
    broken.spec = faultbench_core::scenario::ScenarioSpec::parse(&text).unwrap();
    let mut slot = None;
    let r = verify_variant(
        &emulator,
        &topology,
        &baseline,
        &broken,
        &PhaseOptions {
            verify: faultbench_core::inject::VerifyRetry {
                deadline: std::time::Duration::from_secs(3),
                ..PhaseOptions::default().verify
            },
            ..PhaseOptions::default()
        },
        &mut slot,
    )
    .await;
    if let Some(k) = slot {
        k.release().await;
    }
    assert!(!r.passed);
    assert_eq!(r.stage, "verification", "{}", r.reason);
}
