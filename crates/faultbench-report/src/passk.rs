//! pass@k and pass^k (consistency), and the cost of a correct diagnosis.
//!
//! **Correct.** A run is *correct* when it was answered (`scored`) and its diagnosis-correctness
//! part earned full credit: every required axis (`assert-` and `must-`) of `[SCORING-AXES]`
//! passed — the 0.7 part of the outcome is whole. The bonus (explanation) axes do not matter.
//! The axis counts come from the run's full record when there is one; from the registry's
//! outcome value otherwise ([`decompositions`]: with at most 6 required and 4 bonus axes most
//! values decompose one way). When several decompositions fit and disagree, or none does, the
//! run is correct when its outcome is at least 0.7 (which every fully correct diagnosis
//! reaches); [`Coverage`] counts the runs of each route. Timeouts (`no_submission`,
//! `no_output`) are trials that are not correct; infrastructure statuses and `judge_failed`
//! are not trials at all (they measured no agent).
//!
//! **pass@k and pass^k.** A *task* is one (arm, topology, scenario, agent) with `n` trials of
//! which `c` are correct. With `k ≤ n`, τ-bench's unbiased estimators:
//! pass^k = C(c, k) / C(n, k) — the chance that k trials drawn without replacement are *all*
//! correct; pass@k = 1 − C(n − c, k) / C(n, k) — that *at least one* is. A table cell is the
//! mean over the tasks with at least k trials (per agent, and over all agents' tasks for
//! `All`), per category and over all categories; k = 1 … the most passes of any task. At
//! k = 1 both equal the share of correct trials.
//!
//! **Cost per correct diagnosis** = the agent's USD over all its runs (timeouts included: they
//! were paid for) / its correct runs.
//!
//! Intervals: each cell is a pooled estimator over its tasks (or runs) keyed by scenario
//! family, bootstrapped with the report's other tables ([`crate::stats`]).

use super::cells::{Families, Plan};
use super::details::{AxisCounts, RunDetails};
use super::metrics::{ALL, answered, timeout};
use super::sensitivity::decompositions;
use super::stats::{Bootstrap, Estimator, Interval, Kind};
use faultbench_core::category::Category;
use faultbench_core::record::ManifestRow;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// Largest k reported (a root with more passes reports k up to this).
pub const MAX_K: u32 = 20;

/// How each answered run's correctness was decided.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Coverage {
    /// Answered runs.
    pub answered: usize,
    /// From the full record's axis counts.
    pub exact: usize,
    /// From the registry's outcome value, one decomposition (or several that agree).
    pub inferred: usize,
    /// Outcome ≥ 0.7 (decompositions disagree, or none fits).
    pub by_threshold: usize,
}

/// One cell: the value, its interval, and how many tasks (or runs) it is over.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct PassCell {
    /// The mean (None without tasks).
    pub value: Option<f64>,
    /// Bootstrap 95 % interval.
    pub ci: Option<Interval>,
    /// Tasks (or, for cost, correct runs).
    pub n: usize,
}

/// One row: a group (a category, or all) and a k.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PassRow {
    /// `Correct-Fault`, …, or `All categories`.
    pub group: String,
    /// k.
    pub k: u32,
    /// pass^k per column.
    pub pass_hat: Vec<PassCell>,
    /// pass@k per column.
    pub pass_at: Vec<PassCell>,
}

/// The pass@k / pass^k table, and cost per correct diagnosis.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PassK {
    /// Columns: agents, then `All`.
    pub agents: Vec<String>,
    /// The largest k.
    pub max_k: u32,
    /// Rows: each group, k = 1 … max_k.
    pub rows: Vec<PassRow>,
    /// USD per correct diagnosis, per column.
    pub cost_per_correct: Vec<PassCell>,
    /// Correct runs per column.
    pub correct: Vec<usize>,
    /// How correctness was decided.
    pub coverage: Coverage,
}

