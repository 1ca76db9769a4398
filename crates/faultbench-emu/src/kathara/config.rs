//! What the Kathará backend needs to know: which `kathara` to run, which manager (Docker or
//! Kubernetes/Megalos) deploys the labs, and how long to wait.
//!
//! The manager is written into a per-lab `kathara.conf` next to the staged `lab.conf`, so the
//! user's global `~/.config/kathara.conf` is never touched and two emulators with different
//! managers can run side by side. That per-lab file starts from the user's global settings
//! (network plugin, default image, …: see [`super::settings`]) and overrides only what the
//! harness must set ([`KatharaOptions::kathara_conf`]).
//!
//! ```
//! use faultbench_emu::kathara::{KatharaOptions, Manager};
//!
//! let cfg = KatharaOptions::from_toml(r#"
//!     cli = ["python3", "-m", "kathara"]
//!     [manager]
//!     type = "kubernetes"
//!     api_server_url = "https://k8s.example:6443"
//!     api_token = "s3cret"
//! "#).unwrap();
//! assert!(matches!(cfg.manager, Manager::Kubernetes { .. }));
//! let conf = cfg.kathara_conf();
//! assert_eq!(conf["manager_type"], "kubernetes");
//! assert_eq!(conf["open_terminals"], false);
//! assert_eq!(conf["api_server_url"], "https://k8s.example:6443");
//! ```

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::time::Duration;

/// The Kathará manager that runs the devices.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Manager {
    /// One container per device on a Docker engine (local, or remote through `remote_url`).
    Docker {
        /// A remote Docker daemon (`tcp://host:2376`); the local socket when absent.
        #[serde(default)]
        remote_url: Option<String>,
        /// TLS material for `remote_url`.
        #[serde(default)]
        cert_path: Option<String>,
        /// The network plugin image (Kathará's default: `kathara/katharanp_vde`).
        #[serde(default)]
        network_plugin: Option<String>,
    },
    /// One pod per device on a Kubernetes cluster with the Megalos CNI.
    Kubernetes {
        /// API server; `~/.kube/config` is tried first when absent.
        #[serde(default)]
        api_server_url: Option<String>,
        /// Bearer token for `api_server_url`.
        #[serde(default)]
        api_token: Option<String>,
        /// Mount the worker's `/home/shared` at `/shared` (Kathará's default: true).
        #[serde(default)]
        host_shared: Option<bool>,
        /// `Always`, `IfNotPresent` (Kathará's default) or `Never`.
        #[serde(default)]
        image_pull_policy: Option<String>,
        /// Base64 of a Docker `config.json` for private registries.
        #[serde(default)]
        docker_config_json: Option<String>,
    },
}

impl Default for Manager {
    fn default() -> Self {
        Manager::Docker {
            remote_url: None,
            cert_path: None,
            network_plugin: None,
        }
    }
}

impl Manager {
    /// Kathará's name for it (`manager_type`).
    pub fn kind(&self) -> &'static str {
        match self {
            Manager::Docker { .. } => "docker",
            Manager::Kubernetes { .. } => "kubernetes",
        }
    }
}

/// How device commands reach the devices.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DeviceCommands {
    /// Through the Docker Engine API when the manager is Docker on this host's engine (about a
    /// `docker exec` per command), else through `kathara exec`.
    #[default]
    Auto,
    /// Always through `kathara exec` (one Python process per command).
    Kathara,
}

/// The former name of [`KatharaOptions`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `KatharaOptions`; the old name goes in the next release")]
pub type KatharaConfig = KatharaOptions;

