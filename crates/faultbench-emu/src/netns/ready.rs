//! Readiness: waiting, with a bound, until routing has settled.
//!
//! After the startup files ran, the lab polls every FRR daemon directly on its vty socket
//! (`/run/frr/<daemon>.vty` inside the device, reached from the host through
//! `/proc/<pid>/root`) — the same protocol `vtysh` speaks, without `vtysh`'s 30 ms start-up:
//! a command terminated by NUL, an answer terminated by three NULs and a status byte.
//!
//! The lab is *settled* when, at once,
//! - no OSPF neighbour is in a transitional state (`Init`, `ExStart`, `Exchange`, `Loading`, …)
//!   and no OSPF interface is still `Waiting` for its DR election,
//! - every BGP peer is `Established` (or administratively down),
//! - and every router's route summary and BGP prefix counts have not changed for a quiet
//!   period: 200 ms by default, or longer when a router's OSPF timers could still delay an update
//!   (LSA minimum interval + SPF delay and hold time), so a lab with FRR's default timers is not
//!   declared converged between two throttled LSA originations; with BGP peers the coalesce
//!   time plus 500 ms (1.5 s with FRR's default), because a new session's first UPDATE waits
//!   for the coalesce timer; with RIP
//!   5.5 s, because RIP's triggered updates wait up to 5 s; with keepalived, until no address
//!   has moved for three VRRP advertisement intervals plus 2 s (a backup's takeover time).
//!
//! The wait is capped; a lab that does not settle in time is reported (with what is still
//! pending) instead of waiting forever. A lab without routing daemons is settled at once.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How the readiness wait ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Readiness {
    /// Routing settled before the cap.
    pub converged: bool,
    /// Time spent waiting, milliseconds.
    pub waited_ms: u64,
    /// What was still unsettled at the end (empty when converged).
    pub pending: Vec<String>,
}

/// Sends one command to an FRR daemon's vty socket and returns its output. The session
/// starts in FRR's view mode, where `show running-config` is unknown: use
/// [`vty_enable_command`] for that.
pub async fn vty_command(
    socket: &Path,
    command: &str,
    timeout: Duration,
) -> std::io::Result<String> {
    vty_session(socket, &[command], timeout).await
}

/// Like [`vty_command`], after `enable` on the same session (what `vtysh` does first).
pub async fn vty_enable_command(
    socket: &Path,
    command: &str,
    timeout: Duration,
) -> std::io::Result<String> {
    vty_session(socket, &["enable", command], timeout).await
}

/// Runs `commands` in order on one vty session; returns the last one's output.
async fn vty_session(
    socket: &Path,
    commands: &[&str],
    timeout: Duration,
) -> std::io::Result<String> {
    let work = async {
        let mut s = tokio::net::UnixStream::connect(socket).await?;
        let mut last = String::new();
        for command in commands {
            let mut msg = command.as_bytes().to_vec();
            msg.push(0);
            s.write_all(&msg).await?;
            let mut out = Vec::new();
            let mut buf = [0u8; 16 * 1024];
            loop {
                let n = s.read(&mut buf).await?;
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
                let l = out.len();
                if l >= 4 && out[l - 4..l - 1] == [0, 0, 0] {
                    out.truncate(l - 4);
                    break;
                }
            }
            last = String::from_utf8_lossy(&out).into_owned();
        }
        Ok(last)
    };
    tokio::time::timeout(timeout, work)
        .await
        .unwrap_or_else(|_| {
            Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                "vty timeout",
            ))
        })
}

/// One device to watch.
#[derive(Debug, Clone)]
pub(crate) struct Watched {
    pub device: String,
    /// Host PID of the device's PID 1 (its files are under `/proc/<pid>/root`).
    pub pid: i32,
    /// Host path of the device's `/run/frr`.
    pub frr_dir: PathBuf,
    /// keepalived runs: the longest time a VRRP backup waits before taking over.
    pub vrrp_wait: Option<Duration>,
    /// The device's OSPF timers, read once (see [`Sample::ospf_delay`]).
    pub ospf_delay: std::sync::OnceLock<Duration>,
    /// The quiet period its BGP needs, read once from bgpd's coalesce time (see [`bgp_quiet`]).
    pub bgp_quiet: std::sync::OnceLock<Duration>,
}

