//! The device init: the process that becomes PID 1 of a device's fresh namespaces.
//!
//! A device is a set of namespaces (mount, UTS, IPC, network, PID, cgroup) held alive by one
//! process. We create that process with a raw `clone(2)` — a fork that enters new namespaces —
//! so it is PID 1 of its own PID namespace from its first instruction. The child then executes a
//! prepared list of `Op`s in two phases:
//!
//! 1. *phase 1* builds the device's file system (a tmpfs root with the host's `/usr` read-only,
//!    overlays for `/etc` and `/var`, fresh `/tmp`, `/run`, `/dev`, `/proc`, `/sys`), pivots into
//!    it and sets the hostname; it then reports `M` and waits;
//! 2. the parent meanwhile creates the veth pairs that reach into the device's network namespace
//!    and answers `G`; *phase 2* brings the interfaces up, writes sysctls, makes `/proc/sys`
//!    read-only, reports `R` and `exec`s `bash -s` with a pipe on stdin that nobody writes to.
//!
//! `bash` as PID 1 reaps every orphan that is re-parented to it (its `SIGCHLD` handler waits
//! for any child), so a killed daemon disappears from `ps` at once, and it looks like a Kathará
//! device, whose PID 1 is a shell. Killing PID 1 from the host makes the kernel kill every process
//! of the device, which frees its namespaces and the veths in them: teardown is one `SIGKILL`.
//!
//! Between `clone` and `exec` the child runs in a copy of a multi-threaded process, so it only
//! makes system calls on data prepared before the fork (no allocation, no locks). A failing step
//! is reported to the parent as `E` + step index + `errno`; the parent knows which step that was.
//! If the parent dies before it says `G`, the child reads end-of-file and exits, so an
//! interrupted deploy never leaves a half-built device behind.

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::time::{Duration, Instant};

/// One step executed by the child.
#[derive(Debug, Clone)]
pub(crate) enum Op {
    /// `mount(2)`.
    Mount {
        src: Option<CString>,
        target: CString,
        fstype: Option<CString>,
        flags: libc::c_ulong,
        data: Option<CString>,
    },
    /// `mkdir(2)`; an existing directory is fine.
    Mkdir { path: CString, mode: u32 },
    /// `rmdir(2)`.
    Rmdir { path: CString },
    /// `symlink(2)`.
    Symlink { target: CString, link: CString },
    /// `mknod(2)` of a character device.
    CharDev {
        path: CString,
        mode: u32,
        major: u32,
        minor: u32,
    },
    /// `umount2(2)` with `MNT_DETACH`.
    Detach { path: CString },
    /// Make `root` the root of the mount namespace and detach the old root.
    PivotRoot { root: CString },
    /// `sethostname(2)`.
    Hostname(CString),
    /// Create or truncate a file and write `data` (sysctls are files in `/proc/sys`).
    WriteFile { path: CString, data: Vec<u8> },
    /// Set `IFF_UP` on an interface.
    LinkUp(CString),
    /// Create a Linux bridge (`SIOCBRADDBR`).
    Bridge(CString),
    /// Enslave `port` to `bridge` (`SIOCBRADDIF`).
    BridgePort { bridge: CString, port: CString },
    /// Remove a file (a missing file is fine).
    Unlink(CString),
    /// Run the inner step; a missing path (`ENOENT`) is not an error.
    IfExists(Box<Op>),
}

impl Op {
    /// Human-readable description, for error messages.
    pub(crate) fn describe(&self) -> String {
        let s = |c: &CStr| c.to_string_lossy().into_owned();
        match self {
            Op::Mount {
                src,
                target,
                fstype,
                data,
                ..
            } => format!(
                "mount {} on {} (type {}, options {})",
                src.as_deref().map(s).unwrap_or_else(|| "-".into()),
                s(target),
                fstype.as_deref().map(s).unwrap_or_else(|| "-".into()),
                data.as_deref().map(s).unwrap_or_default()
            ),
            Op::Mkdir { path, .. } => format!("mkdir {}", s(path)),
            Op::Rmdir { path } => format!("rmdir {}", s(path)),
            Op::Symlink { target, link } => format!("symlink {} -> {}", s(link), s(target)),
            Op::CharDev { path, .. } => format!("mknod {}", s(path)),
            Op::Detach { path } => format!("umount {}", s(path)),
            Op::PivotRoot { root } => format!("pivot_root into {}", s(root)),
            Op::Hostname(h) => format!("set hostname {}", s(h)),
            Op::WriteFile { path, data } => format!(
                "write `{}` to {}",
                String::from_utf8_lossy(data).trim(),
                s(path)
            ),
            Op::LinkUp(n) => format!("bring up interface {}", s(n)),
            Op::Bridge(n) => format!("create bridge {}", s(n)),
            Op::BridgePort { bridge, port } => {
                format!("attach {} to bridge {}", s(port), s(bridge))
            }
            Op::Unlink(p) => format!("remove {}", s(p)),
            Op::IfExists(op) => op.describe(),
        }
    }
}

