//! A running netns lab: exec, teardown, detach, attach.

use super::device_state::FilterCache;
use super::exec::{self, DEFAULT_OUTPUT_CAP};
use super::health::StartupProblem;
use super::ready::Readiness;
use super::reaper::Reaper;
use super::state::{LabState, Phase, ProcId};
use faultbench_core::emulator::{Command, EmuError, ExecOutput, Lab};
use faultbench_core::snapshot::DeviceState;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A lab instance of the netns backend.
///
/// Obtained from [`NetnsEmulator::deploy_lab`](super::NetnsEmulator::deploy_lab) (the lab is
/// *owned*: dropping the last handle tears it down, and so does the owner process dying, via
/// [`gc`](super::gc)) or from [`attach`](super::attach) (not owned: dropping the handle leaves the
/// lab running). [`NetnsLab::detach`] turns an owned lab into a persistent one.
#[derive(Debug)]
pub struct NetnsLab {
    pub(crate) state: Mutex<LabState>,
    pub(crate) owned: AtomicBool,
    pub(crate) down: AtomicBool,
    pub(crate) output_cap: usize,
    pub(crate) readiness: Readiness,
    pub(crate) warnings: Vec<String>,
    pub(crate) startup_problems: Vec<StartupProblem>,
    /// The emulator's background removals, when it defers teardowns ([`super::reaper`]).
    pub(crate) reaper: Option<Arc<Reaper>>,
    /// The packet-filter rules last read in each device, by nftables generation.
    pub(crate) filter_cache: FilterCache,
    name: String,
}

impl NetnsLab {
    pub(crate) fn new(
        state: LabState,
        owned: bool,
        readiness: Readiness,
        warnings: Vec<String>,
    ) -> Self {
        NetnsLab {
            name: state.name.clone(),
            state: Mutex::new(state),
            owned: AtomicBool::new(owned),
            down: AtomicBool::new(false),
            output_cap: DEFAULT_OUTPUT_CAP,
            readiness,
            warnings,
            startup_problems: Vec::new(),
            reaper: None,
            filter_cache: FilterCache::default(),
        }
    }

    fn snapshot(&self) -> LabState {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// How many device reads of its snapshots reused the packet-filter rules read before,
    /// the device's nftables generation being unchanged (for tests and measurements).
    #[doc(hidden)]
    pub fn filter_rules_reused(&self) -> u64 {
        self.filter_cache.hits()
    }

    /// The lab directory it was deployed from.
    pub fn dir(&self) -> PathBuf {
        self.snapshot().dir
    }

    /// How the readiness wait ended (empty for attached labs).
    pub fn readiness(&self) -> &Readiness {
        &self.readiness
    }

    /// How the running lab deviates from its directory's files (empty when deployed as written).
    pub fn deviations(&self) -> Vec<String> {
        self.snapshot().deviations
    }

    /// Records that the lab was deployed from a modified copy of `source` (e.g. with fast
    /// timers): the state then names `source` as the lab's directory, where its baseline and
    /// files are, and adds `deviations` to those of the deploy (such as the link model).
    pub fn record_deviations(
        &self,
        source: &std::path::Path,
        deviations: Vec<String>,
    ) -> Result<(), EmuError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.dir = std::fs::canonicalize(source).unwrap_or_else(|_| source.to_path_buf());
        st.deviations.extend(deviations);
        st.save()
            .map_err(|e| EmuError::Other(format!("cannot save lab state: {e}")))
    }

    /// Things the deploy could not do but did not fail on (e.g. missing kernel emulations).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// What the devices' files asked for that their startups left undone: failed startup
    /// commands, addresses not applied, enabled daemons not running (empty for attached labs).
    pub fn startup_problems(&self) -> &[StartupProblem] {
        &self.startup_problems
    }

    /// Sets the output cap per stream for [`Lab::exec`] (default 1 MiB).
    pub fn set_output_cap(&mut self, bytes: usize) {
        self.output_cap = bytes;
    }

    /// Host PID of a device's PID 1 (for debugging: `nsenter -t PID -a`).
    pub fn device_pid(&self, device: &str) -> Option<i32> {
        self.snapshot()
            .devices
            .iter()
            .find(|d| d.name == device)
            .and_then(|d| d.init)
            .map(|p| p.pid)
    }

