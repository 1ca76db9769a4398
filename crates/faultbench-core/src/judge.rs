//! Judges: score a diagnosis against a scenario's ground truth.
//!
//! Three independent scores, as in the paper:
//! - **Outcome** ∈ \[0, 1\]: 0.7 × the pass rate of the required axes (`assert-…`, `must…`) +
//!   0.3 × the pass rate of the bonus axes. With no bonus axes it is the required rate; with only
//!   bonus axes the bonus rate ([`outcome_score`]).
//! - **Fix** ∈ {0, 0.5, 1}: only for scenarios with a `[FIX]`.
//! - **Reasoning** = (grounding + causality + coverage) / 30.
//!
//! `assert-` axes are mechanical ([`check_assertion`]) and shared by every judge.
//!
//! ```
//! use faultbench_core::judge::{AxisVerdict, Judge, JudgeError, JudgeInput, OutcomeRule, Scores, check_assertion, outcome_score};
//! use faultbench_core::scenario::Scenario;
//!
//! /// Scores only the mechanical axes; everything else fails.
//! struct AssertsOnly;
//! #[async_trait::async_trait]
//! impl Judge for AssertsOnly {
//!     fn name(&self) -> &str { "asserts-only" }
//!     async fn judge(&self, input: &JudgeInput<'_>) -> Result<Scores, JudgeError> {
//!         let mut scores = Scores::new(self.name());
//!         for axis in input.scenario.scoring_axes() {
//!             let pass = axis.assertion().is_some_and(|a| check_assertion(&a, input.diagnosis));
//!             scores.push_axis(AxisVerdict::new(axis, pass, "mechanical"));
//!         }
//!         scores.finish(OutcomeRule::Release);
//!         Ok(scores)
//!     }
//! }
//!
//! # let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/minimal.txt")).unwrap();
//! let scenario = faultbench_core::ScenarioSpec::parse(&text).unwrap();
//! let diagnosis = faultbench_core::Diagnosis::parse(
//!     "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1\ndiagnosis_text:\nx\n=== END ===").unwrap();
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let s = AssertsOnly.judge(&JudgeInput::new(&scenario, &diagnosis)).await.unwrap();
//! // 1 of 2 required axes (the assert) and 0 of 1 bonus axis pass: 0.7 × 0.5 = 0.35.
//! assert!((s.outcome - 0.35).abs() < 1e-9);
//! assert!((outcome_score(1, 2, 0, 1) - 0.35).abs() < 1e-9);
//! # });
//! ```

use crate::agent::Usage;
use crate::diagnosis::Diagnosis;
use crate::scenario::{Assertion, AxisKind, Scenario, ScoringAxis};
use serde::{Deserialize, Serialize};
use std::future::Future;
use std::sync::Arc;

/// Weight of the required axes in the outcome score.
pub const W_REQUIRED: f64 = 0.7;
/// Weight of the bonus axes in the outcome score.
pub const W_BONUS: f64 = 0.3;

/// What a judge is given.
#[derive(Debug, Clone, Copy)]
pub struct JudgeInput<'a> {
    /// The scenario (ground truth, fix, axes).
    pub scenario: &'a dyn Scenario,
    /// The parsed diagnosis.
    pub diagnosis: &'a Diagnosis,
    /// A bounded digest of the investigation (tool calls, outputs, notes); empty when unknown.
    pub trace_digest: &'a str,
}

impl<'a> JudgeInput<'a> {
    /// Input without a trace digest.
    pub fn new(scenario: &'a dyn Scenario, diagnosis: &'a Diagnosis) -> Self {
        JudgeInput {
            scenario,
            diagnosis,
            trace_digest: "",
        }
    }

    /// Adds the trace digest.
    pub fn with_digest(mut self, digest: &'a str) -> Self {
        self.trace_digest = digest;
        self
    }
}

/// One axis' verdict.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AxisVerdict {
    /// The axis line (or `fix`, `reason:grounding`, …).
    pub axis: String,
    /// How it counts: required (`assert`, `must`), `bonus`, `fix` or a reasoning dimension.
    pub kind: AxisKind,
    /// 1.0 pass, 0.0 fail; fix 0/0.5/1; reasoning dims 0–10.
    pub score: f64,
    /// One line of why.
    pub rationale: String,
}

impl AxisVerdict {
    /// A pass/fail verdict on a scoring axis.
    pub fn new(axis: &ScoringAxis, pass: bool, rationale: impl Into<String>) -> Self {
        AxisVerdict {
            axis: axis.raw.clone(),
            kind: axis.kind(),
            score: if pass { 1.0 } else { 0.0 },
            rationale: rationale.into(),
        }
    }

