//! Run records: what one run leaves on disk, and the run registry (`MANIFEST.csv`).
//!
//! Layout of a runs root (plain files, written crash-safely):
//!
//! ```text
//! RUNS/
//!   identity.json                                  the root's configuration (crate::identity)
//!   MANIFEST.csv                                   one synced line per finished run
//!   <topology>/<layer>__<scenario>/<agent>/p<pass>/
//!       result.json                                a RunRecord (schema below)
//!       trace.jsonl                                the run's trace events, one per line
//! ```
//!
//! `result.json` holds everything needed to re-judge or re-report a run without re-running it:
//! the scenario's full text, the exact prompt the agent received, every phase with its duration,
//! the agent's turns, tool calls, tokens and cost, the diagnosis, and the judge's breakdown
//! with its own tokens and cost. `MANIFEST.csv` has the public release's 19 columns first (so
//! reports read both), then the judge's spend ([`MANIFEST_EXTRA_COLUMNS`]).

use crate::agent::{AgentOutcome, Usage};
use crate::category::{Category, Layer};
use crate::diagnosis::Diagnosis;
use crate::ids::{ScenarioId, TopologyId};
use crate::judge::Scores;
use crate::lab::ProbeResult;
use crate::scenario::{CheckVerdict, PostInjectCheck, Scenario};
use crate::snapshot::StateChange;
use crate::status::RunStatus;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

mod manifest;

// Kept here for callers of `record::rfc3339`; the formatter lives in `datetime`.
pub use crate::datetime::{now_rfc3339, rfc3339};

/// A bounded digest of a run's investigation for the judge: each tool call with its arguments
/// and a cut of its output, the agent's notes, and how it ended.
pub fn digest_of(rec: &RunRecord) -> String {
    crate::trace::digest(&trace_of(rec))
}

/// The trace events of a run (from its agent phase), as written to `trace.jsonl`.
pub fn trace_of(rec: &RunRecord) -> Vec<crate::trace::TraceEvent> {
    rec.phases
        .agent
        .as_ref()
        .map(|a| crate::trace::events_from_outcome(&rec.key.agent, &a.outcome))
        .unwrap_or_default()
}

fn telemetry_on() -> bool {
    true
}

/// Version of the `result.json` schema.
pub const RECORD_SCHEMA: u32 = 1;

/// The release's experimental arm of a layer: `base80`, `cex120`, or the persona layer name.
pub fn arm_of_layer(layer: Layer) -> &'static str {
    match layer {
        Layer::Base => "base80",
        Layer::Cex | Layer::Standard => "cex120",
        l => l.as_str(),
    }
}

/// The layer an arm names (accepts the release's arm names and plain layer names).
pub fn layer_of_arm(arm: &str) -> Option<Layer> {
    match arm {
        "base80" => Some(Layer::Base),
        "cex120" => Some(Layer::Cex),
        other => other.parse().ok(),
    }
}

/// Longest agent name that can name a run folder, in characters (`NAME_MAX`: a folder name of
/// more bytes cannot be created; the folder name has one ASCII byte per character of the name).
pub const MAX_AGENT_FOLDER_LEN: usize = 255;

