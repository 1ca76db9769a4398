//! `faultbench.run(scenario, agent, judge="rubric")`: one scenario through the Rust pipeline —
//! fresh lab, baseline, injection, the agent (Python or built-in), the judge, teardown — and
//! its `Record`.

use crate::agent::PyAgent;
use crate::errors::{ConfigError, chain};
use crate::judge::{BuiltinOptions, judge_of};
use crate::lab::{emulator, resolver};
use crate::runtime;
use crate::scenario::PyScenario;
use crate::types::PyRecord;
use faultbench_agents::registry::{AgentOptions, builtin_agents};
use faultbench_core::agent::{Agent, Budget};
use faultbench_core::judge::Judge;
use faultbench_core::pipeline::{RunOptions, Runner, ToolboxFactory, TrackingEmulator};
use faultbench_core::store::RunsRoot;
use faultbench_core::toolbox::Policy;
use faultbench_emu::tools::NikaToolsFactory;
use faultbench_llm::LlmOptions;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Everything a run or a bench is configured with, from the keyword arguments.
pub struct Settings {
    /// `netns`, `kathara` or `mock`.
    pub emulator: String,
    /// Extra topology roots, searched first.
    pub topologies: Vec<PathBuf>,
    /// The agent's turn budget.
    pub max_turns: u32,
    /// The agent's wall-clock budget.
    pub wall_clock_secs: u64,
    /// The read-only tool policy.
    pub read_only: bool,
    /// Telemetry collection for the `influx_*` tools.
    pub telemetry: Option<bool>,
    /// The judge model (`llm`).
    pub judge_model: Option<String>,
    /// An LLM config file.
    pub llm_config: Option<PathBuf>,
    /// The model of built-in LLM agents.
    pub model: Option<String>,
}

impl Settings {
    /// Telemetry on by default, except on mock networks (which have no counters).
    pub fn telemetry(&self) -> bool {
        self.telemetry.unwrap_or(self.emulator != "mock")
    }

    /// The pipeline configuration.
    pub fn config(&self) -> RunOptions {
        RunOptions {
            budget: Budget {
                max_turns: self.max_turns,
                wall_clock_secs: self.wall_clock_secs,
            },
            telemetry: self.telemetry(),
            // A Python agent is cancelled at its own budget; the harness's cap is a backstop.
            agent_grace: Duration::from_secs(10),
            ..Default::default()
        }
    }

    /// The toolbox factory under the policy.
    pub fn tools(&self) -> Arc<dyn ToolboxFactory> {
        let policy = if self.read_only {
            Policy::ReadOnly
        } else {
            Policy::Full
        };
        Arc::new(NikaToolsFactory::new().with_policy(policy))
    }

    /// The judge: a name or a callable.
    pub fn judge(&self, judge: &Bound<'_, PyAny>) -> PyResult<Arc<dyn Judge>> {
        judge_of(
            judge,
            &BuiltinOptions {
                model: self.judge_model.clone(),
                llm_config: self.llm_config.clone(),
                cache_dir: None,
            },
        )
    }

    /// An agent: a built-in name (`baseline`, `react`, `sade`, `external:NAME`) or a Python
    /// object with `name` and `run`.
    pub fn agent(&self, agent: &Bound<'_, PyAny>) -> PyResult<Arc<dyn Agent>> {
        if let Ok(name) = agent.cast::<PyString>() {
            let llm = LlmOptions::discover(self.llm_config.as_deref())
                .map_err(|e| ConfigError::new_err(chain(&e)))?;
            let options = AgentOptions {
                model: self.model.clone(),
                llm,
                ..Default::default()
            };
            return builtin_agents()
                .build(&name.to_cow()?, &options)
                .map_err(|e| ConfigError::new_err(chain(&e)));
        }
        Ok(Arc::new(PyAgent::new(agent)?))
    }
}

/// Runs one scenario with `agent` and `judge`; returns its record (and archives it under
/// `runs_root` when given). Ctrl-C stops the run, tears its lab down and raises
/// `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (scenario, agent, judge = None, *, emulator = "netns".to_string(), topologies = Vec::new(), max_turns = 20, wall_clock_secs = 600, read_only = false, telemetry = None, judge_model = None, llm_config = None, model = None, runs_root = None, pass_ = 1))]
#[allow(clippy::too_many_arguments)]
pub fn run(
    py: Python<'_>,
    scenario: &Bound<'_, PyScenario>,
    agent: &Bound<'_, PyAny>,
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
    runs_root: Option<PathBuf>,
    pass_: u32,
) -> PyResult<PyRecord> {
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
    let rubric = PyString::new(py, "rubric");
    let judge = settings.judge(judge.unwrap_or(rubric.as_any()))?;
    let agent = settings.agent(agent)?;
    let store = runs_root
        .map(RunsRoot::open)
        .transpose()
        .map_err(|e| ConfigError::new_err(chain(&e)))?;
    let tracking = Arc::new(TrackingEmulator::new(self::emulator(
        &settings.emulator,
        None,
    )?));
    let runner = Runner::new(tracking.clone(), agent, judge)
        .with_tools(settings.tools())
        .with_topologies(resolver(&settings.topologies))
        .with_config(RunOptions {
            prestart: 0,
            ..settings.config()
        });
    let scenario = scenario.get().inner.clone();
    let (stop, mut stopped) = tokio::sync::watch::channel(false);
    let fut = async move {
        let record = tokio::select! {
            r = runner.run_pass(scenario.as_ref(), pass_) => Some(r),
            _ = stopped.wait_for(|s| *s) => None,
        };
        runner.shutdown().await;
        // Labs of an interrupted run (and telemetry tasks winding down) go here.
        tracking.teardown_all().await;
        record
    };
    let record = runtime::wait_or_cancel(
        py,
        fut,
        || {
            let _ = stop.send(true);
        },
        |_| {},
    )?
    .ok_or_else(|| ConfigError::new_err("the run was stopped"))?;
    if let Some(store) = store {
        store
            .archive(&record)
            .map_err(|e| crate::errors::FaultbenchError::new_err(chain(&e)))?;
    }
    Ok(PyRecord { inner: record })
}
