//! Reading startup scripts for role evidence: split a shell script into simple commands and
//! recognise the few that bear on a device's role (addresses, default routes, forwarding,
//! routing daemons, services, bridges).
//!
//! This is not a shell: loops are not run and variables are not expanded. A command inside a
//! `for` loop counts once, with its words as written (`ip link set $port master br0` is one
//! bridge port named `$port`), which is all a role needs.

use super::{Clue, Evidence};
use std::net::IpAddr;

/// Routing daemons (FRR, Quagga, BIRD, GoBGP, ExaBGP): starting or running one makes a router.
pub(crate) const ROUTING_DAEMONS: [&str; 15] = [
    "bgpd", "ospfd", "ospf6d", "ripd", "ripngd", "isisd", "eigrpd", "babeld", "fabricd", "ldpd",
    "pimd", "bird", "bird6", "gobgpd", "exabgp",
];

/// Programs (and init scripts / units) that provide a service, with its kind.
pub(crate) const SERVICE_PROGRAMS: [(&str, &str); 18] = [
    ("named", "dns"),
    ("bind", "dns"),
    ("bind9", "dns"),
    ("unbound", "dns"),
    ("nsd", "dns"),
    ("dnsmasq", "dns"),
    ("dhcpd", "dhcp"),
    ("isc-dhcp-server", "dhcp"),
    ("udhcpd", "dhcp"),
    ("kea-dhcp4", "dhcp"),
    ("apache2", "web"),
    ("apache2ctl", "web"),
    ("httpd", "web"),
    ("nginx", "web"),
    ("lighttpd", "web"),
    ("haproxy", "load_balancer"),
    ("influxd", "influxdb"),
    ("vsftpd", "ftp"),
];

/// `router <proto>` in an FRR/Quagga configuration → the daemon that runs it.
pub(crate) fn daemon_of_router_statement(line: &str) -> Option<&'static str> {
    let mut w = line.split_whitespace();
    if w.next() != Some("router") {
        return None;
    }
    Some(match w.next()? {
        "ospf" => "ospfd",
        "ospf6" => "ospf6d",
        "bgp" => "bgpd",
        "rip" => "ripd",
        "ripng" => "ripngd",
        "isis" => "isisd",
        "eigrp" => "eigrpd",
        "babel" => "babeld",
        "openfabric" => "fabricd",
        _ => return None,
    })
}

/// What one script tells: the evidence, plus the routing suites it starts (`frr`, `quagga`),
/// which count only if the lab's daemons file (or its absence) lets them run a routing daemon.
#[derive(Debug, Default)]
pub(crate) struct ScriptFacts {
    pub evidence: Evidence,
    /// `frr` / `quagga` started, with where.
    pub suites: Vec<Clue>,
    /// Bridges and bonds created (to tell a bridge port from a bond member).
    pub bonds: Vec<String>,
    /// Interfaces created as dummies (loopback-like, not counted as addressed).
    pub dummies: Vec<String>,
}

/// Splits a script into simple commands: (1-based line, words). Comments are dropped,
/// `\`-continued lines joined, quotes removed, and the words split at `;`, `&&`, `||`, `|`,
/// `&`, parentheses and braces outside quotes.
pub(crate) fn commands(script: &str) -> Vec<(usize, Vec<String>)> {
    let mut out = Vec::new();
    let mut pending = String::new();
    let mut start = 0;
    for (i, line) in script.lines().enumerate() {
        if pending.is_empty() {
            start = i + 1;
        }
        if let Some(body) = line.strip_suffix('\\') {
            pending.push_str(body);
            pending.push(' ');
            continue;
        }
        pending.push_str(line);
        for cmd in split_line(&pending) {
            out.push((start, cmd));
        }
        pending.clear();
    }
    if !pending.is_empty() {
        for cmd in split_line(&pending) {
            out.push((start, cmd));
        }
    }
    out
}

