//! The network as the probes found it: device roles from evidence, L2 domains, who owns
//! which address.
//!
//! **Roles.** A device that runs a routing daemon, has one enabled in its FRR `daemons` file,
//! or holds addresses on two or more interfaces is a *router*; one that bridges its cabled
//! ports without an address of its own is a *switch*; one that listens on a service port
//! (DNS, DHCP, HTTP, …) is a *server*; the rest are *hosts*. Role lines of the summary (NIKA
//! layout) are kept; names only decide for devices that could not be probed.
//!
//! **L2 domains.** A node is a segment of the summary plus an optional VLAN tag (`eth1.10` on
//! segment `S` is node `(S, 10)`). Interfaces enslaved to the same bridge or bond join their
//! nodes into one domain, so a host behind an access switch shares a domain with its
//! gateway's SVI. A switch that could not be probed joins all its segments.

use super::ip4::Net;
use super::probe::Facts;
use super::topo::{DeviceKind, SummaryTopology};
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

/// Well-known service ports that make a device a server.
pub const SERVICE_PORTS: [(u16, &str); 9] = [
    (53, "DNS"),
    (67, "DHCP"),
    (80, "HTTP"),
    (443, "HTTPS"),
    (8080, "HTTP"),
    (8086, "InfluxDB"),
    (21, "FTP"),
    (25, "SMTP"),
    (3306, "MySQL"),
];

/// One device with its evidence.
#[derive(Debug, Clone)]
pub struct Node {
    /// Name.
    pub name: String,
    /// Role from evidence (or the summary / the name when there is none).
    pub role: DeviceKind,
    /// Why that role, in a few words.
    pub why: String,
    /// What the probe found (`None`: not probed or not understood).
    pub facts: Option<Facts>,
}

/// An addressed interface.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// Device.
    pub device: String,
    /// Interface.
    pub iface: String,
    /// Address with prefix length.
    pub net: Net,
}

/// The model every rule reads.
#[derive(Debug, Clone, Default)]
pub struct Model {
    /// Devices by name.
    pub nodes: BTreeMap<String, Node>,
    /// Device + interface → L2 domain id (addressed or cabled interfaces that resolve).
    pub domain_of: BTreeMap<(String, String), usize>,
    /// Domain id → its addressed interfaces.
    pub domains: BTreeMap<usize, Vec<Attachment>>,
    /// Address → owners (more than one: a conflict, or an intended reuse on separate LANs).
    pub owners: BTreeMap<Ipv4Addr, Vec<Attachment>>,
}

/// Union-find over string keys.
#[derive(Default)]
struct Uf {
    ids: BTreeMap<String, usize>,
    parent: Vec<usize>,
}

impl Uf {
    fn id(&mut self, key: &str) -> usize {
        if let Some(i) = self.ids.get(key) {
            return *i;
        }
        let i = self.parent.len();
        self.parent.push(i);
        self.ids.insert(key.to_string(), i);
        i
    }
    fn find(&mut self, mut i: usize) -> usize {
        while self.parent[i] != i {
            self.parent[i] = self.parent[self.parent[i]];
            i = self.parent[i];
        }
        i
    }
    fn union(&mut self, a: usize, b: usize) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.parent[a.max(b)] = a.min(b);
        }
    }
}

/// Where the role of a device comes from when its probe tells nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hint {
    /// The summary's role lines state it.
    Summary,
    /// `get_reachability` named it as an end host (the tools' evidence from the lab's files).
    EndHost,
    /// Its name alone.
    Name,
}

