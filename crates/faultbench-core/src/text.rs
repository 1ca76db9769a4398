//! Text taken from files and shown to people.
//!
//! Four rules, each one function, because everything a record, a scenario or a manifest holds
//! was written by someone else:
//!
//! - [`for_terminal`]: what is printed to a terminal carries no control characters. An agent
//!   name or a diagnosis holding `ESC[2J` (clear the screen), an OSC sequence (set the window
//!   title, plant a hyperlink) or a lone carriage return (overwrite the line just printed) would
//!   otherwise act on the reader's terminal instead of being shown. They are replaced by a
//!   visible escape such as `\x1b` or `\u{9b}`; newlines and tabs stay.
//! - [`excerpt`]: a message that quotes input quotes at most [`ECHO_MAX`] characters of it,
//!   then says how much it left out, so that a 1 MB field does not become a 1 MB error.
//!
//! - [`for_html`]: text put into an HTML or SVG page (element content or a quoted attribute,
//!   either quote) has `&`, `<`, `>`, `"` and `'` escaped and its control characters other
//!   than newline and tab replaced, so it can neither open markup nor leave its attribute. The
//!   report and the viewer both use it.
//!
//! - [`for_shell`]: a word put into a shell command line (a device's `sh -c`, a command Kathará
//!   re-splits with Python's `shlex`) is read back as exactly that one word: words made only of
//!   characters no shell splits or interprets stay as they are, others go in single quotes. The
//!   mock networks' matching text and the Kathará driver both use it.
//!
//! Files written for other programs (Markdown, CSV, JSON) are not terminal output and are not
//! escaped here.

use std::borrow::Cow;
use std::fmt::Write as _;

