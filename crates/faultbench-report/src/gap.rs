//! The memorisation gap (`faultbench report --gap HAND GENERATED`): how much better agents do
//! on a hand-written scenario set, which may have been seen in training (it is public), than
//! on a freshly generated set of the same fault families, which cannot have been.
//!
//! The two sets hold *different* scenarios, so the paired comparison of [`crate::compare`]
//! (over scenarios both ran) does not apply. Here each set's Outcome is computed as the
//! tables compute it (per pass the mean over answered runs, then the mean over passes), and
//! the gap is `hand − generated`. Its interval comes from an **unpaired** bootstrap: the rows
//! of both sets are put together, every scenario family (a scenario with its persona
//! rewrites, [`crate::cells::family_id`]) is numbered per set, and each replicate draws the
//! families of each set independently, within strata of (set, category) for the category
//! table and (set, fault family) for the family table, so each replicate keeps both sets'
//! composition. Same percentile intervals and seeded generator as every other table
//! ([`crate::stats`]).
//!
//! Fault families: the scenario's `Fault family:` header, read from each run's record
//! (`result.json`, `scenario.fault_family`), reduced to the words before a parenthesis and a
//! twin marker (`service down (DNS server)` → `service down`), lowercased. A family row is
//! shown only when both sets have runs of it. Sources without records (a bare `MANIFEST.csv`)
//! give the category table only, and that is noted.

use crate::cells::{Measure, family_id};
use crate::details::{RunDetails, find_records, read_json, record_id};
use crate::metrics::{ALL, category};
use crate::run_index::RunIndex;
use crate::stats::{Bootstrap, Design, Difference, Estimator, Interval};
use faultbench_core::category::Category;
use faultbench_core::record::ManifestRow;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// One row of a gap table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GapRow {
    /// Category label or fault family.
    pub row: String,
    /// Agent or `All`.
    pub agent: String,
    /// Outcome on the hand-written set, its interval and answered runs.
    pub hand: Option<f64>,
    /// Interval of `hand`.
    pub hand_ci: Option<Interval>,
    /// Answered runs behind `hand`.
    pub hand_n: usize,
    /// Outcome on the generated set.
    pub generated: Option<f64>,
    /// Interval of `generated`.
    pub generated_ci: Option<Interval>,
    /// Answered runs behind `generated`.
    pub generated_n: usize,
    /// `hand − generated`.
    pub gap: Option<f64>,
    /// Unpaired bootstrap 95 % interval of the gap.
    pub gap_ci: Option<Interval>,
}

/// The former name of [`MemorisationGap`] (one public name per concept across the crates:
/// faultbench-gen's lab model has `ModelGap`; issue 28).
#[deprecated(note = "renamed to `MemorisationGap`; the old name goes in the next release")]
pub type Gap = MemorisationGap;

/// The memorisation gap between a hand-written and a generated set.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MemorisationGap {
    /// Outcome per category (and agent).
    pub by_category: Vec<GapRow>,
    /// Outcome per fault family both sets have (and agent).
    pub by_family: Vec<GapRow>,
    /// Cautions (no records, no shared family, …).
    pub notes: Vec<String>,
    /// Bootstrap settings.
    pub bootstrap: Option<Bootstrap>,
}

/// `service down (DNS server)` → `service down`; the twin markers `(misdirected prompt)` and
/// `(misdescribed cause)` go with the parenthesis.
pub fn family_class(header: &str) -> String {
    let head = header.split('(').next().unwrap_or(header);
    head.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The fault family class of each scenario (`topology/scenario id`) of a runs root, from its
/// records. Records that cannot be read are skipped (the report notes them elsewhere).
pub fn families_of_records(root: &Path) -> HashMap<String, String> {
    let mut out = HashMap::new();
    if !root.is_dir() {
        return out;
    }
    for path in find_records(root) {
        let rel = path.strip_prefix(root).unwrap_or(&path);
        let Ok(v) = read_json(&path) else { continue };
        let Some(id) = record_id(&v, rel) else {
            continue;
        };
        if let Some(f) = v
            .get("scenario")
            .and_then(|s| s.get("fault_family"))
            .and_then(|f| f.as_str())
        {
            out.insert(
                format!("{}/{}", id.topology, id.scenario_id),
                family_class(f),
            );
        }
    }
    out
}

/// One set of runs: its rows and each scenario's fault family class.
pub struct GapSource<'a> {
    /// The runs.
    pub index: &'a RunIndex,
    /// `topology/scenario id` → family class (empty when unknown).
    pub families: &'a HashMap<String, String>,
}

fn fault_family(s: &GapSource, r: &ManifestRow) -> Option<String> {
    // A persona rewrite's family is its parent's (a false premise: no fault family).
    let fid = family_id(r);
    s.families
        .get(&fid)
        .or_else(|| s.families.get(&format!("{}/{}", r.topology, r.scenario_id)))
        .cloned()
}

