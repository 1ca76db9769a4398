//! `topology.toml`: how faultbench presents a lab directory to people and agents.
//!
//! A lab directory (`lab.conf`, startups, file trees) says what runs; this optional file beside
//! it says what the lab *is*: its display name, where it comes from, which device plays which
//! role, and which summary style agents receive. Without the file a lab is shown in the Kathará
//! style ([`TopologySummary::from_lab_conf`]) under its directory name.
//!
//! ```toml
//! name = "simple_bgp"      # display name (default: the directory name)
//! summary = "nika"         # "kathara" (default) or "nika"
//!
//! [source]                 # all keys optional, free text
//! lab = "NIKA simple_bgp network environment"
//! author = "sands-lab"
//! url = "https://github.com/sands-lab/nika"
//! port = "deployed unchanged by the FaulT-Bench release"
//!
//! [roles]                  # every name must be a lab.conf device; devices left out get
//! routers = ["router1", "router2"]   # their role from evidence (`roles`)
//! switches = []
//! hosts = ["pc1", "pc2"]
//! servers = [{ kind = "dns", devices = ["ns"] }]   # one line per kind, in this order
//!
//! [reachability]           # optional: the hosts `get_reachability` pings, when they must
//! hosts = ["pc1", "pc2"]   # not follow the roles (the release's name-based host sets)
//! ```
//!
//! Roles are not required: a device `[roles]` does not list gets its role from the lab's files
//! ([`super::roles`]), so `summary = "nika"` alone gives a role-grouped summary of any lab.
//!
//! The two summary styles are the two the public release gives its agents. The Kathará style
//! lists each device's interfaces and each collision domain. The NIKA style (the release's
//! summary for the three NIKA network environments) groups devices by role — `Routers (FRR)`,
//! `Switches`, `Hosts`, then one `<Kind> servers` line per server kind — and lists every
//! point-to-point link as `a:ethN <-> b:ethM`, links sorted by collision-domain name and the
//! device declared first in `lab.conf` on the left. Neither style shows addresses or configs.
//!
//! ```
//! use faultbench_core::lab::{LabConf, TopologyMeta, TopologySummary};
//!
//! let conf = LabConf::parse("r1[0]=A\nr1[1]=B\nr2[0]=A\npc1[0]=B\n").unwrap();
//! let meta = TopologyMeta::parse(
//!     "summary = \"nika\"\n[roles]\nrouters = [\"r1\", \"r2\"]\nhosts = [\"pc1\"]\n",
//! ).unwrap();
//! let s = TopologySummary::nika("demo", &conf, &meta.roles).unwrap();
//! assert_eq!(s.text, "Topology: demo\n\nDevices:\n  Routers (FRR): r1, r2\n  Hosts: pc1\n\n\
//!     Links (device:iface <-> device:iface):\n  r1:eth0 <-> r2:eth0\n  r1:eth1 <-> pc1:eth0");
//! ```

use super::{LabConf, LabDir, TopologySummary};
use crate::fsutil::read_regular_string_capped;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The file name looked for beside `lab.conf`.
pub const TOPOLOGY_FILE: &str = "topology.toml";

/// Which summary agents receive.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryStyle {
    /// Devices with `ethN=<domain>`, then collision domains with their members.
    #[default]
    Kathara,
    /// Devices grouped by role, then `a:ethN <-> b:ethM` links.
    Nika,
}

/// The former name of [`TopologySource`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `TopologySource`; the old name goes in the next release")]
pub type SourceInfo = TopologySource;

/// Where a topology comes from (free text, for TOPOLOGY.md-style reports).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologySource {
    /// The lab this one is a port of.
    #[serde(default)]
    pub lab: Option<String>,
    /// Its author(s).
    #[serde(default)]
    pub author: Option<String>,
    /// Where to find it.
    #[serde(default)]
    pub url: Option<String>,
    /// The port this lab follows when the original was adapted by someone else.
    #[serde(default)]
    pub port: Option<String>,
}

/// One kind of server and its devices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerGroup {
    /// The kind, lower case (`dns`, `web`, `dhcp`, `load_balancer`, …).
    pub kind: String,
    /// Its devices.
    pub devices: Vec<String>,
}