fn split_line(line: &str) -> Vec<Vec<String>> {
    let mut cmds: Vec<Vec<String>> = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut quote: Option<char> = None;
    let mut chars = line.chars().peekable();
    let end_word = |word: &mut String, words: &mut Vec<String>, in_word: &mut bool| {
        if *in_word {
            words.push(std::mem::take(word));
            *in_word = false;
        }
    };
    while let Some(c) = chars.next() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            } else {
                word.push(c);
            }
            continue;
        }
        match c {
            '\'' | '"' => {
                quote = Some(c);
                in_word = true;
            }
            '#' if !in_word => break,
            ';' | '&' | '|' | '(' | ')' | '{' | '}' | '`' => {
                // `$(…)` and `${…}` stay part of the word they sit in.
                if matches!(c, '(' | '{') && word.ends_with('$') {
                    word.push(c);
                    continue;
                }
                end_word(&mut word, &mut words, &mut in_word);
                if !words.is_empty() {
                    cmds.push(std::mem::take(&mut words));
                }
            }
            '>' | '<' => {
                end_word(&mut word, &mut words, &mut in_word);
                // Redirections become their own word (`>`), the target the next word.
                let mut op = c.to_string();
                if chars.peek() == Some(&c) {
                    op.push(c);
                    chars.next();
                }
                words.push(op);
            }
            c if c.is_whitespace() => end_word(&mut word, &mut words, &mut in_word),
            _ => {
                word.push(c);
                in_word = true;
            }
        }
    }
    end_word(&mut word, &mut words, &mut in_word);
    if !words.is_empty() {
        cmds.push(words);
    }
    cmds
}

/// Drops what precedes the program: shell keywords, `sudo`, `nohup`, `exec`, `env`,
/// variable assignments, and `busybox` (in `busybox httpd` the applet is the program).
fn program_words(words: &[String]) -> &[String] {
    let mut i = 0;
    while i < words.len() {
        let w = words[i].as_str();
        let assignment = w.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if matches!(
            w,
            "do" | "then"
                | "else"
                | "elif"
                | "if"
                | "while"
                | "until"
                | "!"
                | "sudo"
                | "nohup"
                | "exec"
                | "env"
                | "time"
                | "command"
                | "timeout"
                | "busybox"
        ) || assignment
        {
            i += 1;
            // `timeout 10 cmd`: skip the duration too.
            if w == "timeout"
                && words
                    .get(i)
                    .is_some_and(|d| d.starts_with(|c: char| c.is_ascii_digit()))
            {
                i += 1;
            }
        } else {
            break;
        }
    }
    &words[i..]
}

fn basename(w: &str) -> &str {
    w.rsplit('/').next().unwrap_or(w)
}

/// `ip` object abbreviations, as iproute2 matches them (a prefix of the full word).
fn abbreviates(word: &str, full: &str, min: usize) -> bool {
    word.len() >= min && full.starts_with(word)
}

/// An address word (`10.0.0.1/24`, `10.0.0.1`, `2001:db8::1/64`), not the unspecified one.
fn is_address(w: &str) -> bool {
    let ip = w.split('/').next().unwrap_or("");
    ip.parse::<IpAddr>().is_ok_and(|a| !a.is_unspecified())
}

/// The base interface of an alias (`eth0:1` → `eth0`).
fn iface_name(w: &str) -> String {
    w.split(':').next().unwrap_or(w).to_string()
}

impl ScriptFacts {
    /// Reads every command of a script; `at` names the file (`h1.startup`), lines are added.
    pub fn read_script(&mut self, script: &str, at: &str) {
        for (line, words) in commands(script) {
            self.command(&words, &format!("{at}:{line}"));
        }
    }

