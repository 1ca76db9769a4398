//! Labs prepared for a run: deployed, given a toolbox and checked against their healthy
//! baseline, possibly in the background while another run works.

use super::{ToolboxFactory, ToolboxOptions};
use crate::emulator::{EmuError, Emulator, Lab};
use crate::lab::{Baseline, Topology, TopologyResolver, TopologySummary};
use crate::phases::{PhaseOptions, unix_ms};
use crate::record::{BaselinePhase, DeployPhase, LabOrigin};
use crate::status::RunStatus;
use crate::toolbox::Toolbox;
use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

/// What a run needs to know about its topology besides the running lab.
#[derive(Debug)]
pub(crate) struct LabPlan {
    pub topology: Topology,
    pub baseline: Baseline,
    pub summary: String,
}

impl LabPlan {
    fn read(resolver: &TopologyResolver, name: &str) -> Result<LabPlan, String> {
        let topology = resolver.resolve(name).map_err(|e| e.to_string())?;
        let lab = topology.lab().map_err(|e| e.to_string())?;
        let baseline = topology.baseline().map_err(|e| e.to_string())?;
        let summary = TopologySummary::for_lab(&lab).map_err(|e| e.to_string())?;
        Ok(LabPlan {
            topology,
            baseline,
            summary: summary.text,
        })
    }
}

/// A running, verified lab and its toolbox.
#[derive(Clone)]
pub(crate) struct ReadyLab {
    pub lab: Arc<dyn Lab>,
    pub tools: Arc<dyn Toolbox>,
    /// A state snapshot of the healthy lab, taken right after its baseline held (the repair
    /// task's reference for collateral; taken while the lab is prepared, so a prestarted lab
    /// costs the run nothing for it).
    pub healthy: Option<crate::snapshot::Snapshot>,
}

/// A lab prepared for a run: deployed, with a toolbox whose telemetry started at the deploy,
/// and its healthy baseline verified — or the reason it could not be (which becomes the run's
/// status). Hand it to [`super::Runner::run_prepared`]; a prepared lab that is dropped unused
/// is torn down in the background, and [`PreparedLab::release`] tears it down and waits.
pub struct PreparedLab {
    pub(crate) topology: String,
    pub(crate) plan: Option<Arc<LabPlan>>,
    pub(crate) deploy: DeployPhase,
    pub(crate) baseline: Option<BaselinePhase>,
    pub(crate) ready: Option<ReadyLab>,
    pub(crate) failure: Option<(RunStatus, String)>,
}

impl std::fmt::Debug for PreparedLab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedLab")
            .field("topology", &self.topology)
            .field("lab", &self.deploy.lab_name)
            .field("ready", &self.ready.is_some())
            .field("failure", &self.failure)
            .finish()
    }
}

impl PreparedLab {
    /// The topology it was prepared for (a scenario's `Topology:`).
    pub fn topology(&self) -> &str {
        &self.topology
    }

    /// The running lab, when it deployed and its baseline holds.
    pub fn lab(&self) -> Option<&Arc<dyn Lab>> {
        self.ready.as_ref().map(|r| &r.lab)
    }

