//! The user's own Kathará settings, carried into every instance's `kathara.conf`.
//!
//! Kathará 3.8.3 reads its global settings from `~/.config/kathara.conf` under the *passwd* home
//! of the user running it (not `$HOME`), then, for a lab with its own `kathara.conf`, loads
//! that file on top — and in doing so re-creates the manager's settings (Docker:
//! `network_plugin`, `shared_cds`, `hosthome_mount`, `shared_mount`, `remote_url`, `cert_path`,
//! `image_update_policy`) from their defaults. A per-lab file holding only faultbench's keys
//! would therefore silently drop, e.g., a user's `network_plugin`.
//!
//! So the per-lab file is the user's global file with only the keys the harness must set
//! replaced: `manager_type` (the backend drives that manager), `open_terminals = false` and
//! `image_update_policy = "Never"` (nothing may wait for a keypress), plus whatever the
//! faultbench Kathará configuration sets explicitly. Which keys came from where is a
//! [`SettingsRecord`], written beside each staged instance (`.faultbench-settings.json`).
//!
//! ```
//! use faultbench_emu::kathara::merge_settings;
//! use serde_json::json;
//!
//! let user = json!({"network_plugin": "kathara/katharanp", "open_terminals": true});
//! let harness = json!({"manager_type": "docker", "open_terminals": false});
//! let (conf, record) = merge_settings(
//!     Some((std::path::Path::new("/root/.config/kathara.conf"), user.as_object().unwrap())),
//!     harness.as_object().unwrap(),
//! );
//! assert_eq!(conf["network_plugin"], "kathara/katharanp"); // the user's, kept
//! assert_eq!(conf["open_terminals"], false); // the harness's
//! assert_eq!(record.carried, ["network_plugin"]);
//! assert_eq!(record.overridden[0].key, "open_terminals");
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};

/// Bound on the user's settings file (Kathará writes about 600 bytes).
const MAX_SETTINGS_BYTES: u64 = 64 * 1024;
/// The file recording where each key of an instance's `kathara.conf` came from.
pub const SETTINGS_RECORD_FILE: &str = ".faultbench-settings.json";

/// One key the harness set over the user's value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Override {
    /// The setting.
    pub key: String,
    /// The user's value.
    pub user: Value,
    /// The value written.
    pub written: Value,
}

/// Where the keys of an instance's `kathara.conf` came from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SettingsRecord {
    /// The user's global settings file, when there was one.
    pub user_file: Option<PathBuf>,
    /// Keys copied from it unchanged.
    pub carried: Vec<String>,
    /// Keys the harness set to a value other than the user's.
    pub overridden: Vec<Override>,
    /// Keys the harness set that the user's file does not have.
    pub added: Vec<String>,
}

impl SettingsRecord {
    /// One line for a terminal: the file and what was overridden.
    pub fn summary(&self) -> String {
        let Some(file) = &self.user_file else {
            return "no user Kathará settings file; Kathará's defaults plus faultbench's keys"
                .into();
        };
        let over: Vec<String> = self
            .overridden
            .iter()
            .map(|o| format!("{} {} → {}", o.key, o.user, o.written))
            .collect();
        format!(
            "Kathará settings from {} ({} keys kept{})",
            file.display(),
            self.carried.len(),
            if over.is_empty() {
                String::new()
            } else {
                format!("; overridden: {}", over.join(", "))
            }
        )
    }
}

/// The user's settings file cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {why}; fix or remove it (Kathará reads it before every command)", path.display())]
pub struct SettingsError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub why: String,
}

/// Where Kathará keeps the global settings of the user running this process:
/// `<passwd home>/.config/kathara.conf` (`$HOME` when the passwd entry cannot be read).
pub fn user_settings_path() -> Option<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self").ok()?.uid();
    let home = std::fs::read_to_string("/etc/passwd")
        .ok()
        .and_then(|text| passwd_home(&text, uid))
        .or_else(|| std::env::var_os("HOME").map(PathBuf::from))?;
    Some(home.join(".config").join("kathara.conf"))
}

/// The home field of `uid`'s line in a passwd file.
fn passwd_home(passwd: &str, uid: u32) -> Option<PathBuf> {
    passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.len() >= 7 && f[2].parse::<u32>().ok() == Some(uid) && f[5].starts_with('/'))
            .then(|| PathBuf::from(f[5]))
    })
}

/// Reads the user's settings: `Ok(None)` when there is no file. The file must be a regular
/// file (no link followed), at most 64 KiB, holding a JSON object of scalar values.
pub fn load_user_settings(path: &Path) -> Result<Option<Map<String, Value>>, SettingsError> {
    let err = |why: String| SettingsError {
        path: path.to_path_buf(),
        why,
    };
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(err(e.to_string())),
        Ok(m) if m.file_type().is_symlink() => {
            return Err(err(
                "a symbolic link, which faultbench does not follow (set `user_settings` in the \
                 faultbench Kathará configuration to the file it points to)"
                    .into(),
            ));
        }
        Ok(_) => {}
    }
    let text = faultbench_core::fsutil::read_regular_string_capped(path, MAX_SETTINGS_BYTES)
        .map_err(|e| err(e.to_string()))?;
    let value: Value = serde_json::from_str(&text).map_err(|e| err(format!("not JSON: {e}")))?;
    let Value::Object(map) = value else {
        return Err(err("not a JSON object".into()));
    };
    if let Some((k, _)) = map.iter().find(|(_, v)| v.is_object() || v.is_array()) {
        return Err(err(format!(
            "`{k}` is not a string, number, boolean or null"
        )));
    }
    Ok(Some(map))
}

