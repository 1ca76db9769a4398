//! `faultbench-netshim devstate`: a device's state for a snapshot, read inside the device
//! without a shell.
//!
//! The generic reading runs [`SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG`] with `sh -c`: a shell, then
//! `ip` and `nft`, each of which on a kernel that needs the emulations is first our own
//! wrapper (a second program start) and then the real program. This applet, run by the
//! [`nsexec`](super::nsexec) entry in the device instead of a command (same namespaces,
//! capabilities, system-call filter and environment), prints the same parts with the same
//! markers: the sysctls and process names it reads itself, and `ip` and `nft` it runs in a
//! fork of itself — calling the wrapper's code directly when the device's `PATH` leads to our
//! wrapper, else starting the program found on `PATH`, as the shell would. Three program
//! starts per device instead of six.
//!
//! [`SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG`]: faultbench_core::snapshot::SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG

use crate::shims::{CAPS_FILE, SHIM_BINARY};
use std::ffi::{CString, OsString};
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The applet name (first argument of `faultbench-netshim`).
pub(crate) const APPLET: &str = "devstate";

/// What the script pipes into `ip -j -batch -`.
const IP_BATCH: &[u8] = b"addr show\nroute show table all\n";

/// The sysctls of the script, in its order; `*` stands for every interface folder.
const SYSCTLS: [&str; 6] = [
    "net/ipv4/ip_forward",
    "net/ipv4/icmp_echo_ignore_all",
    "net/ipv4/conf/*/forwarding",
    "net/ipv4/conf/*/rp_filter",
    "net/ipv4/conf/*/proxy_arp",
    "net/ipv6/conf/all/forwarding",
];

/// The marker of a packet-filter part left unread because the ruleset's generation is the one
/// the harness already holds (`@@packet_filter unchanged`).
pub(crate) const FILTER_UNCHANGED: &str = "unchanged";
/// The marker after the packet-filter part carrying the nftables generation it was read at
/// (`@@nft_generation N`).
pub(crate) const GENERATION_PART: &str = "nft_generation";

/// The argument that passes the generation of the ruleset the harness holds (`nft-gen=N`).
pub(crate) fn known_generation_arg(generation: u32) -> String {
    format!("nft-gen={generation}")
}

/// Reads back [`known_generation_arg`].
pub(crate) fn parse_known_generation(arg: &std::ffi::OsStr) -> Option<u32> {
    arg.to_str()?.strip_prefix("nft-gen=")?.parse().ok()
}

/// Prints the device's state parts on stdout; the exit code (0: the parts carry their own).
/// `known`: the nftables generation whose ruleset the harness already holds — when the
/// device's is still that one, the ruleset is not listed again.
pub(crate) fn run(known: Option<u32>) -> i32 {
    let rc = part(&["ip", "-j", "-batch", "-"], Some(IP_BATCH));
    emit(format!("@@ip {rc}\n").as_bytes());
    let mut text = Vec::new();
    for pattern in SYSCTLS {
        for rel in expand(pattern) {
            if let Some(v) = first_word_line(&Path::new("/proc/sys").join(&rel)) {
                text.extend_from_slice(format!("{rel}={v}\n").as_bytes());
            }
        }
    }
    text.extend_from_slice(b"@@sysctls 0\n");
    let mut frr = false;
    let mut pids: Vec<String> = std::fs::read_dir("/proc")
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with(|c: char| c.is_ascii_digit()))
                .collect()
        })
        .unwrap_or_default();
    pids.sort();
    for pid in pids {
        if let Some(c) = first_word_line(&Path::new("/proc").join(pid).join("comm")) {
            frr |= c == "zebra";
            text.extend_from_slice(c.as_bytes());
            text.push(b'\n');
        }
    }
    text.extend_from_slice(b"@@services 0\n");
    emit(&text);
    if on_path("nft").is_some() {
        // Read before the listing: a change racing with it makes the two differ, and the next
        // snapshot lists again.
        let generation = nft_generation();
        match (generation, known) {
            (Some(g), Some(k)) if g == k => {
                emit(format!("@@packet_filter {FILTER_UNCHANGED}\n").as_bytes());
            }
            _ => {
                let rc = part(&["nft", "list", "ruleset"], None);
                emit(format!("@@packet_filter {rc}\n").as_bytes());
            }
        }
        if let Some(g) = generation {
            emit(format!("@@{GENERATION_PART} {g}\n").as_bytes());
        }
    } else {
        let rc = part(&["iptables-save"], None);
        emit(format!("@@packet_filter {rc}\n").as_bytes());
    }
    emit(if frr {
        b"@@frr_config pending\n"
    } else {
        b"@@frr_config absent\n"
    });
    0
}

