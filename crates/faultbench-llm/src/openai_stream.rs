//! Assembling a streamed Chat Completions reply from its chunks.
//!
//! Each `data:` event is a `chat.completion.chunk`: `choices[0].delta` carries a piece of the
//! text (`content`) or of a tool call (`tool_calls[i]`: the first piece of a call has its `id`
//! and `function.name`, later pieces append to `function.arguments`), `finish_reason` arrives
//! with the last piece, and with `stream_options.include_usage` a final chunk with empty
//! `choices` carries `usage`. The stream ends with `data: [DONE]`. Real servers deviate: tool
//! calls without `index` or `id`, arguments sent whole as an object, no usage chunk at all —
//! each is read as well as it can be, and missing usage is estimated by
//! [`Partial::to_response`].

use crate::partial::{Partial, StreamError};
use crate::types::StopReason;
use serde_json::Value;

/// Applies one chunk to `p`. `Ok(false)`: the reply is too large to keep reading; `Err`: the
/// server reported an error inside the stream.
pub fn apply_chunk(p: &mut Partial, chunk: &Value) -> Result<bool, StreamError> {
    if let Some(err) = chunk.get("error").filter(|e| !e.is_null()) {
        let message = err
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| err.to_string());
        return Err(StreamError { message });
    }
    if p.model.is_none() {
        p.model = chunk
            .get("model")
            .and_then(Value::as_str)
            .map(str::to_string);
    }
    if let Some(u) = chunk.get("usage").filter(|u| u.is_object()) {
        usage_of(p, u);
    }
    let mut room = true;
    let Some(choice) = chunk.pointer("/choices/0") else {
        return Ok(room);
    };
    // Some servers put a whole `message` in their only chunk.
    if let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) {
        match delta.get("content") {
            Some(Value::String(s)) => room &= p.push_text(s),
            Some(Value::Array(parts)) => {
                for s in parts
                    .iter()
                    .filter_map(|x| x.get("text").and_then(Value::as_str))
                {
                    room &= p.push_text(s);
                }
            }
            _ => {}
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for c in calls {
                let id = c
                    .get("id")
                    .and_then(Value::as_str)
                    .filter(|s| !s.is_empty());
                let index = match c.get("index").and_then(Value::as_u64) {
                    Some(i) => i as usize,
                    // No index: a new id (or the first call) starts a call, else continue the last.
                    None => match (p.calls.last(), id) {
                        (None, _) => 0,
                        (Some(last), Some(id)) if last.id.as_deref() != Some(id) => p.calls.len(),
                        _ => p.calls.len() - 1,
                    },
                };
                let call = p.call(index);
                if let Some(id) = id {
                    call.id = Some(id.to_string());
                }
                if let Some(name) = c.pointer("/function/name").and_then(Value::as_str) {
                    call.name.push_str(name);
                }
                match c.pointer("/function/arguments") {
                    None | Some(Value::Null) => {}
                    Some(Value::String(s)) => room &= p.push_arguments(index, s),
                    Some(other) => room &= p.push_arguments(index, &other.to_string()),
                }
            }
        }
    }
    if let Some(f) = choice.get("finish_reason").and_then(Value::as_str) {
        p.stop = Some(finish_reason(Some(f), !p.calls.is_empty()));
    }
    Ok(room)
}

/// The stop reason for a `finish_reason` (none: a finished turn).
pub fn finish_reason(finish: Option<&str>, has_calls: bool) -> StopReason {
    match finish {
        Some("stop") | None if has_calls => StopReason::ToolUse,
        Some("stop") | None => StopReason::EndTurn,
        Some("tool_calls" | "function_call") => StopReason::ToolUse,
        Some("length") => StopReason::MaxTokens,
        Some("content_filter") => StopReason::ContentFilter,
        Some(other) => StopReason::Other(other.to_string()),
    }
}

/// Reads a `usage` object into `p`: `prompt_tokens` includes the cached part.
pub fn usage_of(p: &mut Partial, u: &Value) {
    let n = |ptr: &str| u.pointer(ptr).and_then(Value::as_u64);
    if let Some(prompt) = n("/prompt_tokens") {
        let cached = n("/prompt_tokens_details/cached_tokens")
            .unwrap_or(0)
            .min(prompt);
        p.usage.input_tokens = prompt - cached;
        p.usage.cache_read_tokens = cached;
        p.usage.cache_write_tokens = 0;
        p.input_reported = true;
    }
    if let Some(out) = n("/completion_tokens") {
        p.usage.output_tokens = out;
        p.output_reported = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ChatRequest;
    use serde_json::json;

    fn apply_all(chunks: &[Value]) -> Partial {
        let mut p = Partial::default();
        for c in chunks {
            assert!(apply_chunk(&mut p, c).unwrap());
        }
        p
    }

    #[test]
    fn text_tool_calls_and_usage_chunks() {
        let p = apply_all(&[
            json!({"model": "gemma", "choices": [{"delta": {"role": "assistant", "content": "Let me "}}]}),
            json!({"choices": [{"delta": {"content": "check."}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "id": "c1", "type": "function",
                   "function": {"name": "ping_pair", "arguments": ""}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "{\"host_a\":"}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"pc1\"}"}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "tool_calls"}]}),
            json!({"choices": [], "usage": {"prompt_tokens": 120, "completion_tokens": 17,
                   "prompt_tokens_details": {"cached_tokens": 100}}}),
        ]);
        let r = p.to_response(&ChatRequest::new("m", "q"), None);
        assert_eq!(r.text, "Let me check.");
        assert_eq!(r.tool_calls[0].id, "c1");
        assert_eq!(r.tool_calls[0].arguments, json!({"host_a": "pc1"}));
        assert_eq!(r.stop, StopReason::ToolUse);
        assert_eq!(
            (
                r.usage.input_tokens,
                r.usage.cache_read_tokens,
                r.usage.output_tokens
            ),
            (20, 100, 17)
        );
        assert!(!r.usage_estimated);
        assert_eq!(r.model, "gemma");
    }

    #[test]
    fn calls_without_index_or_id_and_object_arguments() {
        let p = apply_all(&[
            json!({"choices": [{"delta": {"tool_calls": [{"function": {"name": "netstat", "arguments": {"host_name": "web"}}}]}}]}),
            json!({"choices": [{"delta": {"tool_calls": [{"id": "b", "function": {"name": "cat_file", "arguments": "{}"}}]}}]}),
            json!({"choices": [{"delta": {}, "finish_reason": "stop"}]}),
        ]);
        let r = p.to_response(&ChatRequest::new("m", "q"), None);
        assert_eq!(r.tool_calls.len(), 2);
        assert_eq!(r.tool_calls[0].id, "call_0");
        assert_eq!(r.tool_calls[0].arguments, json!({"host_name": "web"}));
        assert_eq!(
            (r.tool_calls[1].id.as_str(), r.tool_calls[1].name.as_str()),
            ("b", "cat_file")
        );
        assert_eq!(r.stop, StopReason::ToolUse, "calls made: a tool turn");
        assert!(r.usage_estimated, "no usage chunk");
    }

    #[test]
    fn errors_inside_the_stream_are_reported() {
        let mut p = Partial::default();
        let e =
            apply_chunk(&mut p, &json!({"error": {"message": "context overflow"}})).unwrap_err();
        assert_eq!(e.message, "context overflow");
        assert_eq!(e.to_string(), "error inside the stream: context overflow");
    }
}
