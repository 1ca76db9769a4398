//! Just enough eBPF to filter VLANs on a bridge in the kernel: an array map per port, two small
//! `SCHED_CLS` programs assembled here, and TCX attachment, all through the raw `bpf(2)` system
//! call. No compiler, no object files, no bpffs.
//!
//! Programs are attached to the device (`BPF_PROG_ATTACH`), not through a link
//! (`BPF_LINK_CREATE`): a link is released when the last descriptor of it closes, which for a
//! killed lab is while its daemon exits — and every link release waits for an RCU grace period
//! while holding the RTNL lock, one link after the other across the whole host (a Kath1 lab
//! holds about 60, so its teardown took ~2 s and stalled every `ip` call of the labs beside
//! it). A device-owned program instead goes with its device, all of a namespace's devices in
//! one batch; [`Attached`] detaches explicitly when dropped, so a daemon that stops normally
//! (filtering turned off) still leaves no program behind.
//!
//! The programs implement what a VLAN-filtering bridge does at a port, on a bridge that itself
//! forwards VLAN-transparently (every data frame inside it carries its VLAN tag):
//!
//! - **IN** (a port's ingress, and the bridge device's own egress, i.e. host → bridge):
//!   link-local control frames (`01:80:c2:00:00:0x`: STP, LACP) pass untouched; an untagged
//!   frame gets the port's PVID pushed (dropped without a PVID); a tagged frame passes only if
//!   its VID is a member.
//! - **OUT** (a port's egress, and the bridge device's ingress, i.e. bridge → host): untagged
//!   frames (the bridge's own BPDUs) pass; a tagged frame is dropped unless its VID is a member,
//!   and its tag is popped if the VID egresses untagged.
//!
//! Map layout (u32 → u32, 4097 entries): `[vid] = 1 (member) | 2 (untagged)`, `[4096] = PVID`
//! (0 = none).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

const BPF_MAP_CREATE: i64 = 0;
const BPF_MAP_UPDATE_ELEM: i64 = 2;
const BPF_PROG_LOAD: i64 = 5;
const BPF_PROG_ATTACH: i64 = 8;
const BPF_PROG_DETACH: i64 = 9;
const BPF_PROG_GET_FD_BY_ID: i64 = 13;
const BPF_PROG_QUERY: i64 = 16;
const MAP_TYPE_ARRAY: u32 = 2;
const PROG_TYPE_SCHED_CLS: u32 = 3;
/// `BPF_TCX_INGRESS`.
pub const TCX_INGRESS: u32 = 46;
/// `BPF_TCX_EGRESS`.
pub const TCX_EGRESS: u32 = 47;
/// Map index holding the PVID.
pub const PVID_KEY: u32 = 4096;
/// Map flag: the VID is a member of the port.
pub const MEMBER: u32 = 1;
/// Map flag: the VID egresses untagged.
pub const UNTAGGED: u32 = 2;

