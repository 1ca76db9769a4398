//! The OpenAI-compatible client against a local server speaking the Chat Completions wire
//! format (wiremock): tool calls, usage with cached tokens, retries, errors and timeouts.

use faultbench_llm::{
    ChatModel, ChatRequest, LlmError, LlmOptions, MaxTokensField, Message, OpenAiClient,
    RetryPolicy, StopReason, ToolCall, ToolDef,
};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn fast_retries(max_attempts: u32) -> RetryPolicy {
    RetryPolicy {
        max_attempts,
        initial_backoff_ms: 10,
        max_backoff_ms: 40,
        request_timeout_ms: 5_000,
        max_retry_after_ms: 3_000,
    }
}

fn client(server: &MockServer, policy: RetryPolicy) -> OpenAiClient {
    OpenAiClient::new(
        "gpt-5",
        format!("{}/v1", server.uri()),
        Some("sk-test".into()),
    )
    .unwrap()
    .with_retry(policy)
}

fn completion(message: Value, finish: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-5-2025-08-07",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 1200, "completion_tokens": 80, "total_tokens": 1280,
                  "prompt_tokens_details": {"cached_tokens": 1024},
                  "completion_tokens_details": {"reasoning_tokens": 64}}
    })
}

fn ping_tool() -> ToolDef {
    ToolDef::new(
        "ping_pair",
        "Ping host_b from host_a.",
        json!({"type": "object", "properties": {"host_a": {"type": "string"}, "host_b": {"type": "string"}},
               "required": ["host_a", "host_b"]}),
    )
}

async fn body_of(server: &MockServer, i: usize) -> Value {
    let reqs = server.received_requests().await.unwrap();
    serde_json::from_slice(&reqs[i].body).unwrap()
}

#[tokio::test]
async fn tool_calls_and_cached_usage_are_read() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-test"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(
            json!({"role": "assistant", "content": null, "tool_calls": [
                {"id": "call_a", "type": "function", "function": {"name": "ping_pair", "arguments": "{\"host_a\":\"pc1\",\"host_b\":\"10.0.0.1\"}"}},
                {"id": "call_b", "type": "function", "function": {"name": "get_reachability", "arguments": ""}}
            ]}),
            "tool_calls",
        )))
        .mount(&server)
        .await;
    let c = client(&server, fast_retries(1));
    let req = ChatRequest::new("gpt-5", "pc1 cannot reach the gateway")
        .with_system("You are a network troubleshooter.")
        .with_tools(vec![ping_tool()]);
    let r = c.chat(&req).await.unwrap();
    assert_eq!(r.stop, StopReason::ToolUse);
    assert_eq!(r.text, "");
    assert_eq!(r.tool_calls.len(), 2);
    assert_eq!(r.tool_calls[0].id, "call_a");
    assert_eq!(
        r.tool_calls[0].arguments,
        json!({"host_a": "pc1", "host_b": "10.0.0.1"})
    );
    assert_eq!(
        r.tool_calls[1].arguments,
        json!({}),
        "empty arguments mean no arguments"
    );
    assert_eq!(r.usage.input_tokens, 1200 - 1024);
    assert_eq!(r.usage.cache_read_tokens, 1024);
    assert_eq!(r.usage.cache_write_tokens, 0);
    assert_eq!(r.usage.output_tokens, 80);
    assert_eq!(r.model, "gpt-5-2025-08-07");

    let body = body_of(&server, 0).await;
    assert_eq!(body["model"], "gpt-5");
    assert_eq!(
        body["messages"][0],
        json!({"role": "system", "content": "You are a network troubleshooter."})
    );
    assert_eq!(body["messages"][1]["role"], "user");
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["name"], "ping_pair");
    assert_eq!(
        body["tools"][0]["function"]["parameters"]["required"],
        json!(["host_a", "host_b"])
    );
    assert!(body.get("response_format").is_none());
}

