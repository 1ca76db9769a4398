//! `faultbench.bench(agents={...}, ...)`: the benchmark from Python — scenarios × agents ×
//! passes on fresh labs, `jobs` runs at a time, every finished run archived at once
//! (`<runs_root>/<topology>/<layer>/<scenario>/<agent>/pass<N>/result.json` and `MANIFEST.csv`,
//! the same files as `faultbench bench`), resumable, with progress events and the report.
//!
//! This drives the library's pipeline directly ([`Runner`] per job over one
//! [`TrackingEmulator`]): resume skips every key the runs root already holds with a finished
//! status (infrastructure failures are re-run, as the CLI does); Ctrl-C stops scheduling,
//! abandons the runs in flight (never archived, so a resume redoes them), tears every lab down
//! and raises `KeyboardInterrupt`.

use crate::errors::{ConfigError, FaultbenchError, chain};
use crate::lab::{emulator, resolver};
use crate::run::Settings;
use crate::runtime;
use crate::scenario::PyScenario;
use faultbench_core::agent::Agent;
use faultbench_core::dataset::{Dataset, Scope};
use faultbench_core::judge::Judge;
use faultbench_core::pipeline::{Runner, TrackingEmulator};
use faultbench_core::record::{RunKey, RunRecord};
use faultbench_core::scenario::{Scenario, ScenarioFile};
use faultbench_core::store::RunsRoot;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::{Mutex, watch};

/// One planned run.
struct Item {
    scenario: Arc<ScenarioFile>,
    agent: usize,
    pass: u32,
    key: RunKey,
}

/// How a bench ended.
#[pyclass(name = "BenchResult", module = "faultbench", frozen, get_all)]
pub struct PyBenchResult {
    /// The runs root.
    runs_root: PathBuf,
    /// Runs planned (scenarios × agents × passes).
    planned: usize,
    /// Runs already finished in the root and skipped (resume).
    skipped: usize,
    /// Runs finished by this call.
    finished: usize,
    /// Run counts by status, of this call's runs.
    statuses: std::collections::BTreeMap<String, usize>,
    /// The HTML report, when written.
    report_html: Option<PathBuf>,
}

#[pymethods]
impl PyBenchResult {
    fn __repr__(&self) -> String {
        format!(
            "BenchResult(planned={}, skipped={}, finished={}, statuses={:?})",
            self.planned, self.skipped, self.finished, self.statuses
        )
    }
}

/// The scenarios to run: the given ones, or a dataset's selection.
fn scenarios_of(
    scenarios: Option<Vec<Bound<'_, PyScenario>>>,
    dataset: Option<PathBuf>,
    scope: &str,
    topology: Option<&str>,
) -> PyResult<Vec<Arc<ScenarioFile>>> {
    if let Some(list) = scenarios {
        return Ok(list.iter().map(|s| s.get().inner.clone()).collect());
    }
    let root = dataset.unwrap_or_else(|| PathBuf::from("dataset"));
    let ds = Dataset::scan(&root).map_err(|e| {
        crate::errors::ScenarioError::new_err(format!(
            "cannot read the dataset {}: {e}",
            root.display()
        ))
    })?;
    let scope: Scope = scope
        .parse()
        .map_err(|e: faultbench_core::category::UnknownName| ConfigError::new_err(e.to_string()))?;
    Ok(ds
        .select(scope, topology)
        .into_iter()
        .map(|s| Arc::new(s.clone()))
        .collect())
}

/// Scenarios × agents × passes, in scenario order.
fn plan(scenarios: &[Arc<ScenarioFile>], labels: &[String], passes: u32) -> Vec<Item> {
    let mut items = Vec::new();
    for s in scenarios {
        for (agent, label) in labels.iter().enumerate() {
            for pass in 1..=passes {
                items.push(Item {
                    scenario: s.clone(),
                    agent,
                    pass,
                    key: RunKey {
                        topology: s.topology_id().clone(),
                        layer: s.layer(),
                        scenario_id: s.scenario_id().clone(),
                        agent: label.clone(),
                        pass,
                    },
                });
            }
        }
    }
    items
}

