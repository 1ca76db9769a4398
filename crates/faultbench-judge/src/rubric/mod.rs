//! The rubric judge: a deterministic, model-free judge that scores a diagnosis from its fields
//! and its words.
//!
//! # Rules
//!
//! 1. **`assert-` axes** are mechanical and shared with every judge
//!    ([`check_assertion`]): the verdict, the device list, substring matching as in the release.
//! 2. **`must-identify-device: D`** passes when the diagnosis blames `D` under any spelling of
//!    the name ([`device_key`]: `R1` = `r1` = `router1`): `D` is in `faulty_devices`, or the
//!    list is empty and the text blames `D` in a fault clause. A diagnosis that reports no
//!    fault (`is_anomaly: false`) identifies no device.
//! 3. **Other `must`/`bonus` axes** are read as slots of interchangeable terms (see
//!    [below](self#how-an-axis-is-matched)): synonyms from a networking lexicon
//!    (`nftables` ~ `iptables` ~ `acl`, `not running` ~ `dead` ~ `killed`), device aliases,
//!    addresses inside prefixes. An axis passes when the weight of the slots found reaches the
//!    threshold (default 60 %) **and** every measurement or address it states in its main text
//!    (`0% loss`, `192.168.1.1`) is reported: evidence is specific.
//! 4. **Negation.** Every clause of the diagnosis is a fault clause, a health clause or neutral
//!    (cue words, flipped by a preceding `not`/`no`/`never`; `rather than X`, `instead of X`,
//!    `…, not X`, `rules out X`, `distinguished from X` clear `X`). A term the axis needs as a
//!    fault (`ospfd … down`) does not count where the diagnosis clears it (`OSPF is healthy`,
//!    `not the cause`), and a term the axis needs as health (`links are UP`) does not count
//!    where the diagnosis blames it.
//! 5. **No fault, no blame.** When the diagnosis says `is_anomaly: false`, required axes and
//!    fault-reading bonus axes fail: it identified nothing. Health-reading bonus axes
//!    (`bonus-rules-out-…`, `bonus-notes-baseline-healthy`, `bonus-exonerates-…`) are judged
//!    on the text.
//! 6. **Right place.** A required axis that names devices outside its health clauses (e.g.
//!    `must-identify-affected-link: router1<->router2`) fails when the diagnosis blames none of
//!    them: the right words about the wrong device do not identify the fault.
//! 7. **Intentional policies.** A diagnosis that blames a documented intentional policy
//!    ([`IntendedPolicy`], read from ground truths by [`policies_in`], or given in a [`PolicyBook`])
//!    fails every health-reading axis: it has not seen the healthy baseline.
//! 8. **Fix** (only when the scenario has a `[FIX]`): the first sentence of the fix is required,
//!    the rest is optional detail, clauses saying what *not* to change are skipped; the share
//!    found snaps to {0, 0.5, 1} (≥ 75 % → 1, ≥ 40 % → 0.5). It is 0 when the diagnosis blames
//!    none of the devices the fix names, or reports no fault.
//! 9. **Reasoning** is not judged (`None`): word matching cannot tell grounded reasoning from
//!    confident prose. Use the LLM judge for it.
//! 10. **Length.** Only the first [`MAX_JUDGED_BYTES`] (64 KiB) of `diagnosis_text` are read —
//!     the release's longest diagnosis is about 3 KB — and a cut is recorded in
//!     [`Scores::truncated_from`] and `error`. The analysis is linear in the text's length.
//!
//! # How an axis is matched
//!
//! The axis argument (or, without one, the words of its slug) is cut into slots: lexicon
//! concepts, devices, IPv4 addresses/prefixes, interfaces and numbers (exact), and other words
//! (stemmed). Words the rubric uses about itself (`identify`, `notes`, `explicitly`) and
//! function words are dropped; very common words (`traffic`, `routing`, `config`) weigh ½,
//! identifiers 2. Bracketed text is optional detail (counted only when found). A spaced ` / `
//! separates alternatives. Each slot keeps the polarity of the axis clause it came from.
//!
//! ```
//! use faultbench_core::{Diagnosis, ScenarioSpec};
//! use faultbench_judge::RubricJudge;
//!
//! # let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../faultbench-core/tests/data/minimal.txt")).unwrap();
//! let scenario = ScenarioSpec::parse(&text)?;
//! let answer = Diagnosis::parse("=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1\n\
//!     diagnosis_text:\nThe OSPF daemon on router1 was killed, so its routes were withdrawn.\n=== END ===")?;
//! let scores = RubricJudge::new().score(&scenario, &answer);
//! assert!(scores.is_correct(), "{scores:#?}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod axis;
mod compile;
mod devices;
mod lexicon;
mod policy;
mod text;

