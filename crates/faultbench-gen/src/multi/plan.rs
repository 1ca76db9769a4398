//! The seeded choice of fault combinations on one lab.
//!
//! Combinations are drawn from the lab's single-fault candidates by a generator seeded from the
//! run's seed: half of the draws aim at masking pairs (a fault that cuts a host off, with a
//! fault seen from that host), the other half are any faults. Every draw goes through the
//! conflict rules ([`super::rules`]); refusals are counted per rule. The sample then alternates
//! masking and plain combinations and prefers, first, combinations of distinct families whose
//! family set it has not taken yet, so a small sample spans many pairs of families.

use super::compose::{ComposeError, MAX_FAULTS, MultiVariant, compose};
use crate::content::SplitMix64;
use crate::graph::stable_hash;
use crate::render::Variant;
use std::collections::{BTreeMap, BTreeSet};

/// Draws per wanted combination (most draws are refused or repeat one already taken).
const DRAWS_PER_WANTED: usize = 400;

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MultiOptions {
    /// Faults per scenario (2 or 3).
    pub faults: usize,
    /// Scenarios wanted.
    pub count: usize,
    /// The seed.
    pub seed: u64,
    /// The scenario's `Topology:`.
    pub topology: String,
    /// The first part of every id.
    pub id_prefix: String,
}

/// The chosen combinations and what was refused on the way.
#[derive(Debug, Clone, Default)]
pub struct MultiPlan {
    /// The chosen scenarios, by id.
    pub variants: Vec<MultiVariant>,
    /// Draws made.
    pub draws: usize,
    /// Distinct combinations the rules accepted (masking, plain).
    pub accepted: (usize, usize),
    /// Refusals per rule (`same-device-and-resource`, `fix-undoes-other`, …).
    pub refused: BTreeMap<String, usize>,
    /// One example refusal per rule.
    pub examples: BTreeMap<String, String>,
}

fn rule_of(e: &ComposeError) -> String {
    match e {
        ComposeError::Conflict(c) => c.rule().to_string(),
        ComposeError::Unwatched(_) => "unwatched".into(),
        ComposeError::MutualMasking(..) => "mutual-masking".into(),
        ComposeError::Count(_) => "count".into(),
        ComposeError::Scenario(_) => "does-not-parse".into(),
    }
}

/// Chooses up to `opts.count` combinations of `opts.faults` faults from `singles` (the lab's
/// single-fault candidates; `devices` the lab's device names).
pub fn plan_multi(singles: &[Variant], devices: &[String], opts: &MultiOptions) -> MultiPlan {
    let mut out = MultiPlan::default();
    let pool: Vec<&Variant> = singles
        .iter()
        .filter(|v| !v.spec.injection().is_negative_control())
        .collect();
    if pool.len() < opts.faults || !(2..=MAX_FAULTS).contains(&opts.faults) {
        return out;
    }
    // Faults seen from a host: the candidates a fault that cuts that host off would mask.
    let mut seen_from: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (k, v) in pool.iter().enumerate() {
        for (host, _) in [&v.symptom.victim, &v.symptom.far].into_iter().flatten() {
            seen_from.entry(host.clone()).or_default().push(k);
        }
    }
    let maskers: Vec<usize> = (0..pool.len())
        .filter(|&k| {
            let h = pool[k].faulted_device();
            seen_from
                .get(&h)
                .is_some_and(|b| b.iter().any(|&j| super::rules::masks(pool[k], pool[j])))
        })
        .collect();
    let mut rng = SplitMix64::new(opts.seed ^ stable_hash(&format!("multi {}", opts.faults)));
    let mut seen: BTreeSet<Vec<String>> = BTreeSet::new();
    let (mut masked, mut plain) = (Vec::new(), Vec::new());
    let draws = opts.count.max(1) * DRAWS_PER_WANTED;
    for d in 0..draws {
        let mut pick: Vec<usize> = Vec::new();
        if d % 2 == 0 && !maskers.is_empty() {
            let m = maskers[rng.below(maskers.len())];
            let hidden = &seen_from[&pool[m].faulted_device()];
            pick.push(m);
            pick.push(hidden[rng.below(hidden.len())]);
        }
        while pick.len() < opts.faults {
            pick.push(rng.below(pool.len()));
        }
        out.draws += 1;
        let mut key: Vec<String> = pick.iter().map(|&k| pool[k].hash.clone()).collect();
        key.sort();
        key.dedup();
        if key.len() < pick.len() || !seen.insert(key) {
            continue;
        }
        let components: Vec<Variant> = pick.iter().map(|&k| pool[k].clone()).collect();
        match compose(components, devices, &opts.topology, &opts.id_prefix) {
            Ok(mv) if mv.masking.is_empty() => plain.push(mv),
            Ok(mv) => masked.push(mv),
            Err(e) => {
                let rule = rule_of(&e);
                out.examples
                    .entry(rule.clone())
                    .or_insert_with(|| e.to_string());
                *out.refused.entry(rule).or_default() += 1;
            }
        }
    }
    out.accepted = (masked.len(), plain.len());
    // Alternate masking and plain; first pass takes each family set once.
    let mut families: BTreeSet<String> = BTreeSet::new();
    let mut chosen: Vec<MultiVariant> = Vec::new();
    for distinct in [true, false] {
        let (mut a, mut b) = (masked.iter(), plain.iter());
        loop {
            let (x, y) = (a.next(), b.next());
            if x.is_none() && y.is_none() {
                break;
            }
            for mv in [x, y].into_iter().flatten() {
                let mut f: Vec<&str> = mv.components.iter().map(|c| c.family.as_str()).collect();
                f.sort_unstable();
                let repeats = f.windows(2).any(|w| w[0] == w[1]);
                let fam = f.join("+");
                let taken = chosen.iter().any(|c| c.variant.id == mv.variant.id);
                let fresh = || !repeats && families.insert(fam);
                if chosen.len() < opts.count && !taken && (!distinct || fresh()) {
                    chosen.push(mv.clone());
                }
            }
        }
    }
    chosen.sort_by(|a, b| a.variant.id.cmp(&b.variant.id));
    out.variants = chosen;
    out
}
