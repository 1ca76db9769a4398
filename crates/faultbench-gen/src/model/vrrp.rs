//! VRRP virtual gateways from keepalived's configuration (`etc/keepalived/keepalived.conf`).
//!
//! On a campus whose hosts use a virtual address as their default gateway (Kath1's
//! distribution pairs), the router that answers for that address is the VRRP master. The
//! model gives each `vrrp_instance` declared `state MASTER` its virtual addresses on the
//! instance's interface, with the prefix length of the interface's own address that covers
//! them, so a host's gateway resolves to a router on its LAN. A backup keeps only its own
//! address: while the master is up (the healthy lab) it does not answer for the gateway.
//! Return traffic may still reach the LAN through either router of the pair (equal-cost
//! routes), which is why the model's router-side families are not trusted here without the
//! live verification every variant gets.

use super::net::Ipv4Net;
use std::net::Ipv4Addr;

/// One `vrrp_instance` as far as the model needs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VrrpInstance {
    /// Its name.
    pub name: String,
    /// `interface`.
    pub iface: String,
    /// `state MASTER`.
    pub master: bool,
    /// `virtual_ipaddress` entries (a length when written `a.b.c.d/len`).
    pub vips: Vec<(Ipv4Addr, Option<u8>)>,
}

/// Reads the `vrrp_instance` blocks of a keepalived configuration (comments dropped; unknown
/// keywords and blocks skipped; a malformed address ignored).
pub fn parse_keepalived(text: &str) -> Vec<VrrpInstance> {
    let mut tokens: Vec<String> = Vec::new();
    for line in text.lines() {
        let line = line.split(['#', '!']).next().unwrap_or("");
        for w in line
            .replace('{', " { ")
            .replace('}', " } ")
            .split_whitespace()
        {
            tokens.push(w.to_string());
        }
    }
    let mut out = Vec::new();
    let mut i = 0;
    while i < tokens.len() {
        if tokens[i] == "vrrp_instance" && tokens.get(i + 2).is_some_and(|t| t == "{") {
            let mut inst = VrrpInstance {
                name: tokens[i + 1].clone(),
                iface: String::new(),
                master: false,
                vips: Vec::new(),
            };
            let mut depth = 1;
            let mut j = i + 3;
            let mut in_vips = false;
            while j < tokens.len() && depth > 0 {
                let t = tokens[j].as_str();
                match t {
                    "{" => depth += 1,
                    "}" => {
                        depth -= 1;
                        in_vips = false;
                    }
                    "virtual_ipaddress" if depth == 1 => {
                        in_vips = tokens.get(j + 1).is_some_and(|t| t == "{");
                    }
                    "state" if depth == 1 => {
                        inst.master = tokens.get(j + 1).is_some_and(|s| s == "MASTER");
                    }
                    "interface" if depth == 1 => {
                        inst.iface = tokens.get(j + 1).cloned().unwrap_or_default();
                    }
                    _ if in_vips && depth == 2 => {
                        let (a, len) = match t.split_once('/') {
                            Some((a, l)) => (a, l.parse::<u8>().ok().filter(|l| *l <= 32)),
                            None => (t, None),
                        };
                        if let Ok(ip) = a.parse::<Ipv4Addr>() {
                            inst.vips.push((ip, len));
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
            out.push(inst);
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

/// The virtual addresses a master instance adds to `addrs` of its interface: each with the
/// length written, else that of the interface's own address covering it (an address no own
/// subnet covers, with no length, is left out: the model could not place it on a LAN).
pub fn master_addresses(inst: &VrrpInstance, own: &[Ipv4Net]) -> Vec<Ipv4Net> {
    if !inst.master {
        return Vec::new();
    }
    inst.vips
        .iter()
        .filter_map(|(ip, len)| {
            let len = len.or_else(|| own.iter().find(|n| n.contains(*ip)).map(|n| n.len))?;
            Ipv4Net::new(*ip, len)
        })
        .filter(|n| !own.iter().any(|o| o.addr == n.addr))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = "# a comment { not a block\n\
        vrrp_instance VI_10 {\n    state MASTER\n    interface br0.10\n    virtual_router_id 10\n\
            priority 105\n    advert_int 1\n    virtual_ipaddress {\n        10.1.0.1\n    }\n}\n\
        vrrp_instance VI_20 {\n    state BACKUP\n    interface br0.20\n    virtual_ipaddress {\n\
                10.2.0.1/24\n  bogus\n    }\n    track_script { chk }\n}\n";

    #[test]
    fn instances_and_their_virtual_addresses() {
        let v = parse_keepalived(CONF);
        assert_eq!(v.len(), 2);
        assert_eq!(v[0].name, "VI_10");
        assert_eq!(v[0].iface, "br0.10");
        assert!(v[0].master);
        assert_eq!(v[0].vips, vec![("10.1.0.1".parse().unwrap(), None)]);
        assert!(!v[1].master);
        assert_eq!(v[1].vips, vec![("10.2.0.1".parse().unwrap(), Some(24))]);
        // A block cut short is read as far as it goes, without a panic.
        assert_eq!(
            parse_keepalived("vrrp_instance VI_1 { state MASTER").len(),
            1
        );
        assert!(parse_keepalived("").is_empty());
    }

    #[test]
    fn only_a_master_answers_for_its_gateway_on_its_own_subnet() {
        let v = parse_keepalived(CONF);
        let own = [Ipv4Net::new("10.1.0.2".parse().unwrap(), 24).unwrap()];
        assert_eq!(
            master_addresses(&v[0], &own),
            vec![Ipv4Net::new("10.1.0.1".parse().unwrap(), 24).unwrap()]
        );
        // Not on any own subnet and no length: left out.
        assert!(master_addresses(&v[0], &[]).is_empty());
        // A backup answers for nothing.
        assert!(master_addresses(&v[1], &own).is_empty());
    }
}
