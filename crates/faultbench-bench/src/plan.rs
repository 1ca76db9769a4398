//! What a benchmark invocation will run: scenarios × agents × passes, grouped by topology so
//! that, with `--reuse-labs`, consecutive runs of one topology can share a lab.
//!
//! Warnings (repeated ids, repeated run keys) are not printed here: they are pushed on a
//! `warnings` list that [`crate::Bench`] turns into [`crate::BenchEvent::Note`]s.

use crate::BenchError;
use faultbench_core::dataset::{Dataset, Scope};
use faultbench_core::record::RunKey;
use faultbench_core::{Layer, Scenario, ScenarioFile};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

/// One planned run.
#[derive(Clone)]
pub struct Item {
    /// The scenario.
    pub scenario: Arc<ScenarioFile>,
    /// Index into the agent list.
    pub agent: usize,
    /// Pass number (from 1).
    pub pass: u32,
    /// The run's key (agent label resolved).
    pub key: RunKey,
}

/// Most runs one invocation plans (scenarios × agents × passes): the release's two experiments
/// are 600 and 720 runs per agent; a plan far beyond this is a mistake, and holding it would
/// cost memory for nothing.
pub const MAX_PLANNED_RUNS: u64 = 1_000_000;

/// Ids in order of first appearance; repeats are counted and dropped, so the memory held is
/// bounded by the number of distinct ids however long the input is.
#[derive(Default)]
struct UniqueIds {
    ids: Vec<String>,
    seen: HashMap<String, u64>,
    repeated: u64,
}

impl UniqueIds {
    fn push(&mut self, id: &str) {
        match self.seen.get_mut(id) {
            Some(n) => {
                *n += 1;
                self.repeated += 1;
            }
            None => {
                self.seen.insert(id.to_string(), 1);
                self.ids.push(id.to_string());
            }
        }
    }

    /// The distinct ids; repeats are reported on stderr. A run is identified by (scenario,
    /// agent, pass) and has one folder, so running an id twice in one pass cannot be stored:
    /// repeats are dropped (with the count, so nobody believes they got more runs) rather than
    /// refused, because concatenated manifests legitimately overlap.
    fn finish(self, source: &str, warnings: &mut Vec<String>) -> Vec<String> {
        if self.repeated > 0 {
            let mut worst: Vec<(&String, &u64)> =
                self.seen.iter().filter(|(_, n)| **n > 1).collect();
            worst.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let shown: Vec<String> = worst
                .iter()
                .take(5)
                .map(|(id, n)| format!("{} ×{n}", cut(id, 80)))
                .collect();
            warnings.push(format!(
                "warning: {} repeated scenario id(s) in {source} ignored ({}{}); each run is planned once — use --passes N to repeat runs",
                self.repeated,
                shown.join(", "),
                if worst.len() > 5 { ", …" } else { "" }
            ));
        }
        self.ids
    }
}

/// A value quoted in a message: its first `n` characters and how much was left out.
fn cut(s: &str, n: usize) -> String {
    faultbench_core::text::excerpt(s, n).into_owned()
}

/// Distinct ids of `--scenarios`, in order (repeats reported and dropped).
pub fn unique_ids(ids: &[String], source: &str, warnings: &mut Vec<String>) -> Vec<String> {
    let mut u = UniqueIds::default();
    for id in ids.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
        u.push(id);
    }
    u.finish(source, warnings)
}

