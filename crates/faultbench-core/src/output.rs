//! Writing outputs without following links: the one helper behind every file faultbench writes
//! (run folders, `result.json`, `trace.jsonl`, `MANIFEST.csv`, `identity.json`, the report, the
//! viewer's site, merged roots, re-judged records).
//!
//! # The model
//!
//! An output path has two parts:
//!
//! - a **trusted base**: a folder the user named (`--out`, `--runs-root`, `--into`, the runs root
//!   given to `report` or `view`). It is used as given — links in it included, since the user
//!   chose them — and created if missing;
//! - a **derived part** below it, computed by faultbench from data it did not make itself: the
//!   run folder `<topology>/<layer>__<scenario>/<agent>/p<pass>`, the default `view/` or
//!   `report/` folder inside a runs root, the file names of pages. A runs root can be shared,
//!   copied from elsewhere or prepared by someone else, so anything below it may have been
//!   planted there: a derived component that is a symbolic link is **refused**, never followed.
//!
//! [`OutputDir::open`] walks the derived part one component at a time from a held directory
//! handle (`mkdirat`, then `openat` with `O_NOFOLLOW | O_DIRECTORY`), so a link swapped in while
//! the walk runs is refused as well, not followed: there is no check-then-use window.
//!
//! Files are written inside an [`OutputDir`] by name (one plain component):
//!
//! - [`OutputDir::write`] (and [`OutputDir::write_with`], [`OutputDir::write_unsynced`]): a
//!   temporary file created exclusively with `O_NOFOLLOW` beside the target, filled (and synced),
//!   then renamed over the name with `renameat`. A rename replaces the directory entry and never
//!   opens what it pointed to, so no write ever lands in a link's target or in a hard-linked
//!   file's other names. **A link already at the name is refused** (the error names it) rather
//!   than silently replaced: it was planted by someone, and the user should know. A link that
//!   appears between that check and the rename is replaced by the rename — still never written
//!   through.
//! - [`OutputDir::append_line`] (the registry's one-line appends) and [`OutputDir::create_file`]
//!   (a file to stream into) open the existing file in place, so they refuse a link
//!   (`O_NOFOLLOW`), anything but a regular file (opened with `O_NONBLOCK`, so a FIFO planted at
//!   the name fails instead of blocking), and a file with several hard links (writing would
//!   change its other names too). `create_file` truncates only after those checks.
//!
//! Nothing here needs `unsafe`: the system calls come from `rustix`. Unix only.
//!
//! ```
//! use faultbench_core::output::OutputDir;
//! let root = tempfile::tempdir().unwrap();
//! // `root` is trusted; `view/runs` is derived and must not pass through a link.
//! let runs = OutputDir::open(root.path(), "view/runs").unwrap();
//! runs.write("a.html", b"<p>a</p>").unwrap();
//! assert!(root.path().join("view/runs/a.html").is_file());
//!
//! std::os::unix::fs::symlink("/tmp", root.path().join("report")).unwrap();
//! let e = OutputDir::open(root.path(), "report").unwrap_err();
//! assert!(e.to_string().contains("is a symbolic link"), "{e}");
//! ```

