//! `faultbench-netshim portd NAME`: the daemon behind one emulated link.
//!
//! It owns a tap named like the link and moves frames between the tap and the link's lower
//! devices:
//!
//! - **vlan** (`parent`, `vid`): frames the host sends on the tap leave the parent with an
//!   802.1Q tag pushed; frames arriving on the parent with that VID (the kernel strips the tag
//!   into metadata; a classic BPF filter passes only our VID) are written to the tap untagged.
//!   An nftables `netdev` ingress rule on the parent then drops those frames, so — as on a real
//!   kernel, where a VLAN device claims its VID before any bridge — they never reach a bridge
//!   the parent is enslaved to, nor the parent's own stack.
//! - **bond** (`members`): frames from the tap leave through one running member (mode policy);
//!   frames arriving on any running member are written to the tap, and an ingress rule drops
//!   them on the member itself (a bond slave has no stack of its own). Carrier follows "at least
//!   one member running".
//! - **dummy**: frames sent on the tap are read and discarded.
//!
//! The tap's carrier follows the lower devices (a VLAN whose parent is down has no carrier).
//! Everything is event driven (`poll` on the tap, the packet sockets, an rtnetlink link-event
//! socket and a signalfd): no busy loop. SIGTERM or the tap/parent disappearing ends the daemon,
//! which removes its nftables table and record; the tap vanishes with its descriptor. SIGHUP
//! makes a bond re-read its member list.

use super::ShimError;
use super::frames;
use super::realbin;
use super::state::{self, LinkKind, LinkRecord};
use super::sys::{self, LinkEvents, PacketSocket, Signals, Tap, VNET_HDR_LEN};
use serde::{Deserialize, Serialize};
use std::io::{self, Write};
use std::os::fd::AsRawFd;

/// What the shim asks the daemon to create.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PortdSpec {
    /// Interface name.
    pub name: String,
    /// What to emulate.
    pub kind: LinkKind,
    /// MTU to set (default: parent's for a VLAN, 1500 otherwise).
    pub mtu: Option<u32>,
    /// MAC address to set (default: parent's for a VLAN, random otherwise).
    pub address: Option<String>,
}

const BUF: usize = 1 << 17;

struct Lower {
    name: String,
    sock: PacketSocket,
    running: bool,
}

struct Daemon {
    rec: LinkRecord,
    tap: Tap,
    lowers: Vec<Lower>,
    events: LinkEvents,
    signals: Signals,
    table: String,
    tap_up: bool,
    carrier: Option<bool>,
    rr: usize,
}

/// Environment variable carrying the daemon's [`PortdSpec`] (JSON).
const SPEC_ENV: &str = "FAULTBENCH_PORTD_SPEC";

/// Run the daemon for link `name`; the exit code is only seen when start-up fails.
pub fn main(name: &str) -> i32 {
    let spec_json = std::env::var(SPEC_ENV).unwrap_or_default();
    // SAFETY: single-threaded at this point; nothing else reads the environment concurrently.
    unsafe { std::env::remove_var(SPEC_ENV) };
    let spec: PortdSpec = match serde_json::from_str(&spec_json) {
        Ok(s) => s,
        Err(e) => return report_fail(&format!("bad portd spec: {e}")),
    };
    if spec.name != name {
        return report_fail("portd spec names another link");
    }
    let mut d = match Daemon::start(&spec) {
        Ok(d) => d,
        Err(e) => return report_fail(&e),
    };
    // Ready: tell the shim, then let go of its pipe and of the session.
    let _ = writeln!(io::stdout(), "ok");
    let _ = io::stdout().flush();
    detach_stdio();
    sys::setsid();
    d.run();
    d.cleanup();
    0
}

fn report_fail(msg: &str) -> i32 {
    let _ = writeln!(io::stdout(), "error: {msg}");
    1
}

fn detach_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        for fd in 0..3 {
            // SAFETY: dup2 onto the standard descriptors; `null` stays open until after.
            unsafe {
                libc::dup2(null.as_raw_fd(), fd);
            }
        }
    }
}

