//! `external:NAME`: runs an MCP-capable CLI agent (Claude Code in print mode, or any CLI
//! described by a command template) against the run's tools.
//!
//! For each run the agent:
//!
//! 1. creates a fresh working directory outside any repository and **refuses to start** if a
//!    git repository or an instruction file (`CLAUDE.md`, `AGENTS.md`, `.claude/`, …, and the
//!    template's files under `$HOME`) could reach the CLI — project memory would leak hints
//!    into the benchmark;
//! 2. exposes the tools over MCP: by default through an in-process [`McpBridge`] (rmcp's
//!    streamable-HTTP server with the `faultbench mcp` handler) serving the run's own toolbox
//!    (so policy and recording apply), or through `faultbench mcp --lab NAME
//!    --record FILE` over stdio;
//! 3. writes the MCP config file, starts the CLI from the template (arguments are passed as
//!    an argv — never through a shell), under the run's wall-clock cap;
//! 4. parses the CLI's output: the final text (with its `=== DIAGNOSIS ===` block), and tokens,
//!    cost and the max-turns signal when the CLI reports them (Claude Code's JSON result);
//!    tool calls come from the bridge's log or the MCP server's record file.
//!
//! The CLI's own turns are not visible, so `turns` stays empty; `usage`, `cost_usd` and
//! `tool_calls` carry the totals.

#[cfg(feature = "mcp-bridge")]
pub mod mcp_http;
// Built without the bridge: `McpBridge::start` says so (transport `faultbench` still works).
#[cfg(not(feature = "mcp-bridge"))]
#[path = "no_bridge.rs"]
pub mod mcp_http;
mod output;
mod templates_file;

/// The module's former name (it held a hand-written server), kept for one release.
pub use mcp_http as bridge;
pub use mcp_http::McpBridge;
pub use output::{CliResult, parse_output};
pub use templates_file::{PLACEHOLDERS, TEMPLATES_ENV, TemplateFileError};

use crate::prompt::{external_instructions, prompt_version};
use faultbench_core::agent::{Agent, AgentInput, AgentOutcome, TicketHint};
use faultbench_core::toolbox::{ToolCallRecord, Toolbox};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};
use tokio::io::AsyncReadExt;

const DEFAULT_TEMPLATES: &str = include_str!("../../data/external.toml");

/// What the bridge tells the CLI about its tools (`mcp_http::BRIDGE_INSTRUCTIONS`), here so that
/// the prompt version is the same with or without the bridge built.
const INSTRUCTIONS: &str =
    "Tools that probe a live emulated network. Commands run inside lab devices only.";

/// Largest stdout/stderr kept from the CLI, in bytes.
const OUTPUT_CAP: usize = 8 << 20;

/// How the CLI reaches the tools.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transport {
    /// faultbench serves the run's toolbox over MCP streamable HTTP on localhost.
    #[default]
    Bridge,
    /// The CLI spawns `faultbench mcp --lab {lab} --record {record}` over stdio.
    Faultbench,
}

/// How to read the CLI's stdout.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OutputFormat {
    /// Claude Code's `--output-format json` result (or `stream-json` lines).
    ClaudeJson,
    /// Plain text: stdout is the final answer.
    #[default]
    Text,
}

/// How to write the MCP config file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpConfigFormat {
    /// `{"mcpServers": {"faultbench": {...}}}` (Claude Code, Claude Desktop, many others).
    #[default]
    Claude,
    /// No file; the template passes `{mcp_url}` itself.
    None,
}

