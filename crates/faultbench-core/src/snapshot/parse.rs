//! The snapshot command and the normalisation of its output.
//!
//! One shell script per device prints each part followed by a marker line `@@<part> <exit
//! code>`. Only shell builtins read `/proc` (sysctls, process names), so a snapshot starts
//! three or four programs per device (`ip`, `nft` or `iptables-save`, and `vtysh` where FRR
//! runs). A backend that can reach the FRR daemons' vty sockets (netns) runs the script
//! without `vtysh`, by far its most expensive program, and merges the daemons' own answers
//! with [`frr_config_from_daemons`].

use super::{Aspect, AspectState, DeviceState};
use serde_json::Value;
use std::collections::BTreeMap;

/// The `ip` part of the snapshot script: links, addresses and routes.
macro_rules! ip_part {
    () => {
        r#"printf 'addr show\nroute show table all\n' | ip -j -batch - 2>&1; echo "@@ip $?"
"#
    };
}

/// Every part of the snapshot script but FRR's configuration (shared by both scripts below).
macro_rules! script_without_frr_config {
    () => {
        concat!(
            ip_part!(),
            r#"for f in /proc/sys/net/ipv4/ip_forward /proc/sys/net/ipv4/icmp_echo_ignore_all /proc/sys/net/ipv4/conf/*/forwarding /proc/sys/net/ipv4/conf/*/rp_filter /proc/sys/net/ipv4/conf/*/proxy_arp /proc/sys/net/ipv6/conf/all/forwarding; do v=; read -r v < "$f" 2>/dev/null; [ -n "$v" ] && echo "${f#/proc/sys/}=$v"; done; echo "@@sysctls 0"
frr=0; for f in /proc/[0-9]*/comm; do c=; read -r c < "$f" 2>/dev/null; [ -n "$c" ] || continue; echo "$c"; [ "$c" = zebra ] && frr=1; done; echo "@@services 0"
if command -v nft >/dev/null 2>&1; then nft list ruleset 2>&1; else iptables-save 2>&1; fi; echo "@@packet_filter $?"
"#
        )
    };
}

/// Only the `ip` part of [`SNAPSHOT_SCRIPT`]: a device's links, addresses and routes, the
/// state other devices' routing protocols and links can change. Read with
/// [`super::read_device_with`], its other aspects are recorded as not read (never compared).
pub const SNAPSHOT_SCRIPT_IP_ONLY: &str = ip_part!();

/// The script run (with `sh -c`, inside the device) for a snapshot: one `ip` in batch mode
/// for links, addresses and routes, builtins for sysctls and process names, `nft` (else
/// `iptables-save`), and `vtysh` only where zebra runs.
pub const SNAPSHOT_SCRIPT: &str = concat!(
    script_without_frr_config!(),
    r#"if [ $frr = 1 ]; then vtysh -c 'show running-config' 2>&1; echo "@@frr_config $?"; else echo "@@frr_config absent"; fi"#
);

/// [`SNAPSHOT_SCRIPT`] without starting `vtysh`: its `frr_config` part only says whether
/// zebra runs, and [`DeviceState::frr_config_pending`] is then true. For a backend that reads
/// each FRR daemon's running configuration itself (over the daemons' vty sockets, a fraction
/// of a millisecond each, where starting `vtysh` costs 60–100 ms of CPU per device) and
/// merges the answers with [`frr_config_from_daemons`].
pub const SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG: &str = concat!(
    script_without_frr_config!(),
    r#"if [ $frr = 1 ]; then echo "@@frr_config pending"; else echo "@@frr_config absent"; fi"#
);

/// The placeholder reason of an FRR configuration left to the backend
/// ([`SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG`]); if the backend never fills it, it is recorded
/// as an aspect that could not be read, with this reason.
pub(crate) const FRR_CONFIG_PENDING: &str =
    "not read: the backend was to read FRR's configuration from the daemons";

/// The FRR daemons whose running configuration `vtysh -c 'show running-config'` merges, by
/// process name (`watchfrr` has none).
pub const FRR_DAEMONS: [&str; 19] = [
    "zebra", "mgmtd", "staticd", "bgpd", "ospfd", "ospf6d", "ripd", "ripngd", "isisd", "eigrpd",
    "babeld", "pimd", "ldpd", "nhrpd", "bfdd", "fabricd", "vrrpd", "pbrd", "pathd",
];

