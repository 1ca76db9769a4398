//! Run identity: the configuration a runs root was made with (`RUNS/identity.json`).
//!
//! A benchmark's only product is a number people can compare, so a runs root holds **one
//! configuration**: every run in it was made with the same agents (label → kind, model, prompt
//! version), ticket hint, judge (kind, model, prompt version), tool policy, telemetry setting,
//! turn budget, wall clock, lab reuse, emulator, scenario file contents and faultbench version.
//! The root stores that configuration ([`RunIdentity`]) when it is first used; every later use
//! is compared with it ([`reconcile`]) and refused, with the list of differing fields, when
//! anything differs — before anything is written.
//!
//! What may change between uses of one root:
//! - **Agents and scenarios may be added.** Agents are keyed by label and scenario files by id:
//!   a label or id already in the root must mean the same agent or the same file content, but a
//!   new one extends the root (the stored identity becomes the union). Runs of an added agent
//!   or scenario were made under the same settings as the others, so they compare.
//! - Passes, jobs and the selection itself are the plan, not the configuration.
//! - `created_at` and `adopted` are history, not configuration.
//!
//! **Extensibility.** Every field is plain data (strings, numbers, booleans, maps), so a value
//! unknown to this version still parses. Fields this version does not know (written by a newer
//! one) are kept in `extra`, written back unchanged, shown by reports, and compared like any
//! other field: a setting this version cannot honour is a difference, never silently dropped. A
//! field added later must carry a serde default equal to the behaviour of the versions that
//! did not have it, so that newer versions read older roots. [`IDENTITY_SCHEMA`] changes only
//! when a field's meaning changes.
//!
//! ```
//! use faultbench_core::identity::{AgentIdentity, reconcile, RunIdentity};
//! let mut first = RunIdentity::example();
//! let stored = reconcile(None, false, &first, false).unwrap();
//! assert_eq!(stored, first);
//! // Same settings, one more agent: accepted, and the stored identity grows.
//! let mut second = first.clone();
//! second.agents.insert("sade".into(), AgentIdentity::new("sade", Some("claude-sonnet-4-6"), Some("abc")));
//! let merged = reconcile(Some(&stored), true, &second, false).unwrap();
//! assert_eq!(merged.agents.len(), 2);
//! // Another turn budget: refused, with the field named.
//! first.max_turns = 30;
//! let err = reconcile(Some(&merged), true, &first, false).unwrap_err();
//! assert!(err.to_string().contains("max_turns: stored 20, new 30"), "{err}");
//! ```

use crate::output::{OutputDir, OutputError};
use crate::scenario::Scenario;
use crate::text::echo;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The identity file's name inside a runs root.
pub const IDENTITY_FILE: &str = "identity.json";

/// Version of the identity format (bumped only when a field's meaning changes).
pub const IDENTITY_SCHEMA: u32 = 1;

/// Largest identity file read, in bytes. A root's identity is a few kilobytes (the scenario map
/// of the release's 560 files is about 40 KB), so 1 MiB holds over ten thousand scenario files;
/// a larger file is refused before it is read.
pub const MAX_IDENTITY_BYTES: u64 = 1 << 20;

/// Deepest nesting of objects and arrays read in an identity file. Identities written by
/// faultbench are 3 levels deep (`agents.<label>.model`); fields of newer versions get room.
pub const MAX_IDENTITY_DEPTH: usize = 32;

/// Most JSON values (objects, arrays, members, elements) read in an identity file: about four
/// per agent and one per scenario file. A megabyte of `[0,0,…]` would otherwise parse into half
/// a million values — tens of megabytes, and more in every copy the comparison makes.
pub const MAX_IDENTITY_VALUES: usize = 50_000;

/// Most differences, or configuration rows, that a message or a report section lists; the rest
/// are counted. Each listed field and value is cut to
/// [`ECHO_MAX`](crate::text::ECHO_MAX).
pub const MAX_LISTED_DIFFERENCES: usize = 50;

/// Most settings the Markdown configuration section lists (a root with a thousand agents has
/// about four thousand); the rest are counted.
pub const MAX_CONFIGURATION_ROWS: usize = 5_000;

/// Why an identity file's text is refused before it is parsed, or `None` when it is within
/// [`MAX_IDENTITY_DEPTH`] and [`MAX_IDENTITY_VALUES`] (the size is checked by the reader).
///
/// ```
/// use faultbench_core::identity::identity_shape_problem;
/// assert!(identity_shape_problem(br#"{"schema": 1}"#).is_none());
/// let deep = "[".repeat(100);
/// assert!(identity_shape_problem(deep.as_bytes()).unwrap().contains("nested 100 levels"));
/// ```
pub fn identity_shape_problem(text: &[u8]) -> Option<String> {
    let shape = crate::bounds::json_shape(text);
    if shape.depth > MAX_IDENTITY_DEPTH {
        return Some(format!(
            "nested {} levels deep; a run identity has at most {MAX_IDENTITY_DEPTH}",
            shape.depth
        ));
    }
    if shape.values > MAX_IDENTITY_VALUES {
        return Some(format!(
            "{} JSON values; a run identity has at most {MAX_IDENTITY_VALUES}",
            shape.values
        ));
    }
    None
}

