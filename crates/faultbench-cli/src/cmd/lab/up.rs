//! `faultbench lab up`: bring a lab up and return once it has converged.
//!
//! Converged means: the routing protocols' state says so (see `faultbench_emu::netns::ready`),
//! and, for a lab with a `baseline.toml`, its probes hold — the same wait the benchmark pipeline
//! runs before it injects anything (`faultbench_core::check::wait_for_baseline`), so `lab up`
//! followed by `lab verify` does not fail on a healthy lab. Both waits share one cap,
//! `--ready-timeout`; past it `lab up` prints every item that has not converged (device, daemon,
//! interface or neighbour, state), leaves the lab running for inspection and exits 1.
//! `--no-wait` returns right after the startup files ran (as `kathara lstart` does), printing the
//! protocols' state at that moment.
//!
//! Honest about the startups: a startup command that failed, an address a device's files give it
//! that it does not have, an enabled daemon that is not running (see
//! `faultbench_emu::netns::StartupProblem`) is listed at the end with the device, the file and
//! the line, and the exit code is 1 — the lab is left running either way;
//! `--accept-startup-errors` exits 0 with the same list. Routes that never settle (readiness
//! saw them swing back to earlier states again and again: the lab's own routing flaps) are
//! listed with their device and prefixes and count as such a problem too: `lab up` does not
//! call that routing converged.

use super::{explain, interrupted, resolve_lab_dir};
use anyhow::Context;
use faultbench_core::check::wait_for_baseline;
use faultbench_core::emulator::{Lab, LabRequest, LinkModel};
use faultbench_core::lab::Baseline;
use faultbench_emu::netns::fast_timers::fast_timers_copy;
use faultbench_emu::netns::{NetnsEmulator, NetnsLab, ProblemKind, ProtocolItem, StartupProblem};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Pause between two rounds of baseline probes.
const BASELINE_INTERVAL: Duration = Duration::from_millis(200);
/// Timeout of one baseline probe (as the pipeline's).
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// `faultbench lab up`.
#[derive(clap::Args)]
pub struct UpArgs {
    /// The backend: netns, or Kathará (`$FAULTBENCH_KATHARA_CONFIG` configures it; "converged"
    /// there means the startups ran and the baseline probes hold).
    #[arg(long, value_enum, default_value_t)]
    pub emulator: super::Backend,
    /// A Kathará lab directory, or a topology name under `topologies/` (e.g. `Kath2`).
    pub target: String,
    /// Instance name (default: `<lab>-<4 hex digits>`).
    #[arg(long)]
    pub name: Option<String>,
    /// Longest wait, in seconds, for routing to converge and the baseline probes to hold;
    /// past it, what has not converged is printed and the exit code is 1.
    #[arg(long, alias = "settle-cap", default_value_t = 120)]
    pub ready_timeout: u64,
    /// Return once the startup files ran, without waiting for convergence (prints what has not
    /// converged yet; exit code 0).
    #[arg(long)]
    pub no_wait: bool,
    /// Deploy a temporary copy of the lab with fast OSPF, RIP and BGP timers (a deviation,
    /// printed and recorded in the lab's state; the lab's own files are not changed).
    #[arg(long)]
    pub fast_timers: bool,
    /// How collision domains are wired: `switch` (default, Kathará's: a bridge per domain, so
    /// a device setting its interface down leaves the far end's carrier up) or `veth` (two-member
    /// domains as veth pairs, where the far end loses carrier too).
    #[arg(long, value_name = "MODEL", default_value_t = LinkModel::Switch)]
    pub link_model: LinkModel,
    /// Exit 0 even when startup commands failed, addresses the files give were not applied or
    /// enabled daemons are not running (they are still listed).
    #[arg(long)]
    pub accept_startup_errors: bool,
}

