//! `faultbench-netshim nsexec`: the small program that carries a command into a device.
//!
//! The harness is a large, multi-threaded process; a `fork` of it copies all of its page
//! tables, and a `pre_exec` hook forces the standard library to fork instead of using
//! `posix_spawn` (which shares the address space until the `exec`). So the harness starts
//! this entry with a plain `posix_spawn` and the entry, a small single-threaded process, does
//! what the in-process hook did ([`super::exec`]'s fallback):
//!
//! 1. opens `/proc/<pid>` of the device's PID 1 and checks its start time, then opens the
//!    namespace files *relative to that directory*: a recycled PID cannot slip in, since the
//!    directory descriptor stays bound to the process it was opened for;
//! 2. enters every namespace (`setns`), forks once so that the command is a member of the
//!    device's PID namespace, and waits there, mirroring the command's exit status or signal;
//! 3. in the child: restores `SIGPIPE` (Rust programs start with it ignored, and an ignored
//!    signal survives `exec`), drops the capabilities a container lacks, installs the device's
//!    [system-call filter](super::seccomp) and `execvp`s the command with the environment it was
//!    given (the harness starts the entry with the command's clean environment).
//!
//! The entry reports on a *status pipe*: the harness hands the pipe's write end over as the
//! entry's stdin (stdin of a device command is `/dev/null`, which the entry puts in its place;
//! the write end is close-on-exec from then on, so the command never holds it). Records are
//! 16 bytes, `(stage, errno, value)`: a failure before the command runs ([`STAGE_ENTER`],
//! [`STAGE_EXEC`] with the `errno`, as `std` reports its own spawns), else [`STAGE_STARTED`]
//! once the command's `exec` succeeded (the child tells the entry through a close-on-exec pipe
//! of their own) and, when it has ended, [`STAGE_CPU`] with the CPU time of the entry and the
//! command (with the children it waited for) in microseconds: what a lab's bring-up cost, which
//! no scan of the lab's processes sees once the command is gone.
//!
//! Usage: `faultbench-netshim nsexec PID START [NAME=value…] -- COMMAND [ARG…]` with the status
//! pipe as stdin and an empty environment: the command's environment comes as arguments and is
//! set only right before the fork (it comes from lab.conf; the entry itself runs on the host).

use super::seccomp;
use std::ffi::{CString, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;

/// The applet name (first argument of `faultbench-netshim`).
pub(crate) const APPLET: &str = "nsexec";
/// Length of a record on the status pipe.
pub(crate) const STATUS_LEN: usize = 16;
/// Failure while entering the device (its PID 1 is gone, a namespace cannot be entered).
pub(crate) const STAGE_ENTER: u32 = 1;
/// Failure to start the command itself (`execvp` failed: not found, not executable).
pub(crate) const STAGE_EXEC: u32 = 2;
/// The command runs.
pub(crate) const STAGE_STARTED: u32 = 3;
/// The command has ended; the value is the CPU it and the entry used, in microseconds.
pub(crate) const STAGE_CPU: u32 = 4;
/// Exit code of the entry when it was called wrongly (never by the harness).
const USAGE_EXIT: i32 = 125;
/// Exit code after a failure reported on the status pipe (the harness does not use it).
const FAILED_EXIT: i32 = 127;

/// The namespaces a command enters, mount last (entering it changes root and working folder).
pub(crate) const NAMESPACES: [&str; 6] = ["cgroup", "ipc", "uts", "net", "pid", "mnt"];

/// A record on the status pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Record {
    pub stage: u32,
    pub errno: i32,
    pub value: u64,
}

impl Record {
    pub(crate) fn encode(&self) -> [u8; STATUS_LEN] {
        let mut b = [0u8; STATUS_LEN];
        b[..4].copy_from_slice(&self.stage.to_le_bytes());
        b[4..8].copy_from_slice(&self.errno.to_le_bytes());
        b[8..].copy_from_slice(&self.value.to_le_bytes());
        b
    }

