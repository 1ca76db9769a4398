//! `faultbench generate --paraphrase-model M`: rewords the tickets a run wrote with a chat model,
//! keeping a paraphrase only when it keeps every fact (`faultbench_gen::tickets::paraphrase`).
//!
//! Every attempt is appended (synced) to `<folder>/gen/paraphrases.jsonl` before the file is
//! rewritten, so a crash loses nothing and a second run neither asks again nor loses a
//! paraphrase: when the generator rewrites a ticket to its own wording (a re-run), the recorded
//! paraphrase of that wording is applied again without a model call.

use anyhow::Context;
use faultbench_core::fsutil::{append_line_synced, read_regular_string_capped, write_atomic};
use faultbench_core::scenario::ScenarioSpec;
use faultbench_gen::tickets::paraphrase::{self, Record};
use faultbench_llm::{ChatModel, ChatRequest, LlmOptions};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Output cap of one call (a ticket is a few sentences).
const MAX_OUTPUT_TOKENS: u32 = 600;
/// This many failed calls in a row stop the pass (the server is down or the model unknown).
const MAX_ERRORS_IN_A_ROW: usize = 3;
/// Largest scenario file read.
const MAX_FILE: u64 = 1 << 20;

/// What a pass did.
#[derive(Debug, Default)]
pub struct Summary {
    pub applied: usize,
    pub rejected: usize,
    pub errors: usize,
    pub reused: usize,
    pub tokens: (u64, u64),
}

/// Connects to `model` (`--llm-config` or the environment, as `bench` does).
pub fn connect(model: &str, llm_config: Option<&Path>) -> anyhow::Result<Arc<dyn ChatModel>> {
    let options = LlmOptions::discover(llm_config)
        .with_context(|| "--paraphrase-model needs an LLM configuration".to_string())?;
    options
        .connect(model)
        .with_context(|| format!("--paraphrase-model {model}"))
}

/// The scenario files of a dataset folder (`<out>/<topology>_Q`): `*.txt` directly in its
/// sub-folders other than `gen/`; links are not followed.
fn scenario_files(folder: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    let entries =
        std::fs::read_dir(folder).with_context(|| format!("cannot read {}", folder.display()))?;
    for sub in entries.flatten() {
        let Ok(kind) = sub.file_type() else { continue };
        if !kind.is_dir() || sub.file_name() == "gen" {
            continue;
        }
        for f in std::fs::read_dir(sub.path())?.flatten() {
            let is_file = f.file_type().is_ok_and(|t| t.is_file());
            if is_file && f.path().extension().is_some_and(|e| e == "txt") {
                out.push(f.path());
            }
        }
    }
    out.sort();
    Ok(out)
}

fn read_records(path: &Path) -> Vec<Record> {
    read_regular_string_capped(path, 256 << 20)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Rewords every ticket under `folder` not paraphrased yet; `devices` are the lab's device
/// names, lowercase.
pub async fn run(
    folder: &Path,
    chat: Arc<dyn ChatModel>,
    label: &str,
    devices: &BTreeSet<String>,
) -> anyhow::Result<Summary> {
    let log = folder.join("gen").join("paraphrases.jsonl");
    std::fs::create_dir_all(folder.join("gen"))?;
    let records = read_records(&log);
    let files = scenario_files(folder)?;
    let mut s = Summary::default();
    let mut errors_in_a_row = 0;
    errln!(
        "paraphrasing {} ticket(s) with {label} ({} recorded before)",
        files.len(),
        records.len()
    );
    for (k, path) in files.iter().enumerate() {
        let text = read_regular_string_capped(path, MAX_FILE)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let spec = ScenarioSpec::parse(&text).with_context(|| format!("{}", path.display()))?;
        let ticket = spec.ticket().to_string();
        let id = spec.id().to_string();
        let known = records.iter().rev().find(|r| {
            r.id == id && r.model == label && (r.original == ticket || r.paraphrase == ticket)
        });
        if let Some(r) = known {
            if r.verdict == "applied" && r.original == ticket {
                let out = paraphrase::apply(&spec, &r.paraphrase, label)?;
                write_atomic(path, out.to_text().as_bytes())?;
                s.reused += 1;
            }
            continue;
        }
        let req = ChatRequest {
            max_output_tokens: Some(MAX_OUTPUT_TOKENS),
            ..ChatRequest::new(chat.model(), paraphrase::request_text(&ticket))
        };
        // Bounded by the client: its request timeout and retries (LLM configuration `[retry]`).
        let reply = chat.chat(&req).await;
        let mut rec = Record {
            id: id.clone(),
            model: label.to_string(),
            prompt_version: paraphrase::PROMPT_VERSION.into(),
            original: ticket.clone(),
            paraphrase: String::new(),
            verdict: "error".into(),
            problems: Vec::new(),
            tokens: (0, 0),
        };
        match reply {
            Ok(r) => {
                errors_in_a_row = 0;
                rec.tokens = (r.usage.total_input(), r.usage.output_tokens);
                s.tokens.0 += rec.tokens.0;
                s.tokens.1 += rec.tokens.1;
                rec.paraphrase = paraphrase::clean_reply(&r.text);
                rec.problems = paraphrase::check(&ticket, &rec.paraphrase, devices);
                rec.verdict = if rec.problems.is_empty() {
                    "applied"
                } else {
                    "rejected"
                }
                .into();
            }
            Err(e) => rec.problems.push(e.to_string()),
        }
        let line = serde_json::to_string(&rec)?;
        append_line_synced(&log, &line)
            .with_context(|| format!("cannot append to {}", log.display()))?;
        match rec.verdict.as_str() {
            "applied" => {
                let out = paraphrase::apply(&spec, &rec.paraphrase, label)?;
                write_atomic(path, out.to_text().as_bytes())
                    .with_context(|| format!("cannot write {}", path.display()))?;
                s.applied += 1;
            }
            "rejected" => s.rejected += 1,
            _ => {
                s.errors += 1;
                errors_in_a_row += 1;
            }
        }
        errln!(
            "[{}/{}] {id}: {}{}",
            k + 1,
            files.len(),
            rec.verdict,
            if rec.problems.is_empty() {
                String::new()
            } else {
                format!(" ({})", rec.problems.join("; "))
            }
        );
        if errors_in_a_row >= MAX_ERRORS_IN_A_ROW {
            anyhow::bail!(
                "--paraphrase-model {label}: {MAX_ERRORS_IN_A_ROW} calls failed in a row (last: {}); \
                 the tickets keep the generator's wording; check the model name and its base URL \
                 (--llm-config or OPENAI_BASE_URL / ANTHROPIC_BASE_URL)",
                rec.problems.join("; ")
            );
        }
    }
    outln!(
        "paraphrases: {} applied, {} rejected by the fact check, {} failed calls, {} re-applied from {} ({} input / {} output tokens)",
        s.applied,
        s.rejected,
        s.errors,
        s.reused,
        log.display(),
        s.tokens.0,
        s.tokens.1
    );
    Ok(s)
}
