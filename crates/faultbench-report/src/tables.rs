//! The paper's Tables 4–8 as data.

use super::metrics::{
    ALL, CellStat, Rate, answered, category, cell, layer, over_diagnosis, round3, timeout,
    timeout_rate,
};
use super::stats::Interval;
use faultbench_core::category::{Category, Layer};
use faultbench_core::record::ManifestRow;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// One score cell with its difference to a reference cell (on 3-decimal values).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ScoreCell {
    /// The statistic.
    pub stat: CellStat,
    /// Difference to the reference row (None for the reference itself or without data).
    pub delta: Option<f64>,
    /// Bootstrap 95 % interval of the mean ([`super::stats`]), when computed.
    #[serde(default)]
    pub ci: Option<Interval>,
    /// Bootstrap 95 % interval of the difference to the reference row, when computed.
    #[serde(default)]
    pub delta_ci: Option<Interval>,
}

/// A table of score cells: rows × agents (the last agent column is "All").
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScoreTable {
    /// Title.
    pub title: String,
    /// Row labels.
    pub rows: Vec<String>,
    /// Column labels: agents, then `All`.
    pub agents: Vec<String>,
    /// `cells[row][agent]`.
    pub cells: Vec<Vec<ScoreCell>>,
    /// Label of the reference row for deltas, if any.
    pub delta_vs: Option<String>,
}

/// A table of rates: rows × agents.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RateTable {
    /// Title.
    pub title: String,
    /// Row labels.
    pub rows: Vec<String>,
    /// Column labels: agents, then `All`.
    pub agents: Vec<String>,
    /// `cells[row][agent]`.
    pub cells: Vec<Vec<Rate>>,
    /// Bootstrap 95 % intervals, parallel to `cells` (empty when not computed).
    #[serde(default)]
    pub cis: Vec<Vec<Option<Interval>>>,
}

impl RateTable {
    /// The interval of a cell, when computed.
    pub fn ci(&self, row: usize, col: usize) -> Option<Interval> {
        self.cis
            .get(row)
            .and_then(|r| r.get(col))
            .copied()
            .flatten()
    }
}

/// Effort of one agent (Table 8).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Effort {
    /// Agent (or All).
    pub agent: String,
    /// Agent results (answered + timeouts).
    pub runs: usize,
    /// Answered runs.
    pub answered: usize,
    /// Timeouts.
    pub timeouts: usize,
    /// Mean tool calls per answered run.
    pub tool_calls_a: Option<f64>,
    /// Mean tool calls per timeout.
    pub tool_calls_t: Option<f64>,
    /// Mean input tokens (uncached + cache read + cache write) per answered run.
    pub in_tokens_a: Option<f64>,
    /// Mean input tokens per timeout.
    pub in_tokens_t: Option<f64>,
    /// Mean output tokens per answered run.
    pub out_tokens_a: Option<f64>,
    /// Mean output tokens per timeout.
    pub out_tokens_t: Option<f64>,
    /// Mean USD per answered run.
    pub usd_a: Option<f64>,
    /// Mean USD per timeout.
    pub usd_t: Option<f64>,
    /// Total USD.
    pub usd_total: f64,
    /// USD spent on timeouts.
    pub usd_timeouts: f64,
    /// Mean wall seconds per run.
    pub wall_seconds: Option<f64>,
    /// Bootstrap 95 % intervals of the means and of the timeout cost share, by field name
    /// (`tool_calls_a`, …, `usd_timeout_share`), when computed.
    #[serde(default)]
    pub cis: BTreeMap<String, Interval>,
    /// Runs with a known judge spend (ours; the release's registry has none).
    #[serde(default)]
    pub judged: usize,
    /// Mean judge input tokens per run with a known judge spend.
    #[serde(default)]
    pub judge_in_tokens: Option<f64>,
    /// Mean judge output tokens per run with a known judge spend.
    #[serde(default)]
    pub judge_out_tokens: Option<f64>,
    /// Mean judge USD per run with a known judge spend.
    #[serde(default)]
    pub judge_usd: Option<f64>,
    /// Judge USD in total (the agent's runs of every status).
    #[serde(default)]
    pub judge_usd_total: f64,
}

