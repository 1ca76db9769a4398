//! Every statistic of the tables described once, as data: which runs (a [`Group`] and an
//! agent), which value ([`Measure`]), and how it is combined ([`Kind`]). The bootstrap
//! ([`super::stats`]) and the comparison of runs roots ([`super::compare`]) both build their
//! estimators from these descriptions, so an interval is always computed the way its table
//! computes the number it belongs to.
//!
//! Runs are grouped into scenario *families* for resampling ([`Families`]): a core scenario
//! with its persona rewrites (a persona id is its false-premise parent's id plus the persona's
//! suffix, e.g. `…-naive-unsure`), within the category stratum of the family.

use super::details::RunDetails;
use super::metrics::{ALL, answered, category, layer, timeout};
use super::stats::{Bootstrap, Design, Difference, Estimator, Interval, Kind};
use faultbench_core::category::{Category, Layer};
use faultbench_core::record::ManifestRow;
use std::collections::{BTreeMap, HashMap};

/// Which runs a statistic reads (before the agent filter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Group {
    /// Core runs (base80/cex120) of a category.
    Category(Category),
    /// Runs of a ticket style: `standard` (core false premise) or a persona layer.
    Style(&'static str),
    /// Every run.
    Any,
}

impl Group {
    /// Whether a row belongs to the group.
    pub fn contains(&self, r: &ManifestRow) -> bool {
        self.contains_kind(layer(r), category(r))
    }

    /// Whether a row of this layer and category belongs to the group.
    pub fn contains_kind(&self, layer: Option<Layer>, cat: Category) -> bool {
        let core = matches!(layer, Some(Layer::Base | Layer::Cex));
        match *self {
            Group::Category(c) => core && cat == c,
            Group::Style("standard") => layer == Some(Layer::Cex) && cat == Category::FalsePremise,
            Group::Style(s) => layer.is_some_and(|l| l.as_str() == s),
            Group::Any => true,
        }
    }
}

/// Whether a row is a core run (E1: `base80` or `cex120`).
pub fn is_core(r: &ManifestRow) -> bool {
    matches!(layer(r), Some(Layer::Base | Layer::Cex))
}

/// Runs entering a per-run effort mean.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Subset {
    /// Answered runs.
    Answered,
    /// Timeouts.
    Timeouts,
}

impl Subset {
    fn holds(self, r: &ManifestRow) -> bool {
        match self {
            Subset::Answered => answered(r),
            Subset::Timeouts => timeout(r),
        }
    }
}

/// The value a statistic averages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Measure {
    /// Outcome score of answered runs.
    Outcome,
    /// Fix score of answered runs that have one.
    Fix,
    /// Reasoning score of answered runs that have one.
    Reasoning,
    /// Share of answered runs reporting an anomaly (over-diagnosis on healthy networks).
    OverDiagnosis,
    /// Share of agent results (answered + timeouts) that are timeouts.
    TimeoutRate,
    /// Tool calls per run.
    ToolCalls(Subset),
    /// Model turns per run (only runs with a full record).
    Turns(Subset),
    /// Input tokens (uncached + cache read + cache write) per run.
    InputTokens(Subset),
    /// Output tokens per run.
    OutputTokens(Subset),
    /// USD per run.
    Usd(Subset),
    /// Wall seconds per agent result.
    WallSeconds,
    /// Share of the cost spent on timeouts.
    TimeoutCostShare,
}

impl Measure {
    /// How the statistic is combined over passes.
    pub fn kind(self) -> Kind {
        match self {
            Measure::Outcome | Measure::Fix | Measure::Reasoning => Kind::MeanOfPassMeans,
            _ => Kind::Pooled,
        }
    }

    /// Whether the statistic is a share (printed as a percentage).
    pub fn is_share(self) -> bool {
        matches!(
            self,
            Measure::OverDiagnosis | Measure::TimeoutRate | Measure::TimeoutCostShare
        )
    }

    /// What one run adds: `(sum, count)`, or nothing.
    pub fn contribution(self, r: &ManifestRow, details: &RunDetails) -> Option<(f64, f64)> {
        let result = answered(r) || timeout(r);
        let input = r.total_input_tokens() as f64;
        let one = |v: f64| Some((v, 1.0));
        match self {
            Measure::Outcome => r.outcome_score.filter(|_| answered(r)).map(|v| (v, 1.0)),
            Measure::Fix => r.fix_score.filter(|_| answered(r)).map(|v| (v, 1.0)),
            Measure::Reasoning => r.reasoning_score.filter(|_| answered(r)).map(|v| (v, 1.0)),
            Measure::OverDiagnosis => {
                answered(r).then(|| (f64::from(u8::from(r.is_anomaly == Some(true))), 1.0))
            }
            Measure::TimeoutRate => result.then(|| (f64::from(u8::from(timeout(r))), 1.0)),
            Measure::ToolCalls(s) => s.holds(r).then_some(r.tool_calls as f64).and_then(one),
            Measure::Turns(s) => s
                .holds(r)
                .then(|| details.get(r).and_then(|d| d.turns))
                .flatten()
                .and_then(|t| one(f64::from(t))),
            Measure::InputTokens(s) => s.holds(r).then_some(input).and_then(one),
            Measure::OutputTokens(s) => s.holds(r).then_some(r.out_tokens as f64).and_then(one),
            Measure::Usd(s) => s.holds(r).then_some(r.cost_usd).and_then(one),
            Measure::WallSeconds => result.then_some(r.wall_seconds).and_then(one),
            Measure::TimeoutCostShare => {
                result.then(|| (if timeout(r) { r.cost_usd } else { 0.0 }, r.cost_usd))
            }
        }
    }
}

