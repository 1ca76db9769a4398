//! [`KatharaEmulator`]: deploy a lab directory with `kathara lstart` and hand back a
//! [`KatharaLab`].
//!
//! Deploying is: validate the lab (faultbench's reader), stage a private copy under a unique
//! `LAB_NAME` with a per-lab `kathara.conf` (manager, no terminals, no image prompts),
//! `lstart --noterminals`, wait until every device has finished its startup (Kathará touches
//! `/tmp/EOS` in the device when it has), check with `linfo` that every device is running, and
//! optionally wait for routing to settle. Any failure on the way cleans up (`lclean`, staged
//! copy removed) before the error is returned.

use super::cleaner::Cleaner;
use super::cli::KatharaCli;
use super::config::{DeviceCommands, KatharaOptions};
use super::engine::{DockerEngine, local_socket};
use super::lab::KatharaLab;
use super::settings::SETTINGS_RECORD_FILE;
use super::stage;
use faultbench_core::emulator::{EmuError, Emulator, Lab, LabRequest};
use faultbench_core::lab::LabDir;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Environment variable naming the Kathará configuration file (TOML, [`KatharaOptions`]) of
/// `faultbench bench`, `lab` and `scenario check`.
pub const KATHARA_CONFIG_ENV: &str = "FAULTBENCH_KATHARA_CONFIG";

/// The Kathará backend of [`Emulator`].
#[derive(Debug, Clone)]
pub struct KatharaEmulator {
    config: KatharaOptions,
    cli: KatharaCli,
    /// Background `lclean`s of the labs it deployed ([`Emulator::defer_teardowns`]).
    cleaner: Arc<Cleaner>,
}

/// How many devices are polled for readiness at once (through `kathara exec`, each poll is a
/// Python process).
const READY_PARALLELISM: usize = 4;
/// Pause between two end-of-startup polls of one device.
const READY_POLL: Duration = Duration::from_millis(250);
/// Bound on one end-of-startup poll.
const PROBE_BOUND: Duration = Duration::from_secs(10);

impl KatharaEmulator {
    /// An emulator using `config.cli`, or Kathará found by [`KatharaCli::discover`].
    pub fn new(config: KatharaOptions) -> Result<KatharaEmulator, EmuError> {
        let cli = match &config.cli {
            Some(argv) => KatharaCli::from_argv(argv)
                .ok_or_else(|| EmuError::Environment("kathara config: empty `cli`".into()))?,
            None => KatharaCli::discover().map_err(|e| EmuError::Environment(e.to_string()))?,
        };
        Ok(KatharaEmulator {
            config,
            cli,
            cleaner: Arc::default(),
        })
    }

    /// Reads a TOML configuration file (see [`KatharaOptions`]).
    pub fn from_config_file(path: &Path) -> Result<KatharaEmulator, EmuError> {
        let text = faultbench_core::fsutil::read_regular_string_capped(path, 1 << 20)
            .map_err(|e| EmuError::Environment(e.to_string()))?;
        let cfg = KatharaOptions::from_toml(&text)
            .map_err(|e| EmuError::Environment(format!("{}: {e}", path.display())))?;
        KatharaEmulator::new(cfg)
    }

