//! Removing the state folders of network namespaces that no longer exist.
//!
//! A namespace's folder (`/run/faultbench-netshim/<inode>-<cookie>`, see [`super::state`]) is
//! written by shims running inside it and outlives it when the namespace is deleted while `/run`
//! is shared (`ip netns exec`; the netns emulator gives each device its own `/run`, which goes
//! with the device). A folder is collected when its namespace is provably gone:
//!
//! - **same inode, other cookie**: a live namespace holds the folder's inode but has another
//!   cookie. Inodes are only reused after the namespace is freed, so the folder's namespace is
//!   dead. A namespace checks this for its own inode when it first writes state — no scan
//!   needed.
//! - **inode held by nothing**: no task (`/proc/PID/task/TID/ns/net`), open descriptor
//!   (`/proc/PID/fd/N`) or nsfs bind mount (`/proc/PID/mountinfo` of every mount namespace,
//!   e.g. `/run/netns/NAME`) refers to the folder's inode. This needs a view of every process,
//!   so it runs only in the initial PID namespace (the netns emulator's `gc`, or shims started
//!   from the host), and only for folders untouched for [`GRACE`] (a namespace created during
//!   the scan is never mistaken for a dead one).
//!
//! Processes whose namespace links the collector may not read are outside its privileges and
//! are assumed to hold none of these namespaces; a namespace kept alive only by a socket (no
//! task, descriptor or mount) counts as gone — nothing can run a command in it any more.

use super::state::{NetnsId, ROOT};
use super::sys;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A folder is only collected by the scan once it has not changed for this long.
pub const GRACE: Duration = Duration::from_secs(30);

/// Inode of the initial PID namespace (`PROC_PID_INIT_INO`, fixed by the kernel).
const INIT_PID_NS: &str = "pid:[4026531836]";

/// One state folder removed, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Collected {
    /// Full path of the folder.
    pub folder: PathBuf,
    /// Why its namespace is known to be gone.
    pub why: &'static str,
}

/// What a namespace does when it first writes state: drop the folder of any earlier namespace
/// with its inode, and, where every process is visible, every other dead namespace's folder.
pub(crate) fn on_first_write() {
    let Some(me) = NetnsId::current() else {
        return;
    };
    for (path, id) in folders() {
        if id.inode == me.inode && id.cookie.is_some() && id != me {
            let _ = std::fs::remove_dir_all(path);
        }
    }
    collect();
}

/// Removes the state folders of network namespaces that are gone (see the module docs for
/// how that is established). Does nothing where not every process is visible. Safe to run at
/// any time: the folders of live namespaces are never touched.
pub fn collect() -> Vec<Collected> {
    let candidates: Vec<(PathBuf, NetnsId)> = folders()
        .into_iter()
        .filter(|(p, _)| untouched_for(p, GRACE))
        .collect();
    if candidates.is_empty() || !sees_every_process() {
        return Vec::new();
    }
    let live = live_namespaces();
    let mut removed = Vec::new();
    for (folder, id) in candidates {
        let why = match (live.get(&id.inode), id.cookie) {
            (None, _) => "its network namespace is gone",
            (Some(handle), Some(cookie)) => match sys::netns_cookie_of(handle) {
                Ok(now) if now != cookie => "its namespace's inode belongs to a newer namespace",
                _ => continue,
            },
            (Some(_), None) => continue,
        };
        if std::fs::remove_dir_all(&folder).is_ok() {
            removed.push(Collected { folder, why });
        }
    }
    removed
}

/// Every state folder with the namespace identity its name stands for.
fn folders() -> Vec<(PathBuf, NetnsId)> {
    let Ok(rd) = std::fs::read_dir(ROOT) else {
        return Vec::new();
    };
    rd.filter_map(|e| e.ok())
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| {
            let id = NetnsId::from_folder_name(&e.file_name().to_string_lossy())?;
            Some((e.path(), id))
        })
        .collect()
}

/// Whether the folder and its subfolders have not changed for `grace`.
fn untouched_for(folder: &Path, grace: Duration) -> bool {
    let old = |p: &Path| {
        std::fs::metadata(p)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age >= grace)
    };
    let subs_old = std::fs::read_dir(folder).is_ok_and(|rd| {
        rd.filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .all(|e| old(&e.path()))
    });
    old(folder) && subs_old
}