impl Daemon {
    fn start(spec: &PortdSpec) -> Result<Daemon, String> {
        let signals = Signals::open().map_err(|e| format!("signalfd: {e}"))?;
        let events = LinkEvents::open().map_err(|e| format!("netlink: {e}"))?;
        let (vnet, mtu, address) = match &spec.kind {
            LinkKind::Vlan { parent, .. } => {
                if sys::ifindex(parent).is_none() {
                    return Err(format!("Cannot find device \"{parent}\""));
                }
                let mtu = spec.mtu.or_else(|| sys::if_mtu(parent).ok());
                let mac = spec
                    .address
                    .clone()
                    .or_else(|| sys::if_mac(parent).ok().map(fmt_mac));
                (true, mtu, mac)
            }
            LinkKind::Bond { .. } => (true, spec.mtu, spec.address.clone()),
            LinkKind::Dummy => (false, spec.mtu, spec.address.clone()),
        };
        let tap = Tap::create(&spec.name, vnet).map_err(|e| {
            if e.raw_os_error() == Some(libc::EEXIST) {
                String::from("RTNETLINK answers: File exists")
            } else {
                format!("cannot create tap {}: {e}", spec.name)
            }
        })?;
        let ifindex = sys::ifindex(&spec.name).ok_or("tap vanished right after creation")?;
        let mut args: Vec<String> =
            vec!["link".into(), "set".into(), "dev".into(), spec.name.clone()];
        if let Some(m) = mtu {
            args.extend(["mtu".into(), m.to_string()]);
        }
        if let Some(a) = &address {
            args.extend(["address".into(), a.clone()]);
        }
        if matches!(spec.kind, LinkKind::Dummy) {
            args.extend(["arp".into(), "off".into(), "multicast".into(), "off".into()]);
        }
        // VLAN, dummy and bond devices have no queue (`qdisc noqueue`, still `qlen 1000`); a
        // tap gets `pfifo_fast` unless it is first brought up with a zero queue length, and
        // keeps the qdisc it got then.
        args.extend(["txqueuelen".into(), "0".into()]);
        // The daemon reports set-up failures as a line of text (`error: …`).
        let ip = |args: &[&str]| realbin::run_ok("ip", args).map_err(|e| e.to_string());
        ip(&args.iter().map(String::as_str).collect::<Vec<_>>())?;
        let name = spec.name.as_str();
        ip(&["link", "set", "dev", name, "up"])?;
        ip(&["link", "set", "dev", name, "down", "txqueuelen", "1000"])?;
        let rec = LinkRecord {
            name: spec.name.clone(),
            kind: spec.kind.clone(),
            pid: std::process::id() as i32,
            ifindex,
        };
        let mut d = Daemon {
            rec,
            tap,
            lowers: Vec::new(),
            events,
            signals,
            table: format!("fbshim_{ifindex}"),
            tap_up: false,
            carrier: None,
            rr: 0,
        };
        if let Err(e) = d.sync_lowers() {
            d.cleanup();
            return Err(e);
        }
        d.refresh_state();
        state::save(&d.rec).map_err(|e| format!("cannot write state: {e}"))?;
        Ok(d)
    }

    /// Open packet sockets and nftables rules for the current lower devices.
    fn sync_lowers(&mut self) -> Result<(), String> {
        let (names, vid): (Vec<String>, Option<u16>) = match &self.rec.kind {
            LinkKind::Vlan { parent, vid } => (vec![parent.clone()], Some(*vid)),
            LinkKind::Bond { members, .. } => (members.clone(), None),
            LinkKind::Dummy => (Vec::new(), None),
        };
        self.lowers.retain(|l| names.contains(&l.name));
        for n in &names {
            if self.lowers.iter().any(|l| &l.name == n) {
                continue;
            }
            let idx = sys::ifindex(n).ok_or_else(|| format!("Cannot find device \"{n}\""))?;
            let sock =
                PacketSocket::open(idx, vid).map_err(|e| format!("AF_PACKET on {n}: {e}"))?;
            if vid.is_some() {
                // A VLAN on a bridge (an SVI such as `vlan10` on `br0`) must see unicast frames
                // for its own MAC, which the bridge only passes up when promiscuous.
                sock.join_promiscuous()
                    .map_err(|e| format!("promiscuous mode on {n}: {e}"))?;
            }
            self.lowers.push(Lower {
                name: n.clone(),
                sock,
                running: false,
            });
        }
        let rule = match vid {
            Some(v) => format!("vlan id {v} drop"),
            None => String::from("drop"),
        };
        let mut script = format!(
            "add table netdev {t}\ndelete table netdev {t}\nadd table netdev {t}\n",
            t = self.table
        );
        for (i, n) in names.iter().enumerate() {
            script.push_str(&format!(
                "add chain netdev {t} in{i} {{ type filter hook ingress device \"{n}\" priority -500; }}\n\
                 add rule netdev {t} in{i} {rule}\n",
                t = self.table
            ));
        }
        realbin::nft_script(&script).map_err(|e| format!("nftables: {e}"))
    }

