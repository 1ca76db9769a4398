//! Small file helpers: crash-safe writes, and reads of input files that are regular files.
//!
//! Every file faultbench reads was written by someone else, and a path is not always what its
//! name says: a FIFO named `scenario.txt` blocks a plain `open` until a writer appears (forever,
//! with signals caught for a clean shutdown), and a device can be read without end.
//! [`open_regular`] opens without blocking, then checks the opened handle — not the path, which
//! could be swapped between a check and the open — and refuses anything but a regular file.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes a file atomically: a temporary sibling is written and synced, then renamed over the
/// target, and the directory is synced, so a crash leaves either the old or the new content.
///
/// The temporary name is unique per writer (process id, a per-process counter and the clock)
/// and created exclusively, so concurrent writers of one file — threads of one benchmark or
/// two processes — never write into or rename away each other's temporary file; the last
/// rename wins with a whole file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let (tmp, mut f) = create_temp(dir, name)?;
    let written = f.write_all(bytes).and_then(|()| f.sync_all());
    drop(f);
    if let Err(e) = written.and_then(|()| std::fs::rename(&tmp, path)) {
        let _ = std::fs::remove_file(&tmp);
        return Err(e);
    }
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Creates `.<name>.tmp-<pid>-<counter>-<nanos>` exclusively in `dir`.
fn create_temp(dir: &Path, name: &str) -> std::io::Result<(PathBuf, std::fs::File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut last = None;
    for _ in 0..16 {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        let tmp = dir.join(format!(".{name}.tmp-{}-{n}-{nanos:x}", std::process::id()));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)
        {
            Ok(f) => return Ok((tmp, f)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last = Some(e),
            Err(e) => return Err(e),
        }
    }
    Err(last.unwrap_or_else(|| std::io::Error::other("no free temporary name")))
}

/// Appends one line to a file and syncs it to disk before returning.
pub fn append_line_synced(path: &Path, line: &str) -> std::io::Result<()> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)?;
    let mut buf = line.trim_end_matches('\n').to_string();
    buf.push('\n');
    f.write_all(buf.as_bytes())?;
    f.sync_data()
}

/// What a path that is not a regular file turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A folder.
    Folder,
    /// A FIFO (named pipe).
    Fifo,
    /// A Unix socket.
    Socket,
    /// A character device (a terminal, `/dev/zero`, …).
    CharDevice,
    /// A block device (a disk).
    BlockDevice,
    /// Anything else.
    Other,
}

impl FileKind {
    fn of(ft: std::fs::FileType) -> Option<FileKind> {
        #[cfg(unix)]
        use std::os::unix::fs::FileTypeExt;
        if ft.is_file() {
            return None;
        }
        if ft.is_dir() {
            return Some(FileKind::Folder);
        }
        #[cfg(unix)]
        {
            if ft.is_fifo() {
                return Some(FileKind::Fifo);
            }
            if ft.is_socket() {
                return Some(FileKind::Socket);
            }
            if ft.is_char_device() {
                return Some(FileKind::CharDevice);
            }
            if ft.is_block_device() {
                return Some(FileKind::BlockDevice);
            }
        }
        Some(FileKind::Other)
    }
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileKind::Folder => "a folder",
            FileKind::Fifo => "a FIFO (named pipe)",
            FileKind::Socket => "a socket",
            FileKind::CharDevice => "a character device",
            FileKind::BlockDevice => "a block device",
            FileKind::Other => "of an unknown kind",
        })
    }
}

/// An input file that cannot be read. The message names the path; [`InputError::reason`] is
/// the message without it, for callers whose own error already names the file.
#[derive(Debug, thiserror::Error)]
#[error("{}: {}", path.display(), self.reason())]
pub struct InputError {
    /// The path as given.
    pub path: PathBuf,
    /// What is wrong.
    pub problem: InputProblem,
}

/// What is wrong with an input file ([`InputError`]).
#[derive(Debug)]
pub enum InputProblem {
    /// It cannot be opened, examined or read.
    Io(std::io::Error),
    /// It is not a regular file.
    NotRegular(FileKind),
    /// It is larger than the reader accepts.
    TooBig {
        /// Its size in bytes (at least `cap + 1` when it grew while read).
        len: u64,
        /// The most bytes accepted.
        cap: u64,
    },
    /// It is not UTF-8 text.
    NotUtf8 {
        /// The byte offset of the first invalid byte.
        at: usize,
    },
}

impl InputError {
    fn new(path: &Path, problem: InputProblem) -> InputError {
        InputError {
            path: path.to_path_buf(),
            problem,
        }
    }

