//! The run pipeline: one scenario, one agent, one pass, from a healthy lab to a judged record.
//!
//! ```text
//! deploy a fresh lab → baseline check → [INJECTION] → [POST-INJECT-CHECK] → state snapshot
//!   → agent (turn budget + wall-clock cap) → state snapshot ∥ presence watch
//!   → judge ∥ teardown → record
//! ```
//!
//! `∥` marks phases that run at the same time because neither reads what the other changes:
//! the snapshot after the agent and the presence watch only read the lab (the repair task's
//! verification needs that snapshot, so there they follow each other); the judge reads only the
//! diagnosis, so the lab is torn down meanwhile (on a blocking thread: a backend's teardown
//! may block while it waits for its processes to go). Each phase keeps its own duration in
//! the record.
//!
//! The lab phases are [`crate::phases`], shared with `scenario check`. Every phase is timed
//! and recorded in a [`RunRecord`]; every failure becomes a status, never a panic: a lab that
//! does not come up or whose baseline does not hold is `deploy_incomplete`, an injection the
//! host cannot emulate is `unsupported_on_host`, a fault that never takes is
//! `injection_failed` (the agent never starts), an exhausted budget without a verdict is a
//! timeout (`no_submission`/`no_output`), a judge failure is `judge_failed` with the diagnosis
//! kept.
//!
//! **Fresh labs.** Every run gets a lab deployed for it and a new toolbox whose telemetry starts
//! at that lab's deploy, as the paper does: nothing of an earlier run (telemetry samples, FRR
//! and daemon logs, interface counters, route and neighbour ages, whatever an agent changed)
//! can reach a later one. [`Runner::prepare_lab`] deploys and baseline-checks a lab and returns
//! a [`PreparedLab`]; [`Runner::run_prepared`] runs a scenario on one. A [`LabQueue`] prepares
//! the labs of a job's next runs in the background while the current run's agent works
//! (`prestart`), so a verified lab is normally waiting when a run starts; [`prestart_limit`]
//! bounds how many labs that puts in memory, and a [`PrestartTuner`] can choose the depth from
//! measured bring-up and run times (`--prestart auto`). Labs are prepared at a lower CPU
//! priority ([`BACKGROUND_NICE`]) so that a bring-up takes little from a running agent. [`RunOptions::reuse_labs`] (`--reuse-labs`, a
//! development shortcut) instead keeps a lab for the next run of its topology after the
//! `[FIX]` revert is verified by the baseline probes; the record says which
//! (`phases.deploy.lab`: `fresh` or `reused`).
//!
//! **What the agent changed.** A [`crate::snapshot::Snapshot`] of every device is taken right
//! before the agent starts and right after it ends; the difference is the record's
//! `agent_changes`.
//!
//! **Repair task.** With [`RunOptions::task`] set to repair, the agent's message asks it to fix
//! the fault; a snapshot is also taken before the injection, a clock re-checks the fault while
//! the agent works, and after the agent [`crate::repair::verify_repair`] takes the presence
//! watch's place: its report is the record's `repair`.
//!
//! **Presence watch.** After the agent and before the lab is torn down, the scenario's
//! `[POST-INJECT-CHECK]` runs again (the healthy baseline for a network with nothing
//! injected). If it no longer holds although the agent changed nothing, the fault healed
//! itself (or the healthy network broke) during the run: the status is `fault_vanished`
//! (`baseline_broke`), an infrastructure status that is never scored and re-run on resume.
//!
//! ```
//! use faultbench_core::pipeline::{Runner, RunOptions};
//! # use faultbench_core::emulator::*; use faultbench_core::agent::*; use faultbench_core::judge::*;
//! # use faultbench_core::toolbox::*; use std::sync::Arc; use std::time::Duration;
//! # #[derive(Debug)] struct OkLab;
//! # #[async_trait::async_trait] impl Lab for OkLab {
//! #   fn name(&self) -> &str { "ok" } fn devices(&self) -> Vec<String> { vec!["r1".into(), "pc1".into()] }
//! #   async fn exec(&self, _d: &str, _c: &Command, _t: Duration) -> Result<ExecOutput, EmuError> { Ok(ExecOutput::ok("0% packet loss")) }
//! #   async fn teardown(&self) -> Result<(), EmuError> { Ok(()) } }
//! # struct Emu; #[async_trait::async_trait] impl Emulator for Emu { fn name(&self) -> &str { "demo" }
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

