//! `faultbench verify FILE [--pubkey KEY]`: checks a bundle offline, rule by rule.
//!
//! The bundle is streamed once ([`crate::read`]): the manifest comes first, then every member
//! is hashed against it as it arrives; records are parsed and kept, traces only hashed. Then
//! the rules run in a fixed order ([`VerifyRule`]), each giving a [`RuleVerdict`] that names the
//! first run or field that breaks it:
//!
//! | rule | passes when |
//! |---|---|
//! | `signature` | the manifest's Ed25519 signature is valid (under a `--pubkey` when given) |
//! | `hashes` | every member is listed in the manifest with its SHA-256, in order, and nothing is missing or extra |
//! | `version` | the bundle was packed by this faultbench version (tables and rubric are versioned code) |
//! | `identity` | the root recorded its configuration (not adopted, not one shard of a split) |
//! | `fresh_labs` | `reuse_labs` is off and every run's lab was deployed fresh |
//! | `ticket_hint` | agents were told nothing about the ticket's reliability (`none`) |
//! | `budget` | the paper's 20 model turns and 1,800 s wall clock, and no run used more turns |
//! | `protocol` | the diagnosis task on a live emulator (`netns` or `kathara`; `mock` only with `allow_mock`) |
//! | `one_configuration` | every run's agent, model, judge, telemetry, version and scenario text are the identity's |
//! | `dataset` | the manifest's dataset digest is that of the records |
//! | `plan` | every (scenario, agent, pass) of identity × passes has a record (any status accounts for it) |
//! | `registry` | `MANIFEST.csv` is exactly the registry rebuilt from the records |
//! | `judge_version` | the judge's prompt version is this faultbench's (rubric or LLM judge) |
//! | `scores` | rubric: every judged run re-scored gives its recorded scores; LLM judge: verdicts kept, and each outcome follows from its axis counts |
//! | `tables` | the bundled tables equal the tables recomputed from the bundle's registry and records |

mod rules;

use crate::keys::PublicKey;
use crate::manifest::{BundleManifest, SignatureFile};
use crate::names;
use crate::read::{BundleError, Caps, Member, for_each_member};
use faultbench_core::record::RunRecord;
use faultbench_report::details::RunDetail;
use serde::Serialize;
use std::path::Path;

/// How to verify.
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    /// Trusted signer keys: the bundle must be signed by one of them. Empty: the key in the
    /// bundle is used, and the verdict says that the signer was not pinned.
    pub pubkeys: Vec<PublicKey>,
    /// Accept runs made on the mock emulator (development; such bundles are never ranked).
    pub allow_mock: bool,
    /// Caps on the bundle.
    pub caps: Caps,
}

/// The former name of [`VerifyRule`] (one public name per concept across the crates, issue 28).
#[deprecated(note = "renamed to `VerifyRule`; the old name goes in the next release")]
pub type Rule = VerifyRule;

/// The former name of [`BundleVerdict`] (one public name per concept across the crates, issue 28).
#[deprecated(note = "renamed to `BundleVerdict`; the old name goes in the next release")]
pub type Verdict = BundleVerdict;

/// The rules, in the order they are checked (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum VerifyRule {
    /// Signature over the manifest.
    Signature,
    /// Every member's hash.
    Hashes,
    /// The faultbench version.
    Version,
    /// The configuration is recorded.
    Identity,
    /// Fresh labs.
    FreshLabs,
    /// No ticket hint.
    TicketHint,
    /// Turns and wall clock.
    Budget,
    /// Task and emulator.
    Protocol,
    /// One configuration for every run.
    OneConfiguration,
    /// The dataset digest.
    Dataset,
    /// Every planned run present.
    Plan,
    /// The registry.
    Registry,
    /// The judge's prompt version.
    JudgeVersion,
    /// The recorded scores.
    Scores,
    /// The bundled tables.
    Tables,
}

