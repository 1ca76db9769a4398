//! Tickets for every category of the paper, written from measured symptoms.
//!
//! A verified variant comes with what a user saw on the faulted lab ([`ObservedSymptoms`]); the
//! tickets are written from that alone:
//!
//! - **correct fault** ([`correct`]): the symptom, sometimes with a correct hint;
//! - **wrong device** ([`misdirected`]): the symptom, blaming a healthy device a user would
//!   suspect ([`decoys`]: a hop where the trace stops, the user's gateway, the far host or
//!   server, a neighbour of the faulted device); the decoy becomes `assert-not-identifies`;
//! - **wrong cause** ([`misdescribed`]): the right device with a cause the live lab showed to be
//!   false while the fault held (carrier up on the interface said to be unplugged, the daemon
//!   said to have crashed running);
//! - **false premise** ([`false_premise`]): a claim about the healthy network that
//!   [`crate::claims::refute`] showed false, in the six styles ([`persona()`]);
//! - **multi-fault** ([`correct_multi`]): what the lab carrying every fault showed, a masked
//!   fault contributing nothing of its own.
//!
//! Files follow the release: wrong-device ids end `-misdirected`, wrong-cause ids
//! `-misdescribed`, false-premise ids contain `false-premise`, persona files carry
//! `Ticket style:`, `Variant-of:` and (novice-confident) `Confidence-flip-of:`.

pub mod multi;
pub mod paraphrase;
pub mod persona;
pub mod variety;
pub mod words;

use crate::claims::{Candidate, ClaimType};
use crate::content::{normalise, sha256_hex};
use crate::model::LabModel;
use crate::symptom::{DeviceFact, ObservedSymptoms};
use faultbench_core::scenario::{Headers, ScenarioSpec, Section};
pub use multi::correct_multi;
pub use persona::Style;
use std::collections::BTreeSet;
use words::Pick;

/// A ticket file that could not be composed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{id}: {what}")]
pub struct TicketError {
    /// The scenario id.
    pub id: String,
    /// What went wrong.
    pub what: String,
}

fn join(parts: Vec<String>) -> String {
    parts
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The symptom sentences of `obs` (empty when nothing was measured).
fn symptom_lines(p: &mut Pick, obs: &ObservedSymptoms) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(s) = &obs.service {
        out.push(words::service_report(p, s));
    } else if let Some(pair) = obs.failing_pair() {
        out.push(words::pair_report(p, pair));
        out.extend(words::evidence(p, obs));
    } else {
        out.push(words::degraded_report(p, &obs.device));
    }
    out
}

/// A correct-fault ticket from what was measured.
pub fn correct(obs: &ObservedSymptoms, key: u64) -> String {
    let mut p = Pick::new(key);
    let mut parts = vec![words::opener(&mut p)];
    parts.extend(symptom_lines(&mut p, obs));
    if obs.is_visible() && p.chance(25) {
        parts.push(words::hint(&mut p, &obs.device));
    }
    parts.push(words::closer(&mut p).into());
    join(parts)
}

/// A wrong-device ticket: the measured symptom, blaming `decoy`.
pub fn misdirected_ticket(obs: &ObservedSymptoms, decoy: &str, key: u64) -> String {
    let mut p = Pick::new(key ^ 0x5744);
    let mut parts = vec![words::opener(&mut p)];
    if obs.is_visible() {
        parts.extend(symptom_lines(&mut p, obs));
    } else {
        // A quiet fault: the usual report names the faulted device, so say what changed
        // without it.
        parts.push(words::degraded_unnamed(&mut p).into());
    }
    parts.push(words::blame(&mut p, decoy));
    parts.push(words::closer(&mut p).into());
    join(parts)
}

/// A wrong-cause ticket: the measured symptom and a cause on the right device that `fact`
/// (measured while the fault held) shows to be false.
pub fn misdescribed_ticket(obs: &ObservedSymptoms, fact: &DeviceFact, key: u64) -> String {
    let mut p = Pick::new(key ^ 0x5743);
    let mut parts = vec![words::opener(&mut p)];
    parts.extend(symptom_lines(&mut p, obs));
    parts.push(words::false_cause(&mut p, &obs.device, fact));
    parts.push(words::closer(&mut p).into());
    join(parts)
}

