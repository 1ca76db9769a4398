//! The release's layout: one accessor per part, and whether the checkout is the full release.
//!
//! ```text
//! dataset/dataset_index.csv                     the 200 core scenario ids
//! dataset/<topo>_Q/<layer>/<id>.txt             scenario files (560 in the release)
//! faultbench/benchmarks/<list>.csv              the ticket list of each experiment
//! final_results/MANIFEST.csv                    the run registry (3,960 rows)
//! final_results/<arm>/<Topology>/<scenario>/<agent>/<pass>/result.json   run records
//! ```
//!
//! Listings walk exactly that layout (no deeper), skip symbolic links and hidden entries, and
//! sort their result, so a test's order does not depend on the file system.

use crate::PINNED_COMMIT;
use crate::locate::ReleaseOrigin;
use std::path::{Path, PathBuf};

/// Exact counts of the full release at [`PINNED_COMMIT`], asserted only on a full checkout.
pub mod full {
    /// Scenario files under `dataset/` (200 core + 5 × 72 persona rewrites).
    pub const SCENARIO_FILES: usize = 560;
    /// Core scenarios (`base` + `cex`), the rows of `dataset/dataset_index.csv`.
    pub const CORE_SCENARIOS: usize = 200;
    /// `base` scenario files (correct faults).
    pub const BASE: usize = 80;
    /// `cex` scenario files (false premise, wrong device, wrong cause).
    pub const CEX: usize = 120;
    /// Files of each persona layer.
    pub const PER_PERSONA: usize = 72;
    /// Rows of `final_results/MANIFEST.csv`.
    pub const MANIFEST_ROWS: usize = 3960;
    /// Run records (`result.json`) under `final_results/`.
    pub const RUN_RECORDS: usize = 3960;
}

/// Whether a checkout is the whole release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completeness {
    /// A git checkout at [`PINNED_COMMIT`] (what `scripts/fetch-release.sh` makes).
    Full,
    /// Anything else: a subset of the release's files in its layout (our `../shared/release`),
    /// or a checkout at another commit. The reason says which.
    Partial(String),
}

/// A checkout of the release (full or partial), found by [`crate::locate`].
#[derive(Debug, Clone)]
pub struct Release {
    root: PathBuf,
    origin: ReleaseOrigin,
    completeness: Completeness,
}

impl Release {
    pub(crate) fn new(root: PathBuf, origin: ReleaseOrigin) -> Release {
        let completeness = match git_head(&root) {
            Some(head) if head == PINNED_COMMIT => Completeness::Full,
            Some(head) => Completeness::Partial(format!(
                "a git checkout at {head}, not the pinned {PINNED_COMMIT}"
            )),
            None => Completeness::Partial(format!("not a git checkout at {PINNED_COMMIT}")),
        };
        Release {
            root,
            origin,
            completeness,
        }
    }

    /// The checkout's folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where it was found.
    pub fn origin(&self) -> ReleaseOrigin {
        self.origin
    }

    /// Full release or partial copy.
    pub fn completeness(&self) -> &Completeness {
        &self.completeness
    }

    /// True for a git checkout at [`PINNED_COMMIT`]: the full release's exact counts apply.
    pub fn is_full(&self) -> bool {
        self.completeness == Completeness::Full
    }

    /// `dataset/`.
    pub fn dataset(&self) -> PathBuf {
        self.root.join("dataset")
    }

    /// `dataset/dataset_index.csv`.
    pub fn dataset_index(&self) -> PathBuf {
        self.dataset().join("dataset_index.csv")
    }

    /// `dataset/<folder>/<layer>/<id>.txt`, e.g. `("kath2_Q", "base", "kath2-router0-ripd-down")`.
    pub fn scenario(&self, folder: &str, layer: &str, id: &str) -> PathBuf {
        let file = format!("{}.txt", plain(id));
        self.dataset()
            .join(plain(folder))
            .join(plain(layer))
            .join(file)
    }

