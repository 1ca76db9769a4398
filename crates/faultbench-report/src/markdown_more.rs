//! Markdown and CSV for the analyses (variation, Table 8b, weight sensitivity) and the
//! `statistics.csv` file: every statistic of the report with its bootstrap interval.

use super::analyses::Analyses;
use super::effort_groups::GroupEffort;
use super::labels::md_join;
use super::metrics::Rate;
use super::sensitivity::Sensitivity;
use super::stats::Interval;
use super::tables::{ScoreTable, Tables};
use super::variation::Variation;

fn rate_ci(r: &Rate, ci: Option<Interval>) -> String {
    match ci {
        Some(ci) => format!("{r} {}", ci.format(true)),
        None => r.to_string(),
    }
}

/// The variation table in Markdown.
pub fn variation(v: &Variation) -> String {
    let mut out = format!("### {}\n\n", v.title);
    out.push_str("The paper reports 8% for E1 (\"single runs are noisy\"). Share of cells with at least two answered passes; [bootstrap 95% interval].\n\n");
    out.push_str(&format!("| | {} |\n", md_join(&v.agents, " | ")));
    out.push_str(&format!("|---|{}\n", "---:|".repeat(v.agents.len())));
    for (i, (label, row)) in v.rows.iter().zip(&v.cells).enumerate() {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(j, r)| rate_ci(r, v.ci(i, j)))
            .collect();
        out.push_str(&format!("| {label} | {} |\n", cells.join(" | ")));
    }
    out
}

fn pooled_num(x: f64) -> String {
    if x.abs() >= 1000.0 {
        format!("{x:.0}")
    } else if x.abs() >= 10.0 {
        format!("{x:.1}")
    } else {
        format!("{x:.3}")
    }
}

/// One Table 8b metric in Markdown.
pub fn group_effort(t: &GroupEffort) -> String {
    let mut out = format!("### {}\n\n", t.title);
    out.push_str(&format!("| | {} |\n", md_join(&t.agents, " | ")));
    out.push_str(&format!("|---|{}\n", "---:|".repeat(t.agents.len())));
    for (label, row) in t.rows.iter().zip(&t.cells) {
        let cells: Vec<String> = row
            .iter()
            .map(|c| match c.mean {
                Some(m) => {
                    let mut s = pooled_num(m);
                    if let Some(ci) = c.ci {
                        s.push_str(&format!(" [{}, {}]", pooled_num(ci.lo), pooled_num(ci.hi)));
                    }
                    s.push_str(&format!(" (n={})", c.n));
                    s
                }
                None => "–".into(),
            })
            .collect();
        out.push_str(&format!("| {label} | {} |\n", cells.join(" | ")));
    }
    out
}

/// The weight-sensitivity table in Markdown.
pub fn sensitivity(s: &Sensitivity) -> String {
    let c = &s.coverage;
    let mut out = format!("### {}\n\n", s.title);
    out.push_str(&format!(
        "Axis counts of the {} answered runs: {} exact from full records, {} inferred from the outcome value (one answer), {} ambiguous (their runs enter as a range, shown lo–hi), {} not decomposable (left out).\n\n",
        c.answered, c.exact, c.inferred, c.ambiguous, c.unknown
    ));
    out.push_str(&format!(
        "| Rule | Tickets | {} | Ranking |\n",
        md_join(&s.agents, " | ")
    ));
    out.push_str(&format!(
        "|---|---|{}---|\n",
        "---:|".repeat(s.agents.len())
    ));
    for (k, rule) in s.rules.iter().enumerate() {
        for (i, row) in s.rows.iter().enumerate() {
            let cells: Vec<String> = s.cells[k][i].iter().map(|c| c.format()).collect();
            let mut ranking = md_join(&s.ranking[k][i], " > ");
            if !s.ranking_certain[k][i] {
                ranking.push_str(" (uncertain: ranges overlap)");
            }
            out.push_str(&format!(
                "| {rule} | {row} | {} | {ranking} |\n",
                cells.join(" | ")
            ));
        }
    }
    out
}

/// Every analysis in Markdown.
pub fn analyses(a: &Analyses) -> String {
    let mut out = String::new();
    match a.bootstrap {
        Some(b) => out.push_str(&format!(
            "Intervals: percentile bootstrap, {} resamples of scenario families within categories, seed {}.\n\n",
            b.resamples, b.seed
        )),
        None => out.push_str("Intervals: not computed.\n\n"),
    }
    out.push_str(&variation(&a.variation));
    out.push('\n');
    for t in &a.effort_by_group {
        out.push_str(&group_effort(t));
        out.push('\n');
    }
    out.push_str(&sensitivity(&a.sensitivity));
    out.push('\n');
    out.push_str(&a.pass_k.markdown());
    out
}

