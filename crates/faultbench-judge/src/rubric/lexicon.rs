//! The rubric's vocabulary: cue words that give a clause its polarity, the synonym groups
//! (concepts) that let an axis' words meet a diagnosis' words, and the words a rubric line uses
//! to talk about itself (`identify`, `notes`, …) that carry no content.
//!
//! Everything here is general networking vocabulary, never a scenario's facts. Entries are
//! written in plain words and stemmed with the same [`stem`](super::text::stem) as the text.

use super::text::WordMap;
use super::text::stem;
use std::sync::LazyLock;

/// What a cue word does to its clause.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cue {
    /// Says something is broken.
    Fault,
    /// Says something is fine.
    Health,
    /// Flips the next cue (`not`, `no`, `never`).
    Negator,
}

/// Words the stemmer leaves alone (daemon names that look like past tenses, etc.).
pub const PROTECTED: [&str; 8] = [
    "named",
    "dnsmasq",
    "keepalived",
    "bind9",
    "status",
    "address",
    "access",
    "process",
];

/// Line labels that end a blame paragraph (`Mechanism:`) or open a fix paragraph (`Fix:`).
pub const OTHER_LABELS: [&[&str]; 8] = [
    &["mechanism"],
    &["evidence"],
    &["impact"],
    &["symptom"],
    &["verification"],
    &["summary"],
    &["observation"],
    &["note"],
];

/// Line labels of a remedy: what is named there is being repaired, neither blamed nor cleared.
pub const FIX_LABELS: [&[&str]; 6] = [
    &["fix"],
    &["corrective"],
    &["remediation"],
    &["recommended"],
    &["recommendation"],
    &["next", "step"],
];

const FAULT_CUES: &[&str] = &[
    "down",
    "dead",
    "died",
    "fail",
    "failed",
    "failure",
    "broken",
    "missing",
    "absent",
    "removed",
    "deleted",
    "killed",
    "stopped",
    "crashed",
    "crash",
    "misconfigured",
    "misconfiguration",
    "wrong",
    "incorrect",
    "mismatch",
    "mismatched",
    "drop",
    "discard",
    "block",
    "reject",
    "deny",
    "denied",
    "unreachable",
    "lost",
    "loss",
    "error",
    "fault",
    "faulty",
    "culprit",
    "cause",
    "blackhole",
    "blackholed",
    "black holed",
    "isolated",
    "disabled",
    "shutdown",
    "shut",
    "flapping",
    "flap",
    "bad",
    "invalid",
    "erroneous",
    "corrupt",
    "loop",
    "timeout",
    "timed out",
    "stuck",
    "refused",
    "problem",
    "issue",
    "outage",
    "withdrawn",
    "withdraw",
    "bogus",
    "stale",
    "degraded",
    "no longer",
    "rogue",
    "breaks",
    "prevents",
    "injected",
];

const HEALTH_CUES: &[&str] = &[
    "healthy",
    "fine",
    "ok",
    "okay",
    "working",
    "works",
    "operational",
    "intact",
    "normal",
    "normally",
    "correct",
    "correctly",
    "properly",
    "unaffected",
    "unchanged",
    "clean",
    "stable",
    "up",
    "full",
    "established",
    "reachable",
    "reaches",
    "reach",
    "succeeds",
    "successful",
    "succeeded",
    "responds",
    "responding",
    "answers",
    "running",
    "forwarding",
    "listening",
    "0% loss",
    "0% packet loss",
    "zero loss",
    "zero packet loss",
    "as expected",
    "expected",
    "by design",
    "intended",
    "intentional",
    "legitimate",
    "consistent",
    "ruled out",
    "rule out",
    "rules out",
    "exonerated",
    "innocent",
    "converged",
    "functioning",
    "functional",
    "no fault",
    "no anomaly",
    "false premise",
    "false alarm",
];

