//! Per-network-namespace records of what the shims emulate.
//!
//! Each namespace has its own folder `/run/faultbench-netshim/<inode>-<cookie>/`, so the
//! records stay separate whether devices have their own `/run` (the netns emulator) or share
//! the host's (`ip netns exec`). The inode alone is not an identity: the kernel hands a freed
//! namespace's inode to the next one, which would inherit a dead namespace's VLAN tables and
//! netem settings. The cookie (`SO_NETNS_COOKIE`) is given once per boot, so a folder can only
//! ever be read by the namespace that wrote it. (Kernels before 5.14 have no cookie; there the
//! folder is `<inode>` and stale records are recognised by their dead daemon or changed
//! interface index only.)
//!
//! A record whose daemon is gone or whose interface vanished is stale and is dropped when read.
//! Folders of namespaces that are gone are removed by [`super::stategc`]: when a namespace
//! first writes state (then the folder of an earlier namespace with the same inode is
//! provably dead), and by the netns emulator's `gc`.

use super::sys;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::PathBuf;

/// What kind of link a daemon emulates.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LinkKind {
    /// 802.1Q sub-interface of `parent` with VLAN ID `vid`.
    Vlan {
        /// Lower device.
        parent: String,
        /// VLAN ID (1–4094; 0 allowed like the kernel: priority-tagged).
        vid: u16,
    },
    /// Dummy interface.
    Dummy,
    /// Bond over `members` (in enslave order).
    Bond {
        /// Bonding mode name as the kernel prints it (`802.3ad`, `active-backup`, …).
        mode: String,
        /// Enslaved interfaces.
        members: Vec<String>,
    },
}

impl LinkKind {
    /// The kernel's name for the link kind (`ip -d link`, `type …`).
    pub fn type_name(&self) -> &'static str {
        match self {
            LinkKind::Vlan { .. } => "vlan",
            LinkKind::Dummy => "dummy",
            LinkKind::Bond { .. } => "bond",
        }
    }
}

/// One emulated link.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkRecord {
    /// Interface name.
    pub name: String,
    /// What it emulates.
    #[serde(flatten)]
    pub kind: LinkKind,
    /// PID of the daemon owning the tap.
    pub pid: i32,
    /// Interface index of the tap.
    pub ifindex: u32,
}

/// Folder holding every namespace's state folder.
pub const ROOT: &str = "/run/faultbench-netshim";

/// Identity of a network namespace: its inode (reused once the namespace is freed) and, where
/// the kernel has it, its cookie (never reused before reboot).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NetnsId {
    /// nsfs inode (`/proc/PID/ns/net` → `net:[inode]`).
    pub inode: u64,
    /// `SO_NETNS_COOKIE`, absent before Linux 5.14.
    pub cookie: Option<u64>,
}

impl NetnsId {
    /// The calling thread's namespace.
    pub fn current() -> Option<NetnsId> {
        Some(NetnsId {
            inode: sys::netns_inode()?,
            cookie: sys::netns_cookie().ok(),
        })
    }

    /// Name of the namespace's state folder: `<inode>-<cookie>` (or `<inode>`).
    pub fn folder_name(&self) -> String {
        match self.cookie {
            Some(c) => format!("{}-{c}", self.inode),
            None => self.inode.to_string(),
        }
    }

    /// The identity a state folder name stands for (`None`: not a state folder).
    pub fn from_folder_name(name: &str) -> Option<NetnsId> {
        let (inode, cookie) = match name.split_once('-') {
            Some((i, c)) => (i, Some(c.parse().ok()?)),
            None => (name, None),
        };
        Some(NetnsId {
            inode: inode.parse().ok()?,
            cookie,
        })
    }
}

/// The state directory of the current network namespace.
pub fn dir() -> PathBuf {
    let name = NetnsId::current()
        .map(|id| id.folder_name())
        .unwrap_or_else(|| String::from("unknown"));
    PathBuf::from(ROOT).join(name)
}

/// Create `sub` in this namespace's state directory. The first time the namespace writes
/// state, folders of dead namespaces are collected first ([`super::stategc::on_first_write`]).
pub fn create_subdir(sub: &str) -> io::Result<PathBuf> {
    let top = dir();
    if !top.is_dir() {
        super::stategc::on_first_write();
    }
    let d = top.join(sub);
    std::fs::create_dir_all(&d)?;
    Ok(d)
}

fn links_dir() -> PathBuf {
    dir().join("links")
}

fn file_name(name: &str) -> String {
    // Interface names cannot contain '/', but be strict anyway.
    name.replace('/', "%2F")
}

/// Save (create or replace) a record.
pub fn save(rec: &LinkRecord) -> io::Result<()> {
    let d = create_subdir("links")?;
    let tmp = d.join(format!(".{}.{}", file_name(&rec.name), std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec(rec).map_err(io::Error::other)?)?;
    std::fs::rename(tmp, d.join(file_name(&rec.name)))
}

/// Remove a record (no error if absent).
pub fn remove(name: &str) {
    let _ = std::fs::remove_file(links_dir().join(file_name(name)));
}

/// The live record for `name`, if `name` is an emulated link.
pub fn load(name: &str) -> Option<LinkRecord> {
    let bytes = std::fs::read(links_dir().join(file_name(name))).ok()?;
    let rec: LinkRecord = serde_json::from_slice(&bytes).ok()?;
    if is_live(&rec) { Some(rec) } else { None }
}

/// A record as stored, without the liveness check (the daemon reading its own record).
pub fn load_raw(name: &str) -> Option<LinkRecord> {
    let bytes = std::fs::read(links_dir().join(file_name(name))).ok()?;
    serde_json::from_slice(&bytes).ok()
}

fn is_live(rec: &LinkRecord) -> bool {
    sys::pid_alive(rec.pid) && sys::ifindex(&rec.name) == Some(rec.ifindex)
}

/// Every live record of this namespace.
pub fn list() -> Vec<LinkRecord> {
    let Ok(rd) = std::fs::read_dir(links_dir()) else {
        return Vec::new();
    };
    let mut v: Vec<LinkRecord> = rd
        .filter_map(|e| e.ok())
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .filter_map(|e| std::fs::read(e.path()).ok())
        .filter_map(|b| serde_json::from_slice::<LinkRecord>(&b).ok())
        .filter(is_live)
        .collect();
    v.sort_by_key(|r| r.ifindex);
    v
}

/// The bond `member` is enslaved to, if any.
pub fn bond_of(member: &str) -> Option<LinkRecord> {
    list().into_iter().find(|r| match &r.kind {
        LinkKind::Bond { members, .. } => members.iter().any(|m| m == member),
        _ => false,
    })
}
