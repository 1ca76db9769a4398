//! Record and replay: capture every command a real lab answered, save it as JSON, and serve the
//! same answers later without the lab.
//!
//! [`RecordingLab`] wraps any [`Lab`] and appends each exec to an [`ExecTrace`]. A
//! [`ReplayLab`] serves a trace deterministically: the *n*-th time a (device, command) pair is
//! run, it gets the *n*-th recorded answer for that pair; once the recorded answers are used up
//! it keeps giving the last one (a network that stays in its final state). Commands that were
//! never recorded get the default reply (exit 127 with a message), or an error in strict mode.
//! Pairs are keyed by the command's matching text, so an argv and an equivalent shell script
//! replay the same answer.

use super::spec::{MockSpecError, Reply};
use super::text::command_text;
use faultbench_core::{Command, EmuError, ExecOutput, Lab};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// A recorded exec trace.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExecTrace {
    /// The lab it was recorded from.
    pub lab: String,
    /// Its devices.
    pub devices: Vec<String>,
    /// Every exec, in completion order.
    pub entries: Vec<TraceEntry>,
}

/// One recorded exec.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TraceEntry {
    /// Device.
    pub device: String,
    /// The command as run.
    pub command: Command,
    /// Its output, when it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<ExecOutput>,
    /// The error, when it could not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl ExecTrace {
    /// Writes the trace as pretty JSON.
    pub fn save(&self, path: impl AsRef<Path>) -> std::io::Result<()> {
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(path, text)
    }

    /// Reads a trace written by [`ExecTrace::save`].
    pub fn load(path: impl AsRef<Path>) -> Result<ExecTrace, MockSpecError> {
        let path = path.as_ref();
        let err = |message: String| MockSpecError {
            source_name: path.display().to_string(),
            message,
        };
        let text = faultbench_core::fsutil::read_regular_string_capped(
            path,
            super::spec::MAX_MOCK_FILE_BYTES,
        )
        .map_err(|e| err(e.reason()))?;
        serde_json::from_str(&text).map_err(|e| {
            err(format!(
                "not an exec trace: {}",
                faultbench_core::text::json_error(&e)
            ))
        })
    }
}