/// Calls the progress callback with an event dict (on a blocking thread, attached).
async fn notify(progress: Option<&Arc<Py<PyAny>>>, event: serde_json::Value) {
    let Some(cb) = progress.cloned() else {
        return;
    };
    let _ = tokio::task::spawn_blocking(move || {
        Python::attach(|py| {
            let call = || -> PyResult<()> {
                let ev = crate::convert::to_py(py, &event)?;
                cb.bind(py).call1((ev,))?;
                Ok(())
            };
            if let Err(e) = call() {
                e.print(py);
            }
        });
    })
    .await;
}

/// What the workers share.
struct Shared {
    queue: Mutex<VecDeque<Item>>,
    agents: Vec<(String, Arc<dyn Agent>)>,
    store: RunsRoot,
    done: AtomicUsize,
    total: usize,
    progress: Option<Arc<Py<PyAny>>>,
    records: Mutex<Vec<RunRecord>>,
    fatal: Mutex<Option<String>>,
}

async fn worker(runner: Runner, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    loop {
        if *stop.borrow() {
            break;
        }
        let Some(item) = shared.queue.lock().await.pop_front() else {
            break;
        };
        let (label, agent) = &shared.agents[item.agent];
        let key = serde_json::json!({
            "topology": item.key.topology.as_str(), "scenario_id": item.key.scenario_id.as_str(),
            "agent": label, "pass": item.pass,
        });
        notify(
            shared.progress.as_ref(),
            serde_json::json!({"event": "started", "run": key}),
        )
        .await;
        let record = tokio::select! {
            r = runner.run_with(agent, label, item.scenario.as_ref(), item.pass) => r,
            _ = stop.wait_for(|s| *s) => break,
        };
        if let Err(e) = shared.store.archive(&record) {
            *shared.fatal.lock().await =
                Some(format!("cannot archive a finished run: {}", chain(&e)));
            break;
        }
        let done = shared.done.fetch_add(1, Ordering::SeqCst) + 1;
        notify(
            shared.progress.as_ref(),
            serde_json::json!({
                "event": "finished", "run": key, "status": record.status.as_str(),
                "outcome": record.scores.as_ref().map(|s| s.outcome),
                "done": done, "total": shared.total,
            }),
        )
        .await;
        shared.records.lock().await.push(record);
    }
    runner.shutdown().await;
}

