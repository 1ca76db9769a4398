//! The system-call filter every device process runs under.
//!
//! Device processes are root with the capabilities FRR needs (`CAP_SYS_ADMIN` among them), as
//! in Kathará's containers. Their view of the host is read-only and private, but those
//! capabilities would let a command undo that view (`mount -o remount,rw /usr`), make a block
//! device node and write the host's disk, load kernel modules or reboot the machine. A seccomp
//! filter — installed in PID 1 before it becomes `bash` and in every command entering the
//! device, and inherited by everything they start — refuses exactly those operations with
//! `EPERM`:
//!
//! - every way to change mounts: `mount`, `umount2`, `pivot_root`, the new mount API
//!   (`open_tree`, `move_mount`, `fsopen`, `fsconfig`, `fsmount`, `fspick`, `mount_setattr`);
//! - `mknod`/`mknodat` of block and character devices (FIFOs and sockets are fine);
//! - kernel-wide state: module loading and unloading, `kexec_*`, `reboot`, `swapon`/`swapoff`,
//!   `acct`, the system clock (`settimeofday`, `clock_settime`, `adjtimex`, `clock_adjtime`),
//!   the kernel log (`syslog`), the kernel keyring (`add_key`, `request_key`, `keyctl`),
//!   quotas, `open_by_handle_at` (reading host files by handle), port I/O (`iopl`, `ioperm`);
//! - system calls of another ABI (32-bit or x32), which would bypass the list.
//!
//! The filter is a blocklist: networking, `bpf` (used by the kernel emulations), `ptrace` within
//! the device, namespaces for unprivileged uses all keep working. A command that needs a new
//! mount inside a device (`ip netns add` there) fails with "Operation not permitted".

use std::io;

/// `struct sock_filter`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SockFilter {
    code: u16,
    jt: u8,
    jf: u8,
    k: u32,
}

/// `struct sock_fprog`.
#[repr(C)]
struct SockFprog {
    len: u16,
    filter: *const SockFilter,
}

const LD_W_ABS: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JEQ_K: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JGE_K: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const AND_K: u16 = 0x54; // BPF_ALU | BPF_AND | BPF_K
const RET_K: u16 = 0x06; // BPF_RET | BPF_K
const RET_ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
const RET_EPERM: u32 = 0x0005_0000 | libc::EPERM as u32; // SECCOMP_RET_ERRNO | EPERM
const OFF_NR: u32 = 0;
const OFF_ARCH: u32 = 4;
const fn off_arg_low(i: u32) -> u32 {
    16 + 8 * i
}

#[cfg(target_arch = "x86_64")]
const AUDIT_ARCH: u32 = 0xC000_003E;
#[cfg(target_arch = "aarch64")]
const AUDIT_ARCH: u32 = 0xC000_00B7;

fn blocked() -> Vec<libc::c_long> {
    let mut v = vec![
        libc::SYS_mount,
        libc::SYS_umount2,
        libc::SYS_pivot_root,
        libc::SYS_open_tree,
        libc::SYS_move_mount,
        libc::SYS_fsopen,
        libc::SYS_fsconfig,
        libc::SYS_fsmount,
        libc::SYS_fspick,
        libc::SYS_mount_setattr,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_reboot,
        libc::SYS_swapon,
        libc::SYS_swapoff,
        libc::SYS_acct,
        libc::SYS_settimeofday,
        libc::SYS_clock_settime,
        libc::SYS_adjtimex,
        libc::SYS_clock_adjtime,
        libc::SYS_syslog,
        libc::SYS_add_key,
        libc::SYS_request_key,
        libc::SYS_keyctl,
        libc::SYS_quotactl,
        libc::SYS_open_by_handle_at,
    ];
    #[cfg(target_arch = "x86_64")]
    v.extend([libc::SYS_iopl, libc::SYS_ioperm]);
    v
}

/// The filter program.
pub(crate) fn program() -> Vec<SockFilter> {
    let ins = |code, jt, jf, k| SockFilter { code, jt, jf, k };
    let mut p = vec![
        ins(LD_W_ABS, 0, 0, OFF_ARCH),
        ins(JEQ_K, 1, 0, AUDIT_ARCH),
        ins(RET_K, 0, 0, RET_EPERM),
        ins(LD_W_ABS, 0, 0, OFF_NR),
    ];
    #[cfg(target_arch = "x86_64")]
    {
        // x32 system calls carry this bit and the same audit arch.
        p.push(ins(JGE_K, 0, 1, 0x4000_0000));
        p.push(ins(RET_K, 0, 0, RET_EPERM));
    }
    for nr in blocked() {
        p.push(ins(JEQ_K, 0, 1, nr as u32));
        p.push(ins(RET_K, 0, 0, RET_EPERM));
    }
    // mknod(path, mode, dev) / mknodat(dirfd, path, mode, dev): refuse device nodes.
    let mut mknods: Vec<(libc::c_long, u32)> = vec![(libc::SYS_mknodat, 2)];
    #[cfg(target_arch = "x86_64")]
    mknods.push((libc::SYS_mknod, 1));
    for (nr, mode_arg) in mknods {
        p.push(ins(JEQ_K, 0, 6, nr as u32));
        p.push(ins(LD_W_ABS, 0, 0, off_arg_low(mode_arg)));
        p.push(ins(AND_K, 0, 0, libc::S_IFMT));
        p.push(ins(JEQ_K, 2, 0, libc::S_IFBLK));
        p.push(ins(JEQ_K, 1, 0, libc::S_IFCHR));
        p.push(ins(RET_K, 0, 0, RET_ALLOW));
        p.push(ins(RET_K, 0, 0, RET_EPERM));
    }
    p.push(ins(RET_K, 0, 0, RET_ALLOW));
    p
}