    /// Re-read flags after a link event: tap up?, lowers running?, carrier.
    fn refresh_state(&mut self) {
        let was_up = self.tap_up;
        self.tap_up = sys::if_flags(&self.rec.name)
            .map(|f| f & libc::IFF_UP as u32 != 0)
            .unwrap_or(false);
        for l in &mut self.lowers {
            l.running = sys::if_flags(&l.name)
                .map(|f| f & libc::IFF_RUNNING as u32 != 0)
                .unwrap_or(false);
        }
        let carrier = match self.rec.kind {
            LinkKind::Dummy => true,
            _ => self.lowers.iter().any(|l| l.running),
        };
        // A tap's carrier is set before it is up, so the kernel never computes its operstate
        // and shows UNKNOWN; a carrier edge after `up` makes it UP like a real VLAN or bond
        // (a real dummy stays UNKNOWN, so it gets no edge).
        if matches!(self.rec.kind, LinkKind::Dummy) {
            return;
        }
        if self.carrier != Some(carrier) || (self.tap_up && !was_up && carrier) {
            if carrier {
                let _ = self.tap.set_carrier(false);
            }
            let _ = self.tap.set_carrier(carrier);
            self.carrier = Some(carrier);
        }
    }

    /// Whether we should stop: our tap or (for a VLAN) the parent is gone.
    fn vanished(&self) -> bool {
        if sys::ifindex(&self.rec.name) != Some(self.rec.ifindex) {
            return true;
        }
        match &self.rec.kind {
            LinkKind::Vlan { parent, .. } => {
                sys::ifindex(parent) != self.lowers.first().map(|l| l.sock.ifindex())
            }
            _ => false,
        }
    }

    fn run(&mut self) {
        let mut buf = vec![0u8; BUF];
        let mut out = Vec::with_capacity(BUF);
        loop {
            let mut fds = vec![
                self.signals.as_raw_fd(),
                self.events.as_raw_fd(),
                self.tap.as_raw_fd(),
            ];
            fds.extend(self.lowers.iter().map(|l| l.sock.as_raw_fd()));
            let Ok(rev) = sys::poll_readable(&fds) else {
                return;
            };
            if rev[0] != 0 {
                while let Some(sig) = self.signals.next() {
                    if sig == libc::SIGHUP {
                        self.reload();
                    } else {
                        return;
                    }
                }
            }
            if rev[1] != 0 {
                self.events.drain();
                if self.vanished() {
                    return;
                }
                self.refresh_state();
            }
            if rev[2] != 0 && !self.pump_tap(&mut buf, &mut out) {
                return;
            }
            for i in 0..self.lowers.len() {
                if rev.get(3 + i).copied().unwrap_or(0) != 0 {
                    self.pump_lower(i, &mut buf, &mut out);
                }
            }
        }
    }

