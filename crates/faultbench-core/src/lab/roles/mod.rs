//! Device roles from evidence: which devices of a lab are routers, switches, hosts or servers,
//! and why.
//!
//! Tools that need the end hosts (`get_reachability` pings every pair of them), the NIKA-style
//! summary and the baseline agent all ask the same question; a device's *name* is the weakest
//! answer (`as20r1`, `h1`, `srv1`, `ws1` say little), so names decide only when nothing else
//! does. Each device's [`Evidence`] is gathered from the lab's files before deploy
//! ([`LabRoles::from_lab`]) or from the running device
//! ([`live::SCRIPT`], read by [`live::parse`]), and [`classify`] applies one rule table, the
//! first matching rule deciding:
//!
//! | # | evidence | role |
//! |---|----------|------|
//! | 1 | `topology.toml` `[roles]` lists the device | that role |
//! | 2 | a routing daemon (ospfd, bgpd, ripd, isisd, …, bird) is enabled in `etc/frr/daemons` or `etc/quagga/daemons`, configured (`router ospf` in `frr.conf`, a per-daemon `ospfd.conf`, `vtysh -c "router rip"`), started by the startup (`ospfd -d`, `/etc/init.d/frr start`), or running | router |
//! | 3 | two or more addressed interfaces (loopbacks and dummies not counted) and IP forwarding not turned off (Kathará turns it on in every device) | router |
//! | 4 | interfaces enslaved to a bridge (`brctl addif`, `ip link set … master br0`, `bridge_ports`) and at most one addressed interface | switch |
//! | 5 | a service started, configured or listening: DNS (named, bind9, dnsmasq, unbound), DHCP (dhcpd, isc-dhcp-server, udhcpd, kea), web (apache2, nginx, lighttpd, httpd, `python3 -m http.server`), load balancer (haproxy), InfluxDB, FTP | server (an end host) |
//! | 6 | one addressed interface (or two with forwarding turned off), static or by a DHCP client | host |
//! | 7 | nothing of the above: the name, by the release's rule ([`name_suggests_end_host`]: `pc`, `host`, `client`, `dns`, `dhcp`, `web`, `lb`, `vpn`, `influxdb`) | host/server, else router (switch when the name says so) |
//!
//! End hosts, for reachability, are the hosts and the servers ([`Role::is_end_host`]). Every
//! [`Decision`] keeps the rule that decided and the evidence in words with where it was found
//! (`router: ospfd enabled (r1/etc/frr/daemons)`), so a report can say why.
//!
//! Routers win over servers on purpose: a router that also hands out DHCP leases (a common
//! student-lab gateway) routes. The price is that a server with addresses on two LANs and
//! forwarding left on is taken for a router unless `topology.toml` says otherwise.

mod files;
pub mod live;
mod shell;

pub use files::{EndHosts, HostsFrom, MAX_EVIDENCE_FILE_BYTES};

use super::topology_meta::Role;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

/// One piece of evidence: what was seen and where (`ospfd enabled`, `r1/etc/frr/daemons`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Clue {
    /// What was seen.
    pub what: String,
    /// Where: a lab file (with its line when known) or `live: <command>`.
    pub at: String,
}

impl Clue {
    /// A clue.
    pub fn new(what: impl Into<String>, at: impl Into<String>) -> Clue {
        Clue {
            what: what.into(),
            at: at.into(),
        }
    }
}

impl fmt::Display for Clue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.what, self.at)
    }
}

/// Everything known about one device that bears on its role.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evidence {
    /// The role `topology.toml` gives it.
    pub declared: Option<Role>,
    /// Routing daemons enabled, configured, started or running.
    pub routing: Vec<Clue>,
    /// IP forwarding as set by the lab or read live (`None`: not set; Kathará's default is on).
    pub forwarding: Option<(bool, Clue)>,
    /// Addressed interfaces (name → where the address comes from); `lo` and dummies excluded.
    pub addressed: BTreeMap<String, Clue>,
    /// A default route, where it is set.
    pub default_route: Option<Clue>,
    /// Services by kind (`dns`, `dhcp`, `web`, `load_balancer`, `influxdb`, `ftp`).
    pub services: BTreeMap<String, Clue>,
    /// Interfaces enslaved to a bridge (port → where).
    pub bridge_ports: BTreeMap<String, Clue>,
}

