//! Streaming and deadlines against a local server that streams slowly, stalls or never stops
//! (`faultbench_llm::testserver`, raw TCP): replies assembled from SSE chunks, the output cap
//! on every request, usage reported or estimated, and `chat_until` keeping a cut reply.

use faultbench_llm::testserver::{
    ServerReply, TestServer, event, openai_finish, openai_reply, openai_text, openai_tool,
    openai_usage,
};
use faultbench_llm::{
    AnthropicClient, ChatModel, ChatRequest, LlmError, MaxTokensField, OpenAiClient, RetryPolicy,
    StopReason, chat_until,
};
use serde_json::json;
use std::time::{Duration, Instant};

fn quick() -> RetryPolicy {
    RetryPolicy {
        max_attempts: 2,
        initial_backoff_ms: 10,
        max_backoff_ms: 20,
        request_timeout_ms: 60_000,
        max_retry_after_ms: 1_000,
    }
}

fn openai(server: &TestServer) -> OpenAiClient {
    OpenAiClient::new("gemma-3-270m", server.base_url(), None)
        .unwrap()
        .with_retry(quick())
}

fn after(d: Duration) -> tokio::time::Instant {
    tokio::time::Instant::now() + d
}

#[tokio::test]
async fn a_streamed_reply_is_assembled_and_every_request_has_a_cap() {
    let mut data = vec![
        openai_text("Checking "),
        openai_text("r1."),
        openai_tool(0, Some("c7"), "ping_pair", "{\"host_a\": \"pc1\", "),
    ];
    data.push(json!({"choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"arguments": "\"host_b\": \"r1\"}"}}]}}]}));
    data.push(openai_finish("tool_calls"));
    data.push(openai_usage(900, 31));
    let mut reply = ServerReply::sse(&data);
    if let ServerReply::Sse { events, .. } = &mut reply {
        events.push((Duration::ZERO, "data: [DONE]\n\n".into()));
    }
    let server = TestServer::always(reply).await.unwrap();
    let c = openai(&server);
    let r = c
        .chat(&ChatRequest::new("gemma-3-270m", "ticket"))
        .await
        .unwrap();
    assert_eq!(r.text, "Checking r1.");
    assert_eq!(r.tool_calls[0].id, "c7");
    assert_eq!(
        r.tool_calls[0].arguments,
        json!({"host_a": "pc1", "host_b": "r1"})
    );
    assert_eq!(r.stop, StopReason::ToolUse);
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (900, 31));
    assert!(!r.usage_estimated);

    let body = &server.requests()[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        body["max_tokens"],
        faultbench_llm::DEFAULT_MAX_OUTPUT_TOKENS,
        "no cap in the request: the client's default is sent"
    );
    // OpenAI's own field, and a configured cap.
    let c = openai(&server)
        .with_max_tokens_field(MaxTokensField::MaxCompletionTokens)
        .with_max_output_tokens(300);
    c.chat(&ChatRequest::new("m", "x")).await.unwrap();
    let body = &server.requests()[1];
    assert_eq!(body["max_completion_tokens"], 300);
    assert!(body.get("max_tokens").is_none());
    assert_eq!(c.max_output_tokens(), Some(300));
}

#[tokio::test]
async fn a_server_without_usage_gets_an_estimate_marked_as_such() {
    let server = TestServer::always(openai_reply("0123456789abcdef", None))
        .await
        .unwrap();
    let req = ChatRequest::new("m", "x".repeat(800));
    let r = openai(&server).chat(&req).await.unwrap();
    assert_eq!(r.text, "0123456789abcdef");
    assert!(r.usage_estimated);
    assert_eq!(r.usage.output_tokens, 4, "16 characters");
    assert_eq!(r.usage.input_tokens, 200, "800 characters of prompt");
    // Non-streaming body without usage: estimated too.
    let server = TestServer::always(ServerReply::Json(json!({
        "choices": [{"message": {"role": "assistant", "content": "12345678"}, "finish_reason": "stop"}]
    })))
    .await
    .unwrap();
    let r = openai(&server)
        .with_streaming(false)
        .chat(&req)
        .await
        .unwrap();
    assert_eq!((r.usage.input_tokens, r.usage.output_tokens), (200, 2));
    assert!(r.usage_estimated);
    assert!(server.requests()[0].get("stream").is_none());
}

