//! NIKA's 22 troubleshooting tools over any [`Lab`]: netns, Kathará or a mock.
//!
//! [`NikaTools`] implements [`Toolbox`]: 13 base tools (reachability, ping, services, addresses,
//! qdiscs, sockets, ethtool, curl, iperf, files, shell), 5 FRR tools (vtysh) and 4 telemetry
//! tools that query an in-process [`telemetry::TelemetryStore`] fed by a
//! [`telemetry::Collector`]. Names, parameters and defaults are the release's; the behaviour
//! is improved where the release was fragile:
//!
//! - **deterministic reachability**: all ordered host pairs (or a seeded sample), in a fixed
//!   order, pinged in parallel, each with an explicit status (`ok`, `unstable`, `down`,
//!   `timeout`, `unknown`) instead of nulls;
//! - **honest output**: output is capped (4000 chars by default) with a marker saying how
//!   much was cut; a failed command shows its exit code and stderr; a timeout is a flag on the
//!   result and a separate footer line, never a replacement for the output;
//! - **safety**: arguments are checked against strict grammars ([`args`]) and commands run as
//!   argv *inside the device* — never through a host shell; `exec_shell` runs its command with
//!   `sh -c` inside the device; tools that can change the network are marked, and
//!   [`faultbench_core::toolbox::PolicyToolbox`] refuses them under the read-only policy;
//! - **telemetry that exists**: see [`telemetry`].
//!
//! Every call can be recorded with [`faultbench_core::toolbox::RecordingToolbox`]; [`mcp`]
//! serves any toolbox over MCP.
//!
//! ```
//! use faultbench_core::{Emulator, LabRequest, Toolbox};
//! use faultbench_emu::mock::MockEmulator;
//! use faultbench_core::toolbox::{Policy, PolicyToolbox};
//! use faultbench_emu::tools::{NikaTools, ToolOptions};
//! use serde_json::json;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mock/triangle.toml");
//! let lab = MockEmulator::new().deploy(&LabRequest::new(file)).await.unwrap();
//! let tools = NikaTools::new(lab.clone()).with_config(ToolOptions::fast());
//! assert_eq!(tools.specs().len(), 22);
//!
//! let out = tools.call("ping_pair", json!({"host_a": "pc1", "host_b": "pc2", "count": 2})).await.unwrap();
//! assert!(out.text.contains("0% packet loss"));
//!
//! let route = tools.call("frr_show_ip_route", json!({"router_name": "r1"})).await.unwrap();
//! assert!(route.text.contains("10.0.2.0/24"));
//!
//! // Every pair of end hosts, with a status per pair.
//! let reach = tools.call("get_reachability", json!({})).await.unwrap();
//! let v: serde_json::Value = serde_json::from_str(&reach.text).unwrap();
//! assert_eq!(v["summary"]["ok"], 6);
//!
//! // Bad arguments are errors, never commands.
//! assert!(tools.call("ping_pair", json!({"host_a": "pc1", "host_b": "pc2; reboot"})).await.is_err());
//!
//! // Under the read-only policy, mutations are refused; `status` is not a mutation.
//! let ro = PolicyToolbox::new(tools, Policy::ReadOnly);
//! let stop = json!({"host_name": "r1", "service_name": "frr", "operation": "stop"});
//! assert!(ro.call("systemctl_ops", stop).await.is_err());
//! let status = json!({"host_name": "r1", "service_name": "frr", "operation": "status"});
//! assert!(ro.call("systemctl_ops", status).await.unwrap().text.contains("active (running)"));
//! # });
//! ```

pub mod args;
mod base;
mod factory;
mod frr;
mod hosts;
#[cfg(feature = "mcp")]
pub mod mcp;
#[cfg(feature = "mcp")]
pub mod mcp_framing;
mod output;
mod reach;
mod specs;
pub mod telemetry;

pub use factory::NikaToolsFactory;
pub use hosts::{HostChoice, HostSource};
pub use output::{cap_text, render};

