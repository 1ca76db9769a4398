//! The 22 tools as Python callables, with their JSON Schemas in the OpenAI and Anthropic tool
//! formats (`faultbench.Tools`, `faultbench.Tool`).
//!
//! A `Tools` wraps the toolbox a run (or a `Lab`) hands out. A call from Python converts the
//! keyword arguments to JSON, detaches from the interpreter and waits on the shared runtime
//! (`tool(**kw)`), or returns an awaitable bound to the caller's event loop (`await
//! tool.acall(**kw)`). Under `faultbench.run` the toolbox records every call into the run's
//! record, exactly as for a Rust agent.

use crate::convert;
use crate::errors::{ToolError, chain};
use crate::runtime;
use faultbench_core::toolbox::{ToolOutput, ToolSpec, Toolbox};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use serde_json::{Value, json};
use std::sync::Arc;

/// The tools of one lab (or one run).
#[pyclass(name = "Tools", module = "faultbench", frozen)]
#[derive(Clone)]
pub struct PyTools {
    pub(crate) inner: Arc<dyn Toolbox>,
    specs: Arc<Vec<ToolSpec>>,
}

impl PyTools {
    /// Wraps a toolbox.
    pub fn new(inner: Arc<dyn Toolbox>) -> Self {
        let specs = Arc::new(inner.specs());
        PyTools { inner, specs }
    }
}

/// A tool's output text, or the error the agent should see.
async fn call(tools: Arc<dyn Toolbox>, name: String, args: Value) -> PyResult<String> {
    match tools.call(&name, args).await {
        Ok(ToolOutput { text, .. }) => Ok(text),
        Err(e) => Err(ToolError::new_err(chain(&e))),
    }
}

/// Keyword arguments (or one dict) as a JSON object.
fn args_of(args: Option<&Bound<'_, PyAny>>, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Value> {
    let mut v = match args {
        Some(a) if !a.is_none() => convert::from_py(a)?,
        _ => json!({}),
    };
    if !v.is_object() {
        return Err(ToolError::new_err(
            "tool arguments must be a dict (a JSON object)",
        ));
    }
    if let Some(kw) = kwargs
        && let (Value::Object(map), Value::Object(extra)) = (&mut v, convert::from_py(kw.as_any())?)
    {
        map.extend(extra);
    }
    Ok(v)
}

/// A spec in OpenAI's Chat Completions tool format.
fn openai_of(s: &ToolSpec) -> Value {
    json!({"type": "function", "function": {
        "name": s.name, "description": s.description, "parameters": s.input_schema}})
}

/// A spec in Anthropic's Messages tool format.
fn anthropic_of(s: &ToolSpec) -> Value {
    json!({"name": s.name, "description": s.description, "input_schema": s.input_schema})
}

#[pymethods]
impl PyTools {
    /// The tool names, in the toolbox's order.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.specs.iter().map(|s| s.name.clone()).collect()
    }
    /// Every tool's spec: `{"name", "description", "input_schema", "mutating", "group"}`.
    fn specs<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v = serde_json::to_value(&*self.specs).unwrap_or_default();
        convert::to_py(py, &v)
    }
    /// The tools in OpenAI's format (`tools=` of `chat.completions.create`):
    /// `[{"type": "function", "function": {"name", "description", "parameters"}}]`.
    fn openai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v: Vec<Value> = self.specs.iter().map(openai_of).collect();
        convert::to_py(py, &Value::Array(v))
    }
    /// The tools in Anthropic's format (`tools=` of `messages.create`):
    /// `[{"name", "description", "input_schema"}]`.
    fn anthropic<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let v: Vec<Value> = self.specs.iter().map(anthropic_of).collect();
        convert::to_py(py, &Value::Array(v))
    }
    /// Calls a tool and returns its output text; raises `ToolError` when the call cannot run
    /// (its message is what a model should be told). `args` is a dict (e.g. a model's parsed
    /// tool-call arguments); keyword arguments are merged in.
    #[pyo3(signature = (name, args = None, **kwargs))]
    fn call(
        &self,
        py: Python<'_>,
        name: String,
        args: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<String> {
        let args = args_of(args, kwargs)?;
        runtime::wait(py, call(self.inner.clone(), name, args))?
    }
    /// `await tools.acall(name, args)`: the same call, as an awaitable of the running event
    /// loop (the interpreter is free while the network answers).
    #[pyo3(signature = (name, args = None, **kwargs))]
    fn acall<'py>(
        &self,
        py: Python<'py>,
        name: String,
        args: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = args_of(args, kwargs)?;
        let tools = self.inner.clone();
        pyo3_async_runtimes::tokio::future_into_py(py, call(tools, name, args))
    }
    /// The tool `name` as a callable (`tools["ping_pair"](host_a="pc1", host_b="pc2")`).
    fn __getitem__(&self, name: &str) -> PyResult<PyTool> {
        let spec = self
            .specs
            .iter()
            .find(|s| s.name == name)
            .ok_or_else(|| pyo3::exceptions::PyKeyError::new_err(name.to_string()))?;
        Ok(PyTool {
            tools: self.inner.clone(),
            spec: spec.clone(),
        })
    }
    /// Every tool as a callable, in order.
    fn callables(&self) -> Vec<PyTool> {
        self.specs
            .iter()
            .map(|s| PyTool {
                tools: self.inner.clone(),
                spec: s.clone(),
            })
            .collect()
    }
    fn __len__(&self) -> usize {
        self.specs.len()
    }
    fn __contains__(&self, name: &str) -> bool {
        self.specs.iter().any(|s| s.name == name)
    }
    fn __iter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let list = PyList::new(py, self.callables())?;
        list.try_iter().map(Bound::into_any)
    }
    fn __repr__(&self) -> String {
        format!("Tools({})", self.names().join(", "))
    }
}

