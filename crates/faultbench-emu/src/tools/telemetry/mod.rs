//! Telemetry that exists: a [`Collector`] samples every device of a lab from deploy on into a
//! [`TelemetryStore`], and the four `influx_*` tools query it.
//!
//! In the release the telemetry tools asked an InfluxDB on a `collector` machine that the
//! FaulT-Bench labs do not have, so they only ever answered "machine not found". Here the
//! store is in-process (or a JSONL file shared between the run and the MCP server), the
//! vocabulary is Influx's (buckets, measurements, points with tags and fields), and an agent can
//! see what happened before the ticket arrived: a daemon that died, an interface that went down,
//! routes that vanished.
//!
//! With telemetry off for a run (`faultbench bench --telemetry off`,
//! [`super::NikaTools::without_telemetry`]) no collector runs and the four tools answer as the
//! release's did ([`release_absent_answer`]).
//!
//! ```
//! use faultbench_core::{Emulator, LabRequest, Toolbox};
//! use faultbench_emu::mock::MockEmulator;
//! use faultbench_emu::tools::NikaTools;
//! use faultbench_emu::tools::telemetry::{Point, TelemetryStore};
//! use serde_json::json;
//! use std::sync::Arc;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let store = Arc::new(TelemetryStore::new());
//! store.insert(Point::new("processes", 1_000).tag("device", "r1").tag("process", "ospfd").field("running", false));
//! let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mock/triangle.toml");
//! let lab = MockEmulator::new().deploy(&LabRequest::new(file)).await.unwrap();
//! let tools = NikaTools::new(lab).with_telemetry(store);
//! let m = tools.call("influx_get_measurements", json!({})).await.unwrap();
//! assert_eq!(m.text, r#"["processes"]"#);
//! let rows = tools.call("influx_query_measurement", json!({"measurement": "processes"})).await.unwrap();
//! assert!(rows.text.contains(r#""running":false"#));
//! # });
//! ```

mod collector;
mod store;

pub use collector::{Collector, SAMPLE_SCRIPT, SeenProcesses, WATCHED_PROCESSES, sample};
pub use store::{BucketInfo, DEFAULT_BUCKET, FieldValue, Point, TelemetryStore, rfc3339};

use super::ToolOptions;
use super::args::{self, parse};
use super::output::failure;
use faultbench_core::{ToolError, ToolOutput};
use serde::Deserialize;
use serde_json::{Map, Value, json};

