//! The baseline's fault signatures on a small Kathará-style campus, mocked through the real
//! 22 tools with the full shell path (inventory script, ping sweeps).
//!
//! Device names carry no role on purpose (`it_lab1` is a host, `sw0` a switch only because it
//! bridges): the agent must infer roles from what the probes show. Each test builds one
//! network state — healthy, or with one fault — and states the physical truth of its pings
//! (which source/destination pairs fail); the agent must find the culprit and its component.
//!
//! ```text
//!  it_lab1 .3 ─┐                                      ┌─ srv_pc .5
//!  it_lab2 .4 ─┴ lan_it ─ sw0 ─ router0 ── wan ── router1 ─ lan_srv
//!   192.168.1.0/24        (br0)  .1    10.0.0.0/30   .1   192.168.9.0/24
//! ```

use faultbench_agents::BaselineAgent;
use faultbench_core::Lab;
use faultbench_core::agent::{Agent, AgentInput, Budget};
use faultbench_core::toolbox::{RecordingToolbox, Toolbox};
use faultbench_emu::mock::{MockLab, MockNetwork};
use faultbench_emu::tools::{NikaTools, ToolOptions};
use std::collections::BTreeMap;
use std::sync::Arc;

const SUMMARY: &str = "Topology: campus\n\nDevices:\n  it_lab1: eth0=lan_it\n  it_lab2: eth0=lan_it\n  router0: eth0=link_r0_sw0, eth1=wan\n  router1: eth0=lan_srv, eth1=wan\n  srv_pc: eth0=lan_srv\n  sw0: eth0=link_r0_sw0, eth1=lan_it\n\n\
Collision domains (shared L2 segments):\n  lan_it: it_lab1.eth0, it_lab2.eth0, sw0.eth1\n  lan_srv: router1.eth0, srv_pc.eth0\n  link_r0_sw0: router0.eth0, sw0.eth0\n  wan: router0.eth1, router1.eth1";

const UP: &str = "<BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1500";

/// One device's state, as its probe script would print it.
#[derive(Clone)]
struct Dev {
    /// (iface, address, master, admin up)
    links: Vec<(
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
        bool,
    )>,
    routes: Vec<String>,
    procs: &'static str,
    daemons: &'static str,
    listen: Vec<&'static str>,
    ipt: Vec<&'static str>,
}

impl Dev {
    fn probe(&self) -> String {
        let mut s = String::from(
            "@@fwd\n1\n@@link\n1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536 state UNKNOWN\n",
        );
        for (k, (i, _, m, up)) in self.links.iter().enumerate() {
            let flags = if *up {
                UP.to_string()
            } else {
                "<BROADCAST,MULTICAST> mtu 1500".into()
            };
            let master = m.map(|m| format!(" master {m}")).unwrap_or_default();
            let state = if *up { "UP" } else { "DOWN" };
            s += &format!(
                "{}: {i}@if{}: {flags}{master} state {state}\n",
                k + 2,
                k + 40
            );
        }
        if self.links.iter().any(|l| l.2 == Some("br0")) {
            s += &format!("9: br0: {UP} state UP\n");
        }
        s += "@@addr\nlo 127.0.0.1/8\n";
        for (i, a, _, _) in &self.links {
            if let Some(a) = a {
                s += &format!("{i} {a}\n");
            }
        }
        s += &format!("@@proc\nbash ps sh {} \n@@listen\n", self.procs);
        for l in &self.listen {
            s += &format!("{l}\n");
        }
        s += &format!("@@daemons\n{}\n@@frrconf\n@@dns\n\n@@ipt\n", self.daemons);
        if !self.ipt.is_empty() {
            s += "*filter\n";
            for r in &self.ipt {
                s += &format!("{r}\n");
            }
        }
        s += "@@nft\n@@svc\n@@tc\n@@route\n";
        for r in &self.routes {
            s += &format!("{r}\n");
        }
        s + "@@end\n"
    }
}

