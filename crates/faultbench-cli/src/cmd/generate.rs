//! `faultbench generate`: seeded fault variants of a lab, each verified live before it is
//! written (see the `faultbench_gen` crate and docs/generate.md).
//!
//! Output: `<out>/<folder>/gen/<id>.txt` for every verified variant (`<folder>` is the
//! dataset folder of the topology, e.g. `kath2_Q`), the journal
//! `<out>/<folder>/gen/.journal-<K>-of-<N>.jsonl`, and `<out>/GENERATED.csv` rebuilt from every
//! journal under `<out>`. Exit codes: 0 all verified, 1 some failed, 2 usage, 130 interrupted.

use anyhow::Context;
use faultbench_core::emulator::Emulator;
use faultbench_core::fsutil::write_atomic;
use faultbench_core::lab::{Baseline, Topology, TopologyResolver, dataset_folder_for_topology};
use faultbench_core::phases::PhaseOptions;
use faultbench_core::pipeline::TrackingEmulator;
use faultbench_gen::generate::{GenOptions, plan};
use faultbench_gen::journal::{self, JournalEntry};
use faultbench_gen::model::LabModel;
use faultbench_gen::render::Variant;
use faultbench_gen::ticket::PlainTickets;
use faultbench_gen::{baseline, family, verify};
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Arguments of `faultbench generate`.
#[derive(clap::Args, Clone)]
pub struct Args {
    /// A topology name (e.g. Kath2, simple_bgp), or `all` for the benchmark's eight, one after
    /// the other (with --paper-shape: the E1/E2-shaped dataset).
    #[arg(long, conflicts_with = "lab", required_unless_present = "lab")]
    pub topology: Option<String>,
    /// A Kathará lab directory (read only; never changed).
    #[arg(long, value_name = "DIR")]
    pub lab: Option<PathBuf>,
    /// Seed of the sample.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Number of variants to select (all candidates when absent).
    #[arg(long)]
    pub count: Option<usize>,
    /// Only these families (comma-separated ids).
    #[arg(long, value_delimiter = ',')]
    pub families: Vec<String>,
    /// A folder of extra family files (`*.toml`), added to the built-in ones.
    #[arg(long, value_name = "DIR")]
    pub family_dir: Option<PathBuf>,
    /// Output folder.
    #[arg(long, default_value = "generated")]
    pub out: PathBuf,
    /// List candidates per family and exit (no lab is deployed).
    #[arg(long)]
    pub dry_run: bool,
    /// With --dry-run: also print the lab model (devices, roles, addresses, routing, services,
    /// gaps) as JSON.
    #[arg(long, requires = "dry_run")]
    pub show_model: bool,
    /// This run's shard, `K/N` (1-based).
    #[arg(long, default_value = "1/1", value_parser = parse_shard)]
    pub shard: (usize, usize),
    /// Labs verified at the same time.
    #[arg(long, short = 'j', default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=32))]
    pub jobs: u16,
    /// Seconds the post-injection checks may take to hold.
    #[arg(long, default_value_t = 30)]
    pub verify_timeout: u64,
    /// Seconds a fresh lab may take to pass its baseline.
    #[arg(long, default_value_t = 60)]
    pub baseline_timeout: u64,
    /// The split: `dev` and `test` use disjoint seed ranges; `test` prints and records a
    /// commitment (`<out>/TEST-COMMITMENT-<topology>.commitment`). See docs/tickets.md.
    #[arg(long, value_parser = ["dev", "test"])]
    pub split: Option<String>,
    /// Also write the wrong-device (`-misdirected`) and wrong-cause (`-misdescribed`) twin of
    /// every verified variant, from its measured symptoms, under `cex/`.
    #[arg(long)]
    pub misleading: bool,
    /// Write this many false-premise tickets (each claim checked false on a healthy lab) with
    /// their five persona rewrites.
    #[arg(long, value_name = "N")]
    pub false_premise: Option<usize>,
    /// The paper's per-topology shape: 10 correct-fault variants (unless --count), 3
    /// wrong-device and 3 wrong-cause twins of them, 9 false premises with 5 personas each.
    #[arg(long)]
    pub paper_shape: bool,
    /// Write scenarios of N faults (2 or 3) injected together instead of single faults:
    /// --count of them (default 10), masking pairs among them, conflicting combinations
    /// refused by rule, each verified on a fresh lab, under `<out>/<folder>/multi/`.
    /// See docs/multi-fault.md.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u8).range(2..=3),
          conflicts_with_all = ["misleading", "false_premise", "paper_shape"])]
    pub multi_fault: Option<u8>,
    /// Reword every written ticket with this chat model (e.g. `gpt-5`, or a model of
    /// --llm-config), keeping a paraphrase only when its identifiers and problem words match the
    /// original; every attempt is recorded in `<folder>/gen/paraphrases.jsonl`. Off by default:
    /// generation stays deterministic and model-free. See docs/tickets.md.
    #[arg(long, value_name = "MODEL")]
    pub paraphrase_model: Option<String>,
    /// LLM configuration file (providers, models) for --paraphrase-model.
    #[arg(long, requires = "paraphrase_model")]
    pub llm_config: Option<PathBuf>,
}

