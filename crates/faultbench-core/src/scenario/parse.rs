//! The scenario file reader: strict where the release is silent, so that a broken file is
//! caught with its line number instead of producing a scenario that quietly does nothing.

use super::injection::{parse_injection, truncate};
use super::{Headers, NikaLabel, ScenarioSpec, Section, parse_axes, parse_checks, section};
use crate::fsutil::{InputProblem, read_regular_capped};
use crate::ids::{InvalidId, ScenarioId, TopologyId};
use crate::text::echo;
use regex::Regex;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

/// Largest scenario file accepted (the release's files are 2–5 KiB).
pub const MAX_SCENARIO_BYTES: u64 = 1024 * 1024;

/// A scenario that could not be read, with the place and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ScenarioError {
    /// The file, when reading from disk.
    pub path: Option<PathBuf>,
    /// 1-based line number (0 when the file could not be opened).
    pub line: usize,
    /// What is wrong.
    pub message: String,
    /// What the reader expected at that place.
    pub expected: String,
}

impl ScenarioError {
    fn at(line: usize, message: impl Into<String>, expected: impl Into<String>) -> Self {
        ScenarioError {
            path: None,
            line,
            message: message.into(),
            expected: expected.into(),
        }
    }

    /// Attaches the file path.
    pub fn with_path(mut self, path: &Path) -> Self {
        self.path = Some(path.to_path_buf());
        self
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let place = self
            .path
            .as_deref()
            .map(|p| p.display().to_string())
            .unwrap_or_else(|| "<scenario>".into());
        write!(f, "{place}:{}: {}", self.line, self.message)?;
        if !self.expected.is_empty() {
            write!(f, " (expected {})", self.expected)?;
        }
        Ok(())
    }
}

pub(crate) fn parse_file(path: &Path) -> Result<ScenarioSpec, ScenarioError> {
    // A regular file only: a FIFO or a device named `*.txt` is refused without blocking.
    let bytes = read_regular_capped(path, MAX_SCENARIO_BYTES).map_err(|e| {
        match e.problem {
            InputProblem::TooBig { len, .. } => too_big(len),
            _ => ScenarioError::at(0, e.reason(), ""),
        }
        .with_path(path)
    })?;
    parse_bytes(&bytes).map_err(|e| e.with_path(path))
}

fn too_big(len: u64) -> ScenarioError {
    ScenarioError::at(
        1,
        format!("file is {len} bytes; scenario files are at most {MAX_SCENARIO_BYTES} bytes"),
        "a scenario text file of a few KiB",
    )
}

pub(crate) fn parse_bytes(bytes: &[u8]) -> Result<ScenarioSpec, ScenarioError> {
    if bytes.len() as u64 > MAX_SCENARIO_BYTES {
        return Err(too_big(bytes.len() as u64));
    }
    let line_of = |pos: usize| bytes[..pos].iter().filter(|&&b| b == b'\n').count() + 1;
    let text = std::str::from_utf8(bytes).map_err(|e| {
        ScenarioError::at(
            line_of(e.valid_up_to()),
            "not valid UTF-8 (binary data?)",
            "a UTF-8 text file",
        )
    })?;
    if let Some(pos) = text
        .bytes()
        .position(|b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c))
    {
        return Err(ScenarioError::at(
            line_of(pos),
            format!("binary content: control byte 0x{:02x}", bytes[pos]),
            "a plain text file",
        ));
    }
    parse_text(text)
}

static SECTION_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\[([A-Z][A-Z0-9-]*)\]\s*$").unwrap());
static HEADER_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^([A-Za-z][A-Za-z -]*):(.*)$").unwrap());

const HEADER_NAMES: &str = "`Scenario:`, `Topology:`, `Fault family:`, `Ticket style:`, `Variant-of:`, `Confidence-flip-of:`";

struct RawSection {
    name: String,
    header_line: usize,
    lines: Vec<(usize, String)>,
}

