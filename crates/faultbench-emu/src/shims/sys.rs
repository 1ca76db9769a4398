//! Thin, checked wrappers over the Linux calls the emulation daemons need: tap devices,
//! `AF_PACKET` sockets with VLAN metadata and virtio-net headers, rtnetlink link events,
//! signalfd, interface flags. Every `unsafe` block of the shims lives here.

use std::ffi::CString;
use std::io;
use std::mem::{size_of, zeroed};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

// Values from <linux/if_packet.h>; spelled out because not every libc release exports them.
const PACKET_AUXDATA: libc::c_int = 8;
const PACKET_VNET_HDR: libc::c_int = 15;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const TP_STATUS_VLAN_VALID: u32 = 0x10;
const ETH_P_ALL: u16 = 0x0003;
const TUN_F_TSO6: libc::c_uint = 0x04;
const TUN_F_TSO_ECN: libc::c_uint = 0x08;

/// Size of `struct virtio_net_hdr` as used by tap (`IFF_VNET_HDR`) and `PACKET_VNET_HDR`.
pub const VNET_HDR_LEN: usize = 10;

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct TpacketAuxdata {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn ifreq_for(name: &str) -> io::Result<libc::ifreq> {
    if name.is_empty() || name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("bad interface name {name:?}"),
        ));
    }
    // SAFETY: ifreq is a plain C struct for which all-zero is valid.
    let mut req: libc::ifreq = unsafe { zeroed() };
    for (i, b) in name.bytes().enumerate() {
        req.ifr_name[i] = b as libc::c_char;
    }
    Ok(req)
}

/// A control socket for interface ioctls.
fn ctl_socket() -> io::Result<OwnedFd> {
    // SAFETY: socket(2); the result is owned right away.
    let fd = cvt(unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: fd is a fresh descriptor we own.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Interface index by name (`None` when the interface does not exist).
pub fn ifindex(name: &str) -> Option<u32> {
    let c = CString::new(name).ok()?;
    // SAFETY: c is a valid NUL-terminated string.
    let idx = unsafe { libc::if_nametoindex(c.as_ptr()) };
    (idx != 0).then_some(idx)
}

/// `IFF_*` flags of an interface.
pub fn if_flags(name: &str) -> io::Result<u32> {
    let sock = ctl_socket()?;
    let mut req = ifreq_for(name)?;
    // SAFETY: SIOCGIFFLAGS fills ifr_ifru.ifru_flags of a valid ifreq.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFFLAGS, &mut req) })?;
    // SAFETY: the kernel wrote the flags member.
    Ok(u32::from(unsafe { req.ifr_ifru.ifru_flags } as u16))
}

/// MTU of an interface.
pub fn if_mtu(name: &str) -> io::Result<u32> {
    let sock = ctl_socket()?;
    let mut req = ifreq_for(name)?;
    // SAFETY: SIOCGIFMTU fills ifr_ifru.ifru_mtu of a valid ifreq.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFMTU, &mut req) })?;
    // SAFETY: the kernel wrote the mtu member.
    Ok(unsafe { req.ifr_ifru.ifru_mtu } as u32)
}

/// Hardware address of an interface.
pub fn if_mac(name: &str) -> io::Result<[u8; 6]> {
    let sock = ctl_socket()?;
    let mut req = ifreq_for(name)?;
    // SAFETY: SIOCGIFHWADDR fills ifr_ifru.ifru_hwaddr of a valid ifreq.
    cvt(unsafe { libc::ioctl(sock.as_raw_fd(), libc::SIOCGIFHWADDR, &mut req) })?;
    // SAFETY: the kernel wrote the hwaddr member.
    let data = unsafe { req.ifr_ifru.ifru_hwaddr.sa_data };
    let mut mac = [0u8; 6];
    for (m, d) in mac.iter_mut().zip(data.iter()) {
        *m = *d as u8;
    }
    Ok(mac)
}

/// A tap device owned by this process (it disappears when the descriptor closes).
pub struct Tap {
    fd: OwnedFd,
}

impl Tap {
    /// Create tap `name` (fails if the name exists: no `IFF_TUN_EXCL` race with another
    /// creator, since we check and create under the same name).
    pub fn create(name: &str, vnet: bool) -> io::Result<Tap> {
        if ifindex(name).is_some() {
            return Err(io::Error::from_raw_os_error(libc::EEXIST));
        }
        let path = c"/dev/net/tun";
        // SAFETY: open(2) with a valid path; the result is owned right away.
        let fd = cvt(unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDWR | libc::O_CLOEXEC | libc::O_NONBLOCK,
            )
        })?;
        // SAFETY: fd is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let mut req = ifreq_for(name)?;
        let mut flags = libc::IFF_TAP | libc::IFF_NO_PI;
        if vnet {
            flags |= libc::IFF_VNET_HDR;
        }
        req.ifr_ifru.ifru_flags = flags as libc::c_short;
        // SAFETY: TUNSETIFF reads a valid ifreq.
        cvt(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF, &mut req) })?;
        if vnet {
            let off = libc::TUN_F_CSUM | libc::TUN_F_TSO4 | TUN_F_TSO6 | TUN_F_TSO_ECN;
            // SAFETY: TUNSETOFFLOAD takes an unsigned long by value.
            cvt(unsafe {
                libc::ioctl(
                    fd.as_raw_fd(),
                    libc::TUNSETOFFLOAD,
                    libc::c_ulong::from(off),
                )
            })?;
        }
        Ok(Tap { fd })
    }

    /// Raise or drop the tap's carrier (like a lower device going down).
    pub fn set_carrier(&self, on: bool) -> io::Result<()> {
        let v: libc::c_int = libc::c_int::from(on);
        // SAFETY: TUNSETCARRIER reads an int through the pointer.
        cvt(unsafe { libc::ioctl(self.fd.as_raw_fd(), libc::TUNSETCARRIER, &v) }).map(|_| ())
    }

    /// Read one frame (with its virtio-net header when `vnet`).
    pub fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        // SAFETY: buf is valid for buf.len() bytes.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }

    /// Write one frame (with its virtio-net header when `vnet`).
    pub fn write(&self, frame: &[u8]) -> io::Result<usize> {
        // SAFETY: frame is valid for frame.len() bytes.
        let n = unsafe { libc::write(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len()) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(n as usize)
        }
    }
}

