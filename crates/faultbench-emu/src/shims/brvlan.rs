//! Bridge VLAN filtering on a kernel without CONFIG_BRIDGE_VLAN_FILTERING.
//!
//! The bridge stays a real Linux bridge, forwarding VLAN-transparently; VLAN filtering is done
//! at its edges by the eBPF programs of [`super::bpf`], attached with TCX to every port and to
//! the bridge device itself: untagged frames entering get the port's PVID, tagged frames are
//! admitted only for member VIDs, frames leaving are dropped for non-member VIDs and untagged
//! where the VID egresses untagged. Inside the bridge every data frame therefore carries its
//! VLAN, so flooding and forwarding never cross VLANs.
//!
//! State per bridge (`brvlan/<bridge>.json` in the namespace's state directory): whether
//! filtering is on, the default PVID, and the VLAN table of each port and of the bridge itself
//! (`self`). `bridge vlan add|del|show` edit and print it; a daemon per filtering bridge
//! (`faultbench-netshim brvland BRIDGE`) holds maps and programs, follows ports joining and
//! leaving (rtnetlink events; new ports get the default PVID like the kernel gives them) and
//! re-reads the table on SIGHUP.

use super::ShimError;
use super::bpf::{self, Attached, Direction, VlanMap};
use super::realbin;
use super::state;
use super::sys::{self, LinkEvents, Signals};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Flags of one VID on one port.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VidFlags {
    /// Untagged frames entering the port are put in this VLAN.
    pub pvid: bool,
    /// Frames of this VLAN leave the port untagged.
    pub untagged: bool,
}

/// A port's (or the bridge's own) VLAN table.
pub type VlanTable = BTreeMap<u16, VidFlags>;

/// The emulated VLAN configuration of one bridge.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BridgeVlans {
    /// Bridge name.
    pub bridge: String,
    /// Bridge interface index (stale state is recognised by a different index).
    pub ifindex: u32,
    /// `vlan_filtering 1`.
    pub filtering: bool,
    /// `vlan_default_pvid` (0 = none).
    pub default_pvid: u16,
    /// Ports' tables.
    pub ports: BTreeMap<String, VlanTable>,
    /// The bridge device's own table (`bridge vlan … self`).
    pub own: VlanTable,
    /// Daemon PID while filtering is on.
    #[serde(default)]
    pub pid: i32,
    /// Bumped on every change; the daemon echoes it in its acknowledgement.
    #[serde(default)]
    pub generation: u64,
}

fn dir() -> PathBuf {
    state::dir().join("brvlan")
}

fn path(bridge: &str) -> PathBuf {
    dir().join(bridge)
}

fn ack_path(bridge: &str) -> PathBuf {
    dir().join(format!(".ack-{bridge}"))
}

/// The state of `bridge`, if it is known and still the same bridge.
pub fn load(bridge: &str) -> Option<BridgeVlans> {
    let b = std::fs::read(path(bridge)).ok()?;
    let s: BridgeVlans = serde_json::from_slice(&b).ok()?;
    (sys::ifindex(bridge) == Some(s.ifindex)).then_some(s)
}

/// Every live bridge state of the namespace.
pub fn list() -> Vec<BridgeVlans> {
    let Ok(rd) = std::fs::read_dir(dir()) else {
        return Vec::new();
    };
    let mut v: Vec<BridgeVlans> = rd
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .filter_map(|n| load(&n))
        .collect();
    v.sort_by_key(|s| s.ifindex);
    v
}

fn save(s: &BridgeVlans) -> io::Result<()> {
    state::create_subdir("brvlan")?;
    let tmp = dir().join(format!(".{}.{}", s.bridge, std::process::id()));
    std::fs::write(&tmp, serde_json::to_vec(s).map_err(io::Error::other)?)?;
    std::fs::rename(tmp, path(&s.bridge))
}

