//! Markdown and CSV renderings of the tables (scores to three decimals, rates as
//! `24.3% (51/210)`, as the paper prints them).

use super::labels::{md, md_join};
use super::metrics::Rate;
use super::tables::{Effort, RateTable, ScoreCell, ScoreTable, Tables};
use faultbench_core::dataset::DatasetStats;

fn score(c: &ScoreCell, with_sd: bool) -> String {
    let Some(m) = c.stat.rounded() else {
        return "–".into();
    };
    let mut s = format!("{m:.3}");
    if let Some(ci) = c.ci {
        s.push_str(&format!(" {}", ci.format(false)));
    }
    if with_sd && let Some(sd) = c.stat.sd {
        s.push_str(&format!(" ±{sd:.3}"));
    }
    if let Some(d) = c.delta {
        s.push_str(&format!(" ({}{:.3}", if d >= 0.0 { "+" } else { "" }, d));
        if let Some(ci) = c.delta_ci {
            s.push_str(&format!(" {}", ci.format(false)));
        }
        s.push(')');
    }
    s
}

/// A score table in Markdown (with per-pass SD and Δ vs the reference row).
pub fn score_table(t: &ScoreTable) -> String {
    let mut out = format!("### {}\n\n", t.title);
    if let Some(r) = &t.delta_vs {
        out.push_str(&format!(
            "Mean over answered runs, averaged over passes; [bootstrap 95% interval] when computed; ± per-pass SD; (Δ vs {r}). n = answered runs.\n\n"
        ));
    }
    out.push_str(&format!("| | {} | n |\n", md_join(&t.agents, " | ")));
    out.push_str(&format!("|---|{}---:|\n", "---:|".repeat(t.agents.len())));
    for (label, row) in t.rows.iter().zip(&t.cells) {
        let cells: Vec<String> = row.iter().map(|c| score(c, true)).collect();
        let n = row.last().map(|c| c.stat.n).unwrap_or(0);
        out.push_str(&format!("| {label} | {} | {n} |\n", cells.join(" | ")));
    }
    out
}

/// A rate table in Markdown.
pub fn rate_table(t: &RateTable) -> String {
    let mut out = format!("### {}\n\n", t.title);
    out.push_str(&format!("| | {} |\n", md_join(&t.agents, " | ")));
    out.push_str(&format!("|---|{}\n", "---:|".repeat(t.agents.len())));
    for (i, (label, row)) in t.rows.iter().zip(&t.cells).enumerate() {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(j, r)| match t.ci(i, j) {
                Some(ci) => format!("{r} {}", ci.format(true)),
                None => r.to_string(),
            })
            .collect();
        out.push_str(&format!("| {label} | {} |\n", cells.join(" | ")));
    }
    out
}

fn num(x: Option<f64>, digits: usize) -> String {
    x.map(|v| format!("{v:.digits$}"))
        .unwrap_or_else(|| "–".into())
}

/// A mean with its interval from `e.cis[field]`, when there is one.
fn num_ci(e: &Effort, field: &str, x: Option<f64>, digits: usize) -> String {
    let mut s = num(x, digits);
    if x.is_some()
        && let Some(ci) = e.cis.get(field)
    {
        s.push_str(&format!(" [{:.digits$}, {:.digits$}]", ci.lo, ci.hi));
    }
    s
}

