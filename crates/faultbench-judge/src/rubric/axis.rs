//! From an axis line to a requirement, and from a requirement to a verdict.
//!
//! An axis line such as `must-identify-component: iptables FORWARD DROP rule / firewall
//! filter, not a routing fault` becomes a list of **slots**, each a set of interchangeable
//! terms: a concept group from the [lexicon](super::lexicon) (`iptables` ~ `nftables` ~
//! `firewall` ~ `acl`), a device (any spelling with the same [key](super::device_key)), an
//! IPv4 address or prefix (a text address inside the prefix counts), an interface or number
//! (exact), or a stemmed word. Words the rubric uses about itself (`identify`, `notes`,
//! `explicitly`, …) and function words are dropped; very common words weigh half, identifiers
//! twice.
//!
//! Every slot carries the polarity of the axis clause it came from: `ospfd … is down` must be
//! found where the diagnosis speaks of a fault, `links are UP` where it speaks of health, and
//! `not a routing fault` (a rejected alternative) where it clears routing. A slot is found when
//! one of its terms occurs in a diagnosis clause whose polarity does not contradict it.
//!
//! Text in brackets is optional detail: it counts when found and is ignored when not. A spaced
//! ` / ` separates alternatives; both readings — whole phrases as alternatives, or only the
//! two words next to the slash — are tried and the better one counts.
//!
//! The axis passes when the found weight reaches the threshold (default 0.6) of the total.

use super::devices::{Inventory, looks_like_device};
use super::lexicon::{self, CONCEPT_PHRASES, CONCEPTS};
use super::text::{Doc, Polarity, ip_in, parse_ip};
use std::net::Ipv4Addr;

/// One interchangeable term.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Term {
    /// A lexicon concept group (index into [`CONCEPTS`]).
    Concept(usize),
    /// A stemmed word (or exact identifier).
    Word(String),
    /// A device key.
    Device(String),
    /// An IPv4 address or prefix.
    Ip(Ipv4Addr, Option<u8>),
}

/// A slot: any of its terms satisfies it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Slot {
    pub terms: Vec<Term>,
    pub weight: f64,
    pub polarity: Polarity,
    /// A measurement or address the axis states: without it the axis cannot pass.
    pub essential: bool,
    /// How the slot reads in rationales.
    pub label: String,
}

/// A parsed axis: alternative readings (each a slot list) plus optional slots.
#[derive(Debug, Clone)]
pub(crate) struct Requirement {
    pub readings: Vec<Vec<Slot>>,
    pub optional: Vec<Slot>,
}

/// The outcome of matching a requirement against a diagnosis.
#[derive(Debug, Clone)]
pub(crate) struct Coverage {
    /// Found weight / total weight of the best reading, in \[0, 1\].
    pub score: f64,
    /// Labels of the slots found and missed in the best reading.
    pub found: Vec<String>,
    pub missed: Vec<String>,
    /// Essential slots (measurements, addresses) that were not found: the axis cannot pass.
    pub essential_missed: Vec<String>,
}

impl Coverage {
    /// Whether every essential slot was found.
    pub fn passable(&self) -> bool {
        self.essential_missed.is_empty()
    }
}

impl Requirement {
    /// Builds the requirement of an axis text, with `default` polarity for clauses that carry no
    /// cue of their own.
    pub fn parse(text: &str, default: Polarity, inv: &Inventory) -> Requirement {
        let (main, optional_text) = split_brackets(text);
        let parts: Vec<&str> = main.split(" / ").map(str::trim).collect();
        let part_slots: Vec<Vec<Slot>> = parts.iter().map(|p| slots(p, default, inv)).collect();
        let mut readings: Vec<Vec<Slot>> = Vec::new();
        if part_slots.len() > 1 {
            // Whole phrases as alternatives…
            readings.extend(part_slots.iter().filter(|s| !s.is_empty()).cloned());
            // …or only the words next to each slash.
            let mut joined: Vec<Slot> = Vec::new();
            let mut merge_next = false;
            for ps in &part_slots {
                for (k, s) in ps.iter().enumerate() {
                    if k == 0 && merge_next && !joined.is_empty() {
                        let last = joined.last_mut().unwrap();
                        last.terms.extend(s.terms.iter().cloned());
                        last.weight = last.weight.max(s.weight);
                        last.label = format!("{}|{}", last.label, s.label);
                    } else {
                        joined.push(s.clone());
                    }
                }
                merge_next = true;
            }
            readings.push(joined);
        } else {
            readings.extend(part_slots);
        }
        readings.retain(|r| !r.is_empty());
        let optional = optional_text
            .iter()
            .flat_map(|t| slots(t, default, inv))
            .map(|mut s| {
                s.essential = false;
                s
            })
            .collect();
        Requirement { readings, optional }
    }