const NEGATORS: &[&str] = &[
    "not",
    "no",
    "never",
    "none",
    "without",
    "neither",
    "nor",
    "cannot",
    "unable",
    "isn",
    "wasn",
    "aren",
    "weren",
    "doesn",
    "didn",
    "don",
    "hasn",
    "haven",
    "couldn",
    "wouldn",
    "t",
    "nothing",
    "nobody",
    "fails to",
    "failed to",
];

/// The name of the concept group of loss-free measurements (`0% loss`).
pub const LOSS_FREE: &str = "0% loss";

/// Synonym groups. The first entry names the group.
pub const CONCEPTS: &[&[&str]] = &[
    &["ospfd", "ospf daemon", "ospf process", "ospf6d"],
    &["bgpd", "bgp daemon", "bgp process"],
    &["ripd", "rip daemon", "rip process"],
    &[
        "named",
        "bind",
        "bind9",
        "dns server",
        "dns daemon",
        "dns service",
        "name server",
        "nameserver",
    ],
    &[
        "keepalived",
        "vrrp",
        "fhrp",
        "vrrp daemon",
        "virtual router redundancy",
        "hsrp",
    ],
    &[
        "dnsmasq",
        "dhcp server",
        "dhcpd",
        "dhcp service",
        "dhcp daemon",
    ],
    &["frr", "frrouting", "routing suite"],
    &["bgp", "ebgp", "ibgp", "border gateway protocol"],
    &["ospf", "ospfv2", "open shortest path first"],
    &["rip", "ripv2"],
    &[
        "down",
        "is down",
        "admin down",
        "administratively down",
        "shut",
        "shutdown",
        "shut down",
        "disabled",
        "no carrier",
        "not up",
        "link down",
        "state down",
        "dead",
        "not running",
        "killed",
        "stopped",
        "crashed",
        "died",
        "terminated",
        "no longer running",
        "not started",
        "never started",
        "exited",
        "inactive",
        "not listening",
    ],
    &[
        "missing",
        "absent",
        "removed",
        "deleted",
        "gone",
        "empty",
        "lacks",
        "lacking",
        "no longer present",
    ],
    &[
        "iptables",
        "nftables",
        "nft",
        "firewall",
        "acl",
        "access list",
        "access-list",
        "access control list",
        "netfilter",
        "packet filter",
        "filter rule",
        "filtering rule",
        "ebtables",
    ],
    &[
        "drop",
        "discard",
        "block",
        "deny",
        "reject",
        "blackhole",
        "black hole",
        "filtered",
        "denied",
    ],
    &[
        "default route",
        "default gateway",
        "default via",
        "0.0.0.0/0",
        "gateway of last resort",
        "default-route",
        "default next hop",
    ],
    &[
        "gateway",
        "gw",
        "next hop",
        "next-hop",
        "nexthop",
        "first hop",
        "first-hop",
    ],
    &[
        "remote-as",
        "remote as",
        "peer as",
        "peer-as",
        "asn",
        "as number",
        "neighbor as",
        "autonomous system number",
    ],
    &[
        "mismatch",
        "mismatched",
        "does not match",
        "doesn't match",
        "do not match",
        "wrong",
        "incorrect",
        "bad peer as",
        "misconfigured",
        "misconfiguration",
        "inconsistent",
        "differs",
        "instead of",
    ],
    &[
        "svi",
        "vlan interface",
        "switch virtual interface",
        "routed vlan interface",
        "l3 interface",
        "layer 3 interface",
        "layer-3 interface",
        "bridge interface",
        "irb",
    ],
    &[
        "link", "cable", "cabling", "wire", "carrier", "uplink", "downlink", "physical",
    ],
    &["trunk", "tagged uplink", "802.1q"],
    &["interface", "port", "nic", "iface"],
    &[
        "failover",
        "fail over",
        "fails over",
        "failed over",
        "takes over",
        "took over",
        "take over",
        "taken over",
        "fall back",
        "falls back",
        "fell back",
        "fallback",
        "switchover",
        "switch over",
        "becomes master",
        "became master",
        "new master",
        "preempt",
        "reroute",
        "rerouted",
    ],
    &[
        "reach",
        "reachable",
        "reachability",
        "ping",
        "pingable",
        "responds",
        "answers",
        "connectivity",
    ],
    &[
        "0% loss",
        "0% packet loss",
        "zero loss",
        "zero packet loss",
        "no loss",
        "no packet loss",
        "without loss",
        "lossless",
        "ping succeeds",
        "pings succeed",
        "ping succeeded",
        "pings succeeded",
        "successful ping",
        "successful pings",
        "successfully ping",
        "successfully pings",
        "all packets",
        "every packet",
        "5/5",
        "4/4",
        "3/3",
        "10/10",
    ],
    &[
        "full",
        "full adjacency",
        "fully adjacent",
        "full/dr",
        "full/bdr",
        "full/drother",
    ],
    &[
        "adjacency",
        "neighbor",
        "neighbour",
        "neighborship",
        "peering",
    ],
    &["session", "peering"],
    &["established", "establish"],
    &[
        "healthy",
        "fine",
        "working",
        "operational",
        "intact",
        "normal",
        "ok",
        "okay",
        "unaffected",
        "correct",
        "no fault",
        "functioning",
        "functional",
        "clean",
        "stable",
        "unchanged",
    ],
    &["up", "lower_up", "operationally up", "state up"],
    &[
        "route",
        "prefix",
        "rib",
        "fib",
        "routing table",
        "routing entry",
    ],
    &[
        "withdraw",
        "withdrawn",
        "withdrawal",
        "aged out",
        "ages out",
        "age out",
        "disappear",
        "flushed",
    ],
    &["advertise", "announce", "originate", "redistribute"],
    &["netmask", "mask", "prefix length", "subnet mask", "cidr"],
    &["mtu", "frame size", "jumbo", "fragmentation"],
    &[
        "arp",
        "neighbor table",
        "neighbour table",
        "ip neigh",
        "mac resolution",
    ],
    &[
        "dns",
        "name resolution",
        "resolver",
        "resolv.conf",
        "lookup",
        "resolve",
    ],
    &["dhcp", "lease"],
    &[
        "stp",
        "spanning tree",
        "spanning-tree",
        "root bridge",
        "bpdu",
    ],
    &[
        "loop",
        "routing loop",
        "ttl exceeded",
        "time to live exceeded",
    ],
    &["nat", "masquerade", "snat", "dnat", "address translation"],
    &[
        "tc",
        "qdisc",
        "netem",
        "traffic control",
        "shaping",
        "rate limit",
        "policing",
        "tbf",
        "htb",
    ],
    &["latency", "delay", "rtt", "slow", "jitter"],
    &["bandwidth", "throughput", "iperf"],
    &[
        "http",
        "web server",
        "web service",
        "nginx",
        "apache",
        "httpd",
        "port 80",
        "lighttpd",
    ],
    &["cost", "metric"],
    &["passive", "passive-interface"],
    &["hello", "dead interval", "dead-interval", "timer"],
    &["duplicate", "conflict", "collision"],
    &["sole", "only", "single", "exclusive", "mandatory"],
    &[
        "transit",
        "traverse",
        "pass through",
        "passes through",
        "go through",
        "goes through",
    ],
    &["intermittent", "flapping", "flap", "sporadic", "on and off"],
];

