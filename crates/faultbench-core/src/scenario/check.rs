//! The `[POST-INJECT-CHECK]` section: how the harness proves an injected fault took hold.
//!
//! One check per line, `<device> <command> => expect <X>`, columns aligned with spaces. Blank
//! lines, `#` comments and lines starting with `(` are skipped. `X` is kept verbatim (it may carry
//! a trailing comment) and interpreted by [`Expectation`], whose rules are the public release's so
//! that its files behave identically here.

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// One post-injection check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PostInjectCheck {
    /// Device the command runs on.
    pub device: String,
    /// Shell command, run with `sh -c` inside the device.
    pub command: String,
    /// The raw text after `expect` (may carry a trailing comment).
    pub expect: String,
}

impl PostInjectCheck {
    /// The interpreted expectation.
    pub fn expectation(&self) -> Expectation {
        Expectation::parse(&self.expect)
    }

    /// Renders the check as one section line.
    pub fn render(&self) -> String {
        format!(
            "{}  {}  => expect {}",
            self.device, self.command, self.expect
        )
    }
}

/// What a check's output must show.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "snake_case")]
pub enum Expectation {
    /// `0% loss`: a loss figure is found and is zero.
    ZeroLoss,
    /// `loss>0`: the loss figure is above zero, or no figure is printed (total loss).
    SomeLoss,
    /// `nonempty` / `non-empty`.
    NonEmpty,
    /// `empty`.
    Empty,
    /// `up`: the output says `up` and never `down`.
    Up,
    /// `down`: the output says `down`.
    Down,
    /// Contains `full` (e.g. an OSPF adjacency state).
    ContainsFull,
    /// Contains `init`.
    ContainsInit,
    /// `>=N`: the last integer in the output is at least N.
    AtLeast(i64),
    /// `N`: the last integer in the output equals N.
    Equals(i64),
    /// `nonzero`: the last integer in the output is above zero.
    NonZero,
    /// Anything else: the release treats it as an advisory pass.
    Unrecognized(String),
}

/// The verdict of one check on one output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckVerdict {
    /// Whether the check passed (advisory passes count as passed).
    pub passed: bool,
    /// True when the expectation was not understood and the pass is only advisory.
    pub advisory: bool,
    /// Why, in a few words.
    pub rationale: String,
}

static LOSS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(\d+(?:\.\d+)?)\s*%\s*(?:packet\s*)?loss").unwrap());
static INT: LazyLock<Regex> = LazyLock::new(|| Regex::new(r"-?\d+").unwrap());

impl Expectation {
    /// Interprets the raw text after `expect` (the release's rules, in its order).
    pub fn parse(raw: &str) -> Expectation {
        let x = raw.trim().to_lowercase();
        let compact: String = x.chars().filter(|c| !c.is_whitespace()).collect();
        if (x.starts_with("0%") || x.starts_with("0 %")) && x.contains("loss") {
            return Expectation::ZeroLoss;
        }
        if compact.starts_with("loss>0") {
            return Expectation::SomeLoss;
        }
        match x.as_str() {
            "nonempty" | "non-empty" => return Expectation::NonEmpty,
            "empty" => return Expectation::Empty,
            "up" => return Expectation::Up,
            "down" => return Expectation::Down,
            "nonzero" => return Expectation::NonZero,
            _ => {}
        }
        if x.contains("full") {
            return Expectation::ContainsFull;
        }
        if x.contains("init") {
            return Expectation::ContainsInit;
        }
        if let Some(n) = compact.strip_prefix(">=").and_then(|n| n.parse().ok()) {
            return Expectation::AtLeast(n);
        }
        if let Ok(n) = x.parse::<i64>() {
            return Expectation::Equals(n);
        }
        Expectation::Unrecognized(raw.trim().to_string())
    }

