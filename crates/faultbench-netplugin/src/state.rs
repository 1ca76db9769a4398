//! What the plugin remembers between restarts: its networks and endpoints, in one JSON file
//! rewritten (atomically) after every change.
//!
//! The file is read back as untrusted input: bounded in size, never through a symbolic link,
//! every id checked to be the hex Docker uses (ids become interface names).

use std::collections::BTreeMap;
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::PluginError;

/// Larger than any real state (a few hundred bytes per endpoint): a bigger file is not ours.
const MAX_STATE_BYTES: u64 = 4 << 20;

/// One endpoint (a device's interface on a collision domain).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Endpoint {
    /// The network it is on.
    pub network: String,
    /// Its MAC, `aa:bb:…`.
    pub mac: String,
    /// Whether a container has joined (its veth pair exists).
    #[serde(default)]
    pub joined: bool,
}

/// Everything remembered.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// Network id → the bridge's name.
    pub networks: BTreeMap<String, String>,
    /// Endpoint id → endpoint.
    pub endpoints: BTreeMap<String, Endpoint>,
}

/// Whether `id` is what Docker uses for network and endpoint ids: 12 to 64 lowercase hex.
pub fn valid_id(id: &str) -> bool {
    (12..=64).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_hexdigit())
}

impl State {
    /// Reads `path`; a missing file is an empty state.
    pub fn load(path: &Path) -> Result<Self, PluginError> {
        let bad = |why: String| PluginError::State {
            path: path.to_owned(),
            why,
        };
        let f = match std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)
        {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Self::default()),
            Err(e) => {
                return Err(bad(format!(
                    "cannot open ({e}); a symbolic link is refused: remove it"
                )));
            }
        };
        let mut text = String::new();
        f.take(MAX_STATE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| bad(format!("cannot read: {e}")))?;
        if text.len() as u64 > MAX_STATE_BYTES {
            return Err(bad(format!(
                "larger than {MAX_STATE_BYTES} bytes: not a state this plugin wrote; remove it"
            )));
        }
        let st: Self = serde_json::from_str(&text)
            .map_err(|e| bad(format!("not valid state JSON ({e}); remove it")))?;
        for id in st.networks.keys().chain(st.endpoints.keys()) {
            if !valid_id(id) {
                return Err(bad(format!(
                    "id {id:?} is not a Docker id; remove the file"
                )));
            }
        }
        for (id, ep) in &st.endpoints {
            if !valid_id(&ep.network) || crate::mac::parse(&ep.mac).is_err() {
                return Err(bad(format!(
                    "endpoint {id} has a bad network id or MAC; remove the file"
                )));
            }
        }
        Ok(st)
    }

    /// Writes the state to `path` through a temporary file and a rename.
    pub fn save(&self, path: &Path) -> Result<(), PluginError> {
        let bad = |why: String| PluginError::State {
            path: path.to_owned(),
            why,
        };
        let tmp: PathBuf = path.with_extension("tmp");
        let text = serde_json::to_string_pretty(self).map_err(|e| bad(e.to_string()))?;
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| bad(format!("cannot create folder: {e}")))?;
        }
        std::fs::write(&tmp, text).map_err(|e| bad(format!("cannot write: {e}")))?;
        std::fs::rename(&tmp, path).map_err(|e| bad(format!("cannot replace: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const N: &str = "0123456789abcdef0123";
    const E: &str = "fedcba9876543210fedc";

    #[test]
    fn state_round_trips_and_a_missing_file_is_empty() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.json");
        assert_eq!(State::load(&p).unwrap(), State::default());
        let mut s = State::default();
        s.networks.insert(N.into(), "kt-0123456789ab".into());
        s.endpoints.insert(
            E.into(),
            Endpoint {
                network: N.into(),
                mac: "02:00:00:00:00:01".into(),
                joined: true,
            },
        );
        s.save(&p).unwrap();
        assert_eq!(State::load(&p).unwrap(), s);
    }

    #[test]
    fn a_hostile_state_file_is_refused_with_the_fix() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("s.json");
        std::fs::write(&p, r#"{"networks":{"../../x":"kt-x"},"endpoints":{}}"#).unwrap();
        let e = State::load(&p).unwrap_err().to_string();
        assert!(e.contains("not a Docker id") && e.contains("s.json"), "{e}");
        std::fs::write(&p, "{").unwrap();
        assert!(
            State::load(&p)
                .unwrap_err()
                .to_string()
                .contains("remove it")
        );
        let l = d.path().join("link.json");
        std::os::unix::fs::symlink(&p, &l).unwrap();
        assert!(
            State::load(&l)
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
    }
}