/// A command template for one CLI.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalTemplate {
    /// Executable (name on `PATH` or a path).
    pub program: String,
    /// Arguments, with placeholders.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra arguments added when a model is chosen.
    #[serde(default)]
    pub model_args: Vec<String>,
    /// The model the CLI uses when none is chosen, as far as it is known (for cost estimates
    /// and the run identity's notes; never passed to the CLI).
    #[serde(default)]
    pub default_model: Option<String>,
    /// Transport.
    #[serde(default)]
    pub transport: Transport,
    /// Output format.
    #[serde(default)]
    pub output: OutputFormat,
    /// MCP config file format.
    #[serde(default)]
    pub mcp_config: McpConfigFormat,
    /// The stdio MCP server command (transport `faultbench`).
    #[serde(default = "default_mcp_command")]
    pub mcp_command: Vec<String>,
    /// File names that must not exist in the working directory or any parent.
    #[serde(default = "default_instruction_files")]
    pub instruction_files: Vec<String>,
    /// Paths under `$HOME` that must not exist (user-level memory).
    #[serde(default)]
    pub home_instruction_files: Vec<String>,
    /// Extra environment variables for the CLI (values may use the placeholders; prefer
    /// `{mcp_url}` here over `args`: another local user can read a process's arguments, not its
    /// environment).
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// Variables of faultbench's own environment passed through to the CLI when set (its
    /// provider key, proxies, CA bundles). Everything else is withheld: the CLI starts from an
    /// empty environment plus [`ENV_ALLOW`], these, and `env`.
    #[serde(default)]
    pub env_pass: Vec<String>,
}

/// Variables every external CLI gets from faultbench's environment (when set); anything else
/// must be named by its template's `env_pass`. The judge's keys (`OPENAI_API_KEY`, …), cloud
/// credentials and faultbench's own settings never reach an agent unless a template says so.
pub const ENV_ALLOW: [&str; 5] = ["PATH", "HOME", "LANG", "TZ", "TERM"];

fn default_mcp_command() -> Vec<String> {
    [
        "{faultbench}",
        "mcp",
        "--lab",
        "{lab}",
        "--record",
        "{record}",
    ]
    .map(String::from)
    .to_vec()
}

fn default_instruction_files() -> Vec<String> {
    [
        "CLAUDE.md",
        "CLAUDE.local.md",
        ".claude",
        "AGENTS.md",
        "GEMINI.md",
        ".mcp.json",
    ]
    .map(String::from)
    .to_vec()
}

/// Named templates.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExternalTemplates {
    /// Templates by CLI name.
    #[serde(default)]
    pub agents: BTreeMap<String, ExternalTemplate>,
}

/// A problem with templates or the environment.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ExternalError(pub String);

impl ExternalTemplates {
    /// The built-in templates (`claude-code`).
    pub fn defaults() -> Self {
        // Checked by a unit test.
        ExternalTemplates::from_toml_str(DEFAULT_TEMPLATES).unwrap_or_default()
    }

    /// Parses templates.
    pub fn from_toml_str(text: &str) -> Result<Self, ExternalError> {
        toml::from_str(text).map_err(|e| ExternalError(format!("external agent templates: {e}")))
    }

    /// The template named `name`.
    pub fn get(&self, name: &str) -> Result<&ExternalTemplate, ExternalError> {
        self.agents.get(name).ok_or_else(|| {
            ExternalError(format!(
                "no external agent template `{name}`; known: {} (add one with [agents.{name}] in a templates file)",
                self.agents.keys().cloned().collect::<Vec<_>>().join(", ")
            ))
        })
    }
}

/// The external-agent runner.
pub struct ExternalAgent {
    name: String,
    template: ExternalTemplate,
    model: Option<String>,
    lab: Option<String>,
    workdir_base: Option<PathBuf>,
    faultbench_bin: PathBuf,
    keep_workdir: bool,
    ticket_hint: TicketHint,
}

impl ExternalAgent {
    /// An agent named `external:{cli}` running `template`.
    pub fn new(cli: &str, template: ExternalTemplate) -> Self {
        let faultbench_bin = std::env::current_exe()
            .ok()
            .filter(|p| p.file_name().is_some_and(|n| n == "faultbench"))
            .unwrap_or_else(|| PathBuf::from("faultbench"));
        ExternalAgent {
            name: format!("external:{cli}"),
            template,
            model: None,
            lab: None,
            workdir_base: std::env::var_os("FAULTBENCH_EXTERNAL_CWD").map(PathBuf::from),
            faultbench_bin,
            keep_workdir: false,
            ticket_hint: TicketHint::None,
        }
    }