/// Whether this `/proc` shows every process: it belongs to the initial PID namespace and we
/// are in it.
fn sees_every_process() -> bool {
    std::fs::read_link("/proc/self/ns/pid").is_ok_and(|l| l.as_os_str() == INIT_PID_NS)
}

/// Live network namespaces by inode, each with a path that opens it.
fn live_namespaces() -> HashMap<u64, PathBuf> {
    let mut live = HashMap::new();
    let mut mount_namespaces = HashSet::new();
    let Ok(procs) = std::fs::read_dir("/proc") else {
        return live;
    };
    for p in procs.filter_map(|e| e.ok()) {
        let pid = p.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let base = p.path();
        for dir in [base.join("task"), base.join("fd")] {
            let Ok(rd) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in rd.filter_map(|e| e.ok()) {
                let link = if dir.ends_with("task") {
                    e.path().join("ns/net")
                } else {
                    e.path()
                };
                if let Some(inode) = std::fs::read_link(&link)
                    .ok()
                    .and_then(|l| sys::ns_link_inode(&l))
                {
                    live.entry(inode).or_insert(link);
                }
            }
        }
        if let Ok(mnt) = std::fs::read_link(base.join("ns/mnt"))
            && mount_namespaces.insert(mnt)
            && let Ok(info) = std::fs::read_to_string(base.join("mountinfo"))
        {
            for (inode, at) in nsfs_mounts(&info) {
                live.entry(inode)
                    .or_insert_with(|| base.join("root").join(at.trim_start_matches('/')));
            }
        }
    }
    live
}

/// Network namespace bind mounts in a `mountinfo` text: (inode, mount point).
fn nsfs_mounts(info: &str) -> Vec<(u64, String)> {
    info.lines()
        .filter_map(|line| {
            let (fields, fs) = line.split_once(" - ")?;
            if !fs.starts_with("nsfs ") {
                return None;
            }
            let mut f = fields.split(' ');
            let root = f.nth(3)?;
            let at = f.next()?;
            Some((sys::ns_link_inode(Path::new(root))?, unescape(at)))
        })
        .collect()
}

/// Undo mountinfo's octal escapes (`\040` for a space, …).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal = b
            .get(i + 1..i + 4)
            .filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        if let Some(d) = octal {
            out.push(d.iter().fold(0u8, |v, c| v.wrapping_mul(8) + (c - b'0')));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folder_names_round_trip() {
        let id = NetnsId {
            inode: 4026532412,
            cookie: Some(77),
        };
        assert_eq!(id.folder_name(), "4026532412-77");
        assert_eq!(NetnsId::from_folder_name("4026532412-77"), Some(id));
        assert_eq!(
            NetnsId::from_folder_name("4026532412"),
            Some(NetnsId {
                inode: 4026532412,
                cookie: None
            })
        );
        assert_eq!(NetnsId::from_folder_name("unknown"), None);
        assert_eq!(NetnsId::from_folder_name("12-x"), None);
    }

    #[test]
    fn nsfs_mounts_are_read_from_mountinfo() {
        let info = "\
36 25 0:4 net:[4026532412] /run/netns/lab\\040a rw,nosuid shared:5 - nsfs nsfs rw
37 25 0:4 mnt:[4026532411] /run/x rw - nsfs nsfs rw
22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/vda rw
";
        assert_eq!(
            nsfs_mounts(info),
            vec![(4026532412, "/run/netns/lab a".to_string())]
        );
    }

    #[test]
    fn this_threads_namespace_has_an_identity() {
        let me = NetnsId::current().expect("readable /proc/thread-self/ns/net");
        // The cookie exists on every kernel this project runs on (5.14+) and is stable.
        assert!(me.cookie.is_some(), "no SO_NETNS_COOKIE");
        assert_eq!(NetnsId::current(), Some(me));
        assert!(state_dir_name_is(&me));
    }

    fn state_dir_name_is(me: &NetnsId) -> bool {
        super::super::state::dir().ends_with(me.folder_name())
    }
}
