//! What a user would see on a faulted lab, measured: the facts tickets are written from.
//!
//! A family says what *should* break; this module looks. While a verified fault holds, the
//! generator runs the probes a user or a first-line engineer would run — a ping from the
//! suffering host to what it lost and from a host that still works, a traceroute to see where
//! the path stops, a request to the service that stopped — and records what came back
//! ([`ObservedSymptoms`]). It also records facts about the faulted device that a misleading ticket may
//! contradict (which interfaces have carrier, which routing daemons run), so a wrong-cause
//! ticket only claims something the live lab shows to be false.
//!
//! The result is stored with the variant in the journal and is the only input of the ticket
//! writers in [`crate::tickets`]; the ground truth never reaches them.

use crate::template::safe_value;
use crate::ticket::SymptomView;
use faultbench_core::emulator::{Command, Lab};
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// How a ping from one host to an address went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Reach {
    /// Every echo was answered.
    Answers,
    /// Some echoes were answered, `loss` percent were not.
    PartialLoss {
        /// Loss in whole percent.
        loss: u8,
    },
    /// No answer at all and no error message: the probes time out.
    Timeout,
    /// A router (or the host itself) answered "unreachable".
    UnreachableReply {
        /// The address that sent it, when ping names one.
        from: Option<String>,
    },
    /// The sending host has no route at all ("Network is unreachable").
    NoRoute,
    /// The probe could not be run or its output was not understood.
    Unknown,
}

impl Reach {
    /// The probe got through without loss.
    pub fn works(&self) -> bool {
        matches!(self, Reach::Answers)
    }
}

/// One host-to-address probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairObs {
    /// The host the probe ran on.
    pub from: String,
    /// The host probed (a device name).
    pub to: String,
    /// Its address.
    pub to_ip: String,
    /// What came back.
    pub reach: Reach,
}

/// A traceroute from the suffering host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceObs {
    /// The host it ran on.
    pub from: String,
    /// The destination address.
    pub to_ip: String,
    /// The hops that answered, in order (`*` for a silent hop).
    pub hops: Vec<String>,
    /// The destination answered the trace.
    pub reached: bool,
}

/// A service request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServiceObs {
    /// The client it ran on.
    pub client: String,
    /// The server's device name.
    pub server: String,
    /// The server's address.
    pub server_ip: String,
    /// `web`, `dns`, …
    pub service: String,
    /// The service answered.
    pub answers: bool,
    /// The server still answers ping.
    pub server_pings: bool,
}

/// A fact about the faulted device, measured during the fault.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "fact", rename_all = "snake_case")]
pub enum DeviceFact {
    /// The interface has carrier (the cable is in and the link is up).
    CarrierUp {
        /// Interface name.
        iface: String,
    },
    /// A routing daemon process runs.
    DaemonRunning {
        /// Process name (`bgpd`, `ospfd`, …).
        daemon: String,
    },
}

/// The former name of [`ObservedSymptoms`] (one public name per concept across the crates:
/// faultbench-emu's parity check has `ParityObservation`; issue 28).
#[deprecated(note = "renamed to `ObservedSymptoms`; the old name goes in the next release")]
pub type Observed = ObservedSymptoms;

/// What a user would see on the faulted lab.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObservedSymptoms {
    /// `unreachable`, `service-down` or `degraded` (the family's own word).
    pub kind: String,
    /// Host pairs probed (the suffering pair first, then any control).
    pub pairs: Vec<PairObs>,
    /// Where a trace from the suffering host stops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<TraceObs>,
    /// The service request, for a stopped service.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<ServiceObs>,
    /// The faulted device.
    pub device: String,
    /// Facts on the faulted device a wrong-cause ticket may contradict.
    pub facts: Vec<DeviceFact>,
}

impl ObservedSymptoms {
    /// The suffering pair, when the probe shows a failure.
    pub fn failing_pair(&self) -> Option<&PairObs> {
        self.pairs.iter().find(|p| !p.reach.works())
    }

    /// Pairs that still work.
    pub fn working_pairs(&self) -> impl Iterator<Item = &PairObs> {
        self.pairs.iter().filter(|p| p.reach.works())
    }

    /// Whether anything a user would notice was measured.
    pub fn is_visible(&self) -> bool {
        self.failing_pair().is_some() || self.service.as_ref().is_some_and(|s| !s.answers)
    }
}

/// Reads ping's output.
pub fn parse_ping(stdout: &str, stderr: &str) -> Reach {
    let all = format!("{stdout}\n{stderr}");
    let lower = all.to_lowercase();
    if lower.contains("network is unreachable") && !lower.contains("from ") {
        return Reach::NoRoute;
    }
    let loss = lower.lines().find_map(|l| {
        let i = l.find("% packet loss")?;
        let head = &l[..i];
        let start = head
            .rfind(|c: char| !(c.is_ascii_digit() || c == '.'))
            .map_or(0, |p| p + 1);
        head[start..].parse::<f64>().ok()
    });
    if lower.contains("unreachable") {
        let from = all.lines().find_map(|l| {
            let rest = l.trim().strip_prefix("From ")?;
            let addr: String = rest
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '.')
                .collect();
            (!addr.is_empty()).then_some(addr)
        });
        return Reach::UnreachableReply { from };
    }
    match loss {
        Some(0.0) => Reach::Answers,
        Some(l) if l >= 100.0 => Reach::Timeout,
        Some(l) => Reach::PartialLoss {
            loss: l.round().clamp(1.0, 99.0) as u8,
        },
        None => Reach::Unknown,
    }
}

