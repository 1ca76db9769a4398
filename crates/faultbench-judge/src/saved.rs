//! Saved runs of either format, ready to re-judge without re-running agents.
//!
//! A runs root may hold faultbench run records ([`RunRecord`], our `result.json`) or the public
//! release's (`phases.score` layout, see [`release`](crate::release)). [`load_runs`] reads
//! every `result.json` under a folder, tells the two apart by their shape, and returns for each
//! run the scenario, the diagnosis, the trace digest (from `trace.jsonl`, the release's
//! `trace.log`, or the record's own agent phase) and the scores already recorded.

use crate::release::{ReleaseError, ReleaseRun, find_result_files, is_release_record};
use faultbench_core::fsutil::read_regular_string_capped;
use faultbench_core::judge::Scores;
use faultbench_core::output::{OutputDir, OutputError};
use faultbench_core::record::{MAX_RECORD_BYTES, RecordError, RunRecord, digest_of};
use faultbench_core::scenario::{ScenarioError, ScenarioSpec};
use faultbench_core::status::RunStatus;
use faultbench_core::trace::{self, TraceError};
use faultbench_core::{Category, Diagnosis};
use std::path::{Path, PathBuf};

/// Which format a record is in.
#[derive(Debug, Clone)]
pub enum Origin {
    /// A faultbench record (kept whole so that re-judged scores can be written back).
    Faultbench(Box<RunRecord>),
    /// A public-release record.
    Release,
}

/// One saved run.
#[derive(Debug, Clone)]
pub struct SavedRun {
    /// Its `result.json`.
    pub path: PathBuf,
    /// A short label: the path under the runs root, without `/result.json`.
    pub label: String,
    /// The group for breakdowns: the release's arm (`base80`, `cex120`, persona layers).
    pub group: String,
    /// The scenario.
    pub scenario: ScenarioSpec,
    /// The diagnosis, when the agent answered.
    pub diagnosis: Option<Diagnosis>,
    /// The run status, when recorded (release records are all judged runs).
    pub status: Option<RunStatus>,
    /// The investigation digest for the reasoning judge (empty when no trace exists).
    pub digest: String,
    /// Scores already in the record (the release's LLM judge, or ours).
    pub recorded: Option<Scores>,
    /// Scores of other judges stored beside a release record (`rejudged-<judge>.json`).
    pub rejudged: Vec<Scores>,
    /// The record's format.
    pub origin: Origin,
}

impl SavedRun {
    /// The scenario's category.
    pub fn category(&self) -> Category {
        self.scenario.category()
    }

    /// Whether the run can be judged: the agent answered (scored or judge_failed runs).
    pub fn judgeable(&self) -> bool {
        self.diagnosis.is_some()
            && self
                .status
                .is_none_or(|s| matches!(s, RunStatus::Scored | RunStatus::JudgeFailed))
    }
}

/// A `result.json` that could not be used.
#[derive(Debug)]
pub struct LoadError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub error: LoadRunError,
}