impl Watched {
    /// The device, if it runs something whose convergence takes time (FRR, keepalived).
    pub(crate) fn probe(device: &str, pid: i32) -> Option<Self> {
        let root = PathBuf::from(format!("/proc/{pid}/root"));
        let frr_dir = root.join("run/frr");
        let vrrp_wait = root
            .join("run/keepalived.pid")
            .exists()
            .then(|| vrrp_takeover(&root.join("etc/keepalived/keepalived.conf")));
        (frr_dir.is_dir() || vrrp_wait.is_some()).then(|| Watched {
            device: device.to_string(),
            pid,
            frr_dir,
            vrrp_wait,
            ospf_delay: std::sync::OnceLock::new(),
            bgp_quiet: std::sync::OnceLock::new(),
        })
    }
}

/// A VRRP backup takes over after three advertisement intervals plus a skew below one second;
/// the longest `advert_int` of keepalived.conf decides (1 s when unset), plus a margin.
fn vrrp_takeover(conf: &std::path::Path) -> Duration {
    let advert = std::fs::read_to_string(conf)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some("advert_int"))
                .then(|| w.next().and_then(|v| v.parse::<f64>().ok()))
                .flatten()
        })
        .fold(1.0f64, f64::max);
    Duration::from_secs_f64(3.0 * advert + 2.0)
}

const TRANSITIONAL: [&str; 6] = ["Init", "ExStart", "Exchange", "Loading", "Attempt", "Down"];
const QUERY_TIMEOUT: Duration = Duration::from_secs(2);

/// What one poll of one device found.
#[derive(Debug, Default)]
struct Sample {
    pending: Vec<String>,
    fingerprint: String,
    /// Longest delay the device's OSPF timers may put between two updates.
    ospf_delay: Duration,
    /// The device has BGP peers.
    bgp: bool,
    /// The quiet period its BGP needs (when `bgp`).
    bgp_quiet: Duration,
    /// The device runs ripd.
    rip: bool,
    /// The device runs keepalived (see [`Watched::vrrp_wait`]).
    vrrp_wait: Option<Duration>,
}

/// Quiet period when BGP runs with FRR's default coalesce time: a new session's first UPDATE
/// waits for the subgroup coalesce time (1 s by default), so each hop of a BGP route may lag
/// that long behind the session.
const BGP_QUIET: Duration = Duration::from_millis(1500);

/// The quiet period for a bgpd whose running configuration is `config`: its coalesce time
/// (`coalesce-time MS` under `router bgp`; 1 s when unset) plus a 500 ms margin.
fn bgp_quiet(config: &str) -> Duration {
    config
        .lines()
        .find_map(|l| {
            l.trim()
                .strip_prefix("coalesce-time ")
                .and_then(|v| v.trim().parse::<u64>().ok())
        })
        .map_or(BGP_QUIET, |ms| Duration::from_millis(ms + 500))
}
/// Quiet period when RIP runs: triggered updates wait a random 1 to 5 s (RFC 2453, 3.10.1).
const RIP_QUIET: Duration = Duration::from_millis(5500);

fn find_strings<'a>(v: &'a Value, key: &str, out: &mut Vec<(String, &'a str)>, path: &str) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if k == key
                    && let Some(s) = x.as_str()
                {
                    out.push((path.to_string(), s));
                }
                find_strings(x, key, out, k);
            }
        }
        Value::Array(a) => {
            for x in a {
                find_strings(x, key, out, path);
            }
        }
        _ => {}
    }
}