/// Reads an identity file's bytes within the caps: `Ok(None)` when there is no such file; an
/// error (naming the cap) for a link, a folder, a file over [`MAX_IDENTITY_BYTES`] (also one
/// that grows past it while read), or text nested or filled beyond [`identity_shape_problem`].
pub fn read_identity_bytes(path: &Path) -> Result<Option<Vec<u8>>, IdentityError> {
    let bad = |message: String| IdentityError::Unreadable {
        path: path.to_path_buf(),
        message,
    };
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(bad(format!("cannot read: {e}"))),
    };
    if !meta.is_file() {
        return Err(bad(
            "not a regular file (a link or a folder); remove it".into()
        ));
    }
    let too_large = |size: String| {
        bad(format!(
            "{size} bytes is too large for a run identity (at most {MAX_IDENTITY_BYTES} bytes); restore it from a backup, or move the runs to a new root"
        ))
    };
    if meta.len() > MAX_IDENTITY_BYTES {
        return Err(too_large(meta.len().to_string()));
    }
    // Opened as a regular file (a FIFO swapped in after the check is refused, not waited on)
    // and read to at most one byte more than the cap, so that the cap holds whatever the file
    // is now.
    let bytes =
        crate::fsutil::read_regular_capped(path, MAX_IDENTITY_BYTES).map_err(|e| {
            match e.problem {
                crate::fsutil::InputProblem::TooBig { .. } => {
                    too_large(format!("over {MAX_IDENTITY_BYTES}"))
                }
                _ => bad(e.reason()),
            }
        })?;
    if let Some(problem) = identity_shape_problem(&bytes) {
        return Err(bad(format!(
            "{problem}; restore it from a backup, or move the runs to a new root"
        )));
    }
    Ok(Some(bytes))
}

/// A short content hash: the first 16 hex digits of SHA-256 over the parts, each prefixed by its
/// length so that `["ab", "c"]` and `["a", "bc"]` differ.
///
/// ```
/// use faultbench_core::identity::content_hash;
/// assert_eq!(content_hash(&[b"ab".as_slice(), b"c"]).len(), 16);
/// assert_ne!(content_hash(&[b"ab".as_slice(), b"c"]), content_hash(&[b"a".as_slice(), b"bc"]));
/// ```
pub fn content_hash(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    h.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// One agent of a runs root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentIdentity {
    /// `baseline`, `react`, `sade`, `external:NAME`, or a library user's agent name.
    pub kind: String,
    /// The model, when the agent names one (an external CLI without `--model` uses its own).
    pub model: Option<String>,
    /// [`Agent::prompt_version`](crate::agent::Agent::prompt_version).
    pub prompt_version: Option<String>,
    /// [`Agent::max_output_tokens`](crate::agent::Agent::max_output_tokens): the per-turn
    /// output cap its model calls are sent with (absent for agents that call no model).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_output_tokens: Option<u32>,
    /// Fields of newer versions, kept as they are.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

impl AgentIdentity {
    /// An agent identity.
    pub fn new(kind: &str, model: Option<&str>, prompt_version: Option<&str>) -> Self {
        AgentIdentity {
            kind: kind.to_string(),
            model: model.map(str::to_string),
            prompt_version: prompt_version.map(str::to_string),
            max_output_tokens: None,
            extra: BTreeMap::new(),
        }
    }

    /// With the agent's per-turn output cap.
    pub fn with_max_output_tokens(mut self, cap: Option<u32>) -> Self {
        self.max_output_tokens = cap;
        self
    }
}

/// The judge of a runs root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JudgeIdentity {
    /// `rubric`, `llm`, or a library user's judge.
    pub kind: String,
    /// [`Judge::name`](crate::judge::Judge::name) (`rubric`, `llm:gpt-5-mini`).
    pub name: String,
    /// The judge's model, if any.
    pub model: Option<String>,
    /// [`Judge::prompt_version`](crate::judge::Judge::prompt_version).
    pub prompt_version: Option<String>,
    /// Fields of newer versions, kept as they are.
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

impl JudgeIdentity {
    /// The identity of a judge of `kind` from its [`Profile`](crate::profile::Profile).
    pub fn new(kind: impl Into<String>, profile: crate::profile::Profile) -> JudgeIdentity {
        JudgeIdentity {
            kind: kind.into(),
            name: profile.name,
            model: profile.model,
            prompt_version: profile.prompt_version,
            extra: BTreeMap::new(),
        }
    }
}

/// The scenario files a runs root was run on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScenarioSet {
    /// Content hash of the whole set: sorted ids with their files' hashes.
    pub hash: String,
    /// Number of files.
    pub count: usize,
    /// Content hash of each file, by scenario id.
    pub files: BTreeMap<String, String>,
}

