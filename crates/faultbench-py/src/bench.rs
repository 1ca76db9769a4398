//! `faultbench.bench(agents={...}, ...)`: the benchmark from Python, over the library's
//! [`Bench`] — the same plan, jobs, prestart, resume, run identity, result files
//! (`result.json` per run, `MANIFEST.csv`, `identity.json`) and cancellation as `faultbench
//! bench`.
//!
//! Python agents are registered in the bench's agent registry under their labels, a Python
//! judge under its name, so the bench treats them like its built-in ones. The bench's events
//! are queued and handed to the `progress` callback on the calling thread between waits (never
//! from a runtime worker); Ctrl-C throws the bench's [`faultbench_bench::Cancel`], waits (interpreter released)
//! until every lab is torn down, then raises `KeyboardInterrupt`.

use crate::agent::PyAgent;
use crate::errors::{ConfigError, FaultbenchError, chain};
use crate::judge::PyJudge;
use crate::runtime;
use crate::scenario::PyScenario;
use faultbench_bench::{Bench, BenchEvent, BenchOptions, Registries, Selection, Shard};
use faultbench_core::agent::{Agent, Budget};
use faultbench_core::dataset::Scope;
use faultbench_core::judge::Judge;
use faultbench_core::record::RunKey;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, mpsc};