    /// The requirement of a remedy (a `[FIX]` text): its first sentence is required and the
    /// rest (consequences, notes) is optional detail. Clauses with a negation (`router1 needs
    /// no change`) say what not to do and are left out; the rest is read without polarity, as
    /// a remedy's `bring eth2 up` clears nothing.
    pub fn remedy(text: &str, inv: &Inventory) -> Requirement {
        let cut = first_sentence_end(text);
        let (head, tail) = text.split_at(cut);
        let (main, mut optional_text) = split_brackets(head);
        optional_text.push(tail.to_string());
        let neutral = |t: &str| slots_with(t, Polarity::Neutral, inv, true);
        let readings = vec![neutral(&main)]
            .into_iter()
            .filter(|r| !r.is_empty())
            .collect();
        let optional = optional_text
            .iter()
            .flat_map(|t| neutral(t))
            .map(|mut s| {
                s.essential = false;
                s
            })
            .collect();
        Requirement { readings, optional }
    }

    /// All device keys the requirement names outside health clauses (bracketed detail
    /// included: `pc_0_0's access link (leaf_router_0_0 eth2)` is about both devices).
    pub fn blame_devices(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in self.readings.iter().chain(std::iter::once(&self.optional)) {
            for s in r {
                if s.polarity == Polarity::Health {
                    continue;
                }
                for t in &s.terms {
                    if let Term::Device(k) = t
                        && !out.contains(k)
                    {
                        out.push(k.clone());
                    }
                }
            }
        }
        out
    }

    /// Whether the requirement has anything to match.
    pub fn is_empty(&self) -> bool {
        self.readings.is_empty()
    }

    /// Matches against a diagnosis text; the best reading counts.
    pub fn cover(&self, doc: &Doc) -> Coverage {
        let optional: Vec<(&Slot, Vec<u32>)> = self
            .optional
            .iter()
            .map(|s| (s, sentences_of(s, doc)))
            .collect();
        let mut best: Option<Coverage> = None;
        for reading in &self.readings {
            let slots: Vec<(&Slot, Vec<u32>)> =
                reading.iter().map(|s| (s, sentences_of(s, doc))).collect();
            let c = tally(&slots, &optional);
            let better = match &best {
                None => true,
                Some(b) => (c.passable(), c.score) > (b.passable(), b.score),
            };
            if better {
                best = Some(c);
            }
        }
        best.unwrap_or(Coverage {
            score: 0.0,
            found: Vec::new(),
            missed: Vec::new(),
            essential_missed: Vec::new(),
        })
    }
}

/// The coverage of one reading.
fn tally(slots: &[(&Slot, Vec<u32>)], optional: &[(&Slot, Vec<u32>)]) -> Coverage {
    let hit = |ss: &[u32]| !ss.is_empty();
    let mut c = Coverage {
        score: 0.0,
        found: Vec::new(),
        missed: Vec::new(),
        essential_missed: Vec::new(),
    };
    let (mut got, mut total) = (0.0, 0.0);
    for (s, ss) in optional {
        if hit(ss) {
            got += s.weight;
            total += s.weight;
            c.found.push(s.label.clone());
        }
    }
    for (s, ss) in slots {
        total += s.weight;
        if hit(ss) {
            got += s.weight;
            c.found.push(s.label.clone());
        } else {
            c.missed.push(s.label.clone());
            if s.essential {
                c.essential_missed.push(s.label.clone());
            }
        }
    }
    c.score = if total > 0.0 { got / total } else { 0.0 };
    c
}

