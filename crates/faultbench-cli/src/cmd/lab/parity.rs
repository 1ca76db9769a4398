//! `faultbench lab parity LAB`: bring LAB up on two emulators and print every difference an
//! agent could observe between them (see [`faultbench_emu::parity`]). Exit 0 when there is
//! none, 1 when there is any (or a side could not be read), 2 when a lab did not come up.

use super::resolve_lab_dir;
use anyhow::Context;
use faultbench_core::emulator::{LabRequest, LinkModel};
use faultbench_emu::parity::{self, ParityOptions};
use faultbench_emu::registry::{EmulatorOptions, builtin_emulators};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// `faultbench lab parity`.
#[derive(clap::Args)]
pub struct Args {
    /// A Kathará lab directory, or a topology name under `topologies/`.
    pub target: String,
    /// The two emulators to compare, by name (`netns`, `kathara`; the same name twice compares
    /// two instances of one backend).
    #[arg(long, num_args = 2, value_names = ["A", "B"], default_values = ["netns", "kathara"])]
    pub engines: Vec<String>,
    /// Link model of the netns side(s) (Kathará's is always `switch`).
    #[arg(long, value_name = "MODEL", default_value_t = LinkModel::Switch)]
    pub link_model: LinkModel,
    /// How long differences may take to go away (routing still settling), in seconds.
    #[arg(long, default_value_t = 20)]
    pub settle: u64,
    /// Kathará configuration file (TOML); default: Kathará's defaults.
    #[arg(long, value_name = "FILE")]
    pub kathara_config: Option<PathBuf>,
    /// Also write the report as JSON to FILE (`-` for stdout).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

pub async fn run(a: Args) -> anyhow::Result<ExitCode> {
    let dir = resolve_lab_dir(&a.target)?;
    let registry = builtin_emulators();
    let opts = EmulatorOptions {
        kathara_config: a.kathara_config.clone(),
        link_model: a.link_model,
    };
    let build = |name: &str| {
        registry
            .build(name, &opts)
            .with_context(|| format!("emulator `{name}`"))
    };
    let (ea, eb) = (build(&a.engines[0])?, build(&a.engines[1])?);
    let popts = ParityOptions {
        settle: Duration::from_secs(a.settle),
        ..ParityOptions::default()
    };
    errln!(
        "bringing {} up on {} and {} …",
        dir.display(),
        ea.name(),
        eb.name()
    );
    let report = match parity::run(ea, eb, &LabRequest::new(&dir), &popts).await {
        Ok(r) => r,
        Err(e) => {
            errln!("error: {e}");
            return Ok(ExitCode::from(2));
        }
    };
    if let Some(path) = &a.json {
        let text = serde_json::to_string_pretty(&report)?;
        if path.as_os_str() == "-" {
            outln!("{text}");
        } else {
            std::fs::write(path, format!("{text}\n"))
                .with_context(|| format!("writing {}", path.display()))?;
        }
    }
    for d in &report.differences {
        outln!("{}", d.line(&report.a, &report.b));
    }
    for n in &report.not_compared {
        errln!("not compared: {n}");
    }
    errln!(
        "{} difference(s) between {} and {} over {} device(s) ({} comparison round(s))",
        report.differences.len(),
        report.a,
        report.b,
        report.devices,
        report.rounds
    );
    Ok(if report.differences.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
