//! The last word on Ctrl-C and SIGTERM.
//!
//! Commands that hold labs turn the first signal into a clean stop (tear the labs down, exit
//! 130). Once their handler is installed the signals no longer end the process by themselves,
//! so if that clean stop itself hangs, nothing would; [`second_signal_exits`] makes a second
//! signal end the process at once. Everywhere else no handler is installed and the signals
//! keep their default action.

/// Spawns a listener that lets the command handle the first SIGINT or SIGTERM and exits the
/// process with 130 on the second, saying what may be left behind.
pub fn second_signal_exits() -> tokio::task::JoinHandle<()> {
    tokio::spawn(async {
        super::lab::interrupted().await;
        super::lab::interrupted().await;
        errln!(
            "second interrupt: exiting now; labs still running are collected by `faultbench lab gc`"
        );
        std::process::exit(130);
    })
}
