//! Where `faultbench view` writes the site.
//!
//! `--out DIR` is the user's folder and is used as given. Without it, a plain build goes to
//! `view/` beside the runs — derived from a runs root that may come from someone else, so it is
//! opened without following a link planted there ([`OutputDir`]); `--serve` goes to a fresh private temporary folder: made by
//! `tempfile` with an unpredictable name and mode 0700, so no other local user can create it
//! first (with `index.html` linked to a file of theirs choosing, which the build would then
//! overwrite as root) or read the site while it is served. The folder is removed when
//! [`SiteFolder`] is dropped or [`SiteFolder::remove`]d — the caller does so on exit, Ctrl-C
//! and SIGTERM.

use faultbench_core::output::OutputDir;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// The prefix of a temporary site folder's name (the rest is random).
pub const TEMP_PREFIX: &str = "faultbench-view-";

/// The folder the site is written to.
pub enum SiteFolder {
    /// `--out`: the user's folder, used as given (links in it followed); kept after exit.
    Kept(PathBuf),
    /// The default `view/` in the runs root (or beside a MANIFEST.csv): kept after exit, and
    /// never written through a link planted in the root.
    InRoot {
        /// The runs root (or the MANIFEST.csv's folder), as the user named it.
        root: PathBuf,
        /// `root/view`.
        path: PathBuf,
    },
    /// A private temporary folder: removed on drop.
    Temporary(tempfile::TempDir),
}

impl SiteFolder {
    /// Chooses the folder: `out` if given; else, when `serving`, a new private folder in
    /// `temp_base` (the system's temporary folder in the CLI); else `view/` beside `source`.
    pub fn choose(
        out: Option<&Path>,
        source: &Path,
        serving: bool,
        temp_base: &Path,
    ) -> anyhow::Result<Self> {
        if let Some(out) = out {
            return Ok(Self::Kept(out.to_path_buf()));
        }
        if !serving {
            let root = root_of(source);
            let path = root.join("view");
            return Ok(Self::InRoot { root, path });
        }
        tempfile::Builder::new()
            .prefix(TEMP_PREFIX)
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir_in(temp_base)
            .map(Self::Temporary)
            .map_err(|e| {
                anyhow::anyhow!(
                    "{}: cannot make a private temporary folder for the site: {e}; set TMPDIR to a writable folder or pass --out DIR",
                    temp_base.display()
                )
            })
    }

    /// The folder's path.
    pub fn path(&self) -> &Path {
        match self {
            Self::Kept(p) | Self::InRoot { path: p, .. } => p,
            Self::Temporary(t) => t.path(),
        }
    }

    /// Opens (creating) the folder for writing: `view/` below the runs root component by
    /// component without following a link, the others as given.
    pub fn open(&self) -> anyhow::Result<OutputDir> {
        let dir = match self {
            Self::Kept(p) => OutputDir::open(p, ""),
            Self::InRoot { root, .. } => OutputDir::open(root, "view"),
            Self::Temporary(t) => OutputDir::open(t.path(), ""),
        };
        Ok(dir?)
    }

    /// Removes a temporary folder now (a kept one stays), saying why it could not be removed.
    pub fn remove(self) -> anyhow::Result<()> {
        match self {
            Self::Kept(_) | Self::InRoot { .. } => Ok(()),
            Self::Temporary(t) => {
                let path = t.path().to_path_buf();
                t.close().map_err(|e| {
                    anyhow::anyhow!(
                        "{}: cannot remove the temporary site: {e}; remove it by hand",
                        path.display()
                    )
                })
            }
        }
    }
}

