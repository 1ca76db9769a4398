//! Turning names on the command line into emulators, agents, judges and toolboxes.

use anyhow::{Context, bail};
use faultbench_agents::ExternalTemplates;
use faultbench_agents::registry::{AgentOptions, builtin_agents};
use faultbench_core::agent::TicketHint;
use faultbench_core::pipeline::ToolboxFactory;
use faultbench_core::{Agent, Emulator, Judge};
use faultbench_emu::registry::{EmulatorOptions, builtin_emulators};
use faultbench_emu::tools::{NikaToolsFactory, Policy};
use faultbench_judge::registry::{JudgeOptions, builtin_judges};
use faultbench_llm::LlmConfig;
use std::path::Path;
use std::sync::Arc;

/// The emulator named by `--emulator`, from the emulator registry. Kathará is configured by
/// the TOML file in `FAULTBENCH_KATHARA_CONFIG` if set.
pub fn emulator(name: &str) -> anyhow::Result<Arc<dyn Emulator>> {
    let opts = EmulatorOptions {
        kathara_config: std::env::var_os("FAULTBENCH_KATHARA_CONFIG").map(Into::into),
    };
    Ok(builtin_emulators().build(name, &opts)?)
}

/// The judge of `--judge`, with the kind it was named by.
pub struct JudgeChoice {
    /// `rubric` or `llm`.
    pub kind: String,
    /// The judge.
    pub judge: Arc<dyn Judge>,
}

/// The judge named by `--judge`. The rubric judge learns the intentional policies (ACLs, NAT,
/// blocked pairs…) documented in the benchmark's own scenarios, so that blaming them counts as
/// over-diagnosis. A dry run needs no provider key and writes nothing: the LLM judge is planned
/// with an offline stand-in of the same model and no verdict cache.
pub fn judge(
    name: &str,
    llm: &LlmConfig,
    model: Option<&str>,
    scenarios: &[Arc<faultbench_core::ScenarioFile>],
    dry_run: bool,
) -> anyhow::Result<JudgeChoice> {
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
    let judge = builtin_judges().build(name, &opts)?;
    Ok(JudgeChoice {
        kind: name.trim().to_string(),
        judge,
    })
}

/// One agent named in `--agents`, with the label its runs are recorded under.
pub struct AgentChoice {
    /// `baseline`, `react`, `sade`, `external:NAME`.
    pub label: String,
    /// The agent.
    pub agent: Arc<dyn Agent>,
    /// Its model, if it uses one.
    pub model: Option<String>,
    /// The model its cost is estimated with: its own, or for an external CLI without `--model`
    /// the template's `default_model` (what the CLI is known to use).
    pub priced_model: Option<String>,
}

/// Builds the agents of `--agents`. A dry run needs no provider key: LLM agents are planned with
/// an offline stand-in of the same model.
pub fn agents(
    names: &[String],
    llm: &LlmConfig,
    model: Option<&str>,
    max_output_tokens: Option<u32>,
    dry_run: bool,
    ticket_hint: TicketHint,
    templates: Option<&Path>,
) -> anyhow::Result<Vec<AgentChoice>> {
    let opts = AgentOptions {
        model: model.map(str::to_string),
        llm: llm.clone(),
        ticket_hint,
        max_output_tokens,
        external: Some(ExternalTemplates::discover(templates)?),
        ..Default::default()
    };
    let registry = builtin_agents();
    let mut out = Vec::new();
    for name in names.iter().map(|n| n.trim()) {
        let agent = match registry.build(name, &opts) {
            Ok(a) => a,
            Err(e) if dry_run && matches!(name, "react" | "sade") => {
                // The model the real build would use: --model, the config's default, the
                // agent's own default.
                let m = model
                    .or(llm.default_model.as_deref())
                    .unwrap_or(if name == "react" {
                        "gpt-5"
                    } else {
                        "claude-sonnet-4-6"
                    });
                eprintln!("note: {e} (ignored for --dry-run)");
                let offline = Arc::new(faultbench_llm::ScriptedModel::new(m, Vec::new()));
                if name == "react" {
                    Arc::new(
                        faultbench_agents::ReactAgent::new(offline).with_ticket_hint(ticket_hint),
                    ) as Arc<dyn Agent>
                } else {
                    Arc::new(
                        faultbench_agents::SadeAgent::new(offline).with_ticket_hint(ticket_hint),
                    )
                }
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
        bail!("no agent given (use --agents baseline,react,sade,external:NAME)");
    }
    if let Some(delay) = bench_agent_delay()? {
        eprintln!(
            "note: {DELAY_ENV}={}: every agent waits {} s before it starts (a throughput measurement, not a benchmark result)",
            delay.as_secs_f64(),
            delay.as_secs_f64()
        );
        for a in &mut out {
            a.agent = Arc::new(Delayed {
                inner: a.agent.clone(),
                delay,
            });
        }
    }
    Ok(out)
}

/// Bench-only knob: every agent waits this many seconds before it starts. It lets
/// `scripts/fresh-lab-throughput.sh` measure lab preparation against an agent at least as
/// slow as a topology's bring-up; it is not an agent of the benchmark.
pub const DELAY_ENV: &str = "FAULTBENCH_AGENT_DELAY_SECS";

fn bench_agent_delay() -> anyhow::Result<Option<std::time::Duration>> {
    let Ok(v) = std::env::var(DELAY_ENV) else {
        return Ok(None);
    };
    let secs: f64 = v
        .trim()
        .parse()
        .ok()
        .filter(|s: &f64| s.is_finite() && (0.0..=3600.0).contains(s))
        .with_context(|| format!("{DELAY_ENV}=`{v}`: expected seconds between 0 and 3600"))?;
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

/// A toolbox factory for `--policy`: the 22 NIKA tools, telemetry sampled from deploy on.
pub fn tools(policy: &str) -> anyhow::Result<Arc<dyn ToolboxFactory>> {
    let policy: Policy = policy
        .parse()
        .map_err(|e: faultbench_emu::tools::UnknownPolicy| anyhow::anyhow!("--policy: {e}"))?;
    Ok(Arc::new(NikaToolsFactory::new().with_policy(policy)))
}

/// Loads the LLM configuration (`--llm-config`, else `FAULTBENCH_LLM_CONFIG`, else defaults).
pub fn llm_config(path: Option<&Path>) -> anyhow::Result<LlmConfig> {
    LlmConfig::discover(path).context("LLM configuration")
}
