//! Deleting a torn-down lab's bridges one at a time, before the kernel releases its namespaces.
//!
//! The kernel deletes a Linux bridge with an `rcu_barrier()` (`br_multicast_dev_del`, from
//! `br_dev_uninit`) while it holds the RTNL lock — the lock that every link, address and route
//! request of every network namespace on the host takes. When a lab's namespaces are released
//! together, the kernel's namespace cleanup unregisters all their bridges in one batch and holds
//! RTNL for the sum of the barriers. A Kath3 lab has 136 collision domains, a bridge each in a
//! switch namespace, and their batch held RTNL for 2.7 s: every `ip` command of every other lab
//! on the host — the next run's agent probing its lab, the labs coming up behind it — waited
//! that long (`scripts/contention.py`: a round of the baseline agent's six-device survey took
//! 0.16 s alone and 2.8 s beside one teardown). Deleted one at a time, each bridge holds RTNL for
//! one barrier (tens of milliseconds) and the other labs' requests pass in between.
//!
//! So the background removal of a lab ([`super::reaper`]) keeps the network namespace of each
//! killed device (one descriptor each, opened before the signal) until the bridges its startups
//! made are deleted, and deletes the bridge of each switch namespace before that namespace's
//! holder is killed. The deletions run on a thread of their own: entering a network namespace
//! changes the calling thread's. A bridge that cannot be deleted here is left to the kernel's
//! cleanup, as before; the time only moves, nothing of the lab outlives its removal.

use super::init::{IfReq, ifreq, inet_socket};
use super::state::ProcId;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `SIOCGIFBR` with `BRCTL_GET_BRIDGES`: the interface indices of a namespace's bridges.
const SIOCGIFBR: libc::c_ulong = 0x8940;
const BRCTL_GET_BRIDGES: libc::c_ulong = 1;
/// `SIOCBRDELBR`: delete a bridge (it must be down).
const SIOCBRDELBR: libc::c_ulong = 0x89a1;
/// Bridges listed per namespace (the kernel refuses 2048 or more in one call).
const MAX_BRIDGES: usize = 1024;
/// Namespaces kept per lab at most: one descriptor each, beside what the harness has open.
const MAX_HELD: usize = 512;

/// Network namespaces of killed devices, kept until their bridges are deleted.
#[derive(Debug, Default)]
pub(crate) struct Held(Vec<OwnedFd>);

impl Held {
    /// Opens the network namespace of each of `inits` that is still the process it was (PID
    /// and start time). Call it before the signals: a namespace whose processes are all gone
    /// can no longer be opened.
    pub(crate) fn open(inits: impl Iterator<Item = ProcId>) -> Held {
        Held(
            inits
                .filter_map(|p| super::nsexec::network_namespace(p.pid, p.start).ok())
                .take(MAX_HELD)
                .collect(),
        )
    }
}

/// Deletes, one at a time, the bridges of the `held` namespaces and of the network namespaces
/// of the live `switches`, then lets the held namespaces go. Returns how many were deleted.
/// Blocks for as long as the deletions take (a barrier each): call it off the async runtime.
pub(crate) fn delete_one_by_one(held: Held, switches: Vec<ProcId>) -> usize {
    let work = move || {
        let mut deleted = 0;
        for ns in held.0 {
            deleted += delete_in(&ns).unwrap_or(0);
        }
        for p in switches {
            if let Ok(ns) = super::nsexec::network_namespace(p.pid, p.start) {
                deleted += delete_in(&ns).unwrap_or(0);
            }
        }
        deleted
    };
    std::thread::Builder::new()
        .name("faultbench-unbridge".into())
        .spawn(work)
        .ok()
        .and_then(|h| h.join().ok())
        .unwrap_or(0)
}

/// Enters `ns` (this thread only) and deletes its bridges, one request each. Never the
/// harness's own namespace (the host's bridges are not a lab's).
fn delete_in(ns: &OwnedFd) -> io::Result<usize> {
    if is_harness_namespace(ns) {
        return Ok(0);
    }
    // SAFETY: setns(2) with a namespace descriptor we own; it changes the network namespace of
    // the calling thread only, a thread of this module's own.
    if unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // A socket belongs to the namespace its creator was in: this one to `ns`.
    let sock = inet_socket().map_err(io::Error::from_raw_os_error)?;
    // SAFETY: a fresh descriptor from socket(2), owned from here on.
    let sock = unsafe { OwnedFd::from_raw_fd(sock) };
    Ok(bridges(&sock)?
        .into_iter()
        .filter(|&index| delete_bridge(&sock, index))
        .count())
}

/// The interface indices of the bridges in the namespace of `sock`.
fn bridges(sock: &OwnedFd) -> io::Result<Vec<i32>> {
    let mut indices = vec![0i32; MAX_BRIDGES];
    let mut args: [libc::c_ulong; 3] = [
        BRCTL_GET_BRIDGES,
        indices.as_mut_ptr() as libc::c_ulong,
        MAX_BRIDGES as libc::c_ulong,
    ];
    // SAFETY: the bridge ioctl reads three words from `args` and writes at most `args[2]`
    // indices into `indices`, which holds that many.
    let found = unsafe { libc::ioctl(sock.as_raw_fd(), SIOCGIFBR, args.as_mut_ptr()) };
    if found < 0 {
        return Err(io::Error::last_os_error());
    }
    indices.truncate((found as usize).min(MAX_BRIDGES));
    Ok(indices)
}