#[tokio::test]
async fn history_with_tool_results_goes_out_in_wire_form() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(
            json!({"role": "assistant", "content": "=== DIAGNOSIS ===\nis_anomaly: false"}),
            "stop",
        )))
        .mount(&server)
        .await;
    let c =
        client(&server, fast_retries(1)).with_max_tokens_field(MaxTokensField::MaxCompletionTokens);
    let mut req = ChatRequest::new("gpt-5", "ticket");
    req.messages.push(Message::Assistant {
        text: "Checking.".into(),
        tool_calls: vec![
            ToolCall::new("c1", "ping_pair", json!({"host_a": "pc1", "host_b": "pc2"})),
            ToolCall::new("c2", "cat_file", Value::String("{broken".into())),
        ],
    });
    req.messages.push(Message::tool_result(
        "c1",
        "2 packets transmitted, 2 received",
        false,
    ));
    req.messages
        .push(Message::tool_result("c2", "invalid arguments", true));
    req.max_output_tokens = Some(4000);
    let r = c.chat(&req).await.unwrap();
    assert_eq!(r.stop, StopReason::EndTurn);
    assert!(r.text.starts_with("=== DIAGNOSIS ==="));

    let body = body_of(&server, 0).await;
    let m = body["messages"].as_array().unwrap();
    assert_eq!(m.len(), 4);
    assert_eq!(
        m[1]["tool_calls"][0]["function"]["arguments"],
        "{\"host_a\":\"pc1\",\"host_b\":\"pc2\"}"
    );
    assert_eq!(
        m[1]["tool_calls"][1]["function"]["arguments"], "{broken",
        "raw arguments echoed as written"
    );
    assert_eq!(
        m[2],
        json!({"role": "tool", "tool_call_id": "c1", "content": "2 packets transmitted, 2 received"})
    );
    assert_eq!(m[3]["content"], "ERROR: invalid arguments");
    assert_eq!(body["max_completion_tokens"], 4000);
    assert!(body.get("max_tokens").is_none());
}

#[tokio::test]
async fn local_servers_get_max_tokens_json_mode_and_no_key() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(json!({
            // llama.cpp style: no usage details, tool call without id, arguments as an object.
            "choices": [{"message": {"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": "netstat", "arguments": {"host_name": "web"}}}]},
                "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5}
        })))
        .mount(&server)
        .await;
    let c = OpenAiClient::new("qwen3", format!("{}/v1/", server.uri()), None).unwrap();
    let mut req = ChatRequest::new("qwen3", "q").json();
    req.max_output_tokens = Some(100);
    let r = c.chat(&req).await.unwrap();
    assert_eq!(r.tool_calls[0].id, "call_0");
    assert_eq!(r.tool_calls[0].arguments, json!({"host_name": "web"}));
    assert_eq!((r.usage.input_tokens, r.usage.cache_read_tokens), (50, 0));
    assert_eq!(r.model, "qwen3");
    let reqs = server.received_requests().await.unwrap();
    assert!(reqs[0].headers.get("authorization").is_none());
    let body = body_of(&server, 0).await;
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
}

#[tokio::test]
async fn rate_limit_then_success_honours_retry_after() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(429)
                .insert_header("retry-after-ms", "300")
                .set_body_json(
                    json!({"error": {"message": "Rate limit reached", "type": "requests"}}),
                ),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(
            json!({"role": "assistant", "content": "ok"}),
            "stop",
        )))
        .mount(&server)
        .await;
    // A long default backoff: finishing quickly proves the server's shorter wait was used.
    let policy = RetryPolicy {
        initial_backoff_ms: 20_000,
        max_backoff_ms: 20_000,
        ..fast_retries(3)
    };
    let started = Instant::now();
    let r = client(&server, policy)
        .chat(&ChatRequest::new("gpt-5", "hi"))
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!(r.text, "ok");
    assert!(took >= Duration::from_millis(300), "waited only {took:?}");
    assert!(
        took < Duration::from_secs(10),
        "ignored retry-after-ms: {took:?}"
    );
    assert!(r.latency_ms >= 300, "latency covers the retries");
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn persistent_server_errors_end_in_a_clear_error_after_bounded_attempts() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(503).set_body_string("upstream unavailable"))
        .mount(&server)
        .await;
    let err = client(&server, fast_retries(4))
        .chat(&ChatRequest::new("gpt-5", "hi"))
        .await
        .unwrap_err();
    match &err {
        LlmError::GaveUp { attempts, last, .. } => {
            assert_eq!(*attempts, 4);
            assert!(
                last.contains("HTTP 503") && last.contains("upstream unavailable"),
                "{last}"
            );
        }
        other => panic!("expected GaveUp, got {other:?}"),
    }
    assert!(err.is_transient());
    assert_eq!(server.received_requests().await.unwrap().len(), 4);
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(
            json!({"error": {"message": "Unsupported parameter: 'max_tokens'", "type": "invalid_request_error"}}),
        ))
        .mount(&server)
        .await;
    let err = client(&server, fast_retries(5))
        .chat(&ChatRequest::new("gpt-5", "hi"))
        .await
        .unwrap_err();
    assert_eq!(
        err,
        LlmError::Rejected {
            provider: "openai".into(),
            status: 400,
            message: "Unsupported parameter: 'max_tokens'".into()
        }
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 1);
}

