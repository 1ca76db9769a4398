//! parse → write → parse gives an equal value, for generated scenarios (typed sections rendered
//! by their own renderers, so the renderers are checked too).

use faultbench_core::scenario::{
    Headers, Injection, InjectionStep, PostInjectCheck, ScenarioSpec, ScoringAxis, Section, section,
};
use proptest::prelude::*;

fn word() -> impl Strategy<Value = String> {
    "[a-z][a-z0-9_]{0,10}"
}

/// A line of free text that cannot be mistaken for a section header, key or comment.
fn text_line() -> impl Strategy<Value = String> {
    "[A-Za-z0-9][A-Za-z0-9 ,.;:()'/%-]{0,60}[A-Za-z0-9.)]".prop_filter(
        "no key-looking lines",
        |l| {
            !["device:", "action:", "cmd:", "note:"]
                .iter()
                .any(|k| l.starts_with(k))
        },
    )
}

fn paragraph() -> impl Strategy<Value = String> {
    proptest::collection::vec(text_line(), 1..5).prop_map(|v| v.join("\n"))
}

fn step() -> impl Strategy<Value = InjectionStep> {
    (
        word(),
        proptest::option::of(text_line()),
        proptest::option::of(paragraph()),
        proptest::option::of(paragraph()),
    )
        .prop_map(|(device, action, cmd, note)| InjectionStep {
            device,
            action,
            cmd,
            note,
        })
}

fn check() -> impl Strategy<Value = PostInjectCheck> {
    (
        word(),
        "[a-z0-9][a-z0-9 .|-]{0,30}[a-z0-9]",
        prop_oneof![
            Just("0% loss".to_string()),
            Just("loss>0".to_string()),
            Just("empty".to_string()),
            Just(">=2".to_string()),
            Just("0% loss   (comment here)".to_string()),
            "[0-9]{1,3}",
        ],
    )
        .prop_map(|(device, command, expect)| PostInjectCheck {
            device,
            command,
            expect,
        })
}

fn axis() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("assert-no-anomaly".to_string()),
        word().prop_map(|d| format!("assert-identifies: {d}")),
        text_line().prop_map(|t| format!("must-identify-component: {t}")),
        text_line().prop_map(|t| format!("bonus-notes: {t}")),
    ]
}

prop_compose! {
    fn scenario()(
        id in "[a-z][a-z0-9-]{2,30}[a-z0-9]",
        topology in "[A-Za-z][A-Za-z0-9_]{1,20}",
        family in proptest::option::of(text_line()),
        ticket in paragraph(),
        steps in proptest::collection::vec(step(), 1..3),
        checks in proptest::collection::vec(check(), 1..4),
        truth in paragraph(),
        fix in proptest::option::of(paragraph()),
        process in proptest::option::of(paragraph()),
        axes in proptest::collection::vec(axis(), 1..6),
        in_taxonomy in any::<bool>(),
    ) -> (ScenarioSpec, Injection, Vec<PostInjectCheck>, Vec<String>) {
        let injection = Injection { steps };
        let headers = Headers {
            scenario: id.parse().unwrap(),
            topology: topology.parse().unwrap(),
            fault_family: family,
            ticket_style: None,
            variant_of: None,
            confidence_flip_of: None,
        };
        let mut sections = vec![
            Section { name: section::PROMPT.into(), body: ticket },
            Section { name: section::INJECTION.into(), body: injection.render() },
            Section {
                name: section::POST_INJECT_CHECK.into(),
                body: checks.iter().map(|c| c.render()).collect::<Vec<_>>().join("\n"),
            },
            Section { name: section::GROUND_TRUTH.into(), body: truth },
        ];
        if let Some(f) = fix { sections.push(Section { name: section::FIX.into(), body: f }); }
        if let Some(p) = process { sections.push(Section { name: section::DIAGNOSTIC_PROCESS.into(), body: p }); }
        sections.push(Section { name: section::SCORING_AXES.into(), body: axes.join("\n") });
        sections.push(Section {
            name: section::NIKA_LABEL.into(),
            body: format!("nika_label: none\nnika_category: NOVEL\nin_taxonomy: {in_taxonomy}"),
        });
        let spec = ScenarioSpec::from_parts(headers, sections).expect("generated scenario is valid");
        (spec, injection, checks, axes)
    }
}

proptest! {
    #[test]
    fn parse_write_parse_is_identity((spec, injection, checks, axes) in scenario()) {
        let text = spec.to_text();
        let again = ScenarioSpec::parse(&text).unwrap();
        prop_assert_eq!(&again, &spec);
        prop_assert_eq!(again.to_text(), text, "writing is byte-stable");
        prop_assert_eq!(again.injection(), &injection);
        prop_assert_eq!(again.post_inject_checks(), checks.as_slice());
        let raw: Vec<String> = again.scoring_axes().iter().map(|a: &ScoringAxis| a.raw.clone()).collect();
        prop_assert_eq!(raw, axes);
        prop_assert_eq!(again.id(), spec.id());
    }
}
