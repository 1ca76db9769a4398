//! `lab up --fast-timers`: a temporary copy of a lab with fast routing timers.
//!
//! Labs are deployed as written by default, with their protocols' own timers (an OSPF
//! broadcast segment with FRR's defaults waits 40 s for its DR election, as it would on
//! Kathará). On request, a copy of the lab gets fast timers instead — a *deviation* from the
//! lab, which is why it is opt-in, never touches the lab's own files, and is listed line by
//! line so it can be printed and recorded with the running lab.
//!
//! In each device's `etc/frr/{frr,ospfd,ospf6d,ripd,ripngd,bgpd}.conf`, and the same files
//! (and `Quagga.conf`) of Quagga-era labs under `etc/quagga/` or `etc/zebra/`:
//! - **OSPF/OSPFv3**: hello 1 s, dead 3 s, retransmit 1 s on every interface of the device
//!   (lab.conf's, those its startup file creates with `ip link add` or `vconfig`, those the
//!   file names), in stanzas placed *before* the `router` stanzas, so FRR knows the dead interval
//!   before OSPF starts on an interface (otherwise FRR 8.4 starts its wait timer with the
//!   default 40 s); SPF throttle 0/50/500 ms, LSA min-arrival 0, LSA throttle 0;
//! - **RIP/RIPng**: `timers basic 5 15 10` (updates every 5 s; the 1–5 s delay of triggered
//!   updates is hard-coded in ripd and stays);
//! - **BGP**: keepalive 1 s / hold 3 s, coalesce time 50 ms, connect retry 1 s per neighbour.
//!
//! The lab's own lines setting these timers are removed (they would override the new ones).
//! Configuration applied by startup files through `vtysh -c` is not rewritten; such files are
//! listed among the deviations as left alone.

use faultbench_core::lab::LabDir;
use std::path::{Path, PathBuf};

/// Largest startup file read.
const MAX_CONFIG: u64 = 1024 * 1024;
/// Where a device's routing configuration is: FRR's folder, Quagga's, and Quagga's old name
/// (netkit's `etc/zebra`, which becomes `etc/quagga` in the device).
const CONFIG_FOLDERS: [&str; 3] = ["frr", "quagga", "zebra"];
/// The configuration files: FRR's and Quagga's integrated ones, and the per-daemon files.
const CONFIG_FILES: [&str; 7] = [
    "frr.conf",
    "Quagga.conf",
    "ospfd.conf",
    "ospf6d.conf",
    "ripd.conf",
    "ripngd.conf",
    "bgpd.conf",
];

/// Why a fast-timers copy could not be made.
#[derive(Debug, thiserror::Error)]
pub enum FastTimersError {
    /// The lab directory is not a valid lab.
    #[error("{0}")]
    Lab(String),
    /// Copying or rewriting failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
}

/// A temporary copy of a lab with fast timers; removed when dropped.
#[derive(Debug)]
pub struct FastTimersCopy {
    dir: PathBuf,
    /// What was changed, one line per file (`r1/etc/frr/frr.conf: …`).
    pub deviations: Vec<String>,
}