impl Evidence {
    /// Nothing that rules 2–6 could use.
    pub fn is_empty(&self) -> bool {
        self.routing.is_empty()
            && self.addressed.is_empty()
            && self.services.is_empty()
            && self.bridge_ports.is_empty()
    }

    fn add_routing(&mut self, clue: Clue) {
        if !self.routing.iter().any(|c| c.what == clue.what) {
            self.routing.push(clue);
        }
    }
}

/// The former name of [`RoleRule`] (one public name per concept across the crates:
/// faultbench-emu's mock networks have rules of their own; issue 28).
#[deprecated(note = "renamed to `RoleRule`; the old name goes in the next release")]
pub type Rule = RoleRule;

/// Which rule of the table decided a role.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RoleRule {
    /// 1: `topology.toml` lists it.
    Declared,
    /// 2: routing daemons.
    Routing,
    /// 3: forwarding between two or more addressed interfaces.
    Forwarding,
    /// 4: bridged ports.
    Bridge,
    /// 5: a service.
    Service,
    /// 6: addressed interface(s), no forwarding role.
    Address,
    /// 7: the name alone.
    Name,
}

/// A device's role and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    /// The role.
    pub role: Role,
    /// The rule that decided.
    pub rule: RoleRule,
    /// The evidence in words, with where it was found.
    pub because: String,
}

impl Decision {
    /// The role was decided by evidence, not by the name alone.
    pub fn from_evidence(&self) -> bool {
        self.rule != RoleRule::Name
    }
}

impl fmt::Display for Decision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", role_word(&self.role), self.because)
    }
}

/// `router`, `switch`, `host`, `dns server`, …
pub fn role_word(role: &Role) -> String {
    match role {
        Role::Router => "router".into(),
        Role::Switch => "switch".into(),
        Role::Host => "host".into(),
        Role::Server(kind) => format!("{} server", kind.replace('_', " ")),
    }
}

impl Role {
    /// Hosts and servers: the devices `get_reachability` pings between.
    pub fn is_end_host(&self) -> bool {
        matches!(self, Role::Host | Role::Server(_))
    }
}

/// Joins the first clues: `ospfd enabled (r1/etc/frr/daemons), bgpd enabled (…)`.
fn clues<'a>(it: impl IntoIterator<Item = &'a Clue>) -> String {
    let all: Vec<&Clue> = it.into_iter().collect();
    let mut s: Vec<String> = all.iter().take(2).map(ToString::to_string).collect();
    if all.len() > 2 {
        s.push(format!("and {} more", all.len() - 2));
    }
    s.join(", ")
}

/// The release's naming rule for end hosts, the last resort: the name contains `pc`, `host` or
/// `client`, or names a server (`dns`, `dhcp`, `web`, `lb`, `vpn`, `influxdb`).
/// Case-insensitive.
///
/// ```
/// use faultbench_core::lab::roles::name_suggests_end_host;
/// assert!(name_suggests_end_host("pc1") && name_suggests_end_host("DHCP"));
/// assert!(!name_suggests_end_host("h1") && !name_suggests_end_host("srv1"));
/// ```
pub fn name_suggests_end_host(name: &str) -> bool {
    name_role(name).is_end_host()
}

/// The role a name suggests (rule 7).
fn name_role(name: &str) -> Role {
    let n = name.to_ascii_lowercase();
    let servers = [
        ("dns", "dns"),
        ("dhcp", "dhcp"),
        ("web", "web"),
        ("lb", "load_balancer"),
        ("vpn", "vpn"),
        ("influxdb", "influxdb"),
    ];
    if ["pc", "host", "client"].iter().any(|k| n.contains(k)) {
        Role::Host
    } else if let Some((_, kind)) = servers.iter().find(|(k, _)| n.contains(k)) {
        Role::Server((*kind).to_string())
    } else if n.contains("switch") || n.starts_with("sw") || n.starts_with("bridge") {
        Role::Switch
    } else {
        Role::Router
    }
}