mod depth;
mod lane;
mod memory;
mod prepared;
mod repairing;
mod revert;
mod run;
mod tracking;

pub use depth::{AUTO_MAX, PrestartDecision, PrestartTuner, adaptive_depth};
pub use lane::{BACKGROUND_NICE, spawn_background, thread_niceness};
pub use memory::{MemoryBudget, PrestartLimit, estimate_lab_memory, prestart_limit};
pub use prepared::{LabPreparer, LabQueue, PreparedLab};
pub use revert::{RevertCommand, revert_commands};
pub use tracking::TrackingEmulator;
// Defined beside `Toolbox` (an emulator crate implements them without the pipeline); named
// here too, where runs use them.
#[allow(deprecated)]
pub use crate::toolbox::{ToolboxFactory, ToolboxOptions, ToolboxSettings};

use crate::agent::{Agent, Budget};
use crate::emulator::{Emulator, Lab};
use crate::judge::Judge;
use crate::lab::TopologyResolver;
use crate::phases::PhaseOptions;
use crate::record::RunRecord;
use crate::scenario::Scenario;
use crate::snapshot::SnapshotOptions;
use crate::toolbox::{ToolError, ToolOutput, ToolSpec, Toolbox};
use std::sync::Arc;
use std::time::Duration;

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

/// The former name of [`RunOptions`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `RunOptions`; the old name goes in the next release")]
pub type RunConfig = RunOptions;

/// Knobs of the pipeline.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The agent's budget (20 turns and a wall-clock cap by default).
    pub budget: Budget,
    /// Timeouts and retries of the lab phases (shared with `scenario check`).
    pub phases: PhaseOptions,
    /// Keep a lab for the next run of the same topology after its `[FIX]` revert is verified
    /// by the baseline probes (`--reuse-labs`). Off by default: every run gets a fresh lab, as
    /// in the paper; a reused lab carries the previous run's history (telemetry, logs,
    /// counters, and any change the agent made that the probes do not see).
    pub reuse_labs: bool,
    /// How many labs of a job's next runs are deployed and baseline-checked in the background
    /// while a run works (`--prestart`; used by [`LabQueue`] drivers such as `faultbench
    /// bench`, bounded by [`prestart_limit`]). 0 deploys each lab when its run starts.
    pub prestart: usize,
    /// Adapt the depth to measured bring-up and run times, up to `prestart` (`--prestart
    /// auto`, see [`PrestartTuner`]); off, `prestart` is used as it is.
    pub prestart_auto: bool,
    /// Collect telemetry for the agent's telemetry tools (`--telemetry on|off`, recorded per
    /// run).
    pub telemetry: bool,
    /// The state snapshots around the agent.
    pub snapshot: SnapshotOptions,
    /// Extra time past the agent's wall-clock cap before the harness stops it.
    pub agent_grace: Duration,
    /// Agent label recorded in run keys (defaults to the agent's name).
    pub agent_label: Option<String>,
    /// How long the judge may take for one run (an LLM judge's three judgements with their
    /// retries); past it the run is `judge_failed` with its diagnosis kept, and `faultbench
    /// judge runs --write` can complete it later. The wait is on the judge's future: a judge
    /// that computes without yielding (the rubric judge) bounds itself instead (it reads at
    /// most the first 64 KiB of a diagnosis).
    pub judge_timeout: Duration,
    /// The task: diagnose (the paper's) or repair (the agent must fix the fault; the lab
    /// verifies it after the agent, see [`crate::repair`]).
    pub task: crate::task::Task,
    /// Timeouts of the repair verification and whether it checks persistence.
    pub repair: crate::repair::RepairOptions,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            budget: Budget::default(),
            phases: PhaseOptions::default(),
            reuse_labs: false,
            prestart: 1,
            prestart_auto: false,
            telemetry: true,
            snapshot: SnapshotOptions::default(),
            agent_grace: Duration::from_secs(30),
            agent_label: None,
            judge_timeout: Duration::from_secs(300),
            task: crate::task::Task::Diagnose,
            repair: crate::repair::RepairOptions::default(),
        }
    }
}

