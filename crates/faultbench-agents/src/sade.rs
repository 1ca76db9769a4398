//! `sade`: a symptom-aware, skill-augmented agent in the style of SADE.
//!
//! Same model loop as [`crate::ReactAgent`], plus three things the paper's SADE has and plain
//! ReAct lacks, all as data files written for this project and embedded in the binary:
//!
//! - a phase-gated workflow (`data/sade/workflow.md`): reachability first, then follow a real
//!   symptom or fall back to a layered sweep, then the verdict — with an explicit,
//!   evidence-based criterion for concluding "no fault";
//! - a list of normal-but-suspicious signals (`data/sade/normal_signals.md`) in the system prompt;
//! - fault-family playbooks (`data/sade/playbooks.toml`), read on demand through a `playbook`
//!   tool, and read-only composite snapshot tools built from the 22 network tools
//!   (`device_snapshot`, `router_snapshot`, `path_probe`).
//!
//! Composite tools call the run's toolbox, so every underlying call is recorded by the pipeline
//! like any other. `tool_calls` in the outcome counts the calls the model made (a snapshot is
//! one), as the release counts tool-use blocks.

use crate::llm_agent::{AgentStyle, LlmAgent};
use crate::llm_loop::MISSING_BLOCK_NUDGE;
use crate::prompt::{DIAGNOSIS_CONTRACT, with_hint};
use faultbench_core::agent::TicketHint;
use faultbench_core::toolbox::{ToolError, ToolOutput, ToolSpec, Toolbox};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::{Arc, LazyLock};

const WORKFLOW: &str = include_str!("../data/sade/workflow.md");
const NORMAL_SIGNALS: &str = include_str!("../data/sade/normal_signals.md");
const PLAYBOOKS: &str = include_str!("../data/sade/playbooks.toml");

/// One fault-family playbook.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Playbook {
    /// Short name (`routing-daemon`).
    pub name: String,
    /// One-line title.
    pub title: String,
    /// What the user sees.
    pub symptoms: String,
    /// What to run.
    pub checks: String,
    /// The evidence that confirms the family.
    pub fingerprint: String,
    /// Which device to name.
    pub blame: String,
    /// Traps.
    pub traps: String,
}

#[derive(Deserialize)]
struct PlaybookFile {
    family: Vec<Playbook>,
}

static BOOKS: LazyLock<Vec<Playbook>> = LazyLock::new(|| {
    // Checked by a unit test; an unreadable embedded file degrades to no playbooks.
    toml::from_str::<PlaybookFile>(PLAYBOOKS)
        .map(|f| f.family)
        .unwrap_or_default()
});

/// The embedded playbooks.
pub fn playbooks() -> &'static [Playbook] {
    &BOOKS
}

impl Playbook {
    /// The text the `playbook` tool returns for this family.
    pub fn render(&self) -> String {
        format!(
            "PLAYBOOK {}: {}\nSymptoms: {}\nChecks: {}\nFingerprint: {}\nBlame: {}\nTraps: {}",
            self.name,
            self.title,
            self.symptoms,
            self.checks,
            self.fingerprint,
            self.blame,
            self.traps
        )
    }
}

/// The SADE system prompt: workflow, normal signals, the playbook index and the answer format.
/// With [`TicketHint::Skeptical`] the workflow's opening paragraph gets the one added sentence.
pub fn sade_system(hint: TicketHint) -> String {
    let index: Vec<String> = playbooks()
        .iter()
        .map(|b| format!("- {}: {}", b.name, b.title))
        .collect();
    let (opening, rest) = WORKFLOW.split_once("\n\n").unwrap_or((WORKFLOW, ""));
    format!(
        "{}\n\n{rest}\n{NORMAL_SIGNALS}\nFAULT FAMILIES (read one with the `playbook` tool):\n{}\n\n{DIAGNOSIS_CONTRACT}",
        with_hint(opening, hint),
        index.join("\n")
    )
}

/// Every prompt text SADE sends besides the user message: the system prompt, the playbooks
/// (read through the `playbook` tool), its own tools' descriptions and the one reminder.
pub fn sade_prompt_texts(hint: TicketHint) -> Vec<String> {
    let own_tools = serde_json::to_string_pretty(&SadeToolbox::own_specs()).unwrap_or_default();
    vec![
        sade_system(hint),
        PLAYBOOKS.to_string(),
        own_tools,
        MISSING_BLOCK_NUDGE.to_string(),
    ]
}

/// The SADE agent: an [`LlmAgent`] in the [`SadeStyle`].
pub type SadeAgent = LlmAgent<SadeStyle>;

/// The SADE [`AgentStyle`]: the workflow system prompt, one reminder for a missing diagnosis block,
/// and the run's tools wrapped in a [`SadeToolbox`].
pub struct SadeStyle;

impl AgentStyle for SadeStyle {
    const NAME: &'static str = "sade";
    const NUDGE_MISSING_BLOCK: bool = true;

    fn system(_tool_names: &[String], hint: TicketHint) -> String {
        sade_system(hint)
    }

