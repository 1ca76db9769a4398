//! The base tools (all but `get_reachability`, which has its own module).

use super::NikaTools;
use super::args::{self, parse};
use super::output::{failure, merge_flags, render};
use faultbench_core::{Command, ToolError, ToolOutput};
use serde::Deserialize;
use serde_json::{Value, json};
use std::time::Duration;

fn default_count() -> u64 {
    4
}
fn default_netstat_args() -> String {
    "-tuln".into()
}
fn default_times() -> u64 {
    5
}
fn default_duration() -> u64 {
    10
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PingPair {
    host_a: String,
    host_b: String,
    #[serde(default = "default_count")]
    count: u64,
    #[serde(default)]
    args: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Systemctl {
    host_name: String,
    service_name: String,
    operation: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Host {
    host_name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tc {
    host_name: String,
    intf_name: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Netstat {
    host_name: String,
    #[serde(default = "default_netstat_args")]
    args: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Ethtool {
    host_name: String,
    interface: String,
    // Required, as in the release's MCP schema.
    args: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Curl {
    host_name: String,
    url: String,
    #[serde(default = "default_times")]
    times: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Iperf {
    client_host_name: String,
    server_host_name: String,
    #[serde(default = "default_duration")]
    duration: u64,
    #[serde(default)]
    client_args: String,
    #[serde(default)]
    server_args: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatFile {
    host_name: String,
    file_path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Shell {
    host_name: String,
    command: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Dual {
    host1: String,
    cmd1: String,
    host2: String,
    cmd2: String,
}

/// ethtool options that only read (each takes the interface as its argument).
const ETHTOOL_QUERIES: [&str; 20] = [
    "-i",
    "--driver",
    "-S",
    "--statistics",
    "-k",
    "--show-features",
    "--show-offload",
    "-g",
    "--show-ring",
    "-a",
    "--show-pause",
    "-c",
    "--show-coalesce",
    "-l",
    "--show-channels",
    "-T",
    "--show-time-stamping",
    "-P",
    "--show-permaddr",
    "--phy-statistics",
];

const SYSTEMCTL_OPS: [&str; 5] = ["status", "start", "stop", "restart", "reload"];

/// curl's timing report for one attempt (the release's fields, plus the HTTP status).
const CURL_FORMAT: &str = "http_code:%{http_code}, namelookup:%{time_namelookup}, connect:%{time_connect}, appconnect:%{time_appconnect}, pretransfer:%{time_pretransfer}, starttransfer:%{time_starttransfer}, total:%{time_total}\n";

impl NikaTools {
    pub(super) async fn ping_pair(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "ping_pair";
        let p: PingPair = parse(T, a)?;
        self.check_device(T, "host_a", &p.host_a)?;
        args::range(T, "count", p.count, 1, 100)?;
        let extra = args::words(T, "args", &p.args)?;
        let ip = match args::ipv4(&p.host_b) {
            Some(ip) => ip,
            None => {
                if !self.devices().contains(&p.host_b) {
                    return Err(args::invalid(
                        T,
                        format!(
                            "`host_b`: `{}` is neither a device of this lab nor an IPv4 address",
                            p.host_b.escape_default()
                        ),
                    ));
                }
                match self.primary_ipv4(T, &p.host_b).await? {
                    Some(ip) => ip,
                    None => {
                        return Ok(failure(format!(
                            "Cannot get IP address of host {}.",
                            p.host_b
                        )));
                    }
                }
            }
        };
        let count = p.count.to_string();
        let ip = ip.to_string();
        let mut argv = vec!["ping".to_string(), "-c".into(), count, ip];
        argv.extend(extra);
        // One second per echo request on top of the usual limit, so a long ping is not cut.
        let t = self.config.exec_timeout + Duration::from_secs(p.count);
        let out = self.exec(T, &p.host_a, Command::Argv(argv), t).await?;
        Ok(render(&out, self.config.output_cap, t))
    }

    pub(super) async fn systemctl_ops(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "systemctl_ops";
        let p: Systemctl = parse(T, a)?;
        self.check_device(T, "host_name", &p.host_name)?;
        args::service(T, &p.service_name)?;
        if !SYSTEMCTL_OPS.contains(&p.operation.as_str()) {
            return Err(args::invalid(
                T,
                format!(
                    "`operation` must be one of {} (got `{}`)",
                    SYSTEMCTL_OPS.join(", "),
                    p.operation.escape_default()
                ),
            ));
        }
        let out = self
            .run_argv(
                T,
                &p.host_name,
                ["systemctl", &p.operation, &p.service_name],
            )
            .await?;
        if p.operation != "status" && !self.config.service_settle.is_zero() {
            tokio::time::sleep(self.config.service_settle).await;
        }
        Ok(out)
    }

    pub(super) async fn get_host_net_config(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "get_host_net_config";
        let p: Host = parse(T, a)?;
        self.check_device(T, "host_name", &p.host_name)?;
        let h = p.host_name.as_str();
        let (ifc, addr, route) = tokio::join!(
            self.run_argv(T, h, ["ifconfig", "-a"]),
            self.run_argv(T, h, ["ip", "addr"]),
            self.run_argv(T, h, ["ip", "route"]),
        );
        let (ifc, addr, route) = (ifc?, addr?, route?);
        let text = json!({
            "host_name": h,
            "ifconfig": ifc.text,
            "ip_addr": addr.text,
            "ip_route": route.text,
        })
        .to_string();
        // `ifconfig` is missing on many modern images; that alone is not a failed call.
        let mut out = merge_flags(text, &[&addr, &route]);
        out.truncated |= ifc.truncated;
        out.timed_out |= ifc.timed_out;
        Ok(out)
    }

    pub(super) async fn get_tc_statistics(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "get_tc_statistics";
        let p: Tc = parse(T, a)?;
        self.check_device(T, "host_name", &p.host_name)?;
        args::interface(T, "intf_name", &p.intf_name)?;
        self.run_argv(
            T,
            &p.host_name,
            ["tc", "-s", "qdisc", "show", "dev", &p.intf_name],
        )
        .await
    }

    pub(super) async fn netstat(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "netstat";
        let p: Netstat = parse(T, a)?;
        self.check_device(T, "host_name", &p.host_name)?;
        let mut argv = vec!["netstat".to_string()];
        argv.extend(args::words(T, "args", &p.args)?);
        let t = self.config.exec_timeout;
        let out = self.exec(T, &p.host_name, Command::Argv(argv), t).await?;
        Ok(render(&out, self.config.output_cap, t))
    }

    pub(super) async fn ip_addr_statistics(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "ip_addr_statistics";
        let p: Host = parse(T, a)?;
        self.check_device(T, "host_name", &p.host_name)?;
        self.run_argv(T, &p.host_name, ["ip", "-s", "addr"]).await
    }

    pub(super) async fn ethtool(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "ethtool";
        let p: Ethtool = parse(T, a)?;
        self.check_device(T, "host_name", &p.host_name)?;
        args::interface(T, "interface", &p.interface)?;
        let opt = p.args.trim();
        if opt.is_empty() {
            return self
                .run_argv(T, &p.host_name, ["ethtool", &p.interface])
                .await;
        }
        if !ETHTOOL_QUERIES.contains(&opt) {
            return Err(args::invalid(
                T,
                format!(
                    "`args` must be empty or one query option: {} (got `{}`)",
                    ETHTOOL_QUERIES.join(" "),
                    opt.escape_default()
                ),
            ));
        }
        self.run_argv(T, &p.host_name, ["ethtool", opt, &p.interface])
            .await
    }

    pub(super) async fn curl_web_test(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "curl_web_test";
        let p: Curl = parse(T, a)?;
        self.check_device(T, "host_name", &p.host_name)?;
        args::url(T, &p.url)?;
        args::range(T, "times", p.times, 1, 20)?;
        // curl stops itself after 10 s; the exec limit leaves it room to report.
        let t = Duration::from_secs(15);
        let mut lines = Vec::new();
        let mut parts = Vec::new();
        for _ in 0..p.times {
            let cmd = Command::argv([
                "curl",
                "--connect-timeout",
                "5",
                "--max-time",
                "10",
                "-w",
                CURL_FORMAT,
                "-o",
                "/dev/null",
                "-s",
                "-S",
                &p.url,
            ]);
            let out = self.exec(T, &p.host_name, cmd, t).await?;
            let r = render(&out, self.config.output_cap, t);
            lines.push(r.text.clone());
            parts.push(r);
        }
        let refs: Vec<&ToolOutput> = parts.iter().collect();
        let mut out = merge_flags(lines.join("\n"), &refs);
        // Keep the whole report within the cap too.
        let (text, cut) = super::cap_text(&out.text, self.config.output_cap);
        out.text = text;
        out.truncated |= cut;
        Ok(out)
    }

    pub(super) async fn iperf_test(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "iperf_test";
        let p: Iperf = parse(T, a)?;
        self.check_device(T, "client_host_name", &p.client_host_name)?;
        self.check_device(T, "server_host_name", &p.server_host_name)?;
        args::range(T, "duration", p.duration, 1, 60)?;
        let cargs = args::words(T, "client_args", &p.client_args)?;
        let sargs = args::words(T, "server_args", &p.server_args)?;
        let Some(ip) = self.primary_ipv4(T, &p.server_host_name).await? else {
            return Ok(failure(format!(
                "Cannot get IP address of host {}.",
                p.server_host_name
            )));
        };
        // A one-shot daemon with its own pid file: stopping it later touches only this server
        // (a bare `pkill iperf3` would also hit other tests' servers).
        let pidfile = format!(
            "/tmp/faultbench-iperf-{}-{}.pid",
            std::process::id(),
            next_id()
        );
        let mut server = vec![
            "iperf3".to_string(),
            "-s".into(),
            "-1".into(),
            "-D".into(),
            "-I".into(),
            pidfile.clone(),
        ];
        server.extend(sargs);
        let t = self.config.exec_timeout;
        let s = self
            .exec(T, &p.server_host_name, Command::Argv(server), t)
            .await?;
        if !s.success() {
            let r = render(&s, self.config.output_cap, t);
            return Ok(failure(format!(
                "iperf3 server did not start on {}:\n{}",
                p.server_host_name, r.text
            )));
        }
        // Give the daemon a moment to bind before the client connects.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let mut client = vec![
            "iperf3".to_string(),
            "-c".into(),
            ip.to_string(),
            "-t".into(),
            p.duration.to_string(),
        ];
        client.extend(cargs);
        let ct = t + Duration::from_secs(p.duration);
        let c = self
            .exec(T, &p.client_host_name, Command::Argv(client), ct)
            .await;
        // Stop the server whatever the client did.
        let _ = self
            .exec(
                T,
                &p.server_host_name,
                Command::argv(["pkill", "-F", &pidfile]),
                t,
            )
            .await;
        let _ = self
            .exec(
                T,
                &p.server_host_name,
                Command::argv(["rm", "-f", &pidfile]),
                t,
            )
            .await;
        Ok(render(&c?, self.config.output_cap, ct))
    }

    pub(super) async fn cat_file(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "cat_file";
        let p: CatFile = parse(T, a)?;
        self.check_device(T, "host_name", &p.host_name)?;
        args::file_path(T, &p.file_path)?;
        self.run_argv(T, &p.host_name, ["cat", "--", &p.file_path])
            .await
    }

    pub(super) async fn exec_shell(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "exec_shell";
        let p: Shell = parse(T, a)?;
        self.check_device(T, "host_name", &p.host_name)?;
        args::script(T, "command", &p.command)?;
        let t = self.config.exec_timeout;
        let out = self
            .exec(T, &p.host_name, Command::Shell(p.command), t)
            .await?;
        Ok(render(&out, self.config.output_cap, t))
    }

    pub(super) async fn exec_shell_dual(&self, a: Value) -> Result<ToolOutput, ToolError> {
        const T: &str = "exec_shell_dual";
        let p: Dual = parse(T, a)?;
        self.check_device(T, "host1", &p.host1)?;
        self.check_device(T, "host2", &p.host2)?;
        args::script(T, "cmd1", &p.cmd1)?;
        args::script(T, "cmd2", &p.cmd2)?;
        let t = self.config.exec_timeout;
        let (o1, o2) = tokio::join!(
            self.exec(T, &p.host1, Command::Shell(p.cmd1.clone()), t),
            self.exec(T, &p.host2, Command::Shell(p.cmd2.clone()), t),
        );
        let r1 = render(&o1?, self.config.output_cap, t);
        let r2 = render(&o2?, self.config.output_cap, t);
        let text = json!({"host1": [r1.text], "host2": [r2.text]}).to_string();
        Ok(merge_flags(text, &[&r1, &r2]))
    }
}

fn next_id() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}