/// Reads `traceroute -n` output: the address of each hop (`*` when none answered) and whether
/// the last hop is `dest`.
pub fn parse_traceroute(stdout: &str, dest: &str) -> (Vec<String>, bool) {
    let mut hops = Vec::new();
    for line in stdout.lines().skip_while(|l| l.starts_with("traceroute")) {
        let mut words = line.split_whitespace();
        if words.next().and_then(|n| n.parse::<u32>().ok()).is_none() {
            continue;
        }
        let hop = words
            .find(|w| w.parse::<std::net::Ipv4Addr>().is_ok())
            .unwrap_or("*");
        hops.push(hop.to_string());
    }
    // Trailing silent hops say only that the trace ran out; keep one to show where it stopped.
    while hops.len() >= 2 && hops[hops.len() - 1] == "*" && hops[hops.len() - 2] == "*" {
        hops.pop();
    }
    let reached = hops.last().is_some_and(|h| h == dest);
    (hops, reached)
}

const PROBE_TIMEOUT: Duration = Duration::from_secs(15);

async fn run(lab: &dyn Lab, device: &str, script: String) -> Option<(String, String)> {
    let out = lab
        .exec(device, &Command::shell(script), PROBE_TIMEOUT)
        .await
        .ok()?;
    (!out.timed_out).then_some((out.stdout, out.stderr))
}

async fn ping(lab: &dyn Lab, from: &str, to: &str, ip: &str) -> Option<PairObs> {
    if !safe_value(from) || !safe_value(ip) {
        return None;
    }
    let reach = match run(lab, from, format!("ping -n -c3 -i0.3 -W1 {ip}")).await {
        Some((o, e)) => parse_ping(&o, &e),
        None => Reach::Unknown,
    };
    Some(PairObs {
        from: from.into(),
        to: to.into(),
        to_ip: ip.into(),
        reach,
    })
}

/// Routing daemons whose process a wrong-cause ticket may claim has died.
const DAEMONS: [&str; 4] = ["zebra", "bgpd", "ospfd", "ripd"];

/// Measures what a user sees on `lab` while the fault of a variant with symptom `view` holds.
///
/// The probes are independent reads of a lab that is not changing, so they run at the same
/// time: the slowest (a ping that times out, a traceroute that stops) sets the duration, not
/// their sum. Results are put in a fixed order, so the outcome does not depend on which
/// probe answered first.
pub async fn observe(lab: &dyn Lab, view: &SymptomView, device: &str) -> ObservedSymptoms {
    let mut obs = ObservedSymptoms {
        kind: view.kind.clone(),
        device: device.to_string(),
        ..ObservedSymptoms::default()
    };
    let facts = device_facts(lab, device);
    if view.kind == "service-down" {
        if let (Some((client, _)), Some((server, ip))) = (&view.victim, &view.far)
            && safe_value(client)
            && safe_value(ip)
        {
            let kind = view.service.clone().unwrap_or_default();
            let script = match kind.as_str() {
                "web" => format!("curl -s -o /dev/null -m 3 -w '%{{http_code}}' http://{ip}/"),
                "dns" => format!("dig +time=2 +tries=1 @{ip} . NS >/dev/null && echo 200"),
                _ => format!("ping -n -c1 -W1 {ip} >/dev/null && echo 200"),
            };
            let (asked, pinged, f) = tokio::join!(
                run(lab, client, script),
                ping(lab, client, server, ip),
                facts
            );
            let answers = asked.is_some_and(|(o, _)| o.trim().starts_with(['2', '3']));
            obs.service = Some(ServiceObs {
                client: client.clone(),
                server: server.clone(),
                server_ip: ip.clone(),
                service: kind,
                answers,
                server_pings: pinged.as_ref().is_some_and(|p| p.reach.works()),
            });
            obs.pairs.extend(pinged);
            obs.facts = f;
            return obs;
        }
    } else if let (Some((victim, _)), Some((far, far_ip))) = (&view.victim, &view.far) {
        let control = async {
            match &view.control {
                Some(c) => ping(lab, c, far, far_ip).await,
                None => None,
            }
        };
        let trace = async {
            if !(safe_value(victim) && safe_value(far_ip)) {
                return None;
            }
            let script = format!("traceroute -n -q2 -w1 -m8 {far_ip} 2>&1");
            let (o, _) = run(lab, victim, script).await?;
            let (hops, reached) = parse_traceroute(&o, far_ip);
            Some(TraceObs {
                from: victim.clone(),
                to_ip: far_ip.clone(),
                hops,
                reached,
            })
        };
        let (v, c, t, f) = tokio::join!(ping(lab, victim, far, far_ip), control, trace, facts);
        obs.pairs.extend(v);
        obs.pairs.extend(c);
        obs.trace = t;
        obs.facts = f;
        return obs;
    }
    obs.facts = facts.await;
    obs
}

