//! What full run records add to a registry row: the number of model turns and the judge's
//! axis counts (required and bonus axes passed), which `MANIFEST.csv` does not carry.
//!
//! Records are read as plain JSON, in either shape: ours (`result.json` with a `key` object) or
//! the public release's (`<arm>/<Topology>/<scenario>/<agent>/<pass>/result.json` with
//! `scenario` and `phases.score`). Anything unexpected is skipped with a note, never a failure:
//! a report over a registry with a few records is still a report.

use faultbench_core::fsutil::InputProblem;
use faultbench_core::record::{ManifestRow, arm_of_layer};
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Largest `result.json` read (a record with huge tool outputs beyond this is skipped).
pub const MAX_RECORD_BYTES: u64 = faultbench_core::record::MAX_RECORD_BYTES;

/// Identity of a run, as the registry's columns name it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunId {
    /// `base80`, `cex120` or a persona layer.
    pub arm: String,
    /// `p1`, `p2`, …
    pub pass: String,
    /// Topology.
    pub topology: String,
    /// Scenario id.
    pub scenario_id: String,
    /// Agent.
    pub agent: String,
}

impl RunId {
    /// The identity of a registry row.
    pub fn of(r: &ManifestRow) -> RunId {
        RunId {
            arm: r.arm.clone(),
            pass: r.pass.clone(),
            topology: r.topology.clone(),
            scenario_id: r.scenario_id.clone(),
            agent: r.agent.clone(),
        }
    }
}

/// Axis counts of a judged run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AxisCounts {
    /// Required (must + assert) axes passed.
    pub must_passed: u32,
    /// Required axes.
    pub must_total: u32,
    /// Bonus axes passed.
    pub bonus_passed: u32,
    /// Bonus axes.
    pub bonus_total: u32,
}

/// What a full record adds to its registry row.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RunDetail {
    /// Model turns (ours only: the release's records do not keep turns).
    pub turns: Option<u32>,
    /// The judge's axis counts.
    pub axes: Option<AxisCounts>,
}

/// Details of the runs that have a full record, by run.
#[derive(Debug, Clone, Default)]
pub struct RunDetails {
    by_id: HashMap<RunId, RunDetail>,
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    path.iter().try_fold(v, |v, k| v.get(k))?.as_str()
}

fn u32_at(v: &Value, path: &[&str]) -> Option<u32> {
    let x = path.iter().try_fold(v, |v, k| v.get(k))?;
    x.as_u64()
        .or_else(|| x.as_f64().filter(|f| *f >= 0.0).map(|f| f as u64))
        .map(|n| n.min(u64::from(u32::MAX)) as u32)
}

/// The identity of a record: from its `key` (our records) or, for the release's records, from
/// the last five folders of its path relative to the runs root (`rel`).
pub fn record_id(v: &Value, rel: &Path) -> Option<RunId> {
    if let Some(key) = v.get("key").filter(|k| k.is_object()) {
        let layer = str_at(key, &["layer"])?;
        let arm = layer
            .parse()
            .map(|l| arm_of_layer(l).to_string())
            .unwrap_or_else(|_| layer.to_string());
        let pass = match key.get("pass") {
            Some(Value::Number(n)) => format!("p{n}"),
            Some(Value::String(s)) if s.starts_with('p') => s.clone(),
            Some(Value::String(s)) => format!("p{s}"),
            _ => return None,
        };
        return Some(RunId {
            arm,
            pass,
            topology: str_at(key, &["topology"])?.to_string(),
            scenario_id: str_at(key, &["scenario_id"])?.to_string(),
            agent: str_at(key, &["agent"])?.to_string(),
        });
    }
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.len() < 6 || parts.last().map(String::as_str) != Some("result.json") {
        return None;
    }
    let p = &parts[parts.len() - 6..parts.len() - 1];
    let scenario = str_at(v, &["scenario", "scenario_id"]).unwrap_or(&p[2]);
    Some(RunId {
        arm: p[0].clone(),
        topology: p[1].clone(),
        scenario_id: scenario.to_string(),
        agent: p[3].clone(),
        pass: p[4].clone(),
    })
}

/// The details one record carries.
pub fn record_detail(v: &Value) -> RunDetail {
    let turns = v
        .pointer("/phases/agent/outcome/turns")
        .and_then(Value::as_array)
        .map(|t| t.len() as u32);
    let score = v
        .get("scores")
        .filter(|s| s.is_object())
        .or_else(|| v.pointer("/phases/score").filter(|s| s.is_object()));
    let axes = score.and_then(|s| {
        Some(AxisCounts {
            must_passed: u32_at(s, &["must_passed"])?,
            must_total: u32_at(s, &["must_total"])?,
            bonus_passed: u32_at(s, &["bonus_passed"])?,
            bonus_total: u32_at(s, &["bonus_total"])?,
        })
        .filter(|a| a.must_total + a.bonus_total > 0)
    });
    RunDetail { turns, axes }
}

