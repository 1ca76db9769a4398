//! The netns backend on a real multi-router lab (`tests/labs/ospf_bgp`): OSPF and BGP converge,
//! hosts reach each other by name, a fault is injected and reverted, and teardown leaves
//! nothing behind. Needs root and the packages of `scripts/install-deps.sh`.

use faultbench_core::emulator::{Command, Lab, LabRequest};
use faultbench_core::lab::{Baseline, ProbeKind, verify};
use faultbench_core::snapshot::{Aspect, AspectState};
use faultbench_emu::netns::{self, NetnsEmulator, NetnsLab};
use std::path::PathBuf;
use std::time::{Duration, Instant};

const T: Duration = Duration::from_secs(10);

fn lab_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/labs/ospf_bgp")
}

/// Runs `script` on `device` and asserts it succeeded.
async fn sh_ok(lab: &NetnsLab, device: &str, script: &str) {
    let out = lab.exec(device, &Command::shell(script), T).await.unwrap();
    assert!(out.success(), "{device}: {script}: {out:?}");
}

async fn sh(lab: &NetnsLab, device: &str, script: &str) -> String {
    let out = lab
        .exec(device, &Command::shell(script), T)
        .await
        .unwrap_or_else(|e| panic!("{device}: {script}: {e}"));
    out.stdout
}

