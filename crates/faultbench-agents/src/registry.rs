//! Building agents from names, for the CLI and for configuration files.
//!
//! | name | agent | default model |
//! |---|---|---|
//! | `baseline` | [`BaselineAgent`] | none |
//! | `react` | [`ReactAgent`] | `gpt-5` (the paper's) |
//! | `sade` | [`SadeAgent`] | `claude-sonnet-4-6` (the paper's) |
//! | `external:NAME` | [`ExternalAgent`] with template `NAME` | the CLI's own |

use crate::{BaselineAgent, ExternalAgent, ExternalTemplates, ReactAgent, SadeAgent};
use faultbench_core::agent::{Agent, TicketHint};
use faultbench_llm::{LlmConfig, PriceTable};
use std::sync::Arc;

/// The agent names [`build_agent`] accepts (`external:NAME` stands for any template).
pub const AGENT_NAMES: [&str; 4] = ["baseline", "react", "sade", "external:NAME"];

/// What agents are built with.
#[derive(Debug, Clone, Default)]
pub struct AgentOptions {
    /// Model name (`--model`); each agent has a default.
    pub model: Option<String>,
    /// Provider configuration.
    pub llm: LlmConfig,
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

/// Why an agent could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BuildError(pub String);

/// Builds the agent named `spec`.
///
/// ```
/// use faultbench_agents::registry::{AgentOptions, build_agent};
/// let agent = build_agent("baseline", &AgentOptions::default()).unwrap();
/// assert_eq!(agent.name(), "baseline");
/// assert!(build_agent("gpt-agent", &AgentOptions::default()).err().unwrap().to_string().contains("react"));
/// ```
pub fn build_agent(spec: &str, opts: &AgentOptions) -> Result<Arc<dyn Agent>, BuildError> {
    let spec = spec.trim();
    let llm_model = |default: &str| -> Result<_, BuildError> {
        let name = opts
            .model
            .clone()
            .or_else(|| opts.llm.default_model.clone())
            .unwrap_or_else(|| default.to_string());
        let model = opts
            .llm
            .connect(&name)
            .map_err(|e| BuildError(format!("agent `{spec}`: {e}")))?;
        let prices = match &opts.prices {
            Some(p) => p.clone(),
            None => opts.llm.prices().map_err(|e| BuildError(e.to_string()))?,
        };
        Ok((model, prices))
    };
    match spec {
        "baseline" => Ok(Arc::new(BaselineAgent::new())),
        "react" => {
            let (model, prices) = llm_model("gpt-5")?;
            let mut a = ReactAgent::new(model)
                .with_prices(prices)
                .with_ticket_hint(opts.ticket_hint);
            if let Some(m) = opts.max_output_tokens {
                a = a.with_max_output_tokens(m);
            }
            Ok(Arc::new(a))
        }
        "sade" => {
            let (model, prices) = llm_model("claude-sonnet-4-6")?;
            let mut a = SadeAgent::new(model)
                .with_prices(prices)
                .with_ticket_hint(opts.ticket_hint);
            if let Some(m) = opts.max_output_tokens {
                a = a.with_max_output_tokens(m);
            }
            Ok(Arc::new(a))
        }
        other => match other.strip_prefix("external:") {
            Some(cli) if !cli.is_empty() => {
                let templates = opts
                    .external
                    .clone()
                    .unwrap_or_else(ExternalTemplates::defaults);
                let t = templates.get(cli).map_err(|e| BuildError(e.0))?.clone();
                let mut a = ExternalAgent::new(cli, t).with_ticket_hint(opts.ticket_hint);
                if let Some(m) = &opts.model {
                    a = a.with_model(m);
                }
                Ok(Arc::new(a))
            }
            _ => Err(BuildError(format!(
                "unknown agent `{other}`; choose one of {}",
                AGENT_NAMES.join(", ")
            ))),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_every_kind() {
        let mut opts = AgentOptions {
            llm: LlmConfig::from_toml_str(
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
        assert!(e.0.contains("claude-code"), "{e}");
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
            assert!(e.0.contains("OPENAI_API_KEY"), "{e}");
        }
    }
}
