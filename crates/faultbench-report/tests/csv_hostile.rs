//! Issue 19, finding 7: CSV read and written through one implementation (the `csv` crate),
//! formula-leading cells neutralised in the spreadsheet export, correctly quoted newlines read
//! back, non-finite numbers refused with file:line, token sums that cannot wrap.

use faultbench_core::record::{MANIFEST_HEADER, ManifestRow};
use faultbench_report::{Report, RunIndex};
use std::path::Path;

fn row(agent: &str, model: &str) -> ManifestRow {
    ManifestRow {
        arm: "base80".into(),
        pass: "p1".into(),
        topology: "Kath1".into(),
        scenario_id: "kath1-x".into(),
        agent: agent.into(),
        model: model.into(),
        status: "scored".into(),
        submitted: true,
        is_anomaly: Some(true),
        outcome_score: Some(1.0),
        fix_score: None,
        reasoning_score: None,
        tool_calls: 3,
        in_tokens: 10,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        out_tokens: 5,
        cost_usd: 0.5,
        wall_seconds: 1.5,
        judge_in_tokens: Some(7),
        judge_out_tokens: None,
        judge_cost_usd: Some(0.001),
    }
}

fn write_manifest(dir: &Path, rows: &[ManifestRow]) -> std::path::PathBuf {
    let p = dir.join("MANIFEST.csv");
    let mut text = format!("{MANIFEST_HEADER}\n");
    for r in rows {
        text.push_str(&r.to_csv());
        text.push('\n');
    }
    std::fs::write(&p, text).unwrap();
    p
}

const HOSTILE: [&str; 6] = [
    "a,b",
    "=cmd|' /C calc'!A0",
    "@SUM(1+1)",
    "+1+1",
    "-2+3",
    "multi\nline \"quoted\"",
];

#[test]
fn report_csv_keeps_columns_and_neutralises_formulas() {
    let rows: Vec<ManifestRow> = HOSTILE.iter().map(|a| row(a, "m")).collect();
    let report = Report::new(
        &RunIndex {
            rows,
            ..Default::default()
        },
        None,
    );
    let text = report.csv();
    let mut rd = csv::Reader::from_reader(text.as_bytes());
    let width = rd.headers().unwrap().len();
    let mut agents = std::collections::BTreeSet::new();
    for rec in rd.records() {
        let rec = rec.expect("report.csv is valid CSV");
        assert_eq!(rec.len(), width, "no column shifted: {rec:?}");
        for cell in rec.iter().take(3) {
            assert!(
                !cell.starts_with(['=', '+', '-', '@', '\t', '\r']),
                "formula-leading cell reached the spreadsheet export: {cell:?}"
            );
        }
        agents.insert(rec[2].to_string());
    }
    assert!(agents.contains("'=cmd|' /C calc'!A0"), "{agents:?}");
    assert!(agents.contains("a,b"), "{agents:?}");
    assert!(agents.contains("multi\nline \"quoted\""), "{agents:?}");
}

#[test]
fn manifest_round_trips_quoted_commas_quotes_and_newlines() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<ManifestRow> = HOSTILE.iter().map(|a| row(a, "m,\"x\"\ny")).collect();
    let p = write_manifest(dir.path(), &rows);
    let reg = RunIndex::load_csv(&p).unwrap();
    assert!(reg.warnings.is_empty(), "{:?}", reg.warnings);
    assert_eq!(reg.rows, rows, "the registry keeps values verbatim");
}

#[test]
fn non_finite_and_negative_numbers_are_refused_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let good = row("sade", "m").to_csv();
    for (bad, what) in [
        (good.replace(",1,,,", ",NaN,,,"), "NaN"),
        (good.replace(",0.5,1.5", ",inf,1.5"), "inf"),
        (good.replace(",0.5,1.5", ",0.5,-Infinity"), "-Infinity"),
        (good.replace(",3,10,", ",-3,10,"), "-3"),
        (good.replace(",3,10,", ",1e400,10,"), "1e400"),
        (good.replace(",7,,0.001", ",7,,NaN"), "NaN"),
        (good.replace(",7,,0.001", ",-1,,0.001"), "-1"),
    ] {
        assert_ne!(bad, good, "{what}");
        let p = dir.path().join("MANIFEST.csv");
        std::fs::write(&p, format!("{MANIFEST_HEADER}\n{bad}\n{good}\n")).unwrap();
        let e = RunIndex::load_csv(&p).unwrap_err();
        assert_eq!(e.line, 2, "{what}: {e}");
        assert!(
            e.to_string().starts_with(&format!("{}:2:", p.display())),
            "{e}"
        );
        assert!(e.problem.to_string().contains(what), "{what}: {e}");
    }
}

#[test]
fn token_sums_saturate_instead_of_wrapping() {
    let mut big = row("sade", "m");
    big.in_tokens = u64::MAX;
    big.cache_read_tokens = u64::MAX;
    big.cache_write_tokens = 5;
    let report = Report::new(
        &RunIndex {
            rows: vec![big.clone(), big],
            ..Default::default()
        },
        None,
    );
    let e = report
        .tables
        .effort
        .iter()
        .find(|e| e.agent == "sade")
        .unwrap();
    let mean_in = e.in_tokens_a.unwrap();
    assert!(mean_in > 1e19, "mean input tokens {mean_in} wrapped");

    let u = faultbench_core::Usage {
        input_tokens: u64::MAX,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        output_tokens: u64::MAX,
    };
    let sum = u + u;
    assert_eq!(sum.input_tokens, u64::MAX);
    assert_eq!(sum.output_tokens, u64::MAX);
    assert_eq!(
        faultbench_core::Usage {
            cache_read_tokens: 9,
            ..u
        }
        .total_input(),
        u64::MAX
    );
}