    /// A graded verdict that is not a pass/fail scoring axis: the fix score (`[FIX]`, 0/0.5/1)
    /// or a reasoning dimension (`reason:grounding`, 0–10).
    pub fn graded(
        axis: impl Into<String>,
        kind: AxisKind,
        score: f64,
        rationale: impl Into<String>,
    ) -> Self {
        AxisVerdict {
            axis: axis.into(),
            kind,
            score,
            rationale: rationale.into(),
        }
    }
}

/// The reasoning sub-scores, 0–10 each.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ReasoningDims {
    /// Claims backed by evidence the agent actually gathered.
    pub grounding: f64,
    /// The causal chain from root cause to symptom holds.
    pub causality: f64,
    /// Alternatives and the reported symptom were addressed.
    pub coverage: f64,
}

impl ReasoningDims {
    /// (grounding + causality + coverage) / 30, each clamped to \[0, 10\].
    pub fn score(&self) -> f64 {
        let c = |x: f64| x.clamp(0.0, 10.0);
        (c(self.grounding) + c(self.causality) + c(self.coverage)) / 30.0
    }
}

/// A judge's scores for one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scores {
    /// Outcome ∈ \[0, 1\].
    pub outcome: f64,
    /// Fix ∈ {0, 0.5, 1}, only when the scenario has a `[FIX]`.
    pub fix: Option<f64>,
    /// Reasoning ∈ \[0, 1\], when judged.
    pub reasoning: Option<f64>,
    /// The reasoning sub-scores.
    pub reasoning_dims: Option<ReasoningDims>,
    /// Required axes passed.
    pub must_passed: u32,
    /// Required axes in total.
    pub must_total: u32,
    /// Bonus axes passed.
    pub bonus_passed: u32,
    /// Bonus axes in total.
    pub bonus_total: u32,
    /// Every verdict, in axis order, then fix and reasoning dims.
    pub per_axis: Vec<AxisVerdict>,
    /// The judge that produced these scores (e.g. `rubric`, `llm:gpt-5-mini`).
    pub judge: String,
    /// `trace` or `writeup`: what the reasoning score was judged on.
    pub reasoning_mode: Option<String>,
    /// A problem worth recording that did not stop judging.
    pub error: Option<String>,
    /// Set when the judge read only the beginning of a long diagnosis text: the text's full
    /// length in bytes (the judge's documented cap says how much it read).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncated_from: Option<u64>,
    /// Tokens the judge spent on this run (zero for a deterministic judge or a cache hit;
    /// `None` when not known, e.g. scores read from the public release).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// What the judge spent on this run in USD (`None` when unknown or the model is unpriced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl Scores {
    /// Empty scores from the named judge.
    pub fn new(judge: impl Into<String>) -> Self {
        Scores {
            outcome: 0.0,
            fix: None,
            reasoning: None,
            reasoning_dims: None,
            must_passed: 0,
            must_total: 0,
            bonus_passed: 0,
            bonus_total: 0,
            per_axis: Vec::new(),
            judge: judge.into(),
            reasoning_mode: None,
            error: None,
            truncated_from: None,
            usage: None,
            cost_usd: None,
        }
    }

    /// Records the judge's spend on this run.
    pub fn with_spend(mut self, usage: Usage, cost_usd: Option<f64>) -> Self {
        self.usage = Some(usage);
        self.cost_usd = cost_usd;
        self
    }

    /// Records an axis verdict and updates the pass counters (reasoning-kind axes are kept but
    /// not counted).
    pub fn push_axis(&mut self, v: AxisVerdict) {
        let pass = v.score >= 1.0;
        match v.kind {
            AxisKind::Assert | AxisKind::Must => {
                self.must_total += 1;
                self.must_passed += u32::from(pass);
            }
            AxisKind::Bonus => {
                self.bonus_total += 1;
                self.bonus_passed += u32::from(pass);
            }
            AxisKind::Fix | AxisKind::Reasoning => {}
        }
        self.per_axis.push(v);
    }

    /// Computes `outcome` from the pass counters under `rule` ([`OutcomeRule::Release`] for
    /// the paper's numbers). Every shipped judge ends with it, so the counters and the outcome
    /// never disagree.
    pub fn finish(&mut self, rule: OutcomeRule) {
        self.outcome = rule.score(
            self.must_passed,
            self.must_total,
            self.bonus_passed,
            self.bonus_total,
        );
    }

    /// Whether the diagnosis is counted as correct (outcome ≥ 0.7, i.e. every required axis
    /// passed when there are bonus axes).
    pub fn is_correct(&self) -> bool {
        self.outcome >= 0.7 - 1e-9
    }
}