/// Which interfaces of `device` have carrier and which routing daemons run on it, read in one
/// command (interface names are listed by the device's shell and validated here before they
/// are kept).
async fn device_facts(lab: &dyn Lab, device: &str) -> Vec<DeviceFact> {
    if !safe_value(device) {
        return Vec::new();
    }
    let script = format!(
        "cd /sys/class/net && for i in *; do printf 'if %s %s\\n' \"$i\" \"$(cat \"$i/carrier\" 2>/dev/null)\"; done; \
         for d in {}; do pgrep -x $d >/dev/null && echo \"daemon $d\"; done",
        DAEMONS.join(" ")
    );
    let Some((out, _)) = run(lab, device, script).await else {
        return Vec::new();
    };
    parse_facts(&out)
}

/// Reads the output of [`device_facts`]' script: `if <name> <carrier>` and `daemon <name>`
/// lines. Interfaces come in name order, then daemons in [`DAEMONS`] order.
fn parse_facts(out: &str) -> Vec<DeviceFact> {
    let mut carrier: Vec<String> = Vec::new();
    let mut running: Vec<&str> = Vec::new();
    for line in out.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        match words.as_slice() {
            ["if", name, "1"] if *name != "lo" && safe_value(name) => {
                carrier.push(name.to_string());
            }
            ["daemon", d] => running.extend(DAEMONS.iter().copied().filter(|x| x == d)),
            _ => {}
        }
    }
    carrier.sort();
    carrier.dedup();
    let mut facts: Vec<DeviceFact> = carrier
        .into_iter()
        .map(|iface| DeviceFact::CarrierUp { iface })
        .collect();
    facts.extend(DAEMONS.iter().filter(|d| running.contains(d)).map(|d| {
        DeviceFact::DaemonRunning {
            daemon: d.to_string(),
        }
    }));
    facts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ping_outputs_are_told_apart() {
        let ok = "3 packets transmitted, 3 received, 0% packet loss, time 2003ms";
        assert_eq!(parse_ping(ok, ""), Reach::Answers);
        let lost = "3 packets transmitted, 0 received, 100% packet loss, time 2040ms";
        assert_eq!(parse_ping(lost, ""), Reach::Timeout);
        let some = "3 packets transmitted, 2 received, 33.3333% packet loss";
        assert_eq!(parse_ping(some, ""), Reach::PartialLoss { loss: 33 });
        let unreach = "From 10.0.1.1 icmp_seq=1 Destination Net Unreachable\n\
                       3 packets transmitted, 0 received, +3 errors, 100% packet loss";
        assert_eq!(
            parse_ping(unreach, ""),
            Reach::UnreachableReply {
                from: Some("10.0.1.1".into())
            }
        );
        assert_eq!(
            parse_ping("", "ping: connect: Network is unreachable"),
            Reach::NoRoute
        );
        assert_eq!(parse_ping("garbage", ""), Reach::Unknown);
    }

    #[test]
    fn device_facts_keep_carrier_interfaces_and_known_daemons_in_order() {
        let out = "if lo 1\nif eth1 1\nif eth0 1\nif eth2 0\nif bad;name 1\nif eth3 \n\
                   daemon ospfd\ndaemon zebra\ndaemon evil\n";
        assert_eq!(
            parse_facts(out),
            vec![
                DeviceFact::CarrierUp {
                    iface: "eth0".into()
                },
                DeviceFact::CarrierUp {
                    iface: "eth1".into()
                },
                DeviceFact::DaemonRunning {
                    daemon: "zebra".into()
                },
                DeviceFact::DaemonRunning {
                    daemon: "ospfd".into()
                },
            ]
        );
        assert!(parse_facts("").is_empty());
    }

    #[test]
    fn traceroute_hops_and_where_they_stop() {
        let (hops, _) = parse_traceroute(" 1  * 10.0.1.1  0.2 ms !N\n", "10.0.2.2");
        assert_eq!(hops, vec!["10.0.1.1"]);
        let out = "traceroute to 10.0.2.2 (10.0.2.2), 8 hops max\n 1  10.0.1.1  0.1 ms\n 2  *\n 3  *\n 4  *\n";
        let (hops, reached) = parse_traceroute(out, "10.0.2.2");
        assert_eq!(hops, vec!["10.0.1.1", "*"]);
        assert!(!reached);
        let out = " 1  10.0.1.1  0.1 ms\n 2  10.0.0.2  0.2 ms\n 3  10.0.2.2  0.3 ms\n";
        let (hops, reached) = parse_traceroute(out, "10.0.2.2");
        assert_eq!(hops.len(), 3);
        assert!(reached);
    }
}
