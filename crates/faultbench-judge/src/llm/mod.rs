//! The LLM judge: three independent judgements per run by a chat model, with prompts of our own
//! ([`prompts`]), validated JSON answers ([`answer`]) and an on-disk cache ([`VerdictCache`]).
//!
//! - **Outcome**: one call grades every `must` and `bonus` axis (pass/fail and a one-line
//!   reason each); `assert-` axes are mechanical ([`check_assertion`]), as in the release. The
//!   counts combine with the release's formula ([`OutcomeRule::Release`], configurable).
//! - **Fix** ∈ {0, 0.5, 1}: one call, only when the scenario has a `[FIX]`.
//! - **Reasoning**: one call scores grounding, causality and coverage (0–10) after a short
//!   analysis, on the run's trace digest (`trace` mode) or, without one, on the write-up alone
//!   (`writeup` mode).
//!
//! The three calls run concurrently; the tokens they spend on one run and their price come
//! back with the scores ([`Scores::usage`], [`Scores::cost_usd`]; cache hits cost nothing). An
//! answer that fails validation gets **one** repair request (the problem is quoted back to the
//! model); a second bad answer, or a model that
//! cannot be reached, is a [`JudgeError`], and the pipeline records the run as `judge_failed`
//! with its diagnosis kept, ready to re-judge. An empty diagnosis text is scored 0 without a
//! call, as the release does.
//!
//! ```
//! use faultbench_core::{Diagnosis, ScenarioSpec};
//! use faultbench_core::judge::{Judge, JudgeInput};
//! use faultbench_judge::llm::LlmJudge;
//! use faultbench_llm::{ChatResponse, ScriptedModel};
//! use std::sync::Arc;
//!
//! # let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../faultbench-core/tests/data/minimal.txt")).unwrap();
//! let scenario = ScenarioSpec::parse(&text)?;
//! let answer = Diagnosis::parse("=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1\n\
//!     diagnosis_text:\nospfd died on r1.\n=== END ===")?;
//! // A scripted model answering by judgement kind, for the example.
//! let model = ScriptedModel::from_fn("judge", |req| {
//!     let system = req.system.as_deref().unwrap_or("");
//!     Ok(ChatResponse::text(if system.contains("rubric items") {
//!         r#"{"axes": [{"id": 1, "pass": true, "reason": "names ospfd"}, {"id": 2, "pass": false, "reason": "no route detail"}]}"#
//!     } else if system.contains("remedy") {
//!         r#"{"score": 1, "reason": "restart ospfd on r1"}"#
//!     } else {
//!         r#"{"analysis": "short but right", "grounding": 6, "causality": 7, "coverage": 5}"#
//!     }))
//! });
//! let judge = LlmJudge::new(Arc::new(model));
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let s = judge.judge(&JudgeInput::new(&scenario, &answer)).await.unwrap();
//! assert_eq!(s.fix, Some(1.0));
//! assert!((s.reasoning.unwrap() - 0.6).abs() < 1e-9);
//! # });
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod answer;
pub mod cache;
pub mod estimate;
pub mod prompts;

pub use answer::{FixAnswer, ItemVerdict, OutcomeAnswer, ReasoningAnswer};
pub use cache::{VerdictCache, cache_key};
pub use prompts::PROMPT_VERSION;

use faultbench_core::judge::{
    AxisVerdict, Judge, JudgeError, JudgeInput, OutcomeRule, ReasoningDims, Scores, check_assertion,
};
use faultbench_core::scenario::{Assertion, AxisKind, Scenario};
use faultbench_core::{Diagnosis, Usage};
use faultbench_llm::{ChatModel, ChatRequest, LlmError, Message, PriceTable};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The judge model the paper used.
pub const DEFAULT_MODEL: &str = "gpt-5-mini";

/// The three-judgement LLM judge.
pub struct LlmJudge {
    model: Arc<dyn ChatModel>,
    cache: Option<VerdictCache>,
    rule: OutcomeRule,
    name: String,
    usage: Mutex<Usage>,
    calls: AtomicU64,
    prices: PriceTable,
}

