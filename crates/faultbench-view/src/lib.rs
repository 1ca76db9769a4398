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
//! ```no_run
//! let summary = faultbench_view::build(std::path::Path::new("runs/e1"), std::path::Path::new("runs/e1/view"))?;
//! println!("{} runs, open {}", summary.runs, summary.index.display());
//! # Ok::<(), faultbench_view::ViewError>(())
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
    /// A page could not be written.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
}

/// Builds the site for `source` into `out` (created if needed; existing pages are replaced).
pub fn build(source: &Path, out: &Path) -> Result<SiteSummary, ViewError> {
    site::build(source, out)
}
