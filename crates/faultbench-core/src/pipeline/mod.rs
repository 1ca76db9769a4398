//! The run pipeline: one scenario, one agent, one pass, from a healthy lab to a judged record.
//!
//! ```text
//! deploy (or reuse a warm lab) → baseline check → [INJECTION] → [POST-INJECT-CHECK]
//!   → agent (turn budget + wall-clock cap) → judge → record → revert-and-verify or teardown
//! ```
//!
//! Every phase is timed and recorded in a [`RunRecord`]; every failure becomes a status, never a
//! panic: a lab that does not come up or whose baseline does not hold is `deploy_incomplete`, an
//! injection the host cannot emulate is `unsupported_on_host`, a fault that never takes is
//! `injection_failed` (the agent never starts), an exhausted budget without a verdict is a timeout
//! (`no_submission`/`no_output`), a judge failure is `judge_failed` with the diagnosis kept.
//!
//! A [`Runner`] owns at most one warm lab: consecutive scenarios of one topology reuse it when the
//! previous run's revert is verified by the baseline probes, otherwise the lab is redeployed. The
//! record says which (`phases.deploy.warm`). Run several runners for parallel, isolated labs.
//!
//! ```
//! use faultbench_core::pipeline::{Runner, RunConfig};
//! # use faultbench_core::emulator::*; use faultbench_core::agent::*; use faultbench_core::judge::*;
//! # use faultbench_core::toolbox::*; use std::sync::Arc; use std::time::Duration;
//! # #[derive(Debug)] struct OkLab;
//! # #[async_trait::async_trait] impl Lab for OkLab {
//! #   fn name(&self) -> &str { "ok" } fn devices(&self) -> Vec<String> { vec!["r1".into(), "pc1".into()] }
//! #   async fn exec(&self, _d: &str, _c: &Command, _t: Duration) -> Result<ExecOutput, EmuError> { Ok(ExecOutput::ok("0% packet loss")) }
//! #   async fn teardown(&self) -> Result<(), EmuError> { Ok(()) } }
//! # struct Emu; #[async_trait::async_trait] impl Emulator for Emu { fn kind(&self) -> &str { "demo" }
//! #   async fn deploy(&self, _r: &LabRequest) -> Result<Arc<dyn Lab>, EmuError> { Ok(Arc::new(OkLab)) } }
//! # struct Healthy; #[async_trait::async_trait] impl Agent for Healthy { fn name(&self) -> &str { "healthy" }
//! #   async fn run(&self, _i: &AgentInput, _t: Arc<dyn Toolbox>) -> AgentOutcome {
//! #     AgentOutcome::answer("=== DIAGNOSIS ===\nis_anomaly: false\nfaulty_devices: none\ndiagnosis_text:\nfine\n=== END ===") } }
//! # struct Asserts; #[async_trait::async_trait] impl Judge for Asserts { fn name(&self) -> &str { "asserts" }
//! #   async fn judge(&self, i: &JudgeInput<'_>) -> Result<Scores, JudgeError> { let mut s = Scores::new("asserts");
//! #     for a in faultbench_core::Scenario::scoring_axes(i.scenario) { let p = a.assertion().is_some_and(|x| check_assertion(&x, i.diagnosis)); s.push_axis(AxisVerdict::new(a, p, "")); }
//! #     s.finish(OutcomeRule::Release); Ok(s) } }
//! # let root = tempfile::tempdir().unwrap();
//! # let topo = root.path().join("Demo"); std::fs::create_dir_all(&topo).unwrap();
//! # std::fs::write(topo.join("lab.conf"), "r1[0]=A\npc1[0]=A\n").unwrap();
//! # std::fs::write(topo.join("baseline.toml"), "[[probe]]\nname='p'\nkind='reach'\ndevice='pc1'\ncommand='ping -c1 r1'\nexpect='0% loss'\n").unwrap();
//! # let text = "Scenario: demo-false-premise-slow\nTopology: Demo\n\n[PROMPT-TO-AGENT]\npc1 is slow\n\n[INJECTION]\ndevice: none\nnote: nothing\n\n[POST-INJECT-CHECK]\n# none\n\n[GROUND-TRUTH]\nhealthy\n\n[SCORING-AXES]\nassert-no-anomaly\nassert-no-faulty-devices\n\n[NIKA-LABEL]\nnika_label: none\nnika_category: NOVEL\nin_taxonomy: false\n";
//! # let scenario = faultbench_core::ScenarioSpec::parse(text).unwrap();
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let runner = Runner::new(Arc::new(Emu), Arc::new(Healthy), Arc::new(Asserts))
//!     .with_topologies(faultbench_core::lab::TopologyResolver::new([root.path()]));
//! let record = runner.run(&scenario).await;
//! assert_eq!(record.status, faultbench_core::RunStatus::Scored);
//! assert_eq!(record.scores.unwrap().outcome, 1.0);
//! runner.shutdown().await;
//! # });
//! ```

mod revert;
mod run;
mod tracking;

pub use revert::{RevertCommand, revert_commands};
pub use tracking::TrackingEmulator;

use crate::agent::{Agent, Budget};
use crate::emulator::{Emulator, Lab};
use crate::inject::RetryPolicy;
use crate::judge::Judge;
use crate::lab::TopologyResolver;
use crate::record::RunRecord;
use crate::scenario::Scenario;
use crate::toolbox::{ToolError, ToolOutput, ToolSpec, Toolbox};
use std::sync::Arc;
use std::time::Duration;

