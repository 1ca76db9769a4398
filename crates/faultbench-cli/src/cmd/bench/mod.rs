//! `faultbench bench`: run the benchmark — scenarios × agents × passes on isolated labs, in
//! parallel, resumable, with a registry and a report at the end.

mod build;
mod estimate;
mod identity;
mod memory;
mod plan;
mod progress;
mod repair_plan;
mod workers;

use anyhow::{Context, bail};
use faultbench_core::agent::{Budget, TicketHint};
use faultbench_core::dataset::Scope;
use faultbench_core::lab::TopologyResolver;
use faultbench_core::pipeline::RunConfig;
use faultbench_core::store::RunsRoot;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `faultbench bench`.
#[derive(clap::Args)]
pub struct Args {
    /// Scenario ids, comma-separated.
    #[arg(long, value_delimiter = ',', conflicts_with_all = ["manifest", "scope", "experiment"])]
    scenarios: Vec<String>,
    /// A manifest of scenario ids (CSV with a `scenario` column, or one id per line).
    #[arg(long, conflicts_with_all = ["scope", "experiment"])]
    manifest: Option<PathBuf>,
    /// A scope: all (the core scenarios), base, cex, or a persona layer.
    #[arg(long, conflicts_with = "experiment")]
    scope: Option<Scope>,
    /// Only scenarios of this topology (with --scope or --experiment).
    #[arg(long)]
    topology: Option<String>,
    /// The paper's experiments: e1 (200 core scenarios, 3 passes) or e2 (5 persona layers, 2 passes).
    #[arg(long)]
    experiment: Option<String>,
    /// The dataset folder.
    #[arg(long, default_value = "dataset")]
    dataset: PathBuf,
    /// Agents: baseline, react, sade, external:NAME (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "baseline")]
    agents: Vec<String>,
    /// External-agent templates (TOML, `[agents.NAME]` tables) laid over the built-in ones, for
    /// `external:NAME` (default: the file in $FAULTBENCH_AGENT_TEMPLATES, if set).
    #[arg(long)]
    agent_templates: Option<PathBuf>,
    /// Model for the LLM agents (default: gpt-5 for react, claude-sonnet-4-6 otherwise).
    #[arg(long)]
    model: Option<String>,
    /// Output-token cap of each model call of the LLM agents (default: the model's
    /// `max_output_tokens` in the LLM config, else 4096).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    max_output_tokens: Option<u32>,
    /// Judge: rubric (deterministic) or llm.
    #[arg(long, default_value = "rubric")]
    judge: String,
    /// Model of the LLM judge (default gpt-5-mini).
    #[arg(long)]
    judge_model: Option<String>,
    /// Emulator: netns (Linux namespaces + FRR), kathara, or mock.
    #[arg(long, default_value = "netns")]
    emulator: String,
    /// Passes per scenario and agent (default 1; 3 for e1, 2 for e2).
    #[arg(long)]
    passes: Option<u32>,
    /// Isolated labs run in parallel.
    #[arg(long, default_value_t = 1)]
    jobs: usize,
    /// Where runs are archived.
    #[arg(long, default_value = "runs")]
    runs_root: PathBuf,
    /// Skip runs already finished in the runs root (re-run only infrastructure failures). The
    /// configuration must be the one the root was made with (it is refused otherwise, with the
    /// differing fields listed).
    #[arg(long)]
    resume: bool,
    /// Print the configuration, the plan and the estimated cost of agents and judge; run and
    /// write nothing.
    #[arg(long)]
    dry_run: bool,
    /// What LLM and external agents are told about the ticket: none (the paper's prompts) or
    /// skeptical (one added sentence: the ticket may be inaccurate) — an experiment arm of its
    /// own, recorded in the runs root's configuration.
    #[arg(long, default_value = "none", value_parser = clap::builder::ValueParser::new(|s: &str| s.parse::<TicketHint>()))]
    ticket_hint: TicketHint,
    /// Record this configuration as that of a runs root made before faultbench recorded
    /// configurations (only when you know its runs were made with exactly these settings).
    #[arg(long)]
    adopt_config: bool,
    /// Model turns per run.
    #[arg(long, default_value_t = 20)]
    max_turns: u32,
    /// Wall-clock cap of the agent phase, in seconds.
    #[arg(long, default_value_t = 1800)]
    wall_clock: u64,
    /// Tool policy: full (as in the paper) or read-only.
    #[arg(long, default_value = "full")]
    policy: String,
    /// Extra folder searched for topologies (before ./topologies).
    #[arg(long)]
    topologies: Option<PathBuf>,
    /// Development shortcut: keep a lab for the next run of its topology after the `[FIX]`
    /// revert is verified, instead of a fresh lab per run. A reused lab carries the previous
    /// run's history; records and reports say so.
    #[arg(long)]
    reuse_labs: bool,
    /// Labs of each job's next runs deployed and baseline-checked in the background while a
    /// run works (lowered, with a message, when memory does not allow it).
    #[arg(long, default_value_t = 1, value_name = "N")]
    prestart: usize,
    /// Telemetry for the agents' influx_* tools: on (sampled from each lab's deploy) or off
    /// (they answer as the release's labs without a collector did). Recorded per run.
    #[arg(long, value_enum, default_value_t = Switch::On)]
    telemetry: Switch,
    /// Removed: every run gets a fresh lab now (see --reuse-labs).
    #[arg(long, hide = true)]
    no_warm: bool,
    /// LLM configuration file (providers, models, prices).
    #[arg(long)]
    llm_config: Option<PathBuf>,
    /// Do not write and print the report at the end.
    #[arg(long)]
    no_report: bool,
    /// The task: diagnose (the paper's: find the fault and describe it) or repair (fix it on
    /// the live network; the lab verifies the repair after the agent). Needs --policy full.
    #[arg(long, default_value = "diagnose")]
    task: faultbench_core::task::Task,
    /// Repair task: after a repair, restart the changed devices' routing daemons and check
    /// again (a fix made only in running state that a restart undoes is reported).
    #[arg(long)]
    repair_persist: bool,
}

