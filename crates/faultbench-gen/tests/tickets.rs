//! Tickets of every category without a live lab: persona fact preservation, the variety of a
//! generated sample, the wrong-device decoy, and that a claim whose check fails is never
//! refuted (so never emitted).

use faultbench_core::category::Category;
use faultbench_core::emulator::{Command, EmuError, ExecOutput, Lab};
use faultbench_core::identifiers::Identifiers;
use faultbench_gen::claims::{self, Candidate, ClaimType};
use faultbench_gen::family;
use faultbench_gen::generate::{GenOptions, plan};
use faultbench_gen::graph::stable_hash;
use faultbench_gen::model::LabModel;
use faultbench_gen::symptom::{DeviceFact, ObservedSymptoms, PairObs, Reach, TraceObs};
use faultbench_gen::ticket::PlainTickets;
use faultbench_gen::tickets::{self, Style, variety};
use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

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
fn persona_rewrites_keep_the_parents_facts() {
    let claims = claims::builtin().unwrap();
    let mut checked = 0;
    for topo in faultbench_core::lab::BENCHMARK_TOPOLOGIES {
        let m = model(topo);
        let devices: Vec<&str> = m.devices.iter().map(|d| d.name.as_str()).collect();
        let ids = |t: &str| Identifiers::with_devices(t, &devices).set;
        for cand in claims::candidates(&m, &claims).iter().step_by(3).take(8) {
            let claim = claim_of(&claims, cand);
            let parent = tickets::false_premise(topo, "t", claim, cand).unwrap();
            assert_eq!(parent.category(), Category::FalsePremise);
            let std_ids = ids(parent.ticket());
            assert!(!std_ids.is_empty(), "{}", parent.ticket());
            let mut by = std::collections::BTreeMap::new();
            for s in Style::PERSONAS {
                let p = tickets::persona(&parent, claim, cand, s).unwrap();
                assert_eq!(p.headers().variant_of.as_deref(), Some(parent.id()));
                assert_eq!(p.headers().ticket_style.as_deref(), Some(s.header()));
                for sec in [
                    "INJECTION",
                    "POST-INJECT-CHECK",
                    "GROUND-TRUTH",
                    "SCORING-AXES",
                ] {
                    assert_eq!(p.section(sec), parent.section(sec), "{sec}");
                }
                let got = ids(p.ticket());
                assert!(
                    got.is_subset(&std_ids),
                    "{s:?} adds a fact: {:?} not in {:?}\n{}",
                    got,
                    std_ids,
                    p.ticket()
                );
                if s != Style::NaiveNoDetail {
                    // The identifier is kept exactly as the parent spells it.
                    assert!(
                        p.ticket().contains(cand.params["main"].as_str()),
                        "{}",
                        p.ticket()
                    );
                }
                by.insert(s, (got, p));
            }
            assert_eq!(by[&Style::Novice].0, by[&Style::NoviceConfident].0);
            assert_eq!(by[&Style::Naive].0, by[&Style::NaiveUnsure].0);
            assert!(!by[&Style::Novice].0.is_empty());
            assert!(
                by[&Style::NaiveNoDetail].0.is_empty(),
                "{}",
                by[&Style::NaiveNoDetail].1.ticket()
            );
            assert_eq!(
                by[&Style::NoviceConfident].1.headers().confidence_flip_of,
                Some(format!("{}-novice", parent.id()))
            );
            checked += 1;
        }
    }
    assert!(checked > 40, "{checked} parents checked");
}