/// The release's outcome formula: `min(1, Σ fᵢ·wᵢ / Σ wᵢ)` over the pools present, with
/// f = passed/total, w_required = 0.7, w_bonus = 0.3. No axes at all gives 0.
///
/// This is [`OutcomeRule::Release`], the rule behind the paper's numbers. Note that with three or
/// more required axes a diagnosis failing one of them but passing every bonus axis can score
/// above one passing every required axis but no bonus (e.g. 0.7·2/3 + 0.3 = 0.767 > 0.7); the
/// paper's "a correct diagnosis always outranks a wrong one" holds exactly under
/// [`OutcomeRule::Strict`].
pub fn outcome_score(
    must_passed: u32,
    must_total: u32,
    bonus_passed: u32,
    bonus_total: u32,
) -> f64 {
    OutcomeRule::Release.score(must_passed, must_total, bonus_passed, bonus_total)
}

/// How the required and bonus pass rates combine into the outcome score.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeRule {
    /// The public release: the required pool counts by its pass *fraction*.
    #[default]
    Release,
    /// The paper's description: diagnosis correctness is all-or-nothing (every required axis
    /// passes, or correctness is 0), so a correct diagnosis (≥ 0.7) always outranks a wrong one
    /// (≤ 0.3).
    Strict,
}

impl OutcomeRule {
    /// Combines pass counts into an outcome in \[0, 1\].
    pub fn score(
        self,
        must_passed: u32,
        must_total: u32,
        bonus_passed: u32,
        bonus_total: u32,
    ) -> f64 {
        let must_passed = must_passed.min(must_total);
        let bonus_passed = bonus_passed.min(bonus_total);
        let mut num = 0.0;
        let mut den = 0.0;
        if must_total > 0 {
            let f = match self {
                OutcomeRule::Release => f64::from(must_passed) / f64::from(must_total),
                OutcomeRule::Strict => f64::from(u8::from(must_passed == must_total)),
            };
            num += W_REQUIRED * f;
            den += W_REQUIRED;
        }
        if bonus_total > 0 {
            num += W_BONUS * f64::from(bonus_passed) / f64::from(bonus_total);
            den += W_BONUS;
        }
        if den == 0.0 {
            0.0
        } else {
            (num / den).min(1.0)
        }
    }
}

/// Snaps a fix score to {0, 0.5, 1} (≥ 0.75 → 1, ≥ 0.25 → 0.5, else 0).
pub fn snap_fix(x: f64) -> f64 {
    if x >= 0.75 {
        1.0
    } else if x >= 0.25 {
        0.5
    } else {
        0.0
    }
}