    fn prompt_texts(hint: TicketHint) -> Vec<String> {
        sade_prompt_texts(hint)
    }

    fn toolbox(tools: Arc<dyn Toolbox>) -> Arc<dyn Toolbox> {
        Arc::new(SadeToolbox::new(tools))
    }
}

/// The run's tools plus the playbook reader and the composite snapshot tools.
pub struct SadeToolbox {
    inner: Arc<dyn Toolbox>,
}

const SECTION_CAP: usize = 1800;

fn object(props: Value, required: &[&str]) -> Value {
    json!({"type": "object", "properties": props, "required": required})
}

impl SadeToolbox {
    /// Wraps the run's toolbox.
    pub fn new(inner: Arc<dyn Toolbox>) -> Self {
        SadeToolbox { inner }
    }

    fn own_specs() -> Vec<ToolSpec> {
        let names: Vec<&str> = playbooks().iter().map(|b| b.name.as_str()).collect();
        vec![
            ToolSpec::new(
                "playbook",
                "Read the playbook of a fault family: symptoms, checks, fingerprint, whom to blame, traps.",
                object(json!({"family": {"type": "string", "enum": names}}), &["family"]),
            )
            .in_group("sade"),
            ToolSpec::new(
                "device_snapshot",
                "Read-only snapshot of one device: interfaces and addresses, routes, listening sockets, \
                 IPv4 forwarding flag, firewall and NAT rules, neighbour (ARP) table, resolver config.",
                object(json!({"device": {"type": "string"}}), &["device"]),
            )
            .in_group("sade"),
            ToolSpec::new(
                "router_snapshot",
                "Read-only snapshot of one FRR router: running routing daemons, interface states, \
                 OSPF neighbours, BGP sessions and the routing table.",
                object(json!({"router": {"type": "string"}}), &["router"]),
            )
            .in_group("sade"),
            ToolSpec::new(
                "path_probe",
                "Ping from a source device to a destination (device name or IPv4 address) and trace the \
                 hops, to see where traffic stops.",
                object(
                    json!({"source": {"type": "string"}, "destination": {"type": "string"}}),
                    &["source", "destination"],
                ),
            )
            .in_group("sade"),
        ]
    }

    /// Calls an inner tool and renders it as a titled section (failures included: a snapshot
    /// reports what it could not read instead of failing as a whole).
    async fn section(&self, title: &str, tool: &str, args: Value) -> String {
        let body = match self.inner.call(tool, args).await {
            Ok(out) => crate::llm_loop::cap(out.text.trim(), SECTION_CAP),
            Err(e) => format!("(not available: {e})"),
        };
        format!("## {title}\n{body}\n")
    }

    async fn device_snapshot(&self, device: &str) -> String {
        let mut s = format!("# device_snapshot {device}\n");
        s += &self
            .section(
                "addresses and routes",
                "get_host_net_config",
                json!({"host_name": device}),
            )
            .await;
        s += &self
            .section(
                "listening sockets",
                "netstat",
                json!({"host_name": device, "args": "-tuln"}),
            )
            .await;
        s += &self
            .section(
                "forwarding, filters, NAT, neighbours",
                "exec_shell",
                json!({"host_name": device, "command":
                    "echo ip_forward=$(cat /proc/sys/net/ipv4/ip_forward); \
                     (iptables -S; iptables -t nat -S) 2>&1 | head -60; \
                     nft list ruleset 2>/dev/null | head -40; ip neigh 2>&1 | head -20"}),
            )
            .await;
        s += &self
            .section(
                "resolver",
                "cat_file",
                json!({"host_name": device, "file_path": "/etc/resolv.conf"}),
            )
            .await;
        s
    }

    async fn router_snapshot(&self, router: &str) -> String {
        let mut s = format!("# router_snapshot {router}\n");
        s += &self
            .section(
                "routing processes",
                "exec_shell",
                json!({"host_name": router, "command":
                    "ps -e -o comm= 2>/dev/null | grep -E '^(zebra|ospfd|ospf6d|bgpd|ripd|isisd|staticd|vrrpd|keepalived|watchfrr)$' | sort | uniq -c"}),
            )
            .await;
        s += &self
            .section(
                "interfaces",
                "frr_exec",
                json!({"router_name": router, "command": "show interface brief"}),
            )
            .await;
        s += &self
            .section(
                "OSPF neighbours",
                "frr_exec",
                json!({"router_name": router, "command": "show ip ospf neighbor"}),
            )
            .await;
        s += &self
            .section(
                "BGP sessions",
                "frr_exec",
                json!({"router_name": router, "command": "show bgp summary"}),
            )
            .await;
        s += &self
            .section(
                "routing table",
                "frr_show_ip_route",
                json!({"router_name": router}),
            )
            .await;
        s
    }

