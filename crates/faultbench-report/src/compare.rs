//! Several registries side by side (`faultbench report --compare A B [C …]`): every statistic
//! of Tables 4–8 for each source, and for each later source its difference to the first with a
//! *paired* bootstrap interval over the scenarios both ran.
//!
//! Pairing: the two registries' rows are put together, scenario families are numbered once,
//! and only families present in both enter the difference. Each replicate draws those shared
//! families (within their category) and recomputes both sources' statistics on the same draw,
//! so scenario difficulty cancels out of the difference. The difference's point value is taken
//! on the shared families too; each source's own value uses all of its runs.
//!
//! Configurations: a runs root may hold `identity.json` (its configuration). When two sources
//! both have one and they differ, the fields that differ are listed; when one lacks it, that
//! is said too; so is an agent run with several models inside one source.

use super::cells::{CellSpec, Families, Group, Measure, Plan, Stat, Subset};
use super::details::{JsonFileError, RunDetails, read_bounded_bytes};
use super::intervals::{category_groups, fix_groups, style_groups, timeout_groups};
use super::labels::{label, md};
use super::metrics::ALL;
use super::run_index::RunIndex;
use super::stats::{Bootstrap, Design, Interval};
use faultbench_core::identity::{
    MAX_IDENTITY_BYTES, MAX_LISTED_DIFFERENCES, identity_shape_problem,
};
use faultbench_core::record::ManifestRow;
use faultbench_core::text::echo;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// One set of runs to compare.
#[derive(Debug, Clone)]
pub struct Source {
    /// Short label (`A`, `B`, …).
    pub label: String,
    /// Its runs.
    pub index: RunIndex,
    /// Its runs root's `identity.json`, if any.
    pub identity: Option<Value>,
}

/// An `identity.json` that exists but cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct IdentityFileError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    #[source]
    pub problem: JsonFileError,
}

/// The `identity.json` of a runs root (or of the folder holding a `MANIFEST.csv`): `Ok(None)`
/// when there is none, `Err` when it exists but cannot be used. It is read within the caps of
/// run identities ([`MAX_IDENTITY_BYTES`], nesting and number of values:
/// [`identity_shape_problem`]) before it is parsed.
pub fn read_identity(source: &Path) -> Result<Option<Value>, IdentityFileError> {
    let dir = if source.is_dir() {
        source.to_path_buf()
    } else {
        source.parent().map(Path::to_path_buf).unwrap_or_default()
    };
    let path = dir.join("identity.json");
    if std::fs::symlink_metadata(&path).is_err() {
        return Ok(None);
    }
    let checked =
        read_bounded_bytes(&path, MAX_IDENTITY_BYTES, "an identity.json").and_then(|bytes| {
            match identity_shape_problem(&bytes) {
                Some(problem) => Err(JsonFileError::Shape(problem)),
                None => serde_json::from_slice(&bytes).map_err(JsonFileError::NotJson),
            }
        });
    checked
        .map(Some)
        .map_err(|problem| IdentityFileError { path, problem })
}

/// The fields in which two identities differ, as many as [`identity_differences`] lists.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IdentityDifferences {
    /// `(path, left, right)` of the first [`MAX_LISTED_DIFFERENCES`] differing leaves, in
    /// path order (`–` when absent on one side); paths and values cut to
    /// [`ECHO_MAX`](faultbench_core::text::ECHO_MAX).
    pub listed: Vec<(String, String, String)>,
    /// How many leaves differ.
    pub total: usize,
}

/// The leaves (dotted paths, `[i]` for array elements) in which two identities differ. One
/// walk over both documents with one path buffer: memory does not grow with their size beyond
/// the listed differences.
pub fn identity_differences(a: &Value, b: &Value) -> IdentityDifferences {
    fn children(v: Option<&Value>) -> (Option<&Map<String, Value>>, &[Value]) {
        match v {
            Some(Value::Object(m)) => (Some(m), &[]),
            Some(Value::Array(x)) => (None, x.as_slice()),
            _ => (None, &[]),
        }
    }
    fn leaf(v: Option<&Value>) -> Option<&Value> {
        v.filter(|v| !v.is_object() && !v.is_array())
    }
    fn shown(v: Option<&Value>) -> String {
        v.map_or_else(|| "–".into(), |v| echo(&v.to_string()).into_owned())
    }
    fn walk(
        path: &mut String,
        a: Option<&Value>,
        b: Option<&Value>,
        out: &mut IdentityDifferences,
    ) {
        let (la, lb) = (leaf(a), leaf(b));
        if (la.is_some() || lb.is_some()) && la != lb {
            out.total += 1;
            if out.listed.len() < MAX_LISTED_DIFFERENCES {
                out.listed
                    .push((echo(path).into_owned(), shown(la), shown(lb)));
            }
        }
        let ((ma, xa), (mb, xb)) = (children(a), children(b));
        let mut keys: Vec<&String> = ma.iter().chain(mb.iter()).flat_map(|m| m.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let len = path.len();
            if len > 0 {
                path.push('.');
            }
            path.push_str(k);
            walk(
                path,
                ma.and_then(|m| m.get(k)),
                mb.and_then(|m| m.get(k)),
                out,
            );
            path.truncate(len);
        }
        for i in 0..xa.len().max(xb.len()) {
            let len = path.len();
            path.push_str(&format!("[{i}]"));
            walk(path, xa.get(i), xb.get(i), out);
            path.truncate(len);
        }
    }
    let mut out = IdentityDifferences::default();
    walk(&mut String::new(), Some(a), Some(b), &mut out);
    out
}

