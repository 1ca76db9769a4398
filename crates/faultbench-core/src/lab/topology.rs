//! Finding the lab directory that a scenario's `Topology:` header names.
//!
//! Topologies live as directories `<root>/<ID>/` (a Kathará lab plus `baseline.toml` and
//! `TOPOLOGY.md`). A scenario names its topology by ID (`Topology: Kath2`); the public release
//! files scenarios under dataset folders whose names differ from the IDs (`kath2_Q`,
//! `nika_bgp_Q`, …), so [`topology_for_dataset_folder`] maps between the two.
//!
//! [`TopologyResolver`] searches an ordered list of roots. Its default roots are, in order: every
//! directory in `FAULTBENCH_TOPOLOGIES` (a `PATH`-style list), `./topologies`, and the
//! repository's own `topologies/` (known at build time, so `cargo run` and tests find it from any
//! working directory).
//!
//! ```
//! use faultbench_core::lab::{TopologyResolver, topology_for_dataset_folder};
//!
//! let root = tempfile::tempdir().unwrap();
//! std::fs::create_dir(root.path().join("Kath2")).unwrap();
//! std::fs::write(root.path().join("Kath2/lab.conf"), "r1[0]=A\n").unwrap();
//!
//! let resolver = TopologyResolver::new([root.path()]);
//! let t = resolver.resolve("Kath2").unwrap();
//! assert_eq!(t.id, "Kath2");
//! assert_eq!(resolver.resolve("kath2_Q").unwrap().dir, t.dir); // dataset folder names work too
//! assert!(resolver.resolve("Kath9").unwrap_err().to_string().contains("Kath2"));
//! assert_eq!(topology_for_dataset_folder("nika_bgp_Q"), Some("simple_bgp"));
//! ```

use super::{Baseline, BaselineError, LabDir, LabError};
use crate::ids::TopologyId;
use std::fmt;
use std::path::{Path, PathBuf};

/// Environment variable holding extra topology roots (searched first).
pub const TOPOLOGIES_ENV: &str = "FAULTBENCH_TOPOLOGIES";

/// The file beside `lab.conf` that holds a topology's healthy-baseline probes.
pub const BASELINE_FILE: &str = "baseline.toml";

/// The benchmark's eight topology IDs, in the paper's order (the five practitioner labs, then
/// NIKA's three).
pub const BENCHMARK_TOPOLOGIES: [&str; 8] = [
    "Kath1",
    "Kath2",
    "Kath3",
    "Kath4",
    "Kath5",
    "dc_clos_bgp",
    "ospf_enterprise_static",
    "simple_bgp",
];

/// Dataset folder ↔ topology ID, as the public release names them.
const DATASET_FOLDERS: [(&str, &str); 8] = [
    ("kath1_Q", "Kath1"),
    ("kath2_Q", "Kath2"),
    ("kath3_Q", "Kath3"),
    ("kath4_Q", "Kath4"),
    ("kath5_Q", "Kath5"),
    ("nika_bgp_Q", "simple_bgp"),
    ("nika_clos_Q", "dc_clos_bgp"),
    ("nika_ospf_Q", "ospf_enterprise_static"),
];

/// The topology ID of a dataset folder (`kath2_Q` → `Kath2`, `nika_clos_Q` → `dc_clos_bgp`).
pub fn topology_for_dataset_folder(folder: &str) -> Option<&'static str> {
    DATASET_FOLDERS
        .iter()
        .find(|(f, _)| f.eq_ignore_ascii_case(folder))
        .map(|(_, t)| *t)
}

/// The dataset folder of a topology ID (`simple_bgp` → `nika_bgp_Q`).
pub fn dataset_folder_for_topology(topology: &str) -> Option<&'static str> {
    DATASET_FOLDERS
        .iter()
        .find(|(_, t)| t.eq_ignore_ascii_case(topology))
        .map(|(f, _)| *f)
}

/// A topology directory found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topology {
    /// The topology ID (the directory name).
    pub id: String,
    /// The lab directory.
    pub dir: PathBuf,
}

impl Topology {
    /// Reads and validates the Kathará lab (`lab.conf`, `lab.dep`).
    pub fn lab(&self) -> Result<LabDir, LabError> {
        LabDir::load(&self.dir)
    }

    /// Where the baseline probes are (whether or not the file exists).
    pub fn baseline_path(&self) -> PathBuf {
        self.dir.join(BASELINE_FILE)
    }

    /// Reads the healthy-baseline probes. A topology without `baseline.toml` is an error: a lab
    /// whose health cannot be checked cannot host a benchmark run.
    pub fn baseline(&self) -> Result<Baseline, BaselineError> {
        Baseline::load(self.baseline_path())
    }
}

