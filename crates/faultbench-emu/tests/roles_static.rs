//! Device roles from the lab's files (no root needed): the shipped topologies keep the host
//! sets the release's name rule gave them, the evidence is right where that rule was not, and
//! a lab with uninformative names gets every role right and real pings from `get_reachability`.

use faultbench_core::lab::roles::{EndHosts, HostsFrom, LabRoles, RoleRule};
use faultbench_core::lab::{LabDir, Role, TopologyMeta};
use faultbench_core::{Command, EmuError, ExecOutput, Lab, Toolbox};
use faultbench_emu::tools::{HostSource, NikaTools, ToolOptions, is_end_host};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn anon_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/labs/anon_roles")
}

const SHIPPED: [&str; 8] = [
    "simple_bgp",
    "dc_clos_bgp",
    "ospf_enterprise_static",
    "Kath1",
    "Kath2",
    "Kath3",
    "Kath4",
    "Kath5",
];

/// End hosts the release's name rule misses, by evidence. Each is a device with one address
/// and a default route (a host) or one that runs a service (a server); see each topology's
/// `topology.toml`, which keeps the release's host set for `get_reachability`.
fn missed_by_names(topology: &str) -> Vec<&'static str> {
    match topology {
        "Kath1" => vec!["laptop1", "srv1"],
        "Kath2" => vec![
            "cs_hod",
            "cs_lab1",
            "cs_lab2",
            "cs_lab3",
            "cs_lab4",
            "enquiry",
            "exam_cell",
            "it_hod",
            "it_lab1",
            "it_lab2",
            "it_lab3",
            "it_lab4",
            "laptop0",
            "tpo",
        ],
        "Kath3" => vec!["laptop0", "laptop2", "laptop3", "laptop4", "laptop5"],
        _ => vec![],
    }
}

fn today(lab: &LabDir) -> Vec<String> {
    let mut v: Vec<String> = lab
        .conf
        .device_names()
        .into_iter()
        .filter(|d| is_end_host(d))
        .map(String::from)
        .collect();
    v.sort();
    v
}

