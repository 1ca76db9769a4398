//! The checkable claims of a ticket: the identifiers it names and the symptoms it reports.
//!
//! Only the ticket and the topology's device names are read. Symptom words are grouped into
//! a few kinds that decide which probes run first; they never decide the verdict.

use super::topo::SummaryTopology;
use regex::Regex;
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// A kind of reported symptom.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ClaimedSymptom {
    /// Something cannot reach something.
    Connectivity,
    /// Slowness, loss, flapping.
    Performance,
    /// Name resolution.
    Dns,
    /// Web pages, HTTP.
    Web,
    /// Address assignment.
    Dhcp,
    /// Routing protocols, routes, neighbours.
    Routing,
    /// Reaching the Internet (public addresses outside the campus).
    Internet,
}

/// A cause the ticket asserts (which the evidence may contradict).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Mechanism {
    /// A link, cable, port or interface is down.
    LinkDown,
    /// A daemon or device crashed or stopped.
    DaemonCrash,
    /// A routing session or adjacency is down or flapping.
    Session,
    /// A firewall, ACL or filter blocks traffic.
    Filter,
    /// An MTU problem.
    Mtu,
    /// A routing loop.
    Loop,
    /// An address conflict or wrong address/netmask.
    Address,
    /// A wrong or dead gateway.
    Gateway,
    /// DNS is broken.
    Dns,
}

impl Mechanism {
    /// How the report names it.
    pub fn describe(&self) -> &'static str {
        match self {
            Mechanism::LinkDown => "a link or interface being down",
            Mechanism::DaemonCrash => "a crashed or stopped daemon",
            Mechanism::Session => "a routing session being down",
            Mechanism::Filter => "a firewall/ACL blocking traffic",
            Mechanism::Mtu => "an MTU problem",
            Mechanism::Loop => "a routing loop",
            Mechanism::Address => "an address conflict or wrong address",
            Mechanism::Gateway => "a gateway problem",
            Mechanism::Dns => "a DNS failure",
        }
    }
}

const MECHANISM_WORDS: &[(Mechanism, &[&str])] = &[
    (
        Mechanism::LinkDown,
        &[
            "link down",
            "link is down",
            "link failure",
            "link went down",
            "cable",
            "unplugged",
            "interface down",
            "interface is down",
            "port down",
            "port is down",
            "shut down",
            "shutdown",
            "link dead",
            "link is dead",
        ],
    ),
    (
        Mechanism::DaemonCrash,
        &[
            "crash",
            "daemon",
            "died",
            "dead process",
            "process",
            "restart",
            "stopped running",
        ],
    ),
    (
        Mechanism::Session,
        &[
            "session",
            "peering",
            "adjacency",
            "flap",
            "neighbor down",
            "neighbour down",
        ],
    ),
    (
        Mechanism::Filter,
        &[
            "firewall",
            "acl",
            "access list",
            "access-list",
            "filter",
            "blocked",
            "blocking",
            "iptables",
        ],
    ),
    (
        Mechanism::Mtu,
        &["mtu", "fragment", "jumbo", "large packet", "full-size"],
    ),
    (Mechanism::Loop, &["loop"]),
    (
        Mechanism::Address,
        &[
            "duplicate",
            "conflict",
            "netmask",
            "subnet mask",
            "same ip",
            "same address",
        ],
    ),
    (Mechanism::Gateway, &["gateway"]),
    (
        Mechanism::Dns,
        &["dns", "resolv", "name lookup", "nxdomain"],
    ),
];

/// What a ticket claims, in checkable form.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Claims {
    /// Topology devices named in the ticket.
    pub devices: BTreeSet<String>,
    /// IPv4 addresses named (prefixes excluded).
    pub addresses: BTreeSet<String>,
    /// IPv4 prefixes named.
    pub prefixes: BTreeSet<String>,
    /// Interface names named.
    pub interfaces: BTreeSet<String>,
    /// Domain names named.
    pub domains: BTreeSet<String>,
    /// Symptom kinds reported.
    pub symptoms: BTreeSet<ClaimedSymptom>,
    /// Causes the ticket asserts.
    pub mechanisms: BTreeSet<Mechanism>,
}

