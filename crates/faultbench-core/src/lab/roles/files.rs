//! Role evidence from a lab directory, before anything is deployed.
//!
//! For each `lab.conf` device it reads: `<dev>.startup` and the device's `exec` options
//! (commands), `sysctl` options, and in the device's file tree `<dev>/`:
//! `etc/frr/daemons` and `etc/quagga/daemons` (routing daemons enabled),
//! `etc/frr/*.conf`, `etc/quagga/*.conf`, `etc/zebra/*.conf` (`router ospf|bgp|rip|…`
//! sections), `etc/bird/bird.conf` / `etc/bird.conf` (`protocol ospf|bgp|rip`),
//! `etc/sysctl.conf` and `etc/sysctl.d/*.conf` (forwarding), `etc/network/interfaces` and
//! `etc/network/interfaces.d/*` (ifupdown stanzas: `address`, `inet dhcp`, `gateway`,
//! `bridge_ports`, `up` commands), and service configurations (`etc/bind/named.conf*`,
//! `etc/dnsmasq.conf`, `etc/dhcp/dhcpd.conf`, `etc/default/isc-dhcp-server`, `var/www/`,
//! `etc/apache2/sites-enabled/`, `etc/nginx/`, `etc/haproxy/haproxy.cfg`).
//!
//! Every file is untrusted: links are not followed (a lab cannot make us read outside it),
//! each file is read up to [`MAX_EVIDENCE_FILE_BYTES`], and a file that cannot be read adds a
//! note naming it instead of failing the whole lab.

use super::shell::{ROUTING_DAEMONS, ScriptFacts, daemon_of_router_statement};
use super::{Clue, Evidence, LabRoles};
use crate::lab::{LabDir, TopologyMeta};
use std::io::Read;
use std::path::Path;

/// Largest file read for evidence; a longer one is read up to here.
pub const MAX_EVIDENCE_FILE_BYTES: u64 = 1 << 20;

/// Most files read from one folder (`etc/frr/`, `etc/sysctl.d/`, …).
const MAX_DIR_ENTRIES: usize = 256;

impl LabRoles {
    /// The roles of a lab's devices from its files, with `meta`'s `[roles]` (rule 1) first.
    ///
    /// ```
    /// use faultbench_core::lab::{LabDir, Role};
    /// use faultbench_core::lab::roles::{LabRoles, RoleRule};
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("lab.conf"), "a[0]=X\nb[0]=X\n").unwrap();
    /// std::fs::write(dir.path().join("a.startup"), "ip addr add 10.0.0.1/24 dev eth0\n").unwrap();
    /// let lab = LabDir::load(dir.path()).unwrap();
    /// let roles = LabRoles::from_lab(&lab, None);
    /// assert_eq!(roles.role("a"), Some(&Role::Host));
    /// assert_eq!(roles.decision("b").unwrap().rule, RoleRule::Name);
    /// ```
    pub fn from_lab(lab: &LabDir, meta: Option<&TopologyMeta>) -> LabRoles {
        let mut notes = Vec::new();
        let evidence: Vec<(String, Evidence)> = lab
            .conf
            .devices
            .iter()
            .map(|d| {
                let mut e = device_evidence(lab, &d.name, &mut notes);
                e.declared = meta.and_then(|m| m.roles.of(&d.name));
                (d.name.clone(), e)
            })
            .collect();
        let mut roles = LabRoles::from_evidence(evidence);
        roles.notes = notes;
        roles
    }

    /// [`LabRoles::from_lab`] with the lab's own `topology.toml` (when it has one).
    pub fn for_lab(lab: &LabDir) -> Result<LabRoles, crate::lab::TopologyMetaError> {
        let meta = TopologyMeta::for_lab(lab)?;
        Ok(LabRoles::from_lab(lab, meta.as_ref()))
    }
}

/// Whether no folder between the lab's root and `path` is a link (a lab must not make us
/// read outside it through `etc -> /etc`).
fn no_links_below(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return false;
    };
    let mut at = root.to_path_buf();
    let mut parts = rel.components().peekable();
    while let Some(c) = parts.next() {
        at.push(c);
        if parts.peek().is_some() && !std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
            return false;
        }
    }
    true
}

/// Where a lab's reachability host set comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostsFrom {
    /// `topology.toml` `[reachability] hosts` (a fixed list).
    Pinned,
    /// The devices whose role is host or server.
    Roles,
}

