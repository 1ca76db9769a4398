//! Parity between two emulators: does a lab look the same to an agent on both?
//!
//! An agent sees a device through commands: its processes, interfaces and carrier, addresses,
//! kernel routes, FRR's routes and running configuration, the FRR daemons that run, the
//! sockets that listen, sysctls and packet filters. [`ParityState::read`] reads all of that from one device of a running lab —
//! the state snapshot of [`faultbench_core::snapshot`] (through [`Lab::device_state`], so each
//! backend reads it its fastest way) plus [`PARITY_SCRIPT`] for what a snapshot leaves out —
//! and [`compare`] lists every difference between two labs of the same directory, device by
//! device. [`run`] brings a lab up on two [`Emulator`]s (any two: netns against Kathará, or
//! netns against netns in tests), compares, and tears both down.
//!
//! What legitimately differs is normalised away before comparing: PIDs (never read), ports of
//! ephemeral sockets (from 32768, Linux's default `ip_local_port_range`), ordering (every aspect
//! is a sorted map) and MAC addresses (netns lets the kernel pick them at random, Kathará derives
//! them from device and interface; lab.conf-given MACs are applied by both and would show
//! elsewhere, e.g. in neighbour tables, which are not compared). A device process is compared by
//! name and count; the reading shell and its parent (a backend's exec wrapper) are left out.
//!
//! Routing converges at its own pace on each side, so a comparison that finds differences is
//! repeated (bounded by [`ParityOptions::settle`]) and the last one is reported.

use faultbench_core::emulator::{Command, EmuError, Emulator, Lab, LabRequest};
use faultbench_core::snapshot::{Aspect, AspectState};
use futures_util::stream::{self, StreamExt};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Everything an agent can observe that a [`faultbench_core::snapshot::Snapshot`] does not
/// hold: every process name (not only known services), listening sockets with their owners,
/// and FRR's routing table (`show ip route json`) where zebra runs. One `@@<part> <code>`
/// marker after each part, as in the snapshot script. The reading shell and the process that
/// started it (a backend's exec wrapper, such as the `timeout` of a CLI-based exec; never the
/// device's PID 1) are left out of the process list.
pub const PARITY_SCRIPT: &str = r#"frr=0; up=$PPID; [ "$up" -gt 1 ] 2>/dev/null || up=0; for d in /proc/[0-9]*; do p=${d#/proc/}; [ "$p" = "$$" ] || [ "$p" = "$up" ] && continue; c=; read -r c < "$d/comm" 2>/dev/null || continue; echo "$c"; [ "$c" = zebra ] && frr=1; done; echo "@@processes 0"
ss -Hlntup 2>&1; echo "@@listening $?"
if [ $frr = 1 ]; then vtysh -c 'show ip route json' 2>&1; echo "@@frr_routes $?"; else echo "@@frr_routes absent"; fi
"#;

/// What a netns device does not reproduce of a Kathará device and no aspect reads, one line
/// each: printed by `faultbench lab parity` and kept in every [`ParityReport`], so that "no
/// difference" is never read as more than it checks (docs/parity.md explains each).
pub const NOT_COMPARED: &[&str] = &[
    "traffic on the links: Docker's resolver forwards names it does not know to the host's resolvers from inside a Kathará device (seen in a capture when the device has a route towards them); the netns emulation of that resolver answers the same (nothing) but sends nothing",
    "file modes of /etc/hosts and /etc/resolv.conf: 0755 on Kathará (Docker's mount points), 0644 on netns; contents are the same",
];

/// First port of Linux's default ephemeral range (`net.ipv4.ip_local_port_range`).
const EPHEMERAL_FROM: u32 = 32768;

/// Items of one aspect: key → value (a count such as `×2` for repeated process names).
pub type Items = BTreeMap<String, String>;

/// The former name of [`ParityObservation`] (one public name per concept across the crates:
/// faultbench-gen has `ObservedSymptoms`; issue 28).
#[deprecated(note = "renamed to `ParityObservation`; the old name goes in the next release")]
pub type Observed = ParityObservation;