/// Reads scenario ids from a manifest: a CSV with a `scenario` column (read with the `csv`
/// crate: quoted fields, embedded commas and newlines), or a plain list; rows that are empty or
/// start with `#` are skipped. The file is streamed and repeats are dropped as they are read.
pub fn read_manifest(path: &Path, warnings: &mut Vec<String>) -> Result<Vec<String>, BenchError> {
    // A regular file only: a FIFO is refused at once instead of blocking the open (with the
    // signal handlers of a bench in place, nothing but SIGKILL would end that wait).
    let file = faultbench_core::fsutil::open_regular(path).map_err(|e| {
        BenchError::ManifestUnreadable {
            path: path.to_path_buf(),
            source: e.into(),
        }
    })?;
    let reader = BomSkipper::new(std::io::BufReader::new(file));
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let mut ids = UniqueIds::default();
    if is_csv {
        let mut rd = csv::ReaderBuilder::new()
            .flexible(true)
            .comment(Some(b'#'))
            .from_reader(reader);
        let header = rd
            .headers()
            .map_err(|source| BenchError::ManifestCsv {
                path: path.to_path_buf(),
                line: 1,
                source,
            })?
            .clone();
        let column = header
            .iter()
            .position(|c| c.trim() == "scenario")
            .ok_or_else(|| BenchError::ManifestColumn {
                path: path.to_path_buf(),
                header: cut(&header.iter().collect::<Vec<_>>().join(","), 200),
            })?;
        let mut row = csv::StringRecord::new();
        loop {
            let more = rd
                .read_record(&mut row)
                .map_err(|source| BenchError::ManifestCsv {
                    path: path.to_path_buf(),
                    line: source.position().map_or(0, csv::Position::line),
                    source,
                })?;
            if !more {
                break;
            }
            let id = row.get(column).unwrap_or("").trim();
            if !id.is_empty() && !id.starts_with('#') {
                ids.push(id);
            }
        }
    } else {
        use std::io::BufRead;
        for (n, line) in reader.lines().enumerate() {
            let line = line.map_err(|source| BenchError::ManifestLine {
                path: path.to_path_buf(),
                line: n + 1,
                source,
            })?;
            let line = line.trim();
            if !line.is_empty() && !line.starts_with('#') {
                ids.push(line);
            }
        }
    }
    Ok(ids.finish(&path.display().to_string(), warnings))
}

/// Drops a leading UTF-8 byte-order mark (spreadsheets write one).
struct BomSkipper<R> {
    inner: R,
    checked: bool,
}

impl<R: std::io::BufRead> BomSkipper<R> {
    fn new(inner: R) -> Self {
        BomSkipper {
            inner,
            checked: false,
        }
    }
}

impl<R: std::io::BufRead> std::io::Read for BomSkipper<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = {
            let data = std::io::BufRead::fill_buf(self)?;
            let n = data.len().min(buf.len());
            buf[..n].copy_from_slice(&data[..n]);
            n
        };
        std::io::BufRead::consume(self, n);
        Ok(n)
    }
}

impl<R: std::io::BufRead> std::io::BufRead for BomSkipper<R> {
    fn fill_buf(&mut self) -> std::io::Result<&[u8]> {
        if !self.checked {
            self.checked = true;
            if self.inner.fill_buf()?.starts_with(b"\xef\xbb\xbf") {
                self.inner.consume(3);
            }
        }
        self.inner.fill_buf()
    }
    fn consume(&mut self, n: usize) {
        self.inner.consume(n);
    }
}

/// Which scenarios a bench runs.
#[derive(Clone, Debug, Default)]
pub enum Selection {
    /// Nothing chosen yet (refused with [`BenchError::NoSelection`]).
    #[default]
    Unset,
    /// Explicit ids, in this order.
    Ids(Vec<String>),
    /// The ids of a manifest file ([`read_manifest`]).
    Manifest(std::path::PathBuf),
    /// Scopes (layers) with an optional topology filter, in the release's order.
    Scopes(Vec<Scope>, Option<String>),
    /// One of the paper's experiments ([`experiment_scopes`]: `e1` or `e2`) with an optional
    /// topology filter; it also sets the default number of passes.
    Experiment(String, Option<String>),
}

impl Selection {
    /// The selection of `faultbench bench`'s flags, first given first: an experiment, ids, a
    /// manifest, a scope (the topology filter applies to experiments and scopes).
    pub fn from_flags(
        experiment: Option<String>,
        ids: Vec<String>,
        manifest: Option<std::path::PathBuf>,
        scope: Option<Scope>,
        topology: Option<String>,
    ) -> Selection {
        match (experiment, ids.is_empty(), manifest, scope) {
            (Some(e), ..) => Selection::Experiment(e, topology),
            (None, false, ..) => Selection::Ids(ids),
            (None, true, Some(m), _) => Selection::Manifest(m),
            (None, true, None, Some(s)) => Selection::Scopes(vec![s], topology),
            (None, true, None, None) => Selection::Unset,
        }
    }

