//! `faultbench leaderboard FILE... --out DIR`: a static site with one row per agent of each
//! bundle, in the run viewer's style (its stylesheet, its Content-Security-Policy: one inline
//! script allowed by its hash, nothing loaded from anywhere), every value escaped.
//!
//! Each bundle is verified here ([`crate::verify()`]) with the same rules as
//! `faultbench verify`. **Only verified bundles are ranked** — by pass^K over all categories,
//! K being the largest number of passes every ranked bundle has, ties broken by the
//! Correct-Fault outcome; an unverified bundle is listed below them with the first rule it
//! breaks and its claimed numbers marked as such; an unreadable one with its error. A run
//! registry (`--registry`, e.g. the release's `MANIFEST.csv`) is listed as *registry only*: its
//! numbers are computed here, but nothing about them can be checked (no records, no
//! signature). Each entry links to its run viewer (`faultbench view`), built under
//! `bundles/<entry>/view/` from the bundle's members, written through
//! [`OutputDir`] (plain names only, never through a link).

mod page;

use crate::read::{BundleError, for_each_member};
use crate::verify::{VerifyOptions, VerifyRule};
use faultbench_core::output::{OutputDir, OutputError};
use faultbench_report::analyses::{Analyses, ReportOptions};
use faultbench_report::metrics::ALL;
use faultbench_report::{RunIndex, Tables};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The former name of [`LeaderboardEntry`] (one public name per concept across the crates:
/// faultbench-gen's generation journal has `JournalEntry`; issue 28).
#[deprecated(note = "renamed to `LeaderboardEntry`; the old name goes in the next release")]
pub type Entry = LeaderboardEntry;

/// One entry given to the leaderboard.
#[derive(Debug, Clone)]
pub enum LeaderboardEntry {
    /// A bundle, verified here.
    Bundle(PathBuf),
    /// A run registry, shown unsigned (`registry only`).
    Registry(PathBuf),
}

/// How far an entry's numbers can be trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Status {
    /// Every rule holds: ranked.
    Verified,
    /// Every rule holds, on the mock emulator (allowed for development): never ranked.
    VerifiedMock,
    /// A rule fails: never ranked.
    Unverified(VerifyRule),
    /// The bundle cannot be read.
    Unreadable,
    /// A bare registry: nothing to verify.
    RegistryOnly,
}

/// One row of the leaderboard: an agent of an entry.
#[derive(Debug, Clone)]
pub struct Row {
    /// Rank among verified rows (from 1), or `None`.
    pub rank: Option<usize>,
    /// The entry (file name).
    pub source: String,
    /// Status.
    pub status: Status,
    /// Why (the failing rule's detail, the error, or what was verified).
    pub status_detail: String,
    /// Agent label.
    pub agent: String,
    /// Model.
    pub model: String,
    /// Outcome by category (Correct-Fault, False-Premise, Wrong-Device, Wrong-Cause).
    pub outcome: [Option<f64>; 4],
    /// Over-diagnosis on standard false-premise tickets, as a rate and its text.
    pub over_diagnosis: (Option<f64>, String),
    /// pass^k over all categories, k = 1 … (index k − 1).
    pub pass_hat: Vec<Option<f64>>,
    /// USD per correct diagnosis.
    pub usd_per_correct: Option<f64>,
    /// The agent's USD over all runs.
    pub usd_total: f64,
    /// Runs of this agent.
    pub runs: usize,
    /// Dataset digest (bundles).
    pub dataset: Option<String>,
    /// Signer fingerprint.
    pub signer: Option<String>,
    /// Link to the entry's run viewer, relative to the site.
    pub viewer: Option<String>,
}

impl Row {
    /// `verified`, `unverified`, …
    pub fn status_label(&self) -> &'static str {
        match self.status {
            Status::Verified => "verified",
            Status::VerifiedMock => "verified-mock",
            Status::Unverified(_) => "unverified",
            Status::Unreadable => "unreadable",
            Status::RegistryOnly => "registry-only",
        }
    }
}

/// The former name of [`LeaderboardSite`] (one public name per concept across the crates;
/// issue 28).
#[deprecated(note = "renamed to `LeaderboardSite`; the old name goes in the next release")]
pub type Site = LeaderboardSite;

