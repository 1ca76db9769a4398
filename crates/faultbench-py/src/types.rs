//! The value types an agent or judge sees and returns: `AgentInput`, `Diagnosis`, `Answer`,
//! `Usage`, `Scores`, and the `Record` of a finished run.

use crate::convert;
use faultbench_core::agent::{AgentInput, Usage};
use faultbench_core::diagnosis::Diagnosis;
use faultbench_core::judge::Scores;
use faultbench_core::record::RunRecord;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// What an agent is given: the ticket, the topology summary, the message the harness would
/// send a model (`prompt`), and the budget.
#[pyclass(name = "AgentInput", module = "faultbench", frozen)]
pub struct PyAgentInput {
    pub(crate) inner: AgentInput,
}

#[pymethods]
impl PyAgentInput {
    /// The full user message (topology summary, ticket, answer format).
    #[getter]
    fn prompt(&self) -> &str {
        &self.inner.prompt
    }
    /// The ticket text.
    #[getter]
    fn ticket(&self) -> &str {
        &self.inner.ticket
    }
    /// The device-level topology summary.
    #[getter]
    fn topology_summary(&self) -> &str {
        &self.inner.topology_summary
    }
    /// The model-turn budget (20 by default).
    #[getter]
    fn max_turns(&self) -> u32 {
        self.inner.budget.max_turns
    }
    /// The wall-clock budget in seconds; past it the run is stopped as a timeout.
    #[getter]
    fn wall_clock_secs(&self) -> u64 {
        self.inner.budget.wall_clock_secs
    }
    /// `diagnose` or `repair`.
    #[getter]
    fn task(&self) -> String {
        self.inner.task.to_string()
    }
    fn __repr__(&self) -> String {
        format!(
            "AgentInput(ticket={:?}, max_turns={}, wall_clock_secs={})",
            self.inner.ticket, self.inner.budget.max_turns, self.inner.budget.wall_clock_secs
        )
    }
}

/// Tokens an agent's model calls used, as providers bill them.
#[pyclass(name = "Usage", module = "faultbench", get_all, set_all)]
#[derive(Clone, Default)]
pub struct PyUsage {
    /// Uncached input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Input tokens read from the provider's prompt cache.
    pub cache_read_tokens: u64,
    /// Input tokens written to the provider's prompt cache.
    pub cache_write_tokens: u64,
}

#[pymethods]
impl PyUsage {
    #[new]
    #[pyo3(signature = (input_tokens = 0, output_tokens = 0, cache_read_tokens = 0, cache_write_tokens = 0))]
    fn new(
        input_tokens: u64,
        output_tokens: u64,
        cache_read_tokens: u64,
        cache_write_tokens: u64,
    ) -> Self {
        PyUsage {
            input_tokens,
            output_tokens,
            cache_read_tokens,
            cache_write_tokens,
        }
    }
    fn __repr__(&self) -> String {
        format!(
            "Usage(input_tokens={}, output_tokens={}, cache_read_tokens={}, cache_write_tokens={})",
            self.input_tokens, self.output_tokens, self.cache_read_tokens, self.cache_write_tokens
        )
    }
}

impl PyUsage {
    /// The core type.
    pub fn to_core(&self) -> Usage {
        Usage {
            input_tokens: self.input_tokens,
            output_tokens: self.output_tokens,
            cache_read_tokens: self.cache_read_tokens,
            cache_write_tokens: self.cache_write_tokens,
        }
    }
}

/// Reads a usage from a `faultbench.Usage`, a dict, or any object with token attributes (an
/// OpenAI `usage` has `prompt_tokens`/`completion_tokens`, an Anthropic one
/// `input_tokens`/`output_tokens`).
pub fn usage_of(obj: &Bound<'_, PyAny>) -> PyResult<Usage> {
    if let Ok(u) = obj.cast::<PyUsage>() {
        return Ok(u.borrow().to_core());
    }
    let field = |names: &[&str]| -> PyResult<u64> {
        for n in names {
            let v = if let Ok(d) = obj.cast::<PyDict>() {
                d.get_item(n)?
            } else {
                obj.getattr_opt(*n)?
            };
            if let Some(v) = v.filter(|v| !v.is_none()) {
                return v.extract::<u64>();
            }
        }
        Ok(0)
    };
    Ok(Usage {
        input_tokens: field(&["input_tokens", "prompt_tokens"])?,
        output_tokens: field(&["output_tokens", "completion_tokens"])?,
        cache_read_tokens: field(&["cache_read_tokens", "cache_read_input_tokens"])?,
        cache_write_tokens: field(&["cache_write_tokens", "cache_creation_input_tokens"])?,
    })
}

