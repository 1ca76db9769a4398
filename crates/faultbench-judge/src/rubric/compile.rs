//! A scenario's rubric, compiled once and applied to every diagnosis of that scenario.
//!
//! Everything that depends only on the scenario — its device inventory, the policies its ground
//! truth documents, each axis turned into a [`Requirement`], the fix requirement — is computed
//! once. A benchmark judges each scenario many times (agents × passes), so the judge keeps
//! compiled scenarios in a small cache keyed by the scenario's id and a hash of its judged
//! sections.

use super::axis::Requirement;
use super::devices::{Inventory, device_key};
use super::policy::{IntendedPolicy, policies_in};
use super::text::{Fnv, Polarity};
use faultbench_core::Diagnosis;
use faultbench_core::scenario::{AxisKind, Scenario, ScoringAxis};
use std::hash::Hasher;

/// Slug fragments that make an axis read as health (it asks the diagnosis to clear something).
const HEALTH_SLUG: [&str; 14] = [
    "exonerat",
    "rules-out",
    "rule-out",
    "ruled-out",
    "healthy",
    "baseline",
    "-up",
    "unaffected",
    "unchanged",
    "innocent",
    "not-",
    "no-fault",
    "intact",
    "working",
];

/// How one axis is judged.
#[derive(Debug, Clone)]
pub(crate) enum AxisRule {
    /// `assert-…`: mechanical.
    Assert,
    /// `reason…`: not part of the outcome.
    Skip,
    /// `must-identify-device: D`.
    Device(Option<String>),
    /// Any other `must`/`bonus` axis.
    Content {
        req: Requirement,
        required: bool,
        health: bool,
        default: Polarity,
    },
}

/// A compiled scenario.
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    pub inv: Inventory,
    pub policies: Vec<IntendedPolicy>,
    pub axes: Vec<AxisRule>,
    pub fix: Option<Requirement>,
}

/// The cache key of a scenario: its id and a hash of what the rubric reads.
pub(crate) fn key_of(scenario: &dyn Scenario) -> String {
    let mut h = Fnv::default();
    h.write(scenario.ground_truth().as_bytes());
    h.write(scenario.ticket().as_bytes());
    for a in scenario.scoring_axes() {
        h.write(a.raw.as_bytes());
        h.write(b"\n");
    }
    h.write(scenario.fix().unwrap_or("").as_bytes());
    format!("{}#{:016x}", scenario.id(), h.finish())
}

/// `must-explain-vrrp-failover` → `vrrp failover`.
fn slug_words(slug: &str) -> String {
    let s = slug
        .trim_start_matches("must-")
        .trim_start_matches("must")
        .trim_start_matches("bonus-");
    s.replace('-', " ")
}

fn compile_axis(axis: &ScoringAxis, inv: &Inventory) -> AxisRule {
    match axis.kind() {
        AxisKind::Assert => return AxisRule::Assert,
        AxisKind::Reasoning | AxisKind::Fix => return AxisRule::Skip,
        AxisKind::Must | AxisKind::Bonus => {}
    }
    let slug = axis.slug().to_lowercase();
    if slug.ends_with("identify-device") {
        let dev = axis
            .argument()
            .and_then(|a| a.split_whitespace().next())
            .map(|d| d.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_'))
            .filter(|d| !d.is_empty())
            .map(str::to_string);
        return AxisRule::Device(dev);
    }
    let required = axis.kind() == AxisKind::Must;
    let health = HEALTH_SLUG.iter().any(|m| slug.contains(m));
    let default = if health {
        Polarity::Health
    } else if required {
        Polarity::Fault
    } else {
        Polarity::Neutral
    };
    let text = match axis.argument() {
        Some(a) => a.to_string(),
        None => slug_words(&slug),
    };
    AxisRule::Content {
        req: Requirement::parse(&text, default, inv),
        required,
        health,
        default,
    }
}

impl Compiled {
    pub fn new(scenario: &dyn Scenario) -> Compiled {
        let inv = Inventory::from_scenario(scenario, &Diagnosis::default());
        let policies = policies_in(scenario.ground_truth(), &inv);
        let axes = scenario
            .scoring_axes()
            .iter()
            .map(|a| compile_axis(a, &inv))
            .collect();
        let fix = scenario.fix().map(|f| Requirement::remedy(f, &inv));
        Compiled {
            inv,
            policies,
            axes,
            fix,
        }
    }

    /// The display name of a device key.
    pub fn name(&self, key: &str) -> String {
        self.inv.name_of(key).unwrap_or(key).to_string()
    }

    /// The key of an `identify-device` axis' device.
    pub fn device_key(dev: &str) -> String {
        device_key(dev)
    }
}
