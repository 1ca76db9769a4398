//! Run traces: what happened during the agent phase, event by event, and the bounded digest of
//! it that a judge reads.
//!
//! A run's trace is a list of [`TraceEvent`]s — the agent's notes, each tool call with its
//! arguments, each tool result, errors, and how the run ended — written one JSON object per line
//! to `trace.jsonl` ([`write_jsonl`], [`read_jsonl`]). Traces are built from what agents already
//! report ([`events_from_outcome`]: the [`Turn`]s and the [`ToolCallRecord`]s), or read from the
//! public release's `trace.log` ([`parse_release_log`]).
//!
//! The **digest** ([`digest`]) follows the release's layout and limits: tool calls are numbered
//! from 1 as `N. RAN tool(args)`, results follow as `   -> …`, notes as `   AGENT NOTE: …`,
//! errors as `   ! …`, and the end as `(end of investigation: …)`. Each entry is cut to its
//! cap (tool 300, result 280, note 600, error 200, end 120 characters; newlines become spaces;
//! a cut entry ends in ` ...[cut]`), and the whole digest to 16,000 characters followed by
//! `\n...[investigation log truncated]`. The agent's start line, the submitted verdict and the
//! full final text are left out: the judge sees the diagnosis separately.
//!
//! ```
//! use faultbench_core::trace::{TraceEvent, digest};
//! use serde_json::json;
//!
//! let events = vec![
//!     TraceEvent::Text { text: "Checking r1 first.".into() },
//!     TraceEvent::ToolCall { seq: 1, tool: "frr_get_ospf_conf".into(), args: json!({"host_name": "r1"}) },
//!     TraceEvent::ToolResult { seq: 1, output: "ospfd is not running".into(), error: None },
//!     TraceEvent::Final { stop: "end_turn".into(), tool_calls: 1 },
//! ];
//! assert_eq!(
//!     digest(&events),
//!     "   AGENT NOTE: Checking r1 first.\n\
//!      1. RAN frr_get_ospf_conf({\"host_name\":\"r1\"})\n   \
//!      -> ospfd is not running\n\
//!      (end of investigation: stop=end_turn tool_calls=1)"
//! );
//! ```

use crate::agent::{AgentOutcome, Turn};
use crate::toolbox::ToolCallRecord;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::io::Write;
use std::path::Path;

/// One event of a run's trace.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TraceEvent {
    /// The agent started (not part of the digest).
    Start {
        /// Agent name.
        agent: String,
    },
    /// Text the agent wrote (its notes, or its final answer).
    Text {
        /// The text.
        text: String,
    },
    /// A tool call as issued.
    ToolCall {
        /// 1-based call number.
        seq: u32,
        /// Tool name.
        tool: String,
        /// Arguments.
        args: Value,
    },
    /// What a tool call returned.
    ToolResult {
        /// The call it answers.
        seq: u32,
        /// Output text as the agent saw it.
        output: String,
        /// The error, when the call failed.
        error: Option<String>,
    },
    /// An error that hit the agent (provider failure, crash, budget).
    Error {
        /// What happened.
        message: String,
    },
    /// How the agent phase ended.
    Final {
        /// `end_turn`, `max_turns`, `wall_clock` or `error`.
        stop: String,
        /// Tool calls executed.
        tool_calls: u32,
    },
    /// The verdict as parsed (not part of the digest).
    Submitted {
        /// A diagnosis block with a verdict was found.
        parsed_ok: bool,
        /// The verdict.
        is_anomaly: Option<bool>,
        /// Blamed devices.
        faulty_devices: Vec<String>,
    },
    /// The full final message (not part of the digest).
    FinalText {
        /// The text.
        text: String,
    },
}

/// Per-entry and total limits of a digest, in characters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DigestCaps {
    /// `N. RAN tool(args)` body.
    pub tool: usize,
    /// `-> result` body.
    pub result: usize,
    /// `AGENT NOTE:` body.
    pub text: usize,
    /// `!` error body.
    pub error: usize,
    /// `(end of investigation: …)` body.
    pub end: usize,
    /// The whole digest.
    pub total: usize,
}

impl DigestCaps {
    /// The public release's limits.
    pub const RELEASE: DigestCaps = DigestCaps {
        tool: 300,
        result: 280,
        text: 600,
        error: 200,
        end: 120,
        total: 16_000,
    };
}

impl Default for DigestCaps {
    fn default() -> Self {
        DigestCaps::RELEASE
    }
}

/// Marker after a cut entry.
pub const CUT_MARK: &str = " ...[cut]";
/// Marker after a cut digest.
pub const TRUNCATED_MARK: &str = "\n...[investigation log truncated]";

