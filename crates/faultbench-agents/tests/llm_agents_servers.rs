//! `react` and `sade` through the real OpenAI-compatible client against a local server that
//! misbehaves the way real ones do (`faultbench_llm::testserver`): a reply that never ends, a
//! server that stalls, tool calls naming unknown tools and devices with broken arguments and
//! no ids, no usage, empty choices, prose without a block. Each ends in one of the paper's
//! statuses with every turn, token and the output cap recorded — never a panic or a hang.

mod common;

use faultbench_agents::{ReactAgent, SadeAgent};
use faultbench_core::RunStatus;
use faultbench_core::agent::{Agent, AgentInput, Budget};
use faultbench_core::status::status_after_agent;
use faultbench_llm::testserver::{
    ServerReply, TestServer, event, openai_finish, openai_reply, openai_text, openai_tool,
};
use faultbench_llm::{ChatModel, OpenAiClient, PriceTable, RetryPolicy};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ANSWER: &str = "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1\ndiagnosis_text:\nospfd on r1 is down.\n=== END ===";

fn client(server: &TestServer) -> Arc<dyn ChatModel> {
    Arc::new(
        OpenAiClient::new("gemma-3-270m", server.base_url(), None)
            .unwrap()
            .with_retry(RetryPolicy {
                max_attempts: 2,
                initial_backoff_ms: 10,
                max_backoff_ms: 20,
                request_timeout_ms: 60_000,
                max_retry_after_ms: 1_000,
            }),
    )
}

/// A price for the local model, so that cost is computed (not `None`).
fn prices() -> PriceTable {
    PriceTable::from_toml_str("[models.\"gemma-3-270m\"]\ninput = 0.1\noutput = 0.4\n").unwrap()
}

fn input(wall_clock_secs: u64, max_turns: u32) -> AgentInput {
    AgentInput::new(
        common::SUMMARY,
        "pc1 cannot reach web1",
        Budget {
            max_turns,
            wall_clock_secs,
        },
    )
}

