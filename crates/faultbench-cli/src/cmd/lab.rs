//! `faultbench lab`: bring labs up on the netns backend (default) or on Kathará
//! (`--emulator kathara`, see [`kathara`]), run commands in them, check their baseline, tear
//! them down.
//!
//! `lab up` returns once the lab has converged — routing by its protocols' state, then the
//! lab's baseline probes when it has a `baseline.toml` (see [`up`]) — and leaves it running
//! (detached); any later command finds it by instance name. Ctrl-C or SIGTERM during `lab up`
//! tears the half-built lab down before exiting.

use anyhow::{Context, bail};
use faultbench_core::emulator::{EmuError, Lab};
use faultbench_core::lab::{Baseline, TopologyResolver, verify};
use faultbench_emu::netns;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

mod bench;
#[cfg(feature = "kathara")]
mod kathara;
// Built without the Kathará backend (the quickstart's build): every `--emulator kathara` says so.
#[cfg(not(feature = "kathara"))]
#[path = "lab/no_kathara.rs"]
mod kathara;
mod parity;
mod snapshot;
mod up;

pub use up::UpArgs;

/// What `--emulator kathara` answers in a build without the `kathara` feature.
#[cfg(not(feature = "kathara"))]
pub const KATHARA_NOT_BUILT: &str = "this faultbench was built without the Kathará backend \
     (the quickstart's build); rebuild with its default features: \
     `cargo build --release -p faultbench-cli`";

/// The backend a lab command works on.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// Linux namespaces with the host's FRR and services (root).
    #[default]
    Netns,
    /// Kathará (Docker or Kubernetes), configured by `$FAULTBENCH_KATHARA_CONFIG`.
    Kathara,
}

/// Subcommands of `faultbench lab`.
#[derive(clap::Subcommand)]
pub enum LabCmd {
    /// Bring a lab up, wait until it has converged, and leave it running (prints its instance
    /// name).
    Up(UpArgs),
    /// Run a command in a device; exits with the command's exit code.
    Exec(ExecArgs),
    /// Tear labs down.
    Down(DownArgs),
    /// List running labs.
    Ls(LsArgs),
    /// Remove leftovers of killed processes (labs whose owner died, stray device processes).
    Gc(GcArgs),
    /// Run the lab directory's baseline.toml probes against a running lab.
    Verify(VerifyArgs),
    /// Time nothing → converged and teardown for generated labs of 3, 10 and 30 routers.
    Bench(bench::Args),
    /// Take the state snapshot the benchmark takes around each agent; time it; compare two.
    Snapshot(snapshot::Args),
    /// Bring a lab up on two emulators (default netns and kathara) and print every difference
    /// an agent could observe; exit 1 on any.
    Parity(parity::Args),
}

/// `faultbench lab gc`.
#[derive(clap::Args)]
pub struct GcArgs {
    /// The backend whose leftovers are collected.
    #[arg(long, value_enum, default_value_t)]
    pub emulator: Backend,
}