/// An agent name that cannot name a run's folder.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid agent name `{shown}`: {reason} (an agent name becomes the run's folder, so it must not be empty, `.` or `..`, nor longer than {MAX_AGENT_FOLDER_LEN} characters)"
)]
pub struct InvalidAgentName {
    /// The name, cut to 80 characters and escaped for display.
    pub shown: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Identity of one run: which scenario, which agent, which pass.
///
/// Read from records, it is checked like the ids it holds: an agent name that would not name a
/// folder of its own (empty, `.`, `..`, too long) does not deserialise, so a crafted record
/// cannot put its run into another run's folder.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "RunKeyFields")]
pub struct RunKey {
    /// Topology (the scenario's `Topology:` header).
    pub topology: TopologyId,
    /// Dataset layer.
    pub layer: Layer,
    /// Scenario id.
    pub scenario_id: ScenarioId,
    /// Agent name (`baseline`, `react`, `external:claude`, …).
    pub agent: String,
    /// Pass number, from 1.
    pub pass: u32,
}

/// The stored form of [`RunKey`], checked on the way in.
#[derive(Deserialize)]
struct RunKeyFields {
    topology: TopologyId,
    layer: Layer,
    scenario_id: ScenarioId,
    agent: String,
    pass: u32,
}

impl TryFrom<RunKeyFields> for RunKey {
    type Error = InvalidAgentName;
    fn try_from(f: RunKeyFields) -> Result<RunKey, InvalidAgentName> {
        RunKey::agent_folder(&f.agent)?;
        Ok(RunKey {
            topology: f.topology,
            layer: f.layer,
            scenario_id: f.scenario_id,
            agent: f.agent,
            pass: f.pass,
        })
    }
}

impl RunKey {
    /// The folder name of an agent's runs: the name with every character other than ASCII
    /// letters, digits, `-`, `_` and `.` replaced by `_`. Refused when that is empty, `.` or
    /// `..` (a path step, not a folder) or longer than [`MAX_AGENT_FOLDER_LEN`].
    pub fn agent_folder(agent: &str) -> Result<String, InvalidAgentName> {
        let folder: String = agent
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let reason = match folder.as_str() {
            "" => Some("it is empty".to_string()),
            "." | ".." => Some(format!(
                "`{folder}` is a step between folders, not a folder"
            )),
            f if f.len() > MAX_AGENT_FOLDER_LEN => {
                Some(format!("it is {} characters long", f.len()))
            }
            _ => None,
        };
        match reason {
            None => Ok(folder),
            Some(reason) => {
                let mut shown: String = agent.chars().take(80).collect();
                if shown.len() < agent.len() {
                    shown.push('…');
                }
                Err(InvalidAgentName {
                    shown: shown.escape_debug().to_string(),
                    reason,
                })
            }
        }
    }

    /// The run directory relative to a runs root:
    /// `<topology>/<layer>__<scenario>/<agent>/p<pass>` (see [`RunKey::agent_folder`]; the
    /// topology and scenario ids are validated types, so every part is one plain folder name).
    pub fn relative_dir(&self) -> Result<PathBuf, InvalidAgentName> {
        let agent = RunKey::agent_folder(&self.agent)?;
        Ok(PathBuf::from(self.topology.as_str())
            .join(format!(
                "{}__{}",
                self.layer.as_str(),
                self.scenario_id.as_str()
            ))
            .join(agent)
            .join(format!("p{}", self.pass)))
    }

    /// The run directory under a runs root ([`RunKey::relative_dir`] joined to `root`). Write
    /// into it through [`OutputDir::open`](crate::output::OutputDir::open)`(root, relative_dir)`,
    /// which refuses links planted below the root.
    pub fn dir(&self, root: &Path) -> Result<PathBuf, InvalidAgentName> {
        Ok(root.join(self.relative_dir()?))
    }

    /// The release's arm for this run.
    pub fn arm(&self) -> &'static str {
        arm_of_layer(self.layer)
    }
}

/// The scenario as it was when the run happened (its full file text is kept for re-judging).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioSnapshot {
    /// Scenario id.
    pub id: String,
    /// Topology.
    pub topology: String,
    /// Category.
    pub category: Category,
    /// Layer.
    pub layer: Layer,
    /// Fault family header.
    pub fault_family: String,
    /// The file it came from, if any.
    pub path: Option<PathBuf>,
    /// The canonical scenario text (parse it with `ScenarioSpec::parse`).
    pub text: String,
}

impl ScenarioSnapshot {
    /// Snapshots a scenario.
    pub fn of(s: &dyn Scenario) -> Self {
        ScenarioSnapshot {
            id: s.id().to_string(),
            topology: s.topology().to_string(),
            category: s.category(),
            layer: s.layer(),
            fault_family: s.fault_family().to_string(),
            path: s.path().map(Path::to_path_buf),
            text: s.spec().to_text(),
        }
    }
}

/// Whether a run's lab was deployed for it or handed on from an earlier run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LabOrigin {
    /// Deployed for this run (the paper's protocol, and the default).
    #[default]
    Fresh,
    /// Kept from the previous run of the same topology after a verified revert
    /// (`--reuse-labs`, a development shortcut: the lab carries that run's history).
    Reused,
}

impl LabOrigin {
    /// `fresh` or `reused`.
    pub fn as_str(self) -> &'static str {
        match self {
            LabOrigin::Fresh => "fresh",
            LabOrigin::Reused => "reused",
        }
    }
}

