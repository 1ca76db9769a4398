//! Services hosts depend on: a resolver that does not answer (daemon down, port closed,
//! queries filtered for some clients), a name that resolves to an address nobody holds,
//! a web/DNS/DHCP server whose service port is closed, a failing web fetch.

use super::{Ctx, Finding};
use crate::baseline::filter::{self, FilterVerdict, Packet};
use crate::baseline::topo::DeviceKind;
use std::collections::BTreeMap;
use std::net::Ipv4Addr;

/// The service a server promises: the kind the summary gives it (`Dns servers: ns1`), else
/// the one its name suggests: (port, service, daemons that provide it).
fn promised(kind: Option<&str>, name: &str) -> Option<(u16, &'static str, &'static str)> {
    if kind.is_some_and(|k| !matches!(k, "dns" | "dhcp" | "web" | "http")) {
        return None;
    }
    let n = kind.map_or_else(|| name.to_ascii_lowercase(), str::to_string);
    if n.contains("dns") {
        Some((53, "DNS", "named/dnsmasq"))
    } else if n.contains("dhcp") {
        Some((67, "DHCP", "dhcpd/dnsmasq"))
    } else if n.contains("web") || n.contains("www") || n.contains("http") || n.contains("nginx") {
        Some((80, "HTTP", "apache2/nginx"))
    } else {
        None
    }
}

/// The server kind the summary gives a device.
fn kind_of<'a>(cx: &'a Ctx, device: &str) -> Option<&'a str> {
    cx.topo.server_kinds.get(device).map(String::as_str)
}

/// The findings of this family.
pub fn findings(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(closed_ports(cx));
    out.extend(dns(cx));
    out.extend(web(cx));
    out
}

fn closed_ports(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for node in cx.model.nodes.values() {
        if !matches!(node.role, DeviceKind::Server | DeviceKind::Host) {
            continue;
        }
        let Some(f) = node.facts.as_ref().filter(|f| f.sockets_known) else {
            continue;
        };
        let Some((port, service, daemon)) = promised(kind_of(cx, &node.name), &node.name) else {
            continue;
        };
        let proto_ok = if port == 67 {
            f.listeners.iter().any(|l| l.port == 67)
        } else {
            f.listens(port)
        };
        if !proto_ok {
            out.push(Finding::on(
                &node.name,
                3,
                format!(
                    "the {service} service on {} is down: nothing listens on port {port} ({daemon} not running)",
                    node.name
                ),
                format!("start the {service} service ({daemon}) on {} again", node.name),
            ));
        }
    }
    out
}

/// The service ports found open, for the report: `web1 listens on port 80 (HTTP)`.
pub fn open_services(cx: &Ctx) -> Vec<String> {
    cx.model
        .nodes
        .values()
        .filter_map(|n| {
            let f = n.facts.as_ref().filter(|f| f.sockets_known)?;
            let (port, service, _) = promised(kind_of(cx, &n.name), &n.name)?;
            let open = if port == 67 {
                f.listeners.iter().any(|l| l.port == 67)
            } else {
                f.listens(port)
            };
            open.then(|| format!("{} listens on port {port} ({service})", n.name))
        })
        .collect()
}

