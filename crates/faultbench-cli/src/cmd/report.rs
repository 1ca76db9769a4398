//! `faultbench report RUNS_ROOT|MANIFEST.csv [--dataset DIR] [--out DIR]`.

use faultbench_core::dataset::{Dataset, StatsOptions};
use faultbench_core::report::{Registry, Report};
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `faultbench report`.
#[derive(clap::Args)]
pub struct Args {
    /// A runs root written by `faultbench bench`, or a `MANIFEST.csv` (ours or the release's).
    source: PathBuf,
    /// Dataset folder: adds Table 2 (dataset composition).
    #[arg(long)]
    dataset: Option<PathBuf>,
    /// Where to write report.{md,csv,json,html} and the SVG charts (default: `<RUNS_ROOT>/report`,
    /// or `report/` beside a MANIFEST.csv).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the Markdown tables to standard output too.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    print: bool,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let registry = Registry::load(&args.source)?;
    for w in &registry.warnings {
        eprintln!("warning: {w}");
    }
    let dataset = match &args.dataset {
        Some(d) => {
            let ds = Dataset::scan(d).map_err(|e| anyhow::anyhow!("{}: {e}", d.display()))?;
            Some(ds.stats(&StatsOptions::default()))
        }
        None => None,
    };
    let report = Report::new(&registry, dataset);
    let out = args.out.clone().unwrap_or_else(|| {
        if args.source.is_dir() {
            args.source.join("report")
        } else {
            args.source
                .parent()
                .map(|p| p.join("report"))
                .unwrap_or_else(|| PathBuf::from("report"))
        }
    });
    let html = report
        .write_all(&out)
        .map_err(|e| anyhow::anyhow!("{}: cannot write report: {e}", out.display()))?;
    if args.print {
        println!("{}", report.markdown());
    }
    eprintln!(
        "report written to {} (HTML: {})",
        out.display(),
        html.display()
    );
    Ok(ExitCode::SUCCESS)
}
