//! Readiness: waiting, with a bound, until the lab's routing has converged — judged from the
//! routing protocols' own state, not from how long the routes have been quiet.
//!
//! After the startup files ran, every device is polled: its FRR daemons directly on their vty
//! sockets (`vty`; no `vtysh` process), its kernel routes and addresses through `/proc`. Each
//! daemon present on a device is judged by what its state shows, across devices where the
//! protocol needs it (which routers share a segment comes from lab.conf, see `net`):
//!
//! - **OSPFv2/OSPFv3** (`linkstate`): no interface that shares a segment with another router
//!   still `Waiting`, every expected neighbour present and in a final state (`Full`, or `2-Way`
//!   between two DROthers), no database exchange or retransmission pending that matters,
//!   adjacent routers holding the same database, no SPF run scheduled, and — where AS-external
//!   or NSSA LSAs are held, i.e. routes redistributed into OSPF — ospfd's external-route timer
//!   (1 s after each SPF run) has fired;
//! - **BGP** (`bgp`): every configured neighbour `Established` with empty queues and every
//!   update subgroup caught up (no coalesce timer running); a neighbour that provably cannot
//!   come up (no route to it, nobody owns its address, its device runs no bgpd, the two ends'
//!   configurations can never agree — AS numbers, update sources, eBGP without multihop off
//!   every connected subnet) is reported in [`Readiness::unable`], not waited for;
//! - **RIP/RIPng** (`rip`): every router heard from each neighbour, and the tables are a
//!   fixed point (no update any router holds would change another's table); tables that stay
//!   apart (filters, offsets) stop blocking after 5.5 s without a route change — longer than
//!   the 1–5 s triggered-update delay;
//! - **EIGRP** (`eigrp`): expected neighbours up, nothing queued, every route Passive;
//!   **IS-IS** (`isis`): adjacencies Up, then 2 s of quiet;
//! - **keepalived**: no address moved for a VRRP takeover time (3 × `advert_int` + 2 s).
//!
//! Static-only devices and devices without routing add nothing. On top of the protocol checks
//! the kernel routes of every device and every item's state must have been unchanged for a
//! short quiet period (200 ms by default), which covers the installation of the last routes
//! and messages still in flight between routers (a BGP UPDATE just sent is in no state yet).
//! Routes are followed by prefix (`flap`): a route that keeps returning to a state it had
//! before must hold still for a while before the lab counts as ready, and one that does so
//! again and again flaps for good — it is reported ([`Readiness::flapping`]) instead of being
//! called converged, and no longer holds the rest of the lab up. The wait is capped: a lab
//! that does not converge in time is returned with every item still not converged
//! ([`Readiness::pending`]). With `FAULTBENCH_TIMING` set, every state change of every item is
//! printed as it is seen.

mod assess;
mod bgp;
mod bgp_config;
mod eigrp;
mod flap;
mod isis;
mod linkstate;
mod model;
mod net;
mod ospf;
mod ospf6;
mod rip;
mod snapshot;
mod vty;

pub use model::ProtocolItem;
pub(crate) use snapshot::Watched;
pub use vty::{DeviceSocket, vty_command, vty_enable_command};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Every address of the device whose PID 1 is `pid` (its network namespace's local IPv4
/// addresses and IPv6 addresses, loopback excepted).
pub(crate) fn device_addresses(pid: i32) -> Vec<std::net::IpAddr> {
    let proc_net =
        |f: &str| std::fs::read_to_string(format!("/proc/{pid}/net/{f}")).unwrap_or_default();
    net::parse_local_addrs(&proc_net("fib_trie"), &proc_net("if_inet6")).0
}

/// How the readiness wait ended.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Readiness {
    /// Routing converged before the cap.
    pub converged: bool,
    /// Time spent waiting, milliseconds.
    pub waited_ms: u64,
    /// What was still not converged at the end (empty when converged).
    #[serde(default)]
    pub pending: Vec<ProtocolItem>,
    /// Configured things that provably cannot come up (reported, not waited for), e.g. a BGP
    /// neighbour whose address no device owns.
    #[serde(default)]
    pub unable: Vec<ProtocolItem>,
    /// Differences the protocols may keep for good (e.g. RIP tables a filter keeps apart),
    /// accepted after the routes were quiet long enough.
    #[serde(default)]
    pub waived: Vec<ProtocolItem>,
    /// Kernel routes that never settle (one item per device, naming its prefixes): they kept
    /// returning to states they had before, e.g. two routers redistributing into each other's
    /// protocol. Not waited for; `converged` is false when there are any.
    #[serde(default)]
    pub flapping: Vec<ProtocolItem>,
}

