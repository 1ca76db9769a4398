//! The on-disk verdict cache: re-judging the same run never pays twice.
//!
//! Each judgement's validated answer is stored under a SHA-256 key of everything that could
//! change it: the judgement kind, the scenario's text, the diagnosis (verdict, devices, text),
//! the trace digest, the judge model and the [prompt version](super::prompts::PROMPT_VERSION).
//! Files live at `<dir>/<first two hex digits>/<key>.json` and are written atomically (temporary
//! file, then rename), so a crash never leaves a half-written verdict. A file that does not
//! parse is treated as a miss and overwritten.

use faultbench_core::Diagnosis;
use faultbench_core::fsutil::read_regular_string_capped;
use faultbench_core::record::MAX_RECORD_BYTES;
use serde::Serialize;
use serde::de::DeserializeOwned;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// A folder of cached verdicts.
#[derive(Debug)]
pub struct VerdictCache {
    dir: PathBuf,
    hits: AtomicU64,
    misses: AtomicU64,
}

/// What a cache key is made of.
#[derive(Serialize)]
struct KeyParts<'a> {
    kind: &'a str,
    scenario: &'a str,
    is_anomaly: Option<bool>,
    faulty_devices: &'a [String],
    diagnosis: &'a str,
    digest: &'a str,
    model: &'a str,
    prompt_version: &'a str,
}

/// The cache key of one judgement.
pub fn cache_key(
    kind: &str,
    scenario_text: &str,
    diagnosis: &Diagnosis,
    digest: &str,
    model: &str,
    prompt_version: &str,
) -> String {
    let parts = KeyParts {
        kind,
        scenario: scenario_text,
        is_anomaly: diagnosis.is_anomaly,
        faulty_devices: &diagnosis.faulty_devices,
        diagnosis: &diagnosis.text,
        digest,
        model,
        prompt_version,
    };
    let bytes = serde_json::to_vec(&parts).unwrap_or_default();
    let hash = Sha256::digest(&bytes);
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

impl VerdictCache {
    /// Opens (creating if needed) a cache folder.
    pub fn open(dir: &Path) -> std::io::Result<VerdictCache> {
        std::fs::create_dir_all(dir)?;
        Ok(VerdictCache {
            dir: dir.to_path_buf(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
        })
    }

    fn path(&self, key: &str) -> PathBuf {
        self.dir
            .join(&key[..2.min(key.len())])
            .join(format!("{key}.json"))
    }

    /// A cached answer, if any.
    pub fn get<T: DeserializeOwned>(&self, key: &str) -> Option<T> {
        let found = read_regular_string_capped(&self.path(key), MAX_RECORD_BYTES)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok());
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    /// Stores an answer (atomically).
    pub fn put<T: Serialize>(&self, key: &str, value: &T) -> std::io::Result<()> {
        let path = self.path(key);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
        let tmp = path.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&tmp, text)?;
        std::fs::rename(&tmp, &path)
    }

    /// (hits, misses) since opening.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_change_with_every_input() {
        let d = Diagnosis {
            is_anomaly: Some(true),
            faulty_devices: vec!["r1".into()],
            text: "x".into(),
            parsed_ok: true,
        };
        let base = cache_key("outcome", "s", &d, "", "m", "v1");
        assert_eq!(base, cache_key("outcome", "s", &d, "", "m", "v1"));
        assert_ne!(base, cache_key("fix", "s", &d, "", "m", "v1"));
        assert_ne!(base, cache_key("outcome", "s2", &d, "", "m", "v1"));
        assert_ne!(base, cache_key("outcome", "s", &d, "log", "m", "v1"));
        assert_ne!(base, cache_key("outcome", "s", &d, "", "m2", "v1"));
        assert_ne!(base, cache_key("outcome", "s", &d, "", "m", "v2"));
        let mut d2 = d.clone();
        d2.is_anomaly = Some(false);
        assert_ne!(base, cache_key("outcome", "s", &d2, "", "m", "v1"));
        assert_eq!(base.len(), 64);
    }

    #[test]
    fn round_trip_and_corrupt_files() {
        let dir = tempfile::tempdir().unwrap();
        let c = VerdictCache::open(dir.path()).unwrap();
        let key = "ab".repeat(32);
        assert_eq!(c.get::<Vec<u32>>(&key), None);
        c.put(&key, &vec![1u32, 2]).unwrap();
        assert_eq!(c.get::<Vec<u32>>(&key), Some(vec![1, 2]));
        std::fs::write(c.path(&key), "{not json").unwrap();
        assert_eq!(c.get::<Vec<u32>>(&key), None);
        assert_eq!(c.stats(), (1, 2));
    }
}