    /// Tells the agent (or not) that the ticket may be inaccurate.
    pub fn with_ticket_hint(mut self, hint: TicketHint) -> Self {
        self.ticket_hint = hint;
        self
    }

    /// The template this agent runs.
    pub fn template(&self) -> &ExternalTemplate {
        &self.template
    }

    /// Asks the CLI for a model (adds the template's `model_args`).
    pub fn with_model(mut self, model: impl Into<String>) -> Self {
        self.model = Some(model.into());
        self
    }

    /// The lab's name (needed by transport `faultbench`).
    pub fn with_lab(mut self, lab: impl Into<String>) -> Self {
        self.lab = Some(lab.into());
        self
    }

    /// Where run directories are created (default `$FAULTBENCH_EXTERNAL_CWD` or the temp dir).
    pub fn with_workdir_base(mut self, dir: impl Into<PathBuf>) -> Self {
        self.workdir_base = Some(dir.into());
        self
    }

    /// The `faultbench` executable used for transport `faultbench`.
    pub fn with_faultbench_bin(mut self, path: impl Into<PathBuf>) -> Self {
        self.faultbench_bin = path.into();
        self
    }

    /// Keeps the working directory after the run (for debugging).
    pub fn keep_workdir(mut self, keep: bool) -> Self {
        self.keep_workdir = keep;
        self
    }
}

/// Refuses directories from which a CLI would pick up project instructions.
pub fn check_hermetic(
    dir: &Path,
    instruction_files: &[String],
    home_files: &[String],
) -> Result<(), ExternalError> {
    for anc in dir.ancestors() {
        if anc.join(".git").exists() {
            return Err(ExternalError(format!(
                "refusing to start: {} is inside a git repository ({}); choose a working directory \
                 outside any repository (FAULTBENCH_EXTERNAL_CWD)",
                dir.display(),
                anc.display()
            )));
        }
        for f in instruction_files {
            let p = anc.join(f);
            if p.exists() {
                return Err(ExternalError(format!(
                    "refusing to start: instruction file {} would reach the agent; remove it or choose \
                     another working directory (FAULTBENCH_EXTERNAL_CWD)",
                    p.display()
                )));
            }
        }
    }
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from) {
        for f in home_files {
            let p = home.join(f);
            if p.exists() {
                return Err(ExternalError(format!(
                    "refusing to start: user-level instruction file {} would reach the agent; move it \
                     away for benchmark runs or run under another HOME",
                    p.display()
                )));
            }
        }
    }
    Ok(())
}

