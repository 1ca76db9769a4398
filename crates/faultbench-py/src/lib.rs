//! Python bindings of faultbench: the native module `faultbench._native` behind the Python
//! package `faultbench` (built with maturin; see `docs/python.md`).
//!
//! The bindings expose the library, not the CLI: scenarios and datasets ([`scenario`]), labs
//! and their 22 tools ([`lab`], [`tools`]), Python agents and judges plugged into the Rust
//! pipeline ([`agent`], [`judge`], [`run`]), the benchmark ([`mod@bench`]) and reports
//! ([`report`]). All waiting happens in Rust with the interpreter released ([`runtime`]).

pub mod agent;
pub mod bench;
pub mod convert;
pub mod errors;
pub mod judge;
pub mod lab;
pub mod report;
pub mod run;
pub mod runtime;
pub mod scenario;
pub mod tools;
pub mod types;

use pyo3::prelude::*;

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    runtime::init();
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<scenario::PyScenario>()?;
    m.add_class::<scenario::PyDataset>()?;
    m.add_function(wrap_pyfunction!(scenario::load_scenario, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::load_dataset, m)?)?;
    m.add_function(wrap_pyfunction!(scenario::validate, m)?)?;
    m.add_class::<lab::PyLab>()?;
    m.add_class::<lab::PyExecResult>()?;
    m.add_class::<tools::PyTools>()?;
    m.add_class::<tools::PyTool>()?;
    m.add_function(wrap_pyfunction!(tools::time_rust_calls, m)?)?;
    m.add_class::<types::PyAgentInput>()?;
    m.add_class::<types::PyUsage>()?;
    m.add_class::<types::PyDiagnosis>()?;
    m.add_class::<types::PyAnswer>()?;
    m.add_class::<types::PyScores>()?;
    m.add_class::<types::PyRecord>()?;
    m.add_function(wrap_pyfunction!(judge::judge_one, m)?)?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_class::<bench::PyBenchResult>()?;
    m.add_class::<report::PyReport>()?;
    m.add_function(wrap_pyfunction!(bench::bench, m)?)?;
    m.add_function(wrap_pyfunction!(report::report, m)?)?;
    Ok(())
}
