//! Policies: which tool calls may change the network.
//!
//! (In `faultbench-emu` until issue 28; `faultbench_emu::tools::{Policy, PolicyToolbox}` remain
//! as deprecated aliases for one release.)
//!
//! [`PolicyToolbox`] wraps any [`Toolbox`] (tower style) and asks the inner toolbox, per call,
//! whether the call mutates ([`Toolbox::mutates`]): `systemctl_ops` with `status` does not, with
//! `restart` it does; `frr_exec` with `show …` does not. Under [`Policy::ReadOnly`] mutating
//! calls are refused with [`ToolError::Refused`] before anything runs; under [`Policy::Full`]
//! (the paper's setting) everything passes.

use super::{ToolError, ToolOutput, ToolSpec, Toolbox};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;

/// What agents may do to the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Policy {
    /// Everything, as in the paper (agents may restart services, run any shell command).
    #[default]
    Full,
    /// Observation only: calls that would change the network are refused.
    ReadOnly,
}

/// A policy name that is neither `full` nor `read-only`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown policy `{0}` (expected `full` or `read-only`)")]
pub struct UnknownPolicy(pub String);

impl FromStr for Policy {
    type Err = UnknownPolicy;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "full" => Ok(Policy::Full),
            "read-only" | "readonly" | "read_only" => Ok(Policy::ReadOnly),
            other => Err(UnknownPolicy(other.to_string())),
        }
    }
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Policy::Full => "full",
            Policy::ReadOnly => "read-only",
        })
    }
}

/// A toolbox that enforces a [`Policy`] on another.
pub struct PolicyToolbox<T> {
    inner: T,
    policy: Policy,
}

impl<T: Toolbox> PolicyToolbox<T> {
    /// Enforces `policy` on `inner`.
    pub fn new(inner: T, policy: Policy) -> Self {
        PolicyToolbox { inner, policy }
    }

    /// The policy.
    pub fn policy(&self) -> Policy {
        self.policy
    }

    /// The wrapped toolbox.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

#[async_trait::async_trait]
impl<T: Toolbox> Toolbox for PolicyToolbox<T> {
    /// The inner specs; under read-only, mutating tools say in their description which calls
    /// will be refused, so a model does not waste turns on them.
    fn specs(&self) -> Vec<ToolSpec> {
        let mut specs = self.inner.specs();
        if self.policy == Policy::ReadOnly {
            for s in specs.iter_mut().filter(|s| s.mutating) {
                s.description.push_str(
                    " [read-only policy: calls that would change the network are refused]",
                );
            }
        }
        specs
    }

    async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        if self.policy == Policy::ReadOnly && self.inner.mutates(name, &args) {
            return Err(ToolError::Refused {
                tool: name.to_string(),
                reason: "the read-only policy allows only calls that observe the network; this call could change it (read-only alternatives: systemctl_ops with operation `status`, frr_exec with a `show …` command, and the other inspection tools)".into(),
            });
        }
        self.inner.call(name, args).await
    }

    fn mutates(&self, name: &str, args: &Value) -> bool {
        self.inner.mutates(name, args)
    }
}
