//! What a benchmark invocation will run: scenarios × agents × passes, ordered so that
//! consecutive runs of one topology can share a warm lab.

use anyhow::{Context, bail};
use faultbench_core::dataset::{Dataset, Scope};
use faultbench_core::record::RunKey;
use faultbench_core::{Layer, Scenario, ScenarioFile};
use std::collections::BTreeMap;
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

/// Reads scenario ids from a manifest: a CSV with a `scenario` column, or a plain list; rows
/// that are empty or start with `#` are skipped.
pub fn read_manifest(path: &Path) -> anyhow::Result<Vec<String>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read the manifest", path.display()))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    let mut lines = text.lines().enumerate();
    let mut column = 0usize;
    if is_csv {
        let (_, header) = lines.next().unwrap_or((0, ""));
        let cols: Vec<&str> = header.split(',').map(str::trim).collect();
        column = cols
            .iter()
            .position(|c| *c == "scenario")
            .with_context(|| {
                format!(
                    "{}:1: a manifest CSV needs a `scenario` column (header is `{header}`)",
                    path.display()
                )
            })?;
    }
    let mut ids = Vec::new();
    for (_, line) in lines {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let id = if is_csv {
            line.split(',').nth(column).unwrap_or("").trim()
        } else {
            line
        };
        if !id.is_empty() {
            ids.push(id.to_string());
        }
    }
    Ok(ids)
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
            for id in ids {
                match by_id.get(id.as_str()) {
                    Some(s) => v.push(Arc::new((*s).clone())),
                    None => bail!("unknown scenario id `{id}` in {}", dataset.display()),
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

/// Builds the plan: grouped by topology, then pass, then scenario, then agent.
pub fn plan(scenarios: &[Arc<ScenarioFile>], agents: &[String], passes: u32) -> Vec<Item> {
    let mut items = Vec::new();
    for pass in 1..=passes {
        for s in scenarios {
            for (a, label) in agents.iter().enumerate() {
                items.push(Item {
                    scenario: s.clone(),
                    agent: a,
                    pass,
                    key: RunKey {
                        topology: s.topology_id().clone(),
                        layer: s.layer(),
                        scenario_id: s.scenario_id().clone(),
                        agent: label.clone(),
                        pass,
                    },
                });
            }
        }
    }
    // Stable sort keeps the scenario order within a topology.
    items.sort_by(|a, b| {
        a.key
            .topology
            .cmp(&b.key.topology)
            .then(a.pass.cmp(&b.pass))
    });
    items
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
        std::fs::write(&csv, "id\nx\n").unwrap();
        assert!(
            read_manifest(&csv)
                .unwrap_err()
                .to_string()
                .contains("`scenario` column")
        );
    }
}