/// `faultbench lab exec`.
#[derive(clap::Args)]
pub struct ExecArgs {
    /// The backend the lab runs on.
    #[arg(long, value_enum, default_value_t)]
    pub emulator: Backend,
    /// Instance name.
    pub name: String,
    /// Device.
    pub device: String,
    /// Kill the command after this many seconds.
    #[arg(long)]
    pub timeout: Option<u64>,
    /// The command and its arguments (after `--`).
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// `faultbench lab down`.
#[derive(clap::Args)]
pub struct DownArgs {
    /// The backend the labs run on.
    #[arg(long, value_enum, default_value_t)]
    pub emulator: Backend,
    /// Instance names.
    pub names: Vec<String>,
    /// Every running lab.
    #[arg(long, conflicts_with = "names")]
    pub all: bool,
}

/// `faultbench lab ls`.
#[derive(clap::Args)]
pub struct LsArgs {
    /// The backend whose labs are listed.
    #[arg(long, value_enum, default_value_t)]
    pub emulator: Backend,
    /// JSON instead of a table.
    #[arg(long)]
    pub json: bool,
}

/// `faultbench lab verify`.
#[derive(clap::Args)]
pub struct VerifyArgs {
    /// The backend the lab runs on.
    #[arg(long, value_enum, default_value_t)]
    pub emulator: Backend,
    /// Instance name.
    pub name: String,
    /// Baseline file (default: `baseline.toml` of the lab directory the instance came from).
    #[arg(long)]
    pub baseline: Option<PathBuf>,
    /// Timeout per probe, in seconds.
    #[arg(long, default_value_t = 20)]
    pub timeout: u64,
}

pub async fn run(cmd: LabCmd) -> anyhow::Result<ExitCode> {
    match cmd {
        LabCmd::Up(a) => up::up(a).await,
        LabCmd::Exec(a) if a.emulator == Backend::Kathara => kathara::exec(&a).await,
        LabCmd::Exec(a) => exec(a).await,
        LabCmd::Down(a) if a.emulator == Backend::Kathara => kathara::down(&a).await,
        LabCmd::Down(a) => down(a).await,
        LabCmd::Ls(a) if a.emulator == Backend::Kathara => kathara::ls(&a).await,
        LabCmd::Ls(a) => ls(a),
        LabCmd::Gc(a) if a.emulator == Backend::Kathara => kathara::gc().await,
        LabCmd::Gc(_) => {
            let r = netns::gc();
            for (name, why) in &r.removed {
                outln!("removed {name}: {why}");
            }
            for m in &r.killed {
                outln!("killed stray device process {m}");
            }
            for s in &r.shim_state {
                outln!("removed emulation state {} ({})", s.folder.display(), s.why);
            }
            if r.removed.is_empty() && r.killed.is_empty() && r.shim_state.is_empty() {
                outln!("nothing to collect");
            }
            Ok(ExitCode::SUCCESS)
        }
        LabCmd::Verify(a) => verify_cmd(a).await,
        LabCmd::Snapshot(a) => snapshot::run(a).await,
        // Dropping the comparison on a signal drops both labs, which tears them down.
        LabCmd::Parity(a) => tokio::select! {
            r = parity::run(a) => r,
            _ = interrupted() => {
                errln!("interrupted: the labs being compared were torn down");
                Ok(ExitCode::from(130))
            }
        },
        // Dropping the bench on a signal drops its lab, which tears it down.
        LabCmd::Bench(a) => tokio::select! {
            r = bench::run(a) => r,
            _ = interrupted() => {
                errln!("interrupted: the lab being measured was torn down");
                Ok(ExitCode::from(130))
            }
        },
    }
}

/// A lab directory or a topology name.
pub fn resolve_lab_dir(target: &str) -> anyhow::Result<PathBuf> {
    let p = Path::new(target);
    // A mock network folder needs no lab.conf: its mock.toml declares the lab.
    if p.join("lab.conf").is_file() || p.join(faultbench_core::lab::MOCK_FILE).is_file() {
        return Ok(p.to_path_buf());
    }
    if p.is_dir() {
        bail!(
            "{} has no lab.conf (a Kathará lab directory needs one; a mock network, a mock.toml)",
            p.display()
        );
    }
    Ok(TopologyResolver::with_default_roots()
        .resolve(target)
        .map_err(|e| anyhow::anyhow!("{e}"))?
        .dir)
}

/// Resolves on SIGINT or SIGTERM.
pub async fn interrupted() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term => {}
    }
}

pub(crate) fn explain(e: EmuError) -> anyhow::Error {
    anyhow::anyhow!("{e}")
}

async fn exec(a: ExecArgs) -> anyhow::Result<ExitCode> {
    let lab = netns::attach_lab(&a.name).map_err(explain)?;
    let status = lab
        .exec_inherit(&a.device, &a.command, a.timeout.map(Duration::from_secs))
        .await
        .map_err(explain)?;
    use std::os::unix::process::ExitStatusExt;
    let code = match (status.code(), status.signal()) {
        (Some(c), _) => c,
        (None, Some(sig)) => 128 + sig,
        _ => 1,
    };
    Ok(ExitCode::from(code.clamp(0, 255) as u8))
}

