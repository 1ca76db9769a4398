//! The Anthropic client against a local server speaking the Messages wire format (wiremock):
//! tool use, cache accounting, prompt-cache breakpoints, overload retries and bad bodies.

use faultbench_llm::{
    AnthropicClient, ChatModel, ChatRequest, LlmError, LlmOptions, Message, PriceTable,
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

fn message(content: Value, stop: &str) -> Value {
    json!({
        "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
        "content": content, "stop_reason": stop, "stop_sequence": null,
        "usage": {"input_tokens": 21, "cache_creation_input_tokens": 3100,
                  "cache_read_input_tokens": 12000, "output_tokens": 140}
    })
}

#[tokio::test]
async fn tool_use_and_cache_usage_are_read() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "ak-test"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(message(
            json!([
                {"type": "thinking", "thinking": "hmm", "signature": "x"},
                {"type": "text", "text": "Let me check reachability."},
                {"type": "tool_use", "id": "toolu_01", "name": "get_reachability", "input": {}},
                {"type": "tool_use", "id": "toolu_02", "name": "frr_show_ip_route", "input": {"router_name": "r1"}}
            ]),
            "tool_use",
        )))
        .mount(&server)
        .await;
    let c = AnthropicClient::new("claude-sonnet-4-6", server.uri(), "ak-test")
        .unwrap()
        .with_retry(fast_retries(1));
    let tool = ToolDef::new(
        "get_reachability",
        "Ping between hosts.",
        json!({"type": "object", "properties": {}}),
    );
    let mut req = ChatRequest::new("claude-sonnet-4-6", "ticket text")
        .with_system("You troubleshoot networks.")
        .with_tools(vec![tool]);
    // A previous turn with two tool calls answered by two results.
    req.messages.push(Message::Assistant {
        text: String::new(),
        tool_calls: vec![
            ToolCall::new(
                "toolu_a",
                "ping_pair",
                json!({"host_a": "pc1", "host_b": "pc2"}),
            ),
            ToolCall::new(
                "toolu_b",
                "cat_file",
                json!({"host_name": "pc1", "file_path": "/etc/hosts"}),
            ),
        ],
    });
    req.messages
        .push(Message::tool_result("toolu_a", "0% packet loss", false));
    req.messages
        .push(Message::tool_result("toolu_b", "No such file", true));

    let r = c.chat(&req).await.unwrap();
    assert_eq!(r.stop, StopReason::ToolUse);
    assert_eq!(
        r.text, "Let me check reachability.",
        "thinking blocks are not text"
    );
    assert_eq!(r.tool_calls.len(), 2);
    assert_eq!(r.tool_calls[1].arguments, json!({"router_name": "r1"}));
    assert_eq!(r.usage.input_tokens, 21);
    assert_eq!(r.usage.cache_read_tokens, 12000);
    assert_eq!(r.usage.cache_write_tokens, 3100);
    assert_eq!(r.usage.output_tokens, 140);
    assert_eq!(r.usage.total_input(), 21 + 12000 + 3100);
    let cost = PriceTable::defaults().cost(&r.model, &r.usage).unwrap();
    let expected = (21.0 * 3.0 + 12000.0 * 0.3 + 3100.0 * 3.75 + 140.0 * 15.0) / 1e6;
    assert!((cost - expected).abs() < 1e-12);

    let reqs = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    assert_eq!(body["model"], "claude-sonnet-4-6");
    assert_eq!(
        body["max_tokens"],
        faultbench_llm::DEFAULT_MAX_OUTPUT_TOKENS,
        "the API requires max_tokens: the default cap"
    );
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"][0]["text"], "You troubleshoot networks.");
    assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(body["tools"][0]["cache_control"]["type"], "ephemeral");
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(
        msgs.len(),
        3,
        "user, assistant, one merged user message of results"
    );
    assert_eq!(msgs[1]["role"], "assistant");
    assert_eq!(
        msgs[1]["content"].as_array().unwrap().len(),
        2,
        "no empty text block"
    );
    assert_eq!(msgs[1]["content"][0]["type"], "tool_use");
    assert_eq!(msgs[1]["content"][1]["input"]["file_path"], "/etc/hosts");
    let results = msgs[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    assert_eq!(results[0]["tool_use_id"], "toolu_a");
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(
        results[1]["cache_control"]["type"], "ephemeral",
        "newest block is a cache breakpoint"
    );
    assert!(results[0].get("cache_control").is_none());
}

