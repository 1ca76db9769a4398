//! A lab running on Kathará: device commands through the Docker Engine API ([`super::engine`])
//! on a local Docker engine, else through `kathara exec`; `linfo` and `lclean` through Kathará.
//!
//! Every Kathará call names the staged instance directory with `-d`, so Kathará resolves the lab
//! by the instance's own `LAB_NAME` hash; the engine path finds the same containers by that
//! hash's label. A command runs inside its device under `timeout -s KILL`, so a command that
//! overruns dies in the device and not only on the client side (killing the `kathara exec`
//! client alone would leave it running in the container).

use super::cleaner::Cleaner;
use super::cli::{CliOutput, KatharaCli, device_command, strip_log_preamble};
use super::engine::{DockerEngine, EngineError};
use super::linfo::{DeviceStatus, parse_linfo};
use super::settings::SettingsRecord;
use faultbench_core::emulator::{Command, EmuError, ExecOutput, Lab};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Extra time the host allows a `kathara exec` client beyond the command's own timeout
/// (Python start-up, the Docker or Kubernetes round trip).
const CLIENT_GRACE: Duration = Duration::from_secs(30);

/// A lab deployed by [`super::KatharaEmulator`].
#[derive(Debug)]
pub struct KatharaLab {
    pub(crate) name: String,
    pub(crate) devices: Vec<String>,
    pub(crate) dir: PathBuf,
    pub(crate) cli: KatharaCli,
    pub(crate) cap: usize,
    pub(crate) torn_down: tokio::sync::Mutex<bool>,
    /// The Docker engine the devices run on, when device commands go through its API.
    pub(crate) engine: Option<Arc<DockerEngine>>,
    /// Device → container id, filled from the engine on first use.
    pub(crate) containers: tokio::sync::Mutex<HashMap<String, String>>,
    /// Left running for other processes (`lab up`): dropping it does not clean it.
    pub(crate) detached: AtomicBool,
    /// Where the instance's Kathará settings came from ([`Lab::deploy_notes`]).
    pub(crate) settings: Option<SettingsRecord>,
    /// The emulator's background cleans, when it deployed this lab ([`Lab::teardown`] hands
    /// `lclean` to it once deferral is on).
    pub(crate) cleaner: Option<Arc<Cleaner>>,
}

impl KatharaLab {
    /// A handle on an instance staged at `dir` (deployed or about to be).
    pub(crate) fn new(
        name: String,
        devices: Vec<String>,
        dir: PathBuf,
        cli: KatharaCli,
        cap: usize,
        engine: Option<Arc<DockerEngine>>,
    ) -> KatharaLab {
        KatharaLab {
            name,
            devices,
            dir,
            cli,
            cap,
            torn_down: tokio::sync::Mutex::new(false),
            engine,
            containers: tokio::sync::Mutex::new(HashMap::new()),
            detached: AtomicBool::new(false),
            settings: None,
            cleaner: None,
        }
    }
}

/// An engine failure in the emulator's vocabulary.
pub(crate) fn engine_error(lab: &str, device: &str, e: EngineError) -> EmuError {
    match e {
        EngineError::NotRunning(why) => EmuError::NotRunning(format!("{lab}/{device}: {why}")),
        EngineError::NoSocket(_) => EmuError::Environment(e.to_string()),
        e => EmuError::Other(format!("{lab}/{device}: {e}")),
    }
}

/// Turns a Kathará failure during `exec` into the emulator's vocabulary.
fn exec_failure(lab: &str, device: &str, out: &CliOutput) -> Option<Result<ExecOutput, EmuError>> {
    let f = out.failure()?;
    if !(f.exception.ends_with("Error") || f.exception.ends_with("Exception")) {
        return None;
    }
    Some(match f.exception.as_str() {
        // The binary does not exist in the device: what a shell would call exit 127.
        "MachineBinaryError" => Ok(ExecOutput {
            stderr: f.message,
            exit_code: Some(127),
            duration_ms: out.elapsed.as_millis() as u64,
            ..Default::default()
        }),
        "MachineNotRunningError" | "MachineNotReadyError" | "MachineNotFoundError" => Err(
            EmuError::NotRunning(format!("{lab}/{device}: {}", f.message)),
        ),
        "DockerDaemonConnectionError" | "ConnectionError" => Err(EmuError::Environment(format!(
            "{}: {}",
            f.exception, f.message
        ))),
        _ => Err(EmuError::Other(format!(
            "kathara exec on {lab}/{device}: {} ({})",
            f.message, f.exception
        ))),
    })
}

impl KatharaLab {
    /// `lclean` now, whatever the emulator defers (a failed deploy reports the clean's result).
    pub(crate) async fn teardown_now(&self) -> Result<(), EmuError> {
        let mut done = self.torn_down.lock().await;
        if *done {
            return Ok(());
        }
        KatharaLab::clean(&self.cli, &self.dir).await?;
        *done = true;
        Ok(())
    }

    /// The staged instance directory (`-d` of every Kathará call).
    pub fn staged_dir(&self) -> &Path {
        &self.dir
    }

