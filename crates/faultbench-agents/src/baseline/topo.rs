//! Reading the topology summary the agent receives (both layouts the release uses).
//!
//! - Kathará: `Devices:` then `  dev: eth0=A, eth1=B` lines, and
//!   `Collision domains (shared L2 segments):` then `  A: dev.eth0, other.eth1`.
//! - NIKA: `Devices:` with role lines (`  Routers (FRR): r1, r2`, `  Hosts: pc1`), then
//!   `Links (device:iface <-> device:iface):` and `  a:eth0 <-> b:eth1`.
//!
//! Roles are taken from NIKA role lines when present (with the server kind of a
//! `Dns servers:` line), else guessed from names; a guess only decides what to probe first,
//! never what to conclude — the probes decide roles from evidence (`lan`).

use std::collections::{BTreeMap, BTreeSet};

/// What a device probably is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum DeviceKind {
    /// Runs a routing stack (or may).
    Router,
    /// A layer-2 switch.
    Switch,
    /// An end host.
    Host,
    /// A server (DNS, web, DHCP, …).
    Server,
}

/// A device of the summary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SummaryDevice {
    /// Name.
    pub name: String,
    /// Role (given or guessed).
    pub role: DeviceKind,
    /// Cabled interfaces (`eth0`, …).
    pub interfaces: BTreeSet<String>,
    /// Cabled interface → the segment (collision domain or link) it is plugged into.
    pub links: BTreeMap<String, String>,
}

/// The parsed summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SummaryTopology {
    /// Devices by name.
    pub devices: BTreeMap<String, SummaryDevice>,
    /// Devices whose role the summary states (NIKA role lines), not guessed from the name.
    pub given_roles: BTreeSet<String>,
    /// Server kinds the summary states: device → `dns`, `web`, `dhcp`, … (the first word of
    /// a `Dns servers:` line, lower case).
    pub server_kinds: BTreeMap<String, String>,
    /// L2 segments: domain name → member devices (NIKA links become two-member segments).
    pub segments: BTreeMap<String, BTreeSet<String>>,
}

/// Guesses a role from a device name.
pub fn guess_role(name: &str) -> DeviceKind {
    let n = name.to_ascii_lowercase();
    let has = |ps: &[&str]| ps.iter().any(|p| n.contains(p));
    if has(&[
        "dns",
        "web",
        "www",
        "http",
        "dhcp",
        "srv",
        "server",
        "mail",
        "ftp",
        "db",
        "influx",
        "collector",
        "nginx",
        "ntp",
        "lb",
    ]) {
        DeviceKind::Server
    } else if has(&[
        "pc", "host", "client", "laptop", "ws", "phone", "printer", "user", "student", "staff",
        "admin", "hod",
    ]) {
        DeviceKind::Host
    } else if n.starts_with("asw")
        || n.starts_with("sw")
        || n.contains("switch")
        || n.starts_with("bridge")
    {
        DeviceKind::Switch
    } else {
        DeviceKind::Router
    }
}

impl SummaryTopology {
    /// Parses a summary; unknown lines are ignored.
    pub fn parse(summary: &str) -> SummaryTopology {
        let mut t = SummaryTopology::default();
        #[derive(PartialEq)]
        enum Sec {
            None,
            Devices,
            Domains,
            Links,
        }
        let mut sec = Sec::None;
        let mut given: BTreeMap<String, DeviceKind> = BTreeMap::new();
        for raw in summary.lines() {
            let line = raw.trim();
            if line.is_empty() {
                continue;
            }
            if !raw.starts_with(' ') && !raw.starts_with('\t') {
                sec = if line.starts_with("Devices") {
                    Sec::Devices
                } else if line.starts_with("Collision domains") {
                    Sec::Domains
                } else if line.starts_with("Links") {
                    Sec::Links
                } else {
                    Sec::None
                };
                continue;
            }
            let Some((head, rest)) = line.split_once(':') else {
                continue;
            };
            match sec {
                Sec::Devices => {
                    let head = head.trim();
                    let lower = head.to_ascii_lowercase();
                    // `Routers (FRR): r1, r2` lists devices; `router0: eth0=A` is a device.
                    let listing = !rest.contains('=') && !rest.trim_start().starts_with('(');
                    let role_line = if !listing {
                        None
                    } else if lower.starts_with("router") {
                        Some(DeviceKind::Router)
                    } else if lower.starts_with("switch") {
                        Some(DeviceKind::Switch)
                    } else if lower.starts_with("host") {
                        Some(DeviceKind::Host)
                    } else if lower.contains("server") {
                        Some(DeviceKind::Server)
                    } else {
                        None
                    };
                    if let Some(role) = role_line {
                        let kind = (role == DeviceKind::Server)
                            .then(|| lower.split([' ', '_']).next().unwrap_or("").to_string())
                            .filter(|k| !k.is_empty() && *k != "servers");
                        for d in rest.split(',').map(str::trim).filter(|d| !d.is_empty()) {
                            given.insert(d.to_string(), role);
                            if let Some(k) = &kind {
                                t.server_kinds.insert(d.to_string(), k.clone());
                            }
                            t.add(d);
                        }
                    } else {
                        t.add(head);
                        for part in rest.split(',') {
                            if let Some((iface, dom)) = part.trim().split_once('=') {
                                t.attach(head, iface.trim(), dom);
                            }
                        }
                    }
                }
                Sec::Domains => {
                    for member in rest.split(',').map(str::trim) {
                        if let Some((dev, iface)) = member.rsplit_once('.') {
                            t.attach(dev, iface, head.trim());
                        }
                    }
                }
                Sec::Links => {
                    if let Some((a, b)) = line.split_once("<->") {
                        let dom = line.to_string();
                        for end in [a, b] {
                            if let Some((dev, iface)) = end.trim().split_once(':') {
                                t.attach(dev.trim(), iface.trim(), &dom);
                            }
                        }
                    }
                }
                Sec::None => {}
            }
        }
        for (name, role) in given {
            if let Some(d) = t.devices.get_mut(&name) {
                d.role = role;
                t.given_roles.insert(name);
            }
        }
        t
    }

