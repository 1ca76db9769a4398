//! One look at a device: the inventory every later rule reads.
//!
//! Each device is asked once, with a fixed read-only script through `exec_shell` ([`SCRIPT`]):
//! forwarding flag, links (state, MTU, bridge/bond master), IPv4 addresses, routes, process
//! names, listening sockets with their programs, the FRR daemons its `daemons` file enables,
//! resolvers, and packet-filter/NAT rules. The script only reads (`cat`, `ip … show`, `ps`,
//! `ss`, `iptables-save`, `nft list`) and prints compact `@@section` blocks so that even a
//! router's answer fits the tools' 4000-character cap. Where `exec_shell` is refused (the
//! read-only policy) or missing, [`facts_from_host_config`] reads the same facts, less the
//! processes and filters, from `get_host_net_config` and `netstat`.

use super::ip4::Net;
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

/// The routes part of [`SCRIPT`], compacted (no `nhid`, `scope`, `src`, `weight`: a
/// distribution router's multipath table otherwise overflows the tools' output cap and loses
/// its connected routes). The metric stays: it is FRR's administrative distance, which
/// explains why a static route beats a learned one.
macro_rules! routes_script {
    () => {
        "echo @@route; ip -4 route show 2>/dev/null | sed -e 's/ nhid [0-9]*//' -e 's/ scope link//' -e 's/ src [0-9.]*//' -e 's/ weight [0-9]*//' -e 's/^[[:space:]][[:space:]]*nexthop/ nexthop/' -e 's/ *$//' | head -100\n"
    };
}

/// The routes alone, asked again when a device's inventory answer was cut.
pub const ROUTES_SCRIPT: &str = concat!(routes_script!(), "echo @@end\n");

/// The inventory script (read-only; each part silent when its tool is missing).
pub const SCRIPT: &str = concat!(
    "echo @@fwd; cat /proc/sys/net/ipv4/ip_forward 2>/dev/null\n\
echo @@link; ip -o link show 2>/dev/null | sed -e 's/\\\\.*//' -e 's/ qdisc [^ ]*//' -e 's/ mode [A-Z]*//' -e 's/ group [a-z0-9]*//' -e 's/ qlen [0-9]*//'\n\
echo @@addr; ip -o -4 addr show 2>/dev/null | awk '{d=\"\"; if ($0 ~ / dynamic/) d=\" dynamic\"; print $2, $4 d}'\n\
echo @@proc; ps -e -o comm= 2>/dev/null | sort -u | tr '\\n' ' '; echo\n\
echo @@listen; ss -H -ltunwp 2>/dev/null | awk '{print $1, $5, $7}' | sed -e 's/users:((\"//' -e 's/\".*//' | sort -u\n\
echo @@daemons; grep -E '^[a-z0-9]+d=yes' /etc/frr/daemons 2>/dev/null | tr '\\n' ' '; echo\n\
echo @@frrconf; ls /etc/frr/frr.conf 2>/dev/null\n\
echo @@dns; grep -E '^nameserver' /etc/resolv.conf 2>/dev/null | awk '{print $2}' | tr '\\n' ' '; echo\n\
echo @@ipt; iptables-save 2>/dev/null | grep -E '^[*]|^:[A-Z]+ (DROP|REJECT)|^-A'\n\
echo @@nft; nft list ruleset 2>/dev/null | awk '/^table /{skip=($0 ~ /^table ip (filter|nat|mangle|raw|security) /)} !skip && /table |hook|drop|reject|snat|dnat|masquerade|redirect/' | sed 's/^[[:space:]]*//' | head -30\n\
echo @@svc; ls /etc/keepalived/keepalived.conf 2>/dev/null; grep -sE '^INTERFACESv4=\"[^\"]+\"' /etc/default/isc-dhcp-server\n\
echo @@tc; tc qdisc show 2>/dev/null | grep -E 'netem|tbf'\n\
echo @@vlan; ip -d -o link show type bridge 2>/dev/null | awk '{n=$2; sub(/:$/,\"\",n); sub(/@.*/,\"\",n); for (i=1;i<NF;i++) if ($i==\"vlan_filtering\") print \"filtering\", n, $(i+1)}'; bridge vlan show 2>/dev/null | awk 'NR>1 && NF { if ($0 !~ /^[ \\t]/) { if (p!=\"\") print p l; p=$1; l=\"\"; $1=\"\" } f=\"\"; if ($0 ~ /PVID/) f=f\"p\"; if ($0 ~ /Untagged/) f=f\"u\"; split($0,w,\" \"); l=l\" \"w[1] f } END { if (p!=\"\") print p l }'\n\
",
    routes_script!(),
    "echo @@end\n"
);

