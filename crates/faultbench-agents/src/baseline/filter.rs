//! Packet filters and NAT from `iptables-save`: which rule decides a given packet.
//!
//! Only the matches that decide ordinary test traffic are modelled: addresses, protocol,
//! ports, interfaces, connection state and ICMP type. A rule with any other match is
//! *uncertain*: it never decides a verdict here (so an unmodelled rule cannot create a false
//! finding), but it is listed among the device's rules.

use super::ip4::Net;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// A probe packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet {
    /// Source address.
    pub src: Ipv4Addr,
    /// Destination address.
    pub dst: Ipv4Addr,
    /// `icmp`, `tcp` or `udp`.
    pub proto: &'static str,
    /// Destination port (tcp/udp).
    pub dport: Option<u16>,
    /// Input interface (forwarded or received packets).
    pub iif: Option<String>,
    /// Output interface (forwarded or sent packets).
    pub oif: Option<String>,
    /// A reply (conntrack state ESTABLISHED) rather than a new flow.
    pub reply: bool,
}

/// One `-A` rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilterRule {
    /// `filter`, `nat`, `mangle`, `raw`.
    pub table: String,
    /// Chain.
    pub chain: String,
    /// The line as printed by `iptables-save`.
    pub line: String,
    /// `-j` target.
    pub target: String,
    src: Option<(Net, bool)>,
    dst: Option<(Net, bool)>,
    proto: Option<(String, bool)>,
    iif: Option<(String, bool)>,
    oif: Option<(String, bool)>,
    dports: Option<Vec<(u16, u16)>>,
    states: Option<Vec<String>>,
    icmp_type: Option<String>,
    /// A match this reader does not model.
    pub uncertain: bool,
}

/// What a chain does with a packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FilterVerdict {
    /// Accepted (by a rule, the policy, or no rules at all).
    Accept,
    /// Dropped or rejected, by this rule line (or `:CHAIN DROP` policy).
    Drop(String),
}

/// A device's rules.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Ruleset {
    /// All `-A` rules in order.
    pub rules: Vec<FilterRule>,
    /// Non-ACCEPT policies: (table, chain) → policy.
    pub policies: BTreeMap<(String, String), String>,
}

fn iface_match(pat: &str, name: Option<&str>) -> bool {
    let Some(name) = name else { return false };
    match pat.strip_suffix('+') {
        Some(prefix) => name.starts_with(prefix),
        None => pat == name,
    }
}

impl FilterRule {
    /// Whether the rule matches `p` (uncertain rules never match).
    pub fn matches(&self, p: &Packet) -> bool {
        if self.uncertain {
            return false;
        }
        let neg = |hit: bool, n: bool| hit != n;
        if let Some((net, n)) = &self.src
            && !neg(net.contains(p.src), *n)
        {
            return false;
        }
        if let Some((net, n)) = &self.dst
            && !neg(net.contains(p.dst), *n)
        {
            return false;
        }
        if let Some((proto, n)) = &self.proto
            && !neg(proto == p.proto || proto == "all", *n)
        {
            return false;
        }
        if let Some((i, n)) = &self.iif
            && !neg(iface_match(i, p.iif.as_deref()), *n)
        {
            return false;
        }
        if let Some((i, n)) = &self.oif
            && !neg(iface_match(i, p.oif.as_deref()), *n)
        {
            return false;
        }
        if let Some(ports) = &self.dports {
            let Some(d) = p.dport else { return false };
            if !ports.iter().any(|(a, b)| (*a..=*b).contains(&d)) {
                return false;
            }
        }
        if let Some(states) = &self.states {
            let st = if p.reply { "ESTABLISHED" } else { "NEW" };
            if !states.iter().any(|s| s == st) {
                return false;
            }
        }
        if let Some(t) = &self.icmp_type {
            let request = matches!(t.as_str(), "echo-request" | "8");
            let reply = matches!(t.as_str(), "echo-reply" | "0");
            if p.proto != "icmp" || !((request && !p.reply) || (reply && p.reply) || t == "any") {
                return false;
            }
        }
        true
    }

    /// Drops or rejects.
    pub fn drops(&self) -> bool {
        matches!(self.target.as_str(), "DROP" | "REJECT")
    }
}

fn parse_ports(text: &str) -> Vec<(u16, u16)> {
    text.split(',')
        .filter_map(|p| match p.split_once(':') {
            Some((a, b)) => Some((a.parse().ok()?, b.parse().ok()?)),
            None => p.parse().ok().map(|x| (x, x)),
        })
        .collect()
}

/// Replaces each quoted string (a comment) by `q`, so it stays one word.
fn without_quoted_text(text: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in text.chars() {
        match (c, quoted) {
            ('"', false) => {
                quoted = true;
                out.push('q');
            }
            ('"', true) => quoted = false,
            (_, true) => {}
            (c, false) => out.push(c),
        }
    }
    out
}

