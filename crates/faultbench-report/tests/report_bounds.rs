//! Issue 30, item 4: what a crafted registry or identity may make a report hold or write is
//! bounded. A 2 MiB agent name made 549 MB of report files; an identity.json with a long member
//! name and thousands of leaves made the comparison copy the name for every leaf; any number
//! of agents was accepted. (The memory and time of large reports are measured by
//! `scripts/report-bounds.sh`; the bootstrap's own bound is a unit test of `stats`.)

use faultbench_core::identity::MAX_LISTED_DIFFERENCES;
use faultbench_core::record::RELEASE_MANIFEST_HEADER;
use faultbench_report::compare::{identity_differences, read_identity};
use faultbench_report::details::JsonFileError;
use faultbench_report::labels::MAX_LABEL_CHARS;
use faultbench_report::stats::Bootstrap;
use faultbench_report::{
    MAX_FIELD_CHARS, MAX_REPORT_AGENTS, Report, ReportOptions, RunIndex, RunIndexProblem,
};
use serde_json::json;
use std::path::Path;

fn row(arm: &str, id: &str, agent: &str, pass: u32, outcome: f64) -> String {
    format!(
        "{arm},p{pass},Kath1,{id},{agent},m,scored,True,False,{outcome},,0.5,3,10,0,0,5,0.5,1.5"
    )
}

fn write_registry(dir: &Path, rows: &[String]) -> std::path::PathBuf {
    let p = dir.join("MANIFEST.csv");
    std::fs::write(
        &p,
        format!("{RELEASE_MANIFEST_HEADER}\n{}\n", rows.join("\n")),
    )
    .unwrap();
    p
}

fn dir_size(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum()
}

/// A 2 MiB agent name (two of them, equal but for one character in the middle) gave 549 MB
/// of report: every table, chart and export repeated it. Now the name is kept cut when read
/// (the two stay apart), shown cut to 80 characters, and the whole report is small.
#[test]
fn a_two_mebibyte_agent_name_gives_a_small_report_with_an_ellipsis() {
    let tmp = tempfile::tempdir().unwrap();
    let half = "x".repeat(1 << 20);
    let (a, b) = (format!("{half}A{half}"), format!("{half}B{half}"));
    let mut rows = Vec::new();
    for (i, agent) in [a.as_str(), b.as_str(), "short"].iter().enumerate() {
        for pass in 1..=2 {
            rows.push(row("base80", "kath1-x", agent, pass, i as f64 / 2.0));
            rows.push(row("cex120", "kath1-false-premise-y", agent, pass, 1.0));
        }
    }
    let index = RunIndex::load_csv(&write_registry(tmp.path(), &rows)).unwrap();
    assert!(
        index
            .rows
            .iter()
            .all(|r| r.agent.chars().count() <= MAX_FIELD_CHARS),
        "fields kept cut"
    );
    assert!(
        index
            .warnings
            .iter()
            .any(|w| w.contains("MANIFEST.csv:2") && w.contains("agent")),
        "{:?}",
        index.warnings
    );
    let opts = ReportOptions {
        bootstrap: Bootstrap {
            resamples: 200,
            seed: 0,
        },
        ..Default::default()
    };
    let report = Report::with_options(&index, None, &opts);
    assert_eq!(
        report.tables.agents.len(),
        3,
        "the two long names stay apart"
    );
    let out = tmp.path().join("report");
    report.write_all(&out).unwrap();
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    assert!(md.len() < 100_000, "report.md is {} bytes", md.len());
    let shown = format!("{}…", "x".repeat(MAX_LABEL_CHARS - 1));
    assert!(
        md.contains(&format!("| {shown} |")),
        "cut label in a table header"
    );
    assert!(
        !md.contains(&"x".repeat(MAX_FIELD_CHARS)),
        "no long run of the name"
    );
    let total = dir_size(&out);
    assert!(total < 2_000_000, "the report's files take {total} bytes");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains(&format!("<th>{shown}</th>")));
}

/// Any number of agents was accepted (each one a column of every table). More than
/// [`MAX_REPORT_AGENTS`] is now refused, naming the file and line.
#[test]
fn more_agents_than_the_cap_are_refused_with_file_and_line() {
    let tmp = tempfile::tempdir().unwrap();
    let rows: Vec<String> = (0..=MAX_REPORT_AGENTS)
        .map(|i| row("base80", "kath1-x", &format!("agent-{i}"), 1, 1.0))
        .collect();
    let path = write_registry(tmp.path(), &rows);
    let e = RunIndex::load_csv(&path).unwrap_err();
    assert!(matches!(e.problem, RunIndexProblem::TooManyAgents), "{e}");
    assert_eq!(
        e.line,
        MAX_REPORT_AGENTS + 2,
        "the line of the first agent too many"
    );
    assert!(
        e.to_string().contains("MANIFEST.csv") && e.to_string().contains("1000 distinct agents"),
        "{e}"
    );
    // The cap itself is fine.
    let path = write_registry(tmp.path(), &rows[..MAX_REPORT_AGENTS]);
    assert_eq!(
        RunIndex::load_csv(&path).unwrap().rows.len(),
        MAX_REPORT_AGENTS
    );
}

/// An identity.json nested deep (under serde's own limit) or holding a hundred thousand tiny
/// values was parsed whole by `report --compare` and `view`; both are refused now, naming the
/// file and the cap.
#[test]
fn compare_refuses_deep_or_crowded_identities() {
    let tmp = tempfile::tempdir().unwrap();
    let id = tmp.path().join("identity.json");
    std::fs::write(
        &id,
        format!("{{\"x\":{}{}}}", "[".repeat(100), "]".repeat(100)),
    )
    .unwrap();
    let e = read_identity(tmp.path()).unwrap_err();
    assert!(matches!(e.problem, JsonFileError::Shape(_)), "{e}");
    assert!(
        e.to_string().contains("identity.json") && e.to_string().contains("nested 101 levels"),
        "{e}"
    );
    std::fs::write(&id, format!("{{\"x\":[{}0]}}", "0,".repeat(100_000))).unwrap();
    let e = read_identity(tmp.path()).unwrap_err();
    assert!(e.to_string().contains("at most 50000"), "{e}");
    // Over the size cap: refused by size.
    std::fs::write(&id, format!("{{\"x\":\"{}\"}}", "y".repeat(2 << 20))).unwrap();
    let e = read_identity(tmp.path()).unwrap_err();
    assert!(matches!(e.problem, JsonFileError::TooLarge { .. }), "{e}");
}

/// Differences between two identities were listed by flattening each document into one string
/// per leaf holding its whole path: a 500 KB member name over 20,000 leaves is 10 GB. Now one
/// walk with one path buffer lists at most [`MAX_LISTED_DIFFERENCES`], cut, and counts all.
#[test]
fn identity_differences_are_counted_and_listed_within_a_bound() {
    let key = "k".repeat(500_000);
    let a = json!({ key.clone(): (0..20_000).collect::<Vec<u32>>() });
    let b = json!({ key: (1..20_001).collect::<Vec<u32>>() });
    let d = identity_differences(&a, &b);
    assert_eq!(d.total, 20_000);
    assert_eq!(d.listed.len(), MAX_LISTED_DIFFERENCES);
    let (path, x, y) = &d.listed[0];
    assert!(path.len() < 300 && path.ends_with("more bytes)"), "{path}");
    assert_eq!((x.as_str(), y.as_str()), ("0", "1"));
}
