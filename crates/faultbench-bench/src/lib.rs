//! # faultbench-bench: the benchmark at scale, from your own code
//!
//! [`faultbench_core::pipeline::Runner`] runs one scenario with one agent. A [`Bench`] runs a
//! benchmark: scenarios × agents × passes (the paper's experiments `e1` and `e2`, a scope, a
//! topology, a manifest, or ids), on isolated labs deployed fresh for every run, in parallel
//! jobs, archived in a runs root (`result.json` per run, `MANIFEST.csv`, the run identity).
//! It is what `faultbench bench` runs; the command only turns flags into [`BenchOptions`] and
//! renders the [`BenchEvent`]s.
//!
//! The model:
//! - **Names.** Agents, the judge and the emulator are named, and the names are looked up in
//!   [`Registries`] — the built-in ones plus yours: register your `Agent` under a name and the
//!   bench runs it like `baseline` or `react`.
//! - **One configuration per runs root.** Before anything is written, the bench's
//!   run identity (agents, models, prompts, judge, policy, budget, emulator, task, scenario
//!   files) is compared with the root's; a differing one is refused with every differing
//!   field ([`faultbench_core::identity`]).
//! - **Resume.** With [`BenchOptions::resume`], runs already archived are skipped (those whose
//!   status says the infrastructure failed are redone); without it a root that already holds
//!   planned runs is refused.
//! - **Cancel.** A [`Cancel`] stops the scheduling and tears every lab down, prestarted ones
//!   included; runs in flight are not archived, so resuming redoes exactly them.
//! - **Shards.** [`BenchOptions::shard`] runs one deterministic part of the plan (balanced by
//!   topology); [`merge()`] gathers shard roots into one.
//!
//! ```no_run
//! use faultbench_bench::{Bench, BenchOptions, Registries, Selection};
//! # use faultbench_core::agent::{Agent, AgentInput, AgentOutcome};
//! # use faultbench_core::toolbox::Toolbox;
//! # use std::sync::Arc;
//! # struct Mine;
//! # #[async_trait::async_trait]
//! # impl Agent for Mine {
//! #     fn name(&self) -> &str { "mine" }
//! #     async fn run(&self, _: &AgentInput, _: Arc<dyn Toolbox>) -> AgentOutcome { unimplemented!() }
//! # }
//! # async fn demo() -> Result<(), faultbench_bench::BenchError> {
//! let mut registries = Registries::default();
//! registries.agents.agent("mine", || Mine);
//! let settings = BenchOptions {
//!     selection: Selection::Experiment("e1".into(), Some("Kath1".into())),
//!     agents: vec!["mine".into()],
//!     runs_root: "runs/mine".into(),
//!     jobs: 2,
//!     ..BenchOptions::default()
//! };
//! let outcome = Bench::new(settings)
//!     .with_registries(registries)
//!     .on_event(|e| eprintln!("{e:?}"))
//!     .run()
//!     .await?;
//! println!("{} runs archived", outcome.finished);
//! # Ok(()) }
//! ```

mod error;
mod estimate;
mod events;
mod identity;
mod memory;
pub mod merge;
pub mod plan;
mod prepared;
mod repair_plan;
mod resolve;
mod run;

pub use error::BenchError;
pub use events::{BenchEvent, Cancel, EventSink};
pub use identity::IdentityVerdict;
pub use merge::{Clash, MergeError, MergeReport, merge};
pub use plan::{Item, MAX_SHARDS, Selection, Shard};
pub use prepared::Prepared;
pub use resolve::{AgentChoice, DELAY_ENV, JudgeChoice, Registries};
pub use run::{BenchOutcome, WrittenReport};

use faultbench_core::agent::{Budget, TicketHint};
use faultbench_core::task::Task;
use std::path::PathBuf;
use std::sync::Arc;

/// The former name of [`BenchOptions`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `BenchOptions`; the old name goes in the next release")]
pub type BenchSettings = BenchOptions;

