//! What a bench tells its user while it works ([`BenchEvent`], delivered to the callback given
//! to [`crate::Bench::on_event`]) and how the user stops it ([`Cancel`]).

use faultbench_core::RunStatus;
use faultbench_core::record::{RunKey, RunRecord};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::Notify;

/// One thing that happened in a bench. The CLI renders these with progress bars; a library
/// user may log them, count them, or ignore them.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum BenchEvent {
    /// A message for the user (warnings about the plan, memory limits, the configuration,
    /// teardown), one line or a few.
    Note(String),
    /// The runs start: `runs` to do on `jobs` parallel workers.
    Started {
        /// Runs to do (after resume and sharding).
        runs: usize,
        /// Workers.
        jobs: usize,
    },
    /// A worker starts a run.
    RunStarted {
        /// The worker (from 0).
        job: usize,
        /// The run.
        key: RunKey,
    },
    /// A run finished and is archived.
    RunFinished {
        /// The worker (from 0).
        job: usize,
        /// Runs finished so far in this bench.
        done: usize,
        /// Runs to do in this bench.
        total: usize,
        /// The archived record.
        record: Box<RunRecord>,
        /// Runs finished so far in this bench by status, in status order.
        tally: Vec<(RunStatus, usize)>,
    },
    /// A worker has nothing more to do.
    JobDone {
        /// The worker (from 0).
        job: usize,
    },
    /// Every worker stopped and every lab is torn down.
    Finished {
        /// Runs archived by this bench.
        finished: usize,
        /// Whether it was cancelled.
        interrupted: bool,
    },
}

/// One line of plain text per event, as `faultbench bench` prints them: notes as they are, a
/// finished run as `[done/total] TOPOLOGY SCENARIO AGENT pN: STATUS outcome X (S s) · lab
/// waited W s, prestart D (…) — error` (the part after `·` for runs on labs from a lab queue),
/// a started run as `TOPOLOGY SCENARIO [AGENT] pN`.
impl std::fmt::Display for BenchEvent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BenchEvent::Note(n) => f.write_str(n),
            BenchEvent::Started { runs, jobs } => write!(f, "{runs} run(s) on {jobs} job(s)"),
            BenchEvent::RunStarted { key, .. } => write!(
                f,
                "{} {} [{}] p{}",
                key.topology, key.scenario_id, key.agent, key.pass
            ),
            BenchEvent::RunFinished {
                done,
                total,
                record: r,
                ..
            } => {
                write!(
                    f,
                    "[{done}/{total}] {} {} {} p{}: {}",
                    r.key.topology, r.key.scenario_id, r.key.agent, r.key.pass, r.status
                )?;
                if let Some(s) = &r.scores {
                    write!(f, " outcome {:.3}", s.outcome)?;
                }
                write!(f, " ({:.1} s)", r.wall_seconds)?;
                if let Some(d) = r.phases.deploy.as_ref()
                    && let Some(p) = &d.prestart
                {
                    // How long the run waited for its lab, and the scheduling behind it.
                    write!(f, " · lab waited {:.1} s, {p}", d.waited_ms as f64 / 1000.0)?;
                }
                if let Some(e) = &r.error {
                    write!(f, " — {}", e.chars().take(160).collect::<String>())?;
                }
                Ok(())
            }
            BenchEvent::JobDone { job } => write!(f, "job {} done", job + 1),
            BenchEvent::Finished {
                finished,
                interrupted,
            } => write!(
                f,
                "{finished} run(s) archived{}",
                if *interrupted { " (interrupted)" } else { "" }
            ),
        }
    }
}

impl BenchEvent {
    /// For a finished run, the statuses so far as one line (`scored 12, timeout 1`).
    pub fn tally_text(&self) -> Option<String> {
        let BenchEvent::RunFinished { tally, .. } = self else {
            return None;
        };
        let parts: Vec<String> = tally.iter().map(|(s, n)| format!("{s} {n}")).collect();
        Some(parts.join(", "))
    }
}

/// Where events go.
pub type EventSink = Arc<dyn Fn(&BenchEvent) + Send + Sync>;

/// A cancellation switch shared between a bench and whoever may stop it (a signal handler, a
/// timeout, a test). Cancelling stops the scheduling, abandons the runs in flight (they were
/// not archived, so a resumed bench redoes them) and tears every lab down.
#[derive(Clone, Debug, Default)]
pub struct Cancel {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    flag: AtomicBool,
    notify: Notify,
}

impl Cancel {
    /// A switch not yet thrown.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Throws the switch (idempotent).
    pub fn cancel(&self) {
        self.inner.flag.store(true, Ordering::SeqCst);
        self.inner.notify.notify_waiters();
    }

    /// Whether it was thrown.
    pub fn is_cancelled(&self) -> bool {
        self.inner.flag.load(Ordering::SeqCst)
    }

    /// Throws the switch on Ctrl-C or SIGTERM, calling `before` first (e.g. to say so);
    /// abort the returned task to stop listening.
    pub fn on_signals(
        &self,
        before: impl FnOnce() + Send + 'static,
    ) -> tokio::task::JoinHandle<()> {
        let cancel = self.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            before();
            cancel.cancel();
        })
    }

    /// Completes once the switch is thrown (at once if it already was).
    pub async fn cancelled(&self) {
        loop {
            let notified = self.inner.notify.notified();
            tokio::pin!(notified);
            // Registered before the check, so a `cancel` between the two is not missed.
            notified.as_mut().enable();
            if self.is_cancelled() {
                return;
            }
            notified.await;
        }
    }
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let Ok(mut term) = signal(SignalKind::terminate()) else {
            let _ = tokio::signal::ctrl_c().await;
            return;
        };
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn cancel_wakes_waiters_before_and_after() {
        let c = Cancel::new();
        let waiter = tokio::spawn({
            let c = c.clone();
            async move { c.cancelled().await }
        });
        tokio::task::yield_now().await;
        assert!(!c.is_cancelled());
        c.cancel();
        tokio::time::timeout(std::time::Duration::from_secs(5), waiter)
            .await
            .expect("a waiter wakes on cancel")
            .unwrap();
        // Already thrown: returns at once.
        c.cancelled().await;
        assert!(c.is_cancelled());
    }
}