impl ScenarioSet {
    /// The set of `scenarios` (each file hashed from its exact text).
    pub fn of(scenarios: &[&dyn Scenario]) -> Self {
        let files = scenarios
            .iter()
            .map(|s| {
                let text = s.spec().to_text();
                (s.id().to_string(), content_hash(&[text.as_bytes()]))
            })
            .collect();
        ScenarioSet::from_files(files)
    }

    /// The set of already-hashed files.
    pub fn from_files(files: BTreeMap<String, String>) -> Self {
        let parts: Vec<&[u8]> = files
            .iter()
            .flat_map(|(id, h)| [id.as_bytes(), h.as_bytes()])
            .collect();
        ScenarioSet {
            hash: content_hash(&parts),
            count: files.len(),
            files,
        }
    }
}

/// The configuration of a runs root (`RUNS/identity.json`). See the [module docs](self).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunIdentity {
    /// [`IDENTITY_SCHEMA`].
    pub schema: u32,
    /// The faultbench version that made the root.
    pub faultbench_version: String,
    /// When the identity was first written (RFC 3339, UTC). Not compared.
    pub created_at: String,
    /// Recorded by an explicit adoption of a root made before identities existed (the
    /// configuration was asserted by the user, not recorded with the runs). Not compared.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub adopted: bool,
    /// Agents by the label their runs are recorded under.
    pub agents: BTreeMap<String, AgentIdentity>,
    /// `none` or `skeptical` ([`TicketHint`](crate::agent::TicketHint)).
    pub ticket_hint: String,
    /// The judge.
    pub judge: JudgeIdentity,
    /// Tool policy (`full`, `read-only`).
    pub tool_policy: String,
    /// Telemetry tools answer from a live store (`true`) or empty, as the release's did.
    pub telemetry: bool,
    /// Model turns per run.
    pub max_turns: u32,
    /// Wall-clock cap of the agent phase, in seconds.
    pub wall_clock_secs: u64,
    /// Labs are reused between runs (a development shortcut) instead of deployed fresh.
    pub reuse_labs: bool,
    /// Emulator (`netns`, `kathara`, `mock`).
    pub emulator: String,
    /// How the emulator wires collision domains (`switch`, Kathará's, or `veth`); absent for
    /// mock networks and in roots made before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub link_model: Option<String>,
    /// The task ([`Task`](crate::task::Task): `diagnose`, the paper's, or `repair`): a root
    /// never mixes the two. Roots made before the repair task existed are `diagnose`.
    #[serde(default = "diagnose")]
    pub task: String,
    /// Repair task: repairs are also checked against a routing-daemon restart
    /// (`--repair-persist`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub repair_persist: bool,
    /// The scenario files.
    pub scenarios: ScenarioSet,
    /// Fields of newer versions, kept as they are (and compared).
    #[serde(flatten)]
    pub extra: BTreeMap<String, Value>,
}

/// A Markdown table cell: pipes escaped, line breaks as spaces.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace(['\n', '\r'], " ")
}

fn diagnose() -> String {
    crate::task::Task::Diagnose.to_string()
}

/// The former name of [`IdentityDifference`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `IdentityDifference`; the old name goes in the next release")]
pub type Difference = IdentityDifference;

/// One field that differs between a root's stored identity and a new configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IdentityDifference {
    /// Dotted path (`judge.model`, `agents.react.prompt_version`, `scenarios.files.<id>`).
    pub field: String,
    /// The stored value (`(absent)` when the field is not stored).
    pub stored: String,
    /// The new value (`(absent)` when the new configuration has no such field).
    pub new: String,
}

impl std::fmt::Display for IdentityDifference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: stored {}, new {}",
            self.field, self.stored, self.new
        )
    }
}