/// An observation as the live lab would report it, varied by key.
fn observed(v: &faultbench_gen::render::Variant, key: u64) -> ObservedSymptoms {
    let s = &v.symptom;
    let device = v.faulted_device();
    let mut o = ObservedSymptoms {
        kind: s.kind.clone(),
        device: device.clone(),
        facts: vec![DeviceFact::CarrierUp {
            iface: "eth0".into(),
        }],
        ..ObservedSymptoms::default()
    };
    if let (Some((vic, _)), Some((far, ip))) = (&s.victim, &s.far) {
        if s.kind == "service-down" {
            o.service = Some(faultbench_gen::symptom::ServiceObs {
                client: vic.clone(),
                server: far.clone(),
                server_ip: ip.clone(),
                service: s.service.clone().unwrap_or_default(),
                answers: false,
                server_pings: true,
            });
        } else {
            let reach = match key % 4 {
                0 => Reach::Timeout,
                1 => Reach::UnreachableReply {
                    from: Some("10.9.9.1".into()),
                },
                2 => Reach::NoRoute,
                _ => Reach::PartialLoss { loss: 40 },
            };
            o.pairs.push(PairObs {
                from: vic.clone(),
                to: far.clone(),
                to_ip: ip.clone(),
                reach,
            });
            if let Some(c) = &s.control {
                o.pairs.push(PairObs {
                    from: c.clone(),
                    to: far.clone(),
                    to_ip: ip.clone(),
                    reach: Reach::Answers,
                });
            }
            o.trace = Some(TraceObs {
                from: vic.clone(),
                to_ip: ip.clone(),
                hops: vec!["10.9.9.1".into(), "*".into()],
                reached: false,
            });
        }
    }
    o
}

#[test]
fn a_generated_sample_is_varied_and_no_skeleton_passes_five_percent() {
    let families = family::builtin().unwrap();
    let claims = claims::builtin().unwrap();
    let mut by_cat: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
    let mut devices = BTreeSet::new();
    for topo in faultbench_core::lab::BENCHMARK_TOPOLOGIES {
        let m = model(topo);
        devices.extend(m.devices.iter().map(|d| d.name.to_lowercase()));
        let opts = GenOptions {
            seed: 3,
            count: Some(40),
            families: vec![],
            shard: (1, 1),
            id_prefix: "t".into(),
        };
        let p = plan(&m, &families, &opts, &PlainTickets).unwrap();
        for v in &p.variants {
            let key = stable_hash(&v.id);
            let o = observed(v, key);
            by_cat
                .entry("correct")
                .or_default()
                .push(tickets::correct(&o, key));
            let faulty: BTreeSet<String> = [o.device.clone()].into();
            if let Some(d) = tickets::decoys(&m, &o, &faulty).first() {
                assert!(!faulty.contains(d));
                by_cat
                    .entry("wrong-device")
                    .or_default()
                    .push(tickets::misdirected_ticket(&o, d, key));
            }
            by_cat
                .entry("wrong-cause")
                .or_default()
                .push(tickets::misdescribed_ticket(&o, &o.facts[0], key));
        }
        for cand in claims::candidates(&m, &claims).iter().take(30) {
            let claim = claim_of(&claims, cand);
            let parent = tickets::false_premise(topo, "t", claim, cand).unwrap();
            by_cat
                .entry("standard")
                .or_default()
                .push(parent.ticket().to_string());
            for s in Style::PERSONAS {
                let p = tickets::persona(&parent, claim, cand, s).unwrap();
                by_cat
                    .entry(s.header())
                    .or_default()
                    .push(p.ticket().to_string());
            }
        }
    }
    let all: Vec<String> = by_cat.values().flatten().cloned().collect();
    let v = variety::measure(&all, &devices);
    eprintln!("all: {v:?}");
    assert!(v.tickets > 1000, "{v:?}");
    assert!(v.top_skeleton_share <= 0.05, "{v:?}");
    for (cat, t) in &by_cat {
        let v = variety::measure(t, &devices);
        eprintln!("{cat}: {v:?}");
        assert!(v.top_skeleton_share <= 0.05, "{cat}: {v:?}");
        assert!(v.distinct_4grams_per_ticket > 1.0, "{cat}: {v:?}");
    }
}