    /// The scopes or ids to pick, and the default passes (3 for e1, 2 for e2, else 1).
    fn resolve(&self, warnings: &mut Vec<String>) -> Result<(Picked, u32), BenchError> {
        Ok(match self {
            Selection::Unset => return Err(BenchError::NoSelection),
            Selection::Ids(ids) => (Picked::Ids(ids.clone()), 1),
            Selection::Manifest(m) => (Picked::Ids(read_manifest(m, warnings)?), 1),
            Selection::Scopes(s, t) => (Picked::Scopes(s.clone(), t.clone()), 1),
            Selection::Experiment(e, t) => {
                let (scopes, passes) = experiment_scopes(e)?;
                (Picked::Scopes(scopes, t.clone()), passes)
            }
        })
    }
}

enum Picked {
    Ids(Vec<String>),
    Scopes(Vec<Scope>, Option<String>),
}

/// Picks the scenarios of `selection` in `dataset` (in the release's order for scopes and in
/// the given order for ids), with the selection's default number of passes.
///
/// # Errors
/// An unreadable dataset or manifest, a dataset with bad files, an unknown id or experiment,
/// an empty selection.
pub fn select(
    dataset: &Path,
    selection: &Selection,
    warnings: &mut Vec<String>,
) -> Result<(Vec<Arc<ScenarioFile>>, u32), BenchError> {
    let (picked, passes) = selection.resolve(warnings)?;
    let ds = Dataset::scan(dataset).map_err(|source| BenchError::DatasetUnreadable {
        path: dataset.to_path_buf(),
        source,
    })?;
    let bad: Vec<String> = ds.errors().map(ToString::to_string).collect();
    if !bad.is_empty() {
        return Err(BenchError::DatasetErrors {
            path: dataset.to_path_buf(),
            errors: bad,
        });
    }
    let out: Vec<Arc<ScenarioFile>> = match &picked {
        Picked::Ids(ids) => {
            let by_id: BTreeMap<&str, &ScenarioFile> =
                ds.scenarios().map(|(_, s)| (s.id(), s)).collect();
            let mut v = Vec::new();
            for id in unique_ids(ids, "the selection", warnings) {
                match by_id.get(id.as_str()) {
                    Some(s) => v.push(Arc::new((*s).clone())),
                    None => {
                        return Err(BenchError::UnknownScenario {
                            id: cut(&id, 200),
                            dataset: dataset.to_path_buf(),
                        });
                    }
                }
            }
            v
        }
        Picked::Scopes(scopes, topology) => {
            let mut v = Vec::new();
            for scope in scopes {
                v.extend(
                    ds.select(*scope, topology.as_deref())
                        .into_iter()
                        .map(|s| Arc::new(s.clone())),
                );
            }
            v
        }
    };
    if out.is_empty() {
        return Err(BenchError::NoScenario {
            dataset: dataset.to_path_buf(),
        });
    }
    Ok((out, passes))
}

/// The scopes of the paper's experiments and their passes: `e1` (the 200 core scenarios, 3
/// passes) and `e2` (the five persona layers, 2 passes).
///
/// # Errors
/// Any other name.
pub fn experiment_scopes(name: &str) -> Result<(Vec<Scope>, u32), BenchError> {
    match name.to_ascii_lowercase().as_str() {
        "e1" => Ok((vec![Scope::All], 3)),
        "e2" => Ok((
            Layer::PERSONAS.iter().map(|l| Scope::Layer(*l)).collect(),
            2,
        )),
        other => Err(BenchError::UnknownExperiment(other.to_string())),
    }
}

/// Builds the plan: grouped by topology, then pass, then scenario, then agent. Each run key
/// appears once (a repeated scenario or agent is dropped with a warning: two runs with one key
/// would share a folder), and plans beyond [`MAX_PLANNED_RUNS`] are refused.
///
/// # Errors
/// [`BenchError::PlanTooLarge`]; [`BenchError::AgentName`] for an agent label that cannot name
/// a run folder (`..`).
pub fn plan(
    scenarios: &[Arc<ScenarioFile>],
    agents: &[String],
    passes: u32,
    warnings: &mut Vec<String>,
) -> Result<Vec<Item>, BenchError> {
    let size = (scenarios.len() as u64)
        .saturating_mul(agents.len() as u64)
        .saturating_mul(u64::from(passes));
    if size > MAX_PLANNED_RUNS {
        return Err(BenchError::PlanTooLarge {
            size,
            scenarios: scenarios.len(),
            agents: agents.len(),
            passes,
        });
    }
    let mut items = Vec::new();
    let mut seen = HashSet::new();
    let mut dropped = 0usize;
    for pass in 1..=passes {
        for s in scenarios {
            for (a, label) in agents.iter().enumerate() {
                let key = RunKey {
                    topology: s.topology_id().clone(),
                    layer: s.layer(),
                    scenario_id: s.scenario_id().clone(),
                    agent: label.clone(),
                    pass,
                };
                // Keyed by folder: agent labels are made path-safe there, so two labels can
                // share one folder (`external:a b`, `external:a_b`).
                let folder = key.relative_dir().map_err(BenchError::AgentName)?;
                if !seen.insert(folder) {
                    dropped += 1;
                    continue;
                }
                items.push(Item {
                    scenario: s.clone(),
                    agent: a,
                    pass,
                    key,
                });
            }
        }
    }
    if dropped > 0 {
        warnings.push(format!(
            "warning: {dropped} planned run(s) repeat another run's key (same scenario, agent and pass) and were dropped"
        ));
    }
    // Stable sort keeps the scenario order within a topology.
    items.sort_by(|a, b| {
        a.key
            .topology
            .cmp(&b.key.topology)
            .then(a.pass.cmp(&b.pass))
    });
    Ok(items)
}

