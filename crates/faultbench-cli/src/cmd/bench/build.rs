//! Turning names on the command line into emulators, agents, judges and toolboxes.

use anyhow::{Context, bail};
use faultbench_core::pipeline::ToolboxFactory;
use faultbench_core::{Agent, Emulator, Judge};
use faultbench_emu::tools::{NikaToolsFactory, Policy};
use faultbench_llm::LlmConfig;
use std::path::Path;
use std::sync::Arc;

/// The emulator named by `--emulator`.
pub fn emulator(name: &str) -> anyhow::Result<Arc<dyn Emulator>> {
    match name {
        "mock" => Ok(Arc::new(faultbench_emu::mock::MockEmulator::new())),
        "netns" => crate::cmd::backends::netns(),
        "kathara" => crate::cmd::backends::kathara(),
        other => bail!("unknown emulator `{other}` (expected netns, kathara or mock)"),
    }
}

/// The judge named by `--judge`.
pub fn judge(name: &str, llm: &LlmConfig, model: Option<&str>) -> anyhow::Result<Arc<dyn Judge>> {
    match name {
        "rubric" => Ok(Arc::new(faultbench_judge::RubricJudge::new())),
        "llm" => crate::cmd::backends::llm_judge(llm, model),
        other => bail!("unknown judge `{other}` (expected rubric or llm)"),
    }
}

/// Default model of an LLM agent (the paper's: ReAct on gpt-5, SADE on claude-sonnet-4-6).
fn default_model(agent: &str) -> &'static str {
    match agent {
        "react" => "gpt-5",
        _ => "claude-sonnet-4-6",
    }
}

/// One agent named in `--agents`, with the label its runs are recorded under.
pub struct AgentChoice {
    /// `baseline`, `react`, `sade`, `external:NAME`.
    pub label: String,
    /// The agent.
    pub agent: Arc<dyn Agent>,
    /// Its model, if it uses one.
    pub model: Option<String>,
}

/// Builds the agents of `--agents`.
pub fn agents(
    names: &[String],
    llm: &LlmConfig,
    model: Option<&str>,
    dry_run: bool,
) -> anyhow::Result<Vec<AgentChoice>> {
    let mut out = Vec::new();
    for name in names {
        let name = name.trim();
        let choice = match name {
            "baseline" => AgentChoice {
                label: name.into(),
                agent: crate::cmd::backends::baseline_agent()?,
                model: None,
            },
            "react" | "sade" => {
                let m = model.unwrap_or(default_model(name)).to_string();
                let client = if dry_run {
                    Arc::new(faultbench_llm::ScriptedModel::new(m.clone(), Vec::new()))
                        as Arc<dyn faultbench_llm::ChatModel>
                } else {
                    llm.connect(&m)
                        .with_context(|| format!("agent `{name}`: cannot set up model `{m}`"))?
                };
                let prices = llm.prices().context("price table")?;
                let agent: Arc<dyn Agent> = if name == "react" {
                    Arc::new(faultbench_agents::ReactAgent::new(client).with_prices(prices))
                } else {
                    Arc::new(faultbench_agents::SadeAgent::new(client).with_prices(prices))
                };
                AgentChoice {
                    label: name.into(),
                    agent,
                    model: Some(m),
                }
            }
            n if n.starts_with("external:") => {
                let (agent, model) =
                    crate::cmd::backends::external_agent(&n["external:".len()..], model)?;
                AgentChoice {
                    label: n.into(),
                    agent,
                    model,
                }
            }
            other => {
                bail!("unknown agent `{other}` (expected baseline, react, sade or external:NAME)")
            }
        };
        out.push(choice);
    }
    if out.is_empty() {
        bail!("no agent given (use --agents baseline,react,sade,external:NAME)");
    }
    Ok(out)
}

/// A toolbox factory for `--policy`: the 22 NIKA tools, telemetry sampled from deploy on.
pub fn tools(policy: &str) -> anyhow::Result<Arc<dyn ToolboxFactory>> {
    let policy: Policy = policy
        .parse()
        .map_err(|e: String| anyhow::anyhow!("--policy: {e}"))?;
    Ok(Arc::new(NikaToolsFactory::new().with_policy(policy)))
}

/// Loads the LLM configuration (`--llm-config`, else `FAULTBENCH_LLM_CONFIG`, else defaults).
pub fn llm_config(path: Option<&Path>) -> anyhow::Result<LlmConfig> {
    LlmConfig::discover(path).context("LLM configuration")
}
