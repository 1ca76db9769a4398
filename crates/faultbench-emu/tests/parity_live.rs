//! `faultbench_emu::parity` on real labs: one lab on two netns instances shows no difference,
//! and differences planted on one side are named (needs root, FRR).

use faultbench_core::emulator::{Command, Emulator, Lab, LabRequest, LinkModel};
use faultbench_emu::netns::NetnsEmulator;
use faultbench_emu::parity::{self, ParityOptions};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

fn simple_bgp() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../topologies/simple_bgp")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn netns_against_netns_shows_nothing_and_planted_differences_are_named() {
    let emu = NetnsEmulator::new();
    let req = LabRequest::new(simple_bgp());
    let (a, b) = tokio::join!(emu.deploy(&req), emu.deploy(&req));
    let (a, b) = (a.unwrap(), b.unwrap());
    let opts = ParityOptions {
        settle: Duration::from_secs(20),
        ..ParityOptions::default()
    };
    let same = parity::compare_running(a.as_ref(), b.as_ref(), ("a", "b"), &opts).await;
    assert_eq!(same.devices, 4);
    assert!(
        same.differences.is_empty(),
        "{:?}",
        same.differences
            .iter()
            .map(|d| d.line("a", "b"))
            .collect::<Vec<_>>()
    );

    // As in a Kathará container, device processes lack CAP_SYS_PTRACE: `ss -p` names no owner
    // for FRR's sockets (its daemons run as `frr`).
    let t0 = Duration::from_secs(10);
    let ss = a
        .exec(
            "router1",
            &Command::shell("ss -Hltnp; grep CapBnd /proc/self/status"),
            t0,
        )
        .await
        .unwrap();
    assert!(ss.stdout.contains(":179"), "{ss:?}");
    assert!(!ss.stdout.contains("users:"), "{ss:?}");
    let bnd = ss
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("CapBnd:"))
        .map(|h| u64::from_str_radix(h.trim(), 16).unwrap())
        .unwrap();
    assert_eq!(
        bnd & (1 << 19),
        0,
        "CAP_SYS_PTRACE still in the bounding set"
    );

    // Plant: an extra address on router1 of b, and staticd stopped on router2 of b (watchfrr
    // first, or it would start staticd again).
    let t = Duration::from_secs(10);
    let sh = |c: &str| Command::shell(c);
    assert!(
        b.exec("router1", &sh("ip addr add 10.99.0.1/32 dev lo"), t)
            .await
            .unwrap()
            .success()
    );
    assert!(
        b.exec(
            "router2",
            &sh("pkill -9 -x watchfrr; pkill -9 -x staticd"),
            t
        )
        .await
        .unwrap()
        .success()
    );
    // And Docker's resolver rules flushed on pc1 of b: its emulation is compared like the rest.
    assert!(
        b.exec("pc1", &sh("iptables -t nat -F DOCKER_OUTPUT"), t)
            .await
            .unwrap()
            .success()
    );
    let quick = ParityOptions {
        settle: Duration::ZERO,
        ..opts
    };
    let planted = parity::compare_running(a.as_ref(), b.as_ref(), ("a", "b"), &quick).await;
    let lines: Vec<String> = planted
        .differences
        .iter()
        .map(|d| d.line("a", "b"))
        .collect();
    assert!(
        lines.contains(&"router1 addresses: lo 10.99.0.1/32 only on b".to_string()),
        "{lines:?}"
    );
    let dnat = lines
        .iter()
        .filter(|l| {
            l.starts_with("pc1 packet_filter: table ip nat › chain DOCKER_OUTPUT")
                && l.contains("dport 53 counter dnat to 127.0.0.11:*eph only on a")
        })
        .count();
    assert_eq!(dnat, 2, "{lines:?}");
    for gone in ["staticd", "watchfrr"] {
        assert!(
            lines.contains(&format!("router2 frr_daemons: {gone} (running) only on a")),
            "{lines:?}"
        );
        assert!(
            lines.contains(&format!("router2 processes: {gone} only on a")),
            "{lines:?}"
        );
    }
    a.teardown().await.unwrap();
    b.teardown().await.unwrap();
}

/// The library's `run` deploys on both emulators and tears both down; the default link
/// model is Kathará's switch, so a device setting its interface down leaves the far end's
/// carrier up, while the veth model drops it.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn far_end_carrier_follows_the_link_model() {
    let t = Duration::from_secs(10);
    for (model, far_end_carrier) in [(LinkModel::Switch, true), (LinkModel::Veth, false)] {
        let lab = NetnsEmulator::new()
            .link_model(model)
            .deploy_lab(&LabRequest::new(simple_bgp()))
            .await
            .unwrap();
        // The veth model is a deviation from Kathará, recorded in the lab's state.
        assert_eq!(
            lab.deviations()
                .iter()
                .any(|d| d.starts_with("link model veth")),
            model == LinkModel::Veth,
            "{:?}",
            lab.deviations()
        );
        let down = lab
            .exec("pc2", &Command::shell("ip link set eth0 down"), t)
            .await
            .unwrap();
        assert!(down.success(), "{down:?}");
        tokio::time::sleep(Duration::from_millis(300)).await;
        let link = lab
            .exec("router2", &Command::shell("ip -o link show eth1"), t)
            .await
            .unwrap()
            .stdout;
        assert_eq!(
            !link.contains("NO-CARRIER") && link.contains("LOWER_UP"),
            far_end_carrier,
            "{model}: {link}"
        );
        lab.teardown().await.unwrap();
    }
    let report = parity::run(
        Arc::new(NetnsEmulator::new()),
        Arc::new(NetnsEmulator::new()),
        &LabRequest::new(simple_bgp()),
        &ParityOptions::default(),
    )
    .await
    .unwrap();
    assert!(report.differences.is_empty(), "{:?}", report.differences);
    assert_eq!(
        (report.a.as_str(), report.b.as_str()),
        ("netns-a", "netns-b")
    );
}
