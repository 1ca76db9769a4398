//! The addresses a device's files give it, with the file and line that gives each.
//!
//! Read from the device's startup file — `ip [OPTIONS] address add ADDR… dev IF` (any
//! abbreviation of `address` and `add`, also `replace`) and `ifconfig IF [inet|inet6 add]
//! ADDR…` — and from its `etc/network/interfaces` when the startup brings the interfaces up
//! through ifupdown (`/etc/init.d/networking`, `service`/`systemctl … networking`, `ifup -a`: the
//! `auto` and `allow-hotplug` interfaces; `ifup IF`: that one), from the `address` lines of
//! `inet static` and `inet6 static` stanzas. Lines holding shell expansions (`$`, backquotes)
//! are skipped: what they give is not known without running them. An interface whose address
//! the startup later removes (`address del`, `flush`) gives nothing.

use std::net::IpAddr;

/// An address a file gives a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Promised {
    pub iface: String,
    pub addr: IpAddr,
    /// The address as written (`10.0.0.1/24`).
    pub written: String,
    /// The file, relative to the lab (`r1.startup`, `r1/etc/network/interfaces`).
    pub file: String,
    pub line: u32,
}

/// Splits a startup line into its simple commands (on `;`, `&&`, `||`, `|`), each as words.
fn commands(line: &str) -> Vec<Vec<String>> {
    let line = line.split(" #").next().unwrap_or(line);
    line.split([';', '|', '&'])
        .map(|c| {
            c.split_whitespace()
                .map(|w| w.trim_matches(['"', '\'']).to_string())
                .collect::<Vec<_>>()
        })
        .filter(|w| !w.is_empty())
        .collect()
}

fn abbreviates(word: &str, full: &str) -> bool {
    !word.is_empty() && full.starts_with(word)
}

fn addr_of(word: &str) -> Option<IpAddr> {
    word.split('/').next()?.parse().ok()
}

/// `(interface, address as written)` for an `ip address add` or `ifconfig` command.
fn assignment(w: &[String]) -> Option<(String, String)> {
    let w: Vec<&str> = w
        .iter()
        .map(String::as_str)
        .skip_while(|x| *x == "sudo")
        .collect();
    match w.first().copied()? {
        "ip" => {
            let mut i = 1;
            while let Some(opt) = w.get(i).filter(|x| x.starts_with('-')) {
                // Options with a value: `-f inet`, `-family inet`, `-n NS`, `-b FILE`.
                i += if ["-f", "-family", "-n", "-netns", "-b", "-batch"].contains(opt) {
                    2
                } else {
                    1
                };
            }
            if !abbreviates(w.get(i)?, "address") {
                return None;
            }
            let verb = *w.get(i + 1)?;
            if !(abbreviates(verb, "add") || verb == "replace") {
                return None;
            }
            let rest = &w[i + 2..];
            let dev = rest
                .iter()
                .position(|x| *x == "dev")
                .and_then(|p| rest.get(p + 1))?;
            // The address: after `local`, else the first word that is one (not after
            // `peer`, `broadcast`, `brd`, `anycast`).
            let mut addr = None;
            let mut skip_next = false;
            for (k, x) in rest.iter().enumerate() {
                if skip_next {
                    skip_next = false;
                    continue;
                }
                if [
                    "peer",
                    "broadcast",
                    "brd",
                    "anycast",
                    "label",
                    "scope",
                    "dev",
                ]
                .contains(x)
                {
                    skip_next = true;
                    continue;
                }
                if *x == "local" {
                    addr = rest.get(k + 1).copied();
                    break;
                }
                if addr_of(x).is_some() {
                    addr = Some(*x);
                    break;
                }
            }
            Some((dev.to_string(), addr?.to_string()))
        }
        "ifconfig" => {
            let iface = *w.get(1)?;
            let mut k = 2;
            if w.get(k) == Some(&"inet") {
                k += 1;
            } else if w.get(k) == Some(&"inet6") {
                k += 1;
                if w.get(k) == Some(&"add") {
                    k += 1;
                }
            }
            let a = *w.get(k)?;
            addr_of(a).filter(|ip| !ip.is_unspecified())?;
            Some((iface.to_string(), a.to_string()))
        }
        _ => None,
    }
}