    /// As `faultbench bench --emulator kathara` builds it: from the TOML file named by
    /// `$FAULTBENCH_KATHARA_CONFIG`, else the defaults.
    pub fn from_env() -> Result<KatharaEmulator, EmuError> {
        match std::env::var_os(KATHARA_CONFIG_ENV) {
            Some(path) => KatharaEmulator::from_config_file(Path::new(&path)),
            None => KatharaEmulator::new(KatharaOptions::default()),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &KatharaOptions {
        &self.config
    }

    /// The Kathará command line in use.
    pub fn cli(&self) -> &KatharaCli {
        &self.cli
    }

    /// Kathará's own offline check of a lab directory (`lstart --dry-mode`); no engine needed.
    pub async fn validate(&self, dir: &Path) -> Result<(), EmuError> {
        self.cli
            .dry_run(dir)
            .await
            .map_err(|e| EmuError::InvalidLab(e.to_string()))
    }

    /// Cleans instances left by processes that died without tearing down: every staged copy
    /// whose owner PID no longer exists is `lclean`ed and removed. Returns their names.
    pub async fn gc(&self) -> Result<Vec<String>, EmuError> {
        let work = self.config.work_dir();
        let Ok(entries) = std::fs::read_dir(&work) else {
            return Ok(Vec::new());
        };
        let mut cleaned = Vec::new();
        for e in entries.flatten() {
            let dir = e.path();
            if !dir.is_dir() || !dir.join("lab.conf").exists() {
                continue;
            }
            match stage::owner(&dir) {
                Some(stage::Owner::Detached) => continue,
                Some(stage::Owner::Pid(p)) if stage::pid_alive(p) => continue,
                _ => {}
            }
            KatharaLab::clean(&self.cli, &dir).await?;
            cleaned.push(e.file_name().to_string_lossy().into_owned());
        }
        Ok(cleaned)
    }

    async fn bring_up(&self, lab: &KatharaLab) -> Result<(), EmuError> {
        let started = Instant::now();
        let deadline = started + self.config.ready_timeout();
        let args = vec![
            "lstart".to_string(),
            "--noterminals".into(),
            "-d".into(),
            lab.dir.display().to_string(),
        ];
        let out = self
            .cli
            .run(&args, self.config.deploy_timeout(), 1 << 20)
            .await
            .map_err(|e| EmuError::Environment(format!("{}: {e}", self.cli.display())))?;
        if !out.ok() {
            let reason = match out.failure() {
                Some(f)
                    if f.exception == "DockerDaemonConnectionError"
                        || f.exception == "ConnectionError" =>
                {
                    return Err(EmuError::Environment(format!(
                        "{}: {}",
                        f.exception, f.message
                    )));
                }
                Some(f) => format!("lstart: {} ({})", f.message, f.exception),
                None if out.timed_out => format!(
                    "lstart did not finish within {:?}",
                    self.config.deploy_timeout()
                ),
                None => format!(
                    "lstart exited with {:?}: {}{}",
                    out.code, out.stdout, out.stderr
                ),
            };
            return Err(EmuError::DeployIncomplete {
                lab: lab.name.clone(),
                reason,
            });
        }
        timing(&lab.name, "lstart", started);
        let t = Instant::now();
        self.wait_startups(lab, deadline).await?;
        timing(&lab.name, "startups done", t);
        let t = Instant::now();
        let status = lab.status().await?;
        timing(&lab.name, "device status", t);
        let not_running: Vec<String> = lab
            .devices
            .iter()
            .filter(|d| !status.iter().any(|s| &s.name == *d && s.is_running()))
            .map(|d| {
                let st = status
                    .iter()
                    .find(|s| &s.name == d)
                    .map(|s| s.status.as_str());
                format!("{d} ({})", st.unwrap_or("absent"))
            })
            .collect();
        if !not_running.is_empty() {
            return Err(EmuError::DeployIncomplete {
                lab: lab.name.clone(),
                reason: format!(
                    "devices not running after startup: {}",
                    not_running.join(", ")
                ),
            });
        }
        if self.config.settle_secs > 0 {
            tokio::time::sleep(Duration::from_secs(self.config.settle_secs)).await;
        }
        Ok(())
    }

    /// Waits, device by device, until Kathará's end-of-startup marker exists: a short
    /// `test -e /tmp/EOS` per device and round (so no permit of the engine's cap is held while
    /// waiting). A device whose container or pod is not up yet is asked again after a second.
    async fn wait_startups(&self, lab: &KatharaLab, deadline: Instant) -> Result<(), EmuError> {
        let sem = tokio::sync::Semaphore::new(READY_PARALLELISM);
        let waits = lab.devices.iter().map(|device| {
            let sem = &sem;
            async move {
                let late = || {
                    format!(
                        "{device}: startup not finished in time (see /var/log/startup.log in the device)"
                    )
                };
                loop {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(late());
                    }
                    // Through `kathara exec` each call is a Python process: the device waits
                    // for the marker itself, in one call (exit 3: not in time).
                    let (argv, bound) = if lab.engine.is_some() {
                        let a = vec!["test".to_string(), "-e".into(), "/tmp/EOS".into()];
                        (a, left.min(PROBE_BOUND))
                    } else {
                        let polls = (left.as_millis() / 200).max(1);
                        let script = format!(
                            "i=0; while [ ! -e /tmp/EOS ]; do i=$((i+1)); [ $i -ge {polls} ] && exit 3; sleep 0.2; done"
                        );
                        (vec!["sh".to_string(), "-c".into(), script], left)
                    };
                    let r = {
                        let _permit = sem.acquire().await;
                        lab.exec_argv(device, &argv, bound).await
                    };
                    match r {
                        Ok(o) if o.success() => return Ok(()),
                        Ok(o) if o.exit_code == Some(3) => return Err(late()),
                        Ok(o) if o.exit_code == Some(1) || o.timed_out => {
                            tokio::time::sleep(READY_POLL).await;
                        }
                        Ok(o) => {
                            return Err(format!(
                                "{device}: readiness probe failed: {}{}",
                                o.stdout, o.stderr
                            ));
                        }
                        Err(EmuError::NotRunning(_)) => {
                            tokio::time::sleep(Duration::from_secs(1)).await;
                        }
                        Err(e) => return Err(format!("{device}: {e}")),
                    }
                }
            }
        });
        let mut problems: Vec<String> = futures_util::future::join_all(waits)
            .await
            .into_iter()
            .filter_map(Result::err)
            .collect();
        if problems.is_empty() {
            Ok(())
        } else {
            problems.sort();
            Err(EmuError::DeployIncomplete {
                lab: lab.name.clone(),
                reason: problems.join("; "),
            })
        }
    }
}

/// With `FAULTBENCH_TIMING` set, prints how long a step of one lab took (to stderr).
pub(crate) fn timing(lab: &str, step: &str, since: Instant) {
    if std::env::var_os("FAULTBENCH_TIMING").is_some() {
        eprintln!(
            "[faultbench timing] kathara {lab} {step}: {} ms",
            since.elapsed().as_millis()
        );
    }
}

/// A staged instance found under the work directory.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Instance {
    /// Instance name (`LAB_NAME`).
    pub name: String,
    /// The staged copy.
    pub dir: PathBuf,
    /// The lab directory it was staged from.
    pub source: Option<PathBuf>,
    /// Who owns it; `None` when the owner file is unreadable.
    pub owner: Option<stage::Owner>,
    /// Whether the owning process is alive (always true when detached).
    pub owner_alive: bool,
}

