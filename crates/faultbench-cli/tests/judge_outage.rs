//! A judge outage during a benchmark leaves `judge_failed` runs (diagnoses kept); once the judge
//! is back, `faultbench judge runs --write` scores them without re-running any agent. The judge
//! model is a local server speaking the OpenAI chat-completions wire format.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

fn completion(content: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-5-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 500, "completion_tokens": 50, "total_tokens": 550}
    })
}

/// Answers the three judgements: every rubric item passes, fix 1, reasoning 8/7/6.
fn healthy_judge(req: &Request) -> ResponseTemplate {
    let body: Value = serde_json::from_slice(&req.body).unwrap_or_default();
    let system = body["messages"][0]["content"].as_str().unwrap_or_default();
    let user = body["messages"][1]["content"].as_str().unwrap_or_default();
    let content = if system.contains("rubric items") {
        let items: Vec<Value> = user
            .split("[RUBRIC-ITEMS]\n")
            .nth(1)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.split_once(". "))
            .filter_map(|(n, _)| n.parse::<u32>().ok())
            .map(|id| json!({"id": id, "pass": true, "reason": "present"}))
            .collect();
        json!({ "axes": items }).to_string()
    } else if system.contains("remedy") {
        r#"{"score": 1, "reason": "same fix"}"#.to_string()
    } else {
        r#"{"analysis": "grounded", "grounding": 8, "causality": 7, "coverage": 6}"#.to_string()
    };
    ResponseTemplate::new(200).set_body_json(completion(&content))
}

fn config(dir: &Path, server: &MockServer) -> PathBuf {
    let p = dir.join("llm.toml");
    std::fs::write(
        &p,
        format!(
            "[retry]\nmax_attempts = 2\ninitial_backoff_ms = 10\nmax_backoff_ms = 20\nrequest_timeout_ms = 5000\n\n\
             [providers.openai]\nbase_url = \"{}/v1\"\napi_key = \"sk-test\"\n",
            server.uri()
        ),
    )
    .unwrap();
    p
}

async fn faultbench(cwd: &Path, args: Vec<String>) -> (i32, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .current_dir(cwd)
        .args(args)
        .output()
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn records(runs: &Path) -> Vec<faultbench_core::record::RunRecord> {
    let (ok, bad) = faultbench_core::record::scan_records(runs);
    assert!(bad.is_empty());
    ok.into_iter().map(|(_, r)| r).collect()
}

#[tokio::test]
async fn judge_failed_runs_are_completed_later_without_rerunning_agents() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let server = MockServer::start().await;
    let cfg = config(tmp.path(), &server);
    let outage = Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(503).set_body_string("upstream down"))
        .mount_as_scoped(&server)
        .await;
    let s = |x: &str| x.to_string();
    let p = |x: &Path| x.display().to_string();
    let (code, out) = faultbench(
        tmp.path(),
        vec![
            s("bench"),
            s("--emulator"),
            s("mock"),
            s("--agents"),
            s("baseline"),
            s("--scope"),
            s("all"),
            s("--judge"),
            s("llm"),
            s("--llm-config"),
            p(&cfg),
            s("--no-report"),
            s("--dataset"),
            p(&fixtures().join("dataset")),
            s("--topologies"),
            p(&fixtures().join("topologies")),
            s("--runs-root"),
            p(&runs),
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    let before = records(&runs);
    assert_eq!(before.len(), 2);
    for r in &before {
        assert_eq!(r.status, faultbench_core::RunStatus::JudgeFailed, "{out}");
        assert!(r.diagnosis.is_some(), "the diagnosis is kept");
        assert!(
            r.error.as_deref().unwrap_or("").contains("503"),
            "{:?}",
            r.error
        );
    }
    drop(outage);

    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(healthy_judge)
        .mount(&server)
        .await;
    let (code, out) = faultbench(
        tmp.path(),
        vec![
            s("judge"),
            s("runs"),
            p(&runs),
            s("--judge"),
            s("llm"),
            s("--write"),
            s("--llm-config"),
            p(&cfg),
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    let after = records(&runs);
    assert_eq!(after.len(), 2);
    for (a, b) in after.iter().zip(&before) {
        assert_eq!(a.key, b.key);
        assert_eq!(a.status, faultbench_core::RunStatus::Scored, "{out}");
        let scores = a.scores.as_ref().unwrap();
        // Judged by the model: every must/bonus item passes, reasoning is (8 + 7 + 6) / 30.
        for v in scores
            .per_axis
            .iter()
            .filter(|v| v.kind == "must" || v.kind == "bonus")
        {
            assert_eq!(v.score, 1.0, "{v:?}");
        }
        assert!((scores.reasoning.unwrap() - 0.7).abs() < 1e-9, "{scores:?}");
        // The agent phase is untouched: same answer, same tool calls, same timing.
        assert_eq!(a.phases.agent, b.phases.agent);
        assert_eq!(a.started_at, b.started_at);
    }
    let manifest = std::fs::read_to_string(runs.join("MANIFEST.csv")).unwrap();
    assert_eq!(
        manifest.lines().filter(|l| l.contains(",scored,")).count(),
        2,
        "{manifest}"
    );
}
