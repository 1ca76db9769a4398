//! Enslaving interfaces to, and releasing them from, an emulated bond.
//!
//! The shim edits the bond's record (member list) and sends its daemon SIGHUP; the daemon
//! re-reads the record, opens or closes its packet sockets and ingress rules, and confirms by
//! writing an acknowledgement file that the shim waits for, so the command returns only once
//! the member carries traffic — as the kernel call would.

use super::ShimError;
use super::realbin;
use super::state::{self, LinkKind, LinkRecord};
use super::sys;
use std::time::{Duration, Instant};

fn ack_path(bond: &str) -> std::path::PathBuf {
    state::dir().join("links").join(format!(".ack-{bond}"))
}

/// Called by the daemon after applying its member list.
pub fn acknowledge(bond: &str, members: &[String]) {
    let _ = std::fs::write(ack_path(bond), members.join("\n"));
}

fn update(bond: &LinkRecord, f: impl FnOnce(&mut Vec<String>)) -> Result<(), ShimError> {
    let mut rec = state::load(&bond.name).ok_or_else(|| ShimError::NoDevice(bond.name.clone()))?;
    let LinkKind::Bond { members, .. } = &mut rec.kind else {
        return Err(ShimError::NotABond(bond.name.clone()));
    };
    f(members);
    let want = members.join("\n");
    let _ = std::fs::remove_file(ack_path(&bond.name));
    state::save(&rec)?;
    sys::signal(rec.pid, libc::SIGHUP)?;
    let deadline = Instant::now() + Duration::from_secs(2);
    while Instant::now() < deadline {
        if std::fs::read_to_string(ack_path(&bond.name)).is_ok_and(|s| s == want) {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Err(ShimError::BondNotApplied(bond.name.clone()))
}

/// `ip link set MEMBER master BOND`.
pub fn enslave(bond: &LinkRecord, member: &str) -> Result<(), ShimError> {
    if sys::ifindex(member).is_none() {
        return Err(ShimError::NoDevice(member.to_string()));
    }
    if member == bond.name {
        return Err(ShimError::EnslaveToItself);
    }
    let first = matches!(&bond.kind, LinkKind::Bond { members, .. } if members.is_empty());
    update(bond, |m| {
        if !m.iter().any(|x| x == member) {
            m.push(member.to_string());
        }
    })?;
    // Like the bonding driver: the first slave lends the bond its MAC; slaves are opened.
    if first && let Ok(mac) = sys::if_mac(member) {
        let mac = mac
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<Vec<_>>()
            .join(":");
        realbin::run_ok("ip", &["link", "set", "dev", &bond.name, "address", &mac])?;
    }
    realbin::run_ok("ip", &["link", "set", "dev", member, "up"])
}

/// `ip link set MEMBER nomaster` (or moving it elsewhere, or deleting the bond).
pub fn release(bond: &LinkRecord, member: &str) {
    let _ = update(bond, |m| m.retain(|x| x != member));
}
