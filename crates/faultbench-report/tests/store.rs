//! A runs root survives crashes: torn registry lines are repaired from the records, and resume
//! re-runs only infrastructure failures.

use faultbench_core::agent::AgentOutcome;
use faultbench_core::record::{
    AgentPhase, Phases, RECORD_SCHEMA, RunKey, RunRecord, ScenarioSnapshot,
};
use faultbench_core::store::RunsRoot;
use faultbench_core::{Layer, RunStatus, ScenarioSpec};
use faultbench_report::RunIndex;

fn record(id: &str, pass: u32, status: RunStatus) -> RunRecord {
    let spec =
        ScenarioSpec::parse(include_str!("../../faultbench-core/tests/data/minimal.txt")).unwrap();
    RunRecord {
        schema: RECORD_SCHEMA,
        key: RunKey {
            topology: "Lab".parse().unwrap(),
            layer: Layer::Base,
            scenario_id: id.parse().unwrap(),
            agent: "baseline".into(),
            pass,
        },
        model: None,
        status,
        started_at: "2026-11-29T00:00:00Z".into(),
        finished_at: "2026-11-29T00:00:01Z".into(),
        wall_seconds: 1.0,
        scenario: ScenarioSnapshot::of(&spec),
        agent_input_prompt: None,
        telemetry: true,
        agent_changes: Vec::new(),
        task: Default::default(),
        repair: None,
        phases: Phases {
            agent: Some(AgentPhase {
                outcome: AgentOutcome::answer("x"),
                duration_ms: 1,
            }),
            ..Default::default()
        },
        diagnosis: None,
        scores: None,
        error: None,
        faultbench_version: "test".into(),
    }
}

#[test]
fn archive_then_crash_repairs_and_resume_keeps_only_results() {
    let dir = tempfile::tempdir().unwrap();
    let root = RunsRoot::open(dir.path()).unwrap();
    root.archive(&record("a", 1, RunStatus::Scored)).unwrap();
    root.archive(&record("b", 1, RunStatus::DeployIncomplete))
        .unwrap();
    let run_dir = record("a", 1, RunStatus::Scored)
        .key
        .dir(dir.path())
        .unwrap();
    let trace = faultbench_core::trace::read_jsonl(&run_dir.join("trace.jsonl")).unwrap();
    assert!(
        !trace.is_empty(),
        "the agent's final answer is in the trace"
    );

    // A crash: a torn line is appended, and one record never reached the registry.
    let manifest = root.manifest_path();
    let mut text = std::fs::read_to_string(&manifest).unwrap();
    text.push_str("base80,p1,Lab,c,basel");
    std::fs::write(&manifest, text).unwrap();
    record("c", 1, RunStatus::NoSubmission)
        .write(
            &record("c", 1, RunStatus::NoSubmission)
                .key
                .dir(dir.path())
                .unwrap(),
        )
        .unwrap();

    let root = RunsRoot::open(dir.path()).unwrap();
    let reg = RunIndex::load_csv(&manifest).unwrap();
    assert!(reg.warnings.is_empty(), "{:?}", reg.warnings);
    let ids: Vec<&str> = reg.rows.iter().map(|r| r.scenario_id.as_str()).collect();
    assert_eq!(ids, vec!["a", "b", "c"]);

    let done = root.prepare_resume().unwrap();
    assert_eq!(
        done.len(),
        2,
        "deploy_incomplete is re-run; scored and timeouts are kept"
    );
    let reg = RunIndex::load_csv(&manifest).unwrap();
    assert_eq!(reg.rows.len(), 2);
    root.archive(&record("b", 1, RunStatus::Scored)).unwrap();
    let reg = RunIndex::load_csv(&manifest).unwrap();
    let mut ids: Vec<&str> = reg.rows.iter().map(|r| r.scenario_id.as_str()).collect();
    ids.sort();
    assert_eq!(ids, vec!["a", "b", "c"], "every run exactly once");
}

#[test]
fn a_corrupt_record_is_an_error_not_a_missing_run() {
    let dir = tempfile::tempdir().unwrap();
    let root = RunsRoot::open(dir.path()).unwrap();
    let d = root.archive(&record("a", 1, RunStatus::Scored)).unwrap();
    std::fs::write(d.join("result.json"), "{").unwrap();
    let e = RunsRoot::open(dir.path()).unwrap_err();
    assert!(e.to_string().contains("result.json"), "{e}");
}