pub use devices::{Inventory, device_key, looks_like_device};
#[allow(deprecated)]
pub use policy::{IntendedPolicy, Policy, PolicyBook, policies_in};
pub use text::{Doc, Polarity, stem};

use compile::{AxisRule, Compiled};
use devices::stance;
use faultbench_core::Diagnosis;
use faultbench_core::judge::{
    AxisVerdict, Judge, JudgeError, JudgeInput, OutcomeRule, Scores, check_assertion, snap_fix,
};
use faultbench_core::scenario::{Assertion, AxisKind, Scenario, ScoringAxis};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The former name of [`RubricOptions`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `RubricOptions`; the old name goes in the next release")]
pub type RubricConfig = RubricOptions;

/// Settings of the rubric judge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RubricOptions {
    /// Share of an axis' weighted slots that must be found for it to pass.
    pub threshold: f64,
    /// How required and bonus pass rates combine (the release's rule by default).
    pub rule: OutcomeRule,
}

impl Default for RubricOptions {
    fn default() -> Self {
        RubricOptions {
            threshold: 0.6,
            rule: OutcomeRule::Release,
        }
    }
}

/// Most bytes of `diagnosis_text` the rubric reads (see rule 10 of the module docs). An answer
/// an external agent prints may be megabytes; a diagnosis worth reading is not.
pub const MAX_JUDGED_BYTES: usize = 64 * 1024;

/// The diagnosis as judged: its text cut at [`MAX_JUDGED_BYTES`] (on a character boundary),
/// and the full length when it was cut.
fn judged_part(d: &Diagnosis) -> (std::borrow::Cow<'_, Diagnosis>, Option<u64>) {
    if d.text.len() <= MAX_JUDGED_BYTES {
        return (std::borrow::Cow::Borrowed(d), None);
    }
    let mut cut = MAX_JUDGED_BYTES;
    while !d.text.is_char_boundary(cut) {
        cut -= 1;
    }
    let short = Diagnosis {
        text: d.text[..cut].to_string(),
        ..d.clone()
    };
    (std::borrow::Cow::Owned(short), Some(d.text.len() as u64))
}

/// Compiled scenarios kept at most (the cache is cleared when it grows past this).
const CACHE_LIMIT: usize = 4096;

/// The deterministic judge. See the [module docs](self) for its rules.
///
/// Scenarios are compiled once (inventory, policies, axis requirements) and cached inside the
/// judge, so judging many runs of the same scenario costs only the per-diagnosis work.
#[derive(Debug, Default)]
pub struct RubricJudge {
    config: RubricOptions,
    policies: PolicyBook,
    compiled: Mutex<HashMap<String, Arc<Compiled>>>,
}

impl Clone for RubricJudge {
    fn clone(&self) -> Self {
        RubricJudge {
            config: self.config,
            policies: self.policies.clone(),
            compiled: Mutex::default(),
        }
    }
}

impl RubricJudge {
    /// A rubric judge with default settings and no extra policies.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the settings.
    pub fn with_config(mut self, config: RubricOptions) -> Self {
        self.config = config;
        self
    }