/// The leaderboard site written.
#[derive(Debug, Clone)]
pub struct LeaderboardSite {
    /// Its `index.html`.
    pub index: PathBuf,
    /// The rows, ranked ones first.
    pub rows: Vec<Row>,
    /// The k ranked by.
    pub rank_k: Option<u32>,
}

/// Why the site could not be written.
#[derive(Debug, thiserror::Error)]
pub enum LeaderboardError {
    /// A page or folder could not be written.
    #[error(transparent)]
    Write(#[from] OutputError),
    /// An entry's viewer could not be built.
    #[error("{}: cannot build its run viewer: {message}", path.display())]
    View {
        /// The entry.
        path: PathBuf,
        /// Why.
        message: String,
    },
}

/// A folder name for an entry: its index and file stem in plain characters.
fn slug(i: usize, path: &Path) -> String {
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let clean: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                c
            } else {
                '_'
            }
        })
        .take(60)
        .collect();
    format!("{}-{}", i + 1, clean.trim_start_matches('.'))
}

/// The rows of one set of tables, one per agent.
fn rows_of(
    tables: &Tables,
    analyses: &Analyses,
    models: &BTreeMap<String, String>,
    proto: &Row,
) -> Vec<Row> {
    let t = &tables.outcome_by_category;
    let p = &analyses.pass_k;
    let mut out = Vec::new();
    for (col, agent) in t.agents.iter().enumerate() {
        if agent == ALL {
            continue;
        }
        let mut outcome = [None; 4];
        for (i, label) in [
            "Correct-Fault",
            "False-Premise",
            "Wrong-Device",
            "Wrong-Cause",
        ]
        .iter()
        .enumerate()
        {
            outcome[i] = t
                .rows
                .iter()
                .position(|r| r == label)
                .and_then(|r| t.cells.get(r))
                .and_then(|row| row.get(col))
                .and_then(|c| c.stat.mean);
        }
        let over = tables
            .over_diagnosis
            .agents
            .iter()
            .position(|a| a == agent)
            .and_then(|c| tables.over_diagnosis.cells.first().and_then(|r| r.get(c)))
            .copied()
            .unwrap_or_default();
        let pcol = p.agents.iter().position(|a| a == agent);
        let pass_hat = (1..=p.max_k)
            .map(|k| {
                p.row("All categories", k)
                    .and_then(|r| pcol.and_then(|c| r.pass_hat.get(c)))
                    .and_then(|c| c.value)
            })
            .collect();
        let effort = tables.effort.iter().find(|e| e.agent == *agent);
        out.push(Row {
            agent: agent.clone(),
            model: models.get(agent).cloned().unwrap_or_default(),
            outcome,
            over_diagnosis: (over.ratio(), over.to_string()),
            pass_hat,
            usd_per_correct: pcol
                .and_then(|c| p.cost_per_correct.get(c))
                .and_then(|c| c.value),
            usd_total: effort.map_or(0.0, |e| e.usd_total),
            runs: effort.map_or(0, |e| e.runs),
            ..proto.clone()
        });
    }
    out
}

/// Writes a bundle's members below `base` (names were checked by the reader; the writes go
/// through [`OutputDir`] all the same).
fn extract(bundle: &Path, base: &OutputDir, caps: crate::read::Caps) -> Result<(), String> {
    let r = for_each_member(bundle, caps, |m| -> Result<(), OutputError> {
        let (dir, name) = match m.name.rsplit_once('/') {
            Some((d, n)) => (base.subdir(d)?, n.to_string()),
            None => (base.subdir("")?, m.name.clone()),
        };
        dir.write_unsynced(&name, &m.bytes).map(|_| ())
    });
    match r {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(e.to_string()),
        Err(e) => Err(e.to_string()),
    }
}