/// FRR's configuration from each running daemon's own `show running-config` (in any order),
/// merged as `vtysh` merges them: a stanza several daemons print (`interface eth0` from zebra
/// and ospfd) is one stanza with the lines of each, and the lines every daemon repeats
/// (`frr version`, `hostname`) count once. A daemon that could not be read makes the whole
/// aspect [`AspectState::Failed`], naming it.
pub fn frr_config_from_daemons(answers: &[(String, Result<String, String>)]) -> AspectState {
    if answers.is_empty() {
        return AspectState::Failed("no FRR daemon to read the configuration from".into());
    }
    let mut merged = Items::new();
    for (daemon, answer) in answers {
        let text = match answer {
            Ok(text) if text.contains("% Unknown command") || text.trim().is_empty() => {
                return AspectState::Failed(format!(
                    "{daemon}: unexpected answer to show running-config: {}",
                    cut(text.trim(), 200)
                ));
            }
            Ok(text) => text,
            Err(why) => return AspectState::Failed(format!("{daemon}: {why}")),
        };
        for (key, count) in parse_frr(text) {
            let keep = match merged.get(&key) {
                None => true,
                Some(have) => repeats(&count) > repeats(have),
            };
            if keep {
                merged.insert(key, count);
            }
        }
    }
    AspectState::Items(merged)
}

/// How many times an item counted by [`add_counted`] occurs.
fn repeats(count: &str) -> u32 {
    count.trim_start_matches('×').parse().unwrap_or(1)
}

/// Routing daemons and services whose running state is part of a snapshot (other processes,
/// such as the commands of a concurrent probe, come and go and are ignored).
const SERVICES: [&str; 46] = [
    "zebra",
    "mgmtd",
    "staticd",
    "bgpd",
    "ospfd",
    "ospf6d",
    "ripd",
    "ripngd",
    "isisd",
    "eigrpd",
    "babeld",
    "pimd",
    "ldpd",
    "nhrpd",
    "bfdd",
    "fabricd",
    "vrrpd",
    "pbrd",
    "pathd",
    "watchfrr",
    "bird",
    "dnsmasq",
    "named",
    "unbound",
    "apache2",
    "httpd",
    "nginx",
    "lighttpd",
    "dhcpd",
    "dhcrelay",
    "dhclient",
    "udhcpc",
    "udhcpd",
    "keepalived",
    "sshd",
    "snmpd",
    "ntpd",
    "chronyd",
    "haproxy",
    "squid",
    "vsftpd",
    "inetd",
    "radvd",
    "iperf3",
    "tcpdump",
    "influxd",
];

