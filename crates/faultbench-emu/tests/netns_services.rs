//! Service control inside netns devices (`tests/labs/services`): isc-dhcp-server behind
//! isc-dhcp-relay, dnsmasq and a keepalived VRRP pair, started through `systemctl`, `service`
//! and `/etc/init.d/*` as Kathará's images allow. Needs root and the packages of
//! `scripts/install-deps.sh`.

use faultbench_core::emulator::{Command, ExecOutput, Lab, LabRequest};
use faultbench_emu::netns::{NetnsEmulator, NetnsLab};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(20);

async fn run(lab: &NetnsLab, device: &str, script: &str) -> ExecOutput {
    lab.exec(device, &Command::shell(script), T)
        .await
        .unwrap_or_else(|e| panic!("{device}: {script}: {e}"))
}

async fn eventually(lab: &NetnsLab, device: &str, script: &str, limit: Duration) {
    let t = Instant::now();
    loop {
        let out = run(lab, device, script).await;
        if out.success() {
            return;
        }
        assert!(
            t.elapsed() < limit,
            "{device}: `{script}` still failing: {out:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn dhcp_relay_dnsmasq_and_vrrp_run_and_obey_service_control() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/labs/services");
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir))
        .await
        .unwrap();
    assert!(lab.warnings().is_empty(), "{:?}", lab.warnings());
    // Readiness waited for the VRRP election: the VIP is in place when deploy returns.
    assert!(lab.readiness().converged, "{:?}", lab.readiness());
    let vip = run(&lab, "k1", "ip -4 addr show eth0").await.stdout;
    assert!(
        vip.contains("10.3.0.254"),
        "VIP not on k1 after deploy: {vip}"
    );

    // Started by the startups: each through its own control path.
    for (dev, unit, proc_name) in [
        ("srv", "isc-dhcp-server", "dhcpd"),
        ("relay", "isc-dhcp-relay", "dhcrelay"),
        ("dm", "dnsmasq", "dnsmasq"),
        ("k1", "keepalived", "keepalived"),
    ] {
        let out = run(&lab, dev, &format!("systemctl is-active {unit}")).await;
        assert_eq!(out.stdout, "active\n", "{dev}: {out:?}");
        assert!(
            run(&lab, dev, &format!("pgrep -x {proc_name}"))
                .await
                .success()
        );
        let st = run(&lab, dev, &format!("systemctl status {unit}.service")).await;
        assert!(
            st.stdout.contains("Active: active (running)"),
            "{}",
            st.stdout
        );
    }

    // DHCP across the relay, with the DNS server from the lease.
    let out = run(
        &lab,
        "client",
        "timeout 15 dhclient -1 eth0 && ip -4 -o addr show eth0",
    )
    .await;
    assert!(out.stdout.contains("10.2.0."), "{out:?}");
    assert!(
        run(&lab, "client", "grep -q 10.1.0.3 /etc/resolv.conf")
            .await
            .success()
    );
    assert_eq!(
        run(&lab, "relay", "dig +short @10.1.0.3 srv.svc")
            .await
            .stdout,
        "10.1.0.2\n"
    );

    // VRRP: the higher priority holds the VIP; stopping it moves the VIP, starting it takes it back.
    assert!(run(&lab, "obs", "ping -c1 -W1 10.3.0.254").await.success());
    let out = run(&lab, "k1", "systemctl stop keepalived").await;
    assert!(out.success(), "{out:?}");
    let out = run(&lab, "k1", "systemctl is-active keepalived").await;
    assert_eq!(
        (out.stdout.as_str(), out.exit_code),
        ("inactive\n", Some(3))
    );
    eventually(
        &lab,
        "k2",
        "ip -4 addr show eth0 | grep -q 10.3.0.254",
        Duration::from_secs(10),
    )
    .await;
    assert!(run(&lab, "k1", "service keepalived start").await.success());
    eventually(
        &lab,
        "k1",
        "ip -4 addr show eth0 | grep -q 10.3.0.254",
        Duration::from_secs(10),
    )
    .await;
    // `systemctl restart` of a running keepalived: it takes more than the SysV script's one
    // second to exit, and the unit must still be running afterwards (with a new process).
    let before = run(&lab, "k1", "pgrep -x -o keepalived").await.stdout;
    let out = run(&lab, "k1", "systemctl restart keepalived").await;
    assert!(out.success(), "{out:?}");
    let out = run(&lab, "k1", "systemctl is-active keepalived").await;
    assert_eq!((out.stdout.as_str(), out.exit_code), ("active\n", Some(0)));
    let after = run(&lab, "k1", "pgrep -x -o keepalived").await.stdout;
    assert_ne!(before, after, "restart starts a new keepalived");
    eventually(
        &lab,
        "k1",
        "ip -4 addr show eth0 | grep -q 10.3.0.254",
        Duration::from_secs(10),
    )
    .await;

    // A killed daemon stays dead; `restart` brings it back.
    assert!(run(&lab, "dm", "pkill -9 dnsmasq").await.success());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(!run(&lab, "dm", "pgrep -x dnsmasq").await.success());
    assert_eq!(
        run(&lab, "dm", "systemctl is-active dnsmasq")
            .await
            .exit_code,
        Some(3)
    );
    assert!(run(&lab, "dm", "systemctl restart dnsmasq").await.success());
    eventually(
        &lab,
        "relay",
        "dig +short +time=1 +tries=1 @10.1.0.3 srv.svc | grep -q 10.1.0.2",
        Duration::from_secs(5),
    )
    .await;

    // Unknown units fail as systemctl does.
    let out = run(&lab, "srv", "systemctl start nosuch").await;
    assert_eq!(out.exit_code, Some(5), "{out:?}");
    assert!(out.stderr.contains("nosuch.service not found"), "{out:?}");
    assert_eq!(
        run(&lab, "srv", "systemctl status nosuch").await.exit_code,
        Some(4)
    );

    lab.teardown().await.unwrap();
}

