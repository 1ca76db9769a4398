//! The installed plugin under a real Docker engine: `docker network create -d
//! kathara/katharanp:amd64`, containers from the device image, a ping across the collision
//! domain, the far end's carrier, and a MAC given as Kathará gives it.
//!
//! Needs the engine (`scripts/install-deps.sh --kathara`); ignored by a plain `cargo test` and run
//! with `--ignored` by the Kathará stage of scripts/test.sh. Without the engine it fails, naming
//! the command that sets it up.

use std::process::{Command, Output};

const SETUP: &str =
    "run `sudo ./scripts/install-deps.sh --kathara` (docs/kathara.md, \"A real Kathará engine\")";

fn docker(args: &[&str]) -> Output {
    Command::new("docker")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run docker ({e}): {SETUP}"))
}

fn ok(args: &[&str]) -> String {
    let out = docker(args);
    assert!(
        out.status.success(),
        "docker {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Removes what the test made, even when it fails half-way.
struct Cleanup {
    containers: Vec<String>,
    networks: Vec<String>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        for c in &self.containers {
            let _ = docker(&["rm", "-f", c]);
        }
        for n in &self.networks {
            let _ = docker(&["network", "rm", n]);
        }
    }
}

fn require_engine() {
    let info = docker(&["info", "--format", "{{.ServerVersion}}"]);
    assert!(
        info.status.success(),
        "dockerd does not answer: {SETUP}\n{}",
        String::from_utf8_lossy(&info.stderr)
    );
    for plugin in ["kathara/katharanp:amd64", "kathara/katharanp_vde:amd64"] {
        let out = docker(&["plugin", "inspect", "-f", "{{.Enabled}}", plugin]);
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "true",
            "plugin {plugin} is not installed and enabled: {SETUP}"
        );
    }
    assert!(
        docker(&["image", "inspect", "kathara/base"])
            .status
            .success(),
        "no kathara/base image: {SETUP}"
    );
}

#[test]
#[ignore = "needs the Kathará engine; run with --ignored by scripts/test.sh's Kathará stage"]
fn two_containers_on_a_plugin_network_ping_and_keep_carrier_like_a_switch() {
    require_engine();
    let tag = format!("fbnp-live-{}", std::process::id());
    let (net, net2) = (format!("{tag}-a"), format!("{tag}-b"));
    let (c1, c2) = (format!("{tag}-1"), format!("{tag}-2"));
    let mut clean = Cleanup {
        containers: Vec::new(),
        networks: Vec::new(),
    };
    for n in [&net, &net2] {
        ok(&[
            "network",
            "create",
            "-d",
            "kathara/katharanp:amd64",
            "--ipam-driver",
            "null",
            n,
        ]);
        clean.networks.push(n.clone());
    }
    for c in [&c1, &c2] {
        ok(&[
            "run",
            "-d",
            "--name",
            c,
            "--network",
            &net,
            "--cap-add",
            "NET_ADMIN",
            "kathara/base",
            "sleep",
            "300",
        ]);
        clean.containers.push(c.clone());
    }
    // A MAC as Kathará passes it (`kathara.mac_addr` endpoint option) on a second interface.
    ok(&[
        "network",
        "connect",
        "--driver-opt",
        "kathara.mac_addr=02:fb:00:00:00:42",
        &net2,
        &c1,
    ]);
    let eth1 = ok(&["exec", &c1, "cat", "/sys/class/net/eth1/address"]);
    assert_eq!(eth1.trim(), "02:fb:00:00:00:42");

    ok(&[
        "exec",
        &c1,
        "ip",
        "addr",
        "add",
        "10.77.0.1/24",
        "dev",
        "eth0",
    ]);
    ok(&[
        "exec",
        &c2,
        "ip",
        "addr",
        "add",
        "10.77.0.2/24",
        "dev",
        "eth0",
    ]);
    let ping = ok(&[
        "exec",
        &c1,
        "ping",
        "-c",
        "3",
        "-i",
        "0.2",
        "-W",
        "2",
        "10.77.0.2",
    ]);
    assert!(ping.contains(" 0% packet loss"), "{ping}");

    // A collision domain is a switch: one end going down leaves the other's carrier up.
    ok(&["exec", &c2, "ip", "link", "set", "eth0", "down"]);
    let far = ok(&["exec", &c1, "ip", "-br", "link", "show", "eth0"]);
    assert!(far.contains("LOWER_UP"), "{far}");

    // The FORWARD accept exists for the bridge while the network does.
    let id = ok(&["network", "inspect", "-f", "{{.Id}}", &net]);
    let bridge = format!("kt-{}", &id.trim()[..12]);
    let rules = Command::new("iptables")
        .args(["-S", "FORWARD"])
        .output()
        .unwrap();
    let rules = String::from_utf8_lossy(&rules.stdout);
    assert!(
        rules.contains(&format!("-i {bridge} -o {bridge} -j ACCEPT")),
        "{rules}"
    );
    drop(clean);
    let rules = Command::new("iptables")
        .args(["-S", "FORWARD"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&rules.stdout).contains(&bridge));
}
