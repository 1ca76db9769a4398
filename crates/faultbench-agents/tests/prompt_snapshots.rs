//! Every prompt the bundled agents send, compared byte for byte with golden copies in
//! `tests/snapshots/`, for both ticket hints — so that any change to a prompt shows up in
//! review as a changed file. After an intended change, regenerate them with
//!
//! ```sh
//! FAULTBENCH_BLESS=1 cargo test -p faultbench-agents --test prompt_snapshots
//! ```
//!
//! and commit the result. Also: with `--ticket-hint none`, no bundled prompt says anything
//! about the ticket's reliability (the paper's agents were told nothing of the kind).

use faultbench_agents::prompt::{
    DIAGNOSIS_CONTRACT, SKEPTICAL_SENTENCE, external_instructions, react_system,
};
use faultbench_agents::sade::{sade_prompt_texts, sade_system};
use faultbench_agents::{ExternalAgent, ExternalTemplates, ReactAgent, SadeAgent};
use faultbench_core::agent::{Agent, TicketHint};
use faultbench_emu::tools::TOOL_NAMES;
use faultbench_llm::ScriptedModel;
use std::path::{Path, PathBuf};
use std::sync::Arc;

fn snapshot_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

/// Compares `actual` with the golden file `name`, or rewrites it under `FAULTBENCH_BLESS=1`.
fn check_snapshot(name: &str, actual: &str) {
    let path = snapshot_dir().join(name);
    if std::env::var_os("FAULTBENCH_BLESS").is_some_and(|v| v == "1") {
        std::fs::create_dir_all(snapshot_dir()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "no golden file {} ({e}).\nIf this prompt is new, create it with \
             `FAULTBENCH_BLESS=1 cargo test -p faultbench-agents --test prompt_snapshots` and commit it.",
            path.display()
        )
    });
    if expected != actual {
        let line = expected
            .lines()
            .zip(actual.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "the prompt in {} changed (first difference at line {}):\n  golden: {:?}\n  now:    {:?}\n\
             A prompt change changes what the benchmark measures. If it is intended, regenerate the \
             golden files with `FAULTBENCH_BLESS=1 cargo test -p faultbench-agents --test prompt_snapshots`, \
             review the diff and commit it (docs/agents.md describes each prompt's items).",
            path.display(),
            line + 1,
            expected.lines().nth(line).unwrap_or("(end of file)"),
            actual.lines().nth(line).unwrap_or("(end of file)"),
        );
    }
}

fn tools() -> Vec<String> {
    TOOL_NAMES.iter().map(|s| s.to_string()).collect()
}

/// SADE's texts with a header before each, in the order they are hashed.
fn sade_texts(hint: TicketHint) -> String {
    let names = [
        "system prompt",
        "playbooks (data/sade/playbooks.toml, read with the `playbook` tool)",
        "own tools",
        "reminder when the block is missing",
    ];
    names
        .iter()
        .zip(sade_prompt_texts(hint))
        .map(|(n, t)| format!("----- {n} -----\n{t}\n"))
        .collect()
}

#[test]
fn react_system_prompts_match_their_snapshots() {
    for hint in TicketHint::ALL {
        check_snapshot(
            &format!("react-system-{hint}.txt"),
            &react_system(&tools(), hint),
        );
    }
}

#[test]
fn sade_prompts_match_their_snapshots() {
    for hint in TicketHint::ALL {
        check_snapshot(&format!("sade-{hint}.txt"), &sade_texts(hint));
    }
}

#[test]
fn external_instructions_match_their_snapshots() {
    for hint in TicketHint::ALL {
        check_snapshot(
            &format!("external-instructions-{hint}.txt"),
            &format!(
                "{}\n----- MCP bridge instructions -----\n{}\n",
                external_instructions(hint),
                faultbench_agents::external::bridge::BRIDGE_INSTRUCTIONS
            ),
        );
    }
    // The built-in Claude Code template passes the instructions and the turn budget only.
    let t = ExternalTemplates::defaults();
    let cc = t.get("claude-code").unwrap();
    check_snapshot(
        "external-claude-code-args.txt",
        &format!("{}\n", cc.args.join("\n")),
    );
}

fn agents(hint: TicketHint) -> Vec<Arc<dyn Agent>> {
    let model = || Arc::new(ScriptedModel::new("m", Vec::new()));
    let cc = ExternalTemplates::defaults()
        .get("claude-code")
        .unwrap()
        .clone();
    vec![
        Arc::new(ReactAgent::new(model()).with_ticket_hint(hint)),
        Arc::new(SadeAgent::new(model()).with_ticket_hint(hint)),
        Arc::new(ExternalAgent::new("claude-code", cc).with_ticket_hint(hint)),
    ]
}

