//! Which faults may be injected together, and which hide one another — decided from the
//! scenario text alone, before any lab is deployed.
//!
//! A fault *touches* resources on a device: what its commands change there, read from the
//! commands' words ([`resources`]): an interface (`dev eth0`, `interface eth1`), the
//! addresses, the routes, the neighbour table, a packet-filter chain, IPv4 forwarding, the
//! routing daemons (anything through `vtysh` or a daemon started or killed), a service's
//! process. Two faults **conflict** ([`Conflict`]) when
//!
//! 1. they are the same fault or one injects nothing (a false premise is no fault);
//! 2. they change the same resource on the same device (the second would overwrite the first,
//!    or fixing one would half-fix the other);
//! 3. they are on the same device and the same layer (two OSPF faults on one router are one
//!    broken OSPF configuration to a user and to a judge);
//! 4. one fault's checks need a routing session up (`Established`, `Full`) — a selective
//!    routing fault proves it is selective that way — and the other fault can take sessions
//!    down (a routing-layer or daemon fault, or one whose commands reach the routing daemons or
//!    port 179);
//! 5. one fault's fix, on some device, touches a resource the other fault changes there
//!    (e.g. the fix of a host's downed link puts its default route back, which undoes a wrong
//!    default route on the same host).
//!
//! Rule 5 is read from the `[FIX]` commands exactly as the benchmark runs them
//! ([`faultbench_core::pipeline::revert_commands`]). The rules are deliberately coarse (two
//! filter rules in the same chain conflict even when they match different traffic): a refused
//! combination costs a candidate, an accepted conflicting one costs a wrong dataset.
//!
//! A fault **masks** another ([`masks`]) when it cuts an end host off entirely — a link or
//! addressing fault on that host whose symptom is "unreachable" — and that host is where the
//! other fault's symptom is seen (its victim or the far end it cannot reach). Until the masking
//! fault is fixed, the user sees only that host's outage.

use crate::render::Variant;
use faultbench_core::pipeline::revert_commands;
use std::collections::BTreeSet;

/// Why two faults cannot be injected together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Conflict {
    /// A fault appears twice.
    #[error("`{0}` appears twice")]
    Duplicate(String),
    /// A fault that injects nothing.
    #[error("`{0}` injects nothing; a false premise cannot be one of several faults")]
    NothingInjected(String),
    /// Both change the same thing on the same device.
    #[error("`{a}` and `{b}` both change {resource} on {device}")]
    SameResource {
        /// The first fault's id.
        a: String,
        /// The second fault's id.
        b: String,
        /// The device.
        device: String,
        /// The resource both change.
        resource: String,
    },
    /// Both are faults of one layer on one device.
    #[error("`{a}` and `{b}` are both {layer} faults on {device}")]
    SameLayer {
        /// The first fault's id.
        a: String,
        /// The second fault's id.
        b: String,
        /// The device.
        device: String,
        /// The shared layer.
        layer: String,
    },
    /// One fault's checks need a routing session up that the other can take down.
    #[error(
        "`{needs}` checks that a routing session is up (`{check}`), which `{breaker}` ({layer}) can take down"
    )]
    BreaksPrecondition {
        /// The fault whose check needs the session.
        needs: String,
        /// The fault that can take sessions down.
        breaker: String,
        /// Its layer.
        layer: String,
        /// The check.
        check: String,
    },
    /// Fixing one would undo the other.
    #[error(
        "the fix of `{fixed}` (`{command}` on {device}) touches {resource}, which `{undone}` changes there"
    )]
    FixUndoes {
        /// The fault whose fix runs.
        fixed: String,
        /// The fault it would undo.
        undone: String,
        /// Where the fix command runs.
        device: String,
        /// The fix command.
        command: String,
        /// The resource both touch.
        resource: String,
    },
}

impl Conflict {
    /// The rule's short name (for counts).
    pub fn rule(&self) -> &'static str {
        match self {
            Conflict::Duplicate(_) => "duplicate",
            Conflict::NothingInjected(_) => "nothing-injected",
            Conflict::SameResource { .. } => "same-device-and-resource",
            Conflict::SameLayer { .. } => "same-device-and-layer",
            Conflict::FixUndoes { .. } => "fix-undoes-other",
            Conflict::BreaksPrecondition { .. } => "breaks-session-check",
        }
    }
}

/// Daemons whose start, stop or configuration is the routing daemons' state.
const ROUTING_DAEMONS: [&str; 8] = [
    "frr", "zebra", "ospfd", "bgpd", "ripd", "watchfrr", "staticd", "isisd",
];

