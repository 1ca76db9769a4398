//! Re-judging saved runs of both formats without re-running agents.

use faultbench_core::agent::AgentOutcome;
use faultbench_core::record::{
    AgentPhase, Phases, RECORD_SCHEMA, RunKey, RunRecord, ScenarioSnapshot,
};
use faultbench_core::scenario::ScenarioFile;
use faultbench_core::store::RunsRoot;
use faultbench_core::toolbox::ToolCallRecord;
use faultbench_core::{Layer, RunStatus};
use faultbench_judge::RubricJudge;
use faultbench_judge::saved::{LoadRunError, Origin, Stored, load_runs, store_verdict};
use faultbench_testkit::release_for_test;
use serde_json::json;

const ANSWER: &str = "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: router0\ndiagnosis_text:\n\
    ripd is not running on router0, so router1 aged out the IT and CS prefixes. Fix: restart \
    FRR on router0 and re-apply the router rip configuration.\n=== END ===";

/// A judge-failed run of the release's `kath2-router0-ripd-down`; `None` without the release.
fn judge_failed_record() -> Option<RunRecord> {
    let release = release_for_test()?;
    let sc =
        ScenarioFile::load(release.scenario("kath2_Q", "base", "kath2-router0-ripd-down")).unwrap();
    let outcome = AgentOutcome {
        final_text: ANSWER.into(),
        tool_calls: 1,
        tool_log: vec![ToolCallRecord {
            seq: 1,
            tool: "systemctl_ops".into(),
            args: json!({"host_name": "router0", "service": "frr", "operation": "status"}),
            output_chars: 17,
            output: "ripd: not running".into(),
            duration_ms: 3,
            truncated: false,
            timed_out: false,
            refused: false,
            error: None,
        }],
        ..Default::default()
    };
    Some(RunRecord {
        schema: RECORD_SCHEMA,
        key: RunKey {
            topology: "Kath2".parse().unwrap(),
            layer: Layer::Base,
            scenario_id: "kath2-router0-ripd-down".parse().unwrap(),
            agent: "baseline".into(),
            pass: 1,
        },
        model: None,
        status: RunStatus::JudgeFailed,
        started_at: "2026-11-29T00:00:00Z".into(),
        finished_at: "2026-11-29T00:05:00Z".into(),
        wall_seconds: 300.0,
        scenario: ScenarioSnapshot::of(&sc),
        agent_input_prompt: None,
        telemetry: true,
        agent_changes: Vec::new(),
        task: Default::default(),
        repair: None,
        diagnosis: Some(outcome.diagnosis()),
        phases: Phases {
            agent: Some(AgentPhase {
                outcome,
                duration_ms: 1,
            }),
            ..Default::default()
        },
        scores: None,
        error: Some("judge unavailable: HTTP 503".into()),
        faultbench_version: "test".into(),
    })
}

#[test]
fn a_judge_failed_record_is_rejudged_in_place() {
    let Some(record) = judge_failed_record() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let root = RunsRoot::open(dir.path()).unwrap();
    root.archive(&record).unwrap();

    let (runs, errors) = load_runs(dir.path()).unwrap();
    assert!(errors.is_empty());
    assert_eq!(runs.len(), 1);
    let run = &runs[0];
    assert!(matches!(run.origin, Origin::Faultbench(_)));
    assert!(run.judgeable());
    assert_eq!(run.group, "base80");
    assert!(
        run.digest.contains("1. RAN systemctl_ops("),
        "{}",
        run.digest
    );
    assert!(run.digest.contains("-> ripd: not running"));

    let scores = RubricJudge::new().score(&run.scenario, run.diagnosis.as_ref().unwrap());
    assert!(scores.is_correct(), "{scores:#?}");
    let stored = store_verdict(dir.path(), run, "rubric", Ok(&scores)).unwrap();
    let Stored::Record(path) = stored else {
        panic!("{stored:?}")
    };
    let rec = RunRecord::read(&path).unwrap();
    assert_eq!(rec.status, RunStatus::Scored);
    assert_eq!(rec.scores.as_ref().unwrap().judge, "rubric");
    assert!(rec.error.is_none());
    assert_eq!(rec.phases.judge.as_ref().unwrap().judge, "rubric");
    // The registry is brought in line once, after all updates.
    faultbench_core::store::RunsRoot::attach(dir.path())
        .rebuild_manifest(|_| true)
        .unwrap();
    let manifest = std::fs::read_to_string(dir.path().join("MANIFEST.csv")).unwrap();
    assert!(
        manifest.lines().nth(1).unwrap().contains(",scored,"),
        "{manifest}"
    );

    // A failure keeps the diagnosis and records judge_failed.
    let (runs, _) = load_runs(dir.path()).unwrap();
    store_verdict(
        dir.path(),
        &runs[0],
        "llm:gpt-5-mini",
        Err("answer invalid"),
    )
    .unwrap();
    let rec = RunRecord::read(&path).unwrap();
    assert_eq!(rec.status, RunStatus::JudgeFailed);
    assert!(rec.diagnosis.is_some());
    assert_eq!(rec.error.as_deref(), Some("answer invalid"));
}

