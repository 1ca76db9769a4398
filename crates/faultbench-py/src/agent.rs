//! Python agents in the Rust pipeline: `PyAgent` implements `faultbench_core::Agent` over any
//! Python object with a `name` and a `run(input, tools)` method, sync or `async def`.
//!
//! Each run calls `run` on its own OS thread (`faultbench._driver.drive`), attached to the
//! interpreter only while Python code runs: tool calls detach while the network answers, so the
//! runs of `bench(jobs=2)` overlap. The answer is converted on that thread: a `str` is the final
//! text (a `=== DIAGNOSIS ===` block is parsed from it, garbage stays an unparsed answer), a
//! `Diagnosis` is rendered to its block, an `Answer` carries a text; both may carry `usage`,
//! `cost_usd` and `model`, which land in the record. An exception becomes `agent_error` with its
//! traceback as the record's error; anything else returned is an `agent_error` naming the type.
//! Past the wall-clock budget the agent is cancelled (see the driver) and the run is a timeout;
//! a dropped run (Ctrl-C, the harness's own cap) cancels it too.

use crate::tools::PyTools;
use crate::types::{PyAgentInput, PyAnswer, PyDiagnosis, usage_of};
use faultbench_core::agent::{Agent, AgentInput, AgentOutcome};
use faultbench_core::toolbox::Toolbox;
use pyo3::prelude::*;
use pyo3::types::PyString;
use std::sync::{Arc, Mutex};

/// A Python object used as an agent.
pub struct PyAgent {
    obj: Arc<Py<PyAny>>,
    name: String,
    model: Option<String>,
}

impl PyAgent {
    /// Wraps `obj`; its `name` attribute (or class name) names it, `model` is optional.
    pub fn new(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        if !obj.hasattr("run")? {
            return Err(crate::errors::ConfigError::new_err(format!(
                "an agent needs a `run(input, tools)` method; {} has none",
                obj.get_type().name()?
            )));
        }
        let name = match obj.getattr_opt("name")? {
            Some(n) if !n.is_none() => n.extract::<String>()?,
            _ => obj.get_type().name()?.to_string(),
        };
        let model = match obj.getattr_opt("model")? {
            Some(m) if !m.is_none() => m.extract::<String>().ok(),
            _ => None,
        };
        Ok(PyAgent {
            obj: Arc::new(obj.clone().unbind()),
            name,
            model,
        })
    }
}

/// The driver's control object of a run in flight, set by the agent's thread.
type ControlSlot = Arc<Mutex<Option<Py<PyAny>>>>;

/// Cancels the Python side of a run when dropped while armed.
struct CancelOnDrop {
    slot: ControlSlot,
    armed: bool,
}

impl CancelOnDrop {
    fn cancel(&mut self) {
        if !std::mem::take(&mut self.armed) {
            return;
        }
        let control = self.slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        if let Some(control) = control {
            // Never wait for the interpreter on a runtime worker: a thread of its own asks.
            std::thread::spawn(move || {
                Python::attach(|py| {
                    if let Err(e) = control.bind(py).call_method0("cancel") {
                        e.print(py);
                    }
                });
            });
        }
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.cancel();
    }
}

/// Calls the driver on this (agent) thread and converts what it returns.
fn drive(
    agent: &Py<PyAny>,
    input: AgentInput,
    tools: Arc<dyn Toolbox>,
    slot: &ControlSlot,
) -> AgentOutcome {
    Python::attach(|py| {
        let run = || -> PyResult<AgentOutcome> {
            let driver = py.import("faultbench._driver")?;
            let control = driver.getattr("Control")?.call0()?;
            *slot.lock().unwrap_or_else(|p| p.into_inner()) = Some(control.clone().unbind());
            let args = (
                agent.bind(py),
                Py::new(py, PyAgentInput { inner: input })?,
                Py::new(py, PyTools::new(tools))?,
                control,
            );
            let (kind, value): (String, Bound<'_, PyAny>) =
                driver.getattr("drive")?.call1(args)?.extract()?;
            if kind == "error" {
                return Ok(AgentOutcome::failed(format!(
                    "the Python agent raised:\n{}",
                    value.extract::<String>()?
                )));
            }
            outcome_of(&value)
        };
        run().unwrap_or_else(|e| {
            let tb = e
                .traceback(py)
                .and_then(|t| t.format().ok())
                .unwrap_or_default();
            AgentOutcome::failed(format!(
                "faultbench could not run the Python agent: {tb}{e}"
            ))
        })
    })
}

/// What `run` returned, as an outcome.
fn outcome_of(value: &Bound<'_, PyAny>) -> PyResult<AgentOutcome> {
    let (mut outcome, usage, cost, model) = if let Ok(s) = value.cast::<PyString>() {
        (AgentOutcome::answer(s.to_cow()?), None, None, None)
    } else if let Ok(d) = value.cast::<PyDiagnosis>() {
        let d = d.borrow();
        let usage = d.usage.as_ref().map(|u| u.clone_ref(value.py()));
        (
            AgentOutcome::from_diagnosis(d.to_core()),
            usage,
            d.cost_usd,
            d.model.clone(),
        )
    } else if let Ok(a) = value.cast::<PyAnswer>() {
        let a = a.borrow();
        let usage = a.usage.as_ref().map(|u| u.clone_ref(value.py()));
        (
            AgentOutcome::answer(a.text.clone()),
            usage,
            a.cost_usd,
            a.model.clone(),
        )
    } else {
        return Ok(AgentOutcome::failed(format!(
            "the Python agent's run() returned {} ({}); expected str, faultbench.Diagnosis or faultbench.Answer",
            value.get_type().name()?,
            value
                .repr()?
                .to_cow()?
                .chars()
                .take(200)
                .collect::<String>()
        )));
    };
    if let Some(u) = usage {
        outcome.usage = usage_of(u.bind(value.py()))?;
    }
    outcome.cost_usd = cost;
    outcome.model = model;
    Ok(outcome)
}

#[async_trait::async_trait]
impl Agent for PyAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let budget = input.budget;
        let slot: ControlSlot = Arc::new(Mutex::new(None));
        let (tx, rx) = tokio::sync::oneshot::channel();
        let agent = self.obj.clone();
        let input = input.clone();
        let thread_slot = slot.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("faultbench-agent-{}", self.name))
            .spawn(move || {
                let outcome = drive(&agent, input, tools, &thread_slot);
                let _ = tx.send(outcome);
            });
        if let Err(e) = spawned {
            return AgentOutcome::failed(format!("cannot start the agent's thread: {e}"));
        }
        let mut guard = CancelOnDrop { slot, armed: true };
        match tokio::time::timeout(budget.wall_clock(), rx).await {
            Ok(Ok(outcome)) => {
                guard.armed = false;
                outcome
            }
            Ok(Err(_)) => {
                guard.armed = false;
                AgentOutcome::failed("the Python agent's thread ended without an answer")
            }
            Err(_) => {
                guard.cancel();
                AgentOutcome {
                    hit_wall_clock: true,
                    error: Some(format!(
                        "the Python agent ran past its wall-clock budget of {} s and was cancelled",
                        budget.wall_clock_secs
                    )),
                    ..Default::default()
                }
            }
        }
    }
}
