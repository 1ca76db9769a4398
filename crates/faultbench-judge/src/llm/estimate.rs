//! What the LLM judge will spend on a run, before the run exists (for `faultbench bench
//! --dry-run`).
//!
//! The judge's input is known up to the agent's answer: its prompts, the scenario's ground
//! truth, fix and rubric items. The answer and the investigation digest are assumed at typical
//! sizes ([`JudgeEstimate`]), text is counted at four characters per token, and each call is
//! assumed to write a fixed number of output tokens (reasoning included).

use super::prompts;
use faultbench_core::Usage;
use faultbench_core::scenario::{AxisKind, Scenario};

/// The assumptions of an estimate.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JudgeEstimate {
    /// Characters of the agent's diagnosis block (150–300 words).
    pub diagnosis_chars: usize,
    /// Characters of the investigation digest the reasoning judgement reads (the digest is
    /// capped at 16,000).
    pub digest_chars: usize,
    /// Output tokens per call, reasoning included.
    pub output_tokens_per_call: u64,
    /// Characters per token.
    pub chars_per_token: usize,
}

impl Default for JudgeEstimate {
    fn default() -> Self {
        JudgeEstimate {
            diagnosis_chars: 1_800,
            digest_chars: 12_000,
            output_tokens_per_call: 800,
            chars_per_token: 4,
        }
    }
}

impl JudgeEstimate {
    /// The estimated usage of judging one run of `scenario` (one call per judgement: outcome
    /// when the scenario has `must`/`bonus` axes, fix when it has a `[FIX]`, reasoning always).
    ///
    /// ```
    /// use faultbench_core::ScenarioSpec;
    /// use faultbench_judge::llm::estimate::JudgeEstimate;
    /// # let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../faultbench-core/tests/data/minimal.txt")).unwrap();
    /// let scenario = ScenarioSpec::parse(&text)?;
    /// let u = JudgeEstimate::default().usage(&scenario);
    /// assert_eq!(u.output_tokens, 3 * 800, "outcome, fix and reasoning");
    /// assert!(u.input_tokens > (12_000 + 3 * 1_800) / 4);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn usage(&self, scenario: &dyn Scenario) -> Usage {
        let gt = scenario.ground_truth().len();
        let items: usize = scenario
            .scoring_axes()
            .iter()
            .filter(|a| matches!(a.kind(), AxisKind::Must | AxisKind::Bonus))
            .map(|a| a.raw.len() + 4)
            .sum();
        let d = self.diagnosis_chars;
        let mut chars = Vec::new();
        if items > 0 {
            chars.push(prompts::OUTCOME_SYSTEM.len() + gt + d + items + 60);
        }
        if let Some(fix) = scenario.fix() {
            chars.push(prompts::FIX_SYSTEM.len() + fix.len() + d + 40);
        }
        chars.push(prompts::REASONING_SYSTEM.len() + gt + self.digest_chars + d + 60);
        let per = self.chars_per_token.max(1);
        Usage {
            input_tokens: chars.iter().map(|c| c.div_ceil(per) as u64).sum(),
            output_tokens: chars.len() as u64 * self.output_tokens_per_call,
            ..Default::default()
        }
    }

    /// The assumptions in one line, for printing beside the estimate.
    pub fn describe(&self) -> String {
        format!(
            "one call per judgement (outcome, fix when the scenario has one, reasoning) on the judge's prompts, the scenario's ground truth, fix and rubric items, a {}-character diagnosis and a {}-character investigation digest, at {} characters per token, plus {} output tokens per call",
            self.diagnosis_chars,
            self.digest_chars,
            self.chars_per_token,
            self.output_tokens_per_call
        )
    }
}