fn dns(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut by_server: BTreeMap<Ipv4Addr, Vec<&crate::baseline::gather::DnsQuery>> =
        BTreeMap::new();
    for q in &cx.obs.dns {
        by_server.entry(q.server).or_default().push(q);
    }
    for (server, qs) in by_server {
        let Some(owner) = cx.model.owners.get(&server).and_then(|o| o.first()) else {
            continue;
        };
        let s = owner.device.as_str();
        // A resolver the client cannot reach at all is a routing symptom, not a DNS fault.
        let reachable = |client: &str| {
            let pinged_bad = cx
                .obs
                .pings
                .iter()
                .any(|p| p.src == client && p.dst == server && !p.ok());
            let walk_ok = {
                let (there, back) = crate::baseline::path::round_trip(cx.model, client, server);
                there.stop == crate::baseline::path::Stop::Delivered
                    && back.is_some_and(|b| b.stop == crate::baseline::path::Stop::Delivered)
            };
            !pinged_bad && walk_ok
        };
        let failed: Vec<&&crate::baseline::gather::DnsQuery> = qs
            .iter()
            .filter(|q| q.status == "timeout" && reachable(&q.client))
            .collect();
        if !failed.is_empty() {
            let sf = cx.model.facts(s);
            let listening = sf.is_some_and(|f| f.listens(53));
            let mut rule = None;
            if let Some(f) = sf {
                let rules = filter::parse(&f.iptables);
                for q in &failed {
                    let Some(src) = crate::baseline::path::source_for(cx.model, &q.client, server)
                    else {
                        continue;
                    };
                    for proto in ["udp", "tcp"] {
                        let p = Packet {
                            src,
                            dst: server,
                            proto,
                            dport: Some(53),
                            iif: None,
                            oif: None,
                            reply: false,
                        };
                        if let FilterVerdict::Drop(line) = rules.verdict("INPUT", &p) {
                            rule = Some(line);
                        }
                    }
                }
            }
            let clients: Vec<&str> = failed.iter().map(|q| q.client.as_str()).collect();
            let answered: Vec<&str> = qs
                .iter()
                .filter(|q| q.status != "timeout")
                .map(|q| q.client.as_str())
                .collect();
            let contrast = if answered.is_empty() {
                String::new()
            } else {
                format!(", while it answers {}", answered.join(", "))
            };
            match (rule, listening) {
                (Some(line), _) => out.push(Finding::on(
                    s,
                    3,
                    format!(
                        "a firewall rule on the DNS server {s} drops queries (port 53) from {}: `{line}` (iptables INPUT){contrast}",
                        clients.join(", ")
                    ),
                    format!("delete the rule on {s}: iptables -D {}", line.trim_start_matches("-A ")),
                )),
                (None, false) => out.push(Finding::on(
                    s,
                    3,
                    format!(
                        "the DNS service on {s} is down: queries from {} time out and nothing listens on port 53 (named/dnsmasq not running)",
                        clients.join(", ")
                    ),
                    format!("start the DNS server (named/dnsmasq) on {s}"),
                )),
                (None, true) => out.push(Finding::on(
                    s,
                    2,
                    format!(
                        "the DNS server {s} does not answer queries from {}{contrast}",
                        clients.join(", ")
                    ),
                    format!("check the DNS server's configuration and filters on {s}"),
                )),
            }
        }
        // Answers that point at nobody, or at another device than the one the name names.
        let mut seen_names = std::collections::BTreeSet::new();
        for q in qs.iter().filter(|q| q.status == "NOERROR") {
            if !seen_names.insert(q.name.clone()) {
                continue;
            }
            for a in &q.answers {
                if let Some(holder) = cx.model.owners.get(a).and_then(|o| o.first()) {
                    if let Some(named) = named_device(cx, &q.name)
                        && named != holder.device
                        && let Some(right) = cx.model.primary_addr(&named)
                    {
                        out.push(Finding::on(
                            s,
                            3,
                            format!(
                                "wrong DNS record on {s}: {} resolves to {a}, the address of {}, while {named} (the server the name refers to) has {} (stale zone data served by named)",
                                q.name, holder.device, right.addr
                            ),
                            format!(
                                "correct the A record of {} to {} in the zone on {s} and reload named (rndc reload)",
                                q.name, right.addr
                            ),
                        ));
                    }
                    continue;
                }
                // The server the name refers to, or the only one a typo away from the record,
                // is the one that was renumbered.
                let by_name = named_device(cx, &q.name).and_then(|d| {
                    let f = cx.model.facts(&d)?;
                    f.addresses()
                        .into_iter()
                        .find(|(_, n)| n.network().contains(*a) || n.contains(*a))
                        .and_then(|(i, _)| {
                            cx.model
                                .owners
                                .values()
                                .flatten()
                                .find(|x| x.device == d && x.iface == i)
                        })
                });
                let near: Vec<&crate::baseline::lan::Attachment> = cx
                    .model
                    .owners
                    .iter()
                    .filter(|(ip, o)| {
                        *ip != a
                            && o.iter()
                                .any(|x| cx.model.is_end(&x.device) && x.net.contains(*a))
                            && typo_distance(&ip.to_string(), &a.to_string()) <= 2
                    })
                    .filter_map(|(_, o)| o.first())
                    .filter(|x| x.device != s)
                    .collect();
                let renumbered = by_name.or(match near.as_slice() {
                    [one] => Some(*one),
                    _ => None,
                });
                match renumbered {
                    Some(x) => out.push(Finding::on(
                        &x.device,
                        3,
                        format!(
                            "wrong address on {}: it has {} while DNS ({s}) and its clients expect {a} for {} (address typo on the server)",
                            x.device, x.net, q.name
                        ),
                        format!("give {} {} its address {a} again", x.device, x.iface),
                    )),
                    None => out.push(Finding::on(
                        s,
                        3,
                        format!(
                            "wrong DNS record on {s}: {} resolves to {a}, an address no device holds (stale zone data)",
                            q.name
                        ),
                        format!("correct the A record of {} in the zone on {s} and reload it", q.name),
                    )),
                }
            }
        }
    }
    out
}