/// An interface as `ip link` / `ip addr` show it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Iface {
    /// Name without the `@ifN` peer suffix.
    pub name: String,
    /// `UP` among the flags (administratively up).
    pub admin_up: bool,
    /// `LOWER_UP` among the flags (carrier).
    pub carrier: bool,
    /// MTU.
    pub mtu: Option<u32>,
    /// The bridge or bond it is enslaved to.
    pub master: Option<String>,
    /// IPv4 addresses with prefix length.
    pub addrs: Vec<Net>,
    /// An address was obtained by DHCP (`dynamic`).
    pub dynamic: bool,
}

/// What a route does with matching packets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RouteKind {
    /// Forwarded (via a gateway or on-link).
    Unicast,
    /// Silently dropped (`blackhole`).
    Blackhole,
    /// Dropped with an ICMP error (`unreachable`, `prohibit`).
    Reject,
}

/// A kernel route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The destination (`0.0.0.0/0` for `default`).
    pub dest: Net,
    /// What it does.
    pub kind: RouteKind,
    /// Gateways (several for a multipath route).
    pub via: Vec<Ipv4Addr>,
    /// Output interface.
    pub dev: Option<String>,
    /// `proto` (kernel, static, boot, ospf, bgp, rip, …); `boot` when not given.
    pub proto: String,
    /// The line as printed.
    pub line: String,
}

/// A listening socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listener {
    /// `tcp`, `udp` or `raw`.
    pub proto: String,
    /// Local port (for raw sockets: the IP protocol number).
    pub port: u16,
    /// Program name, when known.
    pub program: String,
}

/// Everything one device showed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Facts {
    /// The answer was understood (at least the link section).
    pub understood: bool,
    /// The answer came from the full script (processes and filters are known).
    pub full: bool,
    /// `net.ipv4.ip_forward`.
    pub forwarding: Option<bool>,
    /// Interfaces by name (loopback excluded).
    pub ifaces: BTreeMap<String, Iface>,
    /// Main-table routes.
    pub routes: Vec<Route>,
    /// Process names.
    pub processes: BTreeSet<String>,
    /// Listening sockets.
    pub listeners: Vec<Listener>,
    /// The listening sockets were read (an empty list means nothing listens).
    pub sockets_known: bool,
    /// FRR daemons its `/etc/frr/daemons` enables (`ospfd`, …; zebra/staticd excluded).
    pub enabled_daemons: BTreeSet<String>,
    /// `/etc/frr/frr.conf` exists.
    pub has_frr_conf: bool,
    /// Resolvers from `/etc/resolv.conf`.
    pub nameservers: Vec<Ipv4Addr>,
    /// `iptables-save` lines (`*table`, non-ACCEPT policies, `-A` rules).
    pub iptables: Vec<String>,
    /// Filtering/NAT lines of `nft list ruleset` from tables iptables does not own.
    pub nft: Vec<String>,
    /// `/etc/keepalived/keepalived.conf` exists (the device is meant to run VRRP).
    pub vrrp_configured: bool,
    /// `/etc/default/isc-dhcp-server` names interfaces (the device is meant to serve DHCP).
    pub dhcp_configured: bool,
    /// netem/tbf queueing disciplines (`tc qdisc show` lines).
    pub shaping: Vec<String>,
    /// Bridges with VLAN filtering on (their ports' VLAN tables decide who shares a LAN).
    pub vlan_bridges: BTreeSet<String>,
    /// VLAN table of bridge ports (and of a bridge itself): port → its VLANs.
    pub port_vlans: BTreeMap<String, Vec<PortVlan>>,
    /// Addresses on `lo` other than 127/8 (router ids, hosts a lab puts on a loopback).
    pub loopbacks: Vec<Net>,
}