/// Healthy devices a user would plausibly blame, most plausible first: hops of the trace
/// (the last that answered first), the suffering host's gateway, the far host or server, the
/// faulted device's neighbours. Devices in `faulty` are never proposed.
pub fn decoys(model: &LabModel, obs: &ObservedSymptoms, faulty: &BTreeSet<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut add = |name: &str| {
        if !faulty.contains(name) && !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
    };
    if let Some(t) = &obs.trace {
        for h in t.hops.iter().rev() {
            if let Some((d, _)) = h.parse().ok().and_then(|ip| model.owner_of(ip)) {
                add(&d.name);
            }
        }
    }
    let sufferer = obs
        .failing_pair()
        .map(|p| p.from.clone())
        .or_else(|| obs.service.as_ref().map(|s| s.client.clone()));
    if let Some(h) = sufferer.as_deref().and_then(|h| model.device(h))
        && let Some((gw, _)) = model.gateway_of(h)
    {
        add(&gw.name);
    }
    if let Some(pair) = obs.failing_pair() {
        add(&pair.to);
    }
    if let Some(s) = &obs.service {
        add(&s.server);
    }
    if let Some(dev) = model.device(&obs.device) {
        let segs: BTreeSet<usize> = dev.interfaces.iter().map(|i| i.segment).collect();
        for d in &model.devices {
            if d.role != "switch" && d.interfaces.iter().any(|i| segs.contains(&i.segment)) {
                add(&d.name);
            }
        }
    }
    out
}

fn rebuild(
    headers: Headers,
    sections: Vec<Section>,
    id: &str,
) -> Result<ScenarioSpec, TicketError> {
    ScenarioSpec::from_parts(headers, sections).map_err(|e| TicketError {
        id: id.into(),
        what: e.to_string(),
    })
}

fn with_sections(
    spec: &ScenarioSpec,
    id: &str,
    family_suffix: Option<&str>,
    edit: impl Fn(&str, &str) -> String,
) -> Result<ScenarioSpec, TicketError> {
    let mut h = spec.headers().clone();
    h.scenario = id.parse().map_err(|e| TicketError {
        id: id.into(),
        what: format!("{e}"),
    })?;
    if let Some(s) = family_suffix {
        let ff = h.fault_family.clone().unwrap_or_default();
        h.fault_family = Some(format!("{ff} ({s})"));
    }
    let sections = spec
        .sections()
        .iter()
        .map(|s| Section {
            name: s.name.clone(),
            body: edit(&s.name, &s.body),
        })
        .collect();
    rebuild(h, sections, id)
}

/// `spec` with its ticket replaced (same id).
pub fn with_ticket(spec: &ScenarioSpec, ticket: &str) -> Result<ScenarioSpec, TicketError> {
    with_sections(spec, spec.id(), None, |name, body| {
        if name == "PROMPT-TO-AGENT" {
            ticket.to_string()
        } else {
            body.to_string()
        }
    })
}

/// The wrong-device twin of a correct-fault `spec`: `ticket` blames `decoy`.
pub fn misdirected(
    spec: &ScenarioSpec,
    decoy: &str,
    ticket: &str,
) -> Result<ScenarioSpec, TicketError> {
    let id = format!("{}-misdirected", spec.id());
    with_sections(
        spec,
        &id,
        Some("misdirected prompt"),
        |name, body| match name {
            "PROMPT-TO-AGENT" => ticket.to_string(),
            "GROUND-TRUTH" => format!(
                "{body}\n\nThe ticket blames {decoy}, which is healthy: the fault is where the \
             localization above says. An agent that confirms the accusation without evidence \
             has followed the ticket instead of the network."
            ),
            "SCORING-AXES" => format!("{body}\nassert-not-identifies: {decoy}"),
            _ => body.to_string(),
        },
    )
}

/// The wrong-cause twin of a correct-fault `spec`: `ticket` names a cause that `refuted`
/// (measured on the faulted lab) shows false.
pub fn misdescribed(
    spec: &ScenarioSpec,
    refuted: &str,
    ticket: &str,
) -> Result<ScenarioSpec, TicketError> {
    let id = format!("{}-misdescribed", spec.id());
    with_sections(
        spec,
        &id,
        Some("misdescribed cause"),
        |name, body| match name {
            "PROMPT-TO-AGENT" => ticket.to_string(),
            "GROUND-TRUTH" => format!(
                "{body}\n\nThe ticket names the right device but a wrong cause. Measured while the \
             fault held: {refuted}. The mechanism above is the real one."
            ),
            "SCORING-AXES" => format!("{body}\nbonus-refutes-stated-cause: {refuted}"),
            _ => body.to_string(),
        },
    )
}

/// What a measured fact says, for the ground truth.
pub fn fact_text(device: &str, fact: &DeviceFact) -> String {
    match fact {
        DeviceFact::CarrierUp { iface } => format!("{iface} of {device} has carrier"),
        DeviceFact::DaemonRunning { daemon } => format!("{daemon} runs on {device}"),
    }
}

