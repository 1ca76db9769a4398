//! The tables a bundle carries, computed from its registry and records exactly as
//! `faultbench report` computes them (Tables 4–8, the analyses, pass@k / pass^k, cost per
//! correct diagnosis), with the bootstrap settings recorded in the manifest. `pack` writes
//! them; `verify` computes them again from the bundle's own registry and records and compares
//! the two byte for byte.

use faultbench_core::identity::RunIdentity;
use faultbench_report::details::RunDetails;
use faultbench_report::stats::Bootstrap;
use faultbench_report::{Report, ReportOptions, RunIndex, RunIndexError};
use std::path::Path;

/// The bundled tables: `bundle/tables.json` and `bundle/report.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TablesFiles {
    /// Tables and analyses as JSON (compared by `verify`).
    pub json: String,
    /// The same in Markdown, for people (also compared).
    pub markdown: String,
}

/// Computes the tables of a registry (its bytes, as in the bundle) with the details of the
/// bundle's records. Nothing is read from disk.
pub fn compute(
    registry: &[u8],
    details: RunDetails,
    boot: Bootstrap,
    identity: Option<RunIdentity>,
) -> Result<(TablesFiles, RunIndex), RunIndexError> {
    let name = Path::new(crate::names::REGISTRY);
    let index = RunIndex::from_csv_bytes(registry, name)?;
    let opts = ReportOptions {
        bootstrap: boot,
        details,
        axis_totals: Default::default(),
    };
    let mut tables = faultbench_report::tables::build(&index.rows);
    let analyses = faultbench_report::analyses::compute(&index.rows, &mut tables, &opts);
    let json = serde_json::to_string_pretty(&serde_json::json!({
        "tables": tables,
        "analyses": analyses,
    }))
    .unwrap_or_default();
    let report = Report {
        source: name.to_path_buf(),
        warnings: index.warnings.clone(),
        tables,
        dataset: None,
        analyses,
        notes: None,
        identity,
        repair: None,
    };
    Ok((
        TablesFiles {
            json,
            markdown: report.markdown(),
        },
        index,
    ))
}