/// The device a host name refers to: `web1.local` → `web_server_1` (same word stem and the
/// same number), when exactly one device matches.
fn named_device(cx: &Ctx, name: &str) -> Option<String> {
    let label = name.split('.').next()?.to_ascii_lowercase();
    let stem: String = label
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect();
    let num: String = label
        .chars()
        .skip_while(|c| c.is_ascii_alphabetic())
        .collect();
    if stem.len() < 2 || num.is_empty() || !num.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let hits: Vec<&String> = cx
        .model
        .nodes
        .keys()
        .filter(|d| {
            let words: Vec<String> = d
                .to_ascii_lowercase()
                .split(|c: char| !c.is_ascii_alphanumeric())
                .map(str::to_string)
                .collect();
            let last_num = words
                .iter()
                .rev()
                .find(|w| w.chars().all(|c| c.is_ascii_digit()));
            **d == label || (words.first().is_some_and(|w| *w == stem) && last_num == Some(&num))
        })
        .collect();
    match hits.as_slice() {
        [one] => Some((*one).clone()),
        _ => None,
    }
}

/// Edit distance between two short strings.
fn typo_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut cur = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur.push(sub.min(prev[j + 1] + 1).min(cur[j] + 1));
        }
        prev = cur;
    }
    prev[b.len()]
}

fn web(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for fetch in cx.obs.http.iter().filter(|f| f.code == 0 || f.code >= 500) {
        let host = fetch
            .url
            .trim_start_matches("http://")
            .split(['/', ':'])
            .next()
            .unwrap_or("");
        let Ok(ip) = host.parse::<Ipv4Addr>() else {
            continue; // names: the DNS rules speak
        };
        let Some(owner) = cx.model.owners.get(&ip).and_then(|o| o.first()) else {
            continue;
        };
        let d = owner.device.as_str();
        if cx.model.facts(d).is_some_and(|f| !f.listens(80)) {
            out.push(Finding::on(
                d,
                3,
                format!("the web service on {d} is down: fetching {} from {} fails and nothing listens on port 80", fetch.url, fetch.client),
                format!("start the web server (apache2/nginx) on {d}"),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_and_promises() {
        assert_eq!(typo_distance("10.200.0.12", "10.200.0.21"), 2);
        assert_eq!(typo_distance("10.200.0.12", "10.200.0.13"), 1);
        assert!(typo_distance("10.200.0.12", "10.9.9.9") > 2);
        assert_eq!(promised(None, "web_server_2").map(|p| p.0), Some(80));
        assert_eq!(promised(None, "dns_server").map(|p| p.0), Some(53));
        assert!(promised(None, "pc1").is_none());
        // The summary's kind comes before the name: `srv1` is a DNS server, `web_lb` a load
        // balancer that promises no HTTP port of its own.
        assert_eq!(promised(Some("dns"), "srv1").map(|p| p.0), Some(53));
        assert!(promised(Some("load_balancer"), "web_lb").is_none());
    }
}
