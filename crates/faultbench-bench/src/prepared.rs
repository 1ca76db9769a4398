//! A planned bench: what [`crate::Bench::prepare`] resolved and checked, ready to report
//! (`--dry-run`) or to run.

use crate::events::{BenchEvent, Cancel, EventSink};
use crate::plan::{self, Item};
use crate::resolve::{self, AgentChoice, AgentSettings, JudgeChoice, Registries};
use crate::run::{self, BenchOutcome};
use crate::{
    Bench, BenchError, BenchOptions, IdentityVerdict, estimate, identity, memory, repair_plan,
};
use faultbench_core::RunStatus;
use faultbench_core::identity::RunIdentity;
use faultbench_core::lab::TopologyResolver;
use faultbench_core::pipeline::RunOptions;
use faultbench_core::record::{RunKey, RunRecord};
use faultbench_core::store::RunsRoot;
use faultbench_core::toolbox::Policy;
use faultbench_llm::LlmOptions;
use std::collections::BTreeMap;

/// A bench planned and checked against its runs root; nothing written yet.
pub struct Prepared {
    settings: BenchOptions,
    registries: Registries,
    events: EventSink,
    cancel: Cancel,
    llm: LlmOptions,
    agents: Vec<AgentChoice>,
    judge: JudgeChoice,
    policy: Policy,
    items: Vec<Item>,
    planned: usize,
    verdict: IdentityVerdict,
    existing: BTreeMap<RunKey, RunRecord>,
    topologies: TopologyResolver,
    prestart: usize,
}

pub(crate) fn prepare(bench: &Bench) -> Result<Prepared, BenchError> {
    let s = &bench.settings;
    let emit_all = |notes: &mut Vec<String>| {
        for n in notes.drain(..) {
            (bench.events)(&BenchEvent::Note(n));
        }
    };
    let mut notes = Vec::new();
    let selected = plan::select(&s.dataset, &s.selection, &mut notes);
    emit_all(&mut notes);
    let (scenarios, default_passes) = selected?;
    let passes = s.passes.unwrap_or(default_passes);
    if passes == 0 || s.jobs == 0 {
        return Err(BenchError::ZeroPassesOrJobs);
    }
    repair_plan::check(s.task, &s.policy, s.repair_persist, &scenarios)?;
    let llm = LlmOptions::discover(s.llm_config.as_deref()).map_err(BenchError::LlmOptions)?;
    let agents = resolve::agents(
        &bench.registries,
        &s.agents,
        &AgentSettings {
            llm: &llm,
            model: s.model.as_deref(),
            max_output_tokens: s.max_output_tokens,
            dry_run: s.dry_run,
            ticket_hint: s.ticket_hint,
            templates: s.agent_templates.as_deref(),
        },
        &mut notes,
    );
    emit_all(&mut notes);
    let agents = agents?;
    let judge = resolve::judge(
        &bench.registries,
        &s.judge,
        &llm,
        s.judge_model.as_deref(),
        &scenarios,
        s.dry_run,
    )?;
    let policy = resolve::policy(&s.policy)?;
    let labels: Vec<String> = agents.iter().map(|a| a.label.clone()).collect();
    let items = plan::plan(&scenarios, &labels, passes, &mut notes);
    emit_all(&mut notes);
    let mut items = items?;
    if let Some(shard) = s.shard {
        items = shard.select(items);
    }
    let planned = items.len();

    // One configuration per runs root: compare with the stored one before writing anything.
    let mut config_id = identity::build(&identity::Settings {
        agents: &agents,
        judge: &judge,
        ticket_hint: s.ticket_hint,
        tool_policy: policy.to_string(),
        telemetry: s.telemetry,
        budget: s.budget,
        reuse_labs: s.reuse_labs,
        emulator: &s.emulator,
        // Mock networks have no wired links.
        link_model: (s.emulator != "mock").then_some(s.link_model),
        task: s.task,
        repair_persist: s.repair_persist,
        scenarios: &scenarios,
    });
    if let Some(shard) = s.shard {
        shard.record(&mut config_id);
    }
    let verdict = identity::check(&s.runs_root, &config_id, s.adopt_config)?;

    // What is already done (read only: a refused or dry run writes nothing).
    let existing = RunsRoot::attach(&s.runs_root).records()?;
    let planned_done = items
        .iter()
        .filter(|i| existing.contains_key(&i.key))
        .count();
    if planned_done > 0 && !s.resume && !s.dry_run {
        return Err(BenchError::AlreadyHolds {
            root: s.runs_root.clone(),
            done: planned_done,
            total: planned,
        });
    }
    let topologies = match &s.topologies {
        Some(t) => TopologyResolver::default().prepend_root(t),
        None => TopologyResolver::default(),
    };
    let prestart = if s.reuse_labs {
        // A reused lab is the previous run's: nothing to prepare ahead.
        0
    } else {
        memory::bounded_prestart(
            &s.emulator,
            s.prestart,
            s.jobs,
            &items,
            &topologies,
            &mut notes,
        )
    };
    emit_all(&mut notes);
    Ok(Prepared {
        settings: s.clone(),
        registries: bench.registries.clone(),
        events: bench.events.clone(),
        cancel: bench.cancel.clone(),
        llm,
        agents,
        judge,
        policy,
        items,
        planned,
        verdict,
        existing,
        topologies,
        prestart,
    })
}

