//! How often two judges agree on the same runs.
//!
//! For each run judged by both, [`Agreement::add`] compares:
//! - **outcome correctness**: both say correct (outcome ≥ 0.7) or both say not — the headline
//!   number, with Cohen's κ and a 2×2 table;
//! - the **outcome value** (mean absolute difference);
//! - **per axis**: the pass/fail of every `assert`/`must`/`bonus` axis both judged, grouped by
//!   axis family (`assert-no-anomaly`, `must-identify-device`, `must-identify-component`,
//!   `must-other`, `bonus`);
//! - **fix** (exact agreement on {0, 0.5, 1}) and **reasoning** (mean absolute difference)
//!   where both have one.
//!
//! Results are broken down by category and by group (e.g. the release's arm), and every run
//! whose correctness differs is kept with the axes the judges split on.
//!
//! ```
//! use faultbench_core::judge::Scores;
//! use faultbench_core::Category;
//! use faultbench_judge::agree::Agreement;
//!
//! let mut a = Scores::new("rubric");
//! a.outcome = 1.0;
//! let mut b = Scores::new("llm");
//! b.outcome = 0.35;
//! let mut ag = Agreement::new("rubric", "llm");
//! ag.add("run-1", Category::FalsePremise, "naive", &a, &b);
//! assert_eq!(ag.outcome_agree, 0);
//! assert_eq!(ag.disagreements.len(), 1);
//! ```

use faultbench_core::Category;
use faultbench_core::judge::Scores;
use faultbench_core::scenario::AxisKind;
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Agreement counts: how many of `total` agreed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Cases where both judges agreed.
    pub agree: usize,
    /// Cases compared.
    pub total: usize,
}

impl Tally {
    fn add(&mut self, agree: bool) {
        self.total += 1;
        self.agree += usize::from(agree);
    }

    /// agree / total (0 when empty).
    pub fn rate(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.agree as f64 / self.total as f64
        }
    }
}

/// An axis on which the judges split.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AxisSplit {
    /// The axis line.
    pub axis: String,
    /// Judge A's pass.
    pub a_pass: bool,
    /// Judge B's pass.
    pub b_pass: bool,
    /// Judge A's rationale.
    pub a_why: String,
    /// Judge B's rationale.
    pub b_why: String,
}

/// A run on which the judges disagree about correctness.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Disagreement {
    /// Run label (path or id).
    pub run: String,
    /// Category.
    pub category: Category,
    /// Outcome by judge A.
    pub a_outcome: f64,
    /// Outcome by judge B.
    pub b_outcome: f64,
    /// Axes the judges split on.
    pub axes: Vec<AxisSplit>,
}

/// Agreement between judge A and judge B over many runs.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Agreement {
    /// Name of judge A.
    pub judge_a: String,
    /// Name of judge B.
    pub judge_b: String,
    /// Runs compared.
    pub runs: usize,
    /// Runs whose correctness (outcome ≥ 0.7) agrees.
    pub outcome_agree: usize,
    /// \[a correct\]\[b correct\] counts.
    pub confusion: [[usize; 2]; 2],
    /// Sum of |outcome_a − outcome_b|.
    outcome_abs_diff: f64,
    /// Correctness agreement per category.
    pub by_category: BTreeMap<String, Tally>,
    /// Correctness agreement per group.
    pub by_group: BTreeMap<String, Tally>,
    /// Per-axis pass/fail agreement per axis family.
    pub by_axis_family: BTreeMap<String, Tally>,
    /// Exact fix agreement where both judged the fix.
    pub fix: Tally,
    /// Sum of |reasoning_a − reasoning_b| and how many runs had both.
    reasoning_abs_diff: f64,
    /// Runs with a reasoning score from both judges.
    pub reasoning_runs: usize,
    /// Runs whose correctness differs.
    pub disagreements: Vec<Disagreement>,
    /// Every axis the judges split on, with its run (also on runs whose correctness agrees).
    pub axis_splits: Vec<(String, AxisSplit)>,
}

/// The family an axis line belongs to, for the per-axis breakdown.
pub fn axis_family(axis: &str, kind: AxisKind) -> String {
    let slug = axis.split(':').next().unwrap_or("").trim();
    match kind {
        AxisKind::Assert => slug.to_string(),
        AxisKind::Must if slug == "must-identify-device" || slug == "must-identify-component" => {
            slug.to_string()
        }
        AxisKind::Must => "must-other".into(),
        other => other.as_str().to_string(),
    }
}

impl Agreement {
    /// An empty comparison of judge `a` against judge `b`.
    pub fn new(a: impl Into<String>, b: impl Into<String>) -> Self {
        Agreement {
            judge_a: a.into(),
            judge_b: b.into(),
            ..Default::default()
        }
    }

