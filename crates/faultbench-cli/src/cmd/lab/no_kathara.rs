//! `faultbench lab … --emulator kathara` in a build without the `kathara` feature (the
//! quickstart's, `scripts/quickstart.sh`): each command says how to get the backend instead
//! of compiling the Docker client it needs.

use faultbench_core::emulator::Lab;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// What every Kathará command of this build answers.
fn not_built() -> anyhow::Error {
    anyhow::anyhow!(super::KATHARA_NOT_BUILT)
}

/// `lab up --emulator kathara`.
pub async fn up(_: &Path, _: &Path, _: &super::UpArgs) -> anyhow::Result<ExitCode> {
    Err(not_built())
}

/// `lab exec --emulator kathara`.
pub async fn exec(_: &super::ExecArgs) -> anyhow::Result<ExitCode> {
    Err(not_built())
}

/// `lab down --emulator kathara`.
pub async fn down(_: &super::DownArgs) -> anyhow::Result<ExitCode> {
    Err(not_built())
}

/// `lab ls --emulator kathara`.
pub async fn ls(_: &super::LsArgs) -> anyhow::Result<ExitCode> {
    Err(not_built())
}

/// `lab gc --emulator kathara`.
pub async fn gc() -> anyhow::Result<ExitCode> {
    Err(not_built())
}

/// `lab verify|snapshot --emulator kathara`.
pub async fn attach_with_dir(_: &str) -> anyhow::Result<(Box<dyn Lab>, PathBuf)> {
    Err(not_built())
}