/// Writes straight to fd 1 (no buffer: forked parts write there too).
fn emit(bytes: &[u8]) {
    let mut rest = bytes;
    while !rest.is_empty() {
        // SAFETY: write(2) of a live buffer to stdout.
        let n = unsafe { libc::write(1, rest.as_ptr().cast(), rest.len()) };
        if n <= 0 {
            if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return;
        }
        rest = &rest[n as usize..];
    }
}

/// `pattern` relative to `/proc/sys`, with `*` expanded over the folder it stands in (in
/// name order, hidden names left out, as a shell glob does; a pattern matching nothing
/// expands to nothing, where the shell keeps it and then fails to read it: the same output).
fn expand(pattern: &str) -> Vec<String> {
    let Some((dir, file)) = pattern.split_once("/*/") else {
        return vec![pattern.to_string()];
    };
    let mut names: Vec<String> = std::fs::read_dir(Path::new("/proc/sys").join(dir))
        .map(|d| {
            d.filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| !n.starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .map(|n| format!("{dir}/{n}/{file}"))
        .collect()
}

/// The first line of a small file with blanks around it removed, as `read -r v` sets `v`;
/// `None` when it cannot be read or is empty.
fn first_word_line(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut buf = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_end(&mut buf)
        .ok()?;
    let line = buf.split(|b| *b == b'\n').next().unwrap_or(&[]);
    let v = String::from_utf8_lossy(line)
        .trim_matches([' ', '\t'])
        .to_string();
    (!v.is_empty()).then_some(v)
}

/// The executable `name` resolves to on `PATH`, as `command -v` finds it.
fn on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The folder of our wrappers when `p` is one of them (a link to our multi-call binary) with
/// its caps file beside it: its code can then run in this process, reading the same caps as
/// the wrapper would. Without the caps file the wrapper itself runs (it would probe the host).
fn wrapper_dir(p: &Path) -> Option<PathBuf> {
    let c = std::fs::canonicalize(p).ok()?;
    let dir = c.parent()?;
    (c.file_name()? == SHIM_BINARY && dir.join(CAPS_FILE).is_file()).then(|| dir.to_path_buf())
}

/// Runs `argv` as `… 2>&1` in a fork: stdin holds `input` (else `/dev/null`); its exit code
/// (128 + signal when killed, 127 when not found).
fn part(argv: &[&str], input: Option<&[u8]>) -> i32 {
    let stdin = match input.map(|bytes| -> io::Result<io::PipeReader> {
        let (r, mut w) = io::pipe()?;
        // Small enough for the pipe's buffer: written before the reader starts.
        w.write_all(bytes)?;
        Ok(r)
    }) {
        Some(Ok(r)) => Some(r),
        Some(Err(e)) => {
            emit(format!("{}: {e}\n", argv[0]).as_bytes());
            return 126;
        }
        None => None,
    };
    let prog = on_path(argv[0]);
    let in_process = prog.as_deref().and_then(wrapper_dir);
    let cargv: Vec<CString> = argv.iter().filter_map(|a| CString::new(*a).ok()).collect();
    let mut ptrs: Vec<*const libc::c_char> = cargv.iter().map(|c| c.as_ptr()).collect();
    ptrs.push(std::ptr::null());
    let cprog = prog
        .as_ref()
        .and_then(|p| CString::new(p.as_os_str().as_bytes()).ok());
    // SAFETY: this process is single-threaded (the entry's child), so the fork may run
    // ordinary code; it ends in exec or _exit.
    let child = unsafe { libc::fork() };
    if child < 0 {
        emit(format!("{}: fork: {}\n", argv[0], io::Error::last_os_error()).as_bytes());
        return 126;
    }
    if child == 0 {
        // SAFETY: dup2(2) on descriptors this process holds; exec or _exit after.
        unsafe {
            if let Some(r) = &stdin {
                libc::dup2(r.as_raw_fd(), 0);
            }
            libc::dup2(1, 2);
        }
        let code = match (&cprog, in_process) {
            (Some(_), Some(dir)) => {
                crate::shims::act_for_wrappers_in(dir);
                let args: Vec<OsString> = argv.iter().map(OsString::from).collect();
                let code = crate::shims::multicall_main(args);
                let _ = io::stdout().flush();
                code
            }
            (Some(p), None) => {
                // SAFETY: execv(3) with NUL-terminated strings and a null-ended array.
                unsafe { libc::execv(p.as_ptr(), ptrs.as_ptr()) };
                emit(format!("{}: {}\n", argv[0], io::Error::last_os_error()).as_bytes());
                126
            }
            (None, _) => {
                emit(format!("{}: not found\n", argv[0]).as_bytes());
                127
            }
        };
        // SAFETY: leave the fork without running the parent's exit handlers.
        unsafe { libc::_exit(code) };
    }
    drop(stdin);
    let Some(status) = super::nsexec::wait(child) else {
        return 126;
    };
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    }
}

/// The generation of this network namespace's nftables ruleset (the kernel counts every
/// committed change, iptables-nft's included), asked over netlink; `None` when it cannot be
/// read (the ruleset is then listed every time).
fn nft_generation() -> Option<u32> {
    use std::os::fd::{FromRawFd, OwnedFd};
    const NETLINK_NETFILTER: i32 = 12;
    const NFTA_GEN_ID: u16 = 1;
    const HEADER: usize = 16;
    // SAFETY: socket(2); the descriptor is owned right after.
    let fd = unsafe {
        libc::socket(
            libc::AF_NETLINK,
            libc::SOCK_RAW | libc::SOCK_CLOEXEC,
            NETLINK_NETFILTER,
        )
    };
    if fd < 0 {
        return None;
    }
    // SAFETY: a fresh descriptor.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let timeout = libc::timeval {
        tv_sec: 1,
        tv_usec: 0,
    };
    // SAFETY: setsockopt(2) with a valid timeval.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVTIMEO,
            (&timeout as *const libc::timeval).cast(),
            std::mem::size_of::<libc::timeval>() as libc::socklen_t,
        )
    };
    let kind = ((libc::NFNL_SUBSYS_NFTABLES as u16) << 8) | libc::NFT_MSG_GETGEN as u16;
    let mut req = [0u8; HEADER + 4];
    req[0..4].copy_from_slice(&((HEADER + 4) as u32).to_ne_bytes());
    req[4..6].copy_from_slice(&kind.to_ne_bytes());
    req[6..8].copy_from_slice(&(libc::NLM_F_REQUEST as u16).to_ne_bytes());
    req[8..12].copy_from_slice(&1u32.to_ne_bytes());
    // nfgenmsg: family AF_UNSPEC, version NFNETLINK_V0, resource id 0 (all zero).
    // SAFETY: send(2) of a local buffer; an unconnected netlink socket sends to the kernel.
    let sent = unsafe { libc::send(fd.as_raw_fd(), req.as_ptr().cast(), req.len(), 0) };
    if sent != req.len() as isize {
        return None;
    }
    let mut buf = [0u8; 4096];
    // SAFETY: recv(2) into a local buffer.
    let n = unsafe { libc::recv(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
    if n < (HEADER + 4) as isize {
        return None;
    }
    let msg = &buf[..n as usize];
    let u16_at = |i: usize| Some(u16::from_ne_bytes(msg.get(i..i + 2)?.try_into().ok()?));
    let len = u32::from_ne_bytes(msg[0..4].try_into().ok()?) as usize;
    let newgen = ((libc::NFNL_SUBSYS_NFTABLES as u16) << 8) | libc::NFT_MSG_NEWGEN as u16;
    if u16_at(4)? != newgen || len > msg.len() {
        return None;
    }
    // Attributes after the nfgenmsg, each `len, type, value` padded to 4 bytes.
    let mut at = HEADER + 4;
    while at + 4 <= len {
        let alen = u16_at(at)? as usize;
        let atype = u16_at(at + 2)? & 0x3fff;
        if alen < 4 || at + alen > len {
            return None;
        }
        if atype == NFTA_GEN_ID && alen >= 8 {
            return Some(u32::from_be_bytes(msg[at + 4..at + 8].try_into().ok()?));
        }
        at += (alen + 3) & !3;
    }
    None
}
