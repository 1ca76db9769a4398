//! Gathering runs roots into one (`faultbench merge ROOT... --into ROOT`): the shards of a
//! sharded bench, or roots of one configuration run on several machines.
//!
//! Everything is checked before anything is written: every root must hold a run identity, and
//! the identities must agree on every configuration field (the `shard` field aside, which only
//! says which part a root ran; shards of different splits are refused); a run present in two
//! roots must be the same run (identical records), else it is refused by key. Then run folders
//! are copied (regular files and folders only; a link anywhere is refused), the merged identity
//! is written without its `shard` field, and `MANIFEST.csv` is rebuilt from the records.

use crate::plan::SHARD_FIELD;
use faultbench_core::identity::{IdentityError, RunIdentity};
use faultbench_core::record::RunKey;
use faultbench_core::store::{RunsRoot, StoreError};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Why roots cannot be merged. Nothing was written when any of these is returned, except
/// [`MergeError::Copy`] and [`MergeError::Store`] (an I/O failure while writing).
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No source root given.
    #[error("nothing to merge: name at least one runs root")]
    NoRoots,
    /// The target is also a source.
    #[error("{} is both a source and the target; merge into a new root", path.display())]
    TargetIsSource {
        /// The root.
        path: PathBuf,
    },
    /// A root without a run identity.
    #[error("{} holds no run identity (identity.json): only roots made by `faultbench bench` can be merged; nothing was written", root.display())]
    Unrecorded {
        /// The root.
        root: PathBuf,
    },
    /// A root's identity cannot be read.
    #[error(transparent)]
    Identity(#[from] IdentityError),
    /// Two roots were made with different configurations.
    #[error("{0}")]
    Differs(Box<Clash>),
    /// A root's identity records a shard that is not `K/N` with 1 ≤ K ≤ N ≤
    /// [`MAX_SHARDS`](crate::MAX_SHARDS).
    #[error("{}: its identity.json records shard `{value}`, which is not K/N with 1 ≤ K ≤ N ≤ {}; nothing was written — restore identity.json from a backup", root.display(), crate::MAX_SHARDS)]
    BadShard {
        /// The root.
        root: PathBuf,
        /// The recorded value (cut for the message).
        value: String,
    },
    /// The same run in two roots with different records.
    #[error("run {} ({}, pass {}) is in {} and in {} with different results (status {first_status} vs {second_status}); nothing was written — keep one of them", key.scenario_id, key.agent, key.pass, first.display(), second.display())]
    Disagree {
        /// The run.
        key: Box<RunKey>,
        /// One root.
        first: PathBuf,
        /// The other.
        second: PathBuf,
        /// Its status in `first`.
        first_status: String,
        /// Its status in `second`.
        second_status: String,
    },
    /// A root cannot be read, or the target written.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A link inside a run folder.
    #[error("{}: a link inside a run folder; runs are merged from regular files only (nothing of this run was copied)", path.display())]
    Link {
        /// The link.
        path: PathBuf,
    },
    /// A run folder could not be copied.
    #[error("copying {} to {}", from.display(), to.display())]
    Copy {
        /// Source.
        from: PathBuf,
        /// Target.
        to: PathBuf,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// Two roots whose configurations differ, by their first differing field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clash {
    /// One root.
    pub first: PathBuf,
    /// The other.
    pub second: PathBuf,
    /// The first differing field (dotted path).
    pub field: String,
    /// Its value in `first`.
    pub first_value: String,
    /// Its value in `second`.
    pub second_value: String,
    /// How many other fields differ.
    pub more: usize,
}

impl std::fmt::Display for Clash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (a, b) = (self.first.display(), self.second.display());
        write!(
            f,
            "{a} and {b} were made with different configurations: {} is `{}` in {a} and `{}` in {b}",
            self.field, self.first_value, self.second_value
        )?;
        if self.more > 0 {
            write!(f, " ({} more field(s) differ)", self.more)?;
        }
        f.write_str("; nothing was written")
    }
}

/// What a merge did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MergeReport {
    /// Runs copied into the target.
    pub copied: usize,
    /// Runs the target already held, identical (not copied again).
    pub already_there: usize,
    /// Runs in the target's `MANIFEST.csv` afterwards.
    pub runs: usize,
    /// The shards the sources ran (`K/N`), if sharded.
    pub shards: BTreeSet<String>,
    /// Shards of the split that no source ran (`K/N`): the first
    /// [`MAX_LISTED_MISSING_SHARDS`] of them ([`MergeReport::missing_shard_count`] counts all).
    pub missing_shards: Vec<String>,
    /// How many shards of the split no source ran.
    pub missing_shard_count: usize,
}

/// Most missing shards a [`MergeReport`] lists (a split may have up to
/// [`MAX_SHARDS`](crate::MAX_SHARDS) parts; the rest are counted).
pub const MAX_LISTED_MISSING_SHARDS: usize = 20;

/// The identity without the fields that may differ between parts of one configuration.
fn comparable(id: &RunIdentity) -> RunIdentity {
    let mut id = id.clone();
    id.extra.remove(SHARD_FIELD);
    id
}