static IPV4: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})(/\d{1,2})?\b").unwrap());
static IFACE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?i)\b(eth\d+(?:\.\d+)?|ens\d+|bond\d+|lo)\b").unwrap());
static DOMAIN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b((?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+(?:com|net|org|local|lab|edu|io|internal|corp|home|example))\b").unwrap()
});

/// Clause boundaries: sentence ends, semicolons, commas, and "but".
static CLAUSE: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"[.;,!?]\s|\bbut\b|\n").unwrap());

/// Words that say a thing works.
const HEALTHY_WORDS: &[&str] = &[
    " works",
    " working",
    " fine",
    " is ok",
    " are ok",
    " okay",
    " resolves",
    "can ping",
    "can reach",
    " answers",
    " is up",
    " are up",
];

/// Words that say a thing fails (a clause with both is a complaint).
const FAILING_WORDS: &[&str] = &[
    "not",
    "n't",
    "no ",
    "fail",
    "down",
    "broken",
    "time out",
    "timed out",
    "timeout",
    "drop",
    "lost",
    "crash",
    "block",
    "wrong",
    "stopped",
    "dead",
];

/// Whether a clause only reports something working ("DNS works (resolves names)").
fn affirms_health(clause: &str) -> bool {
    HEALTHY_WORDS.iter().any(|w| clause.contains(w))
        && !FAILING_WORDS.iter().any(|w| clause.contains(w))
}

const SYMPTOM_WORDS: &[(ClaimedSymptom, &[&str])] = &[
    (
        ClaimedSymptom::Connectivity,
        &[
            "unreachable",
            "can't reach",
            "cannot reach",
            "can not reach",
            "cannot ping",
            "can't ping",
            "no connectivity",
            "offline",
            "down",
            "no internet",
            "lost connection",
            "cannot connect",
            "can't connect",
            "not reachable",
            "timeout",
            "timed out",
            "isolated",
            "cut off",
            "cannot access",
            "can't access",
            "no access",
        ],
    ),
    (
        ClaimedSymptom::Performance,
        &[
            "slow",
            "latency",
            "lag",
            "packet loss",
            "dropping",
            "drops",
            "intermittent",
            "flapping",
            "flaps",
            "sometimes",
            "unstable",
            "jitter",
            "throughput",
        ],
    ),
    (
        ClaimedSymptom::Dns,
        &[
            "dns",
            "resolve",
            "resolution",
            "name lookup",
            "nxdomain",
            "servfail",
            "hostname",
        ],
    ),
    (
        ClaimedSymptom::Web,
        &[
            "web", "http", "website", "page", "browser", "url", "site", "portal", "curl", "nginx",
            "apache",
        ],
    ),
    (
        ClaimedSymptom::Dhcp,
        &[
            "dhcp",
            "lease",
            "ip address",
            "no address",
            "169.254",
            "apipa",
            "self-assigned",
        ],
    ),
    (
        ClaimedSymptom::Routing,
        &[
            "ospf",
            "bgp",
            "rip",
            "route",
            "routing",
            "neighbor",
            "neighbour",
            "adjacency",
            "peer",
            "session",
            "gateway",
            "redistribut",
        ],
    ),
    (
        ClaimedSymptom::Internet,
        &[
            "internet",
            "public ip",
            "public address",
            "external server",
            "external site",
            "external host",
            "outside world",
        ],
    ),
];