#[test]
fn release_records_get_a_sidecar_and_bad_files_are_reported() {
    let Some(release) = release_for_test() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let src = release.run_record(
        "cex120",
        "Kath1",
        "kath1-false-premise-wifi-down",
        "sade",
        "p3",
    );
    let run_dir = dir
        .path()
        .join("cex120/Kath1/kath1-false-premise-wifi-down/sade/p3");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::fs::copy(&src, run_dir.join("result.json")).unwrap();
    let bad_dir = dir.path().join("broken");
    std::fs::create_dir_all(&bad_dir).unwrap();
    std::fs::write(bad_dir.join("result.json"), "{\"hello\": 1}").unwrap();

    let (runs, errors) = load_runs(dir.path()).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(errors.len(), 1);
    assert!(
        matches!(errors[0].error, LoadRunError::Unknown(_)),
        "{}",
        errors[0].error
    );
    assert!(
        errors[0]
            .error
            .to_string()
            .contains("neither a faultbench run record"),
        "{}",
        errors[0].error
    );
    let run = &runs[0];
    assert!(matches!(run.origin, Origin::Release));
    assert_eq!(run.group, "cex120");
    assert_eq!(run.recorded.as_ref().unwrap().judge, "release:gpt-5-mini");

    let scores = RubricJudge::new().score(&run.scenario, run.diagnosis.as_ref().unwrap());
    let Stored::Sidecar(p) = store_verdict(dir.path(), run, "rubric", Ok(&scores)).unwrap() else {
        panic!()
    };
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    assert_eq!(v["status"], "scored");
    assert_eq!(v["scores"]["judge"], "rubric");
    // The release file itself is untouched.
    assert_eq!(
        std::fs::read(src).unwrap(),
        std::fs::read(run_dir.join("result.json")).unwrap()
    );
}

/// Issue 30: the verdict was written with `std::fs::write`, which follows a link planted at the
/// sidecar's name (`rejudged-rubric.json -> ~/.bashrc`), and a record swapped for a link after
/// loading was rewritten through it.
#[test]
fn verdicts_are_never_written_through_a_planted_link() {
    let Some(record) = judge_failed_record() else {
        return;
    };
    let Some(release) = release_for_test() else {
        return;
    };
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious").unwrap();

    // A release record with a link at its sidecar's name.
    let dir = tempfile::tempdir().unwrap();
    let run_dir = dir
        .path()
        .join("cex120/Kath1/kath1-false-premise-wifi-down/sade/p3");
    std::fs::create_dir_all(&run_dir).unwrap();
    let src = release.run_record(
        "cex120",
        "Kath1",
        "kath1-false-premise-wifi-down",
        "sade",
        "p3",
    );
    std::fs::copy(&src, run_dir.join("result.json")).unwrap();
    std::os::unix::fs::symlink(&victim, run_dir.join("rejudged-rubric.json")).unwrap();
    let (runs, _) = load_runs(dir.path()).unwrap();
    let run = &runs[0];
    let scores = RubricJudge::new().score(&run.scenario, run.diagnosis.as_ref().unwrap());
    let e = store_verdict(dir.path(), run, "rubric", Ok(&scores)).unwrap_err();
    assert!(
        e.to_string()
            .contains("rejudged-rubric.json: is a symbolic link"),
        "{e}"
    );

    // A faultbench record whose result.json became a link after it was loaded.
    let dir = tempfile::tempdir().unwrap();
    RunsRoot::open(dir.path())
        .unwrap()
        .archive(&record)
        .unwrap();
    let (runs, _) = load_runs(dir.path()).unwrap();
    std::fs::remove_file(&runs[0].path).unwrap();
    std::os::unix::fs::symlink(&victim, &runs[0].path).unwrap();
    let e = store_verdict(dir.path(), &runs[0], "rubric", Err("x")).unwrap_err();
    assert!(
        e.to_string().contains("result.json: is a symbolic link"),
        "{e}"
    );

    // A run loaded from elsewhere is not written under another root.
    let other = tempfile::tempdir().unwrap();
    let e = store_verdict(other.path(), &runs[0], "rubric", Err("x")).unwrap_err();
    assert!(e.to_string().contains("not under"), "{e}");
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
}
