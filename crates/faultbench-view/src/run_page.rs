//! One run's page: what the agent saw, what it did turn by turn, what it concluded beside the
//! ground truth, how the judge scored each axis, what it cost, how the lab phases went, and —
//! when the record has them — what the agent changed and how a repair was verified.

use crate::html::{esc, json_value, num, pre, secs_ms};
use crate::model::{
    RunSummary, Shape, at, bool_at, diagnosis, expected_fix, f64_at, ground_truth, scores, shape,
    str_at, ticket, u64_at,
};
use crate::timeline;
use faultbench_core::record::ManifestRow;
use serde_json::Value;
use std::path::Path;

/// Characters of a ticket, diagnosis or prompt shown.
const TEXT_CAP: usize = 20_000;
/// State changes listed one per line on a run page (all are in the folded entries below).
const CHANGES_SHOWN: usize = 500;

/// Top-level fields a record of ours or the release's has; anything else is shown generically.
const KNOWN: [&str; 19] = [
    "schema",
    "key",
    "model",
    "status",
    "started_at",
    "finished_at",
    "wall_seconds",
    "scenario",
    "agent_input_prompt",
    "phases",
    "diagnosis",
    "scores",
    "error",
    "faultbench_version",
    "agent_changes",
    "repair",
    "agent",
    "timestamp",
    "identity",
];

pub(crate) fn status_class(status: &str) -> &'static str {
    match status {
        "scored" => "scored",
        "no_submission" => "no_submission",
        "no_output" => "no_output",
        s if crate::model::known_status(s) => "infra",
        _ => "unknown",
    }
}

fn header(s: &RunSummary) -> String {
    let id = &s.id;
    format!(
        "<h1>{}</h1>\n<p class=\"meta\">{} · {} · {} · {} · agent <b>{}</b>{} · {} · <span class=\"badge st-{}\">{}</span> · <a href=\"../scenarios/{}\">all runs of this ticket</a></p>\n",
        esc(&id.scenario_id),
        esc(&id.topology),
        esc(&id.arm),
        esc(&s.category),
        esc(&s.style),
        esc(&id.agent),
        if s.model.is_empty() {
            String::new()
        } else {
            format!(" ({})", esc(&s.model))
        },
        esc(&id.pass),
        status_class(&s.status),
        esc(&s.status),
        esc(&s.scenario_page),
    )
}

fn problems(list: &[String]) -> String {
    if list.is_empty() {
        return String::new();
    }
    let mut out = String::from("<div class=\"problems\"><b>Problems with this run's data</b><ul>");
    for p in list {
        out.push_str(&format!("<li>{}</li>", esc(p)));
    }
    out.push_str("</ul></div>\n");
    out
}

fn score_box(s: &RunSummary, v: &Value, sh: Shape) -> String {
    let mut out = String::from("<h2>Scores</h2>\n<table class=\"kv\">");
    let row = |k: &str, x: String| format!("<tr><th>{k}</th><td>{x}</td></tr>");
    out.push_str(&row("Outcome", num(s.outcome, 3)));
    out.push_str(&row("Fix", num(s.fix, 1)));
    out.push_str(&row("Reasoning", num(s.reasoning, 3)));
    let sc = scores(v, sh);
    if let Some(sc) = sc {
        let dims = at(sc, &["reasoning_dims"]).and_then(Value::as_object);
        if let Some(d) = dims {
            let parts: Vec<String> = d
                .iter()
                .map(|(k, x)| format!("{} {}", esc(k), esc(&x.to_string())))
                .collect();
            out.push_str(&row("Reasoning dimensions", parts.join(", ")));
        }
        let counts = |p: &str, t: &str| match (u64_at(sc, &[p]), u64_at(sc, &[t])) {
            (Some(a), Some(b)) => format!("{a} of {b}"),
            _ => "–".into(),
        };
        out.push_str(&row(
            "Required axes passed",
            counts("must_passed", "must_total"),
        ));
        out.push_str(&row(
            "Bonus axes passed",
            counts("bonus_passed", "bonus_total"),
        ));
        let judge = str_at(sc, &["judge"]).or_else(|| str_at(sc, &["judge_model"]));
        out.push_str(&row("Judge", esc(judge.unwrap_or("–"))));
        if let Some(m) = str_at(sc, &["reasoning_mode"]) {
            out.push_str(&row("Reasoning judged on", esc(m)));
        }
        if let Some(e) = str_at(sc, &["error"]) {
            out.push_str(&row("Judge note", esc(e)));
        }
    }
    out.push_str("</table>\n");
    out
}

