//! The few rtnetlink link operations the plugin needs: make a bridge set up as Kathará's switch,
//! make a veth pair, enslave and raise a port, delete a link, look a link up.
//!
//! Each operation is one request on a fresh `NETLINK_ROUTE` socket with `NLM_F_ACK`, and waits
//! for the kernel's acknowledgement, so an error comes back as the errno the kernel chose. Every
//! `unsafe` block of the crate is in this file.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use crate::error::PluginError;

const RTM_NEWLINK: u16 = 16;
const RTM_DELLINK: u16 = 17;
const NLMSG_ERROR: u16 = 2;
const NLM_F_REQUEST: u16 = 0x1;
const NLM_F_ACK: u16 = 0x4;
const NLM_F_EXCL: u16 = 0x200;
const NLM_F_CREATE: u16 = 0x400;

const IFLA_ADDRESS: u16 = 1;
const IFLA_IFNAME: u16 = 3;
const IFLA_MASTER: u16 = 10;
const IFLA_LINKINFO: u16 = 18;
const IFLA_INFO_KIND: u16 = 1;
const IFLA_INFO_DATA: u16 = 2;
const VETH_INFO_PEER: u16 = 1;
const IFLA_BR_FORWARD_DELAY: u16 = 1;
const IFLA_BR_AGEING_TIME: u16 = 4;
const IFLA_BR_STP_STATE: u16 = 5;
const IFLA_BR_GROUP_FWD_MASK: u16 = 9;

const IFF_UP: u32 = 0x1;
const IFNAMSIZ: usize = 16;

/// Link-local groups 01:80:C2:00:00:0X the bridge forwards: all but the three the kernel keeps
/// for itself (STP, MAC pause, LACP), as Kathará's plugin sets it.
pub const GROUP_FWD_MASK: u16 = 0xfff8;

/// One netlink message under construction: header, `ifinfomsg`, attributes.
struct Msg {
    buf: Vec<u8>,
    /// Offsets of nested attributes still open, to patch their lengths on close.
    open: Vec<usize>,
}

impl Msg {
    fn new(kind: u16, flags: u16, index: i32, ifi_flags: u32, change: u32) -> Self {
        let mut buf = Vec::with_capacity(256);
        buf.extend_from_slice(&0u32.to_ne_bytes()); // length, patched in finish()
        buf.extend_from_slice(&kind.to_ne_bytes());
        buf.extend_from_slice(&(flags | NLM_F_REQUEST | NLM_F_ACK).to_ne_bytes());
        buf.extend_from_slice(&1u32.to_ne_bytes()); // sequence
        buf.extend_from_slice(&0u32.to_ne_bytes()); // port id: the kernel's
        ifinfo(&mut buf, index, ifi_flags, change);
        Self {
            buf,
            open: Vec::new(),
        }
    }

    fn attr(&mut self, kind: u16, data: &[u8]) -> &mut Self {
        put_attr(&mut self.buf, kind, data);
        self
    }

    fn name(&mut self, kind: u16, name: &str) -> &mut Self {
        let mut z = name.as_bytes().to_vec();
        z.push(0);
        self.attr(kind, &z)
    }

    fn begin(&mut self, kind: u16) -> &mut Self {
        self.open.push(self.buf.len());
        self.buf.extend_from_slice(&0u16.to_ne_bytes());
        self.buf.extend_from_slice(&kind.to_ne_bytes());
        self
    }

    fn end(&mut self) -> &mut Self {
        if let Some(at) = self.open.pop() {
            let len = u16::try_from(self.buf.len() - at).unwrap_or(u16::MAX);
            self.buf[at..at + 2].copy_from_slice(&len.to_ne_bytes());
        }
        self
    }

    /// Opens a nested `ifinfomsg` (a veth peer's description).
    fn peer(&mut self) -> &mut Self {
        self.begin(VETH_INFO_PEER);
        ifinfo(&mut self.buf, 0, 0, 0);
        self
    }

    fn finish(mut self) -> Vec<u8> {
        let len = u32::try_from(self.buf.len()).unwrap_or(u32::MAX);
        self.buf[0..4].copy_from_slice(&len.to_ne_bytes());
        self.buf
    }
}