/// The hosts `get_reachability` pings on a lab, from its files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EndHosts {
    /// The hosts, sorted by name.
    pub hosts: Vec<String>,
    /// Where the list comes from.
    pub from: HostsFrom,
    /// Every device's role from the files (also when the list is pinned).
    pub roles: LabRoles,
}

impl EndHosts {
    /// The pinned list of `topology.toml` when there is one, else the end hosts of the roles.
    ///
    /// ```
    /// use faultbench_core::lab::LabDir;
    /// use faultbench_core::lab::roles::{EndHosts, HostsFrom};
    /// let dir = tempfile::tempdir().unwrap();
    /// std::fs::write(dir.path().join("lab.conf"), "h1[0]=X\nsrv1[0]=X\n").unwrap();
    /// std::fs::write(dir.path().join("h1.startup"), "ip addr add 10.0.0.1/24 dev eth0\n").unwrap();
    /// std::fs::write(dir.path().join("srv1.startup"), "ip addr add 10.0.0.2/24 dev eth0\nnginx\n").unwrap();
    /// let lab = LabDir::load(dir.path()).unwrap();
    /// let e = EndHosts::for_lab(&lab).unwrap();
    /// assert_eq!((e.hosts, e.from), (vec!["h1".to_string(), "srv1".into()], HostsFrom::Roles));
    /// ```
    pub fn for_lab(lab: &LabDir) -> Result<EndHosts, crate::lab::TopologyMetaError> {
        let meta = TopologyMeta::for_lab(lab)?;
        let roles = LabRoles::from_lab(lab, meta.as_ref());
        let pinned = meta.and_then(|m| m.reachability.hosts);
        Ok(match pinned {
            Some(mut hosts) => {
                hosts.sort();
                EndHosts {
                    hosts,
                    from: HostsFrom::Pinned,
                    roles,
                }
            }
            None => EndHosts {
                hosts: roles.end_hosts(),
                from: HostsFrom::Roles,
                roles,
            },
        })
    }
}

/// Reads a file if it is a regular file (not a link), up to the cap, as lossy UTF-8.
/// `Ok(None)`: absent or not a regular file.
fn read_capped(root: &Path, path: &Path) -> std::io::Result<Option<String>> {
    if !no_links_below(root, path) {
        return Ok(None);
    }
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => {}
        Ok(_) => return Ok(None),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_EVIDENCE_FILE_BYTES)
        .read_to_end(&mut bytes)?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

/// A real folder (not a link, not reached through one) inside the lab.
fn is_dir(root: &Path, path: &Path) -> bool {
    no_links_below(root, path) && std::fs::symlink_metadata(path).is_ok_and(|m| m.is_dir())
}

