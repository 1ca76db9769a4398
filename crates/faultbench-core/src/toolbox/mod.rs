//! Toolboxes: the tools an agent may call, described as JSON Schema and called by name with
//! JSON arguments.
//!
//! The benchmark's toolbox is NIKA's 22 network tools (in `faultbench-emu`), but the pipeline
//! only knows this trait, so wrappers compose in the style of tower's `Service`:
//! [`RecordingToolbox`] keeps a log of every call for the judge's trace digest, and
//! [`PolicyToolbox`] refuses the calls that would change the network under the read-only
//! [`Policy`]; both wrap any toolbox, and both live here beside the trait they wrap.
//!
//! ```
//! use faultbench_core::toolbox::{RecordingToolbox, ToolError, ToolOutput, ToolSpec, Toolbox};
//! use serde_json::{Value, json};
//!
//! struct Clock;
//! #[async_trait::async_trait]
//! impl Toolbox for Clock {
//!     fn specs(&self) -> Vec<ToolSpec> {
//!         vec![ToolSpec::new("now", "The lab's clock.", json!({"type": "object", "properties": {}}))]
//!     }
//!     async fn call(&self, name: &str, _args: Value) -> Result<ToolOutput, ToolError> {
//!         match name {
//!             "now" => Ok(ToolOutput::text("12:00")),
//!             other => Err(ToolError::UnknownTool(other.to_string())),
//!         }
//!     }
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let tools = RecordingToolbox::new(Clock);
//! assert_eq!(tools.call("now", json!({})).await.unwrap().text, "12:00");
//! assert!(tools.call("reboot", json!({})).await.is_err());
//! let log = tools.records();
//! assert_eq!(log.len(), 2);
//! assert_eq!(log[1].error.as_deref(), Some("unknown tool `reboot`"));
//! # });
//! ```

mod policy;

pub use policy::{Policy, PolicyToolbox, UnknownPolicy};

use crate::emulator::Lab;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// A tool's description, as handed to a model or an MCP client.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// Tool name, e.g. `ping_pair`.
    pub name: String,
    /// What the tool does (shown to the model).
    pub description: String,
    /// JSON Schema of the arguments object (draft 2020-12 subset; no `$schema` key).
    pub input_schema: Value,
    /// Whether some calls of this tool change the network (subject to a read-only policy).
    pub mutating: bool,
    /// Group, e.g. `base`, `frr`, `telemetry`.
    pub group: String,
}

impl ToolSpec {
    /// A read-only tool in the `base` group.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        input_schema: Value,
    ) -> Self {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            input_schema,
            mutating: false,
            group: "base".into(),
        }
    }

    /// Marks the tool as able to change the network.
    pub fn mutating(mut self) -> Self {
        self.mutating = true;
        self
    }

    /// Sets the group.
    pub fn in_group(mut self, group: impl Into<String>) -> Self {
        self.group = group.into();
        self
    }
}

/// The result of a tool call that ran.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ToolOutput {
    /// What the model sees (already capped, with a marker saying how much was cut).
    pub text: String,
    /// The command(s) behind the tool failed (non-zero exit, stderr, unreachable device).
    pub is_error: bool,
    /// Output was cut.
    pub truncated: bool,
    /// A command ran into its timeout.
    pub timed_out: bool,
    /// Exit code of the underlying command, when there was exactly one.
    pub exit_code: Option<i32>,
}

impl ToolOutput {
    /// A successful text result.
    pub fn text(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            ..Default::default()
        }
    }
}

/// A tool call that could not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    /// No such tool.
    #[error("unknown tool `{0}`")]
    UnknownTool(String),
    /// Arguments failed validation.
    #[error("invalid arguments for `{tool}`: {message}")]
    InvalidArguments {
        /// Tool name.
        tool: String,
        /// What is wrong and what is accepted.
        message: String,
    },
    /// A policy refused the call (e.g. a mutation under `read-only`).
    #[error("refused `{tool}`: {reason}")]
    Refused {
        /// Tool name.
        tool: String,
        /// Why.
        reason: String,
    },
    /// The lab could not run it (device gone, lab down).
    #[error("`{tool}` failed: {message}")]
    Failed {
        /// Tool name.
        tool: String,
        /// What happened.
        message: String,
    },
}

/// A set of callable tools.
#[async_trait::async_trait]
pub trait Toolbox: Send + Sync {
    /// The tools, with their schemas.
    fn specs(&self) -> Vec<ToolSpec>;

    /// Calls a tool by name with a JSON object of arguments.
    async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError>;

    /// Whether this particular call would change the network. The default uses the spec's
    /// `mutating` flag; toolboxes whose tools mutate only for some arguments (e.g.
    /// `systemctl_ops` with `stop` but not `status`) override it.
    fn mutates(&self, name: &str, _args: &Value) -> bool {
        self.specs().iter().any(|s| s.name == name && s.mutating)
    }
}

#[async_trait::async_trait]
impl<T: Toolbox + ?Sized> Toolbox for Arc<T> {
    fn specs(&self) -> Vec<ToolSpec> {
        (**self).specs()
    }
    async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        (**self).call(name, args).await
    }
    fn mutates(&self, name: &str, args: &Value) -> bool {
        (**self).mutates(name, args)
    }
}