impl Effort {
    /// The per-run means and the timeout cost share, by field name (the names of `cis`).
    pub fn fields(&self) -> [(&'static str, Option<f64>); 10] {
        [
            ("tool_calls_a", self.tool_calls_a),
            ("tool_calls_t", self.tool_calls_t),
            ("in_tokens_a", self.in_tokens_a),
            ("in_tokens_t", self.in_tokens_t),
            ("out_tokens_a", self.out_tokens_a),
            ("out_tokens_t", self.out_tokens_t),
            ("usd_a", self.usd_a),
            ("usd_t", self.usd_t),
            ("wall_seconds", self.wall_seconds),
            ("usd_timeout_share", self.usd_timeout_share()),
        ]
    }

    /// Share of the agent's cost spent on timeouts.
    pub fn usd_timeout_share(&self) -> Option<f64> {
        (self.usd_total > 0.0).then(|| self.usd_timeouts / self.usd_total)
    }

    /// Everything spent: the agent's cost and the judge's.
    pub fn usd_all(&self) -> f64 {
        self.usd_total + self.judge_usd_total
    }
}

/// All tables of a report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Tables {
    /// Agents in column order.
    pub agents: Vec<String>,
    /// Runs in the registry.
    pub runs: usize,
    /// Runs per status.
    pub statuses: std::collections::BTreeMap<String, usize>,
    /// Table 4: Outcome by category.
    pub outcome_by_category: ScoreTable,
    /// Table 5: Outcome by ticket style (standard false premise and the personas).
    pub outcome_by_persona: ScoreTable,
    /// Table 6a: over-diagnosis by ticket style.
    pub over_diagnosis: RateTable,
    /// Table 6b: timeout rate by category and ticket style.
    pub timeouts: RateTable,
    /// Table 7a: Fix by category.
    pub fix: ScoreTable,
    /// Table 7b: Reasoning by category.
    pub reasoning: ScoreTable,
    /// Table 7c: Reasoning by ticket style (false premise).
    #[serde(default)]
    pub reasoning_by_persona: ScoreTable,
    /// Table 8: effort and cost per agent.
    pub effort: Vec<Effort>,
    /// Scenarios whose runs the presence watch set aside (`fault_vanished`, `baseline_broke`).
    #[serde(default)]
    pub presence: Vec<super::PresenceRow>,
}

/// The ticket styles of Table 5, in the paper's order.
pub const STYLES: [&str; 6] = [
    "standard",
    "novice",
    "novice_confident",
    "naive",
    "naive_unsure",
    "naive_no_detail",
];

fn is_core(r: &ManifestRow) -> bool {
    matches!(layer(r), Some(Layer::Base | Layer::Cex))
}

fn style_rows<'a>(rows: &'a [ManifestRow], style: &str) -> Vec<&'a ManifestRow> {
    rows.iter()
        .filter(|r| match style {
            "standard" => layer(r) == Some(Layer::Cex) && category(r) == Category::FalsePremise,
            s => layer(r).is_some_and(|l| l.as_str() == s),
        })
        .collect()
}

fn cat_rows(rows: &[ManifestRow], cat: Category) -> Vec<&ManifestRow> {
    rows.iter()
        .filter(|r| is_core(r) && category(r) == cat)
        .collect()
}

/// A group's rows split by agent, in row order (so that a cell of one agent reads its own
/// rows, and a table over many agents is not quadratic).
fn by_agent<'a>(rows: &[&'a ManifestRow]) -> HashMap<&'a str, Vec<&'a ManifestRow>> {
    let mut m: HashMap<&str, Vec<&ManifestRow>> = HashMap::new();
    for r in rows {
        m.entry(r.agent.as_str()).or_default().push(r);
    }
    m
}

/// The rows of `agent` in a group split by [`by_agent`] (all of them for [`ALL`]).
fn rows_of<'g, 'a>(
    group: &'g [&'a ManifestRow],
    parts: &'g HashMap<&str, Vec<&'a ManifestRow>>,
    agent: &str,
) -> &'g [&'a ManifestRow] {
    if agent == ALL {
        group
    } else {
        parts.get(agent).map_or(&[], Vec::as_slice)
    }
}