/// Polls `watched` until converged or `cap`; `base_quiet` is the minimum quiet period of the
/// kernel routes. A `cap` of zero polls once and reports what is not converged yet.
pub(crate) async fn wait_settled(
    watched: &[Watched],
    cap: Duration,
    base_quiet: Duration,
) -> Readiness {
    let started = Instant::now();
    let timing = std::env::var_os("FAULTBENCH_TIMING").is_some();
    let routers = watched.iter().filter(|w| w.routes()).count();
    if routers == 0 {
        return Readiness {
            converged: true,
            ..Readiness::default()
        };
    }
    // Every poll costs the daemons some work: poll large labs less often.
    let poll = Duration::from_millis(50 + 5 * routers as u64);
    let mut routes = flap::FlapWatch::default();
    let mut last_vips: Option<Vec<u64>> = None;
    let mut last_suspects: Vec<String> = Vec::new();
    let mut last_flapping = 0;
    let mut last_states: BTreeMap<String, String> = BTreeMap::new();
    let mut last_timers: BTreeMap<String, String> = BTreeMap::new();
    let mut stable_since = Instant::now();
    let mut polls: Vec<Duration> = Vec::new();
    loop {
        let poll_started = Instant::now();
        let snaps = futures_util::future::join_all(watched.iter().map(snapshot::take)).await;
        polls.push(poll_started.elapsed());
        let a = assess::assess(&snaps, base_quiet);
        // Routes that flap for ever are reported (below); their swings restart no quiet period,
        // or the wait would run into the cap.
        let now = Instant::now();
        let changed: Vec<&str> = snaps
            .iter()
            .filter(|s| routes.observe(&s.net.device, &s.routes, now))
            .map(|s| s.net.device.as_str())
            .collect();
        let vips: Vec<u64> = snaps.iter().map(|s| s.vips).collect();
        let vips_moved = last_vips.as_ref().is_some_and(|l| *l != vips);
        last_vips = Some(vips);
        if !changed.is_empty() || vips_moved {
            if timing {
                log(
                    started,
                    &format!("routes changed on {}", changed.join(", ")),
                );
            }
            stable_since = Instant::now();
        }
        let suspects = routes.suspects(now);
        let flapping = routes.flapping();
        if timing {
            let names: Vec<String> = suspects
                .iter()
                .map(|s| format!("{} {} (hold {} ms)", s.device, s.prefix, s.hold.as_millis()))
                .collect();
            if names != last_suspects && !names.is_empty() {
                log(
                    started,
                    &format!(
                        "routes swinging back, held until they settle: {}",
                        names.join(", ")
                    ),
                );
            }
            last_suspects = names;
            if flapping.len() != last_flapping {
                log(
                    started,
                    &format!("{} routes flapping (not waited for)", flapping.len()),
                );
                last_flapping = flapping.len();
            }
        }
        if timing {
            print_changes(started, &last_states, &a.states);
            print_changes(started, &last_timers, &a.timers);
        }
        last_timers.clone_from(&a.timers);
        // A protocol state that just changed (an update group that has just sent, a session
        // that has just come up) may have set off messages still in flight to another router,
        // where no state shows them yet: the states, too, must hold for the quiet period.
        if a.states != last_states {
            last_states = a.states.clone();
            stable_since = Instant::now();
        }
        let stable_for = stable_since.elapsed();
        let blocking = a.still_blocking(stable_for);
        let done = blocking.is_empty() && stable_for >= a.quiet && suspects.is_empty();
        if timing && (done || started.elapsed() >= cap) {
            let mut sorted = polls.clone();
            sorted.sort();
            log(
                started,
                &format!(
                    "{} polls of {} devices, median {} ms, longest {} ms; quiet needed {} ms",
                    sorted.len(),
                    watched.len(),
                    sorted[sorted.len() / 2].as_millis(),
                    sorted.last().map_or(0, |d| d.as_millis()),
                    a.quiet.as_millis()
                ),
            );
        }
        if done {
            let waived = a.blockers.iter().map(|b| b.item.clone()).collect();
            let flapping = flapping_items(&flapping);
            return Readiness {
                converged: flapping.is_empty(),
                flapping,
                waited_ms: started.elapsed().as_millis() as u64,
                pending: Vec::new(),
                unable: a.unable,
                waived,
            };
        }
        if started.elapsed() >= cap {
            let mut pending: Vec<ProtocolItem> = blocking.iter().map(|b| b.item.clone()).collect();
            pending.extend(suspects.iter().map(|s| {
                ProtocolItem::new(
                    &s.device,
                    "kernel",
                    format!("route {}", s.prefix),
                    format!(
                        "swinging back to earlier states ({} changes, {} back, the last {} ms apart)",
                        s.changes,
                        s.returns,
                        s.over.as_millis()
                    ),
                )
            }));
            // A single look (no cap) says nothing about how long routes have been quiet.
            if pending.is_empty() && !cap.is_zero() {
                pending.push(ProtocolItem::new(
                    "lab",
                    "kernel",
                    "routes",
                    format!(
                        "still changing (quiet for {} ms of the {} ms needed)",
                        stable_for.as_millis(),
                        a.quiet.as_millis()
                    ),
                ));
            }
            return Readiness {
                converged: false,
                waited_ms: started.elapsed().as_millis() as u64,
                flapping: flapping_items(&flapping),
                pending,
                unable: a.unable,
                waived: Vec::new(),
            };
        }
        // The moments a still lab changes its verdict: the quiet period's end, and each soft
        // blocker's (e.g. RIP tables kept apart) — polls are never spaced out past them.
        let deadlines: Vec<Duration> = std::iter::once(a.quiet)
            .chain(blocking.iter().filter_map(|b| b.soft_after))
            .collect();
        let left = cap.saturating_sub(started.elapsed());
        tokio::time::sleep(next_poll(poll, stable_for, &deadlines, left)).await;
    }
}

