//! Background removal of netns labs ([`faultbench_core::Emulator::defer_teardowns`]).
//!
//! Tearing a netns lab down is two steps of very different cost to a run: sending `SIGKILL`
//! to each device's PID 1 (microseconds; from then on nothing of the lab acts), and waiting
//! until the kernel has ended every process of every device's PID namespace, unmounted its
//! mount namespace and let its network namespace go, then removing the instance folder. The
//! second step is the kernel's work, not the harness's: 0.26 s for Kath1's 20 devices on a
//! quiet machine, over 2 s while other labs come up beside it. A benchmark does not need a
//! run to wait for it.
//!
//! With deferral on (the benchmark driver turns it on), [`NetnsLab::teardown`] runs the
//! shutdown files, marks the lab torn down, kills its devices and hands the rest to a blocking
//! task here: deleting the lab's bridges one at a time ([`super::unbridge`]: the kernel's batch
//! would stall every other lab's commands for seconds), killing the switch namespaces' holders,
//! the wait, the reaping and the folder's removal; the driver awaits [`Reaper::flush`] before it
//! exits. Nothing that acts outlives `teardown`: every device is signalled before it returns, so
//! a crash afterwards leaves processes already dying, the switches' idle holders and a folder
//! that [`gc`](super::gc) removes (its state file says the lab was being torn down and its
//! owner is gone). Without deferral (the default, and every test that checks a lab is gone once
//! `teardown` returned), `teardown` does both steps before it returns.
//!
//! [`NetnsLab::teardown`]: super::NetnsLab

use super::lab::{destroy, signal_all};
use super::state::LabState;
use super::unbridge::{Held, delete_one_by_one};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::task::JoinHandle;

/// The background removals of one emulator (shared by the labs it deploys and its clones).
#[derive(Debug, Default)]
pub(crate) struct Reaper {
    on: AtomicBool,
    tasks: Mutex<Vec<JoinHandle<()>>>,
}

impl Reaper {
    /// Turns deferral on for every later teardown.
    pub(crate) fn enable(&self) {
        self.on.store(true, Ordering::SeqCst);
    }

    /// Signals every process of `st` now and removes the lab in the background. Returns false
    /// (having done nothing) when deferral is off or no runtime is there to run the task: the
    /// caller then removes the lab itself.
    pub(crate) fn take(&self, st: &LabState) -> bool {
        if !self.on.load(Ordering::SeqCst) {
            return false;
        }
        let Ok(handle) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        // The devices (and the DNS holder) stop now; their network namespaces are kept until
        // their bridges are deleted one at a time, and so are the switches' (see
        // `super::unbridge`): the kernel's batch would hold the host's RTNL lock for all of
        // them at once, stalling every other lab's commands.
        let devices = || st.devices.iter().filter_map(|d| d.init);
        let held = Held::open(devices());
        signal_all(devices().chain(st.dns));
        let switches: Vec<_> = st.switches.iter().filter_map(|s| s.init).collect();
        let st = st.clone();
        let mut tasks = self.tasks.lock().unwrap_or_else(|e| e.into_inner());
        // Finished removals are dropped here so the list stays as short as the labs in flight.
        tasks.retain(|t| !t.is_finished());
        tasks.push(handle.spawn_blocking(move || {
            delete_one_by_one(held, switches);
            destroy(&st);
        }));
        true
    }

    /// Waits until every background removal has finished.
    pub(crate) async fn flush(&self) {
        loop {
            // Taken out of the lock while awaited (a std mutex is not held across an await);
            // removals started meanwhile are picked up by the next round.
            let tasks = std::mem::take(&mut *self.tasks.lock().unwrap_or_else(|e| e.into_inner()));
            if tasks.is_empty() {
                return;
            }
            for t in tasks {
                let _ = t.await;
            }
        }
    }
}
