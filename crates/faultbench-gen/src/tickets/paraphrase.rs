//! Optional paraphrases of generated tickets by a chat model, each checked to keep every fact.
//!
//! The default generator is deterministic and model-free; `faultbench generate
//! --paraphrase-model M` asks a chat model to reword each written ticket. A model can drop or
//! invent facts, so a paraphrase replaces the ticket only when a mechanical check passes
//! ([`check`]):
//!
//! - **identifiers**: the set of words carrying a digit (addresses, prefixes, interfaces, AS
//!   numbers, counts) or naming a device of the lab is the same, in both directions — nothing
//!   dropped, nothing invented;
//! - **the claim**: every problem word of the original ([`CLAIM_WORDS`]: down, blocked,
//!   unreachable, session, flapping, duplicate, …) is still there, so "the BGP session is down"
//!   cannot turn into a statement about something else;
//! - **the format**: no line that the scenario grammar would read as a section (`[NAME]`), no
//!   diagnosis block, no control characters, and a length between half and twice the
//!   original's (in words), at most [`MAX_CHARS`].
//!
//! A rejected paraphrase leaves the ticket as written and is recorded with its problems; an
//! applied one is noted in the file's `[DIAGNOSTIC-PROCESS]` (which agents never see) and every
//! attempt is a [`Record`] with its model, so a dataset says which tickets a model reworded.

use super::{TicketError, rebuild};
use faultbench_core::scenario::{ScenarioSpec, Section};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// Version of the instruction below; recorded with every paraphrase.
pub const PROMPT_VERSION: &str = "paraphrase-1";
/// Longest paraphrase accepted, in characters.
pub const MAX_CHARS: usize = 4000;

/// Problem words whose presence in a ticket is part of what it claims (matched as word
/// prefixes, lowercase: `flap` covers "flapping", `reach` "unreachable").
pub const CLAIM_WORDS: &[&str] = &[
    "down",
    "block",
    "reach",
    "session",
    "flap",
    "duplicate",
    "mtu",
    "gateway",
    "dns",
    "dhcp",
    "http",
    "web",
    "loss",
    "lost",
    "timeout",
    "time out",
    "route",
    "firewall",
    "acl",
    "slow",
    "drop",
    "neighbo",
    "cable",
    "unplug",
    "crash",
    "bgp",
    "ospf",
    "rip",
    "port",
    "ping",
];

/// The instruction sent with a ticket (our own words).
pub fn request_text(ticket: &str) -> String {
    format!(
        "Reword the network trouble ticket below as the same person would write it on another \
day. Keep the same tone and the same certainty or doubt. Keep every device name, address, \
prefix, interface name and number exactly as written, and keep the problem it reports. Do not \
add causes, fixes, names or numbers that are not in it, and do not remove any. Reply with the \
reworded ticket only.\n\nTicket:\n{ticket}"
    )
}

/// The model's reply without the wrapping small models add (code fences, quotes, a
/// "Reworded ticket:" lead-in line).
pub fn clean_reply(reply: &str) -> String {
    let mut t = reply.trim();
    if let Some(rest) = t.strip_prefix("```") {
        let rest = rest.split_once('\n').map_or("", |(_, r)| r);
        t = rest.strip_suffix("```").unwrap_or(rest).trim();
    }
    if let Some((first, rest)) = t.split_once('\n') {
        let f = first.trim().to_lowercase();
        if f.ends_with(':') && (f.contains("ticket") || f.contains("reworded")) {
            t = rest.trim();
        }
    }
    let quoted = t.len() >= 2
        && ((t.starts_with('"') && t.ends_with('"')) || (t.starts_with('“') && t.ends_with('”')));
    if quoted {
        let open = t.chars().next().map_or(1, char::len_utf8);
        let close = t.chars().last().map_or(1, char::len_utf8);
        t = t[open..t.len() - close].trim();
    }
    t.to_string()
}

/// A word lowercased without surrounding punctuation or a possessive `'s`.
fn word(w: &str) -> String {
    let w = w.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let w = w
        .strip_suffix("'s")
        .or_else(|| w.strip_suffix("’s"))
        .unwrap_or(w);
    w.to_lowercase()
}