/// Why a configuration may not use a runs root.
#[derive(Debug, thiserror::Error)]
pub enum IdentityError {
    /// The root was made with another configuration.
    #[error("{} was made with another configuration; nothing was written. Differences:\n{}\nUse a new --runs-root for this configuration, or run again with the stored settings (`faultbench report {}` shows them).", path.display(), list(differences), path.display())]
    Differs {
        /// The runs root.
        path: PathBuf,
        /// Every differing field.
        differences: Vec<IdentityDifference>,
    },
    /// The root holds runs but no identity (made before faultbench recorded one).
    #[error("{} holds runs but no record of the configuration they were made with (it was made by a faultbench older than run identities), so faultbench cannot tell whether these settings match them; nothing was written. Use a new --runs-root, or, if you know its runs were made with exactly these settings, pass --adopt-config to record them as its configuration.", path.display())]
    Unrecorded {
        /// The runs root.
        path: PathBuf,
    },
    /// The identity file exists but cannot be used.
    #[error("{}: {message}", path.display())]
    Unreadable {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// The differences, one per line, at most [`MAX_LISTED_DIFFERENCES`] of them.
fn list(differences: &[IdentityDifference]) -> String {
    let mut out = differences
        .iter()
        .take(MAX_LISTED_DIFFERENCES)
        .map(|d| format!("  {d}"))
        .collect::<Vec<_>>()
        .join("\n");
    if differences.len() > MAX_LISTED_DIFFERENCES {
        out.push_str(&format!(
            "\n  … and {} more",
            differences.len() - MAX_LISTED_DIFFERENCES
        ));
    }
    out
}

/// Fields that are history, not configuration.
const NOT_COMPARED: [&str; 4] = ["created_at", "adopted", "scenarios.hash", "scenarios.count"];

/// Maps whose keys may grow: a new key is an addition, not a difference.
const GROWING: [&str; 2] = ["agents", "scenarios.files"];

/// A value as messages and reports show it, cut to
/// [`ECHO_MAX`](crate::text::ECHO_MAX).
fn show(v: Option<&Value>) -> String {
    let text = match v {
        None => return "(absent)".into(),
        Some(Value::String(s)) => return echo(s).into_owned(),
        Some(Value::Null) => return "none".into(),
        Some(other) => other.to_string(),
    };
    echo(&text).into_owned()
}

/// Appends `.key` (or `key` at the top) to a dotted path held in one buffer; the caller
/// truncates it back to `len` afterwards. One buffer for the whole walk: a path is never
/// copied per node, however long its member names.
fn push_key(path: &mut String, key: &str) -> usize {
    let len = path.len();
    if len > 0 {
        path.push('.');
    }
    path.push_str(key);
    len
}

fn diff(
    path: &mut String,
    stored: Option<&Value>,
    new: Option<&Value>,
    out: &mut Vec<IdentityDifference>,
) {
    if NOT_COMPARED.contains(&path.as_str()) {
        return;
    }
    match (stored, new) {
        (Some(Value::Object(a)), Some(Value::Object(b))) => {
            let growing = GROWING.contains(&path.as_str());
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let (x, y) = (a.get(k), b.get(k));
                // In a growing map only keys on both sides are compared.
                if growing && (x.is_none() || y.is_none()) {
                    continue;
                }
                let len = push_key(path, k);
                diff(path, x, y, out);
                path.truncate(len);
            }
        }
        (a, b) if a != b => out.push(IdentityDifference {
            field: echo(path).into_owned(),
            stored: show(a),
            new: show(b),
        }),
        _ => {}
    }
}

impl RunIdentity {
    /// The fields of `new` that differ from `self` (the stored identity). Agents or scenario
    /// files present on one side only are not differences.
    pub fn differences(&self, new: &RunIdentity) -> Vec<IdentityDifference> {
        let a = serde_json::to_value(self).unwrap_or_default();
        let b = serde_json::to_value(new).unwrap_or_default();
        let mut out = Vec::new();
        diff(&mut String::new(), Some(&a), Some(&b), &mut out);
        out
    }

    /// `self` (stored) extended with the agents and scenario files of `new` that it lacks.
    pub fn merged_with(&self, new: &RunIdentity) -> RunIdentity {
        let mut out = self.clone();
        for (k, v) in &new.agents {
            out.agents.entry(k.clone()).or_insert_with(|| v.clone());
        }
        let mut files = self.scenarios.files.clone();
        for (k, v) in &new.scenarios.files {
            files.entry(k.clone()).or_insert_with(|| v.clone());
        }
        out.scenarios = ScenarioSet::from_files(files);
        out
    }

    /// The path of a root's identity file.
    pub fn path_in(root: &Path) -> PathBuf {
        root.join(IDENTITY_FILE)
    }

    /// Reads a root's identity; `Ok(None)` when the root has none. The file is read within
    /// [`MAX_IDENTITY_BYTES`], [`MAX_IDENTITY_DEPTH`] and [`MAX_IDENTITY_VALUES`]
    /// ([`read_identity_bytes`]).
    pub fn load(root: &Path) -> Result<Option<RunIdentity>, IdentityError> {
        let path = RunIdentity::path_in(root);
        let Some(bytes) = read_identity_bytes(&path)? else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes).map(Some).map_err(|e| {
            IdentityError::Unreadable {
                path: path.clone(),
                // serde repeats the offending value (`invalid type: string "…"`): cut it.
                message: format!(
                    "not a faultbench run identity ({}); restore it from a backup, or move the runs to a new root",
                    crate::text::json_error(&e)
                ),
            }
        })
    }