/// Why a `result.json` could not be read as a saved run (the file is named by the caller:
/// [`LoadError::path`], or the path given to [`load_one`]).
#[derive(Debug, thiserror::Error)]
pub enum LoadRunError {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Read(#[source] std::io::Error),
    /// The file is not JSON (the message quotes an excerpt of the offending value; the error
    /// is not a source, whose message would quote it whole).
    #[error("not JSON: {}", faultbench_core::text::json_error(.0))]
    NotJson(serde_json::Error),
    /// It looks like a release record but is not one of the release's shape.
    #[error(transparent)]
    Release(#[from] ReleaseError),
    /// Neither of the two formats (an excerpt is quoted, as in [`LoadRunError::NotJson`]).
    #[error(
        "neither a faultbench run record nor a release result.json: {}",
        faultbench_core::text::json_error(.0)
    )]
    Unknown(serde_json::Error),
    /// A faultbench record whose scenario text does not parse.
    #[error("the recorded scenario text does not parse: {0}")]
    Scenario(#[source] ScenarioError),
    /// The run's `trace.jsonl` cannot be read.
    #[error(transparent)]
    Trace(#[from] TraceError),
}

/// A re-judged verdict that could not be stored.
#[derive(Debug, thiserror::Error)]
pub enum StoreVerdictError {
    /// The faultbench record could not be rewritten.
    #[error(transparent)]
    Record(#[from] RecordError),
    /// The sidecar file could not be encoded.
    #[error("cannot encode the verdict: {0}")]
    Encode(#[source] serde_json::Error),
    /// The record's folder or the sidecar file could not be written (a link there is refused).
    #[error(transparent)]
    Write(#[from] OutputError),
    /// The run was not loaded from under `root`.
    #[error("{}: not under {}; verdicts are stored only below the root the runs were loaded from", path.display(), root.display())]
    Outside {
        /// The record.
        path: PathBuf,
        /// The root.
        root: PathBuf,
    },
}

/// Reads every run under `root`. Unreadable records are returned as errors, never skipped
/// silently.
pub fn load_runs(root: &Path) -> std::io::Result<(Vec<SavedRun>, Vec<LoadError>)> {
    let mut runs = Vec::new();
    let mut errors = Vec::new();
    for path in find_result_files(root)? {
        match load_one(root, &path) {
            Ok(r) => runs.push(r),
            Err(error) => errors.push(LoadError { path, error }),
        }
    }
    Ok((runs, errors))
}

fn label_of(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    rel.parent()
        .unwrap_or(rel)
        .to_string_lossy()
        .replace('\\', "/")
}

/// Reads one run.
pub fn load_one(root: &Path, path: &Path) -> Result<SavedRun, LoadRunError> {
    let text = read_regular_string_capped(path, MAX_RECORD_BYTES)
        .map_err(|e| LoadRunError::Read(e.into()))?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(LoadRunError::NotJson)?;
    let label = label_of(root, path);
    let dir = path.parent().unwrap_or(Path::new("."));
    if is_release_record(&value) {
        let run = ReleaseRun::from_json(&text, path)?;
        let group = label.split('/').next().unwrap_or("").to_string();
        let digest = read_regular_string_capped(&dir.join("trace.log"), trace::MAX_TRACE_BYTES)
            .map(|log| trace::digest(&trace::parse_release_log(&log)))
            .unwrap_or_default();
        return Ok(SavedRun {
            path: path.to_path_buf(),
            label,
            group,
            scenario: run.scenario,
            diagnosis: Some(run.diagnosis),
            status: None,
            digest,
            recorded: run.recorded,
            rejudged: sidecars(dir),
            origin: Origin::Release,
        });
    }
    let record: RunRecord = serde_json::from_value(value).map_err(LoadRunError::Unknown)?;
    let scenario = ScenarioSpec::parse(&record.scenario.text).map_err(LoadRunError::Scenario)?;
    let trace_file = dir.join("trace.jsonl");
    let digest = if trace_file.is_file() {
        let events = trace::read_jsonl(&trace_file)?;
        trace::digest(&events)
    } else {
        digest_of(&record)
    };
    Ok(SavedRun {
        path: path.to_path_buf(),
        label,
        group: record.key.arm().to_string(),
        scenario,
        diagnosis: record.diagnosis.clone(),
        status: Some(record.status),
        digest,
        recorded: record.scores.clone(),
        rejudged: Vec::new(),
        origin: Origin::Faultbench(Box::new(record)),
    })
}

/// Scores in `rejudged-*.json` files of a run folder (sorted by file name; failed verdicts and
/// unreadable files are skipped).
fn sidecars(dir: &Path) -> Vec<Scores> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = rd
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("rejudged-") && n.ends_with(".json"))
        })
        .collect();
    files.sort();
    files
        .iter()
        .filter_map(|p| read_regular_string_capped(p, MAX_RECORD_BYTES).ok())
        .filter_map(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .filter_map(|v| serde_json::from_value(v.get("scores")?.clone()).ok())
        .collect()
}

/// The sum of two optional amounts (unknown + known = known).
fn add<T>(a: Option<T>, b: Option<T>, plus: impl Fn(T, T) -> T) -> Option<T> {
    match (a, b) {
        (Some(a), Some(b)) => Some(plus(a, b)),
        (a, b) => a.or(b),
    }
}

/// Where [`store_verdict`] put a re-judged verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stored {
    /// The faultbench record was updated in place (and the registry rebuilt).
    Record(PathBuf),
    /// A `rejudged-<judge>.json` file beside a release record (release files are never
    /// modified).
    Sidecar(PathBuf),
}

/// Stores the outcome of re-judging `run`: `Ok(scores)` makes a faultbench record `scored` with
/// those scores; `Err(message)` makes it `judge_failed` (its diagnosis kept). The judgement's
/// spend is added to the record's `phases.judge` (everything spent judging the run). The
/// record is rewritten where it was read (`run.path`). Release records get a sidecar file
/// instead.
///
/// `root` is the folder the runs were loaded from (the user named it, so it is used as given);
/// the run's folder below it is opened without following links, and a link at `result.json` or
/// at the sidecar's name is refused, never written through.
pub fn store_verdict(
    root: &Path,
    run: &SavedRun,
    judge: &str,
    verdict: Result<&Scores, &str>,
) -> Result<Stored, StoreVerdictError> {
    let parent = run.path.parent().unwrap_or(Path::new(""));
    let below = parent
        .strip_prefix(root)
        .map_err(|_| StoreVerdictError::Outside {
            path: run.path.clone(),
            root: root.to_path_buf(),
        })?;
    let dir = OutputDir::open(root, below)?;
    match &run.origin {
        Origin::Faultbench(record) => {
            let mut rec = (**record).clone();
            match verdict {
                Ok(s) => {
                    rec.status = RunStatus::Scored;
                    rec.scores = Some(s.clone());
                    rec.error = None;
                }
                Err(e) => {
                    rec.status = RunStatus::JudgeFailed;
                    rec.error = Some(e.to_string());
                }
            }
            let phase = rec.phases.judge.get_or_insert_with(Default::default);
            phase.judge = judge.to_string();
            phase.error = verdict.err().map(str::to_string);
            // Every judgement's spend counts: the re-judging's is added to what judging this
            // run cost before (a failed judgement's spend is unknown and adds nothing).
            let new = verdict.ok();
            phase.usage = add(phase.usage, new.and_then(|s| s.usage), |a, b| a + b);
            phase.cost_usd = add(phase.cost_usd, new.and_then(|s| s.cost_usd), |a, b| a + b);
            // Written back to the file it was read from — never to a path computed from the
            // record's own key, which a crafted record controls and which differs from the
            // location when `root` is a sub-folder of a runs root. The registry is rebuilt once
            // by the caller after all updates (`RunsRoot::rebuild_manifest`), not once per run.
            let written = rec.write_in(&dir)?;
            Ok(Stored::Record(written))
        }
        Origin::Release => {
            let name = format!("rejudged-{}.json", judge.replace([':', '/'], "_"));
            let body = match verdict {
                Ok(s) => serde_json::json!({"status": "scored", "judge": judge, "scores": s}),
                Err(e) => serde_json::json!({"status": "judge_failed", "judge": judge, "error": e}),
            };
            let text = serde_json::to_string_pretty(&body).map_err(StoreVerdictError::Encode)?;
            Ok(Stored::Sidecar(dir.write(&name, text.as_bytes())?))
        }
    }
}