fn parse_shard(s: &str) -> Result<(usize, usize), String> {
    let (k, n) = s.split_once('/').ok_or("write K/N, e.g. 1/4")?;
    let (k, n): (usize, usize) = (
        k.parse().map_err(|_| "K is not a number")?,
        n.parse().map_err(|_| "N is not a number")?,
    );
    if n == 0 || k == 0 || k > n {
        return Err(format!("shard {k}/{n}: need 1 <= K <= N"));
    }
    Ok((k, n))
}

fn emulator() -> anyhow::Result<Arc<dyn Emulator>> {
    faultbench_emu::netns::preflight().context(
        "the netns emulator cannot run here (it needs root and the lab packages; see `faultbench doctor`)",
    )?;
    Ok(Arc::new(faultbench_emu::netns::NetnsEmulator::new()))
}

/// The lab to generate for: its name and folder.
fn resolve(args: &Args) -> anyhow::Result<Topology> {
    if let Some(dir) = &args.lab {
        anyhow::ensure!(dir.is_dir(), "--lab {}: not a folder", dir.display());
        let lab = faultbench_core::lab::LabDir::load(dir)?;
        let id = lab.name();
        return Ok(Topology {
            id,
            dir: dir.clone(),
        });
    }
    let name = args.topology.as_deref().unwrap_or_default();
    Ok(TopologyResolver::with_default_roots().resolve(name)?)
}

/// `kath2_Q` for the shipped topologies, `<name>_Q` (lowercase) for any other lab.
fn folder_of(topology: &str) -> String {
    dataset_folder_for_topology(topology)
        .map(str::to_string)
        .unwrap_or_else(|| format!("{}_Q", topology.to_lowercase()))
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.topology.as_deref() != Some("all") {
        return run_one(args).await;
    }
    let mut worst = ExitCode::SUCCESS;
    for t in faultbench_core::lab::BENCHMARK_TOPOLOGIES {
        outln!("== {t}");
        let code = match Box::pin(run_one(Args {
            topology: Some(t.into()),
            ..args.clone()
        }))
        .await
        {
            Ok(c) => c,
            // One topology that cannot run (a kernel feature missing) does not stop the rest.
            Err(e) => {
                errln!("{t}: {e:#}");
                ExitCode::from(1)
            }
        };
        if code == ExitCode::from(130) {
            return Ok(code);
        }
        if code != ExitCode::SUCCESS {
            worst = code;
        }
    }
    Ok(worst)
}