/// How a bench ended.
#[pyclass(name = "BenchResult", module = "faultbench", frozen, get_all)]
pub struct PyBenchResult {
    /// The runs root.
    runs_root: PathBuf,
    /// Runs planned (scenarios × agents × passes, this shard's).
    planned: usize,
    /// Planned runs already finished in the root and skipped (resume).
    skipped: usize,
    /// Runs finished and archived by this call.
    finished: usize,
    /// Run counts by status, of this call's runs.
    statuses: BTreeMap<String, usize>,
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

fn key_json(k: &RunKey) -> Value {
    json!({"topology": k.topology.as_str(), "layer": k.layer.as_str(),
           "scenario_id": k.scenario_id.as_str(), "agent": k.agent, "pass": k.pass})
}

/// A bench event as the dict the `progress` callback gets (`event` names its kind; `text` is
/// the line `faultbench bench` prints for it).
fn event_json(e: &BenchEvent) -> Value {
    let mut v = match e {
        BenchEvent::Note(text) => json!({"event": "note"}).tap_text(text),
        BenchEvent::Started { runs, jobs } => {
            json!({"event": "started", "runs": runs, "jobs": jobs})
        }
        BenchEvent::RunStarted { job, key } => {
            json!({"event": "run_started", "job": job, "run": key_json(key)})
        }
        BenchEvent::RunFinished {
            job,
            done,
            total,
            record,
            tally,
        } => json!({
            "event": "run_finished", "job": job, "done": done, "total": total,
            "run": key_json(&record.key), "status": record.status.as_str(),
            "outcome": record.scores.as_ref().map(|s| s.outcome), "error": record.error,
            "wall_seconds": record.wall_seconds,
            "tally": tally.iter().map(|(s, n)| (s.as_str().to_string(), json!(n))).collect::<serde_json::Map<_, _>>(),
        }),
        BenchEvent::JobDone { job } => json!({"event": "job_done", "job": job}),
        BenchEvent::Finished {
            finished,
            interrupted,
        } => json!({"event": "finished", "finished": finished, "interrupted": interrupted}),
        other => json!({"event": "other"}).tap_text(&other.to_string()),
    };
    if v.get("text").is_none() {
        v["text"] = Value::String(e.to_string());
    }
    v
}

/// `json!({...}).tap_text(t)`: the object with `text` set.
trait TapText {
    fn tap_text(self, text: &str) -> Value;
}

impl TapText for Value {
    fn tap_text(mut self, text: &str) -> Value {
        self["text"] = Value::String(text.to_string());
        self
    }
}

/// Which scenarios: ids (or `Scenario` objects, by id), an experiment, or a scope.
fn selection(
    scenarios: Option<Vec<Bound<'_, PyAny>>>,
    experiment: Option<String>,
    scope: &str,
    topology: Option<String>,
) -> PyResult<Selection> {
    if let Some(list) = scenarios {
        let ids = list
            .iter()
            .map(|s| match s.cast::<PyScenario>() {
                Ok(sc) => Ok(sc.get().inner.spec.id().to_string()),
                Err(_) => s.extract::<String>(),
            })
            .collect::<PyResult<Vec<_>>>()?;
        return Ok(Selection::Ids(ids));
    }
    if let Some(e) = experiment {
        return Ok(Selection::Experiment(e, topology));
    }
    let scopes = scope
        .split(',')
        .map(|s| s.parse::<Scope>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| ConfigError::new_err(e.to_string()))?;
    Ok(Selection::Scopes(scopes, topology))
}

/// Runs the benchmark. `agents` maps labels to agents: Python objects with `name` and `run`
/// (registered under the label), or built-in names (`"baseline"`, `"react"`, …; the label is
/// then the name). Scenarios are `scenarios=[ids or Scenario objects]`, an `experiment`
/// (`e1`, `e2`), or a `scope` (`all` = the 25 core per topology, or a layer; comma-separated
/// for several), optionally of one `topology`, from the `dataset` folder. Each finished run is
/// archived under `runs_root` at once; `resume=True` skips runs already finished there (a
/// root holding planned runs is refused without it). `progress(event)` is called on this
/// thread for every bench event. Ctrl-C tears every lab down and raises `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (agents, *, runs_root, scenarios = None, dataset = PathBuf::from("dataset"), scope = "all".to_string(), experiment = None, topology = None, passes = None, jobs = 1, resume = true, judge = None, emulator = "netns".to_string(), topologies = None, max_turns = 20, wall_clock_secs = 600, read_only = false, telemetry = None, prestart = 1, shard = None, judge_model = None, llm_config = None, model = None, progress = None, report = true))]
#[allow(clippy::too_many_arguments)]
pub fn bench(
    py: Python<'_>,
    agents: &Bound<'_, PyDict>,
    runs_root: PathBuf,
    scenarios: Option<Vec<Bound<'_, PyAny>>>,
    dataset: PathBuf,
    scope: String,
    experiment: Option<String>,
    topology: Option<String>,
    passes: Option<u32>,
    jobs: usize,
    resume: bool,
    judge: Option<&Bound<'_, PyAny>>,
    emulator: String,
    topologies: Option<PathBuf>,
    max_turns: u32,
    wall_clock_secs: u64,
    read_only: bool,
    telemetry: Option<bool>,
    prestart: usize,
    shard: Option<String>,
    judge_model: Option<String>,
    llm_config: Option<PathBuf>,
    model: Option<String>,
    progress: Option<Bound<'_, PyAny>>,
    report: bool,
) -> PyResult<PyBenchResult> {
    if agents.is_empty() {
        return Err(ConfigError::new_err(
            "agents is empty: give at least one {label: agent}",
        ));
    }
    let mut registries = Registries::default();
    let mut names = Vec::new();
    for (label, agent) in agents.iter() {
        let label: String = label.extract()?;
        if let Ok(builtin) = agent.cast::<PyString>() {
            names.push(builtin.to_cow()?.into_owned());
            continue;
        }
        let agent: Arc<dyn Agent> = Arc::new(PyAgent::new(&agent)?);
        registries
            .agents
            .register(label.clone(), move |_| Ok(agent.clone()));
        names.push(label);
    }
    let judge_name = match judge {
        None => "rubric".to_string(),
        Some(j) if j.is_instance_of::<PyString>() => j.extract::<String>()?,
        Some(j) if j.is_callable() => {
            let pj = PyJudge::new(j)?;
            let name = pj.name().to_string();
            let pj: Arc<dyn Judge> = Arc::new(pj);
            registries
                .judges
                .register(name.clone(), move |_| Ok(pj.clone()));
            name
        }
        Some(_) => {
            return Err(ConfigError::new_err(
                "judge must be a name (`rubric`, `llm`) or a callable (scenario, diagnosis) -> Scores",
            ));
        }
    };
    let settings = BenchOptions {
        dataset,
        selection: selection(scenarios, experiment, &scope, topology)?,
        passes,
        agents: names,
        model,
        judge: judge_name,
        judge_model,
        telemetry: telemetry.unwrap_or(emulator != "mock"),
        emulator,
        jobs,
        runs_root: runs_root.clone(),
        resume,
        budget: Budget {
            max_turns,
            wall_clock_secs,
        },
        policy: if read_only { "read-only" } else { "full" }.to_string(),
        topologies,
        prestart,
        llm_config,
        shard: shard
            .map(|s| s.parse::<Shard>())
            .transpose()
            .map_err(|e| ConfigError::new_err(chain(&e)))?,
        ..BenchOptions::default()
    };
    let (tx, rx) = mpsc::channel::<Value>();
    let tx = Mutex::new(tx);
    let statuses: Arc<Mutex<BTreeMap<String, usize>>> = Arc::default();
    let to_run: Arc<Mutex<Option<usize>>> = Arc::default();
    let (st, tr) = (statuses.clone(), to_run.clone());
    let bench = Bench::new(settings)
        .with_registries(registries)
        .on_event(move |e| {
            match e {
                BenchEvent::Started { runs, .. } => {
                    *tr.lock().unwrap_or_else(|p| p.into_inner()) = Some(*runs);
                }
                BenchEvent::RunFinished { record, .. } => {
                    *st.lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .entry(record.status.as_str().to_string())
                        .or_insert(0) += 1;
                }
                _ => {}
            }
            let _ = tx
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .send(event_json(e));
        });
    let prepared = bench
        .prepare()
        .map_err(|e| ConfigError::new_err(chain(&e)))?;
    let planned = prepared.items().len();
    let cancel = bench.cancel_handle();
    let deliver = |py: Python<'_>| -> PyResult<()> {
        for ev in rx.try_iter() {
            if let Some(cb) = &progress {
                cb.call1((crate::convert::to_py(py, &ev)?,))?;
            }
        }
        Ok(())
    };
    let outcome = runtime::wait_with(py, prepared.run(), deliver, || cancel.cancel())?
        .map_err(|e| FaultbenchError::new_err(chain(&e)))?;
    let statuses = std::mem::take(&mut *statuses.lock().unwrap_or_else(|p| p.into_inner()));
    let to_run = to_run
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .unwrap_or(planned);
    let report_html = if report {
        crate::report::report(py, runs_root.clone(), None, true)?.html_path_owned()
    } else {
        None
    };
    Ok(PyBenchResult {
        runs_root,
        planned,
        skipped: planned.saturating_sub(to_run),
        finished: outcome.finished,
        statuses,
        report_html,
    })
}
