//! Routes that never settle: a kernel route that keeps going back to a state it had before.
//!
//! Protocol states can all look final between two swings of a route that flaps for ever: two
//! border routers that both redistribute RIP into OSPF each prefer the other's external route
//! (OSPF's distance 110 beats RIP's 120), withdraw their own, and the LSAs alternate between
//! fresh and MaxAge every few seconds. The quiet period of readiness (200 ms) fits between two
//! swings, so readiness alone would claim convergence on a FIB that never stops changing.
//!
//! Every route of every device is therefore followed by prefix. Convergence changes a route a
//! few times on the way to its final state (it appears, its next hop improves); a route that
//! *returns* to a state it already had — gone, back, gone again, or between two next hops — is
//! a swing, and the time since it last left that state is the length of one cycle. A route that
//! has swung back must then stay unchanged for twice its longest cycle (at least [`HOLD_MIN`],
//! at most [`HOLD_MAX`]) before readiness may end: a transient swing during convergence costs
//! twice its length, while a flap of a few seconds' period shows its next swing within the
//! hold. A route that swings back [`FLAP_RETURNS`] times is flapping: it is reported with its
//! device and prefix, and its changes no longer hold the rest of the lab up.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

/// Swings back after which a route must prove it has settled.
pub(super) const SUSPECT_RETURNS: u32 = 1;
/// Swings back after which a route is flapping.
pub(super) const FLAP_RETURNS: u32 = 3;
/// Shortest and longest time a suspect route must stay unchanged (a swing of a few hundred
/// milliseconds during convergence costs twice that, not more).
pub(super) const HOLD_MIN: Duration = Duration::from_millis(500);
pub(super) const HOLD_MAX: Duration = Duration::from_secs(30);

/// One device's kernel routes: prefix (`10.0.0.0/24`, `2001:db8::/64`) → digest of its
/// entries (interface, gateway, flags, metric; usage counters left out).
pub(super) type RouteTable = BTreeMap<String, u64>;

/// Parses `/proc/PID/net/route` and `/proc/PID/net/ipv6_route` into a [`RouteTable`].
pub(super) fn route_table(route: &str, ipv6_route: &str) -> RouteTable {
    let mut entries: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for line in route.lines().skip(1) {
        // Iface Destination Gateway Flags RefCnt Use Metric Mask MTU Window IRTT
        let w: Vec<&str> = line.split_whitespace().collect();
        let (Some(iface), Some(dest), Some(gw), Some(flags), Some(metric), Some(mask)) =
            (w.first(), w.get(1), w.get(2), w.get(3), w.get(6), w.get(7))
        else {
            continue;
        };
        let (Some(dest), Some(mask)) = (hex_v4(dest), hex_v4(mask)) else {
            continue;
        };
        let key = format!("{dest}/{}", u32::from(mask).count_ones());
        entries
            .entry(key)
            .or_default()
            .push(format!("{iface} {gw} {flags} {metric}"));
    }
    for line in ipv6_route.lines() {
        // dest plen src splen nexthop metric refcnt use flags dev
        let w: Vec<&str> = line.split_whitespace().collect();
        let (Some(dest), Some(plen), Some(nh), Some(metric), Some(flags), Some(dev)) =
            (w.first(), w.get(1), w.get(4), w.get(5), w.get(8), w.get(9))
        else {
            continue;
        };
        let (Ok(bits), Ok(plen)) = (u128::from_str_radix(dest, 16), u8::from_str_radix(plen, 16))
        else {
            continue;
        };
        let key = format!("{}/{plen}", std::net::Ipv6Addr::from(bits));
        entries
            .entry(key)
            .or_default()
            .push(format!("{dev} {nh} {flags} {metric}"));
    }
    entries
        .into_iter()
        .map(|(k, mut v)| {
            use std::hash::{Hash, Hasher};
            v.sort();
            let mut h = std::collections::hash_map::DefaultHasher::new();
            v.hash(&mut h);
            (k, h.finish())
        })
        .collect()
}

/// `/proc/net/route`'s address form: 8 hex digits, in the host's (little-endian) byte order.
fn hex_v4(s: &str) -> Option<std::net::Ipv4Addr> {
    let v = u32::from_str_radix(s, 16).ok()?;
    Some(std::net::Ipv4Addr::from(v.to_le_bytes()))
}

/// The history of one route.
#[derive(Debug)]
struct Track {
    /// Its current state (`None`: no such route).
    now: Option<u64>,
    /// Every state it has had, with when it last left it (`None`: it is in it now, or it
    /// was never left).
    seen: Vec<(Option<u64>, Option<Instant>)>,
    changes: u32,
    /// Changes into a state it had before.
    returns: u32,
    first_change: Option<Instant>,
    last_change: Option<Instant>,
    /// Its first swing back.
    first_return: Option<Instant>,
    /// Longest time from leaving a state to returning to it.
    longest_cycle: Duration,
}