/// Evaluates an `assert-` axis on the parsed verdict: `no-anomaly` ⇔ `is_anomaly` is false
/// (unknown fails); `no-faulty-devices` ⇔ none blamed; `identifies: d` ⇔ `d` is one of the
/// blamed devices; `not-identifies: d` ⇔ it is not. Unknown assertions fail.
///
/// A blamed entry names `d` when, lowercased, it equals `d` or starts with `d` followed by a
/// character that cannot be part of a device name (`r1:eth0`, `r1(eth1)`). The release matched
/// `d` as a substring of the joined list instead, so `r1` also matched `r12`; with topologies
/// that have both (Kath5's r1 and r12) that rule gives wrong verdicts, so we do not copy it. On
/// the release's 80 recorded runs both rules give the same verdicts.
pub fn check_assertion(a: &Assertion, d: &Diagnosis) -> bool {
    let names = |dev: &str| {
        let dev = dev.to_lowercase();
        d.faulty_devices.iter().any(|entry| {
            let e = entry.to_lowercase();
            e == dev
                || e.strip_prefix(dev.as_str()).is_some_and(|rest| {
                    rest.chars()
                        .next()
                        .is_some_and(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
                })
        })
    };
    match a {
        Assertion::NoAnomaly => d.is_anomaly == Some(false),
        Assertion::NoFaultyDevices => d.faulty_devices.is_empty(),
        Assertion::Identifies(dev) => !dev.is_empty() && names(dev),
        Assertion::NotIdentifies(dev) => dev.is_empty() || !names(dev),
        Assertion::Unknown(_) => false,
    }
}

/// Any error a judge passes on as the cause of a [`JudgeError`].
pub type BoxError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why a judge could not score a run (the run keeps its diagnosis and gets `judge_failed`).
///
/// The cause stays reachable through [`std::error::Error::source`] (e.g. the model client's
/// error, to tell an HTTP 503 from a refused key); a plain message converts too:
/// `JudgeError::Unavailable("HTTP 503 three times".into())`.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// The judge model could not be reached or kept failing.
    #[error("judge unavailable: {0}")]
    Unavailable(#[source] BoxError),
    /// The judge answered, but not in the required shape, even after a repair attempt.
    #[error("judge answer invalid: {0}")]
    InvalidAnswer(String),
    /// A user judge's own failure.
    #[error("judge failed: {0}")]
    Failed(#[from] BoxError),
}

/// Scores diagnoses.
#[async_trait::async_trait]
pub trait Judge: Send + Sync {
    /// Short name recorded with the scores (`rubric`, `llm`, …).
    fn name(&self) -> &str;

    /// The judge's model, when it uses one.
    fn model(&self) -> Option<&str> {
        None
    }

    /// A short version of the judge's prompts or rules, recorded in a runs root's identity so
    /// that a changed judge is a changed configuration.
    fn prompt_version(&self) -> Option<String> {
        None
    }

    /// Its name, model and prompt version in one value (what records and a runs root's
    /// identity hold). The default collects the three methods above.
    fn profile(&self) -> crate::profile::Profile {
        crate::profile::Profile::of(self.name(), self.model(), self.prompt_version())
    }

    /// Scores one diagnosis. The scores carry the judge's own spend for this run
    /// ([`Scores::usage`], [`Scores::cost_usd`]) when the judge knows it.
    async fn judge(&self, input: &JudgeInput<'_>) -> Result<Scores, JudgeError>;
}

#[async_trait::async_trait]
impl<T: Judge + ?Sized> Judge for Arc<T> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn model(&self) -> Option<&str> {
        (**self).model()
    }
    fn prompt_version(&self) -> Option<String> {
        (**self).prompt_version()
    }
    fn profile(&self) -> crate::profile::Profile {
        (**self).profile()
    }
    async fn judge(&self, input: &JudgeInput<'_>) -> Result<Scores, JudgeError> {
        (**self).judge(input).await
    }
}

#[async_trait::async_trait]
impl<T: Judge + ?Sized> Judge for Box<T> {
    fn name(&self) -> &str {
        (**self).name()
    }
    fn model(&self) -> Option<&str> {
        (**self).model()
    }
    fn prompt_version(&self) -> Option<String> {
        (**self).prompt_version()
    }
    fn profile(&self) -> crate::profile::Profile {
        (**self).profile()
    }
    async fn judge(&self, input: &JudgeInput<'_>) -> Result<Scores, JudgeError> {
        (**self).judge(input).await
    }
}

/// What a closure judge is given: the scenario and diagnosis of [`JudgeInput`], owned, so that
/// the closure's future may hold them across awaits.
#[derive(Clone)]
pub struct OwnedJudgeInput {
    /// The scenario, as its spec.
    pub scenario: crate::ScenarioSpec,
    /// The parsed diagnosis.
    pub diagnosis: Diagnosis,
    /// The bounded trace digest (empty when unknown).
    pub trace_digest: String,
}

/// A judge made from a closure; see [`judge_fn`].
pub struct FnJudge<F> {
    name: String,
    f: F,
}

/// A judge from a name and an async closure over the run's input:
///
/// ```
/// use faultbench_core::judge::{AxisVerdict, Judge, JudgeInput, OutcomeRule, Scores, judge_fn};
/// use faultbench_core::scenario::Scenario;
///
/// // Passes every axis whose text names a blamed device.
/// let judge = judge_fn("names-a-device", |input| async move {
///     let mut s = Scores::new("names-a-device");
///     for axis in input.scenario.scoring_axes() {
///         let pass = input.diagnosis.faulty_devices.iter().any(|d| axis.raw.contains(d.as_str()));
///         s.push_axis(AxisVerdict::new(axis, pass, "device named"));
///     }
///     s.finish(OutcomeRule::Release);
///     Ok(s)
/// });
/// assert_eq!(judge.name(), "names-a-device");
/// ```
pub fn judge_fn<F, Fut>(name: impl Into<String>, f: F) -> FnJudge<F>
where
    F: Fn(OwnedJudgeInput) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Scores, JudgeError>> + Send,
{
    FnJudge {
        name: name.into(),
        f,
    }
}

#[async_trait::async_trait]
impl<F, Fut> Judge for FnJudge<F>
where
    F: Fn(OwnedJudgeInput) -> Fut + Send + Sync,
    Fut: Future<Output = Result<Scores, JudgeError>> + Send,
{
    fn name(&self) -> &str {
        &self.name
    }
    async fn judge(&self, input: &JudgeInput<'_>) -> Result<Scores, JudgeError> {
        let owned = OwnedJudgeInput {
            scenario: input.scenario.spec().clone(),
            diagnosis: input.diagnosis.clone(),
            trace_digest: input.trace_digest.to_string(),
        };
        (self.f)(owned).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn false_premise_values_match_the_release() {
        // 2 asserts + 1 bonus: {0, 0.3, 0.35, 0.65, 0.7, 1.0}
        assert_eq!(outcome_score(0, 2, 0, 1), 0.0);
        assert!((outcome_score(0, 2, 1, 1) - 0.3).abs() < 1e-12);
        assert!((outcome_score(1, 2, 0, 1) - 0.35).abs() < 1e-12);
        assert!((outcome_score(1, 2, 1, 1) - 0.65).abs() < 1e-12);
        assert!((outcome_score(2, 2, 0, 1) - 0.7).abs() < 1e-12);
        assert_eq!(outcome_score(2, 2, 1, 1), 1.0);
        assert!((outcome_score(3, 4, 0, 0) - 0.75).abs() < 1e-12);
        assert_eq!(outcome_score(0, 0, 1, 2), 0.5);
        assert_eq!(outcome_score(0, 0, 0, 0), 0.0);
    }

    #[test]
    fn assertions() {
        let d = Diagnosis {
            is_anomaly: Some(true),
            faulty_devices: vec!["Router1".into()],
            ..Default::default()
        };
        assert!(check_assertion(
            &Assertion::Identifies("router1".into()),
            &d
        ));
        assert!(!check_assertion(
            &Assertion::NotIdentifies("router1".into()),
            &d
        ));
        assert!(!check_assertion(&Assertion::NoAnomaly, &d));
        let r12 = Diagnosis {
            is_anomaly: Some(true),
            faulty_devices: vec!["r12".into(), "pc1(eth0)".into()],
            ..Default::default()
        };
        assert!(!check_assertion(&Assertion::Identifies("r1".into()), &r12));
        assert!(check_assertion(
            &Assertion::NotIdentifies("r1".into()),
            &r12
        ));
        assert!(check_assertion(&Assertion::Identifies("pc1".into()), &r12));
        let unknown = Diagnosis::default();
        assert!(!check_assertion(&Assertion::NoAnomaly, &unknown));
        assert!(check_assertion(&Assertion::NoFaultyDevices, &unknown));
    }

    proptest! {
        #[test]
        fn outcome_in_range(mp in 0u32..9, mt in 0u32..9, bp in 0u32..6, bt in 0u32..6) {
            for rule in [OutcomeRule::Release, OutcomeRule::Strict] {
                let o = rule.score(mp, mt, bp, bt);
                prop_assert!((0.0..=1.0).contains(&o));
            }
        }

        #[test]
        fn strict_correct_always_outranks_wrong(
            mt in 1u32..8, bt in 0u32..6, mp_wrong in 0u32..8, bp_a in 0u32..6, bp_b in 0u32..6,
        ) {
            let (bp_a, bp_b, mp_wrong) = (bp_a.min(bt), bp_b.min(bt), mp_wrong.min(mt - 1));
            let right = OutcomeRule::Strict.score(mt, mt, bp_a, bt);
            let wrong = OutcomeRule::Strict.score(mp_wrong, mt, bp_b, bt);
            prop_assert!(right >= 0.7 - 1e-12 || bt == 0);
            prop_assert!(right > wrong, "right {} wrong {}", right, wrong);
        }

        #[test]
        fn release_correct_outranks_wrong_at_equal_bonus(
            mt in 1u32..8, bt in 0u32..6, mp_wrong in 0u32..8, bp in 0u32..6,
        ) {
            let (bp, mp_wrong) = (bp.min(bt), mp_wrong.min(mt - 1));
            prop_assert!(outcome_score(mt, mt, bp, bt) > outcome_score(mp_wrong, mt, bp, bt));
        }
    }
}