/// A difference to the first source.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct DiffCell {
    /// This source minus the first, on the shared scenario families.
    pub diff: Option<f64>,
    /// Paired bootstrap 95 % interval of the difference.
    pub ci: Option<Interval>,
    /// Scenario families that entered the difference (present in both for this cell).
    pub shared: usize,
}

/// One statistic across the sources.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    /// Row label (category, ticket style or metric).
    pub row: String,
    /// Agent or `All`.
    pub agent: String,
    /// Each source's value on all of its runs.
    pub values: Vec<Option<f64>>,
    /// For each source after the first, its difference to the first.
    pub diffs: Vec<DiffCell>,
}

/// One table of the comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompareTable {
    /// Title.
    pub title: String,
    /// Values are shares (printed as percentages).
    pub percent: bool,
    /// The rows.
    pub rows: Vec<CompareRow>,
}

/// A source as the comparison describes it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceInfo {
    /// Label.
    pub label: String,
    /// Path.
    pub path: PathBuf,
    /// Runs.
    pub runs: usize,
    /// Its `identity.json`, if any.
    pub identity: Option<Value>,
}

/// The comparison.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// The sources, first = reference.
    pub sources: Vec<SourceInfo>,
    /// Configuration differences and other cautions.
    pub notes: Vec<String>,
    /// Bootstrap settings.
    pub bootstrap: Option<Bootstrap>,
    /// The tables.
    pub tables: Vec<CompareTable>,
}

fn group_label(g: &Group) -> String {
    match g {
        Group::Category(c) => c.label().to_string(),
        Group::Style(s) => s.to_string(),
        Group::Any => "all runs".to_string(),
    }
}

/// One compared table: title, whether its values are shares, and its rows (label, runs,
/// value); each row is compared for every agent and `All`.
type TableSpec = (String, bool, Vec<(String, Group, Measure)>);

/// The statistics compared.
fn catalogue() -> Vec<TableSpec> {
    let simple = |title: &str, groups: Vec<Group>, m: Measure| {
        (
            title.to_string(),
            m.is_share(),
            groups.iter().map(|g| (group_label(g), *g, m)).collect(),
        )
    };
    let effort = [
        (
            "tool calls per answered run",
            Measure::ToolCalls(Subset::Answered),
        ),
        (
            "input tokens per answered run",
            Measure::InputTokens(Subset::Answered),
        ),
        (
            "output tokens per answered run",
            Measure::OutputTokens(Subset::Answered),
        ),
        ("USD per answered run", Measure::Usd(Subset::Answered)),
        ("USD per timeout", Measure::Usd(Subset::Timeouts)),
    ];
    vec![
        simple(
            "Table 4 — Outcome by category",
            category_groups(),
            Measure::Outcome,
        ),
        simple(
            "Table 5 — Outcome by ticket style",
            style_groups(),
            Measure::Outcome,
        ),
        simple(
            "Table 6a — Over-diagnosis",
            style_groups(),
            Measure::OverDiagnosis,
        ),
        simple(
            "Table 6b — Timeout rate",
            timeout_groups(),
            Measure::TimeoutRate,
        ),
        simple("Table 7a — Fix", fix_groups(), Measure::Fix),
        simple(
            "Table 7b — Reasoning by category",
            category_groups(),
            Measure::Reasoning,
        ),
        simple(
            "Table 7c — Reasoning by ticket style",
            style_groups(),
            Measure::Reasoning,
        ),
        (
            "Table 8 — Effort per run".to_string(),
            false,
            effort
                .iter()
                .map(|(l, m)| (l.to_string(), Group::Any, *m))
                .collect(),
        ),
        simple(
            "Table 8 — Share of cost on timeouts",
            vec![Group::Any],
            Measure::TimeoutCostShare,
        ),
    ]
}

