//! `baseline`: a deterministic agent with no language model.
//!
//! It reads only the ticket, the topology summary and tool outputs, in four steps:
//!
//! 1. **Reachability.** `get_reachability` over the lab's hosts.
//! 2. **The ticket's claims.** Every topology device it names is examined (host: addresses,
//!    interface states, default route; router: as in the sweep); every address it names is
//!    pinged from a named (or the first) host; every domain is fetched with `curl_web_test`.
//! 3. **Sweep.** Each router: enabled daemons (`/etc/frr/daemons`), interface states, OSPF
//!    neighbours, BGP sessions. Each server whose name says DNS/web/DHCP: its listening ports.
//!    Hosts that fail every reachability pair they are in: addresses and default route.
//! 4. **Verdict.** Findings carry a weight (3: a direct fault such as a stopped daemon or a
//!    cabled interface down; 2: a broken state such as a down BGP session or unreachable
//!    pairs; 1: weak). The network is called faulty when a finding of weight ≥ 2 exists; the
//!    faulty devices are those of the heaviest findings. With none, the answer is "no fault"
//!    and lists what was checked — the evidence-based criterion the paper finds agents lack.
//!
//! It makes the whole pipeline runnable without an API key, and is an honest floor for
//! LLM agents. It spends no model turns (`turns` is empty) and a bounded number of tool calls.

mod claims;
mod read;
mod topo;

pub use claims::{Claims, Symptom};
pub use topo::{Role, Topology};

use faultbench_core::Diagnosis;
use faultbench_core::agent::{Agent, AgentInput, AgentOutcome};
use faultbench_core::toolbox::Toolbox;
use read::DaemonView;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

/// A piece of evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The device it is about, if any.
    pub device: Option<String>,
    /// 3 direct fault, 2 broken state, 1 weak.
    pub weight: u8,
    /// What was seen.
    pub what: String,
    /// What would fix it.
    pub fix: String,
}

/// The deterministic baseline agent.
///
/// ```
/// use faultbench_agents::BaselineAgent;
/// use faultbench_core::agent::{Agent, AgentInput, Budget};
/// # use faultbench_core::toolbox::{Toolbox, ToolSpec, ToolOutput, ToolError};
/// # struct Healthy;
/// # #[async_trait::async_trait]
/// # impl Toolbox for Healthy {
/// #     fn specs(&self) -> Vec<ToolSpec> { vec![] }
/// #     async fn call(&self, n: &str, _a: serde_json::Value) -> Result<ToolOutput, ToolError> {
/// #         match n {
/// #             "get_reachability" => Ok(ToolOutput::text(r#"{"results":[{"src":"pc1","dst":"pc2","status":"ok"},{"src":"pc2","dst":"pc1","status":"ok"}]}"#)),
/// #             _ => Err(ToolError::UnknownTool(n.into())),
/// #         }
/// #     }
/// # }
/// use std::sync::Arc;
///
/// let input = AgentInput::new("Devices:\n  pc1: eth0=A\n  pc2: eth0=A", "pc2 seems down?", Budget::default());
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let out = BaselineAgent::new().run(&input, Arc::new(Healthy)).await;
/// let d = out.diagnosis();
/// assert_eq!(d.is_anomaly, Some(false));
/// assert!(out.tool_calls >= 1 && out.turns.is_empty());
/// # });
/// ```
pub struct BaselineAgent {
    max_tool_calls: u32,
}

impl Default for BaselineAgent {
    fn default() -> Self {
        BaselineAgent::new()
    }
}

impl BaselineAgent {
    /// A baseline agent with the default cap of 80 tool calls.
    pub fn new() -> Self {
        BaselineAgent { max_tool_calls: 80 }
    }

    /// Caps the tool calls of one run.
    pub fn with_max_tool_calls(mut self, n: u32) -> Self {
        self.max_tool_calls = n.max(1);
        self
    }
}

/// Runs tools within the call cap and the wall-clock deadline.
struct Prober {
    tools: Arc<dyn Toolbox>,
    calls: u32,
    max_calls: u32,
    deadline: Instant,
    out_of_budget: bool,
}