fn words(cmd: &str) -> Vec<String> {
    cmd.split(|c: char| c.is_whitespace() || c == '\'' || c == '"' || c == ';')
        .filter(|w| !w.is_empty())
        .map(str::to_string)
        .collect()
}

/// The resources a shell command changes (see the module documentation). Read-only commands
/// (`ping`, `ip -br link show`) touch nothing; anything that might write is counted.
pub fn resources(cmd: &str) -> BTreeSet<String> {
    let w = words(cmd);
    let mut out = BTreeSet::new();
    for (i, word) in w.iter().enumerate() {
        let next = w.get(i + 1).map(String::as_str);
        match word.as_str() {
            "dev" | "interface" => {
                if let Some(n) = next {
                    out.insert(format!("interface {n}"));
                }
            }
            "ip" => match next {
                Some("addr" | "address" | "a") => {
                    out.insert("the addresses".into());
                }
                Some("route" | "r") => {
                    out.insert("the routes".into());
                }
                Some("neigh" | "neighbor" | "n") => {
                    out.insert("the neighbour table".into());
                }
                _ => {}
            },
            "iptables" | "nft" => {
                let chain = w[i + 1..]
                    .windows(2)
                    .find(|p| matches!(p[0].as_str(), "-A" | "-D" | "-I" | "-F" | "-R"))
                    .map(|p| p[1].clone())
                    .unwrap_or_else(|| "every chain".into());
                out.insert(format!("the packet filter ({chain})"));
            }
            "vtysh" => {
                out.insert("the routing daemons".into());
            }
            _ => {}
        }
        if word.contains("ip_forward") {
            out.insert("IPv4 forwarding".into());
        }
        let base = word.rsplit('/').next().unwrap_or(word);
        let acts = matches!(
            next,
            Some("start" | "stop" | "restart" | "reload" | "force-reload")
        );
        let kills = matches!(
            w.first().map(String::as_str),
            Some("pkill" | "kill" | "killall")
        ) || w.iter().any(|x| x == "pkill");
        if (word.starts_with("/etc/init.d/") && acts) || (kills && !base.starts_with('-') && i > 0)
        {
            if ROUTING_DAEMONS.contains(&base) {
                out.insert("the routing daemons".into());
            } else if word.starts_with("/etc/init.d/") || kills && base.len() > 2 {
                out.insert(format!("the process {base}"));
            }
        }
    }
    // `service X stop` and `systemctl stop X` name the program differently.
    if let Some(i) = w.iter().position(|x| x == "systemctl" || x == "service") {
        let prog = if w[i] == "systemctl" {
            w.get(i + 2)
        } else {
            w.get(i + 1)
        };
        if let Some(p) = prog {
            let p = p.trim_end_matches(".service");
            if ROUTING_DAEMONS.contains(&p) {
                out.insert("the routing daemons".into());
            } else {
                out.insert(format!("the process {p}"));
            }
        }
    }
    out
}

/// `(device, command)` of every injection step of `v` that changes the network.
pub fn injected(v: &Variant) -> Vec<(String, String)> {
    v.spec
        .injection()
        .applied_steps()
        .filter_map(|s| Some((s.device.clone(), s.cmd.clone()?)))
        .collect()
}

/// `(device, command)` of every `[FIX]` command of `v`, resolved as the benchmark resolves them.
pub fn fix_commands(v: &Variant, devices: &[String]) -> Vec<(String, String)> {
    let fallback: Vec<String> = v
        .spec
        .injection()
        .devices()
        .into_iter()
        .map(str::to_string)
        .collect();
    let fix = v.spec.section("FIX").unwrap_or_default();
    revert_commands(fix, devices, &fallback)
        .into_iter()
        .map(|c| (c.device, c.command))
        .collect()
}

fn touched(steps: &[(String, String)], device: &str) -> BTreeSet<String> {
    steps
        .iter()
        .filter(|(d, _)| d == device)
        .flat_map(|(_, c)| resources(c))
        .collect()
}