fn host(addr: &'static str, gw: &str, net: &str) -> Dev {
    Dev {
        links: vec![("eth0", Some(addr), None, true)],
        routes: vec![
            format!("default via {gw} dev eth0"),
            format!("{net} dev eth0 proto kernel scope link"),
        ],
        procs: "",
        daemons: "",
        listen: vec![],
        ipt: vec![],
    }
}

fn router(lan: &'static str, wan: &'static str, lan_net: &str, far: &str, via: &str) -> Dev {
    Dev {
        links: vec![
            ("eth0", Some(lan), None, true),
            ("eth1", Some(wan), None, true),
        ],
        routes: vec![
            format!("{lan_net} dev eth0 proto kernel scope link"),
            "10.0.0.0/30 dev eth1 proto kernel scope link".into(),
            format!("{far} nhid 12 via {via} dev eth1 proto rip metric 20"),
        ],
        procs: "ripd staticd zebra",
        daemons: "ripd=yes ",
        listen: vec!["udp 0.0.0.0:520 ripd"],
        ipt: vec![],
    }
}

/// The healthy campus.
fn campus() -> BTreeMap<&'static str, Dev> {
    let mut m = BTreeMap::new();
    m.insert(
        "it_lab1",
        host("192.168.1.3/24", "192.168.1.1", "192.168.1.0/24"),
    );
    m.insert(
        "it_lab2",
        host("192.168.1.4/24", "192.168.1.1", "192.168.1.0/24"),
    );
    m.insert(
        "srv_pc",
        host("192.168.9.5/24", "192.168.9.1", "192.168.9.0/24"),
    );
    m.insert(
        "router0",
        router(
            "192.168.1.1/24",
            "10.0.0.1/30",
            "192.168.1.0/24",
            "192.168.9.0/24",
            "10.0.0.2",
        ),
    );
    m.insert(
        "router1",
        router(
            "192.168.9.1/24",
            "10.0.0.2/30",
            "192.168.9.0/24",
            "192.168.1.0/24",
            "10.0.0.1",
        ),
    );
    m.insert(
        "sw0",
        Dev {
            links: vec![
                ("eth0", None, Some("br0"), true),
                ("eth1", None, Some("br0"), true),
            ],
            routes: vec![],
            procs: "",
            daemons: "",
            listen: vec![],
            ipt: vec![],
        },
    );
    m
}

const TARGETS: [&str; 5] = [
    "192.168.1.1",
    "192.168.1.3",
    "192.168.1.4",
    "192.168.9.1",
    "192.168.9.5",
];

fn rip_config(name: &str, nets: &[&str]) -> String {
    let mut s = format!(
        "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nhostname {name}\n!\nrouter rip\n"
    );
    for n in nets {
        s += &format!(" network {n}\n");
    }
    s + " version 2\nexit\n!\nend\n"
}

/// Renders the mock network: probes, sweeps (with the given failing pairs), vtysh answers.
fn network(
    devs: &BTreeMap<&'static str, Dev>,
    failing: &[(&str, &str)],
    rip_down: &[&str],
) -> Arc<MockLab> {
    network_with(devs, failing, rip_down, &[])
}

