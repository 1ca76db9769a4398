//! Multi-fault scenarios without a lab: the conflict rules refuse by rule, the composed file
//! is in the release's format and names every fault, and the rubric judge gives a diagnosis
//! that names one of two faults less than full marks.

use faultbench_core::Diagnosis;
use faultbench_core::scenario::{Scenario, ScenarioSpec};
use faultbench_gen::family;
use faultbench_gen::generate::{GenOptions, plan};
use faultbench_gen::model::LabModel;
use faultbench_gen::multi::{self, ComposeError, Conflict, MultiOptions};
use faultbench_gen::render::Variant;
use faultbench_gen::symptom::{ObservedSymptoms, PairObs, Reach};
use faultbench_gen::ticket::PlainTickets;
use faultbench_judge::RubricJudge;
use std::path::Path;

/// Every single-fault candidate of simple_bgp and the lab's device names.
fn singles() -> (Vec<Variant>, Vec<String>) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/simple_bgp");
    let model = LabModel::load(&dir, "simple_bgp").unwrap();
    let opts = GenOptions {
        seed: 1,
        count: None,
        families: vec![],
        shard: (1, 1),
        id_prefix: "nika_bgp".into(),
    };
    let p = plan(&model, &family::builtin().unwrap(), &opts, &PlainTickets).unwrap();
    let devices = model.devices.iter().map(|d| d.name.clone()).collect();
    (p.variants, devices)
}

fn find<'a>(vs: &'a [Variant], family: &str, device: &str) -> &'a Variant {
    vs.iter()
        .find(|v| v.family == family && v.faulted_device() == device)
        .unwrap_or_else(|| panic!("simple_bgp has no {family} on {device}"))
}

fn pair(a: &Variant, b: &Variant, devices: &[String]) -> Result<multi::MultiVariant, ComposeError> {
    multi::compose(
        vec![a.clone(), b.clone()],
        devices,
        "simple_bgp",
        "nika_bgp",
    )
}

#[test]
fn conflicting_combinations_are_refused_by_rule() {
    let (vs, devices) = singles();
    let link = find(&vs, "host-link-down", "pc1");
    // Same device and resource: both change pc1's interface.
    let typo = find(&vs, "host-address-typo", "pc1");
    match pair(link, typo, &devices) {
        Err(ComposeError::Conflict(Conflict::SameResource {
            device, resource, ..
        })) => {
            assert_eq!(device, "pc1");
            assert!(resource.starts_with("interface "), "{resource}");
        }
        other => panic!("expected a same-resource refusal, got {other:?}"),
    }
    // One fault's fix undoes the other: bringing pc1's link back also puts its default route
    // back, which is the whole of the other fault.
    let no_default = find(&vs, "host-default-route-removed", "pc1");
    match pair(link, no_default, &devices) {
        Err(ComposeError::Conflict(c @ Conflict::FixUndoes { .. })) => {
            assert_eq!(c.rule(), "fix-undoes-other");
            assert!(c.to_string().contains("the routes"), "{c}");
        }
        other => panic!("expected a fix-undoes refusal, got {other:?}"),
    }
    // Same device and layer, different chains: still one broken filter to a user.
    let input = find(&vs, "far-host-input-drop", "pc1");
    let output = find(&vs, "far-host-output-drop", "pc1");
    assert!(matches!(
        pair(input, output, &devices),
        Err(ComposeError::Conflict(Conflict::SameLayer { .. }))
    ));
    // A fault whose checks need the BGP session up, with one that takes it down (found live:
    // the second fault's check could never hold).
    let port = find(&vs, "bgp-port-blocked", "router1");
    let policy = find(&vs, "bgp-route-map-deny-in", "router2");
    match pair(port, policy, &devices) {
        Err(ComposeError::Conflict(c @ Conflict::BreaksPrecondition { .. })) => {
            assert_eq!(c.rule(), "breaks-session-check");
            assert!(c.to_string().contains("Established"), "{c}");
        }
        other => panic!("expected a session-check refusal, got {other:?}"),
    }
    // A fault with itself, and a false premise, are refused too.
    assert!(matches!(
        pair(link, link, &devices),
        Err(ComposeError::Conflict(Conflict::Duplicate(_)))
    ));
    let mut none = link.clone();
    none.spec = ScenarioSpec::parse(
        &link
            .text
            .replace("cmd: ip link set dev eth0 down", "note: nothing"),
    )
    .unwrap();
    assert!(none.spec.injection().is_negative_control());
    assert!(matches!(
        pair(&none, typo, &devices),
        Err(ComposeError::Conflict(Conflict::NothingInjected(_)))
    ));
    // Four faults are too many.
    let four = vec![link.clone(), typo.clone(), input.clone(), output.clone()];
    assert!(matches!(
        multi::compose(four, &devices, "simple_bgp", "x"),
        Err(ComposeError::Count(4))
    ));
}

