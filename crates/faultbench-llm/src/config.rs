//! Which provider serves a model, and how to reach it.
//!
//! Without any file, configuration works like the official SDKs: `OPENAI_API_KEY` and
//! `OPENAI_BASE_URL` for the `openai` provider (any OpenAI-compatible server),
//! `ANTHROPIC_API_KEY` and `ANTHROPIC_BASE_URL` for `anthropic`. A model name picks the
//! provider:
//!
//! 1. an entry in the file's `[models]` table (`[models."llama3.1:8b"] provider = "ollama"`);
//! 2. `PROVIDER/MODEL` when `PROVIDER` is a provider declared in the file (`ollama/qwen3:8b`);
//! 3. names starting with `claude` → `anthropic`;
//! 4. everything else → `openai`.
//!
//! A TOML file (`--llm-config FILE`, `$FAULTBENCH_LLM_CONFIG`, or
//! `~/.config/faultbench/llm.toml`) declares more providers and overrides built-in settings:
//!
//! ```toml
//! default_model = "gpt-5"
//! prices = "my-prices.toml"         # merged over the built-in price table
//! max_output_tokens = 4096          # output cap of every model call (the default)
//!
//! [retry]                           # for every provider (each may override)
//! max_attempts = 6
//! request_timeout_ms = 600000
//!
//! [providers.ollama]
//! kind = "openai"                   # wire format: openai | anthropic
//! base_url = "http://localhost:11434/v1"
//!
//! [providers.vllm]
//! kind = "openai"
//! base_url_env = "VLLM_BASE_URL"
//! api_key_env = "VLLM_API_KEY"
//! max_tokens_field = "max_tokens"
//!
//! [models."llama3.1:8b"]
//! provider = "ollama"
//! max_output_tokens = 1024          # this model's cap (model > provider > file > 4096)
//!
//! [models."gemma-3-270m"]           # a cap alone: routed as usual (here to `openai`)
//! max_output_tokens = 512
//! ```
//!
//! Replies are streamed (`stream = false` in a provider turns that off for servers that reject
//! it; a reply cut by the wall clock then keeps no text).

use crate::anthropic::AnthropicClient;
use crate::model::ChatModel;
use crate::openai::{MaxTokensField, OpenAiClient};
use crate::price::PriceTable;
use crate::retry::RetryPolicy;
use crate::types::LlmError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Largest LLM configuration or price table read.
pub const MAX_CONFIG_BYTES: u64 = 1 << 20;

/// The wire format a provider speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProviderKind {
    /// OpenAI Chat Completions (OpenAI, vLLM, Ollama, llama.cpp server, LiteLLM, …).
    Openai,
    /// Anthropic Messages.
    Anthropic,
}

/// The former name of [`ProviderOptions`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `ProviderOptions`; the old name goes in the next release")]
pub type ProviderConfig = ProviderOptions;

/// One provider's settings. Every field is optional: the built-in `openai` and `anthropic`
/// providers fill the gaps from their environment variables and official endpoints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProviderOptions {
    /// Wire format (required for providers other than `openai` and `anthropic`).
    pub kind: Option<ProviderKind>,
    /// Base URL (`https://api.openai.com/v1`, `http://localhost:8000/v1`, …).
    pub base_url: Option<String>,
    /// Environment variable holding the base URL (used when `base_url` is absent).
    pub base_url_env: Option<String>,
    /// Environment variable holding the API key.
    pub api_key_env: Option<String>,
    /// A literal API key (for local servers that want a dummy one; prefer `api_key_env`).
    pub api_key: Option<String>,
    /// OpenAI-format only: `max_completion_tokens` or `max_tokens`.
    pub max_tokens_field: Option<MaxTokensField>,
    /// The output cap of this provider's models (a model's own entry wins; accepted under its
    /// older name `default_max_tokens` too).
    #[serde(alias = "default_max_tokens")]
    pub max_output_tokens: Option<u32>,
    /// Stream replies (default true).
    pub stream: Option<bool>,
    /// Anthropic only: cache breakpoints on tools, system prompt and newest message.
    pub prompt_caching: Option<bool>,
    /// Extra headers for every request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// Retry policy for this provider.
    pub retry: Option<RetryPolicy>,
}

