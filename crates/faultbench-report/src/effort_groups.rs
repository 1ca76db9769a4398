//! Table 8b: effort per answered run by category and ticket style (the paper's §5.5: tool
//! calls, turns, tokens and cost follow the ticket, not the fault). Means are pooled over
//! passes, like Table 8. Turns are known only for runs with a full record of ours; the cell's
//! `n` says how many runs a mean rests on.

use super::cells::{CellSpec, Group, Intervals, Measure, Plan, Stat, Subset};
use super::intervals::timeout_groups;
use super::stats::Interval;
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

/// Registers the tables' cells in `plan`; [`fill`] reads the results.
pub fn build(cols: &[String], plan: &mut Plan) -> (Vec<GroupEffort>, Vec<Vec<Vec<Stat>>>) {
    let groups: Vec<Group> = timeout_groups();
    let mut tables = Vec::new();
    let mut stats = Vec::new();
    for (name, what, measure) in METRICS {
        let t_stats: Vec<Vec<Stat>> = groups
            .iter()
            .map(|g| {
                cols.iter()
                    .map(|a| plan.cell(CellSpec::new(*g, a, measure)))
                    .collect()
            })
            .collect();
        tables.push(GroupEffort {
            title: format!("Table 8b — {what} per answered run, by category and ticket style"),
            metric: name.to_string(),
            rows: labels(),
            agents: cols.to_vec(),
            cells: vec![vec![PooledCell::default(); cols.len()]; groups.len()],
        });
        stats.push(t_stats);
    }
    (tables, stats)
}

/// Fills the means, counts and intervals after the plan ran.
pub fn fill(tables: &mut [GroupEffort], stats: &[Vec<Vec<Stat>>], iv: &Intervals) {
    for (t, ts) in tables.iter_mut().zip(stats) {
        for (row, srow) in t.cells.iter_mut().zip(ts) {
            for (c, s) in row.iter_mut().zip(srow) {
                *c = PooledCell {
                    mean: iv.point(*s),
                    n: iv.n(*s),
                    ci: iv.get(*s),
                };
            }
        }
    }
}
