//! Gathering runs roots into one (`faultbench merge ROOT... --into ROOT`): the shards of a
//! sharded bench, or roots of one configuration run on several machines.
//!
//! Everything is checked before anything is written:
//!
//! - the target and every source are apart: the target is not a source (nor a link to one), not
//!   inside one (the copy would copy itself, folder in folder), and holds none (a source inside
//!   the target would leave its runs there twice: in its own folder and in their run folders).
//!   Paths are compared canonicalised (the target's missing tail appended) and by device and
//!   inode of every ancestor, so links and bind mounts do not hide a nesting;
//! - every root holds a run identity, and the identities agree on every configuration field
//!   (the `shard` field aside, which only says which part a root ran; shards of different splits
//!   are refused);
//! - a run present in two roots is the same run (identical records), else it is refused by key;
//!   two runs that would share one folder (agent names that differ only in characters a folder
//!   name cannot hold) are refused;
//! - no run folder holds a link, and no part of the target that a run folder would go through —
//!   nor its `identity.json` or `MANIFEST.csv` — is a link.
//!
//! Then run folders are copied through [`OutputDir`] (regular files and folders only; folders
//! created and files written without following links, so a link planted in the target while the
//! merge runs is refused, not written through), the merged identity is written without its
//! `shard` field, and `MANIFEST.csv` is rebuilt from the records.

use crate::plan::SHARD_FIELD;
use faultbench_core::identity::{IDENTITY_FILE, IdentityError, RunIdentity};
use faultbench_core::output::{OutputDir, OutputError, check_no_link};
use faultbench_core::record::RunKey;
use faultbench_core::store::{RunsRoot, StoreError};
use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Component, Path, PathBuf};

