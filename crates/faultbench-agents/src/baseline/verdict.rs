//! From findings to the `=== DIAGNOSIS ===` block.
//!
//! **Faulty** when a weight-3 finding exists, or when lab traffic fails for a reason other
//! than a filter that looks like a deliberate access policy. The blamed devices are those of
//! the heaviest findings (at most three), the lead finding first; the text gives the root
//! cause, the evidence, what cleared the devices the ticket named, the checks, and the fix.
//!
//! **Healthy** otherwise: the text lists what was tested and found working — the criterion
//! the paper finds agents lack — plus the weak observations that do not break anything.

use super::claims::{ClaimedSymptom, Claims};
use super::rules::paths::{PathReport, expected_reachable};
use super::rules::{Ctx, Finding};
use super::topo::DeviceKind;
use faultbench_core::Diagnosis;
use std::net::Ipv4Addr;

/// Builds the diagnosis.
pub fn verdict(cx: &Ctx, findings: &[Finding], report: &PathReport) -> Diagnosis {
    let dead_failures = report.failing.len() > report.by_policy.len()
        && !(report.failing.len() == report.unexplained.len() && only_partial_loss(cx));
    let top = findings.iter().map(|f| f.weight).max().unwrap_or(0);
    let faulty = top >= 3 || (dead_failures && top >= 2);
    if !faulty {
        return healthy(cx, findings, report);
    }
    // Lead: heaviest, then involved in failing traffic, then as found.
    let mut ranked: Vec<&Finding> = findings.iter().filter(|f| f.weight >= 2).collect();
    ranked.sort_by_key(|f| {
        let involved = f
            .device
            .iter()
            .chain(f.affects.iter())
            .any(|d| report.involved.contains(d));
        (std::cmp::Reverse(f.weight), !involved, f.device.is_none())
    });
    let lead = ranked[0];
    let mut devices: Vec<String> = Vec::new();
    for f in ranked.iter().filter(|f| f.weight == lead.weight) {
        if let Some(d) = &f.device
            && !devices.contains(d)
            && devices.len() < 3
        {
            devices.push(d.clone());
        }
    }
    let evidence: Vec<&str> = ranked.iter().take(8).map(|f| f.what.as_str()).collect();
    let mut text = match &lead.device {
        Some(d) => format!(
            "Fault found on {d}. Root cause: {}. Localization: {}; the other symptoms follow from it. ",
            lead.what,
            devices.join(", ")
        ),
        None => format!(
            "Fault found. Root cause: {}. Localization: no single device could be blamed from the evidence. ",
            lead.what
        ),
    };
    text += &format!("Evidence: {}. ", evidence.join("; "));
    let working = super::health::protocol_facts(cx);
    if !working.is_empty() {
        text += &format!("Still working: {}. ", working.join("; "));
    }
    let cleared = cleared(cx, findings, &devices);
    if !cleared.is_empty() {
        text += &format!(
            "The ticket points at {}, which {} checked directly and {} healthy (not the cause): {}. ",
            cleared.join(", "),
            if cleared.len() == 1 { "was" } else { "were" },
            if cleared.len() == 1 { "is" } else { "are" },
            super::health::device_notes(cx, &cleared).join("; ")
        );
    }
    let rebut = super::health::rebuttals(cx, findings);
    if !rebut.is_empty() {
        text += &format!("Contrary to the ticket, {}. ", rebut.join("; "));
    }
    text += &format!("Checks performed: {}. ", cx.obs.checked.join("; "));
    text += &format!("Fix: {}, then re-run the reachability test.", lead.fix);
    Diagnosis {
        is_anomaly: Some(true),
        faulty_devices: devices,
        text,
        parsed_ok: true,
    }
}

/// Every unexplained failure is partial loss (load on the machine, not a broken path).
fn only_partial_loss(cx: &Ctx) -> bool {
    let pairs = super::rules::paths::failing_pairs(cx);
    !pairs.is_empty() && pairs.iter().all(|(_, _, dead)| !dead)
}

/// Devices the ticket names that no finding implicates and that were probed.
fn cleared(cx: &Ctx, findings: &[Finding], blamed: &[String]) -> Vec<String> {
    cx.claims
        .devices
        .iter()
        .filter(|d| !blamed.contains(d))
        .filter(|d| {
            !findings
                .iter()
                .any(|f| f.weight >= 2 && f.device.as_ref() == Some(*d))
        })
        .filter(|d| cx.model.facts(d).is_some())
        .cloned()
        .collect()
}