/// Splits the plan into chunks that one worker runs in order on one lab: never mixing
/// topologies, and small enough that `jobs` workers share the work.
pub(crate) fn chunks(items: Vec<Item>, jobs: usize) -> Vec<Vec<Item>> {
    let size = items.len().div_ceil(jobs.max(1)).max(1);
    let mut out: Vec<Vec<Item>> = Vec::new();
    for item in items {
        match out.last_mut() {
            Some(c) if c.len() < size && c[0].key.topology == item.key.topology => c.push(item),
            _ => out.push(vec![item]),
        }
    }
    // Largest chunks first, so long topologies start early.
    out.sort_by_key(|c| std::cmp::Reverse(c.len()));
    out
}

/// One part of a plan split for several machines: shard `index` of `count` (`K/N` on the
/// command line, from 1). Every run of the plan belongs to exactly one shard, whatever order
/// the plan was made in; each shard gets its share of every topology (the runs of a topology,
/// in key order, are dealt round-robin, each topology starting where the previous one left
/// off), so shards differ by at most one run and none gets all the slow labs. The shard is
/// recorded in the root's run identity (`shard`), so a shard root is resumed only as that
/// shard, and [`crate::merge()`] knows what it gathers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// Which part (1 ≤ index ≤ count).
    pub index: u32,
    /// How many parts.
    pub count: u32,
}

/// The identity field that records a shard.
pub const SHARD_FIELD: &str = "shard";

/// Most parts a plan may be split into (`--shard K/10000`): far more machines than anyone
/// runs a benchmark on, and few enough that listing or checking every part stays cheap.
pub const MAX_SHARDS: u32 = 10_000;