/// Whether a run was correct, and by which route (see the module docs).
fn correctness(r: &ManifestRow, details: &RunDetails, cov: &mut Coverage) -> Option<bool> {
    if !answered(r) {
        return timeout(r).then_some(false);
    }
    cov.answered += 1;
    let full = |a: &AxisCounts| a.must_total > 0 && a.must_passed >= a.must_total;
    if let Some(a) = details.get(r).and_then(|d| d.axes) {
        cov.exact += 1;
        return Some(full(&a));
    }
    let outcome = r.outcome_score.unwrap_or(0.0);
    // Every scenario has required axes (at least its `assert-` ones): decompositions without
    // a required pool are not candidates.
    let d: Vec<AxisCounts> = decompositions(outcome, None)
        .into_iter()
        .filter(|a| a.must_total > 0)
        .collect();
    if let Some(first) = d.first()
        && d.iter().all(|a| full(a) == full(first))
    {
        cov.inferred += 1;
        return Some(full(first));
    }
    cov.by_threshold += 1;
    Some(outcome >= 0.7 - 1e-9)
}

/// C(n, k) as a float (exact for the small numbers of passes benchmarks have).
fn choose(n: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    (0..k).fold(1.0, |acc, i| acc * f64::from(n - i) / f64::from(i + 1))
}

/// pass^k of a task with `n` trials, `c` correct.
pub fn pass_hat_k(n: u32, c: u32, k: u32) -> f64 {
    choose(c, k) / choose(n, k)
}

/// pass@k of a task with `n` trials, `c` correct.
pub fn pass_at_k(n: u32, c: u32, k: u32) -> f64 {
    1.0 - choose(n - c.min(n), k) / choose(n, k)
}

struct Task {
    family: u32,
    category: Category,
    agent: usize,
    n: u32,
    c: u32,
}

const GROUPS: [(&str, Option<Category>); 5] = [
    ("Correct-Fault", Some(Category::CorrectFault)),
    ("False-Premise", Some(Category::FalsePremise)),
    ("Wrong-Device", Some(Category::WrongDevice)),
    ("Wrong-Cause", Some(Category::WrongCause)),
    ("All categories", None),
];

/// Computes the table; its intervals are bootstrapped through `plan` (one table of its own).
pub fn build(
    rows: &[ManifestRow],
    fam: &Families,
    details: &RunDetails,
    cols: &[String],
    plan: &mut Plan,
    boot: Bootstrap,
) -> PassK {
    let col_of: HashMap<&str, usize> = cols
        .iter()
        .enumerate()
        .filter(|(_, a)| a.as_str() != ALL)
        .map(|(i, a)| (a.as_str(), i))
        .collect();
    let all_col = cols.iter().position(|a| a == ALL);
    let mut cov = Coverage::default();
    let mut tasks: BTreeMap<(&str, &str, &str, &str), Task> = BTreeMap::new();
    let ncols = cols.len();
    let mut cost: Vec<Estimator> = (0..ncols).map(|_| Estimator::new(Kind::Pooled)).collect();
    let mut correct = vec![0usize; ncols];
    for (i, r) in rows.iter().enumerate() {
        let Some(col) = col_of.get(r.agent.as_str()).copied() else {
            continue;
        };
        let ok = correctness(r, details, &mut cov);
        let f = fam.family_of[i];
        let hit = f64::from(u8::from(ok == Some(true)));
        for c in [Some(col), all_col].into_iter().flatten() {
            cost[c].add(f, 0, r.cost_usd, hit);
            correct[c] += usize::from(ok == Some(true));
        }
        let Some(ok) = ok else { continue };
        let t = tasks
            .entry((&r.arm, &r.topology, &r.scenario_id, &r.agent))
            .or_insert(Task {
                family: f,
                category: fam.kind_of[i].1,
                agent: col,
                n: 0,
                c: 0,
            });
        t.n += 1;
        t.c += u32::from(ok);
    }
    let max_k = tasks.values().map(|t| t.n).max().unwrap_or(0).min(MAX_K);
    // Per (group, k, column): a pass^k and a pass@k estimator over tasks.
    let mut stats = Vec::new();
    for (label, group) in GROUPS {
        for k in 1..=max_k {
            let mut hat: Vec<Estimator> =
                (0..ncols).map(|_| Estimator::new(Kind::Pooled)).collect();
            let mut at: Vec<Estimator> = (0..ncols).map(|_| Estimator::new(Kind::Pooled)).collect();
            for t in tasks.values() {
                if t.n < k || group.is_some_and(|g| g != t.category) {
                    continue;
                }
                for c in [Some(t.agent), all_col].into_iter().flatten() {
                    hat[c].add(t.family, 0, pass_hat_k(t.n, t.c, k), 1.0);
                    at[c].add(t.family, 0, pass_at_k(t.n, t.c, k), 1.0);
                }
            }
            let hat: Vec<_> = hat.into_iter().map(|e| reg(plan, e)).collect();
            let at: Vec<_> = at.into_iter().map(|e| reg(plan, e)).collect();
            stats.push((label, k, hat, at));
        }
    }
    let cost: Vec<_> = cost.into_iter().map(|e| reg(plan, e)).collect();
    let iv = plan.run_table(boot);
    let cell = |(s, n): (super::cells::Stat, usize)| PassCell {
        value: iv.point(s),
        ci: iv.get(s),
        n,
    };
    PassK {
        agents: cols.to_vec(),
        max_k,
        rows: stats
            .into_iter()
            .map(|(group, k, hat, at)| PassRow {
                group: group.to_string(),
                k,
                pass_hat: hat.into_iter().map(cell).collect(),
                pass_at: at.into_iter().map(cell).collect(),
            })
            .collect(),
        cost_per_correct: cost
            .into_iter()
            .zip(&correct)
            .map(|((s, _), &n)| PassCell {
                value: iv.point(s).filter(|_| n > 0),
                ci: iv.get(s).filter(|_| n > 0),
                n,
            })
            .collect(),
        correct,
        coverage: cov,
    }
}