/// A model routed to a provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelRoute {
    /// Provider name (absent: the usual routing by name).
    pub provider: Option<String>,
    /// The provider's id for the model, when it differs from the name used on the CLI.
    pub model: Option<String>,
    /// This model's output cap per call.
    pub max_output_tokens: Option<u32>,
}

/// The former name of [`LlmOptions`] (one name per concept, issue 28).
#[deprecated(note = "renamed to `LlmOptions`; the old name goes in the next release")]
pub type LlmConfig = LlmOptions;

/// The LLM configuration (file contents plus built-in defaults).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LlmOptions {
    /// Model used when the caller names none.
    pub default_model: Option<String>,
    /// A price table merged over the defaults (relative to the config file).
    pub prices: Option<PathBuf>,
    /// Retry policy for every provider.
    pub retry: Option<RetryPolicy>,
    /// Output cap of every model call, unless a provider or model sets its own
    /// ([`crate::DEFAULT_MAX_OUTPUT_TOKENS`] when absent).
    pub max_output_tokens: Option<u32>,
    /// Providers by name.
    #[serde(default)]
    pub providers: BTreeMap<String, ProviderOptions>,
    /// Explicit model routes.
    #[serde(default)]
    pub models: BTreeMap<String, ModelRoute>,
    /// The file this came from.
    #[serde(skip)]
    pub source: Option<PathBuf>,
}

/// Where a model name leads: everything needed to build a client.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolved {
    /// Provider name (`openai`, `anthropic`, `ollama`, …).
    pub provider: String,
    /// Wire format.
    pub kind: ProviderKind,
    /// Base URL.
    pub base_url: String,
    /// API key, if any.
    pub api_key: Option<String>,
    /// The model id sent to the provider.
    pub model: String,
    /// The provider's settings.
    pub settings: ProviderOptions,
    /// Retry policy.
    pub retry: RetryPolicy,
    /// The output cap sent when a request sets none.
    pub max_output_tokens: u32,
}

const OPENAI_URL: &str = "https://api.openai.com/v1";
const ANTHROPIC_URL: &str = "https://api.anthropic.com";

fn builtin(name: &str) -> Option<ProviderOptions> {
    let (kind, url_env, key_env) = match name {
        "openai" => (ProviderKind::Openai, "OPENAI_BASE_URL", "OPENAI_API_KEY"),
        "anthropic" => (
            ProviderKind::Anthropic,
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_API_KEY",
        ),
        _ => return None,
    };
    Some(ProviderOptions {
        kind: Some(kind),
        base_url_env: Some(url_env.into()),
        api_key_env: Some(key_env.into()),
        ..Default::default()
    })
}

impl LlmOptions {
    /// Parses a config file's text.
    pub fn from_toml_str(text: &str) -> Result<Self, LlmError> {
        let cfg: LlmOptions =
            toml::from_str(text).map_err(|e| LlmError::Config(format!("LLM config: {e}")))?;
        for (name, p) in &cfg.providers {
            if p.kind.is_none() && builtin(name).is_none() {
                return Err(LlmError::Config(format!(
                    "LLM config: provider `{name}` needs `kind = \"openai\"` or `kind = \"anthropic\"`"
                )));
            }
        }
        for (model, route) in &cfg.models {
            if let Some(p) = &route.provider
                && !cfg.providers.contains_key(p)
                && builtin(p).is_none()
            {
                return Err(LlmError::Config(format!(
                    "LLM config: model `{model}` routes to unknown provider `{p}` (declare [providers.{p}])"
                )));
            }
        }
        let caps = std::iter::once(("max_output_tokens".to_string(), cfg.max_output_tokens))
            .chain(cfg.providers.iter().map(|(n, p)| {
                (
                    format!("providers.{n}.max_output_tokens"),
                    p.max_output_tokens,
                )
            }))
            .chain(cfg.models.iter().map(|(n, m)| {
                (
                    format!("models.\"{n}\".max_output_tokens"),
                    m.max_output_tokens,
                )
            }));
        for (key, cap) in caps {
            if cap == Some(0) {
                return Err(LlmError::Config(format!(
                    "LLM config: {key} must be at least 1 (output tokens per model call)"
                )));
            }
        }
        Ok(cfg)
    }

