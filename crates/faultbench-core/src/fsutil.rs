//! Small crash-safe file helpers.

use std::io::Write;
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