    async fn path_probe(&self, source: &str, destination: &str) -> Result<String, ToolError> {
        let mut s = format!("# path_probe {source} -> {destination}\n");
        s += &self
            .section(
                "ping",
                "ping_pair",
                json!({"host_a": source, "host_b": destination, "count": 3}),
            )
            .await;
        let ip = if is_ipv4(destination) {
            Some(destination.to_string())
        } else {
            let out = self
                .inner
                .call(
                    "exec_shell",
                    json!({"host_name": destination, "command": "ip -4 -o addr show scope global"}),
                )
                .await
                .map(|o| o.text)
                .unwrap_or_default();
            first_ipv4(&out)
        };
        match ip {
            Some(ip) => {
                s += &self
                    .section(
                        "trace",
                        "exec_shell",
                        json!({"host_name": source, "command": format!(
                            "traceroute -n -w 1 -q 1 -m 12 {ip} 2>&1 || tracepath -n -m 12 {ip} 2>&1")}),
                    )
                    .await;
            }
            None => s += "## trace\n(no IPv4 address found for the destination)\n",
        }
        Ok(s)
    }
}

/// Whether `s` is a dotted IPv4 address.
pub(crate) fn is_ipv4(s: &str) -> bool {
    s.parse::<std::net::Ipv4Addr>().is_ok()
}

/// The first global IPv4 address in `ip -o addr` style text.
pub(crate) fn first_ipv4(text: &str) -> Option<String> {
    text.split_whitespace()
        .skip_while(|w| *w != "inet")
        .nth(1)
        .and_then(|a| a.split('/').next())
        .filter(|a| is_ipv4(a))
        .map(str::to_string)
}

/// Device names are plain words; anything else is refused before reaching a device shell.
fn device_arg(tool: &str, args: &Value, key: &str) -> Result<String, ToolError> {
    let v = args.get(key).and_then(Value::as_str).unwrap_or("").trim();
    let ok = !v.is_empty()
        && v.len() <= 64
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    if ok {
        Ok(v.to_string())
    } else {
        Err(ToolError::InvalidArguments {
            tool: tool.to_string(),
            message: format!("`{key}` must be a device name (letters, digits, `_`, `.`, `-`)"),
        })
    }
}

#[async_trait::async_trait]
impl Toolbox for SadeToolbox {
    fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = self.inner.specs();
        specs.extend(SadeToolbox::own_specs());
        specs
    }

    async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        match name {
            "playbook" => {
                let family = args.get("family").and_then(Value::as_str).unwrap_or("");
                match playbooks().iter().find(|b| b.name == family) {
                    Some(b) => Ok(ToolOutput::text(b.render())),
                    None => Err(ToolError::InvalidArguments {
                        tool: name.into(),
                        message: format!(
                            "unknown family `{family}`; known: {}",
                            playbooks()
                                .iter()
                                .map(|b| b.name.as_str())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    }),
                }
            }
            "device_snapshot" => {
                let d = device_arg(name, &args, "device")?;
                Ok(ToolOutput::text(self.device_snapshot(&d).await))
            }
            "router_snapshot" => {
                let r = device_arg(name, &args, "router")?;
                Ok(ToolOutput::text(self.router_snapshot(&r).await))
            }
            "path_probe" => {
                let src = device_arg(name, &args, "source")?;
                let dst = device_arg(name, &args, "destination")?;
                Ok(ToolOutput::text(self.path_probe(&src, &dst).await?))
            }
            _ => self.inner.call(name, args).await,
        }
    }

    fn mutates(&self, name: &str, args: &Value) -> bool {
        match name {
            "playbook" | "device_snapshot" | "router_snapshot" | "path_probe" => false,
            _ => self.inner.mutates(name, args),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_playbooks_parse_and_are_indexed() {
        let parsed: PlaybookFile = toml::from_str(PLAYBOOKS).unwrap();
        assert!(parsed.family.len() >= 10);
        let sys = sade_system(TicketHint::None);
        for b in playbooks() {
            assert!(sys.contains(&format!("- {}: ", b.name)));
        }
        assert!(sys.contains("NO-FAULT CRITERION"));
        assert!(sys.contains("=== DIAGNOSIS ==="));
    }

    #[test]
    fn address_helpers() {
        assert!(is_ipv4("10.0.0.1") && !is_ipv4("10.0.0") && !is_ipv4("pc1"));
        assert_eq!(
            first_ipv4("2: eth0    inet 10.1.2.3/24 brd 10.1.2.255 scope global eth0"),
            Some("10.1.2.3".into())
        );
        assert_eq!(first_ipv4("nothing here"), None);
    }

    #[test]
    fn device_arguments_are_plain_words() {
        let ok = device_arg("t", &json!({"device": "leaf_router_0-1.a"}), "device");
        assert_eq!(ok.unwrap(), "leaf_router_0-1.a");
        for bad in ["", "pc1; rm -rf /", "$(reboot)", "a b", "pc1'"] {
            assert!(
                device_arg("t", &json!({"device": bad}), "device").is_err(),
                "{bad}"
            );
        }
        assert!(device_arg("t", &json!({"device": 3}), "device").is_err());
    }
}
