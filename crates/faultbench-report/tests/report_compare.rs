//! `report --compare`: differences on shared scenarios with paired intervals, and run
//! identities that differ said out loud.

use faultbench_core::record::ManifestRow;
use faultbench_report::compare::{Source, compare, identity_differences, read_identity};
use faultbench_report::details::JsonFileError;
use faultbench_report::stats::Bootstrap;
use faultbench_report::{Report, RunIndex};
use faultbench_testkit::release_for_test;
use serde_json::json;

fn row(arm: &str, id: &str, agent: &str, pass: u32, outcome: f64) -> ManifestRow {
    ManifestRow {
        arm: arm.into(),
        pass: format!("p{pass}"),
        topology: "T".into(),
        scenario_id: id.into(),
        agent: agent.into(),
        model: "m".into(),
        status: "scored".into(),
        submitted: true,
        is_anomaly: Some(true),
        outcome_score: Some(outcome),
        fix_score: Some(1.0),
        reasoning_score: Some(0.5),
        tool_calls: 10,
        in_tokens: 100,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        out_tokens: 10,
        cost_usd: 0.1,
        wall_seconds: 60.0,
        judge_in_tokens: None,
        judge_out_tokens: None,
        judge_cost_usd: None,
    }
}

fn index(rows: Vec<ManifestRow>) -> RunIndex {
    RunIndex {
        source: "x".into(),
        rows,
        warnings: Vec::new(),
        notes: None,
    }
}

fn src(label: &str, rows: Vec<ManifestRow>, identity: Option<serde_json::Value>) -> Source {
    Source {
        label: label.into(),
        index: index(rows),
        identity,
    }
}

const BOOT: Bootstrap = Bootstrap {
    resamples: 2000,
    seed: 1,
};

#[test]
fn a_known_shift_on_shared_scenarios_is_measured_with_a_paired_interval() {
    // A: 20 correct-fault scenarios, outcome 0.5 + small scenario effects; B: the same
    // scenarios each exactly 0.25 higher, plus 5 scenarios A never ran (left out of the
    // difference).
    let effect = |i: usize| (i % 5) as f64 * 0.1;
    let mut a = Vec::new();
    let mut b = Vec::new();
    for i in 0..20 {
        for p in 1..=2 {
            a.push(row(
                "base80",
                &format!("t-s{i}"),
                "sade",
                p,
                0.3 + effect(i),
            ));
            b.push(row(
                "base80",
                &format!("t-s{i}"),
                "sade",
                p,
                0.55 + effect(i),
            ));
        }
    }
    for i in 20..25 {
        b.push(row("base80", &format!("t-s{i}"), "sade", 1, 0.0));
    }
    let c = compare(&[src("A", a, None), src("B", b, None)], BOOT);
    let t4 = c
        .tables
        .iter()
        .find(|t| t.title.starts_with("Table 4"))
        .unwrap();
    let cf = t4
        .rows
        .iter()
        .find(|r| r.row == "Correct-Fault" && r.agent == "sade")
        .unwrap();
    let d = cf.diffs[0];
    assert!((d.diff.unwrap() - 0.25).abs() < 1e-12, "{d:?}");
    assert_eq!(d.shared, 20);
    // Paired: scenario effects cancel, the interval is the shift itself.
    let ci = d.ci.unwrap();
    assert!(
        (ci.lo - 0.25).abs() < 1e-9 && (ci.hi - 0.25).abs() < 1e-9,
        "{ci:?}"
    );
    // B's own value uses all its runs, including the five extra scenarios.
    assert!(cf.values[1].unwrap() < 0.55 + 0.2);
    assert!(
        c.notes.iter().any(|n| n.contains("no identity.json")),
        "{:?}",
        c.notes
    );
    let md = c.markdown();
    assert!(md.contains("B − A"));
    assert!(md.contains("+0.250 [0.250, 0.250] * (n=20)"), "{md}");
    assert!(
        c.csv()
            .lines()
            .next()
            .unwrap()
            .starts_with("table,row,agent,source")
    );
}

#[test]
fn sets_of_different_scenarios_are_pointed_to_the_unpaired_gap() {
    // A hand-written set and a generated one: no scenario in common, nothing to pair.
    let hand: Vec<ManifestRow> = (0..6)
        .map(|i| row("base80", &format!("t-hand{i}"), "baseline", 1, 0.8))
        .collect();
    let generated: Vec<ManifestRow> = (0..6)
        .map(|i| row("base80", &format!("t-gen{i}"), "baseline", 1, 0.6))
        .collect();
    let c = compare(
        &[src("A", hand.clone(), None), src("B", generated, None)],
        BOOT,
    );
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("A and B share no scenario") && n.contains("report --gap")),
        "{:?}",
        c.notes
    );
    // No difference was computed for any row.
    assert!(
        c.tables
            .iter()
            .flat_map(|t| &t.rows)
            .all(|r| r.diffs.iter().all(|d| d.diff.is_none())),
        "a difference over no shared scenario"
    );
    // One shared scenario is enough to pair: no such note.
    let mut overlapping = hand.clone();
    overlapping.truncate(1);
    let c = compare(&[src("A", hand, None), src("B", overlapping, None)], BOOT);
    assert!(
        !c.notes.iter().any(|n| n.contains("share no scenario")),
        "{:?}",
        c.notes
    );
}