impl Prepared {
    /// The planned runs (this shard's, if sharded), including those already finished.
    pub fn items(&self) -> &[Item] {
        &self.items
    }

    /// The agents, in the order given.
    pub fn agents(&self) -> &[AgentChoice] {
        &self.agents
    }

    /// The identity the root will hold, and how it relates to the stored one.
    pub fn verdict(&self) -> &IdentityVerdict {
        &self.verdict
    }

    /// The identity the root will hold.
    pub fn identity(&self) -> &RunIdentity {
        &self.verdict.to_store
    }

    /// The configuration, the plan and the estimated cost of agents and judge, as printed by
    /// `faultbench bench --dry-run`.
    ///
    /// # Errors
    /// The price table of the LLM configuration cannot be built.
    pub fn dry_run_text(&self) -> Result<String, BenchError> {
        let mut items = self.items.clone();
        if self.settings.resume {
            items.retain(|i| {
                self.existing
                    .get(&i.key)
                    .is_none_or(|r| r.status.needs_rerun())
            });
        }
        let prices = self.llm.prices().map_err(BenchError::Prices)?;
        let (plan, _) = estimate::describe_plan(&estimate::Plan {
            items: &items,
            planned: self.planned,
            agents: &self.agents,
            judge: &self.judge,
            prices: &prices,
            topologies: &self.topologies,
        });
        Ok(format!(
            "{}\nconfiguration: {}\n{plan}(dry run: nothing was run or written)\n",
            self.verdict.to_store.markdown(),
            self.verdict.note
        ))
    }

    /// Records the configuration in the root and runs every planned run not yet finished
    /// (with resume: runs whose status needs a rerun are redone), in parallel jobs, each on a
    /// fresh lab. Returns when all are archived or the bench was cancelled.
    ///
    /// # Errors
    /// The root cannot be written, the emulator cannot be built, a finished run cannot be
    /// archived (the bench stops; labs are torn down).
    pub async fn run(self) -> Result<BenchOutcome, BenchError> {
        let s = &self.settings;
        let note = |n: String| (self.events)(&BenchEvent::Note(n));
        let store = RunsRoot::open(&s.runs_root)?;
        self.verdict
            .to_store
            .write(store.path())
            .map_err(BenchError::RecordIdentity)?;
        note(format!("configuration: {}", self.verdict.note));
        let mut items = self.items;
        if s.resume {
            let done: BTreeMap<RunKey, RunStatus> = store.prepare_resume()?;
            items.retain(|i| !done.contains_key(&i.key));
        }
        if items.is_empty() {
            note(format!(
                "nothing to run: all {} planned runs are finished in {}",
                self.planned,
                s.runs_root.display()
            ));
        }
        let emulator = resolve::emulator(&self.registries, &s.emulator, s.link_model)?;
        if s.resume && s.emulator == "netns" {
            // Labs a killed bench left behind.
            for (lab, why) in &faultbench_emu::netns::gc().removed {
                note(format!("gc: removed leftover lab {lab} ({why})"));
            }
        }
        let config = RunOptions {
            budget: s.budget,
            reuse_labs: s.reuse_labs,
            prestart: self.prestart,
            prestart_auto: s.prestart_auto,
            telemetry: s.telemetry,
            task: s.task,
            repair: faultbench_core::repair::RepairOptions {
                persist: s.repair_persist,
                ..Default::default()
            },
            ..Default::default()
        };
        let root = store.path().to_path_buf();
        let mut outcome = run::run_all(run::Setup {
            items,
            jobs: s.jobs,
            emulator,
            agents: self.agents,
            judge: self.judge.judge,
            tools: resolve::tools(self.policy),
            topologies: self.topologies,
            config,
            store,
            events: self.events,
            cancel: self.cancel,
        })
        .await?;
        if s.report {
            let index =
                faultbench_report::RunIndex::load(&root).map_err(BenchError::ReadRunIndex)?;
            // The records just written give the per-axis counts (notes on unreadable ones are
            // the report's business only when a user asks for it with `faultbench report`).
            let (opts, _) = faultbench_report::ReportOptions::tables_only().with_records(&root);
            let report = faultbench_report::Report::with_options(&index, None, &opts);
            // `report/` is derived from the root: a link planted there is refused.
            let html = faultbench_core::output::OutputDir::open(&root, "report")
                .and_then(|dir| report.write_into(&dir))
                .map_err(BenchError::WriteReport)?;
            outcome.report = Some(crate::WrittenReport {
                markdown: report.markdown(),
                html,
            });
        }
        Ok(outcome)
    }
}