/// Runs scenarios through the pipeline. One runner drives one run at a time (run several
/// runners for parallel, isolated labs); with [`RunOptions::reuse_labs`] it keeps at most one
/// lab between runs.
pub struct Runner {
    pub(crate) emulator: Arc<dyn Emulator>,
    pub(crate) agent: Arc<dyn Agent>,
    pub(crate) judge: Arc<dyn Judge>,
    pub(crate) tools: Arc<dyn ToolboxFactory>,
    pub(crate) topologies: TopologyResolver,
    pub(crate) config: RunOptions,
    pub(crate) warm: tokio::sync::Mutex<Option<PreparedLab>>,
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
            config: RunOptions::default(),
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
    pub fn with_config(mut self, config: RunOptions) -> Self {
        self.config = config;
        self
    }

    /// The configuration.
    pub fn config(&self) -> &RunOptions {
        &self.config
    }

    /// The agent label used in run keys.
    pub fn agent_label(&self) -> String {
        self.config
            .agent_label
            .clone()
            .unwrap_or_else(|| self.agent.name().to_string())
    }

    /// What prepares this runner's labs, detached from the runner (it can be moved into a
    /// background task): the emulator, toolbox factory, topology roots and phase options.
    pub fn lab_preparer(&self) -> LabPreparer {
        LabPreparer::new(
            self.emulator.clone(),
            self.tools.clone(),
            self.topologies.clone(),
            self.config.phases.clone(),
            self.config.telemetry,
        )
        .with_healthy_snapshot(
            (self.config.task == crate::task::Task::Repair).then_some(self.config.snapshot),
        )
    }

    /// Deploys a fresh lab of `topology` (a scenario's `Topology:`), builds its toolbox and
    /// waits for its healthy baseline. A failure is kept in the returned lab and becomes the
    /// status of the run that takes it.
    pub async fn prepare_lab(&self, topology: &str) -> PreparedLab {
        self.lab_preparer().prepare(topology).await
    }

    /// Runs a scenario once (pass 1).
    pub async fn run(&self, scenario: &dyn Scenario) -> RunRecord {
        self.run_pass(scenario, 1).await
    }

    /// Runs a scenario as the given pass.
    pub async fn run_pass(&self, scenario: &dyn Scenario, pass: u32) -> RunRecord {
        let label = self.agent_label();
        self.run_with(&self.agent.clone(), &label, scenario, pass)
            .await
    }

    /// Runs a scenario with another agent (recorded under `label`): on a fresh lab, or with
    /// [`RunOptions::reuse_labs`] on the lab the previous run of the same topology left.
    pub async fn run_with(
        &self,
        agent: &Arc<dyn Agent>,
        label: &str,
        scenario: &dyn Scenario,
        pass: u32,
    ) -> RunRecord {
        let lab = self.take_lab(scenario.topology()).await;
        run::run(self, agent, label, scenario, pass, lab).await
    }

    /// Runs a scenario on a lab prepared for it (by [`Runner::prepare_lab`] or a
    /// [`LabQueue`]). A lab of another topology is released and a fresh one deployed.
    pub async fn run_prepared(
        &self,
        agent: &Arc<dyn Agent>,
        label: &str,
        scenario: &dyn Scenario,
        pass: u32,
        lab: PreparedLab,
    ) -> RunRecord {
        let lab = if lab.topology() == scenario.topology() {
            lab
        } else {
            lab.release().await;
            self.prepare_lab(scenario.topology()).await
        };
        run::run(self, agent, label, scenario, pass, lab).await
    }

    /// The lab for a run of `topology`: the kept one when reusing and it fits, else fresh.
    async fn take_lab(&self, topology: &str) -> PreparedLab {
        let kept = self.warm.lock().await.take();
        match kept {
            Some(k) if self.config.reuse_labs && k.topology() == topology => k.into_reused(),
            other => {
                if let Some(old) = other {
                    old.release().await;
                }
                self.prepare_lab(topology).await
            }
        }
    }

    /// Tears down the lab kept for reuse, if any. Call when done (also on Ctrl-C).
    pub async fn shutdown(&self) {
        if let Some(w) = self.warm.lock().await.take() {
            w.release().await;
        }
    }
}
