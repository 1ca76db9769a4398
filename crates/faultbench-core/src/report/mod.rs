//! Reports: the paper's tables and charts, computed from a run registry.
//!
//! Input is a `MANIFEST.csv` (the public release's or one written by `faultbench bench`) or a
//! runs root. Output: Markdown, CSV and JSON tables, SVG charts, and one self-contained HTML
//! file holding all of it. Definitions are in [`metrics`].
//!
//! ```
//! use faultbench_core::report::{Registry, Report};
//! # let path = std::path::Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/upstream/MANIFEST.csv"));
//! let report = Report::new(&Registry::load(path).unwrap(), None);
//! let cf_all = report.tables.outcome_by_category.cells[0].last().unwrap().stat.rounded();
//! assert_eq!(cf_all, Some(0.932)); // the paper's Correct-Fault outcome, all agents
//! ```

mod html;
mod markdown;
pub mod metrics;
mod protocol;
mod registry;
pub mod repair;
mod svg;
pub mod tables;

pub use protocol::{PresenceRow, RunNotes, presence_markdown, presence_rows};
pub use registry::{Registry, RegistryError, parse_row};
pub use tables::Tables;

use crate::dataset::DatasetStats;
use std::path::{Path, PathBuf};

/// The folder whose `result.json` files hold repair runs: a runs root, or the folder of a
/// `MANIFEST.csv` written by `faultbench bench`.
fn repair_root(source: &Path) -> Option<&Path> {
    if source.is_dir() {
        Some(source)
    } else {
        source.parent().filter(|p| p.join("MANIFEST.csv") == source)
    }
}

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
    /// How the runs were made (reused labs, telemetry off), from their `result.json` files
    /// when the registry came from a runs root.
    pub notes: Option<RunNotes>,
    /// The repair task's tables, when the runs root holds repair runs.
    pub repair: Option<repair::RepairTables>,
}

impl Report {
    /// Computes every table.
    pub fn new(registry: &Registry, dataset: Option<DatasetStats>) -> Report {
        Report {
            source: registry.source.clone(),
            warnings: registry.warnings.clone(),
            tables: tables::build(&registry.rows),
            dataset,
            notes: registry.notes.clone(),
            repair: repair_root(&registry.source).and_then(repair::RepairTables::scan),
        }
    }

    /// All tables in Markdown, after the notes on how the runs were made (reused labs say so
    /// at the top).
    pub fn markdown(&self) -> String {
        let notes = self
            .notes
            .as_ref()
            .map(RunNotes::markdown)
            .unwrap_or_default();
        format!(
            "{notes}{}{}",
            markdown::all(&self.tables, self.dataset.as_ref()),
            self.repair_markdown()
        )
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
        markdown::csv(&self.tables)
    }

    /// All tables as JSON.
    pub fn json(&self) -> String {
        let v = serde_json::json!({
            "source": self.source,
            "warnings": self.warnings,
            "dataset": self.dataset,
            "notes": self.notes,
            "tables": self.tables,
            "repair": self.repair,
        });
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }

    /// The charts as `(file name, svg)`.
    pub fn charts(&self) -> Vec<(String, String)> {
        let mut out = svg::charts(&self.tables);
        out.extend(self.repair.as_ref().map(repair::RepairTables::chart));
        out
    }

    /// One self-contained HTML page with every table and chart.
    pub fn html(&self) -> String {
        html::page(self)
    }

    /// Writes `report.md`, `report.csv`, `report.json`, the SVG charts and `report.html` into
    /// `dir`; returns the HTML path.
    pub fn write_all(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        crate::fsutil::write_atomic(&dir.join("report.md"), self.markdown().as_bytes())?;
        crate::fsutil::write_atomic(&dir.join("report.csv"), self.csv().as_bytes())?;
        crate::fsutil::write_atomic(&dir.join("report.json"), self.json().as_bytes())?;
        for (name, svg) in self.charts() {
            crate::fsutil::write_atomic(&dir.join(name), svg.as_bytes())?;
        }
        let html = dir.join("report.html");
        crate::fsutil::write_atomic(&html, self.html().as_bytes())?;
        Ok(html)
    }
}