/// Runs the benchmark. `agents` maps labels to agents (Python objects with `name` and `run`,
/// or built-in names such as `"baseline"`). Scenarios are `scenarios=[...]`, or the
/// `dataset` folder's `scope` (`all` = the 25 core per topology) of `topology`. Each
/// finished run is archived under `runs_root` at once; `resume=True` skips runs already
/// finished there. `progress` is called with an event dict per run start and finish.
#[pyfunction]
#[pyo3(signature = (agents, *, runs_root, scenarios = None, dataset = None, scope = "all".to_string(), topology = None, passes = 1, jobs = 1, resume = true, judge = None, emulator = "netns".to_string(), topologies = Vec::new(), max_turns = 20, wall_clock_secs = 600, read_only = false, telemetry = None, judge_model = None, llm_config = None, model = None, progress = None, report = true))]
#[allow(clippy::too_many_arguments)]
pub fn bench(
    py: Python<'_>,
    agents: &Bound<'_, PyDict>,
    runs_root: PathBuf,
    scenarios: Option<Vec<Bound<'_, PyScenario>>>,
    dataset: Option<PathBuf>,
    scope: String,
    topology: Option<String>,
    passes: u32,
    jobs: usize,
    resume: bool,
    judge: Option<&Bound<'_, PyAny>>,
    emulator: String,
    topologies: Vec<PathBuf>,
    max_turns: u32,
    wall_clock_secs: u64,
    read_only: bool,
    telemetry: Option<bool>,
    judge_model: Option<String>,
    llm_config: Option<PathBuf>,
    model: Option<String>,
    progress: Option<Bound<'_, PyAny>>,
    report: bool,
) -> PyResult<PyBenchResult> {
    let settings = Settings {
        emulator,
        topologies,
        max_turns,
        wall_clock_secs,
        read_only,
        telemetry,
        judge_model,
        llm_config,
        model,
    };
    if agents.is_empty() {
        return Err(ConfigError::new_err(
            "agents is empty: give at least one {label: agent}",
        ));
    }
    let mut labelled = Vec::new();
    for (label, agent) in agents.iter() {
        let label: String = label.extract()?;
        faultbench_core::ids::ScenarioId::new(&label)
            .map_err(|e| ConfigError::new_err(format!("agent label `{label}`: {e}")))?;
        labelled.push((label, settings.agent(&agent)?));
    }
    let rubric = PyString::new(py, "rubric");
    let judge: Arc<dyn Judge> = settings.judge(judge.unwrap_or(rubric.as_any()))?;
    let scenarios = scenarios_of(scenarios, dataset, &scope, topology.as_deref())?;
    if scenarios.is_empty() {
        return Err(ConfigError::new_err(format!(
            "no scenarios selected (scope `{scope}`, topology {topology:?})"
        )));
    }
    let labels: Vec<String> = labelled.iter().map(|(l, _)| l.clone()).collect();
    let mut items = plan(&scenarios, &labels, passes.max(1));
    let planned = items.len();
    let store = RunsRoot::open(&runs_root).map_err(|e| ConfigError::new_err(chain(&e)))?;
    let existing = store
        .records()
        .map_err(|e| FaultbenchError::new_err(chain(&e)))?;
    let held = items
        .iter()
        .filter(|i| existing.contains_key(&i.key))
        .count();
    if held > 0 && !resume {
        return Err(ConfigError::new_err(format!(
            "{} already holds {held} of these {planned} runs; pass resume=True to continue it, or choose a new runs_root",
            runs_root.display()
        )));
    }
    if resume {
        let done = store
            .prepare_resume()
            .map_err(|e| FaultbenchError::new_err(chain(&e)))?;
        items.retain(|i| !done.contains_key(&i.key));
        if settings.emulator == "netns" {
            // Labs of a killed earlier call are removed before new ones start.
            faultbench_emu::netns::gc();
        }
    }
    let skipped = planned - items.len();
    let tracking = Arc::new(TrackingEmulator::new(self::emulator(
        &settings.emulator,
        None,
    )?));
    let total = items.len();
    let shared = Arc::new(Shared {
        queue: Mutex::new(items.into()),
        agents: labelled,
        store: store.clone(),
        done: AtomicUsize::new(0),
        total,
        progress: progress.map(|p| Arc::new(p.unbind())),
        records: Mutex::new(Vec::new()),
        fatal: Mutex::new(None),
    });
    let (stop, stopped) = watch::channel(false);
    let mut runners = Vec::new();
    for _ in 0..jobs.clamp(1, total.max(1)) {
        runners.push(
            Runner::new(tracking.clone(), shared.agents[0].1.clone(), judge.clone())
                .with_tools(settings.tools())
                .with_topologies(resolver(&settings.topologies))
                .with_config(faultbench_core::pipeline::RunConfig {
                    prestart: 0,
                    ..settings.config()
                }),
        );
    }
    let work = {
        let shared = shared.clone();
        async move {
            let handles: Vec<_> = runners
                .into_iter()
                .map(|r| tokio::spawn(worker(r, shared.clone(), stopped.clone())))
                .collect();
            for h in handles {
                let _ = h.await;
            }
            tracking.teardown_all().await;
        }
    };
    runtime::wait_or_cancel(
        py,
        work,
        || {
            let _ = stop.send(true);
        },
        |_| {},
    )?;
    if let Some(f) = runtime::runtime().block_on(shared.fatal.lock()).take() {
        return Err(FaultbenchError::new_err(f));
    }
    let records = std::mem::take(&mut *runtime::runtime().block_on(shared.records.lock()));
    let mut statuses = std::collections::BTreeMap::new();
    for r in &records {
        *statuses.entry(r.status.as_str().to_string()).or_insert(0) += 1;
    }
    let report_html = if report {
        Some(crate::report::report(py, runs_root.clone(), None, true)?.html_path_owned())
    } else {
        None
    }
    .flatten();
    Ok(PyBenchResult {
        runs_root,
        planned,
        skipped,
        finished: records.len(),
        statuses,
        report_html,
    })
}