impl KatharaEmulator {
    /// The engine device commands go through for an instance whose `kathara.conf` is `conf`:
    /// the local Docker engine's API, unless the configuration asks for `kathara exec`, the
    /// manager is Kubernetes, or Kathará is told to use a remote engine (`remote_url`).
    async fn engine_for(&self, conf: &Value) -> Result<Option<Arc<DockerEngine>>, EmuError> {
        if self.config.device_commands == DeviceCommands::Kathara || !uses_local_engine(conf) {
            return Ok(None);
        }
        DockerEngine::shared(&local_socket())
            .await
            .map(Some)
            .map_err(|e| EmuError::Environment(e.to_string()))
    }

    /// What the lab needs from this kernel, checked before anything is deployed: Kathará's
    /// containers share the host's kernel, so a lab whose startups create VLAN, bond or dummy
    /// devices (or a VLAN-filtering bridge, or netem) fails inside its devices when the kernel
    /// lacks them. Only for a Docker engine on this host (a remote engine or cluster has
    /// another kernel).
    #[cfg(feature = "netns")]
    async fn check_kernel(&self, lab: &LabDir, conf: &Value) -> Result<(), EmuError> {
        if !uses_local_engine(conf) {
            return Ok(());
        }
        let caps = tokio::task::spawn_blocking(crate::netns::prepare::host_caps)
            .await
            .map_err(|e| EmuError::Environment(format!("probing the kernel failed: {e}")))?;
        crate::netns::needs::check_kernel(lab, &caps)
    }

