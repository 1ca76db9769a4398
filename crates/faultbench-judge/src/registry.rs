//! The built-in judges by name (`--judge rubric|llm`), in a
//! [`faultbench_core::Registry`] a program can extend with its own.
//!
//! ```
//! use faultbench_core::judge::{Scores, judge_fn};
//! use faultbench_judge::registry::{JudgeOptions, builtin_judges};
//! let mut judges = builtin_judges();
//! judges.judge("zero", || judge_fn("zero", |_| async { Ok(Scores::new("zero")) }));
//! assert_eq!(judges.names(), ["llm", "rubric", "zero"]);
//! let rubric = judges.build("rubric", &JudgeOptions::default()).unwrap();
//! assert_eq!(rubric.name(), "rubric");
//! ```

use crate::rubric::PolicyBook;
use crate::{LlmJudge, RubricJudge};
use faultbench_core::judge::Judge;
use faultbench_core::registry::Registry;
use faultbench_llm::LlmOptions;
use std::path::PathBuf;
use std::sync::Arc;

/// What the built-in judges are built with.
#[derive(Debug, Clone, Default)]
pub struct JudgeOptions {
    /// Provider configuration (the LLM judge).
    pub llm: LlmOptions,
    /// The LLM judge's model (default [`crate::llm::DEFAULT_MODEL`]).
    pub model: Option<String>,
    /// Intentional policies (ACLs, NAT, blocked pairs…) the rubric judge knows, so that
    /// blaming them counts as over-diagnosis; learn them from the scenarios to be judged.
    pub policies: PolicyBook,
    /// Where the LLM judge keeps its verdict cache (none: no cache).
    pub cache_dir: Option<PathBuf>,
    /// Build the LLM judge on an offline stand-in of its model (plans and cost estimates: no
    /// key needed, no call made).
    pub offline: bool,
}

/// Judges by name, built with [`JudgeOptions`].
pub type JudgeRegistry = Registry<dyn Judge, JudgeOptions>;

/// `rubric` (deterministic) and `llm` (three LLM judgements, priced, cached).
pub fn builtin_judges() -> JudgeRegistry {
    let mut r = JudgeRegistry::new("judge");
    r.register("rubric", |o: &JudgeOptions| {
        Ok(Arc::new(RubricJudge::new().with_policies(o.policies.clone())) as Arc<dyn Judge>)
    });
    r.register("llm", |o: &JudgeOptions| {
        let model = o.model.as_deref().unwrap_or(crate::llm::DEFAULT_MODEL);
        if o.offline {
            let stand_in = Arc::new(faultbench_llm::ScriptedModel::new(model, Vec::new()));
            return Ok(Arc::new(LlmJudge::new(stand_in)) as Arc<dyn Judge>);
        }
        let mut judge = LlmJudge::new(o.llm.connect(model)?).with_prices(o.llm.prices()?);
        if let Some(dir) = &o.cache_dir {
            let cache = crate::llm::VerdictCache::open(dir).map_err(|e| CacheError {
                dir: dir.clone(),
                source: e,
            })?;
            judge = judge.with_cache(cache);
        }
        Ok(Arc::new(judge) as Arc<dyn Judge>)
    });
    r
}

/// The verdict cache could not be opened.
#[derive(Debug, thiserror::Error)]
#[error("cannot open the verdict cache {}", dir.display())]
pub struct CacheError {
    /// The cache folder.
    pub dir: PathBuf,
    /// The cause.
    #[source]
    pub source: std::io::Error,
}
