//! What one poll of the lab found: per-protocol items, and the verdict built from them.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::time::Duration;

/// One protocol item of one device and the state it is in, e.g. `r1 ospfd eth0: Waiting`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ProtocolItem {
    /// The device.
    pub device: String,
    /// The daemon (`ospfd`, `ospf6d`, `bgpd`, `ripd`, `ripngd`, `eigrpd`, `isisd`, `keepalived`,
    /// `zebra`).
    pub daemon: String,
    /// What is in that state: an interface, a neighbour, a peer, a route, the SPF run.
    pub subject: String,
    /// The state, in the daemon's words where it has some.
    pub state: String,
}

impl ProtocolItem {
    pub(super) fn new(
        device: &str,
        daemon: &str,
        subject: impl Into<String>,
        state: impl Into<String>,
    ) -> Self {
        ProtocolItem {
            device: device.to_string(),
            daemon: daemon.to_string(),
            subject: subject.into(),
            state: state.into(),
        }
    }
}

impl std::fmt::Display for ProtocolItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} {}: {}",
            self.device, self.daemon, self.subject, self.state
        )
    }
}

/// Something that keeps the lab from being ready.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Blocker {
    pub item: ProtocolItem,
    /// The item stops blocking once the lab's routes have not changed for this long (for
    /// states a daemon may legitimately keep, e.g. RIP tables that filters keep apart).
    pub soft_after: Option<Duration>,
}

impl Blocker {
    pub fn hard(item: ProtocolItem) -> Self {
        Blocker {
            item,
            soft_after: None,
        }
    }

    pub fn soft(item: ProtocolItem, after: Duration) -> Self {
        Blocker {
            item,
            soft_after: Some(after),
        }
    }
}

/// The verdict on one poll of the whole lab.
#[derive(Debug, Default)]
pub(super) struct Assessment {
    /// What is not converged.
    pub blockers: Vec<Blocker>,
    /// Configured things that provably cannot come up (reported, not waited for).
    pub unable: Vec<ProtocolItem>,
    /// How long the routes must stay unchanged before the lab counts as ready.
    pub quiet: Duration,
    /// Every item's state, keyed `device daemon subject` (for `FAULTBENCH_TIMING`); a change
    /// restarts the quiet period.
    pub states: BTreeMap<String, String>,
    /// Items that only wait for a daemon's timer (shown, but their coming and going restarts
    /// no quiet period: what the timer does to the routes shows in the routes).
    pub timers: BTreeMap<String, String>,
}

impl Assessment {
    /// Records an item's state (shown when it changes).
    pub fn state(&mut self, item: &ProtocolItem) {
        self.states.insert(
            format!("{} {} {}", item.device, item.daemon, item.subject),
            item.state.clone(),
        );
    }

    /// Records an item that blocks readiness.
    pub fn block(&mut self, item: ProtocolItem) {
        self.state(&item);
        self.blockers.push(Blocker::hard(item));
    }

    /// Records an item that blocks readiness while a daemon's timer runs (see `timers`).
    pub fn block_timer(&mut self, item: ProtocolItem) {
        self.timers.insert(
            format!("{} {} {}", item.device, item.daemon, item.subject),
            item.state.clone(),
        );
        self.blockers.push(Blocker::hard(item));
    }

    /// Records an item that blocks readiness until the routes were quiet for `after`.
    pub fn block_soft(&mut self, item: ProtocolItem, after: Duration) {
        self.state(&item);
        self.blockers.push(Blocker::soft(item, after));
    }

    /// Records an item that cannot come up.
    pub fn cannot(&mut self, item: ProtocolItem) {
        self.state(&item);
        if !self.unable.contains(&item) {
            self.unable.push(item);
        }
    }

    /// Asks for at least `d` of quiet.
    pub fn need_quiet(&mut self, d: Duration) {
        self.quiet = self.quiet.max(d);
    }

    /// The blockers still blocking after `stable_for` of unchanged routes.
    pub fn still_blocking(&self, stable_for: Duration) -> Vec<&Blocker> {
        self.blockers
            .iter()
            .filter(|b| b.soft_after.is_none_or(|after| stable_for < after))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn soft_blockers_stop_blocking_after_their_quiet_period() {
        let mut a = Assessment::default();
        a.block(ProtocolItem::new("r1", "ospfd", "eth0", "Waiting"));
        a.block_soft(
            ProtocolItem::new("r2", "ripd", "route 10.0.0.0/8", "metric 3, r1 offers 2"),
            Duration::from_secs(5),
        );
        assert_eq!(a.still_blocking(Duration::from_secs(1)).len(), 2);
        let left = a.still_blocking(Duration::from_secs(6));
        assert_eq!(left.len(), 1);
        assert_eq!(left[0].item.to_string(), "r1 ospfd eth0: Waiting");
        assert_eq!(a.states.len(), 2);
    }
}