    /// Why the lab is not usable (the run that takes it records this), if it is not.
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_ref().map(|(_, why)| why.as_str())
    }

    /// The deploy as it will be recorded.
    pub fn deploy(&self) -> &DeployPhase {
        &self.deploy
    }

    /// Tears the lab down (if it runs) and waits for it.
    pub async fn release(mut self) {
        if let Some(r) = self.ready.take() {
            let _ = r.lab.teardown().await;
        }
    }

    /// The same lab, handed on to another run of its topology (`--reuse-labs`).
    pub(crate) fn into_reused(mut self) -> PreparedLab {
        self.deploy.lab = LabOrigin::Reused;
        self.deploy.prestarted = false;
        self.deploy.duration_ms = 0;
        self.deploy.waited_ms = 0;
        self.deploy.started_unix_ms = unix_ms();
        if let Some(b) = &mut self.baseline {
            // Verified by the previous run's revert.
            b.attempts = 0;
            b.duration_ms = 0;
        }
        self
    }

    /// A lab kept after a verified revert, for the next run of its topology.
    pub(crate) fn kept(
        plan: Arc<LabPlan>,
        topology: String,
        ready: ReadyLab,
        emulator: &dyn Emulator,
    ) -> Self {
        PreparedLab {
            deploy: DeployPhase {
                emulator: emulator.name().to_string(),
                link_model: emulator
                    .link_model()
                    .map(|m| m.to_string())
                    .unwrap_or_default(),
                lab_name: ready.lab.name().to_string(),
                lab: LabOrigin::Reused,
                ok: true,
                notes: ready.lab.deploy_notes(),
                ..Default::default()
            },
            baseline: Some(BaselinePhase {
                ok: true,
                failures: Vec::new(),
                probes: plan.baseline.probes.len(),
                attempts: 0,
                duration_ms: 0,
            }),
            topology,
            plan: Some(plan),
            ready: Some(ready),
            failure: None,
        }
    }
}

impl Drop for PreparedLab {
    fn drop(&mut self) {
        if let Some(r) = self.ready.take()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            rt.spawn(async move {
                let _ = r.lab.teardown().await;
            });
        }
    }
}

/// Prepares labs: the emulator, toolbox factory, topology roots and phase options of a
/// [`super::Runner`], detached from it so that a lab can be prepared in a background task
/// ([`super::Runner::lab_preparer`]).
#[derive(Clone)]
pub struct LabPreparer {
    emulator: Arc<dyn Emulator>,
    tools: Arc<dyn ToolboxFactory>,
    topologies: TopologyResolver,
    phases: PhaseOptions,
    telemetry: bool,
    healthy_snapshot: Option<crate::snapshot::SnapshotOptions>,
}

impl LabPreparer {
    /// Also snapshot each lab once its baseline holds (the repair task's reference state).
    pub(crate) fn with_healthy_snapshot(
        mut self,
        opts: Option<crate::snapshot::SnapshotOptions>,
    ) -> Self {
        self.healthy_snapshot = opts;
        self
    }

    pub(crate) fn new(
        emulator: Arc<dyn Emulator>,
        tools: Arc<dyn ToolboxFactory>,
        topologies: TopologyResolver,
        phases: PhaseOptions,
        telemetry: bool,
    ) -> Self {
        LabPreparer {
            emulator,
            tools,
            topologies,
            phases,
            telemetry,
            healthy_snapshot: None,
        }
    }

    /// Deploys a fresh lab of `topology`, builds its toolbox (telemetry starts now) and waits
    /// for the healthy baseline; a lab whose baseline does not hold is torn down.
    pub async fn prepare(&self, topology: &str) -> PreparedLab {
        self.prepare_with(topology, None).await
    }

