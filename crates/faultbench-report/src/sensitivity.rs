//! Weight sensitivity: the outcome and the agents' ranking when the required/bonus weights
//! change (0.6/0.4, 0.7/0.3 — the paper's —, 0.8/0.2) and under the strict rule (the required
//! pool counts only when every required axis passes).
//!
//! Re-weighting needs each run's axis counts (required and bonus axes passed, of how many).
//! They come, in order of preference, from
//! 1. the run's full record (`must_passed`, `must_total`, `bonus_passed`, `bonus_total`), exact;
//! 2. the registry's outcome value alone: with at most 6 required and 4 bonus axes per scenario
//!    (or the scenario's exact totals when a dataset is given), most outcome values have a
//!    single decomposition into pass fractions (0.7 = all required, no bonus; 0.35 = half the
//!    required, no bonus; …). When several decompositions fit and they disagree under a rule
//!    (e.g. 0.75 = 3/4 required with no bonus pool, or 1/2 required and every bonus axis — the
//!    strict rule gives 0.75 or 0), the run's value is the *range* of the candidates and a cell
//!    shows the range of its mean. Coverage counts say how many runs took each route.

use super::cells::{Families, Group};
use super::details::{AxisCounts, RunDetails};
use super::metrics::{ALL, answered};
use super::stats::{Estimator, Kind};
use faultbench_core::category::{Category, Layer};
use faultbench_core::record::ManifestRow;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A way to combine the required and bonus pass fractions.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WeightRule {
    /// Weight of the required pool (the bonus pool gets `1 − w_must`).
    pub w_must: f64,
    /// The required pool counts 1 only when every required axis passed, else 0.
    pub strict: bool,
}

impl WeightRule {
    /// The rules of the table: 0.6/0.4, 0.7/0.3, 0.8/0.2, strict 0.7/0.3.
    pub const TABLE: [WeightRule; 4] = [
        WeightRule {
            w_must: 0.6,
            strict: false,
        },
        WeightRule {
            w_must: 0.7,
            strict: false,
        },
        WeightRule {
            w_must: 0.8,
            strict: false,
        },
        WeightRule {
            w_must: 0.7,
            strict: true,
        },
    ];

    /// `0.7/0.3` or `strict 0.7/0.3`.
    pub fn label(&self) -> String {
        let w = format!("{:.1}/{:.1}", self.w_must, 1.0 - self.w_must);
        if self.strict {
            format!("strict {w}")
        } else {
            w
        }
    }

    /// The outcome of a run with these axis counts: `min(1, Σ fᵢwᵢ / Σ wᵢ)` over the pools
    /// present (the release's formula with other weights).
    pub fn outcome(&self, a: AxisCounts) -> f64 {
        let mp = a.must_passed.min(a.must_total);
        let bp = a.bonus_passed.min(a.bonus_total);
        let (mut num, mut den) = (0.0, 0.0);
        if a.must_total > 0 {
            let f = if self.strict {
                f64::from(u8::from(mp == a.must_total))
            } else {
                f64::from(mp) / f64::from(a.must_total)
            };
            num += self.w_must * f;
            den += self.w_must;
        }
        if a.bonus_total > 0 {
            num += (1.0 - self.w_must) * f64::from(bp) / f64::from(a.bonus_total);
            den += 1.0 - self.w_must;
        }
        if den == 0.0 {
            0.0
        } else {
            (num / den).min(1.0)
        }
    }
}

const PAPER: WeightRule = WeightRule {
    w_must: 0.7,
    strict: false,
};

/// Largest axis counts tried when decomposing an outcome value.
const MAX_MUST: u32 = 6;
const MAX_BONUS: u32 = 4;

/// The axis counts that give `outcome` under the paper's rule (`totals` fixes the pool sizes).
pub fn decompositions(outcome: f64, totals: Option<(u32, u32)>) -> Vec<AxisCounts> {
    let (musts, bonuses) = match totals {
        Some((m, b)) => (m..=m, b..=b),
        None => (0..=MAX_MUST, 0..=MAX_BONUS),
    };
    let mut out = Vec::new();
    for must_total in musts {
        for bonus_total in bonuses.clone() {
            if must_total + bonus_total == 0 {
                continue;
            }
            for must_passed in 0..=must_total {
                for bonus_passed in 0..=bonus_total {
                    let a = AxisCounts {
                        must_passed,
                        must_total,
                        bonus_passed,
                        bonus_total,
                    };
                    if (PAPER.outcome(a) - outcome).abs() < 1e-9 {
                        out.push(a);
                    }
                }
            }
        }
    }
    out
}

/// The (required, bonus) axis totals of every scenario of a dataset, by scenario id.
pub fn axis_totals(dataset: &faultbench_core::dataset::Dataset) -> HashMap<String, (u32, u32)> {
    use faultbench_core::scenario::{AxisKind, Scenario};
    dataset
        .scenarios()
        .map(|(_, s)| {
            let (mut m, mut b) = (0, 0);
            for a in s.scoring_axes() {
                match a.kind() {
                    AxisKind::Assert | AxisKind::Must => m += 1,
                    AxisKind::Bonus => b += 1,
                    AxisKind::Reasoning | AxisKind::Fix => {}
                }
            }
            (s.id().to_string(), (m, b))
        })
        .collect()
}