impl VerifyRule {
    /// The rule's name as printed.
    pub fn name(self) -> &'static str {
        match self {
            VerifyRule::Signature => "signature",
            VerifyRule::Hashes => "hashes",
            VerifyRule::Version => "version",
            VerifyRule::Identity => "identity",
            VerifyRule::FreshLabs => "fresh_labs",
            VerifyRule::TicketHint => "ticket_hint",
            VerifyRule::Budget => "budget",
            VerifyRule::Protocol => "protocol",
            VerifyRule::OneConfiguration => "one_configuration",
            VerifyRule::Dataset => "dataset",
            VerifyRule::Plan => "plan",
            VerifyRule::Registry => "registry",
            VerifyRule::JudgeVersion => "judge_version",
            VerifyRule::Scores => "scores",
            VerifyRule::Tables => "tables",
        }
    }
}

/// The verdict of one rule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RuleVerdict {
    /// The rule.
    pub rule: VerifyRule,
    /// Whether it holds.
    pub passed: bool,
    /// One line: what was checked, or the first thing that breaks it (naming the run or field).
    pub detail: String,
}

/// One run as read from the bundle.
pub(crate) struct BundledRun {
    /// The member folder it came from.
    pub dir: String,
    /// The record.
    pub record: RunRecord,
    /// What the record adds to its registry row.
    pub detail: RunDetail,
}

/// What verification found.
#[derive(Debug, Clone, Serialize)]
pub struct BundleVerdict {
    /// Every rule's verdict, in order.
    pub rules: Vec<RuleVerdict>,
    /// The manifest (None when it could not be read).
    pub manifest: Option<BundleManifest>,
    /// The signer's key fingerprint, when the signature is valid.
    pub signer: Option<String>,
    /// Whether the signer was one of the trusted keys (false without `--pubkey`).
    pub signer_pinned: bool,
    /// The bundled tables (`bundle/tables.json`), parsed.
    #[serde(skip)]
    pub tables: Option<serde_json::Value>,
    /// The runs' identity, parsed.
    pub identity: Option<faultbench_core::identity::RunIdentity>,
}

impl BundleVerdict {
    /// Whether every rule holds.
    pub fn passed(&self) -> bool {
        self.rules.iter().all(|r| r.passed)
    }

    /// The first rule that fails.
    pub fn first_failure(&self) -> Option<&RuleVerdict> {
        self.rules.iter().find(|r| !r.passed)
    }
}

/// Everything read from the bundle, before the rules.
#[derive(Default)]
pub(crate) struct Contents {
    pub manifest_bytes: Vec<u8>,
    pub manifest: Option<BundleManifest>,
    pub signature: Option<SignatureFile>,
    /// First hash problem (member named), if any.
    pub hash_problem: Option<String>,
    /// Members checked against the manifest.
    pub checked: usize,
    /// First layout problem (a member faultbench does not write), if any.
    pub layout_problem: Option<String>,
    pub identity: Option<Vec<u8>>,
    pub registry: Option<Vec<u8>>,
    pub tables_json: Option<Vec<u8>>,
    pub tables_md: Option<Vec<u8>>,
    pub runs: Vec<BundledRun>,
    /// First record that does not parse (member named).
    pub record_problem: Option<String>,
}

fn note(slot: &mut Option<String>, text: impl FnOnce() -> String) {
    if slot.is_none() {
        *slot = Some(text());
    }
}