/// Replaces `{name}` placeholders in one pass, so that values (a ticket may contain braces)
/// are never expanded again.
fn substitute(arg: &str, vars: &BTreeMap<&str, String>) -> String {
    let mut out = String::with_capacity(arg.len());
    let mut rest = arg;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        match after.find('}').map(|close| (&after[..close], close)) {
            Some((name, close)) if vars.contains_key(name) => {
                out.push_str(&vars[name]);
                rest = &after[close + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn fresh_dir(base: &Path, name: &str) -> std::io::Result<PathBuf> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let safe: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let dir = base.join(format!("faultbench-{safe}-{}-{nanos}", std::process::id()));
    std::fs::create_dir_all(base)?;
    // 0700: the MCP config inside holds the bridge's secret URL.
    std::fs::DirBuilder::new().mode(0o700).create(&dir)?;
    Ok(dir)
}

/// Writes a new file readable by its owner only (`0600`).
fn write_private(path: &Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    f.write_all(text.as_bytes())
}

/// The CLI's whole environment: [`ENV_ALLOW`] and the template's `env_pass` from ours (when
/// set), then the template's `env` with placeholders filled.
fn child_env(t: &ExternalTemplate, vars: &BTreeMap<&str, String>) -> Vec<(String, OsString)> {
    let mut out: Vec<(String, OsString)> = Vec::new();
    for name in ENV_ALLOW
        .iter()
        .copied()
        .chain(t.env_pass.iter().map(String::as_str))
    {
        if let Some(v) = std::env::var_os(name)
            && !out.iter().any(|(k, _)| k == name)
        {
            out.push((name.to_string(), v));
        }
    }
    for (k, v) in &t.env {
        out.retain(|(name, _)| name != k);
        out.push((k.clone(), substitute(v, vars).into()));
    }
    out
}

async fn read_capped<R: tokio::io::AsyncRead + Unpin>(mut r: R) -> Vec<u8> {
    let mut out = Vec::new();
    let mut buf = [0u8; 8192];
    loop {
        match r.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if out.len() < OUTPUT_CAP {
                    out.extend_from_slice(&buf[..n.min(OUTPUT_CAP - out.len())]);
                }
            }
        }
    }
    out
}

/// Reads a record file of JSON lines (one tool call per line).
pub fn read_record_file(path: &Path) -> Vec<ToolCallRecord> {
    // The agent can reach this file: a FIFO put in its place is refused, not waited on.
    let Ok(text) = faultbench_core::fsutil::read_regular_string_capped(
        path,
        faultbench_core::trace::MAX_TRACE_BYTES,
    ) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Ok(rec) = serde_json::from_value::<ToolCallRecord>(v.clone()) {
            out.push(rec);
            continue;
        }
        // A looser record: at least a tool name.
        if let Some(tool) = v
            .get("tool")
            .or_else(|| v.get("name"))
            .and_then(Value::as_str)
        {
            let output = v
                .get("output")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            out.push(ToolCallRecord {
                seq: out.len() as u32 + 1,
                tool: tool.to_string(),
                args: v
                    .get("args")
                    .or_else(|| v.get("arguments"))
                    .cloned()
                    .unwrap_or(Value::Null),
                output_chars: output.chars().count(),
                output,
                duration_ms: v.get("duration_ms").and_then(Value::as_u64).unwrap_or(0),
                truncated: false,
                timed_out: false,
                refused: v.get("refused").and_then(Value::as_bool).unwrap_or(false),
                error: v.get("error").and_then(Value::as_str).map(str::to_string),
            });
        }
    }
    out
}

#[async_trait::async_trait]
impl Agent for ExternalAgent {
    fn name(&self) -> &str {
        &self.name
    }

    fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// A hash of the instructions passed as `{system}` and those the MCP bridge announces (the
    /// user message is the paper's).
    fn prompt_version(&self) -> Option<String> {
        Some(prompt_version(&[
            &external_instructions(self.ticket_hint),
            mcp_http::BRIDGE_INSTRUCTIONS,
        ]))
    }

    async fn run(&self, input: &AgentInput, tools: Arc<dyn Toolbox>) -> AgentOutcome {
        let t = &self.template;
        let base = self.workdir_base.clone().unwrap_or_else(std::env::temp_dir);
        let workdir = match fresh_dir(&base, &self.name) {
            Ok(d) => d,
            Err(e) => {
                return AgentOutcome::failed(format!(
                    "cannot create a working directory under {}: {e}",
                    base.display()
                ));
            }
        };
        let out = self.run_in(&workdir, input, tools).await;
        if !self.keep_workdir {
            let _ = std::fs::remove_dir_all(&workdir);
        }
        let _ = t;
        out
    }
}

