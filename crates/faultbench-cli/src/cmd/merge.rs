//! `faultbench merge ROOT... --into ROOT`: gathers runs roots of one configuration (the shards
//! of `bench --shard K/N`, or roots run on several machines) into one, refusing roots whose
//! configurations differ or that hold one run with different results
//! ([`faultbench_bench::merge`]).

use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `faultbench merge`.
#[derive(clap::Args)]
pub struct Args {
    /// The runs roots to gather.
    #[arg(required = true)]
    roots: Vec<PathBuf>,
    /// The root to gather them into (created if needed; runs it already holds stay).
    #[arg(long)]
    into: PathBuf,
}

pub async fn run(a: Args) -> anyhow::Result<ExitCode> {
    let r = faultbench_bench::merge(&a.roots, &a.into)?;
    outln!(
        "merged {} root(s) into {}: {} run(s) copied, {} already there; MANIFEST.csv lists {} run(s)",
        a.roots.len(),
        a.into.display(),
        r.copied,
        r.already_there,
        r.runs
    );
    if !r.shards.is_empty() {
        outln!(
            "shards: {}",
            r.shards.iter().cloned().collect::<Vec<_>>().join(", ")
        );
    }
    if r.missing_shard_count > 0 {
        let more = r.missing_shard_count.saturating_sub(r.missing_shards.len());
        let more = if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        };
        errln!(
            "warning: shard(s) {}{more} of the split are not among these roots: {} is incomplete until they are merged into it too",
            r.missing_shards.join(", "),
            a.into.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}
