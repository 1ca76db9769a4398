//! One spelling per meaning for FRR statements, so that comparing a saved `frr.conf` with
//! `show running-config` finds changes, not FRR's way of printing them.
//!
//! FRR reads a configuration and prints it back in its own form (seen on FRR 8.4):
//! `passive-interface IF` under `router ospf` comes back as `ip ospf passive` under
//! `interface IF`; a virtual link gains its default `transmit-delay 1`; an area given
//! dotted (`0.0.0.0`) may come back decimal; `ip route A.B.C.D M.M.M.M` comes back as a
//! prefix; a BGP `neighbor X activate` for IPv4 unicast is implied (and not printed) unless
//! `no bgp default ipv4-unicast` is set. Each rewrite here maps both spellings to one.

use crate::baseline::ip4::Net;
use std::net::Ipv4Addr;

/// Virtual-link parameters and the value FRR uses when none is given.
const VIRTUAL_LINK_DEFAULTS: [(&str, &str); 4] = [
    ("hello-interval", "10"),
    ("retransmit-interval", "5"),
    ("transmit-delay", "1"),
    ("dead-interval", "40"),
];

/// The canonical `(section, statement)` of one statement (whitespace already collapsed), or
/// `None` when it says nothing beyond FRR's defaults. `activate_explicit`: the configuration
/// turns the implicit IPv4 unicast activation of BGP neighbours off.
pub fn canonical(
    section: &str,
    statement: &str,
    activate_explicit: bool,
) -> Option<(String, String)> {
    let w: Vec<&str> = statement.split_whitespace().collect();
    if section.starts_with("router ospf") {
        // `passive-interface IF` is `interface IF` / `ip ospf passive` (not the default form).
        if let ["passive-interface", iface] = w.as_slice()
            && *iface != "default"
        {
            return Some((format!("interface {iface}"), "ip ospf passive".into()));
        }
    }
    if section.starts_with("router bgp")
        && !activate_explicit
        && matches!(w.as_slice(), ["neighbor", _, "activate"])
    {
        return None;
    }
    let mut words: Vec<String> = w.iter().map(|s| s.to_string()).collect();
    // Area ids: dotted and decimal are the same area.
    for i in 1..words.len() {
        if words[i - 1] == "area"
            && let Ok(ip) = words[i].parse::<Ipv4Addr>()
        {
            words[i] = u32::from(ip).to_string();
        }
    }
    if words.len() >= 4 && words[0] == "area" && words[2] == "virtual-link" {
        words = virtual_link(&words);
    }
    // Prefixes of routes and network statements: host bits and mask spelling do not count.
    let prefix_at = match words.as_slice() {
        [first, ..] if first == "network" || first == "aggregate-address" => Some(1),
        [ip, route, ..] if ip == "ip" && route == "route" => Some(2),
        _ => None,
    };
    if let Some(i) = prefix_at
        && let Some(p) = words.get(i).cloned()
    {
        let mask = words.get(i + 1).and_then(|m| m.parse::<Ipv4Addr>().ok());
        let net = match (p.contains('/'), mask) {
            (false, Some(m)) if is_mask(m) => {
                words.remove(i + 1);
                Net::parse(&format!("{p}/{}", u32::from(m).count_ones()))
            }
            _ => Net::parse(&p),
        };
        if let Some(n) = net {
            words[i] = n.network().to_string();
        }
    }
    Some((section.to_string(), words.join(" ")))
}

/// `area A virtual-link ID` with its parameters sorted and defaults dropped.
fn virtual_link(words: &[String]) -> Vec<String> {
    let mut out: Vec<String> = words[..4].to_vec();
    let mut params: Vec<(String, String)> = Vec::new();
    let mut rest = words[4..].iter();
    while let Some(k) = rest.next() {
        let v = rest.next().cloned().unwrap_or_default();
        let default = VIRTUAL_LINK_DEFAULTS
            .iter()
            .any(|(dk, dv)| dk == k && *dv == v);
        if !default {
            params.push((k.clone(), v));
        }
    }
    params.sort();
    for (k, v) in params {
        out.push(k);
        if !v.is_empty() {
            out.push(v);
        }
    }
    out
}

/// A contiguous netmask (`255.255.255.0`).
fn is_mask(m: Ipv4Addr) -> bool {
    let bits = u32::from(m);
    bits.leading_ones() + bits.trailing_zeros() == 32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(section: &str, s: &str) -> Option<String> {
        canonical(section, s, false).map(|(sec, st)| format!("{sec} | {st}"))
    }

    #[test]
    fn renderings_meet() {
        assert_eq!(
            c("router ospf", "passive-interface lo"),
            c("interface lo", "ip ospf passive")
        );
        assert_eq!(
            c("router ospf", "passive-interface default").unwrap(),
            "router ospf | passive-interface default"
        );
        assert_eq!(
            c(
                "router ospf",
                "area 1 virtual-link 18.1.4.1 hello-interval 1 retransmit-interval 1 dead-interval 3"
            ),
            c(
                "router ospf",
                "area 1 virtual-link 18.1.4.1 hello-interval 1 retransmit-interval 1 transmit-delay 1 dead-interval 3"
            )
        );
        // A real change of a virtual-link timer still differs.
        assert_ne!(
            c(
                "router ospf",
                "area 1 virtual-link 18.1.4.1 hello-interval 1"
            ),
            c(
                "router ospf",
                "area 1 virtual-link 18.1.4.1 hello-interval 5"
            )
        );
        assert_eq!(
            c("router ospf", "network 10.0.0.1/24 area 0.0.0.0"),
            c("router ospf", "network 10.0.0.0/24 area 0")
        );
        assert_eq!(
            c("", "ip route 10.9.0.0 255.255.0.0 blackhole"),
            c("", "ip route 10.9.0.0/16 blackhole")
        );
        assert_eq!(c("router bgp 1", "neighbor 10.0.0.2 activate"), None);
        assert!(canonical("router bgp 1", "neighbor 10.0.0.2 activate", true).is_some());
    }
}
