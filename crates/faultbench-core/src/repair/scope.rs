//! The fault's scope: what a scenario's `[INJECTION]` and `[FIX]` touch, so that a change
//! outside it can be called collateral.
//!
//! The scope is read from the commands themselves (the injection's `cmd:` lines on their
//! devices, and the `[FIX]`'s backticked commands on the devices its text names): the devices
//! they run on, and on each device the interfaces, daemons, packet filter, sysctls and FRR
//! configuration stanzas they name. Routes on a touched device are always in scope (any fault
//! there moves them). A command this reader cannot classify puts its whole device in scope:
//! collateral is only what is certainly outside the fault.
//!
//! Changes that follow from others rather than being made — routes learned by a routing
//! protocol, and a link's carrier that went with its peer — are *derived*: recorded, never
//! collateral by themselves (the change that caused them is).

use crate::pipeline::revert_commands;
use crate::scenario::Scenario;
use crate::snapshot::{Aspect, ChangeKind, StateChange};
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

/// FRR's daemons: killing or starting one changes the device's running configuration too.
const FRR_DAEMONS: [&str; 16] = [
    "zebra", "staticd", "bgpd", "ospfd", "ospf6d", "ripd", "ripngd", "isisd", "eigrpd", "babeld",
    "pimd", "ldpd", "bfdd", "vrrpd", "pbrd", "watchfrr",
];

/// Programs that read state and change nothing.
const READERS: [&str; 16] = [
    "sleep", "true", "false", "grep", "test", "[", "cat", "ping", "ps", "pgrep", "ss", "netstat",
    "arp", "wc", "head", "awk",
];

/// Words that open an FRR configuration section (`router bgp 1`, `interface eth0`, …).
const FRR_SECTIONS: [&str; 8] = [
    "router",
    "interface",
    "route-map",
    "key",
    "line",
    "vrf",
    "bfd",
    "access-list",
];

static INTERFACE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(eth|ens|enp|eno|br|bond|vlan|veth|tap|tun|dummy|team|lo|vrf|sw)[A-Za-z0-9_.:@-]*$",
    )
    .unwrap()
});

/// What the fault touches on one device.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeviceScope {
    /// A command could not be classified: everything on the device is in scope.
    pub whole: bool,
    /// Interfaces whose links and addresses are in scope.
    pub interfaces: BTreeSet<String>,
    /// Every interface is in scope (a link command that names none).
    pub all_interfaces: bool,
    /// Sysctls are in scope.
    pub sysctls: bool,
    /// Daemons and services in scope (by process name).
    pub services: BTreeSet<String>,
    /// The packet filter and NAT rules are in scope.
    pub packet_filter: bool,
    /// FRR configuration stanzas in scope (`router bgp 1`, `ip route`, …).
    pub frr_stanzas: BTreeSet<String>,
    /// The whole FRR configuration is in scope (a daemon killed or restarted, a file edited).
    pub all_frr: bool,
}

/// What a scenario's `[INJECTION]` and `[FIX]` touch, device by device.
///
/// ```
/// use faultbench_core::repair::FaultScope;
/// use faultbench_core::snapshot::{Aspect, ChangeKind, StateChange};
/// let mut scope = FaultScope::default();
/// scope.add_command("pc2", "ip link set eth0 down");
/// let change = |device: &str, aspect, item: &str| StateChange {
///     device: device.into(), aspect, change: ChangeKind::Changed, item: item.into(),
///     before: None, after: None, summary: String::new(),
/// };
/// assert!(scope.contains(&change("pc2", Aspect::Links, "eth0")));
/// assert!(!scope.contains(&change("pc2", Aspect::Links, "eth1")));
/// assert!(scope.contains(&change("pc2", Aspect::Routes, "default")));
/// assert!(!scope.contains(&change("router1", Aspect::Links, "eth1")));
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultScope {
    /// Device → what is touched on it.
    pub devices: BTreeMap<String, DeviceScope>,
}

impl FaultScope {
    /// The scope of a scenario on a lab with these devices: its injection commands and the
    /// `[FIX]` commands (run on the device the text names, else on the injected devices). A
    /// negative control's scope is empty.
    pub fn of(scenario: &dyn Scenario, lab_devices: &[String]) -> FaultScope {
        let mut scope = FaultScope::default();
        if scenario.injection().is_negative_control() {
            return scope;
        }
        for step in scenario.injection().applied_steps() {
            if let Some(cmd) = &step.cmd {
                scope.add_command(&step.device, cmd);
            }
        }
        let injected: Vec<String> = scenario
            .injection()
            .devices()
            .into_iter()
            .map(str::to_string)
            .collect();
        if let Some(fix) = scenario.fix() {
            for c in revert_commands(fix, lab_devices, &injected) {
                scope.add_command(&c.device, &c.command);
            }
        }
        scope
    }

