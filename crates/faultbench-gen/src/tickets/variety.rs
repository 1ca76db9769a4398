//! How varied a set of tickets is.
//!
//! - *Distinct word 4-grams per ticket*: the number of distinct 4-word sequences over the whole
//!   set divided by the number of tickets (a set that repeats one phrasing scores low).
//! - *Skeleton*: a ticket with every identifier (address, device, interface, AS number) and
//!   every number replaced by a placeholder; two tickets with the same skeleton say the same
//!   words about different things. The *top skeleton share* is the share of tickets whose
//!   skeleton is the most common one.

use std::collections::{BTreeMap, BTreeSet};

/// The variety of a set of tickets.
#[derive(Debug, Clone, PartialEq)]
pub struct Variety {
    /// Tickets measured.
    pub tickets: usize,
    /// Distinct word 4-grams over the set divided by `tickets`.
    pub distinct_4grams_per_ticket: f64,
    /// Distinct skeletons.
    pub skeletons: usize,
    /// Share (0–1) of the most common skeleton.
    pub top_skeleton_share: f64,
}

fn is_identifier(word: &str, devices: &BTreeSet<String>) -> bool {
    let w = word
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_lowercase();
    !w.is_empty() && (w.chars().any(|c| c.is_ascii_digit()) || devices.contains(&w))
}

/// `ticket` with identifiers and numbers as `<id>`, lowercased, whitespace collapsed.
pub fn skeleton(ticket: &str, devices: &BTreeSet<String>) -> String {
    ticket
        .split_whitespace()
        .map(|w| {
            if is_identifier(w, devices) {
                "<id>".to_string()
            } else {
                w.to_lowercase()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Measures `tickets`; `devices` are the lab's device names (lowercase), masked in skeletons.
pub fn measure(tickets: &[String], devices: &BTreeSet<String>) -> Variety {
    let mut grams = BTreeSet::new();
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for t in tickets {
        let words: Vec<String> = t
            .split_whitespace()
            .map(|w| {
                w.trim_matches(|c: char| !c.is_ascii_alphanumeric())
                    .to_lowercase()
            })
            .filter(|w| !w.is_empty())
            .collect();
        for g in words.windows(4) {
            grams.insert(g.join(" "));
        }
        *counts.entry(skeleton(t, devices)).or_default() += 1;
    }
    let n = tickets.len().max(1) as f64;
    Variety {
        tickets: tickets.len(),
        distinct_4grams_per_ticket: grams.len() as f64 / n,
        skeletons: counts.len(),
        top_skeleton_share: counts.values().copied().max().unwrap_or(0) as f64 / n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skeletons_mask_identifiers_and_repeats_are_counted() {
        let devs: BTreeSet<String> = ["pc1", "pc2", "alpha"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            skeleton("alpha cannot reach 10.0.0.2 (pc2).", &devs),
            "<id> cannot reach <id> <id>"
        );
        let t = vec![
            "pc1 cannot reach 10.0.0.2 today".to_string(),
            "pc2 cannot reach 10.0.0.1 today".to_string(),
            "Something else entirely happened here".to_string(),
        ];
        let v = measure(&t, &devs);
        assert_eq!(v.skeletons, 2);
        assert!((v.top_skeleton_share - 2.0 / 3.0).abs() < 1e-9);
    }
}