async fn run_one(mut args: Args) -> anyhow::Result<ExitCode> {
    if args.paper_shape {
        args.count = args.count.or(Some(10));
        args.misleading = true;
        args.false_premise = args.false_premise.or(Some(9));
    }
    let topology = resolve(&args)?;
    let mut model = LabModel::load(&topology.dir, &topology.id)?;
    let mut families = family::builtin()?;
    if let Some(dir) = &args.family_dir {
        families.extend(family::load_dir(dir)?);
    }
    let mut ids: Vec<&str> = families.iter().map(|f| f.family.id.as_str()).collect();
    ids.sort_unstable();
    if let Some(w) = ids.windows(2).find(|w| w[0] == w[1]) {
        anyhow::bail!("two family files use the id `{}`; ids must be unique", w[0]);
    }
    let folder = folder_of(&topology.id);
    let prefix = folder.trim_end_matches("_Q").to_lowercase();
    let seed = faultbench_gen::split::seed_in(args.split.as_deref(), args.seed)?;
    let opts = GenOptions {
        seed,
        count: args.count,
        families: args.families.clone(),
        shard: args.shard,
        id_prefix: prefix,
    };
    for g in model.open_gaps() {
        errln!("model: {}: {} (read: {})", g.device, g.what, g.read);
    }
    anyhow::ensure!(
        args.multi_fault.is_none() || args.shard == (1, 1),
        "--multi-fault does not take --shard; run it once per topology"
    );
    if args.dry_run {
        if let Some(n) = args.multi_fault {
            let m = multi_plan(&model, &families, &opts, n.into(), args.count)?;
            super::gen_multi::print_plan(&m, n.into());
            return Ok(ExitCode::SUCCESS);
        }
        if args.show_model {
            outln!("{}", serde_json::to_string_pretty(&model)?);
        }
        let p = plan(&model, &families, &opts, &PlainTickets)?;
        print_plan(&p, &topology.id);
        if model.open_gaps().next().is_some() {
            outln!(
                "note: the model has gaps (above); a real run completes them on the live lab, which may add candidates"
            );
        }
        outln!(
            "note: a real run also pings every host pair on the healthy lab and keeps no candidate that relies on a pair the lab does not connect (a policy, NAT), so it may select fewer"
        );
        return Ok(ExitCode::SUCCESS);
    }

    let emulator = Arc::new(TrackingEmulator::new(emulator()?));
    let phases = verify::phase_options(
        Duration::from_secs(args.baseline_timeout),
        Duration::from_secs(args.verify_timeout),
    );
    // Connect before any lab is deployed: a wrong model name fails here, not after verifying.
    let chat = args
        .paraphrase_model
        .as_deref()
        .map(|m| super::gen_paraphrase::connect(m, args.llm_config.as_deref()))
        .transpose()?;
    let devices: std::collections::BTreeSet<String> = model
        .devices
        .iter()
        .map(|d| d.name.to_lowercase())
        .collect();
    let paraphrase = |chat: Option<Arc<dyn faultbench_llm::ChatModel>>| {
        let folder = args.out.join(&folder);
        let label = args.paraphrase_model.clone().unwrap_or_default();
        let devices = devices.clone();
        async move {
            if let Some(chat) = chat {
                super::gen_paraphrase::run(&folder, chat, &label, &devices).await?;
            }
            anyhow::Ok(())
        }
    };
    let gen_dir = args.out.join(&folder).join("gen");
    std::fs::create_dir_all(&gen_dir)
        .with_context(|| format!("cannot create {}", gen_dir.display()))?;
    let baseline = match topology.baseline() {
        Ok(b) => b,
        Err(_) if !topology.baseline_path().exists() => {
            let b = observe_baseline(emulator.as_ref(), &topology, &model, &phases).await?;
            let path = gen_dir.join("baseline.generated.toml");
            let text = baseline::to_toml(
                &b,
                &format!(
                    "Healthy baseline of {} observed by faultbench generate (the lab ships no baseline.toml).\nOnly probes that held on a fresh healthy lab are kept.",
                    topology.id
                ),
            );
            write_atomic(&path, text.as_bytes())?;
            errln!(
                "{} has no baseline.toml: wrote {} ({} probes that hold on the healthy lab); verification uses it",
                topology.id,
                path.display(),
                b.probes.len()
            );
            b
        }
        Err(e) => return Err(e.into()),
    };
    complete_model(emulator.as_ref(), &topology, &baseline, &mut model, &phases).await?;
    if args.split.as_deref() == Some("test") {
        let mut texts: Vec<(String, String)> = family::BUILTIN
            .iter()
            .map(|(n, t)| (n.to_string(), t.to_string()))
            .collect();
        if let Some(dir) = &args.family_dir {
            let found = faultbench_core::fsutil::find_files(dir, |n| n.ends_with(".toml"))?;
            for f in &found.files {
                let t = faultbench_core::fsutil::read_regular_string_capped(f, 1 << 20)
                    .with_context(|| format!("cannot read {}", f.display()))?;
                texts.push((f.display().to_string(), t));
            }
        }
        let (hash, body) =
            faultbench_gen::split::commitment(seed, &topology.id, args.count, &texts);
        std::fs::create_dir_all(&args.out)?;
        let path = args
            .out
            .join(format!("TEST-COMMITMENT-{}.commitment", topology.id));
        write_atomic(&path, format!("{body}sha256 {hash}\n").as_bytes())?;
        outln!(
            "test split commitment: sha256 {hash} (recorded in {})",
            path.display()
        );
    }
    if let Some(n) = args.multi_fault {
        let m = multi_plan(&model, &families, &opts, n.into(), args.count)?;
        super::gen_multi::print_plan(&m, n.into());
        let code = super::gen_multi::verify_and_write(
            emulator,
            &topology,
            &baseline,
            &m,
            n.into(),
            &phases,
            args.jobs,
            seed,
            &args.out.join(&folder).join("multi"),
        )
        .await?;
        rebuild_index(&args.out)?;
        if code == ExitCode::SUCCESS {
            paraphrase(chat).await?;
        }
        return Ok(code);
    }
    let mut p = plan(&model, &families, &opts, &PlainTickets)?;
    print_plan(&p, &topology.id);

    let (k, n) = args.shard;
    let journal_path = gen_dir.join(format!(".journal-{k}-of-{n}.jsonl"));
    let done = journal::read(&journal_path);
    let todo: Vec<Variant> = p
        .variants
        .iter()
        .filter(|v| !done.contains_key(&v.id))
        .cloned()
        .collect();
    errln!(
        "verifying {} variant(s) of shard {k}/{n} ({} already in the journal) with {} lab(s) at a time",
        todo.len(),
        p.variants.len() - todo.len(),
        args.jobs
    );
    let interrupted = verify_all(
        emulator.clone(),
        &topology,
        &baseline,
        todo,
        &phases,
        &args,
        &gen_dir,
        &journal_path,
        0,
    )
    .await?;
    let interrupted = interrupted
        || super::gen_topup::top_up(
            super::gen_topup::Sample {
                model: &model,
                families: &families,
                opts: &opts,
                emulator: emulator.clone(),
                topology: &topology,
                baseline: &baseline,
                phases: &phases,
                args: &args,
                gen_dir: &gen_dir,
                journal_path: &journal_path,
            },
            &mut p,
        )
        .await?;
    let entries = rebuild_index(&args.out)?;
    let mine: Vec<&JournalEntry> = {
        let ids: std::collections::BTreeSet<&str> =
            p.variants.iter().map(|v| v.id.as_str()).collect();
        entries
            .iter()
            .filter(|e| ids.contains(e.id.as_str()))
            .collect()
    };
    summarize(&mine);
    let mut written = super::gen_tickets::write_fault_tickets(
        &p.variants,
        &mine,
        &model,
        &gen_dir,
        args.misleading,
        args.paper_shape.then_some(3),
    )?;
    if let Some(n) = args.false_premise.filter(|n| *n > 0 && !interrupted) {
        written.extend(
            super::gen_tickets::write_false_premises(
                emulator.as_ref(),
                &topology,
                &baseline,
                &model,
                &phases,
                seed,
                n,
                &opts.id_prefix,
                &gen_dir,
            )
            .await?,
        );
    }
    super::gen_tickets::print_variety(&written, &model);
    if !interrupted {
        paraphrase(chat).await?;
    }
    if interrupted {
        errln!("run the same command again to resume (the journal keeps what is done)");
        return Ok(ExitCode::from(130));
    }
    let failed = mine.iter().any(|e| e.verdict != "verified");
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_plan(p: &faultbench_gen::generate::GenerationPlan, topology: &str) {
    outln!("{topology}: candidates per family");
    outln!(
        "  {:<28} {:<15} {:>10} {:>8} {:>9}",
        "family",
        "layer",
        "candidates",
        "targets",
        "selected"
    );
    for f in &p.families {
        outln!(
            "  {:<28} {:<15} {:>10} {:>8} {:>9}{}",
            f.family,
            f.layer,
            f.candidates,
            f.targets,
            f.selected,
            f.empty_because
                .as_ref()
                .map(|w| format!("  matches nothing: {w}"))
                .unwrap_or_default()
        );
        for r in f.rejected.iter().take(3) {
            outln!("      rejected: {r}");
        }
    }
    outln!(
        "  total: {} candidate(s), {} selected, {} in this shard",
        p.families.iter().map(|f| f.candidates).sum::<usize>(),
        p.selected_total,
        p.variants.len()
    );
}

/// Deploys the lab once, proposes probes from the model and keeps those that hold.
async fn observe_baseline(
    emulator: &dyn Emulator,
    topology: &Topology,
    model: &LabModel,
    phases: &PhaseOptions,
) -> anyhow::Result<Baseline> {
    let d = faultbench_core::phases::deploy(emulator, topology, None).await;
    let lab = d.lab?;
    let candidates = baseline::candidate_probes(model);
    let r = faultbench_core::phases::wait_for_healthy(lab.as_ref(), &candidates, phases).await;
    let _ = lab.teardown().await;
    let kept = baseline::keep_passing(&r.results);
    anyhow::ensure!(
        !kept.probes.is_empty(),
        "{}: no baseline probe holds on the healthy lab ({} proposed); write a baseline.toml",
        topology.dir.display(),
        candidates.probes.len()
    );
    Ok(kept)
}

/// Fills the model's gaps and measures which host pairs the healthy lab connects, on one
/// freshly deployed lab whose baseline holds.
async fn complete_model(
    emulator: &dyn Emulator,
    topology: &Topology,
    baseline: &Baseline,
    model: &mut LabModel,
    phases: &PhaseOptions,
) -> anyhow::Result<()> {
    let d = faultbench_core::phases::deploy(emulator, topology, None).await;
    let lab = d.lab?;
    let healthy = faultbench_core::phases::wait_for_healthy(lab.as_ref(), baseline, phases).await;
    if !healthy.passed() {
        let _ = lab.teardown().await;
        anyhow::bail!(
            "{}: the healthy baseline does not hold on a fresh lab: {}",
            topology.id,
            healthy.failures().join("; ")
        );
    }
    let n = model.complete_live(lab.as_ref()).await;
    let unreachable = model.calibrate_reach(lab.as_ref()).await;
    let _ = lab.teardown().await;
    if n > 0 {
        errln!("model: completed {n} gap(s) from the live lab");
    }
    errln!(
        "model: {unreachable} host pair(s) do not connect on the healthy lab; no variant relies on them{}",
        if unreachable == 0 {
            String::new()
        } else {
            let some: Vec<String> = model
                .unreachable
                .iter()
                .take(4)
                .map(|(h, ip)| format!("{h} -> {ip}"))
                .collect();
            format!(" (e.g. {})", some.join(", "))
        }
    );
    for g in model.open_gaps() {
        errln!("model: still unknown: {}: {}", g.device, g.what);
    }
    Ok(())
}

/// The seeded multi-fault combinations drawn from every single candidate of the lab (the
/// sample size is the number of combinations, 10 by default).
fn multi_plan(
    model: &LabModel,
    families: &[family::Family],
    opts: &GenOptions,
    faults: usize,
    count: Option<usize>,
) -> anyhow::Result<faultbench_gen::multi::MultiPlan> {
    let singles = plan(
        model,
        families,
        &GenOptions {
            count: None,
            ..opts.clone()
        },
        &PlainTickets,
    )?;
    Ok(super::gen_multi::plan(
        &singles.variants,
        model,
        faults,
        count.unwrap_or(10),
        opts.seed,
        &opts.id_prefix,
    ))
}

/// Waits for verification tasks to end; on an interrupt it first tears down every lab while
/// the tasks still hold them, then stops the tasks.
pub(super) async fn stop_tasks<T: 'static>(
    emulator: &TrackingEmulator,
    tasks: &mut tokio::task::JoinSet<T>,
    interrupted: bool,
) {
    if interrupted {
        let (n, errors) = emulator.teardown_all().await;
        tasks.abort_all();
        errln!("interrupted: tore down {n} running lab(s)");
        for e in errors {
            errln!("teardown: {e}");
        }
    }
    while tasks.join_next().await.is_some() {}
}

