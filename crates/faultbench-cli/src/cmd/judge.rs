//! `faultbench judge` (not implemented yet).

use std::process::ExitCode;

/// Subcommands of `faultbench judge`.
#[derive(clap::Subcommand)]
pub enum JudgeCmd {
    /// Placeholder.
    Todo,
}

pub async fn run(cmd: JudgeCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        JudgeCmd::Todo => anyhow::bail!("`faultbench judge` is not implemented yet"),
    }
}
