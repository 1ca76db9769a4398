//! What the netns backend needs from the host, for `faultbench doctor`.

use serde::Serialize;
use std::path::Path;

/// One program labs use, the Debian package that provides it, and whether it is installed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Requirement {
    /// Program looked for.
    pub program: &'static str,
    /// Debian package providing it.
    pub package: &'static str,
    /// What it is for.
    pub used_for: &'static str,
    /// Deploys fail without it (otherwise only labs or tools that use it do).
    pub required: bool,
    /// Found on this host.
    pub present: bool,
}

const DIRS: [&str; 6] = [
    "/usr/sbin",
    "/usr/bin",
    "/sbin",
    "/bin",
    "/usr/lib/frr",
    "/usr/local/bin",
];

/// (program, package, used for, required)
const TABLE: [(&str, &str, &str, bool); 28] = [
    (
        "nsenter",
        "util-linux",
        "debugging (`nsenter -t PID -a`)",
        false,
    ),
    ("ip", "iproute2", "links and addresses", true),
    ("bash", "bash", "device PID 1 and startup files", true),
    ("zebra", "frr", "routers (FRR)", true),
    ("vtysh", "frr", "routers (FRR)", true),
    (
        "frr-reload.py",
        "frr-pythontools",
        "`/etc/init.d/frr reload`",
        false,
    ),
    ("ping", "iputils-ping", "reachability probes", true),
    ("traceroute", "traceroute", "path probes", false),
    ("tcpdump", "tcpdump", "packet captures", false),
    ("dig", "dnsutils", "DNS probes", false),
    ("curl", "curl", "web probes", false),
    ("iptables", "iptables", "firewall faults", false),
    ("nft", "nftables", "firewall faults, loss emulation", false),
    ("busybox", "busybox", "small servers (httpd)", false),
    ("ethtool", "ethtool", "the ethtool tool", false),
    ("iperf3", "iperf3", "throughput probes", false),
    ("ps", "procps", "process probes", true),
    ("netstat", "net-tools", "the netstat tool", false),
    ("dnsmasq", "dnsmasq", "DNS/DHCP servers", false),
    ("named", "bind9", "DNS servers", false),
    ("dhcpd", "isc-dhcp-server", "DHCP servers", false),
    ("dhcrelay", "isc-dhcp-relay", "DHCP relays", false),
    ("keepalived", "keepalived", "VRRP", false),
    ("apache2", "apache2", "web servers", false),
    ("python3", "python3", "small servers and tools", false),
    ("start-stop-daemon", "dpkg", "packaged init scripts", true),
    (
        "ifup",
        "ifupdown",
        "`/etc/network/interfaces`, `/etc/init.d/networking`",
        false,
    ),
    ("service", "init-system-helpers", "`service X start`", false),
];

fn found(program: &str) -> bool {
    DIRS.iter().any(|d| Path::new(d).join(program).is_file())
}

/// Every program labs use, with presence.
pub fn requirements() -> Vec<Requirement> {
    TABLE
        .iter()
        .map(|&(program, package, used_for, required)| Requirement {
            program,
            package,
            used_for,
            required,
            present: found(program),
        })
        .collect()
}

/// The `apt-get install` command for what is missing (deduplicated), if anything is.
pub fn install_command(reqs: &[Requirement]) -> Option<String> {
    let mut pkgs: Vec<&str> = reqs
        .iter()
        .filter(|r| !r.present)
        .map(|r| r.package)
        .collect();
    pkgs.sort();
    pkgs.dedup();
    (!pkgs.is_empty()).then(|| format!("apt-get install -y {}", pkgs.join(" ")))
}

/// The kernel has overlayfs (device `/etc` and `/var` are overlays).
pub fn has_overlayfs() -> bool {
    std::fs::read_to_string("/proc/filesystems").is_ok_and(|t| t.contains("\toverlay"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn install_command_lists_each_missing_package_once() {
        let r = |program, package, present| Requirement {
            program,
            package,
            used_for: "",
            required: false,
            present,
        };
        let reqs = vec![
            r("zebra", "frr", false),
            r("vtysh", "frr", false),
            r("ip", "iproute2", true),
            r("dig", "dnsutils", false),
        ];
        assert_eq!(
            install_command(&reqs).unwrap(),
            "apt-get install -y dnsutils frr"
        );
        assert_eq!(install_command(&reqs[2..3]), None);
        assert!(
            requirements()
                .iter()
                .any(|r| r.program == "bash" && r.present)
        );
    }
}