impl Claims {
    /// Extracts the claims of `ticket` against the devices of `topo`.
    pub fn extract(ticket: &str, topo: &SummaryTopology) -> Claims {
        let mut c = Claims::default();
        let lower = ticket.to_ascii_lowercase();
        for name in topo.devices.keys() {
            let n = name.to_ascii_lowercase();
            // Whole-word match: device names are often prefixes of others (pc1 / pc10).
            let pat = format!(r"(?i)(^|[^a-z0-9_]){}($|[^a-z0-9_])", regex::escape(&n));
            if Regex::new(&pat)
                .map(|r| r.is_match(&lower))
                .unwrap_or(false)
            {
                c.devices.insert(name.clone());
            }
        }
        for m in IPV4.captures_iter(ticket) {
            let ip = m[1].to_string();
            if ip.parse::<std::net::Ipv4Addr>().is_err() {
                continue;
            }
            match m.get(2) {
                Some(len) => {
                    c.prefixes.insert(format!("{ip}{}", len.as_str()));
                }
                None => {
                    c.addresses.insert(ip);
                }
            }
        }
        for m in IFACE.captures_iter(ticket) {
            c.interfaces.insert(m[1].to_ascii_lowercase());
        }
        for m in DOMAIN.captures_iter(ticket) {
            let d = m[1].to_ascii_lowercase();
            if !topo.devices.contains_key(&d) {
                c.domains.insert(d);
            }
        }
        for (kind, words) in SYMPTOM_WORDS {
            if words.iter().any(|w| lower.contains(w)) {
                c.symptoms.insert(*kind);
            }
        }
        if !c.domains.is_empty() {
            c.symptoms.insert(ClaimedSymptom::Dns);
        }
        // A cause counts only where the ticket blames it: "DNS works" or "can ping the
        // gateway fine" report something healthy, not a mechanism.
        for clause in CLAUSE.split(&lower).filter(|cl| !affirms_health(cl)) {
            for (kind, words) in MECHANISM_WORDS {
                if words.iter().any(|w| clause.contains(w)) {
                    c.mechanisms.insert(*kind);
                }
            }
        }
        c
    }

    /// Number of distinct checkable identifiers.
    pub fn identifier_count(&self) -> usize {
        self.devices.len()
            + self.addresses.len()
            + self.prefixes.len()
            + self.interfaces.len()
            + self.domains.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_and_symptoms() {
        let topo = SummaryTopology::parse(
            "Devices:\n  pc1: eth0=A\n  pc10: eth0=A\n  r1: eth0=A, eth1=B\n",
        );
        let c = Claims::extract(
            "Since this morning PC1 cannot reach 10.0.2.5 or www.campus.lab; r1 eth1 looks down. Network 10.0.2.0/24.",
            &topo,
        );
        assert_eq!(c.devices.iter().collect::<Vec<_>>(), vec!["pc1", "r1"]);
        assert!(c.addresses.contains("10.0.2.5"));
        assert!(c.prefixes.contains("10.0.2.0/24"));
        assert!(c.interfaces.contains("eth1"));
        assert!(c.domains.contains("www.campus.lab"));
        assert!(c.symptoms.contains(&ClaimedSymptom::Connectivity));
        assert!(c.symptoms.contains(&ClaimedSymptom::Dns));
        assert_eq!(c.identifier_count(), 6);
        assert!(c.mechanisms.is_empty());
        let blame = Claims::extract(
            "r1 crashed and the BGP session keeps flapping; maybe the firewall?",
            &topo,
        );
        assert_eq!(
            blame.mechanisms.iter().copied().collect::<Vec<_>>(),
            vec![
                Mechanism::DaemonCrash,
                Mechanism::Session,
                Mechanism::Filter
            ]
        );
        let scoped = Claims::extract(
            "PC1 can ping the corporate gateway fine, but cannot reach the Internet. DNS works (resolves names) but connections time out.",
            &topo,
        );
        assert!(
            scoped.mechanisms.is_empty(),
            "healthy mentions are not blamed: {:?}",
            scoped.mechanisms
        );
        assert!(scoped.symptoms.contains(&ClaimedSymptom::Internet));
        let blamed = Claims::extract("The gateway is down and DNS is broken.", &topo);
        assert_eq!(
            blamed.mechanisms.iter().copied().collect::<Vec<_>>(),
            vec![Mechanism::Gateway, Mechanism::Dns]
        );
        let vague = Claims::extract("Sorry, the internet feels slow sometimes?", &topo);
        assert_eq!(vague.identifier_count(), 0);
        assert!(vague.symptoms.contains(&ClaimedSymptom::Performance));
    }
}