#[tokio::test]
async fn an_endless_stream_is_cut_at_the_deadline_with_its_text_and_usage() {
    // A runaway model: a token every 50 ms, forever.
    let server = TestServer::always(ServerReply::Sse {
        events: vec![(Duration::ZERO, event(&openai_text("The ")))],
        forever: Some((Duration::from_millis(50), event(&openai_text("loop ")))),
    })
    .await
    .unwrap();
    let c = openai(&server);
    let req = ChatRequest::new("m", "ticket");
    let t = Instant::now();
    let r = chat_until(&c, &req, after(Duration::from_millis(1500)))
        .await
        .unwrap();
    let took = t.elapsed();
    assert!(took < Duration::from_secs(4), "cut after {took:?}");
    assert!(r.is_cut());
    assert!(r.text.starts_with("The loop loop "), "{:?}", r.text);
    assert!(r.usage_estimated);
    assert!(
        r.usage.output_tokens >= 3 && r.usage.input_tokens > 0,
        "{:?}",
        r.usage
    );
    assert!(r.latency_ms >= 1400, "{}", r.latency_ms);
}

#[tokio::test]
async fn silent_stalled_and_mute_servers_end_at_the_deadline() {
    let cases = [
        (
            "headers, then nothing",
            ServerReply::Sse {
                events: vec![],
                forever: Some((Duration::from_secs(3600), String::new())),
            },
        ),
        ("request read, never answered", ServerReply::Stall),
        ("connection accepted, never read", ServerReply::Mute),
    ];
    for (what, reply) in cases {
        let server = TestServer::always(reply).await.unwrap();
        let c = openai(&server);
        let t = Instant::now();
        let r = chat_until(
            &c,
            &ChatRequest::new("m", "q"),
            after(Duration::from_millis(800)),
        )
        .await
        .unwrap();
        assert!(
            t.elapsed() < Duration::from_secs(4),
            "{what}: {:?}",
            t.elapsed()
        );
        assert!(r.is_cut(), "{what}");
        assert_eq!(r.text, "", "{what}");
        assert!(r.usage_estimated && r.usage.output_tokens == 0, "{what}");
    }
}

#[tokio::test]
async fn a_reply_that_finishes_in_time_is_not_cut() {
    let server = TestServer::always(ServerReply::Sse {
        events: vec![
            (Duration::from_millis(100), event(&openai_text("done"))),
            (Duration::from_millis(100), event(&openai_usage(10, 1))),
            (Duration::ZERO, "data: [DONE]\n\n".into()),
        ],
        forever: None,
    })
    .await
    .unwrap();
    let r = chat_until(
        &openai(&server),
        &ChatRequest::new("m", "q"),
        after(Duration::from_secs(20)),
    )
    .await
    .unwrap();
    assert!(!r.is_cut());
    assert_eq!((r.text.as_str(), r.usage.output_tokens), ("done", 1));
}

