//! The agent's answer: the `=== DIAGNOSIS ===` block.
//!
//! ```text
//! === DIAGNOSIS ===
//! is_anomaly: true
//! faulty_devices: router1
//! diagnosis_text:
//! <150–300 words: component, mechanism, localization, root cause, fix>
//! === END ===
//! ```
//!
//! The reader follows the public release (first block wins; `true/yes/false/no`; `none`, `[]` and
//! `n/a` mean no device) and is more forgiving of how models actually write: any case, markdown
//! emphasis and code ticks, bullets, a device list spread over bullet lines, and a missing
//! `=== END ===`. It never panics on any input.
//!
//! ```
//! use faultbench_core::Diagnosis;
//!
//! let d = Diagnosis::parse("Done.\n=== DIAGNOSIS ===\n- **is_anomaly**: `true`\n\
//!     - faulty_devices: [router1, r2]\ndiagnosis_text:\nFORWARD drop on router1.\n=== END ===").unwrap();
//! assert_eq!(d.is_anomaly, Some(true));
//! assert_eq!(d.faulty_devices, vec!["router1", "r2"]);
//! assert_eq!(d.text, "FORWARD drop on router1.");
//! ```

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// A parsed diagnosis.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnosis {
    /// The verdict: is the network faulty? `None` when the answer did not say.
    pub is_anomaly: Option<bool>,
    /// The devices the agent blames (lowercased as written, deduplicated).
    pub faulty_devices: Vec<String>,
    /// The explanation (`diagnosis_text:`), or the whole block/answer when it is absent.
    pub text: String,
    /// Whether a `=== DIAGNOSIS ===` block with a verdict was found.
    pub parsed_ok: bool,
}

/// Why an answer has no usable verdict.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DiagnosisError {
    /// No `=== DIAGNOSIS ===` marker at all.
    #[error("no `=== DIAGNOSIS ===` block in the answer")]
    NoBlock,
    /// A block without an `is_anomaly:` verdict.
    #[error("the `=== DIAGNOSIS ===` block has no `is_anomaly: true|false` line")]
    MissingVerdict,
}

static BLOCK: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?is)=+\s*DIAGNOSIS\s*=+(.*?)(?:=+\s*END\s*=+|\z)").unwrap());
static KEY: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^(is[_ ]?anomaly|faulty[_ ]?devices?|diagnosis[_ ]?text)\s*:\s*(.*)$").unwrap()
});
static BULLET: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^\s*(?:[-*+•]|\d+[.)])\s+").unwrap());

/// Strips markdown decoration a model may put around keys and values.
fn plain(line: &str) -> String {
    let no_bullet = BULLET.replace(line, "");
    let mut s = no_bullet.replace("**", "").replace('`', "");
    // `__bold__` keys; `__` inside identifiers such as `host__1` is kept.
    if let Some(rest) = s.trim_start().strip_prefix("__") {
        s = rest.replacen("__:", ":", 1).replacen(":__", ":", 1);
    }
    s.trim().trim_matches('*').trim().to_string()
}

fn verdict(value: &str) -> Option<bool> {
    let v = value
        .trim()
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_ascii_lowercase();
    let word = v
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or("");
    match word {
        "true" | "yes" => Some(true),
        "false" | "no" => Some(false),
        _ => None,
    }
}

fn devices(value: &str) -> Vec<String> {
    let v = value.trim();
    let lower = v.to_ascii_lowercase();
    let bare = lower
        .trim_matches(|c: char| "[]()\"'.*`".contains(c))
        .trim();
    if bare.is_empty() || matches!(bare, "none" | "n/a" | "na" | "null" | "nil") || lower == "[]" {
        return Vec::new();
    }
    let mut out: Vec<String> = Vec::new();
    for part in v.split(|c: char| c == ',' || c == ';' || c.is_whitespace()) {
        let p = part.trim_matches(|c: char| ",;[]\"'`*()".contains(c));
        if p.is_empty() || p.eq_ignore_ascii_case("none") || p.eq_ignore_ascii_case("and") {
            continue;
        }
        if !out.iter().any(|d| d == p) {
            out.push(p.to_string());
        }
    }
    out
}

impl Diagnosis {
    /// Reads the first diagnosis block of a final answer. Errors when there is no block or no
    /// verdict in it.
    pub fn parse(answer: &str) -> Result<Diagnosis, DiagnosisError> {
        let Some(block) = BLOCK.captures(answer).and_then(|c| c.get(1)) else {
            return Err(DiagnosisError::NoBlock);
        };
        let d = parse_block(block.as_str());
        if d.is_anomaly.is_none() {
            return Err(DiagnosisError::MissingVerdict);
        }
        Ok(d)
    }

    /// Like [`Diagnosis::parse`] but never fails: without a usable block the whole answer becomes
    /// the text and `parsed_ok` is false (the release still scores such answers on their text).
    pub fn parse_lenient(answer: &str) -> Diagnosis {
        match Diagnosis::parse(answer) {
            Ok(d) => d,
            Err(_) => {
                let mut d = BLOCK
                    .captures(answer)
                    .and_then(|c| c.get(1))
                    .map(|b| parse_block(b.as_str()))
                    .unwrap_or_default();
                if d.text.is_empty() {
                    d.text = answer.trim().to_string();
                }
                d.parsed_ok = false;
                d
            }
        }
    }

