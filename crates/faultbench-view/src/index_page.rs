//! The index: the run table. Its data travels as one JSON block (`runs-data`) that the page's
//! script turns into a filterable, sortable, paged table; the script is the only one any page
//! runs, allowed by its hash in the page's Content-Security-Policy.

use crate::html::{json_for_script, page as shell};
use crate::model::RunSummary;
use crate::run_page::status_class;
use serde_json::{Value, json};

/// The table's script.
pub const SCRIPT: &str = include_str!("assets/index.js");

/// The columns of each row in `runs-data`.
pub const COLUMNS: [&str; 21] = [
    "arm",
    "pass",
    "topology",
    "scenario",
    "agent",
    "model",
    "status",
    "category",
    "style",
    "outcome",
    "fix",
    "reasoning",
    "cost",
    "wall",
    "tool_calls",
    "tokens_in",
    "tokens_out",
    "record",
    "page",
    "spage",
    "status_class",
];

fn f(x: Option<f64>) -> Value {
    x.filter(|v| v.is_finite())
        .map(Value::from)
        .unwrap_or(Value::Null)
}

/// The `runs-data` document.
pub fn data(runs: &[RunSummary]) -> Value {
    let rows: Vec<Value> = runs
        .iter()
        .map(|s| {
            json!([
                s.id.arm,
                s.id.pass,
                s.id.topology,
                s.id.scenario_id,
                s.id.agent,
                s.model,
                s.status,
                s.category,
                s.style,
                f(s.outcome),
                f(s.fix),
                f(s.reasoning),
                f(s.cost),
                f(s.wall),
                s.tool_calls,
                s.tokens_in,
                s.tokens_out,
                s.has_record,
                s.page,
                s.scenario_page,
                status_class(&s.status),
            ])
        })
        .collect();
    let text: Vec<Value> = runs
        .iter()
        .map(|s| json!([s.ticket, s.diagnosis]))
        .collect();
    json!({ "cols": COLUMNS, "rows": rows, "text": text })
}

/// The whole index page; `root_info` is the (already escaped) HTML about the root.
pub fn page(runs: &[RunSummary], root_info: &str) -> String {
    let body = format!(
        "<h1>faultbench runs</h1>\n{root_info}<div id=\"filters\"></div>\n<div id=\"pager\"><button id=\"prev\" type=\"button\">◀ previous</button> <span id=\"count\">loading…</span> <button id=\"next\" type=\"button\">next ▶</button> <select id=\"page-size\"></select></div>\n<div id=\"runs\" role=\"table\" aria-label=\"runs\" aria-describedby=\"count\"><div id=\"runs-head\" role=\"rowgroup\"></div><div id=\"runs-body\" role=\"rowgroup\"></div></div>\n<noscript><p>The run table needs JavaScript; every run page (runs/) and scenarios.html work without it.</p></noscript>\n<script type=\"application/json\" id=\"runs-data\">{}</script>\n",
        json_for_script(&data(runs))
    );
    shell("faultbench runs", "", &body, Some(SCRIPT))
}
