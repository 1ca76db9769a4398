//! The report reproduces the paper's numbers from the public release's run registry
//! (`final_results/MANIFEST.csv`, whole in a partial copy of the release as in a full one).

use faultbench_report::metrics::ALL;
use faultbench_report::{Report, RunIndex};
use faultbench_testkit::{full, release_for_test};

/// The report of the release's MANIFEST; `None` when the release is missing (recorded).
fn report() -> Option<Report> {
    let release = release_for_test()?;
    let reg = RunIndex::load(&release.manifest()).unwrap();
    assert_eq!(reg.rows.len(), full::MANIFEST_ROWS);
    assert!(reg.warnings.is_empty());
    Some(Report::new(&reg, None))
}

fn col(t: &faultbench_report::tables::ScoreTable, agent: &str) -> usize {
    t.agents.iter().position(|a| a == agent).unwrap()
}

#[test]
fn table4_outcome_by_category() {
    let Some(r) = report() else {
        return;
    };
    let t = &r.tables.outcome_by_category;
    let cell = |row: usize, agent: &str| t.cells[row][col(t, agent)].stat.rounded().unwrap();
    assert_eq!(cell(0, "sade"), 0.912);
    assert_eq!(cell(0, "cc-baseline"), 0.942);
    assert_eq!(cell(0, "react-full"), 0.941);
    assert_eq!(cell(0, ALL), 0.932);
    assert_eq!(cell(1, ALL), 0.820); // False-Premise
    assert_eq!(cell(2, ALL), 0.957); // Wrong-Device
    assert_eq!(cell(3, ALL), 0.911); // Wrong-Cause
    assert_eq!(
        t.cells[1][col(t, "cc-baseline")].stat.rounded(),
        Some(0.870)
    );
}

#[test]
fn table5_personas() {
    let Some(r) = report() else {
        return;
    };
    let t = &r.tables.outcome_by_persona;
    let all: Vec<f64> = t
        .cells
        .iter()
        .map(|row| row.last().unwrap().stat.rounded().unwrap())
        .collect();
    // standard, novice, novice_confident, naive, naive_unsure, naive_no_detail
    assert_eq!(all, vec![0.820, 0.675, 0.714, 0.820, 0.638, 0.497]);
    assert_eq!(
        t.cells[5][col(t, "cc-baseline")].stat.rounded(),
        Some(0.283)
    );
}

#[test]
fn table6_over_diagnosis_and_timeouts() {
    let Some(r) = report() else {
        return;
    };
    let t = &r.tables.over_diagnosis;
    let c = |agent: &str| t.cells[0][t.agents.iter().position(|a| a == agent).unwrap()].to_string();
    assert_eq!(c("sade"), "24.3% (51/210)");
    assert_eq!(c("react-full"), "15.8% (33/209)");
    assert_eq!(c("cc-baseline"), "10.6% (21/198)");
    let all = r.tables.effort.last().unwrap();
    assert_eq!(all.agent, ALL);
    assert_eq!((all.timeouts, all.runs), (366, 3960));
    assert_eq!(format!("{:.2}", all.usd_timeouts), "345.08");
    assert_eq!(format!("{:.2}", all.usd_total), "1525.46");
    assert_eq!(
        format!("{:.1}", all.usd_timeout_share().unwrap() * 100.0),
        "22.6"
    );
    let per_agent: Vec<usize> = r.tables.effort.iter().map(|e| e.timeouts).collect();
    // cc-baseline, react-full, sade, All
    assert_eq!(per_agent, vec![239, 66, 61, 366]);
}

#[test]
fn renders_every_format() {
    let Some(r) = report() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let html = r.write_all(dir.path()).unwrap();
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("<svg") && page.contains("Table 4"));
    assert!(
        !page.contains("src=\"http"),
        "the HTML must be self-contained"
    );
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("24.3% (51/210)"), "{md}");
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("report.json")).unwrap())
            .unwrap();
    assert_eq!(json["tables"]["runs"], 3960);
    for f in [
        "outcome_by_category.svg",
        "outcome_by_persona.svg",
        "over_diagnosis.svg",
        "cost.svg",
        "report.csv",
    ] {
        assert!(dir.path().join(f).is_file(), "{f}");
    }
}
