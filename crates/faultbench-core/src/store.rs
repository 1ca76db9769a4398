//! A runs root on disk: archiving finished runs crash-safely and knowing what is done.
//!
//! Writing order for each run: `trace.jsonl`, then `result.json` (atomic rename), then one line
//! appended to `MANIFEST.csv` and synced. `result.json` files are the source of truth: a crash
//! between the last two steps is repaired on the next open by rebuilding the registry from them,
//! and a torn last registry line is never read as a run.
//!
//! ```
//! use faultbench_core::store::RunsRoot;
//! let dir = tempfile::tempdir().unwrap();
//! let root = RunsRoot::open(dir.path()).unwrap();
//! assert!(root.records().unwrap().is_empty());
//! assert!(dir.path().join("MANIFEST.csv").is_file());
//! ```

use crate::fsutil::{append_line_synced, write_atomic};
use crate::record::{MANIFEST_HEADER, RecordError, RunKey, RunRecord, scan_records};
use crate::status::RunStatus;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A runs root that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct StoreError {
    /// The file or folder.
    pub path: PathBuf,
    /// What went wrong.
    pub message: String,
}

/// A runs root (`RUNS/`).
#[derive(Debug, Clone)]
pub struct RunsRoot {
    root: PathBuf,
}

impl RunsRoot {
    /// Opens (creating if needed) a runs root, and makes its registry consistent with the
    /// `result.json` files: a missing, torn or stale `MANIFEST.csv` is rebuilt from them.
    pub fn open(root: impl AsRef<Path>) -> Result<RunsRoot, StoreError> {
        let root = root.as_ref().to_path_buf();
        std::fs::create_dir_all(&root).map_err(|e| StoreError {
            path: root.clone(),
            message: format!("cannot create the runs root: {e}"),
        })?;
        let store = RunsRoot { root };
        store.rebuild_manifest(|_| true)?;
        Ok(store)
    }

    /// Uses an existing runs root as it is (no registry rebuild). Pair with
    /// [`RunsRoot::write_record`] for many updates, then [`RunsRoot::rebuild_manifest`] once.
    pub fn attach(root: impl AsRef<Path>) -> RunsRoot {
        RunsRoot {
            root: root.as_ref().to_path_buf(),
        }
    }

    /// Replaces a run's `result.json` without touching the registry.
    pub fn write_record(&self, record: &RunRecord) -> Result<PathBuf, StoreError> {
        let dir = record.key.dir(&self.root);
        record
            .write(&dir)
            .map_err(|RecordError { path, message }| StoreError { path, message })
    }

    /// The folder.
    pub fn path(&self) -> &Path {
        &self.root
    }

    /// The registry file.
    pub fn manifest_path(&self) -> PathBuf {
        self.root.join("MANIFEST.csv")
    }

    /// Every readable record, keyed by run. Unreadable `result.json` files (e.g. a hand-edited
    /// one) are reported as errors, never silently treated as missing.
    pub fn records(&self) -> Result<BTreeMap<RunKey, RunRecord>, StoreError> {
        let (ok, bad) = scan_records(&self.root);
        if let Some(e) = bad.first() {
            return Err(StoreError {
                path: e.path.clone(),
                message: format!("{} (fix or delete it)", e.message),
            });
        }
        Ok(ok.into_iter().map(|(_, r)| (r.key.clone(), r)).collect())
    }

    /// Rewrites `MANIFEST.csv` from the records for which `keep` is true (atomically).
    pub fn rebuild_manifest(&self, keep: impl Fn(&RunRecord) -> bool) -> Result<usize, StoreError> {
        let records = self.records()?;
        let mut text = String::from(MANIFEST_HEADER);
        text.push('\n');
        let mut n = 0;
        for r in records.values().filter(|r| keep(r)) {
            text.push_str(&r.manifest_row().to_csv());
            text.push('\n');
            n += 1;
        }
        let path = self.manifest_path();
        // Only compared, to skip a needless write: anything unreadable (a FIFO planted in the
        // root is refused, not waited on) counts as different and is replaced.
        let current =
            crate::fsutil::read_regular_string_capped(&path, text.len() as u64).unwrap_or_default();
        if current != text {
            write_atomic(&path, text.as_bytes()).map_err(|e| StoreError {
                path: path.clone(),
                message: format!("cannot write the registry: {e}"),
            })?;
        }
        Ok(n)
    }

    /// Prepares a resume: runs whose status calls for a re-run (infrastructure failures) are
    /// dropped from the registry so that their new result replaces them. Returns the records
    /// that count as done (skip these).
    pub fn prepare_resume(&self) -> Result<BTreeMap<RunKey, RunStatus>, StoreError> {
        self.rebuild_manifest(|r| !r.status.needs_rerun())?;
        Ok(self
            .records()?
            .into_iter()
            .filter(|(_, r)| !r.status.needs_rerun())
            .map(|(k, r)| (k, r.status))
            .collect())
    }

    /// Archives a finished run: `trace.jsonl` (its trace events, one per line), `result.json`,
    /// then the registry line. Returns the run folder.
    pub fn archive(&self, record: &RunRecord) -> Result<PathBuf, StoreError> {
        let trace: Vec<serde_json::Value> = crate::record::trace_of(record)
            .iter()
            .filter_map(|e| serde_json::to_value(e).ok())
            .collect();
        let dir = record.key.dir(&self.root);
        let err = |path: &Path, message: String| StoreError {
            path: path.to_path_buf(),
            message,
        };
        std::fs::create_dir_all(&dir).map_err(|e| err(&dir, e.to_string()))?;
        let mut lines = String::new();
        for ev in &trace {
            lines.push_str(&ev.to_string());
            lines.push('\n');
        }
        let trace_path = dir.join("trace.jsonl");
        write_atomic(&trace_path, lines.as_bytes()).map_err(|e| err(&trace_path, e.to_string()))?;
        record
            .write(&dir)
            .map_err(|RecordError { path, message }| err(&path, message))?;
        let manifest = self.manifest_path();
        append_line_synced(&manifest, &record.manifest_row().to_csv())
            .map_err(|e| err(&manifest, e.to_string()))?;
        Ok(dir)
    }

    /// Replaces a run's `result.json` (e.g. after re-judging) and rebuilds the registry.
    pub fn update(&self, record: &RunRecord) -> Result<(), StoreError> {
        let dir = record.key.dir(&self.root);
        record
            .write(&dir)
            .map_err(|RecordError { path, message }| StoreError { path, message })?;
        self.rebuild_manifest(|_| true).map(|_| ())
    }
}