/// Nothing seen changing for this long: the lab is waiting on a protocol timer (a hello, a
/// dead or wait interval, seconds long), and polls space out (see [`next_poll`]).
const IDLE_AFTER: Duration = Duration::from_secs(1);
/// The widest spacing of polls while nothing changes.
const IDLE_POLL: Duration = Duration::from_millis(250);

/// The pause before the next poll. While something changed within [`IDLE_AFTER`], `base`
/// (the quiet period must be timed closely); after that the pause grows with the time nothing
/// changed, up to [`IDLE_POLL`]: a poll costs the harness and every daemon a query, and a lab
/// whose OSPF waits out a 10 s hello gains nothing from ten polls a second. The first change
/// after such a stretch is seen at most `IDLE_POLL` late, and the polls that follow it are
/// `base` apart again. Never past a `deadline` still ahead (times of quiet after which the
/// verdict changes by itself: the quiet period's end, a soft blocker's), so a lab that only
/// waits for one is seen ready on time, nor past what is `left` of the cap.
fn next_poll(
    base: Duration,
    stable_for: Duration,
    deadlines: &[Duration],
    left: Duration,
) -> Duration {
    let mut pause = if stable_for < IDLE_AFTER {
        base
    } else {
        // Half the time nothing changed, as a pause, capped.
        (stable_for / 2).clamp(base, IDLE_POLL.max(base))
    };
    for d in deadlines {
        let until = d.saturating_sub(stable_for);
        if !until.is_zero() {
            pause = pause.min(until.max(base));
        }
    }
    pause.min(left)
}