impl LlmJudge {
    /// A judge on `model`, without a cache, combining with the release's rule.
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        let name = format!("llm:{}", model.model());
        LlmJudge {
            model,
            cache: None,
            rule: OutcomeRule::Release,
            name,
            usage: Mutex::new(Usage::default()),
            calls: AtomicU64::new(0),
            prices: PriceTable::defaults(),
        }
    }

    /// Prices the judge's spend with `prices` (default: the built-in table).
    pub fn with_prices(mut self, prices: PriceTable) -> Self {
        self.prices = prices;
        self
    }

    /// A judge on the model named `model`, with the provider found by
    /// [`LlmOptions::discover`](faultbench_llm::LlmOptions::discover) (environment variables such
    /// as `OPENAI_API_KEY`/`OPENAI_BASE_URL`, or the TOML file given).
    pub fn connect(model: &str, config_file: Option<&std::path::Path>) -> Result<Self, LlmError> {
        let config = faultbench_llm::LlmOptions::discover(config_file)?;
        Ok(LlmJudge::new(config.connect(model)?).with_prices(config.prices()?))
    }

    /// Reads and writes verdicts in `cache`.
    pub fn with_cache(mut self, cache: VerdictCache) -> Self {
        self.cache = Some(cache);
        self
    }

    /// Combines pass rates with `rule` (cached verdicts stay valid across rules).
    pub fn with_rule(mut self, rule: OutcomeRule) -> Self {
        self.rule = rule;
        self
    }

    /// The cache, if any.
    pub fn cache(&self) -> Option<&VerdictCache> {
        self.cache.as_ref()
    }

    /// Tokens spent by this judge so far, over every run (cache hits cost nothing).
    pub fn usage(&self) -> Usage {
        self.usage.lock().map(|u| *u).unwrap_or_default()
    }

    /// Model calls made so far (including repair requests).
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }

    /// One model call; its tokens are added to the judge's total and to this run's `spent`.
    async fn chat(&self, req: &ChatRequest, spent: &Mutex<Usage>) -> Result<String, JudgeError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let r = self
            .model
            .chat(req)
            .await
            .map_err(|e: LlmError| JudgeError::Unavailable(Box::new(e)))?;
        for total in [&self.usage, spent] {
            if let Ok(mut u) = total.lock() {
                *u += r.usage;
            }
        }
        Ok(r.text)
    }

    /// Asks one judgement, with one repair attempt, through the cache.
    async fn ask<T, F>(
        &self,
        kind: &str,
        key: &str,
        system: &str,
        user: String,
        parse: F,
        spent: &Mutex<Usage>,
    ) -> Result<T, JudgeError>
    where
        T: Serialize + DeserializeOwned,
        F: Fn(&str) -> Result<T, answer::AnswerError>,
    {
        if let Some(hit) = self.cache.as_ref().and_then(|c| c.get::<T>(key)) {
            return Ok(hit);
        }
        let mut req = ChatRequest::new(self.model.model(), user.clone())
            .with_system(system)
            .json();
        let first = self.chat(&req, spent).await?;
        let answer = match parse(&first) {
            Ok(a) => a,
            Err(problem) => {
                req.messages = vec![
                    Message::user(user),
                    Message::Assistant {
                        text: first,
                        tool_calls: Vec::new(),
                    },
                    Message::user(prompts::repair_message(&problem.0)),
                ];
                let second = self.chat(&req, spent).await?;
                parse(&second).map_err(|p| {
                    JudgeError::InvalidAnswer(format!(
                        "{kind} judgement: {p} (first answer: {problem}; one repair attempt made)"
                    ))
                })?
            }
        };
        if let Some(c) = &self.cache {
            // A cache that cannot be written costs money later, not correctness now.
            let _ = c.put(key, &answer);
        }
        Ok(answer)
    }
}

fn empty_scores(name: &str, scenario: &dyn Scenario) -> Scores {
    let mut s = Scores::new(name);
    for axis in scenario.scoring_axes() {
        if axis.kind() != AxisKind::Reasoning {
            s.push_axis(AxisVerdict::new(axis, false, "empty diagnosis_text"));
        }
    }
    // Every axis failed: 0 under either rule.
    s.finish(OutcomeRule::Release);
    s.error = Some("empty diagnosis_text".into());
    s
}

