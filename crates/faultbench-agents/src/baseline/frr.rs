//! FRR as the routers show it: the running configuration, OSPF neighbours, BGP sessions and
//! RIP peers, read into plain structs the routing rules compare across routers.

use super::ip4::Net;
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

/// A BGP neighbour statement.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BgpNeighborConf {
    /// `remote-as` value (`65002`, `external`, `internal`), when given.
    pub remote_as: Option<String>,
    /// `local-as` override.
    pub local_as: Option<u32>,
    /// `neighbor X shutdown`.
    pub shutdown: bool,
    /// Inbound policy: `prefix-list NAME in`, `route-map NAME in`, …
    pub inbound: Vec<String>,
    /// Peer group it belongs to.
    pub peer_group: Option<String>,
}

/// `router bgp`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BgpConf {
    /// Local AS.
    pub asn: u32,
    /// Neighbours by address (or interface/peer-group name).
    pub neighbors: BTreeMap<String, BgpNeighborConf>,
    /// `network` statements.
    pub networks: Vec<Net>,
    /// `redistribute …` kinds.
    pub redistribute: Vec<String>,
}

/// `router ospf`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OspfConf {
    /// `network P area A`.
    pub networks: Vec<(Net, String)>,
    /// `passive-interface IF`.
    pub passive: BTreeSet<String>,
    /// `passive-interface default`.
    pub passive_default: bool,
    /// `no passive-interface IF` (with the default).
    pub active: BTreeSet<String>,
    /// `redistribute …` and `default-information originate`.
    pub originates: Vec<String>,
}

/// `router rip`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RipConf {
    /// `version N`.
    pub version: Option<String>,
    /// `network P` or `network IF`.
    pub networks: Vec<String>,
    /// `passive-interface IF`.
    pub passive: BTreeSet<String>,
    /// `passive-interface default`.
    pub passive_default: bool,
    /// `redistribute …`.
    pub redistribute: Vec<String>,
}

/// A router's running configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Config {
    /// `router bgp`.
    pub bgp: Option<BgpConf>,
    /// `router ospf`.
    pub ospf: Option<OspfConf>,
    /// `router rip`.
    pub rip: Option<RipConf>,
    /// Other `router X` sections (eigrp, isis, babel, …) by name with their lines.
    pub other: BTreeMap<String, Vec<String>>,
    /// `interface X` sections: name → trimmed lines.
    pub interfaces: BTreeMap<String, Vec<String>>,
    /// `ip route …` lines.
    pub statics: Vec<String>,
    /// `ip prefix-list` lines by list name.
    pub prefix_lists: BTreeMap<String, Vec<String>>,
    /// `route-map NAME deny|permit N` headers by name.
    pub route_maps: BTreeMap<String, Vec<String>>,
    /// The text was a configuration at all.
    pub understood: bool,
}

