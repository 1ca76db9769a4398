//! The bundle's manifest (`bundle/manifest.json`, the signed member) and signature.
//!
//! The manifest lists every other member with its SHA-256 and size, so that one Ed25519
//! signature over the manifest's exact bytes covers the whole bundle. It also carries the
//! dataset's digest: which scenario texts the runs were made on, each by the SHA-256 of the
//! exact text the run recorded — for generated scenarios also their seed and commitment when
//! the file names them — so that two bundles can be told to have run the same scenarios
//! without shipping the dataset.

use faultbench_core::scenario::ScenarioSpec;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What the signature signs: this prefix, then the manifest's bytes (domain separation: a
/// signature made for something else never verifies as a bundle's).
pub const SIGNED_PREFIX: &[u8] = b"faultbench-bundle-manifest-v1\n";

/// One listed member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ListedMember {
    /// Member name.
    pub name: String,
    /// SHA-256 of its bytes, hex.
    pub sha256: String,
    /// Its size in bytes.
    pub bytes: u64,
}

/// One scenario of the dataset digest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScenarioDigest {
    /// Topology.
    pub topology: String,
    /// Dataset layer.
    pub layer: String,
    /// SHA-256 of the scenario's text as the runs recorded it.
    pub sha256: String,
    /// A generated scenario's seed, when its file names one (`[NIKA-LABEL]` `seed:` or
    /// `generator_seed:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<String>,
    /// A generated scenario's commitment (a hash published before its seed), when named
    /// (`[NIKA-LABEL]` `commitment:`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commitment: Option<String>,
}

/// The scenarios the runs were made on.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DatasetDigest {
    /// SHA-256 over the sorted `id<TAB>sha256<LF>` lines: one value that names the dataset.
    pub digest: String,
    /// Each scenario by id.
    pub scenarios: BTreeMap<String, ScenarioDigest>,
}

impl DatasetDigest {
    /// Adds (or re-adds) a scenario from its recorded text; returns false when the id is
    /// already there with another text (two runs of one id on different files).
    pub fn add(&mut self, id: &str, topology: &str, layer: &str, text: &str) -> bool {
        let sha256 = crate::sha256_hex(text.as_bytes());
        if let Some(have) = self.scenarios.get(id) {
            return have.sha256 == sha256;
        }
        let (seed, commitment) = generator_labels(text);
        self.scenarios.insert(
            id.to_string(),
            ScenarioDigest {
                topology: topology.to_string(),
                layer: layer.to_string(),
                sha256,
                seed,
                commitment,
            },
        );
        true
    }

    /// Computes [`DatasetDigest::digest`] from the scenarios.
    pub fn seal(&mut self) {
        let mut lines = String::new();
        for (id, s) in &self.scenarios {
            lines.push_str(&format!("{id}\t{}\n", s.sha256));
        }
        self.digest = crate::sha256_hex(lines.as_bytes());
    }
}

/// A generated scenario's seed and commitment, from its `[NIKA-LABEL]` fields.
fn generator_labels(text: &str) -> (Option<String>, Option<String>) {
    let Ok(spec) = ScenarioSpec::parse(text) else {
        return (None, None);
    };
    let label = spec.nika_label();
    let get = |k: &str| {
        label
            .get(k)
            .map(|v| faultbench_core::text::echo(v).into_owned())
    };
    (
        get("seed").or_else(|| get("generator_seed")),
        get("commitment"),
    )
}

/// The signed manifest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BundleManifest {
    /// [`BUNDLE_FORMAT`](crate::BUNDLE_FORMAT).
    pub format: u32,
    /// The faultbench version that packed the bundle.
    pub faultbench_version: String,
    /// Runs (records) in the bundle.
    pub runs: usize,
    /// The scenarios run.
    pub dataset: DatasetDigest,
    /// The bootstrap settings of the bundled tables.
    pub bootstrap: faultbench_report::stats::Bootstrap,
    /// Every other member except the signature, in bundle order.
    pub members: Vec<ListedMember>,
}

/// The signature member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignatureFile {
    /// `ed25519`.
    pub algorithm: String,
    /// The signer's public key, hex.
    pub public_key: String,
    /// The signature over [`SIGNED_PREFIX`] + the manifest's bytes, hex.
    pub signature: String,
}

impl SignatureFile {
    /// The signature's 64 bytes, when it is 128 hex digits.
    pub fn signature_bytes(&self) -> Option<[u8; 64]> {
        let s = self.signature.trim();
        if s.len() != 128 || !s.is_ascii() {
            return None;
        }
        let mut out = [0u8; 64];
        for (i, chunk) in s.as_bytes().chunks(2).enumerate() {
            out[i] = u8::from_str_radix(std::str::from_utf8(chunk).ok()?, 16).ok()?;
        }
        Some(out)
    }
}

/// The message a signature signs.
pub fn signed_message(manifest_bytes: &[u8]) -> Vec<u8> {
    let mut m = SIGNED_PREFIX.to_vec();
    m.extend_from_slice(manifest_bytes);
    m
}