/// The shard a root's identity records, if any; a recorded value that is not a valid shard
/// is refused (it was not written by `bench --shard`).
fn shard_of(root: &Path, id: &RunIdentity) -> Result<Option<crate::Shard>, MergeError> {
    let Some(v) = id.extra.get(SHARD_FIELD) else {
        return Ok(None);
    };
    let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
    text.parse().map(Some).map_err(|_| MergeError::BadShard {
        root: root.to_path_buf(),
        value: faultbench_core::bounds::echo(&text).into_owned(),
    })
}

/// The shards `1/n … n/n` that are not in `present`: the first
/// [`MAX_LISTED_MISSING_SHARDS`], and how many there are (memory does not grow with `n`).
fn missing_shards(n: u32, present: &BTreeSet<u32>) -> (Vec<String>, usize) {
    let count = (n as usize).saturating_sub(present.range(1..=n).count());
    let listed = (1..=n)
        .filter(|k| !present.contains(k))
        .take(MAX_LISTED_MISSING_SHARDS)
        .map(|k| format!("{k}/{n}"))
        .collect();
    (listed, count)
}

fn shard_text(id: &RunIdentity) -> String {
    id.extra
        .get(SHARD_FIELD)
        .and_then(|v| v.as_str())
        .unwrap_or("none")
        .to_string()
}

