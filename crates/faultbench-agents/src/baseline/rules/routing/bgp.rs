//! BGP sessions that are down and why: address typo, AS mismatch, missing neighbour
//! statement, TCP 179 filtered.

use super::*;

/// The AS a router presents to the peer at `peer_addr`.
pub(super) fn presented_as(c: &Config, peer_addr: &str) -> Option<u32> {
    let b = c.bgp.as_ref()?;
    Some(
        b.neighbors
            .get(peer_addr)
            .and_then(|n| n.local_as)
            .unwrap_or(b.asn),
    )
}

pub(super) fn as_matches(expected: &str, presented: u32, own: u32) -> bool {
    match expected {
        "external" => presented != own,
        "internal" => presented == own,
        n => n.parse::<u32>().is_ok_and(|e| e == presented),
    }
}

pub(super) fn drops_tcp179(cx: &Ctx, dev: &str, src: Ipv4Addr, dst: Ipv4Addr) -> Option<String> {
    let f = cx.model.facts(dev)?;
    let rules = filter::parse(&f.iptables);
    for (chain, s, d) in [("INPUT", src, dst), ("OUTPUT", dst, src)] {
        let p = Packet {
            src: s,
            dst: d,
            proto: "tcp",
            dport: Some(179),
            iif: None,
            oif: None,
            reply: false,
        };
        if let FilterVerdict::Drop(line) = rules.verdict(chain, &p) {
            return Some(line);
        }
    }
    None
}

pub(super) fn bgp(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (r, st) in &cx.obs.routers {
        let (Some(c), Some(sessions)) = (st.config.as_ref(), st.bgp.as_ref()) else {
            continue;
        };
        let Some(b) = c.bgp.as_ref() else { continue };
        for (peer, n) in &b.neighbors {
            let Ok(ip) = peer.parse::<Ipv4Addr>() else {
                continue;
            };
            let up = sessions.iter().any(|s| s.peer == *peer && s.up);
            if up {
                continue;
            }
            let state = sessions
                .iter()
                .find(|s| s.peer == *peer)
                .map(|s| s.state.clone())
                .unwrap_or_else(|| "not listed".into());
            if n.shutdown {
                out.push(Finding::on(
                    r,
                    3,
                    format!("BGP neighbor {peer} is administratively shut down on {r} (neighbor {peer} shutdown)"),
                    format!("no neighbor {peer} shutdown under router bgp on {r}"),
                ));
                continue;
            }
            let my_att = cx
                .model
                .facts(r)
                .and_then(|f| f.addresses().into_iter().find(|(_, a)| a.contains(ip)));
            let Some(owner) = cx.model.owners.get(&ip).and_then(|o| o.first()) else {
                // Nobody holds the neighbour address: a typo here, or the peer was re-addressed.
                let across: Option<&Attachment> =
                    my_att.as_ref().and_then(|(i, _)| {
                        let d = cx.model.domain(r, i)?;
                        cx.model.domains.get(&d)?.iter().find(|a| {
                            a.device != *r && cx.model.role(&a.device) == DeviceKind::Router
                        })
                    });
                match across {
                    Some(p) if !p.net.contains(ip) => {
                        out.push(Finding::on(
                            &p.device,
                            2,
                            format!(
                                "wrong interface address on {} {}: {} is outside the link's subnet; {r} still peers with {peer} (BGP session {state})",
                                p.device, p.iface, p.net
                            ),
                            format!("restore the address of {} {}", p.device, p.iface),
                        ));
                    }
                    Some(p) => out.push(Finding::on(
                        r,
                        3,
                        format!(
                            "BGP neighbor address typo on {r}: neighbor {peer} matches no device; the router on that link, {}, has {} (session {state})",
                            p.device, p.net.addr
                        ),
                        format!("fix the neighbor statement on {r}: neighbor {} remote-as …", p.net.addr),
                    )),
                    None => out.push(Finding::on(
                        r,
                        3,
                        format!("BGP neighbor {peer} configured on {r} matches no device in the lab (neighbor address typo; session {state})"),
                        format!("fix the neighbor address under router bgp on {r}"),
                    )),
                }
                continue;
            };
            let p = owner.device.as_str();
            let Some(pc) = cfg(cx, p) else { continue };
            let Some(pb) = pc.bgp.as_ref() else {
                continue; // bgpd not running there: the daemon rule speaks
            };
            let my_addr = my_att.map(|(_, a)| a.addr);
            let back = my_addr.and_then(|a| pb.neighbors.get(&a.to_string()).map(|n| (a, n)));
            let Some((my_addr, back_n)) = back else {
                out.push(Finding::on(
                    p,
                    3,
                    format!(
                        "BGP neighbor statement missing on {p}: {r} peers with {peer} but {p} has no neighbor statement for {r}'s address (session {state})"
                    ),
                    format!("add `neighbor <{r}'s address> remote-as {}` under router bgp on {p}", b.asn),
                ));
                continue;
            };
            // AS numbers, both directions.
            let expected_p = n.remote_as.clone().unwrap_or_default();
            let presented_p = presented_as(pc, &my_addr.to_string()).unwrap_or(pb.asn);
            let expected_r = back_n.remote_as.clone().unwrap_or_default();
            let presented_r = presented_as(c, peer).unwrap_or(b.asn);
            let bad1 = !as_matches(&expected_p, presented_p, b.asn);
            let bad2 = !as_matches(&expected_r, presented_r, pb.asn);
            if bad1 || bad2 {
                let (who, what) = if bad1 && back_n.local_as.is_some() {
                    (
                        p,
                        format!(
                            "{p} presents AS {presented_p} to {r} through a local-as override, but {r} expects remote-as {expected_p}"
                        ),
                    )
                } else if bad2 && n.local_as.is_some() {
                    (
                        r.as_str(),
                        format!(
                            "{r} presents AS {presented_r} to {p} through a local-as override, but {p} expects remote-as {expected_r}"
                        ),
                    )
                } else if bad1 && !bad2 {
                    (
                        r.as_str(),
                        format!(
                            "{r} has `neighbor {peer} remote-as {expected_p}` but {p} is AS {presented_p}"
                        ),
                    )
                } else if bad2 && !bad1 {
                    (
                        p,
                        format!(
                            "{p} has `neighbor {my_addr} remote-as {expected_r}` but {r} is AS {presented_r}"
                        ),
                    )
                } else {
                    (
                        r.as_str(),
                        format!(
                            "{r} (AS {presented_r}) and {p} (AS {presented_p}) each expect a different AS from the other ({expected_p} / {expected_r})"
                        ),
                    )
                };
                out.push(Finding::on(
                    who,
                    3,
                    format!("BGP AS mismatch (wrong remote-as): {what}; the session stays {state}"),
                    format!("make the remote-as/local-as on {who} match the peer's AS"),
                ));
                continue;
            }
            let mut filtered = false;
            for (dev, src, dst) in [(r.as_str(), ip, my_addr), (p, my_addr, ip)] {
                if let Some(line) = drops_tcp179(cx, dev, src, dst) {
                    filtered = true;
                    out.push(Finding::on(
                        dev,
                        3,
                        format!("a firewall rule on {dev} blocks BGP (TCP port 179): `{line}` (iptables), so the session {r}-{p} stays {state}"),
                        format!("delete the iptables rule `{line}` on {dev}"),
                    ));
                }
            }
            if !filtered {
                out.push(Finding::on(
                    r,
                    2,
                    format!("the BGP session from {r} to {p} ({peer}) is not established (state {state})"),
                    "check the link and the neighbor configuration on both sides",
                ));
            }
        }
    }
    out
}
