//! Building the site: read the registry, then each record once (render its page, keep its
//! summary, drop the JSON), then the registry-only runs, the per-scenario pages and the index.

use crate::html::{esc, json_value, page};
use crate::model::{RunSummary, apply_record, apply_row, str_at};
use crate::{ViewError, index_page, run_page, scenario_page};
use faultbench_core::output::OutputDir;
use faultbench_core::record::ManifestRow;
use faultbench_report::RunIndex;
use faultbench_report::compare::read_identity;
use faultbench_report::details::{RunId, find_records, read_json, record_id};
use faultbench_report::metrics::category;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// What was built.
#[derive(Debug, Clone, Default)]
pub struct SiteSummary {
    /// Runs in the table.
    pub runs: usize,
    /// Runs with a full record.
    pub records: usize,
    /// Scenario pages.
    pub scenarios: usize,
    /// Problems about the root as a whole (also shown on the index).
    pub problems: Vec<String>,
    /// The index page.
    pub index: PathBuf,
}

/// FNV-1a: a stable short hash for file names (not security relevant: names are also
/// sanitised, the hash only keeps distinct runs apart).
fn fnv(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// A safe file name from untrusted parts: `[a-z0-9-]`, at most 80 characters, plus a hash of
/// the exact parts.
pub fn file_name(parts: &[&str]) -> String {
    let joined = parts.join("\u{1f}");
    let mut slug = String::new();
    for c in parts.join("-").chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') {
            slug.push('-');
        }
        if slug.len() >= 80 {
            break;
        }
    }
    format!("{}-{:016x}.html", slug.trim_matches('-'), fnv(&joined))
}

fn style_of(id: &RunId) -> String {
    match faultbench_core::record::layer_of_arm(&id.arm) {
        Some(l) if l.is_persona() => l.as_str().to_string(),
        _ => "standard".into(),
    }
}

fn summary(id: RunId) -> RunSummary {
    let row = ManifestRow {
        arm: id.arm.clone(),
        pass: id.pass.clone(),
        topology: id.topology.clone(),
        scenario_id: id.scenario_id.clone(),
        agent: id.agent.clone(),
        model: String::new(),
        status: String::new(),
        submitted: false,
        is_anomaly: None,
        outcome_score: None,
        fix_score: None,
        reasoning_score: None,
        tool_calls: 0,
        in_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        out_tokens: 0,
        cost_usd: 0.0,
        wall_seconds: 0.0,
        judge_in_tokens: None,
        judge_out_tokens: None,
        judge_cost_usd: None,
    };
    RunSummary {
        page: file_name(&[&id.topology, &id.scenario_id, &id.agent, &id.pass, &id.arm]),
        scenario_page: file_name(&[&id.topology, &id.scenario_id, &id.arm]),
        category: category(&row).label().to_string(),
        style: style_of(&id),
        model: String::new(),
        status: String::new(),
        outcome: None,
        fix: None,
        reasoning: None,
        is_anomaly: None,
        cost: None,
        wall: None,
        tool_calls: None,
        tokens_in: None,
        tokens_out: None,
        has_record: false,
        ticket: String::new(),
        diagnosis: String::new(),
        problems: Vec::new(),
        id,
    }
}

/// Configuration fingerprints gathered over the records, to see a root that mixes setups.
#[derive(Default)]
struct Mix {
    models: BTreeMap<String, BTreeSet<String>>,
    judges: BTreeSet<String>,
    emulators: BTreeSet<String>,
    versions: BTreeSet<String>,
    identities: BTreeMap<String, usize>,
}