use rustix::fs::{AtFlags, CWD, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::OsStr;
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// An output that could not be written, by the path it concerns.
#[derive(Debug, thiserror::Error)]
#[error("{}: {kind}", path.display())]
pub struct OutputError {
    /// The folder or file.
    pub path: PathBuf,
    /// What is wrong with it.
    pub kind: OutputErrorKind,
}

/// What went wrong with an output path.
#[derive(Debug, thiserror::Error)]
pub enum OutputErrorKind {
    /// A component below the trusted base, or the file itself, is a symbolic link.
    #[error(
        "is a symbolic link; faultbench does not write through links it finds below an output folder, and wrote nothing there (remove the link and run again, or choose another output folder)"
    )]
    Link,
    /// A component that must be a folder is something else.
    #[error("is not a folder, so nothing can be written under it (move it away and run again)")]
    NotDir,
    /// The file to write is not a regular file (a folder, a FIFO, a device, a socket).
    #[error("is not a regular file; nothing was written to it (move it away and run again)")]
    NotFile,
    /// The file to write in place has other names (hard links).
    #[error(
        "has several hard links, so writing to it would change its other names too; nothing was written (copy it to a file of its own and run again)"
    )]
    HardLinked,
    /// A derived path holds something other than plain names (`..`, `/`, an empty name).
    #[error("`{0}` is not a plain file or folder name (an output never leaves its folder)")]
    BadName(String),
    /// The operating system refused.
    #[error("cannot {action}: {source}")]
    Io {
        /// What was being done (`create the folder`, `write`, …).
        action: &'static str,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

impl OutputError {
    fn new(path: impl Into<PathBuf>, kind: OutputErrorKind) -> OutputError {
        OutputError {
            path: path.into(),
            kind,
        }
    }

    fn io(path: impl Into<PathBuf>, action: &'static str, e: impl Into<std::io::Error>) -> Self {
        OutputError::new(
            path,
            OutputErrorKind::Io {
                action,
                source: e.into(),
            },
        )
    }

    /// The underlying I/O error kind (`Other` for refusals).
    fn io_kind(&self) -> std::io::ErrorKind {
        match &self.kind {
            OutputErrorKind::Io { source, .. } => source.kind(),
            OutputErrorKind::BadName(_) => std::io::ErrorKind::InvalidInput,
            OutputErrorKind::NotDir => std::io::ErrorKind::NotADirectory,
            _ => std::io::ErrorKind::Other,
        }
    }
}

impl From<OutputError> for std::io::Error {
    fn from(e: OutputError) -> std::io::Error {
        std::io::Error::new(e.io_kind(), e)
    }
}

/// An open output folder: every write goes through this handle, never through a path again.
#[derive(Debug)]
pub struct OutputDir {
    fd: OwnedFd,
    path: PathBuf,
}

/// The flags for opening a folder of the derived part.
fn dir_flags() -> OFlags {
    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC
}

/// `rwxrwxrwx` before the umask, as `create_dir_all` and `File::create` use.
fn dir_mode() -> Mode {
    Mode::from_raw_mode(0o777)
}

fn file_mode() -> Mode {
    Mode::from_raw_mode(0o666)
}

impl OutputDir {
    /// Opens `relative` below the trusted folder `base`, creating what is missing.
    ///
    /// `base` is used as given (links in it are followed: the user named it) and created if
    /// missing; every component of `relative` is created or opened without following links, and
    /// a link among them is refused ([`OutputErrorKind::Link`]). `relative` may be empty (the
    /// base itself) and must hold plain names only.
    pub fn open(
        base: impl AsRef<Path>,
        relative: impl AsRef<Path>,
    ) -> Result<OutputDir, OutputError> {
        let base = base.as_ref();
        std::fs::create_dir_all(base).map_err(|e| OutputError::io(base, "create the folder", e))?;
        let fd = rustix::fs::openat(
            CWD,
            base,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(|e| OutputError::io(base, "open the folder", e))?;
        OutputDir {
            fd,
            path: base.to_path_buf(),
        }
        .subdir(relative)
    }

    /// Opens an existing trusted folder (links in `path` are followed) without creating it.
    /// An empty path is the current folder.
    pub fn existing(path: impl AsRef<Path>) -> Result<OutputDir, OutputError> {
        let path = path.as_ref();
        let fd = open_trusted(path).map_err(|e| OutputError::io(path, "open the folder", e))?;
        Ok(OutputDir {
            fd,
            path: path.to_path_buf(),
        })
    }

    /// Opens (creating what is missing) `relative` below this folder, never following a link.
    pub fn subdir(&self, relative: impl AsRef<Path>) -> Result<OutputDir, OutputError> {
        let mut path = self.path.clone();
        let mut fd = self
            .fd
            .try_clone()
            .map_err(|e| OutputError::io(&path, "open the folder", e))?;
        for name in plain_names(&self.path, relative.as_ref())? {
            path.push(name);
            match rustix::fs::mkdirat(&fd, name, dir_mode()) {
                // An existing entry — a folder, or a planted link — is checked by the open below;
                // mkdirat never follows a link.
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(OutputError::io(&path, "create the folder", e)),
            }
            fd = open_dir_at(&fd, name, &path)?;
        }
        Ok(OutputDir { fd, path })
    }

    /// The folder's path (for messages and for callers that report where outputs went).
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The path of `name` in this folder (for messages).
    pub fn file_path(&self, name: &str) -> PathBuf {
        self.path.join(name)
    }

    /// Writes `name` atomically and durably: a temporary file is written and synced, renamed over
    /// `name`, and the folder synced. A link at `name` is refused. Returns the file's path.
    pub fn write(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, OutputError> {
        self.replace(name, true, |f| f.write_all(bytes))
    }

    /// Like [`OutputDir::write`], with the content written by `fill` into the temporary file
    /// (for copying or streaming without holding the whole content).
    pub fn write_with(
        &self,
        name: &str,
        fill: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> Result<PathBuf, OutputError> {
        self.replace(name, true, fill)
    }

    /// Like [`OutputDir::write`] without the syncs: for outputs rebuilt from their sources on
    /// every run (the viewer's pages), where thousands of syncs would cost seconds and a crash
    /// only means building again. Still atomic and still never through a link.
    pub fn write_unsynced(&self, name: &str, bytes: &[u8]) -> Result<PathBuf, OutputError> {
        self.replace(name, false, |f| f.write_all(bytes))
    }

    fn replace(
        &self,
        name: &str,
        sync: bool,
        fill: impl FnOnce(&mut File) -> std::io::Result<()>,
    ) -> Result<PathBuf, OutputError> {
        let name = file_name(&self.path, name)?;
        let path = self.path.join(name);
        match rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => match FileType::from_raw_mode(st.st_mode) {
                FileType::Symlink => return Err(OutputError::new(path, OutputErrorKind::Link)),
                FileType::Directory => {
                    return Err(OutputError::new(path, OutputErrorKind::NotFile));
                }
                // A regular file (or a FIFO or device) is replaced by the rename: its content is
                // never opened.
                _ => {}
            },
            Err(Errno::NOENT) => {}
            Err(e) => return Err(OutputError::io(path, "inspect", e)),
        }
        let (tmp, fd) = self.create_temp(name)?;
        let mut file = File::from(fd);
        let filled = fill(&mut file).and_then(|()| if sync { file.sync_all() } else { Ok(()) });
        drop(file);
        let renamed = filled.and_then(|()| {
            rustix::fs::renameat(&self.fd, tmp.as_str(), &self.fd, name).map_err(Into::into)
        });
        if let Err(e) = renamed {
            let _ = rustix::fs::unlinkat(&self.fd, tmp.as_str(), AtFlags::empty());
            return Err(OutputError::io(path, "write", e));
        }
        if sync {
            // The rename is durable once the folder is synced; a failure here loses nothing
            // written, so it is not reported.
            let _ = rustix::fs::fsync(&self.fd);
        }
        Ok(path)
    }

    /// Creates `.<name>.tmp-<pid>-<counter>-<nanos>` exclusively, without following links.
    ///
    /// Unique per writer (process id, a per-process counter and the clock) so that concurrent
    /// writers of one file never write into or rename away each other's temporary file.
    fn create_temp(&self, name: &str) -> Result<(String, OwnedFd), OutputError> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let mut last = Errno::EXIST;
        for _ in 0..16 {
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.subsec_nanos())
                .unwrap_or(0);
            let tmp = format!(".{name}.tmp-{}-{n}-{nanos:x}", std::process::id());
            let flags =
                OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
            match rustix::fs::openat(&self.fd, tmp.as_str(), flags, file_mode()) {
                Ok(fd) => return Ok((tmp, fd)),
                Err(Errno::EXIST) => last = Errno::EXIST,
                Err(e) => {
                    return Err(OutputError::io(self.path.join(&tmp), "create", e));
                }
            }
        }
        Err(OutputError::io(
            self.path.join(name),
            "find a free temporary name",
            last,
        ))
    }

    /// Appends one line (a newline is added) to `name`, created if missing, and syncs it.
    /// Refuses a link, anything but a regular file, and a file with several hard links.
    pub fn append_line(&self, name: &str, line: &str) -> Result<(), OutputError> {
        let mut f = self.open_in_place(name, OFlags::APPEND)?;
        let mut buf = line.trim_end_matches('\n').to_string();
        buf.push('\n');
        f.write_all(buf.as_bytes())
            .and_then(|()| f.sync_data())
            .map_err(|e| OutputError::io(self.path.join(name), "append to", e))
    }

    /// Creates `name` (or empties the regular file there) and returns it for writing, never
    /// through a link. Refuses a link, anything but a regular file, and a file with several hard
    /// links — all before anything is truncated. Prefer [`OutputDir::write`], which is atomic.
    pub fn create_file(&self, name: &str) -> Result<File, OutputError> {
        let f = self.open_in_place(name, OFlags::empty())?;
        f.set_len(0)
            .map_err(|e| OutputError::io(self.path.join(name), "empty", e))?;
        Ok(f)
    }

    fn open_in_place(&self, name: &str, extra: OFlags) -> Result<File, OutputError> {
        let name = file_name(&self.path, name)?;
        let path = self.path.join(name);
        // O_NONBLOCK: opening a FIFO for writing would otherwise wait for a reader forever.
        let flags = OFlags::WRONLY
            | OFlags::CREATE
            | OFlags::NOFOLLOW
            | OFlags::NONBLOCK
            | OFlags::CLOEXEC
            | extra;
        let fd = match rustix::fs::openat(&self.fd, name, flags, file_mode()) {
            Ok(fd) => fd,
            Err(Errno::LOOP) => return Err(OutputError::new(path, OutputErrorKind::Link)),
            Err(Errno::NXIO | Errno::ISDIR) => {
                return Err(OutputError::new(path, OutputErrorKind::NotFile));
            }
            Err(e) => return Err(OutputError::io(path, "open", e)),
        };
        let f = File::from(fd);
        let meta = f
            .metadata()
            .map_err(|e| OutputError::io(&path, "inspect", e))?;
        if !meta.is_file() {
            return Err(OutputError::new(path, OutputErrorKind::NotFile));
        }
        if std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
            return Err(OutputError::new(path, OutputErrorKind::HardLinked));
        }
        Ok(f)
    }
}

