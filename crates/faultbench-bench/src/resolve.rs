//! Names → emulators, agents, judges and toolboxes, through the [`Registries`] (the built-in
//! ones plus whatever the user registered).

use crate::BenchError;
use faultbench_agents::ExternalTemplates;
use faultbench_agents::registry::{AgentOptions, AgentRegistry, builtin_agents};
use faultbench_core::agent::TicketHint;
use faultbench_core::pipeline::ToolboxFactory;
use faultbench_core::toolbox::Policy;
use faultbench_core::{Agent, Emulator, Judge};
use faultbench_emu::registry::{EmulatorOptions, EmulatorRegistry, builtin_emulators};
use faultbench_emu::tools::NikaToolsFactory;
use faultbench_judge::registry::{JudgeOptions, JudgeRegistry, builtin_judges};
use faultbench_llm::LlmOptions;
use std::path::Path;
use std::sync::Arc;

/// The names a bench understands: agents, judges and emulators. [`Default`] holds the
/// built-in ones; add yours before handing them to [`crate::Bench::with_registries`]:
///
/// ```
/// # use faultbench_bench::Registries;
/// # use faultbench_core::agent::{Agent, AgentInput, AgentOutcome};
/// # use faultbench_core::toolbox::Toolbox;
/// # use std::sync::Arc;
/// # struct Mine;
/// # #[async_trait::async_trait]
/// # impl Agent for Mine {
/// #     fn name(&self) -> &str { "mine" }
/// #     async fn run(&self, _: &AgentInput, _: Arc<dyn Toolbox>) -> AgentOutcome { unimplemented!() }
/// # }
/// let mut reg = Registries::default();
/// reg.agents.agent("mine", || Mine);
/// assert!(reg.agents.contains("mine") && reg.agents.contains("baseline"));
/// ```
#[derive(Clone, Debug)]
pub struct Registries {
    /// Agents by name (`baseline`, `react`, `sade`, `external:NAME`, yours).
    pub agents: AgentRegistry,
    /// Judges by name (`rubric`, `llm`, yours).
    pub judges: JudgeRegistry,
    /// Emulators by name (`netns`, `kathara`, `mock`, yours).
    pub emulators: EmulatorRegistry,
}

impl Default for Registries {
    fn default() -> Self {
        Registries {
            agents: builtin_agents(),
            judges: builtin_judges(),
            emulators: builtin_emulators(),
        }
    }
}

/// The emulator named `name`. Kathará is configured by the TOML file in
/// `FAULTBENCH_KATHARA_CONFIG` if set.
pub(crate) fn emulator(
    reg: &Registries,
    name: &str,
    link_model: faultbench_core::emulator::LinkModel,
) -> Result<Arc<dyn Emulator>, BenchError> {
    let opts = EmulatorOptions {
        kathara_config: std::env::var_os("FAULTBENCH_KATHARA_CONFIG").map(Into::into),
        link_model,
    };
    Ok(reg.emulators.build(name, &opts)?)
}

/// A judge with the name it was chosen by.
#[derive(Clone)]
pub struct JudgeChoice {
    /// The registry name (`rubric`, `llm`, …).
    pub kind: String,
    /// The judge.
    pub judge: Arc<dyn Judge>,
}

/// The judge named `name`. The rubric judge learns the intentional policies (ACLs, NAT,
/// blocked pairs…) documented in the benchmark's own scenarios, so that blaming them counts as
/// over-diagnosis. A dry run needs no provider key and writes nothing: the LLM judge is planned
/// with an offline stand-in of the same model and no verdict cache.
pub(crate) fn judge(
    reg: &Registries,
    name: &str,
    llm: &LlmOptions,
    model: Option<&str>,
    scenarios: &[Arc<faultbench_core::ScenarioFile>],
    dry_run: bool,
) -> Result<JudgeChoice, BenchError> {
    let mut policies = faultbench_judge::rubric::PolicyBook::new();
    for s in scenarios {
        policies.learn(s.as_ref());
    }
    let opts = JudgeOptions {
        llm: llm.clone(),
        model: model.map(str::to_string),
        policies,
        // Re-judging never pays twice for the same verdict.
        cache_dir: Some(".faultbench/judge-cache".into()),
        offline: dry_run,
    };
    let judge = reg.judges.build(name, &opts)?;
    Ok(JudgeChoice {
        kind: name.trim().to_string(),
        judge,
    })
}

/// One agent of a bench, with the label its runs are recorded under.
#[derive(Clone)]
pub struct AgentChoice {
    /// The registry name (`baseline`, `react`, `sade`, `external:NAME`, yours).
    pub label: String,
    /// The agent.
    pub agent: Arc<dyn Agent>,
    /// Its model, if it uses one.
    pub model: Option<String>,
    /// The model its cost is estimated with: its own, or for an external CLI without a model
    /// the template's `default_model` (what the CLI is known to use).
    pub priced_model: Option<String>,
}