#[test]
fn prompt_versions_match_their_snapshot_and_follow_the_hint() {
    let mut text = String::new();
    for hint in TicketHint::ALL {
        for a in agents(hint) {
            let v = a
                .prompt_version()
                .expect("every LLM agent has a prompt version");
            assert_eq!(v.len(), 16);
            text.push_str(&format!("{} {hint} {v}\n", a.name()));
        }
    }
    check_snapshot("prompt-versions.txt", &text);
    for (a, b) in agents(TicketHint::None)
        .iter()
        .zip(agents(TicketHint::Skeptical))
    {
        assert_ne!(a.prompt_version(), b.prompt_version(), "{}", a.name());
    }
    // The deterministic baseline sends no prompt.
    assert_eq!(
        faultbench_agents::BaselineAgent::new().prompt_version(),
        None
    );
}

/// Sentences of `text` that say something about the ticket's (or the user's) reliability.
fn reliability_hints(text: &str) -> Vec<String> {
    // Words that have no business in a faithful prompt at all.
    const ANYWHERE: [&str; 13] = [
        "premise",
        "skeptic",
        "sceptic",
        "mislead",
        "unreliable",
        "inaccurate",
        "imprecise",
        "untrustworthy",
        "misdirect",
        "misdescri",
        "false alarm",
        "false report",
        "false claim",
    ];
    // Words that, in a sentence about the ticket, the user or their claims, doubt them.
    const DOUBT: [&str; 15] = [
        "wrong",
        "incorrect",
        "mistaken",
        "trust",
        "doubt",
        "may not",
        "might not",
        "often",
        "invent",
        "accept",
        "believe",
        "satisfy",
        "exaggerat",
        "not exist",
        "lie",
    ];
    const SUBJECT: [&str; 7] = [
        "ticket",
        "the report",
        "claim",
        "user",
        "complain",
        "reporter",
        "symptom descri",
    ];
    let lower = text.to_lowercase();
    let mut out = Vec::new();
    let sentences = lower
        .split("\n\n")
        .flat_map(|p| p.split("\n- "))
        .flat_map(|p| p.split(". "));
    for s in sentences {
        let s = s.split_whitespace().collect::<Vec<_>>().join(" ");
        let word = |w: &str| {
            s.split(|c: char| !c.is_ascii_alphanumeric())
                .any(|t| t.starts_with(w))
                || (w.contains(' ') && s.contains(w))
        };
        let about_ticket = SUBJECT.iter().any(|w| word(w));
        if ANYWHERE.iter().any(|w| s.contains(w)) || (about_ticket && DOUBT.iter().any(|w| word(w)))
        {
            out.push(s);
        }
    }
    out
}

fn every_prompt(hint: TicketHint) -> Vec<(String, String)> {
    let mut out = vec![
        ("react system".to_string(), react_system(&tools(), hint)),
        ("external instructions".into(), external_instructions(hint)),
        ("sade system".into(), sade_system(hint)),
        ("diagnosis contract".into(), DIAGNOSIS_CONTRACT.to_string()),
    ];
    for (i, t) in sade_prompt_texts(hint).into_iter().enumerate() {
        out.push((format!("sade text {i}"), t));
    }
    for b in faultbench_agents::sade::playbooks() {
        out.push((format!("playbook {}", b.name), b.render()));
    }
    out
}

#[test]
fn no_bundled_prompt_hints_at_the_ticket_being_wrong_unless_asked() {
    for (name, text) in every_prompt(TicketHint::None) {
        let hits = reliability_hints(&text);
        assert!(
            hits.is_empty(),
            "{name} hints at the ticket's reliability: {hits:#?}"
        );
    }
    // The checker sees the skeptical arm's sentence, once in each prompt that gets it.
    for (name, text) in every_prompt(TicketHint::Skeptical).into_iter().take(3) {
        let hits = reliability_hints(&text);
        assert_eq!(hits.len(), 1, "{name}: {hits:#?}");
        assert!(text.contains(SKEPTICAL_SENTENCE), "{name}");
    }
    // And it recognises the hints this project's prompts used to carry.
    for old in [
        "You cannot read files on the host, and the ticket may be wrong or imprecise.",
        "The ticket may be wrong. Confirm every conclusion.",
        "A user filed the ticket below. Tickets are often wrong: the fault itself may not exist.",
        "Do not invent a fault to satisfy the ticket.",
        "Do not accept the ticket's stated cause without evidence.",
    ] {
        assert!(!reliability_hints(old).is_empty(), "{old}");
    }
}