#[test]
fn a_masking_pair_is_one_release_format_file_that_names_both_faults() {
    let (vs, devices) = singles();
    let link = find(&vs, "host-link-down", "pc1");
    let bgp = find(&vs, "bgp-neighbor-shutdown", "router1");
    let mv = pair(bgp, link, &devices).unwrap();
    assert_eq!(mv.masking, vec![(1, 0)], "pc1's link hides the BGP fault");
    assert_eq!(mv.fix_order, vec![1, 0], "the mask is fixed first");
    let spec = ScenarioSpec::parse(&mv.variant.text).unwrap();
    assert_eq!(spec, mv.variant.spec);
    let ff = spec.headers().fault_family.clone().unwrap();
    assert!(
        ff.starts_with("multi-fault (2): ") && ff.ends_with("(masking)"),
        "{ff}"
    );
    assert_eq!(spec.injection().devices(), vec!["router1", "pc1"]);
    let groups = spec.fault_groups();
    assert_eq!(groups.len(), 2);
    assert_eq!(groups[1].label, "host-link-down on pc1");
    // Connectivity controls are left out: the other fault breaks them.
    assert!(
        spec.post_inject_checks()
            .iter()
            .all(|c| !c.expect.contains("0% loss"))
    );
    let truth = spec.section("GROUND-TRUTH").unwrap();
    assert!(
        truth.contains("Fault 1 of 2: bgp-neighbor-shutdown on router1"),
        "{truth}"
    );
    assert!(truth.contains("Masking: fault 2"), "{truth}");
    let identifies: Vec<&str> = spec
        .scoring_axes()
        .iter()
        .filter_map(|a| a.raw.strip_prefix("assert-identifies: "))
        .collect();
    assert_eq!(identifies, vec!["router1", "pc1"]);
    // The ticket reports what a user sees: pc1 cut off (the BGP fault is hidden behind it).
    assert!(spec.ticket().contains("pc1"), "{}", spec.ticket());
    // The [FIX] runs both fixes, mask first, each on its device.
    let fixes = faultbench_gen::multi::rules::fix_commands(&mv.variant, &devices);
    assert_eq!(fixes.first().map(|f| f.0.as_str()), Some("pc1"));
    assert_eq!(fixes.last().map(|f| f.0.as_str()), Some("router1"));
    // The same components in the same order give the same file.
    assert_eq!(
        pair(bgp, link, &devices).unwrap().variant.text,
        mv.variant.text
    );
}

fn answer(text: &str, devices: &str) -> Diagnosis {
    Diagnosis::parse(&format!(
        "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: {devices}\ndiagnosis_text:\n{text}\n=== END ==="
    ))
    .unwrap()
}

fn truth_of(v: &Variant) -> String {
    let t = v.spec.section("GROUND-TRUTH").unwrap();
    let pick = |k: &str| {
        t.lines()
            .find_map(|l| l.strip_prefix(k))
            .unwrap_or_default()
            .to_string()
    };
    format!(
        "{} {} The fix: {}",
        pick("Root cause: "),
        pick("Mechanism: "),
        pick("Fix: ")
    )
}

#[test]
fn the_rubric_judge_gives_less_than_full_marks_to_one_fault_of_two() {
    let (vs, devices) = singles();
    let acl = find(&vs, "gateway-acl-return-path", "router2");
    let bgp = find(&vs, "bgp-neighbor-shutdown", "router1");
    let mv = pair(bgp, acl, &devices).unwrap();
    assert!(mv.masking.is_empty());
    let judge = RubricJudge::new();
    let both = judge.score(
        &mv.variant.spec,
        &answer(
            &format!("{} {}", truth_of(bgp), truth_of(acl)),
            "router1, router2",
        ),
    );
    let one = judge.score(&mv.variant.spec, &answer(&truth_of(bgp), "router1"));
    assert!(one.must_passed < one.must_total, "{one:#?}");
    assert!(
        !one.is_correct(),
        "one fault of two is not a correct diagnosis: {one:#?}"
    );
    assert!(both.outcome > one.outcome, "both {both:#?}\none {one:#?}");
    assert_eq!(both.must_passed, both.must_total, "{both:#?}");
}

