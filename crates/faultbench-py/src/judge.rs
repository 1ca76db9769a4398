//! Judges from Python: a Python callable `(scenario, diagnosis) -> Scores | float` as the judge
//! of a run or bench (`PyJudge`), and the built-in judges (`rubric`, `llm`) by name, also
//! callable directly (`faultbench.judge(scenario, diagnosis, judge="rubric")`).

use crate::errors::{ConfigError, chain};
use crate::scenario::PyScenario;
use crate::types::{PyDiagnosis, PyScores};
use faultbench_core::judge::{Judge, JudgeError, JudgeInput, Scores};
use faultbench_judge::registry::{JudgeOptions, builtin_judges};
use faultbench_llm::LlmOptions;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::path::PathBuf;
use std::sync::Arc;

/// A Python callable used as a judge.
pub struct PyJudge {
    f: Arc<Py<PyAny>>,
    name: String,
}

impl PyJudge {
    /// The judge's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Wraps `f`; named by its `name` attribute, else its `__name__`, else `python`.
    pub fn new(f: &Bound<'_, PyAny>) -> PyResult<Self> {
        let name = ["name", "__name__"]
            .iter()
            .find_map(|a| {
                f.getattr_opt(*a)
                    .ok()
                    .flatten()
                    .and_then(|v| v.extract::<String>().ok())
            })
            .unwrap_or_else(|| "python".to_string());
        Ok(PyJudge {
            f: Arc::new(f.clone().unbind()),
            name,
        })
    }
}

/// Calls the judge on this thread (attached).
fn call(
    f: &Py<PyAny>,
    name: &str,
    scenario: PyScenario,
    diagnosis: PyDiagnosis,
) -> Result<Scores, JudgeError> {
    Python::attach(|py| {
        let failed = |e: PyErr| {
            let tb = e
                .traceback(py)
                .and_then(|t| t.format().ok())
                .unwrap_or_default();
            JudgeError::Failed(format!("the Python judge `{name}` raised: {tb}{e}").into())
        };
        let out = f.bind(py).call1((scenario, diagnosis)).map_err(failed)?;
        if let Ok(s) = out.cast::<PyScores>() {
            let mut scores = s.borrow().inner.clone();
            if scores.judge == "python" {
                scores.judge = name.to_string();
            }
            return Ok(scores);
        }
        if let Ok(x) = out.extract::<f64>() {
            let mut scores = Scores::new(name);
            scores.outcome = x.clamp(0.0, 1.0);
            return Ok(scores);
        }
        let what = out
            .get_type()
            .name()
            .map(|n| n.to_string())
            .unwrap_or_default();
        Err(JudgeError::InvalidAnswer(format!(
            "the Python judge `{name}` returned {what}; expected faultbench.Scores or a float outcome"
        )))
    })
}

#[async_trait::async_trait]
impl Judge for PyJudge {
    fn name(&self) -> &str {
        &self.name
    }

    async fn judge(&self, input: &JudgeInput<'_>) -> Result<Scores, JudgeError> {
        let scenario = PyScenario::of(input.scenario);
        let diagnosis = PyDiagnosis::from_core(input.diagnosis.clone());
        let f = self.f.clone();
        let name = self.name.clone();
        tokio::task::spawn_blocking(move || call(&f, &name, scenario, diagnosis))
            .await
            .map_err(|e| {
                JudgeError::Failed(format!("the Python judge's thread failed: {e}").into())
            })?
    }
}

/// Options of the built-in judges.
pub struct BuiltinOptions {
    /// The judge model (`llm`).
    pub model: Option<String>,
    /// An LLM config file (providers, keys by environment variable, prices).
    pub llm_config: Option<PathBuf>,
    /// Where the `llm` judge caches verdicts.
    pub cache_dir: Option<PathBuf>,
}

/// A judge by name, or a Python callable.
pub fn judge_of(judge: &Bound<'_, PyAny>, opts: &BuiltinOptions) -> PyResult<Arc<dyn Judge>> {
    if let Ok(name) = judge.cast::<PyString>() {
        let llm = LlmOptions::discover(opts.llm_config.as_deref())
            .map_err(|e| ConfigError::new_err(chain(&e)))?;
        let options = JudgeOptions {
            llm,
            model: opts.model.clone(),
            cache_dir: opts.cache_dir.clone(),
            ..Default::default()
        };
        return builtin_judges()
            .build(&name.to_cow()?, &options)
            .map_err(|e| ConfigError::new_err(chain(&e)));
    }
    if judge.is_callable() {
        return Ok(Arc::new(PyJudge::new(judge)?));
    }
    Err(ConfigError::new_err(
        "judge must be a name (`rubric`, `llm`) or a callable (scenario, diagnosis) -> Scores",
    ))
}

/// Scores one diagnosis with a built-in judge (or a callable): `judge(scenario, diagnosis,
/// judge="rubric")`. The interpreter is released while an LLM judge waits.
#[pyfunction]
#[pyo3(name = "judge", signature = (scenario, diagnosis, judge = None, *, model = None, llm_config = None, trace_digest = String::new()))]
pub fn judge_one(
    py: Python<'_>,
    scenario: &Bound<'_, PyScenario>,
    diagnosis: &Bound<'_, PyAny>,
    judge: Option<&Bound<'_, PyAny>>,
    model: Option<String>,
    llm_config: Option<PathBuf>,
    trace_digest: String,
) -> PyResult<PyScores> {
    let rubric = PyString::new(py, "rubric");
    let judge = judge.unwrap_or(rubric.as_any());
    let j = judge_of(
        judge,
        &BuiltinOptions {
            model,
            llm_config,
            cache_dir: None,
        },
    )?;
    let diagnosis = if let Ok(s) = diagnosis.cast::<PyString>() {
        faultbench_core::Diagnosis::parse_lenient(&s.to_cow()?)
    } else {
        diagnosis
            .cast::<PyDiagnosis>()
            .map_err(|_| ConfigError::new_err("diagnosis must be a faultbench.Diagnosis or a str"))?
            .borrow()
            .to_core()
    };
    let scenario = scenario.get().inner.clone();
    let scores = crate::runtime::wait(py, async move {
        let input = JudgeInput::new(scenario.as_ref(), &diagnosis).with_digest(&trace_digest);
        j.judge(&input).await
    })?
    .map_err(|e| crate::errors::FaultbenchError::new_err(chain(&e)))?;
    Ok(PyScores { inner: scores })
}