/// A text cell safe to open in a spreadsheet: one that would start a formula gets a leading
/// apostrophe.
/// A text cell for the spreadsheet export (formula-leading text neutralised).
fn text(s: &str) -> String {
    super::csv_export::neutralise(s).into_owned()
}

struct Sheet(csv::Writer<Vec<u8>>);

impl Sheet {
    fn row(
        &mut self,
        table: &str,
        row: &str,
        agent: &str,
        value: Option<f64>,
        ci: Option<Interval>,
        n: Option<usize>,
    ) {
        let f = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
        // Writing to memory cannot fail.
        let _ = self.0.write_record([
            text(table),
            text(row),
            text(agent),
            f(value),
            f(ci.map(|c| c.lo)),
            f(ci.map(|c| c.hi)),
            n.map(|n| n.to_string()).unwrap_or_default(),
        ]);
    }
}

fn short(title: &str) -> &str {
    title.split(" — ").next().unwrap_or(title)
}

fn score_rows(w: &mut Sheet, t: &ScoreTable) {
    let name = short(&t.title);
    for (label, row) in t.rows.iter().zip(&t.cells) {
        for (agent, c) in t.agents.iter().zip(row) {
            w.row(name, label, agent, c.stat.mean, c.ci, Some(c.stat.n));
            if let (Some(d), Some(r)) = (c.delta, &t.delta_vs) {
                w.row(
                    name,
                    &format!("{label} Δ vs {r}"),
                    agent,
                    Some(d),
                    c.delta_ci,
                    None,
                );
            }
        }
    }
}

/// `statistics.csv`.
pub fn statistics_csv(t: &Tables, a: &Analyses) -> String {
    let mut w = Sheet(csv::Writer::from_writer(Vec::new()));
    let _ =
        w.0.write_record(["table", "row", "agent", "value", "ci_lo", "ci_hi", "n"]);
    for s in [
        &t.outcome_by_category,
        &t.outcome_by_persona,
        &t.fix,
        &t.reasoning,
        &t.reasoning_by_persona,
    ] {
        score_rows(&mut w, s);
    }
    for r in [&t.over_diagnosis, &t.timeouts] {
        let name = short(&r.title);
        for (i, (label, row)) in r.rows.iter().zip(&r.cells).enumerate() {
            for (j, (agent, c)) in r.agents.iter().zip(row).enumerate() {
                w.row(name, label, agent, c.ratio(), r.ci(i, j), Some(c.den));
            }
        }
    }
    for e in &t.effort {
        for (field, v) in e.fields() {
            w.row(
                "Table 8",
                field,
                &e.agent,
                v,
                e.cis.get(field).copied(),
                Some(e.runs),
            );
        }
    }
    let v = &a.variation;
    for (i, (label, row)) in v.rows.iter().zip(&v.cells).enumerate() {
        for (j, (agent, c)) in v.agents.iter().zip(row).enumerate() {
            w.row(
                "Variation",
                label,
                agent,
                c.ratio(),
                v.ci(i, j),
                Some(c.den),
            );
        }
    }
    for g in &a.effort_by_group {
        let name = format!("Table 8b {}", g.metric);
        for (label, row) in g.rows.iter().zip(&g.cells) {
            for (agent, c) in g.agents.iter().zip(row) {
                w.row(&name, label, agent, c.mean, c.ci, Some(c.n));
            }
        }
    }
    let s = &a.sensitivity;
    for (k, rule) in s.rules.iter().enumerate() {
        for (i, label) in s.rows.iter().enumerate() {
            let name = format!("Sensitivity {rule}");
            for (agent, c) in s.agents.iter().zip(&s.cells[k][i]) {
                match (c.lo, c.hi) {
                    (Some(lo), Some(hi)) if (hi - lo).abs() > 1e-12 => {
                        w.row(
                            &name,
                            &format!("{label} (low end)"),
                            agent,
                            Some(lo),
                            None,
                            None,
                        );
                        w.row(
                            &name,
                            &format!("{label} (high end)"),
                            agent,
                            Some(hi),
                            None,
                            None,
                        );
                    }
                    _ => w.row(&name, label, agent, c.lo, None, None),
                }
            }
        }
    }
    let p = &a.pass_k;
    for r in &p.rows {
        for (agent, (hat, at)) in p.agents.iter().zip(r.pass_hat.iter().zip(&r.pass_at)) {
            let name = format!("pass^{}", r.k);
            w.row(&name, &r.group, agent, hat.value, hat.ci, Some(hat.n));
            let name = format!("pass@{}", r.k);
            w.row(&name, &r.group, agent, at.value, at.ci, Some(at.n));
        }
    }
    for (agent, c) in p.agents.iter().zip(&p.cost_per_correct) {
        w.row(
            "Cost per correct diagnosis",
            "USD",
            agent,
            c.value,
            c.ci,
            Some(c.n),
        );
    }
    String::from_utf8(w.0.into_inner().unwrap_or_default()).unwrap_or_default()
}
