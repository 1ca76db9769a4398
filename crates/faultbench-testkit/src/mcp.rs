//! The Python that has the official MCP client (PyPI `mcp`): the venv `scripts/install-deps.sh`
//! creates, or `FAULTBENCH_MCP_PYTHON`.

use std::path::PathBuf;

/// Overrides [`DEFAULT_MCP_PYTHON`].
pub const MCP_PYTHON_ENV: &str = "FAULTBENCH_MCP_PYTHON";

/// Where `scripts/install-deps.sh` puts the venv's interpreter.
pub const DEFAULT_MCP_PYTHON: &str = "/opt/faultbench/mcp-venv/bin/python";

/// The interpreter; panics (failing the test, never skipping it) with the fix when it is missing.
#[must_use]
pub fn mcp_python() -> PathBuf {
    let p = std::env::var_os(MCP_PYTHON_ENV)
        .map_or_else(|| PathBuf::from(DEFAULT_MCP_PYTHON), PathBuf::from);
    assert!(
        p.exists(),
        "{} not found: run scripts/install-deps.sh (it installs the `mcp` package in a venv) or set {MCP_PYTHON_ENV}",
        p.display()
    );
    p
}
