//! The run's timeline: each model turn with its notes, then the tool calls it asked for, each
//! with its arguments, duration, output (capped) and whether it was refused, failed or timed
//! out. Built from the record's turns and tool log (as the trace digest pairs them: calls in
//! order, matched by tool name); when a record has neither, from `trace.jsonl` beside it.

use crate::html::{capped, esc, pre};
use crate::model::{Shape, at, bool_at, str_at, u64_at};
use serde_json::Value;
use std::path::Path;

/// Characters of a tool output shown (the tools themselves cap at 4,000).
pub const OUTPUT_CAP: usize = 4000;
/// Characters of a tool call's arguments shown in its line, and in full.
const ARGS_INLINE: usize = 300;
const ARGS_CAP: usize = 8000;
/// Characters of a turn's text shown.
const NOTE_CAP: usize = 8000;
/// Largest `trace.jsonl` read, and most events shown.
const TRACE_BYTES: u64 = 64 * 1024 * 1024;
const EVENTS_CAP: usize = 5000;

fn args_text(a: Option<&Value>) -> String {
    match a {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(v) => serde_json::to_string(v).unwrap_or_default(),
    }
}

/// One executed (or only requested) tool call.
fn call(tool: &str, args: Option<&Value>, rec: Option<&Value>) -> String {
    let mut classes = vec!["call"];
    let mut badges = Vec::new();
    if let Some(r) = rec {
        if bool_at(r, &["refused"]) == Some(true) {
            classes.push("refused");
            badges.push("<span class=\"badge refused\">refused</span>".to_string());
        }
        if bool_at(r, &["timed_out"]) == Some(true) {
            badges.push("<span class=\"badge errored\">timed out</span>".to_string());
        }
        if bool_at(r, &["truncated"]) == Some(true) {
            badges.push("<span class=\"badge\">output cut by the tool</span>".to_string());
        }
        if str_at(r, &["error"]).is_some() {
            classes.push("errored");
        }
        if let Some(ms) = u64_at(r, &["duration_ms"]) {
            badges.push(format!(
                "<span class=\"muted\">{:.2} s</span>",
                ms as f64 / 1000.0
            ));
        }
    } else {
        badges.push("<span class=\"badge errored\">requested, not executed</span>".to_string());
    }
    let full = args_text(args);
    let (short, cut) = capped(&full, ARGS_INLINE);
    let mut out = format!(
        "<li class=\"{}\"><b class=\"tool\">{}</b> <code class=\"args\">{}</code>{} {}",
        classes.join(" "),
        esc(tool),
        esc(&short),
        if cut.is_some() {
            "<span class=\"cut\"> …</span>"
        } else {
            ""
        },
        badges.join(" ")
    );
    if cut.is_some() {
        out.push_str(&format!(
            "<details><summary>arguments ({} characters)</summary>{}</details>",
            full.chars().count(),
            pre(&full, ARGS_CAP, "args")
        ));
    }
    if let Some(r) = rec {
        if let Some(e) = str_at(r, &["error"]) {
            out.push_str(&format!("<div class=\"fail\">error: {}</div>", esc(e)));
        }
        let output = str_at(r, &["output"]).unwrap_or("");
        let chars = u64_at(r, &["output_chars"]);
        out.push_str(&format!(
            "<details><summary>output ({} characters)</summary>{}</details>",
            chars.unwrap_or(output.chars().count() as u64),
            pre(output, OUTPUT_CAP, "out")
        ));
    }
    out.push_str("</li>\n");
    out
}

fn from_record(outcome: &Value) -> Option<String> {
    let turns = outcome.get("turns").and_then(Value::as_array);
    let log = outcome.get("tool_log").and_then(Value::as_array);
    if turns.is_none_or(|t| t.is_empty()) && log.is_none_or(|l| l.is_empty()) {
        return None;
    }
    let empty = Vec::new();
    let log = log.unwrap_or(&empty);
    let mut next = 0usize;
    let mut out = String::new();
    for t in turns.unwrap_or(&empty).iter().take(EVENTS_CAP) {
        let idx = u64_at(t, &["index"])
            .map(|i| i.to_string())
            .unwrap_or_else(|| "?".into());
        let lat = u64_at(t, &["latency_ms"])
            .map(|ms| format!(" · model {:.2} s", ms as f64 / 1000.0))
            .unwrap_or_default();
        let tok = match (
            u64_at(t, &["usage", "input_tokens"]),
            u64_at(t, &["usage", "output_tokens"]),
        ) {
            (Some(i), Some(o)) => format!(" · {i} in / {o} out tokens"),
            _ => String::new(),
        };
        out.push_str(&format!(
            "<div class=\"turn\"><h3>Turn {}<span class=\"muted\">{lat}{tok}</span></h3>\n",
            esc(&idx)
        ));
        if let Some(text) = str_at(t, &["text"]).filter(|x| !x.trim().is_empty()) {
            out.push_str(&pre(text, NOTE_CAP, "note"));
        }
        let reqs = t.get("tool_calls").and_then(Value::as_array);
        if let Some(reqs) = reqs.filter(|r| !r.is_empty()) {
            out.push_str("<ol class=\"calls\">\n");
            for r in reqs {
                let tool = str_at(r, &["tool"]).unwrap_or("?");
                match log.get(next) {
                    Some(rec) if str_at(rec, &["tool"]) == Some(tool) => {
                        out.push_str(&call(tool, rec.get("args").or(r.get("args")), Some(rec)));
                        next += 1;
                    }
                    _ => out.push_str(&call(tool, r.get("args"), None)),
                }
            }
            out.push_str("</ol>\n");
        }
        out.push_str("</div>\n");
    }
    if next < log.len() {
        let title = if turns.is_none_or(|t| t.is_empty()) {
            "Tool calls (this agent records no model turns)"
        } else {
            "Calls reported without a turn"
        };
        out.push_str(&format!(
            "<div class=\"turn\"><h3>{title}</h3><ol class=\"calls\">\n"
        ));
        for rec in log[next..].iter().take(EVENTS_CAP) {
            out.push_str(&call(
                str_at(rec, &["tool"]).unwrap_or("?"),
                rec.get("args"),
                Some(rec),
            ));
        }
        out.push_str("</ol></div>\n");
    }
    Some(out)
}