impl ExternalAgent {
    async fn run_in(
        &self,
        workdir: &Path,
        input: &AgentInput,
        tools: Arc<dyn Toolbox>,
    ) -> AgentOutcome {
        let t = &self.template;
        let started = Instant::now();
        let mut outcome = AgentOutcome {
            model: self.model.clone(),
            ..Default::default()
        };
        if let Err(e) = check_hermetic(workdir, &t.instruction_files, &t.home_instruction_files) {
            outcome.error = Some(e.0);
            return outcome;
        }
        let record = workdir.join("mcp-record.jsonl");
        let mut vars: BTreeMap<&str, String> = BTreeMap::new();
        vars.insert("workdir", workdir.display().to_string());
        vars.insert("record", record.display().to_string());
        vars.insert("faultbench", self.faultbench_bin.display().to_string());
        vars.insert("max_turns", input.budget.max_turns.to_string());
        vars.insert("lab", self.lab.clone().unwrap_or_default());
        let bridge = match t.transport {
            Transport::Bridge => match McpBridge::start(tools).await {
                Ok(b) => {
                    vars.insert("mcp_url", b.url().to_string());
                    Some(b)
                }
                Err(e) => {
                    outcome.error = Some(format!("cannot start the MCP bridge: {e}"));
                    return outcome;
                }
            },
            Transport::Faultbench => {
                if self.lab.is_none() {
                    outcome.error = Some(
                        "transport `faultbench` needs the lab's name (ExternalAgent::with_lab); use transport \
                         `bridge` to serve the run's toolbox directly"
                            .into(),
                    );
                    return outcome;
                }
                vars.insert("mcp_url", String::new());
                None
            }
        };
        let server = match t.transport {
            Transport::Bridge => json!({"type": "http", "url": vars["mcp_url"]}),
            Transport::Faultbench => {
                let argv: Vec<String> =
                    t.mcp_command.iter().map(|a| substitute(a, &vars)).collect();
                json!({"type": "stdio", "command": argv.first().cloned().unwrap_or_default(),
                       "args": argv.get(1..).unwrap_or_default()})
            }
        };
        let config_path = workdir.join("mcp.json");
        vars.insert("mcp_config", config_path.display().to_string());
        if t.mcp_config == McpConfigFormat::Claude {
            let cfg = json!({"mcpServers": {"faultbench": server}});
            if let Err(e) = write_private(&config_path, &cfg.to_string()) {
                outcome.error = Some(format!("cannot write {}: {e}", config_path.display()));
                return outcome;
            }
        }
        vars.insert("system", external_instructions(self.ticket_hint));
        vars.insert("prompt", input.prompt.clone());
        let mut argv: Vec<String> = t.args.iter().map(|a| substitute(a, &vars)).collect();
        if let Some(m) = &self.model {
            vars.insert("model", m.clone());
            argv.extend(t.model_args.iter().map(|a| substitute(a, &vars)));
        }

        let mut cmd = tokio::process::Command::new(&t.program);
        cmd.args(&argv)
            .current_dir(workdir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_clear()
            .envs(child_env(t, &vars))
            .kill_on_drop(true)
            .process_group(0);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                outcome.error = Some(format!("cannot start `{}`: {e}", t.program));
                return outcome;
            }
        };
        let pid = child.id();
        let stdout = child.stdout.take().map(|s| tokio::spawn(read_capped(s)));
        let stderr = child.stderr.take().map(|s| tokio::spawn(read_capped(s)));
        let remaining = input.budget.wall_clock().saturating_sub(started.elapsed());
        let status = match tokio::time::timeout(remaining, child.wait()).await {
            Ok(s) => s.ok(),
            Err(_) => {
                outcome.hit_wall_clock = true;
                if let Some(pgid) = pid {
                    // The CLI may have children (its MCP servers): end the whole group it
                    // leads (`process_group(0)` above).
                    kill_process_group(pgid);
                }
                let _ = child.kill().await;
                None
            }
        };
        let stdout = match stdout {
            Some(h) => h.await.unwrap_or_default(),
            None => Vec::new(),
        };
        let stderr = match stderr {
            Some(h) => h.await.unwrap_or_default(),
            None => Vec::new(),
        };
        let stdout = String::from_utf8_lossy(&stdout);
        let stderr = String::from_utf8_lossy(&stderr);
        let parsed = parse_output(t.output, &stdout, &stderr);
        outcome.final_text = parsed.final_text;
        outcome.usage = parsed.usage;
        outcome.cost_usd = parsed.cost_usd;
        outcome.hit_max_turns = parsed.hit_max_turns;
        if outcome.model.is_none() {
            outcome.model = parsed.model;
        }
        outcome.tool_log = match &bridge {
            Some(b) => b.records(),
            None => read_record_file(&record),
        };
        outcome.tool_calls = outcome.tool_log.len() as u32;
        let failed_exit = status.is_some_and(|s| !s.success());
        let tail: String = stderr
            .lines()
            .filter(|l| !l.trim().is_empty())
            .rev()
            .take(5)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect::<Vec<_>>()
            .join(" | ");
        if outcome.error.is_none() && !outcome.hit_wall_clock {
            if failed_exit && outcome.final_text.trim().is_empty() {
                outcome.error = Some(format!(
                    "`{}` exited with {}: {tail}",
                    t.program,
                    status.map(|s| s.to_string()).unwrap_or_default()
                ));
            } else if let Some(e) = parsed.error {
                outcome.error = Some(format!("{e}; stderr: {tail}"));
            }
        }
        drop(bridge);
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_templates_parse() {
        let t = ExternalTemplates::from_toml_str(DEFAULT_TEMPLATES).unwrap();
        let cc = t.get("claude-code").unwrap();
        assert_eq!(cc.program, "claude");
        assert_eq!(cc.output, OutputFormat::ClaudeJson);
        assert!(cc.args.iter().any(|a| a == "{mcp_config}"));
        assert!(
            ExternalTemplates::defaults()
                .get("nope")
                .unwrap_err()
                .0
                .contains("claude-code")
        );
    }

