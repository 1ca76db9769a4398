//! `faultbench scenario` (not implemented yet).

use std::process::ExitCode;

/// Subcommands of `faultbench scenario`.
#[derive(clap::Subcommand)]
pub enum ScenarioCmd {
    /// Placeholder.
    Todo,
}

pub async fn run(cmd: ScenarioCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        ScenarioCmd::Todo => anyhow::bail!("`faultbench scenario` is not implemented yet"),
    }
}