    /// Loads a config file (a regular file of at most [`MAX_CONFIG_BYTES`]).
    pub fn load(path: &Path) -> Result<Self, LlmError> {
        let text = faultbench_core::fsutil::read_regular_string_capped(path, MAX_CONFIG_BYTES)
            .map_err(|e| LlmError::Config(format!("LLM config {e}")))?;
        let mut cfg = LlmOptions::from_toml_str(&text)
            .map_err(|e| LlmError::Config(format!("{}: {e}", path.display())))?;
        cfg.source = Some(path.to_path_buf());
        Ok(cfg)
    }

    /// The configuration in effect: `explicit` if given, else `$FAULTBENCH_LLM_CONFIG`, else
    /// `$XDG_CONFIG_HOME/faultbench/llm.toml` or `~/.config/faultbench/llm.toml` when present,
    /// else built-in defaults only.
    pub fn discover(explicit: Option<&Path>) -> Result<Self, LlmError> {
        if let Some(p) = explicit {
            return LlmOptions::load(p);
        }
        if let Some(p) = std::env::var_os("FAULTBENCH_LLM_CONFIG") {
            return LlmOptions::load(Path::new(&p));
        }
        let dir = std::env::var_os("XDG_CONFIG_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")));
        if let Some(p) = dir
            .map(|d| d.join("faultbench/llm.toml"))
            .filter(|p| p.is_file())
        {
            return LlmOptions::load(&p);
        }
        Ok(LlmOptions::default())
    }

    /// Resolves `model` with the process environment.
    pub fn resolve(&self, model: &str) -> Result<Resolved, LlmError> {
        self.resolve_with(model, &|k| std::env::var(k).ok())
    }

    /// Resolves `model` with `env` as the environment (for tests and embedding).
    pub fn resolve_with(
        &self,
        model: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Resolved, LlmError> {
        let model = model.trim();
        if model.is_empty() {
            return Err(LlmError::Config(
                "no model named (pass --model NAME or set default_model in the LLM config)".into(),
            ));
        }
        let route = self.models.get(model);
        let (provider, id) =
            if let Some((p, route)) = route.and_then(|r| r.provider.clone().map(|p| (p, r))) {
                (p, route.model.clone().unwrap_or_else(|| model.to_string()))
            } else if let Some((p, rest)) = model
                .split_once('/')
                .filter(|(p, rest)| self.providers.contains_key(*p) && !rest.is_empty())
            {
                (p.to_string(), rest.to_string())
            } else if model.starts_with("claude") {
                ("anthropic".to_string(), model.to_string())
            } else {
                ("openai".to_string(), model.to_string())
            };
        let mut settings = builtin(&provider).unwrap_or_default();
        if let Some(file) = self.providers.get(&provider) {
            let b = settings.clone();
            settings = file.clone();
            settings.kind = settings.kind.or(b.kind);
            settings.base_url_env = settings.base_url_env.or(b.base_url_env);
            settings.api_key_env = settings.api_key_env.or(b.api_key_env);
        }
        let kind = settings.kind.ok_or_else(|| {
            LlmError::Config(format!(
                "provider `{provider}` is not declared in the LLM config"
            ))
        })?;
        let non_empty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
        let default_url = match provider.as_str() {
            "openai" => Some(OPENAI_URL.to_string()),
            "anthropic" => Some(ANTHROPIC_URL.to_string()),
            _ => None,
        };
        let base_url = non_empty(settings.base_url.clone())
            .or_else(|| non_empty(settings.base_url_env.as_deref().and_then(env)))
            .or(default_url)
            .ok_or_else(|| {
                LlmError::Config(format!(
                    "provider `{provider}` has no base URL (set base_url or base_url_env)"
                ))
            })?;
        let api_key = non_empty(settings.api_key_env.as_deref().and_then(env))
            .or_else(|| non_empty(settings.api_key.clone()));
        let official =
            base_url.contains("api.openai.com") || base_url.contains("api.anthropic.com");
        if api_key.is_none() && official {
            let var = settings
                .api_key_env
                .as_deref()
                .unwrap_or("the provider's key variable");
            return Err(LlmError::Config(format!(
                "model `{model}` goes to {provider} at {base_url}, but {var} is not set"
            )));
        }
        let retry = settings.retry.or(self.retry).unwrap_or_default();
        let max_output_tokens = route
            .and_then(|r| r.max_output_tokens)
            .or(settings.max_output_tokens)
            .or(self.max_output_tokens)
            .unwrap_or(crate::DEFAULT_MAX_OUTPUT_TOKENS);
        Ok(Resolved {
            provider,
            kind,
            base_url,
            api_key,
            model: id,
            settings,
            retry,
            max_output_tokens,
        })
    }

    /// A client for `model`.
    pub fn connect(&self, model: &str) -> Result<Arc<dyn ChatModel>, LlmError> {
        self.resolve(model)?.connect()
    }

    /// The price table: defaults, with the file's `prices` merged over them.
    pub fn prices(&self) -> Result<PriceTable, LlmError> {
        let mut table = PriceTable::defaults();
        if let Some(p) = &self.prices {
            let path = match (&self.source, p.is_relative()) {
                (Some(src), true) => src.parent().unwrap_or(Path::new(".")).join(p),
                _ => p.clone(),
            };
            table.merge(PriceTable::load(&path)?);
        }
        Ok(table)
    }
}