    /// The devices of this instance and their state: from the engine's container list (the
    /// labels Kathará gave them) when device commands go through the engine — no Python
    /// process — else from `kathara linfo`.
    pub async fn status(&self) -> Result<Vec<DeviceStatus>, EmuError> {
        if let Some(engine) = &self.engine {
            let list = engine
                .lab_containers(&self.hash())
                .await
                .map_err(|e| engine_error(&self.name, "*", e))?;
            let mut known = self.containers.lock().await;
            return Ok(list
                .into_iter()
                .map(|c| {
                    known.insert(c.device.clone(), c.id);
                    DeviceStatus {
                        name: c.device,
                        status: c.state,
                        image: None,
                    }
                })
                .collect());
        }
        self.linfo().await
    }

    /// `kathara linfo`: the devices Kathará reports for this instance and their state.
    pub async fn linfo(&self) -> Result<Vec<DeviceStatus>, EmuError> {
        let args = vec![
            "linfo".to_string(),
            "-d".into(),
            self.dir.display().to_string(),
        ];
        let out = self
            .cli
            .run(&args, Duration::from_secs(120), 1 << 20)
            .await
            .map_err(|e| EmuError::Environment(format!("{}: {e}", self.cli.display())))?;
        if let Some(f) = out.failure() {
            return Err(EmuError::Other(format!(
                "kathara linfo: {} ({})",
                f.message, f.exception
            )));
        }
        parse_linfo(&out.stdout).map_err(|e| EmuError::Other(e.to_string()))
    }

    /// Kathará's hash of this instance (the `lab_hash` label of its containers).
    pub fn hash(&self) -> String {
        super::engine::lab_hash(&self.name)
    }

    /// The engine the device commands go through, if they do not go through `kathara exec`.
    pub fn engine(&self) -> Option<&Arc<DockerEngine>> {
        self.engine.as_ref()
    }

    /// Leaves the lab running when this handle is dropped, and marks the staged copy as owned
    /// by no process (so `gc` leaves it alone): `lab down NAME` removes it.
    pub fn detach(&self) -> Result<(), EmuError> {
        super::stage::mark_detached(&self.dir)
            .map_err(|e| EmuError::Other(format!("{}: {e}", self.dir.display())))?;
        self.detached.store(true, Ordering::SeqCst);
        Ok(())
    }

    /// The container of `device`, listing the lab's containers when it is not known yet.
    async fn container(&self, engine: &DockerEngine, device: &str) -> Result<String, EmuError> {
        let mut known = self.containers.lock().await;
        if let Some(id) = known.get(device) {
            return Ok(id.clone());
        }
        let list = engine
            .lab_containers(&self.hash())
            .await
            .map_err(|e| engine_error(&self.name, device, e))?;
        for c in list {
            known.insert(c.device, c.id);
        }
        known.get(device).cloned().ok_or_else(|| {
            EmuError::NotRunning(format!(
                "{}/{device}: no container labelled app=kathara, lab_hash={}, name={device}",
                self.name,
                self.hash()
            ))
        })
    }

    /// Runs `argv` in `device`, bounded in the device and on the host: through the engine's
    /// API when there is one, else through `kathara exec`.
    pub(crate) async fn exec_argv(
        &self,
        device: &str,
        argv: &[String],
        timeout: Duration,
    ) -> Result<ExecOutput, EmuError> {
        if let Some(engine) = &self.engine {
            let id = self.container(engine, device).await?;
            return match engine.exec(&id, argv, timeout, self.cap).await {
                Err(EngineError::NotRunning(why)) => {
                    // A container re-created under the same labels has a new id.
                    self.containers.lock().await.remove(device);
                    Err(EmuError::NotRunning(format!(
                        "{}/{device}: {why}",
                        self.name
                    )))
                }
                r => r.map_err(|e| engine_error(&self.name, device, e)),
            };
        }
        self.exec_cli(device, argv, timeout).await
    }

    /// Runs `argv` in `device` through `kathara exec`.
    async fn exec_cli(
        &self,
        device: &str,
        argv: &[String],
        timeout: Duration,
    ) -> Result<ExecOutput, EmuError> {
        let secs = format!("{:.3}", timeout.as_secs_f64().max(0.001));
        let mut bounded = vec!["timeout".to_string(), "-s".into(), "KILL".into(), secs];
        bounded.extend(argv.iter().cloned());
        let mut args = vec![
            "exec".to_string(),
            "-d".into(),
            self.dir.display().to_string(),
            device.to_string(),
            "--".into(),
        ];
        args.extend(device_command(&bounded));
        let out = self
            .cli
            .run(&args, timeout + CLIENT_GRACE, self.cap)
            .await
            .map_err(|e| EmuError::Environment(format!("{}: {e}", self.cli.display())))?;
        if let Some(r) = exec_failure(&self.name, device, &out) {
            return r;
        }
        // `timeout -s KILL` ends the command with 137 when it fires (124 in some builds).
        let killed_in_device = matches!(out.code, Some(124 | 137))
            && out.elapsed + Duration::from_millis(50) >= timeout;
        Ok(ExecOutput {
            stdout: strip_log_preamble(&out.stdout).to_string(),
            stderr: out.stderr,
            exit_code: if killed_in_device || out.timed_out {
                None
            } else {
                out.code
            },
            timed_out: killed_in_device || out.timed_out,
            truncated: out.truncated,
            duration_ms: out.elapsed.as_millis() as u64,
        })
    }

