//! The gathering phases, in the order the baseline runs them: reachability, inventory,
//! control plane, sweep (and the ticket's own addresses), services.

use super::observations::{DnsQuery, Fetch, Observations, Ping, RouterState};
use super::prober::{Answer, Prober};
use crate::baseline::claims::Claims;
use crate::baseline::frr::{self, Config};
use crate::baseline::lan::Model;
use crate::baseline::probe::{self, Facts};
use crate::baseline::read;
use crate::baseline::topo::{DeviceKind, SummaryTopology};
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::net::Ipv4Addr;

/// Step 1: `get_reachability` (the paper's first move; it also names the end hosts).
pub async fn reachability(p: &mut Prober, obs: &mut Observations) {
    let Some(a) = p.call("get_reachability", json!({})).await else {
        return;
    };
    let r = read::reachability(&a.text);
    obs.reach_hosts
        .extend(r.hosts.iter().chain(&r.unaddressed).cloned());
    let hosts = ip_map(&a.text);
    for pair in &r.pairs {
        let ip = hosts.get(&pair.dst).copied();
        obs.reach
            .push((pair.src.clone(), pair.dst.clone(), ip, pair.status.clone()));
    }
    let failing = r.pairs.iter().filter(|x| !x.ok()).count();
    obs.checked.push(format!(
        "get_reachability between {} end hosts ({} pairs, {} failing)",
        r.hosts.len(),
        r.total,
        failing
    ));
}

/// The `hosts` map of a `get_reachability` answer (name → address).
fn ip_map(text: &str) -> BTreeMap<String, Ipv4Addr> {
    let start = text.find('{').unwrap_or(0);
    let mut de = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Value>();
    let Some(Ok(v)) = de.next() else {
        return BTreeMap::new();
    };
    v.get("hosts")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.parse().ok()?)))
                .collect()
        })
        .unwrap_or_default()
}

/// Step 2: one inventory probe per device (the script, else the read-only fallback). The
/// first device is asked alone, to learn whether the shell runs the script at all; the rest
/// in parallel.
pub async fn inventory(p: &mut Prober, obs: &mut Observations, topo: &SummaryTopology) {
    let names: Vec<String> = topo.devices.keys().cloned().collect();
    let mut answers: Vec<Option<Answer>> = Vec::new();
    for (i, chunk) in [&names[..names.len().min(1)], &names[names.len().min(1)..]]
        .into_iter()
        .enumerate()
    {
        let jobs = chunk
            .iter()
            .map(|n| (n.clone(), probe::SCRIPT.to_string()))
            .collect();
        let got = p.shells(jobs).await;
        if i == 0
            && let Some(Some(a)) = got.first()
            && !probe::parse(&a.text).understood
            && (a.failed || !a.text.contains("@@end"))
        {
            // The shell does not run our script (a scripted mock, a stripped image).
            p.shell = false;
        }
        answers.extend(got);
    }
    // An answer cut by the output cap lost its tail, the routes: ask for them alone.
    let cut: Vec<(String, String)> = names
        .iter()
        .zip(&answers)
        .filter(|(_, a)| {
            a.as_ref()
                .is_some_and(|a| a.text.contains("@@fwd") && !a.text.contains("@@end"))
        })
        .map(|(n, _)| (n.clone(), probe::ROUTES_SCRIPT.to_string()))
        .collect();
    let mut rerouted: BTreeMap<String, Vec<probe::Route>> = BTreeMap::new();
    if !cut.is_empty() {
        let devices: Vec<String> = cut.iter().map(|(n, _)| n.clone()).collect();
        for (n, a) in devices.into_iter().zip(p.shells(cut).await) {
            if let Some(a) = a.filter(|a| a.text.contains("@@route")) {
                rerouted.insert(n, probe::parse_routes(&a.text));
            }
        }
    }
    for (name, a) in names.iter().zip(answers) {
        let mut facts = a.map(|a| probe::parse(&a.text)).filter(|f| f.understood);
        if let (Some(f), Some(routes)) = (facts.as_mut(), rerouted.remove(name)) {
            f.routes = routes;
        }
        if facts.is_none() && !p.shell && !p.out_of_budget {
            // An end host of get_reachability has no FRR daemons file worth reading.
            let router_hint = !obs.reach_hosts.contains(name)
                && topo
                    .devices
                    .get(name)
                    .is_some_and(|d| d.role == DeviceKind::Router);
            facts = fallback(p, name, router_hint).await;
        }
        match facts {
            Some(f) => {
                obs.facts.insert(name.clone(), f);
            }
            None => obs.unprobed.push(name.clone()),
        }
    }
    obs.checked.push(format!(
        "links, addresses, routes, processes, sockets and packet filters of {} devices",
        obs.facts.len()
    ));
}