/// Words a rubric line uses about itself; they carry no content and are not matched.
pub const RUBRIC_WORDS: &[&str] = &[
    "must",
    "bonus",
    "identify",
    "identifies",
    "identified",
    "notes",
    "note",
    "noting",
    "explain",
    "explains",
    "explicitly",
    "recognize",
    "recognizes",
    "recognise",
    "recognises",
    "distinguish",
    "distinguishes",
    "mention",
    "mentions",
    "cite",
    "cites",
    "state",
    "states",
    "show",
    "shows",
    "confirm",
    "confirms",
    "verify",
    "verifies",
    "evidence",
    "valid",
    "any",
    "device",
    "component",
    "affected",
    "mechanism",
    "agent",
    "diagnosis",
    "report",
    "exonerates",
    "exonerate",
    "rules",
    "rule-out",
    "localize",
    "localise",
    "localizes",
    "correctly",
    "why",
    "which",
    "whole",
    "entire",
    "own",
    "baseline",
    "e.g",
    "i.e",
    "etc",
];

/// Words too common to count much (half weight).
pub const WEAK_WORDS: &[&str] = &[
    "traffic",
    "network",
    "path",
    "host",
    "service",
    "daemon",
    "routing",
    "configuration",
    "config",
    "status",
    "value",
    "address",
    "side",
    "segment",
    "baseline",
    "packet",
    "packets",
    "server",
    "router",
    "switch",
    "statement",
    "rule",
    "layer",
    "level",
    "problem",
    "issue",
    "fault",
    "cause",
    "result",
    "because",
    "instead",
];