/// No topology of that name under the searched roots.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct TopologyNotFound {
    /// The requested name.
    pub name: String,
    /// The roots searched, in order.
    pub roots: Vec<PathBuf>,
    /// Topology IDs that do exist there.
    pub available: Vec<String>,
    /// Why the name cannot be a topology at all (not a valid id), when that is the reason.
    pub invalid: Option<String>,
}

impl fmt::Display for TopologyNotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(why) = &self.invalid {
            return write!(
                f,
                "no topology `{}`: {why}; a topology is named by the id of its folder under a topology root, never by a path",
                self.name
            );
        }
        write!(f, "no topology `{}`", self.name)?;
        if self.roots.is_empty() {
            write!(
                f,
                " (no topology root exists; pass one or set {TOPOLOGIES_ENV})"
            )?;
            return Ok(());
        }
        let roots: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
        write!(f, " under {}", roots.join(", "))?;
        if !self.available.is_empty() {
            write!(f, "; available: {}", self.available.join(", "))?;
        }
        write!(
            f,
            " (a topology is a directory `<root>/<ID>/` with lab.conf; add a root with {TOPOLOGIES_ENV})"
        )
    }
}

/// Finds topology directories by ID under ordered roots.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopologyResolver {
    roots: Vec<PathBuf>,
}

impl TopologyResolver {
    /// Searches exactly these roots, in order.
    pub fn new<I, P>(roots: I) -> Self
    where
        I: IntoIterator<Item = P>,
        P: AsRef<Path>,
    {
        TopologyResolver {
            roots: roots
                .into_iter()
                .map(|r| r.as_ref().to_path_buf())
                .collect(),
        }
    }

    /// `FAULTBENCH_TOPOLOGIES`, then `./topologies`, then the repository's `topologies/`.
    /// Roots that do not exist are dropped; duplicates are kept once.
    pub fn with_default_roots() -> Self {
        let mut roots: Vec<PathBuf> = Vec::new();
        if let Some(v) = std::env::var_os(TOPOLOGIES_ENV) {
            roots.extend(std::env::split_paths(&v).filter(|p| !p.as_os_str().is_empty()));
        }
        roots.push(PathBuf::from("topologies"));
        roots.push(repo_topologies());
        let mut out: Vec<PathBuf> = Vec::new();
        for r in roots {
            if !r.is_dir() {
                continue;
            }
            let canon = r.canonicalize().unwrap_or(r);
            if !out.contains(&canon) {
                out.push(canon);
            }
        }
        TopologyResolver { roots: out }
    }

    /// Adds a root searched before the others.
    pub fn prepend_root(mut self, root: impl AsRef<Path>) -> Self {
        self.roots.insert(0, root.as_ref().to_path_buf());
        self
    }

    /// The roots, in search order.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Finds a topology by ID. The exact directory name wins; then a case-insensitive match;
    /// then a dataset folder name (`kath2_Q`) is translated to its ID.
    ///
    /// The name must be a valid [`TopologyId`] (never a path), and the folder found must lie
    /// inside its root once links are resolved: a topology root's entry that is a symlink to a
    /// folder elsewhere is not a topology.
    pub fn resolve(&self, name: &str) -> Result<Topology, TopologyNotFound> {
        let name = name.trim();
        let id = TopologyId::new(name).map_err(|e| TopologyNotFound {
            name: name.chars().take(80).collect(),
            roots: self.roots.clone(),
            available: Vec::new(),
            invalid: Some(e.to_string()),
        })?;
        let mut candidates = vec![id];
        if let Some(id) = topology_for_dataset_folder(name) {
            candidates.push(TopologyId::new(id).expect("the table holds valid ids"));
        }
        for want in &candidates {
            for root in &self.roots {
                if let Some(dir) = lab_in_root(root, want) {
                    return Ok(Topology {
                        id: want.to_string(),
                        dir,
                    });
                }
            }
        }
        let all = self.list();
        for want in &candidates {
            if let Some(t) = all.iter().find(|t| t.id.eq_ignore_ascii_case(want)) {
                return Ok(t.clone());
            }
        }
        Err(TopologyNotFound {
            name: name.to_string(),
            roots: self.roots.clone(),
            available: all.into_iter().map(|t| t.id).collect(),
            invalid: None,
        })
    }

    /// Every topology under the roots (directories holding a `lab.conf` or a `mock.toml`),
    /// sorted by ID. An ID
    /// present under several roots is listed once, from the first root. Folders whose names are
    /// not valid ids, and links leading out of their root, are not listed.
    pub fn list(&self) -> Vec<Topology> {
        let mut out: Vec<Topology> = Vec::new();
        for root in &self.roots {
            let Ok(entries) = std::fs::read_dir(root) else {
                continue;
            };
            for e in entries.flatten() {
                let Some(id) = e.file_name().to_str().and_then(|n| TopologyId::new(n).ok()) else {
                    continue;
                };
                let Some(dir) = lab_in_root(root, &id) else {
                    continue;
                };
                if !out.iter().any(|t| t.id == id.as_str()) {
                    out.push(Topology {
                        id: id.to_string(),
                        dir,
                    });
                }
            }
        }
        out.sort_by(|a, b| a.id.cmp(&b.id));
        out
    }
}