    /// Renders the canonical block.
    pub fn render(&self) -> String {
        let verdict = match self.is_anomaly {
            Some(true) => "true",
            Some(false) => "false",
            None => "unknown",
        };
        let devices = if self.faulty_devices.is_empty() {
            "none".to_string()
        } else {
            self.faulty_devices.join(", ")
        };
        format!(
            "=== DIAGNOSIS ===\nis_anomaly: {verdict}\nfaulty_devices: {devices}\ndiagnosis_text:\n{}\n=== END ===",
            self.text.trim()
        )
    }
}

fn parse_block(block: &str) -> Diagnosis {
    let mut d = Diagnosis::default();
    let lines: Vec<&str> = block.lines().collect();
    let mut text_from: Option<(usize, String)> = None;
    let mut i = 0;
    while i < lines.len() {
        let p = plain(lines[i]);
        if let Some(c) = KEY.captures(&p) {
            let key = c[1].to_ascii_lowercase().replace([' ', '_'], "");
            let value = c[2].trim().to_string();
            if key.starts_with("isanomaly") {
                if d.is_anomaly.is_none() {
                    d.is_anomaly = verdict(&value);
                }
            } else if key.starts_with("faultydevice") {
                let mut list = devices(&value);
                // A list spread over following bullet lines.
                if value.is_empty() {
                    while i + 1 < lines.len()
                        && BULLET.is_match(lines[i + 1])
                        && !KEY.is_match(&plain(lines[i + 1]))
                    {
                        i += 1;
                        for dev in devices(&plain(lines[i])) {
                            if !list.contains(&dev) {
                                list.push(dev);
                            }
                        }
                    }
                }
                if d.faulty_devices.is_empty() {
                    d.faulty_devices = list;
                }
            } else if text_from.is_none() {
                text_from = Some((i + 1, value));
            }
        }
        i += 1;
    }
    d.text = match text_from {
        Some((start, first)) => {
            let mut parts = vec![first];
            parts.extend(
                lines[start.min(lines.len())..]
                    .iter()
                    .map(|s| s.to_string()),
            );
            parts.join("\n").trim().to_string()
        }
        None => block.trim().to_string(),
    };
    d.parsed_ok = d.is_anomaly.is_some();
    d
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn release_format() {
        let d = Diagnosis::parse(
            "=== DIAGNOSIS ===\nis_anomaly: false\nfaulty_devices: none\ndiagnosis_text:\nAll healthy.\nMore.\n=== END ===",
        )
        .unwrap();
        assert_eq!(d.is_anomaly, Some(false));
        assert!(d.faulty_devices.is_empty());
        assert_eq!(d.text, "All healthy.\nMore.");
        assert!(d.parsed_ok);
    }

    #[test]
    fn forgiving_forms() {
        let d = Diagnosis::parse(
            "**=== diagnosis ===**\n* **Is_Anomaly:** YES\n* **Faulty devices:**\n  - `r1`\n  - r2\n* **Diagnosis text:** ospfd died\n",
        )
        .unwrap();
        assert_eq!(d.is_anomaly, Some(true));
        assert_eq!(d.faulty_devices, vec!["r1", "r2"]);
        assert_eq!(d.text, "ospfd died");
        let d = Diagnosis::parse(
            "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: [\"pc1\"; 'r1']\n=== END ===",
        )
        .unwrap();
        assert_eq!(d.faulty_devices, vec!["pc1", "r1"]);
    }

    #[test]
    fn typed_errors() {
        assert_eq!(
            Diagnosis::parse("I think r1 is broken"),
            Err(DiagnosisError::NoBlock)
        );
        assert_eq!(
            Diagnosis::parse("=== DIAGNOSIS ===\nfaulty_devices: r1\n=== END ==="),
            Err(DiagnosisError::MissingVerdict)
        );
        let l = Diagnosis::parse_lenient("I think r1 is broken");
        assert!(!l.parsed_ok);
        assert_eq!(l.text, "I think r1 is broken");
        assert_eq!(l.is_anomaly, None);
    }

    #[test]
    fn render_parses_back() {
        let d = Diagnosis {
            is_anomaly: Some(true),
            faulty_devices: vec!["r1".into(), "pc_0_0".into()],
            text: "why".into(),
            parsed_ok: true,
        };
        assert_eq!(Diagnosis::parse(&d.render()).unwrap(), d);
    }

    proptest! {
        #[test]
        fn never_panics(s in ".{0,400}") {
            let _ = Diagnosis::parse(&s);
            let _ = Diagnosis::parse_lenient(&s);
        }

        #[test]
        fn never_panics_inside_a_block(body in "(?s).{0,300}") {
            let text = format!("=== DIAGNOSIS ===\n{body}\n=== END ===");
            let lenient = Diagnosis::parse_lenient(&text);
            prop_assert_eq!(lenient.parsed_ok, Diagnosis::parse(&text).is_ok());
        }

        #[test]
        fn verdict_and_devices_survive_rendering(
            anomaly in any::<bool>(),
            devs in proptest::collection::vec("[a-z][a-z0-9_]{0,12}", 0..5),
            text in "[A-Za-z0-9 .,]{1,80}",
        ) {
            let mut uniq: Vec<String> = Vec::new();
            for d in devs { if d != "none" && d != "and" && d != "na" && d != "nil" && d != "null" && !uniq.contains(&d) { uniq.push(d); } }
            let d = Diagnosis { is_anomaly: Some(anomaly), faulty_devices: uniq, text: text.trim().to_string(), parsed_ok: true };
            prop_assume!(!d.text.is_empty());
            prop_assert_eq!(Diagnosis::parse(&d.render()).unwrap(), d);
        }
    }
}