fn models_by_agent(rows: &[ManifestRow]) -> BTreeMap<String, BTreeSet<String>> {
    let mut m: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for r in rows {
        m.entry(r.agent.clone())
            .or_default()
            .insert(r.model.clone());
    }
    m
}

/// Most models a note names (an agent run with many models is named with the first few).
const MAX_NOTED_MODELS: usize = 5;

/// The first [`MAX_NOTED_MODELS`] of `names` as labels, joined by `sep`, then `… (N more)`.
fn some(names: &BTreeSet<String>, sep: &str) -> String {
    let mut s = names
        .iter()
        .take(MAX_NOTED_MODELS)
        .map(|n| label(n).into_owned())
        .collect::<Vec<_>>()
        .join(sep);
    if names.len() > MAX_NOTED_MODELS {
        s.push_str(&format!("{sep}… ({} more)", names.len() - MAX_NOTED_MODELS));
    }
    s
}

fn notes(sources: &[Source]) -> Vec<String> {
    let mut out = Vec::new();
    let first = &sources[0];
    for s in sources {
        for (agent, models) in models_by_agent(&s.index.rows) {
            if models.len() > 1 {
                out.push(format!(
                    "{}: agent {} ran with several models ({}): one root should hold one configuration",
                    s.label,
                    label(&agent),
                    some(&models, ", ")
                ));
            }
        }
    }
    let ids: BTreeSet<&str> = first
        .index
        .rows
        .iter()
        .map(|r| r.scenario_id.as_str())
        .collect();
    for s in &sources[1..] {
        match (&first.identity, &s.identity) {
            (Some(a), Some(b)) => {
                let d = identity_differences(a, b);
                if d.total == 0 {
                    out.push(format!(
                        "{} and {} have the same run identity.",
                        first.label, s.label
                    ));
                } else {
                    let list: Vec<String> = d
                        .listed
                        .iter()
                        .map(|(k, x, y)| format!("{k}: {x} vs {y}"))
                        .collect();
                    out.push(format!(
                        "{} and {} have DIFFERENT run identities ({} fields): {}{}",
                        first.label,
                        s.label,
                        d.total,
                        list.join("; "),
                        if d.total > d.listed.len() {
                            "; …"
                        } else {
                            ""
                        }
                    ));
                }
            }
            (a, b) => {
                let missing: Vec<&str> = [(a, &first.label), (b, &s.label)]
                    .iter()
                    .filter(|(x, _)| x.is_none())
                    .map(|(_, l)| l.as_str())
                    .collect();
                out.push(format!(
                    "{} has no identity.json: whether {} and {} ran the same configuration is unknown.",
                    missing.join(" and "),
                    first.label,
                    s.label
                ));
            }
        }
        // Differences pair runs of the same scenarios; two sets of different scenarios (a
        // hand-written set and a generated one) have none to pair, and the question a user
        // asks of them is the unpaired gap.
        if !s.index.rows.is_empty()
            && !s
                .index
                .rows
                .iter()
                .any(|r| ids.contains(r.scenario_id.as_str()))
        {
            out.push(format!(
                "{} and {} share no scenario, so no paired difference is computed; for two sets of \
                 different scenarios (e.g. hand-written and generated), `faultbench report --gap \
                 {} {}` gives the unpaired gap per category and family with intervals.",
                first.label,
                s.label,
                first.index.source.display(),
                s.index.source.display()
            ));
        }
        let (ma, mb) = (
            models_by_agent(&first.index.rows),
            models_by_agent(&s.index.rows),
        );
        for (agent, models) in &ma {
            if let Some(other) = mb.get(agent)
                && other != models
            {
                out.push(format!(
                    "agent {}: model {} in {} but {} in {}",
                    label(agent),
                    some(models, "/"),
                    first.label,
                    some(other, "/"),
                    s.label
                ));
            }
        }
    }
    out
}

