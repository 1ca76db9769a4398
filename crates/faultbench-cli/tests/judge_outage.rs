//! The LLM judge in a benchmark. A judge outage leaves `judge_failed` runs (diagnoses kept);
//! once the judge is back, `faultbench judge runs --write` scores them without re-running any
//! agent. The judge's own spend is recorded per run, reported apart in Table 8 and added again
//! when runs are re-judged. The judge model is a local server speaking the OpenAI
//! chat-completions wire format.

use faultbench_core::scenario::AxisKind;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, Request, ResponseTemplate};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bench")
}

fn completion(content: &str, (prompt, out): (u64, u64)) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-5-mini",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": out, "total_tokens": prompt + out}
    })
}

/// Answers the three judgements: every rubric item passes, fix 1, reasoning 8/7/6.
fn healthy_judge(req: &Request) -> ResponseTemplate {
    judge_answer(req, (500, 50))
}

/// [`healthy_judge`] with each call billed `usage` (prompt, completion) tokens.
fn judge_answer(req: &Request, usage: (u64, u64)) -> ResponseTemplate {
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
    ResponseTemplate::new(200).set_body_json(completion(&content, usage))
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
            .filter(|v| matches!(v.kind, AxisKind::Must | AxisKind::Bonus))
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

fn bench_args(cfg: &Path, runs: &Path, judge: &str, extra: &[&str]) -> Vec<String> {
    let mut v: Vec<String> = [
        "bench",
        "--emulator",
        "mock",
        "--agents",
        "baseline",
        "--scope",
        "all",
        "--judge",
        judge,
    ]
    .map(String::from)
    .to_vec();
    v.extend(["--llm-config".into(), cfg.display().to_string()]);
    v.extend([
        "--dataset".into(),
        fixtures().join("dataset").display().to_string(),
    ]);
    v.extend([
        "--topologies".into(),
        fixtures().join("topologies").display().to_string(),
    ]);
    v.extend(["--runs-root".into(), runs.display().to_string()]);
    v.extend(extra.iter().map(|s| s.to_string()));
    v
}

/// gpt-5-mini at the built-in list price: $0.25 in, $2 out per million tokens.
fn mini_price(input: u64, output: u64) -> f64 {
    (input as f64 * 0.25 + output as f64 * 2.0) / 1e6
}

#[tokio::test]
async fn the_judges_spend_is_recorded_per_run_reported_apart_and_counted_on_rejudging() {
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let server = MockServer::start().await;
    let cfg = config(tmp.path(), &server);
    // Large calls, so that the spend shows at the report's two decimals.
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(|r: &Request| judge_answer(r, (200_000, 20_000)))
        .mount(&server)
        .await;
    let (code, out) = faultbench(tmp.path(), bench_args(&cfg, &runs, "llm", &[])).await;
    assert_eq!(code, 0, "{out}");
    let calls = server.received_requests().await.unwrap().len() as u64;
    let recs = records(&runs);
    assert_eq!(recs.len(), 2);
    let mut total_in = 0;
    let mut judge_usd = 0.0;
    for r in &recs {
        assert_eq!(r.status, faultbench_core::RunStatus::Scored, "{out}");
        let phase = r.phases.judge.as_ref().unwrap();
        let u = phase.usage.expect("the judge's tokens are recorded");
        let n = u.input_tokens / 200_000;
        // One call per judgement: outcome, reasoning, and fix where the scenario has one.
        let want = if r.scenario.text.contains("[FIX]") {
            3
        } else {
            2
        };
        assert_eq!(n, want, "{u:?}");
        assert_eq!(u.output_tokens, n * 20_000);
        let cost = phase.cost_usd.unwrap();
        assert!((cost - mini_price(u.input_tokens, u.output_tokens)).abs() < 1e-9);
        assert_eq!(r.scores.as_ref().unwrap().cost_usd, Some(cost));
        total_in += u.input_tokens;
        judge_usd += cost;
    }
    assert_eq!(total_in, calls * 200_000, "every call is counted once");
    // The registry carries the judge's spend beside the agent's.
    let manifest = std::fs::read_to_string(runs.join("MANIFEST.csv")).unwrap();
    assert!(
        manifest
            .lines()
            .next()
            .unwrap()
            .ends_with(",judge_in_tokens,judge_out_tokens,judge_cost_usd")
    );
    // Table 8: the agent's cost (the baseline's $0), the judge's apart, and both together.
    let report = std::fs::read_to_string(runs.join("report/report.md")).unwrap();
    let row = report
        .lines()
        .find(|l| l.starts_with("| baseline | 2 |"))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(
        row.ends_with(&format!("| {judge_usd:.2} | {judge_usd:.2} |")),
        "judge total, then agent + judge: {row}"
    );
    assert!(
        (judge_usd - 5.0 * mini_price(200_000, 20_000)).abs() < 1e-9,
        "{judge_usd}"
    );
    assert!(report.contains("Judge USD total"), "{report}");

    // Re-judging without the cache pays again, and that spend is added to each record.
    let (code, out) = faultbench(
        tmp.path(),
        vec![
            "judge".into(),
            "runs".into(),
            runs.display().to_string(),
            "--judge".into(),
            "llm".into(),
            "--write".into(),
            "--no-cache".into(),
            "--llm-config".into(),
            cfg.display().to_string(),
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    let again: f64 = records(&runs)
        .iter()
        .map(|r| r.phases.judge.as_ref().unwrap().cost_usd.unwrap())
        .sum();
    assert!(
        (again - 2.0 * judge_usd).abs() < 1e-9,
        "{again} vs {judge_usd}"
    );

    // Re-judging with the rubric makes it the root's judge: a resume must use it.
    let (code, out) = faultbench(
        tmp.path(),
        vec![
            "judge".into(),
            "runs".into(),
            runs.display().to_string(),
            "--write".into(),
        ],
    )
    .await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("judge is now rubric"), "{out}");
    let (code, out) = faultbench(tmp.path(), bench_args(&cfg, &runs, "llm", &["--resume"])).await;
    assert_eq!(code, 2, "{out}");
    assert!(
        out.contains("judge.name: stored rubric, new llm:gpt-5-mini"),
        "{out}"
    );
    let (code, out) =
        faultbench(tmp.path(), bench_args(&cfg, &runs, "rubric", &["--resume"])).await;
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("nothing to run"), "{out}");
}
