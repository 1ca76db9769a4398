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

/// `variant` with its `[FIX]` section replaced by `fix` (parsed again).
fn with_fix(
    variant: &faultbench_gen::render::Variant,
    fix: &str,
) -> faultbench_gen::render::Variant {
    let text = &variant.text;
    let start = text.find("[FIX]\n").expect("a [FIX] section") + "[FIX]\n".len();
    let end = start + text[start..].find("\n[").expect("a section after [FIX]");
    let mut v = variant.clone();
    v.text = format!("{}{fix}\n{}", &text[..start], &text[end..]);
    v.spec = faultbench_core::scenario::ScenarioSpec::parse(&v.text).unwrap();
    v
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fix_that_does_not_restore_fails_and_residue_on_a_touched_device_is_never_reused() {
    faultbench_emu::netns::preflight().expect("netns labs need root and the lab packages");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/simple_bgp");
    let topology = Topology {
        id: "simple_bgp".into(),
        dir: dir.clone(),
    };
    let baseline = topology.baseline().unwrap();
    let model = LabModel::load(&dir, "simple_bgp").unwrap();
    let families = family::builtin().unwrap();
    let pick = |family: &str| {
        let opts = GenOptions {
            seed: 1,
            count: Some(1),
            families: vec![family.into()],
            shard: (1, 1),
            id_prefix: "nika_bgp".into(),
        };
        plan(&model, &families, &opts, &PlainTickets)
            .unwrap()
            .variants
            .remove(0)
    };
    let emulator = NetnsEmulator::new();
    let phases = faultbench_gen::verify::phase_options(
        std::time::Duration::from_secs(20),
        std::time::Duration::from_secs(10),
    );
    let mut slot = None;

    // The link stays down: the [FIX] runs but the baseline does not come back.
    let down = pick("host-link-down");
    let device = down.faulted_device();
    let unfixed = with_fix(&down, &format!("Do nothing.\n`true` on {device}"));
    let r = verify_variant(
        &emulator, &topology, &baseline, &unfixed, &phases, &mut slot,
    )
    .await;
    assert!(!r.passed, "{r:?}");
    assert_eq!(r.stage, "revert", "{}", r.reason);
    assert!(
        slot.is_none(),
        "a lab whose baseline is broken is never kept"
    );

    // The fix restores the baseline but leaves an extra address on the device it ran on:
    // the variant verifies, and the lab is not handed to another variant.
    let drop = pick("host-firewall-drop");
    let fix_section = drop.text.split("[FIX]\n").nth(1).unwrap();
    let fix_steps: Vec<String> = fix_section[..fix_section.find("\n[").unwrap()]
        .lines()
        .filter(|l| l.starts_with('`'))
        .map(str::to_string)
        .collect();
    let device = drop.faulted_device();
    let leaky = with_fix(
        &drop,
        &format!(
            "Undo the rule, and leave an address behind.\n{}\n`ip addr add 192.0.2.77/32 dev lo` on {device}",
            fix_steps.join("\n")
        ),
    );
    let r = verify_variant(&emulator, &topology, &baseline, &leaky, &phases, &mut slot).await;
    let kept = slot.is_some();
    if let Some(k) = slot.take() {
        k.release().await;
    }
    assert!(r.passed, "{}: {} {}", leaky.id, r.stage, r.reason);
    assert!(
        !kept,
        "a lab with a leftover on a touched device is not reused"
    );
    assert!(r.reason.contains("192.0.2.77"), "{}", r.reason);

    // The unchanged variant on a fresh lab verifies and leaves the lab pristine (reused).
    let r = verify_variant(&emulator, &topology, &baseline, &drop, &phases, &mut slot).await;
    let kept = slot.is_some();
    if let Some(k) = slot.take() {
        k.release().await;
    }
    assert!(r.passed, "{}: {} {}", drop.id, r.stage, r.reason);
    assert!(kept, "a fix that undoes everything leaves a reusable lab");
}