impl Prober {
    /// Calls a tool; `None` when the budget is spent or the tool failed to run at all.
    async fn call(&mut self, tool: &str, args: Value) -> Option<(String, bool)> {
        if self.calls >= self.max_calls || Instant::now() >= self.deadline {
            self.out_of_budget = true;
            return None;
        }
        self.calls += 1;
        let remaining = self.deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(remaining, self.tools.call(tool, args)).await {
            Ok(Ok(out)) => Some((out.text, out.is_error)),
            Ok(Err(e)) => Some((format!("ERROR: {e}"), true)),
            Err(_) => {
                self.out_of_budget = true;
                None
            }
        }
    }
}

/// Everything the run learned.
#[derive(Default)]
struct Evidence {
    findings: Vec<Finding>,
    checked: Vec<String>,
    failing_pairs: Vec<(String, String, String)>,
    pairs_total: usize,
    /// Routers whose daemon said "not running" without a daemons file to say it should run.
    silent_daemons: Vec<(String, &'static str)>,
    /// Routers where a daemon answered.
    running_daemons: Vec<(String, &'static str)>,
}

impl Evidence {
    fn add(&mut self, device: Option<&str>, weight: u8, what: String, fix: &str) {
        if self
            .findings
            .iter()
            .any(|f| f.device.as_deref() == device && f.what == what)
        {
            return;
        }
        self.findings.push(Finding {
            device: device.map(str::to_string),
            weight,
            what,
            fix: fix.to_string(),
        });
    }
}

#[async_trait::async_trait]
impl Agent for BaselineAgent {
    fn name(&self) -> &str {
        "baseline"
    }

    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let topo = Topology::parse(&input.topology_summary);
        let claims = Claims::extract(&input.ticket, &topo);
        let mut p = Prober {
            tools,
            calls: 0,
            max_calls: self.max_tool_calls,
            deadline: Instant::now() + input.budget.wall_clock(),
            out_of_budget: false,
        };
        let mut ev = Evidence::default();
        let hosts = reachability(&mut p, &mut ev).await;
        test_claims(&mut p, &mut ev, &topo, &claims, &hosts).await;
        sweep(&mut p, &mut ev, &topo, &claims).await;
        daemons_missing_next_to_peers(&mut ev, &topo);
        locate_isolated_hosts(&mut p, &mut ev, &topo).await;
        let diagnosis = verdict(&ev, &claims);
        AgentOutcome {
            final_text: diagnosis.render(),
            hit_wall_clock: p.out_of_budget && Instant::now() >= p.deadline,
            tool_calls: p.calls,
            ..Default::default()
        }
    }
}

/// Step 1. Returns the hosts that took part.
async fn reachability(p: &mut Prober, ev: &mut Evidence) -> Vec<String> {
    let Some((text, _)) = p.call("get_reachability", json!({})).await else {
        return Vec::new();
    };
    let reach = read::reachability(&text);
    ev.pairs_total = reach.total;
    for r in reach.pairs.iter().filter(|r| !r.ok()) {
        ev.failing_pairs
            .push((r.src.clone(), r.dst.clone(), r.status.clone()));
    }
    for h in &reach.unaddressed {
        ev.add(
            Some(h),
            3,
            format!("{h} has no IPv4 address on its LAN interface"),
            "restore the address (static config or DHCP)",
        );
    }
    ev.checked.push(format!(
        "reachability between {} hosts ({} pairs, {} failing)",
        reach.hosts.len(),
        reach.total,
        ev.failing_pairs.len()
    ));
    reach.hosts
}

/// Step 2.
async fn test_claims(
    p: &mut Prober,
    ev: &mut Evidence,
    topo: &Topology,
    claims: &Claims,
    hosts: &[String],
) {
    let named_host = claims
        .devices
        .iter()
        .find(|d| hosts.contains(d))
        .cloned()
        .or_else(|| hosts.first().cloned());
    for dev in claims.devices.iter().take(5) {
        match topo.devices.get(dev).map(|d| d.role) {
            Some(Role::Router) => check_router(p, ev, topo, dev).await,
            Some(_) => check_host(p, ev, topo, dev).await,
            None => {}
        }
    }
    if let Some(src) = &named_host {
        for ip in claims.addresses.iter().take(3) {
            if let Some((text, _)) = p
                .call(
                    "ping_pair",
                    json!({"host_a": src, "host_b": ip, "count": 3}),
                )
                .await
            {
                ev.checked.push(format!("ping {src} -> {ip}"));
                match read::ping_loss(&text) {
                    Some(l) if l >= 100.0 => ev.add(
                        None,
                        2,
                        format!("{ip} does not answer pings from {src} (100% loss)"),
                        "restore the path to that address",
                    ),
                    Some(l) if l > 0.0 => ev.add(
                        None,
                        1,
                        format!("{ip} loses {l}% of pings from {src}"),
                        "find the lossy link",
                    ),
                    Some(_) => {}
                    None => ev.add(
                        None,
                        1,
                        format!("ping {src} -> {ip} failed: {}", first_line(&text)),
                        "restore the path to that address",
                    ),
                }
            }
        }
        for domain in claims.domains.iter().take(2) {
            if let Some((text, failed)) = p
                .call(
                    "curl_web_test",
                    json!({"host_name": src, "url": format!("http://{domain}/"), "times": 2}),
                )
                .await
            {
                ev.checked
                    .push(format!("HTTP fetch of {domain} from {src}"));
                if failed {
                    ev.add(
                        None,
                        2,
                        format!(
                            "fetching http://{domain}/ from {src} fails: {}",
                            first_line(&text)
                        ),
                        "restore the DNS or web service behind that name",
                    );
                }
            }
        }
    }
}

/// A host or server: interface states, addresses, default route.
async fn check_host(p: &mut Prober, ev: &mut Evidence, topo: &Topology, dev: &str) {
    let Some((text, _)) = p
        .call("get_host_net_config", json!({"host_name": dev}))
        .await
    else {
        return;
    };
    let net = read::host_net(&text);
    if !net.understood {
        return;
    }
    ev.checked
        .push(format!("interfaces, addresses and routes of {dev}"));
    let cabled = topo
        .devices
        .get(dev)
        .map(|d| d.interfaces.clone())
        .unwrap_or_default();
    for iface in &net.down {
        if cabled.is_empty() || cabled.contains(iface) {
            ev.add(
                Some(dev),
                3,
                format!("interface {iface} of {dev} is down"),
                "bring the interface up (ip link set dev IFACE up)",
            );
        }
    }
    if net.ipv4.is_empty() {
        ev.add(
            Some(dev),
            3,
            format!("{dev} has no IPv4 address"),
            "restore the address (static config or DHCP)",
        );
    } else if !net.has_default && topo.devices.get(dev).is_some_and(|d| d.role == Role::Host) {
        ev.add(
            Some(dev),
            2,
            format!("{dev} has no default route"),
            "add the default route via the subnet's gateway",
        );
    }
}

/// A router: enabled daemons, interfaces, OSPF neighbours, BGP sessions.
async fn check_router(p: &mut Prober, ev: &mut Evidence, topo: &Topology, dev: &str) {
    let enabled = match p
        .call(
            "cat_file",
            json!({"host_name": dev, "file_path": "/etc/frr/daemons"}),
        )
        .await
    {
        Some((text, false)) => read::enabled_daemons(&text),
        _ => Vec::new(),
    };
    let Some((brief, failed)) = p
        .call(
            "frr_exec",
            json!({"router_name": dev, "command": "show interface brief"}),
        )
        .await
    else {
        return;
    };
    let lower = brief.to_ascii_lowercase();
    if lower.contains("failed to connect to any daemons") || lower.contains("zebra is not running")
    {
        ev.add(
            Some(dev),
            3,
            format!("FRR on {dev} does not answer (zebra is not running)"),
            "restart FRR on the router",
        );
        return;
    }
    if failed && !lower.contains("interface") {
        // Not an FRR device (vtysh missing): nothing more to ask it.
        return;
    }
    ev.checked
        .push(format!("FRR daemons, interfaces and neighbours of {dev}"));
    let cabled = topo
        .devices
        .get(dev)
        .map(|d| d.interfaces.clone())
        .unwrap_or_default();
    for iface in read::frr_down_interfaces(&brief) {
        if cabled.contains(&iface) {
            ev.add(
                Some(dev),
                3,
                format!("interface {iface} of {dev} is down"),
                "bring the interface up",
            );
        }
    }
    let neighbour_routers = topo
        .neighbours(dev)
        .into_iter()
        .filter(|n| topo.devices.get(n).is_some_and(|d| d.role == Role::Router))
        .count();
    for (daemon, command) in [
        ("ospfd", "show ip ospf neighbor"),
        ("bgpd", "show bgp summary"),
    ] {
        let Some((text, _)) = p
            .call("frr_exec", json!({"router_name": dev, "command": command}))
            .await
        else {
            return;
        };
        let view = if daemon == "ospfd" {
            read::ospf_neighbours(&text)
        } else {
            read::bgp_sessions(&text)
        };
        let wanted = enabled.iter().any(|d| d == daemon);
        match &view {
            DaemonView::NotRunning if enabled.is_empty() => {
                ev.silent_daemons.push((dev.to_string(), daemon));
            }
            DaemonView::Up { .. } => ev.running_daemons.push((dev.to_string(), daemon)),
            _ => {}
        }
        match view {
            DaemonView::NotRunning if wanted => ev.add(
                Some(dev),
                3,
                format!("{daemon} is enabled on {dev} but not running"),
                "start the routing daemon again (restart FRR)",
            ),
            DaemonView::Up { up: 0, down } if daemon == "ospfd" && neighbour_routers > 0 => ev.add(
                Some(dev),
                1,
                format!("{dev} runs OSPF but has no full adjacency ({down} neighbours not full)"),
                "check the OSPF interface settings against the neighbour",
            ),
            DaemonView::Up { down, .. } if daemon == "bgpd" && down > 0 => ev.add(
                Some(dev),
                2,
                format!("{down} BGP session(s) of {dev} are not established"),
                "fix the BGP neighbour configuration (address, remote AS)",
            ),
            _ => {}
        }
    }
}

/// Step 3.
async fn sweep(p: &mut Prober, ev: &mut Evidence, topo: &Topology, claims: &Claims) {
    for r in topo.with_role(Role::Router) {
        if !claims.devices.contains(&r.name) {
            check_router(p, ev, topo, &r.name).await;
        }
    }
    for s in topo.with_role(Role::Server) {
        let n = s.name.to_ascii_lowercase();
        let ports: &[(u16, &str)] = if n.contains("dns") {
            &[(53, "DNS")]
        } else if n.contains("dhcp") {
            &[(67, "DHCP")]
        } else if n.contains("web")
            || n.contains("www")
            || n.contains("http")
            || n.contains("nginx")
        {
            &[(80, "HTTP")]
        } else {
            &[]
        };
        if ports.is_empty() {
            continue;
        }
        let Some((text, failed)) = p
            .call("netstat", json!({"host_name": s.name, "args": "-tuln"}))
            .await
        else {
            return;
        };
        if failed || !text.contains("Proto") {
            continue;
        }
        ev.checked.push(format!("listening ports of {}", s.name));
        for (port, service) in ports {
            if !read::listens_on(&text, *port) {
                ev.add(
                    Some(&s.name),
                    3,
                    format!("nothing listens on port {port} ({service}) on {}", s.name),
                    "start the service again",
                );
            }
        }
    }
}

/// Without a daemons file, a daemon that is not running counts as stopped when a router on
/// a shared segment runs it (the two were meant to peer).
fn daemons_missing_next_to_peers(ev: &mut Evidence, topo: &Topology) {
    let silent = std::mem::take(&mut ev.silent_daemons);
    for (router, daemon) in silent {
        let peers = topo.neighbours(&router);
        if let Some((peer, _)) = ev
            .running_daemons
            .iter()
            .find(|(r, d)| *d == daemon && peers.contains(r))
            .cloned()
        {
            ev.add(
                Some(&router),
                3,
                format!("{daemon} is not running on {router}, while its neighbour {peer} runs it"),
                "start the routing daemon again (restart FRR)",
            );
        }
    }
}

/// Hosts that fail every pair they take part in while others succeed: look at them.
async fn locate_isolated_hosts(p: &mut Prober, ev: &mut Evidence, topo: &Topology) {
    if ev.failing_pairs.is_empty() || ev.failing_pairs.len() == ev.pairs_total {
        return;
    }
    let mut fails: BTreeMap<&str, usize> = BTreeMap::new();
    for (s, d, _) in &ev.failing_pairs {
        *fails.entry(s).or_default() += 1;
        *fails.entry(d).or_default() += 1;
    }
    let max = fails.values().copied().max().unwrap_or(0);
    let suspects: Vec<String> = fails
        .iter()
        .filter(|(_, n)| **n == max)
        .map(|(h, _)| h.to_string())
        .take(3)
        .collect();
    for h in suspects {
        if topo.devices.contains_key(&h)
            && !ev.checked.iter().any(|c| c.ends_with(&format!(" of {h}")))
        {
            check_host(p, ev, topo, &h).await;
        }
    }
}

/// Step 4.
fn verdict(ev: &Evidence, claims: &Claims) -> Diagnosis {
    let mut findings = ev.findings.clone();
    if !ev.failing_pairs.is_empty() {
        let sample: Vec<String> = ev
            .failing_pairs
            .iter()
            .take(4)
            .map(|(s, d, st)| format!("{s}->{d} {st}"))
            .collect();
        findings.push(Finding {
            device: None,
            weight: 2,
            what: format!(
                "{} of {} host pairs fail to ping ({})",
                ev.failing_pairs.len(),
                ev.pairs_total,
                sample.join(", ")
            ),
            fix: "restore the broken path".into(),
        });
    }
    let strong: Vec<&Finding> = findings.iter().filter(|f| f.weight >= 2).collect();
    let checked = ev.checked.join("; ");
    if strong.is_empty() {
        let weak: Vec<&str> = findings.iter().map(|f| f.what.as_str()).collect();
        let mut text = format!(
            "No fault found. The ticket reported {} and named {} checkable identifier(s); each was tested \
             directly and none reproduced. Checks performed: {}. ",
            describe_symptoms(claims),
            claims.identifier_count(),
            if checked.is_empty() {
                "none could run"
            } else {
                &checked
            }
        );
        if !weak.is_empty() {
            text += &format!(
                "Observations that do not break traffic on their own: {}. ",
                weak.join("; ")
            );
        }
        text += "Root cause: none - the network behaves as designed, so the reported problem is not \
                 caused by the network. Fix: no change to the network; ask the reporter for a concrete, \
                 reproducible example if the problem persists.";
        return Diagnosis {
            is_anomaly: Some(false),
            faulty_devices: Vec::new(),
            text,
            parsed_ok: true,
        };
    }
    let top = strong.iter().map(|f| f.weight).max().unwrap_or(2);
    let mut devices: Vec<String> = Vec::new();
    for f in strong.iter().filter(|f| f.weight == top) {
        if let Some(d) = f
            .device
            .as_ref()
            .filter(|d| !devices.contains(d) && devices.len() < 3)
        {
            devices.push(d.clone());
        }
    }
    let lead = strong.iter().find(|f| f.weight == top).copied();
    // Devices the ticket named that the evidence does not implicate (a misdirected ticket).
    let cleared: Vec<&str> = claims
        .devices
        .iter()
        .filter(|d| !findings.iter().any(|f| f.device.as_ref() == Some(*d)))
        .filter(|d| ev.checked.iter().any(|c| c.ends_with(&format!(" of {d}"))))
        .map(String::as_str)
        .collect();
    let evidence: Vec<&str> = strong.iter().map(|f| f.what.as_str()).collect();
    let mut text = format!(
        "Fault found. Evidence: {}. Checks performed: {}. ",
        evidence.join("; "),
        checked
    );
    if !cleared.is_empty() {
        text += &format!(
            "The ticket points at {}, which {} checked directly and {} nothing wrong. ",
            cleared.join(", "),
            if cleared.len() == 1 { "was" } else { "were" },
            if cleared.len() == 1 { "shows" } else { "show" }
        );
    }
    if let Some(f) = lead {
        match &f.device {
            Some(d) => {
                text += &format!(
                    "Localization: the problem sits on {d}; the other symptoms follow from it. \
                     Root cause: {}. Fix: {} on {d}, then re-run the reachability test.",
                    f.what, f.fix
                )
            }
            None => {
                text += &format!(
                    "Localization: no single device could be blamed from the evidence. Root cause: {}. \
                     Fix: {}, then re-run the reachability test.",
                    f.what, f.fix
                )
            }
        }
    }
    Diagnosis {
        is_anomaly: Some(true),
        faulty_devices: devices,
        text,
        parsed_ok: true,
    }
}

fn describe_symptoms(claims: &Claims) -> String {
    if claims.symptoms.is_empty() {
        return "no specific symptom".into();
    }
    let words: Vec<&str> = claims
        .symptoms
        .iter()
        .map(|s| match s {
            Symptom::Connectivity => "a connectivity problem",
            Symptom::Performance => "slowness or loss",
            Symptom::Dns => "a name-resolution problem",
            Symptom::Web => "a web problem",
            Symptom::Dhcp => "an addressing problem",
            Symptom::Routing => "a routing problem",
        })
        .collect();
    words.join(", ")
}

fn first_line(text: &str) -> String {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(160)
        .collect()
}