    /// Reads one command.
    pub fn command(&mut self, words: &[String], at: &str) {
        let w = program_words(words);
        let Some(first) = w.first() else { return };
        let prog = basename(first);
        let args = &w[1..];
        if first.contains("/init.d/") || first.starts_with("/etc/rc") {
            if let Some(verb) = args.first() {
                self.started(prog, verb, at);
            }
            return;
        }
        match prog {
            "ip" => self.ip(args, at),
            "ifconfig" => self.ifconfig(args, at),
            "route" => {
                let default = args
                    .iter()
                    .any(|a| matches!(a.as_str(), "default" | "0.0.0.0" | "0.0.0.0/0"));
                if args.first().is_some_and(|a| a == "add") && default {
                    self.evidence.default_route = Some(Clue::new("default route", at));
                }
            }
            "sysctl" => {
                for a in args {
                    self.sysctl(a, at);
                }
            }
            "echo" | "printf" => self.proc_write(args, at),
            "brctl" if args.first().is_some_and(|a| a == "addif") => {
                let bridge = args.get(1).map_or("", String::as_str);
                for p in args.iter().skip(2) {
                    self.port(p, &format!("brctl addif {bridge}"), at);
                }
            }
            "ovs-vsctl" => {
                if let Some(p) = args
                    .iter()
                    .position(|a| a == "add-port")
                    .and_then(|i| args.get(i + 2))
                {
                    self.port(p, "ovs-vsctl add-port", at);
                }
            }
            "dhclient" | "dhcpcd" | "udhcpc" => {
                let iface = dhcp_client_iface(prog, args);
                self.address(&iface, &format!("address by DHCP ({prog})"), at);
            }
            "vtysh" => {
                for a in args {
                    if let Some(d) = daemon_of_router_statement(a.trim()) {
                        self.evidence.add_routing(Clue::new(
                            format!("{d} configured (vtysh \"{}\")", a.trim()),
                            at,
                        ));
                    }
                }
            }
            "service" | "invoke-rc.d" => {
                if let (Some(name), Some(verb)) = (args.first(), args.get(1)) {
                    self.started(name, verb, at);
                }
            }
            "systemctl" => {
                if let Some(verb) = args.iter().find(|a| !a.starts_with('-')) {
                    for unit in args.iter().skip_while(|a| *a != verb).skip(1) {
                        if !unit.starts_with('-') {
                            self.started(unit.trim_end_matches(".service"), verb, at);
                        }
                    }
                }
            }
            "python" | "python2" | "python3" => {
                let module = args
                    .iter()
                    .position(|a| a == "-m")
                    .and_then(|i| args.get(i + 1))
                    .map(String::as_str);
                if let Some(m @ ("http.server" | "SimpleHTTPServer")) = module {
                    self.service("web", &format!("runs python -m {m}"), at);
                }
            }
            "php" if args.iter().any(|a| a == "-S") => self.service("web", "runs php -S", at),
            _ => self.program(prog, args, at),
        }
    }

    /// A daemon run directly (`named -c …`, `/usr/lib/frr/ospfd -d`, `dnsmasq`).
    fn program(&mut self, prog: &str, args: &[String], at: &str) {
        // `ospfd -h`, `named -v` and the like only print.
        if args
            .iter()
            .any(|a| matches!(a.as_str(), "-h" | "--help" | "-v" | "-V" | "--version"))
        {
            return;
        }
        if ROUTING_DAEMONS.contains(&prog) {
            self.evidence
                .add_routing(Clue::new(format!("starts {prog}"), at));
        } else if matches!(prog, "frrinit.sh" | "watchfrr") {
            self.suites.push(Clue::new("starts FRR", at));
        } else if let Some((_, kind)) = SERVICE_PROGRAMS.iter().find(|(p, _)| *p == prog) {
            self.service(kind, &format!("runs {prog}"), at);
        }
    }

    /// An init script, `service` or `systemctl` action on `name`.
    fn started(&mut self, name: &str, verb: &str, at: &str) {
        if !matches!(
            verb,
            "start" | "restart" | "reload" | "force-reload" | "enable"
        ) {
            return;
        }
        match name {
            "frr" | "quagga" | "zebra" => self.suites.push(Clue::new(format!("starts {name}"), at)),
            n if ROUTING_DAEMONS.contains(&n) => {
                self.evidence
                    .add_routing(Clue::new(format!("starts {n}"), at));
            }
            n => {
                if let Some((_, kind)) = SERVICE_PROGRAMS.iter().find(|(p, _)| *p == n) {
                    self.service(kind, &format!("starts {n}"), at);
                }
            }
        }
    }

    fn service(&mut self, kind: &str, what: &str, at: &str) {
        self.evidence
            .services
            .entry(kind.to_string())
            .or_insert_with(|| Clue::new(what, at));
    }