/// A structured verdict: is the network faulty, which devices, why. An agent may return one
/// (with an optional `usage`, `cost_usd` and `model`); a judge receives one.
#[pyclass(name = "Diagnosis", module = "faultbench", get_all, set_all)]
pub struct PyDiagnosis {
    /// `True` (faulty), `False` (healthy) or `None` (did not say).
    pub is_anomaly: Option<bool>,
    /// The devices blamed.
    pub faulty_devices: Vec<String>,
    /// The explanation: root cause and suggested fix.
    pub text: String,
    /// Whether it came from a well-formed `=== DIAGNOSIS ===` block (always `True` for one an
    /// agent builds).
    pub parsed_ok: bool,
    /// Tokens the agent used (optional; recorded with the run).
    pub usage: Option<Py<PyAny>>,
    /// What the agent's model calls cost in USD (optional; recorded with the run).
    pub cost_usd: Option<f64>,
    /// The agent's model (optional; recorded with the run).
    pub model: Option<String>,
}

#[pymethods]
impl PyDiagnosis {
    #[new]
    #[pyo3(signature = (is_anomaly = None, faulty_devices = Vec::new(), text = String::new(), *, usage = None, cost_usd = None, model = None))]
    fn new(
        is_anomaly: Option<bool>,
        faulty_devices: Vec<String>,
        text: String,
        usage: Option<Py<PyAny>>,
        cost_usd: Option<f64>,
        model: Option<String>,
    ) -> Self {
        PyDiagnosis {
            is_anomaly,
            faulty_devices,
            text,
            parsed_ok: true,
            usage,
            cost_usd,
            model,
        }
    }
    /// Parses an answer's `=== DIAGNOSIS ===` block (leniently: never raises; `parsed_ok`
    /// says whether a verdict was found).
    #[staticmethod]
    fn parse(answer: &str) -> Self {
        PyDiagnosis::from_core(Diagnosis::parse_lenient(answer))
    }
    /// The `=== DIAGNOSIS ===` block every judge reads.
    fn render(&self) -> String {
        self.to_core().render()
    }
    fn __repr__(&self) -> String {
        format!(
            "Diagnosis(is_anomaly={}, faulty_devices={:?}, text={:?})",
            match self.is_anomaly {
                Some(true) => "True",
                Some(false) => "False",
                None => "None",
            },
            self.faulty_devices,
            self.text
        )
    }
}

impl PyDiagnosis {
    /// From the core type.
    pub fn from_core(d: Diagnosis) -> Self {
        PyDiagnosis {
            is_anomaly: d.is_anomaly,
            faulty_devices: d.faulty_devices,
            text: d.text,
            parsed_ok: d.parsed_ok,
            usage: None,
            cost_usd: None,
            model: None,
        }
    }
    /// The core type.
    pub fn to_core(&self) -> Diagnosis {
        Diagnosis {
            is_anomaly: self.is_anomaly,
            faulty_devices: self.faulty_devices.clone(),
            text: self.text.clone(),
            parsed_ok: self.parsed_ok,
        }
    }
}

/// A free-text answer (which should end with the `=== DIAGNOSIS ===` block), with what it
/// cost. Return one from `run` to report usage with a text answer.
#[pyclass(name = "Answer", module = "faultbench", get_all, set_all)]
pub struct PyAnswer {
    /// The final answer text.
    pub text: String,
    /// Tokens the agent used.
    pub usage: Option<Py<PyAny>>,
    /// Cost in USD.
    pub cost_usd: Option<f64>,
    /// The agent's model.
    pub model: Option<String>,
}

#[pymethods]
impl PyAnswer {
    #[new]
    #[pyo3(signature = (text, *, usage = None, cost_usd = None, model = None))]
    fn new(
        text: String,
        usage: Option<Py<PyAny>>,
        cost_usd: Option<f64>,
        model: Option<String>,
    ) -> Self {
        PyAnswer {
            text,
            usage,
            cost_usd,
            model,
        }
    }
}

/// A judge's scores for one run: Outcome ∈ [0, 1], Fix ∈ {0, 0.5, 1} (when the scenario has a
/// fix), Reasoning ∈ [0, 1] (when judged), and every axis verdict.
#[pyclass(name = "Scores", module = "faultbench")]
#[derive(Clone)]
pub struct PyScores {
    pub(crate) inner: Scores,
}