/// Why roots cannot be merged. Nothing was written when any of these is returned, except
/// [`MergeError::Copy`], [`MergeError::Store`] and [`MergeError::Output`] when they come from
/// the writing itself (an I/O failure, or a link planted in the target while the merge ran).
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    /// No source root given.
    #[error("nothing to merge: name at least one runs root")]
    NoRoots,
    /// The target is also a source (or a link to one).
    #[error("{} is both a source and the target; nothing was written — merge into a new root", path.display())]
    TargetIsSource {
        /// The root.
        path: PathBuf,
    },
    /// The target lies inside a source.
    #[error("the target {} is inside the source {}: the merge would copy that source into itself; nothing was written — merge into a folder outside every source", target.display(), source_root.display())]
    TargetInsideSource {
        /// The target.
        target: PathBuf,
        /// The source holding it.
        source_root: PathBuf,
    },
    /// A source lies inside the target.
    #[error("the source {} is inside the target {}: its runs would be in the merged root twice (in its own folder and in their run folders); nothing was written — merge into a folder outside every source", source_root.display(), target.display())]
    SourceInsideTarget {
        /// The source.
        source_root: PathBuf,
        /// The target holding it.
        target: PathBuf,
    },
    /// Two runs would be copied into one folder.
    #[error("runs {} and {} would share the folder {} (their agent names differ only in characters a folder name cannot hold); nothing was written — rename one agent's runs", show(first), show(second), folder.display())]
    SameFolder {
        /// One run.
        first: Box<RunKey>,
        /// The other.
        second: Box<RunKey>,
        /// The folder, relative to the target.
        folder: PathBuf,
    },
    /// A run's key cannot name a folder.
    #[error("{}: {reason}; nothing was written", path.display())]
    BadKey {
        /// The record.
        path: PathBuf,
        /// Why.
        reason: String,
    },
    /// The target cannot be written without following a link (found before anything was
    /// written), or a write into it failed.
    #[error(transparent)]
    Output(#[from] OutputError),
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

fn show(k: &RunKey) -> String {
    format!("{} {} pass {}", k.scenario_id, k.agent, k.pass)
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
        value: faultbench_core::text::echo(&text).into_owned(),
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

/// Where `path` is: its longest existing ancestor canonicalised (links resolved), with the
/// missing rest appended (`.` dropped, `..` taken lexically: a part that does not exist yet is
/// no link).
fn resolved(path: &Path) -> PathBuf {
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    let parts: Vec<Component> = absolute.components().collect();
    for cut in (0..=parts.len()).rev() {
        let head: PathBuf = parts[..cut].iter().collect();
        if let Ok(mut out) = head.canonicalize() {
            for c in &parts[cut..] {
                match c {
                    Component::Normal(n) => out.push(n),
                    Component::ParentDir => {
                        out.pop();
                    }
                    _ => {}
                }
            }
            return out;
        }
    }
    absolute
}

/// (device, inode) of `path` and of each existing ancestor, innermost first.
fn identities_up(path: &Path) -> Vec<(u64, u64)> {
    path.ancestors()
        .filter_map(|a| std::fs::metadata(a).ok())
        .map(|m| (m.dev(), m.ino()))
        .collect()
}

/// Refuses a target that is, is inside, or holds a source (see the [module docs](self)).
fn check_apart(roots: &[PathBuf], into: &Path) -> Result<(), MergeError> {
    let target = resolved(into);
    let target_up = identities_up(&target);
    let target_id = std::fs::metadata(&target).ok().map(|m| (m.dev(), m.ino()));
    for root in roots {
        let source = resolved(root);
        let source_id = std::fs::metadata(&source).ok().map(|m| (m.dev(), m.ino()));
        if source == target || (source_id.is_some() && source_id == target_id) {
            return Err(MergeError::TargetIsSource { path: root.clone() });
        }
        if target.starts_with(&source) || source_id.is_some_and(|id| target_up.contains(&id)) {
            return Err(MergeError::TargetInsideSource {
                target: into.to_path_buf(),
                source_root: root.clone(),
            });
        }
        if source.starts_with(&target)
            || target_id.is_some_and(|id| identities_up(&source).contains(&id))
        {
            return Err(MergeError::SourceInsideTarget {
                source_root: root.clone(),
                target: into.to_path_buf(),
            });
        }
    }
    Ok(())
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
    check_apart(roots, into)?;
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
                faultbench_core::identity::IdentityDifference {
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

    // Runs: one per key; a key in two roots must hold the same record; one run per folder.
    let mut seen: BTreeMap<RunKey, (PathBuf, faultbench_core::record::RunRecord)> = BTreeMap::new();
    // Run folders (relative to the target) already taken, by the run that takes them.
    let mut folders: BTreeMap<PathBuf, RunKey> = BTreeMap::new();
    if into.exists() {
        for (file, rec) in records_of(into)? {
            let dir = file.parent().unwrap_or(into);
            if let Ok(rel) = dir.strip_prefix(into) {
                folders.insert(rel.to_path_buf(), rec.key.clone());
            }
            seen.entry(rec.key.clone())
                .or_insert_with(|| (into.to_path_buf(), rec));
        }
    }
    let mut chosen: BTreeMap<RunKey, (PathBuf, PathBuf)> = BTreeMap::new();
    let mut report = MergeReport::default();
    for root in roots {
        for (file, rec) in records_of(root)? {
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
            let rel = rec.key.relative_dir().map_err(|e| MergeError::BadKey {
                path: file.clone(),
                reason: e.to_string(),
            })?;
            if let Some(other) = folders.get(&rel).filter(|k| **k != rec.key) {
                return Err(MergeError::SameFolder {
                    first: Box::new(other.clone()),
                    second: Box::new(rec.key.clone()),
                    folder: rel,
                });
            }
            folders.insert(rel.clone(), rec.key.clone());
            chosen.insert(rec.key.clone(), (dir, rel));
            seen.insert(rec.key.clone(), (root.clone(), rec));
        }
    }
    // No write may pass through a link already in the target: refused here, before anything is
    // written (the writes below refuse one planted later, too).
    for (_, rel) in chosen.values() {
        check_no_link(into, rel)?;
    }
    for name in [IDENTITY_FILE, "MANIFEST.csv"] {
        check_no_link(into, Path::new(name))?;
    }
    report.shards = shards.iter().flatten().map(ToString::to_string).collect();
    if let Some(n) = shards.iter().flatten().map(|s| s.count).next() {
        let present: BTreeSet<u32> = shards.iter().flatten().map(|s| s.index).collect();
        (report.missing_shards, report.missing_shard_count) = missing_shards(n, &present);
    }

    // Write: run folders, then the identity, then the registry.
    let target = OutputDir::open(into, "")?;
    for (from, rel) in chosen.values() {
        copy_tree(from, &target.subdir(rel)?)?;
        report.copied += 1;
    }
    merged.write(into).map_err(MergeError::Identity)?;
    report.runs = RunsRoot::open(into)?.records()?.len();
    Ok(report)
}

/// Every record of a root; an unreadable one refuses the merge.
fn records_of(
    root: &Path,
) -> Result<Vec<(PathBuf, faultbench_core::record::RunRecord)>, MergeError> {
    let (ok, bad) = faultbench_core::record::scan_records(root);
    if let Some(e) = bad.first() {
        return Err(StoreError {
            path: e.path.clone(),
            message: format!("{} (fix or delete it)", e.message),
        }
        .into());
    }
    Ok(ok)
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

/// Copies a folder of regular files and folders into `to` (links were refused before; one that
/// appears since is refused again, in the source by the entry's type and the opened file's
/// identity, in the target by [`OutputDir`]).
fn copy_tree(from: &Path, to: &OutputDir) -> Result<(), MergeError> {
    let err = |source| MergeError::Copy {
        from: from.to_path_buf(),
        to: to.path().to_path_buf(),
        source,
    };
    for e in std::fs::read_dir(from).map_err(err)? {
        let e = e.map_err(err)?;
        let src = e.path();
        let ft = e.file_type().map_err(err)?;
        if ft.is_symlink() {
            return Err(MergeError::Link { path: src });
        }
        let Some(name) = e.file_name().to_str().map(str::to_string) else {
            return Err(err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: a file name that is not UTF-8", src.display()),
            )));
        };
        if ft.is_dir() {
            copy_tree(&src, &to.subdir(&name)?)?;
        } else if ft.is_file() {
            let lstat = e.metadata().map_err(err)?;
            let mut file = std::fs::File::open(&src).map_err(err)?;
            let opened = file.metadata().map_err(err)?;
            if (opened.dev(), opened.ino()) != (lstat.dev(), lstat.ino()) {
                // Swapped for a link between listing and opening.
                return Err(MergeError::Link { path: src });
            }
            to.write_with(&name, |out| std::io::copy(&mut file, out).map(|_| ()))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn apart(roots: &[&Path], into: &Path) -> Result<(), MergeError> {
        let roots: Vec<PathBuf> = roots.iter().map(|p| p.to_path_buf()).collect();
        check_apart(&roots, into)
    }

    #[test]
    fn the_target_must_lie_outside_every_source_and_hold_none() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
        std::fs::create_dir_all(a.join("T/base__x")).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        apart(&[&a, &b], &tmp.path().join("merged")).unwrap();
        apart(&[&a], &tmp.path().join("new/../merged2")).unwrap();
        assert!(matches!(
            apart(&[&a, &b], &b),
            Err(MergeError::TargetIsSource { .. })
        ));
        for inside in [
            a.join("sub"),
            a.join("T/base__x/deep/er"),
            a.join("T/./x/.."),
        ] {
            let e = apart(&[&b, &a], &inside).unwrap_err();
            assert!(
                matches!(&e, MergeError::TargetInsideSource { source_root, .. } if *source_root == a),
                "{inside:?}: {e}"
            );
            assert!(e.to_string().contains("nothing was written"), "{e}");
        }
        let e = apart(&[&a.join("T")], &a).unwrap_err();
        assert!(matches!(e, MergeError::SourceInsideTarget { .. }), "{e}");
        let e = apart(&[&a], tmp.path()).unwrap_err();
        assert!(matches!(e, MergeError::SourceInsideTarget { .. }), "{e}");
    }

    #[test]
    fn links_do_not_hide_a_nesting() {
        let tmp = tempfile::tempdir().unwrap();
        let a = tmp.path().join("a");
        std::fs::create_dir_all(a.join("T")).unwrap();
        let to_a = tmp.path().join("to-a");
        symlink(&a, &to_a).unwrap();
        // The target is a link to the source, or reached through one.
        assert!(matches!(
            apart(&[&a], &to_a),
            Err(MergeError::TargetIsSource { .. })
        ));
        assert!(matches!(
            apart(&[&a], &to_a.join("T/new")),
            Err(MergeError::TargetInsideSource { .. })
        ));
        // The source is named through a link and the target inside it by its real path.
        assert!(matches!(
            apart(&[&to_a], &a.join("new")),
            Err(MergeError::TargetInsideSource { .. })
        ));
        // A relative target inside the source.
        let cwd_rel = a.join("rel");
        let rel = pathdiff(&cwd_rel);
        assert!(matches!(
            apart(&[&a], &rel),
            Err(MergeError::TargetInsideSource { .. })
        ));
    }

    /// `cwd`-relative form of an absolute path (`../../…/tmp/a/rel`).
    fn pathdiff(p: &Path) -> PathBuf {
        let cwd = std::env::current_dir().unwrap();
        let mut out = PathBuf::new();
        for _ in cwd.components().skip(1) {
            out.push("..");
        }
        out.join(p.strip_prefix("/").unwrap())
    }

    #[test]
    fn resolved_appends_the_missing_tail_lexically() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap();
        assert_eq!(resolved(&tmp.path().join("x/./y/../z")), real.join("x/z"));
        assert_eq!(resolved(tmp.path()), real);
    }

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
