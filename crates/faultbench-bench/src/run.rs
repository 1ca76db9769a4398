//! Parallel workers: each owns one runner, takes chunks of same-topology runs from a shared
//! queue, and archives each finished run before the next one. Each run gets a fresh lab: a
//! worker keeps a [`LabQueue`] with the labs of its next `prestart` runs being deployed and
//! baseline-checked in the background while the current run works (with `reuse_labs`, the
//! runner instead keeps one lab between runs of a topology). A [`Cancel`] stops the
//! scheduling, abandons the runs in flight (they were never archived, so a resumed bench redoes
//! them) and tears down every lab, prestarted ones included. Where the emulator can remove labs
//! in the background ([`faultbench_core::Emulator::defer_teardowns`]), runs do not wait for
//! it; the bench does, before it returns.

use crate::BenchError;
use crate::events::{BenchEvent, Cancel, EventSink};
use crate::plan::{Item, chunks};
use crate::resolve::AgentChoice;
use faultbench_core::Scenario;
use faultbench_core::lab::TopologyResolver;
use faultbench_core::pipeline::{
    LabQueue, PrestartDecision, PrestartTuner, RunOptions, Runner, ToolboxFactory, TrackingEmulator,
};
use faultbench_core::record::{LabOrigin, RunRecord};
use faultbench_core::store::RunsRoot;
use faultbench_core::{Emulator, Judge};
use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::sync::Mutex;

/// Everything the workers need.
pub(crate) struct Setup {
    pub items: Vec<Item>,
    pub jobs: usize,
    pub emulator: Arc<dyn Emulator>,
    pub agents: Vec<AgentChoice>,
    pub judge: Arc<dyn Judge>,
    pub tools: Arc<dyn ToolboxFactory>,
    pub topologies: TopologyResolver,
    pub config: RunOptions,
    pub store: RunsRoot,
    pub events: EventSink,
    pub cancel: Cancel,
}

/// How a bench ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BenchOutcome {
    /// Runs archived by this bench.
    pub finished: usize,
    /// Whether it was cancelled (the runs not archived are left for a resumed bench).
    pub interrupted: bool,
    /// The report of the whole root, when [`crate::BenchOptions::report`] is on.
    pub report: Option<WrittenReport>,
}

/// The report a bench wrote at its end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenReport {
    /// The tables as Markdown.
    pub markdown: String,
    /// The self-contained HTML file (beside it: CSV, JSON, SVG).
    pub html: std::path::PathBuf,
}

struct Shared {
    queue: Mutex<VecDeque<Vec<Item>>>,
    /// Thrown by the user's [`Cancel`] or by a fatal error.
    stop: Cancel,
    finished: AtomicUsize,
    total: usize,
    fatal: Mutex<Option<faultbench_core::store::StoreError>>,
    tally: std::sync::Mutex<std::collections::BTreeMap<faultbench_core::RunStatus, usize>>,
    events: EventSink,
    /// The prestart depth of every job (`--prestart auto` adapts it to the bench's measured
    /// bring-up and run times; `--prestart N` fixes it).
    tuner: std::sync::Mutex<PrestartTuner>,
}

impl Shared {
    fn prestart(&self) -> PrestartDecision {
        self.tuner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .decision()
    }

    /// Feeds a finished run on a fresh lab to the tuner: its lab's bring-up (deploy and
    /// baseline) and the run itself.
    fn observe(&self, r: &RunRecord) {
        let Some(d) = r
            .phases
            .deploy
            .as_ref()
            .filter(|d| d.ok && d.lab == LabOrigin::Fresh)
        else {
            return;
        };
        let baseline = r.phases.baseline.as_ref().map_or(0, |b| b.duration_ms);
        let bring_up = std::time::Duration::from_millis(d.duration_ms.saturating_add(baseline));
        let run = std::time::Duration::from_secs_f64(r.wall_seconds.max(0.0));
        let mut tuner = self
            .tuner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        tuner.observe(bring_up, run);
        if let Some(cpu) = d.cpu_ms {
            tuner.observe_cpu(std::time::Duration::from_millis(cpu));
        }
    }

    fn stop(&self) {
        self.stop.cancel();
    }
    fn stopped(&self) -> bool {
        self.stop.is_cancelled()
    }
    fn emit(&self, e: &BenchEvent) {
        (self.events)(e);
    }
}

