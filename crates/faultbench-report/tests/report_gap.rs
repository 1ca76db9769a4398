//! The memorisation gap between a hand-written and a generated set: per category and per
//! shared fault family, with unpaired bootstrap intervals, on sets with no scenario in common.

use faultbench_core::record::ManifestRow;
use faultbench_report::RunIndex;
use faultbench_report::gap::{GapSource, families_of_records, family_class, gap};
use faultbench_report::stats::Bootstrap;
use std::collections::HashMap;

fn row(arm: &str, id: &str, pass: u32, outcome: f64) -> ManifestRow {
    ManifestRow {
        arm: arm.into(),
        pass: format!("p{pass}"),
        topology: "T".into(),
        scenario_id: id.into(),
        agent: "baseline".into(),
        model: "m".into(),
        status: "scored".into(),
        submitted: true,
        is_anomaly: Some(true),
        outcome_score: Some(outcome),
        fix_score: None,
        reasoning_score: None,
        tool_calls: 3,
        in_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        out_tokens: 0,
        cost_usd: 0.0,
        wall_seconds: 1.0,
        judge_in_tokens: None,
        judge_out_tokens: None,
        judge_cost_usd: None,
    }
}

/// A set of `n` correct-fault scenarios (`prefix-i`) scoring `cf` and `n` false premises
/// scoring `fp`, two passes; families alternate between `link down` and `service down`.
fn set(prefix: &str, n: usize, cf: f64, fp: f64) -> (RunIndex, HashMap<String, String>) {
    let mut rows = Vec::new();
    let mut fams = HashMap::new();
    for i in 0..n {
        let id = format!("{prefix}-{i}");
        let fp_id = format!("{prefix}-false-premise-{i}");
        // A little spread so the intervals have width.
        let wiggle = if i % 3 == 0 { -0.1 } else { 0.05 };
        for p in 1..=2 {
            rows.push(row("base80", &id, p, (cf + wiggle).clamp(0.0, 1.0)));
            rows.push(row("cex120", &fp_id, p, (fp + wiggle).clamp(0.0, 1.0)));
        }
        let fam = if i % 2 == 0 {
            "link down (router LAN port)"
        } else {
            "service down (web server)"
        };
        fams.insert(format!("T/{id}"), family_class(fam));
    }
    let index = RunIndex {
        rows,
        ..Default::default()
    };
    (index, fams)
}

#[test]
fn the_gap_is_hand_minus_generated_with_unpaired_intervals() {
    let (hi, hf) = set("hand", 20, 0.9, 0.8);
    let (gi, gf) = set("gen", 20, 0.6, 0.8);
    let boot = Bootstrap {
        resamples: 2000,
        seed: 7,
    };
    let g = gap(
        &GapSource {
            index: &hi,
            families: &hf,
        },
        &GapSource {
            index: &gi,
            families: &gf,
        },
        boot,
    );
    let cat = |label: &str| {
        g.by_category
            .iter()
            .find(|r| r.row == label && r.agent == "All")
            .unwrap_or_else(|| panic!("no {label} row: {:?}", g.by_category))
            .clone()
    };
    let cf = cat("Correct-Fault");
    assert!((cf.gap.unwrap() - 0.3).abs() < 1e-9, "{cf:?}");
    let ci = cf.gap_ci.expect("an interval");
    // A clear gap: the interval holds the point and excludes zero.
    assert!(ci.contains(0.3) && ci.lo > 0.0, "{ci:?}");
    assert_eq!((cf.hand_n, cf.generated_n), (40, 40));
    let fp = cat("False-Premise");
    assert!(fp.gap.unwrap().abs() < 1e-9);
    let fci = fp.gap_ci.expect("an interval");
    assert!(fci.lo < 0.0 && fci.hi > 0.0, "no gap: zero inside {fci:?}");
    // Per family: both sets have both families (parentheses dropped), same gap.
    let fams: Vec<&str> = g
        .by_family
        .iter()
        .filter(|r| r.agent == "All")
        .map(|r| r.row.as_str())
        .collect();
    assert_eq!(fams, vec!["link down", "service down"]);
    for r in &g.by_family {
        assert!((r.gap.unwrap() - 0.3).abs() < 1e-9, "{r:?}");
        assert!(r.gap_ci.is_some());
    }
    // Same seed, same intervals.
    let again = gap(
        &GapSource {
            index: &hi,
            families: &hf,
        },
        &GapSource {
            index: &gi,
            families: &gf,
        },
        boot,
    );
    assert_eq!(g, again);
    assert!(g.markdown().contains("+0.300"));
    assert!(g.csv().lines().count() > 4);
}

#[test]
fn families_only_one_set_has_are_not_compared_and_missing_records_are_noted() {
    let (hi, hf) = set("hand", 6, 0.9, 0.8);
    let (gi, _) = set("gen", 6, 0.6, 0.8);
    let only_link: HashMap<String, String> = (0..6)
        .map(|i| (format!("T/gen-{i}"), "link down".to_string()))
        .collect();
    let boot = Bootstrap {
        resamples: 200,
        seed: 1,
    };
    let g = gap(
        &GapSource {
            index: &hi,
            families: &hf,
        },
        &GapSource {
            index: &gi,
            families: &only_link,
        },
        boot,
    );
    assert!(g.by_family.iter().all(|r| r.row == "link down"));
    assert!(!g.by_family.is_empty());
    let none = HashMap::new();
    let g2 = gap(
        &GapSource {
            index: &hi,
            families: &hf,
        },
        &GapSource {
            index: &gi,
            families: &none,
        },
        boot,
    );
    assert!(g2.by_family.is_empty());
    assert!(
        g2.notes.iter().any(|n| n.contains("generated")),
        "{:?}",
        g2.notes
    );
    assert!(!g2.by_category.is_empty());
}

#[test]
fn fault_families_come_from_the_records_of_a_runs_root() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("T/base__s1/baseline/p1");
    std::fs::create_dir_all(&run).unwrap();
    std::fs::write(
        run.join("result.json"),
        r#"{"key": {"topology": "T", "layer": "base", "scenario_id": "s1", "agent": "baseline", "pass": 1},
            "scenario": {"fault_family": "Routing daemon down (OSPF on a distribution switch)"}}"#,
    )
    .unwrap();
    let m = families_of_records(dir.path());
    assert_eq!(
        m.get("T/s1").map(String::as_str),
        Some("routing daemon down")
    );
    assert_eq!(family_class("  Service   down "), "service down");
}