/// The role a device's evidence shows; `hint` is the summary's or the name's role, `source`
/// where it comes from.
pub fn infer_role(hint: DeviceKind, source: Hint, facts: Option<&Facts>) -> (DeviceKind, String) {
    let given = source == Hint::Summary;
    let Some(f) = facts.filter(|f| f.understood) else {
        return match source {
            Hint::Summary => (hint, "as the summary says".into()),
            Hint::EndHost => (
                if hint == DeviceKind::Server {
                    DeviceKind::Server
                } else {
                    DeviceKind::Host
                },
                "an end host for get_reachability (not probed)".into(),
            ),
            Hint::Name => (hint, "guessed from its name (not probed)".into()),
        };
    };
    let daemons = f.routing_daemons();
    let addressed: BTreeSet<&str> = f
        .ifaces
        .values()
        .filter(|i| !i.addrs.is_empty())
        .map(|i| i.name.as_str())
        .collect();
    let bridged = f.ifaces.values().filter(|i| i.master.is_some()).count();
    let service: Vec<&str> = SERVICE_PORTS
        .iter()
        .filter(|(p, _)| f.listens(*p))
        .map(|(_, s)| *s)
        .collect();
    let evidence_router = !daemons.is_empty() || !f.enabled_daemons.is_empty();
    if evidence_router || addressed.len() >= 2 {
        let why = if !daemons.is_empty() {
            format!("runs {}", daemons.join(", "))
        } else if !f.enabled_daemons.is_empty() {
            let en: Vec<&str> = f.enabled_daemons.iter().map(String::as_str).collect();
            format!("its FRR daemons file enables {}", en.join(", "))
        } else {
            format!("addresses on {} interfaces", addressed.len())
        };
        // A summary that calls it a server (a DNS server on two LANs) keeps that role.
        if given && hint == DeviceKind::Server && daemons.is_empty() {
            return (DeviceKind::Server, why);
        }
        return (DeviceKind::Router, why);
    }
    if addressed.is_empty() && (bridged > 0 || f.ifaces.len() >= 2) {
        return (DeviceKind::Switch, "bridges its ports, no address".into());
    }
    if bridged > 0 && hint == DeviceKind::Switch {
        return (
            DeviceKind::Switch,
            "bridges its ports (management address only)".into(),
        );
    }
    if !service.is_empty() {
        return (
            DeviceKind::Server,
            format!("listens for {}", service.join(", ")),
        );
    }
    if given && hint == DeviceKind::Server {
        return (
            DeviceKind::Server,
            "as the summary says (no service port open)".into(),
        );
    }
    if addressed.is_empty() && given {
        return (hint, "as the summary says (no address)".into());
    }
    (
        DeviceKind::Host,
        "one addressed interface, no routing daemon".into(),
    )
}

impl Model {
    /// Builds the model from the summary and the probes alone (the tests' shorthand).
    #[cfg(test)]
    pub fn build(topo: &SummaryTopology, facts: &BTreeMap<String, Facts>) -> Model {
        Model::build_with_end_hosts(topo, facts, &BTreeSet::new())
    }

    /// Builds the model from the summary, the probes and the end hosts `get_reachability`
    /// named (the role of an unprobed device the summary does not state).
    pub fn build_with_end_hosts(
        topo: &SummaryTopology,
        facts: &BTreeMap<String, Facts>,
        end_hosts: &BTreeSet<String>,
    ) -> Model {
        let mut m = Model::default();
        for (name, dev) in &topo.devices {
            let f = facts.get(name).filter(|f| f.understood);
            let source = if topo.given_roles.contains(name) {
                Hint::Summary
            } else if end_hosts.contains(name) {
                Hint::EndHost
            } else {
                Hint::Name
            };
            let (role, why) = infer_role(dev.role, source, f);
            m.nodes.insert(
                name.clone(),
                Node {
                    name: name.clone(),
                    role,
                    why,
                    facts: f.cloned(),
                },
            );
        }
        let mut uf = Uf::default();
        let mut resolved: BTreeMap<(String, String), usize> = BTreeMap::new();
        for (name, dev) in &topo.devices {
            let node = &m.nodes[name];
            let Some(f) = &node.facts else {
                // Unprobed: cabled interfaces sit on their segments; a switch joins them.
                let ids: Vec<usize> = dev
                    .links
                    .iter()
                    .map(|(i, seg)| {
                        let id = uf.id(&key(seg, None));
                        resolved.insert((name.clone(), i.clone()), id);
                        id
                    })
                    .collect();
                if node.role == DeviceKind::Switch {
                    for w in ids.windows(2) {
                        uf.union(w[0], w[1]);
                    }
                }
                continue;
            };
            let mut names: Vec<&String> = f.ifaces.keys().collect();
            names.extend(dev.links.keys());
            names.sort();
            names.dedup();
            for iface in names {
                if let Some(id) = resolve(&mut uf, dev, f, iface, 0) {
                    resolved.insert((name.clone(), iface.clone()), id);
                }
            }
        }
        let mut roots: BTreeMap<usize, usize> = BTreeMap::new();
        for ((dev, iface), id) in resolved {
            let root = uf.find(id);
            let n = roots.len();
            let d = *roots.entry(root).or_insert(n);
            m.domain_of.insert((dev, iface), d);
        }
        for node in m.nodes.values() {
            let Some(f) = &node.facts else { continue };
            for (iface, net) in f.addresses() {
                let a = Attachment {
                    device: node.name.clone(),
                    iface: iface.clone(),
                    net,
                };
                if let Some(d) = m.domain_of.get(&(node.name.clone(), iface.clone())) {
                    m.domains.entry(*d).or_default().push(a.clone());
                }
                m.owners.entry(net.addr).or_default().push(a);
            }
        }
        m
    }