/// Function words, dropped.
pub const STOPWORDS: &[&str] = &[
    "a", "an", "the", "of", "on", "in", "at", "to", "for", "from", "by", "with", "and", "or", "is",
    "are", "was", "were", "be", "been", "being", "its", "it", "that", "this", "these", "those",
    "so", "as", "their", "there", "than", "then", "also", "into", "onto", "s", "has", "have",
    "had", "does", "do", "did", "can", "could", "would", "should", "will", "still", "both", "all",
    "each", "every", "some", "via", "per", "vs", "versus", "such", "just", "even", "i", "we",
    "they", "he", "she", "what", "when", "where", "who", "how", "if", "whether", "about",
];

/// Cue phrases, stemmed, longest first.
static CUES: LazyLock<Vec<(Vec<String>, Cue)>> = LazyLock::new(|| {
    let mut v: Vec<(Vec<String>, Cue)> = Vec::new();
    for (list, cue) in [
        (FAULT_CUES, Cue::Fault),
        (HEALTH_CUES, Cue::Health),
        (NEGATORS, Cue::Negator),
    ] {
        for p in list {
            v.push((phrase(p), cue));
        }
    }
    v.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    v
});

/// A stemmed cue phrase and what it does.
type CuePhrase = (Vec<String>, Cue);
/// A concept group index and one of its stemmed phrases.
type ConceptPhrase = (usize, Vec<String>);

/// Cue phrases by first word (longest first), so that a clause is scanned once.
static CUES_BY_FIRST: LazyLock<WordMap<Vec<CuePhrase>>> = LazyLock::new(|| {
    let mut m: WordMap<Vec<CuePhrase>> = WordMap::default();
    for (p, c) in CUES.iter() {
        m.entry(p[0].clone()).or_default().push((p.clone(), *c));
    }
    m
});

/// Concept phrases by first word: (group, phrase).
static CONCEPTS_BY_FIRST: LazyLock<WordMap<Vec<ConceptPhrase>>> = LazyLock::new(|| {
    let mut m: WordMap<Vec<ConceptPhrase>> = WordMap::default();
    for (g, group) in CONCEPT_PHRASES.iter().enumerate() {
        for p in group {
            if let Some(first) = p.first() {
                m.entry(first.clone()).or_default().push((g, p.clone()));
            }
        }
    }
    m
});

/// Single-word cues by stem.
static SINGLE_CUES: LazyLock<WordMap<Cue>> = LazyLock::new(|| {
    CUES.iter()
        .filter(|(p, _)| p.len() == 1)
        .map(|(p, c)| (p[0].clone(), *c))
        .collect()
});

/// Splits a lexicon phrase into stemmed words the way the text is split.
pub fn phrase(p: &str) -> Vec<String> {
    super::text::words(p).iter().map(|w| stem(w)).collect()
}

/// The cue a single word is, if any.
pub fn cue_of(raw: &str, stemmed: &str) -> Option<Cue> {
    SINGLE_CUES
        .get(stemmed)
        .or_else(|| SINGLE_CUES.get(raw))
        .copied()
}