/// What could be read of one aspect of a device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ParityObservation {
    /// The normalised items.
    Items(Items),
    /// Not there (e.g. FRR does not run), and why: compared as a state of its own.
    Absent(String),
    /// Could not be read, and why: reported, never silently equal.
    Failed(String),
}

/// The agent-observable state of one device, by aspect name (`processes`, `links`,
/// `addresses`, `routes`, `frr_routes`, `frr_config`, `frr_daemons`, `listening`, `sysctls`,
/// `packet_filter`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParityState {
    /// Aspect name → what was read.
    pub aspects: BTreeMap<String, ParityObservation>,
}

impl ParityState {
    /// Reads one device of a running lab.
    pub async fn read(lab: &dyn Lab, device: &str, timeout: Duration) -> ParityState {
        let snap = lab.device_state(device, timeout).await;
        let extra = lab
            .exec(device, &Command::shell(PARITY_SCRIPT), timeout)
            .await;
        let mut out = ParityState::default();
        for (aspect, name) in [
            (Aspect::Links, "links"),
            (Aspect::Addresses, "addresses"),
            (Aspect::Routes, "routes"),
            (Aspect::Sysctls, "sysctls"),
            (Aspect::PacketFilter, "packet_filter"),
            (Aspect::FrrConfig, "frr_config"),
        ] {
            let o = match snap.aspects.get(&aspect) {
                Some(AspectState::Items(i)) if aspect == Aspect::Links => {
                    ParityObservation::Items(without_macs(i))
                }
                Some(AspectState::Items(i)) if aspect == Aspect::PacketFilter => {
                    ParityObservation::Items(resolver_ports_normalised(i))
                }
                Some(AspectState::Items(i)) => ParityObservation::Items(i.clone()),
                Some(AspectState::Absent(w)) => ParityObservation::Absent(w.clone()),
                Some(AspectState::Failed(w)) => ParityObservation::Failed(w.clone()),
                None => ParityObservation::Failed("not read by this backend".into()),
            };
            out.aspects.insert(name.into(), o);
        }
        let daemons = match snap.aspects.get(&Aspect::Services) {
            Some(AspectState::Items(i)) => ParityObservation::Items(
                i.iter()
                    .filter(|(k, _)| is_frr_daemon(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            Some(AspectState::Failed(w)) => ParityObservation::Failed(w.clone()),
            _ => ParityObservation::Items(Items::new()),
        };
        out.aspects.insert("frr_daemons".into(), daemons);
        match extra {
            Err(e) => {
                for name in ["processes", "listening", "frr_routes"] {
                    out.aspects.insert(
                        name.into(),
                        ParityObservation::Failed(format!("could not run: {e}")),
                    );
                }
            }
            Ok(o) => {
                let parts = parse_extra(&o.stdout, o.timed_out);
                out.aspects.extend(parts);
            }
        }
        out
    }
}

fn is_frr_daemon(name: &str) -> bool {
    name == "watchfrr" || faultbench_core::snapshot::FRR_DAEMONS.contains(&name)
}

/// Link values without their `mac …` part (see the module docs).
fn without_macs(links: &Items) -> Items {
    links
        .iter()
        .map(|(k, v)| {
            let kept: Vec<&str> = v.split(", ").filter(|p| !p.starts_with("mac ")).collect();
            (k.clone(), kept.join(", "))
        })
        .collect()
}

/// Packet-filter rules with the ephemeral ports of Docker's embedded resolver (its `nat` rules
/// name the ports its sockets got, random on every device, as in `listening`) written `*eph`.
/// Only rules that name the resolver's address are touched.
fn resolver_ports_normalised(rules: &Items) -> Items {
    let eph = |w: &str| w.parse::<u32>().is_ok_and(|p| p >= EPHEMERAL_FROM);
    rules
        .iter()
        .map(|(k, v)| {
            if !k.contains("127.0.0.11") {
                return (k.clone(), v.clone());
            }
            let words: Vec<String> = k
                .split(' ')
                .map(|w| match w.rsplit_once(':') {
                    Some((host, p)) if eph(p) => format!("{host}:*eph"),
                    _ if eph(w) => "*eph".to_string(),
                    _ => w.to_string(),
                })
                .collect();
            (words.join(" "), v.clone())
        })
        .collect()
}

/// Splits [`PARITY_SCRIPT`]'s output into its parts and normalises each.
pub fn parse_extra(output: &str, timed_out: bool) -> BTreeMap<String, ParityObservation> {
    let mut parts: BTreeMap<String, (String, String)> = BTreeMap::new();
    let mut text = String::new();
    for line in output.lines() {
        if let Some(marker) = line.strip_prefix("@@") {
            let (name, rc) = marker.split_once(' ').unwrap_or((marker, ""));
            parts.insert(
                name.to_string(),
                (std::mem::take(&mut text), rc.trim().to_string()),
            );
        } else {
            text.push_str(line);
            text.push('\n');
        }
    }
    let mut out = BTreeMap::new();
    for name in ["processes", "listening", "frr_routes"] {
        let o = match parts.get(name) {
            None if timed_out => ParityObservation::Failed("timed out".into()),
            None => ParityObservation::Failed("no output (the command was cut short)".into()),
            Some((_, rc)) if rc == "absent" => {
                ParityObservation::Absent("FRR is not running".into())
            }
            Some((t, rc)) if rc != "0" => {
                let said = t.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
                ParityObservation::Failed(format!("exit {rc}: {}", said.trim()))
            }
            Some((t, _)) => match name {
                "processes" => ParityObservation::Items(processes(t)),
                "listening" => ParityObservation::Items(listening(t)),
                _ => frr_routes(t),
            },
        };
        out.insert(name.to_string(), o);
    }
    out
}

/// Process names, counted.
fn processes(text: &str) -> Items {
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    for l in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
        *counts.entry(l.to_string()).or_default() += 1;
    }
    counted(counts)
}

fn counted(counts: BTreeMap<String, u32>) -> Items {
    counts
        .into_iter()
        .map(|(k, n)| {
            (
                k,
                if n == 1 {
                    String::new()
                } else {
                    format!("×{n}")
                },
            )
        })
        .collect()
}

/// `ss -Hlntup` lines → `tcp 0.0.0.0:179` → owners (`bgpd`). Ephemeral ports become `*eph`.
fn listening(text: &str) -> Items {
    let mut counts: BTreeMap<String, u32> = BTreeMap::new();
    let mut owners: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in text.lines() {
        let f: Vec<&str> = l.split_whitespace().collect();
        // netid state recv-q send-q local peer [process]
        if f.len() < 5 {
            continue;
        }
        let (proto, local) = (f[0], f[4]);
        let local = match local.rsplit_once(':') {
            Some((host, port)) if port.parse::<u32>().is_ok_and(|p| p >= EPHEMERAL_FROM) => {
                format!("{host}:*eph")
            }
            _ => local.to_string(),
        };
        let key = format!("{proto} {local}");
        *counts.entry(key.clone()).or_default() += 1;
        let rest = f[5..].join(" ");
        let mut names: Vec<String> = rest
            .split("((\"")
            .skip(1)
            .chain(rest.split("),(\"").skip(1))
            .filter_map(|s| s.split('"').next())
            .map(str::to_string)
            .collect();
        names.sort();
        names.dedup();
        owners.entry(key).or_default().extend(names);
    }
    counts
        .into_iter()
        .map(|(k, n)| {
            let mut who = owners.remove(&k).unwrap_or_default();
            who.sort();
            who.dedup();
            let mut v = who.join(",");
            if n > 1 {
                v = format!("{v} ×{n}");
            }
            (k, v.trim().to_string())
        })
        .collect()
}

/// `show ip route json` → prefix → protocol, selected/installed flags and next hops (uptimes
/// and internal ids dropped).
fn frr_routes(text: &str) -> ParityObservation {
    let v: Value = match serde_json::from_str(text.trim()) {
        Ok(v) => v,
        Err(e) => return ParityObservation::Failed(format!("unreadable JSON from vtysh: {e}")),
    };
    let Some(map) = v.as_object() else {
        return ParityObservation::Failed("vtysh did not answer a JSON object".into());
    };
    let mut out = Items::new();
    for (prefix, entries) in map {
        for (k, r) in entries.as_array().into_iter().flatten().enumerate() {
            let mut parts = vec![r["protocol"].as_str().unwrap_or("?").to_string()];
            if r["selected"].as_bool() == Some(true) {
                parts.push("selected".into());
            }
            if r["installed"].as_bool() == Some(true) {
                parts.push("installed".into());
            }
            if let Some(d) = r["distance"].as_u64() {
                parts.push(format!("distance {d}"));
            }
            if let Some(m) = r["metric"].as_u64() {
                parts.push(format!("metric {m}"));
            }
            let mut hops: Vec<String> = r["nexthops"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|h| {
                    let mut p = Vec::new();
                    if let Some(ip) = h["ip"].as_str() {
                        p.push(format!("via {ip}"));
                    }
                    if let Some(i) = h["interfaceName"].as_str() {
                        p.push(format!("dev {i}"));
                    }
                    if h["active"].as_bool() == Some(true) {
                        p.push("active".into());
                    }
                    p.join(" ")
                })
                .collect();
            hops.sort();
            parts.extend(hops);
            let key = if k == 0 {
                prefix.clone()
            } else {
                format!("{prefix} #{}", k + 1)
            };
            out.insert(key, parts.join(" "));
        }
    }
    ParityObservation::Items(out)
}

/// The former name of [`ParityDifference`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `ParityDifference`; the old name goes in the next release")]
pub type Difference = ParityDifference;

/// One difference between the two sides.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParityDifference {
    /// The device (or `(lab)` for a device present on one side only).
    pub device: String,
    /// The aspect (`addresses`, `frr_daemons`, …).
    pub aspect: String,
    /// The item (an interface, an address, a route, a process name…), or the aspect's name
    /// when the whole aspect differs.
    pub item: String,
    /// Its value on the first side (`None`: absent there).
    pub a: Option<String>,
    /// Its value on the second side (`None`: absent there).
    pub b: Option<String>,
}

impl ParityDifference {
    /// One line: `router1 addresses: lo 10.9.9.9/32 only on netns-b`.
    pub fn line(&self, a: &str, b: &str) -> String {
        let show = |v: &str| {
            if v.is_empty() {
                String::new()
            } else {
                format!(" ({v})")
            }
        };
        let what = match (&self.a, &self.b) {
            (Some(x), None) => format!("{}{} only on {a}", self.item, show(x)),
            (None, Some(y)) => format!("{}{} only on {b}", self.item, show(y)),
            (Some(x), Some(y)) => format!("{}: {a} `{x}`, {b} `{y}`", self.item),
            (None, None) => self.item.clone(),
        };
        format!("{} {}: {what}", self.device, self.aspect)
    }
}

/// The states of every device of one lab, by device name.
pub type LabStates = BTreeMap<String, ParityState>;

/// Reads every device of `lab` (`parallelism` at a time).
pub async fn read_lab(lab: &dyn Lab, timeout: Duration, parallelism: usize) -> LabStates {
    let read: Vec<(String, ParityState)> = stream::iter(lab.devices())
        .map(|d| async move {
            let s = ParityState::read(lab, &d, timeout).await;
            (d, s)
        })
        .buffered(parallelism.max(1))
        .collect()
        .await;
    read.into_iter().collect()
}

fn describe(o: &ParityObservation) -> String {
    match o {
        ParityObservation::Items(i) => format!("{} item(s)", i.len()),
        ParityObservation::Absent(w) => format!("absent: {w}"),
        ParityObservation::Failed(w) => format!("unreadable: {w}"),
    }
}

/// Every difference between two labs' states, in device, aspect and item order. An aspect that
/// could not be read on either side is a difference too: parity cannot be claimed for it.
pub fn compare(a: &LabStates, b: &LabStates) -> Vec<ParityDifference> {
    let mut out = Vec::new();
    let devices: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    for d in devices {
        let (Some(sa), Some(sb)) = (a.get(d), b.get(d)) else {
            out.push(ParityDifference {
                device: "(lab)".into(),
                aspect: "devices".into(),
                item: d.clone(),
                a: a.contains_key(d).then(String::new),
                b: b.contains_key(d).then(String::new),
            });
            continue;
        };
        let aspects: std::collections::BTreeSet<&String> =
            sa.aspects.keys().chain(sb.aspects.keys()).collect();
        for asp in aspects {
            let (oa, ob) = (sa.aspects.get(asp), sb.aspects.get(asp));
            match (oa, ob) {
                (Some(ParityObservation::Items(ia)), Some(ParityObservation::Items(ib))) => {
                    let keys: std::collections::BTreeSet<&String> =
                        ia.keys().chain(ib.keys()).collect();
                    for k in keys {
                        let (va, vb) = (ia.get(k), ib.get(k));
                        if va != vb {
                            out.push(ParityDifference {
                                device: d.clone(),
                                aspect: asp.clone(),
                                item: k.clone(),
                                a: va.cloned(),
                                b: vb.cloned(),
                            });
                        }
                    }
                }
                (x, y) if x == y && !matches!(x, Some(ParityObservation::Failed(_))) => {}
                (x, y) => out.push(ParityDifference {
                    device: d.clone(),
                    aspect: asp.clone(),
                    item: asp.clone(),
                    a: Some(x.map_or("not read".into(), describe)),
                    b: Some(y.map_or("not read".into(), describe)),
                }),
            }
        }
    }
    out
}

/// Knobs of [`run`] and [`compare_running`].
#[derive(Debug, Clone, Copy)]
pub struct ParityOptions {
    /// Timeout of each device read.
    pub timeout: Duration,
    /// Devices read at the same time, per lab.
    pub parallelism: usize,
    /// How long differences may take to go away (routing still settling) before they are
    /// reported; the labs are compared again every 2 s meanwhile.
    pub settle: Duration,
}

impl Default for ParityOptions {
    /// 20 s per device read, 8 devices at a time, 20 s to settle.
    fn default() -> Self {
        ParityOptions {
            timeout: Duration::from_secs(20),
            parallelism: 8,
            settle: Duration::from_secs(20),
        }
    }
}

/// The outcome of a comparison.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ParityReport {
    /// Label of the first side (`netns`), and its lab instance.
    pub a: String,
    /// Label of the second side (`kathara`), and its lab instance.
    pub b: String,
    /// Devices compared.
    pub devices: usize,
    /// Comparisons made before the differences stayed (or went away).
    pub rounds: u32,
    /// What differs (empty: the labs are indistinguishable in what is read).
    pub differences: Vec<ParityDifference>,
    /// What is known to differ or may differ but is not read ([`NOT_COMPARED`]).
    #[serde(default)]
    pub not_compared: Vec<String>,
}