#[pymethods]
impl PyScores {
    /// Scores from a Python judge: `outcome` directly, or leave it 0 and add axis verdicts
    /// with `axis(...)` then call `finish()` to compute it with the release's rule.
    #[new]
    #[pyo3(signature = (outcome = 0.0, *, fix = None, reasoning = None, judge = "python".to_string(), error = None))]
    fn new(
        outcome: f64,
        fix: Option<f64>,
        reasoning: Option<f64>,
        judge: String,
        error: Option<String>,
    ) -> Self {
        let mut inner = Scores::new(judge);
        inner.outcome = outcome.clamp(0.0, 1.0);
        inner.fix = fix.map(faultbench_core::judge::snap_fix);
        inner.reasoning = reasoning.map(|r| r.clamp(0.0, 1.0));
        inner.error = error;
        PyScores { inner }
    }
    /// Records one axis verdict (`kind`: `assert`, `must` or `bonus`; `score` 1.0 passes).
    #[pyo3(signature = (axis, kind, score, rationale = String::new()))]
    fn axis(&mut self, axis: String, kind: &str, score: f64, rationale: String) -> PyResult<()> {
        let kind = kind
            .parse()
            .map_err(|e: faultbench_core::scenario::UnknownAxisKind| {
                crate::errors::ConfigError::new_err(e.to_string())
            })?;
        self.inner.push_axis(faultbench_core::judge::AxisVerdict {
            axis,
            kind,
            score: score.clamp(0.0, 1.0),
            rationale,
        });
        Ok(())
    }
    /// Computes `outcome` from the axis verdicts (the release's rule: 0.7 × required pass
    /// fraction + 0.3 × bonus pass fraction).
    fn finish(&mut self) {
        self.inner
            .finish(faultbench_core::judge::OutcomeRule::Release);
    }
    /// Outcome ∈ [0, 1].
    #[getter]
    fn outcome(&self) -> f64 {
        self.inner.outcome
    }
    /// Fix ∈ {0, 0.5, 1}, or `None`.
    #[getter]
    fn fix(&self) -> Option<f64> {
        self.inner.fix
    }
    /// Reasoning ∈ [0, 1], or `None`.
    #[getter]
    fn reasoning(&self) -> Option<f64> {
        self.inner.reasoning
    }
    /// The judge's name.
    #[getter]
    fn judge(&self) -> &str {
        &self.inner.judge
    }
    /// Whether the diagnosis counts as correct (outcome ≥ 0.7).
    #[getter]
    fn correct(&self) -> bool {
        self.inner.is_correct()
    }
    /// Every verdict as a dict `{"axis", "kind", "score", "rationale"}`.
    #[getter]
    fn per_axis<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(&self.inner.per_axis).unwrap_or_default();
        convert::to_py(py, &v)
    }
    /// Everything, as recorded in `result.json`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(&self.inner).unwrap_or_default();
        convert::to_py(py, &v)
    }
    fn __repr__(&self) -> String {
        format!(
            "Scores(outcome={:.3}, fix={:?}, reasoning={:?}, judge={:?})",
            self.inner.outcome, self.inner.fix, self.inner.reasoning, self.inner.judge
        )
    }
}

/// A finished run: its status, diagnosis, scores and everything else `result.json` holds.
#[pyclass(name = "Record", module = "faultbench", frozen)]
pub struct PyRecord {
    pub(crate) inner: RunRecord,
}

#[pymethods]
impl PyRecord {
    /// `scored`, `no_submission`, `no_output` (timeouts), `agent_error`, `judge_failed`, or an
    /// infrastructure status (`deploy_incomplete`, `injection_failed`, …).
    #[getter]
    fn status(&self) -> &'static str {
        self.inner.status.as_str()
    }
    /// What went wrong, when something did (a Python agent's traceback for `agent_error`).
    #[getter]
    fn error(&self) -> Option<&str> {
        self.inner.error.as_deref()
    }
    /// The scenario id.
    #[getter]
    fn scenario_id(&self) -> &str {
        self.inner.key.scenario_id.as_str()
    }
    /// The agent label.
    #[getter]
    fn agent(&self) -> &str {
        &self.inner.key.agent
    }
    /// The pass number.
    #[getter]
    fn pass_(&self) -> u32 {
        self.inner.key.pass
    }
    /// The parsed diagnosis, when the agent answered.
    #[getter]
    fn diagnosis(&self) -> Option<PyDiagnosis> {
        self.inner.diagnosis.clone().map(PyDiagnosis::from_core)
    }
    /// The scores, when judged.
    #[getter]
    fn scores(&self) -> Option<PyScores> {
        self.inner.scores.clone().map(|inner| PyScores { inner })
    }
    /// The agent's final answer text.
    #[getter]
    fn final_text(&self) -> Option<&str> {
        self.inner
            .phases
            .agent
            .as_ref()
            .map(|a| a.outcome.final_text.as_str())
    }
    /// The tool calls the agent made, as dicts (`tool`, `args`, `output`, `duration_ms`, …).
    #[getter]
    fn tool_calls<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let log = self
            .inner
            .phases
            .agent
            .as_ref()
            .map(|a| serde_json::to_value(&a.outcome.tool_log).unwrap_or_default())
            .unwrap_or_else(|| serde_json::json!([]));
        convert::to_py(py, &log)
    }
    /// The whole record, as `result.json` holds it.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(&self.inner).unwrap_or_default();
        convert::to_py(py, &v)
    }
    fn __repr__(&self) -> String {
        format!(
            "Record({} {} [{}] status={}, outcome={:?})",
            self.inner.key.topology.as_str(),
            self.inner.key.scenario_id.as_str(),
            self.inner.key.agent,
            self.inner.status.as_str(),
            self.inner.scores.as_ref().map(|s| s.outcome)
        )
    }
}
