//! Reading one device's facts from its startup script and file tree.

use super::frr::{FrrReader, RoutingConfig, StaticRoute, valid_iface};
use super::net::{Ipv4Net, mask_len};
use super::{ModelError, Service};
use faultbench_core::lab::LabDir;
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;
use std::path::Path;

/// Largest lab file read.
const MAX_FILE: u64 = 1 << 20;

/// What the files say about one device.
#[derive(Debug, Default)]
pub(super) struct Facts {
    pub addrs: BTreeMap<String, Vec<Ipv4Net>>,
    pub default_gw: Option<Ipv4Addr>,
    pub daemons: BTreeSet<String>,
    pub routing: RoutingConfig,
    pub routing_from: Vec<String>,
    pub has_frr_conf: bool,
    pub services: Vec<Service>,
    pub startup_vtysh: Option<Vec<String>>,
    /// Bridge ports: port → bridge (`brctl addif br0 eth1`, `ip link set eth1 master br0`).
    pub bridge_of: BTreeMap<String, String>,
    /// VLAN sub-interfaces: name → parent (`ip link add link br0 name vlan10 type vlan id 10`).
    pub vlan_parent: BTreeMap<String, String>,
    /// VRRP virtual addresses this device is the master of.
    pub virtual_gateways: BTreeSet<Ipv4Addr>,
    /// The files read, for gap messages.
    pub read: String,
}

const ROUTING_DAEMONS: [&str; 3] = ["ospfd", "bgpd", "ripd"];

/// Reads `root/rel` when it exists: a regular file, no link on the way, at most [`MAX_FILE`].
fn read_opt(root: &Path, rel: &str) -> Result<Option<String>, ModelError> {
    let path = root.join(rel);
    let mut at = root.to_path_buf();
    for part in Path::new(rel).components() {
        at.push(part);
        match std::fs::symlink_metadata(&at) {
            Err(_) => return Ok(None),
            Ok(m) if m.file_type().is_symlink() => {
                return Err(ModelError {
                    file: at.clone(),
                    what: "is a symbolic link (a lab must not point outside itself)".into(),
                    fix: "replace the link with the file it points to".into(),
                });
            }
            Ok(_) => {}
        }
    }
    faultbench_core::fsutil::read_regular_string_capped(&path, MAX_FILE)
        .map(Some)
        .map_err(|e| ModelError {
            file: path,
            what: e.reason(),
            fix: "make it a readable UTF-8 text file of at most 1 MiB".into(),
        })
}

pub(super) fn device_facts(lab: &LabDir, name: &str) -> Result<Facts, ModelError> {
    let root = &lab.root;
    let mut f = Facts::default();
    let mut read = Vec::new();
    let startup_rel = format!("{name}.startup");
    let startup = read_opt(root, &startup_rel)?;
    if startup.is_some() {
        read.push(startup_rel.clone());
    }
    for rel in [
        format!("{name}/etc/frr/daemons"),
        format!("{name}/etc/quagga/daemons"),
    ] {
        if let Some(text) = read_opt(root, &rel)? {
            read.push(rel.clone());
            for line in text.lines() {
                if let Some((k, v)) = line.trim().split_once('=')
                    && ROUTING_DAEMONS.contains(&k.trim())
                    && v.trim().trim_matches('"') == "yes"
                {
                    f.daemons.insert(k.trim().to_string());
                }
            }
        }
    }
    let frr_conf = format!("{name}/etc/frr/frr.conf");
    let mut config_files = vec![frr_conf.clone()];
    for d in ["zebra", "ospfd", "bgpd", "ripd", "staticd"] {
        config_files.push(format!("{name}/etc/quagga/{d}.conf"));
        config_files.push(format!("{name}/etc/frr/{d}.conf"));
    }
    for rel in &config_files {
        if let Some(text) = read_opt(root, rel)? {
            read.push(rel.clone());
            f.has_frr_conf |= *rel == frr_conf;
            FrrReader::new(&mut f.routing).read_text(&text);
            f.routing_from.push(rel.clone());
        }
    }
    if let Some(text) = &startup {
        read_startup(text, &startup_rel, &mut f);
    }
    let keepalived = format!("{name}/etc/keepalived/keepalived.conf");
    if let Some(text) = read_opt(root, &keepalived)? {
        read.push(keepalived);
        for inst in super::vrrp::parse_keepalived(&text) {
            if !valid_iface(&inst.iface) {
                continue;
            }
            let own = f.addrs.get(&inst.iface).cloned().unwrap_or_default();
            let vips = super::vrrp::master_addresses(&inst, &own);
            if !vips.is_empty() {
                f.virtual_gateways.extend(vips.iter().map(|n| n.addr));
                f.addrs.entry(inst.iface.clone()).or_default().extend(vips);
            }
        }
    }
    for r in ["ospfd", "bgpd", "ripd"] {
        let configured = match r {
            "ospfd" => f.routing.ospf.is_some(),
            "bgpd" => f.routing.bgp.is_some(),
            _ => f.routing.rip.is_some(),
        };
        // A configured protocol whose daemon file we could not read still runs its daemon.
        if configured {
            f.daemons.insert(r.to_string());
        }
    }
    f.read = if read.is_empty() {
        format!("no {startup_rel} and no file tree")
    } else {
        read.join(", ")
    };
    Ok(f)
}