/// Every `result.json` below `root`, sorted, without following symbolic links (a link could
/// lead out of the runs root) and at most 12 folders deep.
pub fn find_records(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
        if depth > 12 {
            return;
        }
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            let p = e.path();
            if ft.is_dir() {
                walk(&p, depth + 1, out);
            } else if ft.is_file() && e.file_name() == "result.json" {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(root, 0, &mut out);
    out.sort();
    out
}

/// A JSON file that could not be read (the caller names the file).
#[derive(Debug, thiserror::Error)]
pub enum JsonFileError {
    /// Reading failed.
    #[error("cannot read: {0}")]
    Read(#[source] std::io::Error),
    /// A link, folder or device where a file was expected (links are not followed).
    #[error("not a regular file")]
    NotAFile,
    /// Larger than such a file may be.
    #[error("{size} bytes, more than the {} MiB {what} may have", limit / (1024 * 1024))]
    TooLarge {
        /// Its size.
        size: u64,
        /// The bound, in bytes.
        limit: u64,
        /// What the file is (`a record`).
        what: &'static str,
    },
    /// Not JSON (the message quotes an excerpt of the offending value; the error is not a
    /// source, whose message would quote it whole).
    #[error("not JSON: {}", faultbench_core::text::json_error(.0))]
    NotJson(serde_json::Error),
    /// Nested deeper, or holding more values, than such a file may (checked before parsing).
    #[error("{0}")]
    Shape(String),
}

/// Reads a regular file (not through a link) of at most `limit` bytes; `what` names the kind
/// of file in the size error. The file is opened as a regular file (a FIFO swapped in after
/// the check is refused, not waited on) and at most `limit + 1` bytes are read, so a file that
/// grows after it was measured is refused too.
pub(crate) fn read_bounded_bytes(
    path: &Path,
    limit: u64,
    what: &'static str,
) -> Result<Vec<u8>, JsonFileError> {
    let meta = std::fs::symlink_metadata(path).map_err(JsonFileError::Read)?;
    if !meta.is_file() {
        return Err(JsonFileError::NotAFile);
    }
    if meta.len() > limit {
        return Err(JsonFileError::TooLarge {
            size: meta.len(),
            limit,
            what,
        });
    }
    faultbench_core::fsutil::read_regular_capped(path, limit).map_err(|e| match e.problem {
        InputProblem::NotRegular(_) => JsonFileError::NotAFile,
        InputProblem::TooBig { len, .. } => JsonFileError::TooLarge {
            size: len,
            limit,
            what,
        },
        _ => JsonFileError::Read(e.into()),
    })
}

/// Reads a regular file (not through a link) of at most `limit` bytes as JSON; `what` names
/// the kind of file in the size error.
pub(crate) fn read_bounded_json(
    path: &Path,
    limit: u64,
    what: &'static str,
) -> Result<Value, JsonFileError> {
    let text = read_bounded_bytes(path, limit, what)?;
    serde_json::from_slice(&text).map_err(JsonFileError::NotJson)
}

/// Reads a record as JSON, bounded in size ([`MAX_RECORD_BYTES`]).
pub fn read_json(path: &Path) -> Result<Value, JsonFileError> {
    read_bounded_json(path, MAX_RECORD_BYTES, "a record")
}

impl RunDetails {
    /// Reads the records below a runs root; returns the details and a note per record that
    /// could not be used.
    pub fn scan(root: &Path) -> (RunDetails, Vec<String>) {
        let mut details = RunDetails::default();
        let mut notes = Vec::new();
        for path in find_records(root) {
            let rel = path.strip_prefix(root).unwrap_or(&path);
            match read_json(&path) {
                Ok(v) => match record_id(&v, rel) {
                    Some(id) => {
                        details.by_id.insert(id, record_detail(&v));
                    }
                    None => notes.push(format!(
                        "{}: no run identity (neither a `key` nor the release's folder layout)",
                        path.display()
                    )),
                },
                Err(e) => notes.push(format!("{}: {e}", path.display())),
            }
        }
        (details, notes)
    }

    /// Adds one run's details.
    pub fn insert(&mut self, id: RunId, d: RunDetail) {
        self.by_id.insert(id, d);
    }

    /// The details of a registry row, if its record was read.
    pub fn get(&self, r: &ManifestRow) -> Option<&RunDetail> {
        if self.by_id.is_empty() {
            return None;
        }
        self.by_id.get(&RunId::of(r))
    }

    /// Number of records.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether no record was read.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn identity_from_our_key_or_the_release_path() {
        let ours = json!({"key": {"topology": "T", "layer": "naive_unsure", "scenario_id": "s", "agent": "a", "pass": 2}});
        let id = record_id(&ours, Path::new("x/result.json")).unwrap();
        assert_eq!((id.arm.as_str(), id.pass.as_str()), ("naive_unsure", "p2"));
        let base = json!({"key": {"topology": "T", "layer": "base", "scenario_id": "s", "agent": "a", "pass": 1}});
        assert_eq!(record_id(&base, Path::new("r.json")).unwrap().arm, "base80");
        let release = json!({"scenario": {"scenario_id": "kath1-x"}, "phases": {"score": {"must_passed": 1, "must_total": 2, "bonus_passed": 0, "bonus_total": 1}}});
        let rel = Path::new("cex120/Kath1/kath1-x/sade/p3/result.json");
        let id = record_id(&release, rel).unwrap();
        assert_eq!(
            (
                id.arm.as_str(),
                id.topology.as_str(),
                id.agent.as_str(),
                id.pass.as_str()
            ),
            ("cex120", "Kath1", "sade", "p3")
        );
        assert_eq!(
            record_detail(&release).axes,
            Some(AxisCounts {
                must_passed: 1,
                must_total: 2,
                bonus_passed: 0,
                bonus_total: 1
            })
        );
        assert!(record_id(&json!({"x": 1}), Path::new("a/result.json")).is_none());
        assert_eq!(record_detail(&json!("junk")), RunDetail::default());
    }
}