#[allow(clippy::too_many_arguments)]
pub(super) async fn verify_all(
    emulator: Arc<TrackingEmulator>,
    topology: &Topology,
    baseline: &Baseline,
    todo: Vec<Variant>,
    phases: &PhaseOptions,
    args: &Args,
    gen_dir: &Path,
    journal_path: &Path,
    draw: u32,
) -> anyhow::Result<bool> {
    let total = todo.len();
    let queue = Arc::new(std::sync::Mutex::new(
        todo.into_iter().collect::<VecDeque<_>>(),
    ));
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..args.jobs {
        let (emulator, topology, baseline, phases, queue, tx) = (
            emulator.clone(),
            topology.clone(),
            baseline.clone(),
            phases.clone(),
            queue.clone(),
            tx.clone(),
        );
        tasks.spawn(async move {
            let mut slot = None;
            loop {
                let next = queue.lock().unwrap_or_else(|p| p.into_inner()).pop_front();
                let Some(v) = next else { break };
                let r = verify::verify_variant(
                    emulator.as_ref(),
                    &topology,
                    &baseline,
                    &v,
                    &phases,
                    &mut slot,
                )
                .await;
                if tx.send((v, r)).is_err() {
                    break;
                }
            }
            if let Some(k) = slot {
                k.release().await;
            }
        });
    }
    drop(tx);
    let _second = super::signals::second_signal_exits();
    let stop = super::lab::interrupted();
    tokio::pin!(stop);
    let started = Instant::now();
    let mut done = 0;
    let interrupted = loop {
        tokio::select! {
            next = rx.recv() => {
                let Some((v, r)) = next else { break false };
                done += 1;
                if r.passed {
                    let path = gen_dir.join(format!("{}.txt", v.id));
                    write_atomic(&path, v.text.as_bytes())
                        .with_context(|| format!("cannot write {}", path.display()))?;
                }
                let seed = faultbench_gen::split::seed_in(args.split.as_deref(), args.seed).unwrap_or(args.seed);
                let mut e = r.entry(&v, seed, &topology.id);
                e.draw = draw;
                journal::append(journal_path, &e)
                    .with_context(|| format!("cannot append to {}", journal_path.display()))?;
                outln!(
                    "[{done}/{total}] {:<8} {}  ({:.1} s{}) {}",
                    if r.passed { "VERIFIED" } else { "FAILED" },
                    v.id,
                    r.seconds,
                    if r.reused { ", reused lab" } else { "" },
                    first_chars(&r.reason, 300)
                );
            }
            () = &mut stop => break true,
        }
    };
    stop_tasks(&emulator, &mut tasks, interrupted).await;
    errln!(
        "verification wall time {:.1} s",
        started.elapsed().as_secs_f64()
    );
    Ok(interrupted)
}

