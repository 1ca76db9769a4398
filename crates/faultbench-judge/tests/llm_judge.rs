//! The LLM judge against a scripted model and against a local server speaking the OpenAI
//! Chat Completions wire format (wiremock), on real scenarios and real release diagnoses.

use faultbench_core::judge::{Judge, JudgeError, JudgeInput};
use faultbench_core::scenario::ScenarioFile;
use faultbench_core::trace::{TraceEvent, digest};
use faultbench_core::{Diagnosis, Usage};
use faultbench_judge::llm::{LlmJudge, VerdictCache};
use faultbench_judge::release::ReleaseRun;
use faultbench_llm::{
    ChatRequest, ChatResponse, LlmError, OpenAiClient, RetryPolicy, ScriptedModel,
};
use faultbench_testkit::release_for_test;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

/// kath2-router0-ripd-down: assert-identifies, must-identify-device, must-identify-component,
/// one bonus; it has a [FIX].
/// The release's file (through `faultbench-testkit`); `None` when the release is missing.
fn ripd_scenario() -> Option<ScenarioFile> {
    let release = release_for_test()?;
    Some(
        ScenarioFile::load(release.scenario("kath2_Q", "base", "kath2-router0-ripd-down")).unwrap(),
    )
}

fn good_diagnosis() -> Diagnosis {
    Diagnosis::parse(
        "=== DIAGNOSIS ===\nis_anomaly: true\nfaulty_devices: router0\ndiagnosis_text:\n\
         ripd is not running on router0, so router1 aged out 192.168.1.0/24 and 192.168.2.0/24 \
         and the IT and CS departments are cut off. Fix: restart FRR on router0 and re-apply \
         the router rip network statements.\n=== END ===",
    )
    .unwrap()
}

/// Which judgement a request is for, from its system prompt.
fn kind(req: &ChatRequest) -> &'static str {
    let system = req.system.as_deref().unwrap_or_default();
    if system.contains("rubric items") {
        "outcome"
    } else if system.contains("remedy") {
        "fix"
    } else {
        "reasoning"
    }
}

const OUTCOME_OK: &str = r#"{"axes": [{"id": 1, "pass": true, "reason": "router0 is named"},
    {"id": 2, "pass": true, "reason": "ripd down"}, {"id": 3, "pass": false, "reason": "no symptom cluster"}]}"#;
const FIX_HALF: &str = r#"{"score": 0.5, "reason": "restart without config"}"#;
const REASONING_OK: &str =
    r#"{"analysis": "Evidence-backed.", "grounding": 8, "causality": 7, "coverage": 6}"#;

fn answer(req: &ChatRequest) -> ChatResponse {
    ChatResponse::text(match kind(req) {
        "outcome" => OUTCOME_OK,
        "fix" => FIX_HALF,
        _ => REASONING_OK,
    })
    .with_usage(Usage {
        input_tokens: 100,
        output_tokens: 10,
        ..Default::default()
    })
}