/// Interfaces whose addresses the startup removes again (`ip address del|flush … dev IF`,
/// `ip address flush IF`).
fn removed(startup: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in startup.lines().flat_map(commands) {
        if w.first().map(String::as_str) != Some("ip") {
            continue;
        }
        let obj = w.iter().skip(1).find(|x| !x.starts_with('-'));
        let Some(pos) = obj.and_then(|o| w.iter().position(|x| x == o)) else {
            continue;
        };
        if !abbreviates(&w[pos], "address") {
            continue;
        }
        let verb = w.get(pos + 1).map(String::as_str).unwrap_or("");
        if abbreviates(verb, "delete") || abbreviates(verb, "flush") {
            let dev = w
                .iter()
                .position(|x| x == "dev")
                .and_then(|p| w.get(p + 1))
                .or_else(|| w.get(pos + 2));
            out.extend(dev.cloned());
        }
    }
    out
}

/// The addresses `device`'s startup file (text `startup`) gives it.
pub(crate) fn from_startup(device: &str, startup: &str) -> Vec<Promised> {
    let gone = removed(startup);
    let mut out = Vec::new();
    for (n, line) in startup.lines().enumerate() {
        let t = line.trim();
        if t.starts_with('#') || t.contains('$') || t.contains('`') {
            continue;
        }
        for w in commands(t) {
            if let Some((iface, written)) = assignment(&w)
                && !gone.contains(&iface)
                && let Some(addr) = addr_of(&written)
            {
                out.push(Promised {
                    iface,
                    addr,
                    written,
                    file: format!("{device}.startup"),
                    line: n as u32 + 1,
                });
            }
        }
    }
    out
}

/// Which interfaces of `etc/network/interfaces` the startup brings up: `None` when it does not
/// use ifupdown, `Some(None)` for all automatic ones, `Some(Some(list))` for named ones.
fn ifupdown_scope(startup: &str) -> Option<Option<Vec<String>>> {
    let mut named: Vec<String> = Vec::new();
    let mut all = false;
    for w in startup
        .lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .flat_map(commands)
    {
        let joined = w.join(" ");
        if joined.contains("init.d/networking")
            || (w.iter().any(|x| x == "networking") && (w[0] == "service" || w[0] == "systemctl"))
        {
            all = true;
        } else if w[0] == "ifup" || w[0].ends_with("/ifup") {
            let args: Vec<&String> = w[1..].iter().filter(|x| !x.starts_with('-')).collect();
            if w.iter().any(|x| x == "-a" || x == "--all") || args.is_empty() {
                all = true;
            } else {
                named.extend(args.into_iter().cloned());
            }
        }
    }
    if all {
        Some(None)
    } else if named.is_empty() {
        None
    } else {
        Some(Some(named))
    }
}

