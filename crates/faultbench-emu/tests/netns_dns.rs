//! Docker's embedded DNS on netns devices (`faultbench_emu::netns::dns`), live (needs root):
//! the sockets and `nat` rules exist in every device, queries reach the holder and get no
//! answer (as on Kathará), the holder is invisible inside the devices, and neither teardown,
//! a crashed owner (`gc`) nor devices killed behind the lab's back leave it running.

use faultbench_core::emulator::{Command, Lab, LabRequest};
use faultbench_emu::netns::{self, LabState, NetnsEmulator, ProcId};
use std::time::{Duration, Instant};

fn lab_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("lab.conf"), "h1[0]=A\nh2[0]=A\n").unwrap();
    dir
}

fn name(tag: &str) -> String {
    format!("dns-{tag}-{}", std::process::id())
}

async fn sh(lab: &dyn Lab, dev: &str, cmd: &str) -> (i32, String) {
    let o = lab
        .exec(dev, &Command::shell(cmd), Duration::from_secs(15))
        .await
        .unwrap();
    (o.exit_code.unwrap_or(-1), o.stdout)
}

fn gone_within(p: ProcId, limit: Duration) -> bool {
    let t = Instant::now();
    while t.elapsed() < limit {
        if !p.alive() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    !p.alive()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_device_has_dockers_resolver_and_teardown_leaves_nothing() {
    let dir = lab_dir();
    let n = name("up");
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()).named(&n))
        .await
        .unwrap();
    let holder = LabState::load(&n).unwrap().dns.expect("holder recorded");
    assert!(holder.alive());
    for dev in ["h1", "h2"] {
        let (_, ss) = sh(&lab, dev, "ss -Hlntu").await;
        let udp = ss
            .lines()
            .find(|l| l.starts_with("udp") && l.contains("127.0.0.11:"));
        let tcp = ss
            .lines()
            .find(|l| l.starts_with("tcp") && l.contains("127.0.0.11:"));
        let port = |l: Option<&str>| -> String {
            let l = l.unwrap_or_else(|| panic!("{dev}: no resolver socket in {ss}"));
            let local = l.split_whitespace().nth(4).unwrap();
            local.rsplit_once(':').unwrap().1.to_string()
        };
        let (up, tp) = (port(udp), port(tcp));
        let (rc, nat) = sh(&lab, dev, "iptables-save -t nat").await;
        assert_eq!(rc, 0, "{nat}");
        for want in [
            "-A OUTPUT -d 127.0.0.11/32 -j DOCKER_OUTPUT".to_string(),
            format!("--dport 53 -j DNAT --to-destination 127.0.0.11:{up}"),
            format!("--dport 53 -j DNAT --to-destination 127.0.0.11:{tp}"),
            format!("-p udp -m udp --sport {up} -j SNAT --to-source :53"),
            format!("-p tcp -m tcp --sport {tp} -j SNAT --to-source :53"),
        ] {
            assert!(nat.contains(&want), "{dev}: `{want}` missing from\n{nat}");
        }
        // Nobody in the device owns the sockets, and the holder is not among its processes.
        let (_, owners) = sh(
            &lab,
            dev,
            "ss -Hlntup | grep 127.0.0.11 | grep -c users: || true",
        )
        .await;
        assert_eq!(owners.trim(), "0");
        let (_, comms) = sh(&lab, dev, "cat /proc/[0-9]*/comm").await;
        assert!(!comms.contains("faultbench"), "{comms}");
        // resolv.conf as on Kathará (the image's empty file).
        let (_, resolv) = sh(&lab, dev, "cat /etc/resolv.conf").await;
        assert_eq!(resolv, "");
    }
    // Port 53 reaches the holder through the rules: the TCP connection is accepted (no refusal)
    // and no answer comes.
    let probe = "exec 3<>/dev/tcp/127.0.0.11/53 && echo connected; printf '\\000\\034' >&3; timeout 2 head -c1 <&3; echo rc=$?";
    let o = lab
        .exec(
            "h1",
            &Command::argv(["bash", "-c", probe]),
            Duration::from_secs(15),
        )
        .await
        .unwrap();
    let (rc, out) = (o.exit_code.unwrap_or(-1), o.stdout);
    assert_eq!(rc, 0, "{out}");
    assert!(out.contains("connected") && out.contains("rc=124"), "{out}");

    let inits: Vec<ProcId> = LabState::load(&n).unwrap().inits().collect();
    lab.teardown().await.unwrap();
    assert!(
        gone_within(holder, Duration::from_secs(5)),
        "holder left running"
    );
    assert!(inits.iter().all(|p| !p.alive()));
    assert!(!LabState::folder(&n).exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gc_kills_the_holder_of_a_crashed_owner_and_the_holder_follows_its_devices() {
    // A lab whose owner process died (a crash or a Ctrl-C without teardown): gc removes it,
    // holder included.
    let dir = lab_dir();
    let n = name("gc");
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()).named(&n))
        .await
        .unwrap();
    lab.detach().unwrap();
    drop(lab);
    let mut st = LabState::load(&n).unwrap();
    let holder = st.dns.expect("holder recorded");
    let mut dead = std::process::Command::new("true").spawn().unwrap();
    let dead_id = ProcId::of(dead.id() as i32).unwrap();
    dead.wait().unwrap();
    st.owner = Some(dead_id);
    st.save().unwrap();
    let report = netns::gc();
    assert!(report.removed.iter().any(|(x, _)| x == &n), "{report:?}");
    assert!(
        gone_within(holder, Duration::from_secs(5)),
        "gc left the holder"
    );

    // Devices killed behind the lab's back: the holder closes their sockets and exits by
    // itself (a socket would keep a dead device's network namespace alive).
    let n2 = name("self");
    let lab = NetnsEmulator::new()
        .deploy_lab(&LabRequest::new(dir.path()).named(&n2))
        .await
        .unwrap();
    let st = LabState::load(&n2).unwrap();
    let holder = st.dns.expect("holder recorded");
    for p in st.inits() {
        // SAFETY: kill(2) on this test's own lab's processes.
        unsafe { libc::kill(p.pid, libc::SIGKILL) };
    }
    assert!(
        gone_within(holder, Duration::from_secs(5)),
        "the holder outlived its devices"
    );
    lab.teardown().await.unwrap();
    assert!(!LabState::folder(&n2).exists());
}