/// Flattens newlines and cuts to `cap` characters.
fn cap_entry(body: &str, cap: usize) -> String {
    let flat = body.replace("\r\n", " ").replace(['\n', '\r'], " ");
    match flat.char_indices().nth(cap) {
        Some((byte, _)) => format!("{}{CUT_MARK}", &flat[..byte]),
        None => flat,
    }
}

/// The digest of a trace with the release's limits.
pub fn digest(events: &[TraceEvent]) -> String {
    digest_with(events, DigestCaps::RELEASE)
}

/// The digest of a trace with custom limits.
pub fn digest_with(events: &[TraceEvent], caps: DigestCaps) -> String {
    let mut lines: Vec<String> = Vec::new();
    let mut n = 0u32;
    for e in events {
        match e {
            TraceEvent::ToolCall { tool, args, .. } => {
                n += 1;
                let args = match args {
                    Value::Null => String::new(),
                    Value::String(s) => s.clone(),
                    v => v.to_string(),
                };
                lines.push(format!(
                    "{n}. RAN {}",
                    cap_entry(&format!("{tool}({args})"), caps.tool)
                ));
            }
            TraceEvent::ToolResult { output, error, .. } => {
                let body = match error {
                    Some(err) if output.trim().is_empty() => format!("error: {err}"),
                    Some(err) => format!("{output} (error: {err})"),
                    None => output.clone(),
                };
                lines.push(format!("   -> {}", cap_entry(&body, caps.result)));
            }
            TraceEvent::Text { text } if !text.trim().is_empty() => {
                lines.push(format!(
                    "   AGENT NOTE: {}",
                    cap_entry(text.trim(), caps.text)
                ));
            }
            TraceEvent::Error { message } => {
                lines.push(format!("   ! {}", cap_entry(message, caps.error)));
            }
            TraceEvent::Final { stop, tool_calls } => {
                let body = format!("stop={stop} tool_calls={tool_calls}");
                lines.push(format!(
                    "(end of investigation: {})",
                    cap_entry(&body, caps.end)
                ));
            }
            _ => {}
        }
    }
    let text = lines.join("\n");
    match text.char_indices().nth(caps.total) {
        Some((byte, _)) => format!("{}{TRUNCATED_MARK}", &text[..byte]),
        None => text,
    }
}

/// The trace of a set of turns and executed tool calls, in order: each turn's text, then the
/// calls it requested paired with their records (by order); calls without a turn (e.g. reported
/// by an external agent) follow at the end.
pub fn events_from_turns(turns: &[Turn], calls: &[ToolCallRecord]) -> Vec<TraceEvent> {
    let mut out = Vec::new();
    let mut next = 0usize;
    let push_call = |out: &mut Vec<TraceEvent>, c: &ToolCallRecord| {
        out.push(TraceEvent::ToolCall {
            seq: c.seq,
            tool: c.tool.clone(),
            args: c.args.clone(),
        });
        out.push(TraceEvent::ToolResult {
            seq: c.seq,
            output: c.output.clone(),
            error: c.error.clone(),
        });
    };
    for t in turns {
        if !t.text.trim().is_empty() {
            out.push(TraceEvent::Text {
                text: t.text.clone(),
            });
        }
        for req in &t.tool_calls {
            match calls.get(next) {
                Some(c) if c.tool == req.tool => {
                    push_call(&mut out, c);
                    next += 1;
                }
                // Requested but never executed (budget ran out, refused before recording).
                _ => out.push(TraceEvent::ToolCall {
                    seq: 0,
                    tool: req.tool.clone(),
                    args: req.args.clone(),
                }),
            }
        }
    }
    for c in &calls[next.min(calls.len())..] {
        push_call(&mut out, c);
    }
    out
}

/// The full trace of an agent's outcome: start, turns and tool calls, error, end, verdict and
/// final text.
pub fn events_from_outcome(agent: &str, outcome: &AgentOutcome) -> Vec<TraceEvent> {
    let mut out = vec![TraceEvent::Start {
        agent: agent.to_string(),
    }];
    out.extend(events_from_turns(&outcome.turns, &outcome.tool_log));
    if let Some(e) = &outcome.error {
        out.push(TraceEvent::Error { message: e.clone() });
    }
    let stop = if outcome.hit_max_turns {
        "max_turns"
    } else if outcome.hit_wall_clock {
        "wall_clock"
    } else if outcome.error.is_some() {
        "error"
    } else {
        "end_turn"
    };
    out.push(TraceEvent::Final {
        stop: stop.into(),
        tool_calls: outcome.tool_calls,
    });
    let d = outcome.diagnosis();
    out.push(TraceEvent::Submitted {
        parsed_ok: d.parsed_ok,
        is_anomaly: d.is_anomaly,
        faulty_devices: d.faulty_devices,
    });
    out.push(TraceEvent::FinalText {
        text: outcome.final_text.clone(),
    });
    out
}

