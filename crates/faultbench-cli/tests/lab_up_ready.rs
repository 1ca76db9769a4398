//! `faultbench lab up` on labs written for this test (`crates/faultbench-emu/tests/labs/ready/`):
//! it returns only once routing has converged, and within 1 s of it.
//!
//! An observer polls the lab from outside while `lab up` runs, independently of the readiness
//! code: every ~100 ms it records each router's *routing state* — its kernel routes
//! (`/proc/PID/net/route`) and its protocol database (the OSPF link-state database without LSA
//! ages, the RIP table without timers, the BGP sessions with their prefix counts) — and, in a
//! second loop, whether every host reaches every other host (`ping -c1 -W1`). After `lab up`
//! exits it keeps observing for longer than any pending protocol timer (OSPF retransmissions,
//! RIP's triggered-update delay), so a change that `lab up` returned too early for is seen.
//!
//! *Convergence* is the moment the routing state took its final value; the observer only knows
//! it lies between two samples, `(prev, first]`. It keeps two readings of the state:
//! - the *routing content*: kernel routes and what the protocol databases say (for OSPF, every
//!   LSA's links and prefixes, without sequence numbers and checksums);
//! - the *database activity*: the same plus every LSA instance's sequence number and checksum.
//!   FRR re-originates LSAs with unchanged content for up to ~20 s after an adjacency forms
//!   (each instance throttled by MinLSInterval, 5 s, so it cannot be seen coming); such a
//!   refresh changes the activity reading and nothing a packet or a route depends on.
//!
//! The checks allow exactly the sampling granularity:
//! - no early return: `lab up` did not exit before the routing content's `prev` (the last sample
//!   still showing older content), and the hosts reach each other in the first ping round after
//!   it exits;
//! - no late return: even the most favourable reading, `exit − first` of the database activity
//!   (which ends at or after the content), is at most 1 s.
//!
//! Host reachability alone is not the criterion: on the triangle of `ospf_broadcast` the hosts
//! reach each other over a detour seconds before the direct path is installed, and with FRR's
//! default timers link-state databases keep changing for up to a retransmission interval (5 s)
//! after that. The first moment all hosts reach each other is printed beside the rest.
//! The machine is shared: every figure is printed (`MEASURE …`) so a failure shows its numbers.
//! Needs root and FRR (as CI has).

use faultbench_emu::netns::{self, LabState, vty_command};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::Mutex;

fn labs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../faultbench-emu/tests/labs/ready")
}

fn fb() -> tokio::process::Command {
    tokio::process::Command::new(env!("CARGO_BIN_EXE_faultbench"))
}

fn down(name: &str) {
    let _ = std::process::Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(["lab", "down", name])
        .output();
}

/// Tears the lab down however the test ends.
struct Down(String);
impl Drop for Down {
    fn drop(&mut self) {
        down(&self.0);
    }
}

/// One reading of every router: the routing content, and the content with the databases'
/// activity (LSA sequence numbers and checksums).
struct Sample {
    start: Duration,
    end: Duration,
    content: String,
    activity: String,
}

/// What the observer records about one lab.
#[derive(Default)]
struct Record {
    states: Vec<Sample>,
    /// (round start, every host reached every other).
    pings: Vec<(Duration, bool)>,
}

/// One router's protocol database, through its vty socket.
#[derive(Clone)]
struct Probe {
    daemon: &'static str,
    command: &'static str,
    /// It reads LSA headers only: part of the activity reading, not of the content.
    headers_only: bool,
}

/// What an LSA carries besides its content: a new instance with the same links changes these.
const INSTANCE: [&str; 3] = ["lsaSeqNumber", "checksum", "lsaFlags"];