/// On or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    /// On.
    On,
    /// Off.
    Off,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.no_warm {
        bail!(
            "--no-warm is gone: every run gets a fresh lab by default now (--reuse-labs is the development shortcut that reuses labs)"
        );
    }
    // What to run.
    let (selection, default_passes) = if let Some(e) = &args.experiment {
        let (scopes, passes) = plan::experiment_scopes(e)?;
        (
            plan::Selection::Scopes(scopes, args.topology.clone()),
            passes,
        )
    } else if !args.scenarios.is_empty() {
        (plan::Selection::Ids(args.scenarios.clone()), 1)
    } else if let Some(m) = &args.manifest {
        (plan::Selection::Ids(plan::read_manifest(m)?), 1)
    } else if let Some(s) = args.scope {
        (plan::Selection::Scopes(vec![s], args.topology.clone()), 1)
    } else {
        bail!("choose scenarios with --scenarios, --manifest, --scope or --experiment");
    };
    let passes = args.passes.unwrap_or(default_passes);
    if passes == 0 || args.jobs == 0 {
        bail!("--passes and --jobs must be at least 1");
    }
    let scenarios = plan::select(&args.dataset, &selection)?;
    repair_plan::check(args.task, &args.policy, args.repair_persist, &scenarios)?;
    let llm = build::llm_config(args.llm_config.as_deref())?;
    let agents = build::agents(
        &args.agents,
        &llm,
        args.model.as_deref(),
        args.max_output_tokens,
        args.dry_run,
        args.ticket_hint,
        args.agent_templates.as_deref(),
    )?;
    let judge = build::judge(
        &args.judge,
        &llm,
        args.judge_model.as_deref(),
        &scenarios,
        args.dry_run,
    )?;
    let policy: faultbench_emu::tools::Policy = args
        .policy
        .parse()
        .map_err(|e: faultbench_emu::tools::UnknownPolicy| anyhow::anyhow!("--policy: {e}"))?;
    let budget = Budget {
        max_turns: args.max_turns,
        wall_clock_secs: args.wall_clock,
    };
    let labels: Vec<String> = agents.iter().map(|a| a.label.clone()).collect();
    let mut items = plan::plan(&scenarios, &labels, passes)?;
    let total = items.len();

    // One configuration per runs root: compare with the stored one before writing anything.
    let config_id = identity::build(&identity::Settings {
        agents: &agents,
        judge: &judge,
        ticket_hint: args.ticket_hint,
        tool_policy: policy.to_string(),
        telemetry: args.telemetry == Switch::On,
        budget,
        reuse_labs: args.reuse_labs,
        emulator: &args.emulator,
        task: args.task,
        repair_persist: args.repair_persist,
        scenarios: &scenarios,
    });
    let verdict = identity::check(&args.runs_root, &config_id, args.adopt_config)?;

    // What is already done (read only: a refused or dry run writes nothing).
    let existing = RunsRoot::attach(&args.runs_root).records()?;
    let planned_done = items
        .iter()
        .filter(|i| existing.contains_key(&i.key))
        .count();
    if planned_done > 0 && !args.resume && !args.dry_run {
        bail!(
            "{} already holds {planned_done} of these {total} runs; pass --resume to continue it, or choose a new --runs-root",
            args.runs_root.display()
        );
    }
    let topologies = match &args.topologies {
        Some(t) => TopologyResolver::default().prepend_root(t),
        None => TopologyResolver::default(),
    };
    let prestart = if args.reuse_labs {
        // A reused lab is the previous run's: nothing to prepare ahead.
        0
    } else {
        memory::bounded_prestart(
            &args.emulator,
            args.prestart,
            args.jobs,
            &items,
            &topologies,
        )
    };
    if args.dry_run {
        if args.resume {
            items.retain(|i| existing.get(&i.key).is_none_or(|r| r.status.needs_rerun()));
        }
        println!("{}", verdict.to_store.markdown());
        println!("configuration: {}", verdict.note);
        let prices = llm.prices().context("the price table")?;
        estimate::print_plan(&estimate::Plan {
            items: &items,
            planned: total,
            agents: &agents,
            judge: &judge,
            prices: &prices,
            topologies: &topologies,
        });
        println!("(dry run: nothing was run or written)");
        return Ok(ExitCode::SUCCESS);
    }
    let store = RunsRoot::open(&args.runs_root)?;
    verdict
        .to_store
        .write(store.path())
        .context("recording the runs root's configuration")?;
    eprintln!("configuration: {}", verdict.note);
    if args.resume {
        let done = store.prepare_resume()?;
        items.retain(|i| !done.contains_key(&i.key));
    }
    if items.is_empty() {
        eprintln!(
            "nothing to run: all {total} planned runs are finished in {}",
            args.runs_root.display()
        );
    }

    let emulator = build::emulator(&args.emulator)?;
    if args.resume && args.emulator == "netns" {
        crate::cmd::backends::gc_netns();
    }
    let config = RunConfig {
        budget,
        reuse_labs: args.reuse_labs,
        prestart,
        telemetry: args.telemetry == Switch::On,
        task: args.task,
        repair: faultbench_core::repair::RepairOptions {
            persist: args.repair_persist,
            ..Default::default()
        },
        ..Default::default()
    };
    let tools = build::tools(&args.policy)?;
    let outcome = workers::run_all(workers::Setup {
        items,
        jobs: args.jobs,
        emulator,
        agents,
        judge: judge.judge,
        tools,
        topologies,
        config,
        store: store.clone(),
    })
    .await?;

    if !args.no_report {
        let registry = faultbench_core::report::Registry::load(store.path())
            .context("reading the registry back")?;
        let report = faultbench_core::report::Report::new(&registry, None);
        let dir = store.path().join("report");
        let html = report.write_all(&dir).context("writing the report")?;
        println!("{}", report.markdown());
        println!("HTML report: {}", html.display());
    }
    if outcome.interrupted {
        eprintln!(
            "interrupted: {} run(s) finished; every lab was torn down. Continue with the same command and --resume.",
            outcome.finished
        );
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}
