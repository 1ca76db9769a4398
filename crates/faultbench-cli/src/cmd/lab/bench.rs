//! `faultbench lab bench`: time nothing → converged and teardown on generated labs.
//!
//! For each size (default 3, 10 and 30 routers in an OSPF ring, plus the 8-device reference lab
//! of `reference/netns/lab.sh`), deploy the lab, check that a host reaches the far side, and
//! tear it down, `--runs` times; print the median and range of each phase.

use faultbench_core::emulator::{Command, Lab, LabRequest};
use faultbench_emu::netns::{NetnsEmulator, labgen};
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Arguments of `faultbench lab bench`.
#[derive(clap::Args)]
pub struct Args {
    /// Ring sizes (routers).
    #[arg(long, value_delimiter = ',', default_values_t = vec![3usize, 10, 30])]
    pub sizes: Vec<usize>,
    /// Runs per size.
    #[arg(long, default_value_t = 5)]
    pub runs: usize,
    /// Skip the 8-device reference lab.
    #[arg(long)]
    pub no_reference: bool,
    /// Print JSON lines instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Exec latency samples (`true` in a device vs on the host), 0 to skip.
    #[arg(long, default_value_t = 200)]
    pub exec_samples: usize,
    /// Only write the generated lab directories under this folder (`reference/`, `ring-N/`)
    /// and exit, e.g. to inspect them or bring them up with `faultbench lab up`.
    #[arg(long)]
    pub write_to: Option<std::path::PathBuf>,
}

/// A lab directory removed when dropped: a new private folder (`tempfile`, 0700, random name),
/// never a predictable path that another local user could have planted first (issue 30).
struct ScratchDir(tempfile::TempDir);

impl ScratchDir {
    fn new() -> std::io::Result<ScratchDir> {
        tempfile::Builder::new()
            .prefix("faultbench-bench-")
            .tempdir()
            .map(ScratchDir)
    }
    fn path(&self) -> &std::path::Path {
        self.0.path()
    }
}

struct Sample {
    up: Duration,
    reach: Duration,
    down: Duration,
}

fn stats(v: &mut [Duration]) -> (f64, f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    (ms(v[v.len() / 2]), ms(v[0]), ms(v[v.len() - 1]))
}

async fn one(kind: &str, n: usize) -> anyhow::Result<Sample> {
    let dir = ScratchDir::new()?;
    let target = if kind == "ring" {
        labgen::ospf_ring(n, dir.path())?
    } else {
        labgen::triangle(dir.path())?
    };
    let t0 = Instant::now();
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let up = t0.elapsed();
    // Converged means the far host answers; poll in case readiness was optimistic.
    let ping = Command::shell(format!("ping -c1 -W0.3 {}", target.to));
    loop {
        let o = lab
            .exec(&target.from, &ping, Duration::from_secs(2))
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        if o.success() {
            break;
        }
        if t0.elapsed() > Duration::from_secs(120) {
            anyhow::bail!("{} never reached {}", target.from, target.to);
        }
    }
    let reach = t0.elapsed();
    let t1 = Instant::now();
    lab.teardown().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    Ok(Sample {
        up,
        reach,
        down: t1.elapsed(),
    })
}

/// Median and 95th percentile of `exec true` in a device, and of spawning `true` on the host.
async fn exec_overhead(samples: usize) -> anyhow::Result<(f64, f64, f64, f64)> {
    let dir = ScratchDir::new()?;
    std::fs::write(dir.path().join("lab.conf"), "a[0]=L\nb[0]=L\n")?;
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()))
        .await
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let cmd = Command::argv(["true"]);
    let mut dev = Vec::new();
    let mut host = Vec::new();
    for _ in 0..samples {
        let t = Instant::now();
        let o = lab
            .exec("a", &cmd, Duration::from_secs(5))
            .await
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        dev.push(t.elapsed());
        anyhow::ensure!(o.success(), "`true` failed in the device: {o:?}");
        let t = Instant::now();
        tokio::process::Command::new("true").status().await?;
        host.push(t.elapsed());
    }
    lab.teardown().await.map_err(|e| anyhow::anyhow!("{e}"))?;
    let p = |v: &mut Vec<Duration>, q: f64| {
        v.sort();
        v[((v.len() - 1) as f64 * q) as usize].as_secs_f64() * 1000.0
    };
    Ok((
        p(&mut dev, 0.5),
        p(&mut dev, 0.95),
        p(&mut host, 0.5),
        p(&mut host, 0.95),
    ))
}

pub async fn run(a: Args) -> anyhow::Result<ExitCode> {
    if let Some(root) = &a.write_to {
        labgen::triangle(&root.join("reference"))?;
        for &n in &a.sizes {
            labgen::ospf_ring(n, &root.join(format!("ring-{n}")))?;
        }
        println!("wrote {}", root.display());
        return Ok(ExitCode::SUCCESS);
    }
    faultbench_emu::netns::preflight().map_err(|e| anyhow::anyhow!("{e}"))?;
    let mut cases: Vec<(String, &str, usize)> = Vec::new();
    if !a.no_reference {
        cases.push(("reference 8-device lab (3 routers)".into(), "triangle", 3));
    }
    for &n in &a.sizes {
        cases.push((format!("OSPF ring, {n} routers"), "ring", n));
    }
    if a.exec_samples > 0 {
        let (d50, d95, h50, h95) = exec_overhead(a.exec_samples).await?;
        if a.json {
            println!(
                "{}",
                serde_json::json!({"exec_true_ms": {"device_p50": d50, "device_p95": d95, "host_p50": h50, "host_p95": h95, "overhead_p50": d50 - h50, "samples": a.exec_samples}})
            );
        } else {
            println!(
                "exec `true`: device p50 {d50:.2} ms / p95 {d95:.2} ms; host p50 {h50:.2} ms / p95 {h95:.2} ms; overhead p50 {:.2} ms ({} samples)",
                d50 - h50,
                a.exec_samples
            );
        }
    }
    if !a.json {
        println!(
            "{:<36} {:>5} {:>22} {:>22} {:>22}",
            "lab", "runs", "up+settled ms (range)", "first ping ms", "teardown ms"
        );
    }
    for (label, kind, n) in cases {
        let mut s = Vec::new();
        for _ in 0..a.runs.max(1) {
            s.push(one(kind, n).await?);
        }
        let (mut up, mut reach, mut down): (Vec<_>, Vec<_>, Vec<_>) = (
            s.iter().map(|x| x.up).collect(),
            s.iter().map(|x| x.reach).collect(),
            s.iter().map(|x| x.down).collect(),
        );
        let (u, r, d) = (stats(&mut up), stats(&mut reach), stats(&mut down));
        if a.json {
            println!(
                "{}",
                serde_json::json!({"lab": label, "routers": n, "runs": s.len(),
                    "up_ms": {"median": u.0, "min": u.1, "max": u.2},
                    "reach_ms": {"median": r.0, "min": r.1, "max": r.2},
                    "teardown_ms": {"median": d.0, "min": d.1, "max": d.2}})
            );
        } else {
            let f = |x: (f64, f64, f64)| format!("{:.0} ({:.0}-{:.0})", x.0, x.1, x.2);
            println!(
                "{:<36} {:>5} {:>22} {:>22} {:>22}",
                label,
                s.len(),
                f(u),
                f(r),
                f(d)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