/// Checks, without creating or writing anything, that `relative` below the trusted `base` passes
/// through no link: no existing component is a link, and every existing one before the last is a
/// real folder (the last may be a file: `identity.json`). The walk stops at the first component
/// that does not exist yet. For callers that must refuse before they write anything (merge).
pub fn check_no_link(base: &Path, relative: &Path) -> Result<(), OutputError> {
    let Ok(mut fd) = open_trusted(base) else {
        // A base that does not exist (or cannot be opened) has nothing planted in it; creating
        // it later reports its own error.
        return Ok(());
    };
    let names = plain_names(base, relative)?;
    let mut path = base.to_path_buf();
    for (i, name) in names.iter().enumerate() {
        path.push(name);
        match rustix::fs::statat(&fd, *name, AtFlags::SYMLINK_NOFOLLOW) {
            Err(Errno::NOENT) => return Ok(()),
            Err(e) => return Err(OutputError::io(path, "inspect", e)),
            Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => {
                return Err(OutputError::new(path, OutputErrorKind::Link));
            }
            Ok(_) if i + 1 == names.len() => {}
            Ok(_) => fd = open_dir_at(&fd, name, &path)?,
        }
    }
    Ok(())
}

/// Opens a trusted folder, following links (the user named it); `""` is the current folder.
fn open_trusted(path: &Path) -> rustix::io::Result<OwnedFd> {
    let path = if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    };
    rustix::fs::openat(
        CWD,
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}