async fn down(a: DownArgs) -> anyhow::Result<ExitCode> {
    let names: Vec<String> = if a.all {
        netns::list().into_iter().map(|s| s.name).collect()
    } else {
        a.names
    };
    if names.is_empty() {
        bail!("name the labs to tear down (see `faultbench lab ls`), or pass --all");
    }
    tear_down_each(names, |n| std::future::ready(netns::attach_lab(&n))).await
}

/// Tears down each named lab on either engine; a name that does not attach is reported and
/// makes the exit code 1, a teardown that fails stops the command.
pub(crate) async fn tear_down_each<L, F, Fut>(
    names: Vec<String>,
    attach: F,
) -> anyhow::Result<ExitCode>
where
    L: Lab,
    F: Fn(String) -> Fut,
    Fut: std::future::Future<Output = Result<L, EmuError>>,
{
    let mut code = ExitCode::SUCCESS;
    for n in names {
        match attach(n.clone()).await {
            Ok(lab) => {
                let t = Instant::now();
                lab.teardown().await.map_err(explain)?;
                errln!("{n} down in {} ms", t.elapsed().as_millis());
            }
            Err(e) => {
                errln!("{n}: {e}");
                code = ExitCode::from(1);
            }
        }
    }
    Ok(code)
}

fn ls(a: LsArgs) -> anyhow::Result<ExitCode> {
    let labs = netns::list();
    if a.json {
        println!("{}", serde_json::to_string_pretty(&labs)?);
        return Ok(ExitCode::SUCCESS);
    }
    if labs.is_empty() {
        outln!("no lab is running");
        return Ok(ExitCode::SUCCESS);
    }
    outln!(
        "{:<28} {:<10} {:>7}  {:<10} DIRECTORY",
        "NAME",
        "PHASE",
        "DEVICES",
        "OWNER"
    );
    for s in labs {
        let alive = s.inits().filter(|p| p.alive()).count();
        let total = s.inits().count();
        let phase = if alive < total {
            format!("{:?} ({alive}/{total} up)", s.phase).to_lowercase()
        } else {
            format!("{:?}", s.phase).to_lowercase()
        };
        let owner = match s.owner {
            None => "detached".to_string(),
            Some(o) if o.alive() => format!("pid {}", o.pid),
            Some(o) => format!("dead {}", o.pid),
        };
        outln!(
            "{:<28} {:<10} {:>7}  {:<10} {}",
            s.name,
            phase,
            s.devices.len(),
            owner,
            s.dir.display()
        );
    }
    Ok(ExitCode::SUCCESS)
}

async fn verify_cmd(a: VerifyArgs) -> anyhow::Result<ExitCode> {
    let (lab, dir): (Box<dyn Lab>, PathBuf) = match a.emulator {
        Backend::Netns => {
            let lab = netns::attach_lab(&a.name).map_err(explain)?;
            let dir = lab.dir();
            (Box::new(lab), dir)
        }
        Backend::Kathara => kathara::attach_with_dir(&a.name).await?,
    };
    let path = a
        .baseline
        .clone()
        .unwrap_or_else(|| dir.join("baseline.toml"));
    let baseline = Baseline::load(&path).with_context(|| "reading the baseline probes")?;
    let results = verify(lab.as_ref(), &baseline, Duration::from_secs(a.timeout)).await;
    let failed: Vec<_> = results.iter().filter(|r| !r.passed).collect();
    for r in &results {
        let mark = if r.passed { "ok  " } else { "FAIL" };
        outln!(
            "{mark} {:<8} {:<10} {}",
            format!("{:?}", r.probe.kind).to_lowercase(),
            r.probe.device,
            r.probe.name
        );
        if !r.passed {
            outln!(
                "       `{}` expected {}: {}",
                r.probe.command,
                r.probe.expect,
                r.detail
            );
        }
    }
    outln!(
        "{} of {} probes passed ({})",
        results.len() - failed.len(),
        results.len(),
        path.display()
    );
    Ok(if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
