//! `faultbench validate` (not implemented yet).

use std::process::ExitCode;

/// Arguments of `faultbench validate`.
#[derive(clap::Args)]
pub struct Args {
    /// Arguments (not yet defined).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    rest: Vec<String>,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    let _ = args.rest;
    anyhow::bail!("`faultbench validate` is not implemented yet")
}
