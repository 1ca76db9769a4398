//! What the viewer knows about one run, read from a registry row and/or a `result.json` in
//! either shape (ours, or the public release's). Records are read as plain JSON and every field
//! is optional: a record with missing fields, odd types or an unknown status still becomes a
//! run, with its problems listed.

use faultbench_core::record::ManifestRow;
use faultbench_core::status::RunStatus;
use faultbench_report::details::RunId;
use serde_json::Value;

/// Which layout a record has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// faultbench's own `result.json` (a `key` object).
    Ours,
    /// The public release's `result.json` (`scenario` + `phases.agent`).
    Release,
    /// Neither: shown as raw fields.
    Unknown,
}

/// One run, as the index and the pages show it.
#[derive(Debug, Clone)]
pub struct RunSummary {
    /// Identity.
    pub id: RunId,
    /// Page file name under `runs/`.
    pub page: String,
    /// Scenario page file name under `scenarios/`.
    pub scenario_page: String,
    /// Category label (`Correct-Fault`, …).
    pub category: String,
    /// Ticket style (`standard` or a persona).
    pub style: String,
    /// Model.
    pub model: String,
    /// Status as recorded (possibly unknown to this version).
    pub status: String,
    /// Outcome, fix, reasoning.
    pub outcome: Option<f64>,
    /// Fix score.
    pub fix: Option<f64>,
    /// Reasoning score.
    pub reasoning: Option<f64>,
    /// Verdict.
    pub is_anomaly: Option<bool>,
    /// Cost in USD.
    pub cost: Option<f64>,
    /// Wall seconds.
    pub wall: Option<f64>,
    /// Tool calls.
    pub tool_calls: Option<u64>,
    /// All input tokens.
    pub tokens_in: Option<u64>,
    /// Output tokens.
    pub tokens_out: Option<u64>,
    /// Has a full record.
    pub has_record: bool,
    /// Ticket text (for search; capped).
    pub ticket: String,
    /// Diagnosis text (for search; capped).
    pub diagnosis: String,
    /// Problems found while reading.
    pub problems: Vec<String>,
}

/// Looks up a path of keys.
pub fn at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(k))
}

/// A string at a path.
pub fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(v, path)?.as_str()
}

/// A number at a path (numbers only; strings are not coerced).
pub fn f64_at(v: &Value, path: &[&str]) -> Option<f64> {
    at(v, path)?.as_f64().filter(|x| x.is_finite())
}

/// A non-negative integer at a path.
pub fn u64_at(v: &Value, path: &[&str]) -> Option<u64> {
    let x = at(v, path)?;
    x.as_u64().or_else(|| {
        x.as_f64()
            .filter(|f| *f >= 0.0 && f.is_finite())
            .map(|f| f as u64)
    })
}

/// A boolean at a path.
pub fn bool_at(v: &Value, path: &[&str]) -> Option<bool> {
    at(v, path)?.as_bool()
}

/// The layout of a record.
pub fn shape(v: &Value) -> Shape {
    if v.get("key").is_some_and(Value::is_object) {
        Shape::Ours
    } else if v.get("scenario").is_some_and(Value::is_object)
        && at(v, &["phases", "agent"]).is_some()
    {
        Shape::Release
    } else {
        Shape::Unknown
    }
}

/// A section of a scenario file's text (`[PROMPT-TO-AGENT]`, `[GROUND-TRUTH]`, …): the lines
/// after its header up to the next section header.
pub fn section(text: &str, name: &str) -> Option<String> {
    let header = format!("[{name}]");
    let mut lines = text.lines();
    lines.find(|l| l.trim() == header)?;
    let body: Vec<&str> = lines
        .take_while(|l| {
            let t = l.trim();
            !(t.starts_with('[')
                && t.ends_with(']')
                && t.len() > 2
                && t[1..t.len() - 1]
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '-'))
        })
        .collect();
    Some(body.join("\n").trim().to_string())
}