/// Drops what changes without the routing changing: LSA ages, uptimes, message counters,
/// RIP's timers; with `content`, also the LSA instance fields ([`INSTANCE`]).
fn normalize(text: &str, content: bool) -> String {
    const VOLATILE: [&str; 9] = [
        "lsaAge",
        "peerUptime",
        "peerUptimeMsec",
        "peerUptimeEstablishedEpoch",
        "msgRcvd",
        "msgSent",
        "peerMemory",
        "ribMemory",
        "connectionsEstablished",
    ];
    fn strip(v: &mut serde_json::Value, content: bool) {
        match v {
            serde_json::Value::Object(m) => {
                m.retain(|k, _| {
                    let k = k.as_str();
                    !VOLATILE.contains(&k) && (!content || !INSTANCE.contains(&k))
                });
                m.values_mut().for_each(|v| strip(v, content));
            }
            serde_json::Value::Array(a) => a.iter_mut().for_each(|v| strip(v, content)),
            _ => {}
        }
    }
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(mut v) => {
            strip(&mut v, content);
            v.to_string()
        }
        Err(_) => text
            .lines()
            .map(|l| {
                l.split_whitespace()
                    .filter(|w| !(w.len() == 5 && w.as_bytes()[2] == b':'))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}

/// Kernel routes without usage counters.
fn kernel_routes(pid: i32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/net/route"))
        .unwrap_or_default()
        .lines()
        .map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            format!(
                "{:?}",
                (w.first(), w.get(1), w.get(2), w.get(3), w.get(6), w.get(7))
            )
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// The PIDs of the lab's devices, once its state lists them all.
async fn pids(name: &str, stop: &AtomicBool) -> Option<Vec<(String, i32)>> {
    while !stop.load(Ordering::SeqCst) {
        if let Ok(st) = LabState::load(name)
            && st.devices.iter().all(|d| d.init.is_some())
        {
            return Some(
                st.devices
                    .iter()
                    .map(|d| (d.name.clone(), d.init.map(|p| p.pid).unwrap_or(0)))
                    .collect(),
            );
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    None
}

/// Observes routers and host pairs until `stop`.
async fn observe(
    name: String,
    t0: Instant,
    routers: Vec<&'static str>,
    probes: Vec<Probe>,
    pairs: Vec<(&'static str, &'static str)>,
    stop: Arc<AtomicBool>,
    record: Arc<Mutex<Record>>,
) {
    let Some(pids) = pids(&name, &stop).await else {
        return;
    };
    let pid = |d: &str| {
        pids.iter()
            .find(|(n, _)| n == d)
            .map(|(_, p)| *p)
            .unwrap_or(0)
    };
    let pinger = {
        let (name, stop, record) = (name.clone(), stop.clone(), record.clone());
        tokio::spawn(async move {
            let Ok(lab) = netns::attach_lab(&name) else {
                return;
            };
            let lab = Arc::new(lab);
            while !stop.load(Ordering::SeqCst) {
                let start = t0.elapsed();
                let rounds: Vec<_> = pairs
                    .iter()
                    .map(|(h, addr)| {
                        let (lab, h, addr) = (lab.clone(), h.to_string(), addr.to_string());
                        tokio::spawn(async move {
                            use faultbench_core::Lab;
                            let cmd = faultbench_core::Command::argv(["ping", "-c1", "-W1", &addr]);
                            lab.exec(&h, &cmd, Duration::from_secs(3))
                                .await
                                .is_ok_and(|o| o.success())
                        })
                    })
                    .collect();
                let mut ok = true;
                for r in rounds {
                    ok &= r.await.unwrap_or(false);
                }
                record.lock().await.pings.push((start, ok));
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    };
    while !stop.load(Ordering::SeqCst) {
        let at = t0.elapsed();
        let (mut content, mut activity) = (String::new(), String::new());
        for r in &routers {
            let p = pid(r);
            let routes = format!("{r}:{}|", kernel_routes(p));
            content.push_str(&routes);
            activity.push_str(&routes);
            for probe in &probes {
                let socket = PathBuf::from(format!("/proc/{p}/root/run/frr/{}.vty", probe.daemon));
                let text = vty_command(&socket, probe.command, Duration::from_secs(2))
                    .await
                    .unwrap_or_default();
                activity.push_str(&normalize(&text, false));
                activity.push('|');
                if !probe.headers_only {
                    content.push_str(&normalize(&text, true));
                    content.push('|');
                }
            }
        }
        record.lock().await.states.push(Sample {
            start: at,
            end: t0.elapsed(),
            content,
            activity,
        });
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let _ = pinger.await;
}

/// Brings `lab` up with `faultbench lab up` under observation and checks the return time.
async fn check_lab(
    lab: &str,
    routers: Vec<&'static str>,
    probes: Vec<Probe>,
    pairs: Vec<(&'static str, &'static str)>,
    after: Duration,
) -> String {
    check_lab_late(lab, routers, probes, pairs, after, Duration::from_secs(1)).await
}

/// [`check_lab`], allowing `lab up` to return up to `late` after the routing state went final.
async fn check_lab_late(
    lab: &str,
    routers: Vec<&'static str>,
    probes: Vec<Probe>,
    pairs: Vec<(&'static str, &'static str)>,
    after: Duration,
    late: Duration,
) -> String {
    let name = format!(
        "rdy-{}-{}",
        lab.replace('_', "").chars().take(10).collect::<String>(),
        std::process::id() % 10000
    );
    down(&name);
    let _guard = Down(name.clone());
    let stop = Arc::new(AtomicBool::new(false));
    let record = Arc::new(Mutex::new(Record::default()));
    let t0 = Instant::now();
    let observer = tokio::spawn(observe(
        name.clone(),
        t0,
        routers,
        probes,
        pairs,
        stop.clone(),
        record.clone(),
    ));
    let out = fb()
        .args(["lab", "up"])
        .arg(labs().join(lab))
        .args(["--name", &name])
        .output()
        .await
        .expect("run faultbench lab up");
    let ready = t0.elapsed();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "lab up {lab} failed: {stderr}");
    tokio::time::sleep(after).await;
    stop.store(true, Ordering::SeqCst);
    observer.await.unwrap();
    let rec = record.lock().await;
    let states = &rec.states;
    assert!(
        states.len() > 10,
        "too few samples of {lab}: {}",
        states.len()
    );
    // The final state was certainly there when the first sample showing it ended; an older one
    // was certainly there when the last sample still showing it started.
    let settled = |reading: fn(&Sample) -> &str| {
        let last = reading(states.last().unwrap());
        let first = states
            .iter()
            .rposition(|s| reading(s) != last)
            .map_or(0, |i| i + 1);
        let prev = first
            .checked_sub(1)
            .map_or(Duration::ZERO, |i| states[i].start);
        (first, prev, states[first].end)
    };
    let (first, t_prev, t_first) = settled(|s| &s.content);
    let (_, t_prev_activity, t_first_activity) = settled(|s| &s.activity);
    let reach_ok_from = rec
        .pings
        .iter()
        .rposition(|(_, ok)| !ok)
        .map(|i| i + 1)
        .unwrap_or(0);
    let t_reach = rec.pings.get(reach_ok_from).map(|(t, _)| *t);
    let after_ready = rec.pings.iter().find(|(t, _)| *t >= ready);
    let ms = |d: Duration| d.as_millis() as i128;
    let measure = format!(
        "MEASURE {lab}: lab up exited at {} ms; routing state final between {} and {} ms (database activity until {}..{} ms); hosts reach each other from {} ms; exit − convergence: {}..{} ms; {} state samples, {} ping rounds",
        ms(ready),
        ms(t_prev),
        ms(t_first),
        ms(t_prev_activity),
        ms(t_first_activity),
        t_reach.map_or("never".into(), |t| ms(t).to_string()),
        ms(ready) - ms(t_first),
        ms(ready) - ms(t_prev),
        states.len(),
        rec.pings.len(),
    );
    // What the last change was, so a failure says which router and which table moved.
    let last_change = first
        .checked_sub(1)
        .map(|i| {
            states[i]
                .content
                .split('|')
                .zip(states[first].content.split('|'))
                .filter(|(a, b)| a != b)
                .map(|(a, b)| format!("  was: {a}\n  now: {b}"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default();
    let measure = format!("{measure}\nlast change:\n{last_change}");
    eprintln!("{measure}\n{stderr}");
    assert!(
        ready >= t_prev,
        "lab up returned before routing converged: {measure}"
    );
    assert!(
        ready <= t_first_activity + late,
        "lab up returned more than {late:?} after routing converged and the databases went quiet: {measure}"
    );
    let (_, reached) =
        after_ready.unwrap_or_else(|| panic!("no ping round after lab up returned: {measure}"));
    assert!(
        reached,
        "hosts did not reach each other right after lab up returned: {measure}"
    );
    stderr
}

/// The LSA headers (activity), and the LSAs' contents by type.
fn ospf() -> Vec<Probe> {
    let content = |command| Probe {
        daemon: "ospfd",
        command,
        headers_only: false,
    };
    vec![
        Probe {
            daemon: "ospfd",
            command: "show ip ospf database json",
            headers_only: true,
        },
        content("show ip ospf database router json"),
        content("show ip ospf database network json"),
        content("show ip ospf database summary json"),
        content("show ip ospf database asbr-summary json"),
        content("show ip ospf database external json"),
    ]
}

const HOSTS: [(&str, &str); 2] = [("h1", "192.168.3.10"), ("h2", "192.168.1.10")];

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ospf_broadcast_with_the_late_dead_interval() {
    // FRR 8.4 starts the wait timer with the default dead interval (40 s) before it reads the
    // interfaces' own 3 s: nothing converges for ~40 s, and lab up must wait for all of it.
    let stderr = check_lab(
        "ospf_broadcast",
        vec!["r1", "r2", "r3"],
        ospf(),
        HOSTS.to_vec(),
        Duration::from_secs(7),
    )
    .await;
    let ms: u64 = stderr
        .split("routing converged after ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    assert!(
        ms > 30_000,
        "converged after {ms} ms: the wait timer runs ~40 s\n{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ospf_point_to_point() {
    check_lab(
        "ospf_p2p",
        vec!["r1", "r2", "r3"],
        ospf(),
        HOSTS.to_vec(),
        Duration::from_secs(7),
    )
    .await;
}

/// A lab with area border routers: readiness waits out ospfd's ABR task timer, which no state
/// shows (summaries of other areas came ~5 s after readiness ended in 1 run in 3 of Kathará's
/// `ospf_frr-complex`), so `lab up` may return up to 6.5 s after the last change here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ospf_multi_area_with_drothers() {
    check_lab_late(
        "ospf_multiarea",
        vec!["r1", "r2", "r3", "r4", "r5", "r6"],
        ospf(),
        vec![("h1", "192.168.4.10"), ("h2", "192.168.1.10")],
        Duration::from_secs(7),
        Duration::from_millis(6500 + 1000),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bgp_with_peers_that_cannot_come_up() {
    let stderr = check_lab(
        "bgp_unreachable_peer",
        vec!["r1", "r2", "r3"],
        vec![Probe {
            daemon: "bgpd",
            command: "show bgp summary json",
            headers_only: false,
        }],
        HOSTS.to_vec(),
        Duration::from_secs(4),
    )
    .await;
    assert!(
        stderr.contains("cannot come up): r1 bgpd peer 10.0.99.2"),
        "{stderr}"
    );
    assert!(
        stderr.contains("cannot come up): r3 bgpd peer 192.168.3.10: Active (h2 runs no bgpd)"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rip_with_default_timers() {
    check_lab(
        "rip",
        vec!["r1", "r2", "r3"],
        vec![Probe {
            daemon: "ripd",
            command: "show ip rip",
            headers_only: false,
        }],
        HOSTS.to_vec(),
        Duration::from_secs(8),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lab_that_does_not_converge_in_time_is_reported() {
    let name = format!("rdy-timeout-{}", std::process::id() % 10000);
    down(&name);
    let _guard = Down(name.clone());
    let lab = labs().join("ospf_broadcast");
    let out = fb()
        .args(["lab", "up"])
        .arg(&lab)
        .args(["--name", &name, "--ready-timeout", "3"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("had not converged after the 3 s ready timeout"),
        "{stderr}"
    );
    assert!(
        stderr.contains("ospfd interface eth0: Waiting"),
        "the Waiting interfaces are named: {stderr}"
    );
    assert!(stderr.contains("left running for inspection"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), name);
    down(&name);
    // --no-wait returns at once with the same kind of report, and succeeds.
    let out = fb()
        .args(["lab", "up"])
        .arg(&lab)
        .args(["--name", &name, "--no-wait"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("not waiting:") && stderr.contains("not converged: r"),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fast_timers_deploy_a_recorded_copy_and_leave_the_lab_alone() {
    let name = format!("rdy-fast-{}", std::process::id() % 10000);
    down(&name);
    let _guard = Down(name.clone());
    let lab = labs().join("ospf_broadcast");
    let conf = lab.join("r1/etc/frr/frr.conf");
    let before = std::fs::read_to_string(&conf).unwrap();
    let t = Instant::now();
    let out = fb()
        .args(["lab", "up"])
        .arg(&lab)
        .args(["--name", &name, "--fast-timers"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("--fast-timers: deploying a copy of"),
        "{stderr}"
    );
    assert!(
        stderr.contains("r1/etc/frr/frr.conf: OSPF hello 1 s, dead 3 s"),
        "{stderr}"
    );
    // Faithful, this lab takes ~40 s; with the stanzas before `router ospf` it takes seconds.
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "{:?}\n{stderr}",
        t.elapsed()
    );
    assert_eq!(
        std::fs::read_to_string(&conf).unwrap(),
        before,
        "the lab's own files are untouched"
    );
    let st = LabState::load(&name).unwrap();
    assert!(
        st.deviations
            .iter()
            .any(|d| d.starts_with("r2/etc/frr/frr.conf: OSPF hello 1 s")),
        "{:?}",
        st.deviations
    );
    assert_eq!(
        st.dir,
        std::fs::canonicalize(&lab).unwrap(),
        "the state names the lab's own directory"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lab_up_then_verify_passes_on_a_topology_with_a_baseline() {
    // The issue's case: Kath5's EIGRP probe failed right after `lab up` 3 times in 5.
    let name = format!("rdy-kath5-{}", std::process::id() % 10000);
    down(&name);
    let _guard = Down(name.clone());
    let topo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/Kath5");
    let out = fb()
        .args(["lab", "up"])
        .arg(&topo)
        .args(["--name", &name])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("baseline probes held"), "{stderr}");
    let verify = fb().args(["lab", "verify", &name]).output().await.unwrap();
    assert!(
        verify.status.success(),
        "verify right after lab up failed:\n{}",
        String::from_utf8_lossy(&verify.stdout)
    );
}

/// Issue 29: on a lab redistributing RIP into OSPF, `lab up` returned while the OSPF side held
/// the border router's AS-external LSAs but not yet their routes (ospfd computes them 1 s after
/// its SPF run): the first ping across the border failed in 5 runs of 5. Each run must reach
/// across right after `lab up` returns (and not return before the routing state is final).
/// Returning late is bounded by 1 s plus the external-route timer's 1.3 s: when the last SPF
/// run's timer changes no route, nothing shows that it has fired but the time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rip_redistributed_into_ospf_is_reachable_right_after_lab_up() {
    let mut probes = ospf();
    probes.push(Probe {
        daemon: "ripd",
        command: "show ip rip",
        headers_only: false,
    });
    for _ in 0..3 {
        let stderr = check_lab_late(
            "redistribution",
            vec!["r1", "r2", "r3"],
            probes.clone(),
            HOSTS.to_vec(),
            Duration::from_secs(7),
            Duration::from_millis(2300),
        )
        .await;
        assert!(stderr.contains("routing converged after"), "{stderr}");
    }
}

/// Issue 29: BGP neighbours whose two ends' configurations can never agree (update sources that
/// do not match, a wrong remote-as, eBGP to a loopback without ebgp-multihop) were waited for
/// until the ready timeout; they are reported at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bgp_sessions_their_configuration_cannot_bring_up_are_reported_at_once() {
    let name = format!("rdy-bgpmis-{}", std::process::id() % 10000);
    down(&name);
    let _guard = Down(name.clone());
    let t = Instant::now();
    let out = fb()
        .args(["lab", "up"])
        .arg(labs().join("bgp_misconfigured"))
        .args(["--name", &name, "--ready-timeout", "60"])
        .output()
        .await
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        t.elapsed() < Duration::from_secs(30),
        "{:?}\n{stderr}",
        t.elapsed()
    );
    for expected in [
        "r1 bgpd peer 2.2.2.2: ",
        "r1 connects from 1.1.1.1 (update-source lo), which r2 names in no neighbour statement",
        "r3 bgpd peer 10.0.23.1: ",
        "r2 is AS 65000, not the remote-as 65099 r3 configures",
        "r3 bgpd peer 2.2.2.2: ",
        "2.2.2.2 is on no subnet of r3 and the eBGP session has no ebgp-multihop",
    ] {
        assert!(stderr.contains(expected), "missing `{expected}`:\n{stderr}");
    }
}
