//! Computation behind [`crate::dataset::Dataset::stats`]: Table 2 counts, identifier means and
//! the persona invariants of the public release (plus `naive_unsure` keeping `naive`'s
//! identifiers, which our design requires too).

use crate::category::{Category, Layer};
use crate::dataset::{
    Dataset, DatasetStats, IdStats, SHARED_WITH_PARENT, StatsOptions, Violation, folder_accepts,
    ticket_ids,
};
use crate::scenario::{Scenario, ScenarioFile};
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

pub(crate) fn compute(ds: &Dataset, opts: &StatsOptions) -> DatasetStats {
    let mut st = DatasetStats {
        parse_errors: ds.errors().count(),
        ..Default::default()
    };
    let mut violations: Vec<Violation> = Vec::new();
    let mut unchecked: Vec<Violation> = Vec::new();
    let mut v = |path: &Path, message: String| {
        violations.push(Violation {
            path: path.to_path_buf(),
            message,
        });
    };
    for l in crate::category::Layer::FOLDERS {
        st.layers.insert(l.as_str().to_string(), 0);
    }
    for g in &ds.generator {
        st.notes.push(Violation {
            path: g.path.clone(),
            message: format!(
                "faultbench generate's working folder ({} journal(s){}), not scenarios{}",
                g.journals,
                if g.baseline { ", an observed baseline" } else { "" },
                if g.planned > 0 {
                    format!(
                        "; {} planned variant(s) in it were not written into the layout (the run was interrupted: run the same generate command again)",
                        g.planned
                    )
                } else {
                    String::new()
                }
            ),
        });
    }
    for p in &ds.misplaced {
        v(
            p,
            "not part of the dataset layout `<topo>_Q/<layer>/<id>.txt`".into(),
        );
    }

    let mut by_id: HashMap<&str, &ScenarioFile> = HashMap::new();
    for (f, s) in ds.scenarios() {
        st.scenarios += 1;
        *st.layers.entry(f.layer.as_str().to_string()).or_default() += 1;
        if let Some(prev) = by_id.insert(s.id(), s) {
            v(
                &s.path,
                format!(
                    "duplicate scenario id `{}` (also {})",
                    s.id(),
                    prev.path.display()
                ),
            );
        }
        if s.stem() != s.id() {
            v(
                &s.path,
                format!(
                    "file name `{}` differs from `Scenario: {}`",
                    s.stem(),
                    s.id()
                ),
            );
        }
        if !folder_accepts(f.layer, s) {
            v(
                &s.path,
                format!(
                    "a {} scenario (layer {}) does not belong in the `{}` folder",
                    s.category(),
                    s.layer(),
                    f.layer
                ),
            );
        }
        if f.layer.is_persona() {
            *st.personas
                .entry(s.topology().to_string())
                .or_default()
                .entry(f.layer.as_str().to_string())
                .or_default() += 1;
        } else {
            let topo = st.core.entry(s.topology().to_string()).or_default();
            *topo.entry(s.category().as_str().to_string()).or_default() += 1;
            *st.core_totals
                .entry(s.category().as_str().to_string())
                .or_default() += 1;
        }
        if s.category() == Category::FalsePremise && !s.injection().is_negative_control() {
            v(
                &s.path,
                "a false-premise scenario must not inject anything (`device: none`, no `cmd:`)"
                    .into(),
            );
        }
    }

    // Identifier statistics per ticket style.
    let mut ids: BTreeMap<String, Vec<(usize, Option<usize>)>> = BTreeMap::new();
    for (f, s) in ds.scenarios() {
        let style = if f.layer.is_persona() {
            f.layer.as_str()
        } else if s.category() == Category::FalsePremise {
            "standard"
        } else {
            continue;
        };
        let (rel, aware) = ticket_ids(s, opts);
        ids.entry(style.to_string())
            .or_default()
            .push((rel.len(), aware.map(|a| a.len())));
    }
    for (style, counts) in ids {
        let n = counts.len();
        let rel: Vec<usize> = counts.iter().map(|c| c.0).collect();
        let aware: Option<Vec<usize>> = counts.iter().map(|c| c.1).collect();
        st.identifiers.insert(
            style,
            IdStats {
                tickets: n,
                mean: rel.iter().sum::<usize>() as f64 / n.max(1) as f64,
                min: rel.iter().copied().min().unwrap_or(0),
                max: rel.iter().copied().max().unwrap_or(0),
                mean_with_devices: aware.map(|a| a.iter().sum::<usize>() as f64 / n.max(1) as f64),
            },
        );
    }

    // Persona lineage and invariants.
    for (f, s) in ds.scenarios().filter(|(f, _)| f.layer.is_persona()) {
        let layer = f.layer;
        let Some(parent_id) = s.spec.headers().variant_of.as_deref() else {
            v(&s.path, "persona rewrite without `Variant-of:`".into());
            continue;
        };
        let Some(parent) = by_id.get(parent_id) else {
            v(
                &s.path,
                format!("`Variant-of: {parent_id}` names no scenario of the dataset"),
            );
            continue;
        };
        if parent.category() != Category::FalsePremise || parent.layer() != Layer::Cex {
            v(
                &s.path,
                format!("`Variant-of: {parent_id}` is not a standard false-premise scenario"),
            );
        }
        let want_id = format!("{parent_id}-{}", layer.ticket_style());
        if s.id() != want_id {
            v(
                &s.path,
                format!("a {layer} rewrite of `{parent_id}` must be named `{want_id}`"),
            );
        }
        for name in SHARED_WITH_PARENT {
            if s.spec.section(name) != parent.spec.section(name) {
                v(
                    &s.path,
                    format!(
                        "[{name}] differs from the parent `{parent_id}` (rewrites change only the ticket)"
                    ),
                );
            }
        }
        let sibling = |l: Layer| {
            by_id
                .get(format!("{parent_id}-{}", l.ticket_style()).as_str())
                .copied()
        };
        let (mine, mine_aware) = ticket_ids(s, opts);
        match layer {
            Layer::NoviceConfident => {
                let want = format!("{parent_id}-novice");
                if s.spec.headers().confidence_flip_of.as_deref() != Some(want.as_str()) {
                    v(
                        &s.path,
                        format!("novice-confident rewrite must say `Confidence-flip-of: {want}`"),
                    );
                }
                same_ids(
                    &mut v,
                    &mut unchecked,
                    s,
                    sibling(Layer::Novice),
                    "novice",
                    opts,
                );
            }
            Layer::NaiveUnsure => same_ids(
                &mut v,
                &mut unchecked,
                s,
                sibling(Layer::Naive),
                "naive",
                opts,
            ),
            Layer::NaiveNoDetail => {
                let found = mine_aware.as_ref().unwrap_or(&mine);
                if !found.is_empty() {
                    let list: Vec<String> = found.set.iter().map(|(_, t)| t.clone()).collect();
                    v(
                        &s.path,
                        format!(
                            "naive-no-detail ticket names identifiers: {}",
                            list.join(", ")
                        ),
                    );
                }
            }
            _ => {}
        }
    }

    if opts.expect_full {
        let topologies: Vec<String> = st.core.keys().chain(st.personas.keys()).cloned().collect();
        let mut seen = std::collections::BTreeSet::new();
        for t in topologies {
            if !seen.insert(t.clone()) {
                continue;
            }
            let core = st.core.get(&t).cloned().unwrap_or_default();
            for (cat, want) in [
                ("correct_fault", 10),
                ("false_premise", 9),
                ("wrong_device", 3),
                ("wrong_cause", 3),
            ] {
                let have = core.get(cat).copied().unwrap_or(0);
                if have != want {
                    v(
                        &ds.root,
                        format!("{t}: {have} {cat} scenarios, the paper's design has {want}"),
                    );
                }
            }
            let per = st.personas.get(&t).cloned().unwrap_or_default();
            for l in Layer::PERSONAS {
                let have = per.get(l.as_str()).copied().unwrap_or(0);
                if have != 9 {
                    v(
                        &ds.root,
                        format!("{t}: {have} {l} rewrites, the paper's design has 9"),
                    );
                }
            }
        }
    }
    if opts.expect_full {
        violations.append(&mut unchecked);
    }
    st.violations = violations;
    st.unchecked = unchecked;
    st
}

fn same_ids(
    v: &mut impl FnMut(&Path, String),
    unchecked: &mut Vec<Violation>,
    s: &ScenarioFile,
    other: Option<&ScenarioFile>,
    other_name: &str,
    opts: &StatsOptions,
) {
    let Some(o) = other else {
        unchecked.push(Violation {
            path: s.path.clone(),
            message: format!("identifiers not compared: no {other_name} rewrite of the same ticket in this dataset"),
        });
        return;
    };
    let (a, a_aware) = ticket_ids(s, opts);
    let (b, b_aware) = ticket_ids(o, opts);
    let (a, b) = match (a_aware, b_aware) {
        (Some(x), Some(y)) => (x, y),
        _ => (a, b),
    };
    if a != b {
        let fmt = |i: &crate::identifiers::Identifiers| {
            i.set
                .iter()
                .map(|(_, t)| t.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        v(
            &s.path,
            format!(
                "identifiers {{{}}} differ from the {other_name} rewrite's {{{}}}",
                fmt(&a),
                fmt(&b)
            ),
        );
    }
}