impl std::fmt::Display for Shard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl std::str::FromStr for Shard {
    type Err = BenchError;
    fn from_str(s: &str) -> Result<Shard, BenchError> {
        let bad = || BenchError::BadShard(cut(s, 40));
        let (k, n) = s.trim().split_once('/').ok_or_else(bad)?;
        let index: u32 = k.trim().parse().map_err(|_| bad())?;
        let count: u32 = n.trim().parse().map_err(|_| bad())?;
        if index == 0 || index > count || count > MAX_SHARDS {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

/// The run folder of a planned item (relative to the root). [`plan`] refused keys without one,
/// so the empty path never stands for a real item.
fn folder_of(i: &Item) -> std::path::PathBuf {
    i.key.relative_dir().unwrap_or_default()
}

impl Shard {
    /// The items of the plan that belong to this shard, in plan order.
    pub fn select(self, items: Vec<Item>) -> Vec<Item> {
        let count = self.count.max(1) as usize;
        // Per topology, the runs' folders in order: a deterministic order that does not
        // depend on how the plan was listed.
        let mut by_topology: BTreeMap<String, Vec<std::path::PathBuf>> = BTreeMap::new();
        for i in &items {
            by_topology
                .entry(i.key.topology.to_string())
                .or_default()
                .push(folder_of(i));
        }
        let mut mine = HashSet::new();
        let mut next = 0usize;
        for dirs in by_topology.values_mut() {
            dirs.sort();
            for d in dirs.drain(..) {
                if next % count == (self.index as usize - 1) {
                    mine.insert(d);
                }
                next += 1;
            }
        }
        items
            .into_iter()
            .filter(|i| mine.contains(&folder_of(i)))
            .collect()
    }

    /// Records the shard in a run identity.
    pub fn record(self, identity: &mut faultbench_core::identity::RunIdentity) {
        identity.extra.insert(
            SHARD_FIELD.into(),
            serde_json::Value::String(self.to_string()),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_in_both_forms() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("m.csv");
        std::fs::write(
            &csv,
            "\u{feff}scenario,topology\n# comment\na,Kath1\n\nb,Kath2\n",
        )
        .unwrap();
        assert_eq!(
            read_manifest(&csv, &mut Vec::new()).unwrap(),
            vec!["a", "b"]
        );
        let txt = dir.path().join("m.txt");
        std::fs::write(&txt, "# x\nc\n d \n").unwrap();
        assert_eq!(
            read_manifest(&txt, &mut Vec::new()).unwrap(),
            vec!["c", "d"]
        );
        // Quoted fields: an embedded comma and newline belong to their cell.
        std::fs::write(
            &csv,
            "note,scenario\n\"a, multi\nline note\",a\n\"x\",\"b\"\na,b\n",
        )
        .unwrap();
        assert_eq!(
            read_manifest(&csv, &mut Vec::new()).unwrap(),
            vec!["a", "b"]
        );
        std::fs::write(&csv, "scenario\n\"unterminated\n").unwrap();
        assert!(read_manifest(&csv, &mut Vec::new()).is_ok_and(|v| v.len() == 1));
        std::fs::write(&csv, "id\nx\n").unwrap();
        assert!(
            read_manifest(&csv, &mut Vec::new())
                .unwrap_err()
                .to_string()
                .contains("`scenario` column")
        );
    }

    fn tri() -> Arc<ScenarioFile> {
        Arc::new(
            ScenarioFile::load(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../faultbench-cli/tests/fixtures/bench/dataset/tri_Q/base/tri-r1-ospfd-down.txt"
            ))
            .unwrap(),
        )
    }

    #[test]
    fn each_run_key_is_planned_once() {
        let s = tri();
        let agents = vec![
            "baseline".to_string(),
            "baseline".to_string(),
            "external:a b".to_string(),
            "external:a_b".to_string(),
        ];
        let mut warnings = Vec::new();
        let items = plan(&[s.clone(), s.clone()], &agents, 2, &mut warnings).unwrap();
        assert_eq!(warnings.len(), 1, "{warnings:?}");
        // 1 scenario × 2 distinct agent folders × 2 passes.
        assert_eq!(items.len(), 4);
        assert_eq!(
            unique_ids(&["a".into(), " a ".into(), "b".into()], "x", &mut warnings),
            vec!["a", "b"]
        );
    }

    #[test]
    fn shards_partition_the_plan_evenly_per_topology() {
        let s = tri();
        let agents: Vec<String> = (0..7).map(|i| format!("a{i}")).collect();
        let items = plan(&[s], &agents, 4, &mut Vec::new()).unwrap();
        assert_eq!(items.len(), 28);
        let mut all = Vec::new();
        for k in 1..=3 {
            let shard: Shard = format!("{k}/3").parse().unwrap();
            let mine = shard.select(items.clone());
            assert!((9..=10).contains(&mine.len()), "{}", mine.len());
            // The same shard of a reversed plan is the same set of runs.
            let mut rev = items.clone();
            rev.reverse();
            let again: HashSet<_> = shard.select(rev).into_iter().map(|i| i.key).collect();
            assert_eq!(again, mine.iter().map(|i| i.key.clone()).collect());
            all.extend(mine.into_iter().map(|i| i.key));
        }
        let distinct: HashSet<_> = all.iter().cloned().collect();
        assert_eq!((all.len(), distinct.len()), (28, 28));
        assert_eq!(
            format!("{MAX_SHARDS}/{MAX_SHARDS}")
                .parse::<Shard>()
                .unwrap()
                .count,
            MAX_SHARDS
        );
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", "1/4294967295", "1/10001"] {
            assert!(bad.parse::<Shard>().is_err(), "{bad}");
        }
    }

    #[test]
    fn oversized_plans_are_refused() {
        let Err(e) = plan(
            &[tri()],
            &["baseline".to_string()],
            2_000_000,
            &mut Vec::new(),
        ) else {
            panic!("a plan of 2M runs is refused");
        };
        assert!(e.to_string().contains("at most 1000000"), "{e}");
    }
}