/// Parses the output of [`SNAPSHOT_SCRIPT`] into a device state. A part without its marker
/// (the command was cut short) or with a non-zero exit code is [`AspectState::Failed`].
pub fn parse_device(output: &str) -> DeviceState {
    let mut parts: BTreeMap<&str, (String, &str)> = BTreeMap::new();
    let mut text = String::new();
    for line in output.lines() {
        if let Some(marker) = line.strip_prefix("@@") {
            let (name, rc) = marker.split_once(' ').unwrap_or((marker, ""));
            parts.insert(name, (std::mem::take(&mut text), rc.trim()));
        } else {
            text.push_str(line);
            text.push('\n');
        }
    }
    let mut aspects = BTreeMap::new();
    let read = |name: &str| -> Result<&str, String> {
        match parts.get(name) {
            None => Err("no output (the snapshot command was cut short)".into()),
            Some((_, "absent")) => Ok(""),
            Some((t, "0")) => Ok(t.as_str()),
            Some((t, rc)) => {
                let said = t.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                Err(format!("exit {rc}: {}", cut(said.trim(), 200)))
            }
        }
    };
    let failed = |why: String| AspectState::Failed(why);
    // `ip -batch` prints one JSON array per command: addresses (with links), then routes.
    let (addr, routes) = match read("ip") {
        Ok(text) => {
            let mut arrays = serde_json::Deserializer::from_str(text).into_iter::<Value>();
            let mut next = |what: &str| match arrays.next() {
                Some(Ok(Value::Array(a))) => Ok(a),
                Some(Ok(_)) => Err(format!("{what}: not a JSON array")),
                Some(Err(e)) => Err(format!("{what}: unreadable JSON ({e})")),
                None => Err(format!("{what}: no output")),
            };
            let addr = next("ip -j addr");
            (addr, next("ip -j route"))
        }
        Err(why) => (Err(why.clone()), Err(why)),
    };
    match addr.map(|a| parse_addr(&a)) {
        Ok((links, addrs)) => {
            aspects.insert(Aspect::Links, AspectState::Items(links));
            aspects.insert(Aspect::Addresses, AspectState::Items(addrs));
        }
        Err(why) => {
            aspects.insert(Aspect::Links, failed(why.clone()));
            aspects.insert(Aspect::Addresses, failed(why));
        }
    }
    for (aspect, items) in [
        (Aspect::Routes, routes.map(|r| parse_routes(&r))),
        (Aspect::Sysctls, read("sysctls").map(parse_sysctls)),
        (Aspect::Services, read("services").map(parse_services)),
        (
            Aspect::PacketFilter,
            read("packet_filter").map(parse_filter),
        ),
    ] {
        aspects.insert(aspect, items.map_or_else(failed, AspectState::Items));
    }
    let frr = match parts.get("frr_config") {
        Some((_, "absent")) => AspectState::Absent("FRR is not running".into()),
        Some((_, "pending")) => AspectState::Failed(FRR_CONFIG_PENDING.into()),
        _ => read("frr_config")
            .map(parse_frr)
            .map_or_else(failed, AspectState::Items),
    };
    aspects.insert(Aspect::FrrConfig, frr);
    DeviceState { aspects }
}

fn cut(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n).collect::<String>())
    }
}

fn s<'a>(v: &'a Value, k: &str) -> Option<&'a str> {
    v[k].as_str()
}

type Items = BTreeMap<String, String>;

/// Links and addresses from `ip -j addr show`. Dropped as volatile: operstate (follows from
/// admin state and carrier), ifindex and peer ids, address lifetimes, IPv6 link-local
/// addresses (they follow from the link) and DAD flags.
fn parse_addr(list: &[Value]) -> (Items, Items) {
    let mut links = Items::new();
    let mut addrs = Items::new();
    for l in list {
        let Some(name) = s(l, "ifname") else {
            continue;
        };
        let flags: Vec<&str> = l["flags"]
            .as_array()
            .map(|f| f.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let mut v = vec![
            if flags.contains(&"UP") { "up" } else { "down" }.to_string(),
            format!(
                "carrier {}",
                if flags.contains(&"LOWER_UP") {
                    "on"
                } else {
                    "off"
                }
            ),
        ];
        if let Some(mtu) = l["mtu"].as_u64() {
            v.push(format!("mtu {mtu}"));
        }
        if let Some(m) = s(l, "master") {
            v.push(format!("master {m}"));
        }
        if let Some(q) = s(l, "qdisc") {
            v.push(format!("qdisc {q}"));
        }
        if let Some(mac) = s(l, "address") {
            v.push(format!("mac {mac}"));
        }
        links.insert(name.to_string(), v.join(", "));
        for a in l["addr_info"].as_array().into_iter().flatten() {
            let (Some(local), Some(plen)) = (s(a, "local"), a["prefixlen"].as_u64()) else {
                continue;
            };
            if s(a, "family") == Some("inet6") && s(a, "scope") == Some("link") {
                continue;
            }
            let mut value = Vec::new();
            if let Some(sc) = s(a, "scope").filter(|sc| *sc != "global") {
                value.push(format!("scope {sc}"));
            }
            if a["dynamic"].as_bool() == Some(true) {
                value.push("dynamic".to_string());
            }
            addrs.insert(format!("{name} {local}/{plen}"), value.join(", "));
        }
    }
    (links, addrs)
}

/// Routes from `ip -j -4 route show table all`, keyed by destination (with table, TOS and
/// metric when present). Dropped: the `local` table, nexthop ids, expiry and cache details.
fn parse_routes(list: &[Value]) -> Items {
    let mut out = Items::new();
    for r in list {
        let table = s(r, "table").unwrap_or("main");
        if table == "local" {
            continue;
        }
        let Some(dst) = s(r, "dst") else { continue };
        let mut key = dst.to_string();
        if table != "main" {
            key.push_str(&format!(" table {table}"));
        }
        if let Some(tos) = s(r, "tos").or(s(r, "dsfield")) {
            key.push_str(&format!(" tos {tos}"));
        }
        if let Some(m) = r["metric"].as_u64() {
            key.push_str(&format!(" metric {m}"));
        }
        let mut v = Vec::new();
        if let Some(t) = s(r, "type").filter(|t| *t != "unicast") {
            v.push(t.to_string());
        }
        v.extend(nexthop(r));
        let mut hops: Vec<String> = r["nexthops"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|h| {
                let mut p = nexthop(h);
                if let Some(w) = h["weight"].as_u64() {
                    p.push(format!("weight {w}"));
                }
                format!("nexthop {}", p.join(" "))
            })
            .collect();
        hops.sort();
        for (k, label) in [
            ("protocol", "proto"),
            ("scope", "scope"),
            ("prefsrc", "src"),
        ] {
            if let Some(x) = s(r, k) {
                v.push(format!("{label} {x}"));
            }
        }
        v.extend(hops);
        let flags: Vec<&str> = r["flags"]
            .as_array()
            .map(|f| f.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if !flags.is_empty() {
            v.push(flags.join(" "));
        }
        out.insert(key, v.join(" "));
    }
    out
}

fn nexthop(h: &Value) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(g) = s(h, "gateway") {
        v.push(format!("via {g}"));
    }
    if let Some(d) = s(h, "dev") {
        v.push(format!("dev {d}"));
    }
    v
}

/// `net/ipv4/conf/eth0/forwarding=1` lines → `net.ipv4.conf.eth0.forwarding` → `1`.
fn parse_sysctls(text: &str) -> Items {
    text.lines()
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().replace('/', "."), v.trim().to_string()))
        .collect()
}

