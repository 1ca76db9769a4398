//! `faultbench stats` (not implemented yet).

use std::process::ExitCode;

/// Arguments of `faultbench stats`.
#[derive(clap::Args)]
pub struct Args {
    /// Arguments (not yet defined).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _ = args.rest;
    anyhow::bail!("`faultbench stats` is not implemented yet")
}
