//! Reading an external CLI's stdout: the final answer, and tokens, cost and the max-turns
//! signal when the CLI reports them.

use super::OutputFormat;
use faultbench_core::Usage;
use serde_json::Value;

/// What the CLI reported.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CliResult {
    /// The final message.
    pub final_text: String,
    /// Tokens, when reported.
    pub usage: Usage,
    /// Cost in USD, when reported.
    pub cost_usd: Option<f64>,
    /// The CLI stopped at its turn limit.
    pub hit_max_turns: bool,
    /// An error the CLI reported.
    pub error: Option<String>,
    /// The model, when reported.
    pub model: Option<String>,
}

/// Parses `stdout` (and `stderr` for the max-turns signal) in `format`.
///
/// ```
/// use faultbench_agents::external::{OutputFormat, parse_output};
/// let out = r#"{"type":"result","subtype":"success","is_error":false,"num_turns":7,
///   "result":"=== DIAGNOSIS ===\nis_anomaly: false\n=== END ===","total_cost_usd":0.21,
///   "usage":{"input_tokens":40,"cache_creation_input_tokens":9000,"cache_read_input_tokens":52000,"output_tokens":1300}}"#;
/// let r = parse_output(OutputFormat::ClaudeJson, out, "");
/// assert_eq!(r.usage.cache_read_tokens, 52000);
/// assert_eq!(r.cost_usd, Some(0.21));
/// assert!(r.final_text.contains("is_anomaly: false"));
/// ```
pub fn parse_output(format: OutputFormat, stdout: &str, stderr: &str) -> CliResult {
    let max_turns_text = |s: &str| {
        let l = s.to_ascii_lowercase();
        l.contains("maximum number of turns") || l.contains("max turns") || l.contains("max_turns")
    };
    match format {
        OutputFormat::Text => CliResult {
            final_text: stdout.trim().to_string(),
            hit_max_turns: max_turns_text(stderr),
            ..Default::default()
        },
        OutputFormat::ClaudeJson => {
            // A single JSON object, or stream-json lines whose last `result` event counts.
            let result = serde_json::from_str::<Value>(stdout.trim())
                .ok()
                .filter(|v| v.is_object())
                .or_else(|| {
                    stdout
                        .lines()
                        .rev()
                        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
                        .find(|v| v.get("type").and_then(Value::as_str) == Some("result"))
                });
            let Some(v) = result else {
                return CliResult {
                    final_text: stdout.trim().to_string(),
                    hit_max_turns: max_turns_text(stderr),
                    error: (!stdout.trim().is_empty() || !stderr.trim().is_empty())
                        .then(|| "the CLI's output is not a JSON result object".to_string()),
                    ..Default::default()
                };
            };
            let n = |k: &str| {
                v.pointer(&format!("/usage/{k}"))
                    .and_then(Value::as_u64)
                    .unwrap_or(0)
            };
            let subtype = v.get("subtype").and_then(Value::as_str).unwrap_or("");
            let hit_max_turns = subtype == "error_max_turns" || max_turns_text(stderr);
            let is_error = v.get("is_error").and_then(Value::as_bool).unwrap_or(false);
            let final_text = v
                .get("result")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let model = v
                .get("modelUsage")
                .and_then(Value::as_object)
                .and_then(|m| m.keys().next().cloned());
            CliResult {
                final_text,
                usage: Usage {
                    input_tokens: n("input_tokens"),
                    cache_read_tokens: n("cache_read_input_tokens"),
                    cache_write_tokens: n("cache_creation_input_tokens"),
                    output_tokens: n("output_tokens"),
                },
                cost_usd: v.get("total_cost_usd").and_then(Value::as_f64),
                hit_max_turns,
                error: (is_error && !hit_max_turns)
                    .then(|| format!("the CLI reported an error ({subtype})")),
                model,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_turns_and_stream_lines() {
        let r = parse_output(
            OutputFormat::ClaudeJson,
            "{\"type\":\"system\"}\n{\"type\":\"result\",\"subtype\":\"error_max_turns\",\"is_error\":true,\"usage\":{\"output_tokens\":5}}\n",
            "",
        );
        assert!(r.hit_max_turns && r.error.is_none());
        assert_eq!(r.usage.output_tokens, 5);
        assert!(r.final_text.is_empty());
        let r = parse_output(OutputFormat::ClaudeJson, "garbage", "");
        assert!(r.error.is_some());
        assert_eq!(r.final_text, "garbage");
        let r = parse_output(
            OutputFormat::Text,
            " answer \n",
            "Error: reached maximum number of turns",
        );
        assert_eq!(r.final_text, "answer");
        assert!(r.hit_max_turns);
    }
}