/// The tool messages of request `n`, as (tool_call_id, content).
fn tool_results(server: &TestServer, n: usize) -> Vec<(String, String)> {
    server.requests()[n]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn a_runaway_reply_is_cut_at_the_wall_clock_and_kept_with_its_usage() {
    // The case: no stop in sight, a token every 40 ms.
    let server = TestServer::always(ServerReply::Sse {
        events: vec![(Duration::ZERO, event(&openai_text("I will check ")))],
        forever: Some((
            Duration::from_millis(40),
            event(&openai_text("the router ")),
        )),
    })
    .await
    .unwrap();
    let agent = ReactAgent::new(client(&server))
        .with_prices(prices())
        .with_max_output_tokens(256);
    assert_eq!(agent.max_output_tokens(), Some(256));
    let t = Instant::now();
    let out = agent
        .run(&input(2, 6), common::tools(common::lab(true)))
        .await;
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(out.hit_wall_clock && out.error.is_none());
    assert_eq!(out.turns.len(), 1);
    let turn = &out.turns[0];
    assert!(turn.cut && turn.usage_estimated);
    assert!(
        turn.text.starts_with("I will check the router"),
        "{:?}",
        turn.text
    );
    assert!(turn.usage.output_tokens > 0 && turn.usage.input_tokens > 0);
    assert_eq!(out.usage, turn.usage);
    assert!(out.cost_usd.unwrap() > 0.0, "priced from the table");
    assert_eq!(out.max_output_tokens, Some(256));
    assert_eq!(server.requests()[0]["max_tokens"], 256);
    assert_eq!(
        status_after_agent(&out),
        RunStatus::NoSubmission,
        "it wrote text, but no verdict: a timeout"
    );
}

#[tokio::test]
async fn stalled_and_mute_servers_end_the_run_at_the_wall_clock() {
    for reply in [ServerReply::Stall, ServerReply::Mute] {
        let server = TestServer::always(reply.clone()).await.unwrap();
        let t = Instant::now();
        let out = SadeAgent::new(client(&server))
            .run(&input(2, 6), common::tools(common::lab(false)))
            .await;
        assert!(
            t.elapsed() < Duration::from_secs(5),
            "{reply:?}: {:?}",
            t.elapsed()
        );
        assert!(out.hit_wall_clock, "{reply:?}");
        assert_eq!(out.turns.len(), 1, "{reply:?}: the cut turn is recorded");
        assert!(out.turns[0].cut && out.turns[0].text.is_empty());
        assert_eq!(status_after_agent(&out), RunStatus::NoOutput, "{reply:?}");
        assert_eq!(
            out.max_output_tokens,
            Some(faultbench_llm::DEFAULT_MAX_OUTPUT_TOKENS)
        );
    }
}

#[tokio::test]
async fn nonsense_tool_calls_without_ids_or_usage_are_answered_and_the_run_goes_on() {
    let turn1 = {
        let mut r = ServerReply::sse(&[
            openai_text("Let me look."),
            openai_tool(0, None, "traceroute_everything", "{}"),
            openai_tool(
                1,
                None,
                "ping_pair",
                "{\"host_a\": \"router99\", \"host_b\": \"pc2\"}",
            ),
            openai_tool(2, None, "frr_show_ip_route", "{host_name: r1"),
            openai_tool(3, None, "", "{}"),
            openai_finish("tool_calls"),
        ]);
        if let ServerReply::Sse { events, .. } = &mut r {
            events.push((Duration::ZERO, "data: [DONE]\n\n".into()));
        }
        r
    };
    // Turn 2 calls a tool again with the same missing ids; turn 3 answers.
    let turn2 = {
        let mut r = ServerReply::sse(&[
            openai_tool(0, None, "get_reachability", "{}"),
            openai_finish("tool_calls"),
        ]);
        if let ServerReply::Sse { events, .. } = &mut r {
            events.push((Duration::ZERO, "data: [DONE]\n\n".into()));
        }
        r
    };
    let server = TestServer::start(move |n, _| match n {
        0 => turn1.clone(),
        1 => turn2.clone(),
        _ => openai_reply(ANSWER, None),
    })
    .await
    .unwrap();
    let out = ReactAgent::new(client(&server))
        .with_prices(prices())
        .run(&input(60, 6), common::tools(common::lab(true)))
        .await;
    assert!(out.error.is_none(), "{:?}", out.error);
    assert_eq!((out.turns.len(), out.tool_calls), (3, 5));
    let results = tool_results(&server, 1);
    assert_eq!(results.len(), 4);
    assert!(
        results[0].1.contains("traceroute_everything"),
        "{results:?}"
    );
    assert!(results[1].1.contains("no device `router99`"), "{results:?}");
    assert!(results[2].1.contains("not a JSON object"), "{results:?}");
    assert!(results[3].1.contains("names no tool"), "{results:?}");
    assert!(results.iter().all(|(_, c)| c.starts_with("ERROR")));
    // Ids are unique over the run although the server sent none.
    let mut ids: Vec<String> = tool_results(&server, 2).into_iter().map(|r| r.0).collect();
    let n = ids.len();
    ids.sort();
    ids.dedup();
    assert_eq!((n, ids.len()), (5, 5), "{ids:?}");
    // No usage from the server: every turn's usage is estimated, and priced.
    assert!(
        out.turns
            .iter()
            .all(|t| t.usage_estimated && t.usage.input_tokens > 0)
    );
    assert!(out.cost_usd.unwrap() > 0.0);
    assert_eq!(status_after_agent(&out), RunStatus::Scored);
    assert_eq!(out.diagnosis().faulty_devices, vec!["r1".to_string()]);
}

#[tokio::test]
async fn empty_choices_end_the_run_as_an_agent_error_keeping_earlier_turns() {
    let server = TestServer::start(|n, _| match n {
        0 => ServerReply::Json(json!({"choices": [{"message": {"role": "assistant", "content": "",
            "tool_calls": [{"type": "function", "function": {"name": "get_reachability", "arguments": "{}"}}]},
            "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 40, "completion_tokens": 5}})),
        _ => ServerReply::Json(json!({"object": "chat.completion", "choices": []})),
    })
    .await
    .unwrap();
    let out = ReactAgent::new(client(&server))
        .run(&input(60, 6), common::tools(common::lab(false)))
        .await;
    assert_eq!(out.turns.len(), 1);
    assert_eq!(out.usage.input_tokens, 40);
    assert!(
        out.error.as_deref().unwrap().contains("choices"),
        "{:?}",
        out.error
    );
    assert_eq!(status_after_agent(&out), RunStatus::AgentError);
}

#[tokio::test]
async fn sade_reminds_a_prose_model_once_and_then_takes_its_answer() {
    let prose = "The network looks mostly fine but r1 might be the problem.";
    // A model that ignores the reminder.
    let server = TestServer::always(openai_reply(prose, Some((500, 12))))
        .await
        .unwrap();
    let out = SadeAgent::new(client(&server))
        .run(&input(60, 6), common::tools(common::lab(true)))
        .await;
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "one reminder, no more");
    let last: &Value = reqs[1]["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["role"], "user");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("=== DIAGNOSIS ===")
    );
    assert_eq!(out.final_text, prose);
    assert_eq!(out.usage.input_tokens, 1000);
    assert!(out.turns.iter().all(|t| !t.usage_estimated));
    assert_eq!(
        status_after_agent(&out),
        RunStatus::Scored,
        "prose is judged leniently"
    );
    assert!(!out.diagnosis().parsed_ok);

    // A model that follows it.
    let server = TestServer::start(move |n, _| {
        if n == 0 {
            openai_reply(prose, None)
        } else {
            openai_reply(ANSWER, None)
        }
    })
    .await
    .unwrap();
    let out = SadeAgent::new(client(&server))
        .run(&input(60, 6), common::tools(common::lab(true)))
        .await;
    assert_eq!(out.turns.len(), 2);
    assert!(out.diagnosis().parsed_ok);
    assert_eq!(status_after_agent(&out), RunStatus::Scored);
}