#[test]
fn the_plan_is_seeded_and_counts_refusals_per_rule() {
    let (vs, devices) = singles();
    let opts = MultiOptions {
        faults: 2,
        count: 6,
        seed: 3,
        topology: "simple_bgp".into(),
        id_prefix: "nika_bgp".into(),
    };
    let p = multi::plan_multi(&vs, &devices, &opts);
    assert_eq!(p.variants.len(), 6);
    assert!(
        p.variants.iter().any(|m| !m.masking.is_empty()),
        "masking pairs are drawn"
    );
    assert!(
        p.refused.get("fix-undoes-other").copied().unwrap_or(0) > 0,
        "{:?}",
        p.refused
    );
    assert!(
        p.refused
            .get("same-device-and-resource")
            .copied()
            .unwrap_or(0)
            > 0
    );
    for m in &p.variants {
        let refs: Vec<&Variant> = m.components.iter().collect();
        assert!(multi::check_all(&refs, &devices).is_ok());
    }
    let again = multi::plan_multi(&vs, &devices, &opts);
    let ids = |p: &multi::MultiPlan| {
        p.variants
            .iter()
            .map(|m| m.variant.id.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&p), ids(&again));
    let three = multi::plan_multi(&vs, &devices, &MultiOptions { faults: 3, ..opts });
    assert!(three.variants.iter().all(|m| m.components.len() == 3));
}

#[test]
fn the_llm_judge_is_asked_about_every_fault() {
    let (vs, devices) = singles();
    let acl = find(&vs, "gateway-acl-return-path", "router2");
    let bgp = find(&vs, "bgp-neighbor-shutdown", "router1");
    let mv = pair(bgp, acl, &devices).unwrap();
    let spec = &mv.variant.spec;
    // The items the LLM judge grades are the must/bonus axes, the same selection as its own.
    let items: Vec<&str> = spec
        .scoring_axes()
        .iter()
        .filter(|a| a.raw.starts_with("must-") || a.raw.starts_with("bonus-"))
        .map(|a| a.raw.as_str())
        .collect();
    let user = faultbench_judge::llm::prompts::outcome_user(
        spec.ground_truth(),
        &answer(&truth_of(bgp), "router1"),
        &items,
    );
    for c in [bgp, acl] {
        let component = c
            .spec
            .scoring_axes()
            .iter()
            .find(|a| a.raw.starts_with("must-identify-component"))
            .unwrap()
            .raw
            .clone();
        assert!(
            user.contains(&component),
            "{component} missing from\n{user}"
        );
        assert!(user.contains(&format!("{} on {}", c.family, c.faulted_device())));
    }
    assert!(user.contains("names every one of them"), "{user}");
}

/// The probe of `v`'s symptom view, answered with `reach`, as measured on a lab.
fn observed(v: &Variant, reach: Reach) -> ObservedSymptoms {
    let (victim, _) = v.symptom.victim.clone().unwrap();
    let (far, far_ip) = v.symptom.far.clone().unwrap();
    ObservedSymptoms {
        kind: v.symptom.kind.clone(),
        pairs: vec![PairObs {
            from: victim,
            to: far,
            to_ip: far_ip,
            reach,
        }],
        device: v.faulted_device(),
        ..ObservedSymptoms::default()
    }
}

#[test]
fn the_ticket_of_a_masking_pair_names_only_what_the_combined_lab_showed() {
    let (vs, devices) = singles();
    let link = find(&vs, "host-link-down", "pc1");
    let bgp = find(&vs, "bgp-neighbor-shutdown", "router1");
    let mv = pair(bgp, link, &devices).unwrap();
    // Injection order: the BGP fault, then pc1's link. With both in place pc1 has no route at
    // all, and the BGP fault's probe (from pc1) fails for the same reason.
    let obs = vec![
        observed(bgp, Reach::NoRoute),
        observed(link, Reach::NoRoute),
    ];
    assert_eq!(
        obs[0].pairs[0].from, "pc1",
        "the BGP fault is seen from pc1"
    );
    let spec = multi::verify::observed_ticket(&mv, &obs).unwrap();
    let ticket = spec.ticket();
    let far = &obs[1].pairs[0].to;
    assert!(
        ticket.contains("pc1") && ticket.contains(far.as_str()),
        "{ticket}"
    );
    assert!(
        !ticket.contains("router1"),
        "the masked fault shows nothing: {ticket}"
    );
    // Only the ticket changed.
    assert_eq!(spec.id(), mv.variant.spec.id());
    assert_eq!(spec.fault_groups(), mv.variant.spec.fault_groups());
    assert_eq!(
        spec.section("GROUND-TRUTH"),
        mv.variant.spec.section("GROUND-TRUTH")
    );
    // The journal keeps the observations.
    let entry = faultbench_gen::journal::JournalEntry {
        seed: 1,
        id: mv.variant.id.clone(),
        family: mv.variant.family.clone(),
        topology: "simple_bgp".into(),
        hash: mv.variant.hash.clone(),
        verdict: "verified".into(),
        stage: String::new(),
        reason: String::new(),
        seconds: 1.0,
        symptoms: None,
        fault_symptoms: obs.clone(),
        phases: None,
        draw: 0,
    };
    let line = serde_json::to_string(&entry).unwrap();
    let back: faultbench_gen::journal::JournalEntry = serde_json::from_str(&line).unwrap();
    assert_eq!(back.fault_symptoms, obs);
}