fn is_filler(w: &str) -> bool {
    STOPWORDS.contains(&w) || matches!(w, "any" | "s")
}

/// Fault cues minus health cues in a clause, with negators flipping the cue that follows them
/// (function words skipped, at most two content words in between).
pub fn cue_balance(raw: &[String], stems: &[String]) -> i32 {
    let mut balance = 0i32;
    let mut i = 0;
    let mut last_negator: Option<usize> = None;
    let mut content_since_negator = 0;
    while i < stems.len() {
        let mut matched: Option<(usize, Cue)> = None;
        let candidates = CUES_BY_FIRST
            .get(&stems[i])
            .into_iter()
            .chain(CUES_BY_FIRST.get(&raw[i]))
            .flatten();
        for (p, cue) in candidates {
            if p.len() <= stems.len() - i
                && p.iter()
                    .enumerate()
                    .all(|(k, w)| &stems[i + k] == w || &raw[i + k] == w)
                && matched.is_none_or(|(l, _)| p.len() > l)
            {
                matched = Some((p.len(), *cue));
            }
        }
        match matched {
            Some((len, Cue::Negator)) => {
                // A negator that is also a fault word (`never`) counts once as a fault.
                if stems[i] == "never" {
                    balance += 1;
                }
                last_negator = Some(i);
                content_since_negator = 0;
                i += len;
            }
            Some((len, cue)) => {
                let negated = last_negator.is_some() && content_since_negator < 3;
                let sign = match (cue, negated) {
                    (Cue::Fault, false) | (Cue::Health, true) => 1,
                    _ => -1,
                };
                balance += sign;
                last_negator = None;
                i += len;
            }
            None => {
                if !is_filler(&raw[i]) {
                    content_since_negator += 1;
                }
                i += 1;
            }
        }
    }
    balance
}

/// Concept groups, stemmed; `CONCEPT_INDEX` maps a first word to the groups starting with it.
pub static CONCEPT_PHRASES: LazyLock<Vec<Vec<Vec<String>>>> = LazyLock::new(|| {
    CONCEPTS
        .iter()
        .map(|g| g.iter().map(|p| phrase(p)).collect())
        .collect()
});

/// The concept groups a phrase starting at `words[i]` belongs to, longest phrase first:
/// `(group index, phrase length)`.
pub fn concepts_at(words: &[String], i: usize) -> Option<(usize, usize)> {
    let mut best: Option<(usize, usize)> = None;
    for (gi, p) in CONCEPTS_BY_FIRST.get(&words[i]).into_iter().flatten() {
        if p.len() <= words.len() - i
            && p.iter().enumerate().all(|(k, w)| &words[i + k] == w)
            && best.is_none_or(|(_, l)| p.len() > l)
        {
            best = Some((*gi, p.len()));
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn balance(s: &str) -> i32 {
        let raw = super::super::text::words(s);
        let stems: Vec<String> = raw.iter().map(|w| stem(w)).collect();
        cue_balance(&raw, &stems)
    }

    #[test]
    fn cues_and_negation() {
        assert!(balance("ospfd is dead") > 0);
        assert!(balance("ospfd is not running") > 0);
        assert!(balance("csw1 is healthy") < 0);
        assert!(balance("there is no packet loss") < 0);
        assert!(balance("it is not the root cause") < 0);
        assert!(balance("pc1 reaches pc2 with 0% loss") < 0);
        assert!(balance("pc1 cannot reach its gateway") > 0);
        assert!(balance("the session never establishes") > 0);
        assert_eq!(balance("the topology has three routers"), 0);
    }

    #[test]
    fn concept_lookup() {
        let w = phrase("the ospf daemon died");
        let (g, len) = concepts_at(&w, 1).unwrap();
        assert_eq!(CONCEPTS[g][0], "ospfd");
        assert_eq!(len, 2);
        assert!(concepts_at(&w, 0).is_none());
    }
}