pub(crate) fn parse_text(text: &str) -> Result<ScenarioSpec, ScenarioError> {
    if text.trim().is_empty() {
        return Err(ScenarioError::at(
            1,
            "empty file",
            "a header block starting with `Scenario: <id>`",
        ));
    }
    let mut scenario_id: Option<ScenarioId> = None;
    let mut topology_id: Option<TopologyId> = None;
    let mut fault_family = None;
    let mut ticket_style = None;
    let mut variant_of = None;
    let mut confidence_flip_of = None;
    let mut header_lines: Vec<(&'static str, usize)> = Vec::new();
    let mut sections: Vec<RawSection> = Vec::new();
    let last_line = text.trim_end_matches(['\n', '\r']).split('\n').count();

    for (idx, raw) in text.split('\n').enumerate() {
        let n = idx + 1;
        // Every carriage return ending a line goes (CRLF files, and stray `\r\r\n`): a line
        // read never ends in `\r`, so what the writer puts back reads back the same.
        let line = raw.trim_end_matches('\r');
        if let Some(c) = SECTION_LINE.captures(line) {
            let name = c[1].to_string();
            if !section::KNOWN.contains(&name.as_str()) {
                return Err(ScenarioError::at(
                    n,
                    format!("unknown section [{}]", echo(&name)),
                    format!("one of {}", known_sections()),
                ));
            }
            if let Some(prev) = sections.iter().find(|s| s.name == name) {
                return Err(ScenarioError::at(
                    n,
                    format!(
                        "duplicate section [{name}] (first at line {})",
                        prev.header_line
                    ),
                    "each section at most once",
                ));
            }
            sections.push(RawSection {
                name,
                header_line: n,
                lines: Vec::new(),
            });
            continue;
        }
        if let Some(cur) = sections.last_mut() {
            cur.lines.push((n, line.to_string()));
            continue;
        }
        // Header block.
        let t = line.trim();
        if t.is_empty() || (t.len() >= 3 && t.chars().all(|c| c == '=')) {
            continue;
        }
        let Some(c) = HEADER_LINE.captures(t) else {
            return Err(ScenarioError::at(
                n,
                format!(
                    "unexpected text before the first section: `{}`",
                    truncate(t, 60)
                ),
                format!("a header line ({HEADER_NAMES}) or a section such as [PROMPT-TO-AGENT]"),
            ));
        };
        let key = c[1].trim();
        let value = c[2].trim().to_string();
        let name: &'static str = match key {
            "Scenario" => "Scenario",
            "Topology" => "Topology",
            "Fault family" => "Fault family",
            "Ticket style" => "Ticket style",
            "Variant-of" => "Variant-of",
            "Confidence-flip-of" => "Confidence-flip-of",
            other => {
                return Err(ScenarioError::at(
                    n,
                    format!("unknown header `{}:`", echo(other)),
                    format!("one of {HEADER_NAMES}"),
                ));
            }
        };
        if let Some((_, first)) = header_lines.iter().find(|(k, _)| *k == name) {
            return Err(ScenarioError::at(
                n,
                format!("duplicate `{name}:` header (first at line {first})"),
                "each header at most once",
            ));
        }
        header_lines.push((name, n));
        let needs_word = matches!(
            name,
            "Scenario" | "Topology" | "Variant-of" | "Confidence-flip-of" | "Ticket style"
        );
        if value.is_empty() || (needs_word && value.split_whitespace().count() != 1) {
            return Err(ScenarioError::at(
                n,
                format!(
                    "`{name}:` needs a single-word value, got `{}`",
                    truncate(&value, 60)
                ),
                format!("`{name}: <name-without-spaces>`"),
            ));
        }
        // Ids become parts of paths (run folders, topology lookup): checked here, with the line.
        let id_error = |e: InvalidId| {
            ScenarioError::at(
                n,
                format!("`{name}:` {e}"),
                format!("`{name}: <id>` naming a file or folder, e.g. `kath2-router1-ripd-down`"),
            )
        };
        match name {
            "Scenario" => scenario_id = Some(ScenarioId::new(value).map_err(id_error)?),
            "Topology" => topology_id = Some(TopologyId::new(value).map_err(id_error)?),
            "Fault family" => fault_family = Some(value),
            "Variant-of" => {
                ScenarioId::new(value.as_str()).map_err(id_error)?;
                variant_of = Some(value);
            }
            "Confidence-flip-of" => {
                ScenarioId::new(value.as_str()).map_err(id_error)?;
                confidence_flip_of = Some(value);
            }
            _ => {
                if crate::category::Layer::from_ticket_style(&value).is_none() {
                    return Err(ScenarioError::at(
                        n,
                        format!("unknown ticket style `{}`", echo(&value)),
                        "standard, novice, naive, novice-confident, naive-unsure or naive-no-detail",
                    ));
                }
                ticket_style = Some(value);
            }
        }
    }

    let missing = |name: &str, key: &str| {
        ScenarioError::at(
            1,
            format!("missing `{name}:` header"),
            format!("a line `{name}: {key}` before the first section"),
        )
    };
    let scenario = scenario_id.ok_or_else(|| missing("Scenario", "<id>"))?;
    let topology = topology_id.ok_or_else(|| missing("Topology", "<name>"))?;
    let headers = Headers {
        scenario,
        topology,
        fault_family,
        ticket_style,
        variant_of,
        confidence_flip_of,
    };
    for req in section::REQUIRED {
        if !sections.iter().any(|s| s.name == req) {
            let after = sections
                .last()
                .map(|s| s.name.as_str())
                .unwrap_or("the headers");
            return Err(ScenarioError::at(
                last_line.max(1),
                format!(
                    "missing section [{req}] (the file ends after [{after}]; was it cut short?)"
                ),
                format!("the sections {}", required_sections()),
            ));
        }
    }

    let mut out = ScenarioSpec {
        headers,
        sections: Vec::new(),
        injection: Default::default(),
        checks: Vec::new(),
        axes: Vec::new(),
        label: NikaLabel::default(),
    };
    for raw in &sections {
        let joined: Vec<&str> = raw.lines.iter().map(|(_, l)| l.as_str()).collect();
        let body = joined.join("\n").trim().to_string();
        // Line number of the first body line after trimming.
        let first = raw
            .lines
            .iter()
            .find(|(_, l)| !l.trim().is_empty())
            .map(|(n, _)| *n)
            .unwrap_or(raw.header_line);
        let body_line = |offset: usize| first + offset;
        match raw.name.as_str() {
            section::PROMPT if body.is_empty() => {
                return Err(ScenarioError::at(
                    raw.header_line,
                    "[PROMPT-TO-AGENT] is empty",
                    "the ticket text the agent receives",
                ));
            }
            section::INJECTION => {
                out.injection = parse_injection(&body).map_err(|e| {
                    ScenarioError::at(
                        body_line(e.offset),
                        format!("[INJECTION]: {}", e.message),
                        e.expected,
                    )
                })?;
            }
            section::POST_INJECT_CHECK | section::PRE_CHECK => {
                let checks = parse_checks(&body).map_err(|e| {
                    ScenarioError::at(
                        body_line(e.offset),
                        format!("[{}]: cannot read `{}`", raw.name, truncate(&e.line, 60)),
                        "`<device> <command> => expect <result>`, a `#` comment, or a blank line",
                    )
                })?;
                if raw.name == section::POST_INJECT_CHECK {
                    out.checks = checks;
                }
            }
            section::SCORING_AXES => {
                out.axes = parse_axes(&body);
                if out.axes.is_empty() {
                    return Err(ScenarioError::at(
                        raw.header_line,
                        "[SCORING-AXES] has no axis",
                        "lines such as `assert-no-anomaly` or `must-identify-device: r1`",
                    ));
                }
            }
            section::NIKA_LABEL => out.label = parse_label(&body, body_line)?,
            _ => {}
        }
        out.sections.push(Section {
            name: raw.name.clone(),
            body,
        });
    }
    if !out.injection.is_negative_control() && out.checks.is_empty() {
        let line = sections
            .iter()
            .find(|s| s.name == section::POST_INJECT_CHECK)
            .map(|s| s.header_line)
            .unwrap_or(1);
        return Err(ScenarioError::at(
            line,
            "the injection runs a command but [POST-INJECT-CHECK] has no check",
            "at least one `<device> <command> => expect <result>` line proving the fault took",
        ));
    }
    Ok(out)
}

