//! Per-network-namespace records of what the shims emulate.
//!
//! Keyed by the namespace's inode, so the records stay separate whether devices have their own
//! `/run` (the netns emulator) or share the host's (`ip netns exec`). A record whose daemon is
//! gone or whose interface vanished is stale and is dropped when read.

use super::sys;
use serde::{Deserialize, Serialize};
use std::io;
use std::path::PathBuf;

const ROOT: &str = "/run/faultbench-netshim";

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

/// The state directory of the current network namespace.
pub fn dir() -> PathBuf {
    PathBuf::from(ROOT).join(sys::netns_id())
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
    let d = links_dir();
    std::fs::create_dir_all(&d)?;
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
