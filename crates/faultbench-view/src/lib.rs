//! `faultbench view`: a self-contained static site for a runs root.
//!
//! The site needs no server (open `index.html`) and no network: no framework, no CDN, every
//! style and script inline. It has
//! - `index.html`: every run in one table, filtered and sorted in the browser (topology, arm,
//!   category, ticket style, agent, model, pass, status, outcome, cost, duration, and a search in
//!   tickets and diagnoses), 200 rows per page;
//! - `runs/<run>.html`: one page per run — the ticket and the exact prompt (topology summary)
//!   the agent saw, the timeline of turns and tool calls (arguments, capped outputs, durations,
//!   refusals), the diagnosis beside the ground truth, each axis with the judge's verdict and
//!   reason, fix and reasoning scores, tokens and cost, the lab phases with their timings, and
//!   whatever the record adds (`agent_changes`, `repair`, identity) shown generically;
//! - `scenarios/<ticket>.html` and `scenarios.html`: each ticket's runs by agent and pass, with
//!   each agent's spread across passes.
//!
//! Input: a runs root of ours (`MANIFEST.csv` + `result.json` files), the public release's
//! `final_results/` folder (its registry + whatever records exist), or a bare `MANIFEST.csv`.
//! Records are read as plain JSON ([`model`]): missing fields, odd types, unknown statuses,
//! huge outputs and duplicate or stray records become problems shown on the page, never a
//! failure. Every run-supplied string is escaped ([`html`]); pages carry a Content-Security-
//! Policy that lets only the index's own script (by hash) run.
//!
//! Output: [`build`] writes into a folder the caller names (used as given); [`build_in`] into an
//! [`OutputDir`], e.g. `OutputDir::open(root, "view")` for the default `view/` inside a runs root
//! — a folder derived from a root someone else may have prepared. Either way every folder and
//! page below the output folder is written without following links: a link planted at
//! `view/index.html` or `view/runs` is refused and its target left untouched.
//!
//! ```no_run
//! use faultbench_core::output::OutputDir;
//! let root = std::path::Path::new("runs/e1");
//! let summary = faultbench_view::build_in(root, &OutputDir::open(root, "view")?)?;
//! println!("{} runs, open {}", summary.runs, summary.index.display());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod html;
mod index_page;
pub mod model;
mod run_page;
mod scenario_page;
mod site;
mod timeline;

pub use index_page::{COLUMNS, SCRIPT};
pub use site::{SiteSummary, file_name};

use faultbench_core::output::{OutputDir, OutputError};
use std::path::{Path, PathBuf};

/// Why a site could not be built.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// The source does not exist.
    #[error("{}: no such runs root or MANIFEST.csv", .0.display())]
    NotFound(PathBuf),
    /// The run registry (`MANIFEST.csv`) could not be read.
    #[error("{0}")]
    RunIndex(#[source] faultbench_report::RunIndexError),
    /// A folder or page could not be written (or is a link, which is never written through).
    #[error(transparent)]
    Write(#[from] OutputError),
}

/// Builds the site for `source` into `out`, a folder the caller names (created if needed; links
/// in it are followed; existing pages are replaced).
pub fn build(source: &Path, out: &Path) -> Result<SiteSummary, ViewError> {
    site::build(source, &OutputDir::open(out, "")?)
}

/// Builds the site for `source` into an output folder opened by the caller (see the crate docs).
pub fn build_in(source: &Path, out: &OutputDir) -> Result<SiteSummary, ViewError> {
    site::build(source, out)
}