    /// Adds what one shell command on `device` touches.
    pub fn add_command(&mut self, device: &str, command: &str) {
        let d = self.devices.entry(device.to_string()).or_default();
        for simple in split_simple(command) {
            classify(d, &simple);
        }
    }

    /// Whether a change lies inside the fault's scope.
    pub fn contains(&self, c: &StateChange) -> bool {
        let Some(d) = self.devices.get(&c.device) else {
            return false;
        };
        if d.whole {
            return true;
        }
        let first = c.item.split_whitespace().next().unwrap_or("");
        match c.aspect {
            Aspect::Routes | Aspect::ModelStates => true,
            Aspect::Links | Aspect::Addresses => {
                d.all_interfaces
                    || d.interfaces.contains(first)
                    // A whole aspect that appeared or vanished names the aspect, not an interface.
                    || c.item == c.aspect.as_str() && !d.interfaces.is_empty()
            }
            Aspect::Sysctls => d.sysctls,
            Aspect::PacketFilter => d.packet_filter,
            Aspect::Services => d.services.contains(first) || d.services.contains(&c.item),
            Aspect::FrrConfig => {
                d.all_frr
                    || d.frr_stanzas.iter().any(|p| {
                        c.item == *p
                            || c.item.starts_with(&format!("{p} "))
                            || c.item.starts_with(&format!("{p}›"))
                    })
            }
        }
    }

    /// The devices in scope.
    pub fn device_names(&self) -> Vec<&str> {
        self.devices.keys().map(String::as_str).collect()
    }
}

/// Whether a change follows from others instead of being made: a route a routing protocol
/// learned or withdrew, or a link whose only difference is its carrier (its peer went down or
/// came back).
pub fn is_derived(c: &StateChange) -> bool {
    match c.aspect {
        Aspect::Routes => {
            let learned = |v: &Option<String>| {
                v.as_deref().is_none_or(|v| {
                    ["bgp", "ospf", "rip", "eigrp", "isis", "babel", "ospf6"]
                        .iter()
                        .any(|p| v.contains(&format!("proto {p}")))
                })
            };
            learned(&c.before) && learned(&c.after) && (c.before.is_some() || c.after.is_some())
        }
        Aspect::Links if c.change == ChangeKind::Changed => {
            let strip = |v: &Option<String>| {
                v.as_deref()
                    .unwrap_or("")
                    .replace("carrier on", "carrier")
                    .replace("carrier off", "carrier")
            };
            strip(&c.before) == strip(&c.after)
        }
        _ => false,
    }
}

/// Splits a shell command into simple commands (on `&&`, `||`, `;`, `|` and newlines),
/// each as words with quotes removed.
fn split_simple(command: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut words: Vec<String> = Vec::new();
    let mut word = String::new();
    let mut quote: Option<char> = None;
    let mut chars = command.chars().peekable();
    let flush = |words: &mut Vec<String>, word: &mut String, out: &mut Vec<Vec<String>>, end| {
        if !word.is_empty() {
            words.push(std::mem::take(word));
        }
        if end && !words.is_empty() {
            out.push(std::mem::take(words));
        }
    };
    while let Some(ch) = chars.next() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => word.push(c),
            (None, '\'' | '"') => quote = Some(ch),
            (None, ' ' | '\t') => flush(&mut words, &mut word, &mut out, false),
            (None, ';' | '\n' | '|' | '&') => {
                if matches!(ch, '|' | '&') && chars.peek() == Some(&ch) {
                    chars.next();
                }
                flush(&mut words, &mut word, &mut out, true);
            }
            (None, '>') => {
                // A redirection's target is a word of its own (`echo 0 > /proc/sys/…`).
                flush(&mut words, &mut word, &mut out, false);
            }
            (None, c) => word.push(c),
        }
    }
    flush(&mut words, &mut word, &mut out, true);
    out
}