/// Process names → the running services among them.
fn parse_services(text: &str) -> Items {
    text.lines()
        .map(str::trim)
        .filter(|c| SERVICES.contains(c))
        .map(|c| (c.to_string(), "running".to_string()))
        .collect()
}

/// Adds `key`, counting repeats in the value (`×2`).
fn add_counted(out: &mut Items, key: String) {
    let n = match out.get(&key) {
        None => 1,
        Some(v) if v.is_empty() => 2,
        Some(v) => v.trim_start_matches('×').parse::<u32>().unwrap_or(1) + 1,
    };
    out.insert(
        key,
        if n == 1 {
            String::new()
        } else {
            format!("×{n}")
        },
    );
}

/// Packet-filter rules, each keyed with its table and chain. nft's counters (`counter
/// packets N bytes M`) and set-element expiries are dropped; so are iptables-save's packet
/// counts and comments.
fn parse_filter(text: &str) -> Items {
    let mut out = Items::new();
    let mut context: Vec<String> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line == "COMMIT" {
            continue;
        }
        // iptables-save: `*filter` opens a table, `:INPUT ACCEPT [0:0]` sets a policy.
        if let Some(t) = line.strip_prefix('*') {
            context = vec![format!("table {t}")];
            continue;
        }
        if line.starts_with(':') {
            let policy = line.split('[').next().unwrap_or(line).trim();
            add_counted(&mut out, join(&context, policy));
            continue;
        }
        if line == "}" {
            context.pop();
            continue;
        }
        let normal = normalise_nft(line);
        if let Some(open) = normal.strip_suffix('{') {
            context.push(open.trim().to_string());
            continue;
        }
        add_counted(&mut out, join(&context, &normal));
    }
    out
}

fn join(context: &[String], line: &str) -> String {
    if context.is_empty() {
        line.to_string()
    } else {
        format!("{} › {line}", context.join(" › "))
    }
}