    /// [`LabPreparer::prepare`], handing the lab to `handoff` as soon as it is deployed (before
    /// its baseline wait), so that a run waiting for it can raise its priority.
    async fn prepare_with(&self, topology: &str, handoff: Option<Arc<Handoff>>) -> PreparedLab {
        let t = Instant::now();
        let mut out = PreparedLab {
            topology: topology.to_string(),
            plan: None,
            deploy: DeployPhase {
                emulator: self.emulator.name().to_string(),
                link_model: self
                    .emulator
                    .link_model()
                    .map(|m| m.to_string())
                    .unwrap_or_default(),
                lab: LabOrigin::Fresh,
                started_unix_ms: unix_ms(),
                ..Default::default()
            },
            baseline: None,
            ready: None,
            failure: None,
        };
        let plan = match LabPlan::read(&self.topologies, topology) {
            Ok(p) => Arc::new(p),
            Err(e) => {
                out.deploy.error = Some(e.clone());
                out.failure = Some((RunStatus::PipelineError, e));
                return out;
            }
        };
        out.plan = Some(plan.clone());
        let deployed = crate::phases::deploy(self.emulator.as_ref(), &plan.topology, None).await;
        out.deploy.started_unix_ms = deployed.started_unix_ms;
        out.deploy.duration_ms = deployed.elapsed.as_millis() as u64;
        let lab = match deployed.lab {
            Ok(lab) => lab,
            Err(e) => {
                let status = match e {
                    EmuError::Unsupported { .. } => RunStatus::UnsupportedOnHost,
                    _ => RunStatus::DeployIncomplete,
                };
                out.deploy.error = Some(e.to_string());
                out.deploy.waited_ms = t.elapsed().as_millis() as u64;
                out.failure = Some((status, e.to_string()));
                return out;
            }
        };
        out.deploy.ok = true;
        if let Some(h) = &handoff {
            h.deployed(&lab);
        }
        out.deploy.lab_name = lab.name().to_string();
        out.deploy.notes = lab.deploy_notes();
        let settings = ToolboxOptions {
            telemetry: self.telemetry,
        };
        let tools = self.tools.toolbox_with(lab.clone(), &settings);
        let bt = Instant::now();
        let base =
            crate::phases::wait_for_healthy(lab.as_ref(), &plan.baseline, &self.phases).await;
        let ok = base.passed();
        out.baseline = Some(BaselinePhase {
            ok,
            failures: base.results.iter().filter(|r| !r.passed).cloned().collect(),
            probes: plan.baseline.probes.len(),
            attempts: base.attempts,
            duration_ms: bt.elapsed().as_millis() as u64,
        });
        out.deploy.waited_ms = t.elapsed().as_millis() as u64;
        out.deploy.cpu_ms = lab.cpu_used().map(|c| c.as_millis() as u64);
        if ok {
            let healthy = match &self.healthy_snapshot {
                Some(o) => Some(crate::snapshot::Snapshot::take(lab.as_ref(), o).await),
                None => None,
            };
            out.ready = Some(ReadyLab {
                lab,
                tools,
                healthy,
            });
        } else {
            let _ = lab.teardown().await;
            let reason: Vec<String> = base
                .results
                .iter()
                .filter(|r| !r.passed)
                .map(|f| format!("{}: {}", f.probe.name, f.detail))
                .collect();
            out.failure = Some((
                RunStatus::DeployIncomplete,
                format!(
                    "healthy baseline does not hold after {} s: {}",
                    self.phases.baseline_wait.as_secs(),
                    reason.join("; ")
                ),
            ));
        }
        out
    }
}

/// A job's queue of labs being prepared in the background, in the order its runs will take
/// them ("prestart"): while one run's agent works, the labs of the next runs are deployed and
/// baseline-checked — at a lower CPU priority, on the background lane (`lane`), so that they
/// take little from the running agent; [`LabQueue::pop`] returns a lab's processes to normal
/// priority ([`Lab::renice`]).
///
/// [`LabQueue::push`] starts preparing a lab for a topology; [`LabQueue::pop`] hands out the
/// oldest one (waiting for it if it is not ready yet, and recording how long in
/// `phases.deploy.waited_ms`; `phases.deploy.prestarted` says whether its preparation started
/// before it was asked for). [`LabQueue::shutdown`] waits for the labs still being
/// prepared and tears every one down — call it when the job ends, on errors and on Ctrl-C;
/// labs of a queue that is simply dropped are torn down in the background.
pub struct LabQueue {
    preparer: LabPreparer,
    pending: VecDeque<Pending>,
}

/// A lab in preparation, as far as a run waiting for it needs: the lab once deployed, and
/// whether a run waits for it (then it is not left niced while its baseline is checked).
#[derive(Default)]
struct Handoff {
    lab: std::sync::Mutex<Option<Arc<dyn Lab>>>,
    urgent: std::sync::atomic::AtomicBool,
}

impl Handoff {
    fn deployed(&self, lab: &Arc<dyn Lab>) {
        *self.lab.lock().unwrap_or_else(|e| e.into_inner()) = Some(lab.clone());
        if self.urgent.load(std::sync::atomic::Ordering::SeqCst) {
            let _ = lab.renice(0);
        }
    }