/// Registers an estimator, keeping how many values it holds (tasks or runs).
fn reg(plan: &mut Plan, e: Estimator) -> (super::cells::Stat, usize) {
    let n = e.adds();
    (plan.estimator(e), n)
}

impl PassK {
    /// The table in Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::from("### pass^k and pass@k — consistency across passes\n\n");
        out.push_str("A run is *correct* when every required axis passed (the 0.7 diagnosis-correctness part earned in full); timeouts count as not correct. pass^k: all k passes of a task correct; pass@k: at least one (τ-bench's estimators over the tasks with ≥ k passes). Mean over tasks [bootstrap 95% interval] (tasks).\n\n");
        let c = &self.coverage;
        out.push_str(&format!(
            "Correctness of the {} answered runs: {} from full records, {} from the outcome value, {} by outcome ≥ 0.7.\n\n",
            c.answered, c.exact, c.inferred, c.by_threshold
        ));
        let names: Vec<String> = self.agents.iter().map(|a| super::labels::md(a)).collect();
        out.push_str(&format!("| | k | {} |\n", names.join(" | ")));
        out.push_str(&format!(
            "|---|---:|{}\n",
            "---:|".repeat(self.agents.len())
        ));
        let fmt = |c: &PassCell| match c.value {
            Some(v) => match c.ci {
                Some(ci) => format!("{v:.3} {} ({})", ci.format(false), c.n),
                None => format!("{v:.3} ({})", c.n),
            },
            None => "–".into(),
        };
        for r in &self.rows {
            let hat: Vec<String> = r.pass_hat.iter().map(fmt).collect();
            out.push_str(&format!(
                "| {} pass^{} | {} | {} |\n",
                r.group,
                r.k,
                r.k,
                hat.join(" | ")
            ));
        }
        for r in &self.rows {
            let at: Vec<String> = r.pass_at.iter().map(fmt).collect();
            out.push_str(&format!(
                "| {} pass@{} | {} | {} |\n",
                r.group,
                r.k,
                r.k,
                at.join(" | ")
            ));
        }
        let cost: Vec<String> = self
            .cost_per_correct
            .iter()
            .map(|c| match c.value {
                Some(v) => match c.ci {
                    Some(ci) => format!("${v:.4} [${:.4}, ${:.4}] ({} correct)", ci.lo, ci.hi, c.n),
                    None => format!("${v:.4} ({} correct)", c.n),
                },
                None => format!("– ({} correct)", c.n),
            })
            .collect();
        out.push_str(&format!(
            "| USD per correct diagnosis (agent spend, timeouts included) | | {} |\n",
            cost.join(" | ")
        ));
        out
    }

    /// The row of a group and k (e.g. `All categories`, k = 1).
    pub fn row(&self, group: &str, k: u32) -> Option<&PassRow> {
        self.rows.iter().find(|r| r.group == group && r.k == k)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn estimators_follow_tau_bench() {
        // 3 passes, 2 correct.
        assert!((pass_hat_k(3, 2, 1) - 2.0 / 3.0).abs() < 1e-12);
        assert!((pass_hat_k(3, 2, 2) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(pass_hat_k(3, 2, 3), 0.0);
        assert!((pass_at_k(3, 2, 1) - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(pass_at_k(3, 2, 2), 1.0);
        assert_eq!(pass_at_k(3, 0, 3), 0.0);
        assert_eq!(pass_hat_k(3, 3, 3), 1.0);
    }

    fn row(scenario: &str, agent: &str, pass: u32, status: &str, outcome: f64) -> ManifestRow {
        let scored = status == "scored";
        super::super::parse_row(&format!(
            "base80,p{pass},T,{scenario},{agent},m,{status},True,True,{},,,1,1,0,0,1,0.5,1.0",
            if scored {
                outcome.to_string()
            } else {
                String::new()
            }
        ))
        .unwrap()
    }

    /// Two agents, one scenario, three passes: `a` correct in 2 of 3 (one a timeout), `b` in
    /// 3 of 3; an infrastructure failure is no trial.
    #[test]
    fn the_table_counts_trials_and_correct_runs_as_defined() {
        let rows = vec![
            row("s1", "a", 1, "scored", 1.0),
            row("s1", "a", 2, "scored", 0.7),
            row("s1", "a", 3, "no_submission", 0.0),
            row("s1", "b", 1, "scored", 1.0),
            row("s1", "b", 2, "scored", 1.0),
            row("s1", "b", 3, "scored", 0.85),
            row("s1", "b", 4, "deploy_incomplete", 0.0),
            // 0.3 = no required axis passed, every bonus axis: not correct.
            row("s2", "a", 1, "scored", 0.3),
        ];
        let fam = Families::of(&rows);
        let details = RunDetails::default();
        let cols: Vec<String> = ["a", "b", ALL].iter().map(|s| s.to_string()).collect();
        let mut plan = Plan::new(&rows, &details, &fam);
        let boot = Bootstrap {
            resamples: 0,
            seed: 0,
        };
        let t = build(&rows, &fam, &details, &cols, &mut plan, boot);
        assert_eq!(t.max_k, 3, "the infrastructure failure is no trial");
        assert_eq!(t.correct, vec![2, 3, 5]);
        let all = |k| t.row("All categories", k).unwrap();
        // a: s1 (3 trials, 2 correct) and s2 (1 trial, 0 correct).
        assert!((all(1).pass_hat[0].value.unwrap() - (2.0 / 3.0 + 0.0) / 2.0).abs() < 1e-12);
        assert_eq!(all(1).pass_hat[0].n, 2);
        assert!((all(2).pass_hat[0].value.unwrap() - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(all(2).pass_hat[0].n, 1, "s2 has one trial");
        assert_eq!(all(3).pass_hat[0].value, Some(0.0));
        assert_eq!(all(3).pass_at[0].value, Some(1.0));
        assert_eq!(all(3).pass_hat[1].value, Some(1.0));
        // All: a's s1 task and b's s1 task.
        assert_eq!(all(3).pass_hat[2].value, Some(0.5));
        // Cost: a spent 4 × 0.5 over 2 correct runs.
        assert_eq!(t.cost_per_correct[0].value, Some(1.0));
        assert_eq!(t.coverage.answered, 6);
        assert!(t.markdown().contains("All categories pass^3"));
    }
}
