//! The rules: pure functions from the gathered evidence to findings.
//!
//! Each rule recognises one family of fault signatures and states what it saw in words
//! that name the device and the component (`ospfd is enabled on r1 but not running`). A
//! finding's weight says how much it proves on its own:
//!
//! - **3** a direct fault: a stopped daemon the configuration wants, an interface shut on a
//!   used link, a route or filter that drops the traffic that fails, a mismatch on the two
//!   sides of a session that does not come up;
//! - **2** a broken or inconsistent state that needs a symptom to matter (an address outside
//!   its LAN's subnet, a session down without a visible cause); it becomes 3 when failing
//!   traffic involves its device ([`corroborate`]);
//! - **1** an observation that is normal in many healthy networks (a filter that drops
//!   nothing we tested, an address reused on separate LANs).

pub mod addressing;
mod canonical;
pub mod drift;
pub mod links;
pub mod nat;
pub mod paths;
pub mod routing;
pub mod services;

use super::claims::Claims;
use super::gather::Observations;
use super::lan::Model;
use super::topo::SummaryTopology;
use std::collections::BTreeSet;

/// A piece of evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    /// The device it is about, if any.
    pub device: Option<String>,
    /// 3 direct fault, 2 broken state, 1 weak.
    pub weight: u8,
    /// What was seen.
    pub what: String,
    /// What would fix it.
    pub fix: String,
    /// Other devices whose failing traffic this finding would explain (a switch port's
    /// hosts, a host behind a bad route): their failures corroborate it.
    pub affects: Vec<String>,
}

impl Finding {
    /// A finding about `device`.
    pub fn on(device: &str, weight: u8, what: impl Into<String>, fix: impl Into<String>) -> Self {
        Finding {
            device: Some(device.to_string()),
            weight,
            what: what.into(),
            fix: fix.into(),
            affects: Vec::new(),
        }
    }

    /// Names the devices whose failing traffic this finding explains.
    pub fn affecting<I: IntoIterator<Item = S>, S: Into<String>>(mut self, devices: I) -> Self {
        self.affects = devices.into_iter().map(Into::into).collect();
        self
    }

    /// A finding about no single device.
    pub fn general(weight: u8, what: impl Into<String>, fix: impl Into<String>) -> Self {
        Finding {
            device: None,
            weight,
            what: what.into(),
            fix: fix.into(),
            affects: Vec::new(),
        }
    }
}

/// What every rule reads.
pub struct Ctx<'a> {
    /// The summary.
    pub topo: &'a SummaryTopology,
    /// Roles, domains, addresses.
    pub model: &'a Model,
    /// Tool outputs.
    pub obs: &'a Observations,
    /// The ticket's claims.
    pub claims: &'a Claims,
}

/// The static rules (no traffic needed): links, addressing, routing, services.
pub fn static_findings(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    out.extend(links::findings(cx));
    out.extend(addressing::findings(cx));
    out.extend(routing::findings(cx));
    out.extend(services::findings(cx));
    out.extend(drift::findings(cx));
    dedup(out)
}

/// Devices the static rules suspect (worth pinging from).
pub fn suspects(findings: &[Finding]) -> BTreeSet<String> {
    findings
        .iter()
        .filter(|f| f.weight >= 2)
        .filter_map(|f| f.device.clone())
        .collect()
}

/// Promotes weight-2 findings whose device, or a device they affect, takes part in failing
/// traffic (as a source, a destination, or where a failing walk stopped).
pub fn corroborate(findings: &mut [Finding], involved: &BTreeSet<String>) {
    for f in findings.iter_mut() {
        let hit = f
            .device
            .iter()
            .chain(f.affects.iter())
            .any(|d| involved.contains(d));
        if f.weight == 2 && hit {
            f.weight = 3;
        }
    }
}

/// Removes repeated findings (same device, same text), keeping the heaviest.
pub fn dedup(mut v: Vec<Finding>) -> Vec<Finding> {
    let mut out: Vec<Finding> = Vec::new();
    v.sort_by_key(|f| std::cmp::Reverse(f.weight));
    for f in v {
        if !out.iter().any(|o| o.device == f.device && o.what == f.what) {
            out.push(f);
        }
    }
    out
}