/// Rebuilds `<out>/GENERATED.csv` from every journal under `out`.
fn rebuild_index(out: &Path) -> anyhow::Result<Vec<JournalEntry>> {
    let found = faultbench_core::fsutil::find_files(out, |n| {
        n.starts_with(".journal-") && n.ends_with(".jsonl")
    })?;
    let mut all: BTreeMap<String, JournalEntry> = BTreeMap::new();
    for f in &found.files {
        all.extend(journal::read(f));
    }
    let entries: Vec<JournalEntry> = all.into_values().collect();
    write_atomic(
        &out.join("GENERATED.csv"),
        journal::index_csv(&entries).as_bytes(),
    )?;
    Ok(entries)
}

fn summarize(entries: &[&JournalEntry]) {
    let verified = entries.iter().filter(|e| e.verdict == "verified").count();
    let mut secs: Vec<f64> = entries.iter().map(|e| e.seconds).collect();
    secs.sort_by(f64::total_cmp);
    let median = secs.get(secs.len() / 2).copied().unwrap_or(0.0);
    outln!(
        "\n{verified} verified, {} failed of {} (median {:.1} s per variant)",
        entries.len() - verified,
        entries.len(),
        median
    );
    let mut by: BTreeMap<(String, String), usize> = BTreeMap::new();
    let mut fam: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for e in entries {
        let f = fam.entry(e.family.clone()).or_default();
        f.1 += 1;
        if e.verdict == "verified" {
            f.0 += 1;
        } else {
            *by.entry((
                e.family.clone(),
                format!("{}: {}", e.stage, first_chars(&e.reason, 90)),
            ))
            .or_default() += 1;
        }
    }
    outln!("per family (verified/total):");
    for (f, (v, t)) in &fam {
        outln!("  {f:<28} {v}/{t}");
    }
    if !by.is_empty() {
        outln!("failures by family and reason:");
        for ((f, why), n) in &by {
            outln!("  {f:<28} {n:>4}  {why}");
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
