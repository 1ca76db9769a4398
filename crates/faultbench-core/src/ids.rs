//! Validated names that become parts of paths: [`ScenarioId`] and [`TopologyId`].
//!
//! A scenario's id is its file name (`faultbench validate` requires `<id>.txt`), and a run's
//! folder is `<topology>/<layer>__<scenario>/…` under a runs root; a topology's id is its folder
//! under a topology root. Both values come from files other people write (scenario headers,
//! `result.json` keys, manifests), so they are checked once, when they are read, and carried as
//! types afterwards: a string from input never reaches `Path::join`.
//!
//! The rule (for both): 1 to [`MAX_ID_LEN`] bytes of ASCII letters, digits, `-`, `_` and `.`,
//! starting with a letter or digit. That is every id of the public release and of this
//! project's dataset, and it rules out `/`, `\`, `..`, absolute paths, hidden names, whitespace,
//! control characters and the `:`/`,` that would change mount options.
//!
//! ```
//! use faultbench_core::ids::{ScenarioId, TopologyId};
//! let id: ScenarioId = "kath2-router1-ripd-killed".parse().unwrap();
//! assert_eq!(id, "kath2-router1-ripd-killed");
//! assert!("../../x".parse::<ScenarioId>().is_err());
//! assert!(TopologyId::new("/etc").is_err());
//! // The JSON shape is a plain string; an invalid one does not deserialise.
//! assert_eq!(serde_json::to_string(&id).unwrap(), "\"kath2-router1-ripd-killed\"");
//! assert!(serde_json::from_str::<TopologyId>("\"a/b\"").is_err());
//! ```

use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::fmt;
use std::ops::Deref;

/// Longest accepted id, in bytes (the release's longest scenario id has 58).
pub const MAX_ID_LEN: usize = 128;

/// A value that is not a valid id.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid {what} `{shown}`: {reason} (expected {MAX_ID_LEN} or fewer ASCII letters, digits, `-`, `_` or `.`, starting with a letter or digit)"
)]
pub struct InvalidId {
    /// `scenario id` or `topology id`.
    pub what: &'static str,
    /// The value, cut to 80 characters for display.
    pub shown: String,
    /// What is wrong with it.
    pub reason: String,
}

/// Checks the id rule; `Err` holds the reason.
fn check(s: &str) -> Result<(), String> {
    let Some(first) = s.chars().next() else {
        return Err("it is empty".into());
    };
    if s.len() > MAX_ID_LEN {
        return Err(format!("it is {} bytes long", s.len()));
    }
    if !first.is_ascii_alphanumeric() {
        return Err(format!("it starts with `{}`", first.escape_default()));
    }
    if let Some(c) = s
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!("it contains `{}`", c.escape_default()));
    }
    Ok(())
}

fn shown(s: &str) -> String {
    let mut out: String = s.chars().take(80).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out.escape_debug().to_string()
}

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident, $what:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            /// Validates a value (see the module docs for the rule).
            pub fn new(value: impl Into<String>) -> Result<Self, InvalidId> {
                let value = value.into();
                match check(&value) {
                    Ok(()) => Ok($name(value)),
                    Err(reason) => Err(InvalidId {
                        what: $what,
                        shown: shown(&value),
                        reason,
                    }),
                }
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = InvalidId;
            fn try_from(value: String) -> Result<Self, InvalidId> {
                $name::new(value)
            }
        }

        impl From<$name> for String {
            fn from(id: $name) -> String {
                id.0
            }
        }

        impl std::str::FromStr for $name {
            type Err = InvalidId;
            fn from_str(s: &str) -> Result<Self, InvalidId> {
                $name::new(s)
            }
        }

        impl Deref for $name {
            type Target = str;
            fn deref(&self) -> &str {
                &self.0
            }
        }

        impl AsRef<str> for $name {
            fn as_ref(&self) -> &str {
                &self.0
            }
        }

        impl Borrow<str> for $name {
            fn borrow(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.0 == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.0 == *other
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.0
            }
        }
    };
}

id_type!(
    /// A scenario id (`Scenario:` header, run keys, manifests): one safe path component.
    ScenarioId,
    "scenario id"
);

id_type!(
    /// A topology id (`Topology:` header, run keys, topology folders): one safe path component.
    TopologyId,
    "topology id"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_release_style_ids() {
        for ok in [
            "kath2-router1-ripd-killed",
            "simple-bgp-router2-static-blackhole",
            "Kath1",
            "dc_clos_bgp",
            "kath2_Q",
            "a",
            "v1.2",
        ] {
            assert!(ScenarioId::new(ok).is_ok(), "{ok}");
            assert!(TopologyId::new(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn refuses_everything_that_moves_a_path() {
        for bad in [
            "", ".", "..", "../x", "a/b", "/abs", "a\\b", ".hidden", "-flag", "a b", "a:b", "a,b",
            "a\0b", "ä", "x\n",
        ] {
            let e = ScenarioId::new(bad).unwrap_err();
            assert!(e.to_string().contains("invalid scenario id"), "{e}");
            assert!(TopologyId::new(bad).is_err(), "{bad:?}");
        }
        let long = "a".repeat(MAX_ID_LEN + 1);
        assert!(ScenarioId::new(&long[..MAX_ID_LEN]).is_ok());
        let e = ScenarioId::new(long).unwrap_err();
        assert!(e.to_string().contains("129 bytes"), "{e}");
        assert!(e.shown.chars().count() <= 81);
    }

    #[test]
    fn serde_is_a_plain_string_and_validates() {
        let id = TopologyId::new("Kath2").unwrap();
        assert_eq!(serde_json::to_value(&id).unwrap(), "Kath2");
        let e = serde_json::from_str::<TopologyId>("\"../../etc\"").unwrap_err();
        assert!(e.to_string().contains("invalid topology id"), "{e}");
    }
}