fn same_path(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

/// Merges the runs of `roots` into `into` (created if needed; if it already holds runs, its
/// identity takes part in the check like a source's). See the [module docs](self).
///
/// # Errors
/// See [`MergeError`].
pub fn merge(roots: &[PathBuf], into: &Path) -> Result<MergeReport, MergeError> {
    if roots.is_empty() {
        return Err(MergeError::NoRoots);
    }
    if let Some(r) = roots.iter().find(|r| same_path(r, into)) {
        return Err(MergeError::TargetIsSource { path: r.clone() });
    }
    // Identities: every source has one; all agree with the first (and with the target's).
    let mut ids: Vec<(PathBuf, RunIdentity)> = Vec::new();
    for r in roots {
        let id = RunIdentity::load(r)?.ok_or_else(|| MergeError::Unrecorded { root: r.clone() })?;
        ids.push((r.clone(), id));
    }
    if let Some(id) = RunIdentity::load(into)? {
        ids.push((into.to_path_buf(), id));
    }
    let shards: Vec<Option<crate::Shard>> = ids
        .iter()
        .map(|(root, id)| shard_of(root, id))
        .collect::<Result<_, _>>()?;
    let (first, base) = (&ids[0].0, comparable(&ids[0].1));
    for (k, (root, id)) in ids.iter().enumerate().skip(1) {
        let mut diffs = base.differences(&comparable(id));
        if let (Some(a), Some(b)) = (shards[0], shards[k])
            && a.count != b.count
        {
            diffs.insert(
                0,
                faultbench_core::identity::Difference {
                    field: SHARD_FIELD.into(),
                    stored: shard_text(&ids[0].1),
                    new: shard_text(id),
                },
            );
        }
        if let Some(d) = diffs.first() {
            return Err(MergeError::Differs(Box::new(Clash {
                first: first.clone(),
                second: root.clone(),
                field: d.field.clone(),
                first_value: d.stored.clone(),
                second_value: d.new.clone(),
                more: diffs.len() - 1,
            })));
        }
    }
    let mut merged = comparable(&ids[0].1);
    for (_, id) in &ids[1..] {
        merged = merged.merged_with(&comparable(id));
        if id.created_at < merged.created_at {
            merged.created_at.clone_from(&id.created_at);
        }
    }

    // Runs: one per key; a key in two roots must hold the same record.
    let target = RunsRoot::attach(into);
    let held = if into.exists() {
        target.records()?
    } else {
        BTreeMap::new()
    };
    let mut chosen: BTreeMap<RunKey, (PathBuf, PathBuf)> = BTreeMap::new();
    let mut seen: BTreeMap<RunKey, (PathBuf, faultbench_core::record::RunRecord)> = held
        .into_iter()
        .map(|(k, r)| (k, (into.to_path_buf(), r)))
        .collect();
    let mut report = MergeReport::default();
    for root in roots {
        let (ok, bad) = faultbench_core::record::scan_records(root);
        if let Some(e) = bad.first() {
            return Err(StoreError {
                path: e.path.clone(),
                message: format!("{} (fix or delete it)", e.message),
            }
            .into());
        }
        for (file, rec) in ok {
            let dir = file.parent().unwrap_or(root).to_path_buf();
            if let Some((other, prev)) = seen.get(&rec.key) {
                if prev != &rec {
                    return Err(MergeError::Disagree {
                        key: Box::new(rec.key.clone()),
                        first: other.clone(),
                        second: root.clone(),
                        first_status: prev.status.to_string(),
                        second_status: rec.status.to_string(),
                    });
                }
                if other == into {
                    report.already_there += 1;
                }
                continue;
            }
            check_no_links(&dir)?;
            chosen.insert(rec.key.clone(), (dir, rec.key.dir(into)));
            seen.insert(rec.key.clone(), (root.clone(), rec));
        }
    }
    report.shards = shards.iter().flatten().map(ToString::to_string).collect();
    if let Some(n) = shards.iter().flatten().map(|s| s.count).next() {
        let present: BTreeSet<u32> = shards.iter().flatten().map(|s| s.index).collect();
        (report.missing_shards, report.missing_shard_count) = missing_shards(n, &present);
    }

    // Write: run folders, then the identity, then the registry.
    std::fs::create_dir_all(into).map_err(|source| MergeError::Copy {
        from: first.clone(),
        to: into.to_path_buf(),
        source,
    })?;
    for (from, to) in chosen.values() {
        copy_tree(from, to)?;
        report.copied += 1;
    }
    merged.write(into).map_err(MergeError::Identity)?;
    report.runs = RunsRoot::open(into)?.records()?.len();
    Ok(report)
}

/// Refuses a run folder with a link anywhere below it (checked before anything is copied).
fn check_no_links(dir: &Path) -> Result<(), MergeError> {
    let meta = std::fs::symlink_metadata(dir).map_err(|source| MergeError::Copy {
        from: dir.to_path_buf(),
        to: dir.to_path_buf(),
        source,
    })?;
    if meta.file_type().is_symlink() {
        return Err(MergeError::Link {
            path: dir.to_path_buf(),
        });
    }
    if meta.is_dir() {
        let rd = std::fs::read_dir(dir).map_err(|source| MergeError::Copy {
            from: dir.to_path_buf(),
            to: dir.to_path_buf(),
            source,
        })?;
        for e in rd {
            let e = e.map_err(|source| MergeError::Copy {
                from: dir.to_path_buf(),
                to: dir.to_path_buf(),
                source,
            })?;
            check_no_links(&e.path())?;
        }
    }
    Ok(())
}

/// Copies a folder of regular files and folders (links were refused before).
fn copy_tree(from: &Path, to: &Path) -> Result<(), MergeError> {
    let err = |source| MergeError::Copy {
        from: from.to_path_buf(),
        to: to.to_path_buf(),
        source,
    };
    let meta = std::fs::symlink_metadata(from).map_err(err)?;
    if meta.is_dir() {
        std::fs::create_dir_all(to).map_err(err)?;
        for e in std::fs::read_dir(from).map_err(err)? {
            let e = e.map_err(err)?;
            copy_tree(&e.path(), &to.join(e.file_name()))?;
        }
    } else if meta.is_file() {
        std::fs::copy(from, to).map_err(err)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with_shard(dir: &Path, name: &str, shard: &str) -> PathBuf {
        let root = dir.join(name);
        std::fs::create_dir_all(&root).unwrap();
        let mut id = RunIdentity::example();
        id.extra.insert(SHARD_FIELD.into(), shard.into());
        id.write(&root).unwrap();
        root
    }

    /// Issue 30: `"shard": "1/4294967295"` in an identity made merge list every missing shard
    /// (over 2.2 GB, then an abort). Such a shard is now refused before anything is written.
    #[test]
    fn a_shard_count_over_the_cap_is_refused_before_writing() {
        let tmp = tempfile::tempdir().unwrap();
        let a = root_with_shard(tmp.path(), "a", "1/4294967295");
        let b = root_with_shard(tmp.path(), "b", "2/4294967295");
        let into = tmp.path().join("merged");
        let e = merge(&[a.clone(), b], &into).unwrap_err();
        assert!(matches!(e, MergeError::BadShard { .. }), "{e}");
        let msg = e.to_string();
        assert!(
            msg.contains(&a.display().to_string()) && msg.contains("1/4294967295"),
            "{msg}"
        );
        assert!(!into.exists(), "nothing written");
    }

    #[test]
    fn missing_shards_are_listed_up_to_a_bound_and_counted() {
        let present: BTreeSet<u32> = [1, 3].into();
        let (listed, count) = missing_shards(4, &present);
        assert_eq!((listed, count), (vec!["2/4".into(), "4/4".into()], 2));
        // However many parts a split claims, the list stays short.
        let (listed, count) = missing_shards(u32::MAX, &present);
        assert_eq!(listed.len(), MAX_LISTED_MISSING_SHARDS);
        assert_eq!(listed[0], format!("2/{}", u32::MAX));
        assert_eq!(count, u32::MAX as usize - 2);
    }

    #[test]
    fn the_largest_split_merges_and_reports_its_missing_shards() {
        let tmp = tempfile::tempdir().unwrap();
        let n = crate::MAX_SHARDS;
        let a = root_with_shard(tmp.path(), "a", &format!("1/{n}"));
        let b = root_with_shard(tmp.path(), "b", &format!("{n}/{n}"));
        let r = merge(&[a, b], &tmp.path().join("merged")).unwrap();
        assert_eq!(r.missing_shard_count, n as usize - 2);
        assert_eq!(r.missing_shards.len(), MAX_LISTED_MISSING_SHARDS);
        assert_eq!(r.missing_shards[0], format!("2/{n}"));
    }
}