/// Whether `a` and `b` may be injected together (`devices`: the lab's device names, to resolve
/// where fix commands run). The first rule broken is returned.
pub fn check_pair(a: &Variant, b: &Variant, devices: &[String]) -> Result<(), Conflict> {
    if a.hash == b.hash || a.id == b.id {
        return Err(Conflict::Duplicate(a.id.clone()));
    }
    for v in [a, b] {
        if v.spec.injection().is_negative_control() {
            return Err(Conflict::NothingInjected(v.id.clone()));
        }
    }
    let (ia, ib) = (injected(a), injected(b));
    let da: BTreeSet<&str> = ia.iter().map(|(d, _)| d.as_str()).collect();
    for device in ib
        .iter()
        .map(|(d, _)| d.as_str())
        .filter(|d| da.contains(d))
    {
        if let Some(r) = touched(&ia, device)
            .intersection(&touched(&ib, device))
            .next()
        {
            return Err(Conflict::SameResource {
                a: a.id.clone(),
                b: b.id.clone(),
                device: device.into(),
                resource: r.clone(),
            });
        }
        if a.layer == b.layer {
            return Err(Conflict::SameLayer {
                a: a.id.clone(),
                b: b.id.clone(),
                device: device.into(),
                layer: a.layer.clone(),
            });
        }
    }
    for (needs, breaker) in [(a, b), (b, a)] {
        if let Some(check) = session_check(needs)
            && can_break_sessions(breaker, devices)
        {
            return Err(Conflict::BreaksPrecondition {
                needs: needs.id.clone(),
                breaker: breaker.id.clone(),
                layer: breaker.layer.clone(),
                check,
            });
        }
    }
    for (fixed, undone, inj) in [(a, b, &ib), (b, a, &ia)] {
        for (device, command) in fix_commands(fixed, devices) {
            let theirs = touched(inj, &device);
            if let Some(r) = resources(&command).intersection(&theirs).next() {
                return Err(Conflict::FixUndoes {
                    fixed: fixed.id.clone(),
                    undone: undone.id.clone(),
                    device,
                    command,
                    resource: r.clone(),
                });
            }
        }
    }
    Ok(())
}

/// The first check of `v` that needs a routing session up (BGP `Established`, OSPF `Full`)
/// and expects to find it.
fn session_check(v: &Variant) -> Option<String> {
    v.spec
        .post_inject_checks()
        .iter()
        .find(|c| {
            let e = c.expect.trim();
            (c.command.contains("Established") || c.command.contains("Full"))
                && !(e == "0" || e.eq_ignore_ascii_case("empty"))
        })
        .map(|c| format!("{} {} => expect {}", c.device, c.command, c.expect))
}

/// Whether `v` can take a routing session down: a routing-layer or daemon fault, or one whose
/// injection or fix speaks to the routing daemons or their ports.
fn can_break_sessions(v: &Variant, devices: &[String]) -> bool {
    matches!(v.layer.as_str(), "bgp" | "ospf" | "rip" | "daemon")
        || injected(v)
            .into_iter()
            .chain(fix_commands(v, devices))
            .any(|(_, c)| {
                c.contains("vtysh") || c.contains(" 179") || c.contains("ospf") || c.contains("bgp")
            })
}

/// Whether every pair of `faults` may be injected together.
pub fn check_all(faults: &[&Variant], devices: &[String]) -> Result<(), Conflict> {
    for (i, a) in faults.iter().enumerate() {
        for b in &faults[i + 1..] {
            check_pair(a, b, devices)?;
        }
    }
    Ok(())
}

/// Whether `a` hides `b`'s symptom until `a` is fixed (see the module documentation).
pub fn masks(a: &Variant, b: &Variant) -> bool {
    let host = a.faulted_device();
    let cuts_host = matches!(a.layer.as_str(), "link" | "addressing")
        && a.symptom.kind == "unreachable"
        && a.symptom.victim.as_ref().is_some_and(|(v, _)| *v == host);
    let seen_at = |x: &Option<(String, String)>| x.as_ref().is_some_and(|(d, _)| *d == host);
    cuts_host
        && host != b.faulted_device()
        && (seen_at(&b.symptom.victim) || seen_at(&b.symptom.far))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_are_read_from_the_commands() {
        let r = resources("ip link set dev eth0 down");
        assert_eq!(r, BTreeSet::from(["interface eth0".to_string()]));
        let r = resources("ip route replace default via 10.0.0.1 dev eth1");
        assert!(
            r.contains("the routes") && r.contains("interface eth1"),
            "{r:?}"
        );
        let r = resources("iptables -A INPUT -s 10.0.0.2 -j DROP");
        assert!(r.contains("the packet filter (INPUT)"), "{r:?}");
        let r = resources("pkill -x watchfrr 2>/dev/null; pkill -9 -x ospfd");
        assert!(r.contains("the routing daemons"), "{r:?}");
        let r = resources("/etc/init.d/frr start && sleep 1");
        assert!(r.contains("the routing daemons"), "{r:?}");
        let r = resources("/etc/init.d/apache2 stop; sleep 0.5");
        assert!(r.contains("the process apache2"), "{r:?}");
        assert!(resources("sysctl -w net.ipv4.ip_forward=0").contains("IPv4 forwarding"));
        assert!(resources("ping -c2 -W1 10.0.0.1").is_empty());
    }
}