    /// The problem and its fix, without the path.
    pub fn reason(&self) -> String {
        match &self.problem {
            InputProblem::Io(e) => format!("cannot read: {e}"),
            InputProblem::NotRegular(kind) => {
                format!("is {kind}, not a regular file; give the path of a regular file")
            }
            InputProblem::TooBig { len, cap } => {
                format!("is {len} bytes, more than the {cap} bytes read from a file of this kind")
            }
            InputProblem::NotUtf8 { at } => {
                format!("is not UTF-8 text (binary data?): invalid byte at offset {at}")
            }
        }
    }
}

/// An [`InputError`] as an I/O error for callers that report I/O errors: the kind of the
/// underlying error, or `InvalidInput`/`InvalidData`, and the [`InputError::reason`].
impl From<InputError> for std::io::Error {
    fn from(e: InputError) -> std::io::Error {
        let reason = e.reason();
        match e.problem {
            InputProblem::Io(io) => io,
            InputProblem::NotRegular(_) => {
                std::io::Error::new(std::io::ErrorKind::InvalidInput, reason)
            }
            InputProblem::TooBig { .. } | InputProblem::NotUtf8 { .. } => {
                std::io::Error::new(std::io::ErrorKind::InvalidData, reason)
            }
        }
    }
}

/// Opens `path` for reading if it is a regular file (links are followed), without blocking.
///
/// The open is non-blocking, so a FIFO without a writer (or a device) returns at once instead
/// of waiting; the opened handle is then examined and refused unless it is a regular file,
/// which leaves no window between a check and the open. Non-blocking mode is cleared before the
/// file is returned. A path that is visibly not a regular file is refused before it is opened,
/// because opening some devices has effects of its own.
///
/// # Errors
/// [`InputProblem::NotRegular`] naming what the path is, or [`InputProblem::Io`].
pub fn open_regular(path: &Path) -> Result<std::fs::File, InputError> {
    let fail = |problem| InputError::new(path, problem);
    if let Ok(meta) = std::fs::metadata(path)
        && let Some(kind) = FileKind::of(meta.file_type())
    {
        return Err(fail(InputProblem::NotRegular(kind)));
    }
    let file = open_nonblocking(path).map_err(|e| {
        // A socket cannot be opened (ENXIO); say what it is rather than "no such device".
        match std::fs::metadata(path)
            .ok()
            .and_then(|m| FileKind::of(m.file_type()))
        {
            Some(kind) => fail(InputProblem::NotRegular(kind)),
            None => fail(InputProblem::Io(e)),
        }
    })?;
    let meta = file.metadata().map_err(|e| fail(InputProblem::Io(e)))?;
    if let Some(kind) = FileKind::of(meta.file_type()) {
        return Err(fail(InputProblem::NotRegular(kind)));
    }
    make_blocking(&file).map_err(|e| fail(InputProblem::Io(e)))?;
    Ok(file)
}

#[cfg(unix)]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        // O_NOCTTY: a terminal device opened here must not become our controlling terminal.
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_nonblocking(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(unix)]
fn make_blocking(file: &std::fs::File) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is an open descriptor owned by `file` for the duration of both calls;
    // F_GETFL and F_SETFL read and set its status flags and touch no memory.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(not(unix))]
fn make_blocking(_: &std::fs::File) -> std::io::Result<()> {
    Ok(())
}

/// The bytes of the regular file `path` ([`open_regular`]), at most `cap` of them.
///
/// # Errors
/// As [`open_regular`]; [`InputProblem::TooBig`] when the file holds more than `cap` bytes
/// (also when it grows past `cap` while it is read).
pub fn read_regular_capped(path: &Path, cap: u64) -> Result<Vec<u8>, InputError> {
    let fail = |problem| InputError::new(path, problem);
    let file = open_regular(path)?;
    let len = file
        .metadata()
        .map_err(|e| fail(InputProblem::Io(e)))?
        .len();
    if len > cap {
        return Err(fail(InputProblem::TooBig { len, cap }));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| fail(InputProblem::Io(e)))?;
    if bytes.len() as u64 > cap {
        return Err(fail(InputProblem::TooBig {
            len: bytes.len() as u64,
            cap,
        }));
    }
    Ok(bytes)
}

/// [`read_regular_capped`] for a UTF-8 text file.
///
/// # Errors
/// As [`read_regular_capped`]; [`InputProblem::NotUtf8`].
pub fn read_regular_string_capped(path: &Path, cap: u64) -> Result<String, InputError> {
    let bytes = read_regular_capped(path, cap)?;
    String::from_utf8(bytes).map_err(|e| {
        InputError::new(
            path,
            InputProblem::NotUtf8 {
                at: e.utf8_error().valid_up_to(),
            },
        )
    })
}

/// The files found by [`find_files`], and the folders that could not be read.
#[derive(Debug, Default)]
pub struct FoundFiles {
    /// Matching regular files, sorted by path.
    pub files: Vec<PathBuf>,
    /// Sub-folders that could not be listed, with the reason.
    pub unreadable: Vec<(PathBuf, std::io::Error)>,
}

