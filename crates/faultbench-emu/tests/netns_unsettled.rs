//! Labs whose own configuration keeps them from ever converging are named as such at once,
//! instead of being called converged or waited for until the readiness timeout (issue 29):
//! a route that flaps for ever, and the same address on two devices of one link. Needs root
//! and FRR (`scripts/install-deps.sh`). Each lab is owned by its test: a failing assertion
//! drops it, which tears it down.

use faultbench_core::emulator::{Lab, LabRequest};
use faultbench_emu::netns::{NetnsEmulator, NetnsLab, ProblemKind};
use std::path::Path;
use std::time::Duration;

/// The readiness cap of these labs: both must end well before it.
const CAP: Duration = Duration::from_secs(90);

fn write_lab(dir: &Path, files: &[(&str, &str)]) {
    for (p, text) in files {
        let p = dir.join(p);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
}

async fn deploy(dir: &Path, quiet: Duration) -> NetnsLab {
    NetnsEmulator::new()
        .settle_cap(CAP)
        .settle_quiet(quiet)
        .deploy_lab(&LabRequest::new(dir))
        .await
        .unwrap()
}

/// The default quiet period of readiness.
const QUIET: Duration = Duration::from_millis(200);

const DAEMONS_ZEBRA_ONLY: &str = "zebra=yes\nvtysh_enable=yes\nzebra_options=\"  -A 127.0.0.1 -s 90000000\"\nstaticd_options=\"-A 127.0.0.1\"\n";

/// A startup loop adds and removes a route every 20–180 ms (random, so that polls cannot
/// keep seeing it in one state), for ever. Readiness must name the route (device and prefix)
/// as flapping, stop waiting for it, and not call the lab converged. The quiet period is 2 s
/// here (200 ms by default), so that the swings are seen even when a loaded host stalls the
/// loop for a moment; without flap detection the wait then runs into the cap. (A slower flap
/// between whose swings the quiet period fits, as in the census lab, is caught by the hold of
/// routes that swung back: see the `flap` module's unit tests.)
#[tokio::test]
async fn a_route_that_flaps_for_ever_is_reported_not_called_converged() {
    let dir = tempfile::tempdir().unwrap();
    write_lab(
        dir.path(),
        &[
            ("lab.conf", "r1[0]=A\nr1[image]=\"kathara/frr\"\nh1[0]=A\n"),
            ("r1/etc/frr/daemons", DAEMONS_ZEBRA_ONLY),
            ("r1/etc/frr/frr.conf", "hostname r1\n!\n"),
            (
                "r1.startup",
                "ip address add 10.0.0.1/24 dev eth0\nsystemctl start frr\n\
                 (while true; do ip route add 10.9.9.0/24 via 10.0.0.2; sleep 0.0$((RANDOM % 9 + 1)); ip route del 10.9.9.0/24; sleep 0.0$((RANDOM % 9 + 1)); done) </dev/null >/dev/null 2>&1 &\n",
            ),
            ("h1.startup", "ip address add 10.0.0.2/24 dev eth0\n"),
        ],
    );
    let lab = deploy(dir.path(), Duration::from_secs(2)).await;
    let r = lab.readiness();
    assert!(!r.converged, "a flapping route was called converged: {r:?}");
    assert!(r.pending.is_empty(), "{r:?}");
    assert_eq!(r.flapping.len(), 1, "{r:?}");
    let f = &r.flapping[0];
    assert_eq!((f.device.as_str(), f.daemon.as_str()), ("r1", "kernel"));
    assert_eq!(f.subject, "route 10.9.9.0/24");
    assert!(f.state.starts_with("flapping"), "{f}");
    assert!(
        r.waited_ms < CAP.as_millis() as u64,
        "waited until the cap: {r:?}"
    );
    // The connected route of the same device, which never changed, is not named.
    assert!(!f.subject.contains("10.0.0.0/24"));
    lab.teardown().await.unwrap();
}

/// The same lab without the loop: nothing flaps, the lab converges.
#[tokio::test]
async fn a_route_added_once_does_not_flap() {
    let dir = tempfile::tempdir().unwrap();
    write_lab(
        dir.path(),
        &[
            ("lab.conf", "r1[0]=A\nr1[image]=\"kathara/frr\"\nh1[0]=A\n"),
            ("r1/etc/frr/daemons", DAEMONS_ZEBRA_ONLY),
            ("r1/etc/frr/frr.conf", "hostname r1\n!\n"),
            (
                "r1.startup",
                "ip address add 10.0.0.1/24 dev eth0\nsystemctl start frr\nip route add 10.9.9.0/24 via 10.0.0.2\n",
            ),
            ("h1.startup", "ip address add 10.0.0.2/24 dev eth0\n"),
        ],
    );
    let lab = deploy(dir.path(), QUIET).await;
    let r = lab.readiness();
    assert!(r.converged && r.flapping.is_empty(), "{r:?}");
    lab.teardown().await.unwrap();
}

/// Two OSPF routers give themselves one address on one link: their adjacency can never form.
/// Readiness names the pair instead of waiting for it, and the startup checks name the
/// address with both holders.
#[tokio::test]
async fn a_duplicate_address_on_a_link_is_named_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let daemons = "zebra=yes\nospfd=yes\nvtysh_enable=yes\nzebra_options=\"  -A 127.0.0.1 -s 90000000\"\nospfd_options=\"  -A 127.0.0.1\"\nstaticd_options=\"-A 127.0.0.1\"\n";
    let ospf = "router ospf\n network 10.0.0.0/24 area 0\n!\n";
    write_lab(
        dir.path(),
        &[
            (
                "lab.conf",
                "r1[0]=A\nr1[image]=\"kathara/frr\"\nr2[0]=A\nr2[image]=\"kathara/frr\"\nh1[0]=A\n",
            ),
            ("r1/etc/frr/daemons", daemons),
            ("r1/etc/frr/frr.conf", &format!("hostname r1\n!\n{ospf}")),
            ("r2/etc/frr/daemons", daemons),
            ("r2/etc/frr/frr.conf", &format!("hostname r2\n!\n{ospf}")),
            (
                "r1.startup",
                "ip address add 10.0.0.1/24 dev eth0\nsystemctl start frr\n",
            ),
            (
                "r2.startup",
                "ip address add 10.0.0.1/24 dev eth0\nsystemctl start frr\n",
            ),
            ("h1.startup", "ip address add 10.0.0.10/24 dev eth0\n"),
        ],
    );
    let lab = deploy(dir.path(), QUIET).await;
    let r = lab.readiness();
    assert!(r.converged, "{r:?}");
    assert!(
        r.waited_ms < CAP.as_millis() as u64,
        "waited until the cap: {r:?}"
    );
    assert!(
        r.unable
            .iter()
            .any(|u| u.to_string().contains("r1 ospfd eth0 and r2 eth0")
                && u.state.contains("10.0.0.1")),
        "{:?}",
        r.unable
    );
    let dups: Vec<_> = lab
        .startup_problems()
        .iter()
        .filter(|p| p.kind == ProblemKind::DuplicateAddress)
        .collect();
    assert_eq!(dups.len(), 1, "{:?}", lab.startup_problems());
    assert_eq!(dups[0].device, "r1");
    assert!(
        dups[0]
            .what
            .starts_with("r1 eth0 has 10.0.0.1/24, and so does r2 eth0 (10.0.0.1/24)"),
        "{}",
        dups[0]
    );
    lab.teardown().await.unwrap();
}