impl Contents {
    fn take(&mut self, m: Member, path: &Path, caps: Caps) -> Result<(), BundleError> {
        let index = self.checked;
        let bad = |problem: String| BundleError {
            path: path.to_path_buf(),
            member: Some(faultbench_core::text::echo(&m.name).into_owned()),
            problem,
        };
        if self.manifest.is_none() {
            if m.name != names::MANIFEST {
                return Err(bad(format!(
                    "the first member must be `{}` (not a faultbench bundle?)",
                    names::MANIFEST
                )));
            }
            // A manifest holds about eight JSON values per member and six per scenario:
            // bounded by the member cap, and shallow.
            let shape = faultbench_core::bounds::json_shape(&m.bytes);
            let most = caps.members.saturating_mul(16).saturating_add(100_000);
            if shape.depth > 8 || shape.values > most {
                return Err(bad(format!(
                    "refused: {} JSON values nested {} deep; a manifest has at most {most} values, 8 deep",
                    shape.values, shape.depth
                )));
            }
            let manifest: BundleManifest = serde_json::from_slice(&m.bytes).map_err(|e| {
                bad(format!(
                    "not a bundle manifest: {}",
                    faultbench_core::text::json_error(&e)
                ))
            })?;
            self.manifest = Some(manifest);
            self.manifest_bytes = m.bytes;
            return Ok(());
        }
        if m.name == names::SIGNATURE && index == 0 && self.signature.is_none() {
            let sig: SignatureFile = serde_json::from_slice(&m.bytes).map_err(|e| {
                bad(format!(
                    "not a signature: {}",
                    faultbench_core::text::json_error(&e)
                ))
            })?;
            self.signature = Some(sig);
            return Ok(());
        }
        let listed = self.manifest.as_ref().and_then(|x| x.members.get(index));
        self.checked += 1;
        match listed {
            None => note(&mut self.hash_problem, || {
                format!(
                    "member `{}` is not listed in the manifest",
                    faultbench_core::text::echo(&m.name)
                )
            }),
            Some(l) if l.name != m.name => note(&mut self.hash_problem, || {
                format!(
                    "member `{}` is where the manifest lists `{}`",
                    faultbench_core::text::echo(&m.name),
                    faultbench_core::text::echo(&l.name)
                )
            }),
            Some(l)
                if l.sha256 != crate::sha256_hex(&m.bytes) || l.bytes != m.bytes.len() as u64 =>
            {
                note(&mut self.hash_problem, || {
                    format!(
                        "member `{}` does not match its SHA-256 in the manifest",
                        faultbench_core::text::echo(&m.name)
                    )
                });
            }
            Some(_) => {}
        }
        self.keep(m);
        Ok(())
    }

    /// Keeps what the rules need from a member.
    fn keep(&mut self, m: Member) {
        match m.name.as_str() {
            names::IDENTITY => self.identity = Some(m.bytes),
            names::REGISTRY => self.registry = Some(m.bytes),
            names::TABLES => self.tables_json = Some(m.bytes),
            names::REPORT => self.tables_md = Some(m.bytes),
            n if n.ends_with("/trace.jsonl") => {}
            n if n.ends_with("/result.json") => {
                let dir = n.trim_end_matches("/result.json").to_string();
                match rules::parse_record(&m.bytes) {
                    Ok((record, detail)) => self.runs.push(BundledRun {
                        dir,
                        record,
                        detail,
                    }),
                    Err(e) => note(&mut self.record_problem, || {
                        format!("member `{}`: {e}", faultbench_core::text::echo(n))
                    }),
                }
            }
            other => note(&mut self.layout_problem, || {
                format!(
                    "member `{}` is not one faultbench packs",
                    faultbench_core::text::echo(other)
                )
            }),
        }
    }
}

/// Verifies the bundle at `path`. An unreadable bundle (corrupt, truncated, a refused member)
/// is an error naming the member; otherwise every rule gets a verdict.
pub fn verify(path: &Path, opts: &VerifyOptions) -> Result<BundleVerdict, BundleError> {
    let mut c = Contents::default();
    for_each_member(path, opts.caps, |m| c.take(m, path, opts.caps))??;
    if c.manifest.is_none() {
        return Err(BundleError {
            path: path.to_path_buf(),
            member: None,
            problem: format!("empty: no `{}` member", names::MANIFEST),
        });
    }
    Ok(rules::check(c, opts))
}
