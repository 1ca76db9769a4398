//! From families and a lab model to the variants of a run: candidates per family, the seeded
//! sample, the shard.
//!
//! Candidates are every binding of a family's target that meets its `where`, times every
//! combination of its `[values]`. Identical normalised content is one variant (the first
//! family in id order keeps it). With `count`, each family's candidates are shuffled by a
//! generator seeded from the run's seed and the family id, and families are visited round
//! robin in an order shuffled by the seed, so a small sample still spans the families and one
//! smaller than their number is not biased toward the first ids. Shards split the sample by position.

use crate::bind::{self, Binding};
use crate::content::SplitMix64;
use crate::family::{Family, FamilyCondition};
use crate::graph::stable_hash;
use crate::model::LabModel;
use crate::render::{Variant, render_variant};
use crate::template::Params;
use crate::ticket::TicketWriter;
use std::collections::{BTreeMap, BTreeSet};

/// What to generate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GenOptions {
    /// The seed of the sample.
    pub seed: u64,
    /// How many variants (all candidates when `None`).
    pub count: Option<usize>,
    /// Only these family ids (all when empty).
    pub families: Vec<String>,
    /// Shard `k` of `n` (1-based).
    pub shard: (usize, usize),
    /// The first part of every id (`kath2`).
    pub id_prefix: String,
}

/// What one family yields on the lab.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FamilyPlan {
    /// Family id.
    pub family: String,
    /// Its layer.
    pub layer: String,
    /// Its target kind.
    pub target: String,
    /// Distinct variants it yields.
    pub candidates: usize,
    /// Distinct targets among them.
    pub targets: usize,
    /// Selected for this run (all shards).
    pub selected: usize,
    /// Why it yields nothing, when it does not.
    pub empty_because: Option<String>,
    /// Bindings refused for unsafe values or templates that did not render.
    pub rejected: Vec<String>,
}

/// The former name of [`GenerationPlan`] (one public name per concept across the crates:
/// faultbench-report has a `cells::Plan`; issue 28).
#[deprecated(note = "renamed to `GenerationPlan`; the old name goes in the next release")]
pub type Plan = GenerationPlan;

/// The families' plans and the variants of this shard, sorted by id.
#[derive(Debug, Clone)]
pub struct GenerationPlan {
    /// Per family, in family-id order.
    pub families: Vec<FamilyPlan>,
    /// The selected variants of this shard.
    pub variants: Vec<Variant>,
    /// Selected over all shards.
    pub selected_total: usize,
}

/// Unknown family names in `--families`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown famil{} {}; known: {}", if .unknown.len() == 1 { "y" } else { "ies" }, .unknown.join(", "), .known.join(", "))]
pub struct UnknownFamilies {
    /// The unknown names.
    pub unknown: Vec<String>,
    /// Every known family id.
    pub known: Vec<String>,
}

fn value_combos(values: &BTreeMap<String, Vec<String>>) -> Vec<Params> {
    let mut combos = vec![Params::new()];
    for (k, vs) in values {
        combos = combos
            .into_iter()
            .flat_map(|c| {
                vs.iter().map(move |v| {
                    let mut c = c.clone();
                    c.insert(k.clone(), v.clone());
                    c
                })
            })
            .collect();
    }
    combos
}