    fn add(&mut self, name: &str) {
        let name = name.trim();
        if name.is_empty() || name.contains(' ') {
            return;
        }
        self.devices
            .entry(name.to_string())
            .or_insert_with(|| SummaryDevice {
                name: name.to_string(),
                role: guess_role(name),
                interfaces: BTreeSet::new(),
                links: BTreeMap::new(),
            });
    }

    fn attach(&mut self, dev: &str, iface: &str, domain: &str) {
        // Kathará strips quotes from `pc0[0]='E'`, the release's summary keeps them: `'E'` and
        // `E` are one collision domain.
        let domain = domain.trim().trim_matches(|c| c == '\'' || c == '"');
        self.add(dev);
        if let Some(d) = self.devices.get_mut(dev.trim()) {
            d.interfaces.insert(iface.to_string());
            d.links.insert(iface.to_string(), domain.to_string());
        }
        self.segments
            .entry(domain.to_string())
            .or_default()
            .insert(dev.trim().to_string());
    }

    /// Devices with `role`, sorted.
    pub fn with_role(&self, role: DeviceKind) -> Vec<&SummaryDevice> {
        self.devices.values().filter(|d| d.role == role).collect()
    }

    /// Devices sharing a segment with `name`.
    pub fn neighbours(&self, name: &str) -> BTreeSet<String> {
        self.segments
            .values()
            .filter(|m| m.contains(name))
            .flat_map(|m| m.iter().cloned())
            .filter(|d| d != name)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kathara_layout() {
        let t = SummaryTopology::parse(
            "Topology: Demo\n\nDevices:\n  pc1: eth0=A\n  r1: eth0=A, eth1=B\n  r2: eth0=B\n  router0: eth0=B\n  hosts9: eth0=A\n  dns: (no link assignments in lab.conf)\n\n\
             Collision domains (shared L2 segments):\n  A: pc1.eth0, r1.eth0\n  B: r1.eth1, r2.eth0",
        );
        assert_eq!(t.devices.len(), 6, "{:?}", t.devices.keys());
        assert_eq!(t.devices["router0"].role, DeviceKind::Router);
        assert!(t.given_roles.is_empty());
        assert_eq!(t.devices["pc1"].role, DeviceKind::Host);
        assert_eq!(t.devices["r1"].role, DeviceKind::Router);
        assert_eq!(t.devices["dns"].role, DeviceKind::Server);
        assert!(t.devices["r1"].interfaces.contains("eth1"));
        assert_eq!(t.devices["r1"].links["eth1"], "B");
        assert!(t.given_roles.is_empty());
        let quoted = SummaryTopology::parse(
            "Devices:\n  pc0: eth0='E'\n  r1: eth4=E\n\nCollision domains (shared L2 segments):\n  'E': pc0.eth0\n  E: r1.eth4",
        );
        assert_eq!(
            quoted.devices["pc0"].links["eth0"], "E",
            "quotes are not part of a domain name"
        );
        assert!(quoted.neighbours("pc0").contains("r1"));
        assert_eq!(
            t.neighbours("r1").into_iter().collect::<Vec<_>>(),
            vec!["hosts9", "pc1", "r2", "router0"]
        );
    }

    #[test]
    fn nika_layout() {
        let t = SummaryTopology::parse(
            "Devices:\n  Routers (FRR): leaf_0, spine_0\n  Switches: s1\n  Hosts: pc_0_0\n  DNS servers: dns_0\n\
             Links (device:iface <-> device:iface):\n  leaf_0:eth0 <-> spine_0:eth0\n  pc_0_0:eth0 <-> leaf_0:eth1",
        );
        assert_eq!(t.devices["leaf_0"].role, DeviceKind::Router);
        assert_eq!(t.devices["s1"].role, DeviceKind::Switch);
        assert_eq!(t.devices["dns_0"].role, DeviceKind::Server);
        assert_eq!(t.devices["pc_0_0"].role, DeviceKind::Host);
        assert!(t.neighbours("leaf_0").contains("spine_0"));
        assert!(t.devices["leaf_0"].interfaces.contains("eth1"));
        assert!(t.given_roles.contains("leaf_0") && t.given_roles.contains("pc_0_0"));
        assert_eq!(t.server_kinds["dns_0"], "dns");
        assert_eq!(t.server_kinds.len(), 1);
    }
}