/// Where the run's lab came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(from = "DeployPhaseFields")]
pub struct DeployPhase {
    /// Emulator kind (`netns`, `kathara`, `mock`).
    pub emulator: String,
    /// How the emulator wired collision domains ([`crate::emulator::LinkModel`]: `switch`,
    /// Kathará's, or `veth`); empty in records made before it was recorded (those `netns`
    /// runs wired two-member domains as veth pairs).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub link_model: String,
    /// Lab instance name.
    pub lab_name: String,
    /// `fresh` (deployed for this run) or `reused` (kept from the previous run). Records
    /// written before this field existed say `warm: true` for reused labs and are read so.
    pub lab: LabOrigin,
    /// Its deploy and baseline check started in the background before the run asked for
    /// the lab, while an earlier run of the job worked (`--prestart`).
    #[serde(default)]
    pub prestarted: bool,
    /// Deployed (or reused) successfully.
    pub ok: bool,
    /// When this run's lab history starts (Unix milliseconds): the start of the deploy of a
    /// fresh lab, the moment a reused lab was taken over (0 in older records).
    #[serde(default)]
    pub started_unix_ms: u64,
    /// Duration of the deploy in milliseconds (0 when reused).
    pub duration_ms: u64,
    /// CPU the lab's own processes had used when its baseline held, in milliseconds (what its
    /// bring-up cost the machine, for `--prestart auto`); absent where the backend does not
    /// tell ([`crate::emulator::Lab::cpu_used`]) and for reused labs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ms: Option<u64>,
    /// How long the run waited for its lab to be deployed and verified, in milliseconds (less
    /// than deploy + baseline when the lab was prestarted).
    #[serde(default)]
    pub waited_ms: u64,
    /// What failed.
    pub error: Option<String>,
    /// What the backend set differently from its defaults or the user's settings
    /// ([`crate::emulator::Lab::deploy_notes`]); absent when nothing.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The prestart depth of the run's job when it took this lab, and what it rested on
    /// (`--prestart auto` or `N`); absent in records made before it was recorded and for runs
    /// not scheduled by a lab queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prestart: Option<crate::pipeline::PrestartDecision>,
}

/// The stored form of [`DeployPhase`], which also accepts the `warm` flag of older records.
#[derive(Deserialize)]
struct DeployPhaseFields {
    #[serde(default)]
    emulator: String,
    #[serde(default)]
    link_model: String,
    #[serde(default)]
    lab_name: String,
    #[serde(default)]
    lab: Option<LabOrigin>,
    #[serde(default)]
    warm: bool,
    #[serde(default)]
    prestarted: bool,
    #[serde(default)]
    ok: bool,
    #[serde(default)]
    started_unix_ms: u64,
    #[serde(default)]
    duration_ms: u64,
    #[serde(default)]
    waited_ms: u64,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    prestart: Option<crate::pipeline::PrestartDecision>,
    #[serde(default)]
    cpu_ms: Option<u64>,
}

impl From<DeployPhaseFields> for DeployPhase {
    fn from(f: DeployPhaseFields) -> Self {
        DeployPhase {
            emulator: f.emulator,
            link_model: f.link_model,
            lab_name: f.lab_name,
            lab: f.lab.unwrap_or(if f.warm {
                LabOrigin::Reused
            } else {
                LabOrigin::Fresh
            }),
            prestarted: f.prestarted,
            ok: f.ok,
            started_unix_ms: f.started_unix_ms,
            duration_ms: f.duration_ms,
            cpu_ms: f.cpu_ms,
            waited_ms: f.waited_ms,
            error: f.error,
            notes: f.notes,
            prestart: f.prestart,
        }
    }
}

/// The healthy-baseline check before injection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BaselinePhase {
    /// Every probe held.
    pub ok: bool,
    /// Probes that failed (passed ones are only counted).
    pub failures: Vec<ProbeResult>,
    /// Number of probes run.
    pub probes: usize,
    /// Rounds of probes until they held (0 when verified by the previous run's revert).
    #[serde(default)]
    pub attempts: u32,
    /// Duration in milliseconds.
    pub duration_ms: u64,
}

/// One injection step as executed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InjectionStepResult {
    /// Device.
    pub device: String,
    /// Command.
    pub cmd: String,
    /// Exit code (`None` if killed).
    pub exit_code: Option<i32>,
    /// Standard output (capped).
    pub stdout: String,
    /// Standard error (capped).
    pub stderr: String,
    /// Duration in milliseconds.
    pub duration_ms: u64,
}

/// The injection.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InjectionPhase {
    /// Whether a fault was injected (false for false-premise scenarios).
    pub applied: bool,
    /// The steps.
    pub steps: Vec<InjectionStepResult>,
    /// Duration in milliseconds.
    pub duration_ms: u64,
}

