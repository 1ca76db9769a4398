//! The report's new statistics on the public release's registry, held against an independent
//! computation (`scripts/independent-stats.py`, Python standard library only), and the paper's
//! pass-to-pass figure reproduced.

use faultbench_report::details::RunDetails;
use faultbench_report::metrics::ALL;
use faultbench_report::stats::Bootstrap;
use faultbench_report::{Report, ReportOptions, RunIndex};
use faultbench_testkit::{Release, full, release_for_test};
use serde_json::Value;
use std::sync::OnceLock;

fn run_index(release: &Release) -> RunIndex {
    let reg = RunIndex::load(&release.manifest()).unwrap();
    assert_eq!(
        reg.rows.len(),
        full::MANIFEST_ROWS,
        "the release's registry has every run"
    );
    reg
}

const RESAMPLES: usize = 1000;

/// The report without run records (the Python script sees only the registry).
fn report(release: &Release) -> &'static Report {
    static R: OnceLock<Report> = OnceLock::new();
    R.get_or_init(|| {
        let opts = ReportOptions {
            bootstrap: Bootstrap {
                resamples: RESAMPLES,
                seed: 0,
            },
            ..Default::default()
        };
        Report::with_options(&run_index(release), None, &opts)
    })
}

fn independent(release: &Release) -> &'static Value {
    static V: OnceLock<Value> = OnceLock::new();
    V.get_or_init(|| {
        let script = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../scripts/independent-stats.py"
        );
        let out = std::process::Command::new("python3")
            .arg(script)
            .arg(release.manifest())
            .arg("2000")
            .output()
            .expect("python3 runs");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    })
}

fn close(a: Option<f64>, b: &Value, tol: f64) -> bool {
    match (a, b.as_f64()) {
        (Some(x), Some(y)) => (x - y).abs() <= tol,
        (None, None) => true,
        _ => false,
    }
}

#[test]
fn pass_to_pass_variation_reproduces_the_paper_and_the_independent_count() {
    let Some(release) = release_for_test() else {
        return;
    };
    let v = &report(&release).analyses.variation;
    let ind = &independent(&release)["variation"];
    assert_eq!(ind.as_object().unwrap().len(), v.rows.len());
    for (i, label) in v.rows.iter().enumerate() {
        for (j, agent) in v.agents.iter().enumerate() {
            let want = &ind[label][agent];
            let c = v.cells[i][j];
            assert_eq!(
                (c.num as u64, c.den as u64),
                (want[0].as_u64().unwrap(), want[1].as_u64().unwrap()),
                "{label} {agent}"
            );
            let ci = v.cis[i][j].unwrap();
            assert!(ci.contains(c.ratio().unwrap()), "{label} {agent} {ci:?}");
        }
    }
    // The paper: "8% of (scenario, agent) pairs vary by at least 0.5 across passes" (E1).
    let e1_all = v.cells[0].last().unwrap();
    assert_eq!(v.agents.last().unwrap(), ALL);
    assert_eq!((e1_all.num, e1_all.den), (50, 589));
    assert_eq!(format!("{:.0}", e1_all.ratio().unwrap() * 100.0), "8");
    // With the release's exact float comparison 0.7499999999999999 vs 0.25 is not a flip: 49.
    let exact = &independent(&release)["variation_exact_float"]["E1 core (base80 + cex120)"]["All"];
    assert_eq!(exact[0].as_u64(), Some(49));
    assert_eq!(format!("{:.0}", 49.0 / 589.0 * 100.0), "8");
}

#[test]
fn reasoning_by_persona_matches() {
    let Some(release) = release_for_test() else {
        return;
    };
    let t = &report(&release).tables.reasoning_by_persona;
    let ind = &independent(&release)["reasoning_by_style"];
    for (i, style) in t.rows.iter().enumerate() {
        for (j, agent) in t.agents.iter().enumerate() {
            assert!(
                close(t.cells[i][j].stat.mean, &ind[style][agent], 1e-12),
                "{style} {agent}: {:?} vs {}",
                t.cells[i][j].stat.mean,
                ind[style][agent]
            );
            let ci = t.cells[i][j].ci.unwrap();
            assert!(ci.contains(t.cells[i][j].stat.mean.unwrap()));
        }
    }
    // The paper's Table 7 reasoning on standard false-premise tickets: SADE .933, CC .892, ReAct .845.
    let col = |a: &str| t.agents.iter().position(|x| x == a).unwrap();
    assert_eq!(t.cells[0][col("sade")].stat.rounded(), Some(0.933));
    assert_eq!(t.cells[0][col("cc-baseline")].stat.rounded(), Some(0.892));
    assert_eq!(t.cells[0][col("react-full")].stat.rounded(), Some(0.845));
}