    /// The topology folders present, `dataset/<topo>_Q`, sorted.
    pub fn topology_folders(&self) -> Vec<PathBuf> {
        dirs(&self.dataset())
            .into_iter()
            .filter(|d| {
                d.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with("_Q"))
            })
            .collect()
    }

    /// Every scenario file present, `dataset/<topo>_Q/<layer>/*.txt`, sorted by path.
    pub fn scenario_files(&self) -> Vec<PathBuf> {
        let mut out = Vec::new();
        for topo in self.topology_folders() {
            for layer in dirs(&topo) {
                out.extend(
                    files(&layer)
                        .into_iter()
                        .filter(|f| f.extension().is_some_and(|e| e == "txt")),
                );
            }
        }
        out.sort();
        out
    }

    /// `final_results/`, the root of the run records (what `faultbench judge agree` reads).
    pub fn final_results(&self) -> PathBuf {
        self.root.join("final_results")
    }

    /// `final_results/MANIFEST.csv`.
    pub fn manifest(&self) -> PathBuf {
        self.final_results().join("MANIFEST.csv")
    }

    /// `final_results/<arm>/<topology>/<scenario>/<agent>/<pass>/result.json` (the MANIFEST's
    /// columns `arm`, `topology`, `scenario_id`, `agent`, `pass`).
    pub fn run_record(
        &self,
        arm: &str,
        topology: &str,
        scenario: &str,
        agent: &str,
        pass: &str,
    ) -> PathBuf {
        let mut p = self.final_results();
        for part in [arm, topology, scenario, agent, pass] {
            p.push(plain(part));
        }
        p.join("result.json")
    }

    /// Every run record present, sorted by path.
    pub fn run_records(&self) -> Vec<PathBuf> {
        let mut level = vec![self.final_results()];
        for _ in 0..5 {
            level = level.iter().flat_map(|d| dirs(d)).collect();
        }
        let mut out: Vec<PathBuf> = level
            .into_iter()
            .map(|d| d.join("result.json"))
            .filter(|f| is_plain_file(f))
            .collect();
        out.sort();
        out
    }

    /// `faultbench/benchmarks/`.
    pub fn benchmarks(&self) -> PathBuf {
        self.root.join("faultbench/benchmarks")
    }

    /// The experiment ticket lists present, `faultbench/benchmarks/*.csv`, sorted.
    pub fn benchmark_lists(&self) -> Vec<PathBuf> {
        files(&self.benchmarks())
            .into_iter()
            .filter(|f| f.extension().is_some_and(|e| e == "csv"))
            .collect()
    }

    /// One line for logs: where, from what, full or partial.
    pub fn describe(&self) -> String {
        let what = match &self.completeness {
            Completeness::Full => format!("the full release at {PINNED_COMMIT}"),
            Completeness::Partial(why) => format!("a partial copy ({why})"),
        };
        format!("{} (from {}): {what}", self.root.display(), self.origin)
    }
}

/// A path segment given by a caller or read from a MANIFEST row: one plain name, nothing that
/// could leave the release's folder.
fn plain(segment: &str) -> &str {
    let bad = segment.is_empty()
        || segment == "."
        || segment == ".."
        || segment.contains(['/', '\\', '\0']);
    assert!(
        !bad,
        "{segment:?} is not a plain file name (release paths are built from plain names only)"
    );
    segment
}

fn entries(dir: &Path) -> Vec<(PathBuf, std::fs::FileType)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<_> = rd
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| Some((e.path(), e.file_type().ok()?)))
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Sub-folders (not links), sorted.
fn dirs(dir: &Path) -> Vec<PathBuf> {
    entries(dir)
        .into_iter()
        .filter(|(_, t)| t.is_dir())
        .map(|(p, _)| p)
        .collect()
}

/// Regular files (not links), sorted.
fn files(dir: &Path) -> Vec<PathBuf> {
    entries(dir)
        .into_iter()
        .filter(|(_, t)| t.is_file())
        .map(|(p, _)| p)
        .collect()
}

fn is_plain_file(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file())
}

