//! Tickets: the `[PROMPT-TO-AGENT]` text of a generated variant, written from its symptom.
//!
//! This is the seam for ticket writers: [`TicketWriter`] gets the symptom (what a user would
//! notice: who cannot reach what, which service stopped answering) and never the cause, so a
//! ticket cannot give the fault away by construction. [`PlainTickets`] writes short, accurate
//! reports in a few phrasings; other writers (misleading or persona tickets) implement the same
//! trait and are handed to [`crate::generate::plan`].

use crate::template::Params;

/// What a user notices, taken from a variant's parameters.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SymptomView {
    /// `unreachable`, `service-down` or `degraded`.
    pub kind: String,
    /// The host that suffers (or the client of a service).
    pub victim: Option<(String, String)>,
    /// What it cannot reach (host and address), or the server.
    pub far: Option<(String, String)>,
    /// A host for which things still work.
    pub control: Option<String>,
    /// The service kind (`web`, `dns`) for `service-down`.
    pub service: Option<String>,
    /// The device the family breaks (only for `degraded`, where nothing else is visible).
    pub near: Option<String>,
}

impl SymptomView {
    /// The symptom of a variant with these parameters.
    pub fn from_params(kind: &str, p: &Params) -> SymptomView {
        let pair = |a: &str, b: &str| Some((p.get(a)?.clone(), p.get(b)?.clone()));
        let (victim, far) = if kind == "service-down" {
            (pair("client", "client_ip"), pair("device", "server_ip"))
        } else {
            (pair("victim", "victim_ip"), pair("far", "far_ip"))
        };
        SymptomView {
            kind: kind.to_string(),
            victim,
            far,
            control: p.get("control").or_else(|| p.get("alt")).cloned(),
            service: p.get("kind").cloned(),
            near: p.get("device").cloned(),
        }
    }
}

/// Writes the ticket of a variant.
pub trait TicketWriter: Send + Sync {
    /// The ticket text for `symptom`; `key` is a stable number for the variant (use it for
    /// any choice, so the same variant always gets the same ticket).
    fn write(&self, symptom: &SymptomView, key: u64) -> String;
}

/// Short, accurate tickets.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlainTickets;

impl TicketWriter for PlainTickets {
    fn write(&self, s: &SymptomView, key: u64) -> String {
        let number = 8000 + key % 1000;
        let phrasing = key / 1000 % 3;
        let body = match (s.kind.as_str(), &s.victim, &s.far) {
            ("service-down", Some((c, _)), Some((srv, ip))) => {
                let what = match s.service.as_deref() {
                    Some("web") => "the web site",
                    Some("dns") => "name resolution",
                    Some("dhcp") => "address assignment",
                    _ => "the service",
                };
                match phrasing {
                    0 => format!(
                        "Users on {c} report that {what} served by {srv} ({ip}) stopped working a few minutes ago. The network itself seems fine: {srv} still answers ping."
                    ),
                    1 => format!(
                        "Since this morning {what} on {srv} ({ip}) does not respond to {c}. Nothing was announced."
                    ),
                    _ => format!(
                        "{c} cannot use {what} of {srv} ({ip}) any more; please have a look."
                    ),
                }
            }
            ("unreachable", Some((v, vip)), Some((f, fip))) => {
                let still = s
                    .control
                    .as_ref()
                    .map(|c| format!(" {c} has no such problem."))
                    .unwrap_or_default();
                match phrasing {
                    0 => format!(
                        "{v} ({vip}) cannot reach {f} ({fip}) since a short while ago; pings time out or fail.{still}"
                    ),
                    1 => format!(
                        "The user of {v} says {f} at {fip} is unreachable from their machine ({vip}). It worked yesterday.{still}"
                    ),
                    _ => format!(
                        "Connectivity problem: traffic from {v} ({vip}) to {f} ({fip}) does not get through.{still}"
                    ),
                }
            }
            _ => {
                let near = s.near.as_deref().unwrap_or("one of the routers");
                format!(
                    "Monitoring flagged a routing change around {near} after a maintenance window; please find out whether something is misconfigured and what it affects."
                )
            }
        };
        format!("Ticket {number}: {body}")
    }
}
