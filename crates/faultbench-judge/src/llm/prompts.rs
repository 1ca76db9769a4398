//! The LLM judge's prompts (our own wording) and the user messages built from a run.
//!
//! Three independent judgements, each a system prompt plus one user message of labelled
//! blocks:
//! - **Outcome**: the ground truth, the diagnosis (verdict, blamed devices, text) and the
//!   numbered `must`/`bonus` items; one pass/fail with a one-line reason per item.
//! - **Fix**: the expected fix and the diagnosis; a score of 0, 0.5 or 1.
//! - **Reasoning**: the ground truth, the investigation digest and the write-up (or, without a
//!   trace, the diagnosis alone); a short analysis, then grounding, causality and coverage on
//!   0–10 anchors.
//!
//! Changing any text here must bump [`PROMPT_VERSION`]: it is part of the cache key, so old
//! verdicts are never reused for new prompts.

use faultbench_core::Diagnosis;

/// Version of the prompts, part of every cache key.
pub const PROMPT_VERSION: &str = "fb-judge-2";

/// System prompt of the outcome judgement.
pub const OUTCOME_SYSTEM: &str = "\
You grade a diagnosis written by a network-troubleshooting agent about a lab network.
You get the ground truth (what is really wrong with the network, or that nothing is), the \
agent's diagnosis (its verdict, the devices it blames, its explanation), and numbered rubric \
items.
Decide every item on its own:
- An item passes only if the diagnosis itself clearly satisfies it. Do not fill gaps for the agent.
- Right words about the wrong device or the wrong mechanism do not pass.
- Something the diagnosis rules out (\"X is not the cause\", \"X is healthy\") is not identified \
by it.
- Equivalent wording and equivalent evidence count (nftables for iptables; a daemon whose config \
section vanished because the daemon was killed, when the ground truth says so).
- Listing many candidate causes without committing to one does not identify the cause.
- Blaming configuration the ground truth calls intended or by design is over-diagnosis: items \
about the healthy state then fail.
Reply with one JSON object and nothing else:
{\"axes\": [{\"id\": <item number>, \"pass\": true or false, \"reason\": \"<one line>\"}]}
with exactly one entry per item.";

/// System prompt of the fix judgement.
pub const FIX_SYSTEM: &str = "\
You compare the remedy an agent proposed in its network diagnosis with the expected fix.
Score 1 when the proposed remedy would restore the network: right device, right action \
(equivalent commands are fine).
Score 0.5 when it is partly right: the right device but an incomplete or vague action, or the \
right action buried among unneeded risky changes.
Score 0 when the device or the action is wrong, or no remedy is proposed.
Reply with one JSON object and nothing else: {\"score\": 0 or 0.5 or 1, \"reason\": \"<one line>\"}";

/// System prompt of the reasoning judgement.
pub const REASONING_SYSTEM: &str = "\
You judge how well a network-troubleshooting agent reasoned, not only whether it was right.
Read the material against the ground truth and score three dimensions from 0 to 10 \
(anchors: 0 absent, 3 weak, 5 partial, 8 good, 10 exemplary):
- grounding: the claims rest on evidence the agent actually gathered (commands and outputs), \
not on assumptions or the ticket's wording;
- causality: the root cause is tied to the reported symptom by a sound mechanism;
- coverage: the ticket's claim was tested and the plausible alternatives were ruled out.
First write a short analysis (two to four sentences), then the scores.
Reply with one JSON object and nothing else:
{\"analysis\": \"...\", \"grounding\": <0-10>, \"causality\": <0-10>, \"coverage\": <0-10>}";

/// The message that asks for a corrected answer after an invalid one.
pub fn repair_message(problem: &str) -> String {
    format!(
        "Your answer could not be used: {problem}. Reply again with only the JSON object in the \
         required shape, no other text."
    )
}

/// The prompt version recorded in a run identity: [`PROMPT_VERSION`] and a content hash of
/// the three system prompts, the repair request and the user messages (rendered on
/// placeholders), so that an edit shows even where the constant was not bumped.
pub fn prompt_version() -> String {
    let d = Diagnosis {
        is_anomaly: Some(true),
        faulty_devices: vec!["{device}".into()],
        text: "{diagnosis}".into(),
        parsed_ok: true,
    };
    let texts = [
        OUTCOME_SYSTEM.to_string(),
        FIX_SYSTEM.to_string(),
        REASONING_SYSTEM.to_string(),
        repair_message("{problem}"),
        outcome_user("{ground truth}", &d, &["{item}"]),
        fix_user("{fix}", &d),
        reasoning_user("{ground truth}", &d, "").0,
        reasoning_user("{ground truth}", &d, "{digest}").0,
    ];
    let parts: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
    format!(
        "{PROMPT_VERSION}+{}",
        faultbench_core::identity::content_hash(&parts)
    )
}

/// The diagnosis as the judge sees it.
pub fn diagnosis_block(d: &Diagnosis) -> String {
    let verdict = match d.is_anomaly {
        Some(true) => "true",
        Some(false) => "false",
        None => "not stated",
    };
    let devices = if d.faulty_devices.is_empty() {
        "none".to_string()
    } else {
        d.faulty_devices.join(", ")
    };
    format!(
        "is_anomaly: {verdict}\nfaulty_devices: {devices}\ndiagnosis_text:\n{}",
        d.text.trim()
    )
}

/// The outcome judgement's user message.
pub fn outcome_user(ground_truth: &str, d: &Diagnosis, items: &[&str]) -> String {
    let list: Vec<String> = items
        .iter()
        .enumerate()
        .map(|(i, a)| format!("{}. {}", i + 1, a.trim()))
        .collect();
    format!(
        "[GROUND-TRUTH]\n{}\n\n[AGENT-DIAGNOSIS]\n{}\n\n[RUBRIC-ITEMS]\n{}\n",
        ground_truth.trim(),
        diagnosis_block(d),
        list.join("\n")
    )
}

/// The fix judgement's user message.
pub fn fix_user(fix: &str, d: &Diagnosis) -> String {
    format!(
        "[EXPECTED-FIX]\n{}\n\n[AGENT-DIAGNOSIS]\n{}\n",
        fix.trim(),
        diagnosis_block(d)
    )
}

/// The reasoning judgement's user message and its mode (`trace` or `writeup`).
pub fn reasoning_user(ground_truth: &str, d: &Diagnosis, digest: &str) -> (String, &'static str) {
    if digest.trim().is_empty() {
        (
            format!(
                "[GROUND-TRUTH]\n{}\n\n[AGENT-DIAGNOSIS]\n{}\n",
                ground_truth.trim(),
                diagnosis_block(d)
            ),
            "writeup",
        )
    } else {
        (
            format!(
                "[GROUND-TRUTH]\n{}\n\n[INVESTIGATION-LOG]\n{}\n\n[FINAL-WRITEUP]\n{}\n",
                ground_truth.trim(),
                digest.trim(),
                diagnosis_block(d)
            ),
            "trace",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_carry_their_blocks() {
        let d = Diagnosis {
            is_anomaly: Some(true),
            faulty_devices: vec!["r1".into()],
            text: "ospfd died".into(),
            parsed_ok: true,
        };
        let u = outcome_user("gt", &d, &["must-a", "bonus-b"]);
        assert!(u.contains("[RUBRIC-ITEMS]\n1. must-a\n2. bonus-b"));
        assert!(u.contains("faulty_devices: r1"));
        assert_eq!(reasoning_user("gt", &d, "").1, "writeup");
        let (text, mode) = reasoning_user("gt", &d, "1. RAN x()");
        assert_eq!(mode, "trace");
        assert!(text.contains("[INVESTIGATION-LOG]\n1. RAN x()"));
        assert!(fix_user("restart", &d).starts_with("[EXPECTED-FIX]\nrestart"));
    }
}
