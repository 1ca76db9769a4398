//! Building agents from names, for the CLI and for configuration files.
//!
//! | name | agent | default model |
//! |---|---|---|
//! | `baseline` | [`BaselineAgent`] | none |
//! | `react` | [`ReactAgent`](crate::ReactAgent) | `gpt-5` (the paper's) |
//! | `sade` | [`SadeAgent`](crate::SadeAgent) | `claude-sonnet-4-6` (the paper's) |
//! | `external:NAME` | [`ExternalAgent`] with template `NAME` | the CLI's own |
//!
//! [`builtin_agents`] registers them in an [`AgentRegistry`]; a program adds its own agents
//! next to them and gets every name-driven feature (the CLI's `--agents`, run paths, reports):
//!
//! ```
//! use faultbench_agents::registry::{AgentOptions, builtin_agents};
//! # use faultbench_core::agent::{Agent, AgentInput, AgentOutcome};
//! # use faultbench_core::toolbox::Toolbox;
//! # use std::sync::Arc;
//! # struct MyAgent;
//! # #[async_trait::async_trait]
//! # impl Agent for MyAgent {
//! #     fn name(&self) -> &str { "mine" }
//! #     async fn run(&self, _: &AgentInput, _: Arc<dyn Toolbox>) -> AgentOutcome { AgentOutcome::default() }
//! # }
//! let mut registry = builtin_agents();
//! registry.agent("mine", || MyAgent);
//! let agent = registry.build("mine", &AgentOptions::default()).unwrap();
//! assert_eq!(agent.name(), "mine");
//! assert!(registry.names().contains(&"external:NAME".to_string()));
//! ```

use crate::{
    AgentStyle, BaselineAgent, ExternalAgent, ExternalTemplates, LlmAgent, ReactStyle, SadeStyle,
};
use faultbench_core::agent::{Agent, TicketHint};
use faultbench_core::judge::BoxError;
use faultbench_core::registry::{Registry, RegistryError};
use faultbench_llm::{LlmOptions, PriceTable};
use std::sync::Arc;

/// The built-in agent names (`external:NAME` stands for any template).
pub const AGENT_NAMES: [&str; 4] = ["baseline", "react", "sade", "external:NAME"];

/// What agents are built with.
#[derive(Debug, Clone, Default)]
pub struct AgentOptions {
    /// Model name (`--model`); each agent has a default.
    pub model: Option<String>,
    /// Provider configuration.
    pub llm: LlmOptions,
    /// Price table (default: the config's).
    pub prices: Option<PriceTable>,
    /// External CLI templates (default: the built-in ones).
    pub external: Option<ExternalTemplates>,
    /// Output cap per model reply.
    pub max_output_tokens: Option<u32>,
    /// Whether the LLM and external agents are told the ticket may be inaccurate (default:
    /// no, as in the paper).
    pub ticket_hint: TicketHint,
}

/// Agents by name, built with [`AgentOptions`].
pub type AgentRegistry = Registry<dyn Agent, AgentOptions>;

/// The built-in agents: `baseline`, `react`, `sade` and the family `external:NAME` (templates
/// from [`AgentOptions::external`], else the built-in ones).
pub fn builtin_agents() -> AgentRegistry {
    let mut r = AgentRegistry::new("agent");
    r.agent("baseline", BaselineAgent::new);
    r.register("react", |opts: &AgentOptions| {
        llm_agent::<ReactStyle>(opts, "gpt-5")
    });
    r.register("sade", |opts: &AgentOptions| {
        llm_agent::<SadeStyle>(opts, "claude-sonnet-4-6")
    });
    r.register_family("external", |cli: &str, opts: &AgentOptions| {
        let defaults;
        let templates = match &opts.external {
            Some(t) => t,
            None => {
                defaults = ExternalTemplates::defaults();
                &defaults
            }
        };
        let t = templates.get(cli)?.clone();
        let mut a = ExternalAgent::new(cli, t).with_ticket_hint(opts.ticket_hint);
        if let Some(m) = &opts.model {
            a = a.with_model(m);
        }
        Ok(Arc::new(a) as Arc<dyn Agent>)
    });
    r
}

/// An LLM agent of style `S` on the options' model (`default_model` when they name none).
fn llm_agent<S: AgentStyle>(
    opts: &AgentOptions,
    default_model: &str,
) -> Result<Arc<dyn Agent>, BoxError> {
    let (model, prices) = llm_model(opts, default_model)?;
    let mut a = LlmAgent::<S>::new(model)
        .with_prices(prices)
        .with_ticket_hint(opts.ticket_hint);
    if let Some(m) = opts.max_output_tokens {
        a = a.with_max_output_tokens(m);
    }
    Ok(Arc::new(a))
}

/// The model client and prices an LLM agent is built with: `--model`, else the configuration's
/// default model, else the agent's own default.
fn llm_model(
    opts: &AgentOptions,
    default: &str,
) -> Result<(Arc<dyn faultbench_llm::ChatModel>, PriceTable), BoxError> {
    let name = opts
        .model
        .clone()
        .or_else(|| opts.llm.default_model.clone())
        .unwrap_or_else(|| default.to_string());
    let model = opts.llm.connect(&name)?;
    let prices = match &opts.prices {
        Some(p) => p.clone(),
        None => opts.llm.prices()?,
    };
    Ok((model, prices))
}

/// Builds the built-in agent named `spec` (see [`builtin_agents`] for a registry that also
/// holds your own).
///
/// ```
/// use faultbench_agents::registry::{AgentOptions, build_agent};
/// let agent = build_agent("baseline", &AgentOptions::default()).unwrap();
/// assert_eq!(agent.name(), "baseline");
/// assert!(build_agent("gpt-agent", &AgentOptions::default()).err().unwrap().to_string().contains("react"));
/// ```
pub fn build_agent(spec: &str, opts: &AgentOptions) -> Result<Arc<dyn Agent>, RegistryError> {
    builtin_agents().build(spec, opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_every_kind() {
        let mut opts = AgentOptions {
            llm: LlmOptions::from_toml_str(
                "[providers.openai]\nbase_url = \"http://127.0.0.1:9/v1\"\n[providers.anthropic]\nbase_url = \"http://127.0.0.1:9\"\n",
            )
            .unwrap(),
            ..Default::default()
        };
        let react = build_agent("react", &opts).unwrap();
        assert_eq!((react.name(), react.model()), ("react", Some("gpt-5")));
        let sade = build_agent("sade", &opts).unwrap();
        assert_eq!(sade.model(), Some("claude-sonnet-4-6"));
        opts.model = Some("claude-opus-4-1".into());
        assert_eq!(
            build_agent("react", &opts).unwrap().model(),
            Some("claude-opus-4-1")
        );
        let ext = build_agent("external:claude-code", &opts).unwrap();
        assert_eq!(ext.name(), "external:claude-code");
        let Err(e) = build_agent("external:cursor", &opts) else {
            panic!("built")
        };
        assert!(e.to_string().contains("claude-code"), "{e}");
        assert!(build_agent("external:", &opts).is_err());
    }

    #[test]
    fn a_missing_key_is_reported_at_build_time() {
        // The official endpoint without a key: a clear error, before any run starts.
        let opts = AgentOptions {
            model: Some("gpt-5".into()),
            ..Default::default()
        };
        if std::env::var_os("OPENAI_API_KEY").is_none()
            && std::env::var_os("OPENAI_BASE_URL").is_none()
        {
            let Err(e) = build_agent("react", &opts) else {
                panic!("built")
            };
            assert!(e.to_string().contains("OPENAI_API_KEY"), "{e}");
        }
    }
}