    fn port(&mut self, port: &str, how: &str, at: &str) {
        self.evidence
            .bridge_ports
            .entry(port.to_string())
            .or_insert_with(|| Clue::new(how, at));
    }

    fn address(&mut self, iface: &str, addr: &str, at: &str) {
        let iface = iface_name(iface);
        if iface == "lo" || iface.is_empty() {
            return;
        }
        self.evidence
            .addressed
            .entry(iface)
            .or_insert_with(|| Clue::new(addr.to_string(), at));
    }

    /// `net.ipv4.ip_forward=1` (and `net.ipv4.conf.all.forwarding`).
    pub fn sysctl(&mut self, kv: &str, at: &str) {
        let Some((k, v)) = kv.split_once('=') else {
            return;
        };
        let k = k.trim().replace('/', ".");
        if matches!(
            k.as_str(),
            "net.ipv4.ip_forward" | "net.ipv4.conf.all.forwarding"
        ) {
            let on = v.trim() != "0";
            self.evidence.forwarding = Some((on, Clue::new(format!("{k}={}", v.trim()), at)));
        }
    }

    /// `echo 1 > /proc/sys/net/ipv4/ip_forward`.
    fn proc_write(&mut self, args: &[String], at: &str) {
        let Some(gt) = args.iter().position(|a| a == ">" || a == ">>") else {
            return;
        };
        let Some(target) = args.get(gt + 1) else {
            return;
        };
        if let Some(key) = target.strip_prefix("/proc/sys/") {
            let value = args[..gt]
                .iter()
                .rfind(|a| !a.starts_with('-'))
                .map_or("", String::as_str);
            self.sysctl(&format!("{key}={value}"), at);
        }
    }

    fn ifconfig(&mut self, args: &[String], at: &str) {
        let Some(iface) = args.first().filter(|a| !a.starts_with('-')) else {
            return;
        };
        let addr = args
            .get(1..)
            .unwrap_or(&[])
            .iter()
            .find(|a| !matches!(a.as_str(), "inet" | "inet6" | "add"))
            .filter(|a| is_address(a));
        if let Some(addr) = addr {
            self.address(iface, addr, at);
        }
    }

    /// `ip [options] addr|route|link …`.
    fn ip(&mut self, args: &[String], at: &str) {
        let mut i = 0;
        while i < args.len() && args[i].starts_with('-') {
            // Options that take a value.
            if matches!(
                args[i].as_str(),
                "-n" | "-netns" | "-f" | "-family" | "-b" | "-batch" | "-rc" | "-l" | "-loops"
            ) {
                i += 1;
            }
            i += 1;
        }
        let Some(obj) = args.get(i) else { return };
        let rest = &args[i + 1..];
        let verb = rest.first().map_or("", String::as_str);
        let adds =
            abbreviates(verb, "add", 1) || abbreviates(verb, "replace", 3) || verb == "change";
        let value_after = |key: &str| {
            rest.iter()
                .position(|w| w == key)
                .and_then(|p| rest.get(p + 1))
        };
        if abbreviates(obj, "address", 1) {
            if !adds {
                return;
            }
            let addr = rest.get(1..).unwrap_or(&[]).iter().find(|w| is_address(w));
            if let (Some(addr), Some(dev)) = (addr, value_after("dev")) {
                self.address(dev, addr, at);
            }
        } else if abbreviates(obj, "route", 1) {
            let dest = rest.get(1).map_or("", String::as_str);
            if adds && matches!(dest, "default" | "0.0.0.0/0" | "::/0" | "0/0") {
                self.evidence.default_route = Some(Clue::new("default route", at));
            }
        } else if abbreviates(obj, "link", 1) {
            if abbreviates(verb, "add", 1) {
                let kind = value_after("type").map_or("", String::as_str);
                let name = value_after("name").or_else(|| {
                    rest.get(1..)
                        .unwrap_or(&[])
                        .iter()
                        .find(|w| !matches!(w.as_str(), "link" | "dev") && !w.starts_with('-'))
                });
                if let Some(n) = name {
                    match kind {
                        "bond" => self.bonds.push(n.clone()),
                        "dummy" => self.dummies.push(n.clone()),
                        _ => {}
                    }
                }
            } else if verb == "set"
                && let Some(master) = value_after("master")
            {
                let dev = match rest.get(1).map(String::as_str) {
                    Some("dev") => rest.get(2),
                    _ => rest.get(1),
                };
                // A bond's members are not bridge ports (the bond is).
                if let Some(dev) = dev
                    && !self.bonds.contains(master)
                {
                    self.port(dev, &format!("master {master}"), at);
                }
            }
        }
    }

