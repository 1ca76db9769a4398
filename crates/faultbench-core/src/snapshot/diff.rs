//! Differences between two snapshots.

use super::{Aspect, AspectState, Snapshot};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How an item changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeKind {
    /// The item is new.
    Added,
    /// The item is gone.
    Removed,
    /// The item is still there with another value.
    Changed,
}

impl ChangeKind {
    /// `added`, `removed`, `changed`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Changed => "changed",
        }
    }
}

/// One difference between two snapshots: on `device`, in `aspect`, `item` was added, removed
/// or changed from `before` to `after`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StateChange {
    /// The device.
    pub device: String,
    /// The aspect of its state.
    pub aspect: Aspect,
    /// Added, removed or changed.
    pub change: ChangeKind,
    /// The item: an interface (`eth0`), an address (`eth0 10.0.0.1/24`), a route destination
    /// (`10.0.0.0/24 metric 20`), a sysctl, a service, a rule or configuration line with its
    /// context; for a whole aspect that appeared or vanished, the aspect's name.
    pub item: String,
    /// The value before (`None` when added).
    pub before: Option<String>,
    /// The value after (`None` when removed).
    pub after: Option<String>,
    /// One line for people: `router1 routes: added 198.51.100.0/24 (via 10.0.0.1 dev eth0)`.
    pub summary: String,
}

impl std::fmt::Display for StateChange {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.summary)
    }
}

fn change(
    device: &str,
    aspect: Aspect,
    item: &str,
    before: Option<&str>,
    after: Option<&str>,
) -> StateChange {
    let kind = match (before, after) {
        (None, _) => ChangeKind::Added,
        (_, None) => ChangeKind::Removed,
        _ => ChangeKind::Changed,
    };
    let with = |v: Option<&str>| match v {
        Some(v) if !v.is_empty() => format!(" ({v})"),
        _ => String::new(),
    };
    let what = match kind {
        ChangeKind::Added => format!("added {item}{}", with(after)),
        ChangeKind::Removed => format!("removed {item}{}", with(before)),
        ChangeKind::Changed => format!(
            "{item} changed: {} → {}",
            before.unwrap_or(""),
            after.unwrap_or("")
        ),
    };
    StateChange {
        device: device.to_string(),
        aspect,
        change: kind,
        item: item.to_string(),
        before: before.map(str::to_string),
        after: after.map(str::to_string),
        summary: format!("{device} {aspect}: {what}"),
    }
}

fn describe(state: &AspectState) -> String {
    match state {
        AspectState::Items(i) => format!("{} item(s)", i.len()),
        AspectState::Absent(why) | AspectState::Failed(why) => why.clone(),
    }
}

pub(super) fn diff(before: &Snapshot, after: &Snapshot) -> Vec<StateChange> {
    let mut out = Vec::new();
    for (device, b) in &before.devices {
        let Some(a) = after.devices.get(device) else {
            continue;
        };
        for (aspect, bs) in &b.aspects {
            let Some(as_) = a.aspects.get(aspect) else {
                continue;
            };
            match (bs, as_) {
                (AspectState::Failed(_), _) | (_, AspectState::Failed(_)) => {}
                (AspectState::Items(bi), AspectState::Items(ai)) => {
                    items(device, *aspect, bi, ai, &mut out);
                }
                (x, y) if x == y => {}
                (x, y) => out.push(change(
                    device,
                    *aspect,
                    aspect.as_str(),
                    Some(&describe(x)),
                    Some(&describe(y)),
                )),
            }
        }
    }
    out
}

fn items(
    device: &str,
    aspect: Aspect,
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
    out: &mut Vec<StateChange>,
) {
    for (k, bv) in before {
        match after.get(k) {
            None => out.push(change(device, aspect, k, Some(bv), None)),
            Some(av) if av != bv => out.push(change(device, aspect, k, Some(bv), Some(av))),
            Some(_) => {}
        }
    }
    for (k, av) in after {
        if !before.contains_key(k) {
            out.push(change(device, aspect, k, None, Some(av)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::DeviceState;
    use super::*;

    fn snap(device: &str, aspect: Aspect, state: AspectState) -> Snapshot {
        let mut d = DeviceState::default();
        d.aspects.insert(aspect, state);
        Snapshot {
            devices: [(device.to_string(), d)].into(),
            ..Default::default()
        }
    }

    fn items(pairs: &[(&str, &str)]) -> AspectState {
        AspectState::Items(
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        )
    }

    #[test]
    fn added_removed_changed_and_unreadable() {
        let a = snap(
            "r1",
            Aspect::Links,
            items(&[("eth0", "up, carrier on"), ("eth1", "up, carrier on")]),
        );
        let b = snap(
            "r1",
            Aspect::Links,
            items(&[("eth0", "down, carrier off"), ("eth2", "up, carrier on")]),
        );
        let d = a.diff(&b);
        let s: Vec<&str> = d.iter().map(|c| c.summary.as_str()).collect();
        assert_eq!(
            s,
            vec![
                "r1 links: eth0 changed: up, carrier on → down, carrier off",
                "r1 links: removed eth1 (up, carrier on)",
                "r1 links: added eth2 (up, carrier on)",
            ]
        );
        assert!(a.diff(&a).is_empty());
        let failed = snap("r1", Aspect::Links, AspectState::Failed("timeout".into()));
        assert!(a.diff(&failed).is_empty(), "unreadable is never a change");
        let absent = snap(
            "r1",
            Aspect::Links,
            AspectState::Absent("FRR is not running".into()),
        );
        let d = a.diff(&absent);
        assert_eq!(d.len(), 1);
        assert_eq!(
            d[0].summary,
            "r1 links: links changed: 2 item(s) → FRR is not running"
        );
    }
}
