//! The correct-fault ticket of a multi-fault scenario, from what the combined lab showed.
//!
//! While every fault of the scenario holds, each fault's probes (the same ones a single
//! variant's [`crate::symptom::observe`] runs) are measured on the one lab that carries them
//! all. What a user reports is what those probes show there, and nothing else:
//!
//! - a fault whose probes all still answer shows nothing and is left out (its symptom is not
//!   there to be seen, whatever the ground truth says);
//! - a host that is *cut off* — the faulted device of an observation is the very host whose
//!   probe fails, and no measurement shows it still reaching anything (no probe from it
//!   answered, no other trace from it got past what its own failing trace saw) — explains every other failure that
//!   involves it: a fault seen from (or towards) that host is *masked* and shows nothing of
//!   its own, so its device and symptom stay out of the ticket;
//! - the same failing pair measured twice is reported once;
//! - a quiet fault (`degraded`, nothing a user sees) is reported as a monitoring note, as for
//!   a single variant.
//!
//! The wording is the single correct-fault ticket's ([`super::words`]); with more than one
//! report the ticket lists them, saying they may or may not be connected. No hint is added: a
//! hint names a faulted device, and with several faults it could name one that shows nothing.

use super::words::{self, Pick};
use crate::symptom::ObservedSymptoms;
use std::collections::BTreeSet;

/// The hosts a failure of `obs` involves (the suffering host first).
fn hosts(obs: &ObservedSymptoms) -> Vec<&str> {
    if let Some(s) = obs.service.as_ref().filter(|s| !s.answers) {
        return vec![s.client.as_str(), s.server.as_str()];
    }
    obs.failing_pair()
        .map(|p| vec![p.from.as_str(), p.to.as_str()])
        .unwrap_or_default()
}

/// Whether `obs` shows its own faulted device cut off: the device is the host whose probe
/// fails.
fn cut_off_host(obs: &ObservedSymptoms) -> Option<&str> {
    obs.failing_pair()
        .filter(|p| p.from == obs.device)
        .map(|p| p.from.as_str())
}

/// Whether some measurement shows `host` (cut off by the fault of `observed[k]`, by that
/// observation) still on the network: a probe from it answered, or a trace from it in another
/// observation got an answer from a hop its own failing trace did not (a host whose gateway is
/// unreachable answers traces itself, `!H` from its own address, so that hop proves nothing).
fn still_connected(observed: &[ObservedSymptoms], k: usize, host: &str) -> bool {
    let own_hops: BTreeSet<&str> = observed[k]
        .trace
        .iter()
        .filter(|t| t.from == host)
        .flat_map(|t| t.hops.iter().map(String::as_str))
        .collect();
    observed.iter().enumerate().any(|(j, o)| {
        o.working_pairs().any(|p| p.from == host)
            || o.service
                .as_ref()
                .is_some_and(|s| s.client == host && s.answers)
            || (j != k
                && o.trace.as_ref().is_some_and(|t| {
                    t.from == host
                        && t.hops
                            .iter()
                            .any(|h| h != "*" && !own_hops.contains(h.as_str()))
                }))
    })
}

/// The indices of `observed` that show something of their own on the combined lab, ascending
/// (see the module documentation). Observations of cut-off hosts are taken first, in the
/// given order; when two hosts cut off each other's probes the measurements cannot tell which
/// one hides the other, and the earlier wins — callers list masking faults first.
pub fn shown(observed: &[ObservedSymptoms]) -> Vec<usize> {
    // A faulted host whose probe fails is cut off, unless another measurement shows it still
    // reaching something (a fault on it that only blocks one destination hides nothing else).
    let cut_off: Vec<Option<&str>> = observed
        .iter()
        .enumerate()
        .map(|(k, o)| cut_off_host(o).filter(|h| !still_connected(observed, k, h)))
        .collect();
    let mut reported_cut: BTreeSet<&str> = BTreeSet::new();
    let mut seen_pairs: BTreeSet<(&str, &str)> = BTreeSet::new();
    let mut out = Vec::new();
    let cut_first = (0..observed.len())
        .filter(|&k| cut_off[k].is_some())
        .chain((0..observed.len()).filter(|&k| cut_off[k].is_none()));
    for k in cut_first {
        let obs = &observed[k];
        if obs.kind == "degraded" && !obs.is_visible() {
            out.push(k);
            continue;
        }
        let involved = hosts(obs);
        if involved.is_empty() {
            // Every probe answered: nothing to see.
            continue;
        }
        if involved.iter().any(|h| reported_cut.contains(h)) {
            // Masked: a host this failure needs is cut off by another fault.
            continue;
        }
        if seen_pairs.insert((involved[0], involved[1])) {
            out.push(k);
            reported_cut.extend(cut_off[k]);
        }
    }
    out.sort_unstable();
    out
}