fn bundle_rows(
    i: usize,
    path: &Path,
    site: &OutputDir,
    opts: &VerifyOptions,
) -> Result<Vec<Row>, LeaderboardError> {
    let source = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.display().to_string());
    let mut proto = Row::empty(source, Status::Unreadable, String::new());
    let v = match crate::verify(path, opts) {
        Ok(v) => v,
        Err(BundleError {
            member, problem, ..
        }) => {
            proto.status_detail = match member {
                Some(m) => format!("member `{m}`: {problem}"),
                None => problem,
            };
            return Ok(vec![proto]);
        }
    };
    proto.signer = v.signer.clone();
    proto.dataset = v.manifest.as_ref().map(|m| m.dataset.digest.clone());
    let mock = v.identity.as_ref().is_some_and(|id| id.emulator == "mock");
    (proto.status, proto.status_detail) = match v.first_failure() {
        Some(f) => (
            Status::Unverified(f.rule),
            format!("rule {}: {}", f.rule.name(), f.detail),
        ),
        None if mock => (
            Status::VerifiedMock,
            "every rule holds, on the mock emulator (development only)".into(),
        ),
        None => (Status::Verified, "every rule holds".into()),
    };
    let slug = slug(i, path);
    let runs_dir = site.subdir(format!("bundles/{slug}/runs"))?;
    let view_dir = site.subdir(format!("bundles/{slug}/view"))?;
    let viewer = extract(path, &runs_dir, opts.caps)
        .and_then(|()| {
            faultbench_view::build_in(runs_dir.path(), &view_dir).map_err(|e| e.to_string())
        })
        .map(|_| format!("bundles/{slug}/view/index.html"));
    match viewer {
        Ok(link) => proto.viewer = Some(link),
        Err(e) => {
            return Err(LeaderboardError::View {
                path: path.to_path_buf(),
                message: e,
            });
        }
    }
    let models: BTreeMap<String, String> = v
        .identity
        .as_ref()
        .map(|id| {
            id.agents
                .iter()
                .map(|(k, a)| (k.clone(), a.model.clone().unwrap_or_default()))
                .collect()
        })
        .unwrap_or_default();
    let parsed = v.tables.as_ref().and_then(|t| {
        let tables: Tables = serde_json::from_value(t.get("tables")?.clone()).ok()?;
        let analyses: Analyses = serde_json::from_value(t.get("analyses")?.clone()).ok()?;
        Some((tables, analyses))
    });
    Ok(match parsed {
        Some((t, a)) => {
            let rows = rows_of(&t, &a, &models, &proto);
            if rows.is_empty() { vec![proto] } else { rows }
        }
        None => vec![proto],
    })
}

impl Row {
    /// A row of `source` with a status and nothing measured yet: what an entry shows until (or
    /// unless) its numbers are read.
    fn empty(source: String, status: Status, status_detail: String) -> Row {
        Row {
            rank: None,
            source,
            status,
            status_detail,
            agent: String::new(),
            model: String::new(),
            outcome: [None; 4],
            over_diagnosis: (None, String::new()),
            pass_hat: Vec::new(),
            usd_per_correct: None,
            usd_total: 0.0,
            runs: 0,
            dataset: None,
            signer: None,
            viewer: None,
        }
    }
}

fn registry_rows(i: usize, path: &Path, site: &OutputDir) -> Result<Vec<Row>, LeaderboardError> {
    let source = path.display().to_string();
    let mut proto = Row::empty(
        source,
        Status::RegistryOnly,
        "registry only: unsigned, no records; its numbers cannot be checked".into(),
    );
    let index = match RunIndex::load_csv(path) {
        Ok(x) => x,
        Err(e) => {
            proto.status = Status::Unreadable;
            proto.status_detail = e.to_string();
            return Ok(vec![proto]);
        }
    };
    let slug = slug(i, path);
    let view_dir = site.subdir(format!("registries/{slug}/view"))?;
    faultbench_view::build_in(path, &view_dir).map_err(|e| LeaderboardError::View {
        path: path.to_path_buf(),
        message: e.to_string(),
    })?;
    proto.viewer = Some(format!("registries/{slug}/view/index.html"));
    let mut models = BTreeMap::new();
    for r in &index.rows {
        models
            .entry(r.agent.clone())
            .or_insert_with(|| r.model.clone());
    }
    let mut tables = faultbench_report::tables::build(&index.rows);
    let analyses = faultbench_report::analyses::compute(
        &index.rows,
        &mut tables,
        &ReportOptions::tables_only(),
    );
    Ok(rows_of(&tables, &analyses, &models, &proto))
}