#[test]
fn shipped_topologies_keep_their_host_sets_and_the_evidence_is_reported() {
    let mut failures = Vec::new();
    for t in SHIPPED {
        let lab = LabDir::load(repo().join("topologies").join(t)).unwrap();
        let names = today(&lab);
        let chosen = EndHosts::for_lab(&lab).unwrap();
        // 1. What get_reachability pings: exactly the release's set.
        if chosen.hosts != names {
            failures.push(format!(
                "{t}: hosts {:?}, the release's {names:?}",
                chosen.hosts
            ));
        }
        // 2. The roles from the files alone (no topology.toml roles): every device decided by
        // evidence, and the end hosts are the release's plus the ones it missed.
        let files_only = LabRoles::from_lab(&lab, None);
        let by_name = files_only.by_name();
        if !by_name.is_empty() {
            failures.push(format!("{t}: roles only by name for {by_name:?}"));
        }
        let mut expected = names.clone();
        expected.extend(missed_by_names(t).into_iter().map(String::from));
        expected.sort();
        if files_only.end_hosts() != expected {
            failures.push(format!(
                "{t}: end hosts by evidence {:?}, expected {expected:?}",
                files_only.end_hosts()
            ));
        }
        let needs_pin = !missed_by_names(t).is_empty();
        if (chosen.from == HostsFrom::Pinned) != needs_pin {
            failures.push(format!(
                "{t}: a [reachability] pin is needed exactly where the evidence differs"
            ));
        }
        // 3. Where topology.toml gives roles by hand, the files agree with every one of them.
        if let Some(meta) = TopologyMeta::for_lab(&lab).unwrap() {
            for d in lab.conf.device_names() {
                if let Some(given) = meta.roles.of(d) {
                    let found = files_only.decision(d).unwrap();
                    if found.role != given {
                        failures.push(format!(
                            "{t}: {d} is {given:?} in topology.toml, the files say {found}"
                        ));
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The roles of `tests/labs/anon_roles`, as its comment describes them.
fn anon_expected() -> BTreeMap<&'static str, (Role, RoleRule)> {
    BTreeMap::from([
        ("as20r1", (Role::Router, RoleRule::Routing)),
        ("x2", (Role::Router, RoleRule::Routing)),
        ("h1", (Role::Host, RoleRule::Address)),
        ("srv1", (Role::Server("web".into()), RoleRule::Service)),
        ("s1", (Role::Switch, RoleRule::Bridge)),
        ("ws1", (Role::Host, RoleRule::Address)),
    ])
}

#[test]
fn uninformative_names_get_their_roles_from_the_files() {
    let lab = LabDir::load(anon_dir()).unwrap();
    let roles = LabRoles::for_lab(&lab).unwrap();
    for (d, (role, rule)) in anon_expected() {
        let got = roles.decision(d).unwrap();
        assert_eq!((&got.role, got.rule), (&role, rule), "{d}: {got}");
    }
    assert_eq!(
        roles.decision("as20r1").unwrap().to_string(),
        "router: ospfd enabled (as20r1/etc/frr/daemons), ospfd configured (router ospf) (as20r1/etc/frr/frr.conf:10)"
    );
    assert!(
        roles.decision("x2").unwrap().because.contains("vtysh"),
        "{roles}"
    );
    assert_eq!(roles.end_hosts(), ["h1", "srv1", "ws1"]);
    // The old rule found none of them.
    assert!(today(&lab).is_empty());
}

/// A lab with files but no network: answers address queries and pings, nothing else (a
/// stand-in for a deployed lab, so that the tools' host choice is tested without root).
#[derive(Debug)]
struct FileLab {
    dir: Option<PathBuf>,
    devices: Vec<String>,
    /// Device → the answer to the live role probe.
    live: BTreeMap<String, String>,
}

impl FileLab {
    fn addr(&self, device: &str) -> String {
        let i = self.devices.iter().position(|d| d == device).unwrap_or(0);
        format!("10.99.0.{}", i + 10)
    }
}

#[async_trait::async_trait]
impl Lab for FileLab {
    fn name(&self) -> &str {
        "filelab"
    }
    fn devices(&self) -> Vec<String> {
        self.devices.clone()
    }
    fn lab_dir(&self) -> Option<PathBuf> {
        self.dir.clone()
    }
    async fn exec(
        &self,
        device: &str,
        cmd: &Command,
        _t: Duration,
    ) -> Result<ExecOutput, EmuError> {
        let text = cmd.to_argv().join(" ");
        if text.starts_with("ip -j -4 addr show") {
            let j = json!([{"ifname": "eth0", "addr_info": [{"family": "inet", "local": self.addr(device)}]}]);
            return Ok(ExecOutput::ok(j.to_string()));
        }
        if text.contains("@@fwd") {
            return Ok(ExecOutput::ok(
                self.live.get(device).cloned().unwrap_or_default(),
            ));
        }
        if let Some(list) = text
            .split("for ip in ")
            .nth(1)
            .and_then(|r| r.split(';').next())
        {
            let out: String = list
                .split_whitespace()
                .map(|ip| {
                    format!("@@{ip}\n2 packets transmitted, 2 received, 0% packet loss, time 1ms\n")
                })
                .collect();
            return Ok(ExecOutput::ok(out));
        }
        Ok(ExecOutput::failed(127, "not modelled"))
    }
    async fn teardown(&self) -> Result<(), EmuError> {
        Ok(())
    }
}

async fn reach(lab: FileLab) -> (Value, NikaTools) {
    let tools = NikaTools::new(Arc::new(lab)).with_config(ToolOptions::fast());
    let out = tools.call("get_reachability", json!({})).await.unwrap();
    let v: Value = serde_json::from_str(&out.text).unwrap();
    (v, tools)
}

fn anon_devices() -> Vec<String> {
    LabDir::load(anon_dir())
        .unwrap()
        .conf
        .device_names()
        .into_iter()
        .map(String::from)
        .collect()
}

#[tokio::test]
async fn get_reachability_pings_the_end_hosts_the_files_show() {
    let (v, tools) = reach(FileLab {
        dir: Some(anon_dir()),
        devices: anon_devices(),
        live: BTreeMap::new(),
    })
    .await;
    let hosts: Vec<&String> = v["hosts"].as_object().unwrap().keys().collect();
    assert_eq!(hosts, ["h1", "srv1", "ws1"], "{v}");
    assert_eq!(v["summary"]["pairs"], 6, "{v}");
    assert_eq!(v["summary"]["ok"], 6, "{v}");
    let choice = tools.host_choice().await;
    assert_eq!(choice.source, HostSource::Roles);
    assert!(choice.roles.by_name().is_empty(), "{}", choice.roles);
}

#[tokio::test]
async fn a_shipped_topology_pings_the_release_hosts() {
    let dir = repo().join("topologies/Kath1");
    let devices: Vec<String> = LabDir::load(&dir)
        .unwrap()
        .conf
        .device_names()
        .into_iter()
        .map(String::from)
        .collect();
    let (v, tools) = reach(FileLab {
        dir: Some(dir),
        devices,
        live: BTreeMap::new(),
    })
    .await;
    let hosts: Vec<&String> = v["hosts"].as_object().unwrap().keys().collect();
    assert_eq!(hosts, ["pc1", "pc2", "pc3"], "{v}");
    let choice = tools.host_choice().await;
    assert_eq!(choice.source, HostSource::Pinned);
    // The roles still say what the evidence shows.
    assert_eq!(choice.roles.role("srv1"), Some(&Role::Server("dns".into())));
}

#[tokio::test]
async fn without_files_the_devices_are_asked_and_names_come_last() {
    let host = |ip: &str| {
        format!(
            "@@fwd\n1\n@@addr\n2: eth0    inet {ip}/24 scope global eth0\n@@route\ndefault via 10.0.0.1 dev eth0\n@@proc\nsh\n@@end\n"
        )
    };
    let router = "@@fwd\n1\n@@addr\n2: eth0    inet 10.0.0.1/24 scope global eth0\n@@proc\nzebra\nospfd\n@@end\n";
    let live = BTreeMap::from([
        ("h1".to_string(), host("10.0.0.10")),
        ("ws1".to_string(), host("10.0.0.11")),
        ("as20r1".to_string(), router.to_string()),
    ]);
    // `pc9` answers nothing: its name decides (an end host by the release's rule); `x2` too
    // (not an end-host name).
    let devices = ["as20r1", "h1", "ws1", "pc9", "x2"]
        .map(String::from)
        .to_vec();
    let (v, tools) = reach(FileLab {
        dir: None,
        devices,
        live,
    })
    .await;
    let hosts: Vec<&String> = v["hosts"].as_object().unwrap().keys().collect();
    assert_eq!(hosts, ["h1", "pc9", "ws1"], "{v}");
    let roles = &tools.host_choice().await.roles;
    assert_eq!(roles.by_name(), ["pc9", "x2"]);
    assert_eq!(
        roles.decision("as20r1").unwrap().to_string(),
        "router: ospfd running (live: ps)"
    );
}