/// Configuration of [`super::KatharaEmulator`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KatharaOptions {
    /// How to invoke Kathará, e.g. `["kathara"]` or `["/opt/venv/bin/python", "-m", "kathara"]`.
    /// Discovered when absent (see [`super::KatharaCli::discover`]).
    #[serde(default)]
    pub cli: Option<Vec<String>>,
    /// The manager.
    #[serde(default)]
    pub manager: Manager,
    /// Where instances are staged (a copy of the lab with its own `LAB_NAME`);
    /// `$TMPDIR/faultbench-kathara` when absent.
    #[serde(default)]
    pub work_dir: Option<PathBuf>,
    /// Bound on `lstart` (image pulls on a cold host take a while).
    #[serde(default = "default_deploy_secs")]
    pub deploy_timeout_secs: u64,
    /// Bound on waiting for every device's startup to finish after `lstart`.
    #[serde(default = "default_ready_secs")]
    pub ready_timeout_secs: u64,
    /// Extra wait after the startups, for routing to converge (the release waited 90 s on
    /// Docker; baseline probes with retries usually make this unnecessary).
    #[serde(default)]
    pub settle_secs: u64,
    /// Bytes of stdout and of stderr kept per command; the rest is cut and flagged.
    #[serde(default = "default_output_cap")]
    pub max_output_bytes: usize,
    /// Image used for devices without `[image]` (Kathará's `image` setting).
    #[serde(default)]
    pub default_image: Option<String>,
    /// Further `kathara.conf` keys, written as given (e.g. `{ "device_shell" = "/bin/sh" }`).
    #[serde(default)]
    pub settings: Map<String, Value>,
    /// The user's Kathará settings file carried into each instance; Kathará's own location
    /// (`<passwd home>/.config/kathara.conf`) when absent.
    #[serde(default)]
    pub user_settings: Option<PathBuf>,
    /// Start each instance's `kathara.conf` from the user's settings (default). `false`: from
    /// Kathará's defaults, as before.
    #[serde(default = "default_true")]
    pub carry_user_settings: bool,
    /// How device commands reach the devices.
    #[serde(default)]
    pub device_commands: DeviceCommands,
}

fn default_true() -> bool {
    true
}

fn default_deploy_secs() -> u64 {
    600
}
fn default_ready_secs() -> u64 {
    300
}
fn default_output_cap() -> usize {
    1 << 20
}

impl Default for KatharaOptions {
    fn default() -> Self {
        KatharaOptions {
            cli: None,
            manager: Manager::default(),
            work_dir: None,
            deploy_timeout_secs: default_deploy_secs(),
            ready_timeout_secs: default_ready_secs(),
            settle_secs: 0,
            max_output_bytes: default_output_cap(),
            default_image: None,
            settings: Map::new(),
            user_settings: None,
            carry_user_settings: true,
            device_commands: DeviceCommands::Auto,
        }
    }
}

/// A configuration file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("kathara config: {0}")]
pub struct ConfigError(pub String);

impl KatharaOptions {
    /// Parses the TOML form shown in the module docs.
    pub fn from_toml(text: &str) -> Result<KatharaOptions, ConfigError> {
        let cfg: KatharaOptions = toml::from_str(text).map_err(|e| ConfigError(e.to_string()))?;
        if cfg.cli.as_ref().is_some_and(|c| c.is_empty()) {
            return Err(ConfigError("`cli` must name a program".into()));
        }
        for reserved in ["manager_type", "open_terminals"] {
            if cfg.settings.contains_key(reserved) {
                return Err(ConfigError(format!(
                    "`settings.{reserved}` is set by faultbench; use `[manager]` instead"
                )));
            }
        }
        Ok(cfg)
    }

    /// The per-lab `kathara.conf` (JSON) written beside each staged `lab.conf`: the manager and
    /// its keys, no terminals, never prompt for image updates, plus [`KatharaOptions::settings`].
    pub fn kathara_conf(&self) -> Value {
        let mut m = Map::new();
        m.insert("manager_type".into(), json!(self.manager.kind()));
        m.insert("open_terminals".into(), json!(false));
        m.insert("image_update_policy".into(), json!("Never"));
        if let Some(image) = &self.default_image {
            m.insert("image".into(), json!(image));
        }
        let mut put = |k: &str, v: &Option<String>| {
            if let Some(v) = v {
                m.insert(k.into(), json!(v));
            }
        };
        match &self.manager {
            Manager::Docker {
                remote_url,
                cert_path,
                network_plugin,
            } => {
                put("remote_url", remote_url);
                put("cert_path", cert_path);
                put("network_plugin", network_plugin);
            }
            Manager::Kubernetes {
                api_server_url,
                api_token,
                host_shared,
                image_pull_policy,
                docker_config_json,
            } => {
                put("api_server_url", api_server_url);
                put("api_token", api_token);
                put("image_pull_policy", image_pull_policy);
                put("docker_config_json", docker_config_json);
                if let Some(h) = host_shared {
                    m.insert("host_shared".into(), json!(h));
                }
            }
        }
        for (k, v) in &self.settings {
            m.insert(k.clone(), v.clone());
        }
        Value::Object(m)
    }