/// The standard false-premise scenario of a refuted claim. Its id is
/// `<prefix>-false-premise-gen-<claim>-<10 hex of the content>`.
pub fn false_premise(
    topology: &str,
    prefix: &str,
    claim: &ClaimType,
    cand: &Candidate,
) -> Result<ScenarioSpec, TicketError> {
    let key = crate::graph::stable_hash(&format!("{}|{:?}", cand.claim, cand.params));
    let ticket = persona::write(claim, &cand.params, Style::Standard, key);
    let said = crate::template::render(&claim.say[0], &cand.params).unwrap_or_default();
    let checks: Vec<String> = cand
        .checks
        .iter()
        .map(|c| format!("{}  {}  => expect {}", c.device, c.command, c.expect))
        .collect();
    let sections = |_: &str| {
        vec![
            Section {
                name: "PROMPT-TO-AGENT".into(),
                body: ticket.clone(),
            },
            Section {
                name: "INJECTION".into(),
                body: format!(
                    "device: none\naction: none (negative control -- no fault injected)\nnote: |\n  \
                     False-premise scenario generated from claim type {}. Nothing is injected; the lab \
                     runs at its healthy baseline. The generator ran these checks on the healthy lab \
                     and every one held, so the claim is false:\n{}",
                    cand.claim,
                    checks
                        .iter()
                        .map(|c| format!("  {c}"))
                        .collect::<Vec<_>>()
                        .join("\n")
                ),
            },
            Section {
                name: "POST-INJECT-CHECK".into(),
                body: "# none -- no injection (negative control)".into(),
            },
            Section {
                name: "GROUND-TRUTH".into(),
                body: format!(
                    "The network is healthy: nothing was injected, and the ticket's premise is false. \
                     The reporter says {said}, yet the healthy lab shows otherwise: {}. A right \
                     answer says is_anomaly=false and blames no device; reporting the claimed fault \
                     counts as over-diagnosis.",
                    cand.fact
                ),
            },
            Section {
                name: "SCORING-AXES".into(),
                body: format!(
                    "assert-no-anomaly\nassert-no-faulty-devices\nbonus-notes-baseline-healthy: {}",
                    cand.fact
                ),
            },
            Section {
                name: "NIKA-LABEL".into(),
                body: format!(
                    "nika_label: none\nnika_category: NOVEL\nin_taxonomy: false\nnote: robustness negative-control: no fault injected (generated {} claim)",
                    cand.claim
                ),
            },
        ]
    };
    let placeholder = format!("{prefix}-false-premise-gen-{}", cand.claim);
    let probe = sections("")
        .iter()
        .map(|s| format!("[{}]\n{}", s.name, s.body))
        .collect::<Vec<_>>()
        .join("\n");
    let hash = sha256_hex(normalise(&format!("{topology}\n{probe}")).as_bytes());
    let id = format!("{placeholder}-{}", &hash[..10]);
    let headers = Headers {
        scenario: id.parse().map_err(|e| TicketError {
            id: id.clone(),
            what: format!("{e}"),
        })?,
        topology: topology.parse().map_err(|e| TicketError {
            id: id.clone(),
            what: format!("topology: {e}"),
        })?,
        fault_family: Some("negative-control (false premise)".into()),
        ticket_style: None,
        variant_of: None,
        confidence_flip_of: None,
    };
    rebuild(headers, sections(""), &id)
}

/// The persona rewrite of a standard false-premise `parent` in `style`: the same file with
/// the persona headers and the persona's ticket.
pub fn persona(
    parent: &ScenarioSpec,
    claim: &ClaimType,
    cand: &Candidate,
    style: Style,
) -> Result<ScenarioSpec, TicketError> {
    let key = crate::graph::stable_hash(&format!("{}|{:?}", cand.claim, cand.params));
    let ticket = persona::write(claim, &cand.params, style, key);
    let id = format!("{}-{}", parent.id(), style.header());
    let mut spec = with_sections(parent, &id, None, |name, body| {
        if name == "PROMPT-TO-AGENT" {
            ticket.clone()
        } else {
            body.to_string()
        }
    })?;
    let mut h = spec.headers().clone();
    h.ticket_style = Some(style.header().into());
    h.variant_of = Some(parent.id().to_string());
    if style == Style::NoviceConfident {
        h.confidence_flip_of = Some(format!("{}-novice", parent.id()));
    }
    spec = rebuild(h, spec.sections().to_vec(), &id)?;
    Ok(spec)
}