    /// Frames the host sent on the tap. Returns false when the tap is gone.
    fn pump_tap(&mut self, buf: &mut [u8], out: &mut Vec<u8>) -> bool {
        for _ in 0..64 {
            let n = match self.tap.read(buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return false,
            };
            let frame = &buf[..n];
            match &self.rec.kind {
                LinkKind::Dummy => {}
                LinkKind::Vlan { vid, .. } => {
                    if let Some(l) = self.lowers.first()
                        && frames::push_tag(frame, *vid, out)
                    {
                        let _ = l.sock.send(out);
                    }
                }
                LinkKind::Bond { mode, .. } => self.bond_send(&mode.clone(), frame),
            }
        }
        true
    }

    fn bond_send(&mut self, mode: &str, frame: &[u8]) {
        let running: Vec<usize> = (0..self.lowers.len())
            .filter(|&i| self.lowers[i].running)
            .collect();
        if running.is_empty() {
            return;
        }
        let pick = match mode {
            "broadcast" => {
                for &i in &running {
                    let _ = self.lowers[i].sock.send(frame);
                }
                return;
            }
            "active-backup" => running[0],
            "balance-rr" => {
                self.rr = self.rr.wrapping_add(1);
                running[self.rr % running.len()]
            }
            _ => running[frames::l2_hash(frame) % running.len()],
        };
        let _ = self.lowers[pick].sock.send(frame);
    }

    /// Frames that arrived on lower `i`.
    fn pump_lower(&mut self, i: usize, buf: &mut [u8], out: &mut Vec<u8>) {
        for _ in 0..64 {
            let meta = match self.lowers[i].sock.recv(buf) {
                Ok(m) => m,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => return,
            };
            if !self.tap_up || meta.len < VNET_HDR_LEN + 14 {
                continue;
            }
            let frame = &buf[..meta.len];
            let running = self.lowers[i].running;
            match (&self.rec.kind, meta.vlan_tci) {
                // A bond hands tagged frames up with their tag (VLANs on top of the bond).
                (LinkKind::Bond { .. }, Some(tci))
                    if running && frames::push_tag(frame, tci, out) =>
                {
                    let _ = self.tap.write(out);
                }
                (LinkKind::Bond { .. }, None) if running => {
                    let _ = self.tap.write(frame);
                }
                // The BPF filter passed only our VID: deliver untagged.
                (LinkKind::Vlan { .. }, Some(_)) => {
                    let _ = self.tap.write(frame);
                }
                _ => {}
            }
        }
    }

    fn reload(&mut self) {
        if let Some(r) = state::load_raw(&self.rec.name)
            && r.pid == self.rec.pid
        {
            self.rec.kind = r.kind;
            let _ = self.sync_lowers();
            self.refresh_state();
            if let LinkKind::Bond { members, .. } = &self.rec.kind {
                super::bondctl::acknowledge(&self.rec.name, members);
            }
        }
    }

    fn cleanup(&mut self) {
        let t = &self.table;
        let _ = realbin::nft_script(&format!("add table netdev {t}\ndelete table netdev {t}\n"));
        if state::load_raw(&self.rec.name).is_some_and(|r| r.pid == self.rec.pid) {
            state::remove(&self.rec.name);
        }
    }
}

fn fmt_mac(m: [u8; 6]) -> String {
    m.iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// Start a daemon for `spec` and wait until it is ready. `Err` is the message to print.
pub fn spawn(spec: &PortdSpec) -> Result<(), ShimError> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    const DAEMON: &str = "emulation daemon";
    let me = std::env::current_exe()?;
    let json = serde_json::to_string(spec)?;
    let mut child = Command::new(me)
        .arg0(super::SHIM_BINARY)
        // `ps` in the device shows `faultbench-netshim portd eth1.10`; the spec travels in the
        // environment.
        .arg("portd")
        .arg(&spec.name)
        .env(SPEC_ENV, json)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|source| ShimError::Spawn {
            daemon: DAEMON,
            source,
        })?;
    let mut text = String::new();
    if let Some(mut o) = child.stdout.take() {
        let _ = o.read_to_string(&mut text);
    }
    let line = text.lines().next();
    if line == Some("ok") {
        // The daemon keeps running; it is reaped by the device's init once we exit.
        Ok(())
    } else {
        let _ = child.wait();
        Err(ShimError::daemon_failed(DAEMON, line))
    }
}

use std::os::unix::process::CommandExt;