/// Adds what one simple command touches to a device's scope.
fn classify(d: &mut DeviceScope, words: &[String]) {
    let mut w: Vec<&str> = words.iter().map(String::as_str).collect();
    while let Some(first) = w.first() {
        if *first == "sudo" || first.contains('=') && !first.starts_with('-') {
            w.remove(0);
        } else {
            break;
        }
    }
    let Some(first) = w.first().copied() else {
        return;
    };
    let prog = first.rsplit('/').next().unwrap_or(first);
    if words.iter().any(|x| x.contains("/proc/sys/")) || prog == "sysctl" {
        d.sysctls = true;
        return;
    }
    if words.iter().any(|x| x.contains("/etc/frr")) && prog != "cat" {
        d.all_frr = true;
        return;
    }
    let named_interfaces = |d: &mut DeviceScope| {
        let mut any = false;
        for (i, x) in w.iter().enumerate() {
            let after_dev = i > 0 && matches!(w[i - 1], "dev" | "set" | "del" | "name");
            if INTERFACE.is_match(x) || after_dev && !x.starts_with('-') {
                d.interfaces.insert(x.to_string());
                any = true;
            }
        }
        if !any {
            d.all_interfaces = true;
        }
    };
    let daemon = |d: &mut DeviceScope, name: &str| {
        let name = name.trim_end_matches(".service");
        if name == "frr" {
            d.services.extend(FRR_DAEMONS.iter().map(|s| s.to_string()));
            d.all_frr = true;
        } else {
            d.services.insert(name.to_string());
            if FRR_DAEMONS.contains(&name) {
                d.all_frr = true;
            }
        }
    };
    match prog {
        p if READERS.contains(&p) => {}
        "ip" => match w.get(1).copied().unwrap_or("") {
            "route" | "r" | "ro" | "rule" | "neigh" | "n" => {}
            "link" | "l" | "addr" | "a" | "address" => named_interfaces(d),
            _ => d.whole = true,
        },
        "ifconfig" | "tc" | "ethtool" | "bridge" | "brctl" | "dhclient" => named_interfaces(d),
        "iptables" | "ip6tables" | "nft" | "iptables-restore" | "ebtables" | "iptables-save" => {
            d.packet_filter = true;
        }
        "vtysh" => frr_stanzas(d, words),
        "systemctl" => {
            for name in w.iter().skip(2).filter(|x| !x.starts_with('-')) {
                daemon(d, name);
            }
        }
        "service" => {
            if let Some(name) = w.get(1) {
                daemon(d, name);
            }
        }
        "pkill" | "kill" | "killall" => {
            for x in w.iter().skip(1).filter(|x| !x.starts_with('-')) {
                if x.chars().all(|c| c.is_ascii_digit()) {
                    // A pid: which daemon is unknown.
                    d.whole = true;
                } else {
                    daemon(d, x);
                }
            }
        }
        _ if first.starts_with("/etc/init.d/") => daemon(d, prog),
        _ if first.starts_with("/usr/lib/frr/") || FRR_DAEMONS.contains(&prog) => daemon(d, prog),
        "dnsmasq" | "named" | "dhcpd" | "keepalived" | "apache2" | "nginx" | "dhcrelay" => {
            daemon(d, prog);
        }
        "apache2ctl" => daemon(d, "apache2"),
        "rndc" => daemon(d, "named"),
        "echo" | "printf" | "sed" | "tee" | "cp" | "mv" | "rm" | "touch" => {
            // Files outside /proc/sys and /etc/frr are not part of a snapshot; the service
            // that reads them is restarted by a command of its own.
        }
        _ => d.whole = true,
    }
}