impl AsRawFd for Tap {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// A raw `AF_PACKET` socket bound to one interface, with VLAN metadata (auxdata),
/// virtio-net headers, and without our own outgoing frames.
pub struct PacketSocket {
    fd: OwnedFd,
    ifindex: u32,
}

/// What [`PacketSocket::recv`] returns besides the bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecvMeta {
    /// Bytes written to the buffer (virtio-net header + frame).
    pub len: usize,
    /// The 802.1Q TCI the kernel stripped from the frame, if any.
    pub vlan_tci: Option<u16>,
}

impl PacketSocket {
    /// Open a socket on `ifindex`; `only_vid` installs a classic BPF filter that passes only
    /// frames tagged with that VLAN ID (so a VLAN daemon never sees other traffic).
    pub fn open(ifindex: u32, only_vid: Option<u16>) -> io::Result<PacketSocket> {
        // Protocol 0: receive nothing until the filter is in place and we bind.
        // SAFETY: socket(2); the result is owned right away.
        let fd = cvt(unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                0,
            )
        })?;
        // SAFETY: fd is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let one: libc::c_int = 1;
        for opt in [PACKET_AUXDATA, PACKET_VNET_HDR, PACKET_IGNORE_OUTGOING] {
            setsockopt(&fd, libc::SOL_PACKET, opt, &one)?;
        }
        if let Some(vid) = only_vid {
            attach_vid_filter(&fd, vid)?;
        }
        // SAFETY: sockaddr_ll is plain data; all-zero is valid.
        let mut sll: libc::sockaddr_ll = unsafe { zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = ETH_P_ALL.to_be();
        sll.sll_ifindex = ifindex as i32;
        // SAFETY: bind(2) with a correctly sized sockaddr_ll.
        cvt(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast(),
                size_of::<libc::sockaddr_ll>() as u32,
            )
        })?;
        Ok(PacketSocket { fd, ifindex })
    }

    /// Put the bound interface in promiscuous mode for as long as the socket lives (the kernel
    /// drops the membership when the socket closes). A real VLAN device whose MAC differs from
    /// its parent's adds that MAC to the parent's unicast filter, which makes a bridge parent
    /// promiscuous; without it a bridge would not pass frames addressed to the VLAN up to us.
    pub fn join_promiscuous(&self) -> io::Result<()> {
        // SAFETY: packet_mreq is plain data; all-zero is valid.
        let mut mreq: libc::packet_mreq = unsafe { zeroed() };
        mreq.mr_ifindex = self.ifindex as i32;
        mreq.mr_type = libc::PACKET_MR_PROMISC as u16;
        setsockopt(
            &self.fd,
            libc::SOL_PACKET,
            libc::PACKET_ADD_MEMBERSHIP,
            &mreq,
        )
    }

    /// The interface this socket is bound to.
    pub fn ifindex(&self) -> u32 {
        self.ifindex
    }

    /// Receive one frame (virtio-net header first) and its VLAN metadata.
    pub fn recv(&self, buf: &mut [u8]) -> io::Result<RecvMeta> {
        let mut iov = libc::iovec {
            iov_base: buf.as_mut_ptr().cast(),
            iov_len: buf.len(),
        };
        let mut cbuf = [0u64; 16];
        // SAFETY: msghdr is plain data; all-zero is valid.
        let mut msg: libc::msghdr = unsafe { zeroed() };
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf.as_mut_ptr().cast();
        msg.msg_controllen = size_of_val(&cbuf);
        // SAFETY: msg points to valid buffers that outlive the call.
        let n = unsafe { libc::recvmsg(self.fd.as_raw_fd(), &mut msg, libc::MSG_TRUNC) };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut vlan_tci = None;
        // SAFETY: walking the control messages the kernel just wrote into cbuf.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(&msg);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_PACKET && (*c).cmsg_type == PACKET_AUXDATA {
                    let aux: TpacketAuxdata =
                        std::ptr::read_unaligned(libc::CMSG_DATA(c).cast::<TpacketAuxdata>());
                    if aux.tp_status & TP_STATUS_VLAN_VALID != 0 {
                        vlan_tci = Some(aux.tp_vlan_tci);
                    }
                }
                c = libc::CMSG_NXTHDR(&msg, c);
            }
        }
        Ok(RecvMeta {
            len: (n as usize).min(buf.len()),
            vlan_tci,
        })
    }

    /// Send one frame (virtio-net header first) out of the interface.
    pub fn send(&self, frame: &[u8]) -> io::Result<()> {
        // SAFETY: frame is valid for frame.len() bytes.
        let n = unsafe { libc::send(self.fd.as_raw_fd(), frame.as_ptr().cast(), frame.len(), 0) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }
}