/// A route that has swung back, as readiness reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Swinging {
    pub device: String,
    pub prefix: String,
    pub changes: u32,
    pub returns: u32,
    /// From its first swing back to its last change.
    pub over: Duration,
    /// How long it must hold still after its last change to count as settled.
    pub hold: Duration,
}

/// Follows every route of every device across polls.
#[derive(Debug, Default)]
pub(super) struct FlapWatch {
    /// (device, prefix) → history.
    tracks: BTreeMap<(String, String), Track>,
    /// Devices polled at least once (their first table is the starting point).
    started: BTreeSet<String>,
}

impl FlapWatch {
    /// Records one poll of `device`'s routes at `now`; returns whether a route that is not
    /// flapping changed.
    pub fn observe(&mut self, device: &str, table: &RouteTable, now: Instant) -> bool {
        let first = self.started.insert(device.to_string());
        let mut steady_changed = false;
        let known: Vec<String> = self
            .tracks
            .range((device.to_string(), String::new())..)
            .take_while(|((d, _), _)| d == device)
            .map(|((_, p), _)| p.clone())
            .collect();
        let prefixes: BTreeSet<&String> = table.keys().chain(known.iter()).collect();
        for prefix in prefixes {
            let state = table.get(prefix).copied();
            let key = (device.to_string(), prefix.clone());
            let Some(t) = self.tracks.get_mut(&key) else {
                // A route seen for the first time after the first poll appeared: it came from
                // "no route".
                let mut t = Track {
                    now: state,
                    seen: vec![(state, None)],
                    changes: 0,
                    returns: 0,
                    first_change: None,
                    last_change: None,
                    first_return: None,
                    longest_cycle: Duration::ZERO,
                };
                if !first {
                    t.seen.insert(0, (None, Some(now)));
                    t.changes = 1;
                    t.first_change = Some(now);
                    t.last_change = Some(now);
                    steady_changed = true;
                }
                self.tracks.insert(key, t);
                continue;
            };
            if t.now == state {
                continue;
            }
            let flapping = t.returns >= FLAP_RETURNS;
            let before = t.now;
            if let Some((_, left)) = t.seen.iter_mut().find(|(s, _)| *s == before) {
                *left = Some(now);
            }
            match t.seen.iter().find(|(s, _)| *s == state) {
                Some((_, left)) => {
                    t.returns += 1;
                    t.first_return.get_or_insert(now);
                    if let Some(left) = left {
                        t.longest_cycle = t.longest_cycle.max(now.saturating_duration_since(*left));
                    }
                }
                // Bounded: a route with more states than this is not swinging between them.
                None if t.seen.len() < 64 => t.seen.push((state, None)),
                None => {}
            }
            t.changes += 1;
            t.first_change.get_or_insert(now);
            t.last_change = Some(now);
            t.now = state;
            if !flapping {
                steady_changed = true;
            }
        }
        steady_changed
    }

    /// Routes that swung back at least [`FLAP_RETURNS`] times.
    pub fn flapping(&self) -> Vec<Swinging> {
        self.swinging(|t, _| t.returns >= FLAP_RETURNS)
    }

    /// Routes that swung back [`SUSPECT_RETURNS`] times (but are not flapping yet) and have not
    /// yet stayed unchanged for their hold time at `now`.
    pub fn suspects(&self, now: Instant) -> Vec<Swinging> {
        self.swinging(|t, _| {
            t.returns >= SUSPECT_RETURNS
                && t.returns < FLAP_RETURNS
                && t.last_change
                    .is_some_and(|last| now.saturating_duration_since(last) < hold(t))
        })
    }

    fn swinging(&self, pick: impl Fn(&Track, &str) -> bool) -> Vec<Swinging> {
        self.tracks
            .iter()
            .filter(|((_, p), t)| pick(t, p))
            .map(|((d, p), t)| Swinging {
                device: d.clone(),
                prefix: p.clone(),
                changes: t.changes,
                returns: t.returns,
                over: match (t.first_return, t.last_change) {
                    (Some(a), Some(b)) => b.saturating_duration_since(a),
                    _ => Duration::ZERO,
                },
                hold: hold(t),
            })
            .collect()
    }
}