/// The sentences in which a slot is found in a compatible clause (sorted, unique).
fn sentences_of(slot: &Slot, doc: &Doc) -> Vec<u32> {
    let ok = |pos: usize| {
        let p = doc.polarity_at(pos);
        match slot.polarity {
            Polarity::Fault => p != Polarity::Health,
            Polarity::Health => p != Polarity::Fault,
            Polarity::Neutral => true,
        }
    };
    let mut out: Vec<u32> = Vec::new();
    let mut add = |pos: usize| {
        if ok(pos) {
            out.push(doc.tokens[pos].sentence);
        }
    };
    for t in &slot.terms {
        match t {
            Term::Concept(g) => {
                for p in &CONCEPT_PHRASES[*g] {
                    doc.phrase_positions(p).into_iter().for_each(&mut add);
                }
            }
            Term::Word(w) => doc.positions(w).iter().copied().for_each(&mut add),
            Term::Device(k) => doc.device_positions(k).into_iter().for_each(&mut add),
            Term::Ip(net, len) => {
                for (p, ip, plen) in &doc.ips {
                    let inside = match len {
                        Some(_) => ip_in(*ip, *net, *len),
                        None => ip == net,
                    };
                    let same_or_narrower = plen.is_none_or(|pl| len.is_none_or(|l| pl >= l));
                    if inside && same_or_narrower {
                        add(*p);
                    }
                }
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Splits `main (optional) main` into the main text and the bracketed pieces.
fn split_brackets(text: &str) -> (String, Vec<String>) {
    let mut main = String::new();
    let mut opts = Vec::new();
    let mut depth = 0usize;
    let mut cur = String::new();
    for c in text.chars() {
        match c {
            '(' => {
                depth += 1;
                if depth == 1 {
                    main.push(' ');
                    continue;
                }
            }
            ')' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    opts.push(std::mem::take(&mut cur));
                    continue;
                }
            }
            _ => {}
        }
        if depth > 0 {
            cur.push(c);
        } else {
            main.push(c);
        }
    }
    if !cur.is_empty() {
        opts.push(cur);
    }
    (main, opts)
}

/// Where the first sentence of a text ends (`e.g.` and `i.e.` do not end one).
fn first_sentence_end(text: &str) -> usize {
    let b = text.as_bytes();
    for i in 0..b.len() {
        let end = match b[i] {
            b'.' => b.get(i + 1).is_none_or(|c| c.is_ascii_whitespace()),
            b'\n' => b.get(i + 1) == Some(&b'\n'),
            _ => false,
        };
        // `end` is only true on an ASCII byte, so `i` is a char boundary here.
        if end && !(text[..i].ends_with("e.g") || text[..i].ends_with("i.e")) {
            return i + 1;
        }
    }
    text.len()
}

/// The slots of a text fragment.
pub(crate) fn slots(text: &str, default: Polarity, inv: &Inventory) -> Vec<Slot> {
    slots_with(text, default, inv, false)
}

/// The slots of a text fragment; a `remedy` ignores clause polarity and skips negated clauses.
fn slots_with(text: &str, default: Polarity, inv: &Inventory, remedy: bool) -> Vec<Slot> {
    let doc = Doc::new(text);
    let negated_clause: Vec<bool> = (0..doc.clauses.len())
        .map(|c| {
            doc.tokens.iter().any(|t| {
                t.clause as usize == c
                    && lexicon::cue_of(&t.raw, &t.stem) == Some(lexicon::Cue::Negator)
            })
        })
        .collect();
    let mut out: Vec<Slot> = Vec::new();
    let stems: Vec<String> = doc.tokens.iter().map(|t| t.stem.clone()).collect();
    let mut i = 0;
    while i < doc.tokens.len() {
        let t = &doc.tokens[i];
        if remedy && negated_clause[t.clause as usize] {
            i += 1;
            continue;
        }
        let polarity = match doc.clauses[t.clause as usize] {
            _ if remedy => default,
            Polarity::Neutral => default,
            p => p,
        };
        let raw = t.raw.as_str();
        let push = |out: &mut Vec<Slot>, term: Term, weight: f64, label: &str| {
            let essential = matches!(term, Term::Ip(..))
                || matches!(term, Term::Concept(g) if CONCEPTS[g][0] == lexicon::LOSS_FREE);
            if !out
                .iter()
                .any(|s| s.terms == [term.clone()] && s.polarity == polarity)
            {
                out.push(Slot {
                    terms: vec![term],
                    weight,
                    polarity,
                    essential,
                    label: label.to_string(),
                });
            }
        };
        if let Some((ip, len)) = parse_ip(raw) {
            push(&mut out, Term::Ip(ip, len), 2.0, raw);
            i += 1;
            continue;
        }
        if let Some(key) = inv
            .key_of(raw)
            .map(str::to_string)
            .or_else(|| looks_like_device(raw).then(|| super::devices::device_key(raw)))
        {
            push(&mut out, Term::Device(key), 2.0, raw);
            i += 1;
            continue;
        }
        if let Some((g, len)) = lexicon::concepts_at(&stems, i) {
            // In a health clause a fault word names what is absent (`rules out trunk down`):
            // the diagnosis need not repeat it.
            let absent = polarity == Polarity::Health
                && lexicon::cue_of(CONCEPTS[g][0], CONCEPTS[g][0]) == Some(lexicon::Cue::Fault);
            if !absent {
                push(&mut out, Term::Concept(g), 1.0, CONCEPTS[g][0]);
            }
            i += len;
            continue;
        }
        let word = t.stem.as_str();
        // `router_core_1/2/3`, `VLAN 5/6`: shorthand lists whose members cannot be matched alone.
        let shorthand = raw.contains('/') && raw.bytes().all(|b| b.is_ascii_digit() || b == b'/');
        let absent_fault =
            polarity == Polarity::Health && lexicon::cue_of(raw, word) == Some(lexicon::Cue::Fault);
        let skip = shorthand
            || absent_fault
            || lexicon::STOPWORDS.contains(&raw)
            || lexicon::RUBRIC_WORDS.contains(&raw)
            || lexicon::RUBRIC_WORDS.contains(&word)
            || raw.len() < 2 && !raw.chars().all(|c| c.is_ascii_digit());
        if !skip {
            let has_digit = raw.chars().any(|c| c.is_ascii_digit());
            let weight = if has_digit && raw.len() >= 3 {
                2.0
            } else if lexicon::WEAK_WORDS.contains(&raw) || lexicon::WEAK_WORDS.contains(&word) {
                0.5
            } else {
                1.0
            };
            let term = if has_digit {
                Term::Word(raw.to_string())
            } else {
                Term::Word(word.to_string())
            };
            push(&mut out, term, weight, raw);
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inv() -> Inventory {
        let mut i = Inventory::default();
        for d in ["router2", "r1", "sshswitch", "leaf_router_0_0", "pc_0_0"] {
            i.add(d);
        }
        i
    }

    fn score(axis: &str, default: Polarity, text: &str) -> f64 {
        let inv = inv();
        Requirement::parse(axis, default, &inv)
            .cover(&Doc::new(text))
            .score
    }

    #[test]
    fn synonyms_and_devices_meet() {
        let s = score(
            "bgpd on router2 is down",
            Polarity::Fault,
            "The BGP daemon on Router2 is not running.",
        );
        assert_eq!(s, 1.0);
    }

    #[test]
    fn cleared_mentions_do_not_count_for_a_fault_slot() {
        let s = score(
            "ospfd / OSPF routing daemon",
            Polarity::Fault,
            "OSPF on csw1 is healthy.",
        );
        assert!(s < 0.6, "{s}");
        let s = score(
            "ospfd / OSPF routing daemon",
            Polarity::Fault,
            "ospfd died on r1.",
        );
        assert!(s >= 0.6, "{s}");
    }

    #[test]
    fn rejected_alternative_is_a_health_slot() {
        let inv = inv();
        let r = Requirement::parse(
            "leaf_router_0_0 eth2 is down, not a host NIC/cable fault",
            Polarity::Fault,
            &inv,
        );
        let health: Vec<&Slot> = r.readings[0]
            .iter()
            .filter(|s| s.polarity == Polarity::Health)
            .collect();
        assert!(
            health.iter().any(|s| s.label == "interface"),
            "{:?}",
            r.readings
        );
        let text = "leaf_router_0_0 eth2 is administratively down; this is not a host fault: \
                    pc_0_0's NIC and cable are fine.";
        assert!(r.cover(&Doc::new(text)).score >= 0.99);
    }

    #[test]
    fn prefixes_and_optional_detail() {
        let s = score(
            "router1<->router2 link / 10.20.1.0/24 (the WAN)",
            Polarity::Fault,
            "The link on 10.20.1.2 is down",
        );
        assert!(s >= 0.6, "{s}");
        assert_eq!(split_brackets("a (b) c (d)").1, vec!["b", "d"]);
    }
}