    /// The `kathara.conf` of an instance: the user's settings ([`Self::user_settings`]) with
    /// [`Self::kathara_conf`] written over them, and the record of what came from where.
    pub fn instance_settings(
        &self,
    ) -> Result<(Value, super::settings::SettingsRecord), super::settings::SettingsError> {
        let harness = self.kathara_conf();
        let harness = harness.as_object().cloned().unwrap_or_default();
        let path = if self.carry_user_settings {
            self.user_settings
                .clone()
                .or_else(super::settings::user_settings_path)
        } else {
            None
        };
        let user = match &path {
            Some(p) => super::settings::load_user_settings(p)?.map(|m| (p.clone(), m)),
            None => None,
        };
        Ok(super::settings::merge_settings(
            user.as_ref().map(|(p, m)| (p.as_path(), m)),
            &harness,
        ))
    }

    /// Where instances are staged.
    pub fn work_dir(&self) -> PathBuf {
        self.work_dir
            .clone()
            .unwrap_or_else(|| std::env::temp_dir().join("faultbench-kathara"))
    }

    pub(crate) fn deploy_timeout(&self) -> Duration {
        Duration::from_secs(self.deploy_timeout_secs)
    }

    pub(crate) fn ready_timeout(&self) -> Duration {
        Duration::from_secs(self.ready_timeout_secs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docker_is_the_default_and_never_prompts() {
        let cfg = KatharaOptions::from_toml("").unwrap();
        let c = cfg.kathara_conf();
        assert_eq!(c["manager_type"], "docker");
        assert_eq!(c["image_update_policy"], "Never");
        assert_eq!(c["open_terminals"], false);
        assert!(c.get("api_server_url").is_none());
    }

    #[test]
    fn bad_configs_are_rejected_with_the_reason() {
        let e = KatharaOptions::from_toml("[manager]\ntype = \"podman\"\n").unwrap_err();
        assert!(e.0.contains("podman"), "{e}");
        let e = KatharaOptions::from_toml("cli = []\n").unwrap_err();
        assert!(e.0.contains("program"), "{e}");
        let e = KatharaOptions::from_toml("[settings]\nmanager_type = \"docker\"\n").unwrap_err();
        assert!(e.0.contains("[manager]"), "{e}");
        let e = KatharaOptions::from_toml("[manager]\ntype = \"docker\"\napi_token = \"x\"\n")
            .unwrap_err();
        assert!(e.0.contains("api_token"), "{e}");
    }

    #[test]
    fn a_users_network_plugin_reaches_the_instance_and_prompts_do_not() {
        let t = tempfile::tempdir().unwrap();
        let user = t.path().join("kathara.conf");
        std::fs::write(
            &user,
            r#"{"network_plugin": "kathara/katharanp", "image_update_policy": "Prompt",
                "open_terminals": true, "image": "myorg/base"}"#,
        )
        .unwrap();
        let mut cfg = KatharaOptions {
            user_settings: Some(user.clone()),
            ..Default::default()
        };
        let (conf, rec) = cfg.instance_settings().unwrap();
        assert_eq!(conf["network_plugin"], "kathara/katharanp");
        assert_eq!(conf["image"], "myorg/base");
        assert_eq!(conf["image_update_policy"], "Never");
        assert_eq!(conf["open_terminals"], false);
        assert_eq!(rec.user_file.as_deref(), Some(user.as_path()));
        assert_eq!(rec.overridden.len(), 2, "{rec:?}");
        // The faultbench configuration's explicit choices win over the user's file.
        cfg.default_image = Some("kathara/frr".into());
        assert_eq!(cfg.instance_settings().unwrap().0["image"], "kathara/frr");
        // Opting out writes the harness keys alone.
        cfg.carry_user_settings = false;
        let (conf, rec) = cfg.instance_settings().unwrap();
        assert!(conf.get("network_plugin").is_none());
        assert!(rec.user_file.is_none());
    }

    #[test]
    fn extra_settings_pass_through() {
        let cfg = KatharaOptions::from_toml(
            "default_image = \"kathara/frr\"\n[settings]\ndevice_shell = \"/bin/sh\"\n",
        )
        .unwrap();
        let c = cfg.kathara_conf();
        assert_eq!(c["device_shell"], "/bin/sh");
        assert_eq!(c["image"], "kathara/frr");
    }
}
