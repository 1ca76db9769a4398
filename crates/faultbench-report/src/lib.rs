//! # faultbench-report: the paper's tables and charts, computed from a run index
//!
//! (Split from `faultbench-core`, which keeps the vocabulary, the scenario format and the
//! pipeline; reports are a consumer of run records.)
//!
//! Input is a [`RunIndex`]: one row per run, read from a run registry (`MANIFEST.csv`, the
//! public release's or one written by `faultbench bench`) or from a runs root's records. Output: Markdown, CSV and JSON tables, SVG charts, and one self-contained HTML
//! file holding all of it. Definitions are in [`metrics`].
//!
//! [`Report::with_options`] adds seeded bootstrap intervals to every mean and rate
//! ([`stats`], [`cells`]), and the analyses of [`analyses`]: pass-to-pass variation, effort by
//! category, weight sensitivity. [`compare`] sets several registries side by side.
//!
//! ```no_run
//! use faultbench_report::{Report, RunIndex};
//! // In a checkout of the public release (`scripts/fetch-release.sh`); the same numbers are
//! // asserted by `tests/report_release.rs`.
//! let path = std::path::Path::new("final_results/MANIFEST.csv");
//! let report = Report::new(&RunIndex::load(path).unwrap(), None);
//! let cf_all = report.tables.outcome_by_category.cells[0].last().unwrap().stat.rounded();
//! assert_eq!(cf_all, Some(0.932)); // the paper's Correct-Fault outcome, all agents
//! ```

pub mod analyses;
pub mod cells;
pub mod compare;
mod csv_export;
pub mod details;
pub mod effort_groups;
pub mod gap;
mod html;
pub mod intervals;
pub mod labels;
mod markdown;
mod markdown_more;
pub mod metrics;
pub mod passk;
mod protocol;
pub mod repair;
mod run_index;
pub mod sensitivity;
pub mod stats;
mod svg;
pub mod tables;
pub mod variation;

pub use analyses::{Analyses, ReportOptions};
pub use protocol::{PresenceRow, RunNotes, presence_markdown, presence_rows};
pub use run_index::{
    MAX_FIELD_CHARS, MAX_REGISTRY_BYTES, MAX_REGISTRY_ROWS, MAX_REPORT_AGENTS, ManifestRowError,
    NumberProblem, RunIndex, RunIndexError, RunIndexProblem, parse_row,
};
pub use tables::Tables;

use faultbench_core::dataset::DatasetStats;
use faultbench_core::identity::RunIdentity;
use faultbench_core::output::{OutputDir, OutputError};
use std::path::{Path, PathBuf};

/// A computed report.
#[derive(Debug, Clone)]
pub struct Report {
    /// Where the rows came from.
    pub source: PathBuf,
    /// Rows skipped while reading, with reasons.
    pub warnings: Vec<String>,
    /// The tables.
    pub tables: Tables,
    /// Table 2, when a dataset was given.
    pub dataset: Option<DatasetStats>,
    /// Variation, effort by category, weight sensitivity, and the bootstrap settings.
    pub analyses: Analyses,
    /// How the runs were made (reused labs, telemetry off), from their `result.json` files
    /// when the index came from a runs root.
    pub notes: Option<RunNotes>,
    /// The configuration the runs were made with (the runs root's `identity.json`), printed at
    /// the top; `None` for an index without one (the public release's, or an older root).
    pub identity: Option<RunIdentity>,
    /// The repair task's tables, when the runs root holds repair runs.
    pub repair: Option<repair::RepairTables>,
}

/// The runs root an index was read from: the folder itself, or the folder of a `MANIFEST.csv`.
fn root_of(source: &Path) -> Option<&Path> {
    if source.is_dir() {
        Some(source)
    } else {
        source.parent()
    }
}

impl Report {
    /// Computes every table and analysis, without bootstrap intervals (see
    /// [`Report::with_options`]).
    pub fn new(index: &RunIndex, dataset: Option<DatasetStats>) -> Report {
        Report::with_options(index, dataset, &ReportOptions::tables_only())
    }

    /// Computes every table and analysis, with the intervals and run details of `opts`; the
    /// configuration is read from the runs root's `identity.json` when there is one (an
    /// unreadable one becomes a warning).
    pub fn with_options(
        index: &RunIndex,
        dataset: Option<DatasetStats>,
        opts: &ReportOptions,
    ) -> Report {
        let mut warnings = index.warnings.clone();
        let identity = match root_of(&index.source).map(RunIdentity::load) {
            Some(Ok(id)) => id,
            Some(Err(e)) => {
                warnings.push(e.to_string());
                None
            }
            None => None,
        };
        let mut tables = tables::build(&index.rows);
        let analyses = analyses::compute(&index.rows, &mut tables, opts);
        Report {
            source: index.source.clone(),
            warnings,
            tables,
            dataset,
            analyses,
            notes: index.notes.clone(),
            identity,
            repair: root_of(&index.source).and_then(repair::RepairTables::scan),
        }
    }

