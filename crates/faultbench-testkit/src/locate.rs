//! Finding the release: `FAULTBENCH_RELEASE`, then `../shared/release` beside the workspace.

use crate::release::Release;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The environment variable naming a checkout of the release.
pub const RELEASE_ENV: &str = "FAULTBENCH_RELEASE";

/// Where the release is looked for when [`RELEASE_ENV`] is not set, relative to the workspace
/// root (our machines and CI keep a partial copy there).
pub const BESIDE_WORKSPACE: &str = "../shared/release";

/// Where a release came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReleaseOrigin {
    /// [`RELEASE_ENV`].
    Env,
    /// [`BESIDE_WORKSPACE`].
    BesideWorkspace,
}

impl std::fmt::Display for ReleaseOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReleaseOrigin::Env => write!(f, "{RELEASE_ENV}"),
            ReleaseOrigin::BesideWorkspace => write!(f, "{BESIDE_WORKSPACE} beside the workspace"),
        }
    }
}

/// Why no release could be used.
#[derive(Debug, thiserror::Error)]
pub enum LocateError {
    /// A folder was named (or exists beside the workspace) but is not a release checkout.
    #[error(
        "{origin} = {}: not a checkout of the FaulT-Bench release ({problem}); \
         run scripts/fetch-release.sh and export the FAULTBENCH_RELEASE=... line it prints",
        path.display()
    )]
    NotARelease {
        /// Where the path came from.
        origin: ReleaseOrigin,
        /// The folder.
        path: PathBuf,
        /// The first part of the layout that is missing.
        problem: String,
    },
    /// Nothing was named and nothing is beside the workspace.
    #[error(
        "the FaulT-Bench release was not found: {RELEASE_ENV} is not set and {} does not exist; \
         run scripts/fetch-release.sh and export the FAULTBENCH_RELEASE=... line it prints",
        beside.display()
    )]
    Missing {
        /// The path looked at beside the workspace.
        beside: PathBuf,
    },
}

impl LocateError {
    /// True when no release is there at all (as opposed to a wrong one being named).
    pub fn is_missing(&self) -> bool {
        matches!(self, LocateError::Missing { .. })
    }
}

/// The workspace root: the nearest folder above this crate's manifest directory whose
/// `Cargo.toml` declares `[workspace]`. Independent of the current directory.
pub fn workspace_root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let start = Path::new(env!("CARGO_MANIFEST_DIR"));
        start
            .ancestors()
            .find(|dir| {
                std::fs::read_to_string(dir.join("Cargo.toml"))
                    .is_ok_and(|t| t.lines().any(|l| l.trim() == "[workspace]"))
            })
            .unwrap_or_else(|| {
                panic!(
                    "no Cargo.toml with [workspace] above {}: faultbench-testkit is used \
                     outside the faultbench workspace",
                    start.display()
                )
            })
            .to_path_buf()
    })
}

/// Finds the release from the environment and the workspace root.
pub fn locate() -> Result<Release, LocateError> {
    locate_from(std::env::var_os(RELEASE_ENV), workspace_root())
}

/// Finds the release given the value of [`RELEASE_ENV`] (`None` or empty: unset) and the
/// workspace root. A relative value is taken relative to the workspace root.
pub fn locate_from(env: Option<OsString>, workspace: &Path) -> Result<Release, LocateError> {
    let (origin, path) = match env.filter(|v| !v.is_empty()) {
        Some(v) => (ReleaseOrigin::Env, workspace.join(PathBuf::from(v))),
        None => {
            let beside = workspace.join(BESIDE_WORKSPACE);
            if !beside.exists() {
                return Err(LocateError::Missing { beside });
            }
            (ReleaseOrigin::BesideWorkspace, beside)
        }
    };
    if let Some(problem) = layout_problem(&path) {
        return Err(LocateError::NotARelease {
            origin,
            path,
            problem,
        });
    }
    Ok(Release::new(path, origin))
}

/// The first required part of the release's layout that `root` lacks.
fn layout_problem(root: &Path) -> Option<String> {
    if !root.is_dir() {
        return Some("no such folder".into());
    }
    for (part, dir) in [
        ("dataset", true),
        ("dataset/dataset_index.csv", false),
        ("final_results", true),
        ("final_results/MANIFEST.csv", false),
    ] {
        let p = root.join(part);
        let ok = if dir { p.is_dir() } else { p.is_file() };
        if !ok {
            return Some(format!("{part} is missing"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fake_release(root: &Path) {
        std::fs::create_dir_all(root.join("dataset")).unwrap();
        std::fs::create_dir_all(root.join("final_results")).unwrap();
        std::fs::write(root.join("dataset/dataset_index.csv"), "scenario\n").unwrap();
        std::fs::write(root.join("final_results/MANIFEST.csv"), "arm\n").unwrap();
    }

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("faultbench-testkit-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_variable_wins_over_the_folder_beside_the_workspace() {
        let top = scratch("env-wins");
        let ws = top.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        fake_release(&top.join("shared/release"));
        fake_release(&top.join("mine"));
        let r = locate_from(Some(top.join("mine").into()), &ws).unwrap();
        assert_eq!(
            (r.root(), r.origin()),
            (top.join("mine").as_path(), ReleaseOrigin::Env)
        );
        let r = locate_from(Some(OsString::new()), &ws).unwrap();
        assert_eq!(r.origin(), ReleaseOrigin::BesideWorkspace);
        assert_eq!(r.root(), ws.join("../shared/release"));
        // A relative value is relative to the workspace, not to the test's directory.
        let r = locate_from(Some("../mine".into()), &ws).unwrap();
        assert_eq!(r.root(), ws.join("../mine"));
        std::fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn nothing_there_is_missing_and_a_wrong_folder_is_named() {
        let top = scratch("missing");
        let ws = top.join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        let e = locate_from(None, &ws).unwrap_err();
        assert!(e.is_missing(), "{e}");
        assert!(e.to_string().contains("scripts/fetch-release.sh"), "{e}");

        let e = locate_from(Some(top.join("nowhere").into()), &ws).unwrap_err();
        assert!(!e.is_missing());
        assert!(e.to_string().contains("no such folder"), "{e}");

        // Beside the workspace but incomplete: an error, never "missing".
        std::fs::create_dir_all(top.join("shared/release/dataset")).unwrap();
        let e = locate_from(None, &ws).unwrap_err();
        assert!(
            !e.is_missing()
                && e.to_string()
                    .contains("dataset/dataset_index.csv is missing"),
            "{e}"
        );
        std::fs::remove_dir_all(&top).unwrap();
    }

    #[test]
    fn the_workspace_root_is_the_folder_declaring_the_workspace() {
        let root = workspace_root();
        assert!(root.join("crates/faultbench-testkit/Cargo.toml").is_file());
        assert!(
            std::fs::read_to_string(root.join("Cargo.toml"))
                .unwrap()
                .contains("[workspace]")
        );
    }
}