#[test]
fn effort_by_category_matches_and_shows_the_papers_contrast() {
    let Some(release) = release_for_test() else {
        return;
    };
    let a = &report(&release).analyses;
    let ind = &independent(&release)["effort_by_group"];
    for g in &a.effort_by_group {
        if g.metric == "turns" {
            // The release's records keep no turns: nothing to average.
            assert!(g.cells.iter().flatten().all(|c| c.mean.is_none()));
            continue;
        }
        for (i, label) in g.rows.iter().enumerate() {
            for (j, agent) in g.agents.iter().enumerate() {
                let want = &ind[&g.metric][label][agent];
                let c = g.cells[i][j];
                assert!(
                    close(
                        c.mean,
                        want,
                        1e-6 * want.as_f64().unwrap_or(1.0).abs().max(1.0)
                    ),
                    "{} {label} {agent}",
                    g.metric
                );
                assert!(c.ci.unwrap().contains(c.mean.unwrap()));
            }
        }
    }
    // §5.5: CC-Baseline calls tools about 13 times on Correct-Fault, 30 on no-detail tickets,
    // and reads about 136k vs 549k input tokens per answered run.
    let tools = a
        .effort_by_group
        .iter()
        .find(|g| g.metric == "tool_calls")
        .unwrap();
    let tokens = a
        .effort_by_group
        .iter()
        .find(|g| g.metric == "input_tokens")
        .unwrap();
    let col = tools
        .agents
        .iter()
        .position(|x| x == "cc-baseline")
        .unwrap();
    let row = |l: &str| tools.rows.iter().position(|x| x == l).unwrap();
    assert_eq!(
        tools.cells[row("Correct-Fault")][col]
            .mean
            .map(|x| x.round()),
        Some(13.0)
    );
    assert_eq!(
        tools.cells[row("naive_no_detail")][col]
            .mean
            .map(|x| x.round()),
        Some(30.0)
    );
    assert_eq!(
        tokens.cells[row("Correct-Fault")][col]
            .mean
            .map(|x| (x / 1000.0).round()),
        Some(136.0)
    );
    assert_eq!(
        tokens.cells[row("naive_no_detail")][col]
            .mean
            .map(|x| (x / 1000.0).round()),
        Some(549.0)
    );
}

#[test]
fn weight_sensitivity_matches_and_the_papers_weights_give_table_4() {
    let Some(release) = release_for_test() else {
        return;
    };
    let s = &report(&release).analyses.sensitivity;
    let ind = &independent(&release)["sensitivity"];
    for (k, rule) in s.rules.iter().enumerate() {
        for (i, row) in s.rows.iter().enumerate().take(4) {
            for (j, agent) in s.agents.iter().enumerate() {
                let c = s.cells[k][i][j];
                let want = &ind[rule][row][agent];
                assert!(
                    close(c.lo, &want[0], 1e-12) && close(c.hi, &want[1], 1e-12),
                    "{rule} {row} {agent}: {c:?} vs {want}"
                );
            }
        }
    }
    // Under 0.7/0.3 every run's value is its recorded outcome: Table 4 exactly, no range.
    let k = s.rules.iter().position(|r| r == "0.7/0.3").unwrap();
    let t4 = &report(&release).tables.outcome_by_category;
    for i in 0..4 {
        for j in 0..t4.agents.len() {
            let c = s.cells[k][i][j];
            assert_eq!(c.lo, c.hi);
            assert!((c.lo.unwrap() - t4.cells[i][j].stat.mean.unwrap()).abs() < 1e-12);
        }
    }
    let cov = s.coverage;
    assert_eq!(cov.answered, 3594);
    assert_eq!(
        cov.exact + cov.inferred + cov.ambiguous + cov.unknown,
        cov.answered
    );
    assert_eq!(cov.exact, 0, "no records given");
    assert!(cov.ambiguous < 60, "{cov:?}");
}