/// Everything the child needs, prepared by the parent.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    /// Steps before the parent's go-ahead.
    pub phase1: Vec<Op>,
    /// Steps after the go-ahead (interfaces exist by then).
    pub phase2: Vec<Op>,
    /// Program and arguments PID 1 becomes.
    pub argv: Vec<CString>,
    /// Its environment.
    pub env: Vec<CString>,
    /// System-call filter installed right before the `exec` (empty: none).
    pub filter: Vec<super::seccomp::SockFilter>,
}

/// Message bytes on the status pipe.
const MOUNTED: u8 = b'M';
const READY: u8 = b'R';
const FAILED: u8 = b'E';
const GO: u8 = b'G';
/// Step index reported when `execve` itself fails.
const EXEC_STEP: u32 = u32::MAX;

/// A freshly cloned init, between its two phases.
#[derive(Debug)]
pub(crate) struct Spawned {
    /// Host PID of the device's PID 1.
    pub pid: libc::pid_t,
    status: OwnedFd,
    go: Option<OwnedFd>,
    steps: Vec<String>,
}

/// Why an init did not come up.
#[derive(Debug, thiserror::Error)]
pub(crate) enum InitError {
    #[error("cannot start the device process: {0}")]
    Spawn(io::Error),
    #[error("{step} failed: {err}")]
    Step { step: String, err: io::Error },
    #[error("the device process exited during setup")]
    Vanished,
    #[error("the device process did not finish setup within {0:?}")]
    Timeout(Duration),
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: `fds` is a valid two-element array.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: pipe2 returned two fresh descriptors that we now own.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// Clones the init with new mount, UTS, IPC, network, PID and cgroup namespaces and starts
/// phase 1. Returns as soon as the child exists; use [`Spawned::wait_mounted`].
pub(crate) fn spawn(plan: &Plan) -> Result<Spawned, InitError> {
    let (status_r, status_w) = pipe().map_err(InitError::Spawn)?;
    let (go_r, go_w) = pipe().map_err(InitError::Spawn)?;
    let devnull = c"/dev/null";
    let mut argv: Vec<*const libc::c_char> = plan.argv.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = plan.env.iter().map(|a| a.as_ptr()).collect();
    envp.push(std::ptr::null());
    let flags = libc::CLONE_NEWNS
        | libc::CLONE_NEWUTS
        | libc::CLONE_NEWIPC
        | libc::CLONE_NEWNET
        | libc::CLONE_NEWPID
        | libc::CLONE_NEWCGROUP;
    // SAFETY: a raw clone without CLONE_VM and with a null stack behaves like fork(2): the child
    // continues on a copy of this stack. It only runs `child_main`, which makes system calls on
    // memory prepared above and never returns.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (flags | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid < 0 {
        return Err(InitError::Spawn(io::Error::last_os_error()));
    }
    if pid == 0 {
        // SAFETY: we are the child; see `child_main`.
        unsafe {
            child_main(
                plan,
                status_w.as_raw_fd(),
                go_r.as_raw_fd(),
                devnull,
                &argv,
                &envp,
            )
        }
    }
    drop(status_w);
    drop(go_r);
    let steps = plan
        .phase1
        .iter()
        .chain(plan.phase2.iter())
        .map(Op::describe)
        .collect();
    Ok(Spawned {
        pid: pid as libc::pid_t,
        status: status_r,
        go: Some(go_w),
        steps,
    })
}

impl Spawned {
    /// Waits for the end of phase 1.
    pub(crate) fn wait_mounted(&mut self, timeout: Duration) -> Result<(), InitError> {
        self.expect(MOUNTED, timeout)
    }

