//! Bootstrap intervals for every mean and rate of Tables 4–8: each cell is registered in a
//! [`Plan`] with the same runs and rule the table used, and the intervals are written back
//! into the cells after one bootstrap over all of them.

use super::cells::{CellSpec, Group, Intervals, Measure, Plan, Stat, Subset};
use super::tables::{STYLES, ScoreTable, Tables};
use faultbench_core::category::Category;

/// Handles of the registered statistics, in table layout.
pub struct TableStats {
    outcome_by_category: Vec<Vec<(Stat, Option<Stat>)>>,
    outcome_by_persona: Vec<Vec<(Stat, Option<Stat>)>>,
    fix: Vec<Vec<(Stat, Option<Stat>)>>,
    reasoning: Vec<Vec<(Stat, Option<Stat>)>>,
    reasoning_by_persona: Vec<Vec<(Stat, Option<Stat>)>>,
    over_diagnosis: Vec<Vec<Stat>>,
    timeouts: Vec<Vec<Stat>>,
    effort: Vec<Vec<(&'static str, Stat)>>,
}

/// The effort fields of Table 8 with the statistic behind each.
pub const EFFORT_FIELDS: [(&str, Measure); 10] = [
    ("tool_calls_a", Measure::ToolCalls(Subset::Answered)),
    ("tool_calls_t", Measure::ToolCalls(Subset::Timeouts)),
    ("in_tokens_a", Measure::InputTokens(Subset::Answered)),
    ("in_tokens_t", Measure::InputTokens(Subset::Timeouts)),
    ("out_tokens_a", Measure::OutputTokens(Subset::Answered)),
    ("out_tokens_t", Measure::OutputTokens(Subset::Timeouts)),
    ("usd_a", Measure::Usd(Subset::Answered)),
    ("usd_t", Measure::Usd(Subset::Timeouts)),
    ("wall_seconds", Measure::WallSeconds),
    ("usd_timeout_share", Measure::TimeoutCostShare),
];

/// The groups of Table 4's rows (and of Table 7b's).
pub fn category_groups() -> Vec<Group> {
    Category::ALL.iter().map(|c| Group::Category(*c)).collect()
}

/// The groups of Table 5's rows (and of Tables 6a and 7c).
pub fn style_groups() -> Vec<Group> {
    STYLES.iter().map(|s| Group::Style(s)).collect()
}

/// The groups of Table 6b's rows: the categories, then the persona styles.
pub fn timeout_groups() -> Vec<Group> {
    let mut g = category_groups();
    g.extend(style_groups().into_iter().skip(1));
    g
}

/// The groups of Table 7a's rows.
pub fn fix_groups() -> Vec<Group> {
    [
        Category::CorrectFault,
        Category::WrongDevice,
        Category::WrongCause,
    ]
    .iter()
    .map(|c| Group::Category(*c))
    .collect()
}

fn rate_stats(
    plan: &mut Plan,
    groups: &[Group],
    agents: &[String],
    measure: Measure,
) -> Vec<Vec<Stat>> {
    groups
        .iter()
        .map(|g| {
            agents
                .iter()
                .map(|a| plan.cell(CellSpec::new(*g, a, measure)))
                .collect()
        })
        .collect()
}

/// The cells, each with its difference to the same column of the reference row.
fn score_stats(
    plan: &mut Plan,
    groups: &[Group],
    agents: &[String],
    measure: Measure,
    delta_ref: Option<usize>,
) -> Vec<Vec<(Stat, Option<Stat>)>> {
    let cells = rate_stats(plan, groups, agents, measure);
    cells
        .iter()
        .enumerate()
        .map(|(i, row)| {
            row.iter()
                .enumerate()
                .map(|(j, s)| {
                    let d = delta_ref
                        .filter(|r| *r != i)
                        .and_then(|r| plan.diff(cells[r][j], *s));
                    (*s, d)
                })
                .collect()
        })
        .collect()
}

/// Registers every cell of the tables.
pub fn register(plan: &mut Plan, t: &Tables) -> TableStats {
    let cols = &t.outcome_by_category.agents;
    TableStats {
        outcome_by_category: score_stats(plan, &category_groups(), cols, Measure::Outcome, Some(0)),
        outcome_by_persona: score_stats(plan, &style_groups(), cols, Measure::Outcome, Some(0)),
        fix: score_stats(plan, &fix_groups(), cols, Measure::Fix, None),
        reasoning: score_stats(plan, &category_groups(), cols, Measure::Reasoning, None),
        reasoning_by_persona: score_stats(plan, &style_groups(), cols, Measure::Reasoning, None),
        over_diagnosis: rate_stats(plan, &style_groups(), cols, Measure::OverDiagnosis),
        timeouts: rate_stats(plan, &timeout_groups(), cols, Measure::TimeoutRate),
        effort: t
            .effort
            .iter()
            .map(|e| {
                EFFORT_FIELDS
                    .iter()
                    .map(|(name, m)| (*name, plan.cell(CellSpec::new(Group::Any, &e.agent, *m))))
                    .collect()
            })
            .collect(),
    }
}

fn apply_scores(t: &mut ScoreTable, stats: &[Vec<(Stat, Option<Stat>)>], iv: &Intervals) {
    for (row, srow) in t.cells.iter_mut().zip(stats) {
        for (c, (s, d)) in row.iter_mut().zip(srow) {
            c.ci = iv.get(*s);
            c.delta_ci = d.and_then(|d| iv.get(d));
        }
    }
}

fn rate_cis(stats: &[Vec<Stat>], iv: &Intervals) -> Vec<Vec<Option<super::stats::Interval>>> {
    stats
        .iter()
        .map(|r| r.iter().map(|s| iv.get(*s)).collect())
        .collect()
}

/// Writes the intervals into the tables.
pub fn apply(t: &mut Tables, stats: &TableStats, iv: &Intervals) {
    apply_scores(&mut t.outcome_by_category, &stats.outcome_by_category, iv);
    apply_scores(&mut t.outcome_by_persona, &stats.outcome_by_persona, iv);
    apply_scores(&mut t.fix, &stats.fix, iv);
    apply_scores(&mut t.reasoning, &stats.reasoning, iv);
    apply_scores(&mut t.reasoning_by_persona, &stats.reasoning_by_persona, iv);
    t.over_diagnosis.cis = rate_cis(&stats.over_diagnosis, iv);
    t.timeouts.cis = rate_cis(&stats.timeouts, iv);
    for (e, fields) in t.effort.iter_mut().zip(&stats.effort) {
        e.cis = fields
            .iter()
            .filter_map(|(name, s)| iv.get(*s).map(|i| (name.to_string(), i)))
            .collect();
    }
}

/// The point estimates the plan computed, in table layout (for consistency checks).
pub fn points(stats: &TableStats, iv: &Intervals) -> Vec<Vec<Option<f64>>> {
    stats
        .outcome_by_category
        .iter()
        .map(|r| r.iter().map(|(s, _)| iv.point(*s)).collect())
        .collect()
}
