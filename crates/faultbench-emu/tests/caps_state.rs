//! The shims' per-namespace state when `/run` is shared (`ip netns exec`): a namespace that
//! gets a deleted namespace's inode must not inherit its emulated netem or VLAN filtering, and
//! the folders of deleted namespaces are collected — never those of live ones.

use faultbench_emu::hostcaps::{Feature, HostCaps};
use faultbench_emu::shims;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const ROOT: &str = "/run/faultbench-netshim";

/// Shims that emulate netem, dummy and bridge VLAN filtering whatever this kernel has.
struct Shims(PathBuf);

impl Shims {
    fn install(tag: &str) -> Shims {
        assert_eq!(
            // SAFETY: geteuid has no preconditions.
            unsafe { libc::geteuid() },
            0,
            "capability tests need root (they run as root here and in CI): run them as root, e.g. `sudo ./scripts/test.sh`"
        );
        let caps = HostCaps::probe()
            .with(Feature::Netem, false)
            .with(Feature::Dummy, false)
            .with(Feature::BridgeVlanFiltering, false);
        assert!(
            caps.can_emulate_loss() && caps.can_emulate_bridge_vlans() && caps.can_emulate_links()
        );
        let dir = std::env::temp_dir().join(format!("fb-shims-st{tag}{}", std::process::id()));
        shims::install_with_binary(
            &dir,
            &caps,
            Path::new(env!("CARGO_BIN_EXE_faultbench-netshim")),
        )
        .expect("install shims");
        Shims(dir)
    }
}

impl Drop for Shims {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A named network namespace used through `ip netns exec`, i.e. with the host's `/run`.
struct HostNs {
    name: String,
    shims: PathBuf,
    /// State folders to remove on drop (this namespace's and planted ones).
    folders: Vec<PathBuf>,
    deleted: bool,
}

impl HostNs {
    fn new(shims: &Shims, tag: &str) -> HostNs {
        let name = format!("fbst{}-{tag}", std::process::id());
        run(&["ip", "netns", "add", &name]);
        run(&["ip", "-n", &name, "link", "set", "lo", "up"]);
        HostNs {
            name,
            shims: shims.0.clone(),
            folders: Vec::new(),
            deleted: false,
        }
    }

    fn sh(&self, script: &str) -> Output {
        let path = format!(
            "PATH={}:/usr/sbin:/usr/bin:/sbin:/bin",
            self.shims.display()
        );
        Command::new("ip")
            .args([
                "netns", "exec", &self.name, "env", "-i", &path, "sh", "-c", script,
            ])
            .output()
            .expect("ip netns exec")
    }