/// [`network`], with sweep answers for `extra` addresses too (a gateway no probe shows).
fn network_with(
    devs: &BTreeMap<&'static str, Dev>,
    failing: &[(&str, &str)],
    rip_down: &[&str],
    extra: &[&'static str],
) -> Arc<MockLab> {
    let mut t = String::from("name = \"campus\"\n\n");
    for (name, d) in devs {
        t += &format!("[[device]]\nname = \"{name}\"\n");
        for (i, a, _, _) in &d.links {
            if let Some(a) = a {
                t += &format!("interface = [{{ name = \"{i}\", addr = \"{a}\" }}]\n");
                break;
            }
        }
        t += "\n";
    }
    let rule = |dev: &str, cmd: &str, out: &str| {
        format!(
            "[[rule]]\ndevice = \"{dev}\"\ncommand = \"{cmd}\"\nmatch = \"contains\"\nstdout = '''\n{out}'''\n\n"
        )
    };
    for (name, d) in devs {
        t += &rule(name, "echo @@fwd;", &d.probe());
        let own: Vec<&str> = d
            .links
            .iter()
            .filter_map(|l| l.1)
            .map(|a| a.split('/').next().unwrap())
            .collect();
        let mut pings = String::new();
        for ip in TARGETS.iter().chain(extra).copied() {
            if own.contains(&ip) {
                continue;
            }
            let n = if failing.contains(&(*name, ip)) { 0 } else { 3 };
            pings += &format!("@@ping {ip} {n}\n");
        }
        t += &rule(name, "for a in ", &pings);
    }
    for r in ["router0", "router1"] {
        let nets: &[&str] = if r == "router0" {
            &["192.168.1.0/24", "10.0.0.0/30"]
        } else {
            &["192.168.9.0/24", "10.0.0.0/30"]
        };
        if rip_down.contains(&r) {
            t += &rule(
                r,
                "show running-config",
                "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nhostname x\n!\nend\n",
            );
            t += &rule(r, "show ip rip status", "ripd is not running\n");
        } else {
            t += &rule(r, "show running-config", &rip_config(r, nets));
            let peer = if r == "router0" {
                "10.0.0.2"
            } else {
                "10.0.0.1"
            };
            let heard = if rip_down.is_empty() {
                format!("    {peer}                0         0       120   00:00:12\n")
            } else {
                String::new()
            };
            t += &rule(
                r,
                "show ip rip status",
                &format!(
                    "Routing Protocol is \"rip\"\n  Default version control: send version 2, receive version 2\n    Interface        Send  Recv   Key-chain\n    eth0             2     2\n    eth1             2     2\n  Routing Information Sources:\n    Gateway          BadPackets BadRoutes  Distance Last Update\n{heard}  Distance: (default is 120)\n"
                ),
            );
        }
    }
    let net = MockNetwork::parse(&t).expect("generated mock parses");
    Arc::new(MockLab::new("campus", Arc::new(net)))
}

struct Run {
    anomaly: Option<bool>,
    devices: Vec<String>,
    text: String,
    calls: u32,
}

async fn diagnose(lab: Arc<MockLab>, ticket: &str) -> Run {
    let dyn_lab: Arc<dyn Lab> = lab;
    let inner: Arc<dyn Toolbox> =
        Arc::new(NikaTools::new(dyn_lab).with_config(ToolOptions::fast()));
    let tools = Arc::new(RecordingToolbox::new(inner));
    let input = AgentInput::new(
        SUMMARY,
        ticket,
        Budget {
            max_turns: 20,
            wall_clock_secs: 60,
        },
    );
    let out = BaselineAgent::new().run(&input, tools.clone()).await;
    let d = out.diagnosis();
    assert!(d.parsed_ok, "{}", out.final_text);
    assert_eq!(tools.records().len() as u32, out.tool_calls);
    for r in tools.records() {
        if r.tool == "exec_shell" {
            let c = r.args["command"].as_str().unwrap_or("");
            assert!(
                c.starts_with("echo @@fwd;")
                    || c.starts_with("for a in ")
                    || c.starts_with("dig_one() "),
                "{c}"
            );
        }
    }
    Run {
        anomaly: d.is_anomaly,
        devices: d.faulty_devices,
        text: d.text,
        calls: out.tool_calls,
    }
}

#[tokio::test]
async fn healthy_campus_with_a_false_premise_ticket() {
    let lab = network(&campus(), &[], &[]);
    let r = diagnose(lab, "it_lab1 cannot reach srv_pc since this morning, router1 must be broken. Please fix router1.").await;
    assert_eq!(r.anomaly, Some(false), "{}", r.text);
    assert!(r.devices.is_empty());
    // Roles from evidence: the lab PCs are hosts and sw0 a switch, whatever their names.
    assert!(r.text.contains("routers router0 (runs zebra, ripd), router1 (runs zebra, ripd); 1 switches, 0 servers, 3 hosts"), "{}", r.text);
    assert!(
        r.text
            .contains("RIP updates received (router0 hears router1, router1 hears router0)"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("(it_lab1, router1, srv_pc) were inspected and show nothing wrong"),
        "{}",
        r.text
    );
    // One probe per device, two configs, two RIP states, two sweeps, no more.
    assert!(r.calls <= 14, "{} calls", r.calls);
}

#[tokio::test]
async fn wrong_netmask_on_a_lab_pc() {
    let mut devs = campus();
    devs.insert(
        "it_lab2",
        Dev {
            routes: vec!["192.168.1.4/30 dev eth0 proto kernel scope link".into()],
            links: vec![("eth0", Some("192.168.1.4/30"), None, true)],
            ..campus()["it_lab2"].clone()
        },
    );
    let failing = [
        ("it_lab1", "192.168.1.4"),
        ("srv_pc", "192.168.1.4"),
        ("it_lab2", "192.168.1.1"),
        ("it_lab2", "192.168.1.3"),
        ("it_lab2", "192.168.9.1"),
        ("it_lab2", "192.168.9.5"),
    ];
    let r = diagnose(
        network(&devs, &failing, &[]),
        "Users say router0 drops it_lab2's traffic. Please check router0.",
    )
    .await;
    assert_eq!(r.anomaly, Some(true), "{}", r.text);
    assert_eq!(r.devices, vec!["it_lab2"], "{}", r.text);
    assert!(
        r.text.contains(
            "wrong netmask on it_lab2 eth0: it has 192.168.1.4/30 (netmask 255.255.255.252)"
        ),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("router0, which was checked directly and is healthy"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn forward_filter_on_a_router() {
    let mut devs = campus();
    let mut r1 = devs["router1"].clone();
    r1.ipt = vec!["-A FORWARD -s 192.168.1.0/24 -d 192.168.9.0/24 -j DROP"];
    devs.insert("router1", r1);
    let failing = [
        ("it_lab1", "192.168.9.5"),
        ("it_lab2", "192.168.9.5"),
        ("srv_pc", "192.168.1.3"),
        ("srv_pc", "192.168.1.4"),
    ];
    let r = diagnose(
        network(&devs, &failing, &[]),
        "The IT lab cannot reach the server room.",
    )
    .await;
    assert_eq!(r.devices, vec!["router1"], "{}", r.text);
    assert!(
        r.text.contains("a firewall rule on router1 drops"),
        "{}",
        r.text
    );
    assert!(
        r.text
            .contains("`-A FORWARD -s 192.168.1.0/24 -d 192.168.9.0/24 -j DROP`"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn routing_daemon_down() {
    let mut devs = campus();
    let mut r0 = devs["router0"].clone();
    r0.procs = "staticd zebra";
    r0.routes.truncate(2);
    r0.listen.clear();
    devs.insert("router0", r0);
    let mut r1 = devs["router1"].clone();
    r1.routes.truncate(2);
    devs.insert("router1", r1);
    let failing: Vec<(&str, &str)> = ["it_lab1", "it_lab2"]
        .iter()
        .flat_map(|h| [(*h, "192.168.9.1"), (*h, "192.168.9.5")])
        .chain([
            ("srv_pc", "192.168.1.1"),
            ("srv_pc", "192.168.1.3"),
            ("srv_pc", "192.168.1.4"),
        ])
        .collect();
    let r = diagnose(
        network(&devs, &failing, &["router0"]),
        "srv_pc is down, nobody reaches it",
    )
    .await;
    assert_eq!(r.devices, vec!["router0"], "{}", r.text);
    assert!(
        r.text
            .contains("ripd is enabled on router0 (/etc/frr/daemons) but not running"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn switch_port_left_out_of_its_bridge() {
    let mut devs = campus();
    devs.insert(
        "sw0",
        Dev {
            links: vec![
                ("eth0", None, Some("br0"), true),
                ("eth1", None, None, true),
            ],
            ..campus()["sw0"].clone()
        },
    );
    let failing: Vec<(&str, &str)> = ["it_lab1", "it_lab2"]
        .iter()
        .flat_map(|h| {
            [
                (*h, "192.168.1.1"),
                (*h, "192.168.9.1"),
                (*h, "192.168.9.5"),
            ]
        })
        .chain([("srv_pc", "192.168.1.3"), ("srv_pc", "192.168.1.4")])
        .collect();
    let r = diagnose(
        network(&devs, &failing, &[]),
        "The whole IT department is offline.",
    )
    .await;
    assert_eq!(r.devices, vec!["sw0"], "{}", r.text);
    assert!(
        r.text
            .contains("port eth1 of sw0 (towards it_lab1, it_lab2) is not a member of bridge br0"),
        "{}",
        r.text
    );
}

#[tokio::test]
async fn wrong_default_gateway_on_one_host() {
    let mut devs = campus();
    devs.insert(
        "it_lab2",
        host("192.168.1.4/24", "192.168.1.254", "192.168.1.0/24"),
    );
    let failing = [
        ("it_lab2", "192.168.9.1"),
        ("it_lab2", "192.168.9.5"),
        ("srv_pc", "192.168.1.4"),
    ];
    let r = diagnose(network(&devs, &failing, &[]), "it_lab2 has no internet").await;
    assert_eq!(r.devices, vec!["it_lab2"], "{}", r.text);
    assert!(r.text.contains("wrong default gateway on it_lab2: it uses 192.168.1.254, which no device on its LAN holds, while it_lab1 uses 192.168.1.1"), "{}", r.text);
}

#[tokio::test]
async fn interface_shut_on_a_router() {
    let mut devs = campus();
    let mut r1 = devs["router1"].clone();
    r1.links[1].3 = false;
    devs.insert("router1", r1);
    let mut r0 = devs["router0"].clone();
    r0.routes.truncate(2);
    devs.insert("router0", r0);
    let failing: Vec<(&str, &str)> = ["it_lab1", "it_lab2"]
        .iter()
        .flat_map(|h| [(*h, "192.168.9.1"), (*h, "192.168.9.5")])
        .chain([
            ("srv_pc", "192.168.1.1"),
            ("srv_pc", "192.168.1.3"),
            ("srv_pc", "192.168.1.4"),
        ])
        .collect();
    let r = diagnose(network(&devs, &failing, &[]), "router0 is broken").await;
    assert_eq!(r.devices, vec!["router1"], "{}", r.text);
    assert!(
        r.text
            .contains("interface eth1 of router1 is administratively down"),
        "{}",
        r.text
    );
}

/// A gateway the probes do not show anywhere (a virtual address held by a process the model
/// misses) but that answers and carries the host's traffic: not a wrong gateway. The same
/// host with a gateway that does not answer is `wrong_default_gateway_on_one_host`.
#[tokio::test]
async fn gateway_that_answers_is_not_wrong() {
    let mut devs = campus();
    devs.insert(
        "it_lab2",
        host("192.168.1.4/24", "192.168.1.254", "192.168.1.0/24"),
    );
    let lab = network_with(&devs, &[], &[], &["192.168.1.254"]);
    let r = diagnose(lab, "it_lab2 has no internet").await;
    assert_eq!(r.anomaly, Some(false), "{}", r.text);
    assert!(!r.text.contains("wrong default gateway"), "{}", r.text);
    // Without the answer (the gateway is dead), the same state is the fault.
    let failing = [
        ("it_lab2", "192.168.1.254"),
        ("it_lab2", "192.168.9.1"),
        ("it_lab2", "192.168.9.5"),
        ("srv_pc", "192.168.1.4"),
    ];
    let lab = network_with(&devs, &failing, &[], &["192.168.1.254"]);
    let r = diagnose(lab, "it_lab2 has no internet").await;
    assert_eq!(r.devices, vec!["it_lab2"], "{}", r.text);
    assert!(
        r.text.contains("wrong default gateway on it_lab2"),
        "{}",
        r.text
    );
}
