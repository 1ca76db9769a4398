//! A user's agent, registered by name, runs in `Bench` on the mock emulator; the bench is
//! cancelled mid-run and resumed: the resumed root holds every planned run exactly once, and
//! the runs finished before the cancel were neither rerun nor rewritten.

use faultbench_bench::{Bench, BenchEvent, BenchOptions, Registries, Selection};
use faultbench_core::agent::{Agent, AgentInput, AgentOutcome};
use faultbench_core::dataset::Scope;
use faultbench_core::toolbox::Toolbox;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The user's agent: slow enough that a cancel lands while it works; counts its runs.
struct Mine {
    calls: Arc<AtomicUsize>,
}

#[async_trait::async_trait]
impl Agent for Mine {
    fn name(&self) -> &str {
        "mine"
    }
    async fn run(&self, _: &AgentInput, _: Arc<dyn Toolbox>) -> AgentOutcome {
        self.calls.fetch_add(1, Ordering::SeqCst);
        tokio::time::sleep(std::time::Duration::from_millis(150)).await;
        AgentOutcome::answer(
            "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1\ndiagnosis_text:\nospfd is down on r1\n=== END ===",
        )
    }
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../faultbench-cli/tests/fixtures/bench")
}

fn settings(root: &Path, resume: bool) -> BenchOptions {
    BenchOptions {
        dataset: fixtures().join("dataset"),
        topologies: Some(fixtures().join("topologies")),
        selection: Selection::Scopes(vec![Scope::All], None),
        agents: vec!["mine".into()],
        emulator: "mock".into(),
        passes: Some(4),
        runs_root: root.to_path_buf(),
        resume,
        ..BenchOptions::default()
    }
}

/// Every `result.json` below the root with its bytes.
fn results(root: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "result.json") {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn a_user_agent_by_name_is_cancelled_and_resumed_without_reruns() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("runs");
    let calls = Arc::new(AtomicUsize::new(0));
    let mut reg = Registries::default();
    let c = calls.clone();
    reg.agents.agent("mine", move || Mine { calls: c.clone() });

    // Round 1: cancelled after the third archived run.
    let bench = Bench::new(settings(&root, false)).with_registries(reg.clone());
    let cancel = bench.cancel_handle();
    let bench = bench.on_event(move |e| {
        if let BenchEvent::RunFinished { done: 3, .. } = e {
            cancel.cancel();
        }
    });
    let planned = bench.prepare().unwrap().items().len();
    assert_eq!(planned, 8, "2 scenarios × 4 passes");
    let first = bench.run().await.unwrap();
    assert!(first.interrupted);
    assert_eq!(first.finished, 3);
    let before = results(&root);
    assert_eq!(before.len(), 3, "only archived runs are on disk");
    let calls_first = calls.load(Ordering::SeqCst);

    // A second bench on the same root without resume is refused, writing nothing.
    let e = Bench::new(settings(&root, false))
        .with_registries(reg.clone())
        .prepare()
        .err()
        .expect("a root holding planned runs needs resume");
    assert!(e.to_string().contains("pass --resume"), "{e}");

    // Round 2: resumed to the end.
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let s = seen.clone();
    let second = Bench::new(settings(&root, true))
        .with_registries(reg)
        .on_event(move |e| {
            if let BenchEvent::RunFinished { record, .. } = e {
                s.lock().unwrap().push(record.key.clone());
            }
        })
        .run()
        .await
        .unwrap();
    assert!(!second.interrupted);
    assert_eq!(second.finished, planned - 3);
    // The agent ran exactly the runs not archived before: none of the finished ones again.
    assert_eq!(calls.load(Ordering::SeqCst) - calls_first, planned - 3);
    let after = results(&root);
    assert_eq!(after.len(), planned, "every run exactly once");
    for (path, bytes) in &before {
        let now = after.iter().find(|(p, _)| p == path).expect("kept");
        assert_eq!(&now.1, bytes, "{} was rewritten", path.display());
    }
    let manifest = std::fs::read_to_string(root.join("MANIFEST.csv")).unwrap();
    let mut rows: Vec<&str> = manifest.lines().skip(1).collect();
    assert_eq!(rows.len(), planned, "{manifest}");
    rows.sort_unstable();
    rows.dedup();
    assert_eq!(rows.len(), planned, "no duplicate rows: {manifest}");
    assert!(rows.iter().all(|r| r.contains(",mine,")), "{manifest}");
    let resumed = seen.lock().unwrap().clone();
    assert!(
        resumed.iter().all(|k| !before
            .iter()
            .any(|(p, _)| p.starts_with(k.dir(&root).unwrap()))),
        "a finished run was run again: {resumed:?}"
    );
}
