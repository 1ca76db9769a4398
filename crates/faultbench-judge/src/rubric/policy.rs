//! Intentional policies: configuration that looks like a fault but is part of a topology's
//! healthy state (a standing ACL, a resolver with recursion off by design). Blaming one is
//! over-diagnosis.
//!
//! Policies are read from prose: a sentence of a scenario's `[GROUND-TRUTH]` that says
//! `by design`, `intended`, `intentional(ly)` or `standing … policy`, together with the
//! sentence before it, names the policy's devices and its mechanism (the lexicon concepts in
//! those sentences, such as `acl` or `dns`). A [`PolicyBook`] keeps them per topology, so that a
//! policy documented in one scenario of a topology counts in all of them; a judge can also be
//! given policies directly with [`PolicyBook::add`].
//!
//! A diagnosis **blames** a policy when it blames one of the policy's devices (lists it, or
//! blames it in the text when it lists none) and names one of the policy's mechanisms in a
//! fault clause.

use super::devices::{Inventory, Stance, device_key, looks_like_device, stance};
use super::lexicon::{CONCEPT_PHRASES, CONCEPTS};
use super::text::{Doc, Polarity};
use faultbench_core::Diagnosis;
use faultbench_core::scenario::Scenario;
use std::collections::HashMap;

/// Concept groups too general to identify a policy's mechanism.
const GENERAL: [&str; 22] = [
    "healthy",
    "up",
    "reach",
    "0% loss",
    "full",
    "adjacency",
    "session",
    "established",
    "route",
    "link",
    "interface",
    "sole",
    "transit",
    "intermittent",
    "latency",
    "mismatch",
    "missing",
    "down",
    "withdraw",
    "advertise",
    "gateway",
    "bandwidth",
];

/// The former name of [`IntendedPolicy`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `IntendedPolicy`; the old name goes in the next release")]
pub type Policy = IntendedPolicy;

/// One documented intentional policy.
#[derive(Debug, Clone, PartialEq)]
pub struct IntendedPolicy {
    /// Keys of the devices that carry it.
    pub devices: Vec<String>,
    /// The devices as written.
    pub names: Vec<String>,
    /// Lexicon concept groups that describe it (indices into the lexicon).
    concepts: Vec<usize>,
    /// The sentence(s) it was read from, for rationales.
    pub text: String,
}

impl IntendedPolicy {
    /// A policy on some devices, described in words (its mechanism is read from the words).
    pub fn new(devices: &[&str], description: &str) -> IntendedPolicy {
        IntendedPolicy {
            devices: devices.iter().map(|d| device_key(d)).collect(),
            names: devices.iter().map(|d| d.to_lowercase()).collect(),
            concepts: mechanisms(&Doc::new(description)),
            text: description.trim().to_string(),
        }
    }

    /// Whether a diagnosis blames this policy (one that reports no fault blames nothing).
    pub fn blamed_by(&self, diagnosis: &Diagnosis, doc: &Doc) -> bool {
        if diagnosis.is_anomaly == Some(false) {
            return false;
        }
        let device_blamed = self.devices.iter().any(|k| {
            let s: Stance = stance(k, diagnosis, doc);
            s.blamed(diagnosis)
        });
        device_blamed
            && self.concepts.iter().any(|g| {
                CONCEPT_PHRASES[*g].iter().any(|p| {
                    doc.phrase_positions(p)
                        .into_iter()
                        .any(|pos| doc.polarity_at(pos) == Polarity::Fault)
                })
            })
    }

    /// A short name for rationales (`acl on router6`).
    pub fn summary(&self) -> String {
        let what: Vec<&str> = self.concepts.iter().map(|g| CONCEPTS[*g][0]).collect();
        format!("{} on {}", what.join("/"), self.names.join(", "))
    }
}

fn mechanisms(doc: &Doc) -> Vec<usize> {
    let mut out = Vec::new();
    for (g, group) in CONCEPT_PHRASES.iter().enumerate() {
        if GENERAL.contains(&CONCEPTS[g][0]) {
            continue;
        }
        if group.iter().any(|p| !doc.phrase_positions(p).is_empty()) {
            out.push(g);
        }
    }
    out
}

