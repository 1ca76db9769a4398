//! The rubric's model of a piece of prose: tokens, clauses, and whether each clause speaks of a
//! fault, of health, or of neither.
//!
//! Text is lowercased and cut into tokens: IPv4 addresses and prefixes (`10.0.0.0/24`),
//! percentages (`0%`), and words made of letters, digits and `_` (dotted names such as `br0.10`
//! stay whole, and their parts are searchable too). Hyphens separate words, so `remote-as` and
//! `remote as` read the same. Plain words are lightly stemmed ([`stem`]) so that `drops`,
//! `dropped` and `dropping` meet.
//!
//! Clauses are what negation scopes over. A new clause starts at a line break, at sentence
//! punctuation, at `;` and `:` and dashes, at brackets, and at contrast words (`but`, `while`,
//! `whereas`, `however`, `although`, `rather than`, `instead of`, …). Each clause gets a
//! [`Polarity`] from its cue words: fault cues (`down`, `dead`, `drop`, `missing`, …) against
//! health cues (`healthy`, `up`, `working`, `0% loss`, …); a negator just before a cue flips it
//! (`not running` is a fault, `no loss` is health). A clause opened by `rather than` or
//! `instead of` is the rejected alternative, so it reads as health for whatever it names.
//! Clauses under a `Root cause:` / `Affected component:` / `Localization:` label with no cue
//! read as fault: that is where a diagnosis puts its blame.

use super::lexicon::{self, Cue};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::net::Ipv4Addr;
use std::sync::OnceLock;

/// FNV-1a: a fast hasher for the short word keys of the indexes (no untrusted-key DoS concern:
/// the keys are words of one diagnosis).
#[derive(Default, Clone, Copy)]
pub struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x100_0000_01b3);
        }
        self.0 = h;
    }
}

/// A hash map keyed by short words.
pub type WordMap<V> = HashMap<String, V, BuildHasherDefault<Fnv>>;

/// What a clause says about the things it names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Polarity {
    /// Something is broken here (`ospfd is dead on r1`).
    Fault,
    /// Something is fine here (`csw1 is healthy`, `not a cabling fault`).
    Health,
    /// Neither (background, evidence without judgement).
    Neutral,
}

/// One token.
#[derive(Debug, Clone)]
pub struct Token {
    /// Lowercased as written (device names, interfaces and addresses compare on this).
    pub raw: String,
    /// Stemmed form (words compare on this).
    pub stem: String,
    /// Clause index.
    pub clause: u32,
    /// Sentence index (a sentence holds one or more clauses).
    pub sentence: u32,
}

/// A tokenized text with clause polarities and an index from stems to positions.
#[derive(Debug, Clone, Default)]
pub struct Doc {
    /// Tokens in order.
    pub tokens: Vec<Token>,
    /// Polarity per clause.
    pub clauses: Vec<Polarity>,
    /// stem (and raw form, and parts of dotted names) → token positions.
    index: WordMap<Vec<usize>>,
    /// IPv4 tokens: (position, address, prefix length if written).
    pub ips: Vec<(usize, Ipv4Addr, Option<u8>)>,
    /// Device key of each token → positions, built on the first device lookup (a scan of
    /// every token per device looked up was the judge's largest cost on long answers).
    devices: OnceLock<WordMap<Vec<usize>>>,
}

/// Labels a diagnosis uses to mark where the blame is.
const BLAME_LABELS: [&[&str]; 5] = [
    &["root", "cause"],
    &["affected", "component"],
    &["localization"],
    &["localisation"],
    &["faulty", "device"],
];

/// Words that begin a new clause (and are dropped).
const CONTRAST: [&str; 9] = [
    "but", "while", "whereas", "however", "although", "though", "yet", "unlike", "except",
];

/// Lowercases and maps typographic variants to ASCII.
pub fn normalize(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '’' | '‘' | '`' => out.push('\''),
            '“' | '”' => out.push('"'),
            '–' | '—' | '−' | '‑' => out.push_str(" -- "),
            '↔' | '⇄' => out.push_str(" <-> "),
            '→' | '⇒' => out.push_str(" -> "),
            '\u{a0}' | '\u{202f}' => out.push(' '),
            c => out.extend(c.to_lowercase()),
        }
    }
    out
}

