//! `faultbench lab … --emulator kathara`: the lab commands on a Kathará engine.
//!
//! The emulator is built as `faultbench bench --emulator kathara` builds it
//! (`$FAULTBENCH_KATHARA_CONFIG`, else the defaults). `lab up` deploys, waits for the lab's
//! baseline probes, then *detaches* the instance: it stays staged under the Kathará work folder
//! with no owning process, so any later `lab exec/verify/snapshot/down` — from any process using
//! the same work folder — attaches to it by name. Kathará has no per-protocol readiness report
//! of the kind the netns backend gives, so "converged" here means "the startups ran and the
//! baseline holds".

use super::{explain, interrupted};
use anyhow::Context;
use faultbench_core::check::wait_for_baseline;
use faultbench_core::emulator::{Command, Lab, LabRequest};
use faultbench_core::lab::Baseline;
use faultbench_emu::kathara::{
    KatharaEmulator, KatharaLab, Owner, SETTINGS_RECORD_FILE, SettingsRecord,
};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Pause between two rounds of baseline probes.
const BASELINE_INTERVAL: Duration = Duration::from_millis(500);
/// Timeout of one baseline probe (as the pipeline's).
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);
/// Bound on `lab exec` without `--timeout`.
const EXEC_DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);

/// The Kathará emulator of `faultbench bench --emulator kathara`.
pub fn emulator() -> anyhow::Result<KatharaEmulator> {
    KatharaEmulator::from_env().map_err(explain)
}

/// A running instance, by name.
pub async fn attach(name: &str) -> anyhow::Result<KatharaLab> {
    emulator()?.attach(name).await.map_err(explain)
}

/// A running instance, by name, with the folder of its files as deployed (the staged copy).
pub async fn attach_with_dir(name: &str) -> anyhow::Result<(Box<dyn Lab>, PathBuf)> {
    let lab = attach(name).await?;
    let dir = lab.staged_dir().to_path_buf();
    Ok((Box::new(lab), dir))
}

/// `lab up --emulator kathara`.
pub async fn up(
    deploy_dir: &Path,
    shown_dir: &Path,
    a: &super::UpArgs,
) -> anyhow::Result<ExitCode> {
    let emu = emulator()?;
    let mut req = LabRequest::new(deploy_dir);
    if let Some(n) = &a.name {
        req = req.named(n);
    }
    let started = Instant::now();
    let lab = tokio::select! {
        r = emu.deploy_lab(&req) => r.map_err(explain)?,
        _ = interrupted() => {
            errln!("interrupted: the partly deployed lab was torn down");
            return Ok(ExitCode::from(130));
        }
    };
    lab.detach().map_err(explain)?;
    if let Ok(text) = std::fs::read_to_string(lab.staged_dir().join(SETTINGS_RECORD_FILE))
        && let Ok(rec) = serde_json::from_str::<SettingsRecord>(&text)
    {
        errln!("{}", rec.summary());
    }
    let head = format!(
        "{} up on Kathará from {} in {:.2} s ({} devices",
        lab.name(),
        shown_dir.display(),
        started.elapsed().as_secs_f64(),
        lab.devices().len()
    );
    let path = shown_dir.join("baseline.toml");
    if a.no_wait || !path.is_file() {
        errln!("{head}; startups done)");
        outln!("{}", lab.name());
        return Ok(ExitCode::SUCCESS);
    }
    let baseline = Baseline::load(&path).with_context(|| "reading the baseline probes")?;
    let cap = Duration::from_secs(a.ready_timeout).saturating_sub(started.elapsed());
    let t = Instant::now();
    let report = tokio::select! {
        r = wait_for_baseline(&lab, &baseline, cap, BASELINE_INTERVAL, PROBE_TIMEOUT) => r,
        _ = interrupted() => {
            errln!("interrupted while waiting for the baseline: {} is left running", lab.name());
            return Ok(ExitCode::from(130));
        }
    };
    outln!("{}", lab.name());
    if report.passed() {
        errln!(
            "{head}; {} baseline probes held after {} ms more)",
            report.results.len(),
            t.elapsed().as_millis()
        );
        return Ok(ExitCode::SUCCESS);
    }
    errln!(
        "{head}), but its baseline probes did not all hold within the {} s ready timeout ({} rounds):",
        a.ready_timeout,
        report.attempts
    );
    for f in report.failures() {
        errln!("  {f}");
    }
    errln!(
        "  (left running for inspection; `faultbench lab down --emulator kathara {}` removes it)",
        lab.name()
    );
    Ok(ExitCode::from(1))
}