/// One value per (group, agent column), each computed from that agent's rows of the group.
fn per_cell<T>(
    groups: &[&Vec<&ManifestRow>],
    agents: &[String],
    f: impl Fn(&[&ManifestRow], &str) -> T,
) -> Vec<Vec<T>> {
    groups
        .iter()
        .map(|g| {
            let parts = by_agent(g);
            agents.iter().map(|a| f(rows_of(g, &parts, a), a)).collect()
        })
        .collect()
}

fn score_table(
    title: &str,
    labels: Vec<String>,
    groups: &[&Vec<&ManifestRow>],
    agents: &[String],
    value: impl Fn(&ManifestRow) -> Option<f64> + Copy,
    delta_ref: Option<usize>,
) -> ScoreTable {
    let mut cells: Vec<Vec<ScoreCell>> = per_cell(groups, agents, |rows, a| ScoreCell {
        stat: cell(rows.iter().copied(), a, value),
        ..Default::default()
    });
    if let Some(ri) = delta_ref {
        let reference: Vec<Option<f64>> = cells[ri].iter().map(|c| c.stat.rounded()).collect();
        for (i, row) in cells.iter_mut().enumerate() {
            if i == ri {
                continue;
            }
            for (j, c) in row.iter_mut().enumerate() {
                c.delta = match (c.stat.rounded(), reference[j]) {
                    (Some(v), Some(r)) => Some(round3(v - r)),
                    _ => None,
                };
            }
        }
    }
    ScoreTable {
        title: title.into(),
        delta_vs: delta_ref.map(|i| labels[i].clone()),
        rows: labels,
        agents: agents.to_vec(),
        cells,
    }
}

fn mean_of(rows: &[&ManifestRow], f: impl Fn(&ManifestRow) -> f64) -> Option<f64> {
    (!rows.is_empty()).then(|| rows.iter().map(|r| f(r)).sum::<f64>() / rows.len() as f64)
}

/// Table 8's row of `agent` from its rows (every row for [`ALL`]).
fn effort(rows: &[&ManifestRow], agent: &str) -> Effort {
    let mine: Vec<&ManifestRow> = rows
        .iter()
        .copied()
        .filter(|r| agent == ALL || r.agent == agent)
        .filter(|r| answered(r) || timeout(r))
        .collect();
    let a: Vec<&ManifestRow> = mine.iter().copied().filter(|r| answered(r)).collect();
    let t: Vec<&ManifestRow> = mine.iter().copied().filter(|r| timeout(r)).collect();
    let input = |r: &ManifestRow| r.total_input_tokens() as f64;
    // The judge's spend is counted on every run of the agent that has one (a run judged and
    // then re-run keeps only its final record).
    let judged: Vec<&ManifestRow> = rows
        .iter()
        .copied()
        .filter(|r| agent == ALL || r.agent == agent)
        .filter(|r| r.judge_cost_usd.is_some())
        .collect();
    Effort {
        agent: agent.to_string(),
        runs: mine.len(),
        answered: a.len(),
        timeouts: t.len(),
        tool_calls_a: mean_of(&a, |r| r.tool_calls as f64),
        tool_calls_t: mean_of(&t, |r| r.tool_calls as f64),
        in_tokens_a: mean_of(&a, input),
        in_tokens_t: mean_of(&t, input),
        out_tokens_a: mean_of(&a, |r| r.out_tokens as f64),
        out_tokens_t: mean_of(&t, |r| r.out_tokens as f64),
        usd_a: mean_of(&a, |r| r.cost_usd),
        usd_t: mean_of(&t, |r| r.cost_usd),
        usd_total: mine.iter().map(|r| r.cost_usd).sum::<f64>() + 0.0,
        usd_timeouts: t.iter().map(|r| r.cost_usd).sum::<f64>() + 0.0,
        wall_seconds: mean_of(&mine, |r| r.wall_seconds),
        cis: BTreeMap::new(),
        judged: judged.len(),
        judge_in_tokens: mean_of(&judged, |r| r.judge_in_tokens.unwrap_or(0) as f64),
        judge_out_tokens: mean_of(&judged, |r| r.judge_out_tokens.unwrap_or(0) as f64),
        judge_usd: mean_of(&judged, |r| r.judge_cost_usd.unwrap_or(0.0)),
        judge_usd_total: judged
            .iter()
            .map(|r| r.judge_cost_usd.unwrap_or(0.0))
            .sum::<f64>()
            + 0.0,
    }
}