/// One tool: call it with keyword arguments (`tool(host_a="pc1", host_b="web1")`), or `await
/// tool.acall(...)`.
#[pyclass(name = "Tool", module = "faultbench", frozen)]
pub struct PyTool {
    tools: Arc<dyn Toolbox>,
    spec: ToolSpec,
}

#[pymethods]
impl PyTool {
    /// The tool's name.
    #[getter]
    fn name(&self) -> &str {
        &self.spec.name
    }
    /// What it does (the text a model sees).
    #[getter]
    fn description(&self) -> &str {
        &self.spec.description
    }
    /// Its parameters' JSON Schema.
    #[getter]
    fn input_schema<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &self.spec.input_schema)
    }
    /// Whether it can change the network (refused under the read-only policy).
    #[getter]
    fn mutating(&self) -> bool {
        self.spec.mutating
    }
    /// The tool in OpenAI's format.
    fn openai<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &openai_of(&self.spec))
    }
    /// The tool in Anthropic's format.
    fn anthropic<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        convert::to_py(py, &anthropic_of(&self.spec))
    }
    #[pyo3(signature = (args = None, **kwargs))]
    fn __call__(
        &self,
        py: Python<'_>,
        args: Option<&Bound<'_, PyAny>>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<String> {
        let args = args_of(args, kwargs)?;
        runtime::wait(py, call(self.tools.clone(), self.spec.name.clone(), args))?
    }
    /// `await tool.acall(**kwargs)`.
    #[pyo3(signature = (args = None, **kwargs))]
    fn acall<'py>(
        &self,
        py: Python<'py>,
        args: Option<&Bound<'py, PyAny>>,
        kwargs: Option<&Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let args = args_of(args, kwargs)?;
        let fut = call(self.tools.clone(), self.spec.name.clone(), args);
        pyo3_async_runtimes::tokio::future_into_py(py, fut)
    }
    fn __repr__(&self) -> String {
        format!("Tool({})", self.spec.name)
    }
}

/// Times `n` calls of one tool made from Rust on the same toolbox (no Python in the loop), in
/// seconds: the baseline of `python/bench/tool_overhead.py`, which measures what the Python
/// boundary adds per call.
#[pyfunction]
#[pyo3(name = "_time_rust_calls")]
pub fn time_rust_calls(
    py: Python<'_>,
    tools: &Bound<'_, PyTools>,
    name: String,
    args: &Bound<'_, PyAny>,
    n: u32,
) -> PyResult<f64> {
    let args = convert::from_py(args)?;
    let toolbox = tools.get().inner.clone();
    runtime::wait(py, async move {
        let t = std::time::Instant::now();
        for _ in 0..n {
            toolbox
                .call(&name, args.clone())
                .await
                .map_err(|e| ToolError::new_err(chain(&e)))?;
        }
        Ok(t.elapsed().as_secs_f64())
    })?
}