    /// Compares the two judges' scores of one run.
    pub fn add(&mut self, run: &str, category: Category, group: &str, a: &Scores, b: &Scores) {
        let (ca, cb) = (a.is_correct(), b.is_correct());
        let same = ca == cb;
        self.runs += 1;
        self.outcome_agree += usize::from(same);
        self.confusion[usize::from(ca)][usize::from(cb)] += 1;
        self.outcome_abs_diff += (a.outcome - b.outcome).abs();
        self.by_category
            .entry(category.label().to_string())
            .or_default()
            .add(same);
        self.by_group
            .entry(group.to_string())
            .or_default()
            .add(same);
        let mut splits = Vec::new();
        for va in a.per_axis.iter().filter(|v| v.kind.counts_for_outcome()) {
            let Some(vb) = b
                .per_axis
                .iter()
                .find(|v| v.axis.trim() == va.axis.trim() && v.kind == va.kind)
            else {
                continue;
            };
            let (pa, pb) = (va.score >= 1.0, vb.score >= 1.0);
            self.by_axis_family
                .entry(axis_family(&va.axis, va.kind))
                .or_default()
                .add(pa == pb);
            if pa != pb {
                splits.push(AxisSplit {
                    axis: va.axis.clone(),
                    a_pass: pa,
                    b_pass: pb,
                    a_why: va.rationale.clone(),
                    b_why: vb.rationale.clone(),
                });
            }
        }
        if let (Some(fa), Some(fb)) = (a.fix, b.fix) {
            self.fix.add((fa - fb).abs() < 1e-9);
        }
        if let (Some(ra), Some(rb)) = (a.reasoning, b.reasoning) {
            self.reasoning_runs += 1;
            self.reasoning_abs_diff += (ra - rb).abs();
        }
        self.axis_splits
            .extend(splits.iter().map(|x| (run.to_string(), x.clone())));
        if !same {
            self.disagreements.push(Disagreement {
                run: run.to_string(),
                category,
                a_outcome: a.outcome,
                b_outcome: b.outcome,
                axes: splits,
            });
        }
    }

