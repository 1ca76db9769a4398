//! Multi-fault scenarios on real netns labs of simple_bgp (needs root, FRR and iproute2):
//! seeded combinations verify live (each injection takes, the faults hold together, each fix
//! leaves the others, the fixes restore the baseline), and the repair task calls a scenario
//! of two faults repaired only once both are fixed. Each verified scenario's journal carries
//! what every fault's probes showed with all faults in place, and its ticket, written from
//! that, names the failing pairs measured and nothing of a masked fault.

use faultbench_core::emulator::Lab;
use faultbench_core::lab::Topology;
use faultbench_core::phases::{self, FaultVerdict, PhaseOptions};
use faultbench_core::repair::{RepairClock, RepairOptions, RepairVerdict, verify_repair};
use faultbench_core::scenario::Scenario;
use faultbench_core::snapshot::{Snapshot, SnapshotOptions};
use faultbench_emu::netns::NetnsEmulator;
use faultbench_gen::family;
use faultbench_gen::generate::{GenOptions, plan};
use faultbench_gen::journal;
use faultbench_gen::model::LabModel;
use faultbench_gen::multi::{self, MultiOptions};
use faultbench_gen::render::Variant;
use faultbench_gen::symptom::ObservedSymptoms;
use faultbench_gen::ticket::PlainTickets;
use faultbench_gen::tickets;
use faultbench_gen::verify::Verification;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn lab_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/simple_bgp")
}

fn topology() -> Topology {
    Topology {
        id: "simple_bgp".into(),
        dir: lab_dir(),
    }
}

fn singles() -> (Vec<Variant>, Vec<String>) {
    let model = LabModel::load(&lab_dir(), "simple_bgp").unwrap();
    let opts = GenOptions {
        seed: 1,
        count: None,
        families: vec![],
        shard: (1, 1),
        id_prefix: "nika_bgp".into(),
    };
    let p = plan(&model, &family::builtin().unwrap(), &opts, &PlainTickets).unwrap();
    (
        p.variants,
        model.devices.iter().map(|d| d.name.clone()).collect(),
    )
}