/// The ticket the agent saw.
pub fn ticket(v: &Value, shape: Shape) -> Option<String> {
    match shape {
        Shape::Ours => str_at(v, &["scenario", "text"]).and_then(|t| section(t, "PROMPT-TO-AGENT")),
        Shape::Release => str_at(v, &["scenario", "prompt_to_agent"]).map(str::to_string),
        Shape::Unknown => None,
    }
}

/// The ground truth.
pub fn ground_truth(v: &Value, shape: Shape) -> Option<String> {
    match shape {
        Shape::Ours => str_at(v, &["scenario", "text"]).and_then(|t| section(t, "GROUND-TRUTH")),
        Shape::Release => str_at(v, &["scenario", "ground_truth"]).map(str::to_string),
        Shape::Unknown => None,
    }
}

/// The expected fix.
pub fn expected_fix(v: &Value, shape: Shape) -> Option<String> {
    match shape {
        Shape::Ours => str_at(v, &["scenario", "text"]).and_then(|t| section(t, "FIX")),
        Shape::Release => str_at(v, &["scenario", "fix_spec"]).map(str::to_string),
        Shape::Unknown => None,
    }
}

/// The diagnosis: (verdict, blamed devices, text).
pub fn diagnosis(v: &Value, shape: Shape) -> (Option<bool>, Vec<String>, Option<String>) {
    let devices = |x: Option<&Value>| -> Vec<String> {
        x.and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .map(|d| {
                        d.as_str()
                            .map(str::to_string)
                            .unwrap_or_else(|| d.to_string())
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    match shape {
        Shape::Ours => (
            bool_at(v, &["diagnosis", "is_anomaly"]),
            devices(at(v, &["diagnosis", "faulty_devices"])),
            str_at(v, &["diagnosis", "text"]).map(str::to_string),
        ),
        Shape::Release => (
            bool_at(v, &["phases", "agent", "is_anomaly"]),
            devices(at(v, &["phases", "agent", "faulty_devices"])),
            str_at(v, &["phases", "agent", "diagnosis_text"]).map(str::to_string),
        ),
        Shape::Unknown => (None, Vec::new(), None),
    }
}

/// The judge's scores object (`scores` or `phases.score`).
pub fn scores(v: &Value, shape: Shape) -> Option<&Value> {
    match shape {
        Shape::Ours => v.get("scores").filter(|s| s.is_object()),
        Shape::Release => at(v, &["phases", "score"]).filter(|s| s.is_object()),
        Shape::Unknown => None,
    }
}

/// Whether a status is one this version knows.
pub fn known_status(s: &str) -> bool {
    RunStatus::ALL.iter().any(|k| k.as_str() == s)
}

const SEARCH_CAP: usize = 4000;

fn cap(s: &str) -> String {
    match s.char_indices().nth(SEARCH_CAP) {
        Some((b, _)) => s[..b].to_string(),
        None => s.to_string(),
    }
}

fn opt_f(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite())
}

/// Fills a summary from a registry row (the numbers the report's tables use).
pub fn apply_row(s: &mut RunSummary, r: &ManifestRow) {
    s.model = r.model.clone();
    s.status = r.status.clone();
    s.outcome = opt_f(r.outcome_score);
    s.fix = opt_f(r.fix_score);
    s.reasoning = opt_f(r.reasoning_score);
    s.is_anomaly = r.is_anomaly;
    s.cost = opt_f(Some(r.cost_usd));
    s.wall = opt_f(Some(r.wall_seconds));
    s.tool_calls = Some(r.tool_calls);
    s.tokens_in = Some(r.total_input_tokens());
    s.tokens_out = Some(r.out_tokens);
}

/// Fills a summary from a record; when a registry row was applied first, disagreements between
/// the two are noted as problems (the registry's numbers are kept: the tables use them).
pub fn apply_record(s: &mut RunSummary, v: &Value, have_row: bool) {
    let sh = shape(v);
    s.has_record = true;
    if sh == Shape::Unknown {
        s.problems.push(
            "the record is neither a faultbench nor a release result.json; raw fields shown".into(),
        );
    }
    let (verdict, _, text) = diagnosis(v, sh);
    s.ticket = cap(&ticket(v, sh).unwrap_or_default());
    s.diagnosis = cap(text.as_deref().unwrap_or_default());
    let sc = scores(v, sh);
    let outcome = sc.and_then(|x| {
        f64_at(
            x,
            &[if sh == Shape::Ours {
                "outcome"
            } else {
                "outcome_score"
            }],
        )
    });
    let fix = sc.and_then(|x| {
        f64_at(
            x,
            &[if sh == Shape::Ours {
                "fix"
            } else {
                "fix_score"
            }],
        )
    });
    let reasoning = sc.and_then(|x| {
        f64_at(
            x,
            &[if sh == Shape::Ours {
                "reasoning"
            } else {
                "reasoning_score"
            }],
        )
    });
    let status = str_at(v, &["status"]).map(str::to_string);
    if have_row {
        if let Some(st) = &status
            && st != &s.status
        {
            s.problems.push(format!(
                "the registry says status `{}` but the record says `{st}`",
                s.status
            ));
        }
        if s.status == "scored"
            && let (Some(a), Some(b)) = (s.outcome, outcome)
            && (a - b).abs() > 1e-6
        {
            s.problems.push(format!(
                "the registry's outcome {a:.3} differs from the record's {b:.3}"
            ));
        }
        return;
    }
    match sh {
        Shape::Ours => {
            s.model = str_at(v, &["model"]).unwrap_or_default().to_string();
            s.cost = f64_at(v, &["phases", "agent", "outcome", "cost_usd"]);
            s.tool_calls = u64_at(v, &["phases", "agent", "outcome", "tool_calls"]);
            let u = |k: &str| u64_at(v, &["phases", "agent", "outcome", "usage", k]);
            s.tokens_in = match (
                u("input_tokens"),
                u("cache_read_tokens"),
                u("cache_write_tokens"),
            ) {
                (None, None, None) => None,
                (a, b, c) => Some(saturating_sum([a, b, c])),
            };
            s.tokens_out = u("output_tokens");
            s.wall = f64_at(v, &["wall_seconds"]);
        }
        Shape::Release => {
            let a = |k: &str| u64_at(v, &["phases", "agent", k]);
            s.cost = f64_at(v, &["phases", "agent", "cost_usd"]);
            s.tool_calls = a("tool_calls");
            s.tokens_in = match (
                a("in_tokens"),
                a("cache_read_tokens"),
                a("cache_write_tokens"),
            ) {
                (None, None, None) => None,
                (x, y, z) => Some(saturating_sum([x, y, z])),
            };
            s.tokens_out = a("out_tokens");
        }
        Shape::Unknown => {}
    }
    s.status = match status {
        Some(st) => st,
        None => {
            s.problems
                .push("no status recorded (and no registry row)".into());
            "unknown".into()
        }
    };
    let scored = s.status == "scored";
    s.outcome = outcome.filter(|_| scored);
    s.fix = fix.filter(|_| scored);
    s.reasoning = reasoning.filter(|_| scored);
    s.is_anomaly = verdict;
}

/// The sum of token counts read from a record, saturating: a crafted record's counts must not
/// wrap the sum (or panic in a debug build).
fn saturating_sum(counts: [Option<u64>; 3]) -> u64 {
    counts
        .into_iter()
        .fold(0u64, |acc, c| acc.saturating_add(c.unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_counts_of_a_crafted_record_saturate() {
        assert_eq!(
            saturating_sum([Some(u64::MAX), Some(u64::MAX), None]),
            u64::MAX
        );
        assert_eq!(saturating_sum([Some(1), None, Some(2)]), 3);
    }

    #[test]
    fn sections_of_a_scenario_text() {
        let t = "Scenario: x\n\n[PROMPT-TO-AGENT]\nUsers <b>cannot</b> reach\nthe web.\n\n[INJECTION]\nr1: x\n[GROUND-TRUTH]\nospfd down\n";
        assert_eq!(
            section(t, "PROMPT-TO-AGENT").unwrap(),
            "Users <b>cannot</b> reach\nthe web."
        );
        assert_eq!(section(t, "GROUND-TRUTH").unwrap(), "ospfd down");
        assert!(section(t, "FIX").is_none());
    }
}