/// Compares `sources` (at least two; the first is the reference).
pub fn compare(sources: &[Source], boot: Bootstrap) -> Comparison {
    let mut agents: BTreeSet<String> = BTreeSet::new();
    for s in sources {
        agents.extend(s.index.rows.iter().map(|r| r.agent.clone()));
    }
    let mut cols: Vec<String> = agents.into_iter().collect();
    cols.push(ALL.to_string());
    let cat = catalogue();
    // Per-source values on all of their runs.
    let values: Vec<Vec<Vec<Vec<Option<f64>>>>> = sources
        .iter()
        .map(|s| {
            let fam = Families::of(&s.index.rows);
            let details = RunDetails::default();
            let mut plan = Plan::new(&s.index.rows, &details, &fam);
            let stats: Vec<Vec<Vec<Stat>>> = cat
                .iter()
                .map(|(_, _, rows)| {
                    rows.iter()
                        .map(|(_, g, m)| {
                            cols.iter()
                                .map(|a| plan.cell(CellSpec::new(*g, a, *m)))
                                .collect()
                        })
                        .collect()
                })
                .collect();
            let iv = plan.run(Bootstrap {
                resamples: 0,
                seed: 0,
            });
            stats
                .iter()
                .map(|t| {
                    t.iter()
                        .map(|r| r.iter().map(|s| iv.point(*s)).collect())
                        .collect()
                })
                .collect()
        })
        .collect();
    // Paired differences, source k vs source 0.
    let diffs: Vec<Vec<Vec<Vec<DiffCell>>>> = sources[1..]
        .iter()
        .map(|s| paired(&sources[0].index.rows, &s.index.rows, &cat, &cols, boot))
        .collect();
    let tables = cat
        .iter()
        .enumerate()
        .map(|(t, (title, percent, rows))| CompareTable {
            title: title.clone(),
            percent: *percent,
            rows: rows
                .iter()
                .enumerate()
                .flat_map(|(i, (label, _, _))| {
                    cols.iter().enumerate().map({
                        let values = &values;
                        let diffs = &diffs;
                        move |(j, a)| CompareRow {
                            row: label.clone(),
                            agent: a.clone(),
                            values: values.iter().map(|v| v[t][i][j]).collect(),
                            diffs: diffs.iter().map(|d| d[t][i][j]).collect(),
                        }
                    })
                })
                .filter(|r| r.values.iter().any(Option::is_some))
                .collect(),
        })
        .collect();
    Comparison {
        sources: sources
            .iter()
            .map(|s| SourceInfo {
                label: s.label.clone(),
                path: s.index.source.clone(),
                runs: s.index.rows.len(),
                identity: s.identity.clone(),
            })
            .collect(),
        notes: notes(sources),
        bootstrap: (boot.resamples > 0).then_some(boot),
        tables,
    }
}

type Catalogue = [TableSpec];

fn paired(
    a: &[ManifestRow],
    b: &[ManifestRow],
    cat: &Catalogue,
    cols: &[String],
    boot: Bootstrap,
) -> Vec<Vec<Vec<DiffCell>>> {
    let n_a = a.len();
    let rows: Vec<ManifestRow> = a.iter().chain(b.iter()).cloned().collect();
    let mut fam = Families::of(&rows);
    let in_a: BTreeSet<u32> = fam.family_of[..n_a].iter().copied().collect();
    let in_b: BTreeSet<u32> = fam.family_of[n_a..].iter().copied().collect();
    let shared: BTreeSet<u32> = in_a.intersection(&in_b).copied().collect();
    let strata: HashMap<u32, u32> = rows
        .iter()
        .zip(&fam.family_of)
        .map(|(r, f)| (*f, super::metrics::category(r) as u32))
        .collect();
    fam.design = Design::from_keys(shared.iter().map(|f| (strata[f], *f)));
    let details = RunDetails::default();
    let mut plan = Plan::new(&rows, &details, &fam);
    let mut handles = Vec::new();
    for (_, _, trows) in cat {
        let mut t = Vec::new();
        for (_, g, m) in trows {
            let mut r = Vec::new();
            for ag in cols {
                let spec = CellSpec::new(*g, ag, *m);
                let sa = plan.cell_where(spec.clone(), &|i, f| i < n_a && shared.contains(&f));
                let sb = plan.cell_where(spec, &|i, f| i >= n_a && shared.contains(&f));
                let fb: BTreeSet<u32> = plan.families_with_values(sb).into_iter().collect();
                let n = plan
                    .families_with_values(sa)
                    .iter()
                    .filter(|f| fb.contains(f))
                    .count();
                let d = plan.diff(sa, sb);
                r.push((sa, sb, d, n));
            }
            t.push(r);
        }
        handles.push(t);
    }
    let iv = plan.run(boot);
    handles
        .iter()
        .map(|t| {
            t.iter()
                .map(|r| {
                    r.iter()
                        .map(|(sa, sb, d, n)| {
                            let diff = iv.point(*sb).zip(iv.point(*sa)).map(|(y, x)| y - x);
                            DiffCell {
                                diff,
                                ci: d.and_then(|d| iv.get(d)).filter(|_| diff.is_some()),
                                shared: if diff.is_some() { *n } else { 0 },
                            }
                        })
                        .collect()
                })
                .collect()
        })
        .collect()
}

