//! The text a mock matches a command against.
//!
//! A shell command is its script; an argv command is its words joined by spaces, each word that
//! a shell would split or interpret put in single quotes ([`faultbench_core::text::for_shell`]). So the argv
//! `["vtysh", "-c", "show ip route"]` and the script `vtysh -c 'show ip route'` are the same
//! text, and one rule answers both.

use faultbench_core::Command;
use faultbench_core::text::for_shell;

/// The matching text of a command (see the module docs).
///
/// ```
/// use faultbench_core::Command;
/// use faultbench_emu::mock::command_text;
///
/// assert_eq!(command_text(&Command::argv(["vtysh", "-c", "show ip route"])), "vtysh -c 'show ip route'");
/// assert_eq!(command_text(&Command::shell("  pgrep ospfd ")), "pgrep ospfd");
/// assert_eq!(command_text(&Command::argv(["echo", "it's"])), r"echo 'it'\''s'");
/// ```
pub fn command_text(command: &Command) -> String {
    match command {
        Command::Shell(s) => s.trim().to_string(),
        Command::Argv(words) => words
            .iter()
            .map(|w| for_shell(w))
            .collect::<Vec<_>>()
            .join(" "),
    }
}

/// Quotes one word the way a POSIX shell would read it back unchanged.
#[deprecated(note = "use `faultbench_core::text::for_shell`; this name goes in the next release")]
pub fn quote(word: &str) -> String {
    for_shell(word)
}
