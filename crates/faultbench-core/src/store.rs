//! A runs root on disk: archiving finished runs crash-safely and knowing what is done.
//!
//! Writing order for each run: `trace.jsonl`, then `result.json` (atomic rename), then one line
//! appended to `MANIFEST.csv` and synced. `result.json` files are the source of truth: a crash
//! between the last two steps is repaired on the next open by rebuilding the registry from them,
//! and a torn last registry line is never read as a run.
//!
//! The root itself is the user's (`--runs-root`, used as given); everything below it is written
//! through [`OutputDir`]: a run folder, `MANIFEST.csv` or `result.json` that is a link planted in
//! the root is refused, never written through.
//!
//! ```
//! use faultbench_core::store::RunsRoot;
//! let dir = tempfile::tempdir().unwrap();
//! let root = RunsRoot::open(dir.path()).unwrap();
//! assert!(root.records().unwrap().is_empty());
//! assert!(dir.path().join("MANIFEST.csv").is_file());
//! ```

use crate::output::{OutputDir, OutputError};
use crate::record::{MANIFEST_HEADER, RunKey, RunRecord, scan_records};
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

impl From<OutputError> for StoreError {
    fn from(e: OutputError) -> StoreError {
        StoreError {
            path: e.path,
            message: e.kind.to_string(),
        }
    }
}

impl From<crate::record::RecordError> for StoreError {
    fn from(e: crate::record::RecordError) -> StoreError {
        StoreError {
            path: e.path,
            message: e.message,
        }
    }
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
        Ok(record.write_in(&self.run_dir(&record.key)?)?)
    }

    /// A run's folder, created without following any link below the root.
    fn run_dir(&self, key: &RunKey) -> Result<OutputDir, StoreError> {
        let relative = key.relative_dir().map_err(|e| StoreError {
            path: self.root.clone(),
            message: format!(
                "run {} {} pass {}: {e}",
                key.scenario_id, key.agent, key.pass
            ),
        })?;
        Ok(OutputDir::open(&self.root, relative)?)
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
        // root is refused, not waited on) counts as different and is replaced — and a link is
        // refused by the write below.
        let current =
            crate::fsutil::read_regular_string_capped(&path, text.len() as u64).unwrap_or_default();
        if current != text {
            OutputDir::existing(&self.root)?.write("MANIFEST.csv", text.as_bytes())?;
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
        let dir = self.run_dir(&record.key)?;
        let mut lines = String::new();
        for ev in &trace {
            lines.push_str(&ev.to_string());
            lines.push('\n');
        }
        dir.write("trace.jsonl", lines.as_bytes())?;
        record.write_in(&dir)?;
        OutputDir::existing(&self.root)?
            .append_line("MANIFEST.csv", &record.manifest_row().to_csv())?;
        Ok(dir.path().to_path_buf())
    }

    /// Replaces a run's `result.json` (e.g. after re-judging) and rebuilds the registry.
    pub fn update(&self, record: &RunRecord) -> Result<(), StoreError> {
        record.write_in(&self.run_dir(&record.key)?)?;
        self.rebuild_manifest(|_| true).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::tests::record;
    use std::os::unix::fs::symlink;

    #[test]
    fn archives_a_run_and_lists_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = RunsRoot::open(tmp.path()).unwrap();
        let r = record();
        let dir = root.archive(&r).unwrap();
        assert_eq!(dir, r.key.dir(tmp.path()).unwrap());
        assert!(dir.join("trace.jsonl").is_file() && dir.join("result.json").is_file());
        assert_eq!(root.records().unwrap().len(), 1);
        let manifest = std::fs::read_to_string(root.manifest_path()).unwrap();
        assert_eq!(manifest.lines().count(), 2, "{manifest}");
    }

    /// Issue 30: a run folder's parent planted as a link sent the bench's writes (run folders,
    /// records, traces) outside the root.
    #[test]
    fn a_link_planted_in_the_root_is_refused_not_written_through() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root = RunsRoot::open(tmp.path()).unwrap();
        let r = record();
        symlink(outside.path(), tmp.path().join(r.key.topology.as_str())).unwrap();
        for e in [
            root.archive(&r).unwrap_err(),
            root.write_record(&r).unwrap_err(),
            root.update(&r).unwrap_err(),
        ] {
            assert_eq!(e.path, tmp.path().join("Lab"), "{e}");
            assert!(e.to_string().contains("is a symbolic link"), "{e}");
        }
        assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_registry_planted_as_a_link_is_refused_and_its_target_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let root = RunsRoot::open(tmp.path()).unwrap();
        std::fs::remove_file(root.manifest_path()).unwrap();
        symlink(&victim, root.manifest_path()).unwrap();
        let e = root.archive(&record()).unwrap_err();
        assert_eq!(e.path, root.manifest_path(), "{e}");
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        let e = RunsRoot::open(tmp.path()).unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }

    #[test]
    fn a_key_whose_agent_is_a_path_step_is_refused_before_anything_is_written() {
        let tmp = tempfile::tempdir().unwrap();
        let root = RunsRoot::open(tmp.path()).unwrap();
        let mut r = record();
        r.key.agent = "..".into();
        let e = root.archive(&r).unwrap_err();
        assert!(e.to_string().contains("invalid agent name"), "{e}");
        let entries: Vec<_> = std::fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(entries.len(), 1, "only MANIFEST.csv: {entries:?}");
    }
}
