//! Median latency of one device command on a running Kathará instance: through the backend's
//! Docker Engine API path, against a bare `docker exec CONTAINER true` on the same container.
//!
//! ```text
//! cargo run -p faultbench-emu --example kathara_exec_latency -- INSTANCE DEVICE [ROUNDS]
//! ```
//!
//! `scripts/kathara-exec-latency.sh` brings a lab up, runs this and tears the lab down. The two
//! kinds of call alternate, so a load change on the machine hits both alike.

use faultbench_core::emulator::{Command, Lab};
use faultbench_emu::kathara::KatharaEmulator;
use std::time::{Duration, Instant};

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (Some(name), Some(device)) = (args.first(), args.get(1)) else {
        return Err("usage: kathara_exec_latency INSTANCE DEVICE [ROUNDS]".into());
    };
    let rounds: usize = args.get(2).map_or(Ok(30), |r| r.parse())?;
    let lab = KatharaEmulator::from_env()?.attach(name).await?;
    let engine = lab
        .engine()
        .ok_or("this instance's device commands do not go through a local Docker engine")?;
    let id = engine
        .lab_containers(&lab.hash())
        .await?
        .into_iter()
        .find(|c| &c.device == device)
        .ok_or("no container for that device")?
        .id;
    let t = Duration::from_secs(10);
    let true_cmd = Command::argv(["true"]);
    // Warm both paths (connection, container lookup, docker CLI page cache).
    lab.exec(device, &true_cmd, t).await?;
    std::process::Command::new("docker")
        .args(["exec", &id, "true"])
        .status()?;
    let (mut ours, mut bare) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        let s = Instant::now();
        let out = lab.exec(device, &true_cmd, t).await?;
        ours.push(s.elapsed());
        if !out.success() {
            return Err(format!("`true` failed through the engine: {out:?}").into());
        }
        let s = Instant::now();
        let status = std::process::Command::new("docker")
            .args(["exec", &id, "true"])
            .status()?;
        bare.push(s.elapsed());
        if !status.success() {
            return Err("docker exec true failed".into());
        }
    }
    let (o, b) = (median(ours), median(bare));
    println!(
        "{rounds} rounds on {name}/{device}: faultbench (engine API) median {:.1} ms; \
         `docker exec {} true` median {:.1} ms; ratio {:.2}",
        o.as_secs_f64() * 1e3,
        &id[..12],
        b.as_secs_f64() * 1e3,
        o.as_secs_f64() / b.as_secs_f64()
    );
    Ok(())
}
