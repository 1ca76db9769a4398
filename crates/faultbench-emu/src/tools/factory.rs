//! The toolbox factory the run pipeline uses: the 22 tools, under a policy, with a telemetry
//! collector started when the lab is deployed (each lab gets its own store, so a run sees the
//! telemetry of its own lab only), or with telemetry off.

use super::telemetry::TelemetryStore;
use super::{NikaTools, ToolOptions};
use faultbench_core::toolbox::{Policy, PolicyToolbox};
use faultbench_core::toolbox::{ToolboxFactory, ToolboxOptions};
use faultbench_core::{Lab, Toolbox};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Builds [`NikaTools`] for each deployed lab.
///
/// ```
/// use faultbench_core::toolbox::{ToolboxFactory, ToolboxOptions};
/// use faultbench_core::{Emulator, LabRequest};
/// use faultbench_emu::mock::MockEmulator;
/// use faultbench_core::toolbox::Policy;
/// use faultbench_emu::tools::NikaToolsFactory;
/// use std::time::Duration;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let factory = NikaToolsFactory::new()
///     .with_policy(Policy::ReadOnly)
///     .with_telemetry_interval(Some(Duration::from_secs(5)));
/// let file = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/mock/triangle.toml");
/// let lab = MockEmulator::new().deploy(&LabRequest::new(file)).await.unwrap();
/// let tools = factory.toolbox(lab);
/// assert_eq!(tools.specs().len(), 22);
/// # });
/// ```
#[derive(Debug, Clone)]
pub struct NikaToolsFactory {
    config: ToolOptions,
    policy: Policy,
    telemetry_interval: Option<Duration>,
    telemetry_dir: Option<PathBuf>,
}

impl Default for NikaToolsFactory {
    fn default() -> Self {
        Self::new()
    }
}

impl NikaToolsFactory {
    /// Default tool configuration, the `full` policy, telemetry sampled every 5 s.
    pub fn new() -> Self {
        NikaToolsFactory {
            config: ToolOptions::default(),
            policy: Policy::Full,
            telemetry_interval: Some(Duration::from_secs(5)),
            telemetry_dir: None,
        }
    }

    /// Sets the tool configuration.
    pub fn with_config(mut self, config: ToolOptions) -> Self {
        self.config = config;
        self
    }

    /// Sets the policy.
    pub fn with_policy(mut self, policy: Policy) -> Self {
        self.policy = policy;
        self
    }

    /// Sets (or, with `None`, disables) the telemetry sampling interval.
    pub fn with_telemetry_interval(mut self, interval: Option<Duration>) -> Self {
        self.telemetry_interval = interval;
        self
    }

    /// Also writes each lab's telemetry to `DIR/<lab>.telemetry.jsonl`, so that
    /// `faultbench mcp --telemetry FILE` can serve it to an external agent.
    pub fn with_telemetry_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.telemetry_dir = Some(dir.into());
        self
    }

    /// The JSONL file a lab's telemetry goes to, when a directory is set.
    pub fn telemetry_file(&self, lab_name: &str) -> Option<PathBuf> {
        self.telemetry_dir
            .as_ref()
            .map(|d| d.join(format!("{lab_name}.telemetry.jsonl")))
    }
}

impl ToolboxFactory for NikaToolsFactory {
    fn toolbox(&self, lab: Arc<dyn Lab>) -> Arc<dyn Toolbox> {
        self.toolbox_with(lab, &ToolboxOptions::default())
    }

    /// A new toolbox with a new telemetry store, sampled from now (the lab's deploy) on; with
    /// `settings.telemetry` off, no collector and the release's answer from the four
    /// `influx_*` tools.
    fn toolbox_with(&self, lab: Arc<dyn Lab>, settings: &ToolboxOptions) -> Arc<dyn Toolbox> {
        let name = lab.name().to_string();
        let mut tools = NikaTools::new(lab).with_config(self.config.clone());
        if !settings.telemetry {
            return Arc::new(PolicyToolbox::new(tools.without_telemetry(), self.policy));
        }
        // The collector needs a runtime; the pipeline always has one.
        if let (Some(interval), Ok(_)) = (
            self.telemetry_interval,
            tokio::runtime::Handle::try_current(),
        ) {
            let file = self.telemetry_file(&name);
            // An unwritable telemetry file must not stop the run: sample in memory only.
            let store = file
                .and_then(|f| TelemetryStore::new().write_jsonl(f).ok())
                .unwrap_or_default();
            tools = tools.collect_into(Arc::new(store), interval);
        }
        Arc::new(PolicyToolbox::new(tools, self.policy))
    }
}
