//! The repair verdict and how it is decided.

use super::{BaselineCheck, FaultCheck};
use crate::snapshot::StateChange;
use serde::{Deserialize, Serialize};

/// What the lab says about an agent's repair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RepairVerdict {
    /// The fault is gone, the baseline holds, nothing outside the fault's scope changed.
    Repaired,
    /// The fault is gone and the baseline holds, but something outside the fault's scope
    /// changed.
    RepairedWithCollateral,
    /// The fault is gone but the baseline does not hold.
    Partial,
    /// The fault still holds, or could not be checked (a device is gone).
    NotRepaired,
    /// A false premise (nothing injected), and the agent changed nothing.
    Untouched,
    /// A false premise, and the agent changed the healthy network anyway (the repair task's
    /// over-diagnosis).
    UnneededChange,
}

impl RepairVerdict {
    /// Every verdict, in report order.
    pub const ALL: [RepairVerdict; 6] = [
        RepairVerdict::Repaired,
        RepairVerdict::RepairedWithCollateral,
        RepairVerdict::Partial,
        RepairVerdict::NotRepaired,
        RepairVerdict::Untouched,
        RepairVerdict::UnneededChange,
    ];

    /// The snake_case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RepairVerdict::Repaired => "repaired",
            RepairVerdict::RepairedWithCollateral => "repaired_with_collateral",
            RepairVerdict::Partial => "partial",
            RepairVerdict::NotRepaired => "not_repaired",
            RepairVerdict::Untouched => "untouched",
            RepairVerdict::UnneededChange => "unneeded_change",
        }
    }

    /// The fault is fixed and the network healthy (with or without collateral).
    pub fn is_repaired(self) -> bool {
        matches!(
            self,
            RepairVerdict::Repaired | RepairVerdict::RepairedWithCollateral
        )
    }

    /// The fault's checks no longer hold (repaired, with collateral, or partial).
    pub fn fault_gone(self) -> bool {
        self.is_repaired() || self == RepairVerdict::Partial
    }

    /// A verdict of a false premise (nothing injected).
    pub fn is_false_premise(self) -> bool {
        matches!(
            self,
            RepairVerdict::Untouched | RepairVerdict::UnneededChange
        )
    }
}

impl std::fmt::Display for RepairVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The verdict from the fault's checks (`None`: nothing was injected), the baseline (with its
/// failures, one line each) and the collateral changes; with the reason in one line.
///
/// ```
/// use faultbench_core::repair::{decide, BaselineCheck, RepairVerdict};
/// let healthy = BaselineCheck { healthy: true, probes: vec![], attempts: 1, duration_ms: 0 };
/// assert_eq!(decide(None, &healthy, &[], &[]).0, RepairVerdict::Untouched);
/// ```
pub fn decide(
    fault: Option<&FaultCheck>,
    baseline: &BaselineCheck,
    baseline_failures: &[String],
    collateral: &[StateChange],
) -> (RepairVerdict, String) {
    let list = |v: &[StateChange]| {
        let mut s: Vec<&str> = v.iter().take(3).map(|c| c.summary.as_str()).collect();
        if v.len() > 3 {
            s.push("…");
        }
        s.join("; ")
    };
    let broken = || {
        let mut s: Vec<&str> = baseline_failures
            .iter()
            .take(3)
            .map(String::as_str)
            .collect();
        if baseline_failures.len() > 3 {
            s.push("…");
        }
        s.join("; ")
    };
    let Some(fault) = fault else {
        return if collateral.is_empty() {
            (
                RepairVerdict::Untouched,
                "nothing was injected and the agent changed nothing".into(),
            )
        } else {
            let health = if baseline.healthy {
                "the baseline still holds".to_string()
            } else {
                format!("the baseline no longer holds: {}", broken())
            };
            (
                RepairVerdict::UnneededChange,
                format!(
                    "nothing was injected, yet {} change(s): {}; {health}",
                    collateral.len(),
                    list(collateral)
                ),
            )
        };
    };
    if !fault.unverifiable.is_empty() {
        return (
            RepairVerdict::NotRepaired,
            format!(
                "the fault's checks could not run: {}",
                fault.unverifiable.join("; ")
            ),
        );
    }
    if !fault.gone {
        let why = if fault.still_present.is_empty() {
            "every [POST-INJECT-CHECK] still holds: the fault is there".to_string()
        } else {
            format!(
                "{} fault(s) still hold their checks: {}",
                fault.still_present.len(),
                fault.still_present.join("; ")
            )
        };
        return (RepairVerdict::NotRepaired, why);
    }
    if !baseline.healthy {
        return (
            RepairVerdict::Partial,
            format!(
                "the fault is gone but the baseline does not hold: {}",
                broken()
            ),
        );
    }
    if collateral.is_empty() {
        (
            RepairVerdict::Repaired,
            "the fault is gone, the baseline holds and nothing outside the fault changed".into(),
        )
    } else {
        (
            RepairVerdict::RepairedWithCollateral,
            format!(
                "the fault is gone and the baseline holds, but {} change(s) outside the fault: {}",
                collateral.len(),
                list(collateral)
            ),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::{Aspect, ChangeKind};

    fn fault(gone: bool, unverifiable: &[&str]) -> FaultCheck {
        FaultCheck {
            gone,
            unverifiable: unverifiable.iter().map(|s| s.to_string()).collect(),
            checks: vec![],
            still_present: vec![],
            attempts: 1,
            duration_ms: 0,
        }
    }

    fn base(healthy: bool) -> BaselineCheck {
        BaselineCheck {
            healthy,
            probes: vec![],
            attempts: 1,
            duration_ms: 0,
        }
    }

    #[test]
    fn every_verdict() {
        let c = vec![StateChange {
            device: "r9".into(),
            aspect: Aspect::Links,
            change: ChangeKind::Changed,
            item: "eth1".into(),
            before: Some("up".into()),
            after: Some("down".into()),
            summary: "r9 links: eth1 changed: up → down".into(),
        }];
        let v = |f: Option<&FaultCheck>, b: bool, c: &[StateChange]| decide(f, &base(b), &[], c).0;
        use RepairVerdict::*;
        assert_eq!(v(Some(&fault(true, &[])), true, &[]), Repaired);
        assert_eq!(v(Some(&fault(true, &[])), true, &c), RepairedWithCollateral);
        assert_eq!(v(Some(&fault(true, &[])), false, &c), Partial);
        assert_eq!(v(Some(&fault(false, &[])), true, &[]), NotRepaired);
        assert_eq!(
            v(Some(&fault(false, &["pc1 gone"])), false, &[]),
            NotRepaired
        );
        assert_eq!(v(None, true, &[]), Untouched);
        assert_eq!(v(None, true, &c), UnneededChange);
        assert_eq!(v(None, false, &c), UnneededChange);
        let (_, why) = decide(Some(&fault(true, &[])), &base(true), &[], &c);
        assert!(why.contains("r9 links: eth1"), "{why}");
        assert!(Repaired.is_repaired() && !Partial.is_repaired() && Partial.fault_gone());
        let names: Vec<&str> = RepairVerdict::ALL.iter().map(|v| v.as_str()).collect();
        assert_eq!(
            serde_json::to_string(&UnneededChange).unwrap(),
            "\"unneeded_change\""
        );
        assert_eq!(names.len(), 6);
    }
}