/// Device roles, as the NIKA summary shows them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Roles {
    /// Devices running FRR.
    #[serde(default)]
    pub routers: Vec<String>,
    /// Layer-2 devices.
    #[serde(default)]
    pub switches: Vec<String>,
    /// End hosts (user PCs, clients).
    #[serde(default)]
    pub hosts: Vec<String>,
    /// Servers by kind, in display order.
    #[serde(default)]
    pub servers: Vec<ServerGroup>,
}

/// The role of one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Role {
    /// Routes: runs a routing daemon, or forwards between networks.
    Router,
    /// Layer-2 device.
    Switch,
    /// End host.
    Host,
    /// A server of the given kind.
    Server(String),
}

impl Roles {
    /// The role given to `device`, if any.
    pub fn of(&self, device: &str) -> Option<Role> {
        let has = |v: &[String]| v.iter().any(|d| d == device);
        if has(&self.routers) {
            Some(Role::Router)
        } else if has(&self.switches) {
            Some(Role::Switch)
        } else if has(&self.hosts) {
            Some(Role::Host)
        } else {
            self.servers
                .iter()
                .find(|g| has(&g.devices))
                .map(|g| Role::Server(g.kind.clone()))
        }
    }

    fn all_named(&self) -> impl Iterator<Item = &String> {
        self.routers
            .iter()
            .chain(&self.switches)
            .chain(&self.hosts)
            .chain(self.servers.iter().flat_map(|g| &g.devices))
    }

    /// Adds `device` to the list of `role` (a server kind not listed yet goes last).
    pub fn add(&mut self, device: String, role: &Role) {
        match role {
            Role::Router => self.routers.push(device),
            Role::Switch => self.switches.push(device),
            Role::Host => self.hosts.push(device),
            Role::Server(kind) => match self.servers.iter_mut().find(|g| g.kind == *kind) {
                Some(g) => g.devices.push(device),
                None => self.servers.push(ServerGroup {
                    kind: kind.clone(),
                    devices: vec![device],
                }),
            },
        }
    }
}

/// `[reachability]`: a fixed host set for `get_reachability`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReachabilityHosts {
    /// The hosts pinged between, instead of the end hosts the roles give. The shipped ports
    /// of the release's labs use it to keep the release's name-based host sets, so that tool
    /// outputs stay comparable with the release's runs.
    #[serde(default)]
    pub hosts: Option<Vec<String>>,
}

/// The parsed `topology.toml`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopologyMeta {
    /// Display name; the directory name when absent.
    #[serde(default)]
    pub name: Option<String>,
    /// Summary style for agents.
    #[serde(default)]
    pub summary: SummaryStyle,
    /// Provenance.
    #[serde(default)]
    pub source: TopologySource,
    /// Device roles given by hand (the rest come from evidence).
    #[serde(default)]
    pub roles: Roles,
    /// A fixed host set for `get_reachability`.
    #[serde(default)]
    pub reachability: ReachabilityHosts,
}