    /// One line for the report: who is what, and why for the routers.
    pub fn roles_summary(&self) -> String {
        let routers: Vec<String> = self
            .with_role(DeviceKind::Router)
            .iter()
            .map(|n| format!("{} ({})", n.name, n.why))
            .collect();
        let count = |r: DeviceKind| self.with_role(r).len();
        format!(
            "device roles from the probes: routers {}; {} switches, {} servers, {} hosts",
            if routers.is_empty() {
                "none".to_string()
            } else {
                routers.join(", ")
            },
            count(DeviceKind::Switch),
            count(DeviceKind::Server),
            count(DeviceKind::Host)
        )
    }

    /// Devices with a role, sorted by name.
    pub fn with_role(&self, role: DeviceKind) -> Vec<&Node> {
        self.nodes.values().filter(|n| n.role == role).collect()
    }

    /// The role of a device (host when unknown).
    pub fn role(&self, device: &str) -> DeviceKind {
        self.nodes
            .get(device)
            .map(|n| n.role)
            .unwrap_or(DeviceKind::Host)
    }

    /// Whether a device is an end system (host or server).
    pub fn is_end(&self, device: &str) -> bool {
        matches!(self.role(device), DeviceKind::Host | DeviceKind::Server)
    }

    /// The facts of a device.
    pub fn facts(&self, device: &str) -> Option<&Facts> {
        self.nodes.get(device).and_then(|n| n.facts.as_ref())
    }

    /// The domain of an interface.
    pub fn domain(&self, device: &str, iface: &str) -> Option<usize> {
        self.domain_of
            .get(&(device.to_string(), iface.to_string()))
            .copied()
    }

    /// The owner of `ip` inside `domain` (the next hop a device can ARP for).
    pub fn owner_in(&self, ip: Ipv4Addr, domain: Option<usize>) -> Option<&Attachment> {
        let owners = self.owners.get(&ip)?;
        match domain {
            Some(d) => owners
                .iter()
                .find(|a| self.domain(&a.device, &a.iface) == Some(d)),
            None => owners.first(),
        }
    }

    /// Devices with an interface in `domain`.
    pub fn domain_devices(&self, domain: usize) -> BTreeSet<&str> {
        self.domain_of
            .iter()
            .filter(|(_, d)| **d == domain)
            .map(|((dev, _), _)| dev.as_str())
            .collect()
    }

    /// Every device of `domain` was probed (so "nobody holds X there" is a fact).
    pub fn domain_seen(&self, domain: usize) -> bool {
        self.domain_devices(domain)
            .iter()
            .all(|d| self.facts(d).is_some_and(|f| !f.ifaces.is_empty()))
    }