/// How long a suspect route must stay unchanged to count as settled.
fn hold(t: &Track) -> Duration {
    (t.longest_cycle * 2).clamp(HOLD_MIN, HOLD_MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROUTE_HEAD: &str =
        "Iface\tDestination\tGateway\tFlags\tRefCnt\tUse\tMetric\tMask\tMTU\tWindow\tIRTT\n";

    fn v4(lines: &[&str]) -> RouteTable {
        let mut text = ROUTE_HEAD.to_string();
        for l in lines {
            text.push_str(l);
            text.push('\n');
        }
        route_table(&text, "")
    }

    #[test]
    fn reads_prefixes_from_proc_route_and_ipv6_route() {
        // 10.0.12.0/30 on eth0, and a default route via 10.0.12.2.
        let t = v4(&[
            "eth0\t000C000A\t00000000\t0001\t0\t0\t0\tFCFFFFFF\t0\t0\t0",
            "eth0\t00000000\t020C000A\t0003\t0\t5\t20\t00000000\t0\t0\t0",
        ]);
        assert_eq!(
            t.keys().collect::<Vec<_>>(),
            vec!["0.0.0.0/0", "10.0.12.0/30"]
        );
        let used = v4(&[
            "eth0\t000C000A\t00000000\t0001\t0\t0\t0\tFCFFFFFF\t0\t0\t0",
            "eth0\t00000000\t020C000A\t0003\t0\t99\t20\t00000000\t0\t0\t0",
        ]);
        assert_eq!(t, used, "usage counters are not a change");
        let v6 = "20010db8000000000000000000000000 40 00000000000000000000000000000000 00 00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n";
        assert!(route_table("", v6).contains_key("2001:db8::/64"));
    }

    #[test]
    fn a_route_that_comes_and_goes_is_suspect_then_flapping() {
        // As in the census lab that flaps: a route that comes and goes every 10 s, with every
        // protocol state final in between.
        let with = v4(&["eth0\t0009090A\t00000000\t0001\t0\t0\t0\t00FFFFFF\t0\t0\t0"]);
        let without = v4(&[]);
        let mut w = FlapWatch::default();
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        assert!(!w.observe("r1", &without, t0));
        assert!(w.observe("r1", &with, t0 + 10 * s), "appeared");
        assert!(
            w.suspects(t0 + 10 * s).is_empty(),
            "a new state is convergence"
        );
        assert!(w.observe("r1", &without, t0 + 20 * s), "gone: back once");
        let sus = w.suspects(t0 + 20 * s);
        assert_eq!(sus.len(), 1);
        assert_eq!(
            (sus[0].device.as_str(), sus[0].prefix.as_str()),
            ("r1", "10.9.9.0/24")
        );
        // Its cycle is 10 s: it must hold still for 20 s to count as settled.
        assert_eq!(w.suspects(t0 + 39 * s).len(), 1);
        assert!(w.suspects(t0 + 41 * s).is_empty());
        assert!(w.observe("r1", &with, t0 + 30 * s), "back twice");
        assert_eq!(w.suspects(t0 + 30 * s).len(), 1);
        assert!(w.flapping().is_empty());
        assert!(w.observe("r1", &without, t0 + 40 * s), "back a third time");
        let f = w.flapping();
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].returns, f[0].changes), (3, 4));
        assert_eq!(f[0].over, 20 * s, "from the first swing back to the last");
        assert!(
            w.suspects(t0 + 40 * s).is_empty(),
            "flapping, no longer suspect"
        );
        // A flapping route's changes no longer count as a change of the lab's routes.
        assert!(!w.observe("r1", &with, t0 + 50 * s));
    }

    #[test]
    fn new_states_are_convergence_and_swinging_back_is_suspect_until_it_holds() {
        let via = |gw: &str| {
            v4(&[&format!(
                "eth0\t0009090A\t{gw}\t0003\t0\t0\t20\t00FFFFFF\t0\t0\t0"
            )])
        };
        let mut w = FlapWatch::default();
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        w.observe("r1", &v4(&[]), t0);
        for (i, gw) in ["0100000A", "0200000A", "0300000A", "0400000A"]
            .iter()
            .enumerate()
        {
            assert!(w.observe("r1", &via(gw), t0 + s * (i as u32 + 1)));
        }
        assert!(w.suspects(t0 + 5 * s).is_empty());
        assert!(w.flapping().is_empty());
        // A withdrawal for 1 s during convergence: back to "no route" 5 s after it left it,
        // so it must hold still for 10 s after its last change, then it counts as settled.
        w.observe("r1", &v4(&[]), t0 + 6 * s);
        w.observe("r1", &via("0400000A"), t0 + 7 * s);
        assert_eq!(w.suspects(t0 + 16 * s).len(), 1);
        assert!(w.suspects(t0 + 17 * s + s / 2).is_empty());
        assert!(w.flapping().is_empty());
    }
}