#[async_trait::async_trait]
impl<T: Toolbox + ?Sized> Toolbox for Box<T> {
    fn specs(&self) -> Vec<ToolSpec> {
        (**self).specs()
    }
    async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        (**self).call(name, args).await
    }
    fn mutates(&self, name: &str, args: &Value) -> bool {
        (**self).mutates(name, args)
    }
}

/// One recorded tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCallRecord {
    /// 1-based call number within the run.
    pub seq: u32,
    /// Tool name.
    pub tool: String,
    /// Arguments as given.
    pub args: Value,
    /// Length of the output text in characters.
    pub output_chars: usize,
    /// The output text (as the model saw it).
    pub output: String,
    /// Wall time in milliseconds.
    pub duration_ms: u64,
    /// Output was cut.
    pub truncated: bool,
    /// A command timed out.
    pub timed_out: bool,
    /// A policy refused the call.
    pub refused: bool,
    /// The call failed (error text), if it did.
    pub error: Option<String>,
}

/// Receives each [`ToolCallRecord`] as soon as it is made (e.g. to append it to a file).
pub type RecordSink = Box<dyn Fn(&ToolCallRecord) + Send + Sync>;

/// Wraps a toolbox and records every call.
pub struct RecordingToolbox<T> {
    inner: T,
    log: Mutex<Vec<ToolCallRecord>>,
    sink: Option<RecordSink>,
}

impl<T: Toolbox> RecordingToolbox<T> {
    /// Starts recording around `inner`.
    pub fn new(inner: T) -> Self {
        RecordingToolbox {
            inner,
            log: Mutex::new(Vec::new()),
            sink: None,
        }
    }

    /// Also hands every record to `sink` when it is made, in call-number order (the sink runs
    /// while the log is locked, so keep it quick).
    pub fn with_sink(mut self, sink: impl Fn(&ToolCallRecord) + Send + Sync + 'static) -> Self {
        self.sink = Some(Box::new(sink));
        self
    }

    /// The calls so far.
    pub fn records(&self) -> Vec<ToolCallRecord> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The wrapped toolbox.
    pub fn inner(&self) -> &T {
        &self.inner
    }
}

#[async_trait::async_trait]
impl<T: Toolbox> Toolbox for RecordingToolbox<T> {
    fn specs(&self) -> Vec<ToolSpec> {
        self.inner.specs()
    }

    async fn call(&self, name: &str, args: Value) -> Result<ToolOutput, ToolError> {
        let started = Instant::now();
        let result = self.inner.call(name, args.clone()).await;
        let duration_ms = started.elapsed().as_millis() as u64;
        if let Ok(mut log) = self.log.lock() {
            let seq = log.len() as u32 + 1;
            let rec = match &result {
                Ok(out) => ToolCallRecord {
                    seq,
                    tool: name.to_string(),
                    args,
                    output_chars: out.text.chars().count(),
                    output: out.text.clone(),
                    duration_ms,
                    truncated: out.truncated,
                    timed_out: out.timed_out,
                    refused: false,
                    error: out.is_error.then(|| "command failed".to_string()),
                },
                Err(e) => ToolCallRecord {
                    seq,
                    tool: name.to_string(),
                    args,
                    output_chars: 0,
                    output: String::new(),
                    duration_ms,
                    truncated: false,
                    timed_out: false,
                    refused: matches!(e, ToolError::Refused { .. }),
                    error: Some(e.to_string()),
                },
            };
            if let Some(sink) = &self.sink {
                sink(&rec);
            }
            log.push(rec);
        }
        result
    }

    fn mutates(&self, name: &str, args: &Value) -> bool {
        self.inner.mutates(name, args)
    }
}

/// The former name of [`ToolboxOptions`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `ToolboxOptions`; the old name goes in the next release")]
pub type ToolboxSettings = ToolboxOptions;

/// Settings a toolbox is built with, from the run's configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolboxOptions {
    /// Collect telemetry for the telemetry tools (off: they answer as the release's labs
    /// without a collector did).
    pub telemetry: bool,
}

impl Default for ToolboxOptions {
    fn default() -> Self {
        ToolboxOptions { telemetry: true }
    }
}

/// Builds the toolbox agents use on a lab (e.g. the 22 NIKA tools). Called once per deployed
/// lab (so that per-lab state such as telemetry starts at deploy time); each run wraps the result
/// in a recording toolbox.
pub trait ToolboxFactory: Send + Sync {
    /// The toolbox for a freshly deployed lab.
    fn toolbox(&self, lab: Arc<dyn Lab>) -> Arc<dyn Toolbox>;

    /// The toolbox for a freshly deployed lab under the run's settings. The default ignores
    /// them (right for toolboxes without telemetry); a factory with telemetry honours
    /// [`ToolboxOptions::telemetry`].
    fn toolbox_with(&self, lab: Arc<dyn Lab>, settings: &ToolboxOptions) -> Arc<dyn Toolbox> {
        let _ = settings;
        self.toolbox(lab)
    }
}

impl<F> ToolboxFactory for F
where
    F: Fn(Arc<dyn Lab>) -> Arc<dyn Toolbox> + Send + Sync,
{
    fn toolbox(&self, lab: Arc<dyn Lab>) -> Arc<dyn Toolbox> {
        self(lab)
    }
}