fn read_startup(text: &str, rel: &str, f: &mut Facts) {
    let mut vtysh_used = false;
    let mut statements: Vec<String> = Vec::new();
    let mut all_plain = true;
    for (_, w) in super::shell::commands_unrolled(text) {
        let w: Vec<&str> = w.iter().map(String::as_str).collect();
        let w = strip_prefix_words(&w);
        match w {
            ["ip", "addr" | "address" | "a", "add", a, "dev", dev, ..]
            | ["ip", "addr" | "address" | "a", "add", "dev", dev, a, ..] => {
                if let (Ok(net), true) = (a.parse::<Ipv4Net>(), valid_iface(dev)) {
                    f.addrs.entry((*dev).to_string()).or_default().push(net);
                }
            }
            ["ifconfig", dev, a, rest @ ..] if valid_iface(dev) => {
                let net = if a.contains('/') {
                    a.parse().ok()
                } else {
                    let mask = rest
                        .windows(2)
                        .find(|p| p[0] == "netmask")
                        .and_then(|p| p[1].parse::<Ipv4Addr>().ok())
                        .and_then(mask_len)
                        .unwrap_or(24);
                    a.parse().ok().and_then(|a| Ipv4Net::new(a, mask))
                };
                if let Some(net) = net {
                    f.addrs.entry((*dev).to_string()).or_default().push(net);
                }
            }
            [
                "ip",
                "route" | "r",
                "add" | "replace",
                "default",
                "via",
                gw,
                ..,
            ]
            | ["route", "add", "default", "gw", gw, ..] => {
                if let Ok(gw) = gw.parse() {
                    f.default_gw = Some(gw);
                }
            }
            ["ip", "route" | "r", "add", dst, "via", gw, ..] => {
                if let (Ok(prefix), Ok(_)) = (dst.parse::<Ipv4Net>(), gw.parse::<Ipv4Addr>()) {
                    f.routing.static_routes.push(StaticRoute {
                        prefix,
                        via: (*gw).to_string(),
                    });
                }
            }
            [
                "ip",
                "link",
                "add",
                "link",
                parent,
                "name",
                name,
                "type",
                "vlan",
                ..,
            ]
            | [
                "ip",
                "link",
                "add",
                "name",
                name,
                "link",
                parent,
                "type",
                "vlan",
                ..,
            ] if valid_iface(parent) && valid_iface(name) => {
                f.vlan_parent
                    .insert((*name).to_string(), (*parent).to_string());
            }
            ["brctl", "addif", br, port] if valid_iface(br) && valid_iface(port) => {
                f.bridge_of.insert((*port).to_string(), (*br).to_string());
            }
            ["ip", "link", "set", "dev", port, "master", br, ..]
            | ["ip", "link", "set", port, "master", br, ..]
                if valid_iface(br) && valid_iface(port) =>
            {
                f.bridge_of.insert((*port).to_string(), (*br).to_string());
            }
            ["vtysh", args @ ..] => {
                let mut reader = FrrReader::new(&mut f.routing);
                let mut it = args.iter();
                while let Some(a) = it.next() {
                    if *a == "-c"
                        && let Some(stmt) = it.next()
                    {
                        reader.statement(stmt);
                        vtysh_used = true;
                        let plain = stmt.len() <= 200
                            && stmt.chars().all(|c| {
                                c.is_ascii_alphanumeric()
                                    || matches!(c, ' ' | '.' | '_' | '/' | ':' | '-')
                            });
                        all_plain &= plain;
                        let s = stmt.trim();
                        if !matches!(
                            s,
                            "configure terminal" | "conf t" | "end" | "write" | "write memory"
                        ) {
                            statements.push(s.to_string());
                        }
                    }
                }
            }
            _ => {
                if let Some(s) = service_of(w)
                    && !f.services.iter().any(|x| x.program == s.program)
                {
                    f.services.push(s);
                }
            }
        }
    }
    if vtysh_used {
        f.routing_from.push(rel.to_string());
        f.startup_vtysh = (all_plain && !statements.is_empty()).then_some(statements);
    }
}

