//! The analyses beyond the paper's printed tables — pass-to-pass variation, effort by category,
//! weight sensitivity — and the bootstrap that gives every mean and rate its interval. One
//! [`Plan`] indexes the rows; each table's statistics are registered in it, bootstrapped and
//! forgotten before the next table's, so memory follows the largest table, not the report.

use super::cells::{Families, Plan};
use super::details::RunDetails;
use super::effort_groups::{self, GroupEffort};
use super::intervals;
use super::passk::{self, PassK};
use super::sensitivity::{self, Sensitivity};
use super::stats::Bootstrap;
use super::tables::Tables;
use super::variation::{self, Variation};
use faultbench_core::record::ManifestRow;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// How a report is computed beyond the tables themselves.
#[derive(Debug, Clone, Default)]
pub struct ReportOptions {
    /// Bootstrap settings (`resamples: 0` = no intervals).
    pub bootstrap: Bootstrap,
    /// Details from full run records (turns, axis counts).
    pub details: RunDetails,
    /// Required and bonus axis totals per scenario id (from a dataset), for weight sensitivity.
    pub axis_totals: HashMap<String, (u32, u32)>,
}

impl ReportOptions {
    /// No intervals, no records: the tables only.
    pub fn tables_only() -> ReportOptions {
        ReportOptions {
            bootstrap: Bootstrap {
                resamples: 0,
                seed: 0,
            },
            ..Default::default()
        }
    }

    /// These options with the details (turns, per-axis counts) of the full records beside a
    /// registry: below `source` when it is a runs root, below its folder when it is a
    /// `MANIFEST.csv`. Every report of a runs root reads them, so weight sensitivity uses the
    /// judge's axis counts instead of inferring them from outcome values. Also returns a note
    /// per record that could not be used.
    pub fn with_records(mut self, source: &std::path::Path) -> (ReportOptions, Vec<String>) {
        let dir = if source.is_dir() {
            Some(source)
        } else if source.file_name().is_some_and(|n| n == "MANIFEST.csv") {
            source.parent()
        } else {
            None
        };
        let notes = match dir {
            Some(dir) => {
                let (details, notes) = RunDetails::scan(dir);
                self.details = details;
                notes
            }
            None => Vec::new(),
        };
        (self, notes)
    }
}

/// The analyses of a report.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Analyses {
    /// The bootstrap behind the intervals (None when no intervals were computed).
    pub bootstrap: Option<Bootstrap>,
    /// Full run records that contributed details.
    pub records: usize,
    /// Pass-to-pass variation.
    pub variation: Variation,
    /// Table 8b: effort by category and ticket style.
    pub effort_by_group: Vec<GroupEffort>,
    /// Weight sensitivity.
    pub sensitivity: Sensitivity,
    /// pass@k, pass^k and cost per correct diagnosis.
    #[serde(default)]
    pub pass_k: PassK,
}

/// Computes the analyses and writes every interval into `tables`. Each table is bootstrapped
/// on its own ([`Plan::run_table`]).
pub fn compute(rows: &[ManifestRow], tables: &mut Tables, opts: &ReportOptions) -> Analyses {
    let fam = Families::of(rows);
    let cols = tables.outcome_by_category.agents.clone();
    let mut plan = Plan::new(rows, &opts.details, &fam);
    intervals::compute(&mut plan, tables, opts.bootstrap);
    let (mut variation, var_stats) = variation::build(rows, &fam, &cols, &mut plan);
    let iv = plan.run_table(opts.bootstrap);
    variation.cis = var_stats
        .iter()
        .map(|r| r.iter().map(|s| iv.get(*s)).collect())
        .collect();
    let effort_by_group = effort_groups::compute(&cols, &mut plan, opts.bootstrap);
    let sensitivity = sensitivity::build(rows, &fam, &opts.details, &opts.axis_totals, &cols);
    let pass_k = passk::build(rows, &fam, &opts.details, &cols, &mut plan, opts.bootstrap);
    Analyses {
        bootstrap: (opts.bootstrap.resamples > 0).then_some(opts.bootstrap),
        records: opts.details.len(),
        variation,
        effort_by_group,
        sensitivity,
        pass_k,
    }
}