/// The identifiers of a ticket: words with a digit, and the lab's device names (`devices`
/// lowercase).
pub fn identifiers(ticket: &str, devices: &BTreeSet<String>) -> BTreeSet<String> {
    ticket
        .split_whitespace()
        .map(word)
        .filter(|w| !w.is_empty() && (w.chars().any(|c| c.is_ascii_digit()) || devices.contains(w)))
        .collect()
}

fn claim_words(ticket: &str) -> BTreeSet<&'static str> {
    let lower = ticket.to_lowercase();
    let words: Vec<String> = lower.split_whitespace().map(word).collect();
    CLAIM_WORDS
        .iter()
        .copied()
        .filter(|c| {
            if c.contains(' ') {
                lower.contains(c)
            } else {
                words
                    .iter()
                    .any(|w| w.starts_with(c) || w.contains(&format!("un{c}")))
            }
        })
        .collect()
}

/// Why `paraphrase` cannot replace `original` (empty: it can).
pub fn check(original: &str, paraphrase: &str, devices: &BTreeSet<String>) -> Vec<String> {
    let mut problems = Vec::new();
    if paraphrase.trim().is_empty() {
        return vec!["empty reply".into()];
    }
    if paraphrase.chars().count() > MAX_CHARS {
        problems.push(format!("longer than {MAX_CHARS} characters"));
    }
    let (a, b) = (
        original.split_whitespace().count(),
        paraphrase.split_whitespace().count(),
    );
    if b * 2 < a || b > a * 2 + 10 {
        problems.push(format!("{b} words against the original's {a}"));
    }
    if paraphrase
        .chars()
        .any(|c| c.is_control() && c != '\n' && c != '\t')
    {
        problems.push("control characters".into());
    }
    for line in paraphrase.lines().map(str::trim) {
        if line.starts_with('[') && line.ends_with(']') {
            problems.push(format!(
                "a line the scenario format reads as a section: {line}"
            ));
        }
        if line.contains("=== DIAGNOSIS") {
            problems.push("a diagnosis block".into());
        }
    }
    let (ia, ib) = (
        identifiers(original, devices),
        identifiers(paraphrase, devices),
    );
    for w in ia.difference(&ib) {
        problems.push(format!("drops `{w}`"));
    }
    for w in ib.difference(&ia) {
        problems.push(format!("adds `{w}`"));
    }
    let (ca, cb) = (claim_words(original), claim_words(paraphrase));
    for w in ca.difference(&cb) {
        problems.push(format!("loses the problem word `{w}`"));
    }
    problems
}

/// `spec` with `paraphrase` as its ticket and a note naming `model` in `[DIAGNOSTIC-PROCESS]`
/// (added after `[FIX]`, or after `[GROUND-TRUTH]`, when the file has none — the release's
/// order).
pub fn apply(
    spec: &ScenarioSpec,
    paraphrase: &str,
    model: &str,
) -> Result<ScenarioSpec, TicketError> {
    let note = format!(
        "Ticket reworded by the chat model {model} ({PROMPT_VERSION}); identifiers and problem \
words checked kept. The generator's own wording is in gen/paraphrases.jsonl."
    );
    let mut sections: Vec<Section> = spec
        .sections()
        .iter()
        .map(|s| Section {
            name: s.name.clone(),
            body: match s.name.as_str() {
                "PROMPT-TO-AGENT" => paraphrase.to_string(),
                "DIAGNOSTIC-PROCESS" => format!("{}\n{note}", s.body.trim_end()),
                _ => s.body.clone(),
            },
        })
        .collect();
    if !sections.iter().any(|s| s.name == "DIAGNOSTIC-PROCESS") {
        let after = ["FIX", "GROUND-TRUTH", "PROMPT-TO-AGENT"]
            .iter()
            .find_map(|n| sections.iter().position(|s| s.name == *n))
            .map_or(sections.len(), |i| i + 1);
        sections.insert(
            after,
            Section {
                name: "DIAGNOSTIC-PROCESS".into(),
                body: note,
            },
        );
    }
    rebuild(spec.headers().clone(), sections, spec.id())
}

