//! Your agent over one topology's 25 core scenarios with `Bench`: a fresh netns lab (real FRR)
//! per run, resume, progress, Ctrl-C. As root, from the repository:
//! `cargo run --release --example bench_my_agent -- [TOPOLOGY] [LIMIT] [RUNS_ROOT]`
//! (defaults: simple_bgp, all 25, runs/bench_my_agent). CI runs a two-scenario slice.

use faultbench::bench::{Bench, BenchOptions, Registries, Selection, plan};
use faultbench::core::agent::{Agent, AgentInput, AgentOutcome};
use faultbench::core::{Diagnosis, RunStatus, Scenario, Toolbox, dataset::Scope, store::RunsRoot};
use std::{path::Path, sync::Arc};

/// A user's agent: all-pairs reachability; any pair not `ok` means a fault.
struct Reachability;

#[async_trait::async_trait]
impl Agent for Reachability {
    fn name(&self) -> &str {
        "reachability"
    }
    async fn run(&self, _: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let report = match tools.call("get_reachability", serde_json::json!({})).await {
            Ok(out) => serde_json::from_str::<serde_json::Value>(&out.text).unwrap_or_default(),
            Err(e) => return AgentOutcome::failed(e.to_string()),
        };
        let count = |k: &str| report["summary"][k].as_u64().unwrap_or(0);
        let bad = count("unstable") + count("down") + count("timeout");
        let text = format!("{bad} host pair(s) without full reachability");
        let d = Diagnosis {
            is_anomaly: Some(bad > 0),
            text,
            ..Default::default()
        };
        AgentOutcome::from_diagnosis(d)
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let topology = args.next().unwrap_or_else(|| "simple_bgp".into());
    let limit: usize = args.next().map_or(Ok(25), |n| n.parse())?;
    let root = args.next().unwrap_or_else(|| "runs/bench_my_agent".into());
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    // The topology's 25 core scenarios in the release's order; the first `limit` of them.
    let core = Selection::Scopes(vec![Scope::All], Some(topology));
    let (scenarios, _) = plan::select(&repo.join("dataset"), &core, &mut Vec::new())?;
    let ids: Vec<String> = scenarios
        .iter()
        .take(limit)
        .map(|s| s.id().into())
        .collect();

    let mut registries = Registries::default();
    registries.agents.agent("reachability", || Reachability);
    let settings = BenchOptions {
        dataset: repo.join("dataset"),
        topologies: Some(repo.join("topologies")),
        selection: Selection::Ids(ids.clone()),
        agents: vec!["reachability".into()],
        runs_root: root.clone().into(),
        resume: true, // run again to finish what an interrupted attempt left
        ..BenchOptions::default()  // netns, rubric judge, one job, 20 turns
    };
    let bench = Bench::new(settings).with_registries(registries);
    let _ctrl_c = bench.cancel_handle().on_signals(|| eprintln!("stopping"));
    let outcome = bench.on_event(|e| eprintln!("{e}")).run().await?;
    let records = RunsRoot::attach(&root).records()?;
    let n = records
        .values()
        .filter(|r| r.status == RunStatus::Scored)
        .count();
    let runs = ids.len();
    println!("{n}/{runs} scored in {root}; {} run now", outcome.finished);
    anyhow::ensure!(n == runs, "only {n} of {runs} runs scored");
    Ok(())
}