    /// The first address of a device (its eth0 when addressed), for pings.
    pub fn primary_addr(&self, device: &str) -> Option<Net> {
        let f = self.facts(device)?;
        f.ifaces
            .get("eth0")
            .and_then(|i| i.addrs.first().copied())
            .or_else(|| f.addresses().first().map(|(_, n)| *n))
    }
}

fn key(seg: &str, vlan: Option<u16>) -> String {
    match vlan {
        Some(v) => format!("{seg}\u{1}{v}"),
        None => seg.to_string(),
    }
}

/// The domain node of `iface` on a probed device.
fn resolve(
    uf: &mut Uf,
    dev: &super::topo::SummaryDevice,
    f: &Facts,
    iface: &str,
    depth: u8,
) -> Option<usize> {
    if depth > 4 {
        return None;
    }
    if let Some(seg) = dev.links.get(iface) {
        return Some(uf.id(&key(seg, None)));
    }
    if f.vlan_bridges.contains(iface) {
        return vlan_bridge(uf, dev, f, iface);
    }
    // Members of a bridge or bond join one domain.
    let members: Vec<String> = f
        .ifaces
        .values()
        .filter(|i| i.master.as_deref() == Some(iface))
        .map(|i| i.name.clone())
        .collect();
    if !members.is_empty() {
        let ids: Vec<usize> = members
            .iter()
            .filter_map(|m| resolve(uf, dev, f, m, depth + 1))
            .collect();
        for w in ids.windows(2) {
            uf.union(w[0], w[1]);
        }
        return ids.first().copied();
    }
    // A VLAN sub-interface: the parent's segments, tagged.
    if let Some((parent, tag)) = iface.rsplit_once('.')
        && let Ok(tag) = tag.parse::<u16>()
    {
        if f.vlan_bridges.contains(parent) {
            // An SVI of a VLAN-aware bridge: that VLAN inside the bridge.
            vlan_bridge(uf, dev, f, parent);
            return Some(uf.id(&bridge_vlan_key(&dev.name, parent, tag)));
        }
        let segs = parent_segments(dev, f, parent, 0);
        let ids: Vec<usize> = segs.iter().map(|s| uf.id(&key(s, Some(tag)))).collect();
        for w in ids.windows(2) {
            uf.union(w[0], w[1]);
        }
        return ids.first().copied();
    }
    None
}

/// The node of VLAN `vid` inside bridge `bridge` of `device` (local to the device).
fn bridge_vlan_key(device: &str, bridge: &str, vid: u16) -> String {
    format!("{device}\u{2}{bridge}\u{2}{vid}")
}

/// A VLAN-aware bridge: each VLAN is its own domain, joining the untagged segments of the
/// ports whose PVID (or untagged egress) it is and the tagged segments of its trunk ports.
/// Joining all ports, as for a plain bridge, would put every VLAN in one LAN and leave the
/// hosts of an access port apart from their gateway's SVI. Answers the bridge's own
/// untagged VLAN, if it has one.
fn vlan_bridge(
    uf: &mut Uf,
    dev: &super::topo::SummaryDevice,
    f: &Facts,
    bridge: &str,
) -> Option<usize> {
    let ports: Vec<&str> = f
        .ifaces
        .values()
        .filter(|i| i.master.as_deref() == Some(bridge))
        .map(|i| i.name.as_str())
        .collect();
    for port in ports {
        let segs = parent_segments(dev, f, port, 0);
        for v in f.port_vlans.get(port).into_iter().flatten() {
            let inside = uf.id(&bridge_vlan_key(&dev.name, bridge, v.vid));
            for seg in &segs {
                let tag = (!v.untagged).then_some(v.vid);
                let outside = uf.id(&key(seg, tag));
                uf.union(inside, outside);
            }
        }
    }
    let own = f.port_vlans.get(bridge)?.iter().find(|v| v.untagged)?;
    Some(uf.id(&bridge_vlan_key(&dev.name, bridge, own.vid)))
}