impl AsRawFd for PacketSocket {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

fn setsockopt<T>(fd: &OwnedFd, level: libc::c_int, opt: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: v points to a valid T of the given size.
    cvt(unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            opt,
            (v as *const T).cast(),
            size_of::<T>() as u32,
        )
    })
    .map(|_| ())
}

/// Classic BPF: accept only frames whose (kernel-stripped) 802.1Q tag carries `vid`.
fn attach_vid_filter(fd: &OwnedFd, vid: u16) -> io::Result<()> {
    let ld_abs = (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16;
    let jeq = (libc::BPF_JMP | libc::BPF_JEQ | libc::BPF_K) as u16;
    let and = (libc::BPF_ALU | libc::BPF_AND | libc::BPF_K) as u16;
    let ret = (libc::BPF_RET | libc::BPF_K) as u16;
    let ad = |off: libc::c_int| (libc::SKF_AD_OFF + off) as u32;
    let ins = |code, jt, jf, k| libc::sock_filter { code, jt, jf, k };
    let mut prog = [
        ins(ld_abs, 0, 0, ad(libc::SKF_AD_VLAN_TAG_PRESENT)),
        ins(jeq, 3, 0, 0), // no tag -> drop
        ins(ld_abs, 0, 0, ad(libc::SKF_AD_VLAN_TAG)),
        ins(and, 0, 0, 0x0fff),
        ins(jeq, 1, 0, u32::from(vid)), // our VID -> accept
        ins(ret, 0, 0, 0),
        ins(ret, 0, 0, 0x0004_0000),
    ];
    let fprog = libc::sock_fprog {
        len: prog.len() as u16,
        filter: prog.as_mut_ptr(),
    };
    setsockopt(fd, libc::SOL_SOCKET, libc::SO_ATTACH_FILTER, &fprog)
}

/// A netlink socket subscribed to link events (any change of any interface).
pub struct LinkEvents {
    fd: OwnedFd,
}

impl LinkEvents {
    /// Subscribe to `RTMGRP_LINK`.
    pub fn open() -> io::Result<LinkEvents> {
        // SAFETY: socket(2); the result is owned right away.
        let fd = cvt(unsafe {
            libc::socket(
                libc::AF_NETLINK,
                libc::SOCK_RAW | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                libc::NETLINK_ROUTE,
            )
        })?;
        // SAFETY: fd is a fresh descriptor we own.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // SAFETY: sockaddr_nl is plain data; all-zero is valid.
        let mut sa: libc::sockaddr_nl = unsafe { zeroed() };
        sa.nl_family = libc::AF_NETLINK as u16;
        sa.nl_groups = libc::RTMGRP_LINK as u32;
        // SAFETY: bind(2) with a correctly sized sockaddr_nl.
        cvt(unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sa as *const libc::sockaddr_nl).cast(),
                size_of::<libc::sockaddr_nl>() as u32,
            )
        })?;
        Ok(LinkEvents { fd })
    }

    /// Read and discard everything pending (the caller re-reads the state it cares about).
    pub fn drain(&self) {
        let mut buf = [0u8; 8192];
        loop {
            // SAFETY: buf is valid for its length.
            let n =
                unsafe { libc::recv(self.fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            if n <= 0 {
                break;
            }
        }
    }
}

impl AsRawFd for LinkEvents {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Signals delivered through a descriptor (SIGTERM, SIGINT, SIGHUP), so the poll loop
/// handles them without async-signal-safety concerns.
pub struct Signals {
    fd: OwnedFd,
}

impl Signals {
    /// Block SIGTERM/SIGINT/SIGHUP for the process and open a signalfd for them.
    pub fn open() -> io::Result<Signals> {
        // SAFETY: sigset manipulation on a local set, then sigprocmask/signalfd with it.
        unsafe {
            let mut set: libc::sigset_t = zeroed();
            libc::sigemptyset(&mut set);
            for s in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
                libc::sigaddset(&mut set, s);
            }
            cvt(libc::sigprocmask(
                libc::SIG_BLOCK,
                &set,
                std::ptr::null_mut(),
            ))?;
            let fd = cvt(libc::signalfd(
                -1,
                &set,
                libc::SFD_NONBLOCK | libc::SFD_CLOEXEC,
            ))?;
            Ok(Signals {
                fd: OwnedFd::from_raw_fd(fd),
            })
        }
    }

    /// The next pending signal number, if any.
    pub fn next(&self) -> Option<i32> {
        // SAFETY: signalfd_siginfo is plain data; read(2) fills it.
        unsafe {
            let mut info: libc::signalfd_siginfo = zeroed();
            let n = libc::read(
                self.fd.as_raw_fd(),
                (&mut info as *mut libc::signalfd_siginfo).cast(),
                size_of::<libc::signalfd_siginfo>(),
            );
            (n == size_of::<libc::signalfd_siginfo>() as isize).then_some(info.ssi_signo as i32)
        }
    }
}

impl AsRawFd for Signals {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Wait until one of `fds` is readable (or has an error); returns the `revents` per fd.
/// Blocks without a timeout: the daemons never spin.
pub fn poll_readable(fds: &[RawFd]) -> io::Result<Vec<i16>> {
    let mut pfds: Vec<libc::pollfd> = fds
        .iter()
        .map(|&fd| libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    loop {
        // SAFETY: pfds is a valid array of pollfd of the given length.
        let r = unsafe { libc::poll(pfds.as_mut_ptr(), pfds.len() as libc::nfds_t, -1) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EINTR) {
                continue;
            }
            return Err(e);
        }
        return Ok(pfds.iter().map(|p| p.revents).collect());
    }
}

/// Start a new session and detach from the controlling terminal (daemons call this first).
pub fn setsid() {
    // SAFETY: setsid(2) has no memory-safety preconditions.
    unsafe {
        libc::setsid();
    }
}

/// Whether a process exists and has not exited (a zombie waiting to be reaped counts as gone).
pub fn pid_alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks for existence.
    if pid <= 0 || unsafe { libc::kill(pid, 0) } != 0 {
        return false;
    }
    // /proc/PID/stat: "pid (comm) S …"; comm may contain spaces, so look after the last ')'.
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .map(|(_, rest)| !rest.trim_start().starts_with(['Z', 'X']))
            .unwrap_or(true),
        Err(_) => true,
    }
}

