//! # faultbench-judge
//!
//! Judges for faultbench runs:
//!
//! - [`RubricJudge`]: deterministic and model-free; scores `assert-` axes mechanically and
//!   `must`/`bonus` axes from the diagnosis' fields and words (synonyms, device aliases,
//!   negation, intentional policies). Fast enough to re-judge thousands of runs per second.
//! - [`LlmJudge`]: three independent judgements by a chat model (outcome per
//!   axis, fix, reasoning on the trace digest), validated JSON with one repair retry, cached on
//!   disk.
//! - [`release`]: reads run records in the public release's `result.json` format, with the
//!   judge breakdown they carry, so judges can be compared on real runs.
//! - [`saved`]: saved runs of either format, for re-judging without re-running agents.
//! - [`agree`]: per-axis and per-score agreement between two judges.

#![warn(missing_docs)]

pub mod agree;
pub mod llm;
pub mod registry;
pub mod release;
pub mod rubric;
pub mod saved;

pub use llm::LlmJudge;
#[allow(deprecated)]
pub use rubric::{RubricConfig, RubricJudge, RubricOptions};