/// One item per device naming every route of it that flaps.
fn flapping_items(routes: &[flap::Swinging]) -> Vec<ProtocolItem> {
    let mut by_device: BTreeMap<&str, Vec<&flap::Swinging>> = BTreeMap::new();
    for r in routes {
        by_device.entry(&r.device).or_default().push(r);
    }
    by_device
        .into_iter()
        .map(|(device, rs)| {
            let prefixes: Vec<&str> = rs.iter().map(|r| r.prefix.as_str()).collect();
            let returns = rs.iter().map(|r| r.returns).max().unwrap_or(0);
            let over = rs.iter().map(|r| r.over).max().unwrap_or_default();
            ProtocolItem::new(
                device,
                "kernel",
                format!(
                    "route{} {}",
                    if prefixes.len() > 1 { "s" } else { "" },
                    prefixes.join(", ")
                ),
                format!(
                    "flapping: back to an earlier state again and again ({returns} times in {:.1} s); the lab's routing never settles them",
                    over.as_secs_f64()
                ),
            )
        })
        .collect()
}

fn log(started: Instant, what: &str) {
    eprintln!(
        "[faultbench timing] +{} ms {what}",
        started.elapsed().as_millis()
    );
}

/// Prints every item whose state differs from the previous poll.
fn print_changes(
    started: Instant,
    before: &BTreeMap<String, String>,
    now: &BTreeMap<String, String>,
) {
    for (k, v) in now {
        match before.get(k) {
            Some(old) if old == v => {}
            Some(old) => log(started, &format!("{k}: {old} -> {v}")),
            None => log(started, &format!("{k}: {v}")),
        }
    }
    for k in before.keys().filter(|k| !now.contains_key(*k)) {
        log(started, &format!("{k}: gone"));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn polls_space_out_only_while_nothing_changes() {
        let base = Duration::from_millis(100);
        let quiet = Duration::from_millis(200);
        let left = Duration::from_secs(60);
        let ms = Duration::from_millis;
        // Something changed recently: the base pace.
        assert_eq!(next_poll(base, ms(0), &[quiet], left), base);
        assert_eq!(next_poll(base, ms(900), &[quiet], left), base);
        // A long quiet stretch: wider, never past the idle pace.
        assert_eq!(next_poll(base, ms(1000), &[quiet], left), IDLE_POLL);
        assert_eq!(next_poll(base, ms(30_000), &[quiet], left), IDLE_POLL);
        // Never past the end of a longer quiet period (e.g. keepalived's) or of a soft
        // blocker's wait (RIP tables kept apart), nor past the cap.
        assert_eq!(next_poll(base, ms(5000), &[ms(5200)], left), ms(200));
        assert_eq!(next_poll(base, ms(5000), &[quiet, ms(5200)], left), ms(200));
        assert_eq!(next_poll(base, ms(5000), &[ms(5050)], left), base);
        assert_eq!(next_poll(base, ms(5000), &[quiet], ms(30)), ms(30));
        // A large lab's base pace above the idle pace stays as it was.
        let slow = Duration::from_millis(500);
        assert_eq!(next_poll(slow, ms(10_000), &[quiet], left), slow);
    }

    #[tokio::test]
    async fn a_lab_without_routers_is_settled_at_once() {
        let r = wait_settled(&[], Duration::from_secs(1), Duration::from_millis(300)).await;
        assert!(r.converged);
        assert!(r.waited_ms < 200);
    }
}