/// Applies the rule table to one device.
///
/// ```
/// use faultbench_core::lab::roles::{classify, Clue, Evidence, RoleRule};
/// use faultbench_core::lab::Role;
/// let mut e = Evidence::default();
/// e.addressed.insert("eth0".into(), Clue::new("10.0.0.5/24", "h1.startup:1"));
/// let d = classify("h1", &e);
/// assert_eq!((d.role, d.rule), (Role::Host, RoleRule::Address));
/// // Without any evidence, the name decides: `h1` is not an end-host name.
/// assert_eq!(classify("h1", &Evidence::default()).rule, RoleRule::Name);
/// ```
pub fn classify(name: &str, e: &Evidence) -> Decision {
    let decide = |role: Role, rule: RoleRule, because: String| Decision {
        role,
        rule,
        because,
    };
    if let Some(role) = &e.declared {
        return decide(
            role.clone(),
            RoleRule::Declared,
            "listed in topology.toml".into(),
        );
    }
    if !e.routing.is_empty() {
        return decide(Role::Router, RoleRule::Routing, clues(&e.routing));
    }
    let forwarding_off = matches!(e.forwarding, Some((false, _)));
    let n = e.addressed.len();
    if n >= 2 && !forwarding_off {
        let names: Vec<&str> = e.addressed.keys().map(String::as_str).collect();
        let how = match &e.forwarding {
            Some((true, c)) => format!("forwarding on ({})", c.at),
            _ => "forwarding on (Kathará's default)".into(),
        };
        return decide(
            Role::Router,
            RoleRule::Forwarding,
            format!(
                "{n} addressed interfaces ({}), {how}; {}",
                names.join(", "),
                clues(e.addressed.values())
            ),
        );
    }
    if !e.bridge_ports.is_empty() && n <= 1 {
        let ports: Vec<&str> = e.bridge_ports.keys().map(String::as_str).collect();
        let at: BTreeSet<&str> = e.bridge_ports.values().map(|c| c.at.as_str()).collect();
        let at: Vec<&str> = at.into_iter().take(2).collect();
        return decide(
            Role::Switch,
            RoleRule::Bridge,
            format!("bridges {} ({})", ports.join(", "), at.join(", ")),
        );
    }
    if let Some((kind, clue)) = e.services.iter().next() {
        let mut because = clues(e.services.values());
        if e.services.len() == 1 {
            because = clue.to_string();
        }
        return decide(Role::Server(kind.clone()), RoleRule::Service, because);
    }
    if n >= 1 {
        let mut because = format!(
            "{n} addressed interface{}: {}",
            if n == 1 { "" } else { "s" },
            clues(e.addressed.values())
        );
        if let Some((false, c)) = &e.forwarding {
            because.push_str(&format!("; forwarding off ({})", c.at));
        }
        if let Some(c) = &e.default_route {
            because.push_str(&format!("; default route ({})", c.at));
        }
        return decide(Role::Host, RoleRule::Address, because);
    }
    decide(
        name_role(name),
        RoleRule::Name,
        "no evidence in its files or probes; guessed from the name".into(),
    )
}

/// The roles of every device of a lab.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabRoles {
    /// Device → decision, for every device.
    pub devices: BTreeMap<String, Decision>,
    /// Device → the evidence the decision rests on.
    pub evidence: BTreeMap<String, Evidence>,
    /// Files that could not be read (their evidence is missing), each naming the file.
    pub notes: Vec<String>,
}

impl LabRoles {
    /// Classifies devices from their evidence, in the given order.
    pub fn from_evidence(evidence: impl IntoIterator<Item = (String, Evidence)>) -> LabRoles {
        let mut r = LabRoles::default();
        for (name, e) in evidence {
            r.devices.insert(name.clone(), classify(&name, &e));
            r.evidence.insert(name, e);
        }
        r
    }

    /// The decision for a device.
    pub fn decision(&self, device: &str) -> Option<&Decision> {
        self.devices.get(device)
    }

    /// The role of a device.
    pub fn role(&self, device: &str) -> Option<&Role> {
        self.devices.get(device).map(|d| &d.role)
    }