/// Reads the intentional policies a text documents.
pub fn policies_in(text: &str, inv: &Inventory) -> Vec<IntendedPolicy> {
    let doc = Doc::new(text);
    let sentences = doc
        .tokens
        .last()
        .map(|t| t.sentence as usize + 1)
        .unwrap_or(0);
    let mut by_sentence: Vec<Vec<usize>> = vec![Vec::new(); sentences];
    for (i, t) in doc.tokens.iter().enumerate() {
        by_sentence[t.sentence as usize].push(i);
    }
    let is_cue = |toks: &[usize]| {
        toks.iter().enumerate().any(|(k, &p)| {
            let w = doc.tokens[p].raw.as_str();
            let next = toks.get(k + 1).map(|&q| doc.tokens[q].raw.as_str());
            matches!(w, "intended" | "intentional" | "intentionally")
                || (w == "by" && next == Some("design"))
                || (w == "standing" && toks.iter().any(|&q| doc.tokens[q].raw == "policy"))
        })
    };
    let mut out: Vec<IntendedPolicy> = Vec::new();
    for s in 0..sentences {
        if !is_cue(&by_sentence[s]) {
            continue;
        }
        let window: Vec<usize> = (s.saturating_sub(1)..=s)
            .flat_map(|k| by_sentence[k].iter().copied())
            .collect();
        let words: Vec<&str> = window.iter().map(|&p| doc.tokens[p].raw.as_str()).collect();
        let mut devices: Vec<String> = Vec::new();
        let mut names: Vec<String> = Vec::new();
        for w in &words {
            if let Some(k) = inv
                .key_of(w)
                .map(str::to_string)
                .or_else(|| looks_like_device(w).then(|| device_key(w)))
                && !devices.contains(&k)
            {
                devices.push(k);
                names.push(w.to_string());
            }
        }
        let sentence_text = words.join(" ");
        let concepts = mechanisms(&Doc::new(&sentence_text));
        if devices.is_empty() || concepts.is_empty() {
            continue;
        }
        out.push(IntendedPolicy {
            devices,
            names,
            concepts,
            text: sentence_text,
        });
    }
    out
}

/// Intentional policies by topology.
#[derive(Debug, Clone, Default)]
pub struct PolicyBook {
    by_topology: HashMap<String, Vec<IntendedPolicy>>,
}

impl PolicyBook {
    /// An empty book.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds a policy to a topology.
    pub fn add(&mut self, topology: &str, policy: IntendedPolicy) {
        let list = self.by_topology.entry(topology.to_lowercase()).or_default();
        if !list.contains(&policy) {
            list.push(policy);
        }
    }

    /// Learns the policies a scenario's ground truth documents.
    pub fn learn(&mut self, scenario: &dyn Scenario) {
        let inv = Inventory::from_scenario(scenario, &Diagnosis::default());
        for p in policies_in(scenario.ground_truth(), &inv) {
            self.add(scenario.topology(), p);
        }
    }

    /// The policies of a topology.
    pub fn for_topology(&self, topology: &str) -> &[IntendedPolicy] {
        self.by_topology
            .get(&topology.to_lowercase())
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Number of policies in the book.
    pub fn len(&self) -> usize {
        self.by_topology.values().map(Vec::len).sum()
    }

    /// Whether the book is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_documented_acl_and_detects_blame() {
        let gt = "No fault was injected. NOTE: a standing security ACL on dswa1/dswa2 restricts \
                  Office A to Office B traffic by design -- it is intended policy, not a fault.";
        let ps = policies_in(gt, &Inventory::default());
        assert_eq!(ps.len(), 1, "{ps:?}");
        assert!(ps[0].devices.contains(&"dswa1".to_string()));
        let d = Diagnosis {
            is_anomaly: Some(true),
            faulty_devices: vec!["dswa1".into()],
            text: "Root cause: an iptables DROP rule on dswa1 blocks Office A.".into(),
            parsed_ok: true,
        };
        assert!(ps[0].blamed_by(&d, &Doc::new(&d.text)));
        let healthy = Diagnosis {
            is_anomaly: Some(false),
            faulty_devices: vec![],
            text: "The ACL on dswa1 is intended policy and is working as designed.".into(),
            parsed_ok: true,
        };
        assert!(!ps[0].blamed_by(&healthy, &Doc::new(&healthy.text)));
    }

    #[test]
    fn sentences_without_cue_or_device_are_not_policies() {
        assert!(policies_in("ospfd is dead on r1. Restart it.", &Inventory::default()).is_empty());
        assert!(policies_in("Routing is by design.", &Inventory::default()).is_empty());
    }
}
