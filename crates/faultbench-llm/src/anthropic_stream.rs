//! Assembling a streamed Messages API reply from its events.
//!
//! `message_start` carries the model and the input usage; each content block then streams in
//! turn — `content_block_start` (a `text` block, or a `tool_use` block with its `id` and
//! `name`), `content_block_delta`s (`text_delta` pieces, or `input_json_delta` pieces of the
//! tool input), `content_block_stop`; `message_delta` brings the stop reason and the output
//! usage; `message_stop` ends the reply. `ping`s and unknown events are skipped; an `error`
//! event is reported. Blocks stream one at a time, so a delta belongs to the block started
//! last.

use crate::partial::{Partial, StreamError};
use crate::types::StopReason;
use serde_json::Value;

/// Applies one event to `p`. `Ok(true)`: the reply is complete (or too large to keep
/// reading); `Err`: the server reported an error inside the stream.
pub fn apply_event(p: &mut Partial, kind: &str, data: &Value) -> Result<bool, StreamError> {
    match kind {
        "message_start" => {
            let msg = data.get("message").unwrap_or(data);
            p.model = msg.get("model").and_then(Value::as_str).map(str::to_string);
            if let Some(u) = msg.get("usage").filter(|u| u.is_object()) {
                input_usage_of(p, u);
            }
        }
        "content_block_start" => {
            let block = data.get("content_block").unwrap_or(&Value::Null);
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    let mut room = true;
                    if !p.text.is_empty() {
                        room &= p.push_text("\n");
                    }
                    let t = block.get("text").and_then(Value::as_str).unwrap_or("");
                    room &= p.push_text(t);
                    return Ok(!room);
                }
                Some("tool_use") => {
                    let i = p.calls.len();
                    let call = p.call(i);
                    call.id = block.get("id").and_then(Value::as_str).map(str::to_string);
                    call.name = block
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                }
                _ => {}
            }
        }
        "content_block_delta" => {
            let delta = data.get("delta").unwrap_or(&Value::Null);
            let room = match delta.get("type").and_then(Value::as_str) {
                Some("text_delta") => {
                    p.push_text(delta.get("text").and_then(Value::as_str).unwrap_or(""))
                }
                Some("input_json_delta") if !p.calls.is_empty() => {
                    let last = p.calls.len() - 1;
                    let piece = delta
                        .get("partial_json")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    p.push_arguments(last, piece)
                }
                _ => true,
            };
            return Ok(!room);
        }
        "message_delta" => {
            if let Some(s) = data.pointer("/delta/stop_reason").and_then(Value::as_str) {
                p.stop = Some(stop_reason(Some(s)));
            }
            if let Some(u) = data.get("usage").filter(|u| u.is_object()) {
                if u.get("input_tokens").is_some() {
                    input_usage_of(p, u);
                }
                output_usage_of(p, u);
            }
        }
        "message_stop" => return Ok(true),
        "error" => {
            let message = data
                .pointer("/error/message")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| data.to_string());
            return Err(StreamError { message });
        }
        _ => {}
    }
    Ok(false)
}

/// The stop reason for a `stop_reason` (none: a finished turn).
pub fn stop_reason(s: Option<&str>) -> StopReason {
    match s {
        Some("end_turn" | "stop_sequence") | None => StopReason::EndTurn,
        Some("tool_use") => StopReason::ToolUse,
        Some("max_tokens") => StopReason::MaxTokens,
        Some("refusal") => StopReason::ContentFilter,
        Some(other) => StopReason::Other(other.to_string()),
    }
}

/// Reads a whole reply's `usage` into `p`.
pub fn usage_of(p: &mut Partial, u: &Value) {
    input_usage_of(p, u);
    output_usage_of(p, u);
}

fn input_usage_of(p: &mut Partial, u: &Value) {
    let n = |k: &str| u.get(k).and_then(Value::as_u64);
    if let Some(input) = n("input_tokens") {
        p.usage.input_tokens = input;
        p.usage.cache_read_tokens = n("cache_read_input_tokens").unwrap_or(0);
        p.usage.cache_write_tokens = n("cache_creation_input_tokens").unwrap_or(0);
        p.input_reported = true;
    }
}

fn output_usage_of(p: &mut Partial, u: &Value) {
    if let Some(out) = u.get("output_tokens").and_then(Value::as_u64) {
        p.usage.output_tokens = out;
        p.output_reported = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ChatRequest;
    use serde_json::json;

    #[test]
    fn a_streamed_tool_use_reply() {
        let mut p = Partial::default();
        let events = [
            (
                "message_start",
                json!({"message": {"model": "claude-sonnet-4-6",
                "usage": {"input_tokens": 12, "cache_read_input_tokens": 900, "cache_creation_input_tokens": 40, "output_tokens": 1}}}),
            ),
            (
                "content_block_start",
                json!({"index": 0, "content_block": {"type": "text", "text": ""}}),
            ),
            (
                "content_block_delta",
                json!({"index": 0, "delta": {"type": "text_delta", "text": "Checking r1."}}),
            ),
            ("ping", json!({})),
            (
                "content_block_start",
                json!({"index": 1, "content_block": {"type": "tool_use", "id": "toolu_9", "name": "frr_show_ip_route", "input": {}}}),
            ),
            (
                "content_block_delta",
                json!({"index": 1, "delta": {"type": "input_json_delta", "partial_json": "{\"host_na"}}),
            ),
            (
                "content_block_delta",
                json!({"index": 1, "delta": {"type": "input_json_delta", "partial_json": "me\": \"r1\"}"}}),
            ),
            (
                "message_delta",
                json!({"delta": {"stop_reason": "tool_use"}, "usage": {"output_tokens": 33}}),
            ),
        ];
        for (kind, data) in &events {
            assert!(!apply_event(&mut p, kind, data).unwrap());
        }
        assert!(apply_event(&mut p, "message_stop", &json!({})).unwrap());
        let r = p.to_response(&ChatRequest::new("m", "q"), None);
        assert_eq!(r.text, "Checking r1.");
        assert_eq!(r.tool_calls[0].id, "toolu_9");
        assert_eq!(r.tool_calls[0].arguments, json!({"host_name": "r1"}));
        assert_eq!(r.stop, StopReason::ToolUse);
        assert_eq!(
            (
                r.usage.input_tokens,
                r.usage.cache_read_tokens,
                r.usage.cache_write_tokens,
                r.usage.output_tokens
            ),
            (12, 900, 40, 33)
        );
        assert!(!r.usage_estimated);
    }

    #[test]
    fn a_cut_reply_keeps_input_usage_and_estimates_output() {
        let mut p = Partial::default();
        apply_event(
            &mut p,
            "message_start",
            &json!({"message": {"usage": {"input_tokens": 50}}}),
        )
        .unwrap();
        apply_event(
            &mut p,
            "content_block_start",
            &json!({"content_block": {"type": "text"}}),
        )
        .unwrap();
        apply_event(
            &mut p,
            "content_block_delta",
            &json!({"delta": {"type": "text_delta", "text": "abcdefgh"}}),
        )
        .unwrap();
        let r = p.to_response(&ChatRequest::new("m", "q"), Some(StopReason::Deadline));
        assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (50, 2));
        assert!(r.usage_estimated);
        let e = apply_event(
            &mut p,
            "error",
            &json!({"error": {"type": "overloaded_error", "message": "Overloaded"}}),
        );
        let e = e.unwrap_err();
        assert_eq!(e.message, "Overloaded");
        assert_eq!(e.to_string(), "error inside the stream: Overloaded");
    }
}