fn default_limit() -> u64 {
    10
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Count {
    measurement: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Query {
    measurement: String,
    #[serde(default = "default_limit")]
    limit: u64,
    #[serde(default)]
    offset: u64,
}

fn measurement_name(tool: &str, m: &str) -> Result<(), ToolError> {
    let ok = (1..=64).contains(&m.len())
        && m.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(args::invalid(
            tool,
            "`measurement`: a measurement name (letters, digits, `_ . -`), as listed by influx_get_measurements",
        ))
    }
}

/// A point as a row: `time`, then tags, then fields (Influx's flat row shape).
fn row(p: &Point) -> Value {
    let mut m = Map::new();
    m.insert("time".into(), json!(rfc3339(p.time_ms)));
    for (k, v) in &p.tags {
        m.insert(k.clone(), json!(v));
    }
    for (k, v) in &p.fields {
        m.insert(k.clone(), serde_json::to_value(v).unwrap_or(Value::Null));
    }
    Value::Object(m)
}

/// What the four tools answered in the release, whose labs had no `collector` machine for
/// them to query (Kathará's "machine not found" message, as plain output).
pub fn release_absent_answer(lab: &str) -> String {
    format!("Machine collector not found in lab {lab}.")
}

/// Where the `influx_*` tools get their answers.
#[derive(Debug, Clone)]
pub(super) enum Source<'a> {
    /// A store fed by a collector.
    Store(&'a TelemetryStore),
    /// No store attached (e.g. an MCP server started without telemetry).
    Unattached,
    /// Telemetry is off for the run (`--telemetry off`): answer as the release's labs did.
    Off(&'a str),
}

/// Runs one of the four `influx_*` tools against `source`.
pub(super) fn call_tool(
    source: Source<'_>,
    name: &str,
    a: Value,
    config: &ToolOptions,
) -> Result<ToolOutput, ToolError> {
    // Arguments are checked first, so a bad call is an error whether or not telemetry runs.
    enum Req {
        Buckets,
        Measurements,
        Count(String),
        Query(String, usize, usize),
    }
    let req = match name {
        "influx_list_buckets" => {
            let _: NoArgs = parse(name, a)?;
            Req::Buckets
        }
        "influx_get_measurements" => {
            let _: NoArgs = parse(name, a)?;
            Req::Measurements
        }
        "influx_count_measurements" => {
            let c: Count = parse(name, a)?;
            measurement_name(name, &c.measurement)?;
            Req::Count(c.measurement)
        }
        _ => {
            let q: Query = parse(name, a)?;
            measurement_name(name, &q.measurement)?;
            args::range(name, "limit", q.limit, 1, 1000)?;
            args::range(name, "offset", q.offset, 0, 10_000_000)?;
            Req::Query(q.measurement, q.limit as usize, q.offset as usize)
        }
    };
    let store = match source {
        Source::Store(s) => s,
        Source::Unattached => {
            return Ok(failure("No telemetry is being collected for this lab."));
        }
        Source::Off(lab) => {
            return Ok(ToolOutput {
                text: release_absent_answer(lab),
                ..Default::default()
            });
        }
    };
    store.refresh();
    let bucket = store.default_bucket();
    let missing = |m: &str| {
        failure(format!(
            "No measurement `{m}` in bucket `{bucket}`. Measurements: {}",
            json!(store.measurements(bucket))
        ))
    };
    let text = match req {
        Req::Buckets => serde_json::to_string(&store.buckets()).unwrap_or_default(),
        Req::Measurements => json!(store.measurements(bucket)).to_string(),
        Req::Count(m) => match store.count(bucket, &m) {
            Some(n) => json!([{"measurement": m, "count": n}]).to_string(),
            None => return Ok(missing(&m)),
        },
        Req::Query(m, limit, offset) => match store.query(bucket, &m, limit, offset) {
            Some((total, points)) => {
                let rows: Vec<Value> = points.iter().map(row).collect();
                return Ok(fit_rows(&m, total, offset, rows, config.output_cap));
            }
            None => return Ok(missing(&m)),
        },
    };
    let (text, cut) = super::cap_text(&text, config.output_cap);
    Ok(ToolOutput {
        text,
        truncated: cut,
        ..Default::default()
    })
}

/// Renders query rows within `cap` characters, dropping whole rows from the end (the JSON
/// stays valid) and saying how many were left out and where to continue.
fn fit_rows(m: &str, total: usize, offset: usize, mut rows: Vec<Value>, cap: usize) -> ToolOutput {
    let render = |rows: &[Value], note: Option<String>| {
        let mut v = json!({"measurement": m, "total": total, "offset": offset, "rows": rows});
        if let Some(n) = note {
            v["truncated"] = json!(n);
            v["next_offset"] = json!(offset + rows.len());
        }
        v.to_string()
    };
    let asked = rows.len();
    let mut text = render(&rows, None);
    let mut cut = false;
    while text.chars().count() > cap && !rows.is_empty() {
        cut = true;
        let keep = rows.len() - (rows.len() / 4).max(1);
        rows.truncate(keep);
        let note = format!(
            "{} of {asked} requested rows not shown to stay within {cap} chars",
            asked - rows.len()
        );
        text = render(&rows, Some(note));
    }
    ToolOutput {
        text,
        truncated: cut,
        ..Default::default()
    }
}