/// One VLAN of a bridge port (`bridge vlan show`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortVlan {
    /// VLAN id.
    pub vid: u16,
    /// Untagged frames of the port's segment belong to this VLAN (PVID or egress untagged).
    pub untagged: bool,
}

/// Daemons that route (their absence on a router matters).
pub const ROUTING_DAEMONS: [&str; 9] = [
    "zebra", "bgpd", "ospfd", "ripd", "isisd", "eigrpd", "babeld", "ospf6d", "ripngd",
];

impl Facts {
    /// IPv4 addresses on interfaces, with their interface.
    pub fn addresses(&self) -> Vec<(String, Net)> {
        self.ifaces
            .values()
            .flat_map(|i| i.addrs.iter().map(move |a| (i.name.clone(), *a)))
            .collect()
    }

    /// Whether a process of this name runs.
    pub fn runs(&self, program: &str) -> bool {
        self.processes.contains(program)
    }

    /// Routing daemons running.
    pub fn routing_daemons(&self) -> Vec<&'static str> {
        ROUTING_DAEMONS
            .iter()
            .copied()
            .filter(|d| self.runs(d))
            .collect()
    }

    /// Whether `ip` is one of this device's addresses, loopbacks included.
    pub fn holds(&self, ip: Ipv4Addr) -> bool {
        self.loopbacks.iter().any(|n| n.addr == ip)
            || self.addresses().iter().any(|(_, n)| n.addr == ip)
    }

    /// The default route, if any.
    pub fn default_route(&self) -> Option<&Route> {
        self.routes.iter().find(|r| r.dest.len == 0)
    }

    /// Whether something listens on `port` (tcp or udp).
    pub fn listens(&self, port: u16) -> bool {
        self.listeners
            .iter()
            .any(|l| l.port == port && l.proto != "raw")
    }

    /// Interfaces that are the master of another (bridges, bonds).
    pub fn masters(&self) -> BTreeSet<String> {
        self.ifaces
            .values()
            .filter_map(|i| i.master.clone())
            .collect()
    }

    /// The best kernel route for `ip` (longest prefix).
    pub fn route_for(&self, ip: Ipv4Addr) -> Option<&Route> {
        self.routes
            .iter()
            .filter(|r| r.dest.contains(ip))
            .max_by_key(|r| r.dest.len)
    }
}

/// Whether `line` is one of the toolbox's own footers (`[timed out after 10s: output may be
/// partial]`, `[stderr]`, `[exit code N]`, `[killed by a signal]`), not output of the device.
fn toolbox_footer(line: &str) -> bool {
    let l = line.trim();
    l == "[stderr]"
        || l == "[killed by a signal]"
        || (l.starts_with("[timed out after ") && l.ends_with(']'))
        || (l.starts_with("[exit code ") && l.ends_with(']'))
}

/// Splits the script's answer into sections. A toolbox footer ends the section it follows:
/// on a slow machine the probe can time out in the middle of a section, and the footer (or
/// the stderr after `[stderr]`) is not that section's content (read as a `tc` line, it once
/// made a healthy pc1 "shaped").
fn sections(text: &str) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if toolbox_footer(line) {
            current = None;
            continue;
        }
        if let Some(name) = line.trim().strip_prefix("@@") {
            current = Some(name.trim().to_string());
            out.entry(name.trim().to_string()).or_default();
            continue;
        }
        if let Some(c) = &current
            && !line.trim().is_empty()
        {
            out.entry(c.clone()).or_default().push(line.to_string());
        }
    }
    out
}

/// The routes of an answer to [`ROUTES_SCRIPT`] (or of any answer with a `@@route` part).
pub fn parse_routes(text: &str) -> Vec<Route> {
    routes(
        sections(text)
            .get("route")
            .map(Vec::as_slice)
            .unwrap_or(&[]),
    )
}