impl Config {
    /// Parses `show running-config`.
    pub fn parse(text: &str) -> Config {
        let mut c = Config::default();
        #[derive(PartialEq)]
        enum Sec {
            Top,
            Bgp,
            Ospf,
            Rip,
            Other(String),
            Iface(String),
            Skip,
        }
        let mut sec = Sec::Top;
        for raw in text.lines() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('!') {
                if raw.starts_with('!') && !raw.starts_with(" !") {
                    // `!` at column 0 closes a section in FRR's output.
                    sec = Sec::Top;
                }
                continue;
            }
            if line == "exit" || line == "exit-address-family" || line == "end" {
                if line == "exit" {
                    sec = Sec::Top;
                }
                continue;
            }
            let w: Vec<&str> = line.split_whitespace().collect();
            let top_level = !raw.starts_with(' ');
            if top_level {
                sec = match (w.first().copied(), w.get(1).copied()) {
                    (Some("router"), Some("bgp")) => {
                        c.understood = true;
                        c.bgp = Some(BgpConf {
                            asn: w.get(2).and_then(|a| a.parse().ok()).unwrap_or(0),
                            ..Default::default()
                        });
                        Sec::Bgp
                    }
                    (Some("router"), Some("ospf")) => {
                        c.understood = true;
                        c.ospf = Some(OspfConf::default());
                        Sec::Ospf
                    }
                    (Some("router"), Some("rip")) => {
                        c.understood = true;
                        c.rip = Some(RipConf::default());
                        Sec::Rip
                    }
                    (Some("router"), Some(_)) => {
                        // `router eigrp 100`: the key keeps the process/AS number.
                        c.understood = true;
                        let key = w[1..].join(" ");
                        c.other.insert(key.clone(), Vec::new());
                        Sec::Other(key)
                    }
                    (Some("interface"), Some(name)) => {
                        c.understood = true;
                        c.interfaces.entry(name.to_string()).or_default();
                        Sec::Iface(name.to_string())
                    }
                    (Some("ip"), Some("route")) => {
                        c.understood = true;
                        c.statics.push(line.to_string());
                        Sec::Top
                    }
                    (Some("ip"), Some("prefix-list")) => {
                        if let Some(name) = w.get(2) {
                            c.prefix_lists
                                .entry(name.to_string())
                                .or_default()
                                .push(line.to_string());
                        }
                        Sec::Top
                    }
                    (Some("route-map"), Some(name)) => {
                        c.route_maps
                            .entry(name.to_string())
                            .or_default()
                            .push(line.to_string());
                        Sec::Skip
                    }
                    (Some("frr" | "hostname" | "Building"), _) => {
                        c.understood = true;
                        Sec::Top
                    }
                    _ => Sec::Top,
                };
                continue;
            }
            match &sec {
                Sec::Bgp => bgp_line(c.bgp.as_mut().expect("section opened"), &w),
                Sec::Ospf => ospf_line(c.ospf.as_mut().expect("section opened"), &w),
                Sec::Rip => rip_line(c.rip.as_mut().expect("section opened"), &w),
                Sec::Other(n) => c.other.entry(n.clone()).or_default().push(line.to_string()),
                Sec::Iface(n) => c
                    .interfaces
                    .entry(n.clone())
                    .or_default()
                    .push(line.to_string()),
                Sec::Top | Sec::Skip => {}
            }
        }
        c
    }

    /// The OSPF area an interface with address `addr` is in, if OSPF runs on it.
    pub fn ospf_area(&self, iface: &str, addr: Net) -> Option<String> {
        let ospf = self.ospf.as_ref()?;
        if let Some(a) = self.iface_value(iface, &["ip", "ospf", "area"]) {
            return Some(a);
        }
        ospf.networks
            .iter()
            .filter(|(n, _)| n.contains(addr.addr))
            .max_by_key(|(n, _)| n.len)
            .map(|(_, a)| a.clone())
    }

    /// Whether OSPF is passive on an interface.
    pub fn ospf_passive(&self, iface: &str) -> bool {
        let Some(o) = &self.ospf else { return false };
        (o.passive_default && !o.active.contains(iface))
            || o.passive.contains(iface)
            || self.iface_has(iface, &["ip", "ospf", "passive"])
    }

    /// Whether RIP covers an interface (by prefix or by name).
    pub fn rip_covers(&self, iface: &str, addr: Net) -> bool {
        let Some(r) = &self.rip else { return false };
        r.networks.iter().any(|n| match Net::parse(n) {
            Some(p) if n.contains('.') => p.contains(addr.addr),
            _ => n == iface,
        })
    }

    /// Whether RIP is passive on an interface.
    pub fn rip_passive(&self, iface: &str) -> bool {
        self.rip
            .as_ref()
            .is_some_and(|r| r.passive_default || r.passive.contains(iface))
    }

    /// The value after `key` words in an interface section (`ip ospf hello-interval 30`).
    pub fn iface_value(&self, iface: &str, key: &[&str]) -> Option<String> {
        self.interfaces.get(iface)?.iter().find_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() > key.len() && w[..key.len()] == *key).then(|| w[key.len()].to_string())
        })
    }

    fn iface_has(&self, iface: &str, key: &[&str]) -> bool {
        self.interfaces.get(iface).is_some_and(|ls| {
            ls.iter().any(|l| {
                let w: Vec<&str> = l.split_whitespace().collect();
                w.len() >= key.len() && w[..key.len()] == *key
            })
        })
    }
}