async fn fallback(p: &mut Prober, name: &str, router_hint: bool) -> Option<Facts> {
    let hc = p
        .call("get_host_net_config", json!({"host_name": name}))
        .await?;
    let mut f = if hc.text.contains("ip_addr") {
        let ns = p
            .call("netstat", json!({"host_name": name, "args": "-tulnp"}))
            .await
            .filter(|a| !a.failed)
            .map(|a| a.text);
        probe::facts_from_host_config(&hc.text, ns.as_deref())
    } else {
        Facts::default()
    };
    if (router_hint || f.addresses().len() >= 2)
        && let Some(a) = p
            .call(
                "cat_file",
                json!({"host_name": name, "file_path": "/etc/frr/daemons"}),
            )
            .await
            .filter(|a| !a.failed)
    {
        f.enabled_daemons = read::enabled_daemons(&a.text)
            .into_iter()
            .filter(|d| d != "staticd")
            .collect();
        f.understood |= !f.enabled_daemons.is_empty();
    }
    f.understood.then_some(f)
}

/// Step 3: the control plane of every router that runs (or should run) FRR: the running
/// configurations first, then the state of each protocol found, all routers in parallel.
pub async fn control_plane(p: &mut Prober, obs: &mut Observations, model: &Model) {
    let mut asked: Vec<String> = Vec::new();
    for node in model.with_role(DeviceKind::Router) {
        let f = node.facts.as_ref();
        let frr_expected =
            f.is_none_or(|f| f.runs("zebra") || !f.enabled_daemons.is_empty() || f.has_frr_conf);
        if !frr_expected {
            continue;
        }
        if f.is_some_and(|f| f.full && !f.runs("zebra")) {
            let st = RouterState {
                frr_down: true,
                ..Default::default()
            };
            obs.routers.insert(node.name.clone(), st);
            continue;
        }
        asked.push(node.name.clone());
    }
    let reqs = asked
        .iter()
        .map(|r| ("frr_show_running_config", json!({"router_name": r})))
        .collect();
    let configs = p.call_many(reqs).await;
    // Then the protocol states each configuration calls for.
    let mut queries: Vec<(String, &'static str)> = Vec::new();
    let mut states: BTreeMap<String, RouterState> = BTreeMap::new();
    for (r, a) in asked.iter().zip(configs) {
        let Some(a) = a else { continue };
        let mut st = RouterState::default();
        if frr::daemon_absent(&a.text) {
            st.frr_down = true;
            states.insert(r.clone(), st);
            continue;
        }
        let cfg = Config::parse(&a.text);
        let f = model.facts(r);
        // Ask a protocol when it is configured, enabled, running, or nothing is known.
        let ask = |d: &str, configured: bool| {
            configured
                || f.is_none_or(|f| !f.full)
                || f.is_some_and(|f| f.runs(d) || f.enabled_daemons.contains(d))
        };
        if ask("ospfd", cfg.ospf.is_some()) {
            queries.push((r.clone(), "show ip ospf neighbor"));
        }
        if ask("bgpd", cfg.bgp.is_some()) {
            queries.push((r.clone(), "show bgp summary"));
        }
        if ask("ripd", cfg.rip.is_some()) {
            queries.push((r.clone(), "show ip rip status"));
        }
        if cfg.understood {
            st.running = Some(a.text.clone());
        }
        st.config = cfg.understood.then_some(cfg);
        states.insert(r.clone(), st);
    }
    // The saved configurations, to see what changed at run time.
    let with_file: Vec<String> = states
        .iter()
        .filter(|(r, st)| st.running.is_some() && model.facts(r).is_some_and(|f| f.has_frr_conf))
        .map(|(r, _)| r.clone())
        .collect();
    let reqs = with_file
        .iter()
        .map(|r| {
            (
                "cat_file",
                json!({"host_name": r, "file_path": "/etc/frr/frr.conf"}),
            )
        })
        .collect();
    for (r, a) in with_file.iter().zip(p.call_many(reqs).await) {
        if let (Some(a), Some(st)) = (a, states.get_mut(r))
            && !a.failed
        {
            st.saved = Some(a.text);
        }
    }
    let reqs = queries
        .iter()
        .map(|(r, c)| ("frr_exec", json!({"router_name": r, "command": c})))
        .collect();
    let answers = p.call_many(reqs).await;
    for ((r, c), a) in queries.iter().zip(answers) {
        let (Some(a), Some(st)) = (a, states.get_mut(r)) else {
            continue;
        };
        match *c {
            "show ip ospf neighbor" => {
                st.ospf_absent = frr::daemon_absent(&a.text);
                st.ospf = frr::ospf_neighbors(&a.text);
            }
            "show bgp summary" => {
                st.bgp_absent = frr::daemon_absent(&a.text);
                st.bgp = frr::bgp_sessions(&a.text);
            }
            _ => {
                st.rip_absent = frr::daemon_absent(&a.text);
                st.rip = frr::rip_status(&a.text);
            }
        }
    }
    obs.routers.extend(states);
    if !obs.routers.is_empty() {
        let names: Vec<&str> = obs.routers.keys().map(String::as_str).collect();
        obs.checked.push(format!(
            "FRR configuration and routing neighbours of {}",
            names.join(", ")
        ));
    }
}

/// Step 4: pings from one end host per LAN (plus suspects and the ticket's hosts) to every
/// end host and every LAN gateway, in parallel inside each source.
pub async fn sweep(
    p: &mut Prober,
    obs: &mut Observations,
    model: &Model,
    claims: &Claims,
    suspects: &BTreeSet<String>,
) {
    let targets = sweep_targets(model, claims);
    if targets.is_empty() {
        return;
    }
    let sources = sweep_sources(model, claims, suspects);
    let list: Vec<String> = targets.iter().map(Ipv4Addr::to_string).collect();
    let script = format!(
        "for a in {}; do ( r=$(ping -n -q -c 3 -i 0.2 -W 1 $a 2>&1 | sed -n 's/.* \\([0-9]*\\) received.*/\\1/p'); echo \"@@ping $a ${{r:-0}}\" ) & done; wait",
        list.join(" ")
    );
    let mut done = Vec::new();
    let jobs = sources
        .iter()
        .map(|s| (s.clone(), script.clone()))
        .collect();
    let answers = p.shells(jobs).await;
    for (src, a) in sources.into_iter().zip(answers) {
        let Some(a) = a else { continue };
        for line in a.text.lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            if let ["@@ping", ip, n] = w.as_slice()
                && let (Ok(ip), Ok(n)) = (ip.parse(), n.parse())
            {
                obs.pings.push(Ping {
                    src: src.clone(),
                    dst: ip,
                    received: n,
                    sent: 3,
                });
            }
        }
        done.push(src);
    }
    // The pings from a device to its own addresses say nothing.
    obs.pings.retain(|x| {
        !model
            .facts(&x.src)
            .is_some_and(|f| f.addresses().iter().any(|(_, n)| n.addr == x.dst))
    });
    if !done.is_empty() {
        let failing = obs.pings.iter().filter(|x| !x.ok()).count();
        obs.checked.push(format!(
            "pings from {} to {} end-host and gateway addresses ({} of {} failing)",
            done.join(", "),
            targets.len(),
            failing,
            obs.pings.len()
        ));
    }
}