    /// Writes a root's identity atomically (the root folder must exist; it is used as given).
    /// An `identity.json` that is a link is refused, never written through.
    pub fn write(&self, root: &Path) -> Result<PathBuf, IdentityError> {
        let path = RunIdentity::path_in(root);
        let text = serde_json::to_string_pretty(self).map_err(|e| IdentityError::Unreadable {
            path: path.clone(),
            message: e.to_string(),
        })?;
        let unwritable = |e: OutputError| IdentityError::Unreadable {
            path: e.path,
            message: e.kind.to_string(),
        };
        OutputDir::existing(root)
            .and_then(|dir| dir.write(IDENTITY_FILE, format!("{text}\n").as_bytes()))
            .map_err(unwritable)
    }

    /// The configuration as `(setting, value)` rows for reports: every field by its dotted path
    /// (fields of newer versions included), the scenario files summarised by count and hash.
    /// Settings and values are cut to [`ECHO_MAX`](crate::text::ECHO_MAX).
    pub fn rows(&self) -> Vec<(String, String)> {
        fn walk(path: &mut String, v: &Value, out: &mut Vec<(String, String)>) {
            match v {
                Value::Object(m) if path == "scenarios" => {
                    out.push((
                        "scenarios".into(),
                        format!(
                            "{} file(s), content hash {}",
                            show(m.get("count")),
                            show(m.get("hash"))
                        ),
                    ));
                }
                Value::Object(m) => {
                    for (k, v) in m {
                        let len = push_key(path, k);
                        walk(path, v, out);
                        path.truncate(len);
                    }
                }
                other => out.push((echo(path).into_owned(), show(Some(other)))),
            }
        }
        let mut out = Vec::new();
        walk(
            &mut String::new(),
            &serde_json::to_value(self).unwrap_or_default(),
            &mut out,
        );
        out
    }

    /// The configuration as a Markdown section (for reports and `--dry-run`), listing at most
    /// [`MAX_CONFIGURATION_ROWS`] settings.
    pub fn markdown(&self) -> String {
        let mut out = String::from("## Configuration\n\n| setting | value |\n|---|---|\n");
        let rows = self.rows();
        for (k, v) in rows.iter().take(MAX_CONFIGURATION_ROWS) {
            out.push_str(&format!("| {} | {} |\n", cell(k), cell(v)));
        }
        if rows.len() > MAX_CONFIGURATION_ROWS {
            out.push_str(&format!(
                "\n… and {} more settings (see identity.json).\n",
                rows.len() - MAX_CONFIGURATION_ROWS
            ));
        }
        if self.adopted {
            out.push_str("\nThis configuration was adopted for runs made before faultbench recorded one (`--adopt-config`): it is the user's statement, not a record.\n");
        }
        out
    }

    /// A small identity for examples and tests.
    pub fn example() -> RunIdentity {
        let mut agents = BTreeMap::new();
        agents.insert(
            "react".to_string(),
            AgentIdentity::new("react", Some("gpt-5"), Some("0123456789abcdef")),
        );
        let mut files = BTreeMap::new();
        files.insert(
            "lab-r1-ospfd-down".to_string(),
            content_hash(&[b"text".as_slice()]),
        );
        RunIdentity {
            schema: IDENTITY_SCHEMA,
            faultbench_version: "0.0.0".into(),
            created_at: "2026-01-01T00:00:00Z".into(),
            adopted: false,
            agents,
            ticket_hint: "none".into(),
            judge: JudgeIdentity {
                kind: "rubric".into(),
                name: "rubric".into(),
                model: None,
                prompt_version: Some("rubric-0".into()),
                extra: BTreeMap::new(),
            },
            tool_policy: "full".into(),
            telemetry: true,
            max_turns: 20,
            wall_clock_secs: 1800,
            reuse_labs: false,
            emulator: "mock".into(),
            link_model: None,
            task: diagnose(),
            repair_persist: false,
            scenarios: ScenarioSet::from_files(files),
            extra: BTreeMap::new(),
        }
    }
}

/// Decides whether `new` may use a root that stores `stored` and holds runs (`has_runs`), and
/// returns the identity to store:
///
/// - no stored identity and no runs: `new` (a fresh root);
/// - no stored identity but runs (a root made before identities existed): refused, unless
///   `adopt` — then `new`, marked [`RunIdentity::adopted`];
/// - a stored identity: refused when any field differs ([`RunIdentity::differences`]),
///   otherwise the stored identity extended with `new`'s added agents and scenario files.
pub fn reconcile(
    stored: Option<&RunIdentity>,
    has_runs: bool,
    new: &RunIdentity,
    adopt: bool,
) -> Result<RunIdentity, IdentityError> {
    reconcile_at(Path::new("RUNS"), stored, has_runs, new, adopt)
}