#[tokio::test]
async fn malformed_bodies_are_reported_not_panicked_on() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_string("{\"choices\": [ {\"message\": "))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(json!({"object": "chat.completion", "choices": []})),
        )
        .mount(&server)
        .await;
    let c = client(&server, fast_retries(3));
    let err = c.chat(&ChatRequest::new("gpt-5", "hi")).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Malformed { detail, .. } if detail.contains("not JSON")),
        "{err}"
    );
    let err = c.chat(&ChatRequest::new("gpt-5", "hi")).await.unwrap_err();
    assert!(
        matches!(&err, LlmError::Malformed { detail, .. } if detail.contains("choices[0]")),
        "{err}"
    );
}

#[tokio::test]
async fn slow_responses_time_out_and_are_retried_a_bounded_number_of_times() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200)
                .set_body_json(completion(
                    json!({"role": "assistant", "content": "late"}),
                    "stop",
                ))
                .set_delay(Duration::from_secs(5)),
        )
        .mount(&server)
        .await;
    let policy = RetryPolicy {
        request_timeout_ms: 250,
        ..fast_retries(2)
    };
    let started = Instant::now();
    let err = client(&server, policy)
        .chat(&ChatRequest::new("gpt-5", "hi"))
        .await
        .unwrap_err();
    let took = started.elapsed();
    assert!(
        matches!(&err, LlmError::GaveUp { attempts: 2, last, .. } if last.contains("no complete response within 0.2")),
        "{err}"
    );
    assert!(took < Duration::from_secs(3), "did not hang: {took:?}");
}

#[tokio::test]
async fn a_retry_after_longer_than_the_cap_fails_at_once() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(429).insert_header("retry-after", "3600"))
        .mount(&server)
        .await;
    let started = Instant::now();
    let err = client(&server, fast_retries(5))
        .chat(&ChatRequest::new("gpt-5", "hi"))
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(2));
    let text = err.to_string();
    assert!(
        text.contains("retry after 3600.0 s") && text.contains("1 attempts"),
        "{text}"
    );
}

#[tokio::test]
async fn config_routes_a_declared_provider_to_the_server() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer local-key"))
        .respond_with(ResponseTemplate::new(200).set_body_json(completion(
            json!({"role": "assistant", "content": "from vllm"}),
            "stop",
        )))
        .mount(&server)
        .await;
    let cfg = LlmOptions::from_toml_str(&format!(
        "[providers.vllm]\nkind = \"openai\"\nbase_url = \"{}/v1\"\napi_key = \"local-key\"\nmax_tokens_field = \"max_tokens\"\n",
        server.uri()
    ))
    .unwrap();
    let model = cfg.connect("vllm/Qwen/Qwen3-8B").unwrap();
    assert_eq!(model.model(), "Qwen/Qwen3-8B");
    let mut req = ChatRequest::new(model.model(), "hi");
    req.max_output_tokens = Some(7);
    assert_eq!(model.chat(&req).await.unwrap().text, "from vllm");
    let body = body_of(&server, 0).await;
    assert_eq!(body["model"], "Qwen/Qwen3-8B");
    assert_eq!(body["max_tokens"], 7);
}