/// Builds every table from registry rows.
pub fn build(rows: &[ManifestRow]) -> Tables {
    let mut agents: Vec<String> = rows.iter().map(|r| r.agent.clone()).collect();
    agents.sort();
    agents.dedup();
    let mut cols = agents.clone();
    cols.push(ALL.to_string());

    let cats = Category::ALL;
    let cat_labels: Vec<String> = cats.iter().map(|c| c.label().to_string()).collect();
    let cat_groups: Vec<Vec<&ManifestRow>> = cats.iter().map(|c| cat_rows(rows, *c)).collect();
    let cat_refs: Vec<&Vec<&ManifestRow>> = cat_groups.iter().collect();
    let style_labels: Vec<String> = STYLES.iter().map(|s| s.to_string()).collect();
    let style_groups: Vec<Vec<&ManifestRow>> = STYLES.iter().map(|s| style_rows(rows, s)).collect();
    let style_refs: Vec<&Vec<&ManifestRow>> = style_groups.iter().collect();

    let outcome = |r: &ManifestRow| r.outcome_score;
    let outcome_by_category = score_table(
        "Table 4 — Outcome by category",
        cat_labels.clone(),
        &cat_refs,
        &cols,
        outcome,
        Some(0),
    );
    let outcome_by_persona = score_table(
        "Table 5 — Outcome by ticket style (false premise)",
        style_labels.clone(),
        &style_refs,
        &cols,
        outcome,
        Some(0),
    );
    let fix_cats = [
        Category::CorrectFault,
        Category::WrongDevice,
        Category::WrongCause,
    ];
    let fix_groups: Vec<Vec<&ManifestRow>> = fix_cats.iter().map(|c| cat_rows(rows, *c)).collect();
    let fix_refs: Vec<&Vec<&ManifestRow>> = fix_groups.iter().collect();
    let fix = score_table(
        "Table 7a — Fix by category",
        fix_cats.iter().map(|c| c.label().to_string()).collect(),
        &fix_refs,
        &cols,
        |r| r.fix_score,
        None,
    );
    let reasoning = score_table(
        "Table 7b — Reasoning by category",
        cat_labels.clone(),
        &cat_refs,
        &cols,
        |r| r.reasoning_score,
        None,
    );
    let reasoning_by_persona = score_table(
        "Table 7c — Reasoning by ticket style (false premise)",
        style_labels.clone(),
        &style_refs,
        &cols,
        |r| r.reasoning_score,
        None,
    );
    let over = RateTable {
        title: "Table 6a — Over-diagnosis on healthy networks (answered runs reporting a fault)"
            .into(),
        rows: style_labels.clone(),
        agents: cols.clone(),
        cells: per_cell(&style_refs, &cols, |rows, a| {
            over_diagnosis(rows.iter().copied(), a)
        }),
        cis: Vec::new(),
    };
    let mut t_labels = cat_labels.clone();
    let mut t_groups = cat_refs.clone();
    for (l, g) in style_labels.iter().zip(style_refs.iter()).skip(1) {
        t_labels.push(l.clone());
        t_groups.push(g);
    }
    let timeouts = RateTable {
        title: "Table 6b — Timeout rate (runs ending without a parsable verdict)".into(),
        rows: t_labels,
        agents: cols.clone(),
        cells: per_cell(&t_groups, &cols, |rows, a| {
            timeout_rate(rows.iter().copied(), a)
        }),
        cis: Vec::new(),
    };
    let every: Vec<&ManifestRow> = rows.iter().collect();
    let every_parts = by_agent(&every);
    let mut statuses = std::collections::BTreeMap::new();
    for r in rows {
        *statuses.entry(r.status.clone()).or_insert(0) += 1;
    }
    Tables {
        agents,
        runs: rows.len(),
        statuses,
        outcome_by_category,
        outcome_by_persona,
        over_diagnosis: over,
        timeouts,
        fix,
        reasoning,
        reasoning_by_persona,
        effort: cols
            .iter()
            .map(|a| effort(rows_of(&every, &every_parts, a), a))
            .collect(),
        presence: super::presence_rows(rows),
    }
}