impl Resolved {
    /// Builds the client.
    pub fn connect(&self) -> Result<Arc<dyn ChatModel>, LlmError> {
        match self.kind {
            ProviderKind::Openai => {
                let mut c = OpenAiClient::new(&self.model, &self.base_url, self.api_key.clone())?
                    .named(&self.provider)
                    .with_retry(self.retry)
                    .with_max_output_tokens(self.max_output_tokens)
                    .with_streaming(self.settings.stream.unwrap_or(true));
                if let Some(f) = self.settings.max_tokens_field {
                    c = c.with_max_tokens_field(f);
                }
                for (k, v) in &self.settings.headers {
                    c = c.with_header(k, v);
                }
                Ok(Arc::new(c))
            }
            ProviderKind::Anthropic => {
                let mut c = AnthropicClient::new(
                    &self.model,
                    &self.base_url,
                    self.api_key.clone().unwrap_or_default(),
                )?
                .named(&self.provider)
                .with_retry(self.retry)
                .with_max_output_tokens(self.max_output_tokens)
                .with_streaming(self.settings.stream.unwrap_or(true));
                if let Some(on) = self.settings.prompt_caching {
                    c = c.with_prompt_caching(on);
                }
                for (k, v) in &self.settings.headers {
                    c = c.with_header(k, v);
                }
                Ok(Arc::new(c))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn sdk_style_environment() {
        let cfg = LlmOptions::default();
        let e = env(&[("OPENAI_API_KEY", "sk-1"), ("ANTHROPIC_API_KEY", "ak-2")]);
        let r = cfg.resolve_with("gpt-5", &e).unwrap();
        assert_eq!(
            (r.provider.as_str(), r.kind),
            ("openai", ProviderKind::Openai)
        );
        assert_eq!(r.base_url, OPENAI_URL);
        assert_eq!(r.api_key.as_deref(), Some("sk-1"));
        let r = cfg.resolve_with("claude-sonnet-4-6", &e).unwrap();
        assert_eq!(
            (r.provider.as_str(), r.kind),
            ("anthropic", ProviderKind::Anthropic)
        );
        assert_eq!(r.api_key.as_deref(), Some("ak-2"));
        let e = env(&[("OPENAI_BASE_URL", "http://localhost:8000/v1")]);
        let r = cfg.resolve_with("Qwen/Qwen3-8B", &e).unwrap();
        assert_eq!(r.base_url, "http://localhost:8000/v1");
        assert_eq!(
            r.model, "Qwen/Qwen3-8B",
            "slash names are model ids unless a provider is declared"
        );
        assert_eq!(r.api_key, None, "local servers need no key");
    }

    #[test]
    fn missing_key_for_an_official_endpoint_is_a_clear_error() {
        let e = LlmOptions::default()
            .resolve_with("claude-sonnet-4-6", &env(&[]))
            .unwrap_err();
        assert!(
            e.to_string().contains("ANTHROPIC_API_KEY is not set"),
            "{e}"
        );
        assert!(LlmOptions::default().resolve_with("  ", &env(&[])).is_err());
    }

    #[test]
    fn file_routes_and_overrides() {
        let cfg = LlmOptions::from_toml_str(
            r#"
            default_model = "gpt-5"
            [retry]
            max_attempts = 2
            [providers.ollama]
            kind = "openai"
            base_url = "http://localhost:11434/v1"
            [providers.anthropic]
            base_url = "http://proxy:4000"
            prompt_caching = false
            [models."llama3.1:8b"]
            provider = "ollama"
            [models.sonnet]
            provider = "anthropic"
            model = "claude-sonnet-4-6"
            "#,
        )
        .unwrap();
        let e = env(&[("ANTHROPIC_BASE_URL", "http://ignored")]);
        let r = cfg.resolve_with("llama3.1:8b", &e).unwrap();
        assert_eq!(
            (r.provider.as_str(), r.model.as_str()),
            ("ollama", "llama3.1:8b")
        );
        assert_eq!(r.retry.max_attempts, 2);
        let r = cfg.resolve_with("ollama/qwen3:8b", &e).unwrap();
        assert_eq!(
            (r.provider.as_str(), r.model.as_str()),
            ("ollama", "qwen3:8b")
        );
        let r = cfg.resolve_with("sonnet", &e).unwrap();
        assert_eq!(r.model, "claude-sonnet-4-6");
        assert_eq!(r.base_url, "http://proxy:4000", "file beats environment");
        assert_eq!(r.settings.prompt_caching, Some(false));
        assert!(r.connect().is_ok());
    }

    #[test]
    fn output_caps_model_over_provider_over_file_over_default() {
        let e = env(&[("OPENAI_BASE_URL", "http://127.0.0.1:8089/v1")]);
        let r = LlmOptions::default().resolve_with("qwen", &e).unwrap();
        assert_eq!(r.max_output_tokens, crate::DEFAULT_MAX_OUTPUT_TOKENS);
        let cfg = LlmOptions::from_toml_str(
            r#"
            max_output_tokens = 2000
            [providers.ollama]
            kind = "openai"
            base_url = "http://localhost:11434/v1"
            max_output_tokens = 1000
            stream = false
            [providers.anthropic]
            base_url = "http://proxy:4000"
            default_max_tokens = 300
            [models."gemma-3-270m"]
            max_output_tokens = 256
            [models."llama3.1:8b"]
            provider = "ollama"
            "#,
        )
        .unwrap();
        let r = cfg.resolve_with("gemma-3-270m", &e).unwrap();
        assert_eq!((r.provider.as_str(), r.max_output_tokens), ("openai", 256));
        assert_eq!(
            r.base_url, "http://127.0.0.1:8089/v1",
            "a cap alone keeps the routing"
        );
        assert_eq!(
            cfg.resolve_with("llama3.1:8b", &e)
                .unwrap()
                .max_output_tokens,
            1000
        );
        assert_eq!(
            cfg.resolve_with("other", &e).unwrap().max_output_tokens,
            2000
        );
        assert_eq!(
            cfg.resolve_with("claude-x", &e).unwrap().max_output_tokens,
            300,
            "the older key name still works"
        );
        let model = cfg
            .resolve_with("llama3.1:8b", &e)
            .unwrap()
            .connect()
            .unwrap();
        assert_eq!(model.max_output_tokens(), Some(1000));
        let e = LlmOptions::from_toml_str("[models.m]\nmax_output_tokens = 0").unwrap_err();
        assert!(
            e.to_string()
                .contains("models.\"m\".max_output_tokens must be at least 1"),
            "{e}"
        );
    }

    #[test]
    fn bad_files_say_what_is_wrong() {
        let e = LlmOptions::from_toml_str("[providers.x]\nbase_url = \"http://a\"").unwrap_err();
        assert!(e.to_string().contains("kind"), "{e}");
        let e = LlmOptions::from_toml_str("[models.m]\nprovider = \"nope\"").unwrap_err();
        assert!(e.to_string().contains("unknown provider `nope`"), "{e}");
        let e = LlmOptions::from_toml_str("defualt_model = \"x\"").unwrap_err();
        assert!(e.to_string().contains("defualt_model"), "{e}");
        let e = LlmOptions::from_toml_str("[providers.x]\nkind = \"gemini\"").unwrap_err();
        assert!(e.to_string().contains("gemini"), "{e}");
    }
}
