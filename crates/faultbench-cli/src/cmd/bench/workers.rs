//! Parallel workers: each owns one runner (so at most one warm lab), takes chunks of same-
//! topology runs from a shared queue, and archives each finished run before the next one.
//! Ctrl-C (or SIGTERM) stops the scheduling, abandons the runs in flight (they were never
//! archived, so `--resume` redoes them) and tears down every lab.

use super::build::AgentChoice;
use super::plan::{Item, chunks};
use super::progress::Progress;
use faultbench_core::lab::TopologyResolver;
use faultbench_core::pipeline::{RunConfig, Runner, ToolboxFactory, TrackingEmulator};
use faultbench_core::store::RunsRoot;
use faultbench_core::{Emulator, Judge};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use tokio::sync::{Mutex, Notify};

/// Everything the workers need.
pub struct Setup {
    pub items: Vec<Item>,
    pub jobs: usize,
    pub emulator: Arc<dyn Emulator>,
    pub agents: Vec<AgentChoice>,
    pub judge: Arc<dyn Judge>,
    pub tools: Arc<dyn ToolboxFactory>,
    pub topologies: TopologyResolver,
    pub config: RunConfig,
    pub store: RunsRoot,
}

/// How the bench ended.
pub struct Outcome {
    pub finished: usize,
    pub interrupted: bool,
}

struct Shared {
    queue: Mutex<VecDeque<Vec<Item>>>,
    cancel: AtomicBool,
    cancelled: Notify,
    finished: AtomicUsize,
    fatal: Mutex<Option<String>>,
}

impl Shared {
    fn stop(&self) {
        self.cancel.store(true, Ordering::SeqCst);
        self.cancelled.notify_waiters();
    }
    fn stopped(&self) -> bool {
        self.cancel.load(Ordering::SeqCst)
    }
}

pub async fn run_all(setup: Setup) -> anyhow::Result<Outcome> {
    let total = setup.items.len();
    let jobs = setup.jobs.min(total.max(1));
    let progress = Arc::new(Progress::new(total as u64, jobs));
    let tracking = Arc::new(TrackingEmulator::new(setup.emulator.clone()));
    let shared = Arc::new(Shared {
        queue: Mutex::new(chunks(setup.items, jobs).into()),
        cancel: AtomicBool::new(false),
        cancelled: Notify::new(),
        finished: AtomicUsize::new(0),
        fatal: Mutex::new(None),
    });

    let signals = {
        let shared = shared.clone();
        let progress = progress.clone();
        tokio::spawn(async move {
            wait_for_signal().await;
            progress.println("interrupt: stopping; tearing every lab down (runs in flight are not archived and will be redone with --resume)");
            shared.stop();
        })
    };

    let agents: Arc<Vec<(String, Arc<dyn faultbench_core::Agent>)>> = Arc::new(
        setup
            .agents
            .iter()
            .map(|a| (a.label.clone(), a.agent.clone()))
            .collect(),
    );
    let mut handles = Vec::new();
    for job in 0..jobs {
        let runner = Runner::new(tracking.clone(), agents[0].1.clone(), setup.judge.clone())
            .with_tools(setup.tools.clone())
            .with_topologies(setup.topologies.clone())
            .with_config(setup.config.clone());
        let shared = shared.clone();
        let progress = progress.clone();
        let agents = agents.clone();
        let store = setup.store.clone();
        handles.push(tokio::spawn(async move {
            worker(job, runner, agents, store, shared, progress).await;
        }));
    }
    for h in handles {
        let _ = h.await;
    }
    signals.abort();
    let interrupted = shared.stopped();
    // Safety net: labs still referenced (runs abandoned on interrupt, telemetry tasks winding
    // down) are torn down here; teardown is idempotent.
    let (torn, errors) = tracking.teardown_all().await;
    if interrupted && torn > 0 {
        progress.println(&format!("tore down {torn} lab(s) still running"));
    }
    for e in errors {
        progress.println(&format!("teardown error: {e}"));
    }
    progress.clear();
    if let Some(f) = shared.fatal.lock().await.take() {
        anyhow::bail!("{f}");
    }
    Ok(Outcome {
        finished: shared.finished.load(Ordering::SeqCst),
        interrupted,
    })
}

async fn worker(
    job: usize,
    runner: Runner,
    agents: Arc<Vec<(String, Arc<dyn faultbench_core::Agent>)>>,
    store: RunsRoot,
    shared: Arc<Shared>,
    progress: Arc<Progress>,
) {
    'chunks: loop {
        let Some(chunk) = shared.queue.lock().await.pop_front() else {
            break;
        };
        for item in chunk {
            if shared.stopped() {
                break 'chunks;
            }
            let (label, agent) = &agents[item.agent];
            progress.start(
                job,
                &format!(
                    "{} {} [{}] p{}",
                    item.key.topology, item.key.scenario_id, label, item.pass
                ),
            );
            let run = runner.run_with(agent, label, item.scenario.as_ref(), item.pass);
            let record = tokio::select! {
                rec = run => rec,
                _ = shared.cancelled.notified() => break 'chunks,
            };
            if let Err(e) = store.archive(&record) {
                *shared.fatal.lock().await = Some(format!("cannot archive a finished run: {e}"));
                shared.stop();
                break 'chunks;
            }
            shared.finished.fetch_add(1, Ordering::SeqCst);
            progress.finish(&record);
        }
    }
    runner.shutdown().await;
    progress.idle(job);
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