    /// Adds documented intentional policies (per topology) on top of those each scenario's
    /// ground truth documents.
    pub fn with_policies(mut self, policies: PolicyBook) -> Self {
        self.policies = policies;
        self
    }

    /// The settings.
    pub fn config(&self) -> &RubricOptions {
        &self.config
    }

    fn compiled(&self, scenario: &dyn Scenario) -> Arc<Compiled> {
        let key = compile::key_of(scenario);
        if let Some(c) = self.compiled.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return c;
        }
        let c = Arc::new(Compiled::new(scenario));
        if let Ok(mut m) = self.compiled.lock() {
            if m.len() >= CACHE_LIMIT {
                m.clear();
            }
            m.insert(key, c.clone());
        }
        c
    }

    /// Scores one diagnosis (synchronously; the [`Judge`] impl calls this).
    pub fn score(&self, scenario: &dyn Scenario, diagnosis: &Diagnosis) -> Scores {
        let compiled = self.compiled(scenario);
        let (judged, truncated_from) = judged_part(diagnosis);
        let diagnosis: &Diagnosis = &judged;
        let ctx = Ctx::new(self, &compiled, scenario, diagnosis);
        let mut scores = Scores::new("rubric");
        for (axis, rule) in scenario.scoring_axes().iter().zip(&compiled.axes) {
            let verdict = match rule {
                AxisRule::Skip => continue,
                AxisRule::Assert => assert_verdict(axis, diagnosis),
                AxisRule::Device(dev) => ctx.device_verdict(axis, dev.as_deref()),
                AxisRule::Content {
                    req,
                    required,
                    health,
                    default,
                } => ctx.content_verdict(axis, req, *required, *health, *default),
            };
            scores.push_axis(verdict);
        }
        scores.finish(self.config.rule);
        if let Some(req) = &compiled.fix {
            let (value, why) = ctx.fix_score(req);
            scores.fix = Some(value);
            scores
                .per_axis
                .push(AxisVerdict::graded("[FIX]", AxisKind::Fix, value, why));
        }
        if diagnosis.text.trim().is_empty() {
            scores.error = Some("empty diagnosis_text".into());
        }
        if let Some(n) = truncated_from {
            scores.truncated_from = Some(n);
            scores.error = Some(format!(
                "diagnosis_text is {n} bytes; the rubric judged its first {MAX_JUDGED_BYTES}"
            ));
        }
        scores
    }
}

#[async_trait::async_trait]
impl Judge for RubricJudge {
    fn name(&self) -> &str {
        "rubric"
    }

    /// `rubric-` and a hash of the rubric's sources (rules and lexicon) and its settings: any
    /// change to how it scores is a new version.
    fn prompt_version(&self) -> Option<String> {
        Some(self.version())
    }

    /// Scores one diagnosis; the rubric spends nothing (zero tokens, $0).
    async fn judge(&self, input: &JudgeInput<'_>) -> Result<Scores, JudgeError> {
        Ok(self
            .score(input.scenario, input.diagnosis)
            .with_spend(faultbench_core::Usage::default(), Some(0.0)))
    }
}

/// The rubric's own sources: its rules and lexicon. Their text is its version.
const SOURCES: [&str; 7] = [
    include_str!("mod.rs"),
    include_str!("axis.rs"),
    include_str!("compile.rs"),
    include_str!("devices.rs"),
    include_str!("lexicon.rs"),
    include_str!("policy.rs"),
    include_str!("text.rs"),
];

impl RubricJudge {
    /// The rubric's version: a hash of its sources and settings (threshold, combining rule).
    pub fn version(&self) -> String {
        let settings = format!("{:?}", self.config);
        let mut parts: Vec<&[u8]> = SOURCES.iter().map(|s| s.as_bytes()).collect();
        parts.push(settings.as_bytes());
        format!("rubric-{}", faultbench_core::identity::content_hash(&parts))
    }
}