/// A table under construction: rows of (label, agent) with one estimator per set.
struct Table {
    keys: Vec<(u32, u32)>,
    family_index: HashMap<String, u32>,
    estimators: Vec<Estimator>,
    differences: Vec<Difference>,
    rows: Vec<(String, String, usize, usize)>,
}

impl Table {
    fn new() -> Table {
        Table {
            keys: Vec::new(),
            family_index: HashMap::new(),
            estimators: Vec::new(),
            differences: Vec::new(),
            rows: Vec::new(),
        }
    }

    /// The resampling family of a row of set `set`, in `stratum`.
    fn family(&mut self, set: usize, r: &ManifestRow, stratum: u32) -> u32 {
        let id = format!("{set}|{}", family_id(r));
        let next = self.family_index.len() as u32;
        let f = *self.family_index.entry(id).or_insert(next);
        self.keys.push((stratum, f));
        f
    }

    fn run(self, boot: Bootstrap) -> Vec<GapRow> {
        let design = Design::from_keys(self.keys.iter().copied());
        let cis = boot.run(&design, &self.estimators, &self.differences);
        let n_est = self.estimators.len();
        self.rows
            .into_iter()
            .enumerate()
            .map(|(k, (row, agent, hn, gn))| {
                let (h, g) = (&self.estimators[2 * k], &self.estimators[2 * k + 1]);
                let (hand, generated) = (h.point(), g.point());
                GapRow {
                    row,
                    agent,
                    hand,
                    hand_ci: cis[2 * k],
                    hand_n: hn,
                    generated,
                    generated_ci: cis[2 * k + 1],
                    generated_n: gn,
                    gap: hand.zip(generated).map(|(a, b)| a - b),
                    gap_ci: cis[n_est + k],
                }
            })
            .collect()
    }
}

fn pass_index(rows: &[&ManifestRow]) -> BTreeMap<String, u16> {
    let p: BTreeSet<&str> = rows.iter().map(|r| r.pass.as_str()).collect();
    p.into_iter()
        .enumerate()
        .map(|(i, p)| (p.to_string(), i.min(u16::MAX as usize) as u16))
        .collect()
}

fn category_stratum(c: Category) -> u32 {
    match c {
        Category::CorrectFault => 0,
        Category::FalsePremise => 1,
        Category::WrongDevice => 2,
        Category::WrongCause => 3,
    }
}

/// Builds one table: for each (label, agent) that both sets have, the two sets' Outcome and
/// the gap. `label_of` gives a row's label (None: the row is not in this table) and `stratum`
/// its resampling stratum within its set.
fn table(
    sets: [&GapSource; 2],
    labels: &[String],
    label_of: &dyn Fn(&GapSource, &ManifestRow) -> Option<String>,
    stratum: &dyn Fn(&GapSource, &ManifestRow) -> u32,
    boot: Bootstrap,
) -> Vec<GapRow> {
    let mut t = Table::new();
    let all_rows: Vec<&ManifestRow> = sets.iter().flat_map(|s| s.index.rows.iter()).collect();
    let passes = pass_index(&all_rows);
    let mut agents: BTreeSet<String> = BTreeSet::new();
    for s in sets {
        agents.extend(s.index.rows.iter().map(|r| r.agent.clone()));
    }
    // Every row of both sets enters the design once (its family in its set's stratum).
    let mut fam_of: [Vec<(u32, Option<String>)>; 2] = [Vec::new(), Vec::new()];
    for (i, s) in sets.iter().enumerate() {
        for r in &s.index.rows {
            let st = stratum(s, r) * 2 + i as u32;
            let f = t.family(i, r, st);
            fam_of[i].push((f, label_of(s, r)));
        }
    }
    let agent_list: Vec<String> = std::iter::once(ALL.to_string()).chain(agents).collect();
    let details = RunDetails::default();
    for label in labels {
        for agent in &agent_list {
            let mut est = [
                Estimator::new(Measure::Outcome.kind()),
                Estimator::new(Measure::Outcome.kind()),
            ];
            for (i, s) in sets.iter().enumerate() {
                for (r, (f, l)) in s.index.rows.iter().zip(&fam_of[i]) {
                    if l.as_deref() != Some(label.as_str()) || (agent != ALL && &r.agent != agent) {
                        continue;
                    }
                    if let Some((v, c)) = Measure::Outcome.contribution(r, &details) {
                        est[i].add(*f, passes[&r.pass], v, c);
                    }
                }
            }
            if est[0].is_empty() || est[1].is_empty() {
                continue;
            }
            let [h, g] = est;
            let (hn, gn) = (h.adds(), g.adds());
            let k = t.estimators.len();
            t.estimators.push(h);
            t.estimators.push(g);
            t.differences.push(Difference { a: k + 1, b: k });
            t.rows.push((label.clone(), agent.clone(), hn, gn));
        }
    }
    t.run(boot)
}

