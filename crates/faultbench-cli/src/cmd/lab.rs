//! `faultbench lab` (not implemented yet).

use std::process::ExitCode;

/// Subcommands of `faultbench lab`.
#[derive(clap::Subcommand)]
pub enum LabCmd {
    /// Placeholder.
    Todo,
}

pub async fn run(cmd: LabCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        LabCmd::Todo => anyhow::bail!("`faultbench lab` is not implemented yet"),
    }
}