/// A light English stemmer: enough to make inflections meet, never used on identifiers.
///
/// ```
/// use faultbench_judge::rubric::stem;
/// assert_eq!(stem("dropped"), stem("drops"));
/// assert_eq!(stem("routes"), stem("routing"));
/// assert_eq!(stem("configured"), stem("configure"));
/// assert_eq!(stem("adjacencies"), stem("adjacency"));
/// assert_eq!(stem("named"), "named"); // a daemon name, protected
/// assert_eq!(stem("eth0"), "eth0");
/// ```
pub fn stem(word: &str) -> String {
    if word.len() <= 4
        || !word.bytes().all(|b| b.is_ascii_lowercase())
        || lexicon::PROTECTED.contains(&word)
    {
        return word.to_string();
    }
    // `adjacencies` → `adjacency`, `policies` → `policy`.
    if let Some(rest) = word.strip_suffix("ies")
        && rest.len() >= 3
    {
        return format!("{rest}y");
    }
    let mut w = word.to_string();
    for suffix in ["ingly", "edly", "ing", "ed", "es", "s", "ly"] {
        if let Some(rest) = w.strip_suffix(suffix) {
            if rest.len() < 3 || (suffix == "s" && rest.ends_with('s')) {
                continue;
            }
            // `es` only after sibilants (`reaches`); otherwise just the `s` (`routes`).
            if suffix == "es"
                && !["s", "x", "z", "ch", "sh"]
                    .iter()
                    .any(|e| rest.ends_with(e))
            {
                continue;
            }
            w = rest.to_string();
            // Undouble a final consonant (`dropp` → `drop`, `runn` → `run`).
            let b = w.as_bytes();
            if suffix != "s" && b.len() >= 3 && b[b.len() - 1] == b[b.len() - 2] {
                let c = b[b.len() - 1];
                if !b"aeiouls".contains(&c) {
                    w.pop();
                }
            }
            break;
        }
    }
    if w.len() > 4 && w.ends_with('e') {
        w.pop();
    }
    w
}

/// `vlan10` → (`vlan`, `10`), `as65001` → (`as`, `65001`): numbered keywords written together.
fn split_numbered(w: &str) -> Option<(&str, &str)> {
    let at = w.find(|c: char| c.is_ascii_digit())?;
    let (name, num) = w.split_at(at);
    (matches!(name, "vlan" | "as" | "area") && num.bytes().all(|b| b.is_ascii_digit()))
        .then_some((name, num))
}

/// Parses `a.b.c.d` or `a.b.c.d/len`.
pub fn parse_ip(s: &str) -> Option<(Ipv4Addr, Option<u8>)> {
    let (addr, len) = match s.split_once('/') {
        Some((a, l)) => (a, Some(l.parse::<u8>().ok().filter(|l| *l <= 32)?)),
        None => (s, None),
    };
    Some((addr.parse().ok()?, len))
}

/// Whether `ip` lies in `net/len` (a missing length means the exact address).
pub fn ip_in(ip: Ipv4Addr, net: Ipv4Addr, len: Option<u8>) -> bool {
    let len = u32::from(len.unwrap_or(32));
    if len == 0 {
        return true;
    }
    let mask = u32::MAX << (32 - len);
    (u32::from(ip) & mask) == (u32::from(net) & mask)
}

/// Raw lexical pieces before clause analysis.
#[derive(Debug, PartialEq)]
enum Piece {
    Word(String),
    Comma,
    Break,
    SentenceBreak,
}