    pub(crate) fn decode(b: &[u8]) -> Option<Record> {
        let b: &[u8; STATUS_LEN] = b.try_into().ok()?;
        let mut stage = [0u8; 4];
        let mut errno = [0u8; 4];
        let mut value = [0u8; 8];
        stage.copy_from_slice(&b[..4]);
        errno.copy_from_slice(&b[4..8]);
        value.copy_from_slice(&b[8..]);
        Some(Record {
            stage: u32::from_le_bytes(stage),
            errno: i32::from_le_bytes(errno),
            value: u64::from_le_bytes(value),
        })
    }
}

/// Entry point of the applet; `args` follow the applet name. Returns only on failure or with
/// the command's exit code.
pub(crate) fn main(args: &[OsString]) -> i32 {
    match parse(args) {
        Some((pid, start, env, argv)) if !argv.is_empty() => {
            enter_and_run(pid, start, &env, Run::Command(argv))
        }
        _ => {
            eprintln!(
                "usage: faultbench-netshim {APPLET} PID START [NAME=value…] -- COMMAND [ARG…]"
            );
            USAGE_EXIT
        }
    }
}

/// Entry point of the [`devstate`](super::devstate) applet: like [`main`], but what runs in
/// the device is the state reader of that module instead of a command. Arguments:
/// `PID START [NAME=value…] -- [nft-gen=N]`.
pub(crate) fn state_main(args: &[OsString]) -> i32 {
    match parse(args) {
        Some((pid, start, env, [])) => enter_and_run(pid, start, &env, Run::DeviceState(None)),
        Some((pid, start, env, [known]))
            if super::devstate::parse_known_generation(known).is_some() =>
        {
            let known = super::devstate::parse_known_generation(known);
            enter_and_run(pid, start, &env, Run::DeviceState(known))
        }
        _ => {
            eprintln!(
                "usage: faultbench-netshim {} PID START [NAME=value…] -- [nft-gen=N]",
                super::devstate::APPLET
            );
            USAGE_EXIT
        }
    }
}

/// What runs in the device once entered.
enum Run<'a> {
    /// `execvp` of this command.
    Command(&'a [OsString]),
    /// The snapshot reader, in this program ([`super::devstate`]), with the nftables
    /// generation whose ruleset the harness holds.
    DeviceState(Option<u32>),
}

fn enter_and_run(pid: i32, start: u64, env: &Env<'_>, run: Run<'_>) -> i32 {
    let argv: &[OsString] = match run {
        Run::Command(argv) => argv,
        Run::DeviceState(_) => &[],
    };
    let status = match take_status_pipe() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("faultbench-netshim {APPLET}: stdin must be the status pipe: {e}");
            return USAGE_EXIT;
        }
    };
    let fail = |stage, e: io::Error| {
        report(&status, stage, e.raw_os_error().unwrap_or(libc::EIO), 0);
        FAILED_EXIT
    };
    // Everything the child needs is prepared before the fork.
    let cargv: Vec<CString> = match argv
        .iter()
        .map(|a| CString::new(a.as_bytes()))
        .collect::<Result<_, _>>()
    {
        Ok(v) => v,
        Err(_) => return fail(STAGE_EXEC, io::Error::from_raw_os_error(libc::EINVAL)),
    };
    let mut ptrs: Vec<*const libc::c_char> = cargv.iter().map(|c| c.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let filter = seccomp::program();
    if let Err(e) = enter(pid, start) {
        return fail(STAGE_ENTER, e);
    }
    set_environment(env);
    // The child's way to say that its `exec` failed (close-on-exec: end-of-file means it ran).
    let (exec_rx, exec_tx) = match io::pipe() {
        Ok(p) => p,
        Err(e) => return fail(STAGE_ENTER, e),
    };
    // SAFETY: this process is single-threaded, so the child may run ordinary code; it only
    // makes system calls on data prepared above and ends in exec or _exit.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return fail(STAGE_ENTER, io::Error::last_os_error());
    }
    if child == 0 {
        if let Run::DeviceState(known) = run {
            // No exec will close the pipe that says "it runs": close it now, so that the
            // harness reads the output while it is written.
            drop(exec_rx);
            drop(exec_tx);
            let code = match enter_limits(&filter) {
                Ok(()) => super::devstate::run(known),
                Err(e) => {
                    eprintln!("faultbench-netshim {}: {e}", super::devstate::APPLET);
                    FAILED_EXIT
                }
            };
            // SAFETY: leave without running the parent's copy of its exit handlers.
            unsafe { libc::_exit(code) };
        }
        let err = start_command(&ptrs, &filter);
        let errno = err.raw_os_error().unwrap_or(libc::EIO).to_le_bytes();
        // SAFETY: write(2) of a local buffer, then leave without running destructors or exit
        // handlers of the parent's copy.
        unsafe {
            libc::write(exec_tx.as_raw_fd(), errno.as_ptr().cast(), errno.len());
            libc::_exit(FAILED_EXIT)
        };
    }
    drop(exec_tx);
    let mut errno = [0u8; 4];
    if read_full(exec_rx, &mut errno) == errno.len() {
        let _ = wait(child);
        return fail(
            STAGE_EXEC,
            io::Error::from_raw_os_error(i32::from_le_bytes(errno)),
        );
    }
    report(&status, STAGE_STARTED, 0, 0);
    let ended = wait(child);
    report(&status, STAGE_CPU, 0, cpu_micros());
    drop(status);
    match ended {
        Some(status) => mirror(status),
        None => FAILED_EXIT,
    }
}