impl FastTimersCopy {
    /// The copy's directory (deploy from it).
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

impl Drop for FastTimersCopy {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Copies the lab at `lab` into a fresh temporary folder and gives its FRR configurations fast
/// timers.
pub fn fast_timers_copy(lab: &Path) -> Result<FastTimersCopy, FastTimersError> {
    let parsed = LabDir::load(lab).map_err(|e| FastTimersError::Lab(e.to_string()))?;
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let dir = std::env::temp_dir().join(format!(
        "faultbench-fast-timers-{}-{nanos:08x}",
        std::process::id()
    ));
    let io = |what: String| move |source| FastTimersError::Io { what, source };
    let mut copy = FastTimersCopy {
        dir: dir.clone(),
        deviations: Vec::new(),
    };
    super::prepare::copy_tree(lab, lab, &dir).map_err(io(format!(
        "copying {} to {}",
        lab.display(),
        dir.display()
    )))?;
    for device in &parsed.conf.devices {
        // The copy keeps the lab's links: a startup file linked to a FIFO is not waited on.
        let startup = faultbench_core::fsutil::read_regular_string_capped(
            &dir.join(format!("{}.startup", device.name)),
            MAX_CONFIG,
        )
        .unwrap_or_default();
        let mut ifaces: Vec<String> = device.interfaces.iter().map(|i| i.name()).collect();
        ifaces.extend(created_interfaces(&startup));
        if startup
            .lines()
            .any(|l| l.contains("vtysh") && l.contains("router "))
        {
            copy.deviations.push(format!(
                "{}.startup: configures routing through vtysh; its timers were left as written",
                device.name
            ));
        }
        for (folder, file) in CONFIG_FOLDERS
            .iter()
            .flat_map(|d| CONFIG_FILES.iter().map(move |f| (d, f)))
        {
            let rel = format!("{}/etc/{folder}/{file}", device.name);
            // Read without following any link (the copy keeps the lab's links, which may
            // lead out of it; `etc/zebra` linked to `etc/quagga` is then rewritten once).
            let Some(text) = crate::netns::health::read_lab_file(&dir, &rel) else {
                continue;
            };
            let path = dir.join(&rel);
            let (new, changes) = rewrite(&text, &ifaces);
            if changes.is_empty() {
                continue;
            }
            std::fs::write(&path, new).map_err(io(format!("writing {rel}")))?;
            copy.deviations
                .push(format!("{rel}: {}", changes.join("; ")));
        }
    }
    Ok(copy)
}

/// Interfaces a startup file creates: `ip link add [link DEV] [name] NAME …`, `vconfig add DEV VID`.
fn created_interfaces(startup: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in startup.lines() {
        let w: Vec<&str> = line.split_whitespace().collect();
        for (i, win) in w.windows(3).enumerate() {
            if win == ["ip", "link", "add"] {
                let mut k = i + 3;
                if w.get(k) == Some(&"link") {
                    k += 2;
                }
                if w.get(k) == Some(&"name") {
                    k += 1;
                }
                if let Some(n) = w.get(k) {
                    out.push(n.to_string());
                }
            }
            if win[0] == "vconfig"
                && win[1] == "add"
                && let Some(vid) = w.get(i + 3)
            {
                out.push(format!("{}.{vid}", win[2]));
            }
        }
    }
    out
}

/// Lines of the lab's own that set the timers this rewrite sets.
fn is_timer_line(t: &str) -> bool {
    const PREFIXES: [&str; 11] = [
        "ip ospf hello-interval",
        "ip ospf dead-interval",
        "ip ospf retransmit-interval",
        "ipv6 ospf6 hello-interval",
        "ipv6 ospf6 dead-interval",
        "ipv6 ospf6 retransmit-interval",
        "timers throttle spf",
        "timers throttle lsa",
        "timers lsa min-arrival",
        "timers basic",
        "timers bgp",
    ];
    if PREFIXES.iter().any(|p| t.starts_with(p)) || t.starts_with("coalesce-time") {
        return true;
    }
    let w: Vec<&str> = t.split_whitespace().collect();
    w.len() >= 4 && w[0] == "neighbor" && w[2] == "timers" && w[3] == "connect"
}

/// The neighbour a BGP line defines (`neighbor X remote-as …`, `neighbor X interface remote-as
/// …`, `neighbor G peer-group`).
fn defined_neighbour(t: &str) -> Option<&str> {
    let w: Vec<&str> = t.split_whitespace().collect();
    match w.as_slice() {
        ["neighbor", x, "remote-as", ..]
        | ["neighbor", x, "interface", "remote-as", ..]
        | ["neighbor", x, "peer-group"] => Some(x),
        _ => None,
    }
}

/// Rewrites one FRR configuration; returns it with what changed (empty: nothing to do).
pub fn rewrite(text: &str, ifaces: &[String]) -> (String, Vec<String>) {
    let first_word = |l: &str| l.split_whitespace().take(2).collect::<Vec<_>>().join(" ");
    let ospf = text.lines().any(|l| first_word(l) == "router ospf");
    let ospf6 = text.lines().any(|l| first_word(l) == "router ospf6");
    let mut changes = Vec::new();
    let mut out = Vec::new();
    let mut removed = 0;
    let mut ifaces: Vec<String> = ifaces.to_vec();
    for l in text.lines() {
        if let Some(name) = l
            .trim()
            .strip_prefix("interface ")
            .and_then(|n| n.split_whitespace().next())
            && !ifaces.iter().any(|i| i == name)
        {
            ifaces.push(name.to_string());
        }
    }
    let header = |t: &str| {
        t.is_empty()
            || [
                "!",
                "#",
                "frr ",
                "hostname",
                "log ",
                "password",
                "enable password",
                "service ",
                "debug ",
            ]
            .iter()
            .any(|p| t.starts_with(p))
    };
    let mut inserted = false;
    for l in text.lines() {
        let t = l.trim();
        if !inserted && !header(t) && (ospf || ospf6) {
            for i in &ifaces {
                out.push(format!("interface {i}"));
                if ospf {
                    out.extend(
                        [
                            " ip ospf hello-interval 1",
                            " ip ospf dead-interval 3",
                            " ip ospf retransmit-interval 1",
                        ]
                        .map(String::from),
                    );
                }
                if ospf6 {
                    out.extend(
                        [
                            " ipv6 ospf6 hello-interval 1",
                            " ipv6 ospf6 dead-interval 3",
                            " ipv6 ospf6 retransmit-interval 1",
                        ]
                        .map(String::from),
                    );
                }
                out.push("exit".into());
                out.push("!".into());
            }
            inserted = true;
        }
        if is_timer_line(t) {
            removed += 1;
            continue;
        }
        out.push(l.to_string());
        match first_word(t).as_str() {
            "router ospf" | "router ospf6" => {
                out.extend(
                    [" timers throttle spf 0 50 500", " timers lsa min-arrival 0"]
                        .map(String::from),
                );
                if first_word(t) == "router ospf" {
                    out.push(" timers throttle lsa all 0".into());
                }
            }
            "router rip" | "router ripng" => out.push(" timers basic 5 15 10".into()),
            "router bgp" => out.extend([" timers bgp 1 3", " coalesce-time 50"].map(String::from)),
            _ => {}
        }
        if let Some(n) = defined_neighbour(t) {
            out.push(format!(" neighbor {n} timers connect 1"));
        }
    }
    if ospf || ospf6 {
        changes.push(format!(
            "OSPF{} hello 1 s, dead 3 s, retransmit 1 s on {} (stanzas before the router stanzas); SPF throttle 0/50/500 ms, LSA min-arrival 0",
            if ospf6 { if ospf { " and OSPFv3" } else { "v3" } } else { "" },
            ifaces.join(", ")
        ));
    }
    if text
        .lines()
        .any(|l| matches!(first_word(l).as_str(), "router rip" | "router ripng"))
    {
        changes.push("RIP timers basic 5 15 10".into());
    }
    if text.lines().any(|l| first_word(l) == "router bgp") {
        changes.push("BGP keepalive 1 s, hold 3 s, coalesce 50 ms, connect retry 1 s".into());
    }
    if removed > 0 && !changes.is_empty() {
        changes.push(format!("{removed} timer lines of the lab's own removed"));
    }
    let mut s = out.join("\n");
    s.push('\n');
    (s, changes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ospf_timers_go_before_the_router_stanza_on_every_interface() {
        let conf = "frr defaults traditional\nhostname r1\n!\nrouter ospf\n network 10.0.0.0/16 area 0\n timers lsa min-arrival 1000\n!\ninterface eth0\n ip ospf hello-interval 10\n ip ospf dead-interval 40\n ip ospf cost 5\n!\n";
        let (out, changes) = rewrite(conf, &["eth0".into(), "eth1".into()]);
        let pos = |s: &str| {
            out.find(s)
                .unwrap_or_else(|| panic!("{s} missing in\n{out}"))
        };
        assert!(pos("frr defaults traditional") < pos("interface eth0"));
        assert!(
            pos("interface eth1\n ip ospf hello-interval 1\n ip ospf dead-interval 3")
                < pos("router ospf")
        );
        assert!(pos("router ospf\n timers throttle spf 0 50 500\n timers lsa min-arrival 0") > 0);
        assert!(
            !out.contains("hello-interval 10")
                && !out.contains("dead-interval 40")
                && !out.contains("min-arrival 1000")
        );
        assert!(
            out.contains(" ip ospf cost 5"),
            "other interface settings stay"
        );
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert!(changes[0].contains("on eth0, eth1"));
        assert_eq!(changes[1], "3 timer lines of the lab's own removed");
    }

    #[test]
    fn bgp_and_rip_timers() {
        let conf = "router bgp 65001\n neighbor 10.0.0.2 remote-as 65002\n neighbor G peer-group\n neighbor 10.0.0.3 peer-group G\n neighbor 10.0.0.2 timers connect 120\n!\nrouter rip\n network 10.0.0.0/8\n timers basic 30 180 120\n!\n";
        let (out, changes) = rewrite(conf, &[]);
        assert!(out.contains("router bgp 65001\n timers bgp 1 3\n coalesce-time 50\n neighbor 10.0.0.2 remote-as 65002\n neighbor 10.0.0.2 timers connect 1\n"));
        assert!(out.contains(" neighbor G peer-group\n neighbor G timers connect 1\n"));
        assert!(!out.contains("connect 120") && !out.contains("timers basic 30"));
        assert!(out.contains("router rip\n timers basic 5 15 10\n"));
        assert!(!out.contains("interface"), "no OSPF, no interface stanzas");
        assert_eq!(changes.len(), 3, "{changes:?}");
    }

    #[test]
    fn nothing_to_do_without_routing() {
        let (_, changes) = rewrite(
            "hostname h1\nip route 0.0.0.0/0 10.0.0.1\n",
            &["eth0".into()],
        );
        assert!(changes.is_empty());
    }

    #[test]
    fn interfaces_created_by_startup_files() {
        let s = "ip link add link eth0 name eth0.10 type vlan id 10\nip link add br0 type bridge\nvconfig add eth1 20\nip link add name bond0 type bond\n";
        assert_eq!(
            created_interfaces(s),
            vec!["eth0.10", "br0", "eth1.20", "bond0"]
        );
    }

    #[test]
    fn copies_rewrite_only_the_copy() {
        let lab = tempfile::tempdir().unwrap();
        std::fs::write(lab.path().join("lab.conf"), "r1[0]=A\nr2[0]=A\n").unwrap();
        std::fs::create_dir_all(lab.path().join("r1/etc/frr")).unwrap();
        let conf = "router ospf\n network 10.0.0.0/8 area 0\n!\n";
        std::fs::write(lab.path().join("r1/etc/frr/frr.conf"), conf).unwrap();
        std::fs::write(
            lab.path().join("r2.startup"),
            "vtysh -c 'conf t' -c 'router rip' -c 'network eth0'\n",
        )
        .unwrap();
        let copy = fast_timers_copy(lab.path()).unwrap();
        let dir = copy.dir().to_path_buf();
        assert_eq!(
            std::fs::read_to_string(lab.path().join("r1/etc/frr/frr.conf")).unwrap(),
            conf
        );
        let rewritten = std::fs::read_to_string(dir.join("r1/etc/frr/frr.conf")).unwrap();
        assert!(
            rewritten.starts_with("interface eth0\n ip ospf hello-interval 1"),
            "{rewritten}"
        );
        assert_eq!(copy.deviations.len(), 2, "{:?}", copy.deviations);
        assert!(
            copy.deviations
                .iter()
                .any(|d| d.starts_with("r1/etc/frr/frr.conf: OSPF hello 1 s"))
        );
        assert!(
            copy.deviations
                .iter()
                .any(|d| d.starts_with("r2.startup: configures routing through vtysh"))
        );
        drop(copy);
        assert!(!dir.exists(), "the copy is removed with its handle");
    }

    /// Quagga-era labs keep per-daemon files in `etc/quagga/` (or netkit's `etc/zebra/`):
    /// `--fast-timers` left them as written.
    #[test]
    fn quagga_per_daemon_files_get_fast_timers_too() {
        let lab = tempfile::tempdir().unwrap();
        std::fs::write(lab.path().join("lab.conf"), "r1[0]=A\nr2[0]=A\nr3[0]=A\n").unwrap();
        for d in ["r1/etc/quagga", "r2/etc/zebra", "r3/etc"] {
            std::fs::create_dir_all(lab.path().join(d)).unwrap();
        }
        let ospf = "router ospf\n network 10.0.0.0/8 area 0\n!\n";
        std::fs::write(lab.path().join("r1/etc/quagga/ospfd.conf"), ospf).unwrap();
        std::fs::write(
            lab.path().join("r1/etc/quagga/ripd.conf"),
            "router rip\n network 10.0.0.0/8\n",
        )
        .unwrap();
        std::fs::write(lab.path().join("r2/etc/zebra/ospfd.conf"), ospf).unwrap();
        // r3's etc/zebra is a link to etc/quagga, as in the image: rewritten once, under
        // its real name.
        std::fs::create_dir_all(lab.path().join("r3/etc/quagga")).unwrap();
        std::fs::write(lab.path().join("r3/etc/quagga/Quagga.conf"), ospf).unwrap();
        std::os::unix::fs::symlink("quagga", lab.path().join("r3/etc/zebra")).unwrap();
        let copy = fast_timers_copy(lab.path()).unwrap();
        let dir = copy.dir();
        for f in [
            "r1/etc/quagga/ospfd.conf",
            "r2/etc/zebra/ospfd.conf",
            "r3/etc/quagga/Quagga.conf",
        ] {
            let text = std::fs::read_to_string(dir.join(f)).unwrap();
            assert!(text.contains("ip ospf hello-interval 1"), "{f}: {text}");
        }
        let rip = std::fs::read_to_string(dir.join("r1/etc/quagga/ripd.conf")).unwrap();
        assert!(rip.contains("timers basic 5 15 10"), "{rip}");
        let mut files: Vec<&str> = copy
            .deviations
            .iter()
            .map(|d| d.split(':').next().unwrap())
            .collect();
        files.sort();
        assert_eq!(
            files,
            vec![
                "r1/etc/quagga/ospfd.conf",
                "r1/etc/quagga/ripd.conf",
                "r2/etc/zebra/ospfd.conf",
                "r3/etc/quagga/Quagga.conf"
            ]
        );
        assert_eq!(
            std::fs::read_to_string(lab.path().join("r1/etc/quagga/ospfd.conf")).unwrap(),
            ospf,
            "the lab's own file is unchanged"
        );
    }

    /// The copy keeps the lab's links; a device folder linked out of the lab (`r1/etc` →
    /// a host folder) led the rewrite to the host's file.
    #[test]
    fn files_behind_links_are_neither_read_nor_rewritten() {
        let host = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(host.path().join("frr")).unwrap();
        let conf = "router ospf\n network 10.0.0.0/8 area 0\n!\n";
        std::fs::write(host.path().join("frr/frr.conf"), conf).unwrap();
        let lab = tempfile::tempdir().unwrap();
        std::fs::write(lab.path().join("lab.conf"), "r1[0]=A\nr2[0]=A\n").unwrap();
        std::fs::create_dir_all(lab.path().join("r1")).unwrap();
        std::os::unix::fs::symlink(host.path(), lab.path().join("r1/etc")).unwrap();
        // A copy that refuses the link is as good.
        let Ok(copy) = fast_timers_copy(lab.path()) else {
            return;
        };
        assert_eq!(
            std::fs::read_to_string(host.path().join("frr/frr.conf")).unwrap(),
            conf,
            "the host's file was rewritten"
        );
        assert!(copy.deviations.is_empty(), "{:?}", copy.deviations);
    }
}