#[tokio::test]
async fn valid_answers_combine_with_the_release_formula() {
    let Some(scenario) = ripd_scenario() else {
        return;
    };
    let d = good_diagnosis();
    let model = Arc::new(ScriptedModel::from_fn("gpt-5-mini", |r| Ok(answer(r))));
    let judge = LlmJudge::new(model.clone());
    let s = judge.judge(&JudgeInput::new(&scenario, &d)).await.unwrap();
    assert_eq!(s.judge, "llm:gpt-5-mini");
    // Required: assert (mechanical, passes) + 2 musts (pass, pass); bonus: 0 of 1.
    assert_eq!((s.must_passed, s.must_total), (3, 3));
    assert_eq!((s.bonus_passed, s.bonus_total), (0, 1));
    assert!((s.outcome - 0.7).abs() < 1e-12, "{}", s.outcome);
    assert_eq!(s.fix, Some(0.5));
    assert!((s.reasoning.unwrap() - 0.7).abs() < 1e-12);
    assert_eq!(s.reasoning_mode.as_deref(), Some("writeup"));
    let kinds: Vec<&str> = s.per_axis.iter().map(|v| v.kind.as_str()).collect();
    assert_eq!(
        kinds,
        [
            "assert",
            "must",
            "must",
            "bonus",
            "fix",
            "reason-dim",
            "reason-dim",
            "reason-dim"
        ]
    );
    assert_eq!(s.per_axis[3].rationale, "no symptom cluster");
    // Three independent calls; the outcome call lists the must/bonus items, not the assert.
    let reqs = model.requests();
    assert_eq!(reqs.len(), 3);
    let outcome_req = reqs.iter().find(|r| kind(r) == "outcome").unwrap();
    let faultbench_llm::Message::User(user) = &outcome_req.messages[0] else {
        panic!("user message expected")
    };
    assert!(user.contains("1. must-identify-device: router0"), "{user}");
    assert!(!user.contains("assert-identifies"), "{user}");
    assert!(
        reqs.iter()
            .all(|r| r.json_object && r.model == "gpt-5-mini")
    );
    assert_eq!(judge.usage().input_tokens, 300);
    assert_eq!(judge.calls(), 3);
}

#[tokio::test]
async fn a_trace_digest_switches_reasoning_to_trace_mode() {
    let Some(scenario) = ripd_scenario() else {
        return;
    };
    let d = good_diagnosis();
    let events = vec![
        TraceEvent::ToolCall {
            seq: 1,
            tool: "systemctl_ops".into(),
            args: json!({"host_name": "router0", "service": "frr", "operation": "status"}),
        },
        TraceEvent::ToolResult {
            seq: 1,
            output: "ripd: not running".into(),
            error: None,
        },
    ];
    let log = digest(&events);
    let model = Arc::new(ScriptedModel::from_fn("m", |r| Ok(answer(r))));
    let judge = LlmJudge::new(model.clone());
    let s = judge
        .judge(&JudgeInput::new(&scenario, &d).with_digest(&log))
        .await
        .unwrap();
    assert_eq!(s.reasoning_mode.as_deref(), Some("trace"));
    let reasoning = model
        .requests()
        .into_iter()
        .find(|r| kind(r) == "reasoning")
        .unwrap();
    let faultbench_llm::Message::User(user) = &reasoning.messages[0] else {
        panic!()
    };
    assert!(
        user.contains("[INVESTIGATION-LOG]\n1. RAN systemctl_ops("),
        "{user}"
    );
}

#[tokio::test]
async fn malformed_json_gets_one_repair_request() {
    let Some(scenario) = ripd_scenario() else {
        return;
    };
    let d = good_diagnosis();
    let outcome_calls = Arc::new(AtomicUsize::new(0));
    let seen = outcome_calls.clone();
    let model = Arc::new(ScriptedModel::from_fn("m", move |r| {
        if kind(r) == "outcome" && seen.fetch_add(1, Ordering::SeqCst) == 0 {
            return Ok(ChatResponse::text(
                "Item 1 passes, item 2 passes { not json",
            ));
        }
        Ok(answer(r))
    }));
    let judge = LlmJudge::new(model.clone());
    let s = judge.judge(&JudgeInput::new(&scenario, &d)).await.unwrap();
    assert_eq!(s.must_passed, 3);
    assert_eq!(outcome_calls.load(Ordering::SeqCst), 2);
    let repair = model
        .requests()
        .into_iter()
        .find(|r| kind(r) == "outcome" && r.messages.len() == 3)
        .expect("a repair request with the bad answer and the problem");
    assert!(
        matches!(&repair.messages[1], faultbench_llm::Message::Assistant { text, .. } if text.contains("not json"))
    );
    assert!(
        matches!(&repair.messages[2], faultbench_llm::Message::User(t) if t.contains("could not be used"))
    );
    assert_eq!(judge.calls(), 4);
}