    /// Hosts and servers, sorted by name.
    pub fn end_hosts(&self) -> Vec<String> {
        self.devices
            .iter()
            .filter(|(_, d)| d.role.is_end_host())
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Devices whose role only their name gave.
    pub fn by_name(&self) -> Vec<String> {
        self.devices
            .iter()
            .filter(|(_, d)| d.rule == RoleRule::Name)
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Replaces a device's evidence and decision (live evidence for a device its files said
    /// nothing about).
    pub fn set(&mut self, device: &str, evidence: Evidence) {
        self.devices
            .insert(device.to_string(), classify(device, &evidence));
        self.evidence.insert(device.to_string(), evidence);
    }

    /// The roles as `[roles]` lists (for the NIKA summary): routers, switches, hosts, and one
    /// server group per kind in order of first appearance by device name.
    pub fn as_roles(&self) -> super::Roles {
        let mut roles = super::Roles::default();
        for (name, d) in &self.devices {
            roles.add(name.clone(), &d.role);
        }
        roles
    }
}

impl fmt::Display for LabRoles {
    /// One line per device: `r1: router: ospfd enabled (r1/etc/frr/daemons)`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (name, d) in &self.devices {
            writeln!(f, "{name}: {d}")?;
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clue(s: &str) -> Clue {
        Clue::new(s, "x.startup:1")
    }

    #[test]
    fn the_rule_table_in_order() {
        let mut e = Evidence::default();
        assert_eq!(classify("h1", &e).rule, RoleRule::Name);
        assert_eq!(classify("h1", &e).role, Role::Router);
        assert_eq!(classify("pc1", &e).role, Role::Host);
        assert_eq!(classify("dns", &e).role, Role::Server("dns".into()));
        assert_eq!(classify("sw3", &e).role, Role::Switch);

        e.addressed.insert("eth0".into(), clue("10.0.0.2/24"));
        assert_eq!(classify("r9", &e).role, Role::Host);
        e.services.insert("web".into(), clue("runs apache2"));
        let d = classify("x", &e);
        assert_eq!(
            (d.role, d.rule),
            (Role::Server("web".into()), RoleRule::Service)
        );
        assert_eq!(d.because, "runs apache2 (x.startup:1)");

        // Two addressed interfaces with forwarding on by default: a router, even with a service.
        e.addressed.insert("eth1".into(), clue("10.0.1.2/24"));
        let d = classify("x", &e);
        assert_eq!((d.role, d.rule), (Role::Router, RoleRule::Forwarding));
        assert!(d.because.contains("Kathará's default"), "{}", d.because);
        // Forwarding turned off: a dual-homed server.
        e.forwarding = Some((false, clue("ip_forward=0")));
        assert_eq!(classify("x", &e).role, Role::Server("web".into()));
        e.services.clear();
        let d = classify("x", &e);
        assert_eq!(d.role, Role::Host);
        assert!(d.because.contains("forwarding off"), "{}", d.because);

        // Bridged ports with one management address: a switch.
        let mut s = Evidence::default();
        s.bridge_ports.insert("eth0".into(), clue("master br0"));
        s.bridge_ports.insert("eth1".into(), clue("master br0"));
        s.addressed.insert("br0".into(), clue("10.9.9.9/24"));
        assert_eq!(classify("core", &s).role, Role::Switch);

        // A routing daemon beats everything but topology.toml.
        s.routing.push(clue("ospfd enabled"));
        let d = classify("core", &s);
        assert_eq!((d.role.clone(), d.rule), (Role::Router, RoleRule::Routing));
        assert_eq!(d.to_string(), "router: ospfd enabled (x.startup:1)");
        s.declared = Some(Role::Host);
        assert_eq!(classify("core", &s).role, Role::Host);
    }

    #[test]
    fn the_release_naming_rule_is_kept_as_the_fallback() {
        for n in [
            "pc1",
            "host_1",
            "client",
            "dns_server",
            "DHCP",
            "web0",
            "lb",
            "vpn1",
            "influxdb",
            "office_pc",
        ] {
            assert!(name_suggests_end_host(n), "{n}");
        }
        for n in ["r1", "router0", "switch1", "srv1", "h1", "laptop1", "ws1"] {
            assert!(!name_suggests_end_host(n), "{n}");
        }
    }

    #[test]
    fn roles_group_into_nika_lists() {
        let mut web = Evidence::default();
        web.services.insert("web".into(), clue("runs nginx"));
        let r = LabRoles::from_evidence([
            ("w2".to_string(), web.clone()),
            ("w1".to_string(), web),
            ("r1".to_string(), Evidence::default()),
        ]);
        let roles = r.as_roles();
        assert_eq!(roles.routers, vec!["r1"]);
        assert_eq!(roles.servers.len(), 1);
        assert_eq!(roles.servers[0].devices, vec!["w1", "w2"]);
        assert_eq!(r.end_hosts(), vec!["w1", "w2"]);
        assert_eq!(r.by_name(), vec!["r1"]);
    }
}