fn from_trace(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    if meta.len() > TRACE_BYTES {
        return Some(format!(
            "<p class=\"cut\">trace.jsonl is {} bytes, more than this viewer reads.</p>",
            meta.len()
        ));
    }
    let text = faultbench_core::fsutil::read_regular_string_capped(path, TRACE_BYTES).ok()?;
    let mut out = String::from(
        "<p class=\"muted\">From trace.jsonl (the record has no turns).</p><ol class=\"calls\">\n",
    );
    let mut bad = 0;
    for line in text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(EVENTS_CAP)
    {
        let Ok(e) = serde_json::from_str::<Value>(line) else {
            bad += 1;
            continue;
        };
        match str_at(&e, &["event"]).unwrap_or("?") {
            "text" | "final_text" => out.push_str(&format!(
                "<li>{}</li>\n",
                pre(str_at(&e, &["text"]).unwrap_or(""), NOTE_CAP, "note")
            )),
            "tool_call" => out.push_str(&format!(
                "<li class=\"call\"><b class=\"tool\">{}</b> <code class=\"args\">{}</code></li>\n",
                esc(str_at(&e, &["tool"]).unwrap_or("?")),
                esc(&capped(&args_text(e.get("args")), ARGS_CAP).0)
            )),
            "tool_result" => out.push_str(&format!(
                "<li><details><summary>result{}</summary>{}</details></li>\n",
                str_at(&e, &["error"])
                    .map(|x| format!(" — error: {}", esc(x)))
                    .unwrap_or_default(),
                pre(str_at(&e, &["output"]).unwrap_or(""), OUTPUT_CAP, "out")
            )),
            other => out.push_str(&format!(
                "<li class=\"muted\">{}: {}</li>\n",
                esc(other),
                esc(&capped(&e.to_string(), 300).0)
            )),
        }
    }
    out.push_str("</ol>\n");
    if bad > 0 {
        out.push_str(&format!(
            "<p class=\"cut\">{bad} unreadable trace lines skipped.</p>"
        ));
    }
    Some(out)
}

/// The timeline section of a run page.
pub fn section(v: &Value, sh: Shape, dir: Option<&Path>) -> String {
    let mut out = String::from("<h2 id=\"timeline\">Timeline: turns and tool calls</h2>\n");
    let outcome = at(v, &["phases", "agent", "outcome"]);
    if let Some(o) = outcome {
        let mut ends = Vec::new();
        if bool_at(o, &["hit_max_turns"]) == Some(true) {
            ends.push("the turn budget ran out".to_string());
        }
        if bool_at(o, &["hit_wall_clock"]) == Some(true) {
            ends.push("the wall-clock cap ran out".to_string());
        }
        if let Some(e) = str_at(o, &["error"]) {
            ends.push(format!("error: {}", esc(e)));
        }
        if !ends.is_empty() {
            out.push_str(&format!(
                "<p class=\"fail\">Ended: {}</p>\n",
                ends.join("; ")
            ));
        }
    }
    match (sh, outcome.and_then(from_record)) {
        (_, Some(t)) => out.push_str(&t),
        (Shape::Release, None) => {
            let calls = u64_at(v, &["phases", "agent", "tool_calls"]);
            let max = bool_at(v, &["phases", "agent", "hit_max_turns"]);
            out.push_str(&format!(
                "<p class=\"muted\">The release's records keep no trace (its result.json drops the raw trace): {} tool calls{}.</p>\n",
                calls.map(|c| c.to_string()).unwrap_or_else(|| "?".into()),
                if max == Some(true) { ", turn budget exhausted" } else { "" }
            ));
        }
        _ => match dir.and_then(|d| from_trace(&d.join("trace.jsonl"))) {
            Some(t) => out.push_str(&t),
            None => out.push_str(
                "<p class=\"muted\">No turns, tool log or trace.jsonl for this run.</p>\n",
            ),
        },
    }
    if let Some(f) = outcome
        .and_then(|o| str_at(o, &["final_text"]))
        .filter(|t| !t.trim().is_empty())
    {
        out.push_str(&format!(
            "<details><summary>The agent's final message</summary>{}</details>\n",
            pre(f, 20_000, "note")
        ));
    }
    out
}