    /// Keeps the lab running after this process exits (until `faultbench lab down` or
    /// [`Lab::teardown`]).
    pub fn detach(&self) -> Result<(), EmuError> {
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.owner = None;
        st.save()
            .map_err(|e| EmuError::Other(format!("cannot save lab state: {e}")))?;
        self.owned.store(false, Ordering::SeqCst);
        Ok(())
    }

    pub(super) fn device(&self, device: &str) -> Result<(ProcId, Vec<(String, String)>), EmuError> {
        if self.down.load(Ordering::SeqCst) {
            return Err(EmuError::NotRunning(self.name.clone()));
        }
        let st = self.snapshot();
        let node = st
            .devices
            .iter()
            .find(|d| d.name == device)
            .ok_or_else(|| EmuError::UnknownDevice {
                lab: self.name.clone(),
                device: device.to_string(),
            })?;
        let init = node
            .init
            .filter(ProcId::alive)
            .ok_or_else(|| EmuError::NotRunning(format!("{}/{device}", self.name)))?;
        Ok((init, node.env.clone()))
    }

    /// Runs a command in a device with the terminal's stdin/stdout/stderr (for `faultbench lab
    /// exec`); returns its exit status. No output cap.
    pub async fn exec_inherit(
        &self,
        device: &str,
        argv: &[String],
        timeout: Option<Duration>,
    ) -> Result<std::process::ExitStatus, EmuError> {
        let (init, env) = self.device(device)?;
        if argv.is_empty() {
            return Err(EmuError::Other("empty command".into()));
        }
        let mut cmd = exec::interactive_command(init, argv, &env)
            .map_err(|_| EmuError::NotRunning(format!("{}/{device}", self.name)))?;
        cmd.kill_on_drop(true);
        if timeout.is_some() {
            // A group of its own, so that the timeout reaches the command's children too (the
            // command then cannot read the terminal; without a timeout it can).
            cmd.process_group(0);
        }
        let mut child = cmd
            .spawn()
            .map_err(|e| EmuError::Other(format!("cannot run `{}` in {device}: {e}", argv[0])))?;
        let pgid = child.id().map(|p| p as i32);
        let status = match timeout {
            Some(t) => match tokio::time::timeout(t, child.wait()).await {
                Ok(s) => s,
                Err(_) => {
                    if let Some(g) = pgid {
                        // SAFETY: kill(2) on the process group created above.
                        unsafe { libc::kill(-g, libc::SIGKILL) };
                    }
                    child.wait().await
                }
            },
            None => child.wait().await,
        };
        status.map_err(|e| EmuError::Other(e.to_string()))
    }

    /// Stops everything synchronously (also used from `Drop` and signal handlers).
    pub fn teardown_blocking(&self) -> Result<(), EmuError> {
        if let Some(st) = self.mark_down() {
            destroy(&st);
        }
        Ok(())
    }

    /// Marks the lab as being torn down (once: `None` when it already was) and returns what
    /// [`destroy`] needs.
    fn mark_down(&self) -> Option<LabState> {
        if self.down.swap(true, Ordering::SeqCst) {
            return None;
        }
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        st.phase = Phase::TearingDown;
        let _ = st.save();
        Some(st.clone())
    }
}

/// Kills every process of a lab, waits for them to go, and removes its folder. Idempotent.
pub(crate) fn destroy(st: &LabState) {
    kill_all(st.processes());
    exec::ledger::forget(st.inits());
    let _ = std::fs::remove_dir_all(LabState::folder(&st.name));
}

/// SIGKILLs those of the given inits that are still alive (each takes its whole PID namespace
/// with it); returns them.
pub(crate) fn signal_all(inits: impl Iterator<Item = ProcId>) -> Vec<ProcId> {
    let live: Vec<ProcId> = inits.filter(ProcId::alive).collect();
    for p in &live {
        // SAFETY: kill(2) on a process whose identity (PID + start time) we just checked.
        unsafe { libc::kill(p.pid, libc::SIGKILL) };
    }
    live
}