fn normalise_nft(line: &str) -> String {
    let words: Vec<&str> = line.split_whitespace().collect();
    let mut out: Vec<&str> = Vec::with_capacity(words.len());
    let mut i = 0;
    while i < words.len() {
        match words[i] {
            "counter" if words.get(i + 1) == Some(&"packets") => {
                out.push("counter");
                i += 5; // counter packets N bytes M
            }
            "expires" => i += 2,
            w => {
                out.push(w);
                i += 1;
            }
        }
    }
    out.join(" ").trim_end_matches(',').to_string()
}

/// FRR's running configuration: one item per line, keyed with the lines that open its
/// section (`router bgp 1 › address-family ipv4 unicast › network 10.0.0.0/24`). Banners,
/// `!` separators and `exit` lines are dropped.
fn parse_frr(text: &str) -> Items {
    let mut out = Items::new();
    let mut stack: Vec<(usize, String)> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim_end();
        let body = line.trim_start();
        if body.is_empty()
            || body == "!"
            || body == "end"
            || body.starts_with("exit")
            || body.starts_with("Building configuration")
            || body.starts_with("Current configuration")
            // vtysh's own setting (its vtysh.conf), not the routing daemons' configuration.
            || body.ends_with("service integrated-vtysh-config")
        {
            continue;
        }
        let indent = line.len() - body.len();
        while stack.last().is_some_and(|(i, _)| *i >= indent) {
            stack.pop();
        }
        let path: Vec<String> = stack.iter().map(|(_, l)| l.clone()).collect();
        add_counted(&mut out, join(&path, body));
        stack.push((indent, body.to_string()));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ip_only_script_is_the_ip_part_of_the_full_scripts_and_parses_alone() {
        assert!(SNAPSHOT_SCRIPT.starts_with(SNAPSHOT_SCRIPT_IP_ONLY));
        assert!(SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG.starts_with(SNAPSHOT_SCRIPT_IP_ONLY));
        assert!(
            SNAPSHOT_SCRIPT_IP_ONLY
                .trim_end()
                .ends_with(r#"echo "@@ip $?""#)
        );
        assert_eq!(SNAPSHOT_SCRIPT_IP_ONLY.lines().count(), 1);
        // Its output gives links, addresses and routes; the parts it does not run are not
        // read (never compared), not empty.
        let st = parse_device("[]\n[]\n@@ip 0\n");
        assert_eq!(st.items(Aspect::Routes).map(BTreeMap::len), Some(0));
        assert!(matches!(
            st.aspects[&Aspect::PacketFilter],
            AspectState::Failed(_)
        ));
        assert!(matches!(
            st.aspects[&Aspect::Services],
            AspectState::Failed(_)
        ));
    }

    #[test]
    fn links_and_addresses_drop_what_is_volatile() {
        let addr = r#"[{"ifindex":7,"link_index":8,"ifname":"eth0","flags":["BROADCAST","UP","LOWER_UP"],"mtu":1500,"qdisc":"noqueue","operstate":"UP","address":"56:23:b1:e4:0b:75","link_netnsid":0,
            "addr_info":[{"family":"inet","local":"10.0.0.1","prefixlen":24,"scope":"global","valid_life_time":4294967295,"preferred_life_time":4294967295},
                         {"family":"inet","local":"10.0.9.5","prefixlen":24,"scope":"global","dynamic":true,"valid_life_time":3590,"preferred_life_time":3590},
                         {"family":"inet6","local":"fe80::1","prefixlen":64,"scope":"link"}]},
            {"ifname":"eth1","flags":["BROADCAST"],"mtu":1500,"master":"br0"}]"#;
        let json = |t: &str| serde_json::from_str::<Vec<Value>>(t).unwrap();
        let (links, addrs) = parse_addr(&json(addr));
        assert_eq!(
            links["eth0"],
            "up, carrier on, mtu 1500, qdisc noqueue, mac 56:23:b1:e4:0b:75"
        );
        assert_eq!(links["eth1"], "down, carrier off, mtu 1500, master br0");
        assert_eq!(addrs.len(), 2, "{addrs:?}");
        assert_eq!(addrs["eth0 10.0.9.5/24"], "dynamic");
        // The lifetime counts down; the item does not change with it.
        let later = addr.replace("3590", "3100");
        assert_eq!(parse_addr(&json(&later)).1, addrs);
    }

    #[test]
    fn routes_are_keyed_by_destination_and_drop_nexthop_ids() {
        let r = r#"[{"dst":"200.1.1.0/24","nhid":6,"gateway":"193.10.11.2","dev":"eth0","protocol":"bgp","metric":20,"flags":[]},
                   {"type":"local","dst":"127.0.0.1","dev":"lo","table":"local","protocol":"kernel","scope":"host","prefsrc":"127.0.0.1","flags":[]},
                   {"dst":"10.9.0.0/16","protocol":"ospf","metric":20,"nexthops":[{"gateway":"10.0.2.1","dev":"eth2","weight":1,"flags":[]},{"gateway":"10.0.1.1","dev":"eth1","weight":1,"flags":[]}]},
                   {"type":"blackhole","dst":"192.0.2.0/24","flags":[]}]"#;
        let json = |t: &str| serde_json::from_str::<Vec<Value>>(t).unwrap();
        let items = parse_routes(&json(r));
        assert_eq!(items.len(), 3, "the local table is left out: {items:?}");
        assert_eq!(
            items["200.1.1.0/24 metric 20"],
            "via 193.10.11.2 dev eth0 proto bgp"
        );
        assert_eq!(
            items["10.9.0.0/16 metric 20"],
            "proto ospf nexthop via 10.0.1.1 dev eth1 weight 1 nexthop via 10.0.2.1 dev eth2 weight 1"
        );
        assert_eq!(items["192.0.2.0/24"], "blackhole");
        let renumbered = r.replace("\"nhid\":6", "\"nhid\":41");
        assert_eq!(parse_routes(&json(&renumbered)), items);
    }

    #[test]
    fn packet_filter_rules_drop_counters_and_keep_their_chain() {
        let nft = "table ip filter {\n\tchain FORWARD {\n\t\ttype filter hook forward priority filter; policy accept;\n\t\tip saddr 10.0.1.0/24 ip daddr 10.0.2.0/24 counter packets 17 bytes 1428 drop\n\t}\n}\ntable ip nat {\n\tchain POSTROUTING {\n\t\toifname \"eth2\" masquerade\n\t}\n}\n";
        let items = parse_filter(nft);
        assert!(items.contains_key(
            "table ip filter › chain FORWARD › ip saddr 10.0.1.0/24 ip daddr 10.0.2.0/24 counter drop"
        ));
        assert!(
            items.contains_key("table ip nat › chain POSTROUTING › oifname \"eth2\" masquerade")
        );
        assert_eq!(
            parse_filter(&nft.replace("17 bytes 1428", "99 bytes 8000")),
            items
        );

        let save = "# Generated by iptables-save v1.8.9 on Mon Dec  1 20:25:12 2026\n*filter\n:INPUT ACCEPT [12:345]\n-A INPUT -s 10.0.0.0/8 -j DROP\n-A INPUT -s 10.0.0.0/8 -j DROP\nCOMMIT\n";
        let items = parse_filter(save);
        assert_eq!(items["table filter › :INPUT ACCEPT"], "");
        assert_eq!(items["table filter › -A INPUT -s 10.0.0.0/8 -j DROP"], "×2");
    }

    #[test]
    fn frr_lines_carry_their_section() {
        let conf = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nhostname router1\n!\nrouter bgp 1\n neighbor 193.10.11.2 remote-as 2\n !\n address-family ipv4 unicast\n  network 195.11.14.0/24\n exit-address-family\nexit\n!\ninterface eth0\n ip ospf hello-interval 1\nexit\n!\nend\n";
        let items = parse_frr(conf);
        let keys: Vec<&str> = items.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            vec![
                "frr version 8.4.4",
                "hostname router1",
                "interface eth0",
                "interface eth0 › ip ospf hello-interval 1",
                "router bgp 1",
                "router bgp 1 › address-family ipv4 unicast",
                "router bgp 1 › address-family ipv4 unicast › network 195.11.14.0/24",
                "router bgp 1 › neighbor 193.10.11.2 remote-as 2",
            ]
        );
    }

    #[test]
    fn a_failed_or_missing_part_is_recorded_and_the_rest_is_read() {
        let out = "[]\n[]\n@@ip 0\nnet/ipv4/ip_forward=1\n@@sysctls 0\nzebra\nbash\n@@services 0\nboom\n@@packet_filter 2\n";
        let st = parse_device(out);
        assert!(matches!(st.aspects[&Aspect::Links], AspectState::Items(_)));
        assert!(matches!(st.aspects[&Aspect::Routes], AspectState::Items(_)));
        assert_eq!(
            st.aspects[&Aspect::PacketFilter],
            AspectState::Failed("exit 2: boom".into())
        );
        let cut = parse_device("[{\"ifname\":\"eth0\"}]\n@@ip 1\n");
        assert!(
            matches!(&cut.aspects[&Aspect::Routes], AspectState::Failed(w) if w.starts_with("exit 1"))
        );
        assert_eq!(
            st.items(Aspect::Sysctls).unwrap()["net.ipv4.ip_forward"],
            "1"
        );
        assert_eq!(st.items(Aspect::Services).unwrap().len(), 1);
        assert!(matches!(
            &st.aspects[&Aspect::FrrConfig],
            AspectState::Failed(w) if w.contains("cut short")
        ));
        let absent = parse_device("@@frr_config absent\n");
        assert_eq!(
            absent.aspects[&Aspect::FrrConfig],
            AspectState::Absent("FRR is not running".into())
        );
    }

    #[test]
    fn daemon_configs_merge_as_vtysh_merges_them() {
        let zebra =
            "frr version 8.4.4\nhostname r1\n!\ninterface eth0\n ip address 10.0.0.1/24\nexit\n!\n";
        let ospfd = "frr version 8.4.4\nhostname r1\n!\ninterface eth0\n ip ospf cost 10\nexit\n!\nrouter ospf\n network 10.0.0.0/24 area 0\nexit\n";
        let vtysh = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nhostname r1\nno service integrated-vtysh-config\n!\ninterface eth0\n ip address 10.0.0.1/24\n ip ospf cost 10\nexit\n!\nrouter ospf\n network 10.0.0.0/24 area 0\nexit\n!\nend\n";
        let answers = vec![
            ("zebra".to_string(), Ok(zebra.to_string())),
            ("ospfd".to_string(), Ok(ospfd.to_string())),
        ];
        assert_eq!(
            frr_config_from_daemons(&answers),
            AspectState::Items(parse_frr(vtysh))
        );
        let AspectState::Items(items) = frr_config_from_daemons(&answers) else {
            unreachable!()
        };
        assert_eq!(
            items["hostname r1"], "",
            "counted once, not once per daemon"
        );
        assert!(items.contains_key("interface eth0 › ip ospf cost 10"));
    }

    #[test]
    fn a_daemon_that_cannot_be_read_fails_the_aspect_and_is_named() {
        let ok = ("zebra".to_string(), Ok("hostname r1\n".to_string()));
        let down = ("bgpd".to_string(), Err("connection refused".to_string()));
        let AspectState::Failed(why) = frr_config_from_daemons(&[ok.clone(), down]) else {
            panic!("a daemon down must fail the aspect")
        };
        assert_eq!(why, "bgpd: connection refused");
        let view = (
            "ospfd".to_string(),
            Ok("% Unknown command: show running-config\n".into()),
        );
        let AspectState::Failed(why) = frr_config_from_daemons(&[ok, view]) else {
            panic!("a view-mode answer is not a configuration")
        };
        assert!(why.starts_with("ospfd: unexpected answer"), "{why}");
    }

    #[test]
    fn the_script_without_frr_config_leaves_it_pending_only_where_zebra_runs() {
        assert!(!SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG.contains("vtysh"));
        assert!(SNAPSHOT_SCRIPT.starts_with(&SNAPSHOT_SCRIPT_WITHOUT_FRR_CONFIG[..200]));
        let pending = parse_device("zebra\nbgpd\nwatchfrr\n@@services 0\n@@frr_config pending\n");
        assert!(pending.frr_config_pending());
        assert_eq!(pending.frr_daemons(), vec!["zebra", "bgpd"]);
        assert!(!parse_device("@@frr_config absent\n").frr_config_pending());
    }
}
