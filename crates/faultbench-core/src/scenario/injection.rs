//! The `[INJECTION]` section: how a scenario breaks the network.
//!
//! The body is a small line-based key/value language (the public release's): `device:`,
//! `action:`, `cmd:` and `note:`. A `cmd:` or `note:` whose value is exactly `|` opens a block
//! that runs until the next key line. A false-premise scenario has `device: none` and a note but
//! no `cmd:` — nothing is injected.
//!
//! One deliberate extension: every `device:` line starts a new [`InjectionStep`], so one
//! scenario can change several devices. Files with a single `device:` (all of the release's)
//! read exactly as the release reads them. Block bodies are dedented as a whole (the release
//! strips only the first line's indent), which keeps shell here-documents intact.

use serde::{Deserialize, Serialize};

/// The parsed `[INJECTION]` section.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Injection {
    /// The steps, in file order.
    pub steps: Vec<InjectionStep>,
}

/// One device's part of an injection.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InjectionStep {
    /// The device the command runs on (`none` for a negative control).
    pub device: String,
    /// A human description of the change (informational).
    pub action: Option<String>,
    /// The shell script to run inside the device, if any.
    pub cmd: Option<String>,
    /// Free-text note (informational).
    pub note: Option<String>,
}

impl Injection {
    /// Steps that actually change the network (those with a command on a real device).
    pub fn applied_steps(&self) -> impl Iterator<Item = &InjectionStep> {
        self.steps.iter().filter(|s| s.is_applied())
    }

    /// True when nothing is injected (a negative control / false premise).
    pub fn is_negative_control(&self) -> bool {
        self.applied_steps().next().is_none()
    }

    /// The devices the injection touches (deduplicated, file order).
    pub fn devices(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for s in self.applied_steps() {
            if !out.contains(&s.device.as_str()) {
                out.push(&s.device);
            }
        }
        out
    }

    /// Renders the section body in the canonical layout that [`parse_injection`] reads back.
    pub fn render(&self) -> String {
        let mut out = String::new();
        for step in &self.steps {
            push_kv(&mut out, "device", &step.device);
            if let Some(a) = &step.action {
                push_kv(&mut out, "action", a);
            }
            if let Some(c) = &step.cmd {
                push_kv(&mut out, "cmd", c);
            }
            if let Some(n) = &step.note {
                push_kv(&mut out, "note", n);
            }
        }
        out.trim_end().to_string()
    }
}

impl InjectionStep {
    /// Whether this step runs a command on a real device.
    pub fn is_applied(&self) -> bool {
        self.cmd.as_deref().is_some_and(|c| !c.trim().is_empty())
            && !self.device.eq_ignore_ascii_case("none")
    }
}

fn push_kv(out: &mut String, key: &str, value: &str) {
    if value.contains('\n') || value == "|" {
        out.push_str(key);
        out.push_str(": |\n");
        for line in value.lines() {
            if line.is_empty() {
                out.push('\n');
            } else {
                out.push_str("  ");
                out.push_str(line);
                out.push('\n');
            }
        }
    } else {
        out.push_str(key);
        out.push_str(": ");
        out.push_str(value);
        out.push('\n');
    }
}

/// An error in an `[INJECTION]` body, with the 0-based line offset inside the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InjectionError {
    /// Line offset inside the section body (0 = first body line).
    pub offset: usize,
    /// What went wrong.
    pub message: String,
    /// What was expected instead.
    pub expected: String,
}

const KEYS: [&str; 4] = ["device", "action", "cmd", "note"];

fn key_line(stripped: &str) -> Option<(&'static str, &str)> {
    for k in KEYS {
        if let Some(rest) = stripped.strip_prefix(k)
            && let Some(v) = rest.strip_prefix(':')
        {
            return Some((k, v.trim()));
        }
    }
    None
}

