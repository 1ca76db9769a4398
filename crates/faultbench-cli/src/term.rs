//! Printing text that may carry data from files.
//!
//! Agent names, diagnoses, scenario texts, file names and the errors that quote them were all
//! written by someone else; printed as they are, an escape sequence among them would clear the
//! reader's screen, retitle the window or rewrite the lines above. These macros are `println!`,
//! `print!` and `eprintln!` with every control character other than newline and tab shown as a
//! visible escape ([`faultbench_core::text::for_terminal`]). Machine-readable output (JSON,
//! CSV) and the raw output of lab commands are printed with the plain macros.

/// `println!`, control characters escaped.
macro_rules! outln {
    () => {
        println!()
    };
    ($($arg:tt)*) => {
        println!("{}", faultbench_core::text::for_terminal(&format!($($arg)*)))
    };
}

/// `print!`, control characters escaped.
macro_rules! out {
    ($($arg:tt)*) => {
        print!("{}", faultbench_core::text::for_terminal(&format!($($arg)*)))
    };
}

/// `eprintln!`, control characters escaped.
macro_rules! errln {
    () => {
        eprintln!()
    };
    ($($arg:tt)*) => {
        eprintln!("{}", faultbench_core::text::for_terminal(&format!($($arg)*)))
    };
}