fn bgp_line(b: &mut BgpConf, w: &[&str]) {
    match w {
        ["neighbor", peer, "remote-as", v, ..] => {
            b.neighbors.entry(peer.to_string()).or_default().remote_as = Some(v.to_string());
        }
        ["neighbor", peer, "interface", "remote-as", v, ..] => {
            b.neighbors.entry(peer.to_string()).or_default().remote_as = Some(v.to_string());
        }
        ["neighbor", peer, "local-as", v, ..] => {
            b.neighbors.entry(peer.to_string()).or_default().local_as = v.parse().ok();
        }
        ["neighbor", peer, "shutdown", ..] => {
            b.neighbors.entry(peer.to_string()).or_default().shutdown = true;
        }
        ["neighbor", peer, "peer-group", group] => {
            b.neighbors.entry(peer.to_string()).or_default().peer_group = Some(group.to_string());
        }
        ["neighbor", peer, kind, name, "in"]
            if matches!(
                *kind,
                "prefix-list" | "route-map" | "distribute-list" | "filter-list"
            ) =>
        {
            b.neighbors
                .entry(peer.to_string())
                .or_default()
                .inbound
                .push(format!("{kind} {name} in"));
        }
        ["network", p, ..] => {
            if let Some(n) = Net::parse(p) {
                b.networks.push(n);
            }
        }
        ["redistribute", kind, ..] => b.redistribute.push(kind.to_string()),
        _ => {}
    }
}

fn ospf_line(o: &mut OspfConf, w: &[&str]) {
    match w {
        ["network", p, "area", a, ..] => {
            if let Some(n) = Net::parse(p) {
                o.networks.push((n, a.to_string()));
            }
        }
        ["passive-interface", "default"] => o.passive_default = true,
        ["passive-interface", i] => {
            o.passive.insert(i.to_string());
        }
        ["no", "passive-interface", i] => {
            o.active.insert(i.to_string());
        }
        ["redistribute", kind, ..] => o.originates.push(format!("redistribute {kind}")),
        ["default-information", "originate", ..] => {
            o.originates.push("default-information originate".into());
        }
        _ => {}
    }
}

fn rip_line(r: &mut RipConf, w: &[&str]) {
    match w {
        ["version", v] => r.version = Some(v.to_string()),
        ["network", p] => r.networks.push(p.to_string()),
        ["passive-interface", "default"] => r.passive_default = true,
        ["passive-interface", i] => {
            r.passive.insert(i.to_string());
        }
        ["redistribute", kind, ..] => r.redistribute.push(kind.to_string()),
        _ => {}
    }
}

/// One OSPF neighbour line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OspfNeighbor {
    /// Router id.
    pub id: String,
    /// State (`Full/DR`, `Init/DROther`, `ExStart/…`).
    pub state: String,
    /// Neighbour's interface address.
    pub addr: Option<Ipv4Addr>,
    /// Local interface.
    pub iface: String,
}

impl OspfNeighbor {
    /// Full or 2-Way (a DROther pair).
    pub fn up(&self) -> bool {
        self.state.starts_with("Full") || self.state.starts_with("2-Way")
    }
}

/// `show ip ospf neighbor`; `None` when the daemon is not running or the text is not a table.
pub fn ospf_neighbors(text: &str) -> Option<Vec<OspfNeighbor>> {
    if daemon_absent(text) || !text.contains("Neighbor ID") {
        return None;
    }
    Some(
        text.lines()
            .skip_while(|l| !l.contains("Neighbor ID"))
            .skip(1)
            .filter_map(|l| {
                let c: Vec<&str> = l.split_whitespace().collect();
                c.first()?.parse::<Ipv4Addr>().ok()?;
                // Columns: id, pri, state, [up time], dead time, address, interface, …
                let addr_idx = c
                    .iter()
                    .skip(3)
                    .position(|x| x.parse::<Ipv4Addr>().is_ok())?
                    + 3;
                Some(OspfNeighbor {
                    id: c[0].to_string(),
                    state: c.get(2)?.to_string(),
                    addr: c[addr_idx].parse().ok(),
                    iface: c
                        .get(addr_idx + 1)
                        .map(|i| i.split(':').next().unwrap_or(i).to_string())
                        .unwrap_or_default(),
                })
            })
            .collect(),
    )
}

/// One BGP session of `show bgp summary`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BgpSession {
    /// Neighbour (address or interface).
    pub peer: String,
    /// Remote AS as configured.
    pub remote_as: String,
    /// State word when not established (`Active`, `Idle`, `Connect`…), or the prefix count.
    pub state: String,
    /// Established.
    pub up: bool,
}