#[tokio::test]
async fn repeated_garbage_is_a_judge_error() {
    let Some(scenario) = ripd_scenario() else {
        return;
    };
    let d = good_diagnosis();
    let model = Arc::new(ScriptedModel::from_fn("m", |r| {
        Ok(match kind(r) {
            // Valid JSON, wrong shape: item 3 is never answered.
            "outcome" => {
                ChatResponse::text(r#"{"axes": [{"id": 1, "pass": true, "reason": "x"}]}"#)
            }
            _ => answer(r),
        })
    }));
    let judge = LlmJudge::new(model);
    let err = judge
        .judge(&JudgeInput::new(&scenario, &d))
        .await
        .unwrap_err();
    match err {
        JudgeError::InvalidAnswer(m) => {
            assert!(m.contains("outcome judgement"), "{m}");
            assert!(m.contains("not answered"), "{m}");
        }
        other => panic!("expected InvalidAnswer, got {other:?}"),
    }
}

#[tokio::test]
async fn an_unreachable_model_is_unavailable() {
    let Some(scenario) = ripd_scenario() else {
        return;
    };
    let d = good_diagnosis();
    let model = Arc::new(ScriptedModel::from_fn("m", |_| {
        Err(LlmError::GaveUp {
            provider: "openai".into(),
            attempts: 3,
            elapsed_ms: 10,
            last: "HTTP 503".into(),
        })
    }));
    let err = LlmJudge::new(model)
        .judge(&JudgeInput::new(&scenario, &d))
        .await
        .unwrap_err();
    assert!(
        matches!(&err, JudgeError::Unavailable(m) if m.to_string().contains("503")),
        "{err:?}"
    );
    // The model client's error is the source, not just its text.
    let source = std::error::Error::source(&err).expect("a source");
    assert!(
        matches!(
            source.downcast_ref::<LlmError>(),
            Some(LlmError::GaveUp { attempts: 3, .. })
        ),
        "{source:?}"
    );
}

#[tokio::test]
async fn the_second_judgement_comes_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let Some(scenario) = ripd_scenario() else {
        return;
    };
    let d = good_diagnosis();
    let first_model = Arc::new(ScriptedModel::from_fn("gpt-5-mini", |r| Ok(answer(r))));
    let first =
        LlmJudge::new(first_model.clone()).with_cache(VerdictCache::open(dir.path()).unwrap());
    let a = first.judge(&JudgeInput::new(&scenario, &d)).await.unwrap();
    assert_eq!(first_model.requests().len(), 3);

    // A model that fails every call: only the cache can answer.
    let offline = Arc::new(ScriptedModel::new("gpt-5-mini", vec![]));
    let second = LlmJudge::new(offline.clone()).with_cache(VerdictCache::open(dir.path()).unwrap());
    let b = second.judge(&JudgeInput::new(&scenario, &d)).await.unwrap();
    // The first judgement paid for three calls; the cached one paid nothing.
    let three_calls = Usage {
        input_tokens: 300,
        output_tokens: 30,
        ..Default::default()
    };
    assert_eq!(a.usage, Some(three_calls));
    assert_eq!(b.usage, Some(Usage::default()));
    assert_eq!(b.cost_usd, Some(0.0));
    let spendless = |s: &faultbench_core::Scores| faultbench_core::Scores {
        usage: None,
        cost_usd: None,
        ..s.clone()
    };
    assert_eq!(spendless(&a), spendless(&b));
    assert!(offline.requests().is_empty());
    assert_eq!(second.cache().unwrap().stats(), (3, 0));

    // A different judge model or a different diagnosis is a miss.
    let other = LlmJudge::new(Arc::new(ScriptedModel::new("other-model", vec![])))
        .with_cache(VerdictCache::open(dir.path()).unwrap());
    assert!(other.judge(&JudgeInput::new(&scenario, &d)).await.is_err());
    let mut d2 = d.clone();
    d2.text.push_str(" Also r1.");
    assert!(
        second
            .judge(&JudgeInput::new(&scenario, &d2))
            .await
            .is_err()
    );
}