    /// Without the netns feature there is no kernel probe: labs deploy unchecked.
    #[cfg(not(feature = "netns"))]
    #[allow(clippy::unused_async)]
    async fn check_kernel(&self, _lab: &LabDir, _conf: &Value) -> Result<(), EmuError> {
        Ok(())
    }

    /// Deploys and returns the concrete lab (for [`KatharaLab::detach`]).
    pub async fn deploy_lab(&self, request: &LabRequest) -> Result<KatharaLab, EmuError> {
        let lab_dir =
            LabDir::load(&request.dir).map_err(|e| EmuError::InvalidLab(e.to_string()))?;
        let name = match &request.name {
            Some(n) if stage::valid_instance_name(n) => n.clone(),
            Some(n) => {
                return Err(EmuError::InvalidLab(format!(
                    "instance name `{n}`: use letters, digits, `_` and `-` (at most 64, not starting with `-`)"
                )));
            }
            None => stage::fresh_instance_name(&lab_dir.name()),
        };
        let (conf, record) = self
            .config
            .instance_settings()
            .map_err(|e| EmuError::Environment(e.to_string()))?;
        // What the kernel lacks is named now, before Kathará starts anything.
        self.check_kernel(&lab_dir, &conf).await?;
        let engine = self.engine_for(&conf).await?;
        let work = self.config.work_dir();
        let dir = stage::stage(&request.dir, &work, &name, &conf).map_err(|e| {
            EmuError::Environment(format!("staging {name} under {}: {e}", work.display()))
        })?;
        if let Ok(json) = serde_json::to_string_pretty(&record) {
            let _ = std::fs::write(dir.join(SETTINGS_RECORD_FILE), json);
        }
        let devices = lab_dir
            .conf
            .device_names()
            .into_iter()
            .map(String::from)
            .collect();
        let mut lab = KatharaLab::new(
            name,
            devices,
            dir,
            self.cli.clone(),
            self.config.max_output_bytes,
            engine,
        );
        lab.settings = Some(record);
        lab.cleaner = Some(self.cleaner.clone());
        if let Err(e) = self.bring_up(&lab).await {
            // Leave nothing behind: partial deployments are cleaned before reporting.
            if let Err(clean) = lab.teardown_now().await {
                if matches!(e, EmuError::Environment(_)) {
                    // Kathará could not reach its engine, so nothing was deployed: only the
                    // staged copy is left to remove.
                    let _ = std::fs::remove_dir_all(&lab.dir);
                    *lab.torn_down.lock().await = true;
                    return Err(e);
                }
                return Err(EmuError::Other(format!(
                    "{e}; cleaning up also failed ({clean}); run the emulator's gc later"
                )));
            }
            return Err(e);
        }
        Ok(lab)
    }

