//! `--dry-run`: the plan and what it will cost.

use super::build::AgentChoice;
use super::plan::Item;
use faultbench_core::Usage;
use faultbench_core::lab::TopologyResolver;
use faultbench_llm::LlmConfig;
use std::collections::BTreeMap;

/// Typical usage of one run, from the means of the public release's 3,960 runs: a
/// function-calling loop (ReAct on GPT-5) and a cached-context agent (Claude-based SADE /
/// Claude Code).
fn typical_usage(agent: &str) -> Usage {
    if agent == "react" {
        Usage {
            input_tokens: 16_581,
            cache_read_tokens: 73_399,
            cache_write_tokens: 0,
            output_tokens: 10_577,
        }
    } else {
        Usage {
            input_tokens: 20,
            cache_read_tokens: 300_000,
            cache_write_tokens: 40_000,
            output_tokens: 17_700,
        }
    }
}

/// Prints the plan and the estimated cost.
pub fn print_plan(
    items: &[Item],
    planned: usize,
    agents: &[AgentChoice],
    llm: &LlmConfig,
    topologies: &TopologyResolver,
) {
    println!(
        "plan: {} run(s) to do ({} planned, {} already finished)",
        items.len(),
        planned,
        planned - items.len()
    );
    let mut by_topo: BTreeMap<&str, usize> = BTreeMap::new();
    let mut by_layer: BTreeMap<&str, usize> = BTreeMap::new();
    for i in items {
        *by_topo.entry(&i.key.topology).or_default() += 1;
        *by_layer.entry(i.key.layer.as_str()).or_default() += 1;
    }
    for (t, n) in &by_topo {
        let found = match topologies.resolve(t) {
            Ok(top) => format!("lab {}", top.dir.display()),
            Err(_) => "NO LAB FOUND — these runs will fail".to_string(),
        };
        println!("  {t:<24} {n:>5} run(s)  ({found})");
    }
    let layers: Vec<String> = by_layer.iter().map(|(l, n)| format!("{l} {n}")).collect();
    println!("  by layer: {}", layers.join(", "));
    let prices = llm.prices().unwrap_or_default();
    let mut total = 0.0;
    let mut unknown = Vec::new();
    for (idx, a) in agents.iter().enumerate() {
        let runs = items.iter().filter(|i| i.agent == idx).count();
        let per_run = match &a.model {
            None => Some(0.0),
            Some(m) => prices.cost(m, &typical_usage(&a.label)),
        };
        match per_run {
            Some(c) => {
                total += c * runs as f64;
                println!(
                    "  agent {:<20} {runs:>5} run(s) × ~${c:.3} = ~${:.2}{}",
                    a.label,
                    c * runs as f64,
                    a.model
                        .as_deref()
                        .map(|m| format!("  (model {m})"))
                        .unwrap_or_default()
                );
            }
            None => {
                unknown.push(a.label.clone());
                println!(
                    "  agent {:<20} {runs:>5} run(s) × unknown price (model {} not in the price table)",
                    a.label,
                    a.model.as_deref().unwrap_or("?")
                );
            }
        }
    }
    println!(
        "estimated cost: ~${total:.2}{} (typical tokens per run of the paper's agents × list prices; the judge is extra)",
        if unknown.is_empty() {
            String::new()
        } else {
            format!(" + runs of {}", unknown.join(", "))
        }
    );
}