/// Table 8 in Markdown: the agent's effort and cost, then the judge's cost apart, then the
/// total.
pub fn effort_table(rows: &[Effort]) -> String {
    let mut out = String::from("### Table 8 — Effort and cost per run (answered / timeout)\n\n");
    out.push_str("| Agent | Runs | Timeouts | Tool calls | Input tokens | Output tokens | USD per run | USD total | USD on timeouts | Judge tokens per run (in / out) | Judge USD per run | Judge USD total | USD total, agent + judge |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for e in rows {
        let share = e
            .usd_timeout_share()
            .map(|s| {
                let ci = e
                    .cis
                    .get("usd_timeout_share")
                    .map(|c| format!(" {}", c.format(true)))
                    .unwrap_or_default();
                format!(
                    "{:.1}%{ci} (${:.2} of ${:.2})",
                    s * 100.0,
                    e.usd_timeouts,
                    e.usd_total
                )
            })
            .unwrap_or_else(|| "–".into());
        let judged = e.judged > 0;
        let judge_tokens = if judged {
            format!(
                "{} / {}",
                num(e.judge_in_tokens, 0),
                num(e.judge_out_tokens, 0)
            )
        } else {
            "–".into()
        };
        let (judge_total, all) = if judged {
            (
                format!("{:.2}", e.judge_usd_total),
                format!("{:.2}", e.usd_all()),
            )
        } else {
            (
                "–".into(),
                format!("{:.2} + judge not recorded", e.usd_total),
            )
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} / {} | {} / {} | {} / {} | {} / {} | {:.2} | {share} | {judge_tokens} | {} | {judge_total} | {all} |\n",
            md(&e.agent),
            e.runs,
            Rate {
                num: e.timeouts,
                den: e.runs
            },
            num_ci(e, "tool_calls_a", e.tool_calls_a, 1),
            num_ci(e, "tool_calls_t", e.tool_calls_t, 1),
            num_ci(e, "in_tokens_a", e.in_tokens_a, 0),
            num_ci(e, "in_tokens_t", e.in_tokens_t, 0),
            num_ci(e, "out_tokens_a", e.out_tokens_a, 0),
            num_ci(e, "out_tokens_t", e.out_tokens_t, 0),
            num_ci(e, "usd_a", e.usd_a, 3),
            num_ci(e, "usd_t", e.usd_t, 3),
            e.usd_total,
            num(e.judge_usd, 4),
        ));
    }
    out.push_str("\nAgent columns are the agent's own spend (as the release counts it); the judge's spend is apart (per judged run and in total), then both together. `–`: the registry records no judge spend (the public release's does not).\n");
    out
}

/// Table 2 from dataset statistics.
pub fn dataset_table(st: &DatasetStats) -> String {
    let mut out = String::from("### Table 2 — Dataset composition\n\n");
    out.push_str("| Topology | Correct-Fault | False-Premise | Wrong-Device | Wrong-Cause | Persona rewrites |\n");
    out.push_str("|---|---:|---:|---:|---:|---:|\n");
    let mut topos: Vec<&String> = st.core.keys().chain(st.personas.keys()).collect();
    topos.sort();
    topos.dedup();
    let get = |t: &String, c: &str| st.core.get(t).and_then(|m| m.get(c)).copied().unwrap_or(0);
    for t in topos {
        let p: usize = st.personas.get(t).map(|m| m.values().sum()).unwrap_or(0);
        out.push_str(&format!(
            "| {t} | {} | {} | {} | {} | {p} |\n",
            get(t, "correct_fault"),
            get(t, "false_premise"),
            get(t, "wrong_device"),
            get(t, "wrong_cause")
        ));
    }
    out.push_str("\nMean identifiers per ticket: ");
    let parts: Vec<String> = st
        .identifiers
        .iter()
        .map(|(k, v)| format!("{k} {:.1}", v.mean))
        .collect();
    out.push_str(&parts.join(", "));
    out.push('\n');
    out
}

/// Every table in Markdown.
pub fn all(t: &Tables, dataset: Option<&DatasetStats>) -> String {
    let mut out = String::new();
    if let Some(d) = dataset {
        out.push_str(&dataset_table(d));
        out.push('\n');
    }
    let statuses: Vec<String> = t.statuses.iter().map(|(k, v)| format!("{k} {v}")).collect();
    out.push_str(&format!("{} runs ({})\n\n", t.runs, statuses.join(", ")));
    let presence = super::presence_markdown(&t.presence);
    if !presence.is_empty() {
        out.push_str(&presence);
        out.push('\n');
    }
    for s in [&t.outcome_by_category, &t.outcome_by_persona] {
        out.push_str(&score_table(s));
        out.push('\n');
    }
    out.push_str(&rate_table(&t.over_diagnosis));
    out.push('\n');
    out.push_str(&rate_table(&t.timeouts));
    out.push('\n');
    out.push_str(&score_table(&t.fix));
    out.push('\n');
    out.push_str(&score_table(&t.reasoning));
    out.push('\n');
    out.push_str(&score_table(&t.reasoning_by_persona));
    out.push('\n');
    out.push_str(&effort_table(&t.effort));
    out
}