fn axis_table(v: &Value, sh: Shape) -> String {
    let mut out = String::from("<h2>Judge: every axis</h2>\n");
    let axes = scores(v, sh)
        .and_then(|s| s.get("per_axis"))
        .and_then(Value::as_array);
    let Some(axes) = axes.filter(|a| !a.is_empty()) else {
        out.push_str("<p class=\"muted\">No per-axis verdicts recorded.</p>\n");
        return out;
    };
    out.push_str(
        "<table id=\"axes\"><tr><th>kind</th><th>axis</th><th>verdict</th><th>reason</th></tr>\n",
    );
    for a in axes.iter().take(500) {
        let kind = str_at(a, &["kind"]).unwrap_or("?");
        let score = f64_at(a, &["score"]);
        let verdict = match (kind, score) {
            ("fix", Some(x)) => format!("<b>{x}</b>"),
            (k, Some(x)) if k.starts_with("reason") => format!("<b>{x}</b>"),
            (_, Some(x)) if x >= 1.0 => "<span class=\"pass\">pass</span>".into(),
            (_, Some(_)) => "<span class=\"fail\">fail</span>".into(),
            (_, None) => "<span class=\"muted\">–</span>".into(),
        };
        out.push_str(&format!(
            "<tr class=\"axis\"><td>{}</td><td>{}</td><td>{verdict}</td><td>{}</td></tr>\n",
            esc(kind),
            esc(str_at(a, &["axis"]).unwrap_or("?")),
            esc(str_at(a, &["rationale"]).unwrap_or(""))
        ));
    }
    out.push_str("</table>\n");
    out
}

fn diagnosis_block(v: &Value, sh: Shape) -> String {
    let (verdict, devices, text) = diagnosis(v, sh);
    let mut out = String::from(
        "<h2>Diagnosis beside the ground truth</h2>\n<div class=\"cols\"><div><h3>The agent's diagnosis</h3>",
    );
    out.push_str(&format!(
        "<p>is_anomaly: <b>{}</b> · faulty devices: {}</p>",
        match verdict {
            Some(b) => b.to_string(),
            None => "not stated".into(),
        },
        if devices.is_empty() {
            "<span class=\"muted\">none</span>".to_string()
        } else {
            devices
                .iter()
                .map(|d| format!("<code>{}</code>", esc(d)))
                .collect::<Vec<_>>()
                .join(" ")
        }
    ));
    match text {
        Some(t) => out.push_str(&pre(&t, TEXT_CAP, "diagnosis")),
        None => out.push_str("<p class=\"muted\">No diagnosis recorded.</p>"),
    }
    if let Some(parsed) = bool_at(v, &["diagnosis", "parsed_ok"])
        .or_else(|| bool_at(v, &["phases", "agent", "parsed_ok"]))
    {
        out.push_str(&format!(
            "<p class=\"muted\">diagnosis block parsed: {parsed}</p>"
        ));
    }
    out.push_str("</div><div><h3>Ground truth</h3>");
    match ground_truth(v, sh) {
        Some(t) => out.push_str(&pre(&t, TEXT_CAP, "truth")),
        None => out.push_str("<p class=\"muted\">Not in the record.</p>"),
    }
    if let Some(f) = expected_fix(v, sh).filter(|f| !f.trim().is_empty()) {
        out.push_str("<h3>Expected fix</h3>");
        out.push_str(&pre(&f, TEXT_CAP, "truth"));
    }
    out.push_str("</div></div>\n");
    out
}

