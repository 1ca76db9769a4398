//! Prompt text of the LLM and external agents, written for this project.
//!
//! The ReAct and external (CC-Baseline) instructions carry the information content of the
//! public release's system prompts and nothing more: the role, the tools (named for ReAct; the
//! MCP server only for external agents), reason–act cycles (ReAct), direct evidence on the
//! implicated device before the verdict, and the exact final block. They give no fault list
//! and say nothing about whether the ticket can be trusted: trust in a wrong ticket is what the
//! benchmark measures. `docs/agents.md` puts every item beside the release's.
//!
//! The one exception is an explicit experiment arm: with [`TicketHint::Skeptical`] each LLM or
//! external agent's instructions get exactly one added sentence, [`SKEPTICAL_SENTENCE`].
//!
//! Golden copies of every prompt live in `tests/snapshots/` and are compared byte for byte
//! (`FAULTBENCH_BLESS=1` rewrites them), so a prompt change is always visible in review; each
//! agent's [`prompt_version`] changes with it.

use faultbench_core::agent::TicketHint;
use faultbench_core::identity::content_hash;

/// The answer format every agent must end with (the release's `=== DIAGNOSIS ===` contract).
pub const DIAGNOSIS_CONTRACT: &str = "\
When you have finished investigating, reply with one final message (and no further tool calls) \
that contains exactly this block:

=== DIAGNOSIS ===
is_anomaly: <true|false>
faulty_devices: <comma-separated device names, or none>
diagnosis_text:
<150-300 words: the affected component, the mechanism, where the fault sits, the root cause in \
one sentence, and the fix you would apply>
=== END ===";

/// The sentence [`TicketHint::Skeptical`] adds to an agent's instructions.
pub const SKEPTICAL_SENTENCE: &str = "Keep in mind that the user's ticket may be inaccurate.";

/// The sentence a hint adds, if any.
pub fn hint_sentence(hint: TicketHint) -> Option<&'static str> {
    match hint {
        TicketHint::None => None,
        TicketHint::Skeptical => Some(SKEPTICAL_SENTENCE),
    }
}

/// `paragraph`, followed by the hint's sentence when there is one.
pub fn with_hint(paragraph: &str, hint: TicketHint) -> String {
    match hint_sentence(hint) {
        Some(s) => format!("{paragraph} {s}"),
        None => paragraph.to_string(),
    }
}

/// The rule about evidence before the verdict, shared by the ReAct and external instructions.
const EVIDENCE_RULE: &str = "Give a verdict only once you hold direct evidence for it, gathered \
from the device you implicate.";

/// The ReAct system prompt: the role, the tools by name, reason–act cycles, the evidence rule
/// and the answer format.
///
/// ```
/// use faultbench_agents::prompt::{react_system, SKEPTICAL_SENTENCE};
/// use faultbench_core::agent::TicketHint;
/// let tools = vec!["get_reachability".to_string(), "ping_pair".to_string()];
/// let plain = react_system(&tools, TicketHint::None);
/// assert!(plain.contains("get_reachability, ping_pair") && plain.contains("=== DIAGNOSIS ==="));
/// assert!(!plain.contains(SKEPTICAL_SENTENCE));
/// assert!(react_system(&tools, TicketHint::Skeptical).contains(SKEPTICAL_SENTENCE));
/// ```
pub fn react_system(tool_names: &[String], hint: TicketHint) -> String {
    let rules = format!(
        "You are an expert network troubleshooter working on a live emulated network. You can \
reach it only through these tools: {}. Files on the machine that hosts the lab are out of your \
reach. Proceed in reason-act cycles: think about what to examine next, call one or more tools, \
study what they return, and carry on from there. {EVIDENCE_RULE}",
        tool_names.join(", ")
    );
    format!("{}\n\n{DIAGNOSIS_CONTRACT}", with_hint(&rules, hint))
}

/// The instructions given to an external (MCP) agent such as Claude Code: the role, MCP tools
/// only, the evidence rule and the answer format.
pub fn external_instructions(hint: TicketHint) -> String {
    let rules = format!(
        "You are an expert network troubleshooter working on a live emulated network. Reach it \
only through the tools of the `faultbench` MCP server; files and commands on this machine are \
out of your reach. {EVIDENCE_RULE}"
    );
    format!("{}\n\n{DIAGNOSIS_CONTRACT}", with_hint(&rules, hint))
}

/// A prompt version: a short content hash of every prompt text an agent sends, so that any
/// change to a prompt changes the version.
pub fn prompt_version(texts: &[&str]) -> String {
    let parts: Vec<&[u8]> = texts.iter().map(|t| t.as_bytes()).collect();
    content_hash(&parts)
}

/// The placeholder that stands for the run's tool list when a ReAct prompt is versioned (the
/// tool set itself is part of the run identity through the tool policy).
pub const TOOLS_PLACEHOLDER: &str = "{tools}";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hint_is_one_sentence_and_only_with_skeptical() {
        let tools = vec!["a".to_string()];
        for text in [
            react_system(&tools, TicketHint::None),
            external_instructions(TicketHint::None),
        ] {
            assert!(!text.contains(SKEPTICAL_SENTENCE));
        }
        let plain = external_instructions(TicketHint::None);
        let hinted = external_instructions(TicketHint::Skeptical);
        assert_eq!(
            hinted.replacen(&format!(" {SKEPTICAL_SENTENCE}"), "", 1),
            plain,
            "the skeptical arm adds exactly one sentence"
        );
        assert_ne!(
            prompt_version(&[&plain]),
            prompt_version(&[&hinted]),
            "the version follows the text"
        );
    }
}
