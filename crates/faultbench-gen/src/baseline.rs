//! A healthy baseline for a lab that ships none: what the healthy lab actually does.
//!
//! [`candidate_probes`] proposes, from the model, one reachability probe from every end host
//! to one host of every other LAN, and one probe per enabled routing daemon. The caller runs
//! them on a freshly deployed lab until they settle ([`faultbench_core::phases::wait_for_baseline`])
//! and keeps the ones that hold ([`keep_passing`]): the baseline records the lab as it is, not as
//! the model expects it to be. [`to_toml`] writes it in the `baseline.toml` format.

use crate::graph::segment_of;
use crate::model::LabModel;
use faultbench_core::lab::{Baseline, Probe, ProbeKind, ProbeResult};
use std::collections::BTreeSet;

/// Most reachability probes proposed.
const MAX_REACH: usize = 60;

/// Probes the healthy lab may pass.
pub fn candidate_probes(m: &LabModel) -> Baseline {
    let mut probes = Vec::new();
    let hosts: Vec<_> = m.end_hosts().collect();
    for a in &hosts {
        let mut segs = BTreeSet::new();
        for b in &hosts {
            let (Some(sb), Some((_, ip))) = (segment_of(b), b.primary()) else {
                continue;
            };
            if a.name == b.name || Some(sb) == segment_of(a) || !segs.insert(sb) {
                continue;
            }
            if probes.len() < MAX_REACH {
                probes.push(Probe {
                    name: format!("{} reaches {}", a.name, b.name),
                    kind: ProbeKind::Reach,
                    device: a.name.clone(),
                    command: format!("ping -c2 -i0.2 -W1 {}", ip.addr),
                    expect: "0% loss".into(),
                    why: Some("observed on the healthy lab by faultbench generate".into()),
                });
            }
        }
    }
    for d in m.devices.iter().filter(|d| d.is_router()) {
        // Each router reaches the routers it shares a segment with (labs without hosts).
        for i in d.interfaces.iter().filter(|i| !i.addrs.is_empty()) {
            for n in m
                .devices
                .iter()
                .filter(|n| n.is_router() && n.name != d.name)
            {
                let peer = n.interfaces.iter().find(|x| x.segment == i.segment);
                if let Some(a) = peer.and_then(|x| x.addrs.first()) {
                    probes.push(Probe {
                        name: format!("{} reaches {} on {}", d.name, n.name, i.name),
                        kind: ProbeKind::Reach,
                        device: d.name.clone(),
                        command: format!("ping -c2 -i0.2 -W1 {}", a.addr),
                        expect: "0% loss".into(),
                        why: None,
                    });
                }
            }
        }
        if let Some(bgp) = &d.routing.bgp {
            for nb in &bgp.neighbors {
                probes.push(Probe {
                    name: format!("the BGP session {} -> {} is Established", d.name, nb.ip),
                    kind: ProbeKind::Other,
                    device: d.name.clone(),
                    command: format!(
                        "vtysh -c 'show bgp neighbors {}' | grep -c 'BGP state = Established'",
                        nb.ip
                    ),
                    expect: "1".into(),
                    why: None,
                });
            }
        }
        for daemon in &d.daemons {
            probes.push(Probe {
                name: format!("{daemon} runs on {}", d.name),
                kind: ProbeKind::Daemon,
                device: d.name.clone(),
                command: format!("pgrep -x {daemon}"),
                expect: "nonempty".into(),
                why: None,
            });
        }
    }
    Baseline { probes }
}

/// The probes of `results` that held.
pub fn keep_passing(results: &[ProbeResult]) -> Baseline {
    Baseline {
        probes: results
            .iter()
            .filter(|r| r.passed)
            .map(|r| r.probe.clone())
            .collect(),
    }
}

fn q(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// `baseline.toml` text.
pub fn to_toml(b: &Baseline, header: &str) -> String {
    let mut out = String::new();
    for l in header.lines() {
        out.push_str(&format!("# {l}\n"));
    }
    for p in &b.probes {
        let kind = serde_json::to_value(p.kind)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_else(|| "other".into());
        out.push_str(&format!(
            "\n[[probe]]\nname = {}\nkind = {}\ndevice = {}\ncommand = {}\nexpect = {}\n",
            q(&p.name),
            q(&kind),
            q(&p.device),
            q(&p.command),
            q(&p.expect)
        ));
        if let Some(w) = &p.why {
            out.push_str(&format!("why = {}\n", q(w)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_baseline_reads_back() {
        let b = Baseline {
            probes: vec![Probe {
                name: "a \"quoted\" name".into(),
                kind: ProbeKind::Reach,
                device: "pc1".into(),
                command: "ping -c2 10.0.0.1".into(),
                expect: "0% loss".into(),
                why: None,
            }],
        };
        let text = to_toml(&b, "generated");
        assert_eq!(Baseline::parse(&text).unwrap(), b);
    }
}
