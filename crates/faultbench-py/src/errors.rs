//! The Python exceptions the bindings raise. Every one derives from `faultbench.FaultbenchError`
//! and carries the Rust error's message, which names the file, line or device involved.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    faultbench,
    FaultbenchError,
    PyException,
    "Base class of every faultbench error."
);
create_exception!(
    faultbench,
    ScenarioError,
    FaultbenchError,
    "A scenario file or dataset could not be read or parsed (the message has file:line)."
);
create_exception!(
    faultbench,
    LabError,
    FaultbenchError,
    "A lab could not be deployed, reached or torn down."
);
create_exception!(
    faultbench,
    ToolError,
    FaultbenchError,
    "A tool call could not run: unknown tool, invalid arguments, refused by the policy, or the lab failed."
);
create_exception!(
    faultbench,
    ConfigError,
    FaultbenchError,
    "An unknown agent, judge or emulator name, or options that do not fit together."
);

/// Adds the exception classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("FaultbenchError", py.get_type::<FaultbenchError>())?;
    m.add("ScenarioError", py.get_type::<ScenarioError>())?;
    m.add("LabError", py.get_type::<LabError>())?;
    m.add("ToolError", py.get_type::<ToolError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    Ok(())
}

/// An error's message with its chain of causes (`a: b: c`).
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut msg = e.to_string();
    let mut cur = e.source();
    while let Some(s) = cur {
        let next = s.to_string();
        if !msg.contains(&next) {
            msg.push_str(": ");
            msg.push_str(&next);
        }
        cur = s.source();
    }
    msg
}
