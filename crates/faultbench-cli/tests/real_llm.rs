//! The real-model stage: a real small model (Gemma 3 270M) behind a real OpenAI-compatible
//! server (llama.cpp's, through llama-cpp-python) drives `react` and `sade` on a live netns lab
//! and then judges the saved runs. `scripts/real-llm.sh` builds and starts the server and runs
//! these tests with `FAULTBENCH_REAL_LLM_URL` set; without it they are ignored, and run with
//! `--ignored` they fail rather than skip.
//!
//! A 270M model troubleshoots badly, so what is asserted is what must hold whatever it says:
//! every run ends in a terminal status within its wall clock (+ 5 s), every turn's usage is
//! recorded and the cost follows from the price entry for the local model, the output cap is
//! recorded and no request reaches the server without it (a logging proxy sits between
//! faultbench and the server), and judge answers that are not the JSON asked for make the run
//! `judge_failed` with its diagnosis kept.

use faultbench_core::RunStatus;
use faultbench_core::record::RunRecord;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The cap the test configures for the local model.
const CAP: u64 = 192;
/// The agents' wall clock, in seconds.
const WALL: u64 = 60;
/// Price of the local model in the test's price table ($ per million tokens).
const PRICE_IN: f64 = 0.05;
const PRICE_OUT: f64 = 0.2;

fn server_url() -> String {
    std::env::var("FAULTBENCH_REAL_LLM_URL").unwrap_or_else(|_| {
        panic!("FAULTBENCH_REAL_LLM_URL is not set: run these tests through scripts/real-llm.sh")
    })
}

fn model() -> String {
    std::env::var("FAULTBENCH_REAL_LLM_MODEL").unwrap_or_else(|_| "gemma-3-270m".into())
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A logging TCP proxy in front of the server: records every request body, forwards bytes
/// both ways unchanged (streams included). A client that leaves mid-reply closes the upstream
/// connection too, as it would without the proxy.
struct Proxy {
    url: String,
    bodies: Arc<Mutex<Vec<Value>>>,
}

impl Proxy {
    async fn start(upstream_url: &str) -> Proxy {
        let upstream = upstream_url
            .trim_start_matches("http://")
            .split('/')
            .next()
            .unwrap()
            .to_string();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/v1", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let recorded = bodies.clone();
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (upstream, recorded) = (upstream.clone(), recorded.clone());
                tokio::spawn(async move {
                    let _ = relay(client, &upstream, recorded).await;
                });
            }
        });
        Proxy { url, bodies }
    }

    fn bodies(&self) -> Vec<Value> {
        self.bodies.lock().unwrap().clone()
    }
}

async fn relay(
    client: TcpStream,
    upstream: &str,
    recorded: Arc<Mutex<Vec<Value>>>,
) -> std::io::Result<()> {
    let server = TcpStream::connect(upstream).await?;
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let down = tokio::spawn(async move {
        let _ = tokio::io::copy(&mut sr, &mut cw).await;
        let _ = cw.shutdown().await;
    });
    // Requests on one connection come one after the other: head, then Content-Length bytes.
    let mut buf = Vec::new();
    let mut chunk = vec![0u8; 64 * 1024];
    'conn: loop {
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            let n = cr.read(&mut chunk).await?;
            if n == 0 {
                break 'conn;
            }
            buf.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            let n = cr.read(&mut chunk).await?;
            if n == 0 {
                break 'conn;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        let body: Value =
            serde_json::from_slice(&buf[head_end..head_end + len]).unwrap_or_default();
        recorded.lock().unwrap().push(body);
        sw.write_all(&buf[..head_end + len]).await?;
        buf.drain(..head_end + len);
    }
    let _ = sw.shutdown().await;
    let _ = down.await;
    Ok(())
}

/// An LLM config routing the local model through `proxy`, with its cap and its price.
fn config(dir: &Path, proxy: &Proxy) -> PathBuf {
    let model = model();
    std::fs::write(
        dir.join("prices.toml"),
        format!("[models.\"{model}\"]\ninput = {PRICE_IN}\noutput = {PRICE_OUT}\n"),
    )
    .unwrap();
    let p = dir.join("llm.toml");
    std::fs::write(
        &p,
        format!(
            "prices = \"prices.toml\"\n\n[retry]\nmax_attempts = 2\ninitial_backoff_ms = 500\nrequest_timeout_ms = 180000\n\n\
             [providers.openai]\nbase_url = \"{}\"\n\n[models.\"{model}\"]\nmax_output_tokens = {CAP}\n",
            proxy.url
        ),
    )
    .unwrap();
    p
}