fn lex(text: &str) -> Vec<Piece> {
    let t = normalize(text);
    let chars: Vec<char> = t.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '%';
    while i < chars.len() {
        let c = chars[i];
        if is_word(c) {
            let start = i;
            // Whether the word so far is digits and dots only; kept as the word grows (a
            // rescan per character made one long word quadratic).
            let mut numeric_so_far = true;
            // A word; dots and slashes stay inside when followed by a word character
            // (addresses, prefixes, `br0.10`), never at a sentence end.
            while i < chars.len() {
                let ch = chars[i];
                let next_alnum = chars.get(i + 1).is_some_and(|c| c.is_ascii_alphanumeric());
                // A slash joins only numbers (`10.0.0.0/24`, `4/4`); `a/b` is two words.
                let joins = is_word(ch)
                    || (ch == '.' && next_alnum)
                    || (ch == '/' && next_alnum && numeric_so_far);
                if !joins {
                    break;
                }
                numeric_so_far &= ch.is_ascii_digit() || ch == '.';
                i += 1;
            }
            let w: String = chars[start..i].iter().collect();
            out.push(Piece::Word(w));
            continue;
        }
        match c {
            '\n' => {
                out.push(Piece::SentenceBreak);
            }
            '.' | '!' | '?' if i + 1 >= chars.len() || chars[i + 1].is_whitespace() => {
                out.push(Piece::SentenceBreak);
            }
            ',' => out.push(Piece::Comma),
            // Brackets do not end a clause: `routers (r1, r2) are healthy` is one statement.
            ';' | ':' => out.push(Piece::Break),
            '-' => {
                // `--` (a dash) and ` - ` break; a hyphen inside a word only separates.
                let dash = (i + 1 < chars.len() && chars[i + 1] == '-')
                    || (i > 0
                        && chars[i - 1].is_whitespace()
                        && i + 1 < chars.len()
                        && chars[i + 1].is_whitespace());
                if dash {
                    out.push(Piece::Break);
                    while i + 1 < chars.len() && chars[i + 1] == '-' {
                        i += 1;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    out
}

/// Splits text into lowercased words exactly as [`Doc`] does (no clauses, no stemming).
pub fn words(text: &str) -> Vec<String> {
    lex(text)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Word(w) => Some(w),
            _ => None,
        })
        .collect()
}

/// What a line label says about its paragraph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Label {
    None,
    Blame,
    Fix,
}

/// A clause being collected.
struct Clause {
    words: Vec<String>,
    sentence: u32,
    rejected: bool,
    label: Label,
    /// A word starting with `distinguish` was pushed (kept as words arrive: rescanning the
    /// clause for it at every word made a long clause quadratic).
    distinguishing: bool,
}

struct Builder {
    clauses: Vec<Clause>,
    sentence: u32,
    label: Label,
}

impl Builder {
    fn open(&mut self, rejected: bool) {
        let (sentence, label) = (self.sentence, self.label);
        match self.clauses.last_mut() {
            Some(c) if c.words.is_empty() => {
                c.sentence = sentence;
                c.rejected = rejected;
                c.label = label;
            }
            _ => self.clauses.push(Clause {
                words: Vec::new(),
                sentence,
                rejected,
                label,
                distinguishing: false,
            }),
        }
    }

    fn push(&mut self, w: &str) {
        if self.clauses.is_empty() {
            self.open(false);
        }
        let c = self.clauses.last_mut().expect("opened above");
        c.distinguishing |= w.starts_with("distinguish");
        c.words.push(w.to_string());
    }
}

fn label_at(pieces: &[Piece]) -> Option<Label> {
    let upcoming: Vec<&str> = pieces
        .iter()
        .take(3)
        .map_while(|p| match p {
            Piece::Word(w) => Some(w.as_str()),
            _ => None,
        })
        .collect();
    let is = |l: &[&str]| {
        upcoming.len() >= l.len() && l.iter().zip(&upcoming).all(|(a, b)| b.starts_with(a))
    };
    if BLAME_LABELS.iter().any(|l| is(l)) {
        Some(Label::Blame)
    } else if lexicon::FIX_LABELS.iter().any(|l| is(l)) {
        Some(Label::Fix)
    } else if lexicon::OTHER_LABELS.iter().any(|l| is(l)) {
        Some(Label::None)
    } else {
        None
    }
}

impl Doc {
    /// Analyses a text.
    pub fn new(text: &str) -> Doc {
        let pieces = lex(text);
        let mut b = Builder {
            clauses: Vec::new(),
            sentence: 0,
            label: Label::None,
        };
        let mut line_start = true;
        let mut i = 0;
        while i < pieces.len() {
            match &pieces[i] {
                Piece::SentenceBreak => {
                    // A label covers its paragraph: until a blank line or another label.
                    if matches!(pieces.get(i + 1), Some(Piece::SentenceBreak)) {
                        b.label = Label::None;
                    }
                    b.sentence += 1;
                    line_start = true;
                    b.open(false);
                }
                Piece::Break => b.open(false),
                Piece::Comma => {
                    // `…, not X` and `…, nor X` name a rejected alternative.
                    if let Some(Piece::Word(n)) = pieces.get(i + 1)
                        && (n == "not" || n == "nor")
                    {
                        b.open(true);
                        i += 2;
                        continue;
                    }
                }
                Piece::Word(w) => {
                    if line_start {
                        line_start = false;
                        if let Some(l) = label_at(&pieces[i..]) {
                            b.label = l;
                            if let Some(c) = b.clauses.last_mut() {
                                c.label = l;
                            }
                        }
                    }
                    let next = match pieces.get(i + 1) {
                        Some(Piece::Word(n)) => Some(n.as_str()),
                        _ => None,
                    };
                    let distinguishing = b.clauses.last().is_some_and(|c| c.distinguishing);
                    if CONTRAST.contains(&w.as_str()) {
                        b.open(false);
                    } else if (w == "rather" && next == Some("than"))
                        || (w == "instead" && next == Some("of"))
                        || (matches!(w.as_str(), "rule" | "rules" | "ruled" | "ruling")
                            && next == Some("out"))
                    {
                        // What follows is the rejected alternative.
                        b.open(true);
                        i += 2;
                        continue;
                    } else if (w == "from" && distinguishing)
                        || w.starts_with("exonerat")
                        || w == "unrelated"
                    {
                        b.push(w);
                        b.open(true);
                    } else {
                        b.push(w);
                    }
                }
            }
            i += 1;
        }
        let mut doc = Doc::default();
        for (ci, c) in b.clauses.into_iter().enumerate() {
            let stems: Vec<String> = c.words.iter().map(|w| stem(w)).collect();
            let polarity = if c.rejected {
                Polarity::Health
            } else if c.label == Label::Fix {
                Polarity::Neutral
            } else {
                match lexicon::cue_balance(&c.words, &stems) {
                    b if b > 0 => Polarity::Fault,
                    b if b < 0 => Polarity::Health,
                    _ if c.label == Label::Blame => Polarity::Fault,
                    _ => Polarity::Neutral,
                }
            };
            doc.clauses.push(polarity);
            for (w, s) in c.words.into_iter().zip(stems) {
                let pos = doc.tokens.len();
                let ip = parse_ip(&w);
                if let Some((addr, len)) = ip {
                    doc.ips.push((pos, addr, len));
                }
                doc.add(&s, pos);
                if w != s {
                    doc.add(&w, pos);
                }
                if let Some((name, num)) = split_numbered(&w) {
                    doc.add(name, pos);
                    doc.add(num, pos);
                }
                // `br0.10` is also `br0`; a numbered name such as `spine_router_0_1` is also a
                // `spine` and a `router` (but a tool name such as `ospf_snapshot` is not `ospf`).
                let numbered_name = w.contains('_') && w.bytes().any(|b| b.is_ascii_digit());
                if (w.contains('.') && ip.is_none()) || numbered_name {
                    for part in w.split(['.', '_']).filter(|p| p.len() > 1 && *p != w) {
                        doc.add(part, pos);
                    }
                }
                doc.tokens.push(Token {
                    raw: w,
                    stem: s,
                    clause: ci as u32,
                    sentence: c.sentence,
                });
            }
        }
        doc
    }

    /// Indexes a position under a key (allocating the key only the first time).
    fn add(&mut self, key: &str, pos: usize) {
        match self.index.get_mut(key) {
            Some(v) => v.push(pos),
            None => {
                self.index.insert(key.to_string(), vec![pos]);
            }
        }
    }

    /// Positions where a (stemmed or raw) word occurs.
    pub fn positions(&self, word: &str) -> &[usize] {
        self.index.get(word).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Positions where a phrase (already stemmed, word by word) starts.
    pub fn phrase_positions(&self, phrase: &[String]) -> Vec<usize> {
        let Some(first) = phrase.first() else {
            return Vec::new();
        };
        self.positions(first)
            .iter()
            .copied()
            .filter(|&p| {
                phrase.iter().enumerate().skip(1).all(|(k, w)| {
                    self.tokens
                        .get(p + k)
                        .is_some_and(|t| &t.stem == w || &t.raw == w)
                })
            })
            .collect()
    }

    /// Positions of words that name the device with this [key](super::devices::device_key).
    pub fn device_positions(&self, key: &str) -> Vec<usize> {
        let index = self.devices.get_or_init(|| {
            let mut m: WordMap<Vec<usize>> = WordMap::default();
            for (p, t) in self.tokens.iter().enumerate() {
                m.entry(super::devices::device_key(&t.raw))
                    .or_default()
                    .push(p);
            }
            m
        });
        index.get(key).cloned().unwrap_or_default()
    }

    /// The polarity of the clause holding a token.
    pub fn polarity_at(&self, pos: usize) -> Polarity {
        self.tokens
            .get(pos)
            .map(|t| self.clauses[t.clause as usize])
            .unwrap_or(Polarity::Neutral)
    }

    /// Whether a negator sits right before a token in its clause (`not router6`, `no r2`).
    pub fn negated_at(&self, pos: usize) -> bool {
        let clause = self.tokens[pos].clause;
        (pos.saturating_sub(2)..pos).any(|p| {
            let t = &self.tokens[p];
            t.clause == clause && lexicon::cue_of(&t.raw, &t.stem) == Some(Cue::Negator)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn polarity_of(doc: &Doc, word: &str) -> Polarity {
        doc.polarity_at(doc.positions(word)[0])
    }

    #[test]
    fn clauses_split_on_contrast_and_keep_addresses() {
        let d = Doc::new(
            "router2's eth0 is down, while router1's eth0 is up. Prefix 10.20.1.0/24 lost.",
        );
        assert_eq!(polarity_of(&d, "router2"), Polarity::Fault);
        assert_eq!(polarity_of(&d, "router1"), Polarity::Health);
        assert_eq!(d.ips.len(), 1);
        assert_eq!(d.ips[0].2, Some(24));
    }

    #[test]
    fn negators_flip_cues() {
        let d = Doc::new("ospfd is not running on r1.\nThere is no packet loss on r2.");
        assert_eq!(polarity_of(&d, "r1"), Polarity::Fault);
        assert_eq!(polarity_of(&d, "r2"), Polarity::Health);
    }

    #[test]
    fn rejected_alternatives_and_labels() {
        let d = Doc::new(
            "Root cause: leaf_router_0_0 eth2\nThe port is down rather than pc_0_0's NIC.",
        );
        assert_eq!(polarity_of(&d, "leaf_router_0_0"), Polarity::Fault);
        assert_eq!(polarity_of(&d, "pc_0_0"), Polarity::Health);
        let d = Doc::new("The fault is on router16, not a physical link issue. CSW1 is HEALTHY.");
        assert_eq!(polarity_of(&d, "csw1"), Polarity::Health);
    }

    #[test]
    fn dotted_names_are_searchable_by_parts() {
        let d = Doc::new("br0.10 on dswa1 is DOWN");
        assert!(!d.positions("br0.10").is_empty());
        assert!(!d.positions("br0").is_empty());
        assert_eq!(d.phrase_positions(&["is".into(), "down".into()]).len(), 1);
    }

    #[test]
    fn the_device_index_finds_every_spelling() {
        let d = Doc::new(
            "Router1 and r1 differ from R-2; SW3 is switch3. pc_0_0 and PC00, srv1 = server1.",
        );
        let raw = |key: &str| -> Vec<&str> {
            d.device_positions(key)
                .into_iter()
                .map(|p| d.tokens[p].raw.as_str())
                .collect()
        };
        assert_eq!(raw("r1"), ["router1", "r1"]);
        assert!(raw("r2").is_empty(), "`R-2` is two words (`r`, `2`)");
        assert_eq!(raw("sw3"), ["sw3", "switch3"]);
        assert_eq!(raw("pc00"), ["pc_0_0", "pc00"]);
        assert_eq!(raw("srv1"), ["srv1", "server1"]);
        assert!(raw("r9").is_empty());
    }

    #[test]
    fn ip_membership() {
        let (net, len) = parse_ip("10.20.1.0/24").unwrap();
        assert!(ip_in("10.20.1.7".parse().unwrap(), net, len));
        assert!(!ip_in("10.20.2.7".parse().unwrap(), net, len));
        assert!(parse_ip("10.20.1.0/99").is_none());
    }
}