/// Send a signal to a process.
pub fn signal(pid: i32, sig: i32) -> io::Result<()> {
    // SAFETY: kill(2) has no memory-safety preconditions.
    cvt(unsafe { libc::kill(pid, sig) }).map(|_| ())
}

/// `SO_NETNS_COOKIE` from <asm-generic/socket.h> (Linux 5.14); SPARC and PA-RISC number it
/// differently. Spelled out because libc does not export it.
#[cfg(target_arch = "sparc64")]
const SO_NETNS_COOKIE: libc::c_int = 0x0050;
#[cfg(not(target_arch = "sparc64"))]
const SO_NETNS_COOKIE: libc::c_int = 71;

/// Inode of this thread's network namespace, from `/proc/thread-self/ns/net`. Inodes are
/// reused once a namespace is freed.
pub fn netns_inode() -> Option<u64> {
    ns_link_inode(&std::fs::read_link("/proc/thread-self/ns/net").ok()?)
}

/// The inode in a namespace link's text (`net:[4026532412]`).
pub fn ns_link_inode(link: &std::path::Path) -> Option<u64> {
    link.to_str()?
        .strip_prefix("net:[")?
        .strip_suffix(']')?
        .parse()
        .ok()
}

/// Cookie of this thread's network namespace: a number the kernel gives each namespace at
/// creation and never gives another until reboot (`SO_NETNS_COOKIE`, Linux 5.14).
pub fn netns_cookie() -> io::Result<u64> {
    // SAFETY: socket(2); the result is owned right away.
    let fd = cvt(unsafe { libc::socket(libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) })?;
    // SAFETY: fd is a fresh descriptor we own.
    let sock = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut cookie: u64 = 0;
    let mut len = size_of::<u64>() as libc::socklen_t;
    // SAFETY: the option value is a u64 the kernel writes at most `len` bytes into.
    cvt(unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_NETNS_COOKIE,
            (&mut cookie as *mut u64).cast(),
            &mut len,
        )
    })?;
    Ok(cookie)
}

/// Cookie of the network namespace that `path` (a `/proc/PID/ns/net` link, an open namespace
/// descriptor under `/proc/PID/fd`, or an nsfs bind mount) refers to. A helper thread joins the
/// namespace to ask; the calling thread stays where it is.
pub fn netns_cookie_of(path: &std::path::Path) -> io::Result<u64> {
    let ns = std::fs::File::open(path)?;
    std::thread::scope(|s| {
        s.spawn(|| {
            // SAFETY: setns(2) on a descriptor we own; only this short-lived thread moves.
            cvt(unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) })?;
            netns_cookie()
        })
        .join()
        .unwrap_or_else(|_| Err(io::Error::other("namespace probe thread panicked")))
    })
}