/// Wraps a lab and records every exec.
///
/// ```
/// use faultbench_core::{Command, Lab};
/// use faultbench_emu::mock::{MockLab, MockNetwork, RecordingLab, ReplayLab};
/// use std::{sync::Arc, time::Duration};
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let net = MockNetwork::parse(r#"
///     [[device]]
///     name = "r1"
///     [[rule]]
///     device = "r1"
///     command = "pgrep ospfd"
///     stdout = "812"
/// "#).unwrap();
/// let live = RecordingLab::new(Arc::new(MockLab::new("demo", Arc::new(net))));
/// let t = Duration::from_secs(1);
/// live.exec("r1", &Command::shell("pgrep ospfd"), t).await.unwrap();
///
/// let replay = ReplayLab::new(live.trace());
/// let out = replay.exec("r1", &Command::argv(["pgrep", "ospfd"]), t).await.unwrap();
/// assert_eq!(out.stdout, "812");
/// assert_eq!(replay.exec("r1", &Command::shell("ls"), t).await.unwrap().exit_code, Some(127));
/// # });
/// ```
#[derive(Debug)]
pub struct RecordingLab {
    inner: Arc<dyn Lab>,
    trace: Mutex<ExecTrace>,
}

impl RecordingLab {
    /// Starts recording around `inner`.
    pub fn new(inner: Arc<dyn Lab>) -> Self {
        let trace = ExecTrace {
            lab: inner.name().to_string(),
            devices: inner.devices(),
            entries: Vec::new(),
        };
        RecordingLab {
            inner,
            trace: Mutex::new(trace),
        }
    }

    /// A copy of the trace so far.
    pub fn trace(&self) -> ExecTrace {
        self.trace.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

#[async_trait::async_trait]
impl Lab for RecordingLab {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn devices(&self) -> Vec<String> {
        self.inner.devices()
    }
    fn lab_dir(&self) -> Option<std::path::PathBuf> {
        self.inner.lab_dir()
    }

    fn deploy_notes(&self) -> Vec<String> {
        self.inner.deploy_notes()
    }
    async fn exec(
        &self,
        device: &str,
        command: &Command,
        timeout: Duration,
    ) -> Result<ExecOutput, EmuError> {
        let result = self.inner.exec(device, command, timeout).await;
        let entry = TraceEntry {
            device: device.into(),
            command: command.clone(),
            output: result.as_ref().ok().cloned(),
            error: result.as_ref().err().map(|e| e.to_string()),
        };
        self.trace
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entries
            .push(entry);
        result
    }
    async fn teardown(&self) -> Result<(), EmuError> {
        self.inner.teardown().await
    }
}

/// What a recorded answer replays as.
type Answer = Result<ExecOutput, String>;

#[derive(Debug)]
struct ReplayState {
    /// Next answer index per (device, text).
    cursor: HashMap<(String, String), usize>,
    running: bool,
}

/// Serves a recorded trace as a lab (see the module docs).
#[derive(Debug)]
pub struct ReplayLab {
    name: String,
    devices: Vec<String>,
    answers: HashMap<(String, String), Vec<Answer>>,
    default: Reply,
    strict: bool,
    state: Mutex<ReplayState>,
}

impl ReplayLab {
    /// A lab serving `trace`.
    pub fn new(trace: ExecTrace) -> Self {
        let mut answers: HashMap<(String, String), Vec<Answer>> = HashMap::new();
        for e in trace.entries {
            let key = (e.device, command_text(&e.command));
            let answer = match (e.output, e.error) {
                (Some(o), _) => Ok(o),
                (None, Some(err)) => Err(err),
                (None, None) => Err("recorded entry has neither output nor error".into()),
            };
            answers.entry(key).or_default().push(answer);
        }
        ReplayLab {
            name: trace.lab,
            devices: trace.devices,
            answers,
            default: Reply {
                stderr: "replay: `{command}` was not recorded on device `{device}`".into(),
                ..Reply::default()
            },
            strict: false,
            state: Mutex::new(ReplayState {
                cursor: HashMap::new(),
                running: true,
            }),
        }
    }

    /// Serves the trace under another instance name.
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// Unrecorded commands become errors instead of the default reply.
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }

    /// Sets the reply to unrecorded commands (`{device}` and `{command}` are substituted).
    pub fn with_default(mut self, reply: Reply) -> Self {
        self.default = reply;
        self
    }
}

#[async_trait::async_trait]
impl Lab for ReplayLab {
    fn name(&self) -> &str {
        &self.name
    }
    fn devices(&self) -> Vec<String> {
        self.devices.clone()
    }
    async fn exec(
        &self,
        device: &str,
        command: &Command,
        _timeout: Duration,
    ) -> Result<ExecOutput, EmuError> {
        let text = command_text(command);
        let key = (device.to_string(), text.clone());
        let answer = {
            let mut st = self.state.lock().unwrap_or_else(|p| p.into_inner());
            if !st.running {
                return Err(EmuError::NotRunning(self.name.clone()));
            }
            if !self.devices.iter().any(|d| d == device) {
                return Err(EmuError::UnknownDevice {
                    lab: self.name.clone(),
                    device: device.into(),
                });
            }
            match self.answers.get(&key) {
                Some(list) => {
                    let i = st.cursor.entry(key).or_insert(0);
                    let a = list[(*i).min(list.len() - 1)].clone();
                    *i += 1;
                    Some(a)
                }
                None => None,
            }
        };
        match answer {
            Some(Ok(out)) => Ok(out),
            Some(Err(e)) => Err(EmuError::Other(e)),
            None if self.strict => Err(EmuError::Other(format!(
                "replay of `{}`: `{text}` on `{device}` was not recorded",
                self.name
            ))),
            None => {
                let fill = |s: &str| s.replace("{device}", device).replace("{command}", &text);
                Ok(ExecOutput {
                    stdout: fill(&self.default.stdout),
                    stderr: fill(&self.default.stderr),
                    exit_code: Some(self.default.exit_code),
                    ..Default::default()
                })
            }
        }
    }
    async fn teardown(&self) -> Result<(), EmuError> {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).running = false;
        Ok(())
    }
}
