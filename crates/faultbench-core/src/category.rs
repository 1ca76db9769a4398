//! What kind of test a scenario is: its [`Category`] (is the ticket right?) and its
//! [`Layer`] (which folder of the dataset, i.e. which reporter wrote the ticket).

use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// The four scenario categories of the benchmark.
///
/// Derived from the scenario id exactly as the public release derives it: an id containing
/// `false-premise` is [`Category::FalsePremise`], one ending in `-misdirected` is
/// [`Category::WrongDevice`], one ending in `-misdescribed` is [`Category::WrongCause`], and
/// everything else is [`Category::CorrectFault`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category {
    /// A real fault, described correctly by the ticket.
    CorrectFault,
    /// A healthy network; the ticket reports a fault that is not there.
    FalsePremise,
    /// A real fault; the ticket blames a healthy device.
    WrongDevice,
    /// A real fault; the ticket asserts a wrong mechanism.
    WrongCause,
}

impl Category {
    /// All categories, in the paper's table order.
    pub const ALL: [Category; 4] = [
        Category::CorrectFault,
        Category::FalsePremise,
        Category::WrongDevice,
        Category::WrongCause,
    ];

    /// The category a scenario id implies (the release's rule; case-insensitive).
    pub fn from_id(id: &str) -> Category {
        let id = id.to_ascii_lowercase();
        // Persona files carry a style suffix after the parent id; they are all false premise.
        if id.contains("false-premise") {
            Category::FalsePremise
        } else if id.ends_with("-misdirected") {
            Category::WrongDevice
        } else if id.ends_with("-misdescribed") {
            Category::WrongCause
        } else {
            Category::CorrectFault
        }
    }

    /// The snake_case name used in files and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Category::CorrectFault => "correct_fault",
            Category::FalsePremise => "false_premise",
            Category::WrongDevice => "wrong_device",
            Category::WrongCause => "wrong_cause",
        }
    }

    /// The short label the paper's tables use.
    pub fn label(self) -> &'static str {
        match self {
            Category::CorrectFault => "Correct-Fault",
            Category::FalsePremise => "False-Premise",
            Category::WrongDevice => "Wrong-Device",
            Category::WrongCause => "Wrong-Cause",
        }
    }

    /// Whether the network really has a fault in this category.
    pub fn has_fault(self) -> bool {
        self != Category::FalsePremise
    }
}

impl fmt::Display for Category {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Category {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        Category::ALL
            .into_iter()
            .find(|c| c.as_str() == norm)
            .ok_or_else(|| UnknownName {
                what: "category",
                got: s.to_string(),
                expected: "correct_fault, false_premise, wrong_device, wrong_cause",
            })
    }
}

/// A dataset layer: the folder a scenario file lives in.
///
/// `base` holds the correct-fault scenarios, `cex` the counter-examples (false premise, wrong
/// device, wrong cause), and the five persona layers hold rewrites of the false-premise tickets.
/// [`Layer::Standard`] is not a folder: it names the *ticket style* of every non-persona file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Correct-fault scenarios (`<topo>_Q/base/`).
    Base,
    /// Counter-examples: false premise, wrong device, wrong cause (`<topo>_Q/cex/`).
    Cex,
    /// Vague, apologetic, states no cause.
    Novice,
    /// Non-technical, confident, asserts a wrong cause, often demands a fix.
    Naive,
    /// Novice content with a demanding tone; identifiers kept exactly.
    NoviceConfident,
    /// Naive content with the certainty withdrawn; identifiers kept.
    NaiveUnsure,
    /// Naive-unsure content with every identifier removed.
    NaiveNoDetail,
    /// The ticket style of every non-persona file (not a folder).
    Standard,
}

impl Layer {
    /// The seven folders of a topology's dataset directory, in the release's order.
    pub const FOLDERS: [Layer; 7] = [
        Layer::Base,
        Layer::Cex,
        Layer::Novice,
        Layer::Naive,
        Layer::NoviceConfident,
        Layer::NaiveUnsure,
        Layer::NaiveNoDetail,
    ];

    /// The five persona layers, in the paper's order.
    pub const PERSONAS: [Layer; 5] = [
        Layer::Novice,
        Layer::NoviceConfident,
        Layer::Naive,
        Layer::NaiveUnsure,
        Layer::NaiveNoDetail,
    ];

    /// Folder name (underscores): `base`, `cex`, `novice_confident`, …
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Base => "base",
            Layer::Cex => "cex",
            Layer::Novice => "novice",
            Layer::Naive => "naive",
            Layer::NoviceConfident => "novice_confident",
            Layer::NaiveUnsure => "naive_unsure",
            Layer::NaiveNoDetail => "naive_no_detail",
            Layer::Standard => "standard",
        }
    }

    /// The `Ticket style:` header value (hyphens), or `standard`.
    pub fn ticket_style(self) -> &'static str {
        match self {
            Layer::NoviceConfident => "novice-confident",
            Layer::NaiveUnsure => "naive-unsure",
            Layer::NaiveNoDetail => "naive-no-detail",
            Layer::Base | Layer::Cex | Layer::Standard => "standard",
            other => other.as_str(),
        }
    }

    /// Whether this is one of the five persona layers.
    pub fn is_persona(self) -> bool {
        Layer::PERSONAS.contains(&self)
    }

    /// Parses a `Ticket style:` value (`novice`, `naive-unsure`, …, or `standard`).
    pub fn from_ticket_style(style: &str) -> Option<Layer> {
        let norm = style.trim().to_ascii_lowercase().replace('_', "-");
        if norm == "standard" {
            return Some(Layer::Standard);
        }
        Layer::PERSONAS
            .into_iter()
            .find(|l| l.ticket_style() == norm)
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Layer {
    type Err = UnknownName;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let norm = s.trim().to_ascii_lowercase().replace('-', "_");
        Layer::FOLDERS
            .into_iter()
            .chain([Layer::Standard])
            .find(|l| l.as_str() == norm)
            .ok_or_else(|| UnknownName {
                what: "layer",
                got: s.to_string(),
                expected: "base, cex, novice, naive, novice_confident, naive_unsure, naive_no_detail",
            })
    }
}

/// A name that is not one of a closed set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown {what} `{got}` (expected one of: {expected})")]
pub struct UnknownName {
    /// What kind of name was expected.
    pub what: &'static str,
    /// The name given.
    pub got: String,
    /// The accepted names.
    pub expected: &'static str,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn category_from_id_follows_release_rule() {
        assert_eq!(
            Category::from_id("kath2-pc1-wrong-netmask"),
            Category::CorrectFault
        );
        assert_eq!(
            Category::from_id("kath2-false-premise-dept-gateway-flapping-naive"),
            Category::FalsePremise
        );
        assert_eq!(
            Category::from_id("kath2-router0-ripd-down-misdirected"),
            Category::WrongDevice
        );
        assert_eq!(
            Category::from_id("KATH2-PC1-WRONG-NETMASK-MISDESCRIBED"),
            Category::WrongCause
        );
    }

    #[test]
    fn layer_names_round_trip() {
        for l in Layer::FOLDERS {
            assert_eq!(l.as_str().parse::<Layer>().unwrap(), l);
        }
        for l in Layer::PERSONAS {
            assert_eq!(Layer::from_ticket_style(l.ticket_style()), Some(l));
        }
        assert!("vip".parse::<Layer>().is_err());
    }
}
