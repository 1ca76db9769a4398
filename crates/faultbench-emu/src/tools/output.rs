//! Turning command results into what the model sees: capped text with a marker saying how
//! much was cut, and a status footer for failures and timeouts kept apart from the output.

use faultbench_core::{ExecOutput, ToolOutput};
use std::time::Duration;

/// Cuts `text` to at most `cap` characters. The cut text ends with a marker naming how many
/// characters were left out; the bool says whether anything was cut.
///
/// ```
/// use faultbench_emu::tools::cap_text;
/// let (t, cut) = cap_text("abcdefghij", 4);
/// assert!(cut);
/// assert_eq!(t, "abcd\n...[truncated: 6 of 10 chars not shown]");
/// assert_eq!(cap_text("short", 4000), ("short".to_string(), false));
/// ```
pub fn cap_text(text: &str, cap: usize) -> (String, bool) {
    let total = text.chars().count();
    if total <= cap {
        return (text.to_string(), false);
    }
    let kept: String = text.chars().take(cap).collect();
    (
        format!(
            "{kept}\n...[truncated: {} of {total} chars not shown]",
            total - cap
        ),
        true,
    )
}

/// Renders one command's result.
///
/// - success: stdout (or stderr when stdout is empty, as the release's tools do);
/// - failure: stdout, then `[stderr]` and its text, then `[exit code N]`;
/// - timeout: whatever output arrived, then `[timed out after Ns: output may be partial]`.
///
/// Output is capped at `cap` characters; the footer never is. The flags (`is_error`,
/// `timed_out`, `exit_code`, `truncated`) carry the same facts as fields.
pub fn render(out: &ExecOutput, cap: usize, timeout: Duration) -> ToolOutput {
    let stdout = out.stdout.trim_end();
    let stderr = out.stderr.trim_end();
    let ok = out.success();
    let body = if ok {
        if stdout.is_empty() { stderr } else { stdout }.to_string()
    } else {
        let mut b = stdout.to_string();
        if !stderr.is_empty() {
            if !b.is_empty() {
                b.push('\n');
            }
            b.push_str("[stderr]\n");
            b.push_str(stderr);
        }
        b
    };
    let (mut text, cut) = cap_text(&body, cap);
    if out.timed_out {
        push_footer(
            &mut text,
            &format!(
                "[timed out after {}s: output may be partial]",
                timeout.as_secs_f64()
            ),
        );
    } else if !ok {
        match out.exit_code {
            Some(c) => push_footer(&mut text, &format!("[exit code {c}]")),
            None => push_footer(&mut text, "[killed by a signal]"),
        }
    }
    ToolOutput {
        text,
        is_error: !ok,
        truncated: cut || out.truncated,
        timed_out: out.timed_out,
        exit_code: out.exit_code,
    }
}

fn push_footer(text: &mut String, footer: &str) {
    if !text.is_empty() {
        text.push('\n');
    }
    text.push_str(footer);
}

/// Combines several rendered parts into one output whose flags are the union of the parts'.
pub fn merge_flags(text: String, parts: &[&ToolOutput]) -> ToolOutput {
    ToolOutput {
        text,
        is_error: parts.iter().any(|p| p.is_error),
        truncated: parts.iter().any(|p| p.truncated),
        timed_out: parts.iter().any(|p| p.timed_out),
        exit_code: match parts {
            [one] => one.exit_code,
            _ => None,
        },
    }
}

/// An error-flagged text result (a tool-level failure the model should read, e.g. an address
/// that could not be resolved).
pub fn failure(text: impl Into<String>) -> ToolOutput {
    ToolOutput {
        text: text.into(),
        is_error: true,
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_shows_stderr_and_exit_code() {
        let out = ExecOutput {
            stdout: "partial\n".into(),
            stderr: "boom\n".into(),
            exit_code: Some(2),
            ..Default::default()
        };
        let r = render(&out, 4000, Duration::from_secs(10));
        assert_eq!(r.text, "partial\n[stderr]\nboom\n[exit code 2]");
        assert!(r.is_error && !r.timed_out && r.exit_code == Some(2));
    }

    #[test]
    fn timeout_is_a_footer_and_a_flag() {
        let out = ExecOutput {
            stdout: "64 bytes from 10.0.0.1".into(),
            timed_out: true,
            ..Default::default()
        };
        let r = render(&out, 4000, Duration::from_secs(10));
        assert!(r.timed_out && r.is_error && r.exit_code.is_none());
        assert_eq!(
            r.text,
            "64 bytes from 10.0.0.1\n[timed out after 10s: output may be partial]"
        );
    }

    #[test]
    fn success_with_only_stderr_shows_it_and_caps_count_chars_not_bytes() {
        let r = render(
            &ExecOutput {
                stderr: "warning".into(),
                exit_code: Some(0),
                ..Default::default()
            },
            4000,
            Duration::from_secs(1),
        );
        assert_eq!(r.text, "warning");
        assert!(!r.is_error);
        let (t, cut) = cap_text("ééééé", 2);
        assert!(cut && t.starts_with("éé\n...[truncated: 3 of 5"));
    }

    #[test]
    fn the_cap_applies_to_the_output_not_the_footer() {
        let out = ExecOutput {
            stdout: "x".repeat(50),
            exit_code: Some(1),
            ..Default::default()
        };
        let r = render(&out, 10, Duration::from_secs(1));
        assert!(r.truncated);
        assert!(
            r.text
                .ends_with("[truncated: 40 of 50 chars not shown]\n[exit code 1]")
        );
    }
}
