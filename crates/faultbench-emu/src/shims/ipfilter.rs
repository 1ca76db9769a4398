//! The selectors of `ip link show` / `ip addr show` that the kernel cannot answer for emulated
//! links, and how the wrapper answers them instead.
//!
//! The kernel filters a link dump by master (`master BOND`, `nomaster`) and by kind
//! (`type vlan`, `type bond_slave`). An emulated link is a tap and an emulated bond member has
//! no master in the kernel, so for those selectors the real `ip` would print nothing (or the
//! wrong links) with exit code 0. The wrapper takes such a selector out of the command line,
//! lets the real `ip` list more, and keeps only what the selector means given the emulation's
//! records:
//!
//! | selector | handled here when | keeps |
//! |---|---|---|
//! | `master B` | `B` is an emulated bond | `B`'s members |
//! | `type vlan`, `type dummy`, `type bond` | the kernel lacks that kind | emulated links of that kind |
//! | `type bond_slave` | the kernel lacks bonding | members of every emulated bond |
//! | `nomaster` | always (passed on too) | drops members of emulated bonds |
//!
//! Everything else (`master br0`, `type veth`, `up`, a device name…) stays on the command line
//! for the real `ip`: an emulated VLAN or bond enslaved to a real bridge is a real bridge port.

use super::state::{LinkKind, LinkRecord};
use crate::hostcaps::{Feature, HostCaps};

/// Selectors of `ip link|addr show` that take a value (iproute2 compares them exactly).
const WITH_VALUE: [&str; 9] = [
    "dev", "to", "scope", "label", "group", "vrf", "proto", "master", "type",
];

/// What the wrapper filters itself, after the real `ip` listed the links.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct ShowFilter {
    /// `type vlan|dummy|bond` for a kind the kernel lacks.
    kind: Option<&'static str>,
    /// `master B` for an emulated bond `B`.
    members_of: Option<String>,
    /// `type bond_slave` without kernel bonding.
    bond_slaves: bool,
    /// `nomaster`.
    no_master: bool,
}

impl ShowFilter {
    /// Splits `tail` (the words after `show`) into what the real `ip` gets and what the wrapper
    /// filters.
    pub(super) fn parse(
        tail: &[String],
        recs: &[LinkRecord],
        caps: &HostCaps,
    ) -> (Vec<String>, ShowFilter) {
        let mut real = Vec::with_capacity(tail.len());
        let mut f = ShowFilter::default();
        let mut i = 0;
        while i < tail.len() {
            let word = tail[i].as_str();
            let value = tail.get(i + 1).map(String::as_str);
            match (word, value) {
                ("master", Some(m)) if is_bond(recs, m) => {
                    f.members_of = Some(m.to_string());
                    i += 2;
                    continue;
                }
                ("type", Some(t)) => {
                    if let Some(kind) = emulated_kind(t, caps) {
                        f.kind = Some(kind);
                        i += 2;
                        continue;
                    }
                    if t == "bond_slave" && !caps.has(Feature::Bonding) {
                        f.bond_slaves = true;
                        i += 2;
                        continue;
                    }
                }
                ("nomaster", _) => f.no_master = true,
                _ => {}
            }
            real.push(tail[i].clone());
            if WITH_VALUE.contains(&word)
                && let Some(v) = value
            {
                real.push(v.to_string());
                i += 1;
            }
            i += 1;
        }
        (real, f)
    }

    /// Whether the link `name` passes the selectors handled here.
    pub(super) fn keeps(&self, recs: &[LinkRecord], name: &str) -> bool {
        let rec = recs.iter().find(|r| r.name == name);
        let bond = bond_of(recs, name);
        if let Some(kind) = self.kind
            && rec.is_none_or(|r| r.kind.type_name() != kind)
        {
            return false;
        }
        if let Some(m) = &self.members_of
            && bond.is_none_or(|b| &b.name != m)
        {
            return false;
        }
        if self.bond_slaves && bond.is_none() {
            return false;
        }
        !(self.no_master && bond.is_some())
    }
}