/// Compares two running labs of the same directory, again every 2 s while they differ, for
/// at most `opts.settle`.
pub async fn compare_running(
    a: &dyn Lab,
    b: &dyn Lab,
    labels: (&str, &str),
    opts: &ParityOptions,
) -> ParityReport {
    let start = Instant::now();
    let mut rounds = 0;
    loop {
        rounds += 1;
        let (sa, sb) = tokio::join!(
            read_lab(a, opts.timeout, opts.parallelism),
            read_lab(b, opts.timeout, opts.parallelism)
        );
        let differences = compare(&sa, &sb);
        if differences.is_empty() || start.elapsed() + Duration::from_secs(2) > opts.settle {
            return ParityReport {
                a: labels.0.to_string(),
                b: labels.1.to_string(),
                devices: sa.len().max(sb.len()),
                rounds,
                differences,
                not_compared: NOT_COMPARED.iter().map(|s| s.to_string()).collect(),
            };
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// Brings the lab of `request` up on both emulators (at the same time), compares them and
/// tears both down, whatever happened. Labels are the emulators' kinds, with `-a`/`-b` added
/// when both are of one kind.
pub async fn run(
    a: Arc<dyn Emulator>,
    b: Arc<dyn Emulator>,
    request: &LabRequest,
    opts: &ParityOptions,
) -> Result<ParityReport, EmuError> {
    let (la, lb) = labels(a.name(), b.name());
    let (ra, rb) = tokio::join!(a.deploy(request), b.deploy(request));
    let (lab_a, lab_b) = match (ra, rb) {
        (Ok(x), Ok(y)) => (x, y),
        (Ok(x), Err(e)) | (Err(e), Ok(x)) => {
            let _ = x.teardown().await;
            return Err(e);
        }
        (Err(e), Err(_)) => return Err(e),
    };
    let report = compare_running(lab_a.as_ref(), lab_b.as_ref(), (&la, &lb), opts).await;
    let (ta, tb) = tokio::join!(lab_a.teardown(), lab_b.teardown());
    ta?;
    tb?;
    Ok(report)
}

/// Labels of the two sides: the kinds, told apart when equal.
pub fn labels(a: &str, b: &str) -> (String, String) {
    if a == b {
        (format!("{a}-a"), format!("{b}-b"))
    } else {
        (a.to_string(), b.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(pairs: &[(&str, &[(&str, &str)])]) -> ParityState {
        ParityState {
            aspects: pairs
                .iter()
                .map(|(a, items)| {
                    (
                        a.to_string(),
                        ParityObservation::Items(
                            items
                                .iter()
                                .map(|(k, v)| (k.to_string(), v.to_string()))
                                .collect(),
                        ),
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn equal_labs_have_no_difference_and_a_planted_one_is_named() {
        let base = state(&[
            ("addresses", &[("eth0 10.0.0.1/24", "")]),
            (
                "frr_daemons",
                &[("bgpd", "running"), ("watchfrr", "running")],
            ),
        ]);
        let a: LabStates = [("r1".to_string(), base.clone())].into();
        assert!(compare(&a, &a.clone()).is_empty());

        let mut planted = base.clone();
        if let Some(ParityObservation::Items(i)) = planted.aspects.get_mut("addresses") {
            i.insert("lo 10.9.9.9/32".into(), String::new());
        }
        if let Some(ParityObservation::Items(i)) = planted.aspects.get_mut("frr_daemons") {
            i.remove("bgpd");
        }
        let b: LabStates = [("r1".to_string(), planted)].into();
        let d = compare(&a, &b);
        let lines: Vec<String> = d.iter().map(|x| x.line("netns", "kathara")).collect();
        assert_eq!(
            lines,
            [
                "r1 addresses: lo 10.9.9.9/32 only on kathara",
                "r1 frr_daemons: bgpd (running) only on netns",
            ]
        );
    }

    #[test]
    fn an_unreadable_aspect_is_a_difference_and_a_missing_device_too() {
        let mut failed = ParityState::default();
        failed
            .aspects
            .insert("routes".into(), ParityObservation::Failed("exit 1".into()));
        let a: LabStates = [("r1".to_string(), failed.clone())].into();
        let b: LabStates = [
            ("r1".to_string(), failed),
            ("r2".to_string(), ParityState::default()),
        ]
        .into();
        let lines: Vec<String> = compare(&a, &b).iter().map(|x| x.line("a", "b")).collect();
        assert_eq!(
            lines,
            [
                "r1 routes: routes: a `unreadable: exit 1`, b `unreadable: exit 1`",
                "(lab) devices: r2 only on b",
            ]
        );
    }

    #[test]
    fn the_script_output_is_normalised() {
        let out = "bash\nzebra\nbgpd\nsleep\nsleep\n@@processes 0\n\
tcp   LISTEN 0 3 0.0.0.0:179 0.0.0.0:* users:((\"bgpd\",pid=27,fd=22))\n\
udp   UNCONN 0 0 0.0.0.0:45123 0.0.0.0:* users:((\"dhclient\",pid=9,fd=7))\n\
@@listening 0\n\
{\"10.0.0.0/24\":[{\"prefix\":\"10.0.0.0/24\",\"protocol\":\"connected\",\"selected\":true,\"installed\":true,\"distance\":0,\"metric\":0,\"uptime\":\"00:01:02\",\"nexthops\":[{\"interfaceName\":\"eth0\",\"active\":true,\"flags\":3}]}]}\n\
@@frr_routes 0\n";
        let p = parse_extra(out, false);
        let Some(ParityObservation::Items(procs)) = p.get("processes") else {
            panic!("{p:?}")
        };
        assert_eq!(procs.get("sleep").map(String::as_str), Some("×2"));
        assert_eq!(procs.get("bgpd").map(String::as_str), Some(""));
        let Some(ParityObservation::Items(l)) = p.get("listening") else {
            panic!("{p:?}")
        };
        assert_eq!(l.get("tcp 0.0.0.0:179").map(String::as_str), Some("bgpd"));
        assert_eq!(
            l.get("udp 0.0.0.0:*eph").map(String::as_str),
            Some("dhclient")
        );
        let Some(ParityObservation::Items(r)) = p.get("frr_routes") else {
            panic!("{p:?}")
        };
        assert_eq!(
            r.get("10.0.0.0/24").map(String::as_str),
            Some("connected selected installed distance 0 metric 0 dev eth0 active")
        );
        let absent = parse_extra("@@processes 0\n@@listening 0\n@@frr_routes absent\n", false);
        assert!(matches!(
            absent.get("frr_routes"),
            Some(ParityObservation::Absent(_))
        ));
        let cut = parse_extra("bash\n", true);
        assert!(matches!(
            cut.get("processes"),
            Some(ParityObservation::Failed(_))
        ));
    }

    #[test]
    fn the_resolvers_ports_are_normalised_in_its_rules_only() {
        let rules: Items = [
            ("table ip nat › chain DOCKER_OUTPUT › ip daddr 127.0.0.11 udp dport 53 counter dnat to 127.0.0.11:44453".to_string(), String::new()),
            ("table ip nat › chain DOCKER_POSTROUTING › ip saddr 127.0.0.11 tcp sport 34721 counter snat to :53".to_string(), String::new()),
            ("table ip filter › chain INPUT › tcp dport 40000 accept".to_string(), String::new()),
        ]
        .into();
        let n = resolver_ports_normalised(&rules);
        let keys: Vec<&str> = n.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "table ip filter › chain INPUT › tcp dport 40000 accept",
                "table ip nat › chain DOCKER_OUTPUT › ip daddr 127.0.0.11 udp dport 53 counter dnat to 127.0.0.11:*eph",
                "table ip nat › chain DOCKER_POSTROUTING › ip saddr 127.0.0.11 tcp sport *eph counter snat to :53",
            ]
        );
    }

    #[test]
    fn macs_are_not_compared() {
        let links: Items = [(
            "eth0".to_string(),
            "up, carrier on, mtu 1500, qdisc noqueue, mac 02:42:ac:11:00:02".to_string(),
        )]
        .into();
        assert_eq!(
            without_macs(&links)["eth0"],
            "up, carrier on, mtu 1500, qdisc noqueue"
        );
        assert_eq!(
            labels("netns", "netns"),
            ("netns-a".into(), "netns-b".into())
        );
        assert_eq!(
            labels("netns", "kathara"),
            ("netns".into(), "kathara".into())
        );
    }
}