    /// The configuration section that opens every report.
    pub fn configuration(&self) -> String {
        match &self.identity {
            Some(id) => id.markdown(),
            None => format!(
                "## Configuration\n\nNot recorded: {} has no `identity.json` (the public release's registry, or a runs root made before faultbench recorded its configuration).\n",
                root_of(&self.source).unwrap_or(&self.source).display()
            ),
        }
    }

    /// The notes on how the runs were made (reused labs say so at the very top), the
    /// configuration, then all tables, in Markdown.
    pub fn markdown(&self) -> String {
        let notes = self
            .notes
            .as_ref()
            .map(RunNotes::markdown)
            .unwrap_or_default();
        let mut out = format!(
            "{notes}{}\n{}",
            self.configuration(),
            markdown::all(&self.tables, self.dataset.as_ref())
        );
        out.push_str(&self.repair_markdown());
        out.push('\n');
        out.push_str(&markdown_more::analyses(&self.analyses));
        out
    }

    /// The repair tables in Markdown (empty without repair runs).
    fn repair_markdown(&self) -> String {
        self.repair
            .as_ref()
            .map(|r| format!("\n{}", r.markdown()))
            .unwrap_or_default()
    }

    /// All tables as one CSV.
    pub fn csv(&self) -> String {
        csv_export::tables(&self.tables)
    }

    /// Every statistic with its bootstrap interval, and the analyses, as one CSV:
    /// `table,row,agent,value,ci_lo,ci_hi,n` (`statistics.csv`).
    pub fn statistics_csv(&self) -> String {
        markdown_more::statistics_csv(&self.tables, &self.analyses)
    }

    /// All tables as JSON.
    pub fn json(&self) -> String {
        let v = serde_json::json!({
            "source": self.source,
            "configuration": self.identity,
            "warnings": self.warnings,
            "dataset": self.dataset,
            "notes": self.notes,
            "tables": self.tables,
            "analyses": self.analyses,
            "repair": self.repair,
        });
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }

    /// The charts as `(file name, svg)`.
    pub fn charts(&self) -> Vec<(String, String)> {
        let mut out = svg::charts(&self.tables, &self.analyses);
        out.extend(self.repair.as_ref().map(repair::RepairTables::chart));
        out
    }

    /// One self-contained HTML page with every table and chart.
    pub fn html(&self) -> String {
        html::page(self)
    }

    /// Writes `report.md`, `report.csv`, `report.json`, `statistics.csv`, the SVG charts and
    /// `report.html` into `dir`, a folder the caller names (used as given, created if missing);
    /// returns the HTML path. For the default `report/` folder inside a runs root, use
    /// [`Report::write_into`] with `OutputDir::open(root, "report")`, which refuses a link
    /// planted there.
    pub fn write_all(&self, dir: &Path) -> Result<PathBuf, OutputError> {
        self.write_into(&OutputDir::open(dir, "")?)
    }

    /// Writes the report's files into an output folder (each atomically; a link at any of
    /// their names is refused, never written through); returns the HTML path.
    pub fn write_into(&self, dir: &OutputDir) -> Result<PathBuf, OutputError> {
        dir.write("report.md", self.markdown().as_bytes())?;
        dir.write("report.csv", self.csv().as_bytes())?;
        dir.write("report.json", self.json().as_bytes())?;
        dir.write("statistics.csv", self.statistics_csv().as_bytes())?;
        for (name, svg) in self.charts() {
            dir.write(&name, svg.as_bytes())?;
        }
        dir.write("report.html", self.html().as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 30: `write_all` created `RUNS/report` with `create_dir_all`, which follows a link
    /// planted there, so the report's files went to the link's target.
    #[test]
    fn the_default_report_folder_is_never_a_planted_link() {
        let tmp = tempfile::tempdir().unwrap();
        let outside = tmp.path().join("outside");
        std::fs::create_dir(&outside).unwrap();
        std::os::unix::fs::symlink(&outside, tmp.path().join("report")).unwrap();
        let e = OutputDir::open(tmp.path(), "report").unwrap_err();
        assert!(e.to_string().contains("report: is a symbolic link"), "{e}");
        std::fs::remove_file(tmp.path().join("report")).unwrap();

        // A link at one of the report's file names is refused, its target untouched.
        let victim = outside.join("victim");
        std::fs::write(&victim, "precious").unwrap();
        let dir = OutputDir::open(tmp.path(), "report").unwrap();
        std::os::unix::fs::symlink(&victim, tmp.path().join("report/report.csv")).unwrap();
        let report = Report::new(&RunIndex::default(), None);
        let e = report.write_into(&dir).unwrap_err();
        assert!(
            e.to_string().contains("report.csv: is a symbolic link"),
            "{e}"
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
        std::fs::remove_file(tmp.path().join("report/report.csv")).unwrap();
        let html = report.write_into(&dir).unwrap();
        assert_eq!(html, tmp.path().join("report/report.html"));
        assert!(html.is_file());
    }
}