#[test]
fn different_identities_are_listed() {
    let rows = vec![row("base80", "t-a", "sade", 1, 1.0)];
    let ia = json!({"agents": {"sade": {"model": "claude-sonnet-4-6"}}, "judge": "llm:gpt-5-mini", "turns": 20});
    let ib = json!({"agents": {"sade": {"model": "claude-opus"}}, "judge": "llm:gpt-5-mini", "turns": 30});
    let d = identity_differences(&ia, &ib);
    assert_eq!(d.total, 2);
    assert_eq!(
        d.listed,
        vec![
            (
                "agents.sade.model".to_string(),
                "\"claude-sonnet-4-6\"".to_string(),
                "\"claude-opus\"".to_string()
            ),
            ("turns".to_string(), "20".to_string(), "30".to_string()),
        ]
    );
    let c = compare(
        &[
            src("A", rows.clone(), Some(ia.clone())),
            src("B", rows.clone(), Some(ib)),
        ],
        BOOT,
    );
    assert!(
        c.notes
            .iter()
            .any(|n| n.contains("DIFFERENT run identities (2 fields)")
                && n.contains("turns: 20 vs 30")),
        "{:?}",
        c.notes
    );
    let same = compare(
        &[
            src("A", rows.clone(), Some(ia.clone())),
            src("B", rows, Some(ia)),
        ],
        BOOT,
    );
    assert!(
        same.notes.iter().any(|n| n.contains("same run identity")),
        "{:?}",
        same.notes
    );

    // identity.json is found beside a registry and bad ones are reported, not trusted.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("MANIFEST.csv"), "").unwrap();
    assert_eq!(
        read_identity(&tmp.path().join("MANIFEST.csv")).unwrap(),
        None
    );
    std::fs::write(tmp.path().join("identity.json"), "{\"a\": 1}").unwrap();
    assert_eq!(read_identity(tmp.path()).unwrap(), Some(json!({"a": 1})));
    std::fs::write(tmp.path().join("identity.json"), "{torn").unwrap();
    let e = read_identity(tmp.path()).unwrap_err();
    assert!(matches!(e.problem, JsonFileError::NotJson(_)), "{e}");
    assert!(e.to_string().contains("identity.json: not JSON"), "{e}");
}

#[test]
fn the_release_against_itself_differs_by_nothing_and_against_one_pass_by_something() {
    let Some(release) = release_for_test() else {
        return;
    };
    let reg = RunIndex::load(&release.manifest()).unwrap();
    let boot = Bootstrap {
        resamples: 200,
        seed: 0,
    };
    let c = compare(
        &[
            src("A", reg.rows.clone(), None),
            src("B", reg.rows.clone(), None),
        ],
        boot,
    );
    let mut cells = 0;
    for t in &c.tables {
        for r in &t.rows {
            if let Some(d) = r.diffs[0].diff {
                cells += 1;
                assert!(d.abs() < 1e-12, "{} {} {}: {d}", t.title, r.row, r.agent);
                let ci = r.diffs[0].ci.unwrap();
                assert!(ci.lo.abs() < 1e-12 && ci.hi.abs() < 1e-12);
            }
        }
    }
    assert!(cells > 150, "{cells}");
    // Only pass 1 of every run: its Table 4 cells are the release's pass-1 means.
    let p1: Vec<ManifestRow> = reg
        .rows
        .iter()
        .filter(|r| r.pass == "p1")
        .cloned()
        .collect();
    let p1_report = Report::new(&index(p1.clone()), None);
    let c = compare(
        &[src("A", reg.rows.clone(), None), src("B", p1, None)],
        boot,
    );
    let t4 = &c.tables[0];
    let all_cf = t4
        .rows
        .iter()
        .find(|r| r.row == "Correct-Fault" && r.agent == "All")
        .unwrap();
    assert_eq!(
        all_cf.values[0].map(|v| (v * 1000.0).round() / 1000.0),
        Some(0.932)
    );
    let want = p1_report.tables.outcome_by_category.cells[0]
        .last()
        .unwrap()
        .stat
        .mean
        .unwrap();
    assert!(
        (all_cf.values[1].unwrap() - want).abs() < 1e-12,
        "{:?} vs {want}",
        all_cf.values[1]
    );
    assert!(all_cf.diffs[0].diff.unwrap().abs() > 1e-6);
    assert_eq!(all_cf.diffs[0].shared, 80);
}