/// The post-injection verification.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CheckPhase {
    /// All checks passed (on the last attempt).
    pub passed: bool,
    /// Attempts made.
    pub attempts: u32,
    /// The checks with their last verdicts.
    pub checks: Vec<(PostInjectCheck, CheckVerdict)>,
    /// Duration in milliseconds.
    pub duration_ms: u64,
}

/// The agent phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AgentPhase {
    /// What the agent returned (turns, tokens, cost, final text, tool log).
    pub outcome: AgentOutcome,
    /// Duration in milliseconds.
    pub duration_ms: u64,
}

/// The judge phase.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JudgePhase {
    /// Judge name.
    pub judge: String,
    /// Why judging failed, if it did.
    pub error: Option<String>,
    /// Duration in milliseconds.
    pub duration_ms: u64,
    /// Tokens spent judging this run, re-judgings included (zero for the rubric judge and for
    /// cached verdicts; `None` when unknown: a failed judgement, or a record made before judges
    /// reported spend).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// What judging this run cost in USD, re-judgings included (`None` when unknown or
    /// unpriced).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl JudgePhase {
    /// The phase of a judgement by `judge` that produced `scores` (their spend included).
    pub fn scored(judge: &str, scores: &Scores, duration_ms: u64) -> Self {
        JudgePhase {
            judge: judge.to_string(),
            error: None,
            duration_ms,
            usage: scores.usage,
            cost_usd: scores.cost_usd,
        }
    }

    /// The phase of a judgement by `judge` that failed with `error`.
    pub fn failed(judge: &str, error: &str, duration_ms: u64) -> Self {
        JudgePhase {
            judge: judge.to_string(),
            error: Some(error.to_string()),
            duration_ms,
            usage: None,
            cost_usd: None,
        }
    }
}

/// After the run: teardown, or (with `--reuse-labs`) revert-and-verify to keep the lab.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CleanupPhase {
    /// `teardown`, or `reverted` (lab kept for the next run after a verified revert).
    pub action: String,
    /// Whether it succeeded.
    pub ok: bool,
    /// Details.
    pub detail: Option<String>,
    /// Duration in milliseconds.
    pub duration_ms: u64,
}

/// The state snapshots taken right before the agent started and right after it ended (their
/// difference is the record's `agent_changes`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SnapshotPhase {
    /// Devices read.
    pub devices: usize,
    /// Duration of the snapshot before the agent, in milliseconds.
    pub before_ms: u64,
    /// Duration of the snapshot after the agent, in milliseconds.
    pub after_ms: u64,
    /// Aspects that could not be read (`before: device aspect: reason`, `after: …`); they are
    /// not compared.
    pub unreadable: Vec<String>,
}

/// The presence watch: after the agent and before any revert, does the situation the agent
/// was given still stand?
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PresencePhase {
    /// `fault` (the `[POST-INJECT-CHECK]` re-run) or `baseline` (nothing was injected).
    pub watched: String,
    /// It still held.
    pub held: bool,
    /// Rounds run.
    pub attempts: u32,
    /// What did not hold.
    pub failures: Vec<String>,
    /// Duration in milliseconds.
    pub duration_ms: u64,
}

/// Every phase of a run, each present once reached.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Phases {
    /// Lab deployment.
    pub deploy: Option<DeployPhase>,
    /// Baseline check.
    pub baseline: Option<BaselinePhase>,
    /// Injection.
    pub injection: Option<InjectionPhase>,
    /// Post-injection check.
    pub post_inject_check: Option<CheckPhase>,
    /// State snapshots around the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots: Option<SnapshotPhase>,
    /// Agent.
    pub agent: Option<AgentPhase>,
    /// Presence watch after the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub presence: Option<PresencePhase>,
    /// Judge.
    pub judge: Option<JudgePhase>,
    /// Cleanup.
    pub cleanup: Option<CleanupPhase>,
}