/// The FRR stanzas a `vtysh` command configures: `-c` arguments after `conf t`. A section
/// opener (`router bgp 1`) puts the section in scope; any other statement its first two words
/// (`ip route`, `ip prefix-list`). `vtysh -f FILE` or `-b` scopes the whole configuration.
fn frr_stanzas(d: &mut DeviceScope, words: &[String]) {
    if words.iter().any(|w| w == "-f" || w == "-b") {
        d.all_frr = true;
        return;
    }
    let args: Vec<&str> = words
        .windows(2)
        .filter(|p| p[0] == "-c")
        .map(|p| p[1].trim())
        .collect();
    if args.is_empty() {
        d.all_frr = true;
        return;
    }
    if !args.iter().any(|a| a.starts_with("conf")) {
        // `show …`, `clear …`, `write …`: nothing configured.
        return;
    }
    for a in args.iter().filter(|a| !a.starts_with("conf")) {
        let a = a.strip_prefix("no ").unwrap_or(a).trim();
        let ws: Vec<&str> = a.split_whitespace().collect();
        if ws.is_empty() || matches!(ws[0], "exit" | "end" | "exit-address-family") {
            continue;
        }
        if FRR_SECTIONS.contains(&ws[0]) {
            d.frr_stanzas.insert(ws.join(" "));
        } else {
            d.frr_stanzas.insert(ws[..ws.len().min(2)].join(" "));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(device: &str, aspect: Aspect, item: &str) -> StateChange {
        StateChange {
            device: device.into(),
            aspect,
            change: ChangeKind::Added,
            item: item.into(),
            before: None,
            after: Some(String::new()),
            summary: String::new(),
        }
    }

    #[test]
    fn commands_scope_what_they_name() {
        let mut s = FaultScope::default();
        s.add_command(
            "router1",
            "iptables -A INPUT -p tcp --dport 179 -j DROP && vtysh -c 'clear bgp 193.10.11.2'",
        );
        s.add_command(
            "router2",
            "vtysh -c 'conf t' -c 'router bgp 2' -c 'no neighbor 193.10.11.1 local-as 22'",
        );
        s.add_command("router3", "pkill -9 -x bgpd");
        s.add_command(
            "router4",
            "vtysh -c 'conf t' -c 'ip route 10.0.0.0/8 blackhole'",
        );
        s.add_command(
            "pc1",
            "ip addr del 10.0.0.2/24 dev eth1 && ip route add default via 10.0.0.1",
        );
        let r1 = &s.devices["router1"];
        assert!(r1.packet_filter && r1.frr_stanzas.is_empty() && !r1.whole);
        assert!(s.contains(&change(
            "router1",
            Aspect::PacketFilter,
            "table filter › -A INPUT"
        )));
        assert!(!s.contains(&change("router1", Aspect::FrrConfig, "router bgp 1")));
        assert!(s.contains(&change(
            "router2",
            Aspect::FrrConfig,
            "router bgp 2 › neighbor 193.10.11.1 remote-as 1"
        )));
        assert!(!s.contains(&change("router2", Aspect::FrrConfig, "router bgp 22")));
        assert!(!s.contains(&change("router2", Aspect::FrrConfig, "interface eth0")));
        assert!(s.contains(&change("router3", Aspect::Services, "bgpd")));
        assert!(s.contains(&change("router3", Aspect::FrrConfig, "router bgp 3")));
        assert!(!s.contains(&change("router3", Aspect::Services, "ospfd")));
        assert!(s.contains(&change(
            "router4",
            Aspect::FrrConfig,
            "ip route 10.0.0.0/8 blackhole"
        )));
        assert!(!s.contains(&change("router4", Aspect::PacketFilter, "x")));
        assert!(s.contains(&change("pc1", Aspect::Addresses, "eth1 10.0.0.2/24")));
        assert!(!s.contains(&change("pc1", Aspect::Addresses, "eth0 10.0.9.2/24")));
        assert!(s.contains(&change("pc1", Aspect::Routes, "default")));
        assert!(!s.contains(&change("pc9", Aspect::Routes, "default")));
    }

    #[test]
    fn services_and_unknown_commands() {
        let mut s = FaultScope::default();
        s.add_command("r1", "service frr restart");
        assert!(s.contains(&change("r1", Aspect::Services, "ospfd")));
        assert!(s.contains(&change("r1", Aspect::FrrConfig, "router ospf")));
        assert!(!s.contains(&change("r1", Aspect::Links, "eth0")));
        s.add_command("r2", "some-tool --break");
        assert!(s.contains(&change("r2", Aspect::Links, "eth0")));
        s.add_command("r3", "echo 0 > /proc/sys/net/ipv4/ip_forward");
        assert!(s.contains(&change("r3", Aspect::Sysctls, "net.ipv4.ip_forward")));
        assert!(!s.contains(&change("r3", Aspect::Services, "zebra")));
        s.add_command("r4", "systemctl stop dnsmasq");
        assert!(s.contains(&change("r4", Aspect::Services, "dnsmasq")));
        s.add_command("r5", "ip link set dev eth2 mtu 1400");
        assert!(s.contains(&change("r5", Aspect::Links, "eth2")));
        assert!(!s.contains(&change("r5", Aspect::Links, "eth0")));
    }

    #[test]
    fn learned_routes_and_carrier_are_derived() {
        let mut c = change("r9", Aspect::Routes, "10.0.0.0/24 metric 20");
        c.after = Some("via 10.0.12.1 dev eth1 proto ospf".into());
        assert!(is_derived(&c));
        c.after = Some("via 10.0.12.1 dev eth1".into());
        assert!(!is_derived(&c), "a static route was made, not learned");
        let mut l = change("r9", Aspect::Links, "eth0");
        l.change = ChangeKind::Changed;
        l.before = Some("up, carrier on, mtu 1500".into());
        l.after = Some("up, carrier off, mtu 1500".into());
        assert!(is_derived(&l));
        l.after = Some("down, carrier off, mtu 1500".into());
        assert!(!is_derived(&l));
    }
}