/// The ticket's addresses the sweep did not cover (the shell was unavailable, or they are not
/// lab addresses): `ping_pair` from the ticket's end host (or the first end host).
pub async fn claim_pings(p: &mut Prober, obs: &mut Observations, model: &Model, claims: &Claims) {
    let src = claims
        .devices
        .iter()
        .find(|d| model.is_end(d) && model.facts(d).is_some())
        .cloned()
        .or_else(|| {
            model
                .nodes
                .values()
                .find(|n| model.is_end(&n.name) && n.facts.is_some())
                .map(|n| n.name.clone())
        });
    let Some(src) = src else { return };
    for ip in claims.addresses.iter().take(3) {
        let Ok(addr) = ip.parse::<Ipv4Addr>() else {
            continue;
        };
        if obs.pings.iter().any(|x| x.dst == addr) {
            continue;
        }
        let Some(outcome) = ping_and_record(p, obs, &src, addr).await else {
            return;
        };
        obs.checked.push(format!("ping {src} -> {ip} ({outcome})"));
    }
}

/// Pings `dst` from `src` with three echoes through `ping_pair` and records the result in
/// `obs.pings`; returns the outcome in words (`0% loss`, `no answer`), or `None` when the
/// budget is spent.
pub async fn ping_and_record(
    p: &mut Prober,
    obs: &mut Observations,
    src: &str,
    dst: Ipv4Addr,
) -> Option<String> {
    let a = p
        .call(
            "ping_pair",
            json!({"host_a": src, "host_b": dst.to_string(), "count": 3}),
        )
        .await?;
    let loss = read::ping_loss(&a.text);
    let received = match loss {
        Some(l) => ((100.0 - l) / 100.0 * 3.0).round() as u32,
        None => 0,
    };
    obs.pings.push(Ping {
        src: src.to_string(),
        dst,
        received,
        sent: 3,
    });
    Some(match loss {
        Some(l) => format!("{l}% loss"),
        None => "no answer".into(),
    })
}