/// One statistic: runs of `group` by `agent` (or [`ALL`]), averaging `measure`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CellSpec {
    /// Which runs.
    pub group: Group,
    /// Agent name or [`ALL`].
    pub agent: String,
    /// Which value.
    pub measure: Measure,
}

impl CellSpec {
    /// A spec.
    pub fn new(group: Group, agent: &str, measure: Measure) -> CellSpec {
        CellSpec {
            group,
            agent: agent.to_string(),
            measure,
        }
    }

    fn selects(&self, r: &ManifestRow, kind: (Option<Layer>, Category)) -> bool {
        (self.agent == ALL || r.agent == self.agent) && self.group.contains_kind(kind.0, kind.1)
    }
}

/// The family id of a run: its scenario id, or for a persona rewrite its parent's id.
pub fn family_id(r: &ManifestRow) -> String {
    if let Some(l) = layer(r).filter(|l| l.is_persona()) {
        let suffix = format!("-{}", l.as_str().replace('_', "-"));
        if let Some(base) = r.scenario_id.strip_suffix(&suffix) {
            return format!("{}/{base}", r.topology);
        }
    }
    format!("{}/{}", r.topology, r.scenario_id)
}

fn stratum(r: &ManifestRow) -> u32 {
    match category(r) {
        Category::CorrectFault => 0,
        Category::FalsePremise => 1,
        Category::WrongDevice => 2,
        Category::WrongCause => 3,
    }
}

/// The resampling families of a set of rows, and each row's family and pass index.
#[derive(Debug, Clone, Default)]
pub struct Families {
    /// Family index of each row (parallel to the rows).
    pub family_of: Vec<u32>,
    /// Pass index of each row.
    pub pass_of: Vec<u16>,
    /// The family ids, by index.
    pub ids: Vec<String>,
    /// Layer and category of each row (computed once: the category needs the id lowercased).
    pub kind_of: Vec<(Option<Layer>, Category)>,
    /// The design (families within category strata).
    pub design: Design,
}

impl Families {
    /// Families of `rows`; a family shared by several rows gets the stratum of its first row.
    pub fn of(rows: &[ManifestRow]) -> Families {
        Families::with_ids(rows, &mut HashMap::new(), &mut Vec::new())
    }

    /// Families of `rows`, numbering ids through `index`/`ids` so that several registries can
    /// share one numbering (for paired comparisons).
    pub fn with_ids(
        rows: &[ManifestRow],
        index: &mut HashMap<String, u32>,
        ids: &mut Vec<String>,
    ) -> Families {
        let passes: BTreeMap<&str, u16> = {
            let mut p: Vec<&str> = rows.iter().map(|r| r.pass.as_str()).collect();
            p.sort_unstable();
            p.dedup();
            p.into_iter()
                .enumerate()
                .map(|(i, p)| (p, i.min(u16::MAX as usize) as u16))
                .collect()
        };
        let mut keys = Vec::new();
        let mut family_of = Vec::with_capacity(rows.len());
        for r in rows {
            let id = family_id(r);
            let f = *index.entry(id.clone()).or_insert_with(|| {
                ids.push(id);
                (ids.len() - 1) as u32
            });
            family_of.push(f);
            keys.push((stratum(r), f));
        }
        Families {
            kind_of: rows.iter().map(|r| (layer(r), category(r))).collect(),
            pass_of: rows.iter().map(|r| passes[r.pass.as_str()]).collect(),
            family_of,
            ids: ids.clone(),
            design: Design::from_keys(keys),
        }
    }
}

/// Estimators for many statistics over one set of rows, bootstrapped together.
///
/// A plan is run one table at a time ([`Plan::run_table`]): the statistics registered since the
/// last run are bootstrapped and forgotten, so the estimators held at once are one table's,
/// not the whole report's. The rows of each agent are indexed once, so registering a statistic
/// of one agent reads that agent's rows only (a report over many agents is not quadratic).
pub struct Plan<'a> {
    rows: &'a [ManifestRow],
    details: &'a RunDetails,
    families: &'a Families,
    /// Row indices of each agent, in row order.
    by_agent: HashMap<&'a str, Vec<usize>>,
    estimators: Vec<Estimator>,
    differences: Vec<Difference>,
    memo: HashMap<CellSpec, usize>,
}

/// A statistic registered in a [`Plan`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stat {
    /// An estimator.
    Cell(usize),
    /// A difference of two estimators.
    Diff(usize),
}