    /// A run waits: the lab (when deployed already) goes to normal priority now.
    fn wanted(&self) {
        self.urgent.store(true, std::sync::atomic::Ordering::SeqCst);
        let lab = self.lab.lock().unwrap_or_else(|e| e.into_inner()).clone();
        if let Some(l) = lab {
            let _ = l.renice(0);
        }
    }
}

struct Pending {
    handoff: Arc<Handoff>,
    topology: String,
    pushed: Instant,
    task: tokio::task::JoinHandle<PreparedLab>,
}

impl LabQueue {
    /// An empty queue preparing labs with `preparer`.
    pub fn new(preparer: LabPreparer) -> Self {
        LabQueue {
            preparer,
            pending: VecDeque::new(),
        }
    }

    /// Starts preparing a lab of `topology` in the background, at a lower CPU priority with
    /// every process the lab starts (see `lane`): for a run that comes after the one working
    /// now.
    pub fn push(&mut self, topology: &str) {
        self.push_with(topology, true);
    }

    /// Starts preparing a lab of `topology` at normal priority: for a run that will wait for
    /// it with nothing else working meanwhile (a job's first run), where a niced bring-up
    /// would only lose to everything else on the machine.
    pub fn push_now(&mut self, topology: &str) {
        self.push_with(topology, false);
    }

    fn push_with(&mut self, topology: &str, background: bool) {
        let preparer = self.preparer.clone();
        let topology = topology.to_string();
        let handoff = Arc::new(Handoff::default());
        let prepare = {
            let topology = topology.clone();
            let handoff = handoff.clone();
            async move { preparer.prepare_with(&topology, Some(handoff)).await }
        };
        self.pending.push_back(Pending {
            handoff,
            topology,
            pushed: Instant::now(),
            task: if background {
                super::lane::spawn_background(prepare)
            } else {
                tokio::spawn(prepare)
            },
        });
    }

    /// Labs queued (being prepared or ready).
    pub fn len(&self) -> usize {
        self.pending.len()
    }

    /// Nothing queued.
    pub fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    /// The oldest queued lab, once prepared; `None` when the queue is empty.
    pub async fn pop(&mut self) -> Option<PreparedLab> {
        let Pending {
            handoff,
            topology,
            pushed,
            task,
        } = self.pending.pop_front()?;
        let t = Instant::now();
        // Its preparation had a head start on the run that takes it (not just queued and
        // taken at once, as a job's first lab or one without prestart is).
        let head_start = t.duration_since(pushed) > std::time::Duration::from_millis(10);
        if !task.is_finished() {
            handoff.wanted();
        }
        let mut lab = match task.await {
            Ok(lab) => lab,
            Err(e) => {
                let why = format!("preparing the lab failed: {e}");
                PreparedLab {
                    topology,
                    plan: None,
                    deploy: DeployPhase {
                        error: Some(why.clone()),
                        ..Default::default()
                    },
                    baseline: None,
                    ready: None,
                    failure: Some((RunStatus::PipelineError, why)),
                }
            }
        };
        lab.deploy.prestarted = head_start;
        lab.deploy.waited_ms = t.elapsed().as_millis() as u64;
        // Prepared niced; the run that takes it works at normal priority.
        if let Some(ready) = &lab.ready
            && let Err(e) = ready.lab.renice(0)
        {
            lab.deploy
                .notes
                .push(format!("the lab stays at background CPU priority: {e}"));
        }
        Some(lab)
    }

    /// Waits for every lab still being prepared and tears them all down.
    pub async fn shutdown(mut self) {
        let pending: Vec<_> = self.pending.drain(..).collect();
        for p in pending {
            if let Ok(lab) = p.task.await {
                lab.release().await;
            }
        }
    }
}

impl Drop for LabQueue {
    fn drop(&mut self) {
        // Dropped without `shutdown` (a panic, a cancelled job): let the preparations finish
        // and tear their labs down in the background rather than leak them.
        let pending: Vec<_> = self.pending.drain(..).collect();
        if pending.is_empty() {
            return;
        }
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                for p in pending {
                    if let Ok(lab) = p.task.await {
                        lab.release().await;
                    }
                }
            });
        }
    }
}