    fn ok(&self, script: &str) -> String {
        let o = self.sh(script);
        assert!(
            o.status.success(),
            "in {}: `{script}` failed:\n{}{}",
            self.name,
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    fn inode(&self) -> u64 {
        let l = self.ok("readlink /proc/self/ns/net");
        l.trim()
            .strip_prefix("net:[")
            .and_then(|r| r.strip_suffix(']'))
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("bad namespace link {l:?}"))
    }

    /// This namespace's state folder.
    fn state_dir(&mut self) -> PathBuf {
        let o = self.sh("faultbench-netshim state-dir");
        let dir = if o.status.success() {
            PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
        } else {
            // A netshim from before namespace cookies: the folder is the inode.
            Path::new(ROOT).join(self.inode().to_string())
        };
        self.folders.push(dir.clone());
        dir
    }

    /// Kill everything in the namespace (SIGKILL: daemons leave their records, as when a
    /// device dies) and delete it.
    fn kill(&mut self) {
        if std::mem::replace(&mut self.deleted, true) {
            return;
        }
        for _ in 0..200 {
            let pids = Command::new("ip")
                .args(["netns", "pids", &self.name])
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .unwrap_or_default();
            if pids.trim().is_empty() {
                break;
            }
            for p in pids.split_whitespace() {
                let _ = Command::new("kill").args(["-9", p]).status();
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let _ = Command::new("ip")
            .args(["netns", "del", &self.name])
            .status();
    }
}

impl Drop for HostNs {
    fn drop(&mut self) {
        self.kill();
        for f in &self.folders {
            let _ = std::fs::remove_dir_all(f);
        }
    }
}

fn run(args: &[&str]) {
    let o = Command::new(args[0]).args(&args[1..]).output().unwrap();
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// The cookie part of a state folder name (`<inode>-<cookie>`).
fn cookie_of(folder: &Path) -> Option<String> {
    let name = folder.file_name()?.to_string_lossy().into_owned();
    name.split_once('-').map(|(_, c)| c.to_string())
}

/// Copy a folder (what a dead namespace left) to `to`.
fn plant(from: &Path, to: &Path) {
    if from != to {
        run(&[
            "cp",
            "-a",
            &from.display().to_string(),
            &to.display().to_string(),
        ]);
    }
}

/// Make a folder and everything in it look untouched for an hour.
fn backdate(folder: &Path) {
    run(&[
        "find",
        &folder.display().to_string(),
        "-exec",
        "touch",
        "-h",
        "-d",
        "1 hour ago",
        "{}",
        "+",
    ]);
}

#[test]
fn a_namespace_with_a_reused_inode_starts_clean() {
    let shims = Shims::install("r");
    // A: a filtering bridge (ifindex 2) and netem on lo (ifindex 1), then A dies.
    let mut a = HostNs::new(&shims, "a");
    a.ok(
        "ip link add br0 type bridge vlan_filtering 1 && ip link set br0 up && \
         tc qdisc add dev lo root netem loss 30%",
    );
    assert!(
        a.ok("tc qdisc show dev lo")
            .contains("qdisc netem 8001: root")
    );
    assert!(a.ok("ip -d link show br0").contains(" vlan_filtering 1 "));
    let a_folder = a.state_dir();
    assert!(
        a_folder.join("netem/lo").is_file(),
        "{}",
        a_folder.display()
    );
    a.kill();

    // B: the same devices at the same indexes, and A's leftovers where B's inode finds them
    // (what happens when the kernel gives B the inode A had).
    let mut b = HostNs::new(&shims, "b");
    b.ok("ip link add br0 type bridge && ip link set br0 up");
    assert!(b.ok("ip -o link show br0").starts_with("2: br0:"));
    let b_inode = b.inode();
    let legacy = Path::new(ROOT).join(b_inode.to_string());
    plant(&a_folder, &legacy);
    b.folders.push(legacy.clone());
    let reused = cookie_of(&a_folder).map(|c| Path::new(ROOT).join(format!("{b_inode}-{c}")));
    if let Some(r) = &reused {
        plant(&a_folder, r);
        b.folders.push(r.clone());
    }

    // B sees none of A's emulations: exactly what the real tools say.
    let shim_tc = b.ok("tc qdisc show dev lo");
    assert_eq!(shim_tc, b.ok("/usr/sbin/tc qdisc show dev lo"));
    assert!(!shim_tc.contains("netem"), "{shim_tc}");
    let d = b.ok("ip -d link show br0");
    assert!(
        d.contains(" vlan_filtering 0 "),
        "B inherited A's VLAN filtering:\n{d}"
    );
    let j: serde_json::Value = serde_json::from_str(&b.ok("ip -j -d link show br0")).unwrap();
    assert_eq!(j[0]["linkinfo"]["info_data"]["vlan_filtering"], 0, "{j}");

    // B's first own state drops the dead namespace's folder with B's inode, and works.
    b.ok("tc qdisc add dev br0 root netem loss 5%");
    let b_folder = b.state_dir();
    assert!(b_folder.join("netem/br0").is_file());
    assert!(
        !b_folder.join("netem/lo").exists(),
        "B's state holds A's records"
    );
    if let Some(r) = &reused {
        assert!(!r.exists(), "{} survived B's first write", r.display());
    }
    assert!(b.ok("tc qdisc show dev br0").contains("loss 5%"));
    assert!(!b.ok("tc qdisc show dev lo").contains("netem"));
}

#[test]
fn folders_of_deleted_namespaces_are_collected_and_live_ones_kept() {
    let shims = Shims::install("g");
    let mut live = HostNs::new(&shims, "live");
    live.ok(
        "ip link add d0 type dummy && ip link set d0 up && tc qdisc add dev d0 root netem loss 20%",
    );
    let live_folder = live.state_dir();
    let mut dead = HostNs::new(&shims, "dead");
    dead.ok("ip link add d0 type dummy && tc qdisc add dev lo root netem loss 10%");
    let dead_folder = dead.state_dir();
    dead.kill();
    assert!(dead_folder.is_dir(), "nothing should have removed it yet");
    // A dead namespace's folder under a live namespace's inode (an inode reused since).
    let reused = cookie_of(&dead_folder)
        .map(|c| Path::new(ROOT).join(format!("{}-{c}", live.inode())))
        .expect("state folders carry the namespace cookie");
    plant(&dead_folder, &reused);
    live.folders.push(reused.clone());
    for f in [&live_folder, &dead_folder, &reused] {
        backdate(f);
    }
    // A folder younger than the grace period is left for later even if its namespace is gone.
    let mut fresh = HostNs::new(&shims, "fresh");
    fresh.ok("tc qdisc add dev lo root netem loss 1%");
    let fresh_folder = fresh.state_dir();
    fresh.kill();

    let removed = shims::collect_stale_state();
    assert!(
        !dead_folder.exists(),
        "folder of a deleted namespace kept: {removed:?}"
    );
    assert!(
        !reused.exists(),
        "folder under a reused inode kept: {removed:?}"
    );
    for c in &removed {
        assert!(c.folder != live_folder && c.folder != fresh_folder, "{c:?}");
        if c.folder == dead_folder {
            assert_eq!(c.why, "its network namespace is gone");
        }
        if c.folder == reused {
            assert_eq!(c.why, "its namespace's inode belongs to a newer namespace");
        }
    }
    assert!(
        live_folder.join("links/d0").is_file(),
        "a live namespace lost its state"
    );
    assert!(
        fresh_folder.is_dir(),
        "a folder inside the grace period was removed"
    );
    // The live namespace's emulations still answer from their records.
    assert!(live.ok("tc qdisc show dev d0").contains("loss 20%"));
    assert!(live.ok("ip -d link show d0").contains("\n    dummy "));

    // A new namespace's first shim collects what is stale by then, the same way.
    backdate(&fresh_folder);
    let mut newcomer = HostNs::new(&shims, "new");
    newcomer.ok("tc qdisc add dev lo root netem loss 2%");
    assert!(newcomer.state_dir().join("netem/lo").is_file());
    assert!(
        !fresh_folder.exists(),
        "the first write in a new namespace did not collect"
    );
    assert!(live_folder.is_dir());
    drop(newcomer);
}