#[tokio::test]
async fn an_empty_diagnosis_costs_nothing() {
    let Some(scenario) = ripd_scenario() else {
        return;
    };
    let d = Diagnosis {
        is_anomaly: Some(true),
        faulty_devices: vec!["router0".into()],
        text: "  ".into(),
        parsed_ok: true,
    };
    let model = Arc::new(ScriptedModel::new("m", vec![]));
    let s = LlmJudge::new(model.clone())
        .judge(&JudgeInput::new(&scenario, &d))
        .await
        .unwrap();
    assert_eq!(s.outcome, 0.0);
    assert_eq!(s.error.as_deref(), Some("empty diagnosis_text"));
    assert!(s.fix.is_none() && s.reasoning.is_none());
    assert!(model.requests().is_empty());
    assert_eq!((s.usage, s.cost_usd), (Some(Usage::default()), Some(0.0)));
}

#[tokio::test]
async fn each_run_gets_its_own_spend_even_when_judged_concurrently() {
    let Some(scenario) = ripd_scenario() else {
        return;
    };
    let d1 = good_diagnosis();
    let mut d2 = good_diagnosis();
    d2.text.push_str(" The RIP timers are the defaults.");
    // The second diagnosis' calls are bigger, so the two runs' spends differ.
    let model = Arc::new(ScriptedModel::from_fn("gpt-5-mini", |r| {
        let big = r
            .messages
            .iter()
            .any(|m| format!("{m:?}").contains("RIP timers"));
        Ok(answer(r).with_usage(Usage {
            input_tokens: if big { 1000 } else { 100 },
            output_tokens: 10,
            ..Default::default()
        }))
    }));
    let judge = LlmJudge::new(model);
    let (in1, in2) = (
        JudgeInput::new(&scenario, &d1),
        JudgeInput::new(&scenario, &d2),
    );
    let (a, b) = tokio::join!(judge.judge(&in1), judge.judge(&in2));
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.usage.unwrap().input_tokens, 300);
    assert_eq!(b.usage.unwrap().input_tokens, 3000);
    assert_eq!(
        judge.usage().input_tokens,
        3300,
        "the judge's total is the sum"
    );
    // gpt-5-mini at $0.25 / $2 per million tokens.
    assert!((a.cost_usd.unwrap() - (300.0 * 0.25 + 30.0 * 2.0) / 1e6).abs() < 1e-12);
    assert!(b.cost_usd.unwrap() > a.cost_usd.unwrap());
    // An unpriced model: tokens known, cost unknown (never a made-up zero).
    let unpriced = LlmJudge::new(Arc::new(ScriptedModel::from_fn("my-llama", |r| {
        Ok(answer(r))
    })));
    let s = unpriced
        .judge(&JudgeInput::new(&scenario, &d1))
        .await
        .unwrap();
    assert_eq!((s.usage.unwrap().input_tokens, s.cost_usd), (300, None));
}

#[test]
fn the_judge_names_its_model_and_prompt_version() {
    let judge = LlmJudge::new(Arc::new(ScriptedModel::new("gpt-5-mini", vec![])));
    assert_eq!(judge.model(), Some("gpt-5-mini"));
    let v = judge.prompt_version().unwrap();
    assert!(
        v.starts_with(&format!("{}+", faultbench_judge::llm::PROMPT_VERSION)),
        "{v}"
    );
    assert_eq!(v, faultbench_judge::llm::prompts::prompt_version());
    let rubric = faultbench_judge::RubricJudge::new();
    let rv = rubric.prompt_version().unwrap();
    assert!(rv.starts_with("rubric-"), "{rv}");
    let strict =
        faultbench_judge::RubricJudge::new().with_config(faultbench_judge::RubricOptions {
            rule: faultbench_core::judge::OutcomeRule::Strict,
            ..Default::default()
        });
    assert_ne!(
        strict.prompt_version().unwrap(),
        rv,
        "settings are part of the version"
    );
}

fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-judge", "object": "chat.completion", "model": "gpt-5-mini-2025-08-07",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 120, "total_tokens": 1020,
                  "prompt_tokens_details": {"cached_tokens": 0}}
    })
}

/// Answers like a judge model would, by reading the request as sent on the wire.
fn wire_judge(req: &Request) -> ResponseTemplate {
    let body: Value = serde_json::from_slice(&req.body).unwrap_or_default();
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    let user = body["messages"][1]["content"].as_str().unwrap_or_default();
    let content = if system.contains("rubric items") {
        // One verdict per numbered item, passing the ones that mention a device.
        let items: Vec<Value> = user
            .split("[RUBRIC-ITEMS]\n")
            .nth(1)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once(". "))
            .filter_map(|(n, text)| n.parse::<u32>().ok().map(|id| (id, text)))
            .map(|(id, text)| json!({"id": id, "pass": text.contains("device"), "reason": "wire"}))
            .collect();
        json!({"axes": items}).to_string()
    } else if system.contains("remedy") {
        r#"{"score": 1, "reason": "same fix"}"#.to_string()
    } else {
        r#"{"analysis": "ok", "grounding": 5, "causality": 5, "coverage": 5}"#.to_string()
    };
    ResponseTemplate::new(200).set_body_json(completion(&content))
}

#[tokio::test]
async fn a_release_run_is_judged_over_the_openai_wire_format() {
    let Some(release) = release_for_test() else {
        return;
    };
    let run = ReleaseRun::read(release.run_record(
        "base80",
        "ospf_enterprise_static",
        "ospf-enterprise-dns-named-down",
        "cc-baseline",
        "p1",
    ))
    .unwrap();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-judge"))
        .respond_with(wire_judge)
        .expect(3)
        .mount(&server)
        .await;
    let client = OpenAiClient::new(
        "gpt-5-mini",
        format!("{}/v1", server.uri()),
        Some("sk-judge".into()),
    )
    .unwrap()
    .with_retry(RetryPolicy {
        max_attempts: 1,
        initial_backoff_ms: 1,
        max_backoff_ms: 1,
        request_timeout_ms: 5_000,
        max_retry_after_ms: 1,
    });
    let judge = LlmJudge::new(Arc::new(client));
    let s = judge
        .judge(&JudgeInput::new(&run.scenario, &run.diagnosis))
        .await
        .unwrap();
    // Axes: assert-identifies (mechanical pass), must-identify-device (wire: pass),
    // must-identify-component (wire: fail), one bonus (wire: fail).
    assert_eq!(
        (s.must_passed, s.must_total, s.bonus_passed, s.bonus_total),
        (2, 3, 0, 1)
    );
    assert!((s.outcome - 0.7 * 2.0 / 3.0).abs() < 1e-9, "{}", s.outcome);
    assert_eq!(s.fix, Some(1.0));
    assert_eq!(s.reasoning, Some(0.5));
    let reqs = server.received_requests().await.unwrap();
    for r in &reqs {
        let body: Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(body["model"], "gpt-5-mini");
        assert_eq!(body["response_format"]["type"], "json_object");
        assert_eq!(body["messages"][0]["role"], "system");
    }
    assert_eq!(judge.usage().input_tokens, 3 * 900);
    // This run's spend, as sent on the wire, priced as gpt-5-mini (the dated name matches).
    assert_eq!(
        s.usage,
        Some(Usage {
            input_tokens: 3 * 900,
            output_tokens: 3 * 120,
            ..Default::default()
        })
    );
    let want = (2700.0 * 0.25 + 360.0 * 2.0) / 1e6;
    assert!(
        (s.cost_usd.unwrap() - want).abs() < 1e-12,
        "{:?}",
        s.cost_usd
    );
}
