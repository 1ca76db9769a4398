//! Run one scenario through the whole pipeline on a real lab: deploy its topology on Linux
//! namespaces with FRR, verify the baseline, inject the fault, let the deterministic baseline
//! agent probe the live network through the 22 tools, and score its diagnosis with the rubric.
//!
//! `cargo run --release --example run_one [SCENARIO_FILE]` — as root, with FRR installed
//! (`scripts/install-deps.sh`). Default: one of this repository's Kath2 scenarios.

use faultbench::agents::BaselineAgent;
use faultbench::core::ScenarioFile;
use faultbench::core::pipeline::Runner;
use faultbench::emu::netns::NetnsEmulator;
use faultbench::emu::tools::NikaToolsFactory;
use faultbench::judge::RubricJudge;
use std::sync::Arc;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "dataset/kath2_Q/base/kath2-router1-ripd-killed.txt".into());
    let scenario = ScenarioFile::load(&path)?;
    let runner = Runner::new(
        Arc::new(NetnsEmulator::new()),
        Arc::new(BaselineAgent::new()),
        Arc::new(RubricJudge::new()),
    )
    .with_tools(Arc::new(NikaToolsFactory::new()));
    let record = runner.run(&scenario).await; // status, phases, diagnosis, scores
    runner.shutdown().await; // tears down a lab kept by `reuse_labs`, if any

    println!(
        "status: {}  wall: {:.1} s",
        record.status, record.wall_seconds
    );
    if let Some(d) = &record.diagnosis {
        println!(
            "is_anomaly: {:?}  faulty devices: {:?}",
            d.is_anomaly, d.faulty_devices
        );
    }
    if let Some(s) = &record.scores {
        println!(
            "outcome {:.3}  fix {:?}  required axes {}/{}",
            s.outcome, s.fix, s.must_passed, s.must_total
        );
    }
    if let Some(e) = &record.error {
        println!("error: {e}");
    }
    Ok(())
}