fn candidates(
    model: &LabModel,
    family: &Family,
    tickets: &dyn TicketWriter,
    topology: &str,
    prefix: &str,
) -> (Vec<Variant>, FamilyPlan) {
    let (bindings, mut rejected) = bind::bind(model, &family.applies.target);
    let conds: Vec<FamilyCondition> = family
        .applies
        .conditions
        .iter()
        .filter_map(|c| FamilyCondition::parse(c).ok())
        .collect();
    let bound = bindings.len();
    // List parameters multiply only the families that use them.
    let used: BTreeSet<String> = family
        .templates()
        .iter()
        .filter_map(|t| crate::template::names(t).ok())
        .flatten()
        .chain(family.applies.conditions.iter().filter_map(|c| {
            FamilyCondition::parse(c)
                .ok()
                .map(|c| c.param().to_string())
        }))
        .filter(|n| bind::LIST_PARAMS.contains(&n.as_str()))
        .collect();
    let expanded: Vec<Binding> = bindings
        .iter()
        .flat_map(|b| {
            let lists: BTreeMap<String, Vec<String>> = b
                .lists
                .iter()
                .filter(|(k, _)| used.contains(*k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            value_combos(&lists).into_iter().map(move |combo| {
                let mut x = b.clone();
                x.params.extend(combo);
                x
            })
        })
        .collect();
    let matching: Vec<&Binding> = expanded
        .iter()
        .filter(|b| conds.iter().all(|c| c.holds(&b.params)))
        .collect();
    let mut out = Vec::new();
    for b in &matching {
        for combo in value_combos(&family.values) {
            let mut p = b.params.clone();
            p.extend(combo);
            match render_variant(family, &b.target, &p, topology, prefix, tickets) {
                Ok(v) => out.push(v),
                Err(e) => rejected.push(format!("{}: {e}", b.target)),
            }
        }
    }
    let empty_because = if !out.is_empty() {
        None
    } else if bound == 0 {
        Some(format!(
            "the lab has no {} ({})",
            family.applies.target,
            bind::target(&family.applies.target).map_or("", |t| t.about)
        ))
    } else if matching.is_empty() {
        Some(format!(
            "none of the {bound} {} target(s) meets `where` [{}]",
            family.applies.target,
            family.applies.conditions.join(", ")
        ))
    } else {
        Some("every candidate was rejected (see rejected)".into())
    };
    let targets: BTreeSet<&str> = out.iter().map(|v| v.target.as_str()).collect();
    let plan = FamilyPlan {
        family: family.family.id.clone(),
        layer: family.family.layer.clone(),
        target: family.applies.target.clone(),
        candidates: out.len(),
        targets: targets.len(),
        selected: 0,
        empty_because,
        rejected,
    };
    (out, plan)
}

/// Every distinct candidate of the chosen families on a lab, before sampling: what a run
/// selects from, whatever its seed, count or shard.
#[derive(Debug, Clone)]
pub struct Candidates {
    /// Per family, in family-id order (nothing selected yet).
    pub families: Vec<FamilyPlan>,
    /// Each family's distinct variants, sorted by id (same order as `families`).
    pub variants: Vec<Vec<Variant>>,
}

/// Renders every candidate of the families `opts.families` names (all when empty) on `model`
/// and drops those whose normalised content an earlier family (in id order) already yields.
/// Only `opts.families` and `opts.id_prefix` matter here: seed, count and shard are the
/// sample's ([`select`]).
pub fn enumerate(
    model: &LabModel,
    families: &[Family],
    opts: &GenOptions,
    tickets: &dyn TicketWriter,
) -> Result<Candidates, UnknownFamilies> {
    let known: Vec<String> = families.iter().map(|f| f.family.id.clone()).collect();
    let unknown: Vec<String> = opts
        .families
        .iter()
        .filter(|f| !known.contains(f))
        .cloned()
        .collect();
    if !unknown.is_empty() {
        return Err(UnknownFamilies { unknown, known });
    }
    let mut chosen: Vec<&Family> = families
        .iter()
        .filter(|f| opts.families.is_empty() || opts.families.contains(&f.family.id))
        .collect();
    chosen.sort_by(|a, b| a.family.id.cmp(&b.family.id));
    let mut seen = BTreeSet::new();
    let mut out = Candidates {
        families: Vec::new(),
        variants: Vec::new(),
    };
    for f in chosen {
        let (mut vs, mut p) = candidates(model, f, tickets, &model.topology, &opts.id_prefix);
        vs.retain(|v| seen.insert(v.hash.clone()));
        vs.sort_by(|a, b| a.id.cmp(&b.id));
        p.candidates = vs.len();
        out.variants.push(vs);
        out.families.push(p);
    }
    Ok(out)
}

/// The seeded sample of `candidates` and this shard's part of it (`opts.families` and
/// `opts.id_prefix` were applied by [`enumerate`]).
pub fn select(candidates: &Candidates, opts: &GenOptions) -> GenerationPlan {
    let mut plans = candidates.families.clone();
    let mut per_family = Vec::with_capacity(candidates.variants.len());
    for (p, vs) in plans.iter().zip(&candidates.variants) {
        let mut vs: Vec<&Variant> = vs.iter().collect();
        let mut rng = SplitMix64::new(opts.seed ^ stable_hash(&p.family));
        rng.shuffle(&mut vs);
        per_family.push(vs);
    }
    let total: usize = per_family.iter().map(Vec::len).sum();
    let want = opts.count.unwrap_or(total).min(total);
    let mut selected: Vec<Variant> = Vec::with_capacity(want);
    // The families' turn order is shuffled by the seed too: a sample smaller than the number
    // of families would otherwise always favour the first ids in alphabetical order.
    let mut order: Vec<usize> = (0..per_family.len()).collect();
    SplitMix64::new(opts.seed ^ stable_hash("family order")).shuffle(&mut order);
    let mut round = 0;
    while selected.len() < want {
        for &k in &order {
            if selected.len() < want
                && let Some(v) = per_family[k].get(round)
            {
                selected.push((*v).clone());
                plans[k].selected += 1;
            }
        }
        round += 1;
    }
    selected.sort_by(|a, b| a.id.cmp(&b.id));
    let (k, n) = opts.shard;
    let selected_total = selected.len();
    let variants = selected
        .into_iter()
        .enumerate()
        .filter(|(i, _)| n <= 1 || i % n == k.saturating_sub(1))
        .map(|(_, v)| v)
        .collect();
    GenerationPlan {
        families: plans,
        variants,
        selected_total,
    }
}

/// Plans a run: candidates of every family on `model`, deduplicated, sampled and sharded
/// ([`enumerate`], then [`select`]).
pub fn plan(
    model: &LabModel,
    families: &[Family],
    opts: &GenOptions,
    tickets: &dyn TicketWriter,
) -> Result<GenerationPlan, UnknownFamilies> {
    Ok(select(&enumerate(model, families, opts, tickets)?, opts))
}

/// The variants at positions `from..from + n` of the seed's selection order (the order in
/// which [`plan`] picks: families round robin, each family's candidates shuffled by the seed),
/// over all shards. A plan of `count = k` selects exactly the first `k` positions, so a
/// top-up that takes the next positions draws candidates no earlier draw took, and the same
/// seed always draws the same ones. Empty when the order has no position `from` or beyond.
pub fn next_in_order(
    model: &LabModel,
    families: &[Family],
    opts: &GenOptions,
    tickets: &dyn TicketWriter,
    from: usize,
    n: usize,
) -> Result<Vec<Variant>, UnknownFamilies> {
    let all = |count: usize| {
        plan(
            model,
            families,
            &GenOptions {
                count: Some(count),
                shard: (1, 1),
                ..opts.clone()
            },
            tickets,
        )
    };
    let before: BTreeSet<String> = all(from)?.variants.into_iter().map(|v| v.id).collect();
    let mut next: Vec<Variant> = all(from.saturating_add(n))?
        .variants
        .into_iter()
        .filter(|v| !before.contains(&v.id))
        .collect();
    next.sort_by(|a, b| a.id.cmp(&b.id));
    Ok(next)
}