/// How many answered runs took each route to their axis counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// Answered runs with an outcome.
    pub answered: usize,
    /// Axis counts from a full record.
    pub exact: usize,
    /// Inferred from the outcome value, one answer under every rule.
    pub inferred: usize,
    /// Inferred, several answers: the run enters as a range.
    pub ambiguous: usize,
    /// No decomposition fits (left out).
    pub unknown: usize,
}

/// A mean that may be a range (when some runs' values are ranges).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct RangeCell {
    /// The mean with every uncertain run at its lowest candidate.
    pub lo: Option<f64>,
    /// The mean with every uncertain run at its highest candidate.
    pub hi: Option<f64>,
}

impl RangeCell {
    /// `0.912` or `0.905–0.914` (three decimals), `–` without data.
    pub fn format(&self) -> String {
        match (self.lo, self.hi) {
            (Some(l), Some(h)) if format!("{l:.3}") == format!("{h:.3}") => format!("{l:.3}"),
            (Some(l), Some(h)) => format!("{l:.3}–{h:.3}"),
            _ => "–".into(),
        }
    }

    fn mid(&self) -> Option<f64> {
        Some((self.lo? + self.hi?) / 2.0)
    }
}

/// The weight-sensitivity table.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Sensitivity {
    /// Title.
    pub title: String,
    /// The rules (column groups), labelled.
    pub rules: Vec<String>,
    /// Row labels: the categories, then all core runs.
    pub rows: Vec<String>,
    /// Agents, then `All`.
    pub agents: Vec<String>,
    /// `cells[rule][row][agent]`.
    pub cells: Vec<Vec<Vec<RangeCell>>>,
    /// `ranking[rule][row]`: agents from best to worst (by the middle of the range).
    pub ranking: Vec<Vec<Vec<String>>>,
    /// `ranking_certain[rule][row]`: the order is the same at both ends of every range.
    pub ranking_certain: Vec<Vec<bool>>,
    /// Where the axis counts came from.
    pub coverage: Coverage,
}

/// Decompositions by (outcome bits, known totals).
type DecompositionCache = HashMap<(u64, Option<(u32, u32)>), Vec<AxisCounts>>;

/// A run's outcome under each rule of [`WeightRule::TABLE`], as `(lowest, highest)` over its
/// candidate axis counts; `None` when the run is not answered or no decomposition fits. Counts
/// the route taken in `coverage`.
fn row_value(
    r: &ManifestRow,
    details: &RunDetails,
    totals: &HashMap<String, (u32, u32)>,
    cache: &mut DecompositionCache,
    coverage: &mut Coverage,
) -> Option<[(f64, f64); 4]> {
    let x = r.outcome_score.filter(|_| answered(r))?;
    coverage.answered += 1;
    let exact = details.get(r).and_then(|d| d.axes);
    let cands: &[AxisCounts] = match &exact {
        Some(a) => std::slice::from_ref(a),
        None => {
            let t = totals.get(&r.scenario_id).copied();
            cache
                .entry((x.to_bits(), t))
                .or_insert_with(|| decompositions(x, t))
        }
    };
    if cands.is_empty() {
        coverage.unknown += 1;
        return None;
    }
    let vals = WeightRule::TABLE.map(|rule| {
        let v = cands.iter().map(|a| rule.outcome(*a));
        let lo = v.clone().fold(f64::INFINITY, f64::min);
        let hi = v.fold(f64::NEG_INFINITY, f64::max);
        (lo, hi)
    });
    if exact.is_some() {
        coverage.exact += 1;
    } else if vals.iter().all(|(l, h)| h - l < 1e-9) {
        coverage.inferred += 1;
    } else {
        coverage.ambiguous += 1;
    }
    Some(vals)
}

fn rank(
    cells: &[RangeCell],
    agents: &[String],
    key: impl Fn(&RangeCell) -> Option<f64>,
) -> Vec<String> {
    let mut v: Vec<(f64, &String)> = cells
        .iter()
        .zip(agents)
        .filter(|(_, a)| a.as_str() != ALL)
        .filter_map(|(c, a)| key(c).map(|x| (x, a)))
        .collect();
    v.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    v.into_iter().map(|(_, a)| a.clone()).collect()
}