/// `show bgp summary`; `None` when bgpd is not running or no table was printed.
pub fn bgp_sessions(text: &str) -> Option<Vec<BgpSession>> {
    if daemon_absent(text) {
        return None;
    }
    if !text.contains("Neighbor") {
        return if text.to_ascii_lowercase().contains("no bgp") || text.trim().is_empty() {
            Some(Vec::new())
        } else {
            None
        };
    }
    let mut out: Vec<BgpSession> = Vec::new();
    for l in text.lines() {
        let c: Vec<&str> = l.split_whitespace().collect();
        if c.len() < 10 || !(c[1] == "4" || c[1] == "6") {
            continue;
        }
        let state = c[9];
        let up = state.parse::<u64>().is_ok() || state.starts_with('(');
        if out.iter().any(|s| s.peer == c[0]) {
            continue;
        }
        out.push(BgpSession {
            peer: c[0].to_string(),
            remote_as: c[2].to_string(),
            state: state.to_string(),
            up,
        });
    }
    Some(out)
}

/// `show ip rip status`: the gateways heard from and the interfaces' versions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RipStatus {
    /// Routers RIP updates were received from.
    pub sources: Vec<Ipv4Addr>,
    /// Interface → (send, receive) version text.
    pub ifaces: BTreeMap<String, (String, String)>,
    /// `Default version control: …` line.
    pub default_versions: String,
}

/// Reads `show ip rip status`; `None` when ripd is not running.
pub fn rip_status(text: &str) -> Option<RipStatus> {
    if daemon_absent(text) || !text.contains("Routing Protocol is \"rip\"") {
        return None;
    }
    let mut s = RipStatus::default();
    #[derive(PartialEq)]
    enum Part {
        None,
        Ifaces,
        Sources,
    }
    let mut part = Part::None;
    for l in text.lines() {
        let t = l.trim();
        if t.starts_with("Default version control") {
            s.default_versions = t.to_string();
        } else if t.starts_with("Interface") && t.contains("Send") {
            part = Part::Ifaces;
        } else if t.starts_with("Routing for Networks") || t.starts_with("Distance:") {
            part = Part::None;
        } else if t.starts_with("Gateway") {
            part = Part::Sources;
        } else {
            let c: Vec<&str> = t.split_whitespace().collect();
            match part {
                Part::Ifaces if c.len() >= 3 => {
                    s.ifaces
                        .insert(c[0].to_string(), (c[1].to_string(), c[2].to_string()));
                }
                Part::Sources => {
                    if let Some(ip) = c.first().and_then(|a| a.parse().ok()) {
                        s.sources.push(ip);
                    }
                }
                _ => {}
            }
        }
    }
    Some(s)
}

