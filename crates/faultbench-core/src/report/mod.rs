//! Reports: the paper's tables and charts, computed from a run registry.
//!
//! Input is a `MANIFEST.csv` (the public release's or one written by `faultbench bench`) or a
//! runs root. Output: Markdown, CSV and JSON tables, SVG charts, and one self-contained HTML
//! file holding all of it. Definitions are in [`metrics`].
//!
//! ```no_run
//! use faultbench_core::report::{Registry, Report};
//! // In a checkout of the public release (`scripts/fetch-release.sh`); the same numbers are
//! // asserted by `tests/report_release.rs`.
//! let path = std::path::Path::new("final_results/MANIFEST.csv");
//! let report = Report::new(&Registry::load(path).unwrap(), None);
//! let cf_all = report.tables.outcome_by_category.cells[0].last().unwrap().stat.rounded();
//! assert_eq!(cf_all, Some(0.932)); // the paper's Correct-Fault outcome, all agents
//! ```

mod csv_export;
mod html;
mod markdown;
pub mod metrics;
mod registry;
mod svg;
pub mod tables;

pub use registry::{Registry, RegistryError, parse_row};
pub use tables::Tables;

use crate::dataset::DatasetStats;
use crate::identity::RunIdentity;
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
    /// The configuration the runs were made with (the runs root's `identity.json`), printed at
    /// the top; `None` for a registry without one (the public release's, or an older root).
    pub identity: Option<RunIdentity>,
}

/// The runs root a registry was read from: the folder itself, or the folder of a `MANIFEST.csv`.
fn root_of(source: &Path) -> Option<&Path> {
    if source.is_dir() {
        Some(source)
    } else {
        source.parent()
    }
}

impl Report {
    /// Computes every table.
    /// Computes every table; the configuration is read from the runs root's `identity.json`
    /// when there is one (an unreadable one becomes a warning).
    pub fn new(registry: &Registry, dataset: Option<DatasetStats>) -> Report {
        let mut warnings = registry.warnings.clone();
        let identity = match root_of(&registry.source).map(RunIdentity::load) {
            Some(Ok(id)) => id,
            Some(Err(e)) => {
                warnings.push(e.to_string());
                None
            }
            None => None,
        };
        Report {
            source: registry.source.clone(),
            warnings,
            tables: tables::build(&registry.rows),
            dataset,
            identity,
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

    /// The configuration, then all tables, in Markdown.
    pub fn markdown(&self) -> String {
        format!(
            "{}\n{}",
            self.configuration(),
            markdown::all(&self.tables, self.dataset.as_ref())
        )
    }

    /// All tables as one CSV.
    pub fn csv(&self) -> String {
        csv_export::tables(&self.tables)
    }

    /// All tables as JSON.
    pub fn json(&self) -> String {
        let v = serde_json::json!({
            "source": self.source,
            "configuration": self.identity,
            "warnings": self.warnings,
            "dataset": self.dataset,
            "tables": self.tables,
        });
        serde_json::to_string_pretty(&v).unwrap_or_default()
    }

    /// The charts as `(file name, svg)`.
    pub fn charts(&self) -> Vec<(String, String)> {
        svg::charts(&self.tables)
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