async fn sample(w: &Watched) -> Sample {
    let mut s = Sample::default();
    let sock = |d: &str| w.frr_dir.join(format!("{d}.vty"));
    let q = |d: &'static str, c: &'static str| {
        let p = sock(d);
        async move {
            if !p.exists() {
                return None;
            }
            vty_command(&p, c, QUERY_TIMEOUT).await.ok()
        }
    };
    s.rip = sock("ripd").exists();
    s.vrrp_wait = w.vrrp_wait;
    if w.vrrp_wait.is_some() {
        // The device's routing table, local addresses included: a VIP moving shows here.
        let trie = std::fs::read(format!("/proc/{}/net/fib_trie", w.pid)).unwrap_or_default();
        let mut h = std::collections::hash_map::DefaultHasher::new();
        std::hash::Hash::hash(&trie, &mut h);
        s.fingerprint
            .push_str(&format!("fib={};", std::hash::Hasher::finish(&h)));
    }
    if let Some(out) = q("zebra", "show ip route summary json").await {
        // Keep only the per-type counts: the summary has no timestamps, but be robust anyway.
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        s.fingerprint.push_str(&v["routes"].to_string());
        s.fingerprint.push_str(&v["routesTotal"].to_string());
    }
    // Interfaces can only be waiting for a DR election while neighbours sit in 2-Way.
    let mut two_way = false;
    if let Some(out) = q("ospfd", "show ip ospf neighbor json").await {
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        let mut states = Vec::new();
        find_strings(&v, "nbrState", &mut states, "");
        for (nbr, st) in states {
            s.fingerprint.push_str(&format!("{nbr}={st},"));
            let head = st.split('/').next().unwrap_or(st);
            two_way |= head == "2-Way";
            if TRANSITIONAL.contains(&head) {
                s.pending
                    .push(format!("{}: OSPF neighbour {nbr} is {st}", w.device));
            }
        }
    }
    if two_way && let Some(out) = q("ospfd", "show ip ospf interface json").await {
        // An interface still waiting for its DR election matters only when other routers are
        // on the segment (a passive LAN interface waits too, but is advertised as a stub).
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        if let Some(ifaces) = v["interfaces"].as_object() {
            for (iface, i) in ifaces {
                if i["state"].as_str() == Some("Waiting") && i["nbrCount"].as_u64().unwrap_or(0) > 0
                {
                    s.pending.push(format!(
                        "{}: OSPF interface {iface} is waiting for its DR election",
                        w.device
                    ));
                }
            }
        }
    }
    if let Some(d) = w.ospf_delay.get() {
        s.ospf_delay = *d;
    } else if let Some(out) = q("ospfd", "show ip ospf json").await {
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        // Timers are known once `router ospf` is configured; they do not change afterwards.
        if v.get("lsaMinIntervalMsecs").is_some() {
            let ms = |k: &str| v[k].as_u64().unwrap_or(0);
            let d = Duration::from_millis(
                ms("lsaMinIntervalMsecs") + ms("spfScheduleDelayMsecs") + ms("holdtimeMinMsecs"),
            );
            let _ = w.ospf_delay.set(d);
            s.ospf_delay = d;
        }
    }
    // `show running-config` needs enable mode; in view mode it is an unknown command, and
    // the quiet period silently stayed at FRR's default 1.5 s.
    let bgpd_config = || {
        let p = sock("bgpd");
        async move {
            if !p.exists() {
                return None;
            }
            vty_enable_command(&p, "show running-config", QUERY_TIMEOUT)
                .await
                .ok()
        }
    };
    if w.bgp_quiet.get().is_none()
        && let Some(config) = bgpd_config().await
        && config.contains("router bgp")
    {
        let _ = w.bgp_quiet.set(bgp_quiet(&config));
    }
    s.bgp_quiet = w.bgp_quiet.get().copied().unwrap_or(BGP_QUIET);
    if let Some(out) = q("bgpd", "show bgp summary json").await {
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        if let Some(afs) = v.as_object() {
            for (af, body) in afs {
                let Some(peers) = body["peers"].as_object() else {
                    continue;
                };
                for (peer, p) in peers {
                    s.bgp = true;
                    let st = p["state"].as_str().unwrap_or("");
                    let admin = st.contains("Admin") || p["peerState"].as_str() == Some("Admin");
                    if st != "Established" && !admin {
                        s.pending
                            .push(format!("{}: BGP peer {peer} ({af}) is {st}", w.device));
                    }
                    s.fingerprint
                        .push_str(&format!("{af}{peer}{st}{}", p["pfxRcd"]));
                }
            }
        }
    }
    s
}