/// Reads an answer to [`SCRIPT`].
pub fn parse(text: &str) -> Facts {
    let s = sections(text);
    let mut f = Facts::default();
    let Some(links) = s.get("link") else {
        return f;
    };
    for line in links {
        if let Some(i) = link_line(line) {
            f.understood = true;
            f.ifaces.insert(i.name.clone(), i);
        }
    }
    f.full = s.contains_key("proc");
    f.forwarding = s
        .get("fwd")
        .and_then(|l| l.first())
        .and_then(|v| match v.trim() {
            "1" => Some(true),
            "0" => Some(false),
            _ => None,
        });
    for line in s.get("addr").into_iter().flatten() {
        let mut w = line.split_whitespace();
        let (Some(dev), Some(addr)) = (w.next(), w.next()) else {
            continue;
        };
        let dev = dev.split('@').next().unwrap_or(dev);
        let Some(net) = Net::parse(addr) else {
            continue;
        };
        if net.addr.is_loopback() {
            continue;
        }
        if dev == "lo" {
            // Kept apart: a loopback address is a destination (a router id, an "Internet"
            // host), never a LAN attachment.
            f.loopbacks.push(net);
            continue;
        }
        let dynamic = w.any(|x| x == "dynamic");
        let i = f.ifaces.entry(dev.to_string()).or_insert_with(|| Iface {
            name: dev.to_string(),
            admin_up: true,
            carrier: true,
            ..Default::default()
        });
        i.addrs.push(net);
        i.dynamic |= dynamic;
    }
    f.routes = routes(s.get("route").map(Vec::as_slice).unwrap_or(&[]));
    f.processes = s
        .get("proc")
        .into_iter()
        .flatten()
        .flat_map(|l| l.split_whitespace())
        .map(str::to_string)
        .collect();
    f.sockets_known = s.contains_key("listen");
    for line in s.get("listen").into_iter().flatten() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 2 {
            continue;
        }
        let port = cols[1]
            .rsplit(':')
            .next()
            .and_then(|p| p.trim_start_matches("ipproto-").parse::<u16>().ok());
        if let Some(port) = port {
            f.listeners.push(Listener {
                proto: cols[0].to_string(),
                port,
                program: cols.get(2).map(|p| p.to_string()).unwrap_or_default(),
            });
        }
    }
    f.enabled_daemons = s
        .get("daemons")
        .into_iter()
        .flatten()
        .flat_map(|l| l.split_whitespace())
        .filter_map(|kv| kv.strip_suffix("=yes"))
        .filter(|d| !matches!(*d, "zebra" | "staticd"))
        .map(str::to_string)
        .collect();
    f.has_frr_conf = s.get("frrconf").is_some_and(|l| !l.is_empty());
    f.nameservers = s
        .get("dns")
        .into_iter()
        .flatten()
        .flat_map(|l| l.split_whitespace())
        .filter_map(|a| a.parse().ok())
        .collect();
    f.iptables = s.get("ipt").cloned().unwrap_or_default();
    f.nft = s.get("nft").cloned().unwrap_or_default();
    for line in s.get("svc").into_iter().flatten() {
        f.vrrp_configured |= line.contains("keepalived.conf");
        f.dhcp_configured |= line.starts_with("INTERFACESv4=");
    }
    f.shaping = s.get("tc").cloned().unwrap_or_default();
    read_vlans(&mut f, s.get("vlan").map(Vec::as_slice).unwrap_or(&[]));
    f
}

/// `filtering br0 1` lines and one `port vid[p][u] …` line per bridge port.
fn read_vlans(f: &mut Facts, lines: &[String]) {
    for line in lines {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["filtering", bridge, on] => {
                if *on == "1" {
                    f.vlan_bridges.insert(bridge.to_string());
                }
            }
            [port, vids @ ..] => {
                let list = f.port_vlans.entry(port.to_string()).or_default();
                for v in vids {
                    let digits: String = v
                        .chars()
                        .take_while(|c| c.is_ascii_digit() || *c == '-')
                        .collect();
                    let untagged = v[digits.len()..].contains(['p', 'u']);
                    // A range (`10-20`) when the output is compressed.
                    let (lo, hi) = digits.split_once('-').unwrap_or((&digits, &digits));
                    if let (Ok(lo), Ok(hi)) = (lo.parse::<u16>(), hi.parse::<u16>()) {
                        list.extend(
                            (lo..=hi.min(lo.saturating_add(4094)))
                                .map(|vid| PortVlan { vid, untagged }),
                        );
                    }
                }
            }
            [] => {}
        }
    }
}