fn ifinfo(buf: &mut Vec<u8>, index: i32, flags: u32, change: u32) {
    buf.push(libc::AF_UNSPEC as u8);
    buf.push(0);
    buf.extend_from_slice(&0u16.to_ne_bytes()); // device type
    buf.extend_from_slice(&index.to_ne_bytes());
    buf.extend_from_slice(&flags.to_ne_bytes());
    buf.extend_from_slice(&change.to_ne_bytes());
}

fn put_attr(buf: &mut Vec<u8>, kind: u16, data: &[u8]) {
    let len = u16::try_from(4 + data.len()).unwrap_or(u16::MAX);
    buf.extend_from_slice(&len.to_ne_bytes());
    buf.extend_from_slice(&kind.to_ne_bytes());
    buf.extend_from_slice(data);
    while !buf.len().is_multiple_of(4) {
        buf.push(0);
    }
}

fn socket() -> io::Result<OwnedFd> {
    // SAFETY: socket(2) with constant arguments; the result is checked before use.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            libc::NETLINK_ROUTE,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fd is a fresh descriptor owned by nobody else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Sends one request and waits for its acknowledgement: `Ok` or the kernel's errno.
fn transact(msg: Msg) -> io::Result<()> {
    let fd = socket()?;
    let req = msg.finish();
    // SAFETY: sockaddr_nl zeroed is the kernel's address; the buffer outlives the call.
    let sent = unsafe {
        let mut addr: libc::sockaddr_nl = std::mem::zeroed();
        addr.nl_family = libc::AF_NETLINK as libc::sa_family_t;
        libc::sendto(
            fd.as_raw_fd(),
            req.as_ptr().cast(),
            req.len(),
            0,
            std::ptr::from_ref(&addr).cast(),
            std::mem::size_of::<libc::sockaddr_nl>() as libc::socklen_t,
        )
    };
    if sent < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut buf = vec![0u8; 8192];
    loop {
        // SAFETY: recv into a buffer of the given length.
        let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        let n = usize::try_from(n).unwrap_or(0);
        let mut at = 0;
        while at + 16 <= n {
            let len = u32::from_ne_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]]);
            let kind = u16::from_ne_bytes([buf[at + 4], buf[at + 5]]);
            if kind == NLMSG_ERROR && at + 20 <= n {
                let code =
                    i32::from_ne_bytes([buf[at + 16], buf[at + 17], buf[at + 18], buf[at + 19]]);
                return if code == 0 {
                    Ok(())
                } else {
                    Err(io::Error::from_raw_os_error(-code))
                };
            }
            let step = usize::try_from(len).unwrap_or(0).next_multiple_of(4);
            if step == 0 {
                break;
            }
            at += step;
        }
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "netlink closed before acknowledging",
            ));
        }
    }
}

fn check_name(name: &str) -> io::Result<()> {
    if name.is_empty()
        || name.len() >= IFNAMSIZ
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{name:?} is not an interface name the plugin makes"),
        ));
    }
    Ok(())
}

/// The interface's index, or `None` when no such interface exists in this namespace.
pub fn index(name: &str) -> Option<u32> {
    check_name(name).ok()?;
    let c = std::ffi::CString::new(name).ok()?;
    // SAFETY: if_nametoindex reads a NUL-terminated string.
    let i = unsafe { libc::if_nametoindex(c.as_ptr()) };
    (i != 0).then_some(i)
}

fn err(op: &'static str, name: &str) -> impl FnOnce(io::Error) -> PluginError {
    let name = name.to_owned();
    move |source| PluginError::Netlink { op, name, source }
}

fn index_or(op: &'static str, name: &str) -> Result<i32, PluginError> {
    index(name)
        .and_then(|i| i32::try_from(i).ok())
        .ok_or_else(|| err(op, name)(io::Error::new(io::ErrorKind::NotFound, "no such interface")))
}

fn switch_settings(m: &mut Msg) {
    m.begin(IFLA_LINKINFO)
        .name(IFLA_INFO_KIND, "bridge")
        .begin(IFLA_INFO_DATA)
        .attr(IFLA_BR_STP_STATE, &0u32.to_ne_bytes())
        .attr(IFLA_BR_FORWARD_DELAY, &0u32.to_ne_bytes())
        .attr(IFLA_BR_AGEING_TIME, &0u32.to_ne_bytes())
        .attr(IFLA_BR_GROUP_FWD_MASK, &GROUP_FWD_MASK.to_ne_bytes())
        .end()
        .end();
}