    /// Judges a command's stdout against the expectation.
    pub fn check(&self, stdout: &str) -> CheckVerdict {
        let out = stdout.to_lowercase();
        let verdict = |passed: bool, rationale: String| CheckVerdict {
            passed,
            advisory: false,
            rationale,
        };
        let loss = || LOSS.captures(&out).and_then(|c| c[1].parse::<f64>().ok());
        let last_int = || {
            INT.find_iter(&out)
                .last()
                .and_then(|m| m.as_str().parse::<i64>().ok())
        };
        match self {
            Expectation::ZeroLoss => match loss() {
                Some(l) => verdict(l == 0.0, format!("{l}% loss, expected 0%")),
                None => verdict(false, "no loss figure in the output".into()),
            },
            Expectation::SomeLoss => match loss() {
                Some(l) => verdict(l > 0.0, format!("{l}% loss, expected some")),
                None => verdict(true, "no loss figure (treated as total loss)".into()),
            },
            Expectation::NonEmpty => {
                verdict(!out.trim().is_empty(), "output must be non-empty".into())
            }
            Expectation::Empty => verdict(
                out.trim().is_empty(),
                format!("output must be empty, got {} bytes", out.trim().len()),
            ),
            Expectation::Up => verdict(
                out.contains("up") && !out.contains("down"),
                "output must say up and not down".into(),
            ),
            Expectation::Down => verdict(out.contains("down"), "output must say down".into()),
            Expectation::ContainsFull => {
                verdict(out.contains("full"), "output must contain `full`".into())
            }
            Expectation::ContainsInit => {
                verdict(out.contains("init"), "output must contain `init`".into())
            }
            Expectation::AtLeast(n) => match last_int() {
                Some(v) => verdict(v >= *n, format!("last number {v}, expected >= {n}")),
                None => verdict(false, format!("no number in the output, expected >= {n}")),
            },
            Expectation::Equals(n) => match last_int() {
                Some(v) => verdict(v == *n, format!("last number {v}, expected {n}")),
                None => verdict(false, format!("no number in the output, expected {n}")),
            },
            Expectation::NonZero => match last_int() {
                Some(v) => verdict(v > 0, format!("last number {v}, expected > 0")),
                None => verdict(false, "no number in the output, expected > 0".into()),
            },
            Expectation::Unrecognized(raw) => CheckVerdict {
                passed: true,
                advisory: true,
                rationale: format!(
                    "UNRECOGNIZED expect `{}` (advisory pass)",
                    crate::text::echo(raw)
                ),
            },
        }
    }
}

static CHECK_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(\S+)\s+(.+?)\s*=>\s*expect\s+(.+?)\s*$").unwrap());

/// An error in a `[POST-INJECT-CHECK]` body (0-based line offset inside the body).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckLineError {
    /// Line offset inside the section body.
    pub offset: usize,
    /// The offending line.
    pub line: String,
}

/// Parses a `[POST-INJECT-CHECK]` body.
///
/// Unlike the release, which skips lines it cannot read, a line that is neither blank, a
/// comment (`#`), a parenthesised remark, nor a check is an error: a silently dropped check
/// would let a broken injection pass.
pub fn parse_checks(body: &str) -> Result<Vec<PostInjectCheck>, CheckLineError> {
    let mut out = Vec::new();
    for (offset, raw) in body.lines().enumerate() {
        let line = raw.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('(') {
            continue;
        }
        let Some(c) = CHECK_LINE.captures(line) else {
            return Err(CheckLineError {
                offset,
                line: line.to_string(),
            });
        };
        out.push(PostInjectCheck {
            device: c[1].to_string(),
            command: c[2].to_string(),
            expect: c[3].to_string(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_aligned_lines_with_comments() {
        let body = "# none\nhost_1   ping -W2 -c2 10.0.0.2    => expect 0% loss   (server still up)\npc1  ping -c 2 -W 2 1.0.0.1 >/dev/null 2>&1; echo $? => expect 2";
        let checks = parse_checks(body).unwrap();
        assert_eq!(checks.len(), 2);
        assert_eq!(checks[0].device, "host_1");
        assert_eq!(checks[0].command, "ping -W2 -c2 10.0.0.2");
        assert_eq!(checks[0].expectation(), Expectation::ZeroLoss);
        assert_eq!(checks[1].expectation(), Expectation::Equals(2));
    }

    #[test]
    fn a_line_without_expect_is_an_error() {
        let e = parse_checks("# c\npc1 ping 1.2.3.4").unwrap_err();
        assert_eq!(e.offset, 1);
    }

    #[test]
    fn expectations_follow_release_rules() {
        let ping_ok = "2 packets transmitted, 2 received, 0% packet loss, time 1001ms";
        let ping_bad = "2 packets transmitted, 0 received, 100% packet loss";
        assert!(Expectation::parse("0% loss").check(ping_ok).passed);
        assert!(!Expectation::parse("0% loss").check(ping_bad).passed);
        assert!(!Expectation::parse("0% loss").check("").passed);
        assert!(Expectation::parse("loss>0").check(ping_bad).passed);
        assert!(
            Expectation::parse("loss > 0")
                .check("connect: Network is unreachable")
                .passed
        );
        assert!(!Expectation::parse("loss>0").check(ping_ok).passed);
        assert!(Expectation::parse("empty").check("  \n").passed);
        assert!(!Expectation::parse("empty").check("1234\n").passed);
        assert!(Expectation::parse("0").check("0\n").passed);
        assert!(!Expectation::parse("1").check("0\n").passed);
        assert!(Expectation::parse(">=2").check("x 1 y 3").passed);
        assert!(Expectation::parse("nonzero").check("count: 4").passed);
        assert!(Expectation::parse("up").check("state UP").passed);
        assert!(!Expectation::parse("up").check("UP but DOWN").passed);
        let odd = Expectation::parse("sometimes");
        assert!(matches!(odd, Expectation::Unrecognized(_)));
        assert!(odd.check("").advisory);
    }
}