    /// `kathara lclean -d <instance>`, then the staged copy is removed.
    pub(crate) async fn clean(cli: &KatharaCli, dir: &Path) -> Result<(), EmuError> {
        KatharaLab::clean_as(cli, dir, false).await
    }

    /// As [`KatharaLab::clean`], with an `lclean` that outlives this process (see
    /// [`KatharaCli::run_surviving`]): for cleans nobody waits on.
    pub(crate) async fn clean_surviving(cli: &KatharaCli, dir: &Path) -> Result<(), EmuError> {
        KatharaLab::clean_as(cli, dir, true).await
    }

    async fn clean_as(cli: &KatharaCli, dir: &Path, survive: bool) -> Result<(), EmuError> {
        let args = vec!["lclean".to_string(), "-d".into(), dir.display().to_string()];
        let bound = Duration::from_secs(600);
        let started = std::time::Instant::now();
        let out = if survive {
            // In the staged copy, so it goes with it (Kathará ignores the file).
            let log = dir.join(".faultbench-lclean.log");
            cli.run_surviving(&args, bound, 1 << 20, &log).await
        } else {
            cli.run(&args, bound, 1 << 20).await
        };
        let out = out.map_err(|e| EmuError::Environment(format!("{}: {e}", cli.display())))?;
        if !out.ok() {
            let why = match out.failure() {
                Some(f) => format!("{} ({})", f.message, f.exception),
                None => format!("exit {:?}: {}{}", out.code, out.stdout, out.stderr),
            };
            return Err(EmuError::Other(format!(
                "kathara lclean {}: {why}",
                dir.display()
            )));
        }
        let name = dir.file_name().unwrap_or_default().to_string_lossy();
        super::emulator::timing(&name, "lclean", started);
        std::fs::remove_dir_all(dir)
            .or_else(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    Ok(())
                } else {
                    Err(e)
                }
            })
            .map_err(|e| EmuError::Other(format!("removing {}: {e}", dir.display())))
    }
}

#[async_trait::async_trait]
impl Lab for KatharaLab {
    fn name(&self) -> &str {
        &self.name
    }

    fn devices(&self) -> Vec<String> {
        self.devices.clone()
    }

    /// The staged copy of the lab directory (its files are the user's, unchanged but for
    /// `LAB_NAME`).
    fn lab_dir(&self) -> Option<PathBuf> {
        Some(self.dir.clone())
    }

    /// The Kathará settings the harness wrote over the user's (or "no user settings file").
    fn deploy_notes(&self) -> Vec<String> {
        self.settings.iter().map(SettingsRecord::summary).collect()
    }

    async fn exec(
        &self,
        device: &str,
        command: &Command,
        timeout: Duration,
    ) -> Result<ExecOutput, EmuError> {
        if *self.torn_down.lock().await {
            return Err(EmuError::NotRunning(self.name.clone()));
        }
        // Only lab.conf devices: a name is never passed to Kathará unchecked.
        if !self.devices.iter().any(|d| d == device) {
            return Err(EmuError::UnknownDevice {
                lab: self.name.clone(),
                device: device.to_string(),
            });
        }
        let argv = command.to_argv();
        if argv.is_empty() {
            return Err(EmuError::Other("empty command".into()));
        }
        self.exec_argv(device, &argv, timeout).await
    }

    /// `lclean` and the staged copy removed; when the emulator defers teardowns, the lab is
    /// marked torn down at once and the clean runs in the background (the `kathara::cleaner` module).
    async fn teardown(&self) -> Result<(), EmuError> {
        match &self.cleaner {
            Some(c) if c.enabled() => {
                // Every await comes before the lab is marked torn down: a caller cancelled
                // here (Ctrl-C) leaves the lab to the bench's final teardown, never unclean.
                let slot = c.slot().await;
                let mut done = self.torn_down.lock().await;
                if !*done {
                    *done = true;
                    c.spawn(slot, self.cli.clone(), self.dir.clone());
                }
                Ok(())
            }
            _ => self.teardown_now().await,
        }
    }
}

impl Drop for KatharaLab {
    /// A lab dropped without [`Lab::teardown`] is cleaned by a detached `lclean` (best effort:
    /// `KatharaEmulator::gc` catches what a dying process could not finish).
    fn drop(&mut self) {
        if self.detached.load(Ordering::SeqCst)
            || self.torn_down.try_lock().map(|d| *d).unwrap_or(true)
        {
            return;
        }
        let (cli, dir) = (self.cli.clone(), self.dir.clone());
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build();
            if let Ok(rt) = rt {
                let _ = rt.block_on(KatharaLab::clean_surviving(&cli, &dir));
            }
        });
    }
}