impl Mix {
    fn add(&mut self, s: &RunSummary, v: &Value) {
        if !s.model.is_empty() {
            self.models
                .entry(s.id.agent.clone())
                .or_default()
                .insert(s.model.clone());
        }
        if let Some(j) = str_at(v, &["scores", "judge"])
            .or_else(|| str_at(v, &["phases", "score", "judge_model"]))
        {
            self.judges.insert(j.to_string());
        }
        if let Some(e) = str_at(v, &["phases", "deploy", "emulator"]) {
            self.emulators.insert(e.to_string());
        }
        if let Some(x) = str_at(v, &["faultbench_version"]) {
            self.versions.insert(x.to_string());
        }
        if let Some(id) = v.get("identity").or_else(|| v.get("identity_hash")) {
            *self.identities.entry(id.to_string()).or_default() += 1;
        }
    }

    fn problems(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (agent, models) in &self.models {
            if models.len() > 1 {
                out.push(format!(
                    "agent {agent} ran with several models in this root: {}",
                    models.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
        let list = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
        if self.judges.len() > 1 {
            out.push(format!(
                "runs were judged by different judges: {}",
                list(&self.judges)
            ));
        }
        if self.emulators.len() > 1 {
            out.push(format!(
                "runs used different emulators: {}",
                list(&self.emulators)
            ));
        }
        if self.versions.len() > 1 {
            out.push(format!(
                "records come from several faultbench versions: {}",
                list(&self.versions)
            ));
        }
        if self.identities.len() > 1 {
            out.push(format!(
                "records carry {} different run identities: this root mixes experiments",
                self.identities.len()
            ));
        }
        out
    }
}

/// Writes one page (atomically, never through a link; unsynced: the site is rebuilt from its
/// root on every run, and a sync per page would cost seconds on thousands of pages).
pub(crate) fn write(dir: &OutputDir, name: &str, text: &str) -> Result<(), ViewError> {
    dir.write_unsynced(name, text.as_bytes())?;
    Ok(())
}

/// Notes an unknown status, then writes the page of a run with a record.
fn write_run_page(
    pages: &OutputDir,
    s: &mut RunSummary,
    row: Option<&ManifestRow>,
    record: &Value,
    dir: Option<&Path>,
) -> Result<(), ViewError> {
    if !crate::model::known_status(&s.status) {
        s.problems.push(format!("unknown status `{}`", s.status));
    }
    let body = run_page::body(s, row, record, dir);
    let title = format!("{} — {} {}", s.id.scenario_id, s.id.agent, s.id.pass);
    write(pages, &s.page, &page(&title, "../", &body, None))
}

/// Builds the site for `source` (a runs root, or a `MANIFEST.csv` whose folder may hold
/// records) into `out`; every folder and page below it is written without following links.
pub fn build(source: &Path, out: &OutputDir) -> Result<SiteSummary, ViewError> {
    let (run_index, records_dir) = load_index(source)?;
    let mut problems: Vec<String> = run_index.warnings.clone();
    let identity = match read_identity(source) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!("identity.json not used: {e}"));
            None
        }
    };
    let run_pages = out.subdir("runs")?;
    let scenario_pages = out.subdir("scenarios")?;
    let rows: HashMap<RunId, &ManifestRow> =
        run_index.rows.iter().map(|r| (RunId::of(r), r)).collect();
    let mut runs: BTreeMap<RunId, RunSummary> = BTreeMap::new();
    let mut mix = Mix::default();
    if let Some(dir) = &records_dir {
        for path in find_records(dir) {
            let rel = path.strip_prefix(dir).unwrap_or(&path).to_path_buf();
            let v = match read_json(&path) {
                Ok(v) => v,
                Err(e) => {
                    problems.push(format!("{}: {e}", rel.display()));
                    continue;
                }
            };
            let Some(id) = record_id(&v, &rel) else {
                problems.push(format!(
                    "{}: no run identity (neither a `key` object nor the release's folder layout); not shown",
                    rel.display()
                ));
                continue;
            };
            if runs.contains_key(&id) {
                problems.push(format!(
                    "{}: a second record for a run already shown ({} {} {} {}); ignored",
                    rel.display(),
                    id.topology,
                    id.scenario_id,
                    id.agent,
                    id.pass
                ));
                continue;
            }
            let mut s = summary(id.clone());
            let row = rows.get(&id).copied();
            if let Some(r) = row {
                apply_row(&mut s, r);
            } else if !run_index.rows.is_empty() {
                s.problems
                    .push("this record has no row in the registry (MANIFEST.csv)".into());
            }
            apply_record(&mut s, &v, row.is_some());
            mix.add(&s, &v);
            write_run_page(&run_pages, &mut s, row, &v, path.parent())?;
            runs.insert(id, s);
        }
    }
    let records = runs.len();
    for r in &run_index.rows {
        let id = RunId::of(r);
        if runs.contains_key(&id) {
            continue;
        }
        // A run known only from the registry has no page of its own: its row in the index and
        // its ticket's page say all there is (thousands of one-row pages would only cost time).
        let mut s = summary(id.clone());
        apply_row(&mut s, r);
        if !crate::model::known_status(&s.status) {
            s.problems.push(format!("unknown status `{}`", s.status));
        }
        runs.insert(id, s);
    }
    problems.extend(mix.problems());
    if let Some(idv) = &identity {
        // Records that carry an identity of their own must carry the root's.
        let root_id = idv.to_string();
        let differing: usize = mix
            .identities
            .iter()
            .filter(|(k, _)| **k != root_id)
            .map(|(_, n)| *n)
            .sum();
        if differing > 0 {
            problems.push(format!(
                "{differing} records carry a run identity other than this root's identity.json"
            ));
        }
    }
    let runs: Vec<RunSummary> = runs.into_values().collect();
    let scenarios = scenario_page::write_all(&runs, out, &scenario_pages)?;
    let root_info = root_section(source, &run_index, records, identity.as_ref(), &problems);
    write(out, "index.html", &index_page::page(&runs, &root_info))?;
    Ok(SiteSummary {
        runs: runs.len(),
        records,
        scenarios,
        problems,
        index: out.file_path("index.html"),
    })
}

fn load_index(source: &Path) -> Result<(RunIndex, Option<PathBuf>), ViewError> {
    if source.is_dir() {
        let manifest = source.join("MANIFEST.csv");
        let reg = if manifest.is_file() {
            RunIndex::load_csv(&manifest).map_err(ViewError::RunIndex)?
        } else {
            RunIndex {
                source: source.to_path_buf(),
                ..Default::default()
            }
        };
        Ok((reg, Some(source.to_path_buf())))
    } else if source.is_file() {
        let reg = RunIndex::load_csv(source).map_err(ViewError::RunIndex)?;
        let dir = source
            .parent()
            .filter(|_| source.file_name().is_some_and(|n| n == "MANIFEST.csv"))
            .map(Path::to_path_buf);
        Ok((reg, dir))
    } else {
        Err(ViewError::NotFound(source.to_path_buf()))
    }
}

fn root_section(
    source: &Path,
    reg: &RunIndex,
    records: usize,
    identity: Option<&Value>,
    problems: &[String],
) -> String {
    let mut out = format!(
        "<p>Source: <code>{}</code> — {} registry rows, {} full records.</p>\n",
        esc(&source.display().to_string()),
        reg.rows.len(),
        records
    );
    if !problems.is_empty() {
        out.push_str(
            "<div class=\"problems\" id=\"root-problems\"><b>Problems with this root</b><ul>",
        );
        for p in problems.iter().take(200) {
            out.push_str(&format!("<li>{}</li>", esc(p)));
        }
        if problems.len() > 200 {
            out.push_str(&format!("<li>… {} more</li>", problems.len() - 200));
        }
        out.push_str("</ul></div>\n");
    }
    match identity {
        Some(v) => out.push_str(&format!(
            "<details id=\"identity\"><summary>Run identity (identity.json)</summary>{}</details>\n",
            json_value(v)
        )),
        None => out.push_str("<p class=\"muted\">This root has no identity.json (its configuration is not recorded).</p>\n"),
    }
    out
}