    /// Lets the child run phase 2 and `exec`, and waits until it did.
    pub(crate) fn go_and_wait(&mut self, timeout: Duration) -> Result<(), InitError> {
        if let Some(go) = self.go.take() {
            let b = [GO];
            // SAFETY: writing one byte from a valid buffer to a descriptor we own.
            let n = unsafe { libc::write(go.as_raw_fd(), b.as_ptr().cast(), 1) };
            if n != 1 {
                return Err(InitError::Vanished);
            }
        }
        self.expect(READY, timeout)?;
        // After READY the child execs; the close-on-exec status pipe then reports EOF, or an
        // `E` record if execve failed.
        match self.read_record(timeout)? {
            None => Ok(()),
            Some(_) => Err(InitError::Vanished),
        }
    }

    fn expect(&mut self, want: u8, timeout: Duration) -> Result<(), InitError> {
        match self.read_record(timeout)? {
            Some(b) if b == want => Ok(()),
            _ => Err(InitError::Vanished),
        }
    }

    /// Reads one status record: `Ok(None)` at end of file.
    fn read_record(&mut self, timeout: Duration) -> Result<Option<u8>, InitError> {
        let mut b = [0u8; 1];
        if !read_exact_deadline(&self.status, &mut b, timeout)? {
            return Ok(None);
        }
        if b[0] != FAILED {
            return Ok(Some(b[0]));
        }
        let mut rec = [0u8; 8];
        if !read_exact_deadline(&self.status, &mut rec, timeout)? {
            return Err(InitError::Vanished);
        }
        let step = u32::from_le_bytes(rec[0..4].try_into().unwrap_or_default());
        let errno = i32::from_le_bytes(rec[4..8].try_into().unwrap_or_default());
        let step = if step == EXEC_STEP {
            "starting the device's PID 1".to_string()
        } else {
            self.steps
                .get(step as usize)
                .cloned()
                .unwrap_or_else(|| format!("step {step}"))
        };
        Err(InitError::Step {
            step,
            err: io::Error::from_raw_os_error(errno),
        })
    }
}

/// Reads exactly `buf.len()` bytes before `deadline`; `Ok(false)` on immediate end of file.
fn read_exact_deadline(fd: &OwnedFd, buf: &mut [u8], timeout: Duration) -> Result<bool, InitError> {
    let deadline = Instant::now() + timeout;
    let mut got = 0;
    while got < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(InitError::Timeout(timeout));
        }
        let mut pfd = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let r = unsafe { libc::poll(&mut pfd, 1, left.as_millis().min(i32::MAX as u128) as i32) };
        if r < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(InitError::Spawn(e));
        }
        if r == 0 {
            return Err(InitError::Timeout(timeout));
        }
        // SAFETY: reading into the unfilled part of `buf`.
        let n = unsafe {
            libc::read(
                fd.as_raw_fd(),
                buf[got..].as_mut_ptr().cast(),
                buf.len() - got,
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(InitError::Spawn(e));
        }
        if n == 0 {
            return if got == 0 {
                Ok(false)
            } else {
                Err(InitError::Vanished)
            };
        }
        got += n as usize;
    }
    Ok(true)
}

// ---- the child side: system calls only ------------------------------------------------------

const STATUS_FD: libc::c_int = 3;
const GO_FD: libc::c_int = 4;

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// Reports a failed step and exits.
///
/// # Safety
///
/// Only for the cloned child before `execve`: it calls `_exit`, skipping destructors and
/// atexit handlers, and writes to [`STATUS_FD`], which must be the status pipe.
unsafe fn fail(step: u32, err: i32) -> ! {
    let mut rec = [0u8; 9];
    rec[0] = FAILED;
    rec[1..5].copy_from_slice(&step.to_le_bytes());
    rec[5..9].copy_from_slice(&err.to_le_bytes());
    // SAFETY: async-signal-safe calls on valid buffers.
    unsafe {
        libc::write(STATUS_FD, rec.as_ptr().cast(), rec.len());
        libc::_exit(1)
    }
}