/// The kernel name of `type T` when `T` is a kind this kernel lacks (so the wrapper emulates it).
fn emulated_kind(t: &str, caps: &HostCaps) -> Option<&'static str> {
    let (kind, feature) = match t {
        "vlan" => ("vlan", Feature::Vlan8021q),
        "dummy" => ("dummy", Feature::Dummy),
        "bond" => ("bond", Feature::Bonding),
        _ => return None,
    };
    (!caps.has(feature)).then_some(kind)
}

fn is_bond(recs: &[LinkRecord], name: &str) -> bool {
    recs.iter()
        .any(|r| r.name == name && matches!(r.kind, LinkKind::Bond { .. }))
}

/// The emulated bond `member` is enslaved to.
pub(super) fn bond_of<'a>(recs: &'a [LinkRecord], member: &str) -> Option<&'a LinkRecord> {
    recs.iter().find(|r| {
        matches!(&r.kind, LinkKind::Bond { members, .. } if members.iter().any(|m| m == member))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn recs() -> Vec<LinkRecord> {
        let rec = |name: &str, kind| LinkRecord {
            name: name.into(),
            kind,
            pid: 1,
            ifindex: 9,
        };
        vec![
            rec(
                "bond0",
                LinkKind::Bond {
                    mode: "802.3ad".into(),
                    members: words("eth1 eth2"),
                },
            ),
            rec(
                "eth3.10",
                LinkKind::Vlan {
                    parent: "eth3".into(),
                    vid: 10,
                },
            ),
            rec("lo1", LinkKind::Dummy),
        ]
    }

    fn no_kinds() -> HostCaps {
        HostCaps::full_kernel()
            .with(Feature::Bonding, false)
            .with(Feature::Vlan8021q, false)
            .with(Feature::Dummy, false)
    }

    #[test]
    fn master_of_an_emulated_bond_selects_its_members() {
        let r = recs();
        let (real, f) = ShowFilter::parse(&words("master bond0 up"), &r, &no_kinds());
        assert_eq!(real, words("up"));
        assert!(f.keeps(&r, "eth1") && f.keeps(&r, "eth2"));
        assert!(!f.keeps(&r, "bond0") && !f.keeps(&r, "eth3"));
        // A real bridge stays the kernel's business.
        let (real, f) = ShowFilter::parse(&words("master br0"), &r, &no_kinds());
        assert_eq!((real, f), (words("master br0"), ShowFilter::default()));
    }

    #[test]
    fn kinds_and_slaves() {
        let r = recs();
        let (real, f) = ShowFilter::parse(&words("type bond_slave"), &r, &no_kinds());
        assert!(real.is_empty());
        assert!(f.keeps(&r, "eth2") && !f.keeps(&r, "lo1"));
        let (_, f) = ShowFilter::parse(&words("type vlan"), &r, &no_kinds());
        assert!(f.keeps(&r, "eth3.10") && !f.keeps(&r, "eth3") && !f.keeps(&r, "lo1"));
        let (real, f) = ShowFilter::parse(&words("nomaster"), &r, &no_kinds());
        assert_eq!(real, words("nomaster"));
        assert!(!f.keeps(&r, "eth1") && f.keeps(&r, "bond0") && f.keeps(&r, "eth3"));
        // A kernel with real VLANs answers `type vlan` itself.
        let vlans = no_kinds().with(Feature::Vlan8021q, true);
        let (real, _) = ShowFilter::parse(&words("type vlan"), &r, &vlans);
        assert_eq!(real, words("type vlan"));
    }

    #[test]
    fn values_are_not_taken_for_selectors() {
        // A device literally named `master` or `nomaster`.
        let r = recs();
        let (real, f) = ShowFilter::parse(&words("dev nomaster"), &r, &no_kinds());
        assert_eq!((real, f), (words("dev nomaster"), ShowFilter::default()));
        let (real, f) = ShowFilter::parse(&words("label type type bond"), &r, &no_kinds());
        assert_eq!(real, words("label type"));
        assert_eq!(f.kind, Some("bond"));
    }
}
