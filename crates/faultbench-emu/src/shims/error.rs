//! What a wrapper's emulation step can fail with.
//!
//! A wrapper prints the error as its own standard error, so each message reads like what the
//! real tool prints in that situation (`Cannot find device "eth9"`) or names the emulation
//! part that failed (`cannot start the emulation daemon: …`).

use std::io;

/// An emulation step inside a device that failed; its text is what the wrapper prints.
#[derive(Debug, thiserror::Error)]
pub enum ShimError {
    /// No device of that name (iproute2's wording).
    #[error("Cannot find device \"{0}\"")]
    NoDevice(String),
    /// The device exists but is not an (emulated) bond.
    #[error("{0} is not a bond")]
    NotABond(String),
    /// `ip link set BOND master BOND` (the bonding driver's wording).
    #[error("Error: Can not enslave a bond to itself.")]
    EnslaveToItself,
    /// The real tool ran and exited non-zero; what it printed on standard error.
    #[error("{stderr}")]
    ToolFailed {
        /// The tool (`ip`, `nft`).
        tool: &'static str,
        /// Its standard error, trimmed.
        stderr: String,
    },
    /// A file, process or kernel call failed.
    #[error(transparent)]
    Io(#[from] io::Error),
    /// A daemon's start-up specification could not be encoded.
    #[error(transparent)]
    Encode(#[from] serde_json::Error),
    /// A daemon process could not be started.
    #[error("cannot start the {daemon}: {source}")]
    Spawn {
        /// Which daemon (`emulation daemon`, `VLAN filtering daemon`).
        daemon: &'static str,
        /// The cause.
        #[source]
        source: io::Error,
    },
    /// A daemon started but reported that it could not set up (its message), or exited
    /// without a word.
    #[error("{}", daemon_text(daemon, message.as_deref()))]
    DaemonFailed {
        /// Which daemon.
        daemon: &'static str,
        /// What it reported; `None` when it said nothing (then the text names the daemon).
        message: Option<String>,
    },
    /// A bond's daemon did not confirm its new member list in time.
    #[error("bond {0} did not apply its new members in time")]
    BondNotApplied(String),
    /// A bridge's VLAN filtering daemon did not confirm a table change in time.
    #[error("VLAN filtering on {0} did not apply the change in time")]
    VlansNotApplied(String),
}

fn daemon_text(daemon: &str, message: Option<&str>) -> String {
    match message {
        Some(m) => m.to_string(),
        None => format!("{daemon} failed to start"),
    }
}

impl ShimError {
    /// `daemon`'s first line of output when it is not `ok`: `error: MESSAGE`, or nothing.
    pub(crate) fn daemon_failed(daemon: &'static str, line: Option<&str>) -> ShimError {
        ShimError::DaemonFailed {
            daemon,
            message: line
                .and_then(|l| l.strip_prefix("error: "))
                .map(str::to_string),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_daemons_message_is_printed_as_it_reported_it() {
        let said = ShimError::daemon_failed(
            "emulation daemon",
            Some("error: RTNETLINK answers: File exists"),
        );
        assert_eq!(said.to_string(), "RTNETLINK answers: File exists");
        // A daemon that died without a word (or printed something else) is named.
        for line in [None, Some("panicked")] {
            let silent = ShimError::daemon_failed("VLAN filtering daemon", line);
            assert_eq!(silent.to_string(), "VLAN filtering daemon failed to start");
        }
    }
}