    /// Loopback-like and bond-member interfaces are not addressed interfaces of their own;
    /// bond members are not bridge ports (the bond is).
    pub fn finish(mut self) -> (Evidence, Vec<Clue>) {
        for d in &self.dummies {
            self.evidence.addressed.remove(d);
        }
        (self.evidence, self.suites)
    }
}

/// The interface a DHCP client runs on (`dhclient -v eth0`, `udhcpc -i eth0`); `eth0` when the
/// command does not say.
fn dhcp_client_iface(prog: &str, args: &[String]) -> String {
    if prog == "udhcpc"
        && let Some(v) = args
            .iter()
            .position(|a| a == "-i")
            .and_then(|i| args.get(i + 1))
    {
        return v.clone();
    }
    args.iter()
        .rev()
        .find(|a| {
            !a.starts_with('-')
                && a.chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '@'))
        })
        .cloned()
        .unwrap_or_else(|| "eth0".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(script: &str) -> (Evidence, Vec<Clue>) {
        let mut f = ScriptFacts::default();
        f.read_script(script, "d.startup");
        f.finish()
    }

    #[test]
    fn splits_commands_like_a_shell_would_for_our_purpose() {
        let c = commands(
            "ip a add 10.0.0.1/24 dev eth0 # note\nfor i in 1 2; do ip link set eth$i master br0; done\nvtysh -c \"conf t\" \\\n  -c 'router ospf'\necho 1 > /proc/sys/net/ipv4/ip_forward && ip r a default via 10.0.0.254\n",
        );
        let words: Vec<String> = c
            .iter()
            .map(|(l, w)| format!("{l}:{}", w.join(" ")))
            .collect();
        assert_eq!(
            words,
            [
                "1:ip a add 10.0.0.1/24 dev eth0",
                "2:for i in 1 2",
                "2:do ip link set eth$i master br0",
                "2:done",
                "3:vtysh -c conf t -c router ospf",
                "5:echo 1 > /proc/sys/net/ipv4/ip_forward",
                "5:ip r a default via 10.0.0.254",
            ]
        );
    }

    #[test]
    fn host_router_switch_and_server_commands() {
        let (e, _) = read(
            "ip link set dev eth0 up\nip address add 10.0.0.5/24 dev eth0\nip route add default via 10.0.0.1\n",
        );
        assert_eq!(e.addressed.keys().collect::<Vec<_>>(), ["eth0"]);
        assert_eq!(e.addressed["eth0"].at, "d.startup:2");
        assert_eq!(e.default_route.as_ref().unwrap().at, "d.startup:3");

        let (e, suites) = read(
            "ifconfig eth0 10.0.0.1 netmask 255.255.255.0 up\nifconfig eth1:0 10.0.1.1/24\nifconfig eth2 up\nsysctl -w net.ipv4.ip_forward=1\n/etc/init.d/frr start\n",
        );
        assert_eq!(e.addressed.keys().collect::<Vec<_>>(), ["eth0", "eth1"]);
        assert_eq!(e.forwarding.as_ref().map(|f| f.0), Some(true));
        assert_eq!(suites.len(), 1);

        let (e, _) = read(
            "echo 0 > /proc/sys/net/ipv4/ip_forward\nroute add default gw 10.0.0.1\ndhclient -v eth1\n",
        );
        assert_eq!(e.forwarding.as_ref().map(|f| f.0), Some(false));
        assert!(e.default_route.is_some());
        assert!(e.addressed["eth1"].what.contains("DHCP"));

        let (e, _) = read(
            "brctl addbr br0\nbrctl addif br0 eth0 eth1\nip link add bond0 type bond\nip link set eth2 master bond0\nip link set dev bond0 master br0\n",
        );
        assert_eq!(
            e.bridge_ports.keys().collect::<Vec<_>>(),
            ["bond0", "eth0", "eth1"]
        );

        let (e, _) = read("mkdir -p /run/named\nnamed -c /etc/bind/named.conf\n");
        assert_eq!(e.services["dns"].what, "runs named");
        let (e, _) = read("cd /srv && nohup python3 -m http.server 80 &\n");
        assert!(e.services.contains_key("web"));
        let (e, _) = read("service apache2 start\nsystemctl restart isc-dhcp-server.service\n");
        assert_eq!(e.services.keys().collect::<Vec<_>>(), ["dhcp", "web"]);
        let (e, _) = read("/usr/lib/frr/ospfd -d -A 127.0.0.1\n/etc/init.d/bind9 stop\n");
        assert_eq!(e.routing.len(), 1);
        assert!(e.services.is_empty(), "stopping bind is no evidence of DNS");
        let (e, _) = read(
            "vtysh -c 'configure terminal' -c 'router bgp 65001' -c 'neighbor 10.0.0.2 remote-as 65002'\n",
        );
        assert!(
            e.routing[0].what.starts_with("bgpd configured"),
            "{:?}",
            e.routing
        );
    }

    #[test]
    fn a_long_chain_of_wrappers_is_read_without_recursion() {
        let (e, _) = read(&format!(
            "{} httpd -p 80\n",
            "busybox sudo ".repeat(200_000)
        ));
        assert!(e.services.contains_key("web"));
    }

    #[test]
    fn loopbacks_and_dummies_are_not_interfaces() {
        let (e, _) = read(
            "ip addr add 1.1.1.1/32 dev lo\nip link add lo1 type dummy\nip addr add 2.2.2.2/24 dev lo1\nip addr add 10.0.0.2/30 dev eth0\n",
        );
        assert_eq!(e.addressed.keys().collect::<Vec<_>>(), ["eth0"]);
    }

    const WORDS: [&str; 40] = [
        "ip",
        "-4",
        "-n",
        "a",
        "addr",
        "add",
        "dev",
        "link",
        "set",
        "master",
        "type",
        "bridge",
        "bond",
        "dummy",
        "route",
        "r",
        "default",
        "via",
        "ifconfig",
        "dhclient",
        "brctl",
        "addif",
        ";",
        "&&",
        "\"",
        "'",
        "\\\n",
        "\n",
        "10.0.0.1/24",
        "eth0",
        "lo",
        ">",
        "/proc/sys/net/ipv4/ip_forward",
        "echo",
        "0",
        "vtysh",
        "-c",
        "router ospf",
        "systemctl",
        "busybox",
    ];

    proptest::proptest! {
        /// Whatever the script, reading it ends, and what it yields is well-formed: no empty or
        /// loopback interface counts as addressed.
        #[test]
        fn any_script_reads_without_panic(words in proptest::collection::vec(proptest::sample::select(WORDS.to_vec()), 0..60)) {
            let (e, _) = read(&words.join(" "));
            for iface in e.addressed.keys() {
                proptest::prop_assert!(!iface.is_empty() && iface != "lo", "{iface:?}");
            }
        }

        #[test]
        fn any_text_reads_without_panic(s in "(?s).{0,300}") {
            let (e, _) = read(&s);
            proptest::prop_assert!(e.addressed.keys().all(|i| i != "lo"));
        }
    }

    #[test]
    fn nonsense_is_no_evidence_and_never_a_panic() {
        for s in [
            "ip",
            "ip addr add",
            "ip -n",
            "ifconfig",
            "ip link set master",
            "echo >",
            "sysctl =",
            "\"unterminated",
            "systemctl",
            "route add",
            "\\",
            "brctl addif",
        ] {
            let (e, _) = read(s);
            assert!(e.addressed.is_empty() && e.routing.is_empty(), "{s}: {e:?}");
        }
    }
}