/// A trace file that could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Reading or writing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A line is not a trace event.
    #[error(
        "{path}:{line}: not a trace event ({message}); expected one JSON object per line with an `event` field"
    )]
    Line {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The JSON error.
        message: String,
    },
}

/// Writes events as JSON lines.
pub fn write_jsonl(events: &[TraceEvent], path: &Path) -> Result<(), TraceError> {
    let io = |source| TraceError::Io {
        path: path.display().to_string(),
        source,
    };
    let mut buf = Vec::new();
    for e in events {
        serde_json::to_writer(&mut buf, e).map_err(|e| io(std::io::Error::other(e)))?;
        buf.push(b'\n');
    }
    let mut f = std::fs::File::create(path).map_err(io)?;
    f.write_all(&buf).map_err(io)?;
    f.sync_all().map_err(io)
}

/// Reads a `trace.jsonl` (blank lines are skipped).
pub fn read_jsonl(path: &Path) -> Result<Vec<TraceEvent>, TraceError> {
    let text = std::fs::read_to_string(path).map_err(|source| TraceError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse_jsonl(&text).map_err(|(line, message)| TraceError::Line {
        path: path.display().to_string(),
        line,
        message,
    })
}

/// Parses JSON-lines text; the error is (1-based line, message).
pub fn parse_jsonl(text: &str) -> Result<Vec<TraceEvent>, (usize, String)> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| (i + 1, crate::bounds::echo(&e.to_string()).into_owned()))
        })
        .collect()
}

