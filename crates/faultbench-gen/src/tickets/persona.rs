//! The six ticket styles of a false-premise ticket (SPEC §1): the standard ticket and five
//! reporter personas who tell the same false story.
//!
//! Every style is composed from the same claim binding, so a rewrite cannot add a fact:
//! `standard` uses a full wording (every identifier), `novice` and `novice_confident` the same
//! vague wording (`{main}` and `{second}`: about two identifiers, as in the release) in an
//! apologetic or a demanding tone, `naive` and
//! `naive_unsure` the same vague wording plus a non-technical guess at the cause (certain, or
//! hedged), and `naive_no_detail` a blind wording (no identifier) with the hedged guess.

use super::words::{Pick, closer, impact, opener};
use crate::claims::ClaimType;
use crate::template::{Params, render};

/// A ticket style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Style {
    /// The plain ticket.
    Standard,
    /// Vague, apologetic, no cause.
    Novice,
    /// Novice content, demanding tone.
    NoviceConfident,
    /// Non-technical, confident, asserts a wrong cause, demands a fix.
    Naive,
    /// Naive with the certainty removed.
    NaiveUnsure,
    /// Naive-unsure with every identifier removed.
    NaiveNoDetail,
}

impl Style {
    /// The five personas (every style but standard).
    pub const PERSONAS: [Style; 5] = [
        Style::Novice,
        Style::NoviceConfident,
        Style::Naive,
        Style::NaiveUnsure,
        Style::NaiveNoDetail,
    ];

    /// The release's folder name (`novice_confident`).
    pub fn folder(self) -> &'static str {
        match self {
            Style::Standard => "cex",
            Style::Novice => "novice",
            Style::NoviceConfident => "novice_confident",
            Style::Naive => "naive",
            Style::NaiveUnsure => "naive_unsure",
            Style::NaiveNoDetail => "naive_no_detail",
        }
    }

    /// The `Ticket style:` header value and id suffix (`novice-confident`).
    pub fn header(self) -> &'static str {
        match self {
            Style::Standard => "standard",
            Style::Novice => "novice",
            Style::NoviceConfident => "novice-confident",
            Style::Naive => "naive",
            Style::NaiveUnsure => "naive-unsure",
            Style::NaiveNoDetail => "naive-no-detail",
        }
    }
}

const NAIVE_CAUSES: [&str; 8] = [
    "the internet box in the closet",
    "the update that was installed yesterday",
    "the new firewall thing",
    "the cables the cleaners moved",
    "a virus",
    "the server being full",
    "the power cut last night",
    "the new printer",
];

/// `s` with a capital first letter, unless it starts with a parameter's value (a device
/// name keeps its spelling: `cs_lab2`, not `Cs_lab2`).
fn sentence(s: &str, params: &Params) -> String {
    if params
        .values()
        .any(|v| !v.is_empty() && s.starts_with(v.as_str()))
    {
        return s.to_string();
    }
    let mut c = s.chars();
    match c.next() {
        Some(f) => format!("{}{}", f.to_uppercase(), c.as_str()),
        None => String::new(),
    }
}

/// The ticket of `claim` bound to `params` in `style`; `key` is the standard parent's key, so
/// every style of one parent shares its wording choices.
pub fn write(claim: &ClaimType, params: &Params, style: Style, key: u64) -> String {
    let mut p = Pick::new(key);
    let full = &claim.say[p.below(claim.say.len())];
    let vague = &claim.say_vague[p.below(claim.say_vague.len())];
    let blind = &claim.say_blind[p.below(claim.say_blind.len())];
    let cause = NAIVE_CAUSES[p.below(NAIVE_CAUSES.len())];
    // The tone draws from its own generator, so styles vary independently of the wording.
    let mut t = Pick::new(key ^ (style as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let r = |tpl: &str| render(tpl, params).unwrap_or_default();
    let parts: Vec<String> = match style {
        Style::Standard => vec![
            opener(&mut t),
            format!("{}.", sentence(&r(full), params)),
            impact(&mut t).into(),
            closer(&mut t).into(),
        ],
        Style::Novice => vec![
            t.one(&[
                "Sorry to bother you,",
                "Hi, sorry, I'm new here and not sure this is the right place, but",
                "Apologies if this is a silly question:",
                "Um, hello.",
            ])
            .into(),
            format!("{}.", r(vague)),
            t.one(&[
                "I have no idea what is wrong.",
                "I don't really know what causes it.",
                "I'm not sure what I did.",
            ])
            .into(),
            t.one(&[
                "Could someone help, please?",
                "Thank you so much.",
                "Sorry again.",
            ])
            .into(),
        ],
        Style::NoviceConfident => vec![
            t.one(&[
                "Listen,",
                "This needs attention now:",
                "Fix this today:",
                "Right,",
            ])
            .into(),
            format!("{}.", sentence(&r(vague), params)),
            t.one(&[
                "I know what I am seeing.",
                "I'm certain about this.",
                "Don't tell me it's on my side.",
            ])
            .into(),
            t.one(&[
                "I need it sorted before noon.",
                "Get it working again.",
                "I expect an answer within the hour.",
            ])
            .into(),
        ],
        Style::Naive => vec![
            format!("{}.", sentence(&r(vague), params)),
            t.one(&[
                "It's obviously {c}.",
                "I know it's {c}, it always is.",
                "Clearly {c} broke it.",
            ])
            .replace("{c}", cause),
            t.one(&[
                "Just reset it.",
                "Fix it right now please.",
                "Replace it, it's that simple.",
            ])
            .into(),
        ],
        Style::NaiveUnsure | Style::NaiveNoDetail => {
            let said = if style == Style::NaiveUnsure {
                r(vague)
            } else {
                blind.clone()
            };
            vec![
                format!("{}.", sentence(&said, params)),
                t.one(&[
                    "Maybe it's {c}? I really can't tell.",
                    "Could it be {c}? I'm not sure at all.",
                    "I wonder if {c} has something to do with it, but I might be wrong.",
                ])
                .replace("{c}", cause),
                t.one(&[
                    "Maybe someone could look?",
                    "If it's not too much trouble, could you check?",
                    "I guess it might need a reset?",
                ])
                .into(),
            ]
        }
    };
    parts
        .into_iter()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}
