//! Configuration drift: what a router runs now against what it booted with.
//!
//! Where a router keeps its configuration in `/etc/frr/frr.conf`, the running configuration
//! (`show running-config`) should say the same routing things. Lines added or removed at
//! run time — a `passive-interface`, a timer, a `network` or `neighbor` statement, an `ip
//! route` — are exactly what a misconfiguration looks like, and name the router and the
//! component. A drift is a fault on its own (weight 3): a healthy lab runs what it booted
//! with. Only routing statements are compared (not banners, logging or defaults FRR
//! prints on its own), inside their section (`interface eth5`, `router ospf`, …).

use super::canonical::canonical;
use super::{Ctx, Finding};
use std::collections::BTreeSet;

/// Keywords of the statements compared.
const ROUTING: [&str; 16] = [
    "network",
    "neighbor",
    "passive-interface",
    "ip ospf",
    "ip rip",
    "area",
    "ip route",
    "version",
    "redistribute",
    "ip prefix-list",
    "route-map",
    "distribute-list",
    "shutdown",
    "ip address",
    "default-information",
    "aggregate-address",
];

/// `section | statement` lines of a configuration, routing statements only, each in its
/// canonical spelling ([`canonical`]).
pub fn statements(text: &str) -> BTreeSet<String> {
    let activate_explicit = text.lines().any(|l| {
        l.split_whitespace().collect::<Vec<_>>() == ["no", "bgp", "default", "ipv4-unicast"]
    });
    let mut out = BTreeSet::new();
    let mut section = String::new();
    for raw in text.lines() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('!') || line.starts_with('#') {
            if raw.starts_with('!') {
                section.clear();
            }
            continue;
        }
        if matches!(line, "exit" | "end" | "exit-address-family" | "exit-vrf") {
            if line == "exit" {
                section.clear();
            }
            continue;
        }
        let top = !raw.starts_with(' ') && !raw.starts_with('\t');
        let opens = ["router ", "interface ", "route-map ", "address-family "]
            .iter()
            .any(|p| line.starts_with(p));
        if top {
            if opens {
                section = line.to_string();
                continue;
            }
            section.clear();
        } else if line.starts_with("address-family ") {
            continue;
        }
        let normal = line.split_whitespace().collect::<Vec<_>>().join(" ");
        if ROUTING.iter().any(|k| normal.starts_with(k))
            && let Some((sec, st)) = canonical(&section, &normal, activate_explicit)
        {
            out.insert(if sec.is_empty() {
                st
            } else {
                format!("{sec} | {st}")
            });
        }
    }
    out
}

/// (removed, added) between the saved and the running configuration.
pub fn diff(saved: &str, running: &str) -> (Vec<String>, Vec<String>) {
    let (s, r) = (statements(saved), statements(running));
    (
        s.difference(&r).cloned().collect(),
        r.difference(&s).cloned().collect(),
    )
}

/// Whether the drift of `router` touches a statement containing all of `words`.
pub fn touches(cx: &Ctx, router: &str, words: &[&str]) -> bool {
    let Some(st) = cx.obs.routers.get(router) else {
        return false;
    };
    let (Some(saved), Some(running)) = (&st.saved, &st.running) else {
        return false;
    };
    let (removed, added) = diff(saved, running);
    removed
        .iter()
        .chain(added.iter())
        .any(|l| words.iter().all(|w| l.contains(w)))
}

/// One finding per router whose running configuration drifted.
pub fn findings(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    for (r, st) in &cx.obs.routers {
        let (Some(saved), Some(running)) = (&st.saved, &st.running) else {
            continue;
        };
        if statements(saved).is_empty() {
            continue;
        }
        let (mut removed, added) = diff(saved, running);
        // A daemon that is not running takes its whole section out of the running
        // configuration: that is the daemon rule's finding, not a configuration change.
        if let Some(f) = cx.model.facts(r).filter(|f| f.full) {
            removed.retain(|l| {
                let proto = l
                    .strip_prefix("router ")
                    .and_then(|x| x.split_whitespace().next());
                proto.is_none_or(|p| f.runs(&format!("{p}d")))
            });
        }
        if removed.is_empty() && added.is_empty() {
            continue;
        }
        let mut parts = Vec::new();
        if !removed.is_empty() {
            parts.push(format!(
                "removed `{}`",
                removed
                    .iter()
                    .take(4)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("`, `")
            ));
        }
        if !added.is_empty() {
            parts.push(format!(
                "added `{}`",
                added
                    .iter()
                    .take(4)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join("`, `")
            ));
        }
        out.push(Finding::on(
            r,
            3,
            format!(
                "the running FRR configuration of {r} differs from its saved /etc/frr/frr.conf (changed at run time): {}",
                parts.join("; ")
            ),
            format!(
                "restore the saved routing configuration on {r} ({})",
                parts.join("; ")
            ),
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_and_diff() {
        let saved = "! comment\nfrr defaults traditional\nhostname r1\n!\ninterface eth5\n ip ospf network point-to-point\n ip ospf hello-interval 1\n ip ospf dead-interval 3\nexit\n!\nrouter ospf\n ospf router-id 1.1.1.1\n network 10.200.0.0/24 area 0\n timers throttle spf 0 50 500\nexit\n!\nlog file /var/log/frr/frr.log\n";
        let running = "Building configuration...\n\nCurrent configuration:\n!\nfrr version 8.4.4\nfrr defaults traditional\nhostname r1\nlog file /var/log/frr/frr.log\n!\ninterface eth5\n ip ospf network point-to-point\nexit\n!\nrouter ospf\n ospf router-id 1.1.1.1\n network 10.200.0.0/24 area 0\n passive-interface eth5\n timers throttle spf 0 50 500\nexit\n!\nip route 10.9.0.0/16 blackhole\n!\nend\n";
        assert!(statements(saved).contains("interface eth5 | ip ospf hello-interval 1"));
        assert!(statements(saved).contains("router ospf | network 10.200.0.0/24 area 0"));
        let (removed, added) = diff(saved, running);
        assert_eq!(
            removed,
            vec![
                "interface eth5 | ip ospf dead-interval 3",
                "interface eth5 | ip ospf hello-interval 1"
            ]
        );
        assert_eq!(
            added,
            vec![
                "interface eth5 | ip ospf passive",
                "ip route 10.9.0.0/16 blackhole"
            ]
        );
        assert_eq!(diff(saved, saved), (vec![], vec![]));
    }

    #[test]
    fn frr_rendering_is_no_drift() {
        let saved = "router ospf\n passive-interface lo\n area 1 virtual-link 18.1.4.1 hello-interval 1 retransmit-interval 1 dead-interval 3\n network 10.0.0.76/32 area 0.0.0.0\n";
        let running = "interface lo\n ip ospf passive\nexit\n!\nrouter ospf\n network 10.0.0.76/32 area 0\n area 1 virtual-link 18.1.4.1 hello-interval 1 retransmit-interval 1 transmit-delay 1 dead-interval 3\nexit\n";
        assert_eq!(diff(saved, running), (vec![], vec![]));
        // A passive interface added at run time is still a change.
        let injected = running.replace(
            "interface lo\n",
            "interface eth0\n ip ospf passive\nexit\ninterface lo\n",
        );
        let (removed, added) = diff(saved, &injected);
        assert!(removed.is_empty());
        assert_eq!(added, vec!["interface eth0 | ip ospf passive"]);
    }
}