/// Regular files of a folder, sorted, at most [`MAX_DIR_ENTRIES`].
fn files_in(root: &Path, dir: &Path) -> Vec<std::path::PathBuf> {
    if !is_dir(root, dir) {
        return Vec::new();
    }
    let mut v: Vec<_> = std::fs::read_dir(dir)
        .map(|it| {
            it.filter_map(Result::ok)
                .take(MAX_DIR_ENTRIES)
                .map(|e| e.path())
                .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The evidence of one device's files.
fn device_evidence(lab: &LabDir, device: &str, notes: &mut Vec<String>) -> Evidence {
    let mut facts = ScriptFacts::default();
    let mut read = |path: &Path| -> Option<String> {
        read_capped(&lab.root, path).unwrap_or_else(|e| {
            notes.push(format!(
                "{}: cannot read ({e}); its role evidence is ignored — fix the file's permissions",
                path.display()
            ));
            None
        })
    };
    let rel = |path: &Path| -> String {
        path.strip_prefix(&lab.root)
            .unwrap_or(path)
            .display()
            .to_string()
    };
    let conf_device = lab.conf.device(device);
    if let Some(d) = conf_device {
        for v in d.options_named("sysctl") {
            facts.sysctl(v.trim_matches('"'), "lab.conf");
        }
    }
    let startup = lab.root.join(format!("{device}.startup"));
    if let Some(text) = read(&startup) {
        facts.read_script(&text, &rel(&startup));
    }
    if let Some(d) = conf_device {
        for v in d.options_named("exec") {
            facts.read_script(v.trim_matches('"'), &format!("lab.conf {device}[exec]"));
        }
    }
    let tree = lab.root.join(device);
    if !is_dir(&lab.root, &tree) {
        let (e, suites) = facts.finish();
        return with_suites(e, suites, None);
    }
    for f in [tree.join("etc/sysctl.conf")]
        .into_iter()
        .chain(files_in(&lab.root, &tree.join("etc/sysctl.d")))
    {
        if let Some(text) = read(&f) {
            for (i, line) in text.lines().enumerate() {
                let line = line.trim();
                if !line.starts_with('#') {
                    facts.sysctl(&line.replace(' ', ""), &format!("{}:{}", rel(&f), i + 1));
                }
            }
        }
    }
    for f in [tree.join("etc/network/interfaces")]
        .into_iter()
        .chain(files_in(&lab.root, &tree.join("etc/network/interfaces.d")))
    {
        if let Some(text) = read(&f) {
            interfaces_file(&mut facts, &text, &rel(&f));
        }
    }
    let (mut e, suites) = facts.finish();

    // Routing daemons: enabled in a daemons file, or configured in a config file.
    let mut daemons_file: Option<Vec<String>> = None;
    for f in [
        tree.join("etc/frr/daemons"),
        tree.join("etc/quagga/daemons"),
    ] {
        if let Some(text) = read(&f) {
            let enabled = enabled_daemons(&text);
            for d in &enabled {
                if ROUTING_DAEMONS.contains(&d.as_str()) {
                    e.add_routing(Clue::new(format!("{d} enabled"), rel(&f)));
                }
            }
            daemons_file.get_or_insert_with(Vec::new).extend(enabled);
        }
    }
    let configs = ["etc/frr", "etc/quagga", "etc/zebra"]
        .iter()
        .flat_map(|d| files_in(&lab.root, &tree.join(d)))
        .filter(|p| p.extension().is_some_and(|x| x == "conf"));
    for f in configs {
        if let Some(text) = read(&f) {
            for (i, line) in text.lines().enumerate() {
                if let Some(d) = daemon_of_router_statement(line.trim()) {
                    e.add_routing(Clue::new(
                        format!("{d} configured ({})", line.trim()),
                        format!("{}:{}", rel(&f), i + 1),
                    ));
                }
            }
        }
    }
    for f in [tree.join("etc/bird/bird.conf"), tree.join("etc/bird.conf")] {
        let Some(text) = read(&f) else { continue };
        let protocol = text.lines().enumerate().find(|(_, l)| {
            let mut w = l.split_whitespace();
            w.next() == Some("protocol")
                && matches!(w.next(), Some("ospf" | "bgp" | "rip" | "babel"))
        });
        if let Some((i, line)) = protocol {
            e.add_routing(Clue::new(
                format!("bird configured ({})", line.trim()),
                format!("{}:{}", rel(&f), i + 1),
            ));
        }
    }
    services_configured(&mut e, &lab.root, &tree, &rel, &mut read);
    with_suites(e, suites, daemons_file)
}

/// A started FRR/Quagga counts as routing unless the lab's daemons file enables no routing
/// daemon (then it runs zebra/staticd only: static routes, decided by the other rules).
fn with_suites(mut e: Evidence, suites: Vec<Clue>, daemons_file: Option<Vec<String>>) -> Evidence {
    let file_routes = daemons_file
        .as_ref()
        .is_none_or(|d| d.iter().any(|x| ROUTING_DAEMONS.contains(&x.as_str())));
    if file_routes && e.routing.is_empty() {
        for s in suites {
            e.add_routing(s);
        }
    }
    e
}

/// `ospfd=yes` lines of a daemons file.
fn enabled_daemons(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            let v = v.trim().trim_matches('"');
            (v == "yes" || v.starts_with("yes ")).then(|| k.trim().to_string())
        })
        .filter(|k| k.chars().all(|c| c.is_ascii_alphanumeric()))
        .collect()
}

/// ifupdown's `/etc/network/interfaces`: addresses, DHCP, gateways, bridges, hook commands.
fn interfaces_file(facts: &mut ScriptFacts, text: &str, at: &str) {
    let mut iface: Option<(String, String)> = None; // (name, method)
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let at = format!("{at}:{}", i + 1);
        let mut w = line.split_whitespace();
        let Some(key) = w.next() else { continue };
        let rest: Vec<&str> = w.collect();
        match key {
            "iface" => {
                iface = match rest.as_slice() {
                    [name, _family, method, ..] => Some((name.to_string(), method.to_string())),
                    _ => None,
                };
                if let Some((name, "dhcp")) = iface.as_ref().map(|(n, m)| (n.as_str(), m.as_str()))
                    && name != "lo"
                {
                    facts.evidence.addressed.insert(
                        name.to_string(),
                        Clue::new("address by DHCP (ifupdown)", &at),
                    );
                }
            }
            "address" => {
                if let (Some((name, _)), Some(addr)) = (&iface, rest.first())
                    && name != "lo"
                {
                    facts
                        .evidence
                        .addressed
                        .entry(name.clone())
                        .or_insert_with(|| Clue::new(addr.to_string(), &at));
                }
            }
            "gateway" if iface.is_some() => {
                facts.evidence.default_route = Some(Clue::new("default route (gateway)", &at));
            }
            "bridge_ports" | "bridge-ports" => {
                for p in rest.iter().filter(|p| **p != "none") {
                    facts
                        .evidence
                        .bridge_ports
                        .entry(p.to_string())
                        .or_insert_with(|| Clue::new("bridge_ports", &at));
                }
            }
            "up" | "post-up" | "pre-up" => {
                let cmd = line[key.len()..].trim();
                for (_, words) in super::shell::commands(cmd) {
                    facts.command(&words, &at);
                }
            }
            "auto" | "allow-hotplug" | "source" | "source-directory" | "mapping" => iface = None,
            _ => {}
        }
    }
}