/// SIGKILLs the given inits (each takes its whole PID namespace with it) and waits, bounded,
/// until they are gone. Every one that is our child is reaped — also an init that died before
/// teardown (an agent may kill a device's PID 1) — so no zombie outlives its lab.
pub(crate) fn kill_all(inits: impl Iterator<Item = ProcId>) {
    let all: Vec<ProcId> = inits.collect();
    let mut live = signal_all(all.iter().copied());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !live.is_empty() && Instant::now() < deadline {
        // A process turns into a zombie at any moment: test first, then reap what has ended.
        live.retain(ProcId::alive);
        if !live.is_empty() {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    for p in &all {
        p.reap_if_ended();
    }
}

impl Drop for NetnsLab {
    fn drop(&mut self) {
        if self.owned.load(Ordering::SeqCst) {
            let _ = self.teardown_blocking();
        }
    }
}

#[async_trait::async_trait]
impl Lab for NetnsLab {
    fn name(&self) -> &str {
        &self.name
    }

    fn devices(&self) -> Vec<String> {
        self.snapshot()
            .devices
            .into_iter()
            .map(|d| d.name)
            .collect()
    }

    fn lab_dir(&self) -> Option<PathBuf> {
        Some(self.dir())
    }

    async fn exec(
        &self,
        device: &str,
        command: &Command,
        timeout: Duration,
    ) -> Result<ExecOutput, EmuError> {
        let (init, env) = self.device(device)?;
        let argv = command.to_argv();
        if argv.is_empty() {
            return Err(EmuError::Other("empty command".into()));
        }
        exec::run(init, &argv, &env, timeout, self.output_cap)
            .await
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => {
                    EmuError::NotRunning(format!("{}/{device}", self.name))
                }
                _ => EmuError::Other(format!("cannot run a command in {device}: {e}")),
            })
    }

    async fn device_state(&self, device: &str, timeout: Duration) -> DeviceState {
        super::device_state::read(self, device, timeout).await
    }

    fn cpu_used(&self) -> Option<Duration> {
        let st = self.snapshot();
        // The lab's processes, and the commands the harness ran in its devices (startups,
        // checks, probes), which ended outside the lab's view.
        let own = super::renice::cpu_of_namespaces(st.inits()).ok()?;
        Some(own + exec::ledger::sum(st.inits()))
    }

    fn renice(&self, nice: i32) -> Result<usize, EmuError> {
        let st = self.snapshot();
        super::renice::renice_namespaces(st.inits(), nice)
            .map_err(|e| EmuError::Other(format!("cannot renice lab {}: {e}", self.name)))
    }

    async fn teardown(&self) -> Result<(), EmuError> {
        // Shutdown files run first, as `kathara lclean` does.
        if !self.down.load(Ordering::SeqCst) {
            run_shutdowns(self).await;
        }
        let Some(st) = self.mark_down() else {
            return Ok(());
        };
        // A benchmark's runs do not wait for the kernel to end the lab's processes: signalled
        // here, removed in the background (see `super::reaper`).
        if self.reaper.as_ref().is_some_and(|r| r.take(&st)) {
            return Ok(());
        }
        // Killing the devices and waiting until they are gone blocks, for as long as the
        // kernel takes to end their processes: on a runtime worker that would stall every other
        // task on it (with `--jobs 2` on two cores, the other run's agent and snapshots).
        let handle = tokio::runtime::Handle::try_current().ok();
        match handle {
            Some(h) => {
                let st2 = st.clone();
                if h.spawn_blocking(move || destroy(&st2)).await.is_err() {
                    // The blocking pool is shutting down with the runtime: destroy here.
                    destroy(&st);
                }
            }
            None => destroy(&st),
        }
        Ok(())
    }
}

/// Runs `<device>.shutdown` and `shared.shutdown` where present (bounded).
async fn run_shutdowns(lab: &NetnsLab) {
    let st = lab.snapshot();
    let runs = st.devices.iter().filter_map(|d| {
        let dir = LabState::folder(&st.name).join("hostlab").join(&d.name);
        let has = dir.join(format!("{}.shutdown", d.name)).is_file()
            || dir.join("shared.shutdown").is_file();
        has.then(|| {
            let script = format!(
                "[ -f /hostlab/{n}.shutdown ] && {sh} /hostlab/{n}.shutdown; [ -f /hostlab/shared.shutdown ] && {sh} /hostlab/shared.shutdown; true",
                n = d.name,
                sh = d.shell
            );
            let cmd = Command::shell(script);
            let name = d.name.clone();
            async move {
                let _ = lab.exec(&name, &cmd, Duration::from_secs(10)).await;
            }
        })
    });
    futures_util::future::join_all(runs).await;
}
