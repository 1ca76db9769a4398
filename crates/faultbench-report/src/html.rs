//! The self-contained HTML report: tables rendered from Markdown-like data, charts inline.

use super::Report;
use super::labels::label;
use super::metrics::Rate;
use super::tables::{RateTable, ScoreTable};

// Quotes escaped too: labels also go into attribute values.
use faultbench_core::text::for_html as esc;

fn score_html(t: &ScoreTable) -> String {
    let mut s = format!("<h3>{}</h3>\n<table><tr><th></th>", esc(&t.title));
    for a in &t.agents {
        s.push_str(&format!("<th>{}</th>", esc(&label(a))));
    }
    s.push_str("<th>n</th></tr>\n");
    for (label, row) in t.rows.iter().zip(&t.cells) {
        s.push_str(&format!("<tr><th>{}</th>", esc(label)));
        for c in row {
            let v = match c.stat.rounded() {
                Some(m) => {
                    let mut v = format!("{m:.3}");
                    if let Some(ci) = c.ci {
                        v.push_str(&format!(" <span class=\"ci\">{}</span>", ci.format(false)));
                    }
                    if let Some(sd) = c.stat.sd {
                        v.push_str(&format!(" <small>±{sd:.3}</small>"));
                    }
                    if let Some(d) = c.delta {
                        let class = if d < 0.0 { "neg" } else { "pos" };
                        v.push_str(&format!(
                            " <span class=\"{class}\">({}{d:.3})</span>",
                            if d >= 0.0 { "+" } else { "" }
                        ));
                    }
                    v
                }
                None => "–".into(),
            };
            s.push_str(&format!("<td>{v}</td>"));
        }
        s.push_str(&format!(
            "<td>{}</td></tr>\n",
            row.last().map(|c| c.stat.n).unwrap_or(0)
        ));
    }
    s.push_str("</table>\n");
    s
}

fn rate_html(t: &RateTable) -> String {
    let mut s = format!("<h3>{}</h3>\n<table><tr><th></th>", esc(&t.title));
    for a in &t.agents {
        s.push_str(&format!("<th>{}</th>", esc(&label(a))));
    }
    s.push_str("</tr>\n");
    for (i, (label, row)) in t.rows.iter().zip(&t.cells).enumerate() {
        s.push_str(&format!("<tr><th>{}</th>", esc(label)));
        for (j, c) in row.iter().enumerate() {
            let ci = t
                .ci(i, j)
                .map(|ci| format!(" <span class=\"ci\">{}</span>", ci.format(true)))
                .unwrap_or_default();
            s.push_str(&format!("<td>{}{ci}</td>", esc(&Rate::to_string(c))));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}

/// The configuration the runs were made with, as a table (or a note that none was recorded).
fn configuration_html(r: &Report) -> String {
    let Some(id) = &r.identity else {
        let text = r.configuration();
        let note = text
            .lines()
            .filter(|l| !l.starts_with('#'))
            .collect::<Vec<_>>()
            .join(" ");
        return format!("<h2>Configuration</h2>\n<p>{}</p>\n", esc(note.trim()));
    };
    let mut s = String::from(
        "<h2>Configuration</h2>\n<table class=\"config\"><tr><th>setting</th><th>value</th></tr>\n",
    );
    for (k, v) in id.rows() {
        s.push_str(&format!(
            "<tr><th>{}</th><td>{}</td></tr>\n",
            esc(&k),
            esc(&v)
        ));
    }
    s.push_str("</table>\n");
    if id.adopted {
        s.push_str("<p class=\"warn\">Adopted for runs made before faultbench recorded a configuration (<code>--adopt-config</code>): the user's statement, not a record.</p>\n");
    }
    s
}

/// The page.
pub fn page(r: &Report) -> String {
    let t = &r.tables;
    let mut body = String::new();
    body.push_str(&format!(
        "<p>Source: <code>{}</code> — {} runs.</p>\n",
        esc(&r.source.display().to_string()),
        t.runs
    ));
    if let Some(n) = r
        .notes
        .as_ref()
        .map(|n| n.markdown())
        .filter(|m| !m.is_empty())
    {
        let text = n.replace("> ", "").replace("**", "");
        body.push_str(&format!("<p class=\"warn\">{}</p>\n", esc(text.trim())));
    }
    body.push_str(&configuration_html(r));
    let presence = super::presence_markdown(&t.presence);
    if !presence.is_empty() {
        body.push_str(&format!("<pre>{}</pre>\n", esc(&presence)));
    }
    if !r.warnings.is_empty() {
        body.push_str("<ul class=\"warn\">");
        for w in &r.warnings {
            body.push_str(&format!("<li>{}</li>", esc(w)));
        }
        body.push_str("</ul>\n");
    }
    if let Some(d) = &r.dataset {
        body.push_str(&format!(
            "<pre>{}</pre>\n",
            esc(&super::markdown::dataset_table(d))
        ));
    }
    for (name, svg) in r.charts() {
        body.push_str(&format!("<figure id=\"{}\">{svg}</figure>\n", esc(&name)));
    }
    body.push_str(&score_html(&t.outcome_by_category));
    body.push_str(&score_html(&t.outcome_by_persona));
    body.push_str(&rate_html(&t.over_diagnosis));
    body.push_str(&rate_html(&t.timeouts));
    body.push_str(&score_html(&t.fix));
    body.push_str(&score_html(&t.reasoning));
    body.push_str(&score_html(&t.reasoning_by_persona));
    body.push_str(&format!(
        "<pre>{}</pre>\n",
        esc(&super::markdown::effort_table(&t.effort))
    ));
    let a = &r.analyses;
    body.push_str(&rate_html(&a.variation));
    for g in &a.effort_by_group {
        body.push_str(&format!(
            "<pre>{}</pre>\n",
            esc(&super::markdown_more::group_effort(g))
        ));
    }
    body.push_str(&format!(
        "<pre>{}</pre>\n",
        esc(&super::markdown_more::sensitivity(&a.sensitivity))
    ));
    if let Some(b) = a.bootstrap {
        body.push_str(&format!(
            "<p class=\"ci\">Intervals: percentile bootstrap over scenario families within categories, {} resamples, seed {}.</p>\n",
            b.resamples, b.seed
        ));
    }
    if let Some(repair) = &r.repair {
        body.push_str(&format!("<pre>{}</pre>\n", esc(&repair.markdown())));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\"><title>faultbench report</title>\n<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto;color:#222}}table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:right}}.config td,.config th{{text-align:left}}th:first-child{{text-align:left}}.neg{{color:#b00}}.pos{{color:#070}}small{{color:#777}}.ci{{color:#557;font-size:85%}}.warn{{color:#a60}}figure{{margin:1em 0}}</style></head>\n<body><h1>faultbench report</h1>\n{body}</body></html>\n"
    )
}