fn usage_table(v: &Value, sh: Shape, s: &RunSummary) -> String {
    let mut out = String::from("<h2>Tokens and cost</h2>\n<table class=\"kv\">");
    let row = |k: &str, x: String| format!("<tr><th>{k}</th><td>{x}</td></tr>");
    let n = |x: Option<u64>| x.map(|v| v.to_string()).unwrap_or_else(|| "–".into());
    match sh {
        Shape::Ours => {
            let u = |k: &str| u64_at(v, &["phases", "agent", "outcome", "usage", k]);
            out.push_str(&row("Input tokens (uncached)", n(u("input_tokens"))));
            out.push_str(&row("Cache-read tokens", n(u("cache_read_tokens"))));
            out.push_str(&row("Cache-write tokens", n(u("cache_write_tokens"))));
            out.push_str(&row("Output tokens", n(u("output_tokens"))));
            out.push_str(&row(
                "Turns",
                n(at(v, &["phases", "agent", "outcome", "turns"])
                    .and_then(Value::as_array)
                    .map(|t| t.len() as u64)),
            ));
        }
        Shape::Release => {
            let a = |k: &str| u64_at(v, &["phases", "agent", k]);
            out.push_str(&row("Input tokens (uncached)", n(a("in_tokens"))));
            out.push_str(&row("Cache-read tokens", n(a("cache_read_tokens"))));
            out.push_str(&row("Cache-write tokens", n(a("cache_write_tokens"))));
            out.push_str(&row("Output tokens", n(a("out_tokens"))));
        }
        Shape::Unknown => {}
    }
    out.push_str(&row("Tool calls", n(s.tool_calls)));
    out.push_str(&row("Agent cost (USD)", num(s.cost, 4)));
    out.push_str(&row(
        "Wall time",
        s.wall
            .map(|w| format!("{w:.1} s"))
            .unwrap_or_else(|| "–".into()),
    ));
    out.push_str("</table>\n");
    out
}

/// The lab phases: one row per phase with its duration and outcome flags, details folded.
fn phases_table(v: &Value, sh: Shape) -> String {
    let mut out = String::from("<h2>Lab phases</h2>\n");
    let Some(phases) = v.get("phases").and_then(Value::as_object) else {
        out.push_str("<p class=\"muted\">No phases recorded.</p>\n");
        return out;
    };
    out.push_str("<table id=\"phases\"><tr><th>phase</th><th>duration</th><th>result</th><th>details</th></tr>\n");
    // In the order they happen; phases this viewer does not know follow alphabetically.
    const ORDER: [&str; 9] = [
        "deploy",
        "lstart",
        "settle",
        "baseline",
        "injection",
        "post_inject_check",
        "agent",
        "judge",
        "cleanup",
    ];
    let mut ordered: Vec<(&String, &Value)> = phases.iter().collect();
    ordered.sort_by_key(|(k, _)| {
        (
            ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()),
            (*k).clone(),
        )
    });
    for (name, p) in ordered {
        if (sh == Shape::Ours && name == "agent")
            || (sh == Shape::Release && (name == "agent" || name == "score"))
        {
            continue;
        }
        let duration = if let Some(ms) = f64_at(p, &["duration_ms"]) {
            secs_ms(Some(ms))
        } else if let Some(s) =
            f64_at(p, &["wait_seconds"]).or_else(|| f64_at(p, &["converge_wait"]))
        {
            format!("{s:.1} s")
        } else {
            "–".into()
        };
        let mut flags = Vec::new();
        for k in ["ok", "passed", "applied", "warm"] {
            if let Some(b) = bool_at(p, &[k]) {
                let class = if b || k == "warm" { "pass" } else { "fail" };
                flags.push(format!("<span class=\"{class}\">{k}: {b}</span>"));
            }
        }
        for k in ["action", "emulator", "judge", "error"] {
            if let Some(s) = str_at(p, &[k]) {
                flags.push(format!("{k}: {}", esc(s)));
            }
        }
        if let Some(a) = u64_at(p, &["attempts"]) {
            flags.push(format!("attempts: {a}"));
        }
        out.push_str(&format!(
            "<tr><th>{}</th><td class=\"n\">{duration}</td><td>{}</td><td><details><summary>all fields</summary>{}</details></td></tr>\n",
            esc(name),
            flags.join("<br>"),
            json_value(p)
        ));
    }
    out.push_str("</table>\n");
    if sh == Shape::Ours
        && let Some(ms) = f64_at(v, &["phases", "agent", "duration_ms"])
    {
        out.push_str(&format!("<p>Agent phase: {}</p>\n", secs_ms(Some(ms))));
    }
    out
}

fn optional_section(title: &str, id: &str, v: Option<&Value>, absent: &str) -> String {
    let mut out = format!("<h2 id=\"{id}\">{title}</h2>\n");
    match v {
        Some(x) => out.push_str(&json_value(x)),
        None => out.push_str(&format!("<p class=\"muted\">{absent}</p>")),
    }
    out.push('\n');
    out
}