/// Polls until settled or `cap`; `base_quiet` is the minimum quiet period.
pub(crate) async fn wait_settled(
    watched: &[Watched],
    cap: Duration,
    base_quiet: Duration,
) -> Readiness {
    let started = Instant::now();
    // Every poll costs the daemons some work: poll large labs less often.
    let poll = Duration::from_millis(50 + 5 * watched.len() as u64);
    let mut last_fp: Option<String> = None;
    let mut stable_since = Instant::now();
    loop {
        let samples = futures::future::join_all(watched.iter().map(sample)).await;
        let pending: Vec<String> = samples.iter().flat_map(|s| s.pending.clone()).collect();
        let fp: String = samples
            .iter()
            .zip(watched)
            .map(|(s, w)| format!("{}={};", w.device, s.fingerprint))
            .collect();
        let quiet = samples
            .iter()
            .map(|s| {
                let mut q = s.ospf_delay + Duration::from_millis(200);
                if s.bgp {
                    q = q.max(s.bgp_quiet);
                }
                if s.rip {
                    q = q.max(RIP_QUIET);
                }
                if let Some(v) = s.vrrp_wait {
                    q = q.max(v);
                }
                q
            })
            .max()
            .unwrap_or_default()
            .max(base_quiet);
        if last_fp.as_deref() != Some(fp.as_str()) {
            if std::env::var_os("FAULTBENCH_TIMING").is_some() {
                eprintln!(
                    "[faultbench timing] routing changed at {} ms (quiet needed {} ms, pending {}): {fp}",
                    started.elapsed().as_millis(),
                    quiet.as_millis(),
                    pending.len()
                );
            }
            last_fp = Some(fp);
            stable_since = Instant::now();
        }
        let stable_for = stable_since.elapsed();
        if pending.is_empty() && (watched.is_empty() || stable_for >= quiet) {
            return Readiness {
                converged: true,
                waited_ms: started.elapsed().as_millis() as u64,
                pending: Vec::new(),
            };
        }
        if started.elapsed() >= cap {
            let mut pending = pending;
            if pending.is_empty() {
                pending.push(format!(
                    "routes were still changing (stable for {} ms of the {} ms needed)",
                    stable_for.as_millis(),
                    quiet.as_millis()
                ));
            }
            return Readiness {
                converged: false,
                waited_ms: started.elapsed().as_millis() as u64,
                pending,
            };
        }
        tokio::time::sleep(poll).await;
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn bgp_quiet_follows_the_coalesce_time() {
        use super::{BGP_QUIET, bgp_quiet};
        use std::time::Duration;
        assert_eq!(
            bgp_quiet("router bgp 1\n coalesce-time 50\n"),
            Duration::from_millis(550)
        );
        assert_eq!(
            bgp_quiet("router bgp 1\n neighbor 1.1.1.1 remote-as 2\n"),
            BGP_QUIET
        );
    }

    use super::*;

    #[test]
    fn finds_neighbour_states_anywhere_in_the_json() {
        let v: Value = serde_json::from_str(
            r#"{"neighbors":{"2.2.2.2":[{"nbrState":"Full/-","ifaceName":"eth0"}],"3.3.3.3":[{"nbrState":"Init/DROther"}]}}"#,
        )
        .unwrap();
        let mut out = Vec::new();
        find_strings(&v, "nbrState", &mut out, "");
        assert_eq!(out.len(), 2);
        assert!(
            out.iter()
                .any(|(k, s)| k == "3.3.3.3" && s.starts_with("Init"))
        );
    }

    #[test]
    fn vrrp_takeover_follows_the_slowest_advert_interval() {
        let d = tempfile::tempdir().unwrap();
        let conf = d.path().join("keepalived.conf");
        std::fs::write(
            &conf,
            "vrrp_instance A {\n  advert_int 1\n}\nvrrp_instance B {\n advert_int 3\n}\n",
        )
        .unwrap();
        assert_eq!(vrrp_takeover(&conf), Duration::from_secs(11));
        assert_eq!(
            vrrp_takeover(&d.path().join("missing")),
            Duration::from_secs(5)
        );
    }

    #[tokio::test]
    async fn a_lab_without_routers_is_settled_at_once() {
        let r = wait_settled(&[], Duration::from_secs(1), Duration::from_millis(300)).await;
        assert!(r.converged);
        assert!(r.waited_ms < 200);
    }
}
