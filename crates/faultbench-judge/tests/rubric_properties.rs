//! Properties of the rubric judge over random diagnoses of the release's scenario files.
//!
//! - Scores stay in range, whatever the diagnosis.
//! - **"A diagnosis passing every required axis outranks any diagnosis failing one"** holds
//!   under [`OutcomeRule::Strict`] for every scenario. Under [`OutcomeRule::Release`] (the
//!   public release's formula, the default) it holds only when a scenario has at most two
//!   required axes or no bonus axis: with three or more required axes, failing one of them
//!   but passing all bonus axes can score above passing all required axes and no bonus
//!   (0.7·2/3 + 0.3 = 0.767 > 0.7) — `release_rule_counterexample` shows it on a real judge.

use faultbench_core::Diagnosis;
use faultbench_core::judge::OutcomeRule;
use faultbench_core::scenario::{Scenario, ScenarioFile, ScenarioSpec};
use faultbench_judge::{RubricJudge, RubricOptions};
use faultbench_testkit::{Release, release_for_test};
use proptest::prelude::*;
use std::cell::OnceCell;
use std::sync::OnceLock;

thread_local! {
    /// This test's answer from `release_for_test` (asked once per test thread, so a missing
    /// release is recorded once per test, not once per generated case).
    static RELEASE: OnceCell<Option<Release>> = const { OnceCell::new() };
}

/// The release's scenario files (every one present: a subset in a partial copy, 560 in a full
/// checkout), or `None` when the release is missing.
fn scenarios() -> Option<&'static [ScenarioFile]> {
    static ALL: OnceLock<Vec<ScenarioFile>> = OnceLock::new();
    let release = RELEASE.with(|r| r.get_or_init(release_for_test).clone())?;
    Some(ALL.get_or_init(|| {
        let paths = release.scenario_files();
        let v: Vec<ScenarioFile> = paths
            .iter()
            .map(|p| ScenarioFile::load(p).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        assert!(!v.is_empty(), "no scenario files in {}", release.describe());
        v
    }))
}

/// Sentences a diagnosis of `s` may be built from: its ground truth, its axes, and
/// clearing/blaming sentences about its devices.
fn pool(s: &dyn Scenario) -> (Vec<String>, Vec<String>) {
    let mut devices: Vec<String> = s
        .injection()
        .devices()
        .iter()
        .map(|d| d.to_string())
        .collect();
    for a in s.scoring_axes() {
        if let Some(arg) = a.argument()
            && let Some(first) = arg.split_whitespace().next()
            && first.chars().any(|c| c.is_ascii_digit())
        {
            devices.push(
                first
                    .trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                    .into(),
            );
        }
    }
    devices.extend(["router1".to_string(), "pc1".to_string()]);
    devices.dedup();
    let mut sentences: Vec<String> = s
        .ground_truth()
        .split(['.', '\n'])
        .map(str::trim)
        .filter(|x| x.len() > 12)
        .map(str::to_string)
        .collect();
    sentences.extend(
        s.scoring_axes()
            .iter()
            .filter_map(|a| a.argument().map(str::to_string)),
    );
    for d in &devices {
        sentences.push(format!("{d} is healthy and is not the cause"));
        sentences.push(format!("Root cause: the daemon on {d} is down"));
        sentences.push(format!("{d} reaches its gateway with 0% loss"));
    }
    (devices, sentences)
}

fn build(s: &dyn Scenario, anomaly: Option<bool>, dev_mask: u8, picks: &[usize]) -> Diagnosis {
    let (devices, sentences) = pool(s);
    let faulty_devices = devices
        .iter()
        .enumerate()
        .filter(|(i, _)| dev_mask & (1 << (i % 8)) != 0)
        .map(|(_, d)| d.to_lowercase())
        .collect();
    let text: Vec<&str> = picks
        .iter()
        .map(|i| sentences[i % sentences.len()].as_str())
        .collect();
    Diagnosis {
        is_anomaly: anomaly,
        faulty_devices,
        text: text.join(". "),
        parsed_ok: anomaly.is_some(),
    }
}

fn judge(rule: OutcomeRule) -> RubricJudge {
    RubricJudge::new().with_config(RubricOptions {
        rule,
        ..RubricOptions::default()
    })
}