/// Everything that decides what a bench runs and how (the flags of `faultbench bench`).
#[derive(Clone, Debug)]
pub struct BenchOptions {
    /// The dataset folder (default `dataset`).
    pub dataset: PathBuf,
    /// Which scenarios.
    pub selection: Selection,
    /// Passes per scenario and agent (default: 3 for e1, 2 for e2, else 1).
    pub passes: Option<u32>,
    /// Agent names (default `baseline`).
    pub agents: Vec<String>,
    /// External-agent templates laid over the built-in ones (default: the file in
    /// `$FAULTBENCH_AGENT_TEMPLATES`, if set).
    pub agent_templates: Option<PathBuf>,
    /// Model of the LLM agents (default: each agent's own).
    pub model: Option<String>,
    /// Output-token cap of each model call of the LLM agents.
    pub max_output_tokens: Option<u32>,
    /// Judge name (default `rubric`).
    pub judge: String,
    /// The LLM judge's model.
    pub judge_model: Option<String>,
    /// Emulator name (default `netns`).
    pub emulator: String,
    /// How collision domains are wired (default: Kathará's, a bridge per domain; recorded in
    /// the run identity and every run record).
    pub link_model: faultbench_core::emulator::LinkModel,
    /// Isolated labs run in parallel (default 1).
    pub jobs: usize,
    /// Where runs are archived (default `runs`).
    pub runs_root: PathBuf,
    /// Skip runs already finished in the root.
    pub resume: bool,
    /// Plan only: agents and judge are built offline (no key needed); [`Bench::run`] then
    /// reports the plan as a note and runs nothing.
    pub dry_run: bool,
    /// What LLM and external agents are told about the ticket (default: nothing, as in the paper).
    pub ticket_hint: TicketHint,
    /// Record this configuration as that of a root made before run identities existed.
    pub adopt_config: bool,
    /// Turns and wall-clock cap of each agent.
    pub budget: Budget,
    /// Tool policy name: `full` (the paper's) or `read-only`.
    pub policy: String,
    /// An extra folder searched for topologies, before `./topologies`.
    pub topologies: Option<PathBuf>,
    /// Development shortcut: reuse a lab between runs of a topology (recorded).
    pub reuse_labs: bool,
    /// Labs of each job's next runs prepared in the background (lowered to fit in memory);
    /// with `prestart_auto`, the most it may go to.
    pub prestart: usize,
    /// Adapt the prestart depth to the bench's measured bring-up and run times, within
    /// `prestart` and memory (the CLI's `--prestart auto`, its default); the depth in effect is
    /// recorded in every run's `phases.deploy.prestart`.
    pub prestart_auto: bool,
    /// Telemetry for the agents' influx_* tools.
    pub telemetry: bool,
    /// The LLM configuration file (default: `$FAULTBENCH_LLM_CONFIG`, else built-in defaults).
    pub llm_config: Option<PathBuf>,
    /// Diagnose (the paper's) or repair.
    pub task: Task,
    /// Repair task: restart changed devices' routing daemons and check again.
    pub repair_persist: bool,
    /// Run only this part of the plan ([`Shard`]).
    pub shard: Option<Shard>,
    /// After the runs, write the report of the whole root to `RUNS/report/` (default on).
    pub report: bool,
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            dataset: "dataset".into(),
            selection: Selection::Unset,
            passes: None,
            agents: vec!["baseline".into()],
            agent_templates: None,
            model: None,
            max_output_tokens: None,
            judge: "rubric".into(),
            judge_model: None,
            emulator: "netns".into(),
            link_model: Default::default(),
            jobs: 1,
            runs_root: "runs".into(),
            resume: false,
            dry_run: false,
            ticket_hint: TicketHint::default(),
            adopt_config: false,
            budget: Budget {
                max_turns: 20,
                wall_clock_secs: 1800,
            },
            policy: "full".into(),
            topologies: None,
            reuse_labs: false,
            prestart: 1,
            prestart_auto: false,
            telemetry: true,
            llm_config: None,
            task: Task::default(),
            repair_persist: false,
            shard: None,
            report: true,
        }
    }
}

/// A benchmark to plan and run: [`BenchOptions`], the [`Registries`] its names are looked up
/// in, where its events go and what cancels it.
#[derive(Clone)]
pub struct Bench {
    settings: BenchOptions,
    registries: Registries,
    events: EventSink,
    cancel: Cancel,
}

impl Bench {
    /// A bench with the built-in registries, events dropped, and its own [`Cancel`].
    pub fn new(settings: BenchOptions) -> Bench {
        Bench {
            settings,
            registries: Registries::default(),
            events: Arc::new(|_| {}),
            cancel: Cancel::new(),
        }
    }

    /// Looks names up in `registries` (the built-in ones plus yours).
    #[must_use]
    pub fn with_registries(mut self, registries: Registries) -> Bench {
        self.registries = registries;
        self
    }

    /// Sends every [`BenchEvent`] to `f` (called from the bench's tasks: keep it quick).
    #[must_use]
    pub fn on_event(mut self, f: impl Fn(&BenchEvent) + Send + Sync + 'static) -> Bench {
        self.events = Arc::new(f);
        self
    }

    /// Stops when `cancel` is thrown.
    #[must_use]
    pub fn with_cancel(mut self, cancel: Cancel) -> Bench {
        self.cancel = cancel;
        self
    }

    /// The switch that cancels this bench.
    pub fn cancel_handle(&self) -> Cancel {
        self.cancel.clone()
    }

    /// Cancels this bench on Ctrl-C or SIGTERM, first sending a [`BenchEvent::Note`] that says
    /// so; abort the returned task to stop listening.
    pub fn cancel_on_signals(&self) -> tokio::task::JoinHandle<()> {
        let events = self.events.clone();
        self.cancel.on_signals(move || {
            events(&BenchEvent::Note(
                "interrupt: stopping; tearing every lab down (runs in flight are not archived and will be redone with --resume)".into(),
            ));
        })
    }

    /// The settings.
    pub fn settings(&self) -> &BenchOptions {
        &self.settings
    }

    /// Plans the bench and checks it against the runs root, writing nothing: the scenarios,
    /// agents and judge are resolved, the plan made (and sharded), the configuration compared
    /// with the root's, the runs already there counted.
    ///
    /// # Errors
    /// A bad selection or setting, an unknown name, a configuration the root refuses, a root
    /// that already holds planned runs without [`BenchOptions::resume`].
    pub fn prepare(&self) -> Result<Prepared, BenchError> {
        prepared::prepare(self)
    }

    /// [`Bench::prepare`], then runs what is left to run ([`Prepared::run`]). With
    /// [`BenchOptions::dry_run`], the plan and its estimated cost are sent as a note and
    /// nothing runs.
    ///
    /// # Errors
    /// As [`Bench::prepare`] and [`Prepared::run`].
    pub async fn run(&self) -> Result<BenchOutcome, BenchError> {
        let prepared = self.prepare()?;
        if self.settings.dry_run {
            let text = prepared.dry_run_text()?;
            (self.events)(&BenchEvent::Note(text));
            return Ok(BenchOutcome {
                finished: 0,
                interrupted: false,
                report: None,
            });
        }
        prepared.run().await
    }
}