/// `2: eth0@if7: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 master br0 state UP`
fn link_line(line: &str) -> Option<Iface> {
    let (idx, rest) = line.trim().split_once(": ")?;
    if idx.is_empty() || !idx.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let (name, rest) = rest.split_once(':')?;
    let name = name.split('@').next()?.trim().to_string();
    if name == "lo" || name.is_empty() {
        return None;
    }
    let flags = rest.split('<').nth(1)?.split('>').next()?;
    let words: Vec<&str> = rest.split_whitespace().collect();
    let after = |k: &str| {
        words
            .iter()
            .position(|w| *w == k)
            .and_then(|i| words.get(i + 1))
    };
    Some(Iface {
        name,
        admin_up: flags.split(',').any(|f| f == "UP"),
        carrier: flags.split(',').any(|f| f == "LOWER_UP"),
        mtu: after("mtu").and_then(|m| m.parse().ok()),
        master: after("master").map(|m| m.to_string()),
        addrs: Vec::new(),
        dynamic: false,
    })
}

/// `ip -4 route show` lines, multipath continuation lines included.
pub fn routes(lines: &[String]) -> Vec<Route> {
    let mut out: Vec<Route> = Vec::new();
    for line in lines {
        let t = line.trim();
        if line.starts_with(char::is_whitespace) && t.starts_with("nexthop") {
            if let Some(last) = out.last_mut() {
                let w: Vec<&str> = t.split_whitespace().collect();
                if let Some(gw) = after(&w, "via").and_then(|g| g.parse().ok()) {
                    last.via.push(gw);
                }
                if last.dev.is_none() {
                    last.dev = after(&w, "dev").map(str::to_string);
                }
            }
            continue;
        }
        let mut w: Vec<&str> = t.split_whitespace().collect();
        if w.is_empty() {
            continue;
        }
        let kind = match w[0] {
            "blackhole" => RouteKind::Blackhole,
            "unreachable" | "prohibit" => RouteKind::Reject,
            _ => RouteKind::Unicast,
        };
        if kind != RouteKind::Unicast {
            w.remove(0);
        }
        let dest = match w.first() {
            Some(&"default") => Net::parse("0.0.0.0/0"),
            Some(d) => Net::parse(d),
            None => None,
        };
        let Some(dest) = dest else { continue };
        out.push(Route {
            dest,
            kind,
            via: after(&w, "via")
                .and_then(|g| g.parse().ok())
                .into_iter()
                .collect(),
            dev: after(&w, "dev").map(str::to_string),
            proto: after(&w, "proto").unwrap_or("boot").to_string(),
            line: t.to_string(),
        });
    }
    out
}

fn after<'a>(words: &[&'a str], key: &str) -> Option<&'a str> {
    words
        .iter()
        .position(|w| *w == key)
        .and_then(|i| words.get(i + 1))
        .copied()
}

