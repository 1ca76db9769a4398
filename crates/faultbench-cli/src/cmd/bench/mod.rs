//! `faultbench bench`: run the benchmark — scenarios × agents × passes on isolated labs, in
//! parallel, resumable, with a registry and a report at the end. The work is
//! [`faultbench_bench::Bench`]'s; this module turns flags into its settings, renders its
//! events and turns Ctrl-C (or SIGTERM) into its cancellation.

mod progress;

use anyhow::bail;
use faultbench_bench::{Bench, BenchOptions, Selection, Shard};
use faultbench_core::agent::{Budget, TicketHint};
use faultbench_core::dataset::Scope;
use faultbench_core::emulator::LinkModel;
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
    /// How collision domains are wired: `switch` (default, Kathará's: a bridge per domain, so
    /// a device setting its interface down leaves the far end's carrier up) or `veth` (two-member
    /// domains as veth pairs, where the far end loses carrier too; netns only). Recorded in the
    /// run identity and every run record.
    #[arg(long, value_name = "MODEL", default_value_t = LinkModel::Switch)]
    link_model: LinkModel,
    /// Passes per scenario and agent (default 1; 3 for e1, 2 for e2).
    #[arg(long)]
    passes: Option<u32>,
    /// Run only part K of N of the plan (a deterministic split, each part with its share of
    /// every topology; recorded in the runs root). Gather the parts with `faultbench merge`.
    #[arg(long, value_name = "K/N", value_parser = clap::builder::ValueParser::new(|s: &str| s.parse::<Shard>()))]
    shard: Option<Shard>,
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
    /// run works: `auto` (as many as measured bring-up and run times need, up to 4) or a
    /// fixed N; lowered, with a message, when memory does not allow it. The depth in effect is
    /// shown with each finished run and recorded in its `phases.deploy.prestart`.
    #[arg(long, default_value = "auto", value_name = "auto|N", value_parser = clap::builder::ValueParser::new(parse_prestart))]
    prestart: Prestart,
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

/// `--prestart`: adapted to measured times, or fixed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Prestart {
    /// `auto`.
    Auto,
    /// A fixed depth.
    Fixed(usize),
}

fn parse_prestart(s: &str) -> Result<Prestart, String> {
    if s == "auto" {
        return Ok(Prestart::Auto);
    }
    s.parse::<usize>()
        .map(Prestart::Fixed)
        .map_err(|_| format!("`{s}` is neither `auto` nor a number of labs"))
}

/// On or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Switch {
    /// On.
    On,
    /// Off.
    Off,
}

fn settings(a: Args) -> BenchOptions {
    BenchOptions {
        dataset: a.dataset,
        selection: Selection::from_flags(
            a.experiment,
            a.scenarios,
            a.manifest,
            a.scope,
            a.topology,
        ),
        passes: a.passes,
        agents: a.agents,
        agent_templates: a.agent_templates,
        model: a.model,
        max_output_tokens: a.max_output_tokens,
        judge: a.judge,
        judge_model: a.judge_model,
        emulator: a.emulator,
        link_model: a.link_model,
        jobs: a.jobs,
        runs_root: a.runs_root,
        resume: a.resume,
        dry_run: a.dry_run,
        ticket_hint: a.ticket_hint,
        adopt_config: a.adopt_config,
        budget: Budget {
            max_turns: a.max_turns,
            wall_clock_secs: a.wall_clock,
        },
        policy: a.policy,
        topologies: a.topologies,
        reuse_labs: a.reuse_labs,
        prestart: match a.prestart {
            Prestart::Auto => faultbench_core::pipeline::AUTO_MAX,
            Prestart::Fixed(n) => n,
        },
        prestart_auto: a.prestart == Prestart::Auto,
        telemetry: a.telemetry == Switch::On,
        llm_config: a.llm_config,
        task: a.task,
        repair_persist: a.repair_persist,
        shard: a.shard,
        report: !a.no_report,
    }
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.no_warm {
        bail!(
            "--no-warm is gone: every run gets a fresh lab by default now (--reuse-labs is the development shortcut that reuses labs)"
        );
    }
    let progress = progress::BenchProgress::default();
    let bench = Bench::new(settings(args)).on_event(move |e| progress.show(e));
    // Planning reads the dataset, the manifest and the runs root and writes nothing, so
    // Ctrl-C and SIGTERM keep their default action (end the process) until the runs start;
    // only then does the first one become a cancellation that tears the labs down, and a
    // second one ends the process whatever it waits on.
    let prepared = bench.prepare()?;
    if bench.settings().dry_run {
        out!("{}", prepared.dry_run_text()?);
        return Ok(ExitCode::SUCCESS);
    }
    let signals = bench.cancel_on_signals();
    let _second = super::signals::second_signal_exits();
    let outcome = prepared.run().await?;
    signals.abort();
    if let Some(r) = &outcome.report {
        outln!("{}\nHTML report: {}", r.markdown, r.html.display());
    }
    if outcome.interrupted {
        errln!(
            "interrupted: {} run(s) finished; every lab was torn down. Continue with the same command and --resume.",
            outcome.finished
        );
        return Ok(ExitCode::from(130));
    }
    Ok(ExitCode::SUCCESS)
}
