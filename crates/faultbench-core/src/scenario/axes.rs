//! The `[SCORING-AXES]` section: what a correct diagnosis must (and may) contain.
//!
//! One axis per non-empty, non-comment line, kept verbatim. The kind comes from the prefix:
//! `assert-…` axes are checked mechanically on the parsed diagnosis, `must…` axes are required
//! content, `reason-…`/`reason:` lines belong to the reasoning score, and everything else is a
//! bonus (explanation quality). Outcome = 0.7 × (required pass rate) + 0.3 × (bonus pass rate).

use serde::{Deserialize, Serialize};

/// How an axis counts — the kind of a scenario's `[SCORING-AXES]` line, and of each verdict a
/// judge records for it ([`crate::judge::AxisVerdict::kind`]).
///
/// One spelling in files: `assert`, `must`, `bonus`, `fix`, `reason-dim` (the public release's
/// spellings). Records written before this type existed spelled a reasoning verdict `reason`
/// (and the scenario-side name was `reasoning`); both are still read.
///
/// ```
/// use faultbench_core::scenario::AxisKind;
/// let old: AxisKind = serde_json::from_str("\"reason\"").unwrap();
/// assert_eq!(old, AxisKind::Reasoning);
/// assert_eq!(serde_json::to_string(&old).unwrap(), "\"reason-dim\"");
/// assert_eq!("must".parse::<AxisKind>().unwrap(), AxisKind::Must);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum AxisKind {
    /// Checked mechanically on the parsed verdict (counts as required).
    #[serde(rename = "assert")]
    Assert,
    /// Required content of the explanation.
    #[serde(rename = "must")]
    Must,
    /// Explanation quality (bonus).
    #[serde(rename = "bonus")]
    Bonus,
    /// Belongs to the reasoning score (a `reason-` axis, or one of the grounding, causality and
    /// coverage dimensions); ignored by the outcome score.
    #[serde(rename = "reason-dim", alias = "reason", alias = "reasoning")]
    Reasoning,
    /// The fix score (the scenario's `[FIX]` section, not a `[SCORING-AXES]` line:
    /// [`ScoringAxis::kind`] never returns it).
    #[serde(rename = "fix")]
    Fix,
}

impl AxisKind {
    /// Every kind, in the order verdicts are recorded.
    pub const ALL: [AxisKind; 5] = [
        AxisKind::Assert,
        AxisKind::Must,
        AxisKind::Bonus,
        AxisKind::Fix,
        AxisKind::Reasoning,
    ];

    /// Whether the axis is in the required pool of the outcome score.
    pub fn is_required(self) -> bool {
        matches!(self, AxisKind::Assert | AxisKind::Must)
    }

    /// Whether the axis counts towards the outcome score (required or bonus).
    pub fn counts_for_outcome(self) -> bool {
        matches!(self, AxisKind::Assert | AxisKind::Must | AxisKind::Bonus)
    }

    /// The name written in files.
    pub fn as_str(self) -> &'static str {
        match self {
            AxisKind::Assert => "assert",
            AxisKind::Must => "must",
            AxisKind::Bonus => "bonus",
            AxisKind::Reasoning => "reason-dim",
            AxisKind::Fix => "fix",
        }
    }
}

impl std::fmt::Display for AxisKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // `pad`, so that width and alignment (`{:<6}`) apply.
        f.pad(self.as_str())
    }
}

/// An axis kind name that is none of the known spellings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown axis kind `{0}` (expected assert, must, bonus, fix or reason-dim)")]
pub struct UnknownAxisKind(pub String);

impl std::str::FromStr for AxisKind {
    type Err = UnknownAxisKind;
    fn from_str(s: &str) -> Result<Self, UnknownAxisKind> {
        match s.trim() {
            "reason" | "reasoning" => Ok(AxisKind::Reasoning),
            t => AxisKind::ALL
                .into_iter()
                .find(|k| k.as_str() == t)
                .ok_or_else(|| UnknownAxisKind(s.to_string())),
        }
    }
}

/// One scoring axis, verbatim.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct ScoringAxis {
    /// The axis line as written, e.g. `must-identify-device: router1 (the only router)`.
    pub raw: String,
}

/// The mechanical assertion an `assert-` axis makes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "assert", content = "device", rename_all = "snake_case")]
pub enum Assertion {
    /// `assert-no-anomaly`: the verdict is `is_anomaly: false`.
    NoAnomaly,
    /// `assert-no-faulty-devices`: no device is blamed.
    NoFaultyDevices,
    /// `assert-identifies: <dev>`: the device is blamed.
    Identifies(String),
    /// `assert-not-identifies: <dev>`: the device is not blamed.
    NotIdentifies(String),
    /// An `assert-` line this version does not know.
    Unknown(String),
}

impl ScoringAxis {
    /// Wraps a line.
    pub fn new(raw: impl Into<String>) -> Self {
        ScoringAxis { raw: raw.into() }
    }

    /// The axis kind, from its prefix.
    pub fn kind(&self) -> AxisKind {
        let r = self.raw.trim();
        if r.starts_with("assert-") {
            AxisKind::Assert
        } else if r.starts_with("reason-") || r.starts_with("reason:") {
            AxisKind::Reasoning
        } else if r.starts_with("must") {
            AxisKind::Must
        } else {
            AxisKind::Bonus
        }
    }

    /// The slug before the first `:` (e.g. `must-identify-device`).
    pub fn slug(&self) -> &str {
        self.raw.split(':').next().unwrap_or("").trim()
    }

    /// The text after the first `:`, if any (e.g. `router1 (the only router)`).
    pub fn argument(&self) -> Option<&str> {
        self.raw
            .split_once(':')
            .map(|(_, a)| a.trim())
            .filter(|a| !a.is_empty())
    }

    /// The assertion of an `assert-` axis.
    pub fn assertion(&self) -> Option<Assertion> {
        if self.kind() != AxisKind::Assert {
            return None;
        }
        let first_word = |s: &str| s.split_whitespace().next().unwrap_or("").to_string();
        Some(match self.slug() {
            "assert-no-anomaly" => Assertion::NoAnomaly,
            "assert-no-faulty-devices" => Assertion::NoFaultyDevices,
            "assert-identifies" => Assertion::Identifies(first_word(self.argument().unwrap_or(""))),
            "assert-not-identifies" => {
                Assertion::NotIdentifies(first_word(self.argument().unwrap_or("")))
            }
            other => Assertion::Unknown(other.to_string()),
        })
    }
}

/// Parses a `[SCORING-AXES]` body: one axis per non-empty line not starting with `#`.
pub fn parse_axes(body: &str) -> Vec<ScoringAxis> {
    body.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(ScoringAxis::new)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_assertions() {
        let axes = parse_axes(
            "assert-identifies: router1\nmust-identify-device: router1 (x)\nmust-distinguish-transit-vs-local\nbonus-notes: y\nreason: z\n# comment",
        );
        let kinds: Vec<AxisKind> = axes.iter().map(|a| a.kind()).collect();
        assert_eq!(
            kinds,
            vec![
                AxisKind::Assert,
                AxisKind::Must,
                AxisKind::Must,
                AxisKind::Bonus,
                AxisKind::Reasoning
            ]
        );
        assert_eq!(
            axes[0].assertion(),
            Some(Assertion::Identifies("router1".into()))
        );
        assert_eq!(axes[1].argument(), Some("router1 (x)"));
        assert_eq!(axes[2].argument(), None);
        assert!(axes[1].assertion().is_none());
    }
}