/// The fallback: facts from `get_host_net_config` (`ip addr`, `ip route` texts) and, when
/// given, `netstat -tulnp` (processes unknown, filters unknown).
pub fn facts_from_host_config(host_config: &str, netstat: Option<&str>) -> Facts {
    let v: serde_json::Value = serde_json::from_str(host_config.trim()).unwrap_or_default();
    let field = |k: &str| v.get(k).and_then(|x| x.as_str()).unwrap_or("").to_string();
    let addr_text = field("ip_addr");
    let mut f = Facts::default();
    let mut current: Option<String> = None;
    for line in addr_text.lines() {
        if let Some(i) = link_line(line) {
            current = Some(i.name.clone());
            f.understood = true;
            f.ifaces.insert(i.name.clone(), i);
            continue;
        }
        let t = line.trim();
        if let (Some(rest), Some(c)) = (t.strip_prefix("inet "), &current) {
            let Some(net) = rest.split_whitespace().next().and_then(Net::parse) else {
                // An address we cannot read: better no facts than "no address".
                return Facts::default();
            };
            if let Some(i) = f.ifaces.get_mut(c)
                && !net.addr.is_loopback()
            {
                i.addrs.push(net);
                i.dynamic |= t.contains(" dynamic");
            }
        }
    }
    let route_lines: Vec<String> = field("ip_route").lines().map(str::to_string).collect();
    f.routes = routes(&route_lines);
    f.sockets_known = netstat.is_some_and(|n| n.contains("Proto"));
    for line in netstat.unwrap_or("").lines() {
        let cols: Vec<&str> = line.split_whitespace().collect();
        if cols.len() < 4 || !(cols[0].starts_with("tcp") || cols[0].starts_with("udp")) {
            continue;
        }
        if let Some(port) = cols[3].rsplit(':').next().and_then(|p| p.parse().ok()) {
            let program = cols
                .last()
                .and_then(|p| p.split_once('/'))
                .map(|(_, n)| n.to_string())
                .unwrap_or_default();
            f.listeners.push(Listener {
                proto: cols[0].trim_end_matches('6').to_string(),
                port,
                program,
            });
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROUTER: &str = "@@fwd\n1\n@@link\n\
2: eth0@if10: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP\n\
3: eth1@if12: <BROADCAST,MULTICAST> mtu 1500 state DOWN\n\
4: eth2@if14: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1400 master br0 state UP\n\
5: br0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP\n\
@@addr\neth0 10.0.12.1/30\neth1 10.0.1.1/24\nbr0 192.168.5.1/24 dynamic\n\
@@proc\nbash bgpd ospfd staticd zebra \n\
@@listen\ntcp 0.0.0.0:179 bgpd\nudp 0.0.0.0:53 dnsmasq\nraw 0.0.0.0:89 ospfd\n\
@@daemons\nzebra=yes bgpd=yes ospfd=yes staticd=yes \n@@frrconf\n/etc/frr/frr.conf\n\
@@dns\n10.0.9.53 \n\
@@ipt\n*filter\n:FORWARD DROP [0:0]\n-A FORWARD -s 10.0.1.0/24 -p icmp -j DROP\n\
@@nft\n@@svc\n/etc/keepalived/keepalived.conf\n@@tc\nqdisc netem 8001: dev eth0 root refcnt 2 limit 1000 loss 30%\n@@route\ndefault via 10.0.12.2 dev eth0 proto static metric 20\n\
10.0.1.0/24 dev eth1 proto kernel scope link src 10.0.1.1\n\
blackhole 10.9.0.0/16 proto static metric 20\n\
10.0.8.0/24 nhid 20 proto ospf metric 20\n\tnexthop via 10.0.12.2 dev eth0 weight 1\n\tnexthop via 10.0.13.2 dev eth3 weight 1\n@@end\n";

    #[test]
    fn script_answer() {
        let f = parse(ROUTER);
        assert!(f.understood && f.full);
        assert_eq!(f.forwarding, Some(true));
        assert_eq!(f.ifaces.len(), 4);
        assert!(!f.ifaces["eth1"].admin_up && f.ifaces["eth0"].carrier);
        assert_eq!(f.ifaces["eth2"].master.as_deref(), Some("br0"));
        assert_eq!(f.ifaces["eth2"].mtu, Some(1400));
        assert!(f.ifaces["br0"].dynamic);
        assert_eq!(f.routing_daemons(), vec!["zebra", "bgpd", "ospfd"]);
        assert!(f.listens(179) && f.listens(53) && !f.listens(89));
        assert_eq!(
            f.enabled_daemons.iter().collect::<Vec<_>>(),
            vec!["bgpd", "ospfd"]
        );
        assert!(f.has_frr_conf);
        assert_eq!(
            f.nameservers,
            vec!["10.0.9.53".parse::<Ipv4Addr>().unwrap()]
        );
        assert_eq!(f.iptables.len(), 3);
        assert_eq!(f.routes.len(), 4);
        assert_eq!(
            f.default_route().unwrap().via,
            vec!["10.0.12.2".parse::<Ipv4Addr>().unwrap()]
        );
        assert_eq!(f.routes[2].kind, RouteKind::Blackhole);
        assert_eq!(f.routes[3].via.len(), 2);
        assert_eq!(f.routes[3].proto, "ospf");
        let r = f.route_for("10.9.3.3".parse().unwrap()).unwrap();
        assert_eq!(r.kind, RouteKind::Blackhole);
        assert_eq!(f.masters().into_iter().collect::<Vec<_>>(), vec!["br0"]);
        assert!(f.vrrp_configured && !f.dhcp_configured);
        assert_eq!(f.shaping.len(), 1);
        assert!(!parse("mock: not scripted").understood);
    }

    #[test]
    fn fallback_answer() {
        let hc = r#"{"host_name":"pc1","ip_addr":"1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 state UNKNOWN\n    inet 127.0.0.1/8 scope host lo\n2: eth0@if5: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 qdisc noqueue state UP\n    inet 10.0.1.2/24 brd 10.0.1.255 scope global dynamic eth0","ip_route":"default via 10.0.1.1 dev eth0\n10.0.1.0/24 dev eth0 proto kernel scope link src 10.0.1.2"}"#;
        let ns = "Proto Recv-Q Send-Q Local Address Foreign Address State PID/Program name\ntcp 0 0 0.0.0.0:80 0.0.0.0:* LISTEN 12/nginx\nudp6 0 0 :::53 :::* 9/dnsmasq\n";
        let f = facts_from_host_config(hc, Some(ns));
        assert!(f.understood && !f.full);
        assert_eq!(
            f.addresses(),
            vec![("eth0".to_string(), Net::parse("10.0.1.2/24").unwrap())]
        );
        assert!(f.ifaces["eth0"].dynamic);
        assert!(f.default_route().is_some());
        assert!(f.listens(80) && f.listens(53));
        assert_eq!(f.listeners[0].program, "nginx");
    }

    /// The compaction keeps what the parser needs: a multipath route's gateways and device,
    /// a connected route's device and `proto kernel`.
    #[test]
    fn compacted_routes_parse_like_the_full_listing() {
        let table = "default nhid 105 proto ospf metric 20 \n\tnexthop via 10.0.0.69 dev eth6 weight 1 \n\tnexthop via 10.0.0.53 dev eth5 weight 1 \n10.0.0.52/30 dev eth5 proto kernel scope link src 10.0.0.54 \n10.0.0.60/30 nhid 101 via 10.0.0.69 dev eth6 proto ospf metric 20 \n";
        let dir = std::env::temp_dir().join(format!("fb-routes-{}", std::process::id()));
        std::fs::write(&dir, table).unwrap();
        let script = ROUTES_SCRIPT.replace(
            "ip -4 route show 2>/dev/null",
            &format!("cat {}", dir.display()),
        );
        assert_ne!(script, ROUTES_SCRIPT, "the script reads `ip -4 route show`");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&script)
            .output()
            .unwrap();
        let _ = std::fs::remove_file(&dir);
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        assert_eq!(
            text,
            "@@route\ndefault proto ospf metric 20\n nexthop via 10.0.0.69 dev eth6\n nexthop via 10.0.0.53 dev eth5\n10.0.0.52/30 dev eth5 proto kernel\n10.0.0.60/30 via 10.0.0.69 dev eth6 proto ospf metric 20\n@@end\n"
        );
        let compact = parse_routes(&text);
        let full = routes(&table.lines().map(str::to_string).collect::<Vec<_>>());
        let key = |r: &Route| (r.dest, r.via.clone(), r.dev.clone(), r.proto.clone());
        assert_eq!(
            compact.iter().map(key).collect::<Vec<_>>(),
            full.iter().map(key).collect::<Vec<_>>()
        );
        assert_eq!(compact[0].via.len(), 2);
    }

    #[test]
    fn a_toolbox_footer_is_not_read_as_the_last_sections_content() {
        let link = "@@link\n2: eth0@if5: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP\n";
        let f = parse(&format!(
            "{link}@@proc\nbash zebra\n@@tc\n[timed out after 10s: output may be partial]\n"
        ));
        assert!(f.understood);
        assert!(f.shaping.is_empty(), "{:?}", f.shaping);
        let f = parse(&format!(
            "{link}@@tc\nqdisc netem 8001: dev eth0 root loss 30%\n[stderr]\nqdisc: oops\n[exit code 1]\n"
        ));
        assert_eq!(
            f.shaping,
            vec!["qdisc netem 8001: dev eth0 root loss 30%".to_string()]
        );
    }
}