/// Drops `sudo`, `nohup`, `exec` in front of a command.
fn strip_prefix_words<'a, 'b>(w: &'a [&'b str]) -> &'a [&'b str] {
    match w {
        ["sudo" | "nohup" | "exec", rest @ ..] => strip_prefix_words(rest),
        _ => w,
    }
}

/// Known services: (program, kind, port, proto, process name).
const SERVICES: [(&str, &str, u16, &str, &str); 7] = [
    ("apache2", "web", 80, "tcp", "apache2"),
    ("nginx", "web", 80, "tcp", "nginx"),
    ("lighttpd", "web", 80, "tcp", "lighttpd"),
    ("named", "dns", 53, "udp", "named"),
    ("bind9", "dns", 53, "udp", "named"),
    ("dnsmasq", "dns", 53, "udp", "dnsmasq"),
    ("isc-dhcp-server", "dhcp", 67, "udp", "dhcpd"),
];

/// A service started by a startup command, with fixed stop/start commands built from the
/// program's known name (never from the script's words).
fn service_of(w: &[&str]) -> Option<Service> {
    let (program, start) = match w {
        ["service", p, "start"] => (*p, format!("service {p} start")),
        ["systemctl", "start", p] => (*p, format!("systemctl start {p}")),
        [
            "/etc/init.d/apache2"
            | "/etc/init.d/nginx"
            | "/etc/init.d/named"
            | "/etc/init.d/bind9"
            | "/etc/init.d/dnsmasq"
            | "/etc/init.d/isc-dhcp-server",
            "start",
        ] => {
            let p = w[0].trim_start_matches("/etc/init.d/");
            (p, format!("/etc/init.d/{p} start"))
        }
        ["named", "-c", "/etc/bind/named.conf", ..] => {
            ("named", "named -c /etc/bind/named.conf".to_string())
        }
        ["named"] => ("named", "named".to_string()),
        _ => return None,
    };
    let (prog, kind, port, proto, process) = SERVICES.iter().find(|s| s.0 == program)?;
    Some(Service {
        kind: (*kind).into(),
        program: (*prog).into(),
        port: *port,
        proto: (*proto).into(),
        stop: if start.starts_with("named") {
            format!("pkill -x {process}")
        } else {
            start.replacen("start", "stop", 1)
        },
        start,
        process: (*process).into(),
    })
}