/// Polls `script` on `device` until it exits 0 (or panics after `limit`).
async fn eventually(lab: &NetnsLab, device: &str, script: &str, limit: Duration) -> Duration {
    let t = Instant::now();
    loop {
        let out = lab.exec(device, &Command::shell(script), T).await.unwrap();
        if out.success() {
            return t.elapsed();
        }
        assert!(
            t.elapsed() < limit,
            "{device}: `{script}` still failing after {limit:?}: {out:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Everything of a lab that could leak: its folder, its device processes.
fn assert_gone(name: &str, pids: &[i32]) {
    assert!(
        !netns::LabState::folder(name).exists(),
        "lab folder of {name} left behind"
    );
    for pid in pids {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        assert!(
            stat.is_empty() || stat.contains(") Z "),
            "device process {pid} survived teardown: {stat}"
        );
    }
    assert!(
        !netns::list().iter().any(|s| s.name == name),
        "{name} still listed"
    );
}

#[tokio::test]
async fn ospf_bgp_lab_converges_serves_breaks_heals_and_leaves_nothing() {
    let t0 = Instant::now();
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(lab_dir()))
        .await
        .unwrap();
    let up = t0.elapsed();
    assert!(
        lab.readiness().converged,
        "did not settle: {:?}",
        lab.readiness()
    );
    let name = lab.name().to_string();
    let pids: Vec<i32> = lab
        .devices()
        .iter()
        .filter_map(|d| lab.device_pid(d))
        .collect();
    assert_eq!(pids.len(), 7);

    // Converged at once: routing probes of the baseline hold on the first try (readiness waited
    // for OSPF and BGP); services (named loads its zone in the background) get a few seconds.
    let baseline = Baseline::load(lab_dir().join("baseline.toml")).unwrap();
    let results = verify(&lab, &baseline, T).await;
    for r in results
        .iter()
        .filter(|r| r.probe.kind != ProbeKind::Service)
    {
        assert!(
            r.passed,
            "baseline probe `{}` failed right after deploy (up in {up:?}): {}",
            r.probe.name, r.detail
        );
    }
    let t = Instant::now();
    loop {
        let results = verify(&lab, &baseline, T).await;
        let failed: Vec<_> = results.iter().filter(|r| !r.passed).collect();
        if failed.is_empty() {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(10),
            "baseline still failing: {:?}",
            failed
                .iter()
                .map(|r| (&r.probe.name, &r.detail))
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }

    // OSPF and both BGP sessions, as the daemons see them.
    assert!(
        sh(&lab, "r1", "vtysh -c 'show ip ospf neighbor'")
            .await
            .contains("Full")
    );
    let bgp = sh(&lab, "r2", "vtysh -c 'show bgp summary'").await;
    assert!(
        bgp.contains("1.1.1.1") && bgp.contains("10.0.23.2"),
        "{bgp}"
    );
    // The readiness wait reads bgpd's running configuration over the vty socket (for the
    // coalesce time); that needs enable mode, which a raw vty session does not start in.
    let sock = PathBuf::from(format!(
        "/proc/{}/root/run/frr/bgpd.vty",
        lab.device_pid("r2").unwrap()
    ));
    let view = faultbench_emu::netns::vty_command(&sock, "show running-config", T)
        .await
        .unwrap();
    assert!(view.contains("Unknown command"), "{view}");
    let conf = faultbench_emu::netns::vty_enable_command(&sock, "show running-config", T)
        .await
        .unwrap();
    assert!(conf.contains("router bgp"), "{conf}");

    // Snapshots read FRR's configuration from the daemons' vty sockets; the items are the
    // ones `vtysh -c 'show running-config'` gives, on every device.
    for device in lab.devices() {
        let direct = lab.device_state(&device, T).await;
        let via_vtysh = faultbench_core::snapshot::read_device(&lab, &device, T).await;
        assert_eq!(
            direct.aspects.get(&Aspect::FrrConfig),
            via_vtysh.aspects.get(&Aspect::FrrConfig),
            "{device}"
        );
    }
    assert!(
        lab.device_state("r2", T)
            .await
            .items(Aspect::FrrConfig)
            .is_some_and(|i| i.contains_key("router bgp 65001")),
        "r2's configuration was read"
    );
    // A link an agent put in place of a vty socket is resolved inside the device, never on
    // the host: a host socket of the linked name gets no connection.
    let host_sock = PathBuf::from(format!("/tmp/fb-vty-escape-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&host_sock);
    let listener = std::os::unix::net::UnixListener::bind(&host_sock).unwrap();
    listener.set_nonblocking(true).unwrap();
    let swap = format!(
        "mv /run/frr/bgpd.vty /run/frr/bgpd.vty.real && ln -s {} /run/frr/bgpd.vty",
        host_sock.display()
    );
    sh_ok(&lab, "r2", &swap).await;
    let state = lab.device_state("r2", T).await;
    let accepted = listener.accept();
    sh_ok(
        &lab,
        "r2",
        "rm /run/frr/bgpd.vty && mv /run/frr/bgpd.vty.real /run/frr/bgpd.vty",
    )
    .await;
    let _ = std::fs::remove_file(&host_sock);
    assert!(accepted.is_err(), "the snapshot connected to a host socket");
    match state.aspects.get(&Aspect::FrrConfig) {
        Some(AspectState::Failed(why)) => assert!(why.starts_with("bgpd: vty socket"), "{why}"),
        other => panic!("a replaced socket must fail the aspect: {other:?}"),
    }
    let r3 = sh(&lab, "r3", "ip route").await;
    assert!(
        r3.lines()
            .any(|l| l.starts_with("192.168.1.0/24") && l.contains("via 10.0.23.1")),
        "{r3}"
    );
    // Names resolve through bind9 and the web page comes from apache2.
    assert_eq!(
        sh(&lab, "pc3", "dig +short web.lab").await.trim(),
        "192.168.3.80"
    );
    assert!(
        sh(&lab, "pc1", "curl -s -m 2 http://web.lab/")
            .await
            .contains("faultbench test web server")
    );
    // Hostnames are the device names, also in FRR's prompt.
    assert_eq!(sh(&lab, "r2", "hostname").await, "r2\n");
    assert!(
        sh(
            &lab,
            "r2",
            "vtysh -c 'show running-config' | grep ^hostname"
        )
        .await
        .contains("r2")
    );

    // Fault: watchfrr, then ospfd killed on r2 (with watchfrr alive, ospfd would be back in
    // ~5 s). It stays dead; r1 loses r2's loopback, so the iBGP session and with it the route
    // to LAN3 go away.
    let out = lab
        .exec(
            "r2",
            &Command::shell("pkill -9 watchfrr; pkill -9 ospfd"),
            T,
        )
        .await
        .unwrap();
    assert!(out.success(), "{out:?}");
    eventually(
        &lab,
        "pc1",
        "! ping -c1 -W0.3 192.168.3.10",
        Duration::from_secs(15),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let pg = lab
        .exec("r2", &Command::shell("pgrep -x ospfd"), T)
        .await
        .unwrap();
    assert_eq!(pg.exit_code, Some(1), "ospfd came back by itself: {pg:?}");
    assert!(
        sh(&lab, "r2", "ps -e -o stat=,comm=")
            .await
            .lines()
            .all(|l| !l.starts_with('Z')),
        "zombie left in r2"
    );
    let status = lab
        .exec("r2", &Command::shell("systemctl status frr"), T)
        .await
        .unwrap();
    assert!(!status.stdout.contains("ospfd"), "{}", status.stdout);

    // Revert: FRR's init script starts watchfrr again, which starts the missing daemon and
    // applies its part of frr.conf.
    let out = lab
        .exec("r2", &Command::shell("/etc/init.d/frr start"), T)
        .await
        .unwrap();
    assert!(out.success(), "{out:?}");
    let healed = eventually(
        &lab,
        "pc1",
        "ping -c1 -W0.3 192.168.3.10",
        Duration::from_secs(30),
    )
    .await;
    eprintln!("up {up:?}; healed {healed:?} after restarting ospfd");

    // Teardown is complete and idempotent.
    let t1 = Instant::now();
    lab.teardown().await.unwrap();
    eprintln!("teardown {:?}", t1.elapsed());
    lab.teardown().await.unwrap();
    assert_gone(&name, &pids);
}

#[tokio::test]
async fn two_instances_of_one_lab_are_isolated() {
    let emu = NetnsEmulator::new();
    let req = LabRequest::new(lab_dir());
    let (a, b) = tokio::join!(emu.deploy_lab(&req), emu.deploy_lab(&req));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_ne!(a.name(), b.name());
    // Same addresses, same router-ids: breaking one must not touch the other.
    a.exec("r2", &Command::shell("pkill -9 bgpd"), T)
        .await
        .unwrap();
    eventually(
        &a,
        "pc1",
        "! ping -c1 -W0.3 192.168.3.10",
        Duration::from_secs(15),
    )
    .await;
    let ok = b
        .exec("pc1", &Command::shell("ping -c3 -W1 -i0.2 192.168.3.10"), T)
        .await
        .unwrap();
    assert!(ok.success(), "the other instance broke too: {ok:?}");
    assert!(
        sh(&b, "r2", "pgrep -x bgpd")
            .await
            .trim()
            .parse::<u32>()
            .is_ok()
    );
    let (na, nb) = (a.name().to_string(), b.name().to_string());
    a.teardown().await.unwrap();
    assert!(
        b.exec("pc1", &Command::shell("true"), T)
            .await
            .unwrap()
            .success()
    );
    b.teardown().await.unwrap();
    assert_gone(&na, &[]);
    assert_gone(&nb, &[]);
}

/// With teardowns deferred (what a benchmark asks for), `teardown` returns once every device's
/// PID 1 has its `SIGKILL` and no command reaches the lab any more; the processes end and the
/// folder goes in the background, and `flush_teardowns` returns only when they have.
#[tokio::test]
async fn deferred_teardown_returns_signalled_and_flush_leaves_nothing() {
    use faultbench_core::emulator::Emulator;
    let emu = NetnsEmulator::new();
    assert!(emu.defer_teardowns(), "netns defers teardowns when asked");
    let lab = emu.deploy_lab(&LabRequest::new(lab_dir())).await.unwrap();
    let name = lab.name().to_string();
    let devices = lab.devices();
    let pids: Vec<i32> = devices.iter().filter_map(|d| lab.device_pid(d)).collect();
    assert_eq!(pids.len(), devices.len(), "every device has its PID 1");
    lab.teardown().await.unwrap();
    // Signalled: every PID 1 is dying or gone (SIGKILL is pending or delivered), and the lab
    // refuses commands.
    for pid in &pids {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
        let field = |name: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(name))
                .map(|v| v.trim().to_string())
                .unwrap_or_default()
        };
        // A kill(2) to a process is pending in its shared set; SIGKILL is bit 8.
        let kill_pending = u64::from_str_radix(&field("ShdPnd:"), 16).is_ok_and(|m| m & 0x100 != 0);
        let ended = status.is_empty() || ["Z", "X"].iter().any(|s| field("State:").starts_with(s));
        assert!(ended || kill_pending, "PID 1 {pid} not signalled: {status}");
    }
    assert!(lab.exec("pc1", &Command::shell("true"), T).await.is_err());
    assert!(emu.flush_teardowns().await.is_empty());
    assert_gone(&name, &pids);
}

/// The shell-free state reader (`faultbench-netshim devstate`, what snapshots use when device
/// commands go through the entry) reads the same items as the snapshot script, device by
/// device, aspect by aspect — with a packet-filter rule added, and
/// through the `ip`/`nft` wrappers where this kernel needs them.
#[tokio::test]
async fn shell_free_state_reader_reads_what_the_snapshot_script_reads() {
    use faultbench_core::snapshot::{self, SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG};
    assert!(
        matches!(netns::device_spawn(), netns::DeviceSpawn::Entry(_)),
        "the entry program must be found for this test to compare anything: {}",
        netns::device_spawn()
    );
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(lab_dir()))
        .await
        .unwrap();
    sh_ok(&lab, "r1", "nft add table inet t1 && nft add chain inet t1 c '{ type filter hook input priority 0; }' && nft add rule inet t1 c tcp dport 179 drop").await;
    let mut compared = 0;
    for device in lab.devices() {
        let via_reader = lab.device_state(&device, T).await;
        let via_script =
            snapshot::read_device_with(&lab, &device, SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG, T).await;
        assert!(
            !via_reader
                .aspects
                .values()
                .any(|a| matches!(a, AspectState::Failed(_))),
            "{device}: {via_reader:?}"
        );
        // Every aspect but FRR's configuration (read over the vty sockets either way) and the
        // mock networks' own.
        let shell_read = Aspect::ALL
            .into_iter()
            .filter(|a| !matches!(a, Aspect::FrrConfig | Aspect::ModelStates));
        for aspect in shell_read {
            assert_eq!(
                via_reader.aspects.get(&aspect),
                via_script.aspects.get(&aspect),
                "{device} {aspect}"
            );
            compared += 1;
        }
        // Where zebra runs, both leave FRR's configuration to the vty reads (the reader's
        // state has it filled in, the script's says it is pending).
        assert_eq!(
            via_script.frr_config_pending(),
            !via_reader.frr_daemons().is_empty(),
            "{device}"
        );
    }
    assert!(compared >= 6 * 6, "{compared} aspects compared");
    // A second read of an unchanged ruleset reuses the rules read above (the nftables
    // generation is the same); a changed one is listed again.
    let reused = lab.filter_rules_reused();
    let r1 = lab.device_state("r1", T).await;
    assert_eq!(
        lab.filter_rules_reused(),
        reused + 1,
        "unchanged rules reused"
    );
    let rules = r1.items(Aspect::PacketFilter).unwrap();
    assert!(
        rules.keys().any(|k| k.contains("dport 179 drop")),
        "the rule is read: {rules:?}"
    );
    sh_ok(&lab, "r1", "nft add rule inet t1 c tcp dport 22 drop").await;
    let r1 = lab.device_state("r1", T).await;
    assert_eq!(
        lab.filter_rules_reused(),
        reused + 1,
        "changed rules listed"
    );
    let rules = r1.items(Aspect::PacketFilter).unwrap();
    assert!(
        rules.keys().any(|k| k.contains("dport 22 drop")),
        "the new rule is read: {rules:?}"
    );
    let script =
        snapshot::read_device_with(&lab, "r1", SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG, T).await;
    assert_eq!(
        r1.aspects.get(&Aspect::PacketFilter),
        script.aspects.get(&Aspect::PacketFilter)
    );
    lab.teardown().await.unwrap();
}
