//! # faultbench-bundle: results anyone can check
//!
//! A **bundle** is one file (`tar`, compressed with `zstd`) that carries a runs root's evidence:
//! its configuration (`identity.json`), its registry (`MANIFEST.csv`, rebuilt from the records
//! so that it is complete and in key order), every run's `result.json` and `trace.jsonl`, the
//! tables computed from them (`bundle/tables.json`, `bundle/report.md`), and a manifest
//! (`bundle/manifest.json`) listing the SHA-256 of every other member, the faultbench version,
//! and the dataset's digest (the SHA-256 of every scenario text the runs were made on). The
//! manifest is signed with Ed25519 (`bundle/signature.json`), so one signature covers every
//! byte of the bundle.
//!
//! - [`keys`]: `faultbench keygen` — a key pair in two plain files (the secret one 0600).
//! - [`pack()`]: `faultbench pack RUNS_ROOT --out FILE [--key SECRET]`. Deterministic: the same
//!   root gives the same bytes (members in a fixed order, mode 0644, mtime 0, no owner names).
//! - [`verify()`]: `faultbench verify FILE [--pubkey KEY]` — the signature and every hash; the
//!   leaderboard's rules on the configuration; every run re-scored by the rubric judge (an LLM
//!   judge's recorded verdicts are kept and its prompt version checked); the tables recomputed.
//!   One [`RuleVerdict`] per rule; the first failure names its run or field.
//! - [`leaderboard`]: `faultbench leaderboard FILE... --out DIR` — a static site, one row per
//!   bundle, ranked only when verified, each linking to its bundle's run viewer.
//!
//! **Bundles are untrusted.** [`read`] streams a bundle without extracting it: only regular
//! files of the plain `ustar` format are accepted (links, folders, devices, GNU long names and
//! pax headers are refused — none is needed, and a long-name header would be read into memory
//! whole), every member name must be a relative path of plain names (no `..`, no `/` at the
//! start, no empty or `.` steps, no backslash), names appear once, and the file's size, the
//! number of members, each member's size and their total are capped ([`read::Caps`]). A
//! truncated or corrupt bundle is an error naming the member where reading failed. When the
//! leaderboard writes a bundle's runs to disk for the viewer, it writes them through
//! [`OutputDir`](faultbench_core::output::OutputDir), which never follows a link.

pub mod keys;
pub mod leaderboard;
pub mod manifest;
pub mod pack;
pub mod read;
pub mod synth;
pub mod tables;
pub mod verify;

pub use keys::{KeyError, PublicKey, SecretKey, keygen};
pub use manifest::{BundleManifest, DatasetDigest, ScenarioDigest};
pub use pack::{PackError, PackOptions, PackSummary, pack};
pub use read::{BundleError, Caps, Member};
#[allow(deprecated)]
pub use verify::{BundleVerdict, Rule, RuleVerdict, Verdict, VerifyOptions, VerifyRule, verify};

/// Member names of the bundle's own files.
pub mod names {
    /// The signed manifest (first member).
    pub const MANIFEST: &str = "bundle/manifest.json";
    /// The signature over the manifest (second member, absent in an unsigned bundle).
    pub const SIGNATURE: &str = "bundle/signature.json";
    /// The tables, as computed at packing (`faultbench_report` tables and analyses).
    pub const TABLES: &str = "bundle/tables.json";
    /// The same tables in Markdown, for people.
    pub const REPORT: &str = "bundle/report.md";
    /// The runs root's configuration.
    pub const IDENTITY: &str = "identity.json";
    /// The run registry.
    pub const REGISTRY: &str = "MANIFEST.csv";
}

/// The bundle format's version (in the manifest).
pub const BUNDLE_FORMAT: u32 = 1;

/// The faultbench version that writes and reads bundles.
pub const FAULTBENCH_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Lowercase hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// SHA-256 of bytes, in lowercase hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex(&sha2::Sha256::digest(bytes))
}