/// What agents are built with.
pub(crate) struct AgentSettings<'a> {
    pub llm: &'a LlmOptions,
    pub model: Option<&'a str>,
    pub max_output_tokens: Option<u32>,
    pub dry_run: bool,
    pub ticket_hint: TicketHint,
    pub templates: Option<&'a Path>,
}

/// Builds the named agents. A dry run needs no provider key: LLM agents are planned with an
/// offline stand-in of the same model.
pub(crate) fn agents(
    reg: &Registries,
    names: &[String],
    s: &AgentSettings<'_>,
    notes: &mut Vec<String>,
) -> Result<Vec<AgentChoice>, BenchError> {
    let opts = AgentOptions {
        model: s.model.map(str::to_string),
        llm: s.llm.clone(),
        ticket_hint: s.ticket_hint,
        max_output_tokens: s.max_output_tokens,
        external: Some(ExternalTemplates::discover(s.templates)?),
        ..Default::default()
    };
    let mut out = Vec::new();
    for name in names.iter().map(|n| n.trim()) {
        let agent = match reg.agents.build(name, &opts) {
            Ok(a) => a,
            Err(e) if s.dry_run && matches!(name, "react" | "sade") => {
                notes.push(format!("note: {e} (ignored for --dry-run)"));
                offline_agent(name, s)
            }
            Err(e) => return Err(e.into()),
        };
        let model = agent.model().map(str::to_string);
        let priced_model = model.clone().or_else(|| {
            let cli = name.strip_prefix("external:")?;
            let templates = opts.external.as_ref()?;
            templates.get(cli).ok()?.default_model.clone()
        });
        out.push(AgentChoice {
            label: name.to_string(),
            model,
            priced_model,
            agent,
        });
    }
    if out.is_empty() {
        return Err(BenchError::NoAgent);
    }
    if let Some(delay) = bench_agent_delay()? {
        notes.push(format!(
            "note: {DELAY_ENV}={}: every agent waits {} s before it starts (a throughput measurement, not a benchmark result)",
            delay.as_secs_f64(),
            delay.as_secs_f64()
        ));
        for a in &mut out {
            a.agent = Arc::new(Delayed {
                inner: a.agent.clone(),
                delay,
            });
        }
    }
    Ok(out)
}

/// The built-in LLM agent `name` on an offline stand-in of the model the real build would use
/// (the given model, the config's default, the agent's own default).
fn offline_agent(name: &str, s: &AgentSettings<'_>) -> Arc<dyn Agent> {
    let m = s
        .model
        .or(s.llm.default_model.as_deref())
        .unwrap_or(if name == "react" {
            "gpt-5"
        } else {
            "claude-sonnet-4-6"
        });
    let offline = Arc::new(faultbench_llm::ScriptedModel::new(m, Vec::new()));
    if name == "react" {
        Arc::new(faultbench_agents::ReactAgent::new(offline).with_ticket_hint(s.ticket_hint))
    } else {
        Arc::new(faultbench_agents::SadeAgent::new(offline).with_ticket_hint(s.ticket_hint))
    }
}

/// Bench-only knob: every agent waits this many seconds before it starts. It lets
/// `scripts/fresh-lab-throughput.sh` measure lab preparation against an agent at least as
/// slow as a topology's bring-up; it is not an agent of the benchmark.
pub const DELAY_ENV: &str = "FAULTBENCH_AGENT_DELAY_SECS";

fn bench_agent_delay() -> Result<Option<std::time::Duration>, BenchError> {
    let Ok(v) = std::env::var(DELAY_ENV) else {
        return Ok(None);
    };
    let secs: f64 = v
        .trim()
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && (0.0..=3600.0).contains(s))
        .ok_or(BenchError::BadDelay(v))?;
    Ok((secs > 0.0).then(|| std::time::Duration::from_secs_f64(secs)))
}

/// An agent that waits before it starts (see [`DELAY_ENV`]).
struct Delayed {
    inner: Arc<dyn Agent>,
    delay: std::time::Duration,
}

#[async_trait::async_trait]
impl Agent for Delayed {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn model(&self) -> Option<&str> {
        self.inner.model()
    }
    async fn run(
        &self,
        input: &faultbench_core::AgentInput,
        tools: Arc<dyn faultbench_core::Toolbox>,
    ) -> faultbench_core::AgentOutcome {
        tokio::time::sleep(self.delay).await;
        self.inner.run(input, tools).await
    }
}

/// The tool policy named `policy` (`full`, `read-only`).
pub(crate) fn policy(policy: &str) -> Result<Policy, BenchError> {
    policy.parse().map_err(BenchError::Policy)
}

/// A toolbox factory for the policy: the 22 NIKA tools, telemetry sampled from deploy on.
pub(crate) fn tools(policy: Policy) -> Arc<dyn ToolboxFactory> {
    Arc::new(NikaToolsFactory::new().with_policy(policy))
}