/// Reads until `buf` is full or end-of-file; returns how many bytes were read.
fn read_full(from: io::PipeReader, buf: &mut [u8]) -> usize {
    use std::io::Read;
    let mut from = from;
    let mut n = 0;
    while n < buf.len() {
        match from.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    n
}

/// CPU time (user + system) of this process and of the children it waited for, in µs.
fn cpu_micros() -> u64 {
    let usage = |who| {
        // SAFETY: an all-zero `rusage` is valid plain data.
        let mut r: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: getrusage(2) only writes the struct it is given.
        unsafe { libc::getrusage(who, &mut r) };
        let us = |t: libc::timeval| t.tv_sec.max(0) as u64 * 1_000_000 + t.tv_usec.max(0) as u64;
        us(r.ru_utime) + us(r.ru_stime)
    };
    usage(libc::RUSAGE_SELF) + usage(libc::RUSAGE_CHILDREN)
}

/// `PID START -- ARGV…`
/// The command's environment, one `NAME=value` per entry.
type Env<'a> = Vec<(&'a std::ffi::OsStr, &'a std::ffi::OsStr)>;

/// `PID START [NAME=value…] -- ARGV…` (the environment entries all hold a `=`, so the first
/// `--` ends them); `ARGV` may be empty (the callers check).
fn parse(args: &[OsString]) -> Option<(i32, u64, Env<'_>, &[OsString])> {
    let pid: i32 = args.first()?.to_str()?.parse().ok()?;
    let start: u64 = args.get(1)?.to_str()?.parse().ok()?;
    let sep = 2 + args.get(2..)?.iter().position(|a| a == "--")?;
    let env = args[2..sep]
        .iter()
        .map(|a| {
            let b = a.as_bytes();
            let eq = b.iter().position(|c| *c == b'=').filter(|i| *i > 0)?;
            Some((
                std::ffi::OsStr::from_bytes(&b[..eq]),
                std::ffi::OsStr::from_bytes(&b[eq + 1..]),
            ))
        })
        .collect::<Option<Vec<_>>>()?;
    if pid <= 0 {
        return None;
    }
    Some((pid, start, env, &args[sep + 1..]))
}

/// Replaces this process's environment with the command's. Done after the entry's own work
/// and right before the fork: the environment comes from lab.conf, and the entry runs on the
/// host as root, so it must not see `LD_PRELOAD` and the like while it starts.
fn set_environment(env: &Env<'_>) {
    let old: Vec<OsString> = std::env::vars_os().map(|(k, _)| k).collect();
    for k in old {
        // SAFETY: this process is single-threaded; nothing reads the environment meanwhile.
        unsafe { std::env::remove_var(k) };
    }
    for (k, v) in env {
        // SAFETY: as above; `parse` made sure the name is not empty and holds no `=`.
        unsafe { std::env::set_var(k, v) };
    }
}

/// Moves the status pipe off stdin (close-on-exec) and puts `/dev/null` there instead.
fn take_status_pipe() -> io::Result<OwnedFd> {
    // SAFETY: fstat, fcntl and dup2 on descriptors this process owns.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(0, &mut st) != 0 {
            return Err(io::Error::last_os_error());
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFIFO {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "not a pipe"));
        }
        let fd = libc::fcntl(0, libc::F_DUPFD_CLOEXEC, 3);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let status = OwnedFd::from_raw_fd(fd);
        let null = std::fs::File::open("/dev/null")?;
        if libc::dup2(null.as_raw_fd(), 0) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(status)
    }
}

