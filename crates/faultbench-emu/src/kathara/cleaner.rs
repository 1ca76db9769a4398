//! Background teardown of Kathará labs ([`faultbench_core::Emulator::defer_teardowns`]).
//!
//! `kathara lclean` costs a Python process and the engine's work of removing every container
//! and network of the lab: seconds to tens of seconds on a loaded machine, against a fraction
//! of a second for a netns lab. A benchmark does not need to wait for it: once a run is over
//! its lab is out of use. With deferral on, [`KatharaLab::teardown`] marks the lab torn down
//! (no command reaches it again) and hands `lclean` to a task here; the driver awaits
//! [`Cleaner::flush`] before it exits.
//!
//! Nothing leaks on the way:
//! - at most [`IN_FLIGHT`] cleans run at once; a further teardown waits for a slot, so labs
//!   never pile up faster than the engine removes them;
//! - `lclean` runs in a process group of its own and survives this process
//!   ([`super::KatharaCli::run_surviving`]): Ctrl-C at a terminal or a crash does not stop a
//!   clean half-way;
//! - the staged copy (with its owner file) is removed only after `lclean` succeeded, so a clean
//!   that failed or never ran leaves the instance to `KatharaEmulator::gc`
//!   (`faultbench lab gc --emulator kathara`).
//!
//! [`KatharaLab::teardown`]: super::KatharaLab

use super::cli::KatharaCli;
use super::lab::KatharaLab;
use faultbench_core::emulator::EmuError;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Cleans running at once, per emulator.
pub const IN_FLIGHT: usize = 4;

/// The background cleans of one emulator (shared by the labs it deploys).
#[derive(Debug)]
pub(crate) struct Cleaner {
    on: AtomicBool,
    slots: Arc<tokio::sync::Semaphore>,
    tasks: std::sync::Mutex<tokio::task::JoinSet<Result<(), EmuError>>>,
    /// Errors of cleans reaped before `flush`.
    failed: std::sync::Mutex<Vec<EmuError>>,
}

impl Default for Cleaner {
    fn default() -> Self {
        Cleaner {
            on: AtomicBool::new(false),
            slots: Arc::new(tokio::sync::Semaphore::new(IN_FLIGHT)),
            tasks: std::sync::Mutex::new(tokio::task::JoinSet::new()),
            failed: std::sync::Mutex::default(),
        }
    }
}

impl Cleaner {
    /// Turns deferral on for every later teardown.
    pub(crate) fn enable(&self) {
        self.on.store(true, Ordering::SeqCst);
    }

    /// Whether teardowns are deferred.
    pub(crate) fn enabled(&self) -> bool {
        self.on.load(Ordering::SeqCst)
    }

    /// A slot for one more clean: waits while [`IN_FLIGHT`] run (the caller is held back
    /// rather than labs accumulating). Cancel-safe: nothing has changed before it returns.
    pub(crate) async fn slot(&self) -> Option<tokio::sync::OwnedSemaphorePermit> {
        // The semaphore is never closed; without a slot the clean would still run.
        self.slots.clone().acquire_owned().await.ok()
    }

    /// Starts cleaning the instance at `dir` in the background, holding `slot` until done.
    /// Synchronous, so a caller that marked the lab torn down cannot be cancelled before the
    /// clean is on its way.
    pub(crate) fn spawn(
        &self,
        slot: Option<tokio::sync::OwnedSemaphorePermit>,
        cli: KatharaCli,
        dir: PathBuf,
    ) {
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        // Finished cleans are reaped here so the set stays small; their errors wait for
        // `flush`.
        while let Some(done) = tasks.try_join_next() {
            if let Some(e) = join_error(done) {
                self.failed
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(e);
            }
        }
        tasks.spawn(async move {
            let r = KatharaLab::clean_surviving(&cli, &dir).await;
            drop(slot);
            r
        });
    }

    /// Waits for every background clean; returns the errors of those that failed.
    pub(crate) async fn flush(&self) -> Vec<EmuError> {
        let mut errors =
            std::mem::take(&mut *self.failed.lock().unwrap_or_else(|e| e.into_inner()));
        loop {
            // The set is taken out of the lock while it is awaited (a std mutex is not held
            // across an await); cleans deferred meanwhile go into the fresh set and are
            // picked up by the next round.
            let mut set = {
                let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
                std::mem::take(&mut *tasks)
            };
            if set.is_empty() {
                return errors;
            }
            while let Some(r) = set.join_next().await {
                errors.extend(join_error(r));
            }
        }
    }
}

/// The error of a finished clean, if it failed.
fn join_error(r: Result<Result<(), EmuError>, tokio::task::JoinError>) -> Option<EmuError> {
    match r {
        Ok(Ok(())) => None,
        Ok(Err(e)) => Some(e),
        Err(join) => Some(EmuError::Other(format!(
            "a background lclean ended abnormally ({join}); run `faultbench lab gc --emulator kathara`"
        ))),
    }
}