/// Whether `ns` is the network namespace the harness itself runs in (compared by inode: what
/// `/proc/self/ns/net` names, read without following the link's target as a path).
fn is_harness_namespace(ns: &OwnedFd) -> bool {
    use std::os::unix::fs::MetadataExt;
    let Ok(own) = std::fs::metadata("/proc/self/ns/net") else {
        // Unknown: treat as ours, delete nothing.
        return true;
    };
    // SAFETY: `stat` is plain data; all zeroes is a valid value.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat(2) into that struct, on a descriptor we own.
    if unsafe { libc::fstat(ns.as_raw_fd(), &mut st) } != 0 {
        return true;
    }
    st.st_ino == own.ino() && st.st_dev == own.dev()
}

/// Takes the bridge with interface index `index` down and deletes it; false if either fails.
fn delete_bridge(sock: &OwnedFd, index: i32) -> bool {
    let mut r: IfReq = ifreq(c"");
    r.data[0..4].copy_from_slice(&index.to_ne_bytes());
    let s = sock.as_raw_fd();
    // SAFETY: interface ioctls on our socket with a `struct ifreq` of the kernel's layout;
    // SIOCGIFNAME fills the name in, the flag calls read and write the first two data bytes,
    // SIOCBRDELBR reads a NUL-terminated name (the kernel terminates what it wrote).
    unsafe {
        if libc::ioctl(s, libc::SIOCGIFNAME, &mut r) != 0 {
            return false;
        }
        if libc::ioctl(s, libc::SIOCGIFFLAGS, &mut r) == 0 {
            let flags = i16::from_ne_bytes([r.data[0], r.data[1]]) & !(libc::IFF_UP as i16);
            r.data[0..2].copy_from_slice(&flags.to_ne_bytes());
            libc::ioctl(s, libc::SIOCSIFFLAGS, &mut r);
        }
        libc::ioctl(s, SIOCBRDELBR, r.name.as_ptr()) == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_held_and_no_live_switch_deletes_nothing() {
        let gone = ProcId {
            pid: i32::MAX,
            start: 1,
        };
        assert!(Held::open([gone].into_iter()).0.is_empty());
        assert_eq!(delete_one_by_one(Held::default(), vec![gone]), 0);
    }

    /// A socket in a new network namespace of a thread of its own, with `names` as bridges (the
    /// first one up), and that namespace.
    fn namespace_with_bridges(names: &'static [&'static std::ffi::CStr]) -> OwnedFd {
        std::thread::spawn(move || {
            // SAFETY: unshare(2) of this test thread's network namespace only.
            let r = unsafe { libc::unshare(libc::CLONE_NEWNET) };
            assert_eq!(r, 0, "unshare needs root: {}", io::Error::last_os_error());
            // SAFETY: a fresh socket, owned below.
            let sock = unsafe { OwnedFd::from_raw_fd(inet_socket().unwrap()) };
            for name in names {
                // SAFETY: SIOCBRADDBR reads a NUL-terminated name.
                let r = unsafe {
                    libc::ioctl(
                        sock.as_raw_fd(),
                        crate::netns::init::SIOCBRADDBR,
                        name.as_ptr(),
                    )
                };
                assert_eq!(r, 0, "{name:?}: {}", io::Error::last_os_error());
            }
            let mut r = ifreq(names[0]);
            // SAFETY: interface flag ioctls with a `struct ifreq`.
            unsafe {
                assert_eq!(libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut r), 0);
                r.data[0] |= libc::IFF_UP as u8;
                assert_eq!(libc::ioctl(sock.as_raw_fd(), libc::SIOCSIFFLAGS, &mut r), 0);
            }
            OwnedFd::from(std::fs::File::open("/proc/thread-self/ns/net").unwrap())
        })
        .join()
        .unwrap()
    }

    /// How many bridges the namespace `ns` has (read from a thread of its own).
    fn count_bridges(ns: OwnedFd) -> usize {
        std::thread::spawn(move || {
            // SAFETY: setns(2) of this test thread's network namespace only.
            let entered = unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) };
            assert_eq!(entered, 0);
            // SAFETY: a fresh socket, owned below.
            let sock = unsafe { OwnedFd::from_raw_fd(inet_socket().unwrap()) };
            bridges(&sock).unwrap().len()
        })
        .join()
        .unwrap()
    }

    #[test]
    fn every_bridge_of_a_held_namespace_is_deleted_up_or_down() {
        let ns = namespace_with_bridges(&[c"fbt-br0", c"fbt-br1", c"fbt-br2"]);
        let again = ns.try_clone().unwrap();
        assert_eq!(count_bridges(ns.try_clone().unwrap()), 3);
        assert_eq!(delete_one_by_one(Held(vec![ns]), Vec::new()), 3);
        assert_eq!(count_bridges(again), 0);
    }

    #[test]
    fn the_harness_namespace_is_recognised_and_never_entered() {
        let own =
            crate::netns::nsexec::network_namespace(ProcId::current().pid, ProcId::current().start)
                .unwrap();
        assert!(is_harness_namespace(&own));
        // Deleting "in" it does nothing (the guard answers before any setns).
        assert_eq!(delete_in(&own).unwrap(), 0);
    }
}
