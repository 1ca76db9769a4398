//! Bring-up benchmark of the topologies on the netns backend (root): for each topology, N times
//! in a row, deploy → wait until every `baseline.toml` probe holds → tear down, and report the
//! median "up + converged + verified" time, the device count and the memory the running lab
//! uses (resident memory of all its processes, and the drop in the host's `MemAvailable`).
//!
//! ```text
//! cargo bench --bench topology_bringup -- [--runs N] [TOPOLOGY ...]   # default: all, N = 5
//! ```
//!
//! Under `cargo test --all-targets` (no `--bench` flag) it only checks its arguments and exits.

use faultbench::core::check::wait_for_baseline;
use faultbench::core::emulator::{Lab, LabRequest};
use faultbench::core::lab::{Topology, TopologyResolver};
use faultbench::emu::netns::{NetnsEmulator, NetnsLab};
use std::path::PathBuf;
use std::time::{Duration, Instant};

struct Run {
    healthy: Duration,
    deploy: Duration,
    teardown: Duration,
    rss_kib: u64,
    avail_drop_kib: i64,
    processes: usize,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let bench = args.iter().any(|a| a == "--bench");
    let mut runs = 5usize;
    let mut wanted: Vec<String> = Vec::new();
    let mut it = args.iter().filter(|a| *a != "--bench");
    while let Some(a) = it.next() {
        match a.as_str() {
            "--runs" => {
                runs = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n > 0)
                    .expect("--runs needs a positive number");
            }
            s if s.starts_with('-') => {} // libtest flags passed by cargo
            s => wanted.push(s.to_string()),
        }
    }
    if !bench {
        return;
    }
    let resolver =
        TopologyResolver::new([PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("topologies")]);
    let topologies: Vec<Topology> = if wanted.is_empty() {
        resolver.list()
    } else {
        wanted
            .iter()
            .map(|w| resolver.resolve(w).unwrap_or_else(|e| panic!("{e}")))
            .collect()
    };
    faultbench::emu::netns::preflight()
        .unwrap_or_else(|e| panic!("needs root and the lab packages: {e}"));
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    println!(
        "| topology | devices | up + converged + verified, median of {runs} (min–max) | deploy median | teardown median | RSS of the lab | MemAvailable drop | processes |"
    );
    println!("|---|---:|---|---:|---:|---:|---:|---:|");
    for t in topologies {
        let devices = t.lab().map(|l| l.conf.devices.len()).unwrap_or(0);
        let baseline = t.baseline().unwrap_or_else(|e| panic!("{e}"));
        let mut results = Vec::new();
        for i in 0..runs {
            match rt.block_on(one_run(&t, &baseline, i)) {
                Ok(r) => results.push(r),
                Err(e) => eprintln!("{} run {}: {e}", t.id, i + 1),
            }
        }
        if results.is_empty() {
            println!("| {} | {devices} | failed | | | | | |", t.id);
            continue;
        }
        let med = |f: &dyn Fn(&Run) -> Duration| {
            let mut v: Vec<Duration> = results.iter().map(f).collect();
            v.sort();
            (v[v.len() / 2], v[0], v[v.len() - 1])
        };
        let (h, hmin, hmax) = med(&|r| r.healthy);
        let (d, _, _) = med(&|r| r.deploy);
        let (td, _, _) = med(&|r| r.teardown);
        let mut rss: Vec<u64> = results.iter().map(|r| r.rss_kib).collect();
        rss.sort();
        let mut avail: Vec<i64> = results.iter().map(|r| r.avail_drop_kib).collect();
        avail.sort();
        let procs = results[results.len() / 2].processes;
        println!(
            "| {} | {devices} | {:.2} s ({:.2}–{:.2}){} | {:.2} s | {:.2} s | {} MiB | {} MiB | {procs} |",
            t.id,
            h.as_secs_f64(),
            hmin.as_secs_f64(),
            hmax.as_secs_f64(),
            if results.len() < runs {
                format!(", {} of {runs} runs healthy", results.len())
            } else {
                String::new()
            },
            d.as_secs_f64(),
            td.as_secs_f64(),
            rss[rss.len() / 2] / 1024,
            avail[avail.len() / 2] / 1024,
        );
    }
}

async fn one_run(
    t: &Topology,
    baseline: &faultbench::core::lab::Baseline,
    i: usize,
) -> Result<Run, String> {
    let avail_before = mem_available_kib();
    let emu = NetnsEmulator::new();
    let name = format!("bench-{}-{}", t.id.to_lowercase().replace('_', "-"), i);
    let start = Instant::now();
    let lab: NetnsLab = emu
        .deploy_lab(&LabRequest::new(&t.dir).named(name))
        .await
        .map_err(|e| format!("deploy: {e}"))?;
    let deploy = start.elapsed();
    let report = wait_for_baseline(
        &lab,
        baseline,
        Duration::from_secs(120),
        Duration::from_millis(200),
        Duration::from_secs(10),
    )
    .await;
    let healthy = start.elapsed();
    let (rss_kib, processes) = lab_memory(&lab);
    let avail_drop_kib = avail_before as i64 - mem_available_kib() as i64;
    let t0 = Instant::now();
    lab.teardown().await.map_err(|e| format!("teardown: {e}"))?;
    let teardown = t0.elapsed();
    if !report.passed() {
        return Err(format!(
            "baseline did not hold: {}",
            report.failures().join("; ")
        ));
    }
    Ok(Run {
        healthy,
        deploy,
        teardown,
        rss_kib,
        avail_drop_kib,
        processes,
    })
}

/// Resident memory (KiB) and number of all processes in the lab's devices: every host process
/// whose PID namespace is one of the devices'.
fn lab_memory(lab: &NetnsLab) -> (u64, usize) {
    let ns_of = |pid: i32| std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok();
    let device_ns: Vec<PathBuf> = lab
        .devices()
        .iter()
        .filter_map(|d| lab.device_pid(d))
        .filter_map(ns_of)
        .collect();
    let mut rss = 0;
    let mut n = 0;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<i32>().ok())
        else {
            continue;
        };
        if !ns_of(pid).is_some_and(|ns| device_ns.contains(&ns)) {
            continue;
        }
        n += 1;
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        rss += status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0);
    }
    (rss, n)
}

fn mem_available_kib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemAvailable:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}
