//! `faultbench generate --paraphrase-model` on a live netns lab (needs root, FRR and
//! iproute2), against a local server speaking the OpenAI wire format: a faithful rewording
//! replaces the ticket and is noted in the file, one that invents an address is refused and the
//! generator's wording stays, every attempt is recorded, a second run asks the model nothing
//! and keeps the paraphrases, and a model that keeps failing stops the pass with a clear error,
//! the tickets in the generator's wording.

use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// Rewords odd requests faithfully and makes even ones invent an address.
struct Reworder(AtomicUsize);

impl Respond for Reworder {
    fn respond(&self, req: &Request) -> ResponseTemplate {
        let n = self.0.fetch_add(1, Ordering::SeqCst);
        let body: Value = serde_json::from_slice(&req.body).unwrap_or_default();
        let user = body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string();
        let ticket = user.split("Ticket:\n").nth(1).unwrap_or_default().trim();
        let text = if n.is_multiple_of(2) {
            format!("To say it once more: {ticket}")
        } else {
            format!("{ticket} It may also involve 203.0.113.77.")
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-5-mini",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 40, "total_tokens": 160}
        }))
    }
}

fn config(dir: &Path, server: &MockServer) -> PathBuf {
    let p = dir.join("llm.toml");
    std::fs::write(
        &p,
        format!(
            "[retry]\nmax_attempts = 1\ninitial_backoff_ms = 10\nmax_backoff_ms = 20\nrequest_timeout_ms = 5000\n\n\
             [providers.openai]\nbase_url = \"{}/v1\"\napi_key = \"sk-test\"\n",
            server.uri()
        ),
    )
    .unwrap();
    p
}

async fn faultbench(args: &[String]) -> (i32, String) {
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_faultbench"))
        .args(args)
        .output()
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// Every scenario file of the dataset folder: file name → text.
fn files(folder: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for sub in std::fs::read_dir(folder).unwrap().flatten() {
        if !sub.path().is_dir() || sub.file_name() == "gen" {
            continue;
        }
        for f in std::fs::read_dir(sub.path()).unwrap().flatten() {
            let name = f.file_name().to_string_lossy().into_owned();
            if name.ends_with(".txt") {
                out.insert(name, std::fs::read_to_string(f.path()).unwrap());
            }
        }
    }
    out
}

fn ticket(text: &str) -> &str {
    let start = text.find("[PROMPT-TO-AGENT]\n").unwrap() + "[PROMPT-TO-AGENT]\n".len();
    let end = text[start..].find("\n[").map_or(text.len(), |i| start + i);
    text[start..end].trim()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paraphrases_are_checked_recorded_and_kept_across_runs() {
    let tmp = tempfile::tempdir().unwrap();
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(Reworder(AtomicUsize::new(0)))
        .mount(&server)
        .await;
    let cfg = config(tmp.path(), &server);
    let out = tmp.path().join("g");
    let args = |model: &str, cfg: &Path| -> Vec<String> {
        [
            "generate",
            "--topology",
            "simple_bgp",
            "--seed",
            "5",
            "--count",
            "1",
            "--false-premise",
            "1",
            "--jobs",
            "1",
            "--paraphrase-model",
            model,
            "--llm-config",
        ]
        .iter()
        .map(|s| s.to_string())
        .chain([
            cfg.display().to_string(),
            "--out".into(),
            out.display().to_string(),
        ])
        .collect()
    };
    let (code, log) = faultbench(&args("gpt-5-mini", &cfg)).await;
    assert_eq!(code, 0, "{log}");
    let folder = out.join("nika_bgp_Q");
    let records: Vec<Value> = std::fs::read_to_string(folder.join("gen/paraphrases.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let first = files(&folder);
    // One correct-fault ticket, one standard false premise and its five persona rewrites.
    assert_eq!(first.len(), 7, "{:?}", first.keys());
    assert_eq!(records.len(), first.len(), "one attempt per ticket");
    assert_eq!(
        server.received_requests().await.unwrap().len(),
        records.len()
    );
    let (mut applied, mut rejected) = (0, 0);
    for r in &records {
        let name = format!("{}.txt", r["id"].as_str().unwrap());
        let text = &first[&name];
        match r["verdict"].as_str().unwrap() {
            "applied" => {
                applied += 1;
                assert_eq!(ticket(text), r["paraphrase"].as_str().unwrap());
                assert!(ticket(text).starts_with("To say it once more:"), "{text}");
                assert!(text.contains("[DIAGNOSTIC-PROCESS]") && text.contains("gpt-5-mini"));
            }
            "rejected" => {
                rejected += 1;
                assert_eq!(ticket(text), r["original"].as_str().unwrap());
                let problems = r["problems"].to_string();
                assert!(problems.contains("adds `203.0.113.77`"), "{problems}");
                assert!(!text.contains("203.0.113.77"), "{text}");
            }
            v => panic!("unexpected verdict {v}: {r}"),
        }
        assert_eq!(r["model"], "gpt-5-mini");
        assert_eq!(r["tokens"], json!([120, 40]));
    }
    assert!(
        applied >= 3 && rejected >= 3,
        "{applied} applied, {rejected} rejected"
    );
    assert!(log.contains("rejected by the fact check"), "{log}");
    let (code, v) = faultbench(&["validate".to_string(), out.display().to_string()]).await;
    assert_eq!(code, 0, "the paraphrased files stay valid: {v}");

    // A second run verifies and writes nothing new, asks the model nothing, and the files keep
    // their paraphrases (the generator rewrote its own wording; the record re-applies them).
    let before = server.received_requests().await.unwrap().len();
    let (code, log) = faultbench(&args("gpt-5-mini", &cfg)).await;
    assert_eq!(code, 0, "{log}");
    assert_eq!(server.received_requests().await.unwrap().len(), before);
    assert_eq!(files(&folder), first);

    // Another model whose server keeps failing: three failures in a row stop the pass with a
    // clear error, the failures are recorded, and every ticket is the generator's own wording
    // (this run rewrote them; no paraphrase of the failing model exists to apply).
    let broken = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(500).set_body_string("boom"))
        .mount(&broken)
        .await;
    let bad_cfg = tmp.path().join("bad");
    std::fs::create_dir_all(&bad_cfg).unwrap();
    let bad_cfg = config(&bad_cfg, &broken);
    let (code, log) = faultbench(&args("gpt-5-nano", &bad_cfg)).await;
    assert_ne!(code, 0, "{log}");
    assert!(log.contains("calls failed in a row"), "{log}");
    assert!(log.contains("base URL"), "{log}");
    let now = files(&folder);
    assert_eq!(now.len(), first.len());
    for r in &records {
        let name = format!("{}.txt", r["id"].as_str().unwrap());
        assert_eq!(ticket(&now[&name]), r["original"].as_str().unwrap());
    }
    let errors = std::fs::read_to_string(folder.join("gen/paraphrases.jsonl"))
        .unwrap()
        .lines()
        .filter(|l| l.contains("\"verdict\":\"error\"") && l.contains("gpt-5-nano"))
        .count();
    assert_eq!(errors, 3);
}