/// One word for a POSIX shell or Python's `shlex.split`: unchanged when it is not empty and made
/// only of `[A-Za-z0-9_./:=@%+,-]`, else in single quotes with each `'` written as `'\''`.
///
/// ```
/// use faultbench_core::text::for_shell;
/// assert_eq!(for_shell("10.0.0.1/24"), "10.0.0.1/24");
/// assert_eq!(for_shell("show ip route"), "'show ip route'");
/// assert_eq!(for_shell("it's"), r"'it'\''s'");
/// assert_eq!(for_shell("$(reboot)"), "'$(reboot)'");
/// assert_eq!(for_shell(""), "''");
/// ```
pub fn for_shell(word: &str) -> String {
    let plain = !word.is_empty()
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c));
    if plain {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// Escapes text for HTML or SVG element content and quoted attribute values (`'` or `"`).
///
/// ```
/// use faultbench_core::text::for_html;
/// assert_eq!(for_html("<a href='x'>&\"</a>"), "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;");
/// ```
pub fn for_html(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + s.len() / 8);
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab and newline would only garble the page (and
            // most are not allowed in XML at all, so an SVG holding one would not render).
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// The most characters of an input value a message quotes ([`excerpt`]).
pub const ECHO_MAX: usize = 200;

/// Whether `c` must not reach a terminal as itself: C0 controls other than newline and tab,
/// DEL, C1 controls (U+0080–U+009F; U+009B is a one-character CSI on terminals that take 8-bit
/// controls), and the bidirectional embedding, override and isolate controls, which reorder
/// what is displayed around them.
fn is_hazard(c: char) -> bool {
    match c {
        '\n' | '\t' => false,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// `s` with every control character other than `\n` and `\t` replaced by a visible escape:
/// `\x1b` for ESC and the other ASCII controls, `\u{9b}` for C1 and bidirectional controls.
/// Text without such characters is returned as it is, without copying.
///
/// ```
/// use faultbench_core::text::for_terminal;
/// assert_eq!(for_terminal("agent\u{1b}[2J\u{9b}31m"), "agent\\x1b[2J\\u{9b}31m");
/// assert_eq!(for_terminal("line 1\n\tline 2"), "line 1\n\tline 2");
/// ```
pub fn for_terminal(s: &str) -> Cow<'_, str> {
    let Some(first) = s.find(is_hazard) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        if !is_hazard(c) {
            out.push(c);
        } else if c.is_ascii() {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        } else {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
    Cow::Owned(out)
}

/// `s` cut to its first `max` characters, followed by `… (N more bytes)` when anything was cut;
/// `s` itself when it is short enough. For messages that quote an input value or line.
///
/// ```
/// use faultbench_core::text::excerpt;
/// assert_eq!(excerpt("short", 200), "short");
/// assert_eq!(excerpt("abcdefgh", 3), "abc… (5 more bytes)");
/// ```
pub fn excerpt(s: &str, max: usize) -> Cow<'_, str> {
    match s.char_indices().nth(max) {
        None => Cow::Borrowed(s),
        Some((cut, _)) => {
            let left = s.len() - cut;
            let unit = if left == 1 { "byte" } else { "bytes" };
            Cow::Owned(format!("{}… ({left} more {unit})", &s[..cut]))
        }
    }
}

/// [`excerpt`] at [`ECHO_MAX`] characters: how messages quote input.
pub fn echo(s: &str) -> Cow<'_, str> {
    excerpt(s, ECHO_MAX)
}

/// A JSON error as a message of bounded length. `serde_json` quotes the offending value
/// (`invalid type: string "…", expected u32`) whole, however long; here it is cut like any
/// echo of input, and the position, which the cut would drop, is appended again.
pub fn json_error(e: &serde_json::Error) -> String {
    let full = e.to_string();
    match excerpt(&full, ECHO_MAX) {
        Cow::Borrowed(_) => full,
        Cow::Owned(cut) if e.line() > 0 => {
            format!("{cut} at line {} column {}", e.line(), e.column())
        }
        Cow::Owned(cut) => cut,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn shell_words_round_trip_through_a_posix_shell() {
        for s in [
            "plain",
            "two words",
            "it's",
            "$(reboot)",
            "a\"b",
            "",
            "a\nb",
            "*",
            "-x",
            "'",
        ] {
            let o = std::process::Command::new("sh")
                .args(["-c", &format!("printf %s {}", super::for_shell(s))])
                .output()
                .unwrap();
            assert_eq!(String::from_utf8_lossy(&o.stdout), s);
        }
    }

    use super::*;

    #[test]
    fn every_control_character_but_newline_and_tab_is_escaped() {
        for b in (0u8..0x20).chain([0x7f]) {
            let c = char::from(b);
            let shown = for_terminal(&format!("a{c}b")).into_owned();
            if matches!(c, '\n' | '\t') {
                assert_eq!(shown, format!("a{c}b"));
            } else {
                assert_eq!(shown, format!("a\\x{b:02x}b"), "byte {b:#x}");
            }
        }
        for u in 0x80u32..=0x9f {
            let c = char::from_u32(u).unwrap();
            assert_eq!(for_terminal(&format!("{c}")), format!("\\u{{{u:x}}}"));
        }
        assert_eq!(for_terminal("\u{202e}txt.exe"), "\\u{202e}txt.exe");
    }

    #[test]
    fn escaped_text_holds_no_control_byte_and_clean_text_is_not_copied() {
        let hostile = "x\u{1b}]0;title\u{7}\u{1b}[2J\r\u{9b}1;1H\u{7f}é—ok";
        let shown = for_terminal(hostile);
        assert!(
            !shown
                .chars()
                .any(|c| c.is_control() && c != '\n' && c != '\t'),
            "{shown:?}"
        );
        assert!(shown.ends_with("é—ok"), "printable text is kept: {shown}");
        assert!(matches!(
            for_terminal("plain — ünïcode\n"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn excerpts_cut_on_characters_and_count_the_bytes_left_out() {
        let big = "é".repeat(1_000_000);
        let cut = excerpt(&big, ECHO_MAX);
        assert!(cut.len() < 1024, "{} bytes", cut.len());
        assert!(cut.starts_with(&"é".repeat(ECHO_MAX)));
        assert!(cut.ends_with("… (1999600 more bytes)"), "{}", &cut[400..]);
        assert!(matches!(excerpt(&"x".repeat(200), 200), Cow::Borrowed(_)));
        assert_eq!(
            echo(&"x".repeat(201)),
            format!("{}… (1 more byte)", "x".repeat(200))
        );
    }

    /// Issue 30: a 1 MB string where a number belongs made `serde_json` quote it whole in the
    /// error, and the error was printed whole.
    #[test]
    fn json_errors_quote_an_excerpt_and_keep_the_position() {
        #[derive(Debug, serde::Deserialize)]
        struct Key {
            #[allow(dead_code)]
            pass: u32,
        }
        let text = format!("{{\n\"pass\": \"{}\"}}", "P".repeat(1_000_000));
        let e = serde_json::from_str::<Key>(&text).unwrap_err();
        assert!(
            e.to_string().len() > 1_000_000,
            "serde_json quotes it whole"
        );
        let shown = json_error(&e);
        assert!(shown.len() < 1024, "{} bytes", shown.len());
        assert!(
            shown.contains("more bytes)") && shown.ends_with("at line 2 column 1000010"),
            "{shown}"
        );
        let short = serde_json::from_str::<Key>("{\"pass\": true}").unwrap_err();
        assert_eq!(json_error(&short), short.to_string());
    }
}
