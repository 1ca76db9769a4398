//! The types a user holds, used as user code would (through the facade): judges behind `Arc`,
//! `Box` and closures, and a user's agent registered by name, all in `Runner` runs on the
//! examples' mock network; verdict kinds read from every recorded spelling, the public
//! release's `result.json` files included.

mod support;

use faultbench::agents::registry::{AgentOptions, builtin_agents};
use faultbench::core::agent::Agent;
use faultbench::core::judge::{AxisVerdict, Judge, JudgeError, OutcomeRule, Scores, judge_fn};
use faultbench::core::lab::TopologyResolver;
use faultbench::core::pipeline::Runner;
use faultbench::core::scenario::AxisKind;
use faultbench::core::{RunStatus, ScenarioFile};
use faultbench::emu::mock::MockEmulator;
use faultbench::judge::RubricJudge;
use std::sync::Arc;
use support::{BlamesR1, mock_dir};

async fn run_with(
    agent: Arc<dyn Agent>,
    judge: Arc<dyn Judge>,
) -> faultbench::core::record::RunRecord {
    let scenario = ScenarioFile::load(mock_dir().join("duo-r1-ospfd-down.txt")).unwrap();
    let runner = Runner::new(Arc::new(MockEmulator::new()), agent, judge)
        .with_topologies(TopologyResolver::new([mock_dir()]));
    let record = runner.run(&scenario).await;
    runner.shutdown().await;
    record
}

/// Counts required axes and fails every one: outcome 0 under any rule.
fn strict_nothing() -> impl Judge {
    judge_fn("nothing", |input| async move {
        let mut s = Scores::new("nothing");
        for axis in input.scenario.scoring_axes() {
            s.push_axis(AxisVerdict::new(axis, false, "closure judge"));
        }
        s.finish(OutcomeRule::Strict);
        Ok(s)
    })
}

#[tokio::test]
async fn arc_box_and_closure_judges_score_runner_runs() {
    let rubric = Arc::new(RubricJudge::new());
    // Arc<RubricJudge> (a concrete Arc, itself a Judge) inside an Arc<dyn Judge>.
    let r = run_with(Arc::new(BlamesR1), Arc::new(rubric.clone())).await;
    assert_eq!(r.status, RunStatus::Scored, "{:?}", r.error);
    let s = r.scores.unwrap();
    assert_eq!((s.judge.as_str(), s.outcome), ("rubric", 1.0));

    // Box<dyn Judge> of a closure judge.
    let boxed: Box<dyn Judge> = Box::new(strict_nothing());
    let r = run_with(Arc::new(BlamesR1), Arc::new(boxed)).await;
    let s = r.scores.unwrap();
    assert_eq!(
        (s.judge.as_str(), s.must_total, s.outcome),
        ("nothing", 3, 0.0)
    );

    // A closure judge's own failure is a recorded status, its cause kept as text.
    let failing = judge_fn("down", |_| async {
        Err(JudgeError::Unavailable("HTTP 503 three times".into()))
    });
    let r = run_with(Arc::new(BlamesR1), Arc::new(failing)).await;
    assert_eq!(r.status, RunStatus::JudgeFailed);
    assert!(r.error.unwrap_or_default().contains("HTTP 503"));
}

#[tokio::test]
async fn a_user_agent_registered_by_name_runs_like_a_builtin() {
    let mut agents = builtin_agents();
    agents.agent("blames-r1", || BlamesR1);
    assert!(agents.names().contains(&"blames-r1".to_string()));
    let agent = agents.build("blames-r1", &AgentOptions::default()).unwrap();
    // Agents are usable through Box and Arc too.
    let boxed: Box<dyn Agent> = Box::new(agent);
    let r = run_with(Arc::new(boxed), Arc::new(RubricJudge::new())).await;
    assert_eq!(r.key.agent, "blames-r1");
    assert_eq!(r.status, RunStatus::Scored, "{:?}", r.error);
    assert!(r.scores.unwrap().is_correct());
}

#[test]
fn verdict_kinds_read_every_recorded_spelling() {
    for (text, kind) in [
        ("assert", AxisKind::Assert),
        ("must", AxisKind::Must),
        ("bonus", AxisKind::Bonus),
        ("fix", AxisKind::Fix),
        ("reason-dim", AxisKind::Reasoning),
        ("reason", AxisKind::Reasoning),
    ] {
        let v: AxisVerdict = serde_json::from_str(&format!(
            r#"{{"axis": "x", "kind": "{text}", "score": 1.0, "rationale": ""}}"#
        ))
        .unwrap();
        assert_eq!(v.kind, kind, "{text}");
        // Written back in the release's spelling.
        let again = serde_json::to_value(&v).unwrap();
        assert_eq!(again["kind"], kind.as_str());
    }
    assert!(serde_json::from_str::<AxisKind>(r#""vibes""#).is_err());
}

#[test]
fn the_release_records_verdict_kinds_all_read() {
    let Some(release) = faultbench_testkit::release_for_test() else {
        return;
    };
    let mut seen = std::collections::BTreeMap::<AxisKind, usize>::new();
    let records = release.run_records();
    for path in &records {
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        for axis in v
            .pointer("/phases/score/per_axis")
            .and_then(|a| a.as_array())
            .into_iter()
            .flatten()
        {
            let verdict: AxisVerdict = serde_json::from_value(axis.clone())
                .unwrap_or_else(|e| panic!("{}: {e}: {axis}", path.display()));
            // The release's spelling is ours: a verdict reads and writes back unchanged.
            assert_eq!(
                serde_json::to_value(&verdict).unwrap()["kind"],
                axis["kind"]
            );
            *seen.entry(verdict.kind).or_default() += 1;
        }
    }
    if release.is_full() || records.len() == 80 {
        // The 80 recorded runs use five kinds (counted on the pinned release).
        let expect = [
            (AxisKind::Assert, 143),
            (AxisKind::Must, 33),
            (AxisKind::Bonus, 74),
            (AxisKind::Reasoning, 240),
            (AxisKind::Fix, 18),
        ];
        assert_eq!(seen, expect.into_iter().collect());
    } else {
        assert!(!seen.is_empty());
    }
}