/// What the agent changed: faultbench records a list of state changes, each with a one-line
/// `summary` (shown as a list, the full entries folded below); an empty list says the agent
/// changed nothing; any other shape is shown generically.
fn changes_section(v: Option<&Value>) -> String {
    let title = "What the agent changed";
    let Some(Value::Array(items)) = v else {
        return optional_section(
            title,
            "changes",
            v,
            "Not recorded by this run (records made before state snapshots existed have none).",
        );
    };
    let mut out = format!("<h2 id=\"changes\">{title}</h2>\n");
    if items.is_empty() {
        out.push_str("<p class=\"muted\">Nothing: the state after the agent equals the state before it.</p>\n");
        return out;
    }
    let lines: Vec<&str> = items
        .iter()
        .filter_map(|c| c.get("summary").and_then(Value::as_str))
        .collect();
    if lines.len() == items.len() {
        out.push_str("<ul class=\"changes\">");
        for l in lines.iter().take(CHANGES_SHOWN) {
            out.push_str(&format!("<li>{}</li>", esc(l)));
        }
        out.push_str("</ul>\n<details><summary>every entry</summary>");
        out.push_str(&json_value(&Value::Array(items.clone())));
        out.push_str("</details>\n");
    } else {
        out.push_str(&json_value(&Value::Array(items.clone())));
        out.push('\n');
    }
    out
}

fn registry_row(r: Option<&ManifestRow>) -> String {
    let mut out = String::from("<h2>Registry row (MANIFEST.csv)</h2>\n");
    match r.and_then(|r| serde_json::to_value(r).ok()) {
        Some(v) => out.push_str(&json_value(&v)),
        None => out.push_str("<p class=\"muted\">This run has no row in the registry.</p>"),
    }
    out.push('\n');
    out
}

/// The body of the page of a run with a record (`result.json`, parsed); `dir` is the
/// record's folder (for `trace.jsonl`).
pub fn body(s: &RunSummary, row: Option<&ManifestRow>, v: &Value, dir: Option<&Path>) -> String {
    let mut out = header(s);
    out.push_str(&problems(&s.problems));
    let sh = shape(v);
    out.push_str(&score_box(s, v, sh));
    out.push_str("<h2>Ticket</h2>\n");
    match ticket(v, sh) {
        Some(t) => out.push_str(&pre(&t, TEXT_CAP, "ticket")),
        None => out.push_str("<p class=\"muted\">No ticket in the record.</p>"),
    }
    match str_at(v, &["agent_input_prompt"]) {
        Some(p) => out.push_str(&format!(
            "<details><summary>The exact prompt the agent received (topology summary + ticket)</summary>{}</details>\n",
            pre(p, TEXT_CAP, "prompt")
        )),
        None => out.push_str("<p class=\"muted\">The exact prompt is not in the record.</p>\n"),
    }
    out.push_str(&diagnosis_block(v, sh));
    out.push_str(&axis_table(v, sh));
    out.push_str(&timeline::section(v, sh, dir));
    out.push_str(&usage_table(v, sh, s));
    out.push_str(&phases_table(v, sh));
    out.push_str(&changes_section(v.get("agent_changes")));
    if let Some(r) = v.get("repair") {
        out.push_str(&optional_section(
            "Repair verification",
            "repair",
            Some(r),
            "",
        ));
    }
    if let Some(id) = v.get("identity") {
        out.push_str(&optional_section(
            "Run identity of this record",
            "identity",
            Some(id),
            "",
        ));
    }
    if let Some(e) = str_at(v, &["error"]) {
        out.push_str(&format!("<h2>Error</h2>{}", pre(e, TEXT_CAP, "error")));
    }
    if let Some(o) = v.as_object() {
        let other: serde_json::Map<String, Value> = o
            .iter()
            .filter(|(k, _)| !KNOWN.contains(&k.as_str()))
            .map(|(k, x)| (k.clone(), x.clone()))
            .collect();
        if !other.is_empty() {
            out.push_str(&optional_section(
                "Other fields",
                "other",
                Some(&Value::Object(other)),
                "",
            ));
        }
    }
    out.push_str(&registry_row(row));
    out
}