/// Everything about one run (`result.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunRecord {
    /// Schema version ([`RECORD_SCHEMA`]).
    pub schema: u32,
    /// Identity.
    pub key: RunKey,
    /// The model the agent used, if any.
    pub model: Option<String>,
    /// How the run ended.
    pub status: RunStatus,
    /// Start time (RFC 3339, UTC).
    pub started_at: String,
    /// End time (RFC 3339, UTC).
    pub finished_at: String,
    /// Wall time of the whole run in seconds.
    pub wall_seconds: f64,
    /// The scenario.
    pub scenario: ScenarioSnapshot,
    /// The exact user message the agent received.
    pub agent_input_prompt: Option<String>,
    /// Telemetry was collected for the agent (`--telemetry on`); off, the four `influx_*`
    /// tools answered as the release's labs without a collector did. Older records: on.
    #[serde(default = "telemetry_on")]
    pub telemetry: bool,
    /// The phases.
    pub phases: Phases,
    /// What the agent changed in the network: the difference between the state snapshots
    /// taken right before it started and right after it ended (empty when it changed
    /// nothing, or when no snapshot was taken).
    #[serde(default)]
    pub agent_changes: Vec<StateChange>,
    /// The task the agent was given (`diagnose` when absent, as in records of older versions).
    #[serde(default, skip_serializing_if = "crate::task::Task::is_diagnose")]
    pub task: crate::task::Task,
    /// The repair task's verification on the live lab after the agent (fault gone, baseline,
    /// collateral, time to repair, persistence).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<crate::repair::RepairReport>,
    /// The parsed diagnosis (when the agent answered).
    pub diagnosis: Option<Diagnosis>,
    /// The scores (when judged).
    pub scores: Option<Scores>,
    /// The error behind a non-result status.
    pub error: Option<String>,
    /// The faultbench version that produced the record.
    pub faultbench_version: String,
}

/// Largest `result.json` read.
pub const MAX_RECORD_BYTES: u64 = 256 << 20;

/// A record that could not be read or written.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct RecordError {
    /// The file.
    pub path: PathBuf,
    /// What happened.
    pub message: String,
}

impl From<crate::output::OutputError> for RecordError {
    fn from(e: crate::output::OutputError) -> RecordError {
        RecordError {
            path: e.path,
            message: e.kind.to_string(),
        }
    }
}

impl RunRecord {
    /// Submitted = the agent produced a final text (false for `agent_error` and
    /// `no_submission`, as in the release).
    pub fn submitted(&self) -> bool {
        let text = self
            .phases
            .agent
            .as_ref()
            .is_some_and(|a| !a.outcome.final_text.trim().is_empty());
        text && !matches!(self.status, RunStatus::AgentError | RunStatus::NoSubmission)
    }

    /// The registry row of this run (the release's MANIFEST columns).
    pub fn manifest_row(&self) -> ManifestRow {
        let outcome = self.phases.agent.as_ref().map(|a| &a.outcome);
        let usage = outcome.map(|o| o.usage).unwrap_or_default();
        let judge = self.phases.judge.as_ref();
        let scored = self.status == RunStatus::Scored;
        ManifestRow {
            arm: self.key.arm().to_string(),
            pass: format!("p{}", self.key.pass),
            topology: self.key.topology.to_string(),
            scenario_id: self.key.scenario_id.to_string(),
            agent: self.key.agent.clone(),
            model: self.model.clone().unwrap_or_default(),
            status: self.status.to_string(),
            submitted: self.submitted(),
            is_anomaly: self.diagnosis.as_ref().and_then(|d| d.is_anomaly),
            outcome_score: self.scores.as_ref().filter(|_| scored).map(|s| s.outcome),
            fix_score: self.scores.as_ref().filter(|_| scored).and_then(|s| s.fix),
            reasoning_score: self
                .scores
                .as_ref()
                .filter(|_| scored)
                .and_then(|s| s.reasoning),
            tool_calls: outcome.map(|o| u64::from(o.tool_calls)).unwrap_or(0),
            in_tokens: usage.input_tokens,
            cache_read_tokens: usage.cache_read_tokens,
            cache_write_tokens: usage.cache_write_tokens,
            out_tokens: usage.output_tokens,
            cost_usd: outcome.and_then(|o| o.cost_usd).unwrap_or(0.0),
            wall_seconds: self.wall_seconds,
            judge_in_tokens: judge.and_then(|j| j.usage).map(|u| u.total_input()),
            judge_out_tokens: judge.and_then(|j| j.usage).map(|u| u.output_tokens),
            judge_cost_usd: judge.and_then(|j| j.cost_usd),
        }
    }

    /// Writes `result.json` atomically (temp file, fsync, rename) into `dir`, which is used as
    /// given (created if missing; links in it are followed). Below an untrusted root, open the
    /// folder with [`OutputDir::open`](crate::output::OutputDir::open) and use
    /// [`RunRecord::write_in`].
    pub fn write(&self, dir: &Path) -> Result<PathBuf, RecordError> {
        let out = crate::output::OutputDir::open(dir, "")?;
        self.write_in(&out)
    }