#[test]
fn wrong_device_and_wrong_cause_files_follow_the_release() {
    let m = model("Kath2");
    let families = family::builtin().unwrap();
    let opts = GenOptions {
        seed: 1,
        count: Some(10),
        families: vec![],
        shard: (1, 1),
        id_prefix: "kath2".into(),
    };
    let p = plan(&m, &families, &opts, &PlainTickets).unwrap();
    let mut done = 0;
    for v in &p.variants {
        let key = stable_hash(&v.id);
        let o = observed(v, key);
        let identified: BTreeSet<String> = v
            .spec
            .section("SCORING-AXES")
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.strip_prefix("assert-identifies: "))
            .map(str::to_string)
            .chain([o.device.clone()])
            .collect();
        let Some(decoy) = tickets::decoys(&m, &o, &identified).into_iter().next() else {
            continue;
        };
        assert!(!identified.contains(&decoy));
        let wd = tickets::misdirected(
            &v.spec,
            &decoy,
            &tickets::misdirected_ticket(&o, &decoy, key),
        )
        .unwrap();
        assert_eq!(wd.category(), Category::WrongDevice);
        assert!(
            wd.section("SCORING-AXES")
                .unwrap()
                .contains(&format!("assert-not-identifies: {decoy}"))
        );
        assert!(wd.ticket().contains(&decoy));
        assert_eq!(wd.section("INJECTION"), v.spec.section("INJECTION"));
        let wc = tickets::misdescribed(
            &v.spec,
            "eth0 of x has carrier",
            &tickets::misdescribed_ticket(&o, &o.facts[0], key),
        )
        .unwrap();
        assert_eq!(wc.category(), Category::WrongCause);
        assert!(
            wc.headers()
                .fault_family
                .as_deref()
                .unwrap()
                .ends_with("(misdescribed cause)")
        );
        done += 1;
    }
    assert!(done >= 5);
}

/// A lab on which every command prints what ping prints for a lost host.
#[derive(Debug)]
struct AllLost;

#[async_trait::async_trait]
impl Lab for AllLost {
    fn name(&self) -> &str {
        "all-lost"
    }
    fn devices(&self) -> Vec<String> {
        vec![]
    }
    async fn exec(&self, _d: &str, _c: &Command, _t: Duration) -> Result<ExecOutput, EmuError> {
        Ok(ExecOutput::ok(
            "3 packets transmitted, 0 received, 100% packet loss",
        ))
    }
    async fn teardown(&self) -> Result<(), EmuError> {
        Ok(())
    }
}

#[derive(Debug)]
struct AllFine;

#[async_trait::async_trait]
impl Lab for AllFine {
    fn name(&self) -> &str {
        "all-fine"
    }
    fn devices(&self) -> Vec<String> {
        vec![]
    }
    async fn exec(&self, _d: &str, _c: &Command, _t: Duration) -> Result<ExecOutput, EmuError> {
        Ok(ExecOutput::ok(
            "3 packets transmitted, 3 received, 0% packet loss",
        ))
    }
    async fn teardown(&self) -> Result<(), EmuError> {
        Ok(())
    }
}

#[tokio::test]
async fn a_claim_that_is_true_on_the_lab_is_not_refuted() {
    let claims = claims::builtin().unwrap();
    let m = model("Kath2");
    let cand = claims::candidates(&m, &claims)
        .into_iter()
        .find(|c| c.claim == "host-unreachable")
        .unwrap();
    // The host really is unreachable: the claim is true, never emitted.
    let r = claims::refute(&AllLost, &cand).await;
    assert!(!r.false_on_lab);
    assert!(!r.failed.is_empty());
    // It answers: the claim is false and may be emitted.
    let r = claims::refute(&AllFine, &cand).await;
    assert!(r.false_on_lab, "{:?}", r.failed);
}

#[test]
fn a_quiet_fault_blames_its_decoy_without_naming_the_faulted_device() {
    let o = ObservedSymptoms {
        kind: "degraded".into(),
        device: "r7".into(),
        ..ObservedSymptoms::default()
    };
    for key in 0..50 {
        let t = tickets::misdirected_ticket(&o, "r9", key);
        assert!(t.contains("r9") && !t.contains("r7"), "{t}");
        // The correct ticket of a quiet fault names the device (monitoring saw it).
        assert!(tickets::correct(&o, key).contains("r7"));
    }
}
