//! IS-IS (isisd): what its state shows, then a quiet period.
//!
//! Every adjacency isisd lists must be `Up`. IS-IS regenerates and floods LSPs on timers the
//! vty does not show, so after that the lab's routes must stay unchanged for [`QUIET`].
//! FRR 8.4 answers `show isis neighbor json` with `areas` → `circuits` → `adj`, `interface`,
//! `level`, `state`.

use super::model::{Assessment, ProtocolItem};
use serde_json::Value;
use std::time::Duration;

/// Quiet period after IS-IS adjacencies are up.
pub(super) const QUIET: Duration = Duration::from_secs(2);

/// One adjacency: (system id or name, interface, level, state).
pub(super) type Adjacency = (String, String, u64, String);

/// Reads `show isis neighbor json`.
pub(super) fn parse(v: &Value) -> Vec<Adjacency> {
    let mut out = Vec::new();
    for area in v["areas"].as_array().into_iter().flatten() {
        for c in area["circuits"].as_array().into_iter().flatten() {
            let Some(adj) = c["adj"].as_str() else {
                continue;
            };
            out.push((
                adj.to_string(),
                c["interface"].as_str().unwrap_or("").to_string(),
                c["level"].as_u64().unwrap_or(0),
                c["state"].as_str().unwrap_or("").to_string(),
            ));
        }
    }
    out
}

/// Judges one isisd.
pub(super) fn assess(device: &str, adjacencies: &[Adjacency], a: &mut Assessment) {
    a.need_quiet(QUIET);
    for (adj, iface, level, state) in adjacencies {
        let item = ProtocolItem::new(
            device,
            "isisd",
            format!("adjacency {adj} ({iface}, level {level})"),
            state,
        );
        if state == "Up" {
            a.state(&item);
        } else {
            a.block(item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacencies_must_be_up() {
        let v: Value = serde_json::from_str(include_str!("testdata/isis_neighbor.json")).unwrap();
        let adj = parse(&v);
        assert_eq!(
            adj,
            vec![("r2".to_string(), "eth2".to_string(), 2, "Up".to_string())]
        );
        let mut a = Assessment::default();
        assess("r1", &adj, &mut a);
        assert!(a.blockers.is_empty());
        assert_eq!(a.quiet, QUIET);
        let mut init = adj.clone();
        init[0].3 = "Initializing".into();
        let mut a = Assessment::default();
        assess("r1", &init, &mut a);
        assert_eq!(
            a.blockers[0].item.to_string(),
            "r1 isisd adjacency r2 (eth2, level 2): Initializing"
        );
    }
}
