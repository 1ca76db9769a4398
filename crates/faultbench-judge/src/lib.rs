//! # faultbench-judge
//!
//! Judges for faultbench runs:
//!
//! - [`RubricJudge`]: deterministic and model-free; scores `assert-` axes mechanically and
//!   `must`/`bonus` axes from the diagnosis' fields and words (synonyms, device aliases,
//!   negation, intentional policies). Fast enough to re-judge thousands of runs per second.
//! - [`release`]: reads run records in the public release's `result.json` format, with the
//!   judge breakdown they carry, so judges can be compared on real runs.
//! - [`agree`]: per-axis and per-score agreement between two judges.

#![warn(missing_docs)]

pub mod agree;
pub mod release;
pub mod rubric;

pub use rubric::{RubricConfig, RubricJudge};