#[test]
fn bootstrap_intervals_agree_with_an_independent_bootstrap() {
    let Some(release) = release_for_test() else {
        return;
    };
    let b = &independent(&release)["bootstrap"];
    let t4 = &report(&release).tables.outcome_by_category;
    let ci = t4.cells[0].last().unwrap().ci.unwrap();
    let want = &b["cf_all_outcome"];
    // Two generators, 1,000 vs 2,000 resamples: the bounds agree to Monte Carlo error.
    assert!(
        (ci.lo - want[0].as_f64().unwrap()).abs() < 0.01,
        "{ci:?} vs {want}"
    );
    assert!(
        (ci.hi - want[1].as_f64().unwrap()).abs() < 0.01,
        "{ci:?} vs {want}"
    );
    let od = &report(&release).tables.over_diagnosis;
    let col = od.agents.iter().position(|a| a == "sade").unwrap();
    let ci = od.ci(0, col).unwrap();
    let want = &b["standard_sade_over_diagnosis"];
    assert!(
        (ci.lo - want[0].as_f64().unwrap()).abs() < 0.025,
        "{ci:?} vs {want}"
    );
    assert!(
        (ci.hi - want[1].as_f64().unwrap()).abs() < 0.025,
        "{ci:?} vs {want}"
    );
}

#[test]
fn every_mean_and_rate_of_tables_4_to_8_has_an_interval_and_it_is_reproducible() {
    let Some(release) = release_for_test() else {
        return;
    };
    let r = report(&release);
    let t = &r.tables;
    for s in [
        &t.outcome_by_category,
        &t.outcome_by_persona,
        &t.fix,
        &t.reasoning,
        &t.reasoning_by_persona,
    ] {
        for (i, row) in s.cells.iter().enumerate() {
            for c in row {
                if let Some(m) = c.stat.mean {
                    let ci = c.ci.unwrap_or_else(|| panic!("{} row {i}", s.title));
                    assert!(ci.contains(m) && ci.lo <= ci.hi);
                    if c.delta.is_some() {
                        assert!(c.delta_ci.is_some());
                    }
                }
            }
        }
    }
    for rt in [&t.over_diagnosis, &t.timeouts] {
        for (i, row) in rt.cells.iter().enumerate() {
            for (j, c) in row.iter().enumerate() {
                if c.den > 0 {
                    assert!(rt.ci(i, j).unwrap().contains(c.ratio().unwrap()));
                }
            }
        }
    }
    for e in &t.effort {
        for f in [
            "tool_calls_a",
            "tool_calls_t",
            "usd_a",
            "usd_t",
            "usd_timeout_share",
        ] {
            assert!(e.cis.contains_key(f), "{} {f}", e.agent);
        }
        assert!(e.cis["usd_timeout_share"].contains(e.usd_timeout_share().unwrap()));
    }
    // Same seed, same intervals; another seed moves them.
    let opts = |seed| ReportOptions {
        bootstrap: Bootstrap {
            resamples: 300,
            seed,
        },
        ..Default::default()
    };
    let reg = run_index(&release);
    let a = Report::with_options(&reg, None, &opts(5));
    let b = Report::with_options(&reg, None, &opts(5));
    let c = Report::with_options(&reg, None, &opts(6));
    assert_eq!(a.tables, b.tables);
    assert_ne!(a.tables, c.tables);
    // The files carry them.
    let dir = tempfile::tempdir().unwrap();
    r.write_all(dir.path()).unwrap();
    let stats = std::fs::read_to_string(dir.path().join("statistics.csv")).unwrap();
    assert!(stats.starts_with("table,row,agent,value,ci_lo,ci_hi,n\n"));
    assert!(
        stats
            .lines()
            .any(|l| l.starts_with("Variation,E1 core (base80 + cex120),All,")),
        "{stats}"
    );
    let md = r.markdown();
    assert!(md.contains("Table 7c"));
    assert!(md.contains("Pass-to-pass variation"));
    assert!(md.contains("Weight sensitivity"));
    let html = r.html();
    assert!(html.contains("class=\"errorbar\""));
}

#[test]
fn full_records_give_exact_axis_counts() {
    let Some(release) = release_for_test() else {
        return;
    };
    let (details, notes) = RunDetails::scan(&release.final_results());
    assert!(notes.is_empty(), "{notes:?}");
    // Our partial copy holds 80 records; a full checkout all 3,960.
    let records = release.run_records().len();
    assert_eq!(details.len(), records);
    let opts = ReportOptions {
        bootstrap: Bootstrap {
            resamples: 0,
            seed: 0,
        },
        details,
        ..Default::default()
    };
    let r = Report::with_options(&run_index(&release), None, &opts);
    let cov = r.analyses.sensitivity.coverage;
    assert_eq!(cov.exact, records, "{cov:?}");
    assert!(r.analyses.bootstrap.is_none());
    assert!(r.tables.outcome_by_category.cells[0][0].ci.is_none());
}