/// Reads `iptables-save` lines (`*table`, `:CHAIN POLICY`, `-A …`).
pub fn parse(lines: &[String]) -> Ruleset {
    let mut rs = Ruleset::default();
    let mut table = "filter".to_string();
    for line in lines {
        let t = line.trim();
        if let Some(name) = t.strip_prefix('*') {
            table = name.trim().to_string();
            continue;
        }
        if let Some(rest) = t.strip_prefix(':') {
            let mut w = rest.split_whitespace();
            if let (Some(chain), Some(policy)) = (w.next(), w.next())
                && policy != "ACCEPT"
                && policy != "-"
            {
                rs.policies
                    .insert((table.clone(), chain.to_string()), policy.to_string());
            }
            continue;
        }
        let Some(rest) = t.strip_prefix("-A ") else {
            continue;
        };
        let unquoted = without_quoted_text(rest);
        let words: Vec<&str> = unquoted.split_whitespace().collect();
        let Some(chain) = words.first() else { continue };
        let mut r = FilterRule {
            table: table.clone(),
            chain: chain.to_string(),
            line: t.to_string(),
            target: String::new(),
            src: None,
            dst: None,
            proto: None,
            iif: None,
            oif: None,
            dports: None,
            states: None,
            icmp_type: None,
            uncertain: false,
        };
        let mut i = 1;
        let mut negate = false;
        while i < words.len() {
            let w = words[i];
            let val = words.get(i + 1).copied().unwrap_or("");
            let mut used = 2;
            match w {
                "!" => {
                    negate = true;
                    i += 1;
                    continue;
                }
                "-s" | "--source" => r.src = Net::parse(val).map(|n| (n, negate)),
                "-d" | "--destination" => r.dst = Net::parse(val).map(|n| (n, negate)),
                "-p" | "--protocol" => r.proto = Some((val.to_ascii_lowercase(), negate)),
                "-i" | "--in-interface" => r.iif = Some((val.to_string(), negate)),
                "-o" | "--out-interface" => r.oif = Some((val.to_string(), negate)),
                "--dport" | "--destination-port" | "--dports" | "--destination-ports" => {
                    if negate {
                        r.uncertain = true;
                    }
                    r.dports = Some(parse_ports(val));
                }
                "--ctstate" | "--state" => {
                    if negate {
                        r.uncertain = true;
                    }
                    r.states = Some(val.split(',').map(str::to_string).collect());
                }
                "--icmp-type" => r.icmp_type = Some(val.to_string()),
                "-m" | "--match" => {
                    if !matches!(
                        val,
                        "tcp" | "udp" | "icmp" | "multiport" | "conntrack" | "state" | "comment"
                    ) {
                        r.uncertain = true;
                    }
                }
                "--comment" => {}
                "-j" | "--jump" | "-g" | "--goto" => r.target = val.to_string(),
                "--to-source" | "--to-destination" | "--to" | "--reject-with" | "--to-ports" => {}
                _ if w.starts_with("--") => {
                    r.uncertain = true;
                    used = if val.starts_with('-') || val.is_empty() {
                        1
                    } else {
                        2
                    };
                }
                _ => used = 1,
            }
            negate = false;
            i += used;
        }
        rs.rules.push(r);
    }
    rs
}

impl Ruleset {
    /// Walks `chain` of the filter table for `p`.
    pub fn verdict(&self, chain: &str, p: &Packet) -> FilterVerdict {
        match self.walk("filter", chain, p, 0) {
            Some(v) => v,
            None => match self
                .policies
                .get(&("filter".to_string(), chain.to_string()))
            {
                Some(pol) if pol == "DROP" || pol == "REJECT" => {
                    FilterVerdict::Drop(format!(":{chain} {pol} (chain policy)"))
                }
                _ => FilterVerdict::Accept,
            },
        }
    }

    fn walk(&self, table: &str, chain: &str, p: &Packet, depth: u8) -> Option<FilterVerdict> {
        if depth > 8 {
            return None;
        }
        for r in self
            .rules
            .iter()
            .filter(|r| r.table == table && r.chain == chain)
        {
            if !r.matches(p) {
                continue;
            }
            match r.target.as_str() {
                "ACCEPT" => return Some(FilterVerdict::Accept),
                "DROP" | "REJECT" => return Some(FilterVerdict::Drop(r.line.clone())),
                "RETURN" => return None,
                "LOG" | "" | "MARK" | "CONNMARK" | "NFLOG" => {}
                user => {
                    if let Some(v) = self.walk(table, user, p, depth + 1) {
                        return Some(v);
                    }
                }
            }
        }
        None
    }

    /// The source-NAT rule (SNAT/MASQUERADE in POSTROUTING) that rewrites `p`, if any.
    pub fn snat(&self, p: &Packet) -> Option<&FilterRule> {
        self.rules.iter().find(|r| {
            r.table == "nat"
                && r.chain == "POSTROUTING"
                && matches!(r.target.as_str(), "SNAT" | "MASQUERADE")
                && r.matches(p)
        })
    }