fn assert_verdict(axis: &ScoringAxis, d: &Diagnosis) -> AxisVerdict {
    let a = axis
        .assertion()
        .unwrap_or(Assertion::Unknown(axis.raw.clone()));
    let pass = check_assertion(&a, d);
    let why = match (&a, pass) {
        (Assertion::NoAnomaly, _) => format!("is_anomaly is {:?} (want false)", d.is_anomaly),
        (Assertion::NoFaultyDevices, _) => {
            format!("faulty_devices {:?} (want none)", d.faulty_devices)
        }
        (Assertion::Identifies(x), true) => format!("culprit `{x}` is listed"),
        (Assertion::Identifies(x), false) => format!("culprit `{x}` is not listed"),
        (Assertion::NotIdentifies(x), true) => format!("decoy `{x}` is not listed"),
        (Assertion::NotIdentifies(x), false) => format!("decoy `{x}` is listed"),
        (Assertion::Unknown(s), _) => format!("unknown assertion `{s}` fails"),
    };
    AxisVerdict::new(axis, pass, why)
}

/// Everything computed once per diagnosis.
struct Ctx<'a> {
    judge: &'a RubricJudge,
    compiled: &'a Compiled,
    diagnosis: &'a Diagnosis,
    doc: Doc,
    blamed_policy: Option<IntendedPolicy>,
}

impl<'a> Ctx<'a> {
    fn new(
        judge: &'a RubricJudge,
        compiled: &'a Compiled,
        scenario: &dyn Scenario,
        diagnosis: &'a Diagnosis,
    ) -> Self {
        let doc = Doc::new(&diagnosis.text);
        let blamed_policy = compiled
            .policies
            .iter()
            .chain(judge.policies.for_topology(scenario.topology()))
            .find(|p| p.blamed_by(diagnosis, &doc))
            .cloned();
        Ctx {
            judge,
            compiled,
            diagnosis,
            doc,
            blamed_policy,
        }
    }

    fn says_healthy(&self) -> bool {
        self.diagnosis.is_anomaly == Some(false)
    }

    fn blamed_names(&self) -> String {
        if self.diagnosis.faulty_devices.is_empty() {
            "no device".into()
        } else {
            self.diagnosis.faulty_devices.join(", ")
        }
    }

    /// The devices of `devices` the diagnosis blames none of, as a rationale; `None` if it
    /// blames one of them (or there are none).
    fn misplaced(&self, devices: &[String]) -> Option<String> {
        if devices.is_empty()
            || devices
                .iter()
                .any(|k| stance(k, self.diagnosis, &self.doc).blamed(self.diagnosis))
        {
            return None;
        }
        let named: Vec<String> = devices.iter().map(|k| self.compiled.name(k)).collect();
        Some(named.join(", "))
    }

    fn content_verdict(
        &self,
        axis: &ScoringAxis,
        req: &axis::Requirement,
        required: bool,
        health: bool,
        default: Polarity,
    ) -> AxisVerdict {
        if !health && self.says_healthy() && (required || default == Polarity::Fault) {
            return AxisVerdict::new(axis, false, "the diagnosis reports no fault");
        }
        if health && let Some(p) = &self.blamed_policy {
            return AxisVerdict::new(
                axis,
                false,
                format!("blames a documented intentional policy ({})", p.summary()),
            );
        }
        if req.is_empty() {
            return AxisVerdict::new(axis, false, "the axis has no content the rubric can match");
        }
        if required && let Some(named) = self.misplaced(&req.blame_devices()) {
            return AxisVerdict::new(
                axis,
                false,
                format!(
                    "the axis is about {named} but the diagnosis blames {}",
                    self.blamed_names()
                ),
            );
        }
        let cov = req.cover(&self.doc);
        let pass = cov.passable() && cov.score >= self.judge.config.threshold - 1e-9;
        let mut why = format!("{:.0}% of the axis found", cov.score * 100.0);
        if !cov.passable() {
            why = format!("{} not reported; {why}", cov.essential_missed.join(", "));
        }
        if !cov.found.is_empty() {
            why.push_str(&format!(" ({})", cov.found.join(", ")));
        }
        if !cov.missed.is_empty() {
            why.push_str(&format!("; missing: {}", cov.missed.join(", ")));
        }
        AxisVerdict::new(axis, pass, why)
    }

