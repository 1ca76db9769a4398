//! Verifiable identifiers in a ticket: what an agent could check on the network.
//!
//! A ticket's *identifier count* is the number of distinct `(kind, token)` pairs found in it:
//! IPv4 addresses and prefixes (with `x` placeholders, e.g. `1.0.0.x`), domain names, device
//! names, interface names, VLAN ids and AS numbers. [`Identifiers::release`] follows the public
//! release's patterns exactly, which reproduces the paper's Table 2 means. Those patterns miss
//! device names such as `it_hod` or `leaf_router_0_0`; [`Identifiers::with_devices`] also counts
//! every device name of the ticket's topology, which is the stricter measure the dataset
//! invariants use (a `naive_no_detail` ticket must name nothing checkable at all).
//!
//! ```
//! use faultbench_core::identifiers::{IdKind, Identifiers};
//! let ids = Identifiers::release("Gateway 192.168.2.1 on router0 (192.168.2.0/24) flaps; see eth0.");
//! assert_eq!(ids.len(), 4);
//! assert!(ids.contains(IdKind::Device, "router0"));
//! let topo = Identifiers::with_devices("it_hod cannot reach anything", &["it_hod", "router0"]);
//! assert_eq!(topo.len(), 1);
//! ```

use regex::Regex;
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// Kind of identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IdKind {
    /// IPv4 address or prefix (dotted, 2+ parts, `x` placeholders allowed).
    Ipv4,
    /// Domain name under .com, .net, .org, .local or .lab.
    Domain,
    /// Device name.
    Device,
    /// Interface name (eth0, gi0/1, lo, br0, bond0 …).
    Iface,
    /// VLAN id (`vlan 10`).
    Vlan,
    /// AS number (`AS 65001`).
    Asn,
}

static PATTERNS: LazyLock<Vec<(IdKind, Regex)>> = LazyLock::new(|| {
    let p = |s: &str| Regex::new(&format!("(?i){s}")).unwrap();
    vec![
        (
            IdKind::Ipv4,
            p(r"\b\d{1,3}(?:\.(?:\d{1,3}|x{1,3}))+(?:/\d{1,2})?\b"),
        ),
        (
            IdKind::Domain,
            p(r"\b[a-z0-9][a-z0-9\-]*\.(?:com|net|org|local|lab)\b"),
        ),
        (
            IdKind::Device,
            p(
                r"\b(?:pc|laptop|srv|server|host|router|sw|switch|asw|dsw|csw|isp|core|leaf|spine|edge|fw|r)[-_]?\d+[a-z]?\d*\b",
            ),
        ),
        (
            IdKind::Iface,
            p(r"\b(?:eth|gi|gig|fa|se|lo|br|bond)\s?\d+(?:[./]\d+)*\b"),
        ),
        (IdKind::Vlan, p(r"\bvlan\s?\d+\b")),
        (IdKind::Asn, p(r"\bAS\s?\d{3,6}\b")),
    ]
});

const DEVICE_STOP: [&str; 5] = ["re", "r", "router", "we", "were"];

/// The distinct identifiers of a text.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Identifiers {
    /// `(kind, lowercased token)` pairs.
    pub set: BTreeSet<(IdKind, String)>,
}

impl Identifiers {
    /// The release's measure (regular expressions only).
    pub fn release(text: &str) -> Identifiers {
        let ticket = collapse(text);
        let mut set = BTreeSet::new();
        for (kind, re) in PATTERNS.iter() {
            for m in re.find_iter(&ticket) {
                let tok = m.as_str().trim().to_lowercase();
                if *kind == IdKind::Device && DEVICE_STOP.contains(&tok.as_str()) {
                    continue;
                }
                set.insert((*kind, tok));
            }
        }
        Identifiers { set }
    }

    /// The release's measure plus every device name of the topology that appears as a word.
    pub fn with_devices(text: &str, devices: &[&str]) -> Identifiers {
        let mut ids = Identifiers::release(text);
        let lower = collapse(text).to_lowercase();
        for d in devices {
            let d = d.to_lowercase();
            if d.is_empty() {
                continue;
            }
            let word = Regex::new(&format!(
                r"(?:^|[^a-z0-9_]){}(?:$|[^a-z0-9_])",
                regex::escape(&d)
            ))
            .expect("escaped device name is a valid pattern");
            if word.is_match(&lower) {
                ids.set.insert((IdKind::Device, d));
            }
        }
        ids
    }

    /// Number of distinct identifiers.
    pub fn len(&self) -> usize {
        self.set.len()
    }

    /// True when the text names nothing checkable.
    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }

    /// Whether a given token of a kind was found.
    pub fn contains(&self, kind: IdKind, token: &str) -> bool {
        self.set.contains(&(kind, token.to_lowercase()))
    }
}

/// Collapses whitespace runs to one space, as the release does before matching.
fn collapse(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds() {
        let ids = Identifiers::release(
            "pc1 (1.0.0.x) via Gi0/1 and eth0.10 on vlan 10 to web.lab in AS 65001; R7 and router 5",
        );
        for (k, t) in [
            (IdKind::Device, "pc1"),
            (IdKind::Ipv4, "1.0.0.x"),
            (IdKind::Iface, "gi0/1"),
            (IdKind::Iface, "eth0.10"),
            (IdKind::Vlan, "vlan 10"),
            (IdKind::Domain, "web.lab"),
            (IdKind::Asn, "as 65001"),
            (IdKind::Device, "r7"),
        ] {
            assert!(ids.contains(k, t), "{k:?} {t} in {:?}", ids.set);
        }
        // `router 5` is not a device token (no digits glued on) and `pc_0_0` is missed by design.
        assert!(!Identifiers::release("pc_0_0 is down").contains(IdKind::Device, "pc_0_0"));
    }

    #[test]
    fn topology_devices_are_whole_words() {
        let ids = Identifiers::with_devices("the it_hod box and it_hod2", &["it_hod", "od"]);
        assert!(ids.contains(IdKind::Device, "it_hod"));
        assert!(!ids.contains(IdKind::Device, "od"));
    }
}