    /// A crafted access policy: the chain holding `line` also has ACCEPT exceptions (as an
    /// ACL translated from a router config does), as opposed to a lone DROP.
    pub fn looks_deliberate(&self, line: &str) -> bool {
        let chain = self
            .rules
            .iter()
            .find(|r| r.line == line)
            .map(|r| r.chain.clone())
            .or_else(|| {
                line.strip_prefix(':')
                    .and_then(|l| l.split_whitespace().next())
                    .map(str::to_string)
            });
        let Some(chain) = chain else { return false };
        let accepts = self
            .rules
            .iter()
            .filter(|r| r.table == "filter" && r.chain == chain && r.target == "ACCEPT")
            .count();
        let drops = self
            .rules
            .iter()
            .filter(|r| r.table == "filter" && r.chain == chain && r.drops())
            .count();
        let user_chain = !matches!(chain.as_str(), "INPUT" | "FORWARD" | "OUTPUT");
        accepts >= 1 && (drops + accepts >= 3 || user_chain)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rs(text: &str) -> Ruleset {
        parse(&text.lines().map(str::to_string).collect::<Vec<_>>())
    }

    fn pkt(src: &str, dst: &str, proto: &'static str, dport: Option<u16>) -> Packet {
        Packet {
            src: src.parse().unwrap(),
            dst: dst.parse().unwrap(),
            proto,
            dport,
            iif: Some("eth0".into()),
            oif: Some("eth1".into()),
            reply: false,
        }
    }

    #[test]
    fn verdicts() {
        let r = rs("*filter\n:FORWARD ACCEPT [0:0]\n\
                    -A FORWARD -s 10.0.1.0/24 -d 10.0.2.0/24 -j DROP\n\
                    -A INPUT -p tcp -m tcp --dport 179 -j DROP\n\
                    -A FORWARD ! -s 10.0.0.0/8 -p icmp -m icmp --icmp-type 8 -j REJECT --reject-with icmp-port-unreachable\n\
                    *nat\n-A POSTROUTING -s 195.11.14.0/24 -o eth1 -j SNAT --to-source 100.64.0.1\n");
        assert_eq!(
            r.verdict("FORWARD", &pkt("10.0.1.5", "10.0.2.9", "icmp", None)),
            FilterVerdict::Drop("-A FORWARD -s 10.0.1.0/24 -d 10.0.2.0/24 -j DROP".into())
        );
        assert_eq!(
            r.verdict("FORWARD", &pkt("10.0.2.9", "10.0.1.5", "icmp", None)),
            FilterVerdict::Accept
        );
        assert!(matches!(
            r.verdict("INPUT", &pkt("10.0.0.1", "10.0.0.2", "tcp", Some(179))),
            FilterVerdict::Drop(_)
        ));
        assert_eq!(
            r.verdict("INPUT", &pkt("10.0.0.1", "10.0.0.2", "icmp", None)),
            FilterVerdict::Accept
        );
        assert!(matches!(
            r.verdict("FORWARD", &pkt("172.16.0.1", "10.0.2.9", "icmp", None)),
            FilterVerdict::Drop(_)
        ));
        let mut reply = pkt("172.16.0.1", "10.0.2.9", "icmp", None);
        reply.reply = true;
        assert_eq!(r.verdict("FORWARD", &reply), FilterVerdict::Accept);
        let nat = r
            .snat(&pkt("195.11.14.2", "200.1.1.2", "icmp", None))
            .unwrap();
        assert!(nat.line.contains("100.64.0.1"));
        assert!(!r.looks_deliberate(&r.rules[0].line));
    }

    #[test]
    fn policies_user_chains_and_uncertain_matches() {
        let r = rs("*filter\n:FORWARD DROP [0:0]\n\
                    -A FORWARD -i eth2 -m comment --comment \"ACL 110 inbound\" -j ACL110\n\
                    -A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT\n\
                    -A ACL110 -s 172.16.10.0/24 -d 172.18.51.1/32 -p tcp -m tcp --dport 80 -j ACCEPT\n\
                    -A ACL110 -j DROP\n\
                    -A OUTPUT -m owner --uid-owner 0 -j DROP\n");
        // Not from eth2, a new flow: the DROP policy decides.
        let p = pkt("10.0.1.5", "10.0.2.9", "icmp", None);
        assert_eq!(
            r.verdict("FORWARD", &p),
            FilterVerdict::Drop(":FORWARD DROP (chain policy)".into())
        );
        let mut from_b = p.clone();
        from_b.iif = Some("eth2".into());
        assert_eq!(
            r.verdict("FORWARD", &from_b),
            FilterVerdict::Drop("-A ACL110 -j DROP".into())
        );
        assert!(r.looks_deliberate("-A ACL110 -j DROP"));
        // The owner match is not modelled: the rule never decides.
        assert_eq!(r.verdict("OUTPUT", &p), FilterVerdict::Accept);
        assert!(r.rules.last().unwrap().uncertain);
    }
}
