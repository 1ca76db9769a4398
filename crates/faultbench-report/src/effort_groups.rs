//! Table 8b: effort per answered run by category and ticket style (the paper's §5.5: tool
//! calls, turns, tokens and cost follow the ticket, not the fault). Means are pooled over
//! passes, like Table 8. Turns are known only for runs with a full record of ours; the cell's
//! `n` says how many runs a mean rests on.

use super::cells::{CellSpec, Group, Intervals, Measure, Plan, Stat, Subset};
use super::intervals::timeout_groups;
use super::stats::{Bootstrap, Interval};
use super::tables::STYLES;
use faultbench_core::category::Category;
use serde::{Deserialize, Serialize};

/// A pooled mean with its support and interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PooledCell {
    /// The mean (None without data).
    pub mean: Option<f64>,
    /// Runs it rests on.
    pub n: usize,
    /// Bootstrap 95 % interval, when computed.
    #[serde(default)]
    pub ci: Option<Interval>,
}

/// One metric by category and ticket style.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GroupEffort {
    /// Title.
    pub title: String,
    /// Metric name (`tool_calls`, `turns`, `input_tokens`, `output_tokens`, `usd`).
    pub metric: String,
    /// Row labels: the four categories, then the persona styles.
    pub rows: Vec<String>,
    /// Agents, then `All`.
    pub agents: Vec<String>,
    /// `cells[row][agent]`.
    pub cells: Vec<Vec<PooledCell>>,
}

/// The metrics of Table 8b.
pub const METRICS: [(&str, &str, Measure); 5] = [
    (
        "tool_calls",
        "tool calls",
        Measure::ToolCalls(Subset::Answered),
    ),
    ("turns", "model turns", Measure::Turns(Subset::Answered)),
    (
        "input_tokens",
        "input tokens (uncached + cache read + cache write)",
        Measure::InputTokens(Subset::Answered),
    ),
    (
        "output_tokens",
        "output tokens",
        Measure::OutputTokens(Subset::Answered),
    ),
    ("usd", "USD", Measure::Usd(Subset::Answered)),
];

fn labels() -> Vec<String> {
    let mut l: Vec<String> = Category::ALL
        .iter()
        .map(|c| c.label().to_string())
        .collect();
    l.extend(STYLES.iter().skip(1).map(|s| s.to_string()));
    l
}

/// Computes the tables, one metric at a time (each is bootstrapped and forgotten before the
/// next is registered).
pub fn compute(cols: &[String], plan: &mut Plan, boot: Bootstrap) -> Vec<GroupEffort> {
    let groups: Vec<Group> = timeout_groups();
    let mut tables = Vec::new();
    for (name, what, measure) in METRICS {
        let stats: Vec<Vec<Stat>> = groups
            .iter()
            .map(|g| {
                cols.iter()
                    .map(|a| plan.cell(CellSpec::new(*g, a, measure)))
                    .collect()
            })
            .collect();
        let iv = plan.run_table(boot);
        tables.push(GroupEffort {
            title: format!("Table 8b — {what} per answered run, by category and ticket style"),
            metric: name.to_string(),
            rows: labels(),
            agents: cols.to_vec(),
            cells: stats
                .iter()
                .map(|row| row.iter().map(|s| cell(&iv, *s)).collect())
                .collect(),
        });
    }
    tables
}

fn cell(iv: &Intervals, s: Stat) -> PooledCell {
    PooledCell {
        mean: iv.point(s),
        n: iv.n(s),
        ci: iv.get(s),
    }
}
