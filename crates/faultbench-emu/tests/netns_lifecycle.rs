//! Lifecycle robustness of the netns backend: up/down cycles in which the controlling process is
//! killed at a random moment (during deploy, while running, during teardown) leave nothing
//! behind once `gc` ran — no process in any of the labs' namespaces, no instance folder, no
//! host link or mount. Needs root.
//!
//! `FAULTBENCH_CYCLES` sets the number of cycles (default 12; the project's figure is 100:
//! `FAULTBENCH_CYCLES=100 cargo test -p faultbench-emu --test netns_lifecycle -- --nocapture`).

use faultbench_core::emulator::{Lab, LabRequest};
use faultbench_emu::netns::{self, LabState, NetnsEmulator};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const CHILD_ENV: &str = "FAULTBENCH_CYCLE_CHILD";

fn write_lab(dir: &Path) {
    let files = [
        (
            "lab.conf",
            "r1[0]=LAN\nr2[0]=LAN\nh1[0]=LAN\nr1[1]=P2P\nr2[1]=P2P\n",
        ),
        (
            "r1.startup",
            "ip addr add 10.8.0.1/24 dev eth0\nip addr add 10.8.1.1/30 dev eth1\nsystemctl start frr\n",
        ),
        (
            "r2.startup",
            "ip addr add 10.8.0.2/24 dev eth0\nip addr add 10.8.1.2/30 dev eth1\nsystemctl start frr\n",
        ),
        (
            "h1.startup",
            "ip addr add 10.8.0.10/24 dev eth0\nsleep 1000 &\n",
        ),
        ("r1/etc/frr/daemons", "zebra=yes\nospfd=yes\n"),
        ("r2/etc/frr/daemons", "zebra=yes\nospfd=yes\n"),
        (
            "r1/etc/frr/frr.conf",
            "router ospf\n network 10.8.0.0/16 area 0\n",
        ),
        (
            "r2/etc/frr/frr.conf",
            "router ospf\n network 10.8.0.0/16 area 0\n",
        ),
    ];
    for (p, text) in files {
        let p = dir.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

/// The controlled process: deploy, hold a little, tear down (unless killed first).
#[tokio::test]
#[ignore = "run by cycles_with_random_kills_leave_nothing_after_gc"]
async fn cycle_child() {
    let Ok(spec) = std::env::var(CHILD_ENV) else {
        return;
    };
    let (dir, name, hold_ms) = {
        let v: Vec<&str> = spec.split('|').collect();
        (
            PathBuf::from(v[0]),
            v[1].to_string(),
            v[2].parse::<u64>().unwrap(),
        )
    };
    let lab = NetnsEmulator::new()
        .settle_cap(Duration::from_secs(5))
        .deploy_lab(&LabRequest::new(&dir).named(name))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(hold_ms)).await;
    lab.teardown().await.unwrap();
}

/// PID-namespace inodes of a lab's device and switch processes.
fn namespaces_of(name: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Ok(st) = LabState::load(name) {
        for p in st.inits() {
            if let Ok(l) = std::fs::read_link(format!("/proc/{}/ns/pid", p.pid)) {
                out.insert(l.to_string_lossy().into_owned());
            }
        }
    }
    out
}

/// Processes (pid, comm) living in any of `namespaces` whose namespace still belongs to one of
/// our labs. Namespace inode numbers are recycled, so a tracked inode may by now belong to
/// another lab: a namespace is ours when its PID 1 carries our `FAULTBENCH_INIT` mark.
fn processes_in(namespaces: &BTreeSet<String>, prefix: &str) -> Vec<(String, String)> {
    let mut by_ns: std::collections::BTreeMap<String, Vec<(String, String, bool)>> =
        Default::default();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let pid = e.file_name().to_string_lossy().into_owned();
        if !pid.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let Ok(l) = std::fs::read_link(format!("/proc/{pid}/ns/pid")) else {
            continue;
        };
        let ns = l.to_string_lossy().into_owned();
        if !namespaces.contains(&ns) {
            continue;
        }
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        if status.contains("State:\tZ") {
            continue;
        }
        let inner_one = status
            .lines()
            .find(|l| l.starts_with("NSpid:"))
            .and_then(|l| l.split_whitespace().last())
            == Some("1");
        let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
        by_ns
            .entry(ns)
            .or_default()
            .push((pid, comm.trim().to_string(), inner_one));
    }
    let mut found = Vec::new();
    for procs in by_ns.values() {
        let ours = procs.iter().filter(|p| p.2).any(|(pid, _, _)| {
            let needle = format!("FAULTBENCH_INIT={prefix}");
            std::fs::read(format!("/proc/{pid}/environ"))
                .unwrap_or_default()
                .split(|b| *b == 0)
                .any(|v| v.starts_with(needle.as_bytes()))
        });
        if ours {
            found.extend(procs.iter().map(|(p, c, _)| (p.clone(), c.clone())));
        }
    }
    found
}