/// The gap between `hand` (hand-written) and `generated`, per category and per shared fault
/// family, for all agents together and each agent.
pub fn gap(hand: &GapSource, generated: &GapSource, boot: Bootstrap) -> MemorisationGap {
    let mut notes = Vec::new();
    let categories: Vec<String> = [
        Category::CorrectFault,
        Category::FalsePremise,
        Category::WrongDevice,
        Category::WrongCause,
    ]
    .iter()
    .map(|c| c.label().to_string())
    .collect();
    let by_category = table(
        [hand, generated],
        &categories,
        &|_, r| Some(category(r).label().to_string()),
        &|_, r| category_stratum(category(r)),
        boot,
    );
    let fams = |s: &GapSource| -> BTreeSet<String> {
        s.index
            .rows
            .iter()
            .filter(|r| category(r) != Category::FalsePremise)
            .filter_map(|r| fault_family(s, r))
            .collect()
    };
    for (name, s) in [("hand-written", hand), ("generated", generated)] {
        if s.families.is_empty() {
            notes.push(format!(
                "the {name} set has no run records with a `Fault family:` (a bare MANIFEST.csv?): no per-family gap"
            ));
        }
    }
    let shared: Vec<String> = fams(hand).intersection(&fams(generated)).cloned().collect();
    if shared.is_empty() && !hand.families.is_empty() && !generated.families.is_empty() {
        notes.push("no fault family is shared by both sets (families are matched on the words before a parenthesis, lowercased)".into());
    }
    // Family strata: the family's index among all the set's families (false premises: one).
    let strata: BTreeMap<String, u32> = fams(hand)
        .union(&fams(generated))
        .enumerate()
        .map(|(i, f)| (f.clone(), i as u32 + 1))
        .collect();
    let by_family = table(
        [hand, generated],
        &shared,
        &|s, r| {
            (category(r) != Category::FalsePremise)
                .then(|| fault_family(s, r))
                .flatten()
        },
        &|s, r| {
            fault_family(s, r)
                .filter(|_| category(r) != Category::FalsePremise)
                .and_then(|f| strata.get(&f).copied())
                .unwrap_or(0)
        },
        boot,
    );
    MemorisationGap {
        by_category,
        by_family,
        notes,
        bootstrap: (boot.resamples > 0).then_some(boot),
    }
}

impl MemorisationGap {
    /// The two tables in Markdown.
    pub fn markdown(&self) -> String {
        let mut s = String::from(
            "# Memorisation gap: hand-written − generated (Outcome)\n\nA positive gap: agents do better on the hand-written set than on generated scenarios of the same families. Intervals: unpaired bootstrap, 95 %.\n",
        );
        for (title, rows) in [
            ("By category", &self.by_category),
            ("By fault family (shared by both sets)", &self.by_family),
        ] {
            s.push_str(&format!(
                "\n## {title}\n\n| | Agent | Hand-written | n | Generated | n | Gap | 95% CI |\n|---|---|---:|---:|---:|---:|---:|---|\n"
            ));
            for r in rows {
                let v = |x: Option<f64>| x.map_or("–".into(), |x| format!("{x:.3}"));
                let ci = |c: Option<Interval>| c.map_or("–".into(), |c| c.format(false));
                s.push_str(&format!(
                    "| {} | {} | {} {} | {} | {} {} | {} | {} | {} |\n",
                    crate::labels::md(&r.row),
                    crate::labels::md(&r.agent),
                    v(r.hand),
                    ci(r.hand_ci),
                    r.hand_n,
                    v(r.generated),
                    ci(r.generated_ci),
                    r.generated_n,
                    r.gap.map_or("–".into(), |g| format!("{g:+.3}")),
                    ci(r.gap_ci)
                ));
            }
            if rows.is_empty() {
                s.push_str("| (no row both sets have) | | | | | | | |\n");
            }
        }
        for n in &self.notes {
            s.push_str(&format!("\nNote: {n}\n"));
        }
        s
    }

    /// Both tables as CSV (`table,row,agent,hand,hand_lo,hand_hi,hand_n,generated,…`).
    pub fn csv(&self) -> String {
        let mut s = String::from(
            "table,row,agent,hand,hand_lo,hand_hi,hand_n,generated,generated_lo,generated_hi,generated_n,gap,gap_lo,gap_hi\n",
        );
        let f = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x:.4}"));
        let q = |x: &str| format!("\"{}\"", x.replace('"', "\"\""));
        for (name, rows) in [("category", &self.by_category), ("family", &self.by_family)] {
            for r in rows {
                let b = |c: Option<Interval>| (f(c.map(|c| c.lo)), f(c.map(|c| c.hi)));
                let (hl, hh) = b(r.hand_ci);
                let (gl, gh) = b(r.generated_ci);
                let (dl, dh) = b(r.gap_ci);
                s.push_str(&format!(
                    "{name},{},{},{},{hl},{hh},{},{},{gl},{gh},{},{},{dl},{dh}\n",
                    q(&r.row),
                    q(&r.agent),
                    f(r.hand),
                    r.hand_n,
                    f(r.generated),
                    r.generated_n,
                    f(r.gap)
                ));
            }
        }
        s
    }
}