fn healthy(cx: &Ctx, findings: &[Finding], report: &PathReport) -> Diagnosis {
    let mut ok: Vec<String> = Vec::new();
    let expected: Vec<bool> = cx
        .obs
        .pings
        .iter()
        .filter(|p| expected_reachable(cx, p.dst))
        .map(|p| p.ok())
        .chain(
            cx.obs
                .reach
                .iter()
                .filter(|(_, _, ip, _)| ip.is_some())
                .map(|(_, _, _, st)| st == "ok"),
        )
        .collect();
    if !expected.is_empty() {
        let policy = report.by_policy.len();
        let answered = expected.iter().filter(|x| **x).count();
        ok.push(if policy == 0 {
            format!("{answered} of {} tested host and gateway pings answer with 0% loss", expected.len())
        } else {
            format!(
                "{answered} of {} tested pings answer; the {policy} others are stopped by a deliberate access policy ({})",
                expected.len(),
                report.by_policy.first().cloned().unwrap_or_default()
            )
        });
    }
    let routers: Vec<&str> = cx
        .model
        .with_role(DeviceKind::Router)
        .iter()
        .map(|n| n.name.as_str())
        .collect();
    if !routers.is_empty() {
        ok.push(format!(
            "the routing daemons run on every router ({})",
            routers.join(", ")
        ));
    }
    ok.extend(super::health::protocol_facts(cx));
    if findings.iter().all(|f| f.weight < 2) {
        ok.push("no used interface is down and every host's address, netmask and gateway agree with its LAN".into());
    }
    let services = super::rules::services::open_services(cx);
    if !services.is_empty() {
        ok.push(services.join(", "));
    }
    if cx.obs.dns.iter().any(|q| q.status != "timeout") {
        ok.push("the DNS servers answer".into());
    }
    if cx.obs.http.iter().any(|f| (200..500).contains(&f.code)) {
        ok.push("the web fetches succeed".into());
    }
    let claims = claims_text(cx.claims);
    let mut text = format!(
        "No fault found: the network is healthy and the reported problem does not reproduce. The ticket reported {claims}; each checkable claim was tested directly. Healthy: {}. ",
        ok.join("; ")
    );
    let rebut = super::health::rebuttals(cx, findings);
    if !rebut.is_empty() {
        text += &format!("Contrary to the ticket, {}. ", rebut.join("; "));
    }
    let (outside, transit): (Vec<String>, Vec<String>) = cx
        .claims
        .addresses
        .iter()
        .filter_map(|a| a.parse::<Ipv4Addr>().ok())
        .filter(|ip| !expected_reachable(cx, *ip))
        .map(|ip| ip.to_string())
        .partition(|a| {
            !cx.model
                .owners
                .contains_key(&a.parse::<Ipv4Addr>().expect("parsed"))
        });
    if !outside.is_empty() {
        text += &format!(
            "{} {} not an address of any device in this lab. ",
            outside.join(", "),
            if outside.len() == 1 { "is" } else { "are" }
        );
    }
    if !transit.is_empty() {
        text += &format!(
            "{} {} a router address on a transit link, which end hosts are not expected to reach (transit links are not advertised to the LANs). ",
            transit.join(", "),
            if transit.len() == 1 { "is" } else { "are" }
        );
    }
    let answered = answered_claim_addresses(cx);
    if !answered.is_empty() {
        text += &format!(
            "The addresses the ticket names answer: {}. ",
            answered.join("; ")
        );
    }
    let named: Vec<String> = cx
        .claims
        .devices
        .iter()
        .filter(|d| cx.model.facts(d).is_some())
        .cloned()
        .collect();
    if !named.is_empty() {
        text += &format!(
            "The devices the ticket names ({}) were inspected and show nothing wrong: {}. ",
            named.join(", "),
            super::health::device_notes(cx, &named).join("; ")
        );
    }
    let weak: Vec<&str> = findings
        .iter()
        .filter(|f| f.weight >= 2)
        .map(|f| f.what.as_str())
        .take(3)
        .collect();
    if !weak.is_empty() {
        text += &format!(
            "Observations that do not break traffic on their own: {}. ",
            weak.join("; ")
        );
    }
    text += &format!(
        "Checks performed: {}. Root cause: none - the network behaves as designed, so the report is not caused by a network fault. Fix: no change to the network; ask the reporter for a concrete, reproducible example if the problem persists.",
        if cx.obs.checked.is_empty() {
            "none could run".to_string()
        } else {
            cx.obs.checked.join("; ")
        }
    );
    Diagnosis {
        is_anomaly: Some(false),
        faulty_devices: Vec::new(),
        text,
        parsed_ok: true,
    }
}

fn claims_text(claims: &Claims) -> String {
    let words: Vec<&str> = claims
        .symptoms
        .iter()
        .map(|s| match s {
            ClaimedSymptom::Connectivity => "a connectivity problem",
            ClaimedSymptom::Performance => "slowness or loss",
            ClaimedSymptom::Dns => "a name-resolution problem",
            ClaimedSymptom::Web => "a web problem",
            ClaimedSymptom::Dhcp => "an addressing problem",
            ClaimedSymptom::Routing => "a routing problem",
            ClaimedSymptom::Internet => "an Internet access problem",
        })
        .collect();
    let what = if words.is_empty() {
        "no specific symptom".to_string()
    } else {
        words.join(", ")
    };
    format!(
        "{what} and named {} checkable identifier(s)",
        claims.identifier_count()
    )
}

/// The ticket's addresses that every ping answered, each with its holder and the pingers
/// (`50.1.1.1 (r5 eth3) from pc0, pc12`): the direct test of the claim.
fn answered_claim_addresses(cx: &Ctx) -> Vec<String> {
    let mut out = Vec::new();
    for ip in cx
        .claims
        .addresses
        .iter()
        .filter_map(|a| a.parse::<Ipv4Addr>().ok())
    {
        let pings: Vec<_> = cx.obs.pings.iter().filter(|p| p.dst == ip).collect();
        if pings.is_empty() || !pings.iter().all(|p| p.ok()) {
            continue;
        }
        let holder = cx
            .model
            .owners
            .get(&ip)
            .and_then(|o| o.first())
            .map(|a| format!(" ({} {})", a.device, a.iface))
            .unwrap_or_default();
        let mut from: Vec<&str> = pings.iter().map(|p| p.src.as_str()).collect();
        from.dedup();
        out.push(format!(
            "{ip}{holder} from {} with 0% loss",
            from.join(", ")
        ));
    }
    out
}