/// The per-lab settings: the user's, with `harness` keys written over them.
pub fn merge_settings(
    user: Option<(&Path, &Map<String, Value>)>,
    harness: &Map<String, Value>,
) -> (Value, SettingsRecord) {
    let mut record = SettingsRecord {
        user_file: user.map(|(p, _)| p.to_path_buf()),
        ..Default::default()
    };
    let mut out = Map::new();
    if let Some((_, values)) = user {
        for (k, v) in values {
            match harness.get(k) {
                None => record.carried.push(k.clone()),
                Some(w) if w == v => record.carried.push(k.clone()),
                Some(w) => record.overridden.push(Override {
                    key: k.clone(),
                    user: v.clone(),
                    written: w.clone(),
                }),
            }
            out.insert(k.clone(), v.clone());
        }
    }
    for (k, v) in harness {
        if !out.contains_key(k) {
            record.added.push(k.clone());
        }
        out.insert(k.clone(), v.clone());
    }
    (Value::Object(out), record)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_users_plugin_and_images_survive_and_harness_keys_win() {
        // What Kathará 3.8.3 writes on first run, with a user's own plugin and image.
        let user = json!({
            "image": "myorg/frr", "manager_type": "docker", "open_terminals": true,
            "network_plugin": "kathara/katharanp", "shared_cds": 2,
            "image_update_policy": "Prompt", "last_checked": 1795930169.08
        });
        let harness = json!({
            "manager_type": "docker", "open_terminals": false, "image_update_policy": "Never"
        });
        let (conf, rec) = merge_settings(
            Some((
                Path::new("/h/.config/kathara.conf"),
                user.as_object().unwrap(),
            )),
            harness.as_object().unwrap(),
        );
        assert_eq!(conf["network_plugin"], "kathara/katharanp");
        assert_eq!(conf["image"], "myorg/frr");
        assert_eq!(conf["shared_cds"], 2);
        assert_eq!(conf["open_terminals"], false);
        assert_eq!(conf["image_update_policy"], "Never");
        let over: Vec<&str> = rec.overridden.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(over, ["image_update_policy", "open_terminals"]);
        assert!(rec.carried.contains(&"manager_type".to_string()));
        assert!(rec.added.is_empty());
        assert!(
            rec.summary().contains("open_terminals true → false"),
            "{}",
            rec.summary()
        );
    }

    #[test]
    fn without_a_user_file_only_the_harness_keys_are_written() {
        let harness = json!({"manager_type": "docker"});
        let (conf, rec) = merge_settings(None, harness.as_object().unwrap());
        assert_eq!(conf, harness);
        assert_eq!(rec.added, ["manager_type"]);
        assert!(rec.user_file.is_none());
    }

    #[test]
    fn bad_user_files_are_refused_with_the_file_named() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("kathara.conf");
        assert!(load_user_settings(&p).unwrap().is_none());
        for (text, why) in [
            ("{nope", "not JSON"),
            ("[1]", "not a JSON object"),
            ("{\"image\": {\"x\": 1}}", "`image`"),
        ] {
            std::fs::write(&p, text).unwrap();
            let e = load_user_settings(&p).unwrap_err().to_string();
            assert!(e.contains(why) && e.contains("kathara.conf"), "{e}");
        }
        std::fs::write(&p, "x".repeat(70 * 1024)).unwrap();
        assert!(load_user_settings(&p).is_err());
        // A link is not followed.
        let real = t.path().join("real.conf");
        std::fs::write(&real, "{}").unwrap();
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink(&real, &p).unwrap();
        assert!(load_user_settings(&p).is_err());
        std::fs::remove_file(&p).unwrap();
        std::fs::write(&p, "{\"network_plugin\": \"kathara/katharanp\"}").unwrap();
        assert_eq!(
            load_user_settings(&p).unwrap().unwrap()["network_plugin"],
            "kathara/katharanp"
        );
    }

    #[test]
    fn the_home_comes_from_the_passwd_line_of_the_uid() {
        let passwd = "root:x:0:0:root:/root:/bin/bash\nu:x:1000:1000::/home/u:/bin/sh\nbad:line\n";
        assert_eq!(passwd_home(passwd, 1000), Some(PathBuf::from("/home/u")));
        assert_eq!(passwd_home(passwd, 0), Some(PathBuf::from("/root")));
        assert_eq!(passwd_home(passwd, 7), None);
    }
}
