//! The ticket writer's wordings: several phrasings per slot, all our own, picked by a seeded
//! generator so a variant always gets the same ticket and a sample gets many different ones.

use crate::content::SplitMix64;
use crate::symptom::{DeviceFact, ObservedSymptoms, PairObs, Reach};

/// Picks phrasings for one ticket.
pub struct Pick(SplitMix64);

impl Pick {
    /// A picker for the ticket with this key.
    pub fn new(key: u64) -> Pick {
        Pick(SplitMix64::new(key))
    }
    /// One of `items`.
    pub fn one<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.0.below(items.len())]
    }
    /// An index below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0.below(n)
    }
    /// True about `percent` times in a hundred.
    pub fn chance(&mut self, percent: usize) -> bool {
        self.0.below(100) < percent
    }
}

/// The ticket's first words.
pub fn opener(p: &mut Pick) -> String {
    let n = 1000 + p.below(9000);
    match p.below(10) {
        0 => format!("Ticket {n}:"),
        1 => format!("Helpdesk #{n} -"),
        2 => format!("INC{n}:"),
        3 => "Hello,".into(),
        4 => "Hi team,".into(),
        5 => format!("Case {n}."),
        6 => "Report from the floor:".into(),
        7 => format!("Request #{n}:"),
        8 => "Good morning,".into(),
        _ => String::new(),
    }
}

/// The ticket's last words: a request.
pub fn closer(p: &mut Pick) -> &'static str {
    p.one(&[
        "Please investigate.",
        "Can someone take a look?",
        "This blocks our work, please fix it soon.",
        "Thanks in advance.",
        "Let us know what you find.",
        "Could you check what is going on?",
        "Please advise.",
        "We would appreciate a quick look.",
        "",
        "Any help is welcome.",
        "Please get back to us when you know more.",
    ])
}

fn when(p: &mut Pick) -> &'static str {
    p.one(&[
        "",
        " since this morning",
        " for about an hour",
        " since shortly after lunch",
        " since a few minutes ago",
        " since the last maintenance window",
        " all of a sudden",
    ])
}

/// `w` (a " since …" phrase) moved to the front of a sentence: "Since …, ".
fn lead(w: &str) -> String {
    let w = w.trim();
    let mut c = w.chars();
    match c.next() {
        Some(f) => format!("{}{}, ", f.to_uppercase(), c.as_str()),
        None => String::new(),
    }
}

/// The sentence that reports what failed, from a measured pair.
pub fn pair_report(p: &mut Pick, pair: &PairObs) -> String {
    let (v, f, ip) = (&pair.from, &pair.to, &pair.to_ip);
    let w = when(p);
    match &pair.reach {
        Reach::Timeout | Reach::Unknown | Reach::Answers => match p.below(6) {
            0 => format!("{v} gets no reply at all from {f} ({ip}){w}; the pings just time out."),
            1 => format!("From {v}, every ping to {f} at {ip} goes unanswered{w}."),
            2 => format!("Pings from {v} to {ip} ({f}) are all lost{w}."),
            3 => format!("{f} ({ip}) has gone silent for {v}{w}: no answers, only timeouts."),
            4 => format!("Nothing comes back{w} when {v} tries to reach {f} on {ip}."),
            _ => {
                format!("{v} cannot reach {f} ({ip}){w}; requests simply hang until they time out.")
            }
        },
        Reach::UnreachableReply { from } => {
            let by = from
                .as_deref()
                .map(|a| format!(" from {a}"))
                .unwrap_or_default();
            match p.below(4) {
                0 => {
                    format!("{v} gets \"destination unreachable\"{by} when it tries {f} ({ip}){w}.")
                }
                1 => format!(
                    "Trying to reach {f} at {ip} from {v} fails{w} with an unreachable message{by}."
                ),
                2 => format!("{}{v} is told{by} that {ip} ({f}) is unreachable.", lead(w)),
                _ => format!("{v} cannot get to {f} ({ip}){w}: the answer{by} is \"unreachable\"."),
            }
        }
        Reach::NoRoute => match p.below(3) {
            0 => format!("{v} says \"network is unreachable\" as soon as it tries {f} ({ip}){w}."),
            1 => format!(
                "{}{v} refuses to even send to {ip} ({f}): network unreachable.",
                lead(w)
            ),
            _ => format!(
                "{v} has no way to {f} at {ip}{w}; the error is \"network is unreachable\"."
            ),
        },
        Reach::PartialLoss { loss } => match p.below(3) {
            0 => format!("About {loss}% of the pings from {v} to {f} ({ip}) are lost{w}."),
            1 => format!(
                "The connection from {v} to {f} at {ip} is unreliable{w}: roughly {loss}% loss."
            ),
            _ => format!(
                "{v} reaches {f} ({ip}) only part of the time{w} (around {loss}% of packets lost)."
            ),
        },
    }
}