pub async fn up(a: UpArgs) -> anyhow::Result<ExitCode> {
    let dir = resolve_lab_dir(&a.target)?;
    let copy = if a.fast_timers {
        let c = fast_timers_copy(&dir)
            .with_context(|| format!("making a fast-timers copy of {}", dir.display()))?;
        errln!(
            "--fast-timers: deploying a copy of {} that deviates from it:",
            dir.display()
        );
        for d in &c.deviations {
            errln!("  {d}");
        }
        if c.deviations.is_empty() {
            errln!("  (nothing: no FRR configuration with OSPF, RIP or BGP found)");
        }
        Some(c)
    } else {
        None
    };
    let deploy_dir = copy.as_ref().map_or(dir.clone(), |c| c.dir().to_path_buf());
    if a.emulator == super::Backend::Kathara {
        if a.link_model != LinkModel::Switch {
            anyhow::bail!(
                "--link-model {} is a netns option: every Kathará collision domain is a switch (drop the flag or use --emulator netns)",
                a.link_model
            );
        }
        // Kathará stages its own copy, so the fast-timers folder may go when this returns.
        return super::kathara::up(&deploy_dir, &dir, &a).await;
    }
    let mut req = LabRequest::new(&deploy_dir);
    if let Some(n) = &a.name {
        req = req.named(n);
    }
    let cap = Duration::from_secs(if a.no_wait { 0 } else { a.ready_timeout });
    let emu = NetnsEmulator::new()
        .settle_cap(cap)
        .link_model(a.link_model);
    let started = Instant::now();
    // Dropping the deploy future (on a signal) drops its guard, which tears the lab down.
    let lab: NetnsLab = tokio::select! {
        r = emu.deploy_lab(&req) => r.map_err(explain)?,
        _ = interrupted() => {
            errln!("interrupted: the partly deployed lab was torn down");
            return Ok(ExitCode::from(130));
        }
    };
    lab.detach().map_err(explain)?;
    if let Some(c) = copy {
        lab.record_deviations(&dir, c.deviations.clone())
            .map_err(explain)?;
    }
    for w in lab.warnings() {
        errln!("warning: {w}");
    }
    let r = lab.readiness().clone();
    let head = format!(
        "{} up from {} in {:.2} s ({} devices",
        lab.name(),
        dir.display(),
        started.elapsed().as_secs_f64(),
        lab.devices().len()
    );
    for u in &r.unable {
        errln!("  not waited for (cannot come up): {u}");
    }
    for w in &r.waived {
        errln!(
            "  accepted after {} ms without a route change: {w}",
            r.waited_ms
        );
    }
    let problems = lab.startup_problems();
    if a.no_wait {
        errln!(
            "{head}; not waiting: {} items not converged yet)",
            r.pending.len()
        );
        for p in &r.pending {
            errln!("  not converged: {p}");
        }
        return Ok(finish(&lab, problems, a.accept_startup_errors));
    }
    // Not converged for want of time (items still pending), whether or not some routes flap
    // besides; routes that flap with everything else converged are reported below.
    if !r.converged && (r.flapping.is_empty() || !r.pending.is_empty()) {
        errln!(
            "{head}), but routing had not converged after the {} s ready timeout; still not converged:",
            a.ready_timeout
        );
        for p in &r.pending {
            errln!("  {p}");
        }
        list_flapping(&r.flapping);
        list_problems(problems);
        return Ok(left_running(&lab));
    }
    let path = dir.join("baseline.toml");
    let mut held = String::new();
    if path.is_file() {
        let baseline = Baseline::load(&path).with_context(|| "reading the baseline probes")?;
        let t = Instant::now();
        let remaining = cap.saturating_sub(started.elapsed());
        let report = tokio::select! {
            r = wait_for_baseline(&lab, &baseline, remaining, BASELINE_INTERVAL, PROBE_TIMEOUT) => r,
            _ = interrupted() => {
                errln!("interrupted while waiting for the baseline: {} is left running", lab.name());
                return Ok(ExitCode::from(130));
            }
        };
        if !report.passed() {
            errln!(
                "{head}; routing converged after {} ms), but its baseline probes did not all hold within the {} s ready timeout ({} rounds):",
                r.waited_ms,
                a.ready_timeout,
                report.attempts
            );
            for f in report.failures() {
                errln!("  {f}");
            }
            list_flapping(&r.flapping);
            list_problems(problems);
            return Ok(left_running(&lab));
        }
        held = format!(
            "; {} baseline probes held after {} ms more",
            report.results.len(),
            t.elapsed().as_millis()
        );
    }
    if !r.flapping.is_empty() {
        errln!(
            "{head}; routing settled after {} ms{held}, except for routes that never settle)",
            r.waited_ms
        );
        list_flapping(&r.flapping);
        if a.accept_startup_errors {
            return Ok(finish(&lab, problems, true));
        }
        list_problems(problems);
        errln!("  (--accept-startup-errors accepts them and exits 0)");
        return Ok(left_running(&lab));
    }
    errln!("{head}; routing converged after {} ms{held})", r.waited_ms);
    Ok(finish(&lab, problems, a.accept_startup_errors))
}

/// Prints the routes that never settle, if any: the lab's own routing keeps changing them.
fn list_flapping(flapping: &[ProtocolItem]) {
    if flapping.is_empty() {
        return;
    }
    errln!(
        "routes that never settle ({} devices): the lab's own routing keeps changing them",
        flapping.len()
    );
    for f in flapping {
        errln!("  {f}");
    }
}

/// Prints what the startups left undone and what the lab's files get wrong, if anything.
fn list_problems(problems: &[StartupProblem]) {
    let (own, undone): (Vec<&StartupProblem>, Vec<&StartupProblem>) = problems
        .iter()
        .partition(|p| p.kind == ProblemKind::DuplicateAddress);
    if !undone.is_empty() {
        errln!(
            "startup problems ({}): the devices do not run as their files say",
            undone.len()
        );
        for p in undone {
            errln!("  {p}");
        }
    }
    if !own.is_empty() {
        errln!(
            "lab configuration problems ({}): the devices run as their files say, and that cannot work",
            own.len()
        );
        for p in own {
            errln!("  {p}");
        }
    }
}

/// The end of a lab up that reached its goal: the name on stdout; exit 1 when the startups
/// left something undone, unless accepted.
fn finish(lab: &NetnsLab, problems: &[StartupProblem], accept: bool) -> ExitCode {
    list_problems(problems);
    if problems.is_empty() || accept {
        outln!("{}", lab.name());
        return ExitCode::SUCCESS;
    }
    errln!("  (--accept-startup-errors accepts them and exits 0)");
    left_running(lab)
}

/// A lab that did not converge stays up for inspection; the exit code says it failed.
fn left_running(lab: &NetnsLab) -> ExitCode {
    errln!(
        "  (left running for inspection; `faultbench lab down {}` removes it)",
        lab.name()
    );
    outln!("{}", lab.name());
    ExitCode::from(1)
}