/// Opens the folder `name` in `dir` without following a link, classifying a refusal.
fn open_dir_at(dir: &OwnedFd, name: &OsStr, path: &Path) -> Result<OwnedFd, OutputError> {
    match rustix::fs::openat(dir, name, dir_flags(), Mode::empty()) {
        Ok(fd) => Ok(fd),
        // Linux answers ELOOP for a link under O_NOFOLLOW, ENOTDIR for a file under O_DIRECTORY
        // (and some systems ENOTDIR for a link too): look at the entry itself to say which.
        Err(e @ (Errno::LOOP | Errno::NOTDIR)) => {
            let link = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|st| FileType::from_raw_mode(st.st_mode) == FileType::Symlink);
            Err(OutputError::new(
                path,
                if link || e == Errno::LOOP {
                    OutputErrorKind::Link
                } else {
                    OutputErrorKind::NotDir
                },
            ))
        }
        Err(e) => Err(OutputError::io(path, "open the folder", e)),
    }
}

/// The components of a derived path, each a plain name (`.` components are skipped).
fn plain_names<'a>(base: &Path, relative: &'a Path) -> Result<Vec<&'a OsStr>, OutputError> {
    let mut names = Vec::new();
    for c in relative.components() {
        match c {
            Component::Normal(n) => names.push(n),
            Component::CurDir => {}
            other => {
                return Err(OutputError::new(
                    base.join(relative),
                    OutputErrorKind::BadName(other.as_os_str().to_string_lossy().into_owned()),
                ));
            }
        }
    }
    Ok(names)
}

/// A file name: exactly one plain component.
fn file_name<'a>(dir: &Path, name: &'a str) -> Result<&'a str, OutputError> {
    let mut parts = Path::new(name).components();
    match (parts.next(), parts.next()) {
        (Some(Component::Normal(_)), None) if !name.contains('/') => Ok(name),
        _ => Err(OutputError::new(
            dir.join(name),
            OutputErrorKind::BadName(name.to_string()),
        )),
    }
}

#[cfg(test)]
mod tests;