fn fmt(x: Option<f64>, percent: bool) -> String {
    match x {
        Some(v) if percent => format!("{:.1}%", v * 100.0),
        Some(v) if v.abs() >= 1000.0 => format!("{v:.0}"),
        Some(v) if v.abs() >= 10.0 => format!("{v:.1}"),
        Some(v) => format!("{v:.3}"),
        None => "–".into(),
    }
}

fn fmt_diff(d: &DiffCell, percent: bool) -> String {
    let Some(x) = d.diff else {
        return "–".into();
    };
    let sign = if x >= 0.0 { "+" } else { "" };
    let mut s = if percent {
        format!("{sign}{:.1} pp", x * 100.0)
    } else {
        format!("{sign}{}", fmt(Some(x), false))
    };
    if let Some(ci) = d.ci {
        if percent {
            s.push_str(&format!(" [{:.1}, {:.1}]", ci.lo * 100.0, ci.hi * 100.0));
        } else {
            s.push_str(&format!(
                " [{}, {}]",
                fmt(Some(ci.lo), false),
                fmt(Some(ci.hi), false)
            ));
        }
        if ci.lo > 0.0 || ci.hi < 0.0 {
            s.push_str(" *");
        }
    }
    s.push_str(&format!(" (n={})", d.shared));
    s
}

impl Comparison {
    /// Markdown.
    pub fn markdown(&self) -> String {
        let mut out = String::from("## Comparison\n\n");
        for s in &self.sources {
            out.push_str(&format!(
                "- **{}**: `{}` ({} runs)\n",
                s.label,
                s.path.display(),
                s.runs
            ));
        }
        out.push('\n');
        for n in &self.notes {
            out.push_str(&format!("> {n}\n"));
        }
        match self.bootstrap {
            Some(b) => out.push_str(&format!(
                "\nDifferences are later source − {} on the scenario families both ran (n = families), with a paired percentile bootstrap 95% interval ({} resamples, seed {}); * = the interval excludes 0.\n\n",
                self.sources[0].label, b.resamples, b.seed
            )),
            None => out.push_str("\nDifferences without intervals (bootstrap off).\n\n"),
        }
        let labels: Vec<&str> = self.sources.iter().map(|s| s.label.as_str()).collect();
        for t in &self.tables {
            out.push_str(&format!(
                "### {}\n\n| | Agent | {} |",
                t.title,
                labels.join(" | ")
            ));
            for l in &labels[1..] {
                out.push_str(&format!(" {l} − {} |", labels[0]));
            }
            out.push('\n');
            out.push_str(&format!(
                "|---|---|{}\n",
                "---:|".repeat(2 * labels.len() - 1)
            ));
            for r in &t.rows {
                let vals: Vec<String> = r.values.iter().map(|v| fmt(*v, t.percent)).collect();
                let diffs: Vec<String> = r.diffs.iter().map(|d| fmt_diff(d, t.percent)).collect();
                out.push_str(&format!(
                    "| {} | {} | {} | {} |\n",
                    r.row,
                    md(&r.agent),
                    vals.join(" | "),
                    diffs.join(" | ")
                ));
            }
            out.push('\n');
        }
        out
    }

    /// CSV: `table,row,agent,source,value,diff,ci_lo,ci_hi,shared` (one line per source).
    pub fn csv(&self) -> String {
        let safe = |s: &str| super::csv_export::neutralise(s).into_owned();
        let f = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record([
            "table", "row", "agent", "source", "value", "diff", "ci_lo", "ci_hi", "shared",
        ]);
        for t in &self.tables {
            for r in &t.rows {
                for (k, s) in self.sources.iter().enumerate() {
                    let d = k.checked_sub(1).and_then(|i| r.diffs.get(i));
                    let _ = w.write_record([
                        safe(&t.title),
                        safe(&r.row),
                        safe(&r.agent),
                        safe(&s.label),
                        f(r.values[k]),
                        f(d.and_then(|d| d.diff)),
                        f(d.and_then(|d| d.ci).map(|c| c.lo)),
                        f(d.and_then(|d| d.ci).map(|c| c.hi)),
                        d.map(|d| d.shared.to_string()).unwrap_or_default(),
                    ]);
                }
            }
        }
        String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
    }
}