#[tokio::test]
async fn empty_choices_garbage_and_errors_in_streams_are_reported() {
    // A stream with no choices at all (only a usage chunk).
    let server = TestServer::always(ServerReply::sse(&[openai_usage(5, 0)]))
        .await
        .unwrap();
    let e = openai(&server)
        .chat(&ChatRequest::new("m", "q"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, LlmError::Malformed { detail, .. } if detail.contains("no `choices`")),
        "{e}"
    );
    // A data line that is not JSON.
    let server = TestServer::always(ServerReply::Sse {
        events: vec![(Duration::ZERO, "data: {oops\n\n".into())],
        forever: None,
    })
    .await
    .unwrap();
    let e = openai(&server)
        .chat(&ChatRequest::new("m", "q"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, LlmError::Malformed { detail, .. } if detail.contains("not JSON")),
        "{e}"
    );
    // An error event: retried, then reported with the server's message.
    let server = TestServer::always(ServerReply::sse(&[
        openai_text("par"),
        json!({"error": {"message": "KV cache full"}}),
    ]))
    .await
    .unwrap();
    let e = openai(&server)
        .chat(&ChatRequest::new("m", "q"))
        .await
        .unwrap_err();
    assert!(
        matches!(&e, LlmError::GaveUp { attempts: 2, last, .. } if last.contains("KV cache full")),
        "{e}"
    );
    assert_eq!(server.requests().len(), 2);
    // A stream closed without a finish: what came is kept and the stop says so.
    let server = TestServer::always(ServerReply::sse(&[openai_text("half an ans")]))
        .await
        .unwrap();
    let r = openai(&server)
        .chat(&ChatRequest::new("m", "q"))
        .await
        .unwrap();
    assert_eq!(r.text, "half an ans");
    assert_eq!(r.stop, StopReason::Other("incomplete_stream".into()));
}

fn anthropic_event(kind: &str, data: serde_json::Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

#[tokio::test]
async fn anthropic_streams_are_assembled_and_cut_keeping_the_reported_input() {
    let start = anthropic_event(
        "message_start",
        json!({"type": "message_start", "message": {"model": "claude-sonnet-4-6",
               "usage": {"input_tokens": 1500, "cache_read_input_tokens": 0, "output_tokens": 1}}}),
    );
    let block = anthropic_event(
        "content_block_start",
        json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    );
    let delta = |t: &str| {
        anthropic_event(
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": t}}),
        )
    };
    let whole = ServerReply::Sse {
        events: vec![
            (Duration::ZERO, start.clone()),
            (Duration::ZERO, block.clone()),
            (Duration::ZERO, delta("All fine.")),
            (
                Duration::ZERO,
                anthropic_event(
                    "message_delta",
                    json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 4}}),
                ),
            ),
            (
                Duration::ZERO,
                anthropic_event("message_stop", json!({"type": "message_stop"})),
            ),
        ],
        forever: None,
    };
    let endless = ServerReply::Sse {
        events: vec![(Duration::ZERO, start), (Duration::ZERO, block)],
        forever: Some((Duration::from_millis(40), delta("more "))),
    };
    let server = TestServer::start(move |n, _| {
        if n == 0 {
            whole.clone()
        } else {
            endless.clone()
        }
    })
    .await
    .unwrap();
    let c = AnthropicClient::new("claude-sonnet-4-6", server.root_url(), "k")
        .unwrap()
        .with_retry(quick());
    let r = c
        .chat(&ChatRequest::new("claude-sonnet-4-6", "q"))
        .await
        .unwrap();
    assert_eq!(
        (r.text.as_str(), r.usage.input_tokens, r.usage.output_tokens),
        ("All fine.", 1500, 4)
    );
    assert!(!r.usage_estimated);
    assert_eq!(server.requests()[0]["stream"], true);
    assert_eq!(
        server.requests()[0]["max_tokens"],
        faultbench_llm::DEFAULT_MAX_OUTPUT_TOKENS
    );

    let r = chat_until(
        &c,
        &ChatRequest::new("claude-sonnet-4-6", "q"),
        after(Duration::from_millis(700)),
    )
    .await
    .unwrap();
    assert!(r.is_cut());
    assert!(r.text.starts_with("more more "), "{:?}", r.text);
    assert_eq!(
        r.usage.input_tokens, 1500,
        "input as the server reported it"
    );
    assert!(r.usage.output_tokens >= 2 && r.usage_estimated);
}