    fn device_verdict(&self, axis: &ScoringAxis, dev: Option<&str>) -> AxisVerdict {
        let Some(dev) = dev else {
            return AxisVerdict::new(axis, false, "the axis names no device");
        };
        if self.says_healthy() {
            return AxisVerdict::new(axis, false, "the diagnosis reports no fault");
        }
        let s = stance(&Compiled::device_key(dev), self.diagnosis, &self.doc);
        let (pass, why) = if s.listed {
            (true, format!("`{dev}` is among the faulty devices"))
        } else if s.blamed(self.diagnosis) {
            (true, format!("the text blames `{dev}`"))
        } else if s.mentioned {
            (
                false,
                format!(
                    "`{dev}` is mentioned but the diagnosis blames {}",
                    self.blamed_names()
                ),
            )
        } else {
            (
                false,
                format!(
                    "`{dev}` is never named; the diagnosis blames {}",
                    self.blamed_names()
                ),
            )
        };
        AxisVerdict::new(axis, pass, why)
    }

    fn fix_score(&self, req: &axis::Requirement) -> (f64, String) {
        if self.says_healthy() {
            return (
                0.0,
                "the diagnosis reports no fault, so proposes no fix".into(),
            );
        }
        if let Some(named) = self.misplaced(&req.blame_devices()) {
            return (
                0.0,
                format!(
                    "the fix is on {named}; the diagnosis blames {}",
                    self.blamed_names()
                ),
            );
        }
        let cov = req.cover(&self.doc);
        let value = if cov.score >= 0.75 {
            1.0
        } else if cov.score >= 0.4 {
            0.5
        } else {
            0.0
        };
        let mut why = format!("{:.0}% of the expected fix found", cov.score * 100.0);
        if !cov.missed.is_empty() {
            why.push_str(&format!("; missing: {}", cov.missed.join(", ")));
        }
        (snap_fix(value), why)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use faultbench_core::ScenarioSpec;

    fn scenario() -> ScenarioSpec {
        let text = include_str!("../../../faultbench-core/tests/data/minimal.txt");
        ScenarioSpec::parse(text).unwrap()
    }

    fn answer(text: String) -> Diagnosis {
        Diagnosis {
            is_anomaly: Some(true),
            faulty_devices: vec!["r1".into()],
            text,
            parsed_ok: true,
        }
    }

    /// Issue 19, finding 5: a long answer is judged on its first 64 KiB, and says so; what
    /// lies beyond the cut does not count.
    #[test]
    fn long_answers_are_cut_and_say_so() {
        let judge = RubricJudge::new();
        let good = "The OSPF daemon on router1 was killed, so its routes were withdrawn. ";
        let short = judge.score(&scenario(), &answer(good.to_string()));
        assert_eq!(short.truncated_from, None);
        let long_text = format!("{}{}", "é".repeat(40_000), good);
        assert!(long_text.len() > MAX_JUDGED_BYTES);
        let long = judge.score(&scenario(), &answer(long_text.clone()));
        assert_eq!(long.truncated_from, Some(long_text.len() as u64));
        assert!(
            long.error.as_deref().unwrap().contains("first 65536"),
            "{long:?}"
        );
        assert!(
            long.outcome < short.outcome,
            "the part after the cut is not read"
        );
        // Below the cap nothing changes.
        let padded = format!("{}{good}", "x ".repeat(1000));
        assert_eq!(
            judge.score(&scenario(), &answer(padded)).truncated_from,
            None
        );
        // The record's JSON carries the field only when set.
        let v = serde_json::to_value(&short).unwrap();
        assert!(v.get("truncated_from").is_none());
        assert_eq!(
            serde_json::to_value(&long).unwrap()["truncated_from"],
            long_text.len()
        );
    }
}