/// Writes a record (best effort: the harness treats a short read as malformed).
fn report(status: &OwnedFd, stage: u32, errno: i32, value: u64) {
    let rec = Record {
        stage,
        errno,
        value,
    }
    .encode();
    // SAFETY: write(2) of a local buffer to a descriptor we own.
    unsafe { libc::write(status.as_raw_fd(), rec.as_ptr().cast(), rec.len()) };
}

/// Opens the namespaces of `pid` if it is still the process started at `start`, and enters
/// them.
fn enter(pid: i32, start: u64) -> io::Result<()> {
    let dir = checked_proc_dir(pid, start)?;
    // Opened relative to the checked directory: ESRCH if the process has ended meanwhile.
    let fds = NAMESPACES
        .iter()
        .map(|ns| open_at(dir.as_raw_fd(), &format!("ns/{ns}"), 0))
        .collect::<io::Result<Vec<_>>>()?;
    for fd in &fds {
        // SAFETY: setns(2) on a namespace descriptor we own.
        if unsafe { libc::setns(fd.as_raw_fd(), 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// `/proc/<pid>` opened as a directory, if `pid` is still the live process started at `start`
/// (ESRCH otherwise). What is opened relative to it belongs to that process or fails.
fn checked_proc_dir(pid: i32, start: u64) -> io::Result<OwnedFd> {
    let dir = open_at(libc::AT_FDCWD, &format!("/proc/{pid}"), libc::O_DIRECTORY)?;
    let stat = read_small(open_at(dir.as_raw_fd(), "stat", 0)?)?;
    match super::state::parse_stat(&stat) {
        Some((state, s)) if s == start && state != 'Z' && state != 'X' => Ok(dir),
        _ => Err(io::Error::from_raw_os_error(libc::ESRCH)),
    }
}

/// The network namespace of `pid`, if it is still the process started at `start`.
pub(crate) fn network_namespace(pid: i32, start: u64) -> io::Result<OwnedFd> {
    open_at(checked_proc_dir(pid, start)?.as_raw_fd(), "ns/net", 0)
}

fn open_at(dir: i32, path: &str, flags: i32) -> io::Result<OwnedFd> {
    let c = CString::new(path).map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: openat(2) with a NUL-terminated path; the result is owned below.
    let fd = unsafe {
        // No O_NOFOLLOW: `ns/*` are procfs links to the namespaces themselves.
        libc::openat(dir, c.as_ptr(), flags | libc::O_RDONLY | libc::O_CLOEXEC)
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a fresh descriptor from openat.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

/// Reads a procfs file (a few hundred bytes; capped).
fn read_small(fd: OwnedFd) -> io::Result<String> {
    use std::io::Read;
    let mut s = String::new();
    std::fs::File::from(fd).take(4096).read_to_string(&mut s)?;
    Ok(s)
}

/// In the child: the device's limits, then the command. Returns only on failure.
fn start_command(argv: &[*const libc::c_char], filter: &[seccomp::SockFilter]) -> io::Error {
    if let Err(e) = enter_limits(filter) {
        return e;
    }
    // SAFETY: execvp(3) on prepared data.
    unsafe { libc::execvp(argv[0], argv.as_ptr()) };
    io::Error::last_os_error()
}

/// In the child: default signal dispositions, the capabilities a container has, the
/// device's system-call filter.
fn enter_limits(filter: &[seccomp::SockFilter]) -> io::Result<()> {
    // SAFETY: signal(2) with a valid disposition.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    reset_internal_signals();
    seccomp::drop_container_caps()?;
    seccomp::install(filter)
}

/// glibc's `posix_spawn` ignores its two internal signals (32 and 33) in the new process while
/// it shares the parent's memory, and an ignored signal stays ignored across `exec`: this
/// entry, and the command after it, would start with them ignored where a fork of the harness
/// starts with them at their default. glibc's `sigaction` refuses these numbers, hence the
/// system call.
fn reset_internal_signals() {
    // A kernel `struct sigaction` of zeros: SIG_DFL, no flags, empty mask (same on every
    // architecture's layout).
    let dfl = [0u64; 4];
    for sig in [32 as libc::c_long, 33] {
        // SAFETY: rt_sigaction(2) with a valid action, no old action, an 8-byte mask.
        unsafe {
            libc::syscall(
                libc::SYS_rt_sigaction,
                sig,
                dfl.as_ptr(),
                std::ptr::null::<u64>(),
                8 as libc::c_long,
            )
        };
    }
}

/// Waits for the command; its wait status.
pub(super) fn wait(child: i32) -> Option<i32> {
    let mut status = 0;
    loop {
        // SAFETY: waitpid(2) on our own child.
        let r = unsafe { libc::waitpid(child, &mut status, 0) };
        if r == child {
            return Some(status);
        }
        if r < 0 && io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            return None;
        }
    }
}

/// Ends this process the way the command ended: its exit code, or its signal.
fn mirror(status: i32) -> i32 {
    if libc::WIFEXITED(status) {
        return libc::WEXITSTATUS(status);
    }
    let sig = libc::WTERMSIG(status);
    // SAFETY: signal(2) and kill(2) on ourselves, to die of the command's signal.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        libc::kill(libc::getpid(), sig);
    }
    128 + sig
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_records_round_trip() {
        let r = Record {
            stage: STAGE_CPU,
            errno: -3,
            value: u64::MAX - 7,
        };
        let b = r.encode();
        assert_eq!(Record::decode(&b), Some(r));
        assert_eq!(Record::decode(&b[..STATUS_LEN - 1]), None);
    }

    #[test]
    fn arguments_are_checked() {
        let a = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        let ok = a(&["12", "34", "--", "ip", "-br", "link"]);
        let (pid, start, env, argv) = parse(&ok).expect("well-formed");
        assert_eq!((pid, start, env.len(), argv.len()), (12, 34, 0, 3));
        let with_env = a(&["12", "34", "PATH=/bin", "X=a=--", "E=", "--", "sh", "--"]);
        let (_, _, env, argv) = parse(&with_env).expect("well-formed");
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string_lossy().into(), v.to_string_lossy().into()))
            .collect();
        let pairs = [("PATH", "/bin"), ("X", "a=--"), ("E", "")];
        assert_eq!(env, pairs.map(|(k, v)| (k.to_string(), v.to_string())));
        assert_eq!(argv, &a(&["sh", "--"])[..]);
        assert!(
            parse(&a(&["12", "34", "=x", "--", "sh"])).is_none(),
            "no name"
        );
        assert!(
            parse(&a(&["12", "34", "noequals", "--", "sh"])).is_none(),
            "no ="
        );
        let bare = a(&["12", "34", "--"]);
        let (_, _, _, none) = parse(&bare).expect("no command: devstate's form");
        assert!(none.is_empty());
        assert!(parse(&a(&["12", "34", "ip"])).is_none(), "no separator");
        assert!(parse(&a(&["-1", "34", "--", "ip"])).is_none(), "bad pid");
        assert!(
            parse(&a(&["x", "34", "--", "ip"])).is_none(),
            "not a number"
        );
    }
}