/// The former path of [`faultbench_core::toolbox::Policy`] (the wrappers live in core, issue 28).
#[deprecated(
    note = "moved to `faultbench_core::toolbox::Policy`; this path goes in the next release"
)]
pub type Policy = faultbench_core::toolbox::Policy;
/// The former path of [`faultbench_core::toolbox::PolicyToolbox`].
#[deprecated(
    note = "moved to `faultbench_core::toolbox::PolicyToolbox`; this path goes in the next release"
)]
pub type PolicyToolbox<T> = faultbench_core::toolbox::PolicyToolbox<T>;
/// The former path of [`faultbench_core::toolbox::UnknownPolicy`].
#[deprecated(
    note = "moved to `faultbench_core::toolbox::UnknownPolicy`; this path goes in the next release"
)]
pub type UnknownPolicy = faultbench_core::toolbox::UnknownPolicy;
pub use reach::{Reachability, is_end_host};
pub use specs::{TOOL_NAMES, all_specs};

use faultbench_core::{Command, ExecOutput, Lab, ToolError, ToolOutput, ToolSpec, Toolbox};
use serde_json::Value;
use std::net::Ipv4Addr;
use std::sync::Arc;
use std::time::Duration;
use telemetry::TelemetryStore;

/// The former name of [`ToolOptions`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `ToolOptions`; the old name goes in the next release")]
pub type ToolConfig = ToolOptions;

/// How the tools behave. [`ToolOptions::default`] follows the release where it is sound.
#[derive(Debug, Clone)]
pub struct ToolOptions {
    /// Timeout of one command (release: 10 s). Tools whose command naturally takes longer
    /// (ping with a large count, iperf, curl) extend it by their own duration.
    pub exec_timeout: Duration,
    /// Output cap per command, in characters (release: 4000).
    pub output_cap: usize,
    /// Cap of the whole `get_reachability` report, in characters.
    pub reachability_cap: usize,
    /// Which pairs `get_reachability` pings.
    pub reachability: Reachability,
    /// How many commands `get_reachability` runs at once.
    pub parallelism: usize,
    /// Pause after a service start/stop/restart/reload so the change settles (release: 5 s).
    pub service_settle: Duration,
    /// The end hosts for `get_reachability`; `None` takes them from the lab: a fixed list in
    /// its `topology.toml`, else the devices whose role is host or server by evidence (files,
    /// then probes), the release's naming rule ([`is_end_host`]) only where there is none.
    pub hosts: Option<Vec<String>>,
}

impl Default for ToolOptions {
    fn default() -> Self {
        ToolOptions {
            exec_timeout: Duration::from_secs(10),
            output_cap: 4000,
            reachability_cap: 16000,
            reachability: Reachability::AllPairs,
            parallelism: 64,
            service_settle: Duration::from_secs(5),
            hosts: None,
        }
    }
}

impl ToolOptions {
    /// The defaults without the post-service pause (for tests on mock networks).
    pub fn fast() -> Self {
        ToolOptions {
            service_settle: Duration::ZERO,
            ..Default::default()
        }
    }
}

/// The 22 tools over one lab.
pub struct NikaTools {
    lab: Arc<dyn Lab>,
    config: ToolOptions,
    telemetry: Option<Arc<TelemetryStore>>,
    /// Telemetry is off for the run: the `influx_*` tools answer as the release's did.
    telemetry_off: bool,
    /// The end hosts, chosen at the first call that needs them.
    hosts: tokio::sync::OnceCell<HostChoice>,
    /// A collector this toolbox owns (stopped when the toolbox is dropped).
    collector: Option<telemetry::Collector>,
    specs: Vec<ToolSpec>,
}

impl NikaTools {
    /// The tools over `lab` with the default configuration and no telemetry store (the four
    /// `influx_*` tools then say that no collector is attached).
    pub fn new(lab: Arc<dyn Lab>) -> Self {
        NikaTools {
            lab,
            config: ToolOptions::default(),
            telemetry: None,
            telemetry_off: false,
            collector: None,
            specs: all_specs(),
            hosts: tokio::sync::OnceCell::new(),
        }
    }