/// The folder that holds the default `view/`: the runs root, or a MANIFEST.csv's folder.
fn root_of(source: &Path) -> PathBuf {
    if source.is_dir() {
        source.to_path_buf()
    } else {
        source.parent().map(Path::to_path_buf).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::{SiteFolder, TEMP_PREFIX};
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    /// The folder `view --serve` used before: predictable from the process id.
    fn old_name(base: &Path) -> std::path::PathBuf {
        base.join(format!("{TEMP_PREFIX}{}", std::process::id()))
    }

    #[test]
    fn serving_without_out_builds_in_a_fresh_private_folder_not_a_planted_one() {
        let tmp = tempfile::tempdir().unwrap();
        let base = tmp.path().join("tmp");
        let runs = tmp.path().join("runs");
        std::fs::create_dir_all(&base).unwrap();
        std::fs::create_dir_all(&runs).unwrap();
        // Another user's trap: the old folder name, made first, its index.html a link to a
        // file the attacker wants overwritten.
        let victim = tmp.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let planted = old_name(&base);
        std::fs::create_dir(&planted).unwrap();
        std::os::unix::fs::symlink(&victim, planted.join("index.html")).unwrap();

        let folder = SiteFolder::choose(None, &runs, true, &base).unwrap();
        let dir = folder.path().to_path_buf();
        assert_ne!(dir, planted);
        assert_eq!(dir.parent(), Some(base.as_path()));
        let meta = std::fs::symlink_metadata(&dir).unwrap();
        assert!(meta.is_dir());
        assert_eq!(
            meta.permissions().mode() & 0o777,
            0o700,
            "private to its owner"
        );
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "a new folder");

        let summary = faultbench_view::build(&runs, &dir).unwrap();
        assert!(summary.index.starts_with(&dir));
        assert!(dir.join("index.html").is_file());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");

        folder.remove().unwrap();
        assert!(!dir.exists(), "removed on exit");
        assert!(
            planted.join("index.html").is_symlink(),
            "the trap is not touched"
        );
    }

    #[test]
    fn out_is_used_as_given_and_kept() {
        let tmp = tempfile::tempdir().unwrap();
        let out = tmp.path().join("site");
        for serving in [true, false] {
            let folder = SiteFolder::choose(Some(&out), tmp.path(), serving, tmp.path()).unwrap();
            assert_eq!(folder.path(), out);
        }
        let plain = SiteFolder::choose(None, tmp.path(), false, Path::new("/nonexistent")).unwrap();
        assert_eq!(plain.path(), tmp.path().join("view"));
        std::fs::create_dir_all(&out).unwrap();
        SiteFolder::choose(Some(&out), tmp.path(), true, tmp.path())
            .unwrap()
            .remove()
            .unwrap();
        assert!(out.is_dir(), "--out is never removed");
    }

    /// Issue 30: the default `view/` was written with calls that follow links, so a runs root
    /// with `view -> /elsewhere` put the site there.
    #[test]
    fn the_default_folder_in_the_root_is_never_a_planted_link() {
        let tmp = tempfile::tempdir().unwrap();
        let runs = tmp.path().join("runs");
        let outside = tmp.path().join("outside");
        std::fs::create_dir_all(&runs).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, runs.join("view")).unwrap();
        let folder = SiteFolder::choose(None, &runs, false, tmp.path()).unwrap();
        assert_eq!(folder.path(), runs.join("view"));
        let e = folder.open().unwrap_err().to_string();
        assert!(e.contains("view: is a symbolic link"), "{e}");
        // `--out` naming that link is the user's choice, and followed.
        let named = SiteFolder::choose(Some(&runs.join("view")), &runs, false, tmp.path()).unwrap();
        named.open().unwrap().write("index.html", b"x").unwrap();
        assert!(outside.join("index.html").is_file());
    }

    #[test]
    fn an_unusable_temporary_folder_is_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let missing = tmp.path().join("no-such-folder");
        let Err(e) = SiteFolder::choose(None, tmp.path(), true, &missing) else {
            panic!("a temporary folder in a missing folder");
        };
        let e = e.to_string();
        assert!(e.contains("no-such-folder") && e.contains("--out"), "{e}");
    }
}