/// Parses an `[INJECTION]` body (already stripped of surrounding blank lines).
pub fn parse_injection(body: &str) -> Result<Injection, InjectionError> {
    let mut steps: Vec<InjectionStep> = Vec::new();
    // (key, lines, start offset) of an open `|` block.
    let mut block: Option<(&'static str, Vec<&str>)> = None;
    let mut last_inline: Option<&'static str> = None;

    fn close(steps: &mut [InjectionStep], block: &mut Option<(&'static str, Vec<&str>)>) {
        if let Some((key, lines)) = block.take() {
            let text = dedent(&lines);
            if let Some(step) = steps.last_mut() {
                match key {
                    "cmd" => step.cmd = Some(text),
                    _ => step.note = Some(text),
                }
            }
        }
    }

    for (offset, raw) in body.lines().enumerate() {
        let stripped = raw.trim();
        if let Some((key, value)) = key_line(stripped) {
            close(&mut steps, &mut block);
            last_inline = None;
            if key == "device" {
                if value.is_empty() {
                    return Err(InjectionError {
                        offset,
                        message: "`device:` has no value".into(),
                        expected: "`device: <name>` or `device: none`".into(),
                    });
                }
                steps.push(InjectionStep {
                    device: value.to_string(),
                    ..Default::default()
                });
                continue;
            }
            let Some(step) = steps.last_mut() else {
                return Err(InjectionError {
                    offset,
                    message: format!("`{key}:` before any `device:` line"),
                    expected: "a `device:` line first".into(),
                });
            };
            if value == "|" && (key == "cmd" || key == "note") {
                block = Some((key, Vec::new()));
            } else {
                let slot = match key {
                    "action" => &mut step.action,
                    "cmd" => &mut step.cmd,
                    _ => &mut step.note,
                };
                *slot = Some(value.to_string());
                last_inline = Some(key);
            }
            continue;
        }
        if let Some((_, lines)) = block.as_mut() {
            lines.push(raw);
            continue;
        }
        if stripped.is_empty() || stripped.starts_with('#') {
            continue;
        }
        // A wrapped inline value (the release wraps long `action:` lines): join it on.
        match (last_inline, steps.last_mut()) {
            (Some("cmd"), Some(_)) => {
                return Err(InjectionError {
                    offset,
                    message: format!(
                        "stray line after an inline `cmd:`: `{}`",
                        truncate(stripped, 60)
                    ),
                    expected:
                        "a multi-line command written as a block: `cmd: |` then indented lines"
                            .into(),
                });
            }
            (Some(key), Some(step)) => {
                let slot = if key == "action" {
                    &mut step.action
                } else {
                    &mut step.note
                };
                let prev = slot.take().unwrap_or_default();
                *slot = Some(format!("{prev} {stripped}"));
            }
            _ => {
                return Err(InjectionError {
                    offset,
                    message: format!("unexpected line `{}`", truncate(stripped, 60)),
                    expected: "`device:`, `action:`, `cmd:` or `note:`".into(),
                });
            }
        }
    }
    close(&mut steps, &mut block);
    if steps.is_empty() {
        return Err(InjectionError {
            offset: 0,
            message: "no `device:` line".into(),
            expected: "`device: <name>` (or `device: none` for a negative control)".into(),
        });
    }
    Ok(Injection { steps })
}

/// Removes the common leading whitespace of the non-blank lines and trims blank edges.
fn dedent(lines: &[&str]) -> String {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let body: Vec<&str> = lines
        .iter()
        .map(|l| {
            if l.len() >= indent {
                &l[indent..]
            } else {
                l.trim_start()
            }
        })
        .collect();
    body.join("\n").trim().to_string()
}

/// A line or value quoted in a message: its first `max` characters, and how much was left out.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    crate::text::excerpt(s, max).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negative_control_has_no_applied_step() {
        let inj = parse_injection(
            "device: none\naction: none (negative control -- no fault injected)\nnote: |\n  healthy\n  baseline",
        )
        .unwrap();
        assert!(inj.is_negative_control());
        assert_eq!(inj.steps[0].note.as_deref(), Some("healthy\nbaseline"));
    }

    #[test]
    fn block_cmd_is_dedented_and_wrapped_action_joined() {
        let inj = parse_injection(
            "device: pc1\naction: replace the mask (too narrow\n  so it breaks)\ncmd: |\n  ip addr flush dev eth0\n  ip addr add 1.0.0.5/30 dev eth0\n",
        )
        .unwrap();
        let s = &inj.steps[0];
        assert_eq!(
            s.action.as_deref(),
            Some("replace the mask (too narrow so it breaks)")
        );
        assert_eq!(
            s.cmd.as_deref(),
            Some("ip addr flush dev eth0\nip addr add 1.0.0.5/30 dev eth0")
        );
        assert_eq!(inj.devices(), vec!["pc1"]);
    }

    #[test]
    fn several_devices_are_several_steps() {
        let inj = parse_injection("device: r1\ncmd: a\ndevice: r2\ncmd: b").unwrap();
        assert_eq!(inj.devices(), vec!["r1", "r2"]);
        let again = parse_injection(&inj.render()).unwrap();
        assert_eq!(again, inj);
    }

    #[test]
    fn key_before_device_is_an_error() {
        let e = parse_injection("cmd: ls").unwrap_err();
        assert_eq!(e.offset, 0);
        assert!(e.message.contains("before any `device:`"));
    }
}