/// The addresses `device`'s `etc/network/interfaces` (text `interfaces`) gives it, when its
/// startup (text `startup`) brings those interfaces up.
pub(crate) fn from_interfaces(device: &str, startup: &str, interfaces: &str) -> Vec<Promised> {
    let Some(scope) = ifupdown_scope(startup) else {
        return Vec::new();
    };
    let gone = removed(startup);
    let mut auto: Vec<String> = Vec::new();
    // (interface, address, netmask, line)
    let mut found: Vec<(String, String, Option<String>, u32)> = Vec::new();
    let mut current: Option<String> = None;
    for (n, line) in interfaces.lines().enumerate() {
        let w: Vec<&str> = line.split_whitespace().collect();
        match w.as_slice() {
            ["auto" | "allow-auto" | "allow-hotplug", names @ ..] => {
                auto.extend(names.iter().map(|s| s.to_string()));
                current = None;
            }
            ["iface", name, "inet" | "inet6", "static", ..] => current = Some(name.to_string()),
            ["iface" | "mapping" | "source" | "source-directory", ..] => {
                current = None;
            }
            ["address", a] => {
                if let Some(i) = &current {
                    found.push((i.clone(), a.to_string(), None, n as u32 + 1));
                }
            }
            ["netmask", m] => {
                if let Some(last) = found.last_mut().filter(|f| Some(&f.0) == current.as_ref()) {
                    last.2 = Some(m.to_string());
                }
            }
            _ => {}
        }
    }
    found
        .into_iter()
        .filter(|(i, ..)| match &scope {
            None => auto.contains(i),
            Some(list) => list.contains(i),
        })
        .filter(|(i, ..)| !gone.contains(i))
        .filter_map(|(iface, a, mask, line)| {
            let addr = addr_of(&a)?;
            let written = match mask {
                Some(m) if !a.contains('/') => format!("{a} netmask {m}"),
                _ => a,
            };
            Some(Promised {
                iface,
                addr,
                written,
                file: format!("{device}/etc/network/interfaces"),
                line,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brief(p: &[Promised]) -> Vec<String> {
        p.iter()
            .map(|x| format!("{}:{} {} {}", x.file, x.line, x.iface, x.written))
            .collect()
    }

    #[test]
    fn startup_commands_in_their_usual_spellings() {
        let s = "# addresses\n\
                 ip address add 10.0.0.1/24 dev eth0\n\
                 ip -4 a add dev eth1 10.0.1.1/24 brd +\n\
                 ip addr add 10.0.2.1/24 broadcast 10.0.2.255 dev eth2 && ip link set eth2 up\n\
                 ifconfig eth3 10.0.3.1 netmask 255.255.255.0 up\n\
                 ifconfig eth4 inet6 add 2001:db8::1/64\n\
                 ip -6 addr add 2001:db8:1::1/64 dev eth5\n\
                 ip addr add $ADDR dev eth6\n\
                 ip link set eth0 up\n\
                 ip route add default via 10.0.0.254\n\
                 ifconfig eth7 up\n\
                 ip addr add 10.0.8.1/24 dev eth8\n\
                 ip addr flush dev eth8\n";
        assert_eq!(
            brief(&from_startup("r1", s)),
            vec![
                "r1.startup:2 eth0 10.0.0.1/24",
                "r1.startup:3 eth1 10.0.1.1/24",
                "r1.startup:4 eth2 10.0.2.1/24",
                "r1.startup:5 eth3 10.0.3.1",
                "r1.startup:6 eth4 2001:db8::1/64",
                "r1.startup:7 eth5 2001:db8:1::1/64",
            ]
        );
    }

    #[test]
    fn interfaces_only_when_the_startup_brings_them_up() {
        let ifs = "auto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet static\n    address 10.0.0.1\n    netmask 255.255.255.0\n    gateway 10.0.0.254\n\niface eth1 inet static\n address 10.0.1.1/24\n\nauto eth2\niface eth2 inet dhcp\n\nallow-hotplug eth3\niface eth3 inet6 static\n address 2001:db8::3/64\n";
        assert_eq!(from_interfaces("r1", "ip link\n", ifs), vec![]);
        assert_eq!(
            brief(&from_interfaces(
                "r1",
                "/etc/init.d/networking restart\n",
                ifs
            )),
            vec![
                "r1/etc/network/interfaces:6 eth0 10.0.0.1 netmask 255.255.255.0",
                "r1/etc/network/interfaces:18 eth3 2001:db8::3/64",
            ]
        );
        assert_eq!(
            brief(&from_interfaces(
                "r1",
                "systemctl restart networking\n",
                ifs
            ))
            .len(),
            2
        );
        assert_eq!(
            brief(&from_interfaces("r1", "ifup eth1\n", ifs)),
            vec!["r1/etc/network/interfaces:11 eth1 10.0.1.1/24"]
        );
    }
}
