//! Bootstrap intervals for every mean and rate of Tables 4–8: each cell is registered in a
//! [`Plan`] with the same runs and rule the table used, and the intervals are written back
//! into the cells. One table is bootstrapped at a time ([`Plan::run_table`]), so the
//! estimators held at once are those of one table.

use super::cells::{CellSpec, Group, Intervals, Measure, Plan, Stat, Subset};
use super::stats::Bootstrap;
use super::tables::{STYLES, ScoreTable, Tables};
use faultbench_core::category::Category;

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

/// Computes the intervals of every cell of Tables 4–8 and writes them into `t`, one table at
/// a time.
pub fn compute(plan: &mut Plan, t: &mut Tables, boot: Bootstrap) {
    let cols = t.outcome_by_category.agents.clone();
    let scores: [(&mut ScoreTable, Vec<Group>, Measure, Option<usize>); 5] = [
        (
            &mut t.outcome_by_category,
            category_groups(),
            Measure::Outcome,
            Some(0),
        ),
        (
            &mut t.outcome_by_persona,
            style_groups(),
            Measure::Outcome,
            Some(0),
        ),
        (&mut t.fix, fix_groups(), Measure::Fix, None),
        (
            &mut t.reasoning,
            category_groups(),
            Measure::Reasoning,
            None,
        ),
        (
            &mut t.reasoning_by_persona,
            style_groups(),
            Measure::Reasoning,
            None,
        ),
    ];
    for (table, groups, measure, delta_ref) in scores {
        let stats = score_stats(plan, &groups, &cols, measure, delta_ref);
        let iv = plan.run_table(boot);
        apply_scores(table, &stats, &iv);
    }
    let stats = rate_stats(plan, &style_groups(), &cols, Measure::OverDiagnosis);
    t.over_diagnosis.cis = rate_cis(&stats, &plan.run_table(boot));
    let stats = rate_stats(plan, &timeout_groups(), &cols, Measure::TimeoutRate);
    t.timeouts.cis = rate_cis(&stats, &plan.run_table(boot));
    let stats: Vec<Vec<(&str, Stat)>> = t
        .effort
        .iter()
        .map(|e| {
            EFFORT_FIELDS
                .iter()
                .map(|(name, m)| (*name, plan.cell(CellSpec::new(Group::Any, &e.agent, *m))))
                .collect()
        })
        .collect();
    let iv = plan.run_table(boot);
    for (e, fields) in t.effort.iter_mut().zip(&stats) {
        e.cis = fields
            .iter()
            .filter_map(|(name, s)| iv.get(*s).map(|i| (name.to_string(), i)))
            .collect();
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
