//! `react` and `sade` end to end on the `two-sites` mock network through the real 22 tools,
//! driven by scripted models: tool results reach the model, turns and tokens are recorded,
//! budgets end runs as timeouts, provider failures as agent errors; the ticket hint reaches what
//! each agent (external ones included) sends.

mod common;

use faultbench_agents::{ReactAgent, SadeAgent};
use faultbench_core::agent::Agent;
use faultbench_core::status::status_after_agent;
use faultbench_core::{RunStatus, Usage};
use faultbench_llm::{ChatResponse, LlmError, Message, ScriptedModel, ToolCall};
use serde_json::json;
use std::sync::Arc;

const ANSWER: &str = "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: r1\ndiagnosis_text:\nospfd on r1 is not running, so r1 no longer advertises 10.0.1.0/24.\n=== END ===";

fn usage(input: u64, cached: u64, output: u64) -> Usage {
    Usage {
        input_tokens: input,
        cache_read_tokens: cached,
        cache_write_tokens: 0,
        output_tokens: output,
    }
}

/// The tool result the model received for `call_id` in the last request.
fn result_for(model: &ScriptedModel, call_id: &str) -> String {
    let reqs = model.requests();
    reqs.last()
        .unwrap()
        .messages
        .iter()
        .find_map(|m| match m {
            Message::ToolResult {
                call_id: id,
                content,
                ..
            } if id == call_id => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_else(|| panic!("no result for {call_id}"))
}

#[tokio::test]
async fn react_investigates_the_mock_network_and_answers() {
    let model = Arc::new(ScriptedModel::new(
        "gpt-5",
        vec![
            ChatResponse::tool_calls(
                "Start with reachability and r1's OSPF view.",
                vec![
                    ToolCall::new("c1", "get_reachability", json!({})),
                    ToolCall::new(
                        "c2",
                        "frr_exec",
                        json!({"router_name": "r1", "command": "show ip ospf neighbor"}),
                    ),
                ],
            )
            .with_usage(usage(3000, 0, 120)),
            ChatResponse::text(ANSWER).with_usage(usage(400, 3072, 300)),
        ],
    ));
    let agent = ReactAgent::new(model.clone());
    let input = common::input("pc1 cannot reach the web server.", 20);
    let out = agent.run(&input, common::tools(common::lab(true))).await;

    assert_eq!(status_after_agent(&out), RunStatus::Scored);
    assert_eq!(out.diagnosis().faulty_devices, vec!["r1"]);
    assert_eq!((out.turns.len(), out.tool_calls), (2, 2));
    assert_eq!(out.turns[0].tool_calls[1].tool, "frr_exec");
    assert_eq!(out.turns[1].usage.cache_read_tokens, 3072);
    assert_eq!(out.usage, usage(3400, 3072, 420));
    // The release's GPT-5 cost: (in·1.25 + cached·0.125 + out·10) / 1e6.
    let expected = (3400.0 * 1.25 + 3072.0 * 0.125 + 420.0 * 10.0) / 1e6;
    assert!((out.cost_usd.unwrap() - expected).abs() < 1e-12);
    assert!(!out.hit_max_turns && out.error.is_none());

    // The model saw the real tool outputs from the network.
    assert!(result_for(&model, "c1").contains("\"down\""));
    assert_eq!(result_for(&model, "c2").trim(), "ospfd is not running");
    // The first request carried the paper's user message, a system prompt and the 22 tools.
    let first = &model.requests()[0];
    assert_eq!(first.messages[0], Message::user(&input.prompt));
    assert_eq!(first.tools.len(), 22);
    assert!(
        first
            .system
            .as_deref()
            .unwrap()
            .contains("=== DIAGNOSIS ===")
    );
}

#[tokio::test]
async fn react_budget_exhaustion_is_a_timeout_not_an_error() {
    let model = Arc::new(ScriptedModel::from_fn("gpt-5", |_| {
        Ok(ChatResponse::tool_calls(
            "still looking",
            vec![ToolCall::new("x", "get_reachability", json!({}))],
        ))
    }));
    let out = ReactAgent::new(model.clone())
        .run(
            &common::input("pc1 is down", 3),
            common::tools(common::lab(false)),
        )
        .await;
    assert!(out.hit_max_turns);
    assert!(out.error.is_none());
    assert_eq!((out.turns.len(), out.tool_calls), (3, 3));
    assert_eq!(model.requests().len(), 3, "exactly max_turns model calls");
    assert_eq!(status_after_agent(&out), RunStatus::NoSubmission);
}

#[tokio::test]
async fn bad_tool_calls_are_reported_to_the_model_and_provider_failures_end_the_run() {
    let model = Arc::new(ScriptedModel::new(
        "gpt-5",
        vec![ChatResponse::tool_calls(
            "",
            vec![
                ToolCall::new("a", "no_such_tool", json!({})),
                ToolCall::new("b", "ping_pair", json!("{not json")),
                ToolCall::new(
                    "c",
                    "ping_pair",
                    json!({"host_a": "pc1", "host_b": "pc2; reboot"}),
                ),
            ],
        )],
    ));
    model.push_error(LlmError::GaveUp {
        provider: "openai".into(),
        attempts: 6,
        elapsed_ms: 90_000,
        last: "HTTP 503".into(),
    });
    let out = ReactAgent::new(model.clone())
        .run(
            &common::input("pc1 is down", 20),
            common::tools(common::lab(false)),
        )
        .await;
    assert!(result_for(&model, "a").starts_with("ERROR running no_such_tool"));
    assert!(result_for(&model, "b").contains("not a JSON object"));
    assert!(result_for(&model, "c").starts_with("ERROR running ping_pair"));
    assert_eq!(out.tool_calls, 3);
    assert!(
        out.error.as_deref().unwrap().contains("kept failing"),
        "{:?}",
        out.error
    );
    assert_eq!(out.turns.len(), 1, "the turn before the failure is kept");
    assert_eq!(status_after_agent(&out), RunStatus::AgentError);
}

#[tokio::test]
async fn sade_uses_playbooks_and_snapshots_on_the_mock_network() {
    let model = Arc::new(ScriptedModel::new(
        "claude-sonnet-4-6",
        vec![
            ChatResponse::tool_calls(
                "Phase 1.",
                vec![ToolCall::new("s1", "get_reachability", json!({}))],
            ),
            ChatResponse::tool_calls(
                "Phase 3: pc1's LAN is cut off; lead is routing on r1.",
                vec![
                    ToolCall::new("s2", "playbook", json!({"family": "routing-daemon"})),
                    ToolCall::new("s3", "router_snapshot", json!({"router": "r1"})),
                    ToolCall::new("s4", "router_snapshot", json!({"router": "r1; reboot"})),
                ],
            ),
            // No block yet: SADE asks once for it.
            ChatResponse::text("r1's ospfd is dead."),
            ChatResponse::text(ANSWER),
        ],
    ));
    let out = SadeAgent::new(model.clone())
        .run(
            &common::input("The web server web1 is down, please restart it.", 20),
            common::tools(common::lab(true)),
        )
        .await;
    assert_eq!(status_after_agent(&out), RunStatus::Scored);
    assert_eq!(out.diagnosis().faulty_devices, vec!["r1"]);
    assert_eq!(out.turns.len(), 4);
    assert_eq!(out.tool_calls, 4);

    let reqs = model.requests();
    let system = reqs[0].system.clone().unwrap();
    assert!(system.contains("NO-FAULT CRITERION") && system.contains("NORMAL SIGNALS"));
    assert_eq!(reqs[0].tools.len(), 22 + 4);
    let book = result_for(&model, "s2");
    assert!(book.contains("Fingerprint:") && book.contains("routing-daemon"));
    let snap = result_for(&model, "s3");
    assert!(
        snap.contains("## OSPF neighbours\nospfd is not running"),
        "{snap}"
    );
    assert!(snap.contains("## routing table"), "{snap}");
    assert!(result_for(&model, "s4").contains("must be a device name"));
    // The nudge asked for the block after the answer without one.
    let nudge = &reqs[3].messages.last().unwrap();
    assert!(matches!(nudge, Message::User(t) if t.contains("DIAGNOSIS")));
    // Priced as Sonnet (no cache here): in 0, out 0 → zero but known.
    assert_eq!(out.cost_usd, Some(0.0));
}

/// A provider that never answers in time.
struct Stalled;

#[async_trait::async_trait]
impl faultbench_llm::ChatModel for Stalled {
    fn model(&self) -> &str {
        "stalled"
    }
    async fn chat(&self, _req: &faultbench_llm::ChatRequest) -> Result<ChatResponse, LlmError> {
        tokio::time::sleep(std::time::Duration::from_secs(30)).await;
        Ok(ChatResponse::text(ANSWER))
    }
}

#[tokio::test]
async fn the_wall_clock_cap_ends_a_stalled_run() {
    let input = faultbench_core::agent::AgentInput::new(
        common::SUMMARY,
        "pc1 is down",
        faultbench_core::agent::Budget {
            max_turns: 20,
            wall_clock_secs: 1,
        },
    );
    let started = std::time::Instant::now();
    let out = SadeAgent::new(Arc::new(Stalled))
        .run(&input, common::tools(common::lab(false)))
        .await;
    assert!(
        started.elapsed() < std::time::Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(out.hit_wall_clock && !out.hit_max_turns && out.error.is_none());
    assert_eq!(status_after_agent(&out), RunStatus::NoOutput);
    assert_eq!(
        out.cost_usd, None,
        "an unpriced model has no cost, not a zero"
    );
}

/// What each LLM or external agent actually sends carries the skeptical sentence with
/// `--ticket-hint skeptical` and nothing of the kind by default.
#[tokio::test]
async fn the_ticket_hint_reaches_what_each_agent_sends() {
    use faultbench_agents::ExternalAgent;
    use faultbench_agents::external::ExternalTemplates;
    use faultbench_agents::prompt::SKEPTICAL_SENTENCE;
    use faultbench_core::agent::TicketHint;

    for hint in TicketHint::ALL {
        let want = hint == TicketHint::Skeptical;
        let input = common::input("pc1 cannot reach the web server.", 3);
        let model = Arc::new(ScriptedModel::new("m", vec![ChatResponse::text(ANSWER)]));
        ReactAgent::new(model.clone())
            .with_ticket_hint(hint)
            .run(&input, common::tools(common::lab(true)))
            .await;
        let system = model.requests()[0].system.clone().unwrap();
        assert_eq!(system.contains(SKEPTICAL_SENTENCE), want, "react {hint}");

        let model = Arc::new(ScriptedModel::new("m", vec![ChatResponse::text(ANSWER)]));
        SadeAgent::new(model.clone())
            .with_ticket_hint(hint)
            .run(&input, common::tools(common::lab(true)))
            .await;
        let system = model.requests()[0].system.clone().unwrap();
        assert_eq!(system.contains(SKEPTICAL_SENTENCE), want, "sade {hint}");

        // An external CLI that prints the instructions it was given as its answer.
        let t = ExternalTemplates::from_toml_str(
            "[agents.echo]\nprogram = \"printf\"\nargs = [\"%s\", \"{system}\"]\noutput = \"text\"\nmcp_config = \"none\"\n",
        )
        .unwrap();
        let base = tempfile::tempdir().unwrap();
        let out = ExternalAgent::new("echo", t.agents["echo"].clone())
            .with_ticket_hint(hint)
            .with_workdir_base(base.path())
            .run(&input, common::tools(common::lab(true)))
            .await;
        assert!(out.final_text.contains("=== DIAGNOSIS ==="), "{out:?}");
        assert_eq!(
            out.final_text.contains(SKEPTICAL_SENTENCE),
            want,
            "external {hint}"
        );
    }
}
