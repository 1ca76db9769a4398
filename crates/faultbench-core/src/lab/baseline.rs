//! The healthy baseline of a topology: probes that must hold on the unbroken network.
//!
//! A topology directory keeps them in `baseline.toml` beside `lab.conf`:
//!
//! ```toml
//! [[probe]]
//! name = "pc1 reaches the DNS server"    # what the probe shows, for reports
//! kind = "reach"                        # reach | blocked | daemon | service | route | other
//! device = "pc1"
//! command = "ping -c2 -W1 10.0.0.53"
//! expect = "0% loss"                    # the [POST-INJECT-CHECK] expectation language
//! why = "office LAN to server LAN via r1"   # optional: why it must hold (e.g. an ACL for `blocked`)
//! ```
//!
//! `expect` uses exactly the rules of `[POST-INJECT-CHECK]` ([`Expectation`]): `0% loss`,
//! `loss>0`, `empty`, `nonempty`, `N`, `>=N`, `nonzero`, `up`, `down`, … Unrecognised
//! expectations are rejected here (a baseline must be checkable).
//!
//! [`verify`] runs the probes on a running [`Lab`] (all in parallel) and says which failed and why.

use crate::emulator::{Command, Lab};
use crate::fsutil::read_regular_string_capped;
use crate::scenario::Expectation;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What a probe demonstrates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProbeKind {
    /// Reachability that must work.
    Reach,
    /// Reachability that an intentional policy blocks.
    Blocked,
    /// A routing daemon is running.
    Daemon,
    /// A service answers (DNS, DHCP, HTTP…).
    Service,
    /// A key route is present.
    Route,
    /// Anything else.
    Other,
}

/// One baseline probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// Short description.
    pub name: String,
    /// What it demonstrates.
    pub kind: ProbeKind,
    /// Device the command runs on.
    pub device: String,
    /// Shell command (run with `sh -c` inside the device).
    pub command: String,
    /// Expected result, in the `[POST-INJECT-CHECK]` expectation language.
    pub expect: String,
    /// Why it must hold (policy, design).
    #[serde(default)]
    pub why: Option<String>,
}

/// All probes of a topology.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    /// The probes, in file order.
    #[serde(default, rename = "probe")]
    pub probes: Vec<Probe>,
}

/// Baseline text that is not a baseline.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaselineParseError {
    /// Not TOML of the baseline's shape (the message carries line and column).
    #[error("{0}")]
    Toml(#[from] toml::de::Error),
    /// A probe's expectation is not one the checker knows.
    #[error(
        "probe {probe} (`{name}`): expectation `{expect}` is not understood (use `0% loss`, `loss>0`, `empty`, `nonempty`, `N`, `>=N`, `nonzero`, `up`, `down`)"
    )]
    Expectation {
        /// 1-based probe number.
        probe: usize,
        /// The probe's name.
        name: String,
        /// The expectation as written.
        expect: String,
    },
}

/// A baseline file that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct BaselineError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong (TOML errors carry line and column).
    pub message: String,
}

impl Baseline {
    /// Parses `baseline.toml` text.
    pub fn parse(text: &str) -> Result<Baseline, BaselineParseError> {
        let b: Baseline = toml::from_str(text)?;
        for (i, p) in b.probes.iter().enumerate() {
            if let Expectation::Unrecognized(x) = Expectation::parse(&p.expect) {
                return Err(BaselineParseError::Expectation {
                    probe: i + 1,
                    name: p.name.clone(),
                    expect: x,
                });
            }
        }
        Ok(b)
    }

    /// Reads `baseline.toml` from a file.
    pub fn load(path: impl AsRef<Path>) -> Result<Baseline, BaselineError> {
        let path = path.as_ref();
        let err = |message: String| BaselineError {
            path: path.to_path_buf(),
            message,
        };
        let text = read_regular_string_capped(path, super::MAX_LAB_FILE_BYTES)
            .map_err(|e| err(e.reason()))?;
        Baseline::parse(&text).map_err(|e| err(e.to_string()))
    }
}

/// The result of one probe.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProbeResult {
    /// The probe.
    pub probe: Probe,
    /// Whether it held.
    pub passed: bool,
    /// Why not (or a short confirmation).
    pub detail: String,
}

/// Runs every probe on `lab` concurrently; results are in probe order.
pub async fn verify(lab: &dyn Lab, baseline: &Baseline, timeout: Duration) -> Vec<ProbeResult> {
    let runs = baseline.probes.iter().map(|p| async move {
        let out = lab
            .exec(&p.device, &Command::shell(p.command.clone()), timeout)
            .await;
        let (passed, detail) = match out {
            Err(e) => (false, format!("could not run: {e}")),
            Ok(o) if o.timed_out => (false, format!("timed out after {} ms", o.duration_ms)),
            Ok(o) => {
                let v = Expectation::parse(&p.expect).check(&o.stdout);
                let mut detail = v.rationale;
                if !v.passed && !o.stderr.trim().is_empty() {
                    detail.push_str(&format!("; stderr: {}", o.stderr.trim()));
                }
                (v.passed, detail)
            }
        };
        ProbeResult {
            probe: p.clone(),
            passed,
            detail,
        }
    });
    futures_util::future::join_all(runs).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_rejects_unknown_expectations_and_fields() {
        let b = Baseline::parse(
            "[[probe]]\nname='a'\nkind='reach'\ndevice='pc1'\ncommand='ping -c1 1.1.1.1'\nexpect='0% loss'\n",
        )
        .unwrap();
        assert_eq!(b.probes[0].kind, ProbeKind::Reach);
        assert!(
            Baseline::parse(
                "[[probe]]\nname='a'\nkind='reach'\ndevice='pc1'\ncommand='x'\nexpect='works'\n"
            )
            .is_err()
        );
        assert!(Baseline::parse("[[probe]]\nname='a'\nkind='reach'\ndevice='pc1'\ncommand='x'\nexpect='0'\ncolour='red'\n").is_err());
    }
}