    /// Writes `result.json` atomically into an output folder; a link at that name is refused.
    pub fn write_in(&self, dir: &crate::output::OutputDir) -> Result<PathBuf, RecordError> {
        let text = serde_json::to_string_pretty(self).map_err(|e| RecordError {
            path: dir.file_path("result.json"),
            message: e.to_string(),
        })?;
        Ok(dir.write("result.json", text.as_bytes())?)
    }

    /// Reads a `result.json`: a regular file of at most [`MAX_RECORD_BYTES`].
    pub fn read(path: &Path) -> Result<RunRecord, RecordError> {
        let err = |message: String| RecordError {
            path: path.to_path_buf(),
            message,
        };
        let text = crate::fsutil::read_regular_string_capped(path, MAX_RECORD_BYTES)
            .map_err(|e| err(e.reason()))?;
        serde_json::from_str(&text).map_err(|e| {
            err(format!(
                "not a faultbench run record: {}",
                crate::text::json_error(&e)
            ))
        })
    }
}

pub use manifest::{MANIFEST_EXTRA_COLUMNS, MANIFEST_HEADER, ManifestRow, RELEASE_MANIFEST_HEADER};

/// Every `result.json` under a runs root, sorted by path. Unreadable records (and folders) are
/// returned as errors beside the good ones, never dropped silently. Symbolic links are not
/// followed ([`find_files`](crate::fsutil::find_files)): a link loop cannot hang the scan or
/// count a run twice.
pub fn scan_records(root: &Path) -> (Vec<(PathBuf, RunRecord)>, Vec<RecordError>) {
    let mut bad = Vec::new();
    let found = match crate::fsutil::find_files(root, |n| n == "result.json") {
        Ok(f) => f,
        // A missing root holds no records (e.g. a runs root not created yet).
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Default::default(),
        Err(e) => {
            bad.push(RecordError {
                path: root.to_path_buf(),
                message: format!("cannot read the folder: {e}"),
            });
            Default::default()
        }
    };
    for (dir, e) in found.unreadable {
        bad.push(RecordError {
            path: dir,
            message: format!("cannot read the folder: {e}"),
        });
    }
    let mut ok = Vec::new();
    for p in found.files {
        match RunRecord::read(&p) {
            Ok(r) => ok.push((p, r)),
            Err(e) => bad.push(e),
        }
    }
    (ok, bad)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::scenario::ScenarioSpec;

    #[test]
    fn deploy_notes_are_kept_and_absent_when_there_are_none() {
        let plain = DeployPhase {
            emulator: "netns".into(),
            ok: true,
            ..Default::default()
        };
        let text = serde_json::to_string(&plain).unwrap();
        assert!(!text.contains("notes"), "{text}");
        let noted = DeployPhase {
            emulator: "kathara".into(),
            notes: vec!["Kathará settings from /root/.config/kathara.conf".into()],
            ..Default::default()
        };
        let back: DeployPhase =
            serde_json::from_str(&serde_json::to_string(&noted).unwrap()).unwrap();
        assert_eq!(back, noted);
        // Records written before the field existed still read.
        let old: DeployPhase =
            serde_json::from_str(r#"{"emulator": "netns", "ok": true}"#).unwrap();
        assert!(old.notes.is_empty());
    }

    /// Issue 30: a megabyte field value of the wrong type was repeated whole in the error.
    #[test]
    fn a_bad_value_is_not_echoed_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        std::fs::write(&path, format!("{{\"key\": \"{}\"}}", "x".repeat(1 << 20))).unwrap();
        let e = RunRecord::read(&path).unwrap_err().to_string();
        assert!(
            e.contains("result.json") && e.contains("not a faultbench run record"),
            "{}",
            &e[..300]
        );
        assert!(e.len() < 1_000, "{} bytes of message", e.len());
        assert!(e.contains("more bytes)"), "{e}");
    }

    /// A scored run record (also used by the store's tests).
    pub(crate) fn record() -> RunRecord {
        let text = include_str!("../../tests/data/minimal.txt");
        let spec = ScenarioSpec::parse(text).unwrap();
        let mut outcome = AgentOutcome::answer(
            "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1\ndiagnosis_text:\nospfd, down\n=== END ===",
        );
        outcome.tool_calls = 7;
        outcome.usage.input_tokens = 100;
        outcome.cost_usd = Some(0.25);
        let mut scores = Scores::new("rubric");
        scores.outcome = 0.7499999999999999;
        RunRecord {
            schema: RECORD_SCHEMA,
            key: RunKey {
                topology: TopologyId::new("Lab").unwrap(),
                layer: Layer::Base,
                scenario_id: spec.scenario_id().clone(),
                agent: "external:claude code".into(),
                pass: 2,
            },
            model: Some("m".into()),
            status: RunStatus::Scored,
            started_at: "2026-11-29T00:00:00Z".into(),
            finished_at: "2026-11-29T00:00:09Z".into(),
            wall_seconds: 9.5,
            scenario: ScenarioSnapshot::of(&spec),
            agent_input_prompt: Some("p".into()),
            telemetry: true,
            agent_changes: Vec::new(),
            task: Default::default(),
            repair: None,
            phases: Phases {
                agent: Some(AgentPhase {
                    outcome: outcome.clone(),
                    duration_ms: 1,
                }),
                ..Default::default()
            },
            diagnosis: Some(outcome.diagnosis()),
            scores: Some(scores),
            error: None,
            faultbench_version: "0".into(),
        }
    }

    #[test]
    fn older_records_stay_readable() {
        // A record written before fresh labs, snapshots and the telemetry setting existed.
        let mut v = serde_json::to_value(record()).unwrap();
        let o = v.as_object_mut().unwrap();
        o.remove("telemetry");
        o.remove("agent_changes");
        o["phases"]["deploy"] = serde_json::json!({
            "emulator": "netns", "lab_name": "x-1", "warm": true, "ok": true,
            "duration_ms": 0, "error": null
        });
        let old: RunRecord = serde_json::from_value(v).unwrap();
        assert!(old.telemetry, "the collector always ran then");
        assert!(old.agent_changes.is_empty());
        let d = old.phases.deploy.as_ref().unwrap();
        assert_eq!((d.lab, d.prestarted), (LabOrigin::Reused, false));
        // Written back, the new form: `lab`, no `warm`.
        let back = serde_json::to_value(&old).unwrap();
        assert_eq!(back["phases"]["deploy"]["lab"], "reused");
        assert!(back["phases"]["deploy"].get("warm").is_none());
    }

    /// The link model is part of each record's deploy phase; records made before it was
    /// recorded read with an empty one (and are written back without it).
    #[test]
    fn the_prestart_decision_is_recorded_and_older_records_have_none() {
        let mut r = record();
        r.phases.deploy = Some(DeployPhase {
            emulator: "netns".into(),
            prestart: Some(crate::pipeline::PrestartDecision {
                depth: 2,
                auto: true,
                bring_up_ms: 9_000,
                run_ms: 6_000,
                ..Default::default()
            }),
            ..Default::default()
        });
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["phases"]["deploy"]["prestart"]["depth"], 2);
        assert_eq!(v["phases"]["deploy"]["prestart"]["auto"], true);
        let back: RunRecord = serde_json::from_value(v.clone()).unwrap();
        assert_eq!(back.phases.deploy, r.phases.deploy);
        let mut old = v;
        old["phases"]["deploy"]
            .as_object_mut()
            .unwrap()
            .remove("prestart");
        let back: RunRecord = serde_json::from_value(old).unwrap();
        assert_eq!(back.phases.deploy.unwrap().prestart, None);
    }

    #[test]
    fn the_link_model_is_recorded_and_older_records_have_none() {
        let mut r = record();
        r.phases.deploy = Some(DeployPhase {
            emulator: "netns".into(),
            link_model: "veth".into(),
            ..Default::default()
        });
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["phases"]["deploy"]["link_model"], "veth");
        let mut old = v.clone();
        old["phases"]["deploy"]
            .as_object_mut()
            .unwrap()
            .remove("link_model");
        let back: RunRecord = serde_json::from_value(old).unwrap();
        assert_eq!(back.phases.deploy.as_ref().unwrap().link_model, "");
        let again = serde_json::to_value(&back).unwrap();
        assert!(again["phases"]["deploy"].get("link_model").is_none());
    }

    #[test]
    fn a_record_whose_key_is_a_path_is_refused_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let r = record();
        let path = r.write(&r.key.dir(tmp.path()).unwrap()).unwrap();
        for (field, value) in [
            ("topology", "/etc"),
            ("topology", "../.."),
            ("scenario_id", "../../../x"),
            ("scenario_id", "a/b"),
        ] {
            let mut v = serde_json::to_value(&r).unwrap();
            v["key"][field] = serde_json::json!(value);
            std::fs::write(&path, v.to_string()).unwrap();
            let e = RunRecord::read(&path).unwrap_err().to_string();
            assert!(e.contains(&path.display().to_string()), "{e}");
            assert!(e.contains("invalid") && e.contains(value), "{e}");
        }
    }

    /// Issue 30: agent `..` was accepted, and its run folder `<topology>/<layer>__<id>/../p1`
    /// is `<topology>/p1` — shared by every scenario of the topology, so two runs landed in one
    /// folder (and `.` put the run beside its agents' folders).
    #[test]
    fn a_record_whose_agent_is_a_path_step_is_refused_naming_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let r = record();
        let path = r.write(&r.key.dir(tmp.path()).unwrap()).unwrap();
        let long = "a".repeat(MAX_AGENT_FOLDER_LEN + 1);
        for value in ["..", ".", "", long.as_str()] {
            let mut v = serde_json::to_value(&r).unwrap();
            v["key"]["agent"] = serde_json::json!(value);
            std::fs::write(&path, v.to_string()).unwrap();
            let e = RunRecord::read(&path).unwrap_err().to_string();
            assert!(e.contains(&path.display().to_string()), "{e}");
            assert!(e.contains("invalid agent name"), "{e}");
            assert!(e.len() < 600, "a long name is cut in the message: {e}");
        }
        let (ok, bad) = scan_records(tmp.path());
        assert!(ok.is_empty() && bad.len() == 1, "{ok:?} {bad:?}");
    }

    #[test]
    fn agent_folders_are_one_plain_name_or_refused() {
        assert_eq!(
            RunKey::agent_folder("external:a b").unwrap(),
            "external_a_b"
        );
        assert_eq!(RunKey::agent_folder("../x").unwrap(), ".._x");
        assert_eq!(RunKey::agent_folder("...").unwrap(), "...");
        assert_eq!(RunKey::agent_folder("/").unwrap(), "_");
        for bad in ["", ".", ".."] {
            assert!(RunKey::agent_folder(bad).is_err(), "{bad:?}");
        }
        let long = "é".repeat(MAX_AGENT_FOLDER_LEN);
        assert_eq!(
            RunKey::agent_folder(&long).unwrap().len(),
            MAX_AGENT_FOLDER_LEN
        );
        let mut r = record();
        r.key.agent = "..".into();
        let e = r.key.relative_dir().unwrap_err();
        assert!(e.to_string().contains("`..`"), "{e}");
        // A key made in code with such a name is refused where its folder is needed.
        assert!(r.key.dir(Path::new("/R")).is_err());
    }

    /// Issue 19, finding 6: the scan followed directory links, so a `loop -> .` link counted
    /// every run once per level until the kernel's link limit (2 runs became 82), and two links
    /// made it exponential.
    #[test]
    fn scanning_never_follows_directory_links() {
        let tmp = tempfile::tempdir().unwrap();
        let r = record();
        r.write(&r.key.dir(tmp.path()).unwrap()).unwrap();
        let elsewhere = tempfile::tempdir().unwrap();
        let mut other = r.clone();
        other.key.pass = 9;
        other
            .write(&other.key.dir(elsewhere.path()).unwrap())
            .unwrap();
        std::os::unix::fs::symlink(".", tmp.path().join("loop")).unwrap();
        std::os::unix::fs::symlink(elsewhere.path(), tmp.path().join("Lab/out")).unwrap();
        let (ok, bad) = scan_records(tmp.path());
        assert!(bad.is_empty(), "{bad:?}");
        assert_eq!(ok.len(), 1, "each run once, nothing from outside the root");
    }

    #[test]
    fn write_read_round_trip_and_scan() {
        let tmp = tempfile::tempdir().unwrap();
        let r = record();
        let dir = r.key.dir(tmp.path()).unwrap();
        r.write(&dir).unwrap();
        std::fs::create_dir_all(tmp.path().join("junk")).unwrap();
        std::fs::write(tmp.path().join("junk/result.json"), "{ torn").unwrap();
        let (ok, bad) = scan_records(tmp.path());
        assert_eq!(ok.len(), 1);
        assert_eq!(ok[0].1, r);
        assert_eq!(bad.len(), 1);
        assert!(bad[0].to_string().contains("junk/result.json"));
    }
}