    /// Share of runs whose correctness agrees.
    pub fn outcome_rate(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.outcome_agree as f64 / self.runs as f64
        }
    }

    /// Mean |outcome_a − outcome_b|.
    pub fn outcome_mae(&self) -> f64 {
        if self.runs == 0 {
            0.0
        } else {
            self.outcome_abs_diff / self.runs as f64
        }
    }

    /// Mean |reasoning_a − reasoning_b| over runs where both judged reasoning.
    pub fn reasoning_mae(&self) -> Option<f64> {
        (self.reasoning_runs > 0).then(|| self.reasoning_abs_diff / self.reasoning_runs as f64)
    }

    /// Cohen's κ of the correctness verdicts (chance-corrected agreement; 1 is perfect).
    pub fn kappa(&self) -> f64 {
        let n = self.runs as f64;
        if n == 0.0 {
            return 0.0;
        }
        let c = &self.confusion;
        let po = (c[0][0] + c[1][1]) as f64 / n;
        let a1 = (c[1][0] + c[1][1]) as f64 / n;
        let b1 = (c[0][1] + c[1][1]) as f64 / n;
        let pe = a1 * b1 + (1.0 - a1) * (1.0 - b1);
        if (1.0 - pe).abs() < 1e-12 {
            1.0
        } else {
            (po - pe) / (1.0 - pe)
        }
    }

    /// Share of axes (all families) on which the judges agree.
    pub fn axis_tally(&self) -> Tally {
        self.by_axis_family
            .values()
            .fold(Tally::default(), |acc, t| Tally {
                agree: acc.agree + t.agree,
                total: acc.total + t.total,
            })
    }

    /// Every axis split, one block per axis (for studying a judge's rules).
    pub fn render_axis_splits(&self) -> String {
        let mut s = String::new();
        for (run, ax) in &self.axis_splits {
            let _ = writeln!(
                s,
                "- {run}\n    {}: {} {} / {} {}\n      {}: {}\n      {}: {}",
                ax.axis,
                self.judge_a,
                if ax.a_pass { "pass" } else { "fail" },
                self.judge_b,
                if ax.b_pass { "pass" } else { "fail" },
                self.judge_a,
                ax.a_why,
                self.judge_b,
                ax.b_why
            );
        }
        s
    }

    /// A plain-text report.
    pub fn render(&self, show_disagreements: bool) -> String {
        let pct = |t: &Tally| format!("{:>3}/{:<3} {:>5.1}%", t.agree, t.total, t.rate() * 100.0);
        let mut s = String::new();
        let _ = writeln!(
            s,
            "{} vs {} on {} run(s)",
            self.judge_a, self.judge_b, self.runs
        );
        let _ = writeln!(
            s,
            "outcome correctness (>= 0.7) agreement: {}/{} = {:.1}%   kappa {:.2}   outcome MAE {:.3}",
            self.outcome_agree,
            self.runs,
            self.outcome_rate() * 100.0,
            self.kappa(),
            self.outcome_mae()
        );
        let c = &self.confusion;
        let _ = writeln!(
            s,
            "  {a} correct & {b} correct {}   {a} correct & {b} wrong {}   {a} wrong & {b} correct {}   both wrong {}",
            c[1][1],
            c[1][0],
            c[0][1],
            c[0][0],
            a = self.judge_a,
            b = self.judge_b
        );
        let _ = writeln!(s, "by category:");
        for (k, t) in &self.by_category {
            let _ = writeln!(s, "  {k:<16} {}", pct(t));
        }
        let _ = writeln!(s, "by group:");
        for (k, t) in &self.by_group {
            let _ = writeln!(s, "  {k:<16} {}", pct(t));
        }
        let _ = writeln!(s, "per axis (pass/fail agreement):");
        for (k, t) in &self.by_axis_family {
            let _ = writeln!(s, "  {k:<28} {}", pct(t));
        }
        let _ = writeln!(s, "  {:<28} {}", "all axes", pct(&self.axis_tally()));
        if self.fix.total > 0 {
            let _ = writeln!(s, "fix exact agreement: {}", pct(&self.fix));
        }
        if let Some(m) = self.reasoning_mae() {
            let _ = writeln!(
                s,
                "reasoning MAE: {m:.3} over {} run(s)",
                self.reasoning_runs
            );
        }
        if show_disagreements && !self.disagreements.is_empty() {
            let _ = writeln!(s, "disagreements on correctness:");
            for d in &self.disagreements {
                let _ = writeln!(
                    s,
                    "- {} [{}] {} {:.3} vs {} {:.3}",
                    d.run,
                    d.category.label(),
                    self.judge_a,
                    d.a_outcome,
                    self.judge_b,
                    d.b_outcome
                );
                for ax in &d.axes {
                    let _ = writeln!(
                        s,
                        "    {}: {} {} / {} {}\n      {}: {}\n      {}: {}",
                        ax.axis,
                        self.judge_a,
                        if ax.a_pass { "pass" } else { "fail" },
                        self.judge_b,
                        if ax.b_pass { "pass" } else { "fail" },
                        self.judge_a,
                        ax.a_why,
                        self.judge_b,
                        ax.b_why
                    );
                }
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultbench_core::judge::AxisVerdict;

    fn scores(judge: &str, outcome: f64, axes: &[(&str, &str, bool)]) -> Scores {
        let mut s = Scores::new(judge);
        s.outcome = outcome;
        for (axis, kind, pass) in axes {
            s.per_axis.push(AxisVerdict {
                axis: axis.to_string(),
                kind: kind.parse().unwrap(),
                score: if *pass { 1.0 } else { 0.0 },
                rationale: String::new(),
            });
        }
        s
    }

    #[test]
    fn counts_and_kappa() {
        let mut ag = Agreement::new("a", "b");
        let ax = [
            ("must-identify-device: r1", "must", true),
            ("bonus-x", "bonus", true),
        ];
        let bx = [
            ("must-identify-device: r1", "must", true),
            ("bonus-x", "bonus", false),
        ];
        ag.add(
            "1",
            Category::CorrectFault,
            "base",
            &scores("a", 1.0, &ax),
            &scores("b", 0.7, &bx),
        );
        ag.add(
            "2",
            Category::CorrectFault,
            "base",
            &scores("a", 0.0, &[]),
            &scores("b", 0.3, &[]),
        );
        ag.add(
            "3",
            Category::FalsePremise,
            "cex",
            &scores("a", 0.7, &[]),
            &scores("b", 0.35, &[]),
        );
        assert_eq!(ag.runs, 3);
        assert_eq!(ag.outcome_agree, 2);
        assert_eq!(ag.confusion, [[1, 0], [1, 1]]);
        assert_eq!(
            ag.by_axis_family["must-identify-device"],
            Tally { agree: 1, total: 1 }
        );
        assert_eq!(ag.by_axis_family["bonus"], Tally { agree: 0, total: 1 });
        assert_eq!(ag.disagreements.len(), 1);
        assert_eq!(ag.disagreements[0].run, "3");
        // po = 2/3, pa(correct) = 2/3, pb(correct) = 1/3 → pe = 2/9 + 2/9 = 4/9 → κ = 0.4
        assert!((ag.kappa() - 0.4).abs() < 1e-9, "{}", ag.kappa());
        assert!(ag.render(true).contains("disagreements on correctness"));
    }

    #[test]
    fn families() {
        assert_eq!(
            axis_family("assert-identifies: r1", AxisKind::Assert),
            "assert-identifies"
        );
        assert_eq!(axis_family("must-explain-x", AxisKind::Must), "must-other");
        assert_eq!(axis_family("bonus-y: z", AxisKind::Bonus), "bonus");
    }
}
