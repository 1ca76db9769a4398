//! How many identifiers the persona rewrites keep, against the release. The release's novice
//! and naive reporters keep about two of the standard ticket's three identifiers (means 1.9
//! and 2.1, `faultbench stats` on its dataset); their confidence flips (novice_confident,
//! naive_unsure) keep exactly the identifiers of the ticket they flip; naive_no_detail none.

use faultbench_core::identifiers::Identifiers;
use faultbench_gen::claims::{self, Candidate, ClaimType};
use faultbench_gen::model::LabModel;
use faultbench_gen::tickets::{self, Style};
use std::collections::BTreeMap;
use std::path::Path;

fn model(name: &str) -> LabModel {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../topologies")
        .join(name);
    LabModel::load(&dir, name).unwrap()
}

fn claim_of<'a>(claims: &'a [ClaimType], c: &Candidate) -> &'a ClaimType {
    claims.iter().find(|t| t.id == c.claim).unwrap()
}

#[test]
fn personas_keep_about_two_identifiers_and_the_flips_keep_them_exactly() {
    let claims = claims::builtin().unwrap();
    // Per style: (tickets, identifiers) with topology device names, and release measure.
    let mut aware: BTreeMap<Style, (usize, usize)> = BTreeMap::new();
    for topo in faultbench_core::lab::BENCHMARK_TOPOLOGIES {
        let m = model(topo);
        let devices: Vec<&str> = m.devices.iter().map(|d| d.name.as_str()).collect();
        for cand in claims::candidates(&m, &claims).iter().step_by(2).take(12) {
            let claim = claim_of(&claims, cand);
            let parent = tickets::false_premise(topo, "t", claim, cand).unwrap();
            let parent_ids = Identifiers::with_devices(parent.ticket(), &devices).set;
            let mut by = BTreeMap::new();
            for s in Style::PERSONAS {
                let p = tickets::persona(&parent, claim, cand, s).unwrap();
                let ids = Identifiers::with_devices(p.ticket(), &devices).set;
                assert!(ids.is_subset(&parent_ids), "{s:?}: {}", p.ticket());
                let e = aware.entry(s).or_default();
                e.0 += 1;
                e.1 += ids.len();
                by.insert(s, ids);
            }
            let e = aware.entry(Style::Standard).or_default();
            e.0 += 1;
            e.1 += parent_ids.len();
            assert_eq!(by[&Style::Novice], by[&Style::NoviceConfident]);
            assert_eq!(by[&Style::Naive], by[&Style::NaiveUnsure]);
            assert!(by[&Style::NaiveNoDetail].is_empty());
            // The second identifier (an address or an interface) is spelled as in the parent.
            if s_second(cand).is_some() {
                for s in [Style::Novice, Style::Naive] {
                    let p = tickets::persona(&parent, claim, cand, s).unwrap();
                    assert!(
                        p.ticket().contains(&cand.params["second"]),
                        "{}",
                        p.ticket()
                    );
                }
            }
        }
    }
    let mean = |s: Style| {
        let (n, k) = aware[&s];
        k as f64 / n as f64
    };
    for s in Style::PERSONAS {
        eprintln!("{s:?}: {:.2} identifiers per ticket", mean(s));
    }
    eprintln!("Standard: {:.2}", mean(Style::Standard));
    // The release: novice 1.9, naive 2.1 (both flips the same). Ours must be near two.
    for s in [
        Style::Novice,
        Style::NoviceConfident,
        Style::Naive,
        Style::NaiveUnsure,
    ] {
        assert!((1.7..=2.3).contains(&mean(s)), "{s:?}: {:.2}", mean(s));
    }
    assert_eq!(mean(Style::NaiveNoDetail), 0.0);
}

fn s_second(c: &Candidate) -> Option<&String> {
    c.params.get("second")
}
