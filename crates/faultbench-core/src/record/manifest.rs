//! The run registry's rows: `MANIFEST.csv`, one line per finished run, with the public
//! release's 19 columns first (so reports read both) and then the judge's spend
//! ([`MANIFEST_EXTRA_COLUMNS`]); values in the release's formats (Python booleans, empty for
//! an absent number).

use serde::{Deserialize, Serialize};

/// One `MANIFEST.csv` row (the public release's columns and formats).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestRow {
    /// `base80`, `cex120`, or a persona layer.
    pub arm: String,
    /// `p1`, `p2`, …
    pub pass: String,
    /// Topology.
    pub topology: String,
    /// Scenario id.
    pub scenario_id: String,
    /// Agent name.
    pub agent: String,
    /// Model.
    pub model: String,
    /// Run status.
    pub status: String,
    /// The agent produced a final text.
    pub submitted: bool,
    /// The verdict (blank when unknown).
    pub is_anomaly: Option<bool>,
    /// Outcome (scored runs only).
    pub outcome_score: Option<f64>,
    /// Fix (scored runs with a `[FIX]` only).
    pub fix_score: Option<f64>,
    /// Reasoning (scored runs only).
    pub reasoning_score: Option<f64>,
    /// Tool calls.
    pub tool_calls: u64,
    /// Uncached input tokens.
    pub in_tokens: u64,
    /// Cache-read input tokens.
    pub cache_read_tokens: u64,
    /// Cache-write input tokens.
    pub cache_write_tokens: u64,
    /// Output tokens.
    pub out_tokens: u64,
    /// Cost in USD.
    pub cost_usd: f64,
    /// Wall time in seconds.
    pub wall_seconds: f64,
    /// The judge's input tokens for this run (ours only; blank when unknown).
    #[serde(default)]
    pub judge_in_tokens: Option<u64>,
    /// The judge's output tokens for this run (ours only; blank when unknown).
    #[serde(default)]
    pub judge_out_tokens: Option<u64>,
    /// The judge's cost for this run in USD (ours only; blank when unknown). `cost_usd` is the
    /// agent's alone, as in the release.
    #[serde(default)]
    pub judge_cost_usd: Option<f64>,
}

/// The public release's `MANIFEST.csv` columns (19), in order.
pub const RELEASE_MANIFEST_HEADER: &str = "arm,pass,topology,scenario_id,agent,model,status,submitted,is_anomaly,outcome_score,fix_score,reasoning_score,tool_calls,in_tokens,cache_read_tokens,cache_write_tokens,out_tokens,cost_usd,wall_seconds";

/// Columns faultbench appends after the release's: the judge's spend per run.
pub const MANIFEST_EXTRA_COLUMNS: [&str; 3] =
    ["judge_in_tokens", "judge_out_tokens", "judge_cost_usd"];

/// The header of the `MANIFEST.csv` faultbench writes: the release's 19 columns, then
/// [`MANIFEST_EXTRA_COLUMNS`]. Readers accept the release's header alone (and ignore
/// columns they do not know after the release's).
pub const MANIFEST_HEADER: &str = "arm,pass,topology,scenario_id,agent,model,status,submitted,is_anomaly,outcome_score,fix_score,reasoning_score,tool_calls,in_tokens,cache_read_tokens,cache_write_tokens,out_tokens,cost_usd,wall_seconds,judge_in_tokens,judge_out_tokens,judge_cost_usd";

fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}

fn opt_num(x: Option<f64>) -> String {
    x.map(|v| v.to_string()).unwrap_or_default()
}

impl ManifestRow {
    /// Every input token of the run (fresh, cache reads, cache writes), saturating: the counts
    /// of a crafted registry must not wrap a sum (or panic in a debug build).
    pub fn total_input_tokens(&self) -> u64 {
        self.in_tokens
            .saturating_add(self.cache_read_tokens)
            .saturating_add(self.cache_write_tokens)
    }

    /// The CSV line (no newline), formatted like the release's registry. Written with the
    /// `csv` crate: a value with a comma, quote or newline is quoted and reads back verbatim.
    ///
    /// Values are not neutralised against spreadsheet formulas here: the registry is data that
    /// programs read (ours, the release's pandas scripts) and must round-trip; `report.csv` is
    /// the export meant for spreadsheets and neutralises its text cells. The only free-text
    /// columns are the agent label and model name, which come from the command line; ids are
    /// validated ([`ScenarioId`](crate::ScenarioId), [`TopologyId`](crate::TopologyId)) and cannot start with a formula character.
    pub fn to_csv(&self) -> String {
        let cells = [
            self.arm.clone(),
            self.pass.clone(),
            self.topology.clone(),
            self.scenario_id.clone(),
            self.agent.clone(),
            self.model.clone(),
            self.status.clone(),
            py_bool(self.submitted).to_string(),
            self.is_anomaly.map(py_bool).unwrap_or("").to_string(),
            opt_num(self.outcome_score),
            opt_num(self.fix_score),
            opt_num(self.reasoning_score),
            self.tool_calls.to_string(),
            self.in_tokens.to_string(),
            self.cache_read_tokens.to_string(),
            self.cache_write_tokens.to_string(),
            self.out_tokens.to_string(),
            self.cost_usd.to_string(),
            self.wall_seconds.to_string(),
            self.judge_in_tokens
                .map(|x| x.to_string())
                .unwrap_or_default(),
            self.judge_out_tokens
                .map(|x| x.to_string())
                .unwrap_or_default(),
            opt_num(self.judge_cost_usd),
        ];
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::Any(b'\n'))
            .from_writer(Vec::new());
        // Writing into a Vec cannot fail.
        let _ = w.write_record(&cells);
        let bytes = w.into_inner().unwrap_or_default();
        let mut line = String::from_utf8(bytes).unwrap_or_default();
        line.pop();
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::Usage;
    use crate::judge::Scores;
    use crate::record::JudgePhase;
    use crate::record::tests::record;
    use std::path::Path;

    #[test]
    fn manifest_row_uses_release_formats() {
        let r = record();
        assert_eq!(
            r.manifest_row().to_csv(),
            "base80,p2,Lab,lab-r1-ospfd-down,external:claude code,m,scored,True,True,0.7499999999999999,,,7,100,0,0,0,0.25,9.5,,,"
        );
        assert_eq!(RELEASE_MANIFEST_HEADER.split(',').count(), 19);
        assert_eq!(
            MANIFEST_HEADER,
            format!(
                "{RELEASE_MANIFEST_HEADER},{}",
                MANIFEST_EXTRA_COLUMNS.join(",")
            )
        );
        let mut judged = r.clone();
        judged.phases.judge = Some(JudgePhase::scored(
            "llm:gpt-5-mini",
            &Scores::new("llm:gpt-5-mini").with_spend(
                Usage {
                    input_tokens: 900,
                    cache_read_tokens: 100,
                    output_tokens: 50,
                    ..Default::default()
                },
                Some(0.0003),
            ),
            5,
        ));
        assert!(
            judged
                .manifest_row()
                .to_csv()
                .ends_with(",0.25,9.5,1000,50,0.0003"),
            "{}",
            judged.manifest_row().to_csv()
        );
        let dir = r.key.dir(Path::new("/R")).unwrap();
        assert_eq!(
            dir,
            Path::new("/R/Lab/base__lab-r1-ospfd-down/external_claude_code/p2")
        );
    }
}