    #[test]
    fn hermeticity() {
        let tmp = tempfile::tempdir().unwrap();
        let run = tmp.path().join("a/b");
        std::fs::create_dir_all(&run).unwrap();
        let files = default_instruction_files();
        check_hermetic(&run, &files, &[]).unwrap();
        std::fs::write(tmp.path().join("a/AGENTS.md"), "hints").unwrap();
        let e = check_hermetic(&run, &files, &[]).unwrap_err();
        assert!(e.0.contains("AGENTS.md"), "{e}");
        std::fs::remove_file(tmp.path().join("a/AGENTS.md")).unwrap();
        std::fs::create_dir_all(tmp.path().join(".git")).unwrap();
        let e = check_hermetic(&run, &files, &[]).unwrap_err();
        assert!(e.0.contains("git repository"), "{e}");
    }

    #[test]
    fn placeholders() {
        let mut v = BTreeMap::new();
        v.insert("prompt", "a {b} c {max_turns}".to_string());
        v.insert("max_turns", "20".to_string());
        assert_eq!(substitute("--max-turns={max_turns}", &v), "--max-turns=20");
        assert_eq!(
            substitute("{prompt}", &v),
            "a {b} c {max_turns}",
            "values are not re-expanded"
        );
        assert_eq!(substitute("{unknown} {", &v), "{unknown} {");
    }

    #[test]
    fn record_files() {
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("r.jsonl");
        std::fs::write(
            &p,
            "{\"tool\":\"ping_pair\",\"args\":{\"host_a\":\"pc1\"},\"output\":\"ok\"}\nnot json\n\n{\"name\":\"get_reachability\"}\n",
        )
        .unwrap();
        let r = read_record_file(&p);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].tool.as_str(), r[0].output_chars), ("ping_pair", 2));
        assert_eq!(r[1].seq, 2);
        assert!(read_record_file(&tmp.path().join("missing")).is_empty());
    }
}

/// Sends SIGKILL to the process group `pgid` (a group leader's pid). A direct syscall, not the
/// `kill` program: procps-ng 4.0.2 (Debian 12) reads `kill -KILL -4711` as process group 4.
fn kill_process_group(pgid: u32) {
    if let Ok(pgid) = libc::pid_t::try_from(pgid)
        && pgid > 1
    {
        // SAFETY: kill(2) has no memory effects; a negative pid signals only that group.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod kill_tests {
    use std::os::unix::process::CommandExt;
    use std::process::Command;

    fn alive(pid: u32) -> bool {
        // Zombies count as gone: read the state from /proc.
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| !s.split(") ").nth(1).unwrap_or("").starts_with('Z'))
            .unwrap_or(false)
    }

    #[test]
    fn kills_exactly_the_group() {
        let mut target = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let mut other = Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        super::kill_process_group(target.id());
        let status = target.wait().unwrap();
        assert!(!status.success(), "the group leader was killed");
        assert!(alive(other.id()), "a process of another group survives");
        other.kill().unwrap();
        other.wait().unwrap();
    }
}