/// The child: PID 1 of the new namespaces. Never returns.
///
/// # Safety
///
/// Must run only in the child of the namespace clone, before anything else: it takes over
/// descriptors 0–4, closes every other one and replaces the process image. `status_w` and
/// `go_r` must be the pipe ends made for it; `argv` and `envp` must be NULL-terminated arrays of
/// pointers to NUL-terminated strings that stay alive (prepared before the clone: the child may
/// not allocate).
unsafe fn child_main(
    plan: &Plan,
    status_w: libc::c_int,
    go_r: libc::c_int,
    devnull: &CStr,
    argv: &[*const libc::c_char],
    envp: &[*const libc::c_char],
) -> ! {
    // SAFETY: (the whole function) only system calls on memory prepared before the clone.
    unsafe {
        // Our two pipe ends go to fixed descriptors 3 and 4, and every other inherited
        // descriptor is closed: other devices' go pipes must not be held open by us, and the
        // parent's stdout must not be kept alive by a long-lived PID 1.
        let hi = status_w.max(go_r).max(STATUS_FD).max(GO_FD) + 1;
        let s2 = libc::fcntl(status_w, libc::F_DUPFD_CLOEXEC, hi);
        let g2 = libc::fcntl(go_r, libc::F_DUPFD_CLOEXEC, hi);
        if s2 < 0 || g2 < 0 || libc::dup3(s2, STATUS_FD, libc::O_CLOEXEC) < 0 {
            libc::_exit(3);
        }
        if libc::dup3(g2, GO_FD, libc::O_CLOEXEC) < 0 {
            fail(EXEC_STEP, errno());
        }
        libc::syscall(libc::SYS_close_range, GO_FD as u32 + 1, u32::MAX, 0u32);
        let null = libc::open(devnull.as_ptr(), libc::O_RDWR | libc::O_CLOEXEC);
        if null >= 0 {
            libc::dup2(null, 0);
            libc::dup2(null, 1);
            libc::dup2(null, 2);
            if null > 2 {
                libc::close(null);
            }
        }
        // A session of its own: the caller's terminal, process group or session leader going
        // away (Ctrl-C, a closed shell) must not reach a device that outlives the caller.
        libc::setsid();
        libc::umask(0);
        for (i, op) in plan.phase1.iter().enumerate() {
            if let Err(e) = apply(op) {
                fail(i as u32, e);
            }
        }
        let m = [MOUNTED];
        libc::write(STATUS_FD, m.as_ptr().cast(), 1);
        let mut go = [0u8; 1];
        loop {
            let n = libc::read(GO_FD, go.as_mut_ptr().cast(), 1);
            if n == 1 && go[0] == GO {
                break;
            }
            if n < 0 && errno() == libc::EINTR {
                continue;
            }
            // The parent went away before the go-ahead: give up quietly.
            libc::_exit(2);
        }
        let base = plan.phase1.len();
        for (i, op) in plan.phase2.iter().enumerate() {
            if let Err(e) = apply(op) {
                fail((base + i) as u32, e);
            }
        }
        libc::umask(0o022);
        // stdin of PID 1: a pipe whose write end PID 1 itself holds, so `bash -s` waits forever.
        let mut p = [0; 2];
        if libc::pipe2(p.as_mut_ptr(), 0) != 0 {
            fail(EXEC_STEP, errno());
        }
        libc::dup2(p[0], 0);
        libc::close(p[0]);
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        let mut empty: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut empty);
        libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
        if super::seccomp::drop_container_caps().is_err() {
            fail(EXEC_STEP, errno());
        }
        if !plan.filter.is_empty() && super::seccomp::install(&plan.filter).is_err() {
            fail(EXEC_STEP, errno());
        }
        let r = [READY];
        libc::write(STATUS_FD, r.as_ptr().cast(), 1);
        libc::execve(argv[0], argv.as_ptr(), envp.as_ptr());
        fail(EXEC_STEP, errno())
    }
}

fn opt_ptr(c: Option<&CString>) -> *const libc::c_char {
    c.map_or(std::ptr::null(), |c| c.as_ptr())
}

/// `struct ifreq` as the kernel reads it: a name and a 24-byte union.
#[repr(C)]
pub(crate) struct IfReq {
    pub(crate) name: [libc::c_char; libc::IFNAMSIZ],
    pub(crate) data: [u8; 24],
}

pub(crate) fn ifreq(name: &CStr) -> IfReq {
    let mut r = IfReq {
        name: [0; libc::IFNAMSIZ],
        data: [0; 24],
    };
    for (i, b) in name.to_bytes().iter().take(libc::IFNAMSIZ - 1).enumerate() {
        r.name[i] = *b as libc::c_char;
    }
    r
}

/// A datagram socket for interface ioctls; the caller closes it.
pub(crate) fn inet_socket() -> Result<libc::c_int, i32> {
    // SAFETY: plain socket(2).
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if s < 0 { Err(errno()) } else { Ok(s) }
}