/// A fresh state for an existing bridge.
pub fn fresh(bridge: &str) -> Option<BridgeVlans> {
    Some(BridgeVlans {
        bridge: bridge.to_string(),
        ifindex: sys::ifindex(bridge)?,
        filtering: false,
        default_pvid: 1,
        own: default_table(1),
        ..Default::default()
    })
}

fn default_table(pvid: u16) -> VlanTable {
    let mut t = VlanTable::new();
    if pvid != 0 {
        t.insert(
            pvid,
            VidFlags {
                pvid: true,
                untagged: true,
            },
        );
    }
    t
}

/// Save `s` and, if its daemon runs, make it apply the change before returning.
pub fn commit(mut s: BridgeVlans) -> Result<(), ShimError> {
    s.generation += 1;
    let _ = std::fs::remove_file(ack_path(&s.bridge));
    save(&s)?;
    if s.filtering && s.pid > 0 && sys::pid_alive(s.pid) {
        sys::signal(s.pid, libc::SIGHUP)?;
        wait_ack(&s.bridge, s.generation)?;
    }
    Ok(())
}

fn wait_ack(bridge: &str, generation: u64) -> Result<(), ShimError> {
    let deadline = Instant::now() + Duration::from_secs(3);
    while Instant::now() < deadline {
        if std::fs::read_to_string(ack_path(bridge))
            .ok()
            .and_then(|s| s.trim().parse::<u64>().ok())
            .is_some_and(|g| g >= generation)
        {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    Err(ShimError::VlansNotApplied(bridge.to_string()))
}

/// Turn filtering on or off for `bridge` (creating its state if needed).
pub fn set_filtering(bridge: &str, on: bool, default_pvid: Option<u16>) -> Result<(), ShimError> {
    let mut s = load(bridge)
        .or_else(|| fresh(bridge))
        .ok_or_else(|| ShimError::NoDevice(bridge.to_string()))?;
    if let Some(p) = default_pvid {
        // The kernel moves ports (and the bridge) still on the old default to the new one.
        let old = s.default_pvid;
        for t in s.ports.values_mut().chain(std::iter::once(&mut s.own)) {
            if old != 0
                && t.get(&old)
                    == Some(&VidFlags {
                        pvid: true,
                        untagged: true,
                    })
            {
                t.remove(&old);
                t.extend(default_table(p));
            }
        }
        s.default_pvid = p;
    }
    let running = s.pid > 0 && sys::pid_alive(s.pid);
    if on && !running {
        s.filtering = true;
        s.generation += 1;
        save(&s)?;
        spawn_daemon(bridge)?;
        return Ok(());
    }
    if !on && running {
        let _ = sys::signal(s.pid, libc::SIGTERM);
        for _ in 0..400 {
            if !sys::pid_alive(s.pid) {
                break;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        s.pid = 0;
    }
    s.filtering = on;
    commit(s)
}

fn spawn_daemon(bridge: &str) -> Result<(), ShimError> {
    use std::io::Read;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};
    const DAEMON: &str = "VLAN filtering daemon";
    let me = std::env::current_exe()?;
    let mut child = Command::new(me)
        .arg0(super::SHIM_BINARY)
        .args(["brvland", bridge])
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
    match text.lines().next() {
        Some("ok") => Ok(()),
        other => {
            let _ = child.wait();
            Err(ShimError::daemon_failed(DAEMON, other))
        }
    }
}

/// Forget `port`'s VLAN table in whatever bridge state has one (it left its bridge; if it joins
/// one again it starts from the default PVID, as in the kernel).
pub fn forget_port(port: &str) {
    for mut s in list() {
        if s.ports.remove(port).is_some() {
            let _ = commit(s);
        }
    }
}

/// Ports currently enslaved to `bridge` (real `ip -j link show master BRIDGE`).
fn bridge_ports(bridge: &str) -> Vec<String> {
    let Ok(c) = realbin::capture("ip", &["-j", "link", "show", "master", bridge]) else {
        return Vec::new();
    };
    let v: serde_json::Value = serde_json::from_slice(&c.stdout).unwrap_or_default();
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|o| o["ifname"].as_str().map(str::to_string))
        .collect()
}

struct Filtered {
    ifindex: u32,
    map: VlanMap,
    written: Vec<u32>,
    _hooks: [Attached; 2],
}

impl Filtered {
    fn new(name: &str, bridge_itself: bool) -> io::Result<Filtered> {
        let ifindex = sys::ifindex(name).ok_or_else(|| io::Error::other("no such device"))?;
        let map = VlanMap::new()?;
        // A port filters Into the bridge on ingress; the bridge device sends Into the bridge
        // on egress (host → ports) and receives Out of it on ingress (ports → host).
        let (in_hook, out_hook) = if bridge_itself {
            (bpf::TCX_EGRESS, bpf::TCX_INGRESS)
        } else {
            (bpf::TCX_INGRESS, bpf::TCX_EGRESS)
        };
        // A daemon killed before it could detach left its programs (see `bpf::Attached`).
        for hook in [in_hook, out_hook] {
            let _ = bpf::detach_all(ifindex, hook);
        }
        let hooks = [
            bpf::attach(&map, Direction::In, ifindex, in_hook)?,
            bpf::attach(&map, Direction::Out, ifindex, out_hook)?,
        ];
        Ok(Filtered {
            ifindex,
            map,
            written: vec![0; bpf::PVID_KEY as usize + 1],
            _hooks: hooks,
        })
    }

    fn apply(&mut self, t: &VlanTable) -> io::Result<()> {
        let mut want = vec![0u32; bpf::PVID_KEY as usize + 1];
        for (vid, f) in t {
            if *vid == 0 || *vid >= 4095 {
                continue;
            }
            want[*vid as usize] = bpf::MEMBER | if f.untagged { bpf::UNTAGGED } else { 0 };
            if f.pvid {
                want[bpf::PVID_KEY as usize] = u32::from(*vid);
            }
        }
        for (k, (w, old)) in want.iter().zip(self.written.iter_mut()).enumerate() {
            if w != old {
                self.map.set(k as u32, *w)?;
                *old = *w;
            }
        }
        Ok(())
    }
}

/// `faultbench-netshim brvland BRIDGE`.
pub fn daemon_main(bridge: &str) -> i32 {
    let fail = |m: String| {
        let _ = writeln!(io::stdout(), "error: {m}");
        1
    };
    let signals = match Signals::open() {
        Ok(s) => s,
        Err(e) => return fail(format!("signalfd: {e}")),
    };
    let events = match LinkEvents::open() {
        Ok(e) => e,
        Err(e) => return fail(format!("netlink: {e}")),
    };
    let Some(mut s) = load(bridge) else {
        return fail(format!("no VLAN state for bridge {bridge}"));
    };
    s.pid = std::process::id() as i32;
    if let Err(e) = save(&s) {
        return fail(format!("cannot write state: {e}"));
    }
    let mut d = Daemon {
        bridge: bridge.to_string(),
        ifindex: s.ifindex,
        own: None,
        ports: BTreeMap::new(),
    };
    if let Err(e) = d.sync() {
        return fail(e);
    }
    let _ = writeln!(io::stdout(), "ok");
    let _ = io::stdout().flush();
    detach();
    while let Ok(rev) = sys::poll_readable(&[signals.as_raw_fd(), events.as_raw_fd()]) {
        let mut resync = false;
        if rev[0] != 0 {
            let mut stop = false;
            while let Some(sig) = signals.next() {
                if sig == libc::SIGHUP {
                    resync = true;
                } else {
                    stop = true;
                }
            }
            if stop {
                break;
            }
        }
        if rev[1] != 0 {
            events.drain();
            if sys::ifindex(&d.bridge) != Some(d.ifindex) {
                let _ = std::fs::remove_file(path(&d.bridge));
                return 0;
            }
            resync = true;
        }
        if resync {
            let _ = d.sync();
        }
    }
    // Detach the programs (see `bpf::Attached`), then record that filtering stopped.
    let bridge = std::mem::take(&mut d.bridge);
    drop(d);
    if let Some(mut s) = load(&bridge)
        && s.pid == std::process::id() as i32
    {
        s.pid = 0;
        let _ = save(&s);
    }
    0
}

fn detach() {
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
    sys::setsid();
}

struct Daemon {
    bridge: String,
    ifindex: u32,
    own: Option<Filtered>,
    ports: BTreeMap<String, Filtered>,
}

impl Daemon {
    /// Re-read ports and tables; attach to new ports, detach from gone ones, write the maps.
    fn sync(&mut self) -> Result<(), String> {
        let Some(mut s) = load(&self.bridge) else {
            return Err(format!("no VLAN state for bridge {}", self.bridge));
        };
        let present = bridge_ports(&self.bridge);
        // Ports without a table of their own have the default PVID, as the kernel gives every
        // port at enslave time. Only the shim writes the state file (the daemon never does),
        // so no update can be lost between them.
        for p in &present {
            s.ports
                .entry(p.clone())
                .or_insert_with(|| default_table(s.default_pvid));
        }
        self.ports
            .retain(|p, f| present.contains(p) && sys::ifindex(p) == Some(f.ifindex));
        if self.own.is_none() {
            self.own = Some(Filtered::new(&self.bridge, true).map_err(|e| e.to_string())?);
        }
        if let Some(o) = &mut self.own {
            o.apply(&s.own).map_err(|e| e.to_string())?;
        }
        for p in &present {
            if !self.ports.contains_key(p) {
                match Filtered::new(p, false) {
                    Ok(f) => {
                        self.ports.insert(p.clone(), f);
                    }
                    Err(_) => continue,
                }
            }
            if let (Some(f), Some(t)) = (self.ports.get_mut(p), s.ports.get(p)) {
                f.apply(t).map_err(|e| e.to_string())?;
            }
        }
        let _ = std::fs::write(ack_path(&self.bridge), s.generation.to_string());
        Ok(())
    }
}

/// Parse `10` or `10-20`.
pub fn parse_vids(s: &str) -> Option<Vec<u16>> {
    let (a, b) = match s.split_once('-') {
        Some((a, b)) => (a.parse::<u16>().ok()?, b.parse::<u16>().ok()?),
        None => {
            let v = s.parse::<u16>().ok()?;
            (v, v)
        }
    };
    (1 <= a && a <= b && b <= 4094).then(|| (a..=b).collect())
}

/// Render `bridge vlan show` like iproute2 6.1 does.
pub fn render_show(states: &[BridgeVlans], only_dev: Option<&str>) -> String {
    let mut out = String::from("port              vlan-id  \n");
    for s in states {
        let mut entries: Vec<(u32, &String, &VlanTable)> = s
            .ports
            .iter()
            .map(|(n, t)| (sys::ifindex(n).unwrap_or(u32::MAX), n, t))
            .collect();
        entries.push((s.ifindex, &s.bridge, &s.own));
        entries.sort_by_key(|e| e.0);
        for (_, name, table) in entries {
            if only_dev.is_some_and(|d| d != name.as_str()) || table.is_empty() {
                continue;
            }
            for (i, (vid, f)) in table.iter().enumerate() {
                let lead = if i == 0 { name.as_str() } else { "" };
                out.push_str(&format!("{lead:<16}  {vid}"));
                if f.pvid {
                    out.push_str(" PVID");
                }
                if f.untagged {
                    out.push_str(" Egress Untagged");
                }
                out.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vid_ranges() {
        assert_eq!(parse_vids("10"), Some(vec![10]));
        assert_eq!(parse_vids("3-5"), Some(vec![3, 4, 5]));
        assert_eq!(parse_vids("0"), None);
        assert_eq!(parse_vids("4095"), None);
        assert_eq!(parse_vids("9-3"), None);
    }
}
