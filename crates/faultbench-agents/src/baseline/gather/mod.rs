//! Collecting the evidence: every tool call of the baseline happens here, in a fixed order,
//! within the call cap and the wall-clock deadline. The rules ([`super::rules`]) only read
//! what this module gathered, so they can be tested on recorded text.
//!
//! Three parts: the [`Prober`] (calls within the budget), the [`Observations`] (what was
//! found) and the phases that fill them, one function per step.

mod observations;
mod phases;
mod prober;

pub use observations::{DnsQuery, Observations};
pub use phases::{
    claim_pings, control_plane, inventory, ping_and_record, reachability, services, sweep,
};
pub use prober::Prober;
// The rules' tests build observations by hand.
#[cfg(test)]
pub use observations::{Ping, RouterState};