fn diagnoses() -> impl Strategy<Value = Vec<(Option<bool>, u8, Vec<usize>)>> {
    proptest::collection::vec(
        (
            prop_oneof![3 => Just(Some(true)), 1 => Just(Some(false)), 1 => Just(None)],
            any::<u8>(),
            proptest::collection::vec(0usize..200, 0..14),
        ),
        2..8,
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn scores_stay_in_range(idx in 0usize..1000, ds in diagnoses()) {
        let Some(all) = scenarios() else { return Ok(()) };
        let s = &all[idx % all.len()];
        for rule in [OutcomeRule::Release, OutcomeRule::Strict] {
            let j = judge(rule);
            for (a, m, p) in &ds {
                let sc = j.score(s, &build(s, *a, *m, p));
                prop_assert!((0.0..=1.0).contains(&sc.outcome), "{}", sc.outcome);
                prop_assert!(sc.must_passed <= sc.must_total && sc.bonus_passed <= sc.bonus_total);
                match s.fix() {
                    Some(_) => prop_assert!(matches!(sc.fix, Some(f) if f == 0.0 || f == 0.5 || f == 1.0)),
                    None => prop_assert!(sc.fix.is_none()),
                }
                prop_assert!(sc.reasoning.is_none());
            }
        }
    }

    #[test]
    fn strict_rule_correct_outranks_wrong(idx in 0usize..1000, ds in diagnoses()) {
        let Some(all) = scenarios() else { return Ok(()) };
        let s = &all[idx % all.len()];
        let j = judge(OutcomeRule::Strict);
        let scored: Vec<_> = ds.iter().map(|(a, m, p)| j.score(s, &build(s, *a, *m, p))).collect();
        for x in &scored {
            for y in &scored {
                if x.must_passed == x.must_total && y.must_passed < y.must_total {
                    prop_assert!(x.outcome > y.outcome, "{} !> {}", x.outcome, y.outcome);
                }
            }
        }
    }

    #[test]
    fn release_rule_correct_outranks_wrong_with_few_required_axes(idx in 0usize..1000, ds in diagnoses()) {
        let Some(all) = scenarios() else { return Ok(()) };
        let s = &all[idx % all.len()];
        let j = judge(OutcomeRule::Release);
        let scored: Vec<_> = ds.iter().map(|(a, m, p)| j.score(s, &build(s, *a, *m, p))).collect();
        for x in &scored {
            if x.must_total > 2 && x.bonus_total > 0 {
                continue;
            }
            for y in &scored {
                if x.must_passed == x.must_total && y.must_passed < y.must_total {
                    prop_assert!(x.outcome > y.outcome, "{} !> {}", x.outcome, y.outcome);
                }
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Any text, any verdict, any device list: the judge answers, never panics.
    #[test]
    fn arbitrary_diagnoses_never_panic(
        idx in 0usize..1000,
        text in "(?s).{0,600}",
        devices in proptest::collection::vec("\\PC{0,12}", 0..4),
        anomaly in proptest::option::of(any::<bool>()),
    ) {
        let Some(all) = scenarios() else { return Ok(()) };
        let s = &all[idx % all.len()];
        let d = Diagnosis { is_anomaly: anomaly, faulty_devices: devices, text, parsed_ok: false };
        let sc = judge(OutcomeRule::Release).score(s, &d);
        prop_assert!((0.0..=1.0).contains(&sc.outcome));
    }
}

/// The generator is not vacuous: it produces diagnoses on both sides of the property.
#[test]
fn generated_diagnoses_pass_and_fail_required_axes() {
    let Some(all) = scenarios() else {
        return;
    };
    let j = judge(OutcomeRule::Strict);
    let (mut all_pass, mut some_fail) = (0, 0);
    for s in all {
        let n = pool(s).1.len();
        let picks: Vec<usize> = (0..n).collect();
        for (anomaly, mask) in [(Some(true), 0b1u8), (Some(true), 0b11), (Some(false), 0)] {
            let sc = j.score(s, &build(s, anomaly, mask, &picks));
            if sc.must_passed == sc.must_total {
                all_pass += 1;
            } else {
                some_fail += 1;
            }
        }
    }
    assert!(
        all_pass >= 10 && some_fail >= 10,
        "{all_pass} / {some_fail}"
    );
}

const THREE_REQUIRED: &str = "\
==================================================
Scenario: lab-r1-ospfd-down
Topology: Lab
==================================================

[PROMPT-TO-AGENT]
pc1 lost the internet.

[INJECTION]
device: r1
cmd: pkill ospfd

[POST-INJECT-CHECK]
r1  pgrep ospfd  => expect empty

[GROUND-TRUTH]
ospfd is dead on r1; the default route is withdrawn.

[FIX]
Restart ospfd on r1.

[SCORING-AXES]
assert-identifies: r1
must-identify-device: r1
must-explain-default-route-withdrawn
bonus-notes-pc1-gateway-reachable: notes pc1 reaches its gateway 10.0.0.1 with 0% loss

[NIKA-LABEL]
nika_label: none
nika_category: NOVEL
in_taxonomy: false
";

/// Under the release's rule, failing one of three required axes but passing the bonus beats
/// passing every required axis without the bonus; under the strict rule it does not.
#[test]
fn release_rule_counterexample() {
    let s = ScenarioSpec::parse(THREE_REQUIRED).unwrap();
    let all_required = Diagnosis {
        is_anomaly: Some(true),
        faulty_devices: vec!["r1".into()],
        text: "Root cause: ospfd is dead on r1, so the default route was withdrawn.".into(),
        parsed_ok: true,
    };
    let one_missed = Diagnosis {
        text: "Root cause: ospfd is dead on r1. pc1 reaches its gateway 10.0.0.1 with 0% loss."
            .into(),
        ..all_required.clone()
    };
    let release = judge(OutcomeRule::Release);
    let (a, b) = (
        release.score(&s, &all_required),
        release.score(&s, &one_missed),
    );
    assert_eq!(
        (a.must_passed, a.must_total, a.bonus_passed),
        (3, 3, 0),
        "{a:#?}"
    );
    assert_eq!(
        (b.must_passed, b.must_total, b.bonus_passed),
        (2, 3, 1),
        "{b:#?}"
    );
    assert!(
        b.outcome > a.outcome,
        "release: {} vs {}",
        b.outcome,
        a.outcome
    );
    let strict = judge(OutcomeRule::Strict);
    assert!(strict.score(&s, &all_required).outcome > strict.score(&s, &one_missed).outcome);
}