fn host_links() -> BTreeSet<String> {
    let out = std::process::Command::new("ip")
        .args(["-o", "link"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split(':').nth(1).map(|s| s.trim().to_string()))
        .collect()
}

fn host_mounts_mentioning(needle: &str) -> usize {
    std::fs::read_to_string("/proc/self/mountinfo")
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains(needle))
        .count()
}

fn marked_processes(prefix: &str) -> Vec<String> {
    let mut v = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(env) = std::fs::read(e.path().join("environ")) {
            let needle = format!("FAULTBENCH_INIT={prefix}");
            if env
                .split(|b| *b == 0)
                .any(|var| var.starts_with(needle.as_bytes()))
            {
                v.push(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    v
}

#[test]
fn cycles_with_random_kills_leave_nothing_after_gc() {
    let cycles: usize = std::env::var("FAULTBENCH_CYCLES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(12);
    let dir = tempfile::tempdir().unwrap();
    write_lab(dir.path());
    let prefix = format!("cycle-{}-", std::process::id());
    let links_before = host_links();
    let mounts_before = host_mounts_mentioning("faultbench");
    let exe = std::env::current_exe().unwrap();
    let mut seed = u64::from(std::process::id()) ^ 0x9e37_79b9_7f4a_7c15;
    let mut rand = move |n: u64| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed % n
    };
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let (mut killed, mut finished) = (0, 0);
    let started = Instant::now();
    for i in 0..cycles {
        let name = format!("{prefix}{i}");
        let hold = rand(800);
        let mut child = std::process::Command::new(&exe)
            .args(["--exact", "cycle_child", "--ignored", "--test-threads", "1"])
            .env(CHILD_ENV, format!("{}|{name}|{hold}", dir.path().display()))
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Kill somewhere between "just started" and "well after deploy"; one cycle in four runs
        // to completion.
        let deadline = if i % 4 == 3 {
            None
        } else {
            Some(Instant::now() + Duration::from_millis(rand(3500)))
        };
        loop {
            seen.extend(namespaces_of(&name));
            if let Some(status) = child.try_wait().unwrap() {
                assert!(
                    status.success(),
                    "cycle {i}: the controlling process failed: {status}"
                );
                finished += 1;
                break;
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                child.kill().unwrap();
                child.wait().unwrap();
                killed += 1;
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        seen.extend(namespaces_of(&name));
    }
    let report = netns::gc();
    eprintln!(
        "{cycles} cycles ({killed} killed, {finished} completed) in {:?}; gc removed {} labs, killed {} stray processes; {} namespaces tracked",
        started.elapsed(),
        report.removed.len(),
        report.killed.len(),
        seen.len()
    );
    // Nothing of ours is left: no process in any namespace of those labs, no marked PID 1, no
    // instance folder, no host link or mount.
    let left = processes_in(&seen, &prefix);
    assert!(
        left.is_empty(),
        "processes left in lab namespaces: {left:?}"
    );
    assert!(marked_processes(&prefix).is_empty());
    let folders: Vec<String> = netns::list()
        .into_iter()
        .map(|s| s.name)
        .filter(|n| n.starts_with(&prefix))
        .collect();
    assert!(folders.is_empty(), "instance folders left: {folders:?}");
    let leftover_dirs: Vec<_> = std::fs::read_dir(netns::LABS_DIR)
        .map(|rd| {
            rd.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default();
    assert!(leftover_dirs.is_empty(), "{leftover_dirs:?}");
    let new_links: Vec<_> = host_links().difference(&links_before).cloned().collect();
    assert!(
        new_links.is_empty(),
        "links appeared in the host namespace: {new_links:?}"
    );
    assert_eq!(host_mounts_mentioning("faultbench"), mounts_before);
    assert!(killed > 0 && finished > 0);
}