/// The intervals of a plan's statistics.
pub struct Intervals {
    cells: usize,
    values: Vec<Option<Interval>>,
    points: Vec<Option<f64>>,
    counts: Vec<usize>,
}

impl Intervals {
    /// The interval of a statistic.
    pub fn get(&self, s: Stat) -> Option<Interval> {
        match s {
            Stat::Cell(i) => self.values.get(i).copied().flatten(),
            Stat::Diff(j) => self.values.get(self.cells + j).copied().flatten(),
        }
    }

    /// The point estimate of a cell (all families weighted once).
    pub fn point(&self, s: Stat) -> Option<f64> {
        match s {
            Stat::Cell(i) => self.points.get(i).copied().flatten(),
            Stat::Diff(_) => None,
        }
    }

    /// How many runs contributed to a cell.
    pub fn n(&self, s: Stat) -> usize {
        match s {
            Stat::Cell(i) => self.counts.get(i).copied().unwrap_or(0),
            Stat::Diff(_) => 0,
        }
    }
}

impl<'a> Plan<'a> {
    /// A plan over `rows` (with `families` computed from the same rows).
    pub fn new(rows: &'a [ManifestRow], details: &'a RunDetails, families: &'a Families) -> Self {
        let mut by_agent: HashMap<&str, Vec<usize>> = HashMap::new();
        for (i, r) in rows.iter().enumerate() {
            by_agent.entry(r.agent.as_str()).or_default().push(i);
        }
        Plan {
            rows,
            details,
            families,
            by_agent,
            estimators: Vec::new(),
            differences: Vec::new(),
            memo: HashMap::new(),
        }
    }

    /// Registers a statistic (the same spec twice gives the same handle).
    pub fn cell(&mut self, spec: CellSpec) -> Stat {
        if let Some(&i) = self.memo.get(&spec) {
            return Stat::Cell(i);
        }
        let s = self.build(&spec, &|_, _| true);
        if let Stat::Cell(i) = s {
            self.memo.insert(spec, i);
        }
        s
    }

    /// Registers a statistic over the rows for which `keep(row index, family)` is true (paired
    /// comparisons: one registry's rows, shared scenarios only). Not memoised.
    pub fn cell_where(&mut self, spec: CellSpec, keep: &dyn Fn(usize, u32) -> bool) -> Stat {
        self.build(&spec, keep)
    }

    fn build(&mut self, spec: &CellSpec, keep: &dyn Fn(usize, u32) -> bool) -> Stat {
        let mut e = Estimator::new(spec.measure.kind());
        let mut add = |i: usize| {
            let r = &self.rows[i];
            let f = self.families.family_of[i];
            if !spec.selects(r, self.families.kind_of[i]) || !keep(i, f) {
                return;
            }
            if let Some((s, c)) = spec.measure.contribution(r, self.details) {
                e.add(f, self.families.pass_of[i], s, c);
            }
        };
        if spec.agent == ALL {
            (0..self.rows.len()).for_each(&mut add);
        } else if let Some(mine) = self.by_agent.get(spec.agent.as_str()) {
            mine.iter().copied().for_each(&mut add);
        }
        self.estimators.push(e);
        Stat::Cell(self.estimators.len() - 1)
    }

    /// Registers a raw estimator.
    pub fn estimator(&mut self, e: Estimator) -> Stat {
        self.estimators.push(e);
        Stat::Cell(self.estimators.len() - 1)
    }

    /// Registers `b − a`.
    pub fn diff(&mut self, a: Stat, b: Stat) -> Option<Stat> {
        match (a, b) {
            (Stat::Cell(a), Stat::Cell(b)) => {
                self.differences.push(Difference { a, b });
                Some(Stat::Diff(self.differences.len() - 1))
            }
            _ => None,
        }
    }

    /// The distinct families with values in a statistic, sorted.
    pub fn families_with_values(&self, s: Stat) -> Vec<u32> {
        match s {
            Stat::Cell(i) => {
                let mut f: Vec<u32> = self.estimators[i].families().collect();
                f.sort_unstable();
                f.dedup();
                f
            }
            Stat::Diff(_) => Vec::new(),
        }
    }

    /// Runs the bootstrap over every registered statistic.
    pub fn run(mut self, boot: Bootstrap) -> Intervals {
        self.run_table(boot)
    }

    /// Runs the bootstrap over the statistics registered since the last run (one table's) and
    /// forgets them: the handles given out since then refer to the returned intervals, and the
    /// next statistic registered starts a new table.
    pub fn run_table(&mut self, boot: Bootstrap) -> Intervals {
        let estimators = std::mem::take(&mut self.estimators);
        let differences = std::mem::take(&mut self.differences);
        self.memo.clear();
        let values = boot.run(&self.families.design, &estimators, &differences);
        Intervals {
            cells: estimators.len(),
            points: estimators.iter().map(Estimator::point).collect(),
            counts: estimators.iter().map(Estimator::adds).collect(),
            values,
        }
    }
}