/// vtysh's answers when the daemon (or all of FRR) is not running.
pub fn daemon_absent(text: &str) -> bool {
    let l = text.to_ascii_lowercase();
    l.contains("is not running") || l.contains("failed to connect to any daemons")
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = r#"Building configuration...

Current configuration:
!
frr version 8.4.4
hostname router1
!
interface eth0
 ip address 10.0.12.1/30
 ip ospf hello-interval 30
exit
!
interface eth1
 ip ospf area 0.0.0.1
exit
!
router bgp 65001
 bgp router-id 1.1.1.1
 neighbor 10.0.12.2 remote-as 65002
 neighbor 10.0.12.2 local-as 65009
 neighbor 10.0.13.2 remote-as external
 neighbor 10.0.13.2 shutdown
 !
 address-family ipv4 unicast
  network 195.11.14.0/24
  neighbor 10.0.12.2 prefix-list FROM-AS2 in
 exit-address-family
exit
!
router ospf
 network 10.0.12.0/30 area 0
 network 10.0.0.0/8 area 1
 passive-interface eth2
exit
!
router rip
 version 2
 network 10.0.0.0/8
 network eth3
 passive-interface eth4
exit
!
router eigrp 100
 network 12.0.0.0/8
exit
!
ip route 10.9.0.0/16 blackhole
ip prefix-list FROM-AS2 seq 5 deny 200.1.1.0/24
!
route-map X deny 10
 match ip address prefix-list FROM-AS2
exit
!
end
"#;

    #[test]
    fn running_config() {
        let c = Config::parse(CONF);
        assert!(c.understood);
        let b = c.bgp.as_ref().unwrap();
        assert_eq!(b.asn, 65001);
        let n = &b.neighbors["10.0.12.2"];
        assert_eq!(n.remote_as.as_deref(), Some("65002"));
        assert_eq!(n.local_as, Some(65009));
        assert_eq!(n.inbound, vec!["prefix-list FROM-AS2 in"]);
        assert!(b.neighbors["10.0.13.2"].shutdown);
        assert_eq!(b.networks, vec![Net::parse("195.11.14.0/24").unwrap()]);
        let a: Net = Net::parse("10.0.12.1/30").unwrap();
        assert_eq!(c.ospf_area("eth0", a).as_deref(), Some("0"));
        assert_eq!(
            c.ospf_area("eth1", Net::parse("10.0.1.1/24").unwrap())
                .as_deref(),
            Some("0.0.0.1")
        );
        assert!(c.ospf_passive("eth2") && !c.ospf_passive("eth0"));
        assert_eq!(
            c.iface_value("eth0", &["ip", "ospf", "hello-interval"])
                .as_deref(),
            Some("30")
        );
        assert!(c.rip_covers("eth9", Net::parse("10.10.0.1/8").unwrap()));
        assert!(c.rip_covers("eth3", Net::parse("192.168.9.1/24").unwrap()));
        assert!(!c.rip_covers("eth5", Net::parse("192.168.9.1/24").unwrap()));
        assert!(c.rip_passive("eth4"));
        assert_eq!(c.rip.as_ref().unwrap().version.as_deref(), Some("2"));
        assert!(c.other.contains_key("eigrp 100"));
        assert_eq!(c.statics, vec!["ip route 10.9.0.0/16 blackhole"]);
        assert_eq!(c.prefix_lists["FROM-AS2"].len(), 1);
        assert!(c.route_maps.contains_key("X"));
        assert!(!Config::parse("% Unknown command").understood);
    }

    #[test]
    fn protocol_states() {
        let ospf = "\nNeighbor ID     Pri State           Up Time         Dead Time Address         Interface                        RXmtL RqstL DBsmL\n\
                    2.2.2.2           1 Full/DR         1m02s             38.123s 10.0.12.2       eth1:10.0.12.1                       0     0     0\n\
                    3.3.3.3           1 ExStart/DROther 1m02s             38.123s 10.0.13.3       eth2:10.0.13.1                       0     0     0\n";
        let n = ospf_neighbors(ospf).unwrap();
        assert_eq!(n.len(), 2);
        assert!(n[0].up() && !n[1].up());
        assert_eq!(n[1].iface, "eth2");
        assert_eq!(n[1].addr, Some("10.0.13.3".parse().unwrap()));
        assert!(ospf_neighbors("ospfd is not running").is_none());
        let bgp = "IPv4 Unicast Summary (VRF default):\nBGP router identifier 1.1.1.1, local AS number 65001 vrf-id 0\n\
                   Neighbor        V         AS   MsgRcvd   MsgSent   TblVer  InQ OutQ  Up/Down State/PfxRcd   PfxSnt Desc\n\
                   10.0.0.2        4      65002        10        12        0    0    0 00:05:01            3        4 N/A\n\
                   10.0.0.3        4      65003         0         0        0    0    0    never       Active        0 N/A\n\
                   10.0.0.4        4      65004         0         0        0    0    0    never  Idle (Admin)        0 N/A\n";
        let s = bgp_sessions(bgp).unwrap();
        assert_eq!(s.len(), 3);
        assert!(s[0].up && !s[1].up && !s[2].up);
        assert_eq!(s[1].state, "Active");
        assert!(bgp_sessions("bgpd is not running").is_none());
        let rip = "Routing Protocol is \"rip\"\n  Sending updates every 30 seconds with +/-50%, next due in 12 seconds\n\
                   Default version control: send version 2, receive version 2\n    Interface        Send  Recv   Key-chain\n\
                   eth0             2     2\n    eth2             2     2\n  Routing for Networks:\n    10.0.0.0/8\n\
                   Routing Information Sources:\n    Gateway          BadPackets BadRoutes  Distance Last Update\n\
                   10.10.0.2                0         0       120   00:00:12\n  Distance: (default is 120)\n";
        let r = rip_status(rip).unwrap();
        assert_eq!(r.sources, vec!["10.10.0.2".parse::<Ipv4Addr>().unwrap()]);
        assert_eq!(r.ifaces["eth2"], ("2".to_string(), "2".to_string()));
        assert!(rip_status("ripd is not running").is_none());
    }
}
