//! Top-up draws: when a sample verifies fewer variants than its quota, the next positions of
//! the same seeded order are drawn. They never repeat an earlier draw, the same seed draws the
//! same ones, and the draws run out with the candidates.

use faultbench_gen::family;
use faultbench_gen::generate::{GenOptions, next_in_order, plan};
use faultbench_gen::model::LabModel;
use faultbench_gen::ticket::PlainTickets;
use std::collections::BTreeSet;
use std::path::Path;

fn opts(seed: u64, count: Option<usize>) -> GenOptions {
    GenOptions {
        seed,
        count,
        families: vec![],
        shard: (1, 1),
        id_prefix: "kath3".into(),
    }
}

fn model() -> LabModel {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../topologies/Kath3");
    LabModel::load(&dir, "Kath3").unwrap()
}

#[test]
fn top_up_draws_continue_the_seeds_order_without_repeats() {
    let (m, fams) = (model(), family::builtin().unwrap());
    let sample: BTreeSet<String> = plan(&m, &fams, &opts(1, Some(10)), &PlainTickets)
        .unwrap()
        .variants
        .into_iter()
        .map(|v| v.id)
        .collect();
    let first = next_in_order(&m, &fams, &opts(1, Some(10)), &PlainTickets, 10, 4).unwrap();
    let second = next_in_order(&m, &fams, &opts(1, Some(10)), &PlainTickets, 14, 3).unwrap();
    assert_eq!((first.len(), second.len()), (4, 3));
    let mut all = sample.clone();
    for v in first.iter().chain(&second) {
        assert!(all.insert(v.id.clone()), "{} drawn twice", v.id);
    }
    // The three draws together are exactly the seed's sample of 17.
    let seventeen: BTreeSet<String> = plan(&m, &fams, &opts(1, Some(17)), &PlainTickets)
        .unwrap()
        .variants
        .into_iter()
        .map(|v| v.id)
        .collect();
    assert_eq!(all, seventeen);
    // Deterministic: the same seed draws the same variants, byte for byte.
    let again = next_in_order(&m, &fams, &opts(1, Some(10)), &PlainTickets, 10, 4).unwrap();
    assert_eq!(
        first.iter().map(|v| &v.text).collect::<Vec<_>>(),
        again.iter().map(|v| &v.text).collect::<Vec<_>>()
    );
    // Another seed's order differs.
    let other = next_in_order(&m, &fams, &opts(2, Some(10)), &PlainTickets, 10, 4).unwrap();
    assert_ne!(
        first.iter().map(|v| &v.id).collect::<Vec<_>>(),
        other.iter().map(|v| &v.id).collect::<Vec<_>>()
    );
}

#[test]
fn top_up_runs_out_with_the_candidates() {
    let (m, fams) = (model(), family::builtin().unwrap());
    let o = GenOptions {
        families: vec!["static-blackhole".into()],
        ..opts(1, Some(2))
    };
    let total = plan(
        &m,
        &fams,
        &GenOptions {
            count: None,
            ..o.clone()
        },
        &PlainTickets,
    )
    .unwrap()
    .selected_total;
    assert!(total >= 2, "Kath3 has static-blackhole candidates");
    let rest = next_in_order(&m, &fams, &o, &PlainTickets, 2, 1000).unwrap();
    assert_eq!(rest.len(), total - 2);
    assert!(
        next_in_order(&m, &fams, &o, &PlainTickets, total, 5)
            .unwrap()
            .is_empty()
    );
}

/// Kath3's ACL 110 isolates Location B by design: on the healthy lab 108 host pairs (every
/// pair between Location B's six hosts and the nine others, both ways) do not connect. Those
/// pairs stay out of every variant's symptom (they are the healthy baseline), and the families
/// still apply to the pairs that do connect: the sample is full.
#[test]
fn kath3s_acl_blocked_pairs_are_baseline_and_families_use_the_connected_ones() {
    let mut m = model();
    let hosts: Vec<(String, std::net::Ipv4Addr, bool)> = m
        .end_hosts()
        .filter_map(|h| {
            let (_, a) = h.primary()?;
            let in_b = a.addr.octets()[..2] == [172, 18];
            Some((h.name.clone(), a.addr, in_b))
        })
        .collect();
    for (a, _, a_in_b) in &hosts {
        for (_, ip, b_in_b) in &hosts {
            if a_in_b != b_in_b {
                m.unreachable.insert((a.clone(), *ip));
            }
        }
    }
    assert_eq!(
        m.unreachable.len(),
        108,
        "Location B: 6 hosts x 9 others x 2 ways"
    );
    let fams = family::builtin().unwrap();
    let p = plan(&m, &fams, &opts(1, Some(10)), &PlainTickets).unwrap();
    assert_eq!(p.selected_total, 10);
    let all = plan(&m, &fams, &opts(1, None), &PlainTickets).unwrap();
    let ip_of = |name: &str| hosts.iter().find(|h| h.0 == name).map(|h| h.1);
    let mut pairs = 0;
    for v in &all.variants {
        if let (Some((victim, _)), Some((far, _))) = (&v.symptom.victim, &v.symptom.far) {
            pairs += 1;
            let far_ip = ip_of(far).unwrap();
            assert!(
                !m.unreachable.contains(&(victim.clone(), far_ip)),
                "{} promises {victim} -> {far}, which the healthy lab does not connect",
                v.id
            );
        }
    }
    assert!(pairs > 100, "only {pairs} variants name a host pair");
}