/// [`reconcile`] naming the root `root` in its errors.
pub fn reconcile_at(
    root: &Path,
    stored: Option<&RunIdentity>,
    has_runs: bool,
    new: &RunIdentity,
    adopt: bool,
) -> Result<RunIdentity, IdentityError> {
    match stored {
        None if !has_runs => Ok(new.clone()),
        None if adopt => Ok(RunIdentity {
            adopted: true,
            ..new.clone()
        }),
        None => Err(IdentityError::Unrecorded {
            path: root.to_path_buf(),
        }),
        Some(s) => {
            let differences = s.differences(new);
            if differences.is_empty() {
                Ok(s.merged_with(new))
            } else {
                Err(IdentityError::Differs {
                    path: root.to_path_buf(),
                    differences,
                })
            }
        }
    }
}

/// Whether a folder holds at least one run (`result.json` anywhere below it). Cheap: stops at
/// the first one found; never follows links.
pub fn holds_runs(root: &Path) -> bool {
    fn walk(dir: &Path, depth: usize) -> bool {
        if depth > 8 {
            return false;
        }
        let Ok(rd) = std::fs::read_dir(dir) else {
            return false;
        };
        for e in rd.flatten() {
            let Ok(t) = e.file_type() else { continue };
            if t.is_file() && e.file_name() == "result.json" {
                return true;
            }
            if t.is_dir() && walk(&e.path(), depth + 1) {
                return true;
            }
        }
        false
    }
    walk(root, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_configurations_have_no_differences() {
        let a = RunIdentity::example();
        let mut b = a.clone();
        b.created_at = "2030-01-01T00:00:00Z".into();
        assert!(a.differences(&b).is_empty());
        assert_eq!(reconcile(Some(&a), true, &b, false).unwrap(), a);
    }

    /// Runs of the two link models never share a root, and a root made before the model was
    /// recorded (netns then wired two-member domains as veth pairs) is not taken for one.
    #[test]
    fn the_link_model_is_compared() {
        let a = RunIdentity {
            link_model: Some("switch".into()),
            ..RunIdentity::example()
        };
        let veth = RunIdentity {
            link_model: Some("veth".into()),
            ..a.clone()
        };
        let shown: Vec<String> = a.differences(&veth).iter().map(|d| d.to_string()).collect();
        assert_eq!(shown, ["link_model: stored switch, new veth"]);
        let older = RunIdentity::example();
        assert_eq!(older.differences(&a).len(), 1);
        assert!(
            !serde_json::to_string(&older)
                .unwrap()
                .contains("link_model")
        );
    }

    #[test]
    fn every_differing_field_is_listed_with_both_values() {
        let a = RunIdentity::example();
        let mut b = a.clone();
        b.judge.model = Some("gpt-5-mini".into());
        b.ticket_hint = "skeptical".into();
        b.agents.get_mut("react").unwrap().prompt_version = Some("ffff".into());
        b.scenarios
            .files
            .insert("lab-r1-ospfd-down".into(), "changed".into());
        // Reused labs and telemetry change what an agent can see: a root holds one of each.
        b.reuse_labs = true;
        b.telemetry = false;
        b.task = "repair".into();
        let d = a.differences(&b);
        let shown: Vec<String> = d.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            shown,
            vec![
                "agents.react.prompt_version: stored 0123456789abcdef, new ffff",
                "judge.model: stored none, new gpt-5-mini",
                "reuse_labs: stored false, new true",
                format!(
                    "scenarios.files.lab-r1-ospfd-down: stored {}, new changed",
                    content_hash(&[b"text".as_slice()])
                )
                .as_str(),
                "task: stored diagnose, new repair",
                "telemetry: stored true, new false",
                "ticket_hint: stored none, new skeptical",
            ]
        );
        let e = reconcile_at(Path::new("/r"), Some(&a), true, &b, false).unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.starts_with("/r was made with another configuration"),
            "{msg}"
        );
        assert!(
            msg.contains("  ticket_hint: stored none, new skeptical"),
            "{msg}"
        );
    }

    #[test]
    fn agents_and_scenarios_may_be_added_and_the_union_is_stored() {
        let a = RunIdentity::example();
        let mut b = a.clone();
        b.agents.clear();
        b.agents.insert(
            "sade".into(),
            AgentIdentity::new("sade", Some("claude-sonnet-4-6"), Some("1")),
        );
        b.scenarios = ScenarioSet::from_files(BTreeMap::from([("other".into(), "h".into())]));
        assert!(a.differences(&b).is_empty());
        let m = reconcile(Some(&a), true, &b, false).unwrap();
        assert_eq!(m.agents.keys().collect::<Vec<_>>(), vec!["react", "sade"]);
        assert_eq!(m.scenarios.count, 2);
        assert_ne!(m.scenarios.hash, a.scenarios.hash);
    }

    #[test]
    fn roots_made_before_the_repair_task_are_diagnose_roots() {
        let mut v = serde_json::to_value(RunIdentity::example()).unwrap();
        v.as_object_mut().unwrap().remove("task");
        let old: RunIdentity = serde_json::from_value(v).unwrap();
        assert_eq!(old.task, "diagnose");
        assert!(old.differences(&RunIdentity::example()).is_empty());
        let mut repair = RunIdentity::example();
        repair.task = "repair".into();
        let e = reconcile(Some(&old), true, &repair, false).unwrap_err();
        assert!(
            e.to_string().contains("task: stored diagnose, new repair"),
            "{e}"
        );
    }

    #[test]
    fn roots_without_identity() {
        let new = RunIdentity::example();
        assert_eq!(reconcile(None, false, &new, false).unwrap(), new);
        let e = reconcile(None, true, &new, false).unwrap_err();
        assert!(e.to_string().contains("--adopt-config"), "{e}");
        let adopted = reconcile(None, true, &new, true).unwrap();
        assert!(adopted.adopted);
        assert!(adopted.markdown().contains("adopted"));
        assert!(adopted.differences(&new).is_empty(), "adoption is history");
    }

    #[test]
    fn fields_of_newer_versions_are_kept_shown_and_compared() {
        let mut v = serde_json::to_value(RunIdentity::example()).unwrap();
        v["lab_seed"] = "42".into();
        v["agents"]["react"]["max_output_tokens"] = 4096.into();
        let newer: RunIdentity = serde_json::from_value(v).unwrap();
        assert_eq!(newer.extra["lab_seed"], "42");
        let back = serde_json::to_value(&newer).unwrap();
        assert_eq!(back["lab_seed"], "42", "written back unchanged");
        assert_eq!(back["agents"]["react"]["max_output_tokens"], 4096);
        let rows = newer.rows();
        assert!(rows.contains(&("lab_seed".into(), "42".into())), "{rows:?}");
        let d = newer.differences(&RunIdentity::example());
        let shown: Vec<String> = d.iter().map(|d| d.to_string()).collect();
        assert_eq!(
            shown,
            vec![
                "agents.react.max_output_tokens: stored 4096, new (absent)",
                "lab_seed: stored 42, new (absent)"
            ]
        );
    }

    /// Issue 30: `identity.json` planted as a link made every bench, merge and re-judging
    /// overwrite the link's target.
    #[test]
    fn an_identity_planted_as_a_link_is_refused_and_its_target_untouched() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, dir.path().join(IDENTITY_FILE)).unwrap();
        let e = RunIdentity::example()
            .write(dir.path())
            .unwrap_err()
            .to_string();
        assert!(e.contains("identity.json: is a symbolic link"), "{e}");
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }

    #[test]
    fn files_round_trip_and_bad_files_are_named() {
        let dir = tempfile::tempdir().unwrap();
        assert!(RunIdentity::load(dir.path()).unwrap().is_none());
        let id = RunIdentity::example();
        id.write(dir.path()).unwrap();
        assert_eq!(RunIdentity::load(dir.path()).unwrap(), Some(id));
        std::fs::write(dir.path().join(IDENTITY_FILE), "{ torn").unwrap();
        let e = RunIdentity::load(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("identity.json") && e.contains("not a faultbench run identity"),
            "{e}"
        );
    }

    /// An identity with `field` added, as the text of its file.
    fn with_extra(field: &str, value: &str) -> String {
        let text = serde_json::to_string(&RunIdentity::example()).unwrap();
        format!("{},\"{field}\":{value}}}", text.strip_suffix('}').unwrap())
    }

    /// Issue 30: an 8 MB identity.json (under the old 8 MiB cap) took 2.2 GB to parse; it is
    /// now refused by its size, naming the file and the cap, before it is read.
    #[test]
    fn an_identity_over_the_size_cap_is_refused_naming_file_and_cap() {
        let dir = tempfile::tempdir().unwrap();
        let padding = format!("[{}0]", "0,".repeat(4_000_000));
        std::fs::write(dir.path().join(IDENTITY_FILE), with_extra("x", &padding)).unwrap();
        let e = RunIdentity::load(dir.path()).unwrap_err().to_string();
        assert!(e.contains("identity.json"), "{e}");
        assert!(
            e.contains(&format!("at most {MAX_IDENTITY_BYTES} bytes")),
            "{e}"
        );
        // Just under the cap, but half a million values: refused by count, before parsing.
        let padding = format!("[{}0]", "0,".repeat(500_000));
        std::fs::write(dir.path().join(IDENTITY_FILE), with_extra("x", &padding)).unwrap();
        let e = RunIdentity::load(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("identity.json") && e.contains(&format!("at most {MAX_IDENTITY_VALUES}")),
            "{e}"
        );
    }

    /// Issue 30: nesting below serde's own limit (128) was parsed and walked; an identity is
    /// now refused past [`MAX_IDENTITY_DEPTH`] levels.
    #[test]
    fn a_deeply_nested_identity_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let deep = format!("{}{}", "[".repeat(100), "]".repeat(100));
        std::fs::write(dir.path().join(IDENTITY_FILE), with_extra("x", &deep)).unwrap();
        let e = RunIdentity::load(dir.path()).unwrap_err().to_string();
        assert!(
            e.contains("identity.json") && e.contains("nested 101 levels deep"),
            "{e}"
        );
        assert!(e.contains(&format!("at most {MAX_IDENTITY_DEPTH}")), "{e}");
        // The identities faultbench writes are well within the caps.
        RunIdentity::example().write(dir.path()).unwrap();
        assert!(RunIdentity::load(dir.path()).unwrap().is_some());
    }

    /// Issue 30: a wrongly typed megabyte value was repeated whole by the parse error; and a
    /// refusal listed every one of thousands of differences.
    #[test]
    fn messages_cut_echoed_values_and_list_a_bounded_number_of_differences() {
        let dir = tempfile::tempdir().unwrap();
        let text = serde_json::to_string(&RunIdentity::example())
            .unwrap()
            .replace(
                "\"max_turns\":20",
                &format!("\"max_turns\":\"{}\"", "x".repeat(900_000)),
            );
        std::fs::write(dir.path().join(IDENTITY_FILE), text).unwrap();
        let e = RunIdentity::load(dir.path()).unwrap_err().to_string();
        assert!(e.len() < 2_000, "{} bytes of message", e.len());
        assert!(e.contains("more bytes)"), "{}", &e[..e.len().min(500)]);

        let stored = RunIdentity::example();
        let mut new = stored.clone();
        for i in 0..5_000 {
            new.extra
                .insert(format!("k{i}"), Value::String("y".repeat(10_000)));
        }
        let e = reconcile(Some(&stored), true, &new, false).unwrap_err();
        let IdentityError::Differs { differences, .. } = &e else {
            panic!("{e}");
        };
        assert_eq!(differences.len(), 5_000);
        assert!(differences.iter().all(|d| d.new.len() < 300), "values cut");
        let msg = e.to_string();
        assert!(
            msg.contains("… and 4950 more"),
            "{}",
            &msg[msg.len() - 300..]
        );
        assert!(msg.len() < 50 * 400, "{} bytes of message", msg.len());
    }

    /// Issue 30: a 709 KB identity — one 200 KB member name over 40,000 members — took 15.7 GB
    /// and 78 s in `report`, and wrote an 8 GB report.md: every row of the configuration held
    /// the whole path. Rows now hold cut paths and values, and the section lists a bounded
    /// number of them.
    #[test]
    fn a_long_member_name_over_many_members_gives_a_bounded_configuration() {
        let mut id = RunIdentity::example();
        let members: serde_json::Map<String, Value> = (0..8_000)
            .map(|i| (format!("m{i}"), Value::String("v".into())))
            .collect();
        id.extra.insert("K".repeat(100_000), Value::Object(members));
        let rows = id.rows();
        assert!(rows.len() > 8_000);
        assert!(rows.iter().all(|(k, v)| k.len() < 300 && v.len() < 300));
        let md = id.markdown();
        assert!(md.len() < 3_000_000, "{} bytes of Markdown", md.len());
        assert!(md.contains("more settings (see identity.json)"));
        let d = RunIdentity::example().differences(&id);
        assert!(
            d.iter().all(|d| d.field.len() < 300),
            "differences hold cut paths"
        );
    }

    #[test]
    fn finds_runs_cheaply() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!holds_runs(dir.path()));
        std::fs::write(dir.path().join("MANIFEST.csv"), "x").unwrap();
        assert!(!holds_runs(dir.path()));
        let run = dir.path().join("T/base__s/react/p1");
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("result.json"), "{}").unwrap();
        assert!(holds_runs(dir.path()));
    }

    #[test]
    fn the_markdown_lists_every_setting() {
        let md = RunIdentity::example().markdown();
        for needle in [
            "| agents.react.model | gpt-5 |",
            "| ticket_hint | none |",
            "| judge.name | rubric |",
            "| max_turns | 20 |",
            "| scenarios | 1 file(s), content hash ",
        ] {
            assert!(md.contains(needle), "{needle} in\n{md}");
        }
        assert!(!md.contains("lab-r1-ospfd-down"), "files are summarised");
    }
}
