//! Role evidence from a running device: one read-only script ([`SCRIPT`]) whose answer
//! [`parse`] turns into [`Evidence`].
//!
//! The script prints `@@section` blocks: the forwarding flag, addresses (`ip -o addr`), the
//! default route, links with their masters, bridges and dummies, process names, and listening
//! sockets with their programs (`ss -H -ltunp`). Each part is silent when its tool is missing,
//! so a minimal image still answers what it can. Live evidence describes the device *now*: a
//! fault (a stopped server, a removed address) changes it, which is why the lab's files are
//! asked first and the live answer only for devices the files say nothing about.

use super::shell::{ROUTING_DAEMONS, SERVICE_PROGRAMS};
use super::{Clue, Evidence};
use std::collections::{BTreeMap, BTreeSet};

/// The read-only probe script (run with `sh -c` inside the device).
pub const SCRIPT: &str = "echo @@fwd; cat /proc/sys/net/ipv4/ip_forward 2>/dev/null\n\
echo @@addr; ip -o addr show 2>/dev/null\n\
echo @@route; ip route show default 2>/dev/null; ip -6 route show default 2>/dev/null\n\
echo @@link; ip -o link show 2>/dev/null\n\
echo @@bridge; ip -o link show type bridge 2>/dev/null\n\
echo @@dummy; ip -o link show type dummy 2>/dev/null\n\
echo @@proc; ps -e -o comm= 2>/dev/null || cat /proc/[0-9]*/comm 2>/dev/null\n\
echo @@listen; ss -H -ltunp 2>/dev/null\n\
echo @@end\n";

/// Well-known service ports.
const SERVICE_PORTS: [(u16, &str); 8] = [
    (53, "dns"),
    (67, "dhcp"),
    (80, "web"),
    (443, "web"),
    (8080, "web"),
    (8000, "web"),
    (8086, "influxdb"),
    (21, "ftp"),
];

/// The name in an `ip -o link` line (`3: eth0@if4: <…>` → `eth0`).
fn link_name(line: &str) -> Option<&str> {
    let name = line.split(": ").nth(1)?;
    Some(name.split('@').next().unwrap_or(name).trim())
}