/// End hosts' addresses and default gateways, routers' addresses on LANs with end hosts,
/// and lab addresses the ticket names.
pub fn sweep_targets(model: &Model, claims: &Claims) -> Vec<Ipv4Addr> {
    let mut out: BTreeSet<Ipv4Addr> = BTreeSet::new();
    for atts in model.domains.values() {
        let has_end = atts.iter().any(|a| model.is_end(&a.device));
        for a in atts {
            if model.is_end(&a.device) || (has_end && model.role(&a.device) == DeviceKind::Router) {
                out.insert(a.net.addr);
            }
        }
    }
    // The gateways the end hosts use, held where the model can see it or not: their answer
    // is the direct evidence about them.
    for node in model.nodes.values().filter(|n| model.is_end(&n.name)) {
        if let Some(g) = node
            .facts
            .as_ref()
            .and_then(|f| f.default_route())
            .and_then(|r| r.via.first())
        {
            out.insert(*g);
        }
    }
    for ip in &claims.addresses {
        if let Ok(ip) = ip.parse::<Ipv4Addr>()
            && model.owners.contains_key(&ip)
        {
            out.insert(ip);
        }
    }
    out.into_iter().collect()
}

/// The first end host of each LAN, the suspects and the ticket's end hosts (at most 12).
pub fn sweep_sources(model: &Model, claims: &Claims, suspects: &BTreeSet<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let push = |d: &str, out: &mut Vec<String>| {
        if !out.iter().any(|x| x == d) && model.facts(d).is_some() {
            out.push(d.to_string());
        }
    };
    for d in claims.devices.iter().filter(|d| model.is_end(d)) {
        push(d, &mut out);
    }
    for d in suspects.iter().filter(|d| model.is_end(d)) {
        push(d, &mut out);
    }
    for atts in model.domains.values() {
        let mut ends: Vec<&str> = atts
            .iter()
            .filter(|a| model.is_end(&a.device))
            .map(|a| a.device.as_str())
            .collect();
        ends.sort_by_key(|d| natural(d));
        if let Some(first) = ends.first() {
            push(first, &mut out);
        }
    }
    out.truncate(12);
    out
}

/// Orders `pc2` before `pc10`.
pub fn natural(s: &str) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut text = String::new();
    let mut num: Option<u64> = None;
    for c in s.chars() {
        match (c.to_digit(10), num) {
            (Some(d), Some(n)) => num = Some(n.saturating_mul(10).saturating_add(d.into())),
            (Some(d), None) => num = Some(d.into()),
            (None, Some(n)) => {
                out.push((std::mem::take(&mut text), n));
                num = None;
                text.push(c);
            }
            (None, None) => text.push(c),
        }
    }
    out.push((text, num.unwrap_or(u64::MAX)));
    out
}