#[tokio::test]
async fn frr_is_controlled_like_in_kathara_images() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        ("lab.conf", "r1[0]=A\nr2[0]=A\n"),
        (
            "r1.startup",
            "ip addr add 10.0.0.1/24 dev eth0\nservice frr start\nvtysh -c 'conf t' -c 'router ospf' -c 'network 10.0.0.0/24 area 0'\n",
        ),
        (
            "r2.startup",
            "ip addr add 10.0.0.2/24 dev eth0\n/etc/init.d/frr start\n",
        ),
        ("r1/etc/frr/daemons", "zebra=yes\nospfd=yes\nripd=yes\n"),
        ("r2/etc/frr/daemons", "zebra=yes\nospfd=no\n"),
    ];
    for (p, text) in files {
        let p = dir.path().join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()))
        .await
        .unwrap();
    // The daemons file decides; zebra and staticd always run; watchfrr watches them, started
    // by FRR's packaged init script as in Kathará's FRR image.
    let ps = run(&lab, "r1", "ps -e -o comm=").await.stdout;
    for d in ["watchfrr", "zebra", "ospfd", "ripd", "staticd"] {
        assert!(ps.lines().any(|l| l == d), "{d} missing on r1: {ps}");
    }
    let args = run(&lab, "r1", "ps -o args= -C watchfrr").await.stdout;
    assert!(
        args.contains("watchfrr -d -F traditional zebra ripd ospfd staticd"),
        "{args}"
    );
    let ps2 = run(&lab, "r2", "ps -e -o comm=").await.stdout;
    assert!(ps2.contains("zebra") && !ps2.contains("ospfd"), "{ps2}");
    // Startup `vtysh -c` configuration reached the device's own ospfd; the host's frr.conf did
    // not leak in, and /etc/frr belongs to frr.
    let rc = run(&lab, "r1", "vtysh -c 'show running-config'")
        .await
        .stdout;
    assert!(
        rc.contains("network 10.0.0.0/24 area 0") && rc.contains("hostname r1"),
        "{rc}"
    );
    assert!(
        run(&lab, "r2", "test ! -e /etc/frr/frr.conf")
            .await
            .success()
    );
    assert_eq!(
        run(&lab, "r1", "stat -c %U /etc/frr/daemons").await.stdout,
        "frr\n"
    );
    // A killed daemon comes back: watchfrr restarts it (after about 5 s).
    assert!(run(&lab, "r1", "pkill -9 -x ripd").await.success());
    assert!(
        run(
            &lab,
            "r1",
            "for i in $(seq 100); do pgrep -x ripd && exit 0; sleep 0.2; done; exit 1"
        )
        .await
        .success(),
        "watchfrr did not restart ripd"
    );
    // With watchfrr killed first it stays down, and the packaged script's status says so.
    assert!(
        run(
            &lab,
            "r1",
            "pkill -9 -x watchfrr; pkill -9 -x ripd; sleep 7; ! pgrep -x ripd"
        )
        .await
        .success()
    );
    let st = run(&lab, "r1", "/etc/init.d/frr status").await;
    assert_eq!(
        st.exit_code,
        Some(1),
        "status must report the stopped daemon: {st:?}"
    );
    // `start` brings watchfrr back, which starts the missing daemon and leaves the others.
    let zebra = run(&lab, "r1", "pgrep -x zebra").await.stdout;
    assert!(
        run(
            &lab,
            "r1",
            "/etc/init.d/frr start && for i in $(seq 50); do pgrep -x ripd && exit 0; sleep 0.2; done; exit 1"
        )
        .await
        .success()
    );
    assert!(run(&lab, "r1", "pgrep -x watchfrr").await.success());
    assert_eq!(run(&lab, "r1", "pgrep -x zebra").await.stdout, zebra);
    assert!(run(&lab, "r1", "systemctl stop frr").await.success());
    assert_eq!(
        run(&lab, "r1", "systemctl is-active frr").await.stdout,
        "inactive\n"
    );
    lab.teardown().await.unwrap();
}