/// `<root>/<id>` when it holds a `lab.conf` (or, for a mock network, a `mock.toml`) and both
/// stay inside `root` after resolving links.
fn lab_in_root(root: &Path, id: &TopologyId) -> Option<PathBuf> {
    let dir = root.join(id.as_str());
    let conf = [dir.join("lab.conf"), dir.join(super::MOCK_FILE)]
        .into_iter()
        .find(|c| c.is_file())?;
    let canon_root = root.canonicalize().ok()?;
    let inside = |p: &Path| p.canonicalize().is_ok_and(|c| c.starts_with(&canon_root));
    (inside(&dir) && inside(&conf)).then_some(dir)
}

impl Default for TopologyResolver {
    fn default() -> Self {
        TopologyResolver::with_default_roots()
    }
}

/// The repository's `topologies/` directory as seen from this crate's sources.
fn repo_topologies() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lab(root: &Path, id: &str) {
        std::fs::create_dir_all(root.join(id)).unwrap();
        std::fs::write(root.join(id).join("lab.conf"), "r1[0]=A\n").unwrap();
    }

    #[test]
    fn dataset_folders_map_both_ways() {
        for (folder, id) in DATASET_FOLDERS {
            assert_eq!(topology_for_dataset_folder(folder), Some(id));
            assert_eq!(dataset_folder_for_topology(id), Some(folder));
        }
        assert_eq!(topology_for_dataset_folder("KATH3_q"), Some("Kath3"));
        assert_eq!(topology_for_dataset_folder("kath9_Q"), None);
        assert_eq!(
            dataset_folder_for_topology("ospf_enterprise_static"),
            Some("nika_ospf_Q")
        );
    }

    #[test]
    fn earlier_roots_win_and_case_is_forgiven() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        lab(a.path(), "Kath1");
        lab(b.path(), "Kath1");
        lab(b.path(), "dc_clos_bgp");
        std::fs::create_dir(b.path().join("not_a_lab")).unwrap();
        let r = TopologyResolver::new([a.path(), b.path()]);
        assert_eq!(r.resolve("Kath1").unwrap().dir, a.path().join("Kath1"));
        assert_eq!(r.resolve("kath1").unwrap().id, "Kath1");
        assert_eq!(
            r.resolve("nika_clos_Q").unwrap().dir,
            b.path().join("dc_clos_bgp")
        );
        let ids: Vec<String> = r.list().into_iter().map(|t| t.id).collect();
        assert_eq!(ids, vec!["Kath1", "dc_clos_bgp"]);
        let e = r.resolve("not_a_lab").unwrap_err();
        assert_eq!(e.available, vec!["Kath1", "dc_clos_bgp"]);
        assert!(e.to_string().contains("no topology `not_a_lab`"));
    }

    #[test]
    fn missing_baseline_is_a_clear_error() {
        let a = tempfile::tempdir().unwrap();
        lab(a.path(), "X");
        let t = TopologyResolver::new([a.path()]).resolve("X").unwrap();
        assert!(t.lab().is_ok());
        let e = t.baseline().unwrap_err();
        assert!(e.to_string().contains("baseline.toml"), "{e}");
    }

    #[test]
    fn paths_and_links_out_of_the_root_are_not_topologies() {
        let a = tempfile::tempdir().unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        lab(elsewhere.path(), "Secret");
        lab(a.path(), "Kath1");
        let r = TopologyResolver::new([a.path()]);
        let abs = elsewhere.path().join("Secret");
        for name in [
            abs.to_str().unwrap(),
            "../Secret",
            "Kath1/../Kath1",
            "Kath1/",
            ".",
        ] {
            let e = r.resolve(name).unwrap_err();
            assert!(e.invalid.is_some(), "{name}: {e}");
            assert!(e.to_string().contains("never by a path"), "{e}");
        }
        // A link in the root to a lab elsewhere is not followed out of the root.
        std::os::unix::fs::symlink(&abs, a.path().join("Linked")).unwrap();
        let e = r.resolve("Linked").unwrap_err();
        assert!(e.invalid.is_none());
        assert_eq!(e.available, vec!["Kath1"]);
        // A link inside the root is fine.
        std::os::unix::fs::symlink(a.path().join("Kath1"), a.path().join("Alias")).unwrap();
        assert_eq!(r.resolve("Alias").unwrap().dir, a.path().join("Alias"));
    }

    #[test]
    fn no_roots_says_how_to_add_one() {
        let e = TopologyResolver::new(Vec::<PathBuf>::new())
            .resolve("Kath1")
            .unwrap_err();
        assert!(e.to_string().contains(TOPOLOGIES_ENV));
    }
}