/// Builds the toolbox agents use on a lab (e.g. the 22 NIKA tools). Called once per deployed
/// lab (so that per-lab state such as telemetry starts at deploy time); each run wraps the result
/// in a recording toolbox.
pub trait ToolboxFactory: Send + Sync {
    /// The toolbox for a freshly deployed lab.
    fn toolbox(&self, lab: Arc<dyn Lab>) -> Arc<dyn Toolbox>;
}

impl<F> ToolboxFactory for F
where
    F: Fn(Arc<dyn Lab>) -> Arc<dyn Toolbox> + Send + Sync,
{
    fn toolbox(&self, lab: Arc<dyn Lab>) -> Arc<dyn Toolbox> {
        self(lab)
    }
}

/// A toolbox with no tools (the default when none is configured).
pub struct NoTools;

#[async_trait::async_trait]
impl Toolbox for NoTools {
    fn specs(&self) -> Vec<ToolSpec> {
        Vec::new()
    }
    async fn call(&self, name: &str, _args: serde_json::Value) -> Result<ToolOutput, ToolError> {
        Err(ToolError::UnknownTool(name.to_string()))
    }
}

/// Knobs of the pipeline.
#[derive(Debug, Clone)]
pub struct RunConfig {
    /// The agent's budget (20 turns and a wall-clock cap by default).
    pub budget: Budget,
    /// Timeout of each probe, injection and revert command.
    pub command_timeout: Duration,
    /// How long to retry the post-injection checks.
    pub retry: RetryPolicy,
    /// Reuse a lab for the next scenario of the same topology after a verified revert.
    pub warm_labs: bool,
    /// How long a freshly deployed lab may take to pass its baseline (routing convergence):
    /// the probes are re-run every 0.25 s until they all hold or this much time has passed.
    pub baseline_wait: Duration,
    /// After a run's revert, how long the baseline may take to hold again (routing
    /// re-convergence) before the lab is torn down instead of kept warm.
    pub revert_wait: Duration,
    /// Extra time past the agent's wall-clock cap before the harness stops it.
    pub agent_grace: Duration,
    /// Agent label recorded in run keys (defaults to the agent's name).
    pub agent_label: Option<String>,
}

impl Default for RunConfig {
    fn default() -> Self {
        RunConfig {
            budget: Budget::default(),
            command_timeout: Duration::from_secs(30),
            retry: RetryPolicy::default(),
            baseline_wait: Duration::from_secs(60),
            revert_wait: Duration::from_secs(8),
            warm_labs: true,
            agent_grace: Duration::from_secs(30),
            agent_label: None,
        }
    }
}

/// A lab kept for the next run of the same topology.
pub(crate) struct WarmLab {
    pub topology: String,
    pub lab: Arc<dyn Lab>,
    pub tools: Arc<dyn Toolbox>,
    /// The baseline was verified after the last run's revert.
    pub verified: bool,
}

/// Runs scenarios through the pipeline. One runner drives one lab at a time.
pub struct Runner {
    pub(crate) emulator: Arc<dyn Emulator>,
    pub(crate) agent: Arc<dyn Agent>,
    pub(crate) judge: Arc<dyn Judge>,
    pub(crate) tools: Arc<dyn ToolboxFactory>,
    pub(crate) topologies: TopologyResolver,
    pub(crate) config: RunConfig,
    pub(crate) warm: tokio::sync::Mutex<Option<WarmLab>>,
}

impl Runner {
    /// A runner with no tools, the default topology roots and the default configuration.
    pub fn new(emulator: Arc<dyn Emulator>, agent: Arc<dyn Agent>, judge: Arc<dyn Judge>) -> Self {
        Runner {
            emulator,
            agent,
            judge,
            tools: Arc::new(|_lab: Arc<dyn Lab>| Arc::new(NoTools) as Arc<dyn Toolbox>),
            topologies: TopologyResolver::default(),
            config: RunConfig::default(),
            warm: tokio::sync::Mutex::new(None),
        }
    }

    /// Sets the toolbox factory.
    pub fn with_tools(mut self, tools: Arc<dyn ToolboxFactory>) -> Self {
        self.tools = tools;
        self
    }

    /// Sets where topologies are found.
    pub fn with_topologies(mut self, topologies: TopologyResolver) -> Self {
        self.topologies = topologies;
        self
    }

    /// Sets the configuration.
    pub fn with_config(mut self, config: RunConfig) -> Self {
        self.config = config;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &RunConfig {
        &self.config
    }

    /// The agent label used in run keys.
    pub fn agent_label(&self) -> String {
        self.config
            .agent_label
            .clone()
            .unwrap_or_else(|| self.agent.name().to_string())
    }

    /// Runs a scenario once (pass 1).
    pub async fn run(&self, scenario: &dyn Scenario) -> RunRecord {
        self.run_pass(scenario, 1).await
    }

    /// Runs a scenario as the given pass.
    pub async fn run_pass(&self, scenario: &dyn Scenario, pass: u32) -> RunRecord {
        let label = self.agent_label();
        run::run(self, &self.agent, &label, scenario, pass).await
    }

    /// Runs a scenario with another agent (recorded under `label`), on this runner's lab.
    /// Consecutive runs of one topology share the warm lab whichever agent they use.
    pub async fn run_with(
        &self,
        agent: &Arc<dyn Agent>,
        label: &str,
        scenario: &dyn Scenario,
        pass: u32,
    ) -> RunRecord {
        run::run(self, agent, label, scenario, pass).await
    }

    /// Tears down the warm lab, if any. Call when done (also on Ctrl-C).
    pub async fn shutdown(&self) {
        if let Some(w) = self.warm.lock().await.take() {
            let _ = w.lab.teardown().await;
        }
    }
}
