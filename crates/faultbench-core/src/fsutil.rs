//! Small crash-safe file helpers.

use std::io::Write;
use std::path::Path;

/// Writes a file atomically: a temporary sibling is written and synced, then renamed over the
/// target, and the directory is synced, so a crash leaves either the old or the new content.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("file"),
        std::process::id()
    ));
    {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
    }
    std::fs::rename(&tmp, path)?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
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
