//! Turning token usage into dollars.
//!
//! A [`PriceTable`] maps model names to [`Price`]s in US dollars per million tokens. The
//! defaults (`data/prices.toml`, embedded) cover the paper's three models; users load their own
//! TOML on top. Unknown models have no price: the cost is `None`, never a made-up zero.

use faultbench_core::Usage;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;

use crate::types::LlmError;

const DEFAULT_PRICES: &str = include_str!("../data/prices.toml");

/// Prices of one model, USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Price {
    /// Uncached input.
    pub input: f64,
    /// Input read from the cache (defaults to `input`).
    #[serde(default)]
    pub cached_input: Option<f64>,
    /// Input written to the cache (defaults to `input`).
    #[serde(default)]
    pub cache_write: Option<f64>,
    /// Output (reasoning included).
    pub output: f64,
}

impl Price {
    /// The cost of `usage` in USD.
    pub fn cost(&self, usage: &Usage) -> f64 {
        (usage.input_tokens as f64 * self.input
            + usage.cache_read_tokens as f64 * self.cached_input.unwrap_or(self.input)
            + usage.cache_write_tokens as f64 * self.cache_write.unwrap_or(self.input)
            + usage.output_tokens as f64 * self.output)
            / 1e6
    }
}

/// Model name → price.
///
/// ```
/// use faultbench_llm::{PriceTable, Usage};
///
/// let prices = PriceTable::defaults();
/// // The release's GPT-5 formula: (in·1.25 + cached·0.125 + out·10) / 1e6.
/// let u = Usage { input_tokens: 100_000, cache_read_tokens: 400_000, cache_write_tokens: 0, output_tokens: 10_000 };
/// let cost = prices.cost("gpt-5-2025-08-07", &u).unwrap();
/// assert!((cost - (0.125 + 0.05 + 0.1)).abs() < 1e-12);
/// assert!(prices.cost("my-local-llama", &u).is_none());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceTable {
    /// Prices by model name.
    #[serde(default)]
    pub models: BTreeMap<String, Price>,
}

impl PriceTable {
    /// The embedded defaults (gpt-5, gpt-5-mini, claude-sonnet-4-6).
    pub fn defaults() -> Self {
        // The embedded file is checked by a unit test; fall back to empty rather than panic.
        PriceTable::from_toml_str(DEFAULT_PRICES).unwrap_or_default()
    }

    /// The default table as TOML text (a starting point for users' own files).
    pub fn default_toml() -> &'static str {
        DEFAULT_PRICES
    }

    /// Parses a price table.
    pub fn from_toml_str(text: &str) -> Result<Self, LlmError> {
        let table: PriceTable =
            toml::from_str(text).map_err(|e| LlmError::Config(format!("price table: {e}")))?;
        for (name, p) in &table.models {
            let all = [Some(p.input), p.cached_input, p.cache_write, Some(p.output)];
            if all.iter().flatten().any(|x| !x.is_finite() || *x < 0.0) {
                return Err(LlmError::Config(format!(
                    "price table: prices of `{name}` must be non-negative numbers (USD per million tokens)"
                )));
            }
        }
        Ok(table)
    }

    /// Loads a TOML price table from a file.
    pub fn load(path: &Path) -> Result<Self, LlmError> {
        let text = faultbench_core::fsutil::read_regular_string_capped(
            path,
            crate::config::MAX_CONFIG_BYTES,
        )
        .map_err(|e| LlmError::Config(format!("price table {e}")))?;
        PriceTable::from_toml_str(&text)
            .map_err(|e| LlmError::Config(format!("{}: {e}", path.display())))
    }

    /// Adds or replaces entries from `other`.
    pub fn merge(&mut self, other: PriceTable) {
        self.models.extend(other.models);
    }

    /// The price for `model`: exact name, else the longest entry that `model` extends with a
    /// separator (`gpt-5-2025-08-07` → `gpt-5`).
    pub fn price_for(&self, model: &str) -> Option<&Price> {
        if let Some(p) = self.models.get(model) {
            return Some(p);
        }
        self.models
            .iter()
            .filter(|(name, _)| {
                model.len() > name.len()
                    && model.starts_with(name.as_str())
                    && matches!(model.as_bytes()[name.len()], b'-' | b':' | b'@' | b'.')
            })
            .max_by_key(|(name, _)| name.len())
            .map(|(_, p)| p)
    }

    /// The cost of `usage` on `model`, when the model is priced.
    pub fn cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        self.price_for(model).map(|p| p.cost(usage))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse_and_cover_the_papers_models() {
        let t = PriceTable::from_toml_str(DEFAULT_PRICES).unwrap();
        for m in ["gpt-5", "gpt-5-mini", "claude-sonnet-4-6"] {
            assert!(t.models.contains_key(m), "{m}");
        }
        assert_eq!(t.models["gpt-5"].output, 10.0);
    }

    #[test]
    fn longest_prefix_with_separator() {
        let t = PriceTable::defaults();
        assert_eq!(t.price_for("gpt-5-mini-2025-08-07").unwrap().input, 0.25);
        assert_eq!(t.price_for("gpt-5-2025-08-07").unwrap().input, 1.25);
        assert!(t.price_for("gpt-50").is_none());
        assert!(t.price_for("gpt-").is_none());
    }

    #[test]
    fn anthropic_cache_accounting() {
        let t = PriceTable::defaults();
        let u = Usage {
            input_tokens: 1_000_000,
            cache_read_tokens: 1_000_000,
            cache_write_tokens: 1_000_000,
            output_tokens: 1_000_000,
        };
        let c = t.cost("claude-sonnet-4-6", &u).unwrap();
        assert!((c - (3.0 + 0.3 + 3.75 + 15.0)).abs() < 1e-9);
    }

    #[test]
    fn bad_tables_are_refused() {
        assert!(PriceTable::from_toml_str("[models.x]\ninput = -1\noutput = 1").is_err());
        let e = PriceTable::from_toml_str("[models.x]\ninput = 1").unwrap_err();
        assert!(e.to_string().contains("output"), "{e}");
        let e =
            PriceTable::from_toml_str("[models.x]\ninput = 1\noutput = 2\nouptut = 3").unwrap_err();
        assert!(e.to_string().contains("ouptut"), "{e}");
    }
}