/// Reads the script's answer. `None` when it is not an answer of [`SCRIPT`] (no `@@end`: the
/// device has no `sh`, the command was refused, the output was cut).
///
/// ```
/// use faultbench_core::lab::roles::{classify, live};
/// use faultbench_core::lab::Role;
/// let out = "@@fwd\n1\n@@addr\n1: lo    inet 127.0.0.1/8 scope host lo\n\
///            2: eth0    inet 10.0.0.5/24 brd 10.0.0.255 scope global eth0\n\
///            @@route\ndefault via 10.0.0.1 dev eth0\n@@link\n@@bridge\n@@dummy\n@@proc\nsh\n\
///            @@listen\ntcp LISTEN 0 511 0.0.0.0:80 0.0.0.0:* users:((\"nginx\",pid=9,fd=6))\n@@end\n";
/// let e = live::parse(out).unwrap();
/// assert_eq!(classify("x", &e).role, Role::Server("web".into()));
/// assert!(live::parse("sh: not found").is_none());
/// ```
pub fn parse(output: &str) -> Option<Evidence> {
    if !output.lines().any(|l| l.trim() == "@@end") {
        return None;
    }
    let mut sections: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    let mut current = "";
    for line in output.lines() {
        if let Some(name) = line.trim().strip_prefix("@@") {
            current = match name {
                "fwd" => "fwd",
                "addr" => "addr",
                "route" => "route",
                "link" => "link",
                "bridge" => "bridge",
                "dummy" => "dummy",
                "proc" => "proc",
                "listen" => "listen",
                _ => "",
            };
            continue;
        }
        if !current.is_empty() && !line.trim().is_empty() {
            sections.entry(current).or_default().push(line);
        }
    }
    let get = |s: &str| sections.get(s).cloned().unwrap_or_default();
    let mut e = Evidence::default();
    if let Some(v) = get("fwd").first() {
        match v.trim() {
            "1" => e.forwarding = Some((true, Clue::new("ip_forward=1", "live: /proc"))),
            "0" => e.forwarding = Some((false, Clue::new("ip_forward=0", "live: /proc"))),
            _ => {}
        }
    }
    let dummies: BTreeSet<&str> = get("dummy").iter().filter_map(|l| link_name(l)).collect();
    for line in get("addr") {
        let w: Vec<&str> = line.split_whitespace().collect();
        // `2: eth0    inet 10.0.0.5/24 … scope global eth0`
        let (Some(iface), Some(fam), Some(addr)) = (w.get(1), w.get(2), w.get(3)) else {
            continue;
        };
        let scope = w
            .iter()
            .position(|x| *x == "scope")
            .and_then(|i| w.get(i + 1))
            .copied()
            .unwrap_or("global");
        let iface = iface.split('@').next().unwrap_or(iface);
        if !matches!(*fam, "inet" | "inet6")
            || scope != "global"
            || iface == "lo"
            || dummies.contains(iface)
        {
            continue;
        }
        e.addressed
            .entry(iface.to_string())
            .or_insert_with(|| Clue::new(addr.to_string(), "live: ip addr"));
    }
    if get("route")
        .iter()
        .any(|l| l.trim_start().starts_with("default"))
    {
        e.default_route = Some(Clue::new("default route", "live: ip route"));
    }
    let bridges: BTreeSet<&str> = get("bridge").iter().filter_map(|l| link_name(l)).collect();
    for line in get("link") {
        let w: Vec<&str> = line.split_whitespace().collect();
        let master = w
            .iter()
            .position(|x| *x == "master")
            .and_then(|i| w.get(i + 1));
        if let (Some(name), Some(master)) = (link_name(line), master)
            && bridges.contains(master)
        {
            e.bridge_ports
                .entry(name.to_string())
                .or_insert_with(|| Clue::new(format!("master {master}"), "live: ip link"));
        }
    }
    let procs: BTreeSet<&str> = get("proc").iter().map(|l| l.trim()).collect();
    for d in ROUTING_DAEMONS.iter().filter(|d| procs.contains(*d)) {
        e.add_routing(Clue::new(format!("{d} running"), "live: ps"));
    }
    for line in get("listen") {
        let w: Vec<&str> = line.split_whitespace().collect();
        let Some(local) = w.get(4) else { continue };
        let Some((host, port)) = local.rsplit_once(':') else {
            continue;
        };
        let host = host.trim_matches(['[', ']']);
        if host.starts_with("127.") || host == "::1" {
            continue;
        }
        let program = line
            .split("((\"")
            .nth(1)
            .and_then(|r| r.split('"').next())
            .unwrap_or("");
        let by_program = SERVICE_PROGRAMS.iter().find(|(p, _)| *p == program);
        let by_port = port
            .parse::<u16>()
            .ok()
            .and_then(|p| SERVICE_PORTS.iter().find(|(q, _)| *q == p));
        if let Some(kind) = by_program.map(|x| x.1).or(by_port.map(|x| x.1)) {
            let what = if program.is_empty() {
                format!("listens on port {port}")
            } else {
                format!("{program} listens on port {port}")
            };
            e.services
                .entry(kind.to_string())
                .or_insert_with(|| Clue::new(what, "live: ss"));
        }
    }
    Some(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::Role;
    use crate::lab::roles::{RoleRule, classify};

    const ROUTER: &str = "@@fwd\n1\n@@addr\n1: lo    inet 127.0.0.1/8 scope host lo\\       valid_lft forever\n\
2: eth0@if7    inet 10.0.0.1/24 brd 10.0.0.255 scope global eth0\\       valid_lft forever\n\
2: eth0@if7    inet6 fe80::1/64 scope link \\       valid_lft forever\n\
3: eth1@if9    inet 10.0.1.1/24 scope global eth1\n\
4: lo1    inet 1.1.1.1/32 scope global lo1\n\
@@route\n@@link\n@@bridge\n@@dummy\n4: lo1: <BROADCAST,NOARP,UP,LOWER_UP> mtu 1500\n\
@@proc\nzebra\nstaticd\nwatchfrr\n@@listen\ntcp LISTEN 0 3 127.0.0.1:2601 0.0.0.0:* users:((\"zebra\",pid=20,fd=12))\n@@end\n";

    #[test]
    fn a_router_by_forwarding_and_one_by_daemons() {
        let e = parse(ROUTER).unwrap();
        assert_eq!(e.addressed.keys().collect::<Vec<_>>(), ["eth0", "eth1"]);
        assert!(
            e.services.is_empty(),
            "vtysh ports on localhost are no service"
        );
        assert_eq!(classify("x", &e).rule, RoleRule::Forwarding);
        let e = parse(&ROUTER.replace("watchfrr", "ospfd")).unwrap();
        assert_eq!(
            classify("x", &e).to_string(),
            "router: ospfd running (live: ps)"
        );
    }

    #[test]
    fn a_switch_and_a_dns_server() {
        let sw = "@@fwd\n1\n@@addr\n@@link\n2: eth0@if3: <UP> mtu 1500 master br0 state UP\n\
                  3: eth1@if5: <UP> mtu 1500 master br0 state UP\n4: br0: <UP> mtu 1500\n\
                  @@bridge\n4: br0: <UP> mtu 1500 state UP\n@@end\n";
        let e = parse(sw).unwrap();
        assert_eq!(classify("x", &e).role, Role::Switch);
        let ns = "@@addr\n2: eth0    inet 10.0.0.53/24 scope global eth0\n@@listen\n\
                  udp UNCONN 0 0 10.0.0.53:53 0.0.0.0:* users:((\"named\",pid=4,fd=20))\n@@end\n";
        assert_eq!(
            classify("x", &parse(ns).unwrap()).role,
            Role::Server("dns".into())
        );
    }

    proptest::proptest! {
        /// Any answer, even a hostile one, parses without panic and never counts `lo`.
        #[test]
        fn any_answer_parses(s in "(?s).{0,400}") {
            if let Some(e) = parse(&format!("@@addr\n{s}\n@@listen\n{s}\n@@link\n{s}\n@@end\n")) {
                proptest::prop_assert!(!e.addressed.contains_key("lo"));
            }
        }
    }

    #[test]
    fn garbage_is_no_evidence() {
        assert!(parse("").is_none());
        let e = parse("@@addr\n2:\n@@listen\ntcp\n: : :\n@@fwd\nyes\n@@end").unwrap();
        assert!(e.is_empty() && e.forwarding.is_none());
    }
}