fn sys_bpf(cmd: i64, attr: &mut [u8; 128]) -> io::Result<i64> {
    // SAFETY: attr is a zero-initialised, 128-byte `union bpf_attr` image that outlives the call.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), attr.len()) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn put_u32(a: &mut [u8; 128], off: usize, v: u32) {
    a[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put_u64(a: &mut [u8; 128], off: usize, v: u64) {
    a[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

fn owned(fd: i64) -> OwnedFd {
    // SAFETY: the kernel just returned this descriptor to us.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

/// A port's VLAN table (array map).
pub struct VlanMap {
    fd: OwnedFd,
}

impl VlanMap {
    /// Create an empty table.
    pub fn new() -> io::Result<VlanMap> {
        let mut a = [0u8; 128];
        put_u32(&mut a, 0, MAP_TYPE_ARRAY);
        put_u32(&mut a, 4, 4);
        put_u32(&mut a, 8, 4);
        put_u32(&mut a, 12, PVID_KEY + 1);
        Ok(VlanMap {
            fd: owned(sys_bpf(BPF_MAP_CREATE, &mut a)?),
        })
    }

    /// Set one entry.
    pub fn set(&self, key: u32, value: u32) -> io::Result<()> {
        let mut a = [0u8; 128];
        put_u32(&mut a, 0, self.fd.as_raw_fd() as u32);
        put_u64(&mut a, 8, &key as *const u32 as u64);
        put_u64(&mut a, 16, &value as *const u32 as u64);
        sys_bpf(BPF_MAP_UPDATE_ELEM, &mut a).map(|_| ())
    }
}

/// Which of the two programs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Into the bridge (port ingress, bridge-device egress).
    In,
    /// Out of the bridge (port egress, bridge-device ingress).
    Out,
}

/// A loaded program attached to an interface; detached when dropped. (Killed, the holder
/// detaches nothing: the program then stays with its device until the device goes.)
pub struct Attached {
    prog: OwnedFd,
    ifindex: u32,
    attach: u32,
}

/// The `BPF_PROG_ATTACH` / `BPF_PROG_DETACH` argument for a TCX hook: target ifindex, program,
/// attach type (flags, replace and relative fields stay zero: append, no revision check).
fn tcx_attr(prog: &OwnedFd, ifindex: u32, attach: u32) -> [u8; 128] {
    let mut a = [0u8; 128];
    put_u32(&mut a, 0, ifindex);
    put_u32(&mut a, 4, prog.as_raw_fd() as u32);
    put_u32(&mut a, 8, attach);
    a
}

impl Drop for Attached {
    fn drop(&mut self) {
        // Fails harmlessly (ENODEV/ENOENT) when the device, and the program with it, is gone.
        let mut a = tcx_attr(&self.prog, self.ifindex, self.attach);
        let _ = sys_bpf(BPF_PROG_DETACH, &mut a);
    }
}

/// Detaches every program attached to `ifindex` at `attach` (TCX hook): what a daemon killed
/// before it could detach left there, so that a new daemon's programs are the only ones run.
/// Programs held by a link cannot be detached this way and are left alone.
pub fn detach_all(ifindex: u32, attach: u32) -> io::Result<()> {
    // A port holds at most the two programs of one daemon per hook; more is never ours.
    let mut ids = [0u32; 16];
    let mut q = [0u8; 128];
    put_u32(&mut q, 0, ifindex);
    put_u32(&mut q, 4, attach);
    put_u64(&mut q, 16, ids.as_mut_ptr() as u64);
    put_u32(&mut q, 24, ids.len() as u32);
    sys_bpf(BPF_PROG_QUERY, &mut q)?;
    let count = u32::from_ne_bytes([q[24], q[25], q[26], q[27]]).min(ids.len() as u32);
    for id in &ids[..count as usize] {
        let mut g = [0u8; 128];
        put_u32(&mut g, 0, *id);
        let Ok(fd) = sys_bpf(BPF_PROG_GET_FD_BY_ID, &mut g) else {
            continue;
        };
        let prog = owned(fd);
        let mut d = tcx_attr(&prog, ifindex, attach);
        let _ = sys_bpf(BPF_PROG_DETACH, &mut d);
    }
    Ok(())
}

/// Load the program for `dir` over `map` and attach it to `ifindex` at `attach` (TCX hook).
pub fn attach(map: &VlanMap, dir: Direction, ifindex: u32, attach: u32) -> io::Result<Attached> {
    let insns = program(dir, map.fd.as_raw_fd());
    let license = c"GPL";
    let mut log = vec![0u8; 65536];
    let mut a = [0u8; 128];
    put_u32(&mut a, 0, PROG_TYPE_SCHED_CLS);
    put_u32(&mut a, 4, (insns.len() / 8) as u32);
    put_u64(&mut a, 8, insns.as_ptr() as u64);
    put_u64(&mut a, 16, license.as_ptr() as u64);
    put_u32(&mut a, 24, 1);
    put_u32(&mut a, 28, log.len() as u32);
    put_u64(&mut a, 32, log.as_mut_ptr() as u64);
    let prog = match sys_bpf(BPF_PROG_LOAD, &mut a) {
        Ok(fd) => owned(fd),
        Err(e) => {
            let end = log.iter().position(|b| *b == 0).unwrap_or(log.len());
            return Err(io::Error::new(
                e.kind(),
                format!(
                    "BPF program rejected ({e}): {}",
                    String::from_utf8_lossy(&log[..end])
                ),
            ));
        }
    };
    let mut a = tcx_attr(&prog, ifindex, attach);
    sys_bpf(BPF_PROG_ATTACH, &mut a)?;
    Ok(Attached {
        prog,
        ifindex,
        attach,
    })
}

/// A tiny assembler with forward labels.
struct Asm {
    code: Vec<[u8; 8]>,
    fixups: Vec<(usize, &'static str)>,
    labels: Vec<(&'static str, usize)>,
}

const R0: u8 = 0;
const R1: u8 = 1;
const R2: u8 = 2;
const R3: u8 = 3;
const R4: u8 = 4;
const R6: u8 = 6;
const R7: u8 = 7;
const R8: u8 = 8;
const R10: u8 = 10;

impl Asm {
    fn raw(&mut self, code: u8, dst: u8, src: u8, off: i16, imm: i32) {
        let mut i = [0u8; 8];
        i[0] = code;
        i[1] = (src << 4) | (dst & 0x0f);
        i[2..4].copy_from_slice(&off.to_le_bytes());
        i[4..8].copy_from_slice(&imm.to_le_bytes());
        self.code.push(i);
    }
    fn label(&mut self, name: &'static str) {
        self.labels.push((name, self.code.len()));
    }
    fn mov(&mut self, dst: u8, src: u8) {
        self.raw(0xbf, dst, src, 0, 0);
    }
    fn movi(&mut self, dst: u8, imm: i32) {
        self.raw(0xb7, dst, 0, 0, imm);
    }
    fn addi(&mut self, dst: u8, imm: i32) {
        self.raw(0x07, dst, 0, 0, imm);
    }
    fn andi(&mut self, dst: u8, imm: i32) {
        self.raw(0x57, dst, 0, 0, imm);
    }
    fn ldxw(&mut self, dst: u8, src: u8, off: i16) {
        self.raw(0x61, dst, src, off, 0);
    }
    fn ldxh(&mut self, dst: u8, src: u8, off: i16) {
        self.raw(0x69, dst, src, off, 0);
    }
    fn ldxb(&mut self, dst: u8, src: u8, off: i16) {
        self.raw(0x71, dst, src, off, 0);
    }
    fn stxw(&mut self, dst: u8, off: i16, src: u8) {
        self.raw(0x63, dst, src, off, 0);
    }
    fn stw(&mut self, dst: u8, off: i16, imm: i32) {
        self.raw(0x62, dst, 0, off, imm);
    }
    fn be16(&mut self, dst: u8) {
        self.raw(0xdc, dst, 0, 0, 16);
    }
    fn call(&mut self, helper: i32) {
        self.raw(0x85, 0, 0, 0, helper);
    }
    fn exit(&mut self) {
        self.raw(0x95, 0, 0, 0, 0);
    }
    fn jmp(&mut self, code: u8, dst: u8, imm: i32, to: &'static str) {
        self.fixups.push((self.code.len(), to));
        self.raw(code, dst, 0, 0, imm);
    }
    fn ja(&mut self, to: &'static str) {
        self.jmp(0x05, 0, 0, to);
    }
    fn jeq(&mut self, dst: u8, imm: i32, to: &'static str) {
        self.jmp(0x15, dst, imm, to);
    }
    fn jne(&mut self, dst: u8, imm: i32, to: &'static str) {
        self.jmp(0x55, dst, imm, to);
    }
    fn ld_map(&mut self, dst: u8, fd: i32) {
        // BPF_LD | BPF_IMM | BPF_DW with src = BPF_PSEUDO_MAP_FD, two slots.
        self.raw(0x18, dst, 1, 0, fd);
        self.raw(0, 0, 0, 0, 0);
    }
    fn finish(mut self) -> Vec<u8> {
        for (at, name) in std::mem::take(&mut self.fixups) {
            let target = self
                .labels
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, p)| *p)
                .unwrap_or_else(|| panic!("undefined BPF label {name}"));
            let off = target as i64 - at as i64 - 1;
            self.code[at][2..4].copy_from_slice(&(off as i16).to_le_bytes());
        }
        self.code.concat()
    }
}

// __sk_buff offsets (uapi/linux/bpf.h).
const SKB_PROTOCOL: i16 = 16;
const SKB_VLAN_TCI: i16 = 24;
const SKB_VLAN_PROTO: i16 = 28;
// Helpers.
const MAP_LOOKUP: i32 = 1;
const SKB_VLAN_PUSH: i32 = 18;
const SKB_VLAN_POP: i32 = 19;
const SKB_LOAD_BYTES: i32 = 26;
/// htons(ETH_P_8021Q) as the kernel stores it (little-endian host).
const ETH_8021Q_BE: i32 = 0x0081;

/// Assemble the IN or OUT program (see the module docs) over the map `map_fd`.
fn program(dir: Direction, map_fd: i32) -> Vec<u8> {
    let mut a = Asm {
        code: Vec::new(),
        fixups: Vec::new(),
        labels: Vec::new(),
    };
    a.mov(R6, R1);
    // Link-local destination (01:80:c2:00:00:0x)? Leave control frames alone.
    a.mov(R1, R6);
    a.movi(R2, 0);
    a.mov(R3, R10);
    a.addi(R3, -8);
    a.movi(R4, 6);
    a.call(SKB_LOAD_BYTES);
    a.jne(R0, 0, "pass");
    a.ldxw(R1, R10, -8);
    a.jne(R1, 0x00c2_8001, "not_ll");
    a.ldxb(R1, R10, -4);
    a.jne(R1, 0, "not_ll");
    a.ldxb(R1, R10, -3);
    a.andi(R1, 0xf0);
    a.jeq(R1, 0, "pass");
    a.label("not_ll");
    // Tag in metadata, in the frame, or none?
    a.ldxw(R7, R6, SKB_VLAN_PROTO);
    a.jne(R7, 0, "hw");
    a.ldxw(R7, R6, SKB_PROTOCOL);
    a.jeq(R7, ETH_8021Q_BE, "inband");
    match dir {
        Direction::In => a.ja("untagged"),
        Direction::Out => a.ja("pass"),
    }
    a.label("hw");
    a.ldxw(R8, R6, SKB_VLAN_TCI);
    a.andi(R8, 0x0fff);
    a.ja("check");
    a.label("inband");
    a.mov(R1, R6);
    a.movi(R2, 14);
    a.mov(R3, R10);
    a.addi(R3, -16);
    a.movi(R4, 2);
    a.call(SKB_LOAD_BYTES);
    a.jne(R0, 0, "drop");
    a.ldxh(R8, R10, -16);
    a.be16(R8);
    a.andi(R8, 0x0fff);
    a.label("check");
    a.stxw(R10, -4, R8);
    a.ld_map(R1, map_fd);
    a.mov(R2, R10);
    a.addi(R2, -4);
    a.call(MAP_LOOKUP);
    a.jeq(R0, 0, "drop");
    a.ldxw(R1, R0, 0);
    a.mov(R2, R1);
    a.andi(R2, MEMBER as i32);
    a.jeq(R2, 0, "drop");
    match dir {
        Direction::In => a.ja("pass"),
        Direction::Out => {
            a.andi(R1, UNTAGGED as i32);
            a.jeq(R1, 0, "pass");
            a.mov(R1, R6);
            a.call(SKB_VLAN_POP);
            a.ja("pass");
        }
    }
    if dir == Direction::In {
        a.label("untagged");
        a.stw(R10, -4, PVID_KEY as i32);
        a.ld_map(R1, map_fd);
        a.mov(R2, R10);
        a.addi(R2, -4);
        a.call(MAP_LOOKUP);
        a.jeq(R0, 0, "drop");
        a.ldxw(R3, R0, 0);
        a.jeq(R3, 0, "drop");
        a.mov(R1, R6);
        a.movi(R2, ETH_8021Q_BE);
        a.call(SKB_VLAN_PUSH);
        a.jne(R0, 0, "drop");
        a.ja("pass");
    }
    a.label("pass");
    a.movi(R0, 0);
    a.exit();
    a.label("drop");
    a.movi(R0, 2);
    a.exit();
    a.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_assemble_with_resolved_jumps() {
        for dir in [Direction::In, Direction::Out] {
            let p = program(dir, 7);
            assert_eq!(p.len() % 8, 0);
            // Ends with "r0 = 2; exit".
            let n = p.len();
            assert_eq!(p[n - 8], 0x95);
            assert_eq!(p[n - 16], 0xb7);
            assert_eq!(i32::from_le_bytes(p[n - 12..n - 8].try_into().unwrap()), 2);
        }
    }
}
