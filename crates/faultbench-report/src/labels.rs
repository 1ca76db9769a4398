//! Text from the registry as the report shows it: cut to a documented length, so that one long
//! value (a 2 MiB agent name) cannot make every table, chart and export as long.
//!
//! Three lengths apply:
//! - [`MAX_FIELD_CHARS`](crate::MAX_FIELD_CHARS): a registry's text fields are kept at most this
//!   long when read ([`RunIndex`](crate::RunIndex)), so every copy a report makes is bounded;
//! - [`MAX_LABEL_CHARS`]: a label shown in a table cell or header, or on a chart (Markdown,
//!   HTML, SVG), is cut to this many characters with an ellipsis;
//! - [`MAX_CSV_FIELD_CHARS`]: a text cell of a CSV export (data, kept longer than a label) is
//!   cut to this many characters, followed by `… (N more bytes)`.

use std::borrow::Cow;

/// Longest label shown in a table or chart, in characters (agent names, scenario ids, models).
pub const MAX_LABEL_CHARS: usize = 80;

/// Longest text cell of a CSV export, in characters.
pub const MAX_CSV_FIELD_CHARS: usize = 1_024;

/// The byte offset after the first `n` characters of `s`, when `s` is longer than that.
fn cut_at(s: &str, n: usize) -> Option<usize> {
    s.char_indices().nth(n).map(|(i, _)| i)
}

/// `s` cut to [`MAX_LABEL_CHARS`] characters: the first `MAX_LABEL_CHARS − 1` and `…`.
///
/// ```
/// use faultbench_report::labels::{label, MAX_LABEL_CHARS};
/// assert_eq!(label("react"), "react");
/// let long = "a".repeat(1000);
/// assert_eq!(label(&long).chars().count(), MAX_LABEL_CHARS);
/// assert!(label(&long).ends_with('…'));
/// ```
pub fn label(s: &str) -> Cow<'_, str> {
    match cut_at(s, MAX_LABEL_CHARS) {
        None => Cow::Borrowed(s),
        Some(_) => {
            let end = cut_at(s, MAX_LABEL_CHARS - 1).unwrap_or(s.len());
            Cow::Owned(format!("{}…", &s[..end]))
        }
    }
}

/// A label for a Markdown table cell: cut ([`label`]), pipes escaped, line breaks as spaces.
pub fn md(s: &str) -> String {
    label(s).replace('|', "\\|").replace(['\n', '\r'], " ")
}

/// Labels for a Markdown table row or header, each cut and escaped ([`md`]), joined by `sep`.
pub fn md_join(labels: &[String], sep: &str) -> String {
    labels.iter().map(|l| md(l)).collect::<Vec<_>>().join(sep)
}

/// A text cell of a CSV export: at most [`MAX_CSV_FIELD_CHARS`] characters, then
/// `… (N more bytes)` when cut.
pub fn csv_field(s: &str) -> Cow<'_, str> {
    faultbench_core::text::excerpt(s, MAX_CSV_FIELD_CHARS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_csv_cells_are_cut_on_character_boundaries() {
        let s = "é".repeat(MAX_LABEL_CHARS);
        assert_eq!(label(&s), s, "exactly the cap is kept");
        let longer = format!("{s}é");
        let l = label(&longer);
        assert_eq!(l.chars().count(), MAX_LABEL_CHARS);
        assert!(l.ends_with("é…"));
        assert_eq!(md("a|b\nc"), "a\\|b c");
        let cell = "x".repeat(MAX_CSV_FIELD_CHARS + 10);
        assert_eq!(
            csv_field(&cell),
            format!("{}… (10 more bytes)", "x".repeat(MAX_CSV_FIELD_CHARS))
        );
        assert_eq!(csv_field("sade"), "sade");
    }
}