/// Every regular file under `root` whose name satisfies `wanted`, sorted by path.
///
/// Symbolic links are never followed — neither to folders nor to files — so a link loop
/// (`loop -> .`) or a link out of the tree (`x -> /`) cannot make a walk endless, count a file
/// twice, or read outside `root`. A `root` that cannot be listed is an error; sub-folders that
/// cannot be listed are reported in [`FoundFiles::unreadable`].
pub fn find_files(root: &Path, wanted: impl Fn(&str) -> bool) -> std::io::Result<FoundFiles> {
    let mut found = FoundFiles::default();
    std::fs::read_dir(root)?;
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let entries = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                found.unreadable.push((dir, e));
                continue;
            }
        };
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => {
                    found.unreadable.push((dir.clone(), e));
                    continue;
                }
            };
            // `DirEntry::file_type` does not follow links: a link is neither dir nor file here.
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                stack.push(entry.path());
            } else if ft.is_file() && entry.file_name().to_str().is_some_and(&wanted) {
                found.files.push(entry.path());
            }
        }
    }
    found.files.sort();
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fifo(path: &Path) {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: `c` is a valid NUL-terminated path for the duration of the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    }

    /// Issue 30: a FIFO given as a scenario file or manifest blocked `open` forever. Now it is
    /// refused at once (this test would hang on a blocking open), directly or through a link.
    #[test]
    fn a_fifo_is_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let pipe = dir.path().join("scenario.txt");
        fifo(&pipe);
        let link = dir.path().join("link.txt");
        std::os::unix::fs::symlink(&pipe, &link).unwrap();
        for p in [&pipe, &link] {
            let e = open_regular(p).unwrap_err();
            assert!(matches!(
                e.problem,
                InputProblem::NotRegular(FileKind::Fifo)
            ));
            let msg = e.to_string();
            assert!(msg.starts_with(&p.display().to_string()), "{msg}");
            assert!(
                msg.contains("FIFO") && msg.contains("regular file"),
                "{msg}"
            );
            assert!(read_regular_capped(p, 10).is_err());
        }
    }

    #[test]
    fn folders_devices_and_sockets_are_refused_by_kind() {
        let dir = tempfile::tempdir().unwrap();
        let kind = |p: &Path| match open_regular(p).unwrap_err().problem {
            InputProblem::NotRegular(k) => k,
            other => panic!("{}: {other:?}", p.display()),
        };
        assert_eq!(kind(dir.path()), FileKind::Folder);
        assert_eq!(kind(Path::new("/dev/null")), FileKind::CharDevice);
        let sock = dir.path().join("s.sock");
        let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
        assert_eq!(kind(&sock), FileKind::Socket);
        let missing = open_regular(&dir.path().join("nope")).unwrap_err();
        assert!(matches!(missing.problem, InputProblem::Io(_)));
        let io: std::io::Error = missing.into();
        assert_eq!(io.kind(), std::io::ErrorKind::NotFound);
    }

    #[test]
    fn regular_files_are_read_up_to_the_cap() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.txt");
        std::fs::write(&path, "hello").unwrap();
        assert_eq!(read_regular_capped(&path, 5).unwrap(), b"hello");
        assert_eq!(read_regular_string_capped(&path, 100).unwrap(), "hello");
        let e = read_regular_capped(&path, 4).unwrap_err();
        assert!(
            matches!(e.problem, InputProblem::TooBig { len: 5, cap: 4 }),
            "{e}"
        );
        std::fs::write(&path, b"ok\xff").unwrap();
        let e = read_regular_string_capped(&path, 100).unwrap_err();
        assert!(matches!(e.problem, InputProblem::NotUtf8 { at: 2 }), "{e}");
        // The handle is in blocking mode again (O_NONBLOCK cleared).
        let f = open_regular(&path).unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: F_GETFL on a descriptor `f` owns.
        let flags = unsafe { libc::fcntl(f.as_raw_fd(), libc::F_GETFL) };
        assert_eq!(flags & libc::O_NONBLOCK, 0);
    }

    /// Issue 19, finding 4: the temp name was `.<name>.tmp-<pid>`, shared by every writer of a
    /// process, so two threads writing one file renamed each other's temp away.
    #[test]
    fn concurrent_writers_of_one_file_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        let handles: Vec<_> = (0..8)
            .map(|t| {
                let path = path.clone();
                std::thread::spawn(move || {
                    for i in 0..100 {
                        let body = format!("{t}-{i}-").repeat(200);
                        write_atomic(&path, body.as_bytes()).expect("every write succeeds");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let unit = text.split_inclusive('-').take(2).collect::<String>();
        assert_eq!(text, unit.repeat(200), "one whole write, never a mix");
        let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 1, "no temp file left behind");
    }
}