/// Ranks the verified rows by pass^K (K: the most passes every verified row has), ties by
/// the Correct-Fault outcome; returns K.
fn rank(rows: &mut [Row]) -> Option<u32> {
    let k = rows
        .iter()
        .filter(|r| r.status == Status::Verified)
        .map(|r| r.pass_hat.len())
        .min()
        .filter(|k| *k > 0)?;
    let score = |r: &Row| {
        (
            r.pass_hat.get(k - 1).copied().flatten().unwrap_or(-1.0),
            r.outcome[0].unwrap_or(-1.0),
        )
    };
    rows.sort_by(|a, b| {
        let (va, vb) = (a.status == Status::Verified, b.status == Status::Verified);
        vb.cmp(&va).then_with(|| {
            if va && vb {
                score(b)
                    .partial_cmp(&score(a))
                    .unwrap_or(std::cmp::Ordering::Equal)
            } else {
                std::cmp::Ordering::Equal
            }
        })
    });
    for (i, r) in rows.iter_mut().enumerate() {
        if r.status == Status::Verified {
            r.rank = Some(i + 1);
        }
    }
    Some(k as u32)
}

/// Builds the site into `out` (a folder the user names; created if missing).
pub fn build(
    entries: &[LeaderboardEntry],
    out: &Path,
    opts: &VerifyOptions,
) -> Result<LeaderboardSite, LeaderboardError> {
    let site = OutputDir::open(out, "")?;
    let mut rows = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        rows.extend(match e {
            LeaderboardEntry::Bundle(p) => bundle_rows(i, p, &site, opts)?,
            LeaderboardEntry::Registry(p) => registry_rows(i, p, &site)?,
        });
    }
    let k = rank(&mut rows);
    let index = site.write("index.html", page::page(&rows, k).as_bytes())?;
    Ok(LeaderboardSite {
        index,
        rows,
        rank_k: k,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(status: Status, pass_hat: &[f64], cf: f64) -> Row {
        Row {
            rank: None,
            source: "x".into(),
            status,
            status_detail: String::new(),
            agent: format!("{pass_hat:?}"),
            model: String::new(),
            outcome: [Some(cf), None, None, None],
            over_diagnosis: (None, String::new()),
            pass_hat: pass_hat.iter().map(|v| Some(*v)).collect(),
            usd_per_correct: None,
            usd_total: 0.0,
            runs: 0,
            dataset: None,
            signer: None,
            viewer: None,
        }
    }

    #[test]
    fn only_verified_rows_are_ranked_by_pass_hat_at_the_common_k() {
        let mut rows = vec![
            row(
                Status::Unverified(VerifyRule::Scores),
                &[1.0, 1.0, 1.0],
                1.0,
            ),
            row(Status::Verified, &[0.9, 0.5, 0.4], 0.9),
            row(Status::RegistryOnly, &[0.99, 0.99], 0.99),
            row(Status::Verified, &[0.8, 0.7], 0.8),
            row(Status::VerifiedMock, &[1.0, 1.0], 1.0),
            row(Status::Verified, &[0.8, 0.7, 0.1], 0.95),
        ];
        let k = rank(&mut rows);
        assert_eq!(k, Some(2), "the most passes every verified row has");
        let ranked: Vec<(Option<usize>, f64)> = rows
            .iter()
            .map(|r| (r.rank, r.outcome[0].unwrap()))
            .collect();
        // pass^2: 0.7 (CF 0.95), 0.7 (CF 0.8), 0.5; then the unranked ones.
        assert_eq!(
            &ranked[..3],
            &[(Some(1), 0.95), (Some(2), 0.8), (Some(3), 0.9)]
        );
        assert!(rows[3..].iter().all(|r| r.rank.is_none()));
        let html = page::page(&rows, k);
        assert!(html.contains("pass^K (K = 2)"));
        assert_eq!(
            html.matches("UNVERIFIED (claimed numbers)</span>").count(),
            1
        );
    }

    #[test]
    fn values_are_escaped_on_the_page() {
        let mut r = row(Status::Verified, &[0.5], 0.5);
        r.agent = "<script>alert(1)</script>".into();
        r.model = "\"><img src=x onerror=alert(1)>".into();
        let html = page::page(&[r], Some(1));
        assert!(!html.contains("<script>alert") && !html.contains("<img"));
        assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert_eq!(
            html.matches("<script>").count(),
            1,
            "only the page's own script"
        );
    }
}