async fn faultbench(args: &[&str]) -> (i32, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .current_dir(workspace())
        .args(args)
        .output()
        .await
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

fn records(runs: &Path) -> Vec<RunRecord> {
    let (ok, bad) = faultbench_core::record::scan_records(runs);
    assert!(bad.is_empty(), "unreadable records: {bad:?}");
    ok.into_iter().map(|(_, r)| r).collect()
}

/// Chat requests among the recorded bodies (the proxy also sees nothing else, but be exact).
fn chat_bodies(bodies: &[Value]) -> Vec<&Value> {
    bodies
        .iter()
        .filter(|b| b.get("messages").is_some())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a local model server: scripts/real-llm.sh sets FAULTBENCH_REAL_LLM_URL"]
async fn react_and_sade_on_a_live_lab_then_the_llm_judge_on_the_saved_runs() {
    let url = server_url();
    let model = model();
    let tmp = tempfile::tempdir().unwrap();
    let runs = tmp.path().join("runs");
    let proxy = Proxy::start(&url).await;
    let cfg = config(tmp.path(), &proxy);
    let (cfg_s, runs_s) = (cfg.display().to_string(), runs.display().to_string());
    let wall = WALL.to_string();

    // 1. The agents on the smallest live topology; the baseline's run guarantees the judge
    // below has a scored diagnosis whatever the model managed.
    let t = Instant::now();
    let (code, out) = faultbench(&[
        "bench",
        "--emulator",
        "netns",
        "--agents",
        "baseline,react,sade",
        "--model",
        &model,
        "--max-turns",
        "4",
        "--wall-clock",
        &wall,
        "--scenarios",
        "simple-bgp-router2-bgpd-killed",
        "--judge",
        "rubric",
        "--llm-config",
        &cfg_s,
        "--runs-root",
        &runs_s,
        "--no-report",
    ])
    .await;
    eprintln!("bench took {:.1} s\n{out}", t.elapsed().as_secs_f64());
    assert_eq!(code, 0, "{out}");
    let recs = records(&runs);
    assert_eq!(recs.len(), 3, "{out}");
    let prices = faultbench_llm::PriceTable::from_toml_str(
        &std::fs::read_to_string(tmp.path().join("prices.toml")).unwrap(),
    )
    .unwrap();
    let mut llm_turns = 0;
    for rec in &recs {
        let agent = rec.key.agent.as_str();
        assert!(
            matches!(
                rec.status,
                RunStatus::Scored | RunStatus::NoSubmission | RunStatus::NoOutput
            ),
            "{agent}: {:?} {:?}",
            rec.status,
            rec.error
        );
        if agent == "baseline" {
            continue;
        }
        let phase = rec.phases.agent.as_ref().unwrap();
        let o = &phase.outcome;
        eprintln!(
            "{agent}: {:?}, {} turns ({} cut), {} tool calls, {:?}, ${:?}, {} ms",
            rec.status,
            o.turns.len(),
            o.turns.iter().filter(|t| t.cut).count(),
            o.tool_calls,
            o.usage,
            o.cost_usd,
            phase.duration_ms
        );
        assert!(
            phase.duration_ms <= (WALL + 5) * 1000,
            "{agent}: the agent phase took {} ms, over the {WALL} s wall clock + 5 s",
            phase.duration_ms
        );
        assert_eq!(
            o.max_output_tokens,
            Some(CAP as u32),
            "{agent}: cap recorded"
        );
        assert_eq!(o.model.as_deref(), Some(model.as_str()));
        assert!(!o.turns.is_empty(), "{agent}: no turn recorded");
        let mut sum = faultbench_core::Usage::default();
        for t in &o.turns {
            assert!(
                t.usage.input_tokens + t.usage.cache_read_tokens > 0,
                "{agent}: turn {} has no input usage",
                t.index
            );
            assert!(
                t.usage.output_tokens > 0 || (t.text.is_empty() && t.tool_calls.is_empty()),
                "{agent}: turn {} wrote something but has no output usage",
                t.index
            );
            sum += t.usage;
        }
        assert_eq!(
            o.usage, sum,
            "{agent}: the run's usage is the sum of its turns"
        );
        let expected = prices.cost(&model, &o.usage).unwrap();
        assert!(
            (o.cost_usd.unwrap() - expected).abs() < 1e-12,
            "{agent}: {:?} vs {expected}",
            o.cost_usd
        );
        assert!(o.cost_usd.unwrap() > 0.0);
        llm_turns += o.turns.len();
    }
    let agent_requests = chat_bodies(&proxy.bodies()).len();
    assert_eq!(
        agent_requests, llm_turns,
        "one request per recorded turn, cut turns included"
    );
    for b in chat_bodies(&proxy.bodies()) {
        assert_eq!(
            b["max_tokens"].as_u64(),
            Some(CAP),
            "a request without the cap: {b}"
        );
        assert_eq!(b["stream"], true);
        assert!(b["tools"].as_array().is_some_and(|t| !t.is_empty()));
    }

    // 2. The LLM judge on the saved runs, against the same server.
    let before: Vec<(String, RunStatus)> = recs
        .iter()
        .map(|r| (r.key.agent.clone(), r.status))
        .collect();
    let t = Instant::now();
    let (code, out) = faultbench(&[
        "judge",
        "runs",
        &runs_s,
        "--judge",
        "llm",
        "--model",
        &model,
        "--llm-config",
        &cfg_s,
        "--write",
        "--no-cache",
        "--jobs",
        "1",
    ])
    .await;
    eprintln!("judge took {:.1} s\n{out}", t.elapsed().as_secs_f64());
    assert!(code == 0 || code == 1, "judge runs crashed ({code}): {out}");
    let after = records(&runs);
    let mut judged_or_failed = 0;
    for rec in &after {
        let agent = rec.key.agent.as_str();
        let was = before.iter().find(|(a, _)| a == agent).unwrap().1;
        if was != RunStatus::Scored {
            assert_eq!(rec.status, was, "{agent}: an unjudgeable run was touched");
            continue;
        }
        judged_or_failed += 1;
        match rec.status {
            RunStatus::Scored => {
                let s = rec.scores.as_ref().unwrap();
                assert_eq!(s.judge, format!("llm:{model}"), "{agent}");
                assert!((0.0..=1.0).contains(&s.outcome));
            }
            RunStatus::JudgeFailed => {
                assert!(
                    rec.diagnosis.is_some(),
                    "{agent}: the diagnosis must be kept"
                );
                let e = rec.error.as_deref().unwrap_or_default();
                assert!(!e.is_empty(), "{agent}: judge_failed without a reason");
                eprintln!("{agent}: judge_failed: {e}");
            }
            other => panic!("{agent}: judged run ended {other:?}"),
        }
    }
    assert!(
        judged_or_failed >= 1,
        "the baseline's run at least is judged"
    );
    assert_eq!(
        code == 0,
        after.iter().all(|r| r.status != RunStatus::JudgeFailed)
    );
    let judge_requests: Vec<Value> = chat_bodies(&proxy.bodies())
        .into_iter()
        .skip(agent_requests)
        .cloned()
        .collect();
    assert!(judge_requests.len() >= 2, "{judge_requests:?}");
    for b in &judge_requests {
        assert_eq!(
            b["max_tokens"].as_u64(),
            Some(CAP),
            "a judge request without the cap"
        );
        assert_eq!(b["response_format"]["type"], "json_object");
    }
}

/// An answer from the real server, cut at a deadline by `chat_until`: the text streamed so far
/// is kept with its usage.
///
/// The model decides how long its answer is (Gemma 3 270M mostly echoes this prompt, ~28
/// tokens, in under a second on an idle machine), so a fixed deadline can come after its
/// natural end. An answer that ended on its own sets the next deadline at 60% of the time it
/// took (the prompt is then cached: the time is generation), until one is cut mid-stream.
#[tokio::test]
#[ignore = "needs a local model server: scripts/real-llm.sh sets FAULTBENCH_REAL_LLM_URL"]
async fn a_long_answer_from_the_real_server_is_cut_at_the_deadline_and_kept() {
    use faultbench_llm::{ChatModel, ChatRequest, OpenAiClient, StopReason, chat_until};
    let client = OpenAiClient::new(model(), server_url(), None)
        .unwrap()
        .with_max_output_tokens(4096);
    let req = ChatRequest::new(
        model(),
        "Write the numbers from 1 to 3000 in words, one per line, without stopping.",
    );
    // First token within 60 s even on a loaded machine.
    let t = Instant::now();
    let probe = chat_until(
        &client,
        &ChatRequest {
            max_output_tokens: Some(1),
            ..req.clone()
        },
        tokio::time::Instant::now() + Duration::from_secs(60),
    )
    .await
    .unwrap();
    assert!(!probe.is_cut(), "the server gave no token in 60 s");
    let first_token = t.elapsed();
    let mut allowed = first_token + Duration::from_secs(3);
    let mut tries = Vec::new();
    let r = loop {
        let t = Instant::now();
        let r = chat_until(&client, &req, tokio::time::Instant::now() + allowed)
            .await
            .unwrap();
        let took = t.elapsed();
        tries.push(format!(
            "{allowed:?} allowed: {:?} after {took:?}, {} chars",
            r.stop,
            r.text.len()
        ));
        if r.stop == StopReason::Deadline {
            // Cut promptly at the deadline.
            assert!(took < allowed + Duration::from_secs(2), "{tries:?}");
            if !r.text.is_empty() {
                break r;
            }
            // Cut before the first token: allow more, short of the last natural end.
            allowed = allowed.mul_f64(1.5);
        } else {
            allowed = took.mul_f64(0.6);
        }
        assert!(tries.len() < 6, "never cut mid-answer: {tries:?}");
    };
    eprintln!(
        "first token {first_token:?}; tries {tries:?}; {:?}: {:?}",
        r.usage,
        r.text.chars().take(80).collect::<String>()
    );
    assert!(
        r.usage.output_tokens > 0 && r.usage.input_tokens > 0,
        "{:?}",
        r.usage
    );
    assert_eq!(client.max_output_tokens(), Some(4096));
}

/// `generate --paraphrase-model` with the real local model: every ticket written is put to
/// the model once through the real wire format, every attempt is recorded with its tokens and
/// a verdict of the fact check (a 270M model mostly fails it; whatever it says, nothing that
/// fails the check reaches a file), and the dataset stays valid.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs a local model server: scripts/real-llm.sh sets FAULTBENCH_REAL_LLM_URL"]
async fn generated_tickets_are_paraphrased_by_the_real_model_only_when_the_facts_hold() {
    let model = model();
    let tmp = tempfile::tempdir().unwrap();
    let proxy = Proxy::start(&server_url()).await;
    let cfg = config(tmp.path(), &proxy);
    let out = tmp.path().join("g");
    let (cfg_s, out_s) = (cfg.display().to_string(), out.display().to_string());
    let (code, log) = faultbench(&[
        "generate",
        "--topology",
        "simple_bgp",
        "--seed",
        "5",
        "--count",
        "1",
        "--false-premise",
        "1",
        "--paraphrase-model",
        &model,
        "--llm-config",
        &cfg_s,
        "--out",
        &out_s,
    ])
    .await;
    assert_eq!(code, 0, "{log}");
    let folder = out.join("nika_bgp_Q");
    let records: Vec<Value> = std::fs::read_to_string(folder.join("gen/paraphrases.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(
        records.len(),
        7,
        "one correct-fault ticket, a false premise, five personas"
    );
    assert_eq!(chat_bodies(&proxy.bodies()).len(), records.len());
    let devices = ["router1", "router2", "pc1", "pc2"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for r in &records {
        let verdict = r["verdict"].as_str().unwrap();
        assert!(verdict == "applied" || verdict == "rejected", "{r}");
        assert!(r["tokens"][0].as_u64().unwrap() > 0, "{r}");
        let path = std::fs::read_dir(&folder)
            .unwrap()
            .flatten()
            .map(|d| d.path().join(format!("{}.txt", r["id"].as_str().unwrap())))
            .find(|p| p.is_file())
            .unwrap();
        let spec = faultbench_core::scenario::ScenarioSpec::parse(
            &std::fs::read_to_string(&path).unwrap(),
        )
        .unwrap();
        let (original, said) = (
            r["original"].as_str().unwrap(),
            r["paraphrase"].as_str().unwrap(),
        );
        if verdict == "applied" {
            assert_eq!(spec.ticket(), said);
            assert!(
                faultbench_gen::tickets::paraphrase::check(original, said, &devices).is_empty()
            );
        } else {
            assert_eq!(spec.ticket(), original);
        }
    }
    let (code, v) = faultbench(&["validate", &out_s]).await;
    assert_eq!(code, 0, "{v}");
}
