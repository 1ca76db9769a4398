//! [`KatharaEmulator`]: deploy a lab directory with `kathara lstart` and hand back a
//! [`KatharaLab`].
//!
//! Deploying is: validate the lab (faultbench's reader), stage a private copy under a unique
//! `LAB_NAME` with a per-lab `kathara.conf` (manager, no terminals, no image prompts),
//! `lstart --noterminals`, wait until every device has finished its startup (Kathará touches
//! `/tmp/EOS` in the device when it has), check with `linfo` that every device is running, and
//! optionally wait for routing to settle. Any failure on the way cleans up (`lclean`, staged
//! copy removed) before the error is returned.

use super::cli::KatharaCli;
use super::config::KatharaConfig;
use super::lab::KatharaLab;
use super::stage;
use faultbench_core::emulator::{EmuError, Emulator, Lab, LabRequest};
use faultbench_core::lab::LabDir;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The Kathará backend of [`Emulator`].
#[derive(Debug, Clone)]
pub struct KatharaEmulator {
    config: KatharaConfig,
    cli: KatharaCli,
}

/// How many devices are polled for readiness at once (each poll is a Python process).
const READY_PARALLELISM: usize = 4;

impl KatharaEmulator {
    /// An emulator using `config.cli`, or Kathará found by [`KatharaCli::discover`].
    pub fn new(config: KatharaConfig) -> Result<KatharaEmulator, EmuError> {
        let cli = match &config.cli {
            Some(argv) => KatharaCli::from_argv(argv)
                .ok_or_else(|| EmuError::Environment("kathara config: empty `cli`".into()))?,
            None => KatharaCli::discover().map_err(|e| EmuError::Environment(e.to_string()))?,
        };
        Ok(KatharaEmulator { config, cli })
    }

    /// Reads a TOML configuration file (see [`KatharaConfig`]).
    pub fn from_config_file(path: &Path) -> Result<KatharaEmulator, EmuError> {
        let text = faultbench_core::fsutil::read_regular_string_capped(path, 1 << 20)
            .map_err(|e| EmuError::Environment(e.to_string()))?;
        let cfg = KatharaConfig::from_toml(&text)
            .map_err(|e| EmuError::Environment(format!("{}: {e}", path.display())))?;
        KatharaEmulator::new(cfg)
    }

    /// The configuration.
    pub fn config(&self) -> &KatharaConfig {
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
            if stage::owner_pid(&dir).is_some_and(stage::pid_alive) {
                continue;
            }
            KatharaLab::clean(&self.cli, &dir).await?;
            cleaned.push(e.file_name().to_string_lossy().into_owned());
        }
        Ok(cleaned)
    }

    async fn bring_up(&self, lab: &KatharaLab) -> Result<(), EmuError> {
        let deadline = Instant::now() + self.config.ready_timeout();
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
        self.wait_startups(lab, deadline).await?;
        let status = lab.status().await?;
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

    /// Waits, device by device, until Kathará's end-of-startup marker exists. A device whose
    /// container or pod is not up yet is asked again after a second.
    async fn wait_startups(&self, lab: &KatharaLab, deadline: Instant) -> Result<(), EmuError> {
        let sem = Arc::new(tokio::sync::Semaphore::new(READY_PARALLELISM));
        let mut waits = tokio::task::JoinSet::new();
        for device in lab.devices.clone() {
            let (sem, cli, dir, name) = (
                sem.clone(),
                lab.cli.clone(),
                lab.dir.clone(),
                lab.name.clone(),
            );
            waits.spawn(async move {
                let _permit = sem.acquire_owned().await;
                let probe = KatharaLab {
                    name,
                    devices: vec![device.clone()],
                    dir,
                    cli,
                    cap: 1 << 16,
                    torn_down: tokio::sync::Mutex::new(true),
                };
                loop {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(format!("{device}: startup not finished in time (see /var/log/startup.log in the device)"));
                    }
                    let polls = (left.as_millis() / 200).max(1);
                    let script = format!(
                        "i=0; while [ ! -e /tmp/EOS ]; do i=$((i+1)); [ $i -ge {polls} ] && exit 3; sleep 0.2; done"
                    );
                    let argv = ["sh".to_string(), "-c".into(), script];
                    match probe.exec_argv(&device, &argv, left).await {
                        Ok(o) if o.success() => return Ok(()),
                        Ok(o) if o.exit_code == Some(3) || o.timed_out => {
                            return Err(format!("{device}: startup not finished in time (see /var/log/startup.log in the device)"));
                        }
                        Ok(o) => return Err(format!("{device}: readiness probe failed: {}{}", o.stdout, o.stderr)),
                        Err(EmuError::NotRunning(_)) => tokio::time::sleep(Duration::from_secs(1)).await,
                        Err(e) => return Err(format!("{device}: {e}")),
                    }
                }
            });
        }
        let mut problems = Vec::new();
        while let Some(r) = waits.join_next().await {
            match r {
                Ok(Ok(())) => {}
                Ok(Err(p)) => problems.push(p),
                Err(e) => problems.push(format!("readiness task: {e}")),
            }
        }
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

#[async_trait::async_trait]
impl Emulator for KatharaEmulator {
    fn kind(&self) -> &str {
        "kathara"
    }

    /// Every Kathará collision domain is a Docker network: a bridge.
    fn link_model(&self) -> Option<faultbench_core::emulator::LinkModel> {
        Some(faultbench_core::emulator::LinkModel::Switch)
    }

    async fn deploy(&self, request: &LabRequest) -> Result<Arc<dyn Lab>, EmuError> {
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
        let work = self.config.work_dir();
        let dir =
            stage::stage(&request.dir, &work, &name, &self.config.kathara_conf()).map_err(|e| {
                EmuError::Environment(format!("staging {name} under {}: {e}", work.display()))
            })?;
        let lab = KatharaLab {
            name,
            devices: lab_dir
                .conf
                .device_names()
                .into_iter()
                .map(String::from)
                .collect(),
            dir,
            cli: self.cli.clone(),
            cap: self.config.max_output_bytes,
            torn_down: tokio::sync::Mutex::new(false),
        };
        if let Err(e) = self.bring_up(&lab).await {
            // Leave nothing behind: partial deployments are cleaned before reporting.
            if let Err(clean) = lab.teardown().await {
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
        Ok(Arc::new(lab))
    }
}