/// The cabled segments under an interface (itself, or a bond's members).
fn parent_segments(
    dev: &super::topo::SummaryDevice,
    f: &Facts,
    iface: &str,
    depth: u8,
) -> Vec<String> {
    if depth > 3 {
        return Vec::new();
    }
    if let Some(seg) = dev.links.get(iface) {
        return vec![seg.clone()];
    }
    f.ifaces
        .values()
        .filter(|i| i.master.as_deref() == Some(iface))
        .flat_map(|i| parent_segments(dev, f, &i.name, depth + 1))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::baseline::probe;

    fn facts(links: &str, addrs: &str, procs: &str) -> Facts {
        probe::parse(&format!(
            "@@fwd\n1\n@@link\n{links}\n@@addr\n{addrs}\n@@proc\n{procs}\n@@listen\n@@route\n@@end\n"
        ))
    }

    #[test]
    fn roles_and_domains_through_a_switch_and_vlans() {
        let topo = SummaryTopology::parse(
            "Devices:\n  cs_lab1: eth0=lan\n  sw: eth0=up, eth1=lan\n  r: eth0=up, eth1=wan\n  r2: eth0=wan\n\n\
             Collision domains (shared L2 segments):\n  lan: cs_lab1.eth0, sw.eth1\n  up: r.eth0, sw.eth0\n  wan: r.eth1, r2.eth0",
        );
        let up = "<BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500";
        let mut fs = BTreeMap::new();
        fs.insert(
            "cs_lab1".into(),
            facts(
                &format!("2: eth0@if3: {up} state UP"),
                "eth0 10.0.1.3/24",
                "bash",
            ),
        );
        fs.insert(
            "sw".into(),
            facts(
                &format!(
                    "2: eth0@if3: {up} master br10 state UP\n3: eth1@if4: {up} state UP\n4: eth1.10@eth1: {up} master br10 state UP\n5: br10: {up} state UP"
                ),
                "",
                "bash",
            ),
        );
        fs.insert(
            "r".into(),
            facts(
                &format!("2: eth0@if3: {up} state UP\n3: eth1@if4: {up} state UP"),
                "eth0 10.0.1.1/24\neth1 10.9.0.1/30",
                "zebra ripd",
            ),
        );
        let m = Model::build(&topo, &fs);
        assert_eq!(
            m.role("cs_lab1"),
            DeviceKind::Host,
            "a lab PC is a host whatever its name"
        );
        assert_eq!(m.role("sw"), DeviceKind::Switch);
        assert_eq!(m.role("r"), DeviceKind::Router);
        assert_eq!(m.nodes["r"].why, "runs zebra, ripd");
        // r2 was not probed: its name decides.
        assert_eq!(m.role("r2"), DeviceKind::Router);
        // The host's untagged segment is bridged (through eth1.10) to the router's uplink only
        // in VLAN 10: the host and the router's untagged eth0 are NOT in one domain here.
        let host_d = m.domain("cs_lab1", "eth0");
        assert_eq!(m.domain("sw", "br10"), m.domain("sw", "eth0"));
        assert_ne!(host_d, m.domain("r", "eth0"));
        assert_eq!(
            m.owner_in("10.0.1.1".parse().unwrap(), m.domain("r", "eth0"))
                .unwrap()
                .device,
            "r"
        );
        assert_eq!(m.primary_addr("r").unwrap().to_string(), "10.0.1.1/24");
    }

    #[test]
    fn an_unprobed_device_named_by_get_reachability_is_an_end_host_not_a_router() {
        let topo = SummaryTopology::parse(
            "Devices:\n  h1: eth0=lan\n  srv1: eth0=lan\n  x2: eth0=lan\n\n\
             Collision domains (shared L2 segments):\n  lan: h1.eth0, srv1.eth0, x2.eth0",
        );
        // No probe answered; by name `h1` would be a router and `srv1` a server.
        let hosts: BTreeSet<String> = ["h1".to_string(), "srv1".into()].into();
        let m = Model::build_with_end_hosts(&topo, &BTreeMap::new(), &hosts);
        assert_eq!(m.role("h1"), DeviceKind::Host);
        assert_eq!(
            m.nodes["h1"].why,
            "an end host for get_reachability (not probed)"
        );
        assert_eq!(m.role("srv1"), DeviceKind::Server);
        assert_eq!(m.role("x2"), DeviceKind::Router);
        assert_eq!(m.nodes["x2"].why, "guessed from its name (not probed)");
        // Without the tools' list, the names decide, as before.
        assert_eq!(
            Model::build(&topo, &BTreeMap::new()).role("h1"),
            DeviceKind::Router
        );
    }

    /// A host on an access port (PVID 40) of a VLAN-aware bridge, a trunk to a distribution
    /// switch whose SVI `br0.40` holds the gateway as a /32 (a VRRP address).
    fn vlan_aware(filtering: bool) -> Model {
        let topo = SummaryTopology::parse(
            "Devices:\n  pc: eth0=acc\n  asw: eth0=mgmt, eth1=acc, eth2=trunk\n  dsw: eth0=trunk\n  other: eth0=mgmt\n",
        );
        let up = "<BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500";
        let with_vlans = |links: &str, addrs: &str, procs: &str, vlans: &str| {
            probe::parse(&format!(
                "@@fwd\n1\n@@link\n{links}\n@@addr\n{addrs}\n@@proc\n{procs}\n@@listen\n@@vlan\n{vlans}\n@@route\n@@end\n"
            ))
        };
        let on = if filtering { "1" } else { "0" };
        let mut fs = BTreeMap::new();
        fs.insert(
            "pc".into(),
            facts(
                &format!("2: eth0@if3: {up} state UP"),
                "eth0 10.6.0.100/24",
                "bash",
            ),
        );
        fs.insert(
            "other".into(),
            facts(
                &format!("2: eth0@if3: {up} state UP"),
                "eth0 10.0.0.9/28",
                "bash",
            ),
        );
        fs.insert(
            "asw".into(),
            with_vlans(
                &format!(
                    "2: br0: {up} state UP\n3: eth0@if1: {up} master br0 state UP\n4: eth1@if2: {up} master br0 state UP\n5: eth2@if3: {up} master br0 state UP"
                ),
                "",
                "bash",
                &format!("filtering br0 {on}\nbr0 99\neth0 99pu\neth1 40pu\neth2 10 40 99"),
            ),
        );
        fs.insert(
            "dsw".into(),
            with_vlans(
                &format!(
                    "2: br0: {up} state UP\n3: br0.40@br0: {up} state UP\n4: eth0@if3: {up} master br0 state UP"
                ),
                "br0.40 10.6.0.2/24\nbr0.40 10.6.0.1/32",
                "zebra ospfd keepalived",
                &format!("filtering br0 {on}\nbr0 40\neth0 10 40 99"),
            ),
        );
        Model::build(&topo, &fs)
    }

    #[test]
    fn vlan_aware_bridge_puts_an_access_port_in_its_vlan() {
        let m = vlan_aware(true);
        let host = m.domain("pc", "eth0");
        assert!(host.is_some());
        assert_eq!(
            host,
            m.domain("dsw", "br0.40"),
            "host and SVI share VLAN 40"
        );
        assert_eq!(
            m.owner_in("10.6.0.1".parse().unwrap(), host)
                .map(|a| a.device.as_str()),
            Some("dsw"),
            "the /32 VRRP address on the SVI is the host's gateway"
        );
        assert_ne!(host, m.domain("other", "eth0"), "VLAN 99 is another LAN");
        // Without VLAN filtering the VLAN table means nothing: the plain-bridge model stays
        // (every port in one domain, the tagged SVI apart).
        let plain = vlan_aware(false);
        assert_eq!(plain.domain("pc", "eth0"), plain.domain("other", "eth0"));
        assert_ne!(plain.domain("pc", "eth0"), plain.domain("dsw", "br0.40"));
    }
}
