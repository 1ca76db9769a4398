//! The background lane: where a [`super::LabQueue`] prepares the labs of a job's next runs.
//!
//! A prestarted lab comes up while another run's agent works, on the same cores. Its
//! bring-up (the devices' processes, some thirty routing daemons starting, the harness's own
//! reads and `ip` calls, the baseline probes) must not slow that agent down more than a set
//! share, so it runs at a lower CPU priority: on one thread of its own, with a runtime whose
//! every thread (its worker and its blocking pool) has the niceness [`BACKGROUND_NICE`].
//! Processes inherit the niceness of the thread that starts them, so a lab's devices and their
//! daemons started from the lane run niced too. Under contention the kernel gives a nice-5
//! task a third of the CPU a nice-0 one gets (weights 335 and 1024), so a bring-up takes at
//! most about a quarter of a core away from a busy agent; an idle core it still takes whole.
//!
//! Why not nicer: a lab's devices must finish their startup within the backend's deadline
//! (120 s on netns), and other work on the machine at normal priority (builds, other
//! benches) competes with a niced bring-up as the agent does. Measured at a load average of
//! 40–70 with nice 10, three Kath1 labs in a row missed that deadline (`deploy_incomplete`);
//! nice 5 keeps a bring-up at a quarter of a contended core rather than a tenth. A job's
//! first lab, which its run waits for with nothing else to do, is prepared at normal
//! priority ([`super::LabQueue::push_now`]).
//!
//! When a run takes its lab, [`crate::emulator::Lab::set_background`] returns the lab's
//! processes to normal priority (a backend that cannot, or whose devices the harness did not
//! start, leaves them as they are). Tasks the preparation spawned and that outlive it — a
//! toolbox's telemetry sampler — stay on the lane: sampling at a lower priority only shifts
//! when a sample is taken, never what it reads.
//!
//! The lane is one per process and lives as long as it. If it cannot be started (no thread
//! can be spawned), labs are prepared on the caller's runtime as before.

use std::future::Future;
use std::sync::OnceLock;

/// The niceness of the lane's threads and of the processes they start.
pub const BACKGROUND_NICE: i32 = 5;

static LANE: OnceLock<Option<tokio::runtime::Handle>> = OnceLock::new();

/// Sets the niceness of the calling thread (only this thread: on Linux a niceness is per
/// thread). Raising it never needs a privilege; it fails only on a bad value.
fn nice_this_thread(nice: i32) -> bool {
    // SAFETY: gettid(2) has no preconditions.
    let tid = unsafe { libc::gettid() };
    // SAFETY: setpriority(2) on this thread's own id, with a plain integer; it changes only the
    // scheduling weight of this thread.
    unsafe { libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, nice) == 0 }
}

/// The niceness of the calling thread.
pub fn thread_niceness() -> i32 {
    // SAFETY: as in `nice_this_thread`; getpriority(2) only reads.
    let tid = unsafe { libc::gettid() };
    // SAFETY: getpriority(2) reads this thread's niceness.
    unsafe { libc::getpriority(libc::PRIO_PROCESS, tid as libc::id_t) }
}

fn start() -> Option<tokio::runtime::Handle> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .thread_name("faultbench-prestart")
        // Threads the runtime starts itself: its blocking pool (a backend's synchronous
        // bring-up runs there).
        .on_thread_start(|| {
            nice_this_thread(BACKGROUND_NICE);
        })
        .build()
        .ok()?;
    let handle = rt.handle().clone();
    std::thread::Builder::new()
        .name("faultbench-prestart".into())
        .spawn(move || {
            nice_this_thread(BACKGROUND_NICE);
            // Runs the lane's tasks for the life of the process.
            rt.block_on(std::future::pending::<()>());
        })
        .ok()?;
    Some(handle)
}

/// The lane's runtime, started on first use; `None` when it could not be started.
fn lane() -> Option<&'static tokio::runtime::Handle> {
    LANE.get_or_init(start).as_ref()
}

/// Spawns `fut` on the background lane (at [`BACKGROUND_NICE`]), or on the current runtime
/// when the lane is not available.
pub fn spawn_background<F>(fut: F) -> tokio::task::JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    match lane() {
        Some(h) => h.spawn(fut),
        None => tokio::spawn(fut),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lane_tasks_and_their_blocking_work_run_niced() {
        let here = thread_niceness();
        let (task, blocking) = spawn_background(async {
            let blocking = tokio::task::spawn_blocking(thread_niceness).await.unwrap();
            (thread_niceness(), blocking)
        })
        .await
        .unwrap();
        // A thread's niceness can be raised but not lowered without privilege, so the lane is
        // at least as nice as asked even when the test itself already runs niced.
        assert_eq!(task, BACKGROUND_NICE.max(here));
        assert_eq!(blocking, BACKGROUND_NICE.max(here));
        // The caller's own thread is untouched.
        assert_eq!(thread_niceness(), here);
    }

    #[tokio::test]
    async fn processes_started_on_the_lane_inherit_its_niceness() {
        let here = thread_niceness();
        let out = spawn_background(async {
            std::process::Command::new("sh")
                .args(["-c", "cut -d' ' -f19 /proc/self/stat"])
                .output()
        })
        .await
        .unwrap()
        .unwrap();
        let nice: i32 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
        assert_eq!(nice, BACKGROUND_NICE.max(here));
    }
}
