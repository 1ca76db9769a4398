//! `faultbench lab snapshot NAME`: the state snapshot the benchmark takes around each agent
//! (links, addresses, routes, sysctls, services, packet filter, FRR configuration), its cost,
//! and what changes between two of them.

use faultbench_core::emulator::Lab;
use faultbench_core::snapshot::{Aspect, AspectState, Snapshot, SnapshotOptions};
use faultbench_emu::netns;
use std::process::ExitCode;
use std::time::Duration;

/// `faultbench lab snapshot`.
#[derive(clap::Args)]
pub struct Args {
    /// The backend the lab runs on.
    #[arg(long, value_enum, default_value_t)]
    pub emulator: super::Backend,
    /// Instance name.
    pub name: String,
    /// Print the snapshot as JSON.
    #[arg(long)]
    pub json: bool,
    /// Take this many snapshots and print the median time (the cost per run is two).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub rounds: u32,
    /// Take a second snapshot this many seconds later and print what changed (exit 1 when
    /// something did: a quiet network must show nothing).
    #[arg(long, value_name = "SECS")]
    pub compare_after: Option<f64>,
}

pub async fn run(a: Args) -> anyhow::Result<ExitCode> {
    let lab: Box<dyn Lab> = match a.emulator {
        super::Backend::Netns => Box::new(netns::attach_lab(&a.name).map_err(super::explain)?),
        super::Backend::Kathara => super::kathara::attach_with_dir(&a.name).await?.0,
    };
    let lab = lab.as_ref();
    let opts = SnapshotOptions::default();
    let mut times = Vec::new();
    let mut first = None;
    for _ in 0..a.rounds {
        let s = Snapshot::take(lab, &opts).await;
        times.push(s.elapsed);
        first.get_or_insert(s);
    }
    let snap = first.expect("at least one round");
    times.sort();
    let median = times[times.len() / 2];
    if a.json {
        println!("{}", serde_json::to_string_pretty(&snap)?);
    } else {
        let mut counts = vec![0usize; Aspect::ALL.len()];
        for d in snap.devices.values() {
            for (i, aspect) in Aspect::ALL.iter().enumerate() {
                if let Some(AspectState::Items(items)) = d.aspects.get(aspect) {
                    counts[i] += items.len();
                }
            }
        }
        let parts: Vec<String> = Aspect::ALL
            .iter()
            .zip(&counts)
            .filter(|(_, n)| **n > 0)
            .map(|(a, n)| format!("{a} {n}"))
            .collect();
        println!(
            "{} devices; items: {}",
            snap.devices.len(),
            parts.join(", ")
        );
    }
    eprintln!(
        "snapshot of {} devices: median {:.3} s over {} round(s) (min {:.3} s, max {:.3} s)",
        snap.devices.len(),
        median.as_secs_f64(),
        times.len(),
        times[0].as_secs_f64(),
        times[times.len() - 1].as_secs_f64()
    );
    for f in snap.failures() {
        eprintln!("unreadable: {f}");
    }
    let Some(secs) = a.compare_after else {
        return Ok(ExitCode::SUCCESS);
    };
    tokio::time::sleep(Duration::from_secs_f64(secs.clamp(0.0, 3600.0))).await;
    let later = Snapshot::take(lab, &opts).await;
    let changes = snap.diff(&later);
    for c in &changes {
        println!("{}", c.summary);
    }
    eprintln!("{} change(s) after {secs} s", changes.len());
    Ok(if changes.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
