//! `faultbench list --scope SCOPE [--topology T] [--dataset DIR] [--out manifest.csv]`.

use faultbench_core::Scenario;
use faultbench_core::dataset::{Dataset, Scope};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `faultbench list`.
#[derive(clap::Args)]
pub struct Args {
    /// `all` (the core scenarios: base then cex), or one layer: base, cex, novice, naive,
    /// novice_confident, naive_unsure, naive_no_detail.
    #[arg(long, default_value = "all")]
    scope: Scope,
    /// Only this topology (`Topology:` header such as `Kath2`, or a folder such as `kath2_Q`).
    #[arg(long)]
    topology: Option<String>,
    /// The dataset folder.
    #[arg(long, default_value = "dataset")]
    dataset: PathBuf,
    /// Write a manifest CSV (a `scenario` column) instead of printing ids.
    #[arg(long)]
    out: Option<PathBuf>,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let ds = Dataset::scan(&args.dataset).map_err(|e| {
        anyhow::anyhow!(
            "{}: cannot read dataset: {e} (pass --dataset DIR)",
            args.dataset.display()
        )
    })?;
    let errors: Vec<_> = ds.errors().collect();
    for e in &errors {
        errln!("warning: skipped unreadable scenario: {e}");
    }
    let ids: Vec<&str> = ds
        .select(args.scope, args.topology.as_deref())
        .into_iter()
        .map(|s| s.id())
        .collect();
    match &args.out {
        None => {
            let mut out = std::io::stdout().lock();
            for id in &ids {
                writeln!(out, "{id}")?;
            }
        }
        Some(path) => {
            let mut text = String::from("scenario\n");
            let scope = match args.scope {
                Scope::All => "all".to_string(),
                Scope::Layer(l) => l.to_string(),
            };
            text.push_str(&format!(
                "# {} scenario(s), scope {scope}{} — regenerate: faultbench list --scope {scope}{} --dataset {} --out {}\n",
                ids.len(),
                args.topology.as_deref().map(|t| format!(", topology {t}")).unwrap_or_default(),
                args.topology.as_deref().map(|t| format!(" --topology {t}")).unwrap_or_default(),
                args.dataset.display(),
                path.display()
            ));
            // Rows through the csv crate like every CSV we write (ids are validated and never
            // need quoting, but one writer keeps it that way).
            let mut w = csv::WriterBuilder::new()
                .terminator(csv::Terminator::Any(b'\n'))
                .from_writer(Vec::new());
            for id in &ids {
                w.write_record([id.to_string()])?;
            }
            text.push_str(&String::from_utf8(w.into_inner()?)?);
            std::fs::write(path, text)
                .map_err(|e| anyhow::anyhow!("{}: cannot write manifest: {e}", path.display()))?;
            errln!("wrote {} scenario id(s) to {}", ids.len(), path.display());
        }
    }
    if ids.is_empty() {
        errln!("no scenario matches (scope and topology filter)");
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}