fn find<'a>(vs: &'a [Variant], family: &str, device: &str) -> &'a Variant {
    vs.iter()
        .find(|v| v.family == family && v.faulted_device() == device)
        .unwrap_or_else(|| panic!("simple_bgp has no {family} on {device}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn seeded_multi_fault_scenarios_verify_live() {
    faultbench_emu::netns::preflight().expect("netns labs need root and the lab packages");
    let (vs, devices) = singles();
    let base = MultiOptions {
        faults: 2,
        count: 3,
        seed: 11,
        topology: "simple_bgp".into(),
        id_prefix: "nika_bgp".into(),
    };
    let mut chosen = multi::plan_multi(&vs, &devices, &base).variants;
    chosen.extend(
        multi::plan_multi(
            &vs,
            &devices,
            &MultiOptions {
                faults: 3,
                count: 1,
                ..base
            },
        )
        .variants,
    );
    assert_eq!(chosen.len(), 4);
    assert!(
        chosen.iter().any(|m| !m.masking.is_empty()),
        "a masking pair is among them"
    );
    let emulator = NetnsEmulator::new();
    let topology = topology();
    let baseline = topology.baseline().unwrap();
    let mut failures = Vec::new();
    let mut pairs_reported = 0;
    for mv in &chosen {
        let r = multi::verify::verify_multi(
            &emulator,
            &topology,
            &baseline,
            mv,
            &PhaseOptions::default(),
        )
        .await;
        eprintln!(
            "{} [{}] passed={} {:.1}s {} {}",
            mv.variant.id, mv.variant.family, r.passed, r.seconds, r.stage, r.reason
        );
        if !r.passed {
            failures.push(format!(
                "{} ({}): {} {}",
                mv.variant.id, mv.variant.family, r.stage, r.reason
            ));
            continue;
        }
        pairs_reported += observed_ticket_is_what_the_lab_showed(mv, &r);
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(
        pairs_reported > 0,
        "some scenario shows a failing pair with every fault in place"
    );

    // A composition whose second fault cannot hold its check fails where it should, and is
    // never counted as verified.
    let mut broken = chosen[0].clone();
    broken.groups[1].checks[0].expect = "7".into();
    let quick = PhaseOptions {
        verify: faultbench_core::inject::VerifyRetry {
            deadline: Duration::from_secs(3),
            ..PhaseOptions::default().verify
        },
        ..PhaseOptions::default()
    };
    let r = multi::verify::verify_multi(&emulator, &topology, &baseline, &broken, &quick).await;
    assert!(!r.passed);
    assert_eq!(r.stage, "verification", "{}", r.reason);
    assert!(r.reason.contains("fault 2"), "{}", r.reason);
}

/// The journal of a verified `mv` carries each fault's observation on the combined lab, and the
/// ticket written from them names every failing pair they show, and no device of a fault
/// masked by another. Returns how many failing pairs the ticket reports.
fn observed_ticket_is_what_the_lab_showed(mv: &multi::MultiVariant, r: &Verification) -> usize {
    assert_eq!(
        r.observed_faults.len(),
        mv.components.len(),
        "{}",
        mv.variant.id
    );
    for (k, o) in r.observed_faults.iter().enumerate() {
        assert_eq!(o.device, mv.components[k].faulted_device());
    }
    let entry = r.entry(&mv.variant, 11, "simple_bgp");
    assert_eq!(entry.fault_symptoms, r.observed_faults);
    let line = serde_json::to_string(&entry).unwrap();
    let back: journal::JournalEntry = serde_json::from_str(&line).unwrap();
    assert_eq!(back.fault_symptoms, r.observed_faults);

    let spec = multi::verify::observed_ticket(mv, &r.observed_faults).unwrap();
    let ticket = spec.ticket();
    eprintln!("  masking {:?}, ticket: {ticket}", mv.masking);
    let ordered: Vec<ObservedSymptoms> = mv
        .fix_order
        .iter()
        .map(|&k| r.observed_faults[k].clone())
        .collect();
    let shown = tickets::multi::shown(&ordered);
    // A fault hidden by another shows nothing of its own with both in place.
    for &(_, hidden) in &mv.masking {
        let at = mv.fix_order.iter().position(|&k| k == hidden).unwrap();
        assert!(
            !shown.contains(&at),
            "{}: the masked fault {} is reported: {:?}",
            mv.variant.id,
            mv.label(hidden),
            ordered[at]
        );
    }
    let mut named = std::collections::BTreeSet::new();
    let mut reported = 0;
    for k in shown {
        if let Some(p) = ordered[k].failing_pair() {
            assert!(
                ticket.contains(&p.from) && ticket.contains(&p.to_ip),
                "{}: the ticket misses {} -> {} ({}): {ticket}",
                mv.variant.id,
                p.from,
                p.to,
                p.to_ip
            );
            named.extend([p.from.clone(), p.to.clone()]);
            reported += 1;
        }
        if let Some(s) = &ordered[k].service {
            named.extend([s.client.clone(), s.server.clone()]);
        }
    }
    for &(_, hidden) in &mv.masking {
        let device = mv.components[hidden].faulted_device();
        if !named.contains(&device) {
            assert!(
                !ticket.contains(&format!("{device} ")) && !ticket.contains(&format!("{device}.")),
                "{}: the masked fault's device {device} is in the ticket: {ticket}",
                mv.variant.id
            );
        }
    }
    reported
}

async fn fix_one(lab: &dyn Lab, v: &Variant, baseline: &faultbench_core::lab::Baseline) {
    let quick = PhaseOptions {
        revert_wait: Duration::ZERO,
        ..PhaseOptions::default()
    };
    let r = phases::revert(lab, baseline, &v.spec, &quick).await;
    assert!(r.commands > 0 && r.problem.is_none(), "{:?}", r.problem);
}

/// Injects the two faults, fixes one and then the other, and checks the repair verdicts.
async fn fix_one_then_the_other(
    lab: Arc<dyn Lab>,
    mv: multi::MultiVariant,
    baseline: faultbench_core::lab::Baseline,
) {
    let (bgp, acl) = (&mv.components[0], &mv.components[1]);
    let scenario = &mv.variant.spec;
    let opts = PhaseOptions::default();
    assert!(
        phases::wait_for_healthy(lab.as_ref(), &baseline, &opts)
            .await
            .passed()
    );
    let snap = SnapshotOptions::default();
    let pre = Snapshot::take(lab.as_ref(), &snap).await;
    let took = phases::inject_and_verify(lab.as_ref(), scenario, &opts).await;
    assert_eq!(took.verdict, FaultVerdict::Took, "{:?}", took.verdict);
    assert!(
        phases::watch_presence(lab.as_ref(), scenario, &baseline, &opts)
            .await
            .held
    );
    let clock = RepairClock::start(
        lab.clone(),
        scenario.fault_groups(),
        Duration::from_millis(300),
        Duration::from_secs(15),
    );
    let repair = RepairOptions::default();

    // The ACL is fixed, the BGP session is still shut.
    fix_one(lab.as_ref(), acl, &baseline).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = Snapshot::take(lab.as_ref(), &snap).await;
    let half = verify_repair(
        lab.as_ref(),
        scenario,
        &baseline,
        &pre,
        &after,
        true,
        &repair,
    )
    .await;
    assert_eq!(half.verdict, RepairVerdict::NotRepaired, "{}", half.reason);
    let left = &half.fault.as_ref().unwrap().still_present;
    assert_eq!(
        left,
        &vec!["bgp-neighbor-shutdown on router1".to_string()],
        "{}",
        half.reason
    );
    assert!(
        half.reason.contains("bgp-neighbor-shutdown on router1"),
        "{}",
        half.reason
    );
    // The presence watch sees that the situation the agent was given has changed.
    assert!(
        !phases::watch_presence(lab.as_ref(), scenario, &baseline, &opts)
            .await
            .held
    );
    let clock = clock.stop().await;
    assert_eq!(
        clock.cleared_after_ms, None,
        "one fault of two fixed is no repair"
    );
    assert!(clock.rounds > 0);

    // Both fixed.
    fix_one(lab.as_ref(), bgp, &baseline).await;
    let after = Snapshot::take(lab.as_ref(), &snap).await;
    let whole = verify_repair(
        lab.as_ref(),
        scenario,
        &baseline,
        &pre,
        &after,
        true,
        &repair,
    )
    .await;
    assert!(
        whole.verdict.is_repaired(),
        "{:?}: {}",
        whole.verdict,
        whole.reason
    );
    assert!(whole.fault.as_ref().unwrap().still_present.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn repair_of_two_faults_is_whole_only_when_both_are_fixed() {
    faultbench_emu::netns::preflight().expect("netns labs need root and the lab packages");
    let (vs, devices) = singles();
    let acl = find(&vs, "gateway-acl-return-path", "router2");
    let bgp = find(&vs, "bgp-neighbor-shutdown", "router1");
    let mv = multi::compose(
        vec![bgp.clone(), acl.clone()],
        &devices,
        "simple_bgp",
        "nika_bgp",
    )
    .unwrap();
    let emulator = NetnsEmulator::new();
    let topology = topology();
    let baseline = topology.baseline().unwrap();
    let lab = phases::deploy(&emulator, &topology, None)
        .await
        .lab
        .unwrap();
    // Run in a task so that the lab is torn down even when an assertion fails.
    let r = tokio::spawn(fix_one_then_the_other(lab.clone(), mv, baseline)).await;
    let _ = lab.teardown().await;
    if let Err(e) = r {
        std::panic::resume_unwind(e.into_panic());
    }
}