/// A `topology.toml` that cannot be used, with the file and, where known, the line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}{}: {message}", path.as_deref().map(|p| p.display().to_string()).unwrap_or_else(|| TOPOLOGY_FILE.to_string()), line.map(|l| format!(":{l}")).unwrap_or_default())]
pub struct TopologyMetaError {
    /// The file, when read from disk.
    pub path: Option<PathBuf>,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl TopologyMeta {
    /// Parses `topology.toml` text (syntax and shape only; see `TopologyMeta::check`).
    pub fn parse(text: &str) -> Result<TopologyMeta, TopologyMetaError> {
        toml::from_str(text).map_err(|e| TopologyMetaError {
            path: None,
            line: e.span().map(|s| {
                text.as_bytes()[..s.start.min(text.len())]
                    .iter()
                    .filter(|&&b| b == b'\n')
                    .count()
                    + 1
            }),
            message: e.message().to_string(),
        })
    }

    /// Reads and checks the `topology.toml` of a lab directory; `Ok(None)` when there is none.
    pub fn for_lab(lab: &LabDir) -> Result<Option<TopologyMeta>, TopologyMetaError> {
        let path = lab.root.join(TOPOLOGY_FILE);
        if !path.exists() {
            return Ok(None);
        }
        let at = |line, message| TopologyMetaError {
            path: Some(path.clone()),
            line,
            message,
        };
        let text = read_regular_string_capped(&path, super::MAX_LAB_FILE_BYTES)
            .map_err(|e| at(None, e.reason()))?;
        let meta = TopologyMeta::parse(&text).map_err(|e| at(e.line, e.message))?;
        meta.check(&lab.conf).map_err(|(needle, message)| {
            let line = needle.and_then(|n| line_of(&text, &n));
            at(line, message)
        })?;
        Ok(Some(meta))
    }

    /// Checks the file against the lab: every role and reachability host names a `lab.conf`
    /// device, no device has two roles or is listed twice, and server kinds are unique.
    /// On error: the quoted name to point at (for the line number) and the message.
    fn check(&self, conf: &LabConf) -> Result<(), (Option<String>, String)> {
        if let Some(hosts) = &self.reachability.hosts {
            for (i, h) in hosts.iter().enumerate() {
                if conf.device(h).is_none() {
                    return Err((
                        Some(format!("\"{h}\"")),
                        format!(
                            "[reachability] names `{h}`, which lab.conf does not declare; fix the name or remove it"
                        ),
                    ));
                }
                if hosts[..i].contains(h) {
                    return Err((
                        Some(format!("\"{h}\"")),
                        format!("[reachability] lists `{h}` twice; keep one"),
                    ));
                }
            }
        }
        let mut seen: Vec<&String> = Vec::new();
        for d in self.roles.all_named() {
            if conf.device(d).is_none() {
                return Err((
                    Some(format!("\"{d}\"")),
                    format!(
                        "role names `{d}`, which lab.conf does not declare; fix the name or remove it"
                    ),
                ));
            }
            if seen.contains(&d) {
                return Err((
                    Some(format!("\"{d}\"")),
                    format!("`{d}` has more than one role; keep it in one list"),
                ));
            }
            seen.push(d);
        }
        for (i, g) in self.roles.servers.iter().enumerate() {
            if g.kind.trim().is_empty() || self.roles.servers[..i].iter().any(|h| h.kind == g.kind)
            {
                return Err((
                    Some(format!("\"{}\"", g.kind)),
                    format!(
                        "server kind `{}` is empty or listed twice; use one entry per kind",
                        g.kind
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The `[roles]` lists completed from evidence: devices the file leaves out are added to
    /// the list of the role their files show ([`super::roles::LabRoles`]), new server kinds
    /// after the file's own.
    pub fn complete_roles(&self, lab: &LabDir) -> Roles {
        let mut roles = self.roles.clone();
        if lab.conf.devices.iter().all(|d| roles.of(&d.name).is_some()) {
            return roles;
        }
        let found = super::roles::LabRoles::from_lab(lab, Some(self));
        for d in &lab.conf.devices {
            if self.roles.of(&d.name).is_some() {
                continue;
            }
            if let Some(role) = found.role(&d.name) {
                roles.add(d.name.clone(), role);
            }
        }
        roles
    }
}

fn line_of(text: &str, needle: &str) -> Option<usize> {
    text.lines().position(|l| l.contains(needle)).map(|i| i + 1)
}

/// The name a lab directory is shown under: `topology.toml`'s `name`, else the directory name.
pub fn topology_name(lab: &LabDir, meta: Option<&TopologyMeta>) -> String {
    meta.and_then(|m| m.name.clone()).unwrap_or_else(|| {
        lab.root
            .canonicalize()
            .unwrap_or_else(|_| lab.root.clone())
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| lab.name())
    })
}

/// Python's `str.capitalize`: first character upper case, the rest lower case.
fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f
            .to_uppercase()
            .chain(c.flat_map(char::to_lowercase))
            .collect(),
        None => String::new(),
    }
}

impl TopologySummary {
    /// The NIKA-style summary: role lines (names sorted), then the links, one line per
    /// collision domain sorted by name, members in `lab.conf` order joined by ` <-> `.
    /// Role lists that are empty are left out. Fails when a role names an unknown device.
    pub fn nika(
        topology: &str,
        conf: &LabConf,
        roles: &Roles,
    ) -> Result<TopologySummary, TopologyMetaError> {
        if let Some(d) = roles.all_named().find(|d| conf.device(d).is_none()) {
            return Err(TopologyMetaError {
                path: None,
                line: None,
                message: format!("role names `{d}`, which lab.conf does not declare"),
            });
        }
        let sorted = |v: &[String]| {
            let mut v = v.to_vec();
            v.sort();
            v.join(", ")
        };
        let mut lines = vec![
            format!("Topology: {topology}"),
            String::new(),
            "Devices:".to_string(),
        ];
        for (label, names) in [
            ("Routers (FRR)", &roles.routers),
            ("Switches", &roles.switches),
            ("Hosts", &roles.hosts),
        ] {
            if !names.is_empty() {
                lines.push(format!("  {label}: {}", sorted(names)));
            }
        }
        for g in roles.servers.iter().filter(|g| !g.devices.is_empty()) {
            lines.push(format!(
                "  {} servers: {}",
                capitalize(&g.kind),
                sorted(&g.devices)
            ));
        }
        lines.push(String::new());
        lines.push("Links (device:iface <-> device:iface):".to_string());
        for (_, members) in conf.domains() {
            let ends: Vec<String> = members.iter().map(|(d, i)| format!("{d}:eth{i}")).collect();
            lines.push(format!("  {}", ends.join(" <-> ")));
        }
        Ok(TopologySummary {
            text: lines.join("\n"),
        })
    }

    /// The release's Kathará-style summary computed from `lab.conf` *text* with the release's
    /// own reading rules: a line `dev[N]=cd` counts when it matches
    /// `^dev\[N\]\s*=\s*"?cd"?` (only double quotes are stripped, so `pc0[0]='E'` shows as
    /// `eth0='E'` and a domain `'E'`), any other `dev[...]` line only declares the device.
    /// For ordinary lab files this equals [`TopologySummary::from_lab_conf`].
    ///
    /// ```
    /// use faultbench_core::lab::TopologySummary;
    /// let s = TopologySummary::kathara_from_text("K", "r1[0]=\"A\"\npc0[0]='A'\nsw[image]=x\n");
    /// assert_eq!(s.text, "Topology: K\n\nDevices:\n  pc0: eth0='A'\n  r1: eth0=A\n  \
    ///     sw: (no link assignments in lab.conf)\n\nCollision domains (shared L2 segments):\n  \
    ///     'A': pc0.eth0\n  A: r1.eth0");
    /// ```
    pub fn kathara_from_text(topology: &str, lab_conf: &str) -> TopologySummary {
        use std::collections::{BTreeMap, BTreeSet};
        static IFACE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(r#"^([A-Za-z0-9_]+)\[(\d+)\]\s*=\s*"?([^"\s]+)"?"#).unwrap()
        });
        static DEVICE: std::sync::LazyLock<regex::Regex> =
            std::sync::LazyLock::new(|| regex::Regex::new(r"^([A-Za-z0-9_]+)\[").unwrap());
        let mut devices: BTreeMap<String, Vec<(u64, String)>> = BTreeMap::new();
        let mut domains: BTreeMap<String, Vec<(String, u64)>> = BTreeMap::new();
        let mut seen: BTreeSet<String> = BTreeSet::new();
        for raw in lab_conf.lines() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(c) = IFACE.captures(line) {
                let (dev, cd) = (c[1].to_string(), c[3].to_string());
                let n: u64 = c[2].parse().unwrap_or(u64::MAX);
                devices
                    .entry(dev.clone())
                    .or_default()
                    .push((n, cd.clone()));
                domains.entry(cd).or_default().push((dev.clone(), n));
                seen.insert(dev);
            } else if let Some(c) = DEVICE.captures(line) {
                seen.insert(c[1].to_string());
            }
        }
        let mut lines = vec![
            format!("Topology: {topology}"),
            String::new(),
            "Devices:".to_string(),
        ];
        for dev in &seen {
            match devices.get_mut(dev) {
                Some(ifs) if !ifs.is_empty() => {
                    ifs.sort();
                    let ifs: Vec<String> =
                        ifs.iter().map(|(n, cd)| format!("eth{n}={cd}")).collect();
                    lines.push(format!("  {dev}: {}", ifs.join(", ")));
                }
                _ => lines.push(format!("  {dev}: (no link assignments in lab.conf)")),
            }
        }
        lines.push(String::new());
        lines.push("Collision domains (shared L2 segments):".to_string());
        for (cd, members) in &mut domains {
            members.sort();
            let m: Vec<String> = members.iter().map(|(d, n)| format!("{d}.eth{n}")).collect();
            lines.push(format!("  {cd}: {}", m.join(", ")));
        }
        TopologySummary {
            text: lines.join("\n"),
        }
    }

    /// The summary agents get for a lab directory: the style and name chosen by its
    /// `topology.toml`, or the Kathará style (read with the release's rules,
    /// [`TopologySummary::kathara_from_text`]) under the directory name when there is none.
    pub fn for_lab(lab: &LabDir) -> Result<TopologySummary, TopologyMetaError> {
        let meta = TopologyMeta::for_lab(lab)?;
        let name = topology_name(lab, meta.as_ref());
        match meta {
            Some(m) if m.summary == SummaryStyle::Nika => {
                TopologySummary::nika(&name, &lab.conf, &m.complete_roles(lab)).map_err(|mut e| {
                    e.path = Some(lab.root.join(TOPOLOGY_FILE));
                    e
                })
            }
            _ => {
                let path = lab.root.join("lab.conf");
                // A mock network folder without lab.conf: its lab, as lab.conf would say it.
                if path.symlink_metadata().is_err() && lab.root.join(super::MOCK_FILE).is_file() {
                    let text = super::mock_conf::conf_text(&lab.conf);
                    return Ok(TopologySummary::kathara_from_text(&name, &text));
                }
                let text =
                    read_regular_string_capped(&path, super::MAX_LAB_FILE_BYTES).map_err(|e| {
                        TopologyMetaError {
                            path: Some(path.clone()),
                            line: None,
                            message: e.reason(),
                        }
                    })?;
                Ok(TopologySummary::kathara_from_text(&name, &text))
            }
        }
    }
}

/// Why a lab directory could not be summarized.
#[derive(Debug, thiserror::Error)]
pub enum SummarizeError {
    /// The lab directory could not be read.
    #[error(transparent)]
    Lab(#[from] super::LabError),
    /// Its `topology.toml` is wrong.
    #[error(transparent)]
    Meta(#[from] TopologyMetaError),
}

/// Reads a lab directory and returns its agent summary in one step.
pub fn summarize_dir(dir: impl AsRef<Path>) -> Result<TopologySummary, SummarizeError> {
    let lab = LabDir::load(dir.as_ref())?;
    Ok(TopologySummary::for_lab(&lab)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn conf() -> LabConf {
        LabConf::parse(
            "r1[0]=A\nr1[1]=B\nr2[0]=A\nr2[1]=C\npc1[0]=B\nsw[0]=C\nsw[1]=D\nns[0]=D\nweb1[0]=D\n",
        )
        .unwrap()
    }

    #[test]
    fn nika_summary_groups_roles_and_orders_links_by_domain() {
        let roles = Roles {
            routers: vec!["r2".into(), "r1".into()],
            switches: vec!["sw".into()],
            hosts: vec!["pc1".into()],
            servers: vec![
                ServerGroup {
                    kind: "web".into(),
                    devices: vec!["web1".into()],
                },
                ServerGroup {
                    kind: "dns".into(),
                    devices: vec!["ns".into()],
                },
            ],
        };
        let s = TopologySummary::nika("t", &conf(), &roles).unwrap();
        assert_eq!(
            s.text,
            "Topology: t\n\nDevices:\n  Routers (FRR): r1, r2\n  Switches: sw\n  Hosts: pc1\n  \
             Web servers: web1\n  Dns servers: ns\n\nLinks (device:iface <-> device:iface):\n  \
             r1:eth0 <-> r2:eth0\n  r1:eth1 <-> pc1:eth0\n  r2:eth1 <-> sw:eth0\n  sw:eth1 <-> ns:eth0 <-> web1:eth0"
        );
    }

    #[test]
    fn the_text_reading_matches_the_parsed_one_on_ordinary_files() {
        let text = "LAB_NAME=x\n# c\nr1[0]=A\nr1[1]=\"B\"   # note\nr2[0]=A\nr2[image]=\"kathara/frr\"\npc1[0]=B\n";
        let conf = LabConf::parse(text).unwrap();
        assert_eq!(
            TopologySummary::kathara_from_text("x", text),
            TopologySummary::from_lab_conf("x", &conf)
        );
    }

    #[test]
    fn server_kinds_are_capitalized_like_python() {
        assert_eq!(capitalize("load_balancer"), "Load_balancer");
        assert_eq!(capitalize("DNS"), "Dns");
        assert_eq!(capitalize(""), "");
    }

    #[test]
    fn check_rejects_unknown_devices_double_roles_and_missing_roles() {
        let c = conf();
        let m = TopologyMeta::parse("[roles]\nrouters = [\"r1\", \"r9\"]\n").unwrap();
        assert!(m.check(&c).unwrap_err().1.contains("`r9`"));
        let m = TopologyMeta::parse("[roles]\nrouters = [\"r1\"]\nhosts = [\"r1\"]\n").unwrap();
        assert!(m.check(&c).unwrap_err().1.contains("more than one role"));
        // A NIKA summary no longer needs every role by hand: evidence completes them.
        let m = TopologyMeta::parse("summary = \"nika\"\n[roles]\nrouters = [\"r1\", \"r2\"]\n")
            .unwrap();
        assert!(m.check(&c).is_ok());
        let m = TopologyMeta::parse("[reachability]\nhosts = [\"pc1\", \"pc9\"]\n").unwrap();
        assert!(m.check(&c).unwrap_err().1.contains("`pc9`"));
        let m = TopologyMeta::parse("[reachability]\nhosts = [\"pc1\", \"pc1\"]\n").unwrap();
        assert!(m.check(&c).unwrap_err().1.contains("twice"));
        let m = TopologyMeta::parse(
            "[roles]\nservers = [{ kind = \"dns\", devices = [\"ns\"] }, { kind = \"dns\", devices = [\"web1\"] }]\n",
        )
        .unwrap();
        assert!(m.check(&c).unwrap_err().1.contains("listed twice"));
        // The Kathará style needs no roles at all.
        assert!(
            TopologyMeta::parse("name = \"x\"\n")
                .unwrap()
                .check(&c)
                .is_ok()
        );
    }

    #[test]
    fn a_nika_summary_without_roles_takes_them_from_evidence() {
        let dir = tempfile::tempdir().unwrap();
        let w = |p: &str, t: &str| {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, t).unwrap();
        };
        w(
            "lab.conf",
            "gw[0]=A\ngw[1]=B\nh1[0]=A\nsrv1[0]=B\nodd[0]=B\n",
        );
        w("gw/etc/frr/daemons", "zebra=yes\nospfd=yes\n");
        w("h1.startup", "ip addr add 10.0.0.2/24 dev eth0\n");
        w("srv1.startup", "ip addr add 10.0.1.2/24 dev eth0\nnamed\n");
        // `odd` is given by hand: the file wins over its (absent) evidence.
        w(
            TOPOLOGY_FILE,
            "summary = \"nika\"\n[roles]\nhosts = [\"odd\"]\n",
        );
        let s = summarize_dir(dir.path()).unwrap();
        assert!(
            s.text.contains(
                "Devices:\n  Routers (FRR): gw\n  Hosts: h1, odd\n  Dns servers: srv1\n\n"
            ),
            "{}",
            s.text
        );
    }

    #[test]
    fn parse_errors_carry_a_line_number() {
        let e = TopologyMeta::parse("name = \"x\"\nsummary = \"fancy\"\n").unwrap_err();
        assert_eq!(e.line, Some(2), "{e}");
        let e = TopologyMeta::parse("name = \"x\"\n\nstyle = \"nika\"\n").unwrap_err();
        assert_eq!(e.line, Some(3), "{e}");
        assert!(e.to_string().starts_with("topology.toml:3: "), "{e}");
    }

    #[test]
    fn files_on_disk_point_at_the_offending_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("lab.conf"), "r1[0]=A\npc1[0]=A\n").unwrap();
        std::fs::write(
            dir.path().join(TOPOLOGY_FILE),
            "summary = \"nika\"\n\n[roles]\nrouters = [\"r1\"]\nhosts = [\"pc2\"]\n",
        )
        .unwrap();
        let lab = LabDir::load(dir.path()).unwrap();
        let e = TopologyMeta::for_lab(&lab).unwrap_err();
        assert_eq!(e.line, Some(5), "{e}");
        assert!(
            e.to_string().contains("topology.toml:5: role names `pc2`"),
            "{e}"
        );
        // Without the file the Kathará summary applies, under the directory name.
        std::fs::remove_file(dir.path().join(TOPOLOGY_FILE)).unwrap();
        let s = TopologySummary::for_lab(&lab).unwrap();
        let dirname = dir
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(
            s.text
                .starts_with(&format!("Topology: {dirname}\n\nDevices:\n  pc1: eth0=A")),
            "{}",
            s.text
        );
    }
}
