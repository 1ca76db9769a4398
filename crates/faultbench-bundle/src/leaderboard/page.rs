//! The leaderboard page: one table rendered here with every value escaped; the page's only
//! script (allowed by its hash) sorts the rows by their `data-v` attributes.

use super::{Row, Status};
use faultbench_view::html::{STYLE, content_security_policy, esc};

/// The sorting script.
pub const SCRIPT: &str = include_str!("sort.js");

fn num(x: Option<f64>, digits: usize) -> (String, String) {
    match x.filter(|v| v.is_finite()) {
        Some(v) => (format!("{v:.digits$}"), v.to_string()),
        None => ("–".into(), String::new()),
    }
}

fn cell_n(x: Option<f64>, digits: usize) -> String {
    let (shown, v) = num(x, digits);
    format!(
        "<td class=\"n\" data-v=\"{}\">{}</td>",
        esc(&v),
        esc(&shown)
    )
}

fn cell_t(text: &str, sort: &str) -> String {
    format!("<td data-v=\"{}\">{}</td>", esc(sort), esc(text))
}

fn status_cell(r: &Row) -> String {
    let (class, label) = match r.status {
        Status::Verified => ("st-scored", "verified"),
        Status::VerifiedMock => ("st-infra", "verified (mock emulator, not ranked)"),
        Status::Unverified(_) => ("st-unknown", "UNVERIFIED (claimed numbers)"),
        Status::Unreadable => ("st-unknown", "unreadable"),
        Status::RegistryOnly => ("st-no_submission", "registry only (unsigned)"),
    };
    format!(
        "<td data-v=\"{}\"><span class=\"badge {class}\">{}</span><span class=\"muted\"> {}</span></td>",
        esc(label),
        esc(label),
        esc(&r.status_detail)
    )
}

fn row_html(r: &Row, k: Option<u32>) -> String {
    let mut out = String::from("<tr>");
    out.push_str(&match r.rank {
        Some(n) => format!("<td class=\"n\" data-v=\"{n}\">{n}</td>"),
        None => "<td class=\"n\" data-v=\"\">–</td>".into(),
    });
    let entry = match &r.viewer {
        Some(link) => format!("<a href=\"{}\">{}</a>", esc(link), esc(&r.source)),
        None => esc(&r.source),
    };
    out.push_str(&format!("<td data-v=\"{}\">{entry}</td>", esc(&r.source)));
    out.push_str(&status_cell(r));
    out.push_str(&cell_t(&r.agent, &r.agent));
    out.push_str(&cell_t(&r.model, &r.model));
    for o in r.outcome {
        out.push_str(&cell_n(o, 3));
    }
    let (_, over_v) = num(r.over_diagnosis.0, 3);
    out.push_str(&format!(
        "<td class=\"n\" data-v=\"{}\">{}</td>",
        esc(&over_v),
        esc(&r.over_diagnosis.1)
    ));
    out.push_str(&cell_n(r.pass_hat.first().copied().flatten(), 3));
    let at_k = k
        .and_then(|k| r.pass_hat.get(k as usize - 1))
        .copied()
        .flatten();
    out.push_str(&cell_n(at_k, 3));
    let at_max = r.pass_hat.last().copied().flatten();
    out.push_str(&format!(
        "<td class=\"n\" data-v=\"{}\">{}</td>",
        esc(&num(at_max, 3).1),
        esc(&format!("{} (k={})", num(at_max, 3).0, r.pass_hat.len()))
    ));
    out.push_str(&cell_n(r.usd_per_correct, 4));
    out.push_str(&cell_n(Some(r.usd_total), 2));
    out.push_str(&format!(
        "<td class=\"n\" data-v=\"{}\">{}</td>",
        r.runs, r.runs
    ));
    let ds = r
        .dataset
        .as_deref()
        .map(|d| &d[..d.len().min(16)])
        .unwrap_or("–");
    out.push_str(&format!(
        "<td data-v=\"{}\" title=\"{}\"><code>{}</code></td>",
        esc(ds),
        esc(r.dataset.as_deref().unwrap_or("")),
        esc(ds)
    ));
    out.push_str(&cell_t(
        r.signer.as_deref().unwrap_or("–"),
        r.signer.as_deref().unwrap_or(""),
    ));
    out.push_str("</tr>\n");
    out
}

/// The whole page.
pub fn page(rows: &[Row], k: Option<u32>) -> String {
    let csp = content_security_policy(Some(SCRIPT));
    let k_label = k.map_or("pass^K".to_string(), |k| format!("pass^K (K = {k})"));
    let heads: [(&str, bool); 18] = [
        ("rank", true),
        ("entry (run viewer)", false),
        ("verification", false),
        ("agent", false),
        ("model", false),
        ("Correct-Fault", true),
        ("False-Premise", true),
        ("Wrong-Device", true),
        ("Wrong-Cause", true),
        ("over-diagnosis", true),
        ("pass^1", true),
        (&k_label, true),
        ("pass^k, k = passes", true),
        ("USD / correct", true),
        ("USD total", true),
        ("runs", true),
        ("dataset", false),
        ("signer", false),
    ];
    let head: String = heads
        .iter()
        .map(|(h, n)| {
            format!(
                "<th scope=\"col\"{}>{}</th>",
                if *n { " data-type=\"n\"" } else { "" },
                esc(h)
            )
        })
        .collect();
    let body: String = rows.iter().map(|r| row_html(r, k)).collect();
    let ranked = match k {
        Some(k) => format!(
            "Verified bundles are ranked by pass^{k} over all categories (K = {k}: the most passes every ranked bundle has), ties by the Correct-Fault outcome"
        ),
        None => "No bundle is verified: nothing is ranked".into(),
    };
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n<meta name=\"referrer\" content=\"no-referrer\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>faultbench leaderboard</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>faultbench leaderboard</h1>\n<p>{}. Only bundles that pass every rule of <code>faultbench verify</code> are ranked; unverified bundles show their claimed numbers and the first rule they break; a registry-only entry has numbers nobody can check. Outcome: mean over answered runs per pass, then over passes (Table 4). Over-diagnosis: standard false-premise tickets. A run is correct when every required axis passed; pass^k: all k passes of a scenario correct, over the scenarios with at least k passes (so columns of different k may cover different scenarios, e.g. E1's three-pass core tickets and E2's two-pass persona tickets). Click a column header (or focus it and press Enter) to sort.</p>\n<table id=\"board\" aria-label=\"leaderboard\"><thead><tr>{head}</tr></thead>\n<tbody>\n{body}</tbody></table>\n<script>{SCRIPT}</script>\n</body></html>\n",
        esc(&csp),
        esc(&ranked)
    )
}