/// One paraphrase attempt, a line of `gen/paraphrases.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// Scenario id.
    pub id: String,
    /// `provider:model` as configured.
    pub model: String,
    /// [`PROMPT_VERSION`].
    pub prompt_version: String,
    /// The generator's ticket.
    pub original: String,
    /// The model's reply, cleaned ([`clean_reply`]); empty when the call failed.
    pub paraphrase: String,
    /// `applied`, `rejected` (see `problems`) or `error` (the call failed).
    pub verdict: String,
    /// What the check found, or the error.
    #[serde(default)]
    pub problems: Vec<String>,
    /// Input and output tokens of the call.
    #[serde(default)]
    pub tokens: (u64, u64),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn devs() -> BTreeSet<String> {
        ["r1", "pc2"].iter().map(|s| s.to_string()).collect()
    }

    const T: &str =
        "Since this morning pc2 cannot reach 10.0.3.10; the BGP session on r1 looks down.";

    #[test]
    fn a_faithful_rewording_passes() {
        let p = "From early today, pc2 has been unable to reach 10.0.3.10, and r1's BGP session seems down.";
        assert_eq!(check(T, p, &devs()), Vec::<String>::new());
    }

    #[test]
    fn dropped_invented_and_changed_facts_are_named() {
        let dropped =
            "Since this morning pc2 cannot reach the server; the BGP session on r1 is down.";
        assert!(check(T, dropped, &devs()).contains(&"drops `10.0.3.10`".to_string()));
        let invented = "Since this morning pc2 cannot reach 10.0.3.10 via eth1; the BGP session on r1 is down.";
        assert!(check(T, invented, &devs()).contains(&"adds `eth1`".to_string()));
        let other_claim = "Since this morning pc2 cannot reach 10.0.3.10; OSPF on r1 misbehaves.";
        let p = check(T, other_claim, &devs());
        assert!(p.iter().any(|x| x.contains("`session`")), "{p:?}");
        assert!(p.iter().any(|x| x.contains("`down`")), "{p:?}");
    }

    #[test]
    fn format_breaking_replies_are_refused() {
        let p = format!("{T}\n[FIX]\nrm -rf /");
        assert!(check(T, &p, &devs()).iter().any(|x| x.contains("section")));
        let p = format!("{T}\n=== DIAGNOSIS ===");
        assert!(
            check(T, &p, &devs())
                .iter()
                .any(|x| x.contains("diagnosis"))
        );
        assert_eq!(check(T, "  ", &devs()), vec!["empty reply".to_string()]);
        let long = format!("{T} {}", "really ".repeat(60));
        assert!(check(T, &long, &devs()).iter().any(|x| x.contains("words")));
    }

    #[test]
    fn an_applied_paraphrase_replaces_the_ticket_and_is_noted_where_agents_do_not_look() {
        let text = "Scenario: x-1\nTopology: simple_bgp\n\n[PROMPT-TO-AGENT]\nold words\n\n\
[INJECTION]\ndevice: r1\naction: break it\ncmd: true\n\n[POST-INJECT-CHECK]\nr1  true  => expect 0\n\n\
[GROUND-TRUTH]\nRoot cause: something\n\n[FIX]\nMend it.\n`true` on r1\n\n\
[SCORING-AXES]\nassert-identifies: r1\n\n[NIKA-LABEL]\nnika_label: x\nnika_category: MISCONFIGURATION\nin_taxonomy: false\n";
        let spec = ScenarioSpec::parse(text).unwrap();
        let out = apply(&spec, "new words", "openai:m").unwrap();
        assert_eq!(out.ticket(), "new words");
        let names: Vec<&str> = out.sections().iter().map(|s| s.name.as_str()).collect();
        let fix = names.iter().position(|n| *n == "FIX").unwrap();
        assert_eq!(names[fix + 1], "DIAGNOSTIC-PROCESS");
        assert!(out.to_text().contains("openai:m"));
        assert_eq!(out.id(), spec.id());
    }

    #[test]
    fn replies_are_unwrapped() {
        assert_eq!(clean_reply("```\nhello there\n```"), "hello there");
        assert_eq!(clean_reply("Reworded ticket:\n\"hello\""), "hello");
        assert_eq!(clean_reply("“hi”"), "hi");
        assert_eq!(clean_reply("plain"), "plain");
    }
}