/// The commit checked out in `root`, read from `.git` without running git: `HEAD` holds it
/// (detached, as `scripts/fetch-release.sh` leaves it) or names a branch whose ref holds it.
fn git_head(root: &Path) -> Option<String> {
    let dot_git = root.join(".git");
    let git_dir = if dot_git.is_file() {
        // A worktree or submodule: `.git` is a file `gitdir: <path>`.
        let text = std::fs::read_to_string(&dot_git).ok()?;
        root.join(text.trim().strip_prefix("gitdir:")?.trim())
    } else {
        dot_git
    };
    let head = std::fs::read_to_string(git_dir.join("HEAD")).ok()?;
    let head = head.trim();
    let Some(name) = head.strip_prefix("ref:").map(str::trim) else {
        return Some(head.to_string());
    };
    if !name.starts_with("refs/") || name.split('/').any(|s| s == "..") {
        return None;
    }
    if let Ok(sha) = std::fs::read_to_string(git_dir.join(name)) {
        return Some(sha.trim().to_string());
    }
    let packed = std::fs::read_to_string(git_dir.join("packed-refs")).ok()?;
    packed.lines().find_map(|l| {
        let (sha, r) = l.split_once(' ')?;
        (r == name).then(|| sha.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "faultbench-testkit-layout-{name}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn touch(root: &Path, rel: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
    }

    #[test]
    fn listings_follow_the_layout_and_nothing_else() {
        let root = scratch("listings");
        touch(&root, "dataset/dataset_index.csv");
        touch(&root, "dataset/LICENSE");
        touch(&root, "dataset/kath2_Q/base/b.txt");
        touch(&root, "dataset/kath2_Q/base/a.txt");
        touch(&root, "dataset/kath2_Q/base/notes.md");
        touch(&root, "dataset/kath2_Q/cex/deeper/c.txt");
        touch(&root, "dataset/tools/x.txt");
        touch(&root, "final_results/MANIFEST.csv");
        touch(&root, "final_results/base80/Kath2/s1/sade/p1/result.json");
        touch(&root, "final_results/base80/Kath2/s1/sade/p1/trace.log");
        touch(&root, "final_results/base80/Kath2/s1/result.json");
        touch(&root, "faultbench/benchmarks/base80.csv");
        touch(&root, "faultbench/benchmarks/README.md");
        std::os::unix::fs::symlink(
            root.join("dataset/kath2_Q/base/a.txt"),
            root.join("dataset/kath2_Q/base/link.txt"),
        )
        .unwrap();
        let r = Release::new(root.clone(), ReleaseOrigin::Env);
        let rel = |v: Vec<PathBuf>| -> Vec<String> {
            v.iter()
                .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
                .collect()
        };
        assert_eq!(
            rel(r.scenario_files()),
            ["dataset/kath2_Q/base/a.txt", "dataset/kath2_Q/base/b.txt"]
        );
        assert_eq!(
            rel(r.run_records()),
            ["final_results/base80/Kath2/s1/sade/p1/result.json"]
        );
        assert_eq!(
            rel(r.benchmark_lists()),
            ["faultbench/benchmarks/base80.csv"]
        );
        assert_eq!(
            r.run_record("base80", "Kath2", "s1", "sade", "p1"),
            r.run_records()[0]
        );
        assert_eq!(r.scenario("kath2_Q", "base", "a"), r.scenario_files()[0]);
        assert!(!r.is_full());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    #[should_panic(expected = "not a plain file name")]
    fn a_segment_leaving_the_release_is_refused() {
        let r = Release::new(PathBuf::from("/nonexistent"), ReleaseOrigin::Env);
        let _ = r.run_record("base80", "..", "s", "a", "p1");
    }

    #[test]
    fn a_checkout_at_the_pinned_commit_is_full() {
        let root = scratch("git");
        touch(&root, ".git/HEAD");
        std::fs::write(root.join(".git/HEAD"), format!("{PINNED_COMMIT}\n")).unwrap();
        assert!(Release::new(root.clone(), ReleaseOrigin::Env).is_full());

        std::fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
        touch(&root, ".git/packed-refs");
        std::fs::write(
            root.join(".git/packed-refs"),
            format!("# pack-refs\n{PINNED_COMMIT} refs/heads/main\n"),
        )
        .unwrap();
        assert!(Release::new(root.clone(), ReleaseOrigin::Env).is_full());

        touch(&root, ".git/refs/heads/main");
        std::fs::write(root.join(".git/refs/heads/main"), "0123abcd\n").unwrap();
        let r = Release::new(root.clone(), ReleaseOrigin::Env);
        assert_eq!(
            r.completeness(),
            &Completeness::Partial(format!(
                "a git checkout at 0123abcd, not the pinned {PINNED_COMMIT}"
            ))
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
