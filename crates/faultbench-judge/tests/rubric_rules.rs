//! The rubric judge's rules on real scenario files of the public release (found through
//! `faultbench-testkit`; the tests reading them record that they did not run without it).

use faultbench_core::Diagnosis;
use faultbench_core::judge::Scores;
use faultbench_core::scenario::{AxisKind, ScenarioFile, ScenarioSpec};
use faultbench_judge::RubricJudge;
use faultbench_judge::rubric::{IntendedPolicy, PolicyBook};
use faultbench_testkit::release_for_test;

/// A Kath2 scenario of the release, `layer/id.txt`; `None` when the release is missing.
fn scenario(rel: &str) -> Option<ScenarioFile> {
    let release = release_for_test()?;
    let (layer, file) = rel.split_once('/').unwrap();
    let id = file.strip_suffix(".txt").unwrap();
    Some(ScenarioFile::load(release.scenario("kath2_Q", layer, id)).unwrap())
}

fn diag(anomaly: Option<bool>, devices: &[&str], text: &str) -> Diagnosis {
    Diagnosis {
        is_anomaly: anomaly,
        faulty_devices: devices.iter().map(|d| d.to_string()).collect(),
        text: text.into(),
        parsed_ok: anomaly.is_some(),
    }
}

fn verdict(s: &Scores, slug: &str) -> bool {
    s.per_axis
        .iter()
        .find(|v| v.axis.starts_with(slug))
        .unwrap_or_else(|| panic!("no axis {slug} in {s:#?}"))
        .score
        >= 1.0
}

#[test]
fn a_correct_diagnosis_in_other_words_is_correct() {
    let Some(sc) = scenario("base/kath2-router0-ripd-down.txt") else {
        return;
    };
    let s = RubricJudge::new().score(
        &sc,
        &diag(
            Some(true),
            &["Router0"],
            "Root cause: the RIP daemon on router0 was killed, so router1 aged out the IT and CS \
             prefixes. Fix: restart FRR on router0 and re-apply the router rip network statements.",
        ),
    );
    assert!(verdict(&s, "must-identify-device"), "{s:#?}");
    assert!(verdict(&s, "must-identify-component"), "{s:#?}");
    assert!(s.is_correct(), "{s:#?}");
    assert_eq!(s.fix, Some(1.0), "{s:#?}");
}

#[test]
fn naming_the_component_only_to_clear_it_does_not_identify_it() {
    let Some(sc) = scenario("base/kath2-router0-ripd-down.txt") else {
        return;
    };
    let s = RubricJudge::new().score(
        &sc,
        &diag(
            Some(true),
            &["router1"],
            "ripd on router0 is healthy and is not the cause. Root cause: an iptables DROP rule \
             on router1 discards the department traffic.",
        ),
    );
    assert!(!verdict(&s, "must-identify-device"), "{s:#?}");
    assert!(!verdict(&s, "must-identify-component"), "{s:#?}");
    assert!(!s.is_correct());
    assert_eq!(
        s.fix,
        Some(0.0),
        "the fix targets router0, which is not blamed: {s:#?}"
    );
}

#[test]
fn a_healthy_verdict_identifies_nothing() {
    let Some(sc) = scenario("base/kath2-router0-ripd-down.txt") else {
        return;
    };
    let s = RubricJudge::new().score(
        &sc,
        &diag(
            Some(false),
            &[],
            "router0 runs ripd and every RIP route is present.",
        ),
    );
    assert_eq!(s.must_passed, 0, "{s:#?}");
    assert_eq!(s.outcome, 0.0);
}

#[test]
fn the_wrong_device_accused_by_the_ticket_fails() {
    let Some(sc) = scenario("cex/kath2-router0-ripd-down-misdirected.txt") else {
        return;
    };
    let followed_ticket = diag(
        Some(true),
        &["router1"],
        "router1's WAN uplink is down, which cuts Office off from the IT and CS departments.",
    );
    let s = RubricJudge::new().score(&sc, &followed_ticket);
    assert!(!s.is_correct(), "{s:#?}");
    let right = diag(
        Some(true),
        &["router0"],
        "router1 is fine: its uplinks are up and it is not the cause. ripd is dead on router0, \
         so the department prefixes were withdrawn.",
    );
    let s = RubricJudge::new().score(&sc, &right);
    assert!(s.is_correct(), "{s:#?}");
}