/// Service configurations in the device's tree (intent, even before the service starts).
fn services_configured(
    e: &mut Evidence,
    root: &Path,
    tree: &Path,
    rel: &dyn Fn(&Path) -> String,
    read: &mut dyn FnMut(&Path) -> Option<String>,
) {
    let mut add = |kind: &str, what: &str, path: &Path| {
        e.services
            .entry(kind.to_string())
            .or_insert_with(|| Clue::new(what, rel(path)));
    };
    let bind = tree.join("etc/bind");
    if let Some(f) = files_in(root, &bind).into_iter().find(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("named.conf") || n.starts_with("db."))
    }) {
        add("dns", "DNS server configured", &f);
    }
    let dnsmasq = tree.join("etc/dnsmasq.conf");
    if let Some(text) = read(&dnsmasq) {
        let dhcp = text
            .lines()
            .any(|l| l.trim_start().starts_with("dhcp-range"));
        add(
            if dhcp { "dhcp" } else { "dns" },
            "dnsmasq configured",
            &dnsmasq,
        );
    }
    let dhcpd = tree.join("etc/dhcp/dhcpd.conf");
    if read(&dhcpd).is_some_and(|t| t.contains("subnet")) {
        add("dhcp", "DHCP server configured", &dhcpd);
    }
    let default = tree.join("etc/default/isc-dhcp-server");
    if read(&default).is_some_and(|t| {
        t.lines().any(|l| {
            l.trim_start().starts_with("INTERFACES")
                && l.split_once('=')
                    .is_some_and(|(_, v)| !v.trim().trim_matches('"').is_empty())
        })
    }) {
        add("dhcp", "DHCP server configured", &default);
    }
    for (dir, what) in [
        ("var/www", "web content"),
        ("etc/apache2/sites-enabled", "web server configured"),
        ("etc/nginx", "web server configured"),
    ] {
        let d = tree.join(dir);
        if is_dir(root, &d) && std::fs::read_dir(&d).is_ok_and(|mut it| it.next().is_some()) {
            add("web", what, &d);
        }
    }
    let haproxy = tree.join("etc/haproxy/haproxy.cfg");
    if read(&haproxy).is_some() {
        add("load_balancer", "haproxy configured", &haproxy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::Role;
    use crate::lab::roles::RoleRule;

    fn lab(files: &[(&str, &str)]) -> (tempfile::TempDir, LabDir) {
        let dir = tempfile::tempdir().unwrap();
        for (p, text) in files {
            let path = dir.path().join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let lab = LabDir::load(dir.path()).unwrap();
        (dir, lab)
    }

    #[test]
    fn routers_from_daemons_files_configs_and_quagga() {
        let (_d, l) = lab(&[
            ("lab.conf", "a[0]=X\nb[0]=X\nc[0]=X\nd[0]=X\n"),
            ("a/etc/frr/daemons", "zebra=yes\nospfd=yes\nbgpd=no\n"),
            (
                "b/etc/quagga/ripd.conf",
                "hostname b\nrouter rip\n network 10.0.0.0/8\n",
            ),
            ("c/etc/frr/daemons", "zebra=yes\nstaticd=yes\n"),
            (
                "c.startup",
                "ip addr add 10.0.0.3/24 dev eth0\n/etc/init.d/frr start\n",
            ),
            (
                "d.startup",
                "ip addr add 10.0.0.4/24 dev eth0\nsystemctl start frr\n",
            ),
        ]);
        let r = LabRoles::from_lab(&l, None);
        assert_eq!(
            r.decision("a").unwrap().to_string(),
            "router: ospfd enabled (a/etc/frr/daemons)"
        );
        assert_eq!(
            r.decision("b").unwrap().to_string(),
            "router: ripd configured (router rip) (b/etc/quagga/ripd.conf:2)"
        );
        // FRR with static routes only is not a routing protocol: one address makes a host.
        assert_eq!(r.role("c"), Some(&Role::Host));
        // FRR started without a daemons file of the lab's own: the lab means it to route.
        assert_eq!(r.decision("d").unwrap().rule, RoleRule::Routing);
    }

    #[test]
    fn ifupdown_sysctl_and_service_configs() {
        let (_d, l) = lab(&[
            (
                "lab.conf",
                "gw[0]=A\ngw[1]=B\nh[0]=A\nns[0]=B\nmh[0]=A\nmh[1]=B\nmh[sysctl]=\"net.ipv4.ip_forward=0\"\n",
            ),
            (
                "gw/etc/network/interfaces",
                "auto eth0\niface eth0 inet static\n  address 10.0.0.1/24\niface eth1 inet static\n  address 10.0.1.1\n  netmask 255.255.255.0\n",
            ),
            (
                "h/etc/network/interfaces",
                "auto lo\niface lo inet loopback\nauto eth0\niface eth0 inet dhcp\n",
            ),
            ("ns.startup", "ip addr add 10.0.1.53/24 dev eth0\n"),
            ("ns/etc/bind/named.conf", "options {};\n"),
            (
                "mh.startup",
                "ip addr add 10.0.0.9/24 dev eth0\nip addr add 10.0.1.9/24 dev eth1\n",
            ),
        ]);
        let r = LabRoles::from_lab(&l, None);
        assert_eq!(r.role("gw"), Some(&Role::Router));
        assert_eq!(r.role("h"), Some(&Role::Host));
        assert_eq!(r.role("ns"), Some(&Role::Server("dns".into())));
        assert!(
            r.decision("ns")
                .unwrap()
                .because
                .contains("ns/etc/bind/named.conf")
        );
        let mh = r.decision("mh").unwrap();
        assert_eq!(mh.role, Role::Host, "{mh}");
        assert!(mh.because.contains("forwarding off (lab.conf)"), "{mh}");
    }

    #[test]
    fn topology_toml_roles_come_first() {
        let (_d, l) = lab(&[
            ("lab.conf", "r[0]=A\n"),
            ("r/etc/frr/daemons", "ospfd=yes\n"),
            ("topology.toml", "[roles]\nhosts = [\"r\"]\n"),
        ]);
        let r = LabRoles::for_lab(&l).unwrap();
        assert_eq!(r.decision("r").unwrap().rule, RoleRule::Declared);
        assert_eq!(r.end_hosts(), vec!["r"]);
    }

    #[test]
    fn links_are_not_followed_and_odd_files_are_no_evidence() {
        let (d, l) = lab(&[("lab.conf", "a[0]=X\n"), ("a/etc/placeholder", "")]);
        let outside = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(outside.path().join("frr")).unwrap();
        std::fs::write(outside.path().join("frr/daemons"), "ospfd=yes\n").unwrap();
        std::os::unix::fs::symlink(outside.path().join("frr"), d.path().join("a/etc/frr")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.path().join("a.startup")).unwrap();
        let r = LabRoles::from_lab(&l, None);
        assert_eq!(r.decision("a").unwrap().rule, RoleRule::Name, "{r}");
    }
}