fn parse_label(body: &str, line: impl Fn(usize) -> usize) -> Result<NikaLabel, ScenarioError> {
    let mut label = NikaLabel::default();
    for (offset, raw) in body.lines().enumerate() {
        let t = raw.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let Some((k, v)) = t.split_once(':') else {
            return Err(ScenarioError::at(
                line(offset),
                format!("[NIKA-LABEL]: cannot read `{}`", truncate(t, 60)),
                "`key: value` lines (nika_label, nika_category, in_taxonomy, note)",
            ));
        };
        let (k, v) = (k.trim(), v.trim());
        if k == "in_taxonomy" && !matches!(v, "true" | "false") {
            return Err(ScenarioError::at(
                line(offset),
                format!("[NIKA-LABEL]: in_taxonomy is `{}`", echo(v)),
                "`in_taxonomy: true` or `in_taxonomy: false`",
            ));
        }
        label.fields.push((k.to_string(), v.to_string()));
    }
    for key in ["nika_label", "nika_category", "in_taxonomy"] {
        if label.get(key).is_none() {
            return Err(ScenarioError::at(
                line(body.lines().count()),
                format!("[NIKA-LABEL] lacks `{key}:` (was the file cut short?)"),
                "the keys nika_label, nika_category and in_taxonomy",
            ));
        }
    }
    Ok(label)
}

fn known_sections() -> String {
    section::KNOWN
        .iter()
        .map(|s| format!("[{s}]"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn required_sections() -> String {
    section::REQUIRED
        .iter()
        .map(|s| format!("[{s}]"))
        .collect::<Vec<_>>()
        .join(", ")
}
