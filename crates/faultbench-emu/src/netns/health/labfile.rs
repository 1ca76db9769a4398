//! Reading a lab's own files for what they promise, never following a link.
//!
//! A device tree may hold links (they are copied as links and resolve inside the device); on
//! the host the same link would lead anywhere, e.g. `r1/etc` → `/etc`. Every component of the
//! path is therefore checked not to be a link, and the file is opened `O_NOFOLLOW`.

use std::io::Read;
use std::path::Path;

/// Files larger than this are not read (no startup or daemons file comes near).
const MAX: u64 = 1024 * 1024;

/// The text of `rel` under `root`, if it is a regular file reached without links.
pub(super) fn read(root: &Path, rel: &str) -> Option<String> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut at = root.to_path_buf();
    for part in Path::new(rel).components() {
        let std::path::Component::Normal(p) = part else {
            return None;
        };
        at.push(p);
        if std::fs::symlink_metadata(&at)
            .ok()?
            .file_type()
            .is_symlink()
        {
            return None;
        }
    }
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&at)
        .ok()?;
    let meta = f.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX {
        return None;
    }
    let mut s = String::new();
    f.take(MAX).read_to_string(&mut s).ok()?;
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_behind_links_are_not_read() {
        let t = tempfile::tempdir().unwrap();
        let host = t.path().join("host");
        std::fs::create_dir_all(host.join("frr")).unwrap();
        std::fs::write(host.join("frr/daemons"), "HOST\n").unwrap();
        let lab = t.path().join("lab");
        std::fs::create_dir_all(lab.join("r1/etc/frr")).unwrap();
        std::fs::write(lab.join("r1/etc/frr/daemons"), "zebra=yes\n").unwrap();
        std::fs::create_dir_all(lab.join("r2")).unwrap();
        std::os::unix::fs::symlink(&host, lab.join("r2/etc")).unwrap();
        std::fs::create_dir_all(lab.join("r3/etc/frr")).unwrap();
        std::os::unix::fs::symlink(host.join("frr/daemons"), lab.join("r3/etc/frr/daemons"))
            .unwrap();
        assert_eq!(
            read(&lab, "r1/etc/frr/daemons").as_deref(),
            Some("zebra=yes\n")
        );
        assert_eq!(read(&lab, "r2/etc/frr/daemons"), None);
        assert_eq!(read(&lab, "r3/etc/frr/daemons"), None);
        assert_eq!(read(&lab, "../host/frr/daemons"), None);
        assert_eq!(read(&lab, "r1/etc/frr"), None, "a folder is not a file");
    }
}
