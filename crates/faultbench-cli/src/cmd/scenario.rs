//! `faultbench scenario check`: does each scenario's fault really happen on its lab?
//!
//! For every scenario file: resolve its `Topology:` to a lab directory, deploy it on the netns
//! emulator (or Kathará with `--emulator kathara`), wait for the healthy baseline, run `[INJECTION]`, verify `[POST-INJECT-CHECK]`
//! with a bounded retry, tear the lab down (always; with `--share-labs` a passing scenario
//! without injection leaves its lab to the job's next one). The pipeline itself is
//! [`faultbench_core::check::check_scenario`] and [`faultbench_core::check::check_sharing`];
//! this module picks files, runs one worker per job, prints progress and sets the exit code.
//!
//! Exit codes: 0 every scenario passed; 1 at least one failed; 2 usage or environment error;
//! 3 nothing failed but some scenarios are unsupported on this host; 130 interrupted.

use anyhow::Context;
use faultbench_core::check::{
    CheckOptions, CheckOutcome, ScenarioCheck, SharedLab, check_scenario, check_sharing,
};
use faultbench_core::emulator::{Emulator, LinkModel};
use faultbench_core::inject::VerifyRetry;
use faultbench_core::lab::TopologyResolver;
use faultbench_core::phases::PhaseOptions;
use faultbench_core::pipeline::TrackingEmulator;
use faultbench_core::scenario::{Scenario, ScenarioFile};
use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Subcommands of `faultbench scenario`.
#[derive(clap::Subcommand)]
pub enum ScenarioCmd {
    /// Deploy each scenario's topology, check the healthy baseline, inject the fault, verify
    /// it took, tear down. Exit 0 when all pass, 1 on any failure, 3 when the only non-passes
    /// are unsupported on this host.
    Check(CheckArgs),
}

/// Arguments of `faultbench scenario check`.
#[derive(clap::Args)]
pub struct CheckArgs {
    /// Scenario files.
    #[arg(value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Check every `.txt` file under DIR (recursively), e.g. a dataset folder.
    #[arg(long, value_name = "DIR")]
    pub all: Option<PathBuf>,
    /// Labs to run at the same time (each one is isolated).
    #[arg(long, short = 'j', default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=64))]
    pub jobs: u16,
    /// How collision domains are wired: `switch` (default, Kathará's: a bridge per domain, so
    /// a device setting its interface down leaves the far end's carrier up) or `veth` (two-member
    /// domains as veth pairs, where the far end loses carrier too).
    #[arg(long, value_name = "MODEL", default_value_t = LinkModel::Switch)]
    pub link_model: LinkModel,
    /// A folder of topologies searched before the default ones (repeatable).
    #[arg(long = "topologies", value_name = "DIR")]
    pub topologies: Vec<PathBuf>,
    /// Seconds the healthy baseline may take to hold after deploy.
    #[arg(long, default_value_t = 60, value_name = "SECS")]
    pub baseline_timeout: u64,
    /// Seconds the post-injection checks may take to hold (retried every 0.25 s).
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    pub verify_timeout: u64,
    /// After a fault took, also run the scenario's `[FIX]` commands (as the benchmark does to
    /// reuse a lab) and require the healthy baseline to come back.
    #[arg(long)]
    pub revert: bool,
    /// Let scenarios that inject nothing (false premises and their persona rewrites) share a
    /// lab per job, re-checking its baseline each time, as long as nothing has been injected
    /// into it; every scenario that injects still gets a fresh lab.
    #[arg(long)]
    pub share_labs: bool,
    /// Also write every report as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Print the failing baseline probes and checks of failed scenarios in full.
    #[arg(long, short)]
    pub verbose: bool,
    /// The backend labs are deployed on (Kathará: configured by `$FAULTBENCH_KATHARA_CONFIG`,
    /// as for `faultbench bench --emulator kathara`).
    #[arg(long, value_enum, default_value_t)]
    pub emulator: super::lab::Backend,
}

pub async fn run(cmd: ScenarioCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ScenarioCmd::Check(args) => check(args).await,
    }
}

/// The backend labs are deployed on: Linux namespaces with real FRR and services (root), or
/// Kathará built as `faultbench bench --emulator kathara` builds it.
fn emulator(
    backend: super::lab::Backend,
    link_model: LinkModel,
) -> anyhow::Result<Arc<dyn Emulator>> {
    if backend == super::lab::Backend::Kathara {
        if link_model != LinkModel::Switch {
            anyhow::bail!(
                "--link-model {link_model} is a netns option: every Kathará collision domain is a switch (drop the flag or use --emulator netns)"
            );
        }
        #[cfg(feature = "kathara")]
        {
            let emu = faultbench_emu::kathara::KatharaEmulator::from_env()
                .map_err(|e| anyhow::anyhow!("{e}"))
                .context("the Kathará emulator cannot run here (see `faultbench doctor`)")?;
            return Ok(Arc::new(emu));
        }
        #[cfg(not(feature = "kathara"))]
        anyhow::bail!(super::lab::KATHARA_NOT_BUILT);
    }
    faultbench_emu::netns::preflight()
        .context("the netns emulator cannot run here (it needs root and the lab packages; see `faultbench doctor`)")?;
    Ok(Arc::new(
        faultbench_emu::netns::NetnsEmulator::new().link_model(link_model),
    ))
}