/// Reads the release's `trace.log` (`[TAG] body` lines; other lines continue the previous entry).
/// Tool lines `name(args)` keep their argument text as a string.
pub fn parse_release_log(text: &str) -> Vec<TraceEvent> {
    let mut entries: Vec<(String, String)> = Vec::new();
    const TAGS: [&str; 8] = [
        "AGENT",
        "TOOL",
        "RESULT",
        "TEXT",
        "FINAL",
        "SUBMITTED",
        "FINAL-TEXT",
        "ERROR",
    ];
    for line in text.lines() {
        let tagged = line.strip_prefix('[').and_then(|rest| {
            let (tag, body) = rest.split_once(']')?;
            TAGS.contains(&tag).then(|| {
                (
                    tag.to_string(),
                    body.strip_prefix(' ').unwrap_or(body).to_string(),
                )
            })
        });
        match tagged {
            Some(e) => entries.push(e),
            None => {
                if let Some(last) = entries.last_mut() {
                    last.1.push('\n');
                    last.1.push_str(line);
                }
            }
        }
    }
    let mut seq = 0u32;
    entries
        .into_iter()
        .filter_map(|(tag, body)| match tag.as_str() {
            "AGENT" => Some(TraceEvent::Start { agent: body }),
            "TEXT" => Some(TraceEvent::Text { text: body }),
            "TOOL" => {
                seq += 1;
                let (tool, args) = match body.split_once('(') {
                    Some((t, a)) => (t.to_string(), a.strip_suffix(')').unwrap_or(a).to_string()),
                    None => (body.clone(), String::new()),
                };
                Some(TraceEvent::ToolCall {
                    seq,
                    tool,
                    args: Value::String(args),
                })
            }
            "RESULT" => Some(TraceEvent::ToolResult {
                seq,
                output: body,
                error: None,
            }),
            "ERROR" => Some(TraceEvent::Error { message: body }),
            "FINAL" => {
                let field = |k: &str| {
                    body.split_whitespace()
                        .find_map(|w| w.strip_prefix(k).map(str::to_string))
                };
                Some(TraceEvent::Final {
                    stop: field("stop=").unwrap_or_default(),
                    tool_calls: field("tool_calls=")
                        .and_then(|n| n.parse().ok())
                        .unwrap_or(seq),
                })
            }
            "FINAL-TEXT" => Some(TraceEvent::FinalText { text: body }),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::RequestedCall;
    use proptest::prelude::*;
    use serde_json::json;

    fn record(seq: u32, tool: &str, output: &str) -> ToolCallRecord {
        ToolCallRecord {
            seq,
            tool: tool.into(),
            args: json!({"host_name": "r1"}),
            output_chars: output.chars().count(),
            output: output.into(),
            duration_ms: 1,
            truncated: false,
            timed_out: false,
            refused: false,
            error: None,
        }
    }

    #[test]
    fn entries_are_capped_and_flattened() {
        let long = "x".repeat(500);
        let events = vec![
            TraceEvent::ToolCall {
                seq: 1,
                tool: "exec_shell".into(),
                args: json!({"command": long}),
            },
            TraceEvent::ToolResult {
                seq: 1,
                output: format!("line1\nline2{}", "y".repeat(400)),
                error: None,
            },
            TraceEvent::Error {
                message: "e".repeat(250),
            },
        ];
        let d = digest(&events);
        let lines: Vec<&str> = d.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[0].starts_with("1. RAN exec_shell({\"command\":\"xxx"));
        assert_eq!(lines[0].len(), "1. RAN ".len() + 300 + CUT_MARK.len());
        assert!(lines[1].starts_with("   -> line1 line2"));
        assert!(lines[1].ends_with(CUT_MARK));
        assert_eq!(
            lines[2].chars().count(),
            "   ! ".len() + 200 + CUT_MARK.len()
        );
    }

    #[test]
    fn total_cap_and_marker() {
        let events: Vec<TraceEvent> = (0..200)
            .map(|i| TraceEvent::Text {
                text: format!("{i} {}", "z".repeat(590)),
            })
            .collect();
        let d = digest(&events);
        assert!(d.ends_with(TRUNCATED_MARK));
        assert_eq!(d.chars().count(), 16_000 + TRUNCATED_MARK.chars().count());
    }

    #[test]
    fn turns_and_calls_interleave() {
        let turns = vec![
            Turn {
                index: 1,
                text: "look at r1".into(),
                tool_calls: vec![RequestedCall {
                    tool: "ping_pair".into(),
                    args: json!({}),
                }],
                ..Default::default()
            },
            Turn {
                index: 2,
                text: "done".into(),
                ..Default::default()
            },
        ];
        let calls = vec![
            record(1, "ping_pair", "0% loss"),
            record(2, "netstat", "tcp"),
        ];
        let ev = events_from_turns(&turns, &calls);
        let kinds: Vec<&str> = ev
            .iter()
            .map(|e| match e {
                TraceEvent::Text { .. } => "text",
                TraceEvent::ToolCall { .. } => "call",
                TraceEvent::ToolResult { .. } => "result",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["text", "call", "result", "text", "call", "result"]);
    }

    #[test]
    fn outcome_trace_and_jsonl_round_trip() {
        let outcome = AgentOutcome {
            final_text: "=== DIAGNOSIS ===\nis_anomaly: false\nfaulty_devices: none\ndiagnosis_text:\nok\n=== END ===".into(),
            tool_calls: 1,
            tool_log: vec![record(1, "get_reachability", "all reachable")],
            ..Default::default()
        };
        let ev = events_from_outcome("baseline", &outcome);
        assert!(matches!(ev.last(), Some(TraceEvent::FinalText { .. })));
        assert!(ev.contains(&TraceEvent::Final {
            stop: "end_turn".into(),
            tool_calls: 1
        }));
        let d = digest(&ev);
        assert!(
            !d.contains("DIAGNOSIS"),
            "final text must stay out of the digest: {d}"
        );
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("trace.jsonl");
        write_jsonl(&ev, &p).unwrap();
        assert_eq!(read_jsonl(&p).unwrap(), ev);
        std::fs::write(&p, "{\"event\":\"text\",\"text\":\"a\"}\nnot json\n").unwrap();
        let err = read_jsonl(&p).unwrap_err().to_string();
        assert!(err.contains(":2:"), "{err}");
    }

    #[test]
    fn release_log_reads_back() {
        let log = "[AGENT] react start\n[TEXT] first\nsecond line\n[TOOL] ping_pair({\"a\": 1})\n[RESULT] ok\n[FINAL] stop=end_turn tool_calls=1\n[SUBMITTED] parsed_ok=True\n[FINAL-TEXT] answer";
        let ev = parse_release_log(log);
        assert_eq!(
            ev[1],
            TraceEvent::Text {
                text: "first\nsecond line".into()
            }
        );
        assert_eq!(
            digest(&ev),
            "   AGENT NOTE: first second line\n1. RAN ping_pair({\"a\": 1})\n   -> ok\n(end of investigation: stop=end_turn tool_calls=1)"
        );
    }

    proptest! {
        #[test]
        fn digest_is_bounded(texts in proptest::collection::vec(".{0,700}", 0..60)) {
            let events: Vec<TraceEvent> = texts.into_iter().map(|t| TraceEvent::Text { text: t }).collect();
            let d = digest(&events);
            prop_assert!(d.chars().count() <= 16_000 + TRUNCATED_MARK.chars().count());
        }
    }
}