#[tokio::test]
async fn overloaded_then_success_honours_retry_after_seconds() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(529)
                .insert_header("retry-after", "1")
                .set_body_json(json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(message(
            json!([{"type": "text", "text": "done"}]),
            "end_turn",
        )))
        .mount(&server)
        .await;
    let policy = RetryPolicy {
        initial_backoff_ms: 30_000,
        max_backoff_ms: 30_000,
        ..fast_retries(3)
    };
    let c = AnthropicClient::new("claude-sonnet-4-6", server.uri(), "k")
        .unwrap()
        .with_retry(policy);
    let started = Instant::now();
    let r = c
        .chat(&ChatRequest::new("claude-sonnet-4-6", "hi"))
        .await
        .unwrap();
    let took = started.elapsed();
    assert_eq!((r.text.as_str(), r.stop), ("done", StopReason::EndTurn));
    assert!(
        took >= Duration::from_millis(950) && took < Duration::from_secs(10),
        "{took:?}"
    );
    assert_eq!(server.received_requests().await.unwrap().len(), 2);
}

#[tokio::test]
async fn errors_and_bad_bodies() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(401).set_body_json(
            json!({"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}}),
        ))
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(200).set_body_json(json!({"type": "message", "content": "oops"})),
        )
        .up_to_n_times(1)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("internal"))
        .mount(&server)
        .await;
    let c = AnthropicClient::new("claude-sonnet-4-6", format!("{}/v1", server.uri()), "bad")
        .unwrap()
        .with_retry(fast_retries(3));
    assert!(c.endpoint().ends_with("/v1/messages") && !c.endpoint().contains("/v1/v1"));
    let req = ChatRequest::new("claude-sonnet-4-6", "hi");
    let e = c.chat(&req).await.unwrap_err();
    assert!(
        matches!(&e, LlmError::Rejected { status: 401, message, .. } if message == "invalid x-api-key"),
        "{e}"
    );
    let e = c.chat(&req).await.unwrap_err();
    assert!(
        matches!(&e, LlmError::Malformed { detail, .. } if detail.contains("content")),
        "{e}"
    );
    let e = c.chat(&req).await.unwrap_err();
    assert!(matches!(&e, LlmError::GaveUp { attempts: 3, .. }), "{e}");
    assert_eq!(server.received_requests().await.unwrap().len(), 1 + 1 + 3);
}

#[tokio::test]
async fn json_mode_and_caching_off_via_config() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(message(
            json!([{"type": "text", "text": "{\"pass\": true}"}]),
            "end_turn",
        )))
        .mount(&server)
        .await;
    let cfg = LlmOptions::from_toml_str(&format!(
        "[providers.anthropic]\nbase_url = \"{}\"\napi_key = \"k\"\nprompt_caching = false\ndefault_max_tokens = 512\n",
        server.uri()
    ))
    .unwrap();
    let model = cfg.connect("claude-sonnet-4-6").unwrap();
    let r = model
        .chat(&ChatRequest::new(model.model(), "judge this").json())
        .await
        .unwrap();
    assert_eq!(r.text, "{\"pass\": true}");
    let reqs = server.received_requests().await.unwrap();
    let body: Value = serde_json::from_slice(&reqs[0].body).unwrap();
    assert_eq!(body["max_tokens"], 512);
    assert!(
        body["system"][0]["text"]
            .as_str()
            .unwrap()
            .contains("single JSON object")
    );
    assert!(!body.to_string().contains("cache_control"));
}