async fn check(args: CheckArgs) -> anyhow::Result<ExitCode> {
    let files = collect_files(&args)?;
    let mut resolver = TopologyResolver::with_default_roots();
    for root in args.topologies.iter().rev() {
        anyhow::ensure!(
            root.is_dir(),
            "--topologies {}: not a folder",
            root.display()
        );
        resolver = resolver.prepend_root(root);
    }
    let emulator = Arc::new(TrackingEmulator::new(emulator(
        args.emulator,
        args.link_model,
    )?));
    let defaults = CheckOptions::default();
    let baseline_wait = Duration::from_secs(args.baseline_timeout);
    let opts = CheckOptions {
        phases: PhaseOptions {
            baseline_wait,
            // A check wants to know whether the [FIX] restores the baseline at all.
            revert_wait: baseline_wait,
            verify: VerifyRetry {
                deadline: Duration::from_secs(args.verify_timeout),
                ..defaults.phases.verify
            },
            ..defaults.phases
        },
        revert: args.revert,
        ..defaults
    };

    let total = files.len();
    errln!(
        "checking {total} scenario(s) with {} lab(s) at a time on the {} emulator",
        args.jobs,
        emulator.name()
    );
    let started = Instant::now();
    // One worker per job pulls the next file; with --share-labs it keeps a pristine lab
    // between the no-injection scenarios it checks.
    let queue = Arc::new(std::sync::Mutex::new(
        files.into_iter().enumerate().collect::<VecDeque<_>>(),
    ));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..args.jobs {
        let (emulator, resolver, opts, queue, tx) = (
            emulator.clone(),
            resolver.clone(),
            opts.clone(),
            queue.clone(),
            tx.clone(),
        );
        let share = args.share_labs;
        tasks.spawn(async move {
            let mut shared: Option<SharedLab> = None;
            loop {
                let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                let Some((index, file)) = next else { break };
                let stem = file.file_stem().unwrap_or_default().to_string_lossy();
                errln!("  started {stem}");
                let t = Instant::now();
                let slot = if share { Some(&mut shared) } else { None };
                let report = check_file(emulator.as_ref(), &resolver, &file, &opts, slot).await;
                if tx.send((index, file, report, t.elapsed())).is_err() {
                    break;
                }
            }
            if let Some(lab) = shared {
                let topology = lab.topology().to_string();
                if let Err(e) = lab.release().await {
                    errln!("teardown of the shared {topology} lab: {e} (`faultbench lab gc` collects it)");
                }
            }
        });
    }
    drop(tx);

    let mut results: Vec<Option<(PathBuf, ScenarioCheck)>> = vec![None; total];
    let mut done = 0;
    // The first Ctrl-C or SIGTERM tears the labs down; a second one exits at once. (One
    // listener for the whole loop: a signal between two results is not missed.)
    let _second = super::signals::second_signal_exits();
    let stop = super::lab::interrupted();
    tokio::pin!(stop);
    let interrupted = loop {
        tokio::select! {
            next = rx.recv() => {
                let Some((index, file, report, took)) = next else { break false };
                done += 1;
                print_line(done, total, &report, took, args.verbose);
                results[index] = Some((file, report));
            }
            () = &mut stop => break true,
        }
    };
    if interrupted {
        // Tear down while the tasks still hold their labs, then stop the tasks.
        let (n, errors) = emulator.teardown_all().await;
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
        errln!("interrupted: tore down {n} running lab(s)");
        for e in errors {
            errln!("teardown: {e}");
        }
        return Ok(ExitCode::from(130));
    }

    while let Some(joined) = tasks.join_next().await {
        joined.context("a check task panicked")?;
    }
    let reports: Vec<(PathBuf, ScenarioCheck)> = results.into_iter().flatten().collect();
    summarize(&reports, started.elapsed());
    if let Some(path) = &args.json {
        // Each report with the file it came from first.
        let mut list = Vec::with_capacity(reports.len());
        for (file, r) in &reports {
            let mut v = serde_json::json!({ "file": file.display().to_string() });
            if let (Some(out), serde_json::Value::Object(fields)) =
                (v.as_object_mut(), serde_json::to_value(r)?)
            {
                out.extend(fields);
            }
            list.push(v);
        }
        let json = serde_json::to_string_pretty(&list)?;
        if path.as_os_str() == "-" {
            println!("{json}");
        } else {
            std::fs::write(path, json + "\n")
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
    }
    let count = |o: CheckOutcome| reports.iter().filter(|(_, r)| r.outcome == o).count();
    Ok(if count(CheckOutcome::Failed) > 0 {
        ExitCode::from(1)
    } else if count(CheckOutcome::UnsupportedOnHost) > 0 {
        ExitCode::from(3)
    } else {
        ExitCode::SUCCESS
    })
}

/// The files named on the command line, then every `.txt` under `--all` (sorted).
fn collect_files(args: &CheckArgs) -> anyhow::Result<Vec<PathBuf>> {
    // Each named file must be a regular file: a FIFO or a folder is a usage error reported
    // before any lab is deployed (the loader refuses them again, without blocking, if one is
    // swapped in later).
    for f in &args.files {
        faultbench_core::fsutil::open_regular(f)?;
    }
    let mut files = args.files.clone();
    if let Some(dir) = &args.all {
        anyhow::ensure!(dir.is_dir(), "--all {}: not a folder", dir.display());
        let mut found = Vec::new();
        walk(dir, &mut found).with_context(|| format!("cannot read {}", dir.display()))?;
        anyhow::ensure!(
            !found.is_empty(),
            "--all {}: no .txt scenario files",
            dir.display()
        );
        found.sort();
        files.extend(found);
    }
    anyhow::ensure!(
        !files.is_empty(),
        "no scenario given: pass scenario files or --all DIR"
    );
    Ok(files)
}

/// Every `.txt` under `dir`, not following symbolic links (a link loop cannot hang the walk).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let found = faultbench_core::fsutil::find_files(dir, |n| {
        Path::new(n).extension().is_some_and(|x| x == "txt")
    })?;
    if let Some((d, e)) = found.unreadable.into_iter().next() {
        return Err(std::io::Error::new(
            e.kind(),
            format!("{}: {e}", d.display()),
        ));
    }
    out.extend(found.files);
    Ok(())
}

