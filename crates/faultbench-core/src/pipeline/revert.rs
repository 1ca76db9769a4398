//! Undoing a scenario's fault so that a lab can be reused warm.
//!
//! Scenario files have no machine-readable revert; their `[FIX]` section holds the remedy in
//! prose with commands in backticks (e.g. "`iptables -D FORWARD -j DROP` on router1"). We run
//! those commands on the device the text names (else on the injected devices), and then let
//! the healthy-baseline probes decide: only a lab whose baseline holds again is reused. A wrong
//! guess therefore costs a redeploy, never a contaminated run.

use regex::Regex;
use std::sync::LazyLock;

static TICKED: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"`([^`\n]+)`").unwrap());

/// Programs a remedy command may start with.
const COMMANDS: [&str; 30] = [
    "ip",
    "iptables",
    "ip6tables",
    "nft",
    "systemctl",
    "service",
    "vtysh",
    "sysctl",
    "tc",
    "bridge",
    "brctl",
    "kill",
    "pkill",
    "ifconfig",
    "route",
    "dnsmasq",
    "named",
    "dhcpd",
    "keepalived",
    "ethtool",
    "arp",
    "echo",
    "sed",
    "cp",
    "mv",
    "rndc",
    "tee",
    "sh",
    "bash",
    "dhclient",
];

/// One remedy command and where to run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevertCommand {
    /// Device to run it on.
    pub device: String,
    /// Shell command.
    pub command: String,
}

fn looks_like_command(s: &str) -> bool {
    let first = s.split_whitespace().next().unwrap_or("");
    let prog = first.rsplit('/').next().unwrap_or(first);
    COMMANDS.contains(&prog)
        || first.starts_with("/etc/init.d/")
        || first.starts_with("/usr/lib/frr/")
}

/// Extracts remedy commands from a `[FIX]` text. `devices` are the lab's device names;
/// `fallback` are the devices the injection touched.
pub fn revert_commands(fix: &str, devices: &[String], fallback: &[String]) -> Vec<RevertCommand> {
    let mut out = Vec::new();
    for m in TICKED.captures_iter(fix) {
        let cmd = m[1].trim();
        if !looks_like_command(cmd) {
            continue;
        }
        let end = m.get(0).map(|g| g.end()).unwrap_or(0);
        let after: String = fix[end..].chars().take(80).collect();
        // The first device named in the few words after the command (in text order).
        let named = after
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
            .filter(|w| !w.is_empty())
            .take(6)
            .find_map(|w| devices.iter().find(|d| d.as_str() == w));
        let targets: Vec<String> = match named {
            Some(d) => vec![d.clone()],
            None => fallback.to_vec(),
        };
        for device in targets {
            out.push(RevertCommand {
                device,
                command: cmd.to_string(),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_commands_and_their_devices() {
        let devs = vec!["router1".to_string(), "pc1".to_string()];
        let fix = "`iptables -D FORWARD -j DROP` on router1 (lets transit traffic through again); then check `the gateway`.";
        let cmds = revert_commands(fix, &devs, &["pc1".into()]);
        assert_eq!(
            cmds,
            vec![RevertCommand {
                device: "router1".into(),
                command: "iptables -D FORWARD -j DROP".into()
            }]
        );
        // The device right after the command wins, whatever the lab.conf order.
        let cmds = revert_commands("`ip link set eth0 up` on pc1. router1 is fine.", &devs, &[]);
        assert_eq!(cmds[0].device, "pc1");
        let cmds = revert_commands("Run `systemctl start frr`.", &devs, &["pc1".into()]);
        assert_eq!(cmds[0].device, "pc1");
        assert!(revert_commands("Restore the /24 mask.", &devs, &[]).is_empty());
    }
}