#[async_trait::async_trait]
impl Judge for LlmJudge {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> Option<&str> {
        Some(self.model.model())
    }

    fn prompt_version(&self) -> Option<String> {
        Some(prompts::prompt_version())
    }

    async fn judge(&self, input: &JudgeInput<'_>) -> Result<Scores, JudgeError> {
        let scenario = input.scenario;
        let d: &Diagnosis = input.diagnosis;
        if d.text.trim().is_empty() {
            return Ok(empty_scores(&self.name, scenario).with_spend(Usage::default(), Some(0.0)));
        }
        let spent = Mutex::new(Usage::default());
        let spent = &spent;
        let text = scenario.spec().to_text();
        let model = self.model.model();
        let key = |kind: &str| cache_key(kind, &text, d, input.trace_digest, model, PROMPT_VERSION);
        let gt = scenario.ground_truth();
        let items: Vec<&str> = scenario
            .scoring_axes()
            .iter()
            .filter(|a| matches!(a.kind(), AxisKind::Must | AxisKind::Bonus))
            .map(|a| a.raw.as_str())
            .collect();
        let n = items.len();
        let outcome = async {
            if n == 0 {
                return Ok(OutcomeAnswer { items: Vec::new() });
            }
            self.ask(
                "outcome",
                &key("outcome"),
                prompts::OUTCOME_SYSTEM,
                prompts::outcome_user(gt, d, &items),
                |r| answer::parse_outcome(r, n),
                spent,
            )
            .await
        };
        let fix = async {
            match scenario.fix() {
                None => Ok(None),
                Some(f) => self
                    .ask(
                        "fix",
                        &key("fix"),
                        prompts::FIX_SYSTEM,
                        prompts::fix_user(f, d),
                        answer::parse_fix,
                        spent,
                    )
                    .await
                    .map(Some),
            }
        };
        let (reasoning_msg, mode) = prompts::reasoning_user(gt, d, input.trace_digest);
        let reasoning_key = key("reasoning");
        let reasoning = self.ask(
            "reasoning",
            &reasoning_key,
            prompts::REASONING_SYSTEM,
            reasoning_msg,
            answer::parse_reasoning,
            spent,
        );
        let (outcome, fix, reasoning) = tokio::join!(outcome, fix, reasoning);
        let (outcome, fix, reasoning) = (outcome?, fix?, reasoning?);

        let mut s = Scores::new(self.name.clone());
        let mut next = outcome.items.iter();
        for axis in scenario.scoring_axes() {
            let v = match axis.kind() {
                AxisKind::Reasoning | AxisKind::Fix => continue,
                AxisKind::Assert => {
                    let a = axis
                        .assertion()
                        .unwrap_or(Assertion::Unknown(axis.raw.clone()));
                    AxisVerdict::new(
                        axis,
                        check_assertion(&a, d),
                        "checked on the parsed verdict",
                    )
                }
                AxisKind::Must | AxisKind::Bonus => match next.next() {
                    Some(item) => AxisVerdict::new(axis, item.pass, item.reason.clone()),
                    None => AxisVerdict::new(axis, false, "not graded"),
                },
            };
            s.push_axis(v);
        }
        s.finish(self.rule);
        if let Some(f) = fix {
            s.fix = Some(f.score);
            s.per_axis.push(AxisVerdict::graded(
                "[FIX]",
                AxisKind::Fix,
                f.score,
                f.reason,
            ));
        }
        let dims = ReasoningDims {
            grounding: reasoning.grounding,
            causality: reasoning.causality,
            coverage: reasoning.coverage,
        };
        for (name, value) in [
            ("grounding", dims.grounding),
            ("causality", dims.causality),
            ("coverage", dims.coverage),
        ] {
            s.per_axis.push(AxisVerdict::graded(
                format!("reason:{name}"),
                AxisKind::Reasoning,
                value,
                reasoning.analysis.clone(),
            ));
        }
        s.reasoning = Some(dims.score());
        s.reasoning_dims = Some(dims);
        s.reasoning_mode = Some(mode.to_string());
        let usage = spent.lock().map(|u| *u).unwrap_or_default();
        let cost = self.prices.cost(model, &usage);
        Ok(s.with_spend(usage, cost))
    }
}