/// Optional supporting facts: where the trace stops, who still gets through.
pub fn evidence(p: &mut Pick, obs: &ObservedSymptoms) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(t) = &obs.trace
        && !t.reached
        && !t.hops.is_empty()
        && p.chance(60)
    {
        let last = t.hops.iter().rev().find(|h| *h != "*");
        out.push(match (last, p.below(3)) {
            (Some(h), 0) => format!(
                "A traceroute from {} gets as far as {h} and then shows only stars.",
                t.from
            ),
            (Some(h), 1) => format!("Traceroute from {} stops after {h}.", t.from),
            (Some(h), _) => format!("The last hop that answers a trace from {} is {h}.", t.from),
            (None, _) => format!(
                "Even the first hop of a traceroute from {} stays silent.",
                t.from
            ),
        });
    }
    if let Some(c) = obs.working_pairs().next()
        && obs.failing_pair().is_some_and(|f| f.from != c.from)
        && p.chance(70)
    {
        out.push(match p.below(4) {
            0 => format!("{} still reaches {} without trouble.", c.from, c.to),
            1 => format!("Oddly, {} has no problem with {}.", c.from, c.to),
            2 => format!(
                "It is not everyone: from {} the same address answers.",
                c.from
            ),
            _ => format!("{} can still ping {} ({}).", c.from, c.to, c.to_ip),
        });
    }
    out
}

/// A service that stopped answering.
pub fn service_report(p: &mut Pick, s: &crate::symptom::ServiceObs) -> String {
    let what = match s.service.as_str() {
        "web" => p.one(&["the web site", "the intranet page", "the web server"]),
        "dns" => p.one(&["name resolution", "the DNS service", "DNS lookups"]),
        _ => p.one(&["the service", "the application"]),
    };
    let (c, srv, ip) = (&s.client, &s.server, &s.server_ip);
    let w = when(p);
    let mut out = match p.below(4) {
        0 => format!("{c} cannot use {what} on {srv} ({ip}){w}."),
        1 => format!("Users on {c} report that {what} served by {srv} ({ip}) stopped working{w}."),
        2 => format!("{what} at {ip} ({srv}) no longer answers requests from {c}{w}."),
        _ => format!("Requests from {c} to {what} on {srv} ({ip}) fail{w}."),
    };
    if s.server_pings && p.chance(70) {
        out.push(' ');
        out.push_str(p.one(&[
            "The machine itself still answers ping.",
            "The server is up, though: ping works.",
            "Strangely, the box still replies to ping.",
        ]));
    }
    out
}

/// A quiet fault (nothing a user notices): what monitoring shows, naming the device.
pub fn degraded_report(p: &mut Pick, device: &str) -> String {
    match p.below(3) {
        0 => format!(
            "Monitoring flagged a routing change around {device}; please find out whether something is misconfigured and what it affects."
        ),
        1 => format!(
            "Our route monitor noticed that paths through {device} changed without a planned change. Can you check?"
        ),
        _ => format!(
            "Something about {device} changed in the routing tables overnight; nobody touched it on purpose."
        ),
    }
}

/// A quiet fault reported without naming any device (a wrong-device ticket names its decoy
/// instead).
pub fn degraded_unnamed(p: &mut Pick) -> &'static str {
    p.one(&[
        "Monitoring flagged routing changes in the core after last night's window.",
        "Paths between our sites changed on their own; nobody planned a change.",
        "The route monitor shows next hops moving around without a change request.",
    ])
}

/// A correct hint for a correct-fault ticket: the device, worded as a hunch.
pub fn hint(p: &mut Pick, device: &str) -> String {
    match p.below(3) {
        0 => format!("We suspect something on {device}."),
        1 => format!("The trouble may be around {device}."),
        _ => format!("Someone mentioned {device} might be involved."),
    }
}

/// Blaming a device (a wrong-device ticket's accusation).
pub fn blame(p: &mut Pick, decoy: &str) -> String {
    match p.below(7) {
        0 => format!("I am fairly sure {decoy} is to blame."),
        1 => format!("{decoy} must be the culprit; it was acting up last week too."),
        2 => format!("Please check {decoy}: it looks like the one that broke."),
        3 => format!("This is clearly a problem on {decoy}."),
        4 => format!("Our network person thinks {decoy} has failed."),
        5 => format!("We think {decoy} went bad; please fix it there."),
        _ => format!("Everything points at {decoy}."),
    }
}

/// A false statement about a device (a wrong-cause ticket's claim), from a measured fact.
pub fn false_cause(p: &mut Pick, device: &str, fact: &DeviceFact) -> String {
    let claim = match fact {
        DeviceFact::CarrierUp { iface } => match p.below(3) {
            0 => format!("the cable on {iface} of {device} has been pulled out"),
            1 => format!("{device} lost its link on {iface}, someone must have unplugged it"),
            _ => format!("{iface} on {device} has no carrier any more"),
        },
        DeviceFact::DaemonRunning { daemon } => match p.below(3) {
            0 => format!("{daemon} on {device} has crashed"),
            1 => format!("the {daemon} process died on {device}"),
            _ => format!("{device} is running without {daemon} since it crashed"),
        },
    };
    match p.below(4) {
        0 => format!("The cause is obvious: {claim}."),
        1 => format!("We already know why: {claim}."),
        2 => format!("It is because {claim}."),
        _ => format!("Root cause, as far as we can tell: {claim}."),
    }
}

/// What the false claim would mean for users (a false-premise ticket's impact line).
pub fn impact(p: &mut Pick) -> &'static str {
    p.one(&[
        "Several people are affected.",
        "Our whole group is stuck.",
        "It keeps interrupting our work.",
        "The monitoring screen is red as well.",
        "",
        "We noticed it during the morning backup.",
        "Two colleagues confirmed it.",
    ])
}
