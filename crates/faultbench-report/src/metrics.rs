//! The paper's metric definitions, computed from registry rows.
//!
//! - A run is **answered** when its status is `scored`; a **timeout** when it is
//!   `no_submission` or `no_output`. Other statuses (infrastructure, `judge_failed`) are neither
//!   and are only counted.
//! - A **cell** (a score for one arm/category and one agent, or "All") is computed per pass as
//!   the mean over answered runs, then averaged over passes; "All" pools the agents *inside*
//!   each pass. SD is the sample standard deviation of the per-pass means.
//! - **Over-diagnosis** = answered false-premise runs whose verdict is anomalous / answered
//!   false-premise runs, pooled over passes. **Timeout rate** = timeouts / agent results.
//! - Category: arm `base80` (or `base`) is Correct-Fault; otherwise the id decides
//!   (`false-premise`, `-misdirected`, `-misdescribed`); persona arms are all false premise.

use faultbench_core::category::{Category, Layer};
use faultbench_core::record::{ManifestRow, layer_of_arm};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The pseudo-agent that pools all agents.
pub const ALL: &str = "All";

/// Is this run answered (enters score means)?
pub fn answered(r: &ManifestRow) -> bool {
    r.status == "scored"
}

/// Is this run a timeout?
pub fn timeout(r: &ManifestRow) -> bool {
    matches!(r.status.as_str(), "no_submission" | "no_output")
}

/// The layer of a row's arm.
pub fn layer(r: &ManifestRow) -> Option<Layer> {
    layer_of_arm(&r.arm)
}

/// The category of a row.
pub fn category(r: &ManifestRow) -> Category {
    match layer(r) {
        Some(Layer::Base) => Category::CorrectFault,
        Some(l) if l.is_persona() => Category::FalsePremise,
        _ => Category::from_id(&r.scenario_id),
    }
}

/// A mean over passes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct CellStat {
    /// Mean of the per-pass means (None when no answered run has a value).
    pub mean: Option<f64>,
    /// Sample standard deviation of the per-pass means (needs two passes).
    pub sd: Option<f64>,
    /// Values pooled over passes.
    pub n: usize,
    /// Passes with at least one value.
    pub passes: usize,
}

impl CellStat {
    /// The mean rounded to three decimals, as the paper prints it.
    pub fn rounded(&self) -> Option<f64> {
        self.mean.map(round3)
    }
}

/// A count ratio, printed as `24.3% (51/210)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rate {
    /// Numerator.
    pub num: usize,
    /// Denominator.
    pub den: usize,
}

impl Rate {
    /// The ratio, when the denominator is not zero.
    pub fn ratio(&self) -> Option<f64> {
        (self.den > 0).then(|| self.num as f64 / self.den as f64)
    }
}

impl std::fmt::Display for Rate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.ratio() {
            Some(r) => write!(f, "{:.1}% ({}/{})", r * 100.0, self.num, self.den),
            None => write!(f, "– (0/0)"),
        }
    }
}

/// Rounds to three decimals.
pub fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

fn mean(v: &[f64]) -> Option<f64> {
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

fn sample_sd(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let m = mean(v)?;
    let var = v.iter().map(|x| (x - m).powi(2)).sum::<f64>() / (v.len() - 1) as f64;
    Some(var.sqrt())
}

/// A cell: per pass, the mean of `value` over the selected answered runs of `agent` (or all
/// agents for [`ALL`]); then the mean over passes.
pub fn cell<'a>(
    rows: impl IntoIterator<Item = &'a ManifestRow>,
    agent: &str,
    value: impl Fn(&ManifestRow) -> Option<f64>,
) -> CellStat {
    let mut per_pass: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for r in rows {
        if !answered(r) || (agent != ALL && r.agent != agent) {
            continue;
        }
        if let Some(v) = value(r) {
            per_pass.entry(r.pass.as_str()).or_default().push(v);
        }
    }
    let means: Vec<f64> = per_pass.values().filter_map(|v| mean(v)).collect();
    CellStat {
        mean: mean(&means),
        sd: sample_sd(&means),
        n: per_pass.values().map(Vec::len).sum(),
        passes: means.len(),
    }
}

/// Over-diagnosis: answered runs reporting an anomaly / answered runs (pooled over passes).
/// A blank verdict counts as "no anomaly", as in the release's analysis.
pub fn over_diagnosis<'a>(rows: impl IntoIterator<Item = &'a ManifestRow>, agent: &str) -> Rate {
    let mut rate = Rate::default();
    for r in rows {
        if answered(r) && (agent == ALL || r.agent == agent) {
            rate.den += 1;
            rate.num += usize::from(r.is_anomaly == Some(true));
        }
    }
    rate
}

/// Timeout rate: timeouts / runs that are agent results (answered or timeout).
pub fn timeout_rate<'a>(rows: impl IntoIterator<Item = &'a ManifestRow>, agent: &str) -> Rate {
    let mut rate = Rate::default();
    for r in rows {
        if (answered(r) || timeout(r)) && (agent == ALL || r.agent == agent) {
            rate.den += 1;
            rate.num += usize::from(timeout(r));
        }
    }
    rate
}
