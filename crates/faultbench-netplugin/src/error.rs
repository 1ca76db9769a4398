//! The plugin's errors: each names what it was doing and on what, since the message travels
//! back to Docker and is shown to the user by `docker network create` or Kathará.

use std::path::PathBuf;

/// Everything the plugin can fail at.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// A request Docker sent is not what the protocol allows.
    #[error("bad request to {call}: {why}")]
    BadRequest {
        /// The protocol call, e.g. `NetworkDriver.CreateEndpoint`.
        call: String,
        /// What is wrong with it.
        why: String,
    },
    /// A protocol call the plugin does not implement.
    #[error("unknown call {0}")]
    UnknownCall(String),
    /// A network or endpoint Docker names that the plugin never saw.
    #[error("{what} {id} is not known to this plugin")]
    NotFound {
        /// `network` or `endpoint`.
        what: &'static str,
        /// The id Docker gave.
        id: String,
    },
    /// The kernel refused a link change.
    #[error("netlink {op} on {name}: {source}")]
    Netlink {
        /// What was asked, e.g. `create bridge`.
        op: &'static str,
        /// The interface.
        name: String,
        /// The kernel's answer.
        source: std::io::Error,
    },
    /// `iptables` failed to add or remove the bridge's `FORWARD` rule.
    #[error("iptables ({binary}) {action} FORWARD rule for {bridge}: {why}")]
    Firewall {
        /// The binary run.
        binary: String,
        /// `add` or `remove`.
        action: &'static str,
        /// The bridge the rule is for.
        bridge: String,
        /// Its stderr or the spawn error.
        why: String,
    },
    /// The state file could not be read or written.
    #[error("state file {path}: {why}")]
    State {
        /// The file.
        path: PathBuf,
        /// What went wrong, with the fix where there is one.
        why: String,
    },
    /// The socket could not be served.
    #[error("socket {path}: {source}")]
    Socket {
        /// The socket's path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}
