//! `faultbench doctor`: can this host run netns labs, and what does its kernel lack?
//!
//! Reports root or not, the kernel features labs use (probed by creating each one in a scratch
//! namespace) with how a missing one is emulated, overlayfs, the host programs labs use with
//! the exact `apt-get install` command for the missing ones, and labs left running; then whether
//! the Docker engine real Kathará needs is set up ([`kathara`]). Exit code 0 when the chosen
//! backend (`--emulator`, netns by default) can deploy labs here, 1 when something it needs is
//! missing.

mod kathara;

use faultbench_emu::hostcaps::{Feature, HostCaps};
use faultbench_emu::netns;
use std::process::ExitCode;

/// Arguments of `faultbench doctor`.
#[derive(clap::Args)]
pub struct Args {
    /// Print a JSON report instead of text.
    #[arg(long)]
    pub json: bool,
    /// The backend whose readiness sets the exit code: `netns` (default) or `kathara` (the
    /// Docker engine, images and network plugin real Kathará needs). Both are always reported.
    #[arg(long, value_enum, default_value = "netns")]
    pub emulator: Backend,
}

/// A backend `faultbench doctor` can judge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// Linux namespaces and FRR on this host.
    Netns,
    /// Real Kathará on a Docker engine.
    Kathara,
}

pub async fn run(args: Args) -> anyhow::Result<ExitCode> {
    // SAFETY: geteuid(2) has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let caps = tokio::task::spawn_blocking(HostCaps::probe).await?;
    let reqs = netns::requirements();
    let install = netns::install_command(&reqs);
    let overlay = netns::has_overlayfs();
    let labs = netns::list();
    let mut blockers: Vec<String> = Vec::new();
    if !root {
        blockers.push("not root: the netns backend needs root (run with sudo)".into());
    }
    if !overlay {
        blockers.push("the kernel has no overlayfs (device /etc and /var are overlays)".into());
    }
    for f in [Feature::Veth, Feature::Bridge] {
        if !caps.has(f) {
            blockers.push(format!("the kernel lacks {} ({})", f.name(), f.kconfig()));
        }
    }
    for r in reqs.iter().filter(|r| r.required && !r.present) {
        blockers.push(format!(
            "`{}` is missing (package {})",
            r.program, r.package
        ));
    }
    let netns_ready = blockers.is_empty();
    let engine = kathara::probe().await;
    let ready = match args.emulator {
        Backend::Netns => netns_ready,
        Backend::Kathara => engine.ready,
    };
    // Where the kernel emulations come from, when this kernel needs them (this binary carries
    // them when no `faultbench-netshim` is found beside it).
    let emulations: Option<Result<String, String>> =
        (!faultbench_emu::shims::wrappers_needed(&caps).is_empty()).then(|| {
            faultbench_emu::shims::locate_binary()
                .map(|p| p.display().to_string())
                .map_err(|e| e.to_string())
        });

    if args.json {
        let report = serde_json::json!({
            "root": root,
            "ready": ready,
            "netns_ready": netns_ready,
            "kathara": engine,
            "blockers": blockers,
            "kernel": caps,
            "overlayfs": overlay,
            "programs": reqs,
            "install": install,
            "emulations_binary": emulations.as_ref().map(|r| match r {
                Ok(p) => serde_json::json!({ "path": p }),
                Err(e) => serde_json::json!({ "error": e }),
            }),
            "device_commands": faultbench_emu::netns::device_spawn().to_string(),
            "labs_running": labs.iter().map(|l| &l.name).collect::<Vec<_>>(),
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(if ready {
            ExitCode::SUCCESS
        } else {
            ExitCode::from(1)
        });
    }

    println!("faultbench doctor");
    println!(
        "  user:      {}",
        if root {
            "root"
        } else {
            "not root (labs need root)"
        }
    );
    println!(
        "  kernel:    {} (features {})",
        caps.kernel_release,
        match caps.source {
            faultbench_emu::hostcaps::ProbeSource::Trial =>
                "probed by creating each in a scratch namespace",
            faultbench_emu::hostcaps::ProbeSource::KernelConfig =>
                "read from the kernel build configuration",
            _ => "unknown",
        }
    );
    println!("  overlayfs: {}", if overlay { "yes" } else { "NO" });
    println!("  kernel features used by labs and faults:");
    for f in Feature::ALL {
        if caps.has(f) {
            println!("    {:<22} present", f.name());
        } else {
            println!(
                "    {:<22} MISSING - {}",
                f.name(),
                f.emulation().describe()
            );
        }
    }
    for n in &caps.notes {
        println!("    note: {n}");
    }
    match &emulations {
        None => {}
        Some(Ok(p)) => println!("  emulations: installed into labs from {p}"),
        Some(Err(e)) => println!(
            "  emulations: NOT AVAILABLE ({e}); labs using the missing features are refused"
        ),
    }
    // A fork of this (large) process per command costs CPU on every bring-up and run.
    println!(
        "  device commands: {}",
        faultbench_emu::netns::device_spawn()
    );
    println!("  programs:");
    for r in &reqs {
        println!(
            "    {:<18} {:<20} {:<8} {}",
            r.program,
            r.package,
            if r.present {
                "ok"
            } else if r.required {
                "MISSING"
            } else {
                "missing"
            },
            r.used_for
        );
    }
    match &install {
        Some(cmd) => println!("  install the missing programs with:\n    {cmd}"),
        None => println!("  every program labs use is installed"),
    }
    if !labs.is_empty() {
        println!(
            "  labs running: {} (`faultbench lab ls`)",
            labs.iter()
                .map(|l| l.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    kathara::print(&engine);
    if netns_ready {
        println!("netns backend: ready");
    } else {
        println!("netns backend: NOT ready");
        for b in &blockers {
            println!("  - {b}");
        }
    }
    if engine.ready {
        println!("Kathará engine: ready");
    } else {
        println!(
            "Kathará engine: NOT ready (set it all up with `{}`)",
            kathara::SETUP
        );
    }
    Ok(if ready {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