/// Makes the bridge `name` (or keeps the one that exists), sets it up as Kathará's switch and
/// raises it. Idempotent.
pub fn ensure_bridge(name: &str) -> Result<(), PluginError> {
    check_name(name).map_err(err("create bridge", name))?;
    if index(name).is_none() {
        let mut m = Msg::new(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0, 0, 0);
        m.name(IFLA_IFNAME, name);
        switch_settings(&mut m);
        match transact(m) {
            Ok(()) => {}
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => {}
            Err(e) => return Err(err("create bridge", name)(e)),
        }
    }
    // Settings again on an existing bridge: one made by an older plugin, or changed by hand.
    let idx = index_or("configure bridge", name)?;
    let mut m = Msg::new(RTM_NEWLINK, 0, idx, IFF_UP, IFF_UP);
    switch_settings(&mut m);
    transact(m).map_err(err("configure bridge", name))
}

/// Makes the veth pair `host` ↔ `peer` (deleting a stale `host` first), the peer with `mac`,
/// and enslaves `host` to `bridge`, up.
pub fn veth_into_bridge(
    host: &str,
    peer: &str,
    mac: [u8; 6],
    bridge: &str,
) -> Result<(), PluginError> {
    check_name(host).map_err(err("create veth", host))?;
    check_name(peer).map_err(err("create veth", peer))?;
    for stale in [host, peer] {
        if index(stale).is_some() {
            delete(stale)?;
        }
    }
    let mut m = Msg::new(RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, 0, 0, 0);
    m.name(IFLA_IFNAME, host)
        .begin(IFLA_LINKINFO)
        .name(IFLA_INFO_KIND, "veth")
        .begin(IFLA_INFO_DATA)
        .peer()
        .name(IFLA_IFNAME, peer)
        .attr(IFLA_ADDRESS, &mac)
        .end()
        .end()
        .end();
    transact(m).map_err(err("create veth", host))?;
    let br = u32::try_from(index_or("enslave veth", bridge)?).unwrap_or(0);
    let idx = index_or("enslave veth", host)?;
    let mut m = Msg::new(RTM_NEWLINK, 0, idx, IFF_UP, IFF_UP);
    m.attr(IFLA_MASTER, &br.to_ne_bytes());
    transact(m).map_err(err("enslave veth", host))
}

/// Deletes the link `name`; one that is already gone is not an error (a container that died
/// takes its veth pair with it).
pub fn delete(name: &str) -> Result<(), PluginError> {
    check_name(name).map_err(err("delete link", name))?;
    let Some(idx) = index(name).and_then(|i| i32::try_from(i).ok()) else {
        return Ok(());
    };
    match transact(Msg::new(RTM_DELLINK, 0, idx, 0, 0)) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::ENODEV) => Ok(()),
        Err(e) => Err(err("delete link", name)(e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_attributes_carry_their_lengths() {
        let mut m = Msg::new(RTM_NEWLINK, 0, 7, 0, 0);
        m.begin(IFLA_LINKINFO).name(IFLA_INFO_KIND, "veth").end();
        let b = m.finish();
        assert_eq!(
            u32::from_ne_bytes([b[0], b[1], b[2], b[3]]) as usize,
            b.len()
        );
        // header 16 + ifinfomsg 16, then LINKINFO: 4 + (4 + "veth\0" padded to 8) = 16
        assert_eq!(u16::from_ne_bytes([b[32], b[33]]), 16);
        assert_eq!(u16::from_ne_bytes([b[34], b[35]]), IFLA_LINKINFO);
        assert_eq!(i32::from_ne_bytes([b[20], b[21], b[22], b[23]]), 7);
    }

    #[test]
    fn names_the_kernel_would_truncate_or_misread_are_refused() {
        assert!(check_name("kt-0123456789ab").is_ok());
        assert!(check_name("kt-0123456789abc").is_err());
        assert!(check_name("a/b").is_err());
        assert!(check_name("").is_err());
        assert!(index("../etc").is_none());
    }
}