    /// Replaces the configuration.
    pub fn with_config(mut self, config: ToolOptions) -> Self {
        self.config = config;
        self.hosts = tokio::sync::OnceCell::new();
        self
    }

    /// Telemetry off (`--telemetry off`): no store, no collector, and the four `influx_*`
    /// tools answer as the release's labs without a collector machine did
    /// ([`telemetry::release_absent_answer`]).
    pub fn without_telemetry(mut self) -> Self {
        self.telemetry = None;
        self.collector = None;
        self.telemetry_off = true;
        self
    }

    /// Attaches the telemetry store the `influx_*` tools query.
    pub fn with_telemetry(mut self, store: Arc<TelemetryStore>) -> Self {
        self.telemetry = Some(store);
        self
    }

    /// Starts sampling the lab every `interval` into a new store that the `influx_*` tools
    /// query (and, with `file`, also into a JSONL file another process can follow). The
    /// collector stops when the toolbox is dropped. Must be called inside a tokio runtime.
    pub fn collect_telemetry(
        self,
        interval: Duration,
        file: Option<&std::path::Path>,
    ) -> std::io::Result<Self> {
        let mut store = TelemetryStore::new();
        if let Some(f) = file {
            store = store.write_jsonl(f)?;
        }
        Ok(self.collect_into(Arc::new(store), interval))
    }

    /// Starts sampling the lab every `interval` into `store`, which the `influx_*` tools then
    /// query. The collector stops when the toolbox is dropped. Must be called inside a tokio
    /// runtime.
    pub fn collect_into(mut self, store: Arc<TelemetryStore>, interval: Duration) -> Self {
        self.collector = Some(telemetry::Collector::start(
            self.lab.clone(),
            store.clone(),
            interval,
        ));
        self.telemetry = Some(store);
        self
    }

    /// The telemetry store, if one is attached.
    pub fn telemetry(&self) -> Option<&Arc<TelemetryStore>> {
        self.telemetry.as_ref()
    }

    /// The lab the tools act on.
    pub fn lab(&self) -> &Arc<dyn Lab> {
        &self.lab
    }

    /// The configuration.
    pub fn config(&self) -> &ToolOptions {
        &self.config
    }

    fn devices(&self) -> Vec<String> {
        self.lab.devices()
    }

    fn check_device(&self, tool: &str, field: &str, name: &str) -> Result<(), ToolError> {
        args::device(tool, field, name, &self.devices())
    }

    /// Runs a command in a device; an emulator failure (lab gone) is a tool failure.
    async fn exec(
        &self,
        tool: &str,
        device: &str,
        command: Command,
        timeout: Duration,
    ) -> Result<ExecOutput, ToolError> {
        self.lab
            .exec(device, &command, timeout)
            .await
            .map_err(|e| ToolError::Failed {
                tool: tool.to_string(),
                // Lab instance names may be derived from scenario ids: never show them.
                message: e
                    .to_string()
                    .replace(&format!("`{}`", self.lab.name()), "`<lab>`"),
            })
    }

    /// Runs an argv command with the standard timeout and renders it.
    async fn run_argv<const N: usize>(
        &self,
        tool: &str,
        device: &str,
        argv: [&str; N],
    ) -> Result<ToolOutput, ToolError> {
        let t = self.config.exec_timeout;
        let out = self.exec(tool, device, Command::argv(argv), t).await?;
        Ok(render(&out, self.config.output_cap, t))
    }

    /// The device's address as the release picks it: the first non-loopback IPv4 address on
    /// eth0, else on any interface (from `ip -j -4 addr show`).
    async fn primary_ipv4(&self, tool: &str, device: &str) -> Result<Option<Ipv4Addr>, ToolError> {
        let out = self
            .exec(
                tool,
                device,
                Command::argv(["ip", "-j", "-4", "addr", "show"]),
                self.config.exec_timeout,
            )
            .await?;
        if !out.success() {
            return Ok(None);
        }
        Ok(pick_ipv4(&out.stdout))
    }
}