#[test]
fn false_premise_asserts_are_mechanical() {
    let Some(sc) = scenario("cex/kath2-false-premise-dept-gateway-flapping.txt") else {
        return;
    };
    let healthy = diag(
        Some(false),
        &[],
        "No fault: the department hosts reach their gateway with 0% loss.",
    );
    let s = RubricJudge::new().score(&sc, &healthy);
    assert!(s.is_correct(), "{s:#?}");
    assert!(s.fix.is_none(), "false premises have no fix");
    let confabulated = diag(
        Some(true),
        &["router0"],
        "router0 flaps its gateway interface.",
    );
    let s = RubricJudge::new().score(&sc, &confabulated);
    assert!(s.outcome <= 0.3 + 1e-9, "{s:#?}");
}

/// A scenario of our own whose ground truth documents an intentional ACL.
const POLICY_SCENARIO: &str = "\
==================================================
Scenario: lab-false-premise-acl
Topology: PolicyLab
==================================================

[PROMPT-TO-AGENT]
pc1 cannot open the web server on srv1 since this morning.

[INJECTION]
device: none
action: none
note: nothing is injected

[POST-INJECT-CHECK]
# none

[GROUND-TRUTH]
Nothing is broken: pc1 reaches srv1 with 0% loss. A standing ACL on fw1 blocks pc2 from srv1
by design; it is intended policy, not a fault.

[SCORING-AXES]
assert-no-anomaly
assert-no-faulty-devices
bonus-notes-baseline-healthy: notes pc1 reaches srv1 with 0% loss

[NIKA-LABEL]
nika_label: none
nika_category: NOVEL
in_taxonomy: false
";

#[test]
fn blaming_a_documented_intentional_policy_fails_the_health_axes() {
    let sc = ScenarioSpec::parse(POLICY_SCENARIO).unwrap();
    let blames_acl = diag(
        Some(true),
        &["fw1"],
        "pc1 reaches srv1 with 0% loss, but the ACL on fw1 drops pc2 traffic: that is the fault.",
    );
    let s = RubricJudge::new().score(&sc, &blames_acl);
    let bonus = s
        .per_axis
        .iter()
        .find(|v| v.kind == AxisKind::Bonus)
        .unwrap();
    assert_eq!(bonus.score, 0.0, "{s:#?}");
    assert!(
        bonus.rationale.contains("intentional policy"),
        "{}",
        bonus.rationale
    );
    let sees_baseline = diag(
        Some(false),
        &[],
        "pc1 reaches srv1 with 0% loss; the ACL on fw1 is intended policy and works as designed.",
    );
    let s = RubricJudge::new().score(&sc, &sees_baseline);
    assert_eq!(s.outcome, 1.0, "{s:#?}");
}

#[test]
fn policies_from_a_book_apply_to_every_scenario_of_the_topology() {
    let sc = ScenarioSpec::parse(
        &POLICY_SCENARIO.replace(
            "A standing ACL on fw1 blocks pc2 from srv1\nby design; it is intended policy, not a fault.",
            "",
        ),
    )
    .unwrap();
    let d = diag(
        Some(true),
        &["fw1"],
        "pc1 reaches srv1 with 0% loss, but the firewall on fw1 blocks pc2.",
    );
    let plain = RubricJudge::new().score(&sc, &d);
    assert_eq!(
        plain.bonus_passed, 1,
        "without the book the ACL is not known: {plain:#?}"
    );
    let mut book = PolicyBook::new();
    book.add(
        "PolicyLab",
        IntendedPolicy::new(&["fw1"], "a standing ACL that drops pc2 traffic"),
    );
    let with_book = RubricJudge::new().with_policies(book).score(&sc, &d);
    assert_eq!(with_book.bonus_passed, 0, "{with_book:#?}");
}

#[test]
fn every_release_scenario_scores_in_range() {
    let Some(release) = release_for_test() else {
        return;
    };
    let mut n = 0;
    for entry in release.scenario_files() {
        let sc = ScenarioFile::load(&entry).unwrap();
        for d in [
            diag(Some(true), &[], ""),
            diag(None, &["router0"], "router0 is down"),
            diag(Some(false), &[], "all healthy"),
        ] {
            let s = RubricJudge::new().score(&sc, &d);
            assert!((0.0..=1.0).contains(&s.outcome));
            assert!(s.must_passed <= s.must_total && s.bonus_passed <= s.bonus_total);
            n += 1;
        }
    }
    assert!(n >= 30, "only {n} judgements");
}