    /// A handle on instance `name`, deployed by this or another process (e.g. `lab up`) with
    /// the same work directory. Dropping the handle leaves the lab running;
    /// [`Lab::teardown`] removes it.
    pub async fn attach(&self, name: &str) -> Result<KatharaLab, EmuError> {
        if !stage::valid_instance_name(name) {
            return Err(EmuError::InvalidLab(format!(
                "instance name `{name}`: use letters, digits, `_` and `-`"
            )));
        }
        let dir = self.config.work_dir().join(name);
        if !dir.join(stage::OWNER_FILE).is_file() {
            return Err(EmuError::NotRunning(format!(
                "{name}: no Kathará instance of that name under {} (see `faultbench lab ls --emulator kathara`)",
                self.config.work_dir().display()
            )));
        }
        let lab_dir = LabDir::load(&dir).map_err(|e| EmuError::InvalidLab(e.to_string()))?;
        let conf_text =
            faultbench_core::fsutil::read_regular_string_capped(&dir.join("kathara.conf"), 1 << 16)
                .map_err(|e| EmuError::Other(e.to_string()))?;
        let conf: Value = serde_json::from_str(&conf_text)
            .map_err(|e| EmuError::Other(format!("{}: {e}", dir.join("kathara.conf").display())))?;
        let engine = self.engine_for(&conf).await?;
        let devices = lab_dir
            .conf
            .device_names()
            .into_iter()
            .map(String::from)
            .collect();
        let mut lab = KatharaLab::new(
            name.to_string(),
            devices,
            dir,
            self.cli.clone(),
            self.config.max_output_bytes,
            engine,
        );
        lab.detached
            .store(true, std::sync::atomic::Ordering::SeqCst);
        lab.settings = faultbench_core::fsutil::read_regular_string_capped(
            &lab.dir.join(SETTINGS_RECORD_FILE),
            1 << 16,
        )
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
        Ok(lab)
    }

    /// The instances staged under the work directory, by name.
    pub fn instances(&self) -> Vec<Instance> {
        let Ok(entries) = std::fs::read_dir(self.config.work_dir()) else {
            return Vec::new();
        };
        let mut out: Vec<Instance> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| {
                let name = e.file_name().to_str()?.to_string();
                let dir = e.path();
                if !stage::valid_instance_name(&name) || !dir.join("lab.conf").is_file() {
                    return None;
                }
                let owner = stage::owner(&dir);
                let owner_alive = match owner {
                    Some(stage::Owner::Pid(p)) => stage::pid_alive(p),
                    Some(stage::Owner::Detached) => true,
                    None => false,
                };
                Some(Instance {
                    source: stage::source_dir(&dir),
                    name,
                    dir,
                    owner,
                    owner_alive,
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

/// Whether Kathará, with these settings, runs its devices on this host's Docker engine.
fn uses_local_engine(conf: &Value) -> bool {
    let manager = conf.get("manager_type").and_then(Value::as_str);
    let remote = conf
        .get("remote_url")
        .and_then(Value::as_str)
        .is_some_and(|u| !u.is_empty());
    manager.is_none_or(|m| m == "docker") && !remote
}

#[async_trait::async_trait]
impl Emulator for KatharaEmulator {
    fn name(&self) -> &str {
        "kathara"
    }

    /// Every Kathará collision domain is a Docker network: a bridge.
    fn link_model(&self) -> Option<faultbench_core::emulator::LinkModel> {
        Some(faultbench_core::emulator::LinkModel::Switch)
    }

    async fn deploy(&self, request: &LabRequest) -> Result<Arc<dyn Lab>, EmuError> {
        Ok(Arc::new(self.deploy_lab(request).await?))
    }

    /// `lclean` is the slow part of a Kathará run (a Python process, then the engine removes
    /// every container and network): a benchmark lets it run in the background.
    fn defer_teardowns(&self) -> bool {
        self.cleaner.enable();
        true
    }

    async fn flush_teardowns(&self) -> Vec<EmuError> {
        self.cleaner.flush().await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_a_docker_manager_on_this_host_uses_the_engine_api() {
        assert!(uses_local_engine(&json!({"manager_type": "docker"})));
        assert!(uses_local_engine(
            &json!({"manager_type": "docker", "remote_url": null})
        ));
        assert!(!uses_local_engine(
            &json!({"manager_type": "docker", "remote_url": "tcp://h:2376"})
        ));
        assert!(!uses_local_engine(&json!({"manager_type": "kubernetes"})));
    }
}