/// Picks eth0's first non-loopback IPv4 address from `ip -j addr` output, else any interface's.
fn pick_ipv4(json: &str) -> Option<Ipv4Addr> {
    let v: Value = serde_json::from_str(json).ok()?;
    let ifaces = v.as_array()?;
    let addrs = |iface: &Value| -> Vec<Ipv4Addr> {
        iface["addr_info"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter(|i| i["family"] == "inet")
                    .filter_map(|i| i["local"].as_str()?.parse::<Ipv4Addr>().ok())
                    .filter(|ip| !ip.is_loopback())
                    .collect()
            })
            .unwrap_or_default()
    };
    let eth0 = ifaces
        .iter()
        .find(|i| i["ifname"] == "eth0")
        .and_then(|i| addrs(i).first().copied());
    eth0.or_else(|| ifaces.iter().flat_map(addrs).next())
}

#[async_trait::async_trait]
impl Toolbox for NikaTools {
    fn specs(&self) -> Vec<ToolSpec> {
        self.specs.clone()
    }

    async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        match name {
            "get_reachability" => self.get_reachability(args).await,
            "ping_pair" => self.ping_pair(args).await,
            "systemctl_ops" => self.systemctl_ops(args).await,
            "get_host_net_config" => self.get_host_net_config(args).await,
            "get_tc_statistics" => self.get_tc_statistics(args).await,
            "netstat" => self.netstat(args).await,
            "ip_addr_statistics" => self.ip_addr_statistics(args).await,
            "ethtool" => self.ethtool(args).await,
            "curl_web_test" => self.curl_web_test(args).await,
            "iperf_test" => self.iperf_test(args).await,
            "cat_file" => self.cat_file(args).await,
            "exec_shell" => self.exec_shell(args).await,
            "exec_shell_dual" => self.exec_shell_dual(args).await,
            "frr_get_bgp_conf" => self.frr_show(name, args, "show ip bgp").await,
            "frr_show_running_config" => self.frr_show(name, args, "show running-config").await,
            "frr_show_ip_route" => self.frr_show(name, args, "show ip route").await,
            "frr_get_ospf_conf" => self.frr_show(name, args, "show ip ospf").await,
            "frr_exec" => self.frr_exec(args).await,
            "influx_list_buckets"
            | "influx_get_measurements"
            | "influx_count_measurements"
            | "influx_query_measurement" => {
                let source = match (&self.telemetry, self.telemetry_off) {
                    (_, true) => telemetry::Source::Off(self.lab.name()),
                    (Some(store), false) => telemetry::Source::Store(store),
                    (None, false) => telemetry::Source::Unattached,
                };
                telemetry::call_tool(source, name, args, &self.config)
            }
            other => Err(ToolError::UnknownTool(other.to_string())),
        }
    }

    /// Per-call: `systemctl_ops status` and `frr_exec show …` do not change the network.
    fn mutates(&self, name: &str, args: &Value) -> bool {
        match name {
            "systemctl_ops" => !matches!(
                args.get("operation").and_then(Value::as_str),
                Some("status")
            ),
            "frr_exec" => !args
                .get("command")
                .and_then(Value::as_str)
                .is_some_and(frr::is_show_command),
            _ => self.specs.iter().any(|s| s.name == name && s.mutating),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_eth0_then_any_non_loopback() {
        let j = r#"[{"ifname":"lo","addr_info":[{"family":"inet","local":"127.0.0.1"}]},
                   {"ifname":"eth1","addr_info":[{"family":"inet","local":"10.9.9.9"}]},
                   {"ifname":"eth0","addr_info":[{"family":"inet6","local":"fe80::1"},{"family":"inet","local":"10.0.0.5"}]}]"#;
        assert_eq!(pick_ipv4(j), Some("10.0.0.5".parse().unwrap()));
        let j = r#"[{"ifname":"lo","addr_info":[{"family":"inet","local":"127.0.0.1"}]},
                   {"ifname":"eth1","addr_info":[{"family":"inet","local":"10.9.9.9"}]}]"#;
        assert_eq!(pick_ipv4(j), Some("10.9.9.9".parse().unwrap()));
        assert_eq!(pick_ipv4("[]"), None);
        assert_eq!(pick_ipv4("garbage"), None);
    }
}
