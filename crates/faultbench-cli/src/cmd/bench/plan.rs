//! What a benchmark invocation will run: scenarios × agents × passes, grouped by topology so
//! that, with `--reuse-labs`, consecutive runs of one topology can share a lab.

use anyhow::{Context, bail};
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
    fn finish(self, source: &str) -> Vec<String> {
        if self.repeated > 0 {
            let mut worst: Vec<(&String, &u64)> =
                self.seen.iter().filter(|(_, n)| **n > 1).collect();
            worst.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
            let shown: Vec<String> = worst
                .iter()
                .take(5)
                .map(|(id, n)| format!("{} ×{n}", cut(id, 80)))
                .collect();
            eprintln!(
                "warning: {} repeated scenario id(s) in {source} ignored ({}{}); each run is planned once — use --passes N to repeat runs",
                self.repeated,
                shown.join(", "),
                if worst.len() > 5 { ", …" } else { "" }
            );
        }
        self.ids
    }
}

fn cut(s: &str, n: usize) -> String {
    let mut out: String = s.chars().take(n).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// Distinct ids of `--scenarios`, in order (repeats reported and dropped).
pub fn unique_ids(ids: &[String], source: &str) -> Vec<String> {
    let mut u = UniqueIds::default();
    for id in ids.iter().map(|i| i.trim()).filter(|i| !i.is_empty()) {
        u.push(id);
    }
    u.finish(source)
}

/// Reads scenario ids from a manifest: a CSV with a `scenario` column (read with the `csv`
/// crate: quoted fields, embedded commas and newlines), or a plain list; rows that are empty or
/// start with `#` are skipped. The file is streamed and repeats are dropped as they are read.
pub fn read_manifest(path: &Path) -> anyhow::Result<Vec<String>> {
    let file = std::fs::File::open(path)
        .with_context(|| format!("{}: cannot read the manifest", path.display()))?;
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
            .with_context(|| format!("{}:1: not a CSV file", path.display()))?
            .clone();
        let column = header
            .iter()
            .position(|c| c.trim() == "scenario")
            .with_context(|| {
                format!(
                    "{}:1: a manifest CSV needs a `scenario` column (header is `{}`)",
                    path.display(),
                    cut(&header.iter().collect::<Vec<_>>().join(","), 200)
                )
            })?;
        let mut row = csv::StringRecord::new();
        loop {
            let more = rd.read_record(&mut row).map_err(|e| {
                let line = e.position().map(|p| p.line()).unwrap_or(0);
                anyhow::anyhow!("{}:{line}: {e}", path.display())
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
            let line = line.with_context(|| format!("{}:{}", path.display(), n + 1))?;
            let line = line.trim();
            if !line.is_empty() && !line.starts_with('#') {
                ids.push(line);
            }
        }
    }
    Ok(ids.finish(&path.display().to_string()))
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

/// How scenarios were chosen.
pub enum Selection {
    /// Explicit ids.
    Ids(Vec<String>),
    /// Scopes (layers) with an optional topology filter.
    Scopes(Vec<Scope>, Option<String>),
}

/// Picks the scenarios, in the release's order for scopes and in the given order for ids.
pub fn select(dataset: &Path, selection: &Selection) -> anyhow::Result<Vec<Arc<ScenarioFile>>> {
    let ds = Dataset::scan(dataset).with_context(|| {
        format!(
            "{}: cannot read the dataset (pass --dataset DIR)",
            dataset.display()
        )
    })?;
    let bad: Vec<String> = ds.errors().map(|e| e.to_string()).collect();
    if !bad.is_empty() {
        bail!(
            "the dataset has {} unreadable scenario file(s); fix them first (`faultbench validate {}`):\n  {}",
            bad.len(),
            dataset.display(),
            bad.join("\n  ")
        );
    }
    let out: Vec<Arc<ScenarioFile>> = match selection {
        Selection::Ids(ids) => {
            let by_id: BTreeMap<&str, &ScenarioFile> =
                ds.scenarios().map(|(_, s)| (s.id(), s)).collect();
            let mut v = Vec::new();
            for id in unique_ids(ids, "the selection") {
                match by_id.get(id.as_str()) {
                    Some(s) => v.push(Arc::new((*s).clone())),
                    None => bail!(
                        "unknown scenario id `{}` in {}",
                        cut(&id, 200),
                        dataset.display()
                    ),
                }
            }
            v
        }
        Selection::Scopes(scopes, topology) => {
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
        bail!("no scenario matches the selection in {}", dataset.display());
    }
    Ok(out)
}

/// The scopes of the paper's experiments.
pub fn experiment_scopes(name: &str) -> anyhow::Result<(Vec<Scope>, u32)> {
    match name.to_ascii_lowercase().as_str() {
        "e1" => Ok((vec![Scope::All], 3)),
        "e2" => Ok((
            Layer::PERSONAS.iter().map(|l| Scope::Layer(*l)).collect(),
            2,
        )),
        other => bail!(
            "unknown experiment `{other}` (expected e1: 200 core scenarios × 3 passes, or e2: the five persona layers × 2 passes)"
        ),
    }
}

/// Builds the plan: grouped by topology, then pass, then scenario, then agent. Each run key
/// appears once (a repeated scenario or agent is dropped with a warning: two runs with one key
/// would share a folder), and plans beyond [`MAX_PLANNED_RUNS`] are refused.
pub fn plan(
    scenarios: &[Arc<ScenarioFile>],
    agents: &[String],
    passes: u32,
) -> anyhow::Result<Vec<Item>> {
    let size = (scenarios.len() as u64)
        .saturating_mul(agents.len() as u64)
        .saturating_mul(u64::from(passes));
    if size > MAX_PLANNED_RUNS {
        bail!(
            "the plan has {size} runs ({} scenarios × {} agents × {passes} passes); at most {MAX_PLANNED_RUNS} per invocation",
            scenarios.len(),
            agents.len()
        );
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
                if !seen.insert(key.dir(Path::new(""))) {
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
        eprintln!(
            "warning: {dropped} planned run(s) repeat another run's key (same scenario, agent and pass) and were dropped"
        );
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
pub fn chunks(items: Vec<Item>, jobs: usize) -> Vec<Vec<Item>> {
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
        assert_eq!(read_manifest(&csv).unwrap(), vec!["a", "b"]);
        let txt = dir.path().join("m.txt");
        std::fs::write(&txt, "# x\nc\n d \n").unwrap();
        assert_eq!(read_manifest(&txt).unwrap(), vec!["c", "d"]);
        // Quoted fields: an embedded comma and newline belong to their cell.
        std::fs::write(
            &csv,
            "note,scenario\n\"a, multi\nline note\",a\n\"x\",\"b\"\na,b\n",
        )
        .unwrap();
        assert_eq!(read_manifest(&csv).unwrap(), vec!["a", "b"]);
        std::fs::write(&csv, "scenario\n\"unterminated\n").unwrap();
        assert!(read_manifest(&csv).is_ok_and(|v| v.len() == 1));
        std::fs::write(&csv, "id\nx\n").unwrap();
        assert!(
            read_manifest(&csv)
                .unwrap_err()
                .to_string()
                .contains("`scenario` column")
        );
    }

    fn tri() -> Arc<ScenarioFile> {
        Arc::new(
            ScenarioFile::load(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/tests/fixtures/bench/dataset/tri_Q/base/tri-r1-ospfd-down.txt"
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
        let items = plan(&[s.clone(), s.clone()], &agents, 2).unwrap();
        // 1 scenario × 2 distinct agent folders × 2 passes.
        assert_eq!(items.len(), 4);
        assert_eq!(
            unique_ids(&["a".into(), " a ".into(), "b".into()], "x"),
            vec!["a", "b"]
        );
    }

    #[test]
    fn oversized_plans_are_refused() {
        let Err(e) = plan(&[tri()], &["baseline".to_string()], 2_000_000) else {
            panic!("a plan of 2M runs is refused");
        };
        assert!(e.to_string().contains("at most 1000000"), "{e}");
    }
}