/// Loads, resolves and checks one file; problems before the lab exists become failed reports.
async fn check_file(
    emulator: &dyn Emulator,
    resolver: &TopologyResolver,
    file: &Path,
    opts: &CheckOptions,
    shared: Option<&mut Option<SharedLab>>,
) -> ScenarioCheck {
    let failed = |scenario: String, topology: String, reason: String| ScenarioCheck {
        scenario,
        topology,
        outcome: CheckOutcome::Failed,
        stage: faultbench_core::check::Stage::Topology,
        reason,
        false_premise: false,
        lab: None,
        reused_lab: false,
        baseline: None,
        injection: None,
        verification: None,
        times: Default::default(),
    };
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let scenario = match ScenarioFile::load(file) {
        Ok(s) => s,
        Err(e) => return failed(stem, String::new(), format!("cannot read scenario: {e}")),
    };
    let topology = match resolver.resolve(scenario.topology()) {
        Ok(t) => t,
        Err(e) => {
            return failed(
                scenario.id().to_string(),
                scenario.topology().to_string(),
                e.to_string(),
            );
        }
    };
    match shared {
        Some(slot) => check_sharing(emulator, &topology, &scenario, opts, slot).await,
        None => check_scenario(emulator, &topology, &scenario, opts).await,
    }
}

fn print_line(done: usize, total: usize, r: &ScenarioCheck, took: Duration, verbose: bool) {
    let tag = match r.outcome {
        CheckOutcome::Passed => "PASS",
        CheckOutcome::Failed => "FAIL",
        CheckOutcome::UnsupportedOnHost => "UNSUPPORTED",
    };
    let width = total.to_string().len();
    outln!(
        "[{done:>width$}/{total}] {tag:<11} {}  ({}, {:.1} s) {}",
        r.scenario,
        if r.topology.is_empty() {
            "?"
        } else {
            &r.topology
        },
        took.as_secs_f64(),
        first_chars(&r.reason, if verbose { usize::MAX } else { 400 }),
    );
    if verbose && r.outcome != CheckOutcome::Passed {
        if let Some(b) = &r.baseline {
            for f in b.failures() {
                outln!("        baseline: {f}");
            }
        }
        if let Some(v) = &r.verification {
            for c in v.failures() {
                outln!(
                    "        check: {} `{}` => expect {}: {} (stdout: {:?})",
                    c.check.device,
                    c.check.command,
                    c.check.expect,
                    c.reason,
                    first_chars(c.stdout.trim(), 300)
                );
            }
        }
    }
}

fn summarize(reports: &[(PathBuf, ScenarioCheck)], took: Duration) {
    let count = |o: CheckOutcome| reports.iter().filter(|(_, r)| r.outcome == o).count();
    outln!(
        "\n{} passed, {} failed, {} unsupported on this host ({} scenario(s), {:.1} s)",
        count(CheckOutcome::Passed),
        count(CheckOutcome::Failed),
        count(CheckOutcome::UnsupportedOnHost),
        reports.len(),
        took.as_secs_f64()
    );
    for (outcome, title) in [
        (CheckOutcome::UnsupportedOnHost, "unsupported on this host"),
        (CheckOutcome::Failed, "failed"),
    ] {
        let list: Vec<_> = reports
            .iter()
            .filter(|(_, r)| r.outcome == outcome)
            .collect();
        if list.is_empty() {
            continue;
        }
        outln!("{title}:");
        for (file, r) in list {
            outln!("  {} ({}): {}", r.scenario, file.display(), r.reason);
        }
    }
}

fn first_chars(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}