/// Computes the table. `totals` maps scenario ids to (required, bonus) axis totals when a
/// dataset is known. One pass over the rows: each run is added to the cells of its group (its
/// category, and all core tickets) for its agent and for `All`, under every rule; no per-run
/// value is kept.
pub fn build(
    rows: &[ManifestRow],
    fam: &Families,
    details: &RunDetails,
    totals: &HashMap<String, (u32, u32)>,
    cols: &[String],
) -> Sensitivity {
    let mut coverage = Coverage::default();
    let mut groups: Vec<(String, Option<Group>)> = Category::ALL
        .iter()
        .map(|c| (c.label().to_string(), Some(Group::Category(*c))))
        .collect();
    groups.push(("All core tickets".into(), None));
    // A run enters its agent's column and every `All` column (as a column named `All` reads
    // every run).
    let col_of: HashMap<&str, usize> = cols
        .iter()
        .enumerate()
        .filter(|(_, a)| a.as_str() != ALL)
        .map(|(j, a)| (a.as_str(), j))
        .collect();
    let all_cols: Vec<usize> = (0..cols.len()).filter(|j| cols[*j] == ALL).collect();
    let rules = WeightRule::TABLE.len();
    let (n_groups, n_cols) = (groups.len(), cols.len());
    let at = |k: usize, g: usize, c: usize| (k * n_groups + g) * n_cols + c;
    let fresh = || vec![Estimator::new(Kind::MeanOfPassMeans); rules * n_groups * n_cols];
    let (mut lo, mut hi) = (fresh(), fresh());
    let mut cache: DecompositionCache = HashMap::new();
    for (i, r) in rows.iter().enumerate() {
        let Some(v) = row_value(r, details, totals, &mut cache, &mut coverage) else {
            continue;
        };
        let (layer, cat) = fam.kind_of[i];
        let own = col_of.get(r.agent.as_str()).copied();
        for (g, (_, pick)) in groups.iter().enumerate() {
            let inside = match pick {
                Some(grp) => grp.contains_kind(layer, cat),
                None => matches!(layer, Some(Layer::Base | Layer::Cex)),
            };
            if !inside {
                continue;
            }
            for c in own.iter().chain(&all_cols).copied() {
                for (k, (l, h)) in v.iter().enumerate() {
                    lo[at(k, g, c)].add(0, fam.pass_of[i], *l, 1.0);
                    hi[at(k, g, c)].add(0, fam.pass_of[i], *h, 1.0);
                }
            }
        }
    }
    let mut cells = Vec::new();
    let mut ranking = Vec::new();
    let mut certain = Vec::new();
    for k in 0..rules {
        let mut rule_cells = Vec::new();
        let mut rule_rank = Vec::new();
        let mut rule_certain = Vec::new();
        for g in 0..n_groups {
            let row: Vec<RangeCell> = (0..n_cols)
                .map(|c| RangeCell {
                    lo: lo[at(k, g, c)].point(),
                    hi: hi[at(k, g, c)].point(),
                })
                .collect();
            let by_mid = rank(&row, cols, RangeCell::mid);
            rule_certain
                .push(by_mid == rank(&row, cols, |c| c.lo) && by_mid == rank(&row, cols, |c| c.hi));
            rule_rank.push(by_mid);
            rule_cells.push(row);
        }
        cells.push(rule_cells);
        ranking.push(rule_rank);
        certain.push(rule_certain);
    }
    Sensitivity {
        title: "Weight sensitivity — Outcome (core tickets) and agent ranking under other required/bonus weights".into(),
        rules: WeightRule::TABLE.iter().map(WeightRule::label).collect(),
        rows: groups.into_iter().map(|(l, _)| l).collect(),
        agents: cols.to_vec(),
        cells,
        ranking,
        ranking_certain: certain,
        coverage,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultbench_core::judge::OutcomeRule;

    #[test]
    fn the_paper_and_strict_rules_agree_with_the_judge() {
        for mt in 0..5 {
            for bt in 0..4 {
                for mp in 0..=mt {
                    for bp in 0..=bt {
                        let a = AxisCounts {
                            must_passed: mp,
                            must_total: mt,
                            bonus_passed: bp,
                            bonus_total: bt,
                        };
                        let want = OutcomeRule::Release.score(mp, mt, bp, bt);
                        assert!((PAPER.outcome(a) - want).abs() < 1e-12);
                        let strict = WeightRule::TABLE[3];
                        let want = OutcomeRule::Strict.score(mp, mt, bp, bt);
                        assert!((strict.outcome(a) - want).abs() < 1e-12);
                    }
                }
            }
        }
    }

    #[test]
    fn outcome_values_decompose() {
        // 0.7: all required, no bonus (one answer under every rule).
        let d = decompositions(0.7, None);
        assert!(!d.is_empty());
        for rule in WeightRule::TABLE {
            let v: Vec<f64> = d.iter().map(|a| rule.outcome(*a)).collect();
            assert!(v.iter().all(|x| (x - v[0]).abs() < 1e-9), "{rule:?} {v:?}");
        }
        assert!((WeightRule::TABLE[0].outcome(d[0]) - 0.6).abs() < 1e-9);
        // 0.75 is ambiguous under the strict rule unless the totals are known.
        let strict = WeightRule::TABLE[3];
        let s: Vec<f64> = decompositions(0.75, None)
            .iter()
            .map(|a| strict.outcome(*a))
            .collect();
        assert!(s.iter().any(|x| *x < 0.1) && s.iter().any(|x| *x > 0.7));
        let known = decompositions(0.75, Some((4, 0)));
        assert_eq!(known.len(), 1);
        assert_eq!(known[0].must_passed, 3);
        assert!(decompositions(0.123, None).is_empty());
    }
}