pub(crate) async fn run_all(setup: Setup) -> Result<BenchOutcome, BenchError> {
    let total = setup.items.len();
    let jobs = setup.jobs.min(total.max(1));
    (setup.events)(&BenchEvent::Started { runs: total, jobs });
    let tracking = Arc::new(TrackingEmulator::new(setup.emulator.clone()));
    // A run's record never waits for its lab's removal where that is slow (Kathará's
    // `lclean`); every such removal is awaited below, before the bench returns.
    let deferred = tracking.defer_teardowns();
    let shared = Arc::new(Shared {
        queue: Mutex::new(chunks(setup.items, jobs).into()),
        stop: Cancel::new(),
        finished: AtomicUsize::new(0),
        total,
        fatal: Mutex::new(None),
        tally: std::sync::Mutex::default(),
        events: setup.events.clone(),
        tuner: std::sync::Mutex::new(if setup.config.prestart_auto {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            PrestartTuner::auto(setup.config.prestart).with_cpu_budget(cores, jobs)
        } else {
            PrestartTuner::fixed(setup.config.prestart)
        }),
    });
    // The user's switch throws the internal one (which a fatal error may also throw).
    let forward = {
        let shared = shared.clone();
        let user = setup.cancel.clone();
        tokio::spawn(async move {
            user.cancelled().await;
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
        let agents = agents.clone();
        let store = setup.store.clone();
        handles.push(tokio::spawn(async move {
            worker(job, runner, agents, store, shared).await;
        }));
    }
    for h in handles {
        let _ = h.await;
    }
    forward.abort();
    let interrupted = setup.cancel.is_cancelled();
    // Safety net: labs still referenced (runs abandoned on interrupt, telemetry tasks winding
    // down) are torn down here; teardown is idempotent.
    let (torn, errors) = tracking.teardown_all().await;
    if interrupted && torn > 0 {
        shared.emit(&BenchEvent::Note(format!(
            "tore down {torn} lab(s) still running"
        )));
    }
    for e in errors {
        shared.emit(&BenchEvent::Note(format!("teardown error: {e}")));
    }
    if deferred {
        for e in tracking.flush_teardowns().await {
            shared.emit(&BenchEvent::Note(format!("teardown error: {e}")));
        }
    }
    let finished = shared.finished.load(Ordering::SeqCst);
    shared.emit(&BenchEvent::Finished {
        finished,
        interrupted,
    });
    if let Some(f) = shared.fatal.lock().await.take() {
        return Err(BenchError::Archive(f));
    }
    Ok(BenchOutcome {
        finished,
        interrupted,
        report: None,
    })
}

async fn worker(
    job: usize,
    runner: Runner,
    agents: Arc<Vec<(String, Arc<dyn faultbench_core::Agent>)>>,
    store: RunsRoot,
    shared: Arc<Shared>,
) {
    let reuse = runner.config().reuse_labs;
    let mut labs = LabQueue::new(runner.lab_preparer());
    // Items of this job not yet queued (the rest of its current chunk), and the items whose
    // labs are queued, in run order.
    let mut chunk: VecDeque<Item> = VecDeque::new();
    let mut ahead: VecDeque<Item> = VecDeque::new();
    loop {
        if shared.stopped() {
            break;
        }
        // The depth in effect for this run (read once, so the run records what it used).
        let decision = shared.prestart();
        let prestart = decision.depth as usize;
        // With fresh labs, the next item's lab is queued (at least one, so that an empty
        // queue can start the next run); with reused labs, nothing is queued.
        let want = if reuse { 1 } else { prestart.max(1) };
        fill(
            &mut ahead,
            &mut chunk,
            want,
            &shared,
            (!reuse).then_some(&mut labs),
            true,
        )
        .await;
        let Some(item) = ahead.pop_front() else {
            break;
        };
        let (label, agent) = &agents[item.agent];
        shared.emit(&BenchEvent::RunStarted {
            job,
            key: item.key.clone(),
        });
        let run = async {
            if reuse {
                return runner
                    .run_with(agent, label, item.scenario.as_ref(), item.pass)
                    .await;
            }
            let lab = match labs.pop().await {
                Some(lab) => lab,
                None => runner.prepare_lab(item.scenario.topology()).await,
            };
            // While this run works, the next runs' labs are prepared.
            fill(
                &mut ahead,
                &mut chunk,
                prestart,
                &shared,
                Some(&mut labs),
                false,
            )
            .await;
            runner
                .run_prepared(agent, label, item.scenario.as_ref(), item.pass, lab)
                .await
        };
        let mut record = tokio::select! {
            rec = run => rec,
            () = shared.stop.cancelled() => break,
        };
        if !reuse {
            shared.observe(&record);
            if let Some(d) = record.phases.deploy.as_mut() {
                d.prestart = Some(decision);
            }
        }
        if let Err(e) = store.archive(&record) {
            *shared.fatal.lock().await = Some(e);
            shared.stop();
            break;
        }
        let done = shared.finished.fetch_add(1, Ordering::SeqCst) + 1;
        let tally = {
            let mut t = shared
                .tally
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *t.entry(record.status).or_default() += 1;
            t.iter().map(|(s, n)| (*s, *n)).collect()
        };
        shared.emit(&BenchEvent::RunFinished {
            job,
            done,
            total: shared.total,
            record: Box::new(record),
            tally,
        });
    }
    // Prestarted labs (and labs still being prepared) are torn down here, on every exit path.
    labs.shutdown().await;
    runner.shutdown().await;
    shared.emit(&BenchEvent::JobDone { job });
}

/// Moves items from the job's chunk (taking the next chunk from the shared queue when it is
/// empty) into `ahead` until `want` are there, queueing a lab for each when `labs` is given.
/// `idle`: no run of the job is working (the top of its loop).
async fn fill(
    ahead: &mut VecDeque<Item>,
    chunk: &mut VecDeque<Item>,
    want: usize,
    shared: &Shared,
    mut labs: Option<&mut LabQueue>,
    idle: bool,
) {
    while ahead.len() < want && !shared.stopped() {
        if chunk.is_empty() {
            match shared.queue.lock().await.pop_front() {
                Some(next) => chunk.extend(next),
                None => return,
            }
        }
        let Some(item) = chunk.pop_front() else {
            return;
        };
        if let Some(q) = labs.as_deref_mut() {
            // Nothing queued and no run working: the next run will wait for this lab, so it
            // comes up at normal priority; the rest in the background.
            if idle && q.is_empty() && ahead.is_empty() {
                q.push_now(item.scenario.topology());
            } else {
                q.push(item.scenario.topology());
            }
        }
        ahead.push_back(item);
    }
}
