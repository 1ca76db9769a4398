//! Pass-to-pass variation: how often one agent on one ticket gets outcomes at least 0.5 apart
//! in different passes (the paper: "8 % of (scenario, agent) pairs vary by at least 0.5 across
//! passes", which is why every E1 number is a mean of three passes).
//!
//! A *cell* is one (arm, scenario, agent) with at least two answered passes; it *varies* when
//! the largest and smallest outcome differ by ≥ 0.5. The share is varying cells / cells, per
//! agent and for all agents pooled, for E1 (core arms), E2 (persona arms) and both.

use super::cells::{Families, Plan, Stat, is_core};
use super::metrics::{ALL, Rate, answered};
use super::stats::{Estimator, Kind};
use super::tables::RateTable;
use faultbench_core::record::ManifestRow;
use std::collections::BTreeMap;

/// The spread that counts as varying.
pub const THRESHOLD: f64 = 0.5;

/// The variation table: rows E1, E2, all arms; columns the agents and `All`; each cell
/// varying cells / cells with ≥ 2 answered passes.
pub type Variation = RateTable;

struct Cell {
    family: u32,
    agent: String,
    min: f64,
    max: f64,
    n: usize,
}

/// Which arms a row of the table covers.
/// Which rows a table row covers.
type Pick = fn(&ManifestRow) -> bool;

fn row_groups() -> [(&'static str, Pick); 3] {
    [
        ("E1 core (base80 + cex120)", is_core),
        ("E2 personas", |r| !is_core(r)),
        ("All arms", |_| true),
    ]
}

fn cells_of(rows: &[ManifestRow], fam: &Families, pick: Pick) -> Vec<Cell> {
    let mut map: BTreeMap<(&str, &str, &str, &str), Cell> = BTreeMap::new();
    for (i, r) in rows.iter().enumerate() {
        let Some(v) = r.outcome_score.filter(|_| answered(r) && pick(r)) else {
            continue;
        };
        let c = map
            .entry((&r.arm, &r.topology, &r.scenario_id, &r.agent))
            .or_insert(Cell {
                family: fam.family_of[i],
                agent: r.agent.clone(),
                min: v,
                max: v,
                n: 0,
            });
        c.min = c.min.min(v);
        c.max = c.max.max(v);
        c.n += 1;
    }
    map.into_values().filter(|c| c.n >= 2).collect()
}

/// Computes the table and registers one pooled-rate estimator per cell in `plan`.
pub fn build(
    rows: &[ManifestRow],
    fam: &Families,
    cols: &[String],
    plan: &mut Plan,
) -> (Variation, Vec<Vec<Stat>>) {
    let mut cells = Vec::new();
    let mut stats = Vec::new();
    for (_, pick) in row_groups() {
        let cs = cells_of(rows, fam, pick);
        let mut rates = Vec::new();
        let mut row_stats = Vec::new();
        for a in cols {
            let mut rate = Rate::default();
            let mut e = Estimator::new(Kind::Pooled);
            for c in cs.iter().filter(|c| a == ALL || &c.agent == a) {
                let varies = c.max - c.min >= THRESHOLD - 1e-9;
                rate.den += 1;
                rate.num += usize::from(varies);
                e.add(c.family, 0, f64::from(u8::from(varies)), 1.0);
            }
            rates.push(rate);
            row_stats.push(plan.estimator(e));
        }
        cells.push(rates);
        stats.push(row_stats);
    }
    let v = Variation {
        title: format!(
            "Pass-to-pass variation — (arm, scenario, agent) cells whose outcome spans ≥ {THRESHOLD} across answered passes"
        ),
        rows: row_groups().iter().map(|(l, _)| l.to_string()).collect(),
        agents: cols.to_vec(),
        cells,
        cis: Vec::new(),
    };
    (v, stats)
}