pub(crate) const SIOCBRADDBR: libc::c_ulong = 0x89a0;
const SIOCBRADDIF: libc::c_ulong = 0x89a2;

/// Executes one step; `Err(errno)` on failure.
///
/// # Safety
///
/// Only in the child of the namespace clone (mounts, hostname, links and bridges change the
/// namespaces it is in): the pointers in `op` are to strings prepared before the clone.
unsafe fn apply(op: &Op) -> Result<(), i32> {
    // SAFETY: (the whole function) system calls with pointers to live, NUL-terminated strings and
    // properly sized structures.
    unsafe {
        let ok = |r: libc::c_int| if r < 0 { Err(errno()) } else { Ok(()) };
        match op {
            Op::Mount {
                src,
                target,
                fstype,
                flags,
                data,
            } => ok(libc::mount(
                opt_ptr(src.as_ref()),
                target.as_ptr(),
                opt_ptr(fstype.as_ref()),
                *flags,
                opt_ptr(data.as_ref()).cast(),
            )),
            Op::Mkdir { path, mode } => {
                if libc::mkdir(path.as_ptr(), *mode) < 0 && errno() != libc::EEXIST {
                    return Err(errno());
                }
                Ok(())
            }
            Op::Rmdir { path } => ok(libc::rmdir(path.as_ptr())),
            Op::Symlink { target, link } => ok(libc::symlink(target.as_ptr(), link.as_ptr())),
            Op::CharDev {
                path,
                mode,
                major,
                minor,
            } => ok(libc::mknod(
                path.as_ptr(),
                libc::S_IFCHR | *mode,
                libc::makedev(*major, *minor),
            )),
            Op::Detach { path } => ok(libc::umount2(path.as_ptr(), libc::MNT_DETACH)),
            Op::PivotRoot { root } => {
                ok(libc::chdir(root.as_ptr()))?;
                let dot = c".".as_ptr();
                if libc::syscall(libc::SYS_pivot_root, dot, dot) < 0 {
                    return Err(errno());
                }
                ok(libc::umount2(dot, libc::MNT_DETACH))?;
                ok(libc::chdir(c"/".as_ptr()))
            }
            Op::Hostname(h) => ok(libc::sethostname(h.as_ptr(), h.to_bytes().len())),
            Op::WriteFile { path, data } => {
                let fd = libc::open(
                    path.as_ptr(),
                    libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC | libc::O_CLOEXEC,
                    0o644,
                );
                if fd < 0 {
                    return Err(errno());
                }
                let n = libc::write(fd, data.as_ptr().cast(), data.len());
                let e = errno();
                libc::close(fd);
                if n < 0 || n as usize != data.len() {
                    return Err(if n < 0 { e } else { libc::EIO });
                }
                Ok(())
            }
            Op::LinkUp(name) => {
                let s = inet_socket()?;
                let mut r = ifreq(name);
                let res = (|| {
                    ok(libc::ioctl(s, libc::SIOCGIFFLAGS, &mut r))?;
                    let flags = i16::from_ne_bytes([r.data[0], r.data[1]]) | libc::IFF_UP as i16;
                    r.data[0..2].copy_from_slice(&flags.to_ne_bytes());
                    ok(libc::ioctl(s, libc::SIOCSIFFLAGS, &mut r))
                })();
                libc::close(s);
                res
            }
            Op::Bridge(name) => {
                let s = inet_socket()?;
                let res = ok(libc::ioctl(s, SIOCBRADDBR, name.as_ptr()));
                libc::close(s);
                res
            }
            Op::BridgePort { bridge, port } => {
                let s = inet_socket()?;
                let res = (|| {
                    let mut p = ifreq(port);
                    ok(libc::ioctl(s, libc::SIOCGIFINDEX, &mut p))?;
                    let mut b = ifreq(bridge);
                    b.data[0..4].copy_from_slice(&p.data[0..4]);
                    ok(libc::ioctl(s, SIOCBRADDIF, &mut b))
                })();
                libc::close(s);
                res
            }
            Op::Unlink(p) => {
                if libc::unlink(p.as_ptr()) < 0 && errno() != libc::ENOENT {
                    return Err(errno());
                }
                Ok(())
            }
            Op::IfExists(inner) => match apply(inner) {
                Err(libc::ENOENT) => Ok(()),
                r => r,
            },
        }
    }
}
