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
            .collect();
        Requirement { readings, optional }
    }

    /// All device keys the requirement names outside health clauses.
    pub fn blame_devices(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for r in &self.readings {
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

    /// Matches against a diagnosis text.
    pub fn cover(&self, doc: &Doc) -> Coverage {
        let optional_found: Vec<&Slot> = self.optional.iter().filter(|s| found(s, doc)).collect();
        let opt_weight: f64 = optional_found.iter().map(|s| s.weight).sum();
        let mut best = Coverage {
            score: 0.0,
            found: Vec::new(),
            missed: Vec::new(),
        };
        for reading in &self.readings {
            let (mut got, mut total) = (opt_weight, opt_weight);
            let mut c = Coverage {
                score: 0.0,
                found: optional_found.iter().map(|s| s.label.clone()).collect(),
                missed: Vec::new(),
            };
            for s in reading {
                total += s.weight;
                if found(s, doc) {
                    got += s.weight;
                    c.found.push(s.label.clone());
                } else {
                    c.missed.push(s.label.clone());
                }
            }
            c.score = if total > 0.0 { got / total } else { 0.0 };
            if c.score > best.score || best.found.is_empty() && best.missed.is_empty() {
                best = c;
            }
        }
        best
    }
}

/// Whether any term of a slot occurs in a compatible clause.
fn found(slot: &Slot, doc: &Doc) -> bool {
    let ok = |pos: usize| {
        let p = doc.polarity_at(pos);
        match slot.polarity {
            Polarity::Fault => p != Polarity::Health,
            Polarity::Health => p != Polarity::Fault,
            Polarity::Neutral => true,
        }
    };
    slot.terms.iter().any(|t| match t {
        Term::Concept(g) => CONCEPT_PHRASES[*g]
            .iter()
            .any(|p| doc.phrase_positions(p).into_iter().any(ok)),
        Term::Word(w) => doc.positions(w).iter().any(|&p| ok(p)),
        Term::Device(k) => doc.device_positions(k).iter().any(|&p| ok(p)),
        Term::Ip(net, len) => doc.ips.iter().any(|(p, ip, plen)| {
            let inside = match len {
                Some(_) => ip_in(*ip, *net, *len),
                None => ip == net,
            };
            let same_or_narrower = plen.is_none_or(|pl| len.is_none_or(|l| pl >= l));
            inside && same_or_narrower && ok(*p)
        }),
    })
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

/// The slots of a text fragment.
pub(crate) fn slots(text: &str, default: Polarity, inv: &Inventory) -> Vec<Slot> {
    let doc = Doc::new(text);
    let mut out: Vec<Slot> = Vec::new();
    let stems: Vec<String> = doc.tokens.iter().map(|t| t.stem.clone()).collect();
    let mut i = 0;
    while i < doc.tokens.len() {
        let t = &doc.tokens[i];
        let polarity = match doc.clauses[t.clause as usize] {
            Polarity::Neutral => default,
            p => p,
        };
        let raw = t.raw.as_str();
        let push = |out: &mut Vec<Slot>, term: Term, weight: f64, label: &str| {
            if !out
                .iter()
                .any(|s| s.terms == [term.clone()] && s.polarity == polarity)
            {
                out.push(Slot {
                    terms: vec![term],
                    weight,
                    polarity,
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
            push(&mut out, Term::Concept(g), 1.0, CONCEPTS[g][0]);
            i += len;
            continue;
        }
        let word = t.stem.as_str();
        let skip = lexicon::STOPWORDS.contains(&raw)
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