/// Step 5: services the hosts depend on — every lab resolver the hosts use, and the ticket's
/// names and web addresses.
pub async fn services(p: &mut Prober, obs: &mut Observations, model: &Model, claims: &Claims) {
    // Resolvers that are lab devices, with one client per LAN that uses each.
    let mut per_server: BTreeMap<Ipv4Addr, Vec<String>> = BTreeMap::new();
    let mut seen_domains: BTreeSet<(Ipv4Addr, usize)> = BTreeSet::new();
    for node in model.nodes.values().filter(|n| model.is_end(&n.name)) {
        let Some(f) = &node.facts else { continue };
        // One client per LAN and resolver is enough to tell a filtered LAN from a dead server.
        let dom = f
            .addresses()
            .first()
            .and_then(|(i, _)| model.domain(&node.name, i))
            .unwrap_or(usize::MAX);
        for ns in &f.nameservers {
            if model.owners.contains_key(ns) && seen_domains.insert((*ns, dom)) {
                per_server.entry(*ns).or_default().push(node.name.clone());
            }
        }
    }
    // The ticket's names (a few), else a name any server answers for (or refuses).
    let mut names: Vec<String> = claims.domains.iter().take(4).cloned().collect();
    if names.is_empty() {
        names.push("localhost".to_string());
    }
    let mut jobs: Vec<(String, String)> = Vec::new();
    let mut meta: Vec<(String, Ipv4Addr)> = Vec::new();
    for (server, clients) in &per_server {
        for client in clients.iter().take(4) {
            let script = format!(
                "dig_one() {{ echo \"@@dns $1\"; dig +time=2 +tries=1 @{server} \"$1\" A 2>&1 | grep -E 'status:|timed out|no servers|^[^;].*[[:space:]]A[[:space:]]' | head -6; }}; for n in {}; do dig_one $n; done",
                names.join(" ")
            );
            jobs.push((client.clone(), script));
            meta.push((client.clone(), *server));
        }
        obs.checked.push(format!(
            "DNS queries for {} to {server} from {}",
            names.join(", "),
            clients
                .iter()
                .take(4)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    let answers = p.shells(jobs).await;
    for ((client, server), a) in meta.into_iter().zip(answers) {
        let Some(a) = a else { continue };
        for block in a.text.split("@@dns ").skip(1) {
            let (name, rest) = block.split_once('\n').unwrap_or((block, ""));
            obs.dns.push(DnsQuery {
                client: client.clone(),
                server,
                name: name.trim().to_string(),
                status: dns_status(rest),
                answers: dns_answers(rest),
            });
        }
    }
    // HTTP: the ticket's names (and web servers it names), from a host the ticket names or
    // the first end host.
    let client = claims
        .devices
        .iter()
        .find(|d| model.role(d) == DeviceKind::Host && model.facts(d).is_some())
        .cloned()
        .or_else(|| {
            model
                .with_role(DeviceKind::Host)
                .into_iter()
                .find(|n| n.facts.is_some())
                .map(|n| n.name.clone())
        });
    let Some(client) = client else { return };
    let mut urls: Vec<String> = claims
        .domains
        .iter()
        .take(2)
        .map(|d| format!("http://{d}/"))
        .collect();
    for d in &claims.devices {
        let serves_web = model
            .facts(d)
            .is_some_and(|f| f.listens(80) || f.runs("apache2") || f.runs("nginx"));
        if model.role(d) == DeviceKind::Server
            && serves_web
            && let Some(a) = model.primary_addr(d)
        {
            urls.push(format!("http://{}/", a.addr));
        }
    }
    for url in urls.into_iter().take(3) {
        if let Some(a) = p
            .call(
                "curl_web_test",
                json!({"host_name": client, "url": url, "times": 1}),
            )
            .await
        {
            let code = a
                .text
                .split("http_code:")
                .nth(1)
                .and_then(|r| r.get(..3))
                .and_then(|c| c.parse().ok())
                .unwrap_or(0);
            obs.http.push(Fetch {
                client: client.clone(),
                url: url.clone(),
                code,
                detail: a
                    .text
                    .lines()
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(160)
                    .collect(),
            });
            obs.checked
                .push(format!("HTTP fetch of {url} from {client}"));
        }
    }
}

fn dns_status(text: &str) -> String {
    if let Some(rest) = text.split("status: ").nth(1) {
        return rest
            .split([',', ' '])
            .next()
            .unwrap_or("")
            .trim()
            .to_string();
    }
    if text.contains("timed out") || text.contains("no servers") {
        return "timeout".into();
    }
    "unknown".into()
}

fn dns_answers(text: &str) -> Vec<Ipv4Addr> {
    text.lines()
        .filter(|l| !l.starts_with(';'))
        .filter_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() >= 5 && w[3] == "A")
                .then(|| w[4].parse().ok())
                .flatten()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultbench_core::toolbox::{ToolError, Toolbox};
    use std::sync::Arc;
    use std::time::Instant;

    #[test]
    fn dig_and_order() {
        let ok = ";; ->>HEADER<<- opcode: QUERY, status: NOERROR, id: 1\nweb1.local.\t\t300\tIN\tA\t10.200.0.11\n";
        assert_eq!(dns_status(ok), "NOERROR");
        assert_eq!(
            dns_answers(ok),
            vec!["10.200.0.11".parse::<Ipv4Addr>().unwrap()]
        );
        assert_eq!(
            dns_status(";; connection timed out; no servers could be reached"),
            "timeout"
        );
        assert_eq!(
            dns_status(";; ->>HEADER<<- opcode: QUERY, status: REFUSED, id: 9"),
            "REFUSED"
        );
        let mut v = vec!["pc10", "pc2", "cs_lab1", "pc1"];
        v.sort_by_key(|d| natural(d));
        assert_eq!(v, vec!["cs_lab1", "pc1", "pc2", "pc10"]);
        let map = ip_map(r#"{"hosts":{"pc1":"10.0.0.2"},"results":[]}"#);
        assert_eq!(map["pc1"].to_string(), "10.0.0.2");
    }

    /// A device whose inventory answer the output cap cut: `@@end` missing.
    struct CutRouter;

    #[async_trait::async_trait]
    impl Toolbox for CutRouter {
        fn specs(&self) -> Vec<faultbench_core::toolbox::ToolSpec> {
            vec![]
        }
        async fn call(
            &self,
            tool: &str,
            args: Value,
        ) -> Result<faultbench_core::toolbox::ToolOutput, ToolError> {
            let cmd = args["command"].as_str().unwrap_or("");
            let text = match tool {
                "exec_shell" if cmd == probe::ROUTES_SCRIPT => {
                    "@@route\n10.0.1.0/24 dev eth0 proto kernel\n10.5.0.0/24 via 10.0.1.2 dev eth0 proto ospf\n@@end\n"
                }
                "exec_shell" if cmd == probe::SCRIPT => {
                    "@@fwd\n1\n@@link\n2: eth0: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500 state UP\n@@addr\neth0 10.0.1.1/24\n@@proc\nzebra ospfd\n@@route\n10.0.1.0/24 dev eth0 pro\n...[truncated: 900 of 4900 chars not shown]"
                }
                _ => return Err(ToolError::UnknownTool(tool.into())),
            };
            Ok(faultbench_core::toolbox::ToolOutput::text(text))
        }
    }

    #[tokio::test]
    async fn a_cut_inventory_gets_its_routes_asked_again() {
        let topo = SummaryTopology::parse("Devices:\n  r1: eth0=A\n");
        let mut p = Prober::new(
            Arc::new(CutRouter),
            20,
            Instant::now() + std::time::Duration::from_secs(30),
        );
        let mut obs = Observations::default();
        inventory(&mut p, &mut obs, &topo).await;
        let routes: Vec<String> = obs.facts["r1"]
            .routes
            .iter()
            .map(|r| r.dest.to_string())
            .collect();
        assert_eq!(routes, vec!["10.0.1.0/24", "10.5.0.0/24"]);
        assert_eq!(p.calls, 2, "one inventory, one routes-only call");
    }
}
