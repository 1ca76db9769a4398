//! `faultbench report RUNS_ROOT|MANIFEST.csv [--dataset DIR] [--out DIR]` and
//! `faultbench report --compare A B [C …]`.

use faultbench_core::dataset::{Dataset, StatsOptions};
use faultbench_core::output::OutputDir;
use faultbench_report::compare::{self, Source};
use faultbench_report::sensitivity::axis_totals;
use faultbench_report::stats::Bootstrap;
use faultbench_report::{Report, ReportOptions, RunIndex};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Arguments of `faultbench report`.
#[derive(clap::Args)]
pub struct Args {
    /// A runs root written by `faultbench bench`, or a `MANIFEST.csv` (ours or the release's).
    #[arg(required_unless_present_any = ["compare", "gap"])]
    source: Option<PathBuf>,
    /// Compare two or more runs roots or MANIFEST.csv files side by side: each statistic per
    /// source, and each later source's difference to the first with a paired bootstrap
    /// interval over the scenarios both ran.
    #[arg(long, num_args = 2.., value_name = "SOURCE", conflicts_with = "source")]
    compare: Vec<PathBuf>,
    /// The memorisation gap: Outcome of a hand-written set (first) minus a generated set of
    /// the same fault families (second), per category and per shared fault family, with
    /// unpaired bootstrap intervals (the sets hold different scenarios). Writes
    /// gap.{md,csv,json} (default: `gap/` beside the first source).
    #[arg(long, num_args = 2, value_names = ["HAND", "GENERATED"], conflicts_with_all = ["source", "compare"])]
    gap: Vec<PathBuf>,
    /// Dataset folder: adds Table 2 (dataset composition) and gives weight sensitivity each
    /// scenario's exact axis totals.
    #[arg(long)]
    dataset: Option<PathBuf>,
    /// Where to write report.{md,csv,json,html}, statistics.csv and the SVG charts (default:
    /// `<RUNS_ROOT>/report`, or `report/` beside a MANIFEST.csv); with `--compare`,
    /// compare.{md,csv,json} (default: `compare/` beside the first source).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Bootstrap resamples for the 95% intervals (0 = no intervals; at most 1,000,000).
    #[arg(long, default_value_t = 10_000, value_parser = parse_resamples)]
    resamples: usize,
    /// Seed of the bootstrap's generator (same seed, same intervals).
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Print the Markdown tables to standard output too.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    print: bool,
}

/// `--resamples`: a count up to [`MAX_RESAMPLES`](faultbench_report::stats::MAX_RESAMPLES)
/// (each statistic's replicates are held together to take its percentiles).
fn parse_resamples(s: &str) -> Result<usize, String> {
    let max = faultbench_report::stats::MAX_RESAMPLES;
    match s.trim().parse::<usize>() {
        Ok(n) if n <= max => Ok(n),
        _ => Err(format!("expected a whole number from 0 to {max}")),
    }
}

/// The output folder: `--out` as the user named it, or `name/` inside the runs root (beside a
/// MANIFEST.csv), derived from a root that may come from someone else — opened without following
/// a link there, so a planted `RUNS/report` link is refused.
pub(super) fn out_dir(out: Option<&Path>, source: &Path, name: &str) -> anyhow::Result<OutputDir> {
    let dir = match out {
        Some(o) => OutputDir::open(o, ""),
        None if source.is_dir() => OutputDir::open(source, name),
        None => OutputDir::open(
            source.parent().map(Path::to_path_buf).unwrap_or_default(),
            name,
        ),
    };
    Ok(dir?)
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let boot = Bootstrap {
        resamples: args.resamples,
        seed: args.seed,
    };
    if !args.compare.is_empty() {
        return run_compare(&args, boot);
    }
    if !args.gap.is_empty() {
        return super::report_gap::run(&args.gap, args.out.as_deref(), args.print, boot);
    }
    let source = args
        .source
        .clone()
        .ok_or_else(|| anyhow::anyhow!("give a runs root or MANIFEST.csv, or --compare A B"))?;
    let index = RunIndex::load(&source)?;
    for w in &index.warnings {
        errln!("warning: {w}");
    }
    let (mut opts, notes) = ReportOptions {
        bootstrap: boot,
        ..Default::default()
    }
    .with_records(&source);
    for n in notes.iter().take(20) {
        errln!("warning: record not used: {n}");
    }
    if notes.len() > 20 {
        errln!("warning: … and {} more records not used", notes.len() - 20);
    }
    let dataset = match &args.dataset {
        Some(d) => {
            let ds = Dataset::scan(d).map_err(|e| anyhow::anyhow!("{}: {e}", d.display()))?;
            opts.axis_totals = axis_totals(&ds);
            Some(ds.stats(&StatsOptions::default()))
        }
        None => None,
    };
    let report = Report::with_options(&index, dataset, &opts);
    let dir = out_dir(args.out.as_deref(), &source, "report")?;
    let out = dir.path().to_path_buf();
    let html = report
        .write_into(&dir)
        .map_err(|e| anyhow::anyhow!("cannot write the report: {e}"))?;
    if args.print {
        outln!("{}", report.markdown());
    }
    errln!(
        "report written to {} (HTML: {})",
        out.display(),
        html.display()
    );
    Ok(ExitCode::SUCCESS)
}

fn run_compare(args: &Args, boot: Bootstrap) -> anyhow::Result<ExitCode> {
    let mut sources = Vec::new();
    for (i, path) in args.compare.iter().enumerate() {
        let index = RunIndex::load(path)?;
        for w in &index.warnings {
            errln!("warning: {w}");
        }
        let identity = compare::read_identity(path).unwrap_or_else(|e| {
            errln!("warning: identity not used: {e}");
            None
        });
        let label = char::from(b'A' + (i % 26) as u8).to_string();
        sources.push(Source {
            label,
            index,
            identity,
        });
    }
    let cmp = compare::compare(&sources, boot);
    let dir = out_dir(args.out.as_deref(), &args.compare[0], "compare")?;
    let out = dir.path().to_path_buf();
    let md = cmp.markdown();
    let write = |name: &str, text: &str| -> anyhow::Result<()> {
        dir.write(name, text.as_bytes())?;
        Ok(())
    };
    write("compare.md", &md)?;
    write("compare.csv", &cmp.csv())?;
    write(
        "compare.json",
        &serde_json::to_string_pretty(&cmp).unwrap_or_default(),
    )?;
    if args.print {
        outln!("{md}");
    }
    for n in &cmp.notes {
        errln!("note: {n}");
    }
    errln!("comparison written to {}", out.display());
    Ok(ExitCode::SUCCESS)
}