/// Capabilities a Kathará device (a Docker container) does not have and that change what an
/// agent sees: without `CAP_SYS_PTRACE`, root cannot look into the file descriptors of
/// processes of other users, so `ss -p` and `netstat -p` show no owner for FRR's sockets
/// (its daemons run as `frr`), as on Kathará.
const DROPPED_CAPS: [libc::c_ulong; 1] = [19]; // CAP_SYS_PTRACE

/// Removes [`DROPPED_CAPS`] from the calling process's bounding set: the next `execve` (and
/// every process it starts) runs without them. Async-signal-safe: only `prctl(2)`.
pub(crate) fn drop_container_caps() -> io::Result<()> {
    for cap in DROPPED_CAPS {
        // SAFETY: prctl(PR_CAPBSET_DROP) with a capability number; no memory is passed.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) } != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Installs `prog` on the calling thread (inherited by children and kept across `exec`).
/// Async-signal-safe: only `seccomp(2)` on memory prepared by the caller.
pub(crate) fn install(prog: &[SockFilter]) -> io::Result<()> {
    let fprog = SockFprog {
        len: prog.len() as u16,
        filter: prog.as_ptr(),
    };
    // SAFETY: seccomp(SECCOMP_SET_MODE_FILTER) with a valid program; the caller has
    // CAP_SYS_ADMIN, so no_new_privs is not needed (setuid programs keep working).
    let r = unsafe {
        libc::syscall(
            libc::SYS_seccomp,
            1 as libc::c_ulong, // SECCOMP_SET_MODE_FILTER
            0 as libc::c_ulong,
            &fprog as *const SockFprog,
        )
    };
    if r != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_is_small_and_every_jump_lands_inside_it() {
        let p = program();
        assert!(p.len() < 200, "{}", p.len());
        for (i, ins) in p.iter().enumerate() {
            if ins.code == JEQ_K || ins.code == JGE_K {
                assert!(
                    i + 1 + (ins.jt.max(ins.jf) as usize) < p.len(),
                    "jump at {i}"
                );
            }
        }
        assert_eq!(p.last().unwrap().k, RET_ALLOW);
    }

    /// The filter refuses mounts and device nodes in a forked child and lets the rest through.
    #[test]
    fn filter_blocks_mount_and_device_nodes_but_not_fifos() {
        let prog = program();
        let dir = tempfile::tempdir().unwrap();
        let fifo = std::ffi::CString::new(dir.path().join("fifo").to_str().unwrap()).unwrap();
        let dev = std::ffi::CString::new(dir.path().join("dev").to_str().unwrap()).unwrap();
        let tgt = std::ffi::CString::new(dir.path().to_str().unwrap()).unwrap();
        // SAFETY: fork; the child only makes system calls and exits.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: the forked child installs the filter and exits without returning.
            unsafe {
                if install(&prog).is_err() {
                    libc::_exit(10);
                }
                let m = libc::mount(
                    c"none".as_ptr(),
                    tgt.as_ptr(),
                    c"tmpfs".as_ptr(),
                    0,
                    std::ptr::null(),
                );
                if m == 0 || *libc::__errno_location() != libc::EPERM {
                    libc::_exit(11);
                }
                if libc::mknod(dev.as_ptr(), libc::S_IFCHR | 0o600, libc::makedev(1, 3)) == 0 {
                    libc::_exit(12);
                }
                if libc::mknod(fifo.as_ptr(), libc::S_IFIFO | 0o600, 0) != 0 {
                    libc::_exit(13);
                }
                if libc::getpid() <= 0 {
                    libc::_exit(14);
                }
                libc::_exit(0);
            }
        }
        let mut status = 0;
        // SAFETY: waits for our own child with a valid status pointer.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        assert!(libc::WIFEXITED(status), "child died: {status}");
        assert_eq!(
            libc::WEXITSTATUS(status),
            0,
            "step that failed: {}",
            libc::WEXITSTATUS(status)
        );
    }
}
