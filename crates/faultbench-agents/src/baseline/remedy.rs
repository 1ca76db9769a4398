//! The baseline's repair mode: turn the fixes its findings name into commands.
//!
//! Every rule states its fix in words (`start bgpd again on r2 (/etc/init.d/frr restart)`,
//! `delete the iptables rule `-A INPUT …` on r1`, `restore the saved routing configuration on
//! r1 …`). In the repair task the baseline applies the fixes of the findings its verdict rests
//! on — weight 3, on the devices it blames — by translating those sentences into shell
//! commands run through `exec_shell` on the device. A fix it cannot translate (one that needs
//! a value the evidence does not hold, such as the right neighbor address) is left undone and
//! said so: the baseline never guesses a change.

use super::gather::Prober;
use super::rules::Finding;
use faultbench_core::Diagnosis;
use regex::Regex;
use serde_json::json;
use std::sync::LazyLock;

/// One command to run on one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Remedy {
    /// The device.
    pub device: String,
    /// The shell command (run with `exec_shell`).
    pub command: String,
}

static LINK_UP: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"ip link set dev (\S+) up").unwrap());
static BRING_UP: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"^bring (\S+) up on ").unwrap());
static IPT_NAT_DEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"iptables -t nat -D (.+)$").unwrap());
static IPT_DEL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"iptables -D (.+)$").unwrap());
static IPT_RULE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^delete the iptables rule `-A ([^`]+)`").unwrap());
static TC_DEL: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"tc qdisc del dev (\S+) root").unwrap());
static ROUTE_DEL: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"ip route del (\S+)").unwrap());
static ROUTE_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^delete the route `([^`]+)`").unwrap());
static DEFAULT_VIA: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^set the default route of \S+ to via (\S+)$").unwrap());
static RIP_NETWORK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^add `network (\S+)` under router rip").unwrap());
static SERVICE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^start the \S+ service \(([\w.-]+)\)").unwrap());

/// The unit that starts a daemon, as the labs' `systemctl` knows it.
fn unit_of(daemon: &str) -> &str {
    match daemon {
        "named" => "bind9",
        "dhcpd" => "isc-dhcp-server",
        "dhcrelay" => "isc-dhcp-relay",
        "httpd" => "apache2",
        other => other,
    }
}

/// The commands a finding's fix names, on its device (empty when the fix cannot be turned
/// into a command from what the finding holds).
pub fn translate(f: &Finding) -> Vec<String> {
    let fix = f.fix.trim();
    let one = |c: String| vec![c];
    if fix.contains("/etc/init.d/frr restart")
        || fix.starts_with("restore the saved routing configuration")
    {
        // The saved configuration is the healthy one: a restart brings back a stopped daemon
        // and drops what was configured at run time.
        return one("service frr restart".into());
    }
    if let Some(c) = LINK_UP.captures(fix).or_else(|| BRING_UP.captures(fix)) {
        return one(format!("ip link set dev {} up", &c[1]));
    }
    if let Some(c) = IPT_NAT_DEL.captures(fix) {
        return one(format!("iptables -t nat -D {}", c[1].trim()));
    }
    if let Some(c) = IPT_DEL.captures(fix) {
        return one(format!("iptables -D {}", c[1].trim()));
    }
    if let Some(c) = IPT_RULE.captures(fix) {
        return one(format!("iptables -D {}", c[1].trim()));
    }
    if let Some(c) = TC_DEL.captures(fix) {
        return one(format!("tc qdisc del dev {} root", &c[1]));
    }
    if let Some(c) = ROUTE_DEL.captures(fix) {
        return one(format!("ip route del {}", &c[1]));
    }
    if let Some(c) = ROUTE_LINE.captures(fix) {
        // `blackhole 10.0.0.0/24 proto static …` or `10.0.0.0/24 via …`: the destination.
        let words: Vec<&str> = c[1].split_whitespace().collect();
        let dest = match words.first() {
            Some(&("blackhole" | "unreachable" | "prohibit")) => words.get(1),
            other => other,
        };
        return dest.map_or_else(Vec::new, |d| one(format!("ip route del {d}")));
    }
    if let Some(c) = DEFAULT_VIA.captures(fix) {
        return one(format!("ip route replace default via {}", &c[1]));
    }
    if fix.starts_with("enable net.ipv4.ip_forward") {
        return one("sysctl -w net.ipv4.ip_forward=1".into());
    }
    if let Some(c) = RIP_NETWORK.captures(fix) {
        return one(format!(
            "vtysh -c 'configure terminal' -c 'router rip' -c 'network {}'",
            &c[1]
        ));
    }
    if let Some(c) = SERVICE.captures(fix) {
        return one(format!("systemctl start {}", unit_of(&c[1])));
    }
    for (words, unit) in [
        ("start keepalived", "keepalived"),
        ("start isc-dhcp-server", "isc-dhcp-server"),
        ("start the DNS server", "bind9"),
    ] {
        if fix.starts_with(words) {
            return one(format!("systemctl start {unit}"));
        }
    }
    if fix.starts_with("start the web server") {
        return one("systemctl start apache2 || systemctl start nginx".into());
    }
    Vec::new()
}

/// The repair plan: the translated fixes of the weight-3 findings on `blamed` devices, in
/// finding order, each command once per device; and the fixes that could not be translated.
pub fn plan(findings: &[Finding], blamed: &[String]) -> (Vec<Remedy>, Vec<String>) {
    let mut out: Vec<Remedy> = Vec::new();
    let mut undone = Vec::new();
    for f in findings.iter().filter(|f| f.weight >= 3) {
        let Some(device) = f.device.as_ref().filter(|d| blamed.contains(d)) else {
            continue;
        };
        let cmds = translate(f);
        if cmds.is_empty() {
            undone.push(format!("{} (on {device})", f.fix));
        }
        for command in cmds {
            let r = Remedy {
                device: device.clone(),
                command,
            };
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    (out, undone)
}

/// Applies the repair plan of a faulty verdict through `exec_shell` and says in the diagnosis
/// text what was run (and what could not be): the repair task's answer. A healthy verdict
/// changes nothing.
pub async fn apply(p: &mut Prober, d: &mut Diagnosis, findings: &[Finding]) {
    if d.is_anomaly != Some(true) {
        d.text += " Repair: nothing to repair; I changed nothing.";
        return;
    }
    let (steps, undone) = plan(findings, &d.faulty_devices);
    let mut done = Vec::new();
    for r in &steps {
        let answer = p
            .call(
                "exec_shell",
                json!({"host_name": r.device, "command": r.command}),
            )
            .await;
        let how = match answer {
            None => "not run: the budget was spent".to_string(),
            Some(a) if a.refused => "refused by the tool policy".to_string(),
            Some(a) if a.failed => {
                format!("failed: {}", a.text.lines().last().unwrap_or("").trim())
            }
            Some(_) => "done".to_string(),
        };
        done.push(format!("`{}` on {} ({how})", r.command, r.device));
    }
    if done.is_empty() {
        d.text += " Repair: no command follows from the evidence; I changed nothing.";
    } else {
        d.text += &format!(" Repair: I ran {}.", done.join("; "));
    }
    if !undone.is_empty() {
        d.text += &format!(
            " Not applied (the evidence does not give the command): {}.",
            undone.join("; ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn f(device: &str, fix: &str) -> Finding {
        Finding::on(device, 3, "seen", fix)
    }

    #[test]
    fn fixes_become_commands() {
        let cases = [
            (
                "start bgpd again on r2 (/etc/init.d/frr restart)",
                "service frr restart",
            ),
            (
                "restore the saved routing configuration on r1 (added `x`)",
                "service frr restart",
            ),
            (
                "bring the interface up: ip link set dev eth0 up on pc2",
                "ip link set dev eth0 up",
            ),
            ("bring eth1 up on r1", "ip link set dev eth1 up"),
            (
                "delete the SNAT rule on r1: iptables -t nat -D POSTROUTING -s 10.0.0.0/24 -j SNAT --to-source 1.2.3.4",
                "iptables -t nat -D POSTROUTING -s 10.0.0.0/24 -j SNAT --to-source 1.2.3.4",
            ),
            (
                "delete the rule on r1: iptables -D FORWARD -j DROP",
                "iptables -D FORWARD -j DROP",
            ),
            (
                "delete the iptables rule `-A INPUT -p tcp -m tcp --dport 179 -j DROP` on r1",
                "iptables -D INPUT -p tcp -m tcp --dport 179 -j DROP",
            ),
            (
                "delete the qdisc: tc qdisc del dev eth1 root on r3",
                "tc qdisc del dev eth1 root",
            ),
            (
                "delete the route `blackhole 10.1.0.0/24 proto static metric 20` on r2",
                "ip route del 10.1.0.0/24",
            ),
            (
                "delete the route: ip route del 10.2.0.0/24 on r2 (and its `ip route` in FRR)",
                "ip route del 10.2.0.0/24",
            ),
            (
                "set the default route of pc1 to via 10.0.0.1",
                "ip route replace default via 10.0.0.1",
            ),
            (
                "enable net.ipv4.ip_forward on r1",
                "sysctl -w net.ipv4.ip_forward=1",
            ),
            (
                "start the DNS service (named) on dns again",
                "systemctl start bind9",
            ),
            ("start keepalived on r1", "systemctl start keepalived"),
        ];
        for (fix, cmd) in cases {
            assert_eq!(translate(&f("x", fix)), vec![cmd.to_string()], "{fix}");
        }
        assert!(translate(&f("r1", "fix the neighbor address under router bgp on r1")).is_empty());
    }

    #[test]
    fn the_plan_keeps_blamed_weight_three_findings_once() {
        let findings = vec![
            f("r2", "start bgpd again on r2 (/etc/init.d/frr restart)"),
            f("r2", "start ospfd again on r2 (/etc/init.d/frr restart)"),
            f("r9", "bring eth1 up on r9"),
            Finding::on("r2", 2, "weak", "bring eth3 up on r2"),
            f(
                "r2",
                "make the remote-as/local-as on r2 match the peer's AS",
            ),
        ];
        let (plan, undone) = plan(&findings, &["r2".to_string()]);
        assert_eq!(
            plan,
            vec![Remedy {
                device: "r2".into(),
                command: "service frr restart".into()
            }]
        );
        assert_eq!(undone.len(), 1);
        assert!(undone[0].contains("remote-as"));
    }
}