/// `lab exec --emulator kathara`: stdout and stderr printed as they came back, the command's
/// exit code as ours (128 + 9 when it was killed at its timeout). No terminal is attached.
pub async fn exec(a: &super::ExecArgs) -> anyhow::Result<ExitCode> {
    let lab = attach(&a.name).await?;
    let timeout = a.timeout.map_or(EXEC_DEFAULT_TIMEOUT, Duration::from_secs);
    let out = lab
        .exec(&a.device, &Command::Argv(a.command.clone()), timeout)
        .await
        .map_err(explain)?;
    use std::io::Write;
    let _ = std::io::stdout().write_all(out.stdout.as_bytes());
    let _ = std::io::stderr().write_all(out.stderr.as_bytes());
    if out.truncated {
        errln!("(output cut at the lab's cap)");
    }
    if out.timed_out {
        errln!("(killed after {} s)", timeout.as_secs());
        return Ok(ExitCode::from(137));
    }
    Ok(ExitCode::from(
        out.exit_code.unwrap_or(1).clamp(0, 255) as u8
    ))
}

/// `lab down --emulator kathara`.
pub async fn down(a: &super::DownArgs) -> anyhow::Result<ExitCode> {
    let emu = emulator()?;
    let names: Vec<String> = if a.all {
        emu.instances().into_iter().map(|i| i.name).collect()
    } else {
        a.names.clone()
    };
    if names.is_empty() {
        anyhow::bail!(
            "name the labs to tear down (see `faultbench lab ls --emulator kathara`), or pass --all"
        );
    }
    let emu = &emu;
    super::tear_down_each(names, |n| async move { emu.attach(&n).await }).await
}

/// `lab ls --emulator kathara`: the staged instances, with their running containers when the
/// devices are on this host's engine.
pub async fn ls(a: &super::LsArgs) -> anyhow::Result<ExitCode> {
    let emu = emulator()?;
    let mut rows = Vec::new();
    for i in emu.instances() {
        let lab = emu.attach(&i.name).await.ok();
        let devices = lab.as_ref().map_or(0, |l| l.devices().len());
        let running = match lab.as_ref().and_then(|l| l.engine().map(|e| (l, e))) {
            Some((l, e)) => e
                .lab_containers(&l.hash())
                .await
                .ok()
                .map(|cs| cs.iter().filter(|c| c.state == "running").count()),
            None => None,
        };
        rows.push((i, devices, running));
    }
    if a.json {
        let v: Vec<serde_json::Value> = rows
            .iter()
            .map(|(i, devices, running)| {
                serde_json::json!({
                    "name": i.name, "dir": i.dir, "source": i.source, "owner": i.owner,
                    "owner_alive": i.owner_alive, "devices": devices, "running": running,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        outln!(
            "no Kathará lab is staged under {}",
            emu.config().work_dir().display()
        );
        return Ok(ExitCode::SUCCESS);
    }
    outln!("{:<28} {:>9}  {:<10} SOURCE", "NAME", "RUNNING", "OWNER");
    for (i, devices, running) in rows {
        let run = running.map_or_else(|| format!("?/{devices}"), |r| format!("{r}/{devices}"));
        let owner = match (i.owner, i.owner_alive) {
            (Some(Owner::Detached), _) => "detached".to_string(),
            (Some(Owner::Pid(p)), true) => format!("pid {p}"),
            (Some(Owner::Pid(p)), false) => format!("dead {p}"),
            (None, _) => "unknown".to_string(),
        };
        let source = i
            .source
            .as_ref()
            .map_or_else(|| "?".to_string(), |s| s.display().to_string());
        outln!("{:<28} {:>9}  {:<10} {source}", i.name, run, owner);
    }
    Ok(ExitCode::SUCCESS)
}

/// `lab gc --emulator kathara`: instances whose owning process died are cleaned.
pub async fn gc() -> anyhow::Result<ExitCode> {
    let cleaned = emulator()?.gc().await.map_err(explain)?;
    for n in &cleaned {
        outln!("cleaned {n} (its owner died)");
    }
    if cleaned.is_empty() {
        outln!("nothing to collect");
    }
    Ok(ExitCode::SUCCESS)
}