/// The symptom sentences of one observation (as in a single correct-fault ticket).
fn report(p: &mut Pick, obs: &ObservedSymptoms) -> Vec<String> {
    if let Some(s) = obs.service.as_ref().filter(|s| !s.answers) {
        vec![words::service_report(p, s)]
    } else if let Some(pair) = obs.failing_pair() {
        let mut out = vec![words::pair_report(p, pair)];
        out.extend(words::evidence(p, obs));
        out
    } else {
        vec![words::degraded_report(p, &obs.device)]
    }
}

/// The correct-fault ticket for a multi-fault scenario whose faults, all in place, showed
/// `observed` (one observation per fault, masking faults first); `key` picks the phrasings.
pub fn correct_multi(observed: &[ObservedSymptoms], key: u64) -> String {
    let mut p = Pick::new(key ^ 0x4d46);
    let mut parts = vec![words::opener(&mut p)];
    let shown = shown(observed);
    match shown.as_slice() {
        [] => parts.push(words::degraded_unnamed(&mut p).into()),
        [one] => parts.extend(report(&mut p, &observed[*one])),
        many => {
            parts.push(
                p.one(&[
                    "Several reports came in today; they may or may not be connected.",
                    "A few separate complaints arrived, possibly related:",
                    "More than one thing seems broken at once:",
                    "We have a couple of problems, not sure if they are linked.",
                ])
                .into(),
            );
            for (i, &k) in many.iter().enumerate() {
                let lines = report(&mut p, &observed[k]);
                parts.push(format!("({}) {}", i + 1, lines.join(" ")));
            }
        }
    }
    parts.push(words::closer(&mut p).into());
    parts
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::symptom::{PairObs, Reach, ServiceObs};

    fn pair(from: &str, to: &str, ip: &str, reach: Reach) -> PairObs {
        PairObs {
            from: from.into(),
            to: to.into(),
            to_ip: ip.into(),
            reach,
        }
    }

    /// pc1's link is down (it is cut off); the web server's service stopped, seen from pc1.
    fn masking_pair() -> Vec<ObservedSymptoms> {
        let cut = ObservedSymptoms {
            kind: "unreachable".into(),
            pairs: vec![
                pair("pc1", "pc3", "10.0.3.2", Reach::NoRoute),
                pair("pc2", "pc3", "10.0.3.2", Reach::Answers),
            ],
            device: "pc1".into(),
            ..ObservedSymptoms::default()
        };
        let web = ObservedSymptoms {
            kind: "service-down".into(),
            pairs: vec![pair("pc1", "web7", "10.0.9.9", Reach::NoRoute)],
            service: Some(ServiceObs {
                client: "pc1".into(),
                server: "web7".into(),
                server_ip: "10.0.9.9".into(),
                service: "web".into(),
                answers: false,
                server_pings: false,
            }),
            device: "web7".into(),
            ..ObservedSymptoms::default()
        };
        vec![cut, web]
    }

    #[test]
    fn a_masked_fault_shows_nothing_of_its_own() {
        let obs = masking_pair();
        assert_eq!(shown(&obs), vec![0]);
        for key in 0..200 {
            let t = correct_multi(&obs, key);
            assert!(t.contains("pc1") && t.contains("pc3"), "{t}");
            assert!(!t.contains("web7") && !t.contains("10.0.9.9"), "{t}");
            assert!(!t.contains("(2)"), "one report only: {t}");
        }
    }

    #[test]
    fn independent_failures_are_all_reported_and_silent_ones_left_out() {
        let mut obs = masking_pair();
        // The service fault seen from a host that is not cut off is its own symptom.
        let s = obs[1].service.as_mut().unwrap();
        s.client = "pc4".into();
        obs[1].pairs[0].from = "pc4".into();
        // A fault whose probes all answer on the combined lab shows nothing.
        obs.push(ObservedSymptoms {
            kind: "unreachable".into(),
            pairs: vec![pair("pc5", "pc6", "10.0.6.2", Reach::Answers)],
            device: "router4".into(),
            ..ObservedSymptoms::default()
        });
        // The same failing pair measured for two faults is reported once.
        obs.push(obs[0].clone());
        assert_eq!(shown(&obs), vec![0, 1]);
        for key in 0..200 {
            let t = correct_multi(&obs, key);
            assert!(t.contains("pc1") && t.contains("pc4") && t.contains("web7"));
            assert!(
                t.contains("(1)") && t.contains("(2)") && !t.contains("(3)"),
                "{t}"
            );
            assert!(!t.contains("pc6") && !t.contains("router4"), "{t}");
        }
    }

    #[test]
    fn a_host_that_still_reaches_something_is_not_cut_off() {
        // A blackhole route on pc1 towards pc3 only: pc1's own probe fails, yet a trace from
        // pc1 towards the web server gets past its gateway, so the web fault is its own.
        let mut obs = masking_pair();
        obs[1].trace = Some(crate::symptom::TraceObs {
            from: "pc1".into(),
            to_ip: "10.0.9.9".into(),
            hops: vec!["10.0.1.1".into(), "*".into()],
            reached: false,
        });
        assert_eq!(shown(&obs), vec![0, 1]);
        let t = correct_multi(&obs, 5);
        assert!(t.contains("pc3") && t.contains("web7"), "{t}");
        // A hop the cut-off host's own failing trace saw (its own address answering `!H`)
        // proves nothing: the web fault is masked again.
        obs[0].trace = Some(crate::symptom::TraceObs {
            from: "pc1".into(),
            to_ip: "10.0.3.2".into(),
            hops: vec!["10.0.1.1".into()],
            reached: false,
        });
        assert_eq!(shown(&obs), vec![0]);
    }

    #[test]
    fn of_two_hosts_that_cannot_reach_each_other_the_mask_listed_first_is_reported() {
        // pc2 lost its gateway (the mask, listed first); pc1 has a blackhole route to pc2 only.
        // Both probes fail between the two hosts and nothing shows either host reaching more.
        let mask = ObservedSymptoms {
            kind: "unreachable".into(),
            pairs: vec![pair("pc2", "pc1", "10.0.1.2", Reach::Timeout)],
            device: "pc2".into(),
            ..ObservedSymptoms::default()
        };
        let hidden = ObservedSymptoms {
            kind: "unreachable".into(),
            pairs: vec![pair("pc1", "pc2", "10.0.2.2", Reach::Timeout)],
            device: "pc1".into(),
            ..ObservedSymptoms::default()
        };
        let obs = vec![mask, hidden];
        assert_eq!(shown(&obs), vec![0]);
        let t = correct_multi(&obs, 9);
        assert!(t.contains("10.0.1.2") && !t.contains("10.0.2.2"), "{t}");
    }

    #[test]
    fn nothing_visible_gives_an_unnamed_note() {
        let quiet = ObservedSymptoms {
            kind: "unreachable".into(),
            pairs: vec![pair("pc5", "pc6", "10.0.6.2", Reach::Answers)],
            device: "router4".into(),
            ..ObservedSymptoms::default()
        };
        let t = correct_multi(&[quiet], 3);
        assert!(!t.contains("router4") && !t.contains("pc5"), "{t}");
        assert!(!t.trim().is_empty());
    }
}
