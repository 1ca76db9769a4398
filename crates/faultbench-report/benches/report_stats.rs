//! Bench of the report's statistics (issue 16's target: 10,000 bootstrap resamples on 3,960
//! runs in ≤ 2 s): the whole report — tables, analyses and every interval — on the public
//! release's registry and on a synthetic registry of the same size and shape.
//!
//! ```text
//! cargo bench -p faultbench-core --bench report_stats
//! ```
//!
//! The release is found by `faultbench_testkit::locate` (`FAULTBENCH_RELEASE`, then
//! `../shared/release`); without it only
//! the synthetic registry is measured. Exits non-zero when a target is missed. The target is
//! judged on CPU time (all threads together), which a loaded shared machine does not inflate
//! the way it inflates wall time; on an idle machine wall time is about CPU time / cores.

use faultbench_core::record::ManifestRow;
use faultbench_report::stats::{Bootstrap, Rng};
use faultbench_report::{Report, ReportOptions, RunIndex};
use faultbench_testkit::measure::{cpu_seconds, load_average};
use std::process::ExitCode;
use std::time::Instant;

const TARGET_S: f64 = 2.0;

/// 3,960 rows shaped like the paper's runs: E1 (200 core scenarios × 3 agents × 3 passes) and
/// E2 (5 personas × 72 tickets × 3 agents × 2 passes), random outcomes and effort.
fn synthetic() -> Vec<ManifestRow> {
    let mut rng = Rng::new(42);
    let mut rows = Vec::new();
    let mut push = |arm: &str, id: String, topo: &str, pass: u32, agent: &str, rng: &mut Rng| {
        let timeout = rng.below(100) < 9;
        let outcome = [0.0, 0.3, 0.7, 1.0, 1.0, 1.0][rng.below(6) as usize];
        rows.push(ManifestRow {
            arm: arm.into(),
            pass: format!("p{pass}"),
            topology: topo.into(),
            scenario_id: id,
            agent: agent.into(),
            model: "m".into(),
            status: if timeout { "no_submission" } else { "scored" }.into(),
            submitted: !timeout,
            is_anomaly: Some(rng.below(2) == 0),
            outcome_score: (!timeout).then_some(outcome),
            fix_score: (!timeout).then_some(0.5),
            reasoning_score: (!timeout).then_some(f64::from(rng.below(30)) / 30.0),
            tool_calls: u64::from(rng.below(40)),
            in_tokens: u64::from(rng.below(10_000)),
            cache_read_tokens: u64::from(rng.below(300_000)),
            cache_write_tokens: u64::from(rng.below(50_000)),
            out_tokens: u64::from(rng.below(30_000)),
            cost_usd: f64::from(rng.below(1000)) / 1000.0,
            wall_seconds: f64::from(rng.below(900)),
            judge_in_tokens: None,
            judge_out_tokens: None,
            judge_cost_usd: None,
        });
    };
    let agents = ["sade", "react", "cc"];
    for t in 0..8 {
        let topo = format!("T{t}");
        for s in 0..25 {
            let (arm, id) = match s {
                0..10 => ("base80", format!("t{t}-fault-{s}")),
                10..19 => ("cex120", format!("t{t}-false-premise-{s}")),
                19..22 => ("cex120", format!("t{t}-x{s}-misdirected")),
                _ => ("cex120", format!("t{t}-x{s}-misdescribed")),
            };
            for pass in 1..=3 {
                for a in agents {
                    push(arm, id.clone(), &topo, pass, a, &mut rng);
                }
            }
            if (10..19).contains(&s) {
                for persona in [
                    "novice",
                    "novice_confident",
                    "naive",
                    "naive_unsure",
                    "naive_no_detail",
                ] {
                    let pid = format!("{id}-{}", persona.replace('_', "-"));
                    for pass in 1..=2 {
                        for a in agents {
                            push(persona, pid.clone(), &topo, pass, a, &mut rng);
                        }
                    }
                }
            }
        }
    }
    rows
}

/// How the binary was started: `cargo bench` passes `--bench`; `cargo test --all-targets` runs
/// it without, in a debug build, where timings mean nothing.
#[derive(Clone, Copy)]
enum Mode {
    /// 10,000 resamples, median of three, target judged.
    Bench,
    /// One report with 200 resamples: the code path works; no target.
    Smoke,
}

fn measure(name: &str, reg: &RunIndex, mode: Mode) -> f64 {
    let (resamples, reps) = match mode {
        Mode::Bench => (10_000, 3),
        Mode::Smoke => (200, 1),
    };
    let opts = ReportOptions {
        bootstrap: Bootstrap { resamples, seed: 0 },
        ..Default::default()
    };
    let mut times = Vec::new();
    let mut cpu = Vec::new();
    for _ in 0..reps {
        let (t0, c0) = (Instant::now(), cpu_seconds());
        let r = Report::with_options(reg, None, &opts);
        times.push(t0.elapsed().as_secs_f64());
        cpu.push(cpu_seconds() - c0);
        assert!(r.tables.outcome_by_category.cells[0][0].ci.is_some());
    }
    cpu.sort_by(f64::total_cmp);
    let mid = reps / 2;
    let t0 = Instant::now();
    let _ = Report::with_options(reg, None, &ReportOptions::tables_only());
    let tables_only = t0.elapsed().as_secs_f64();
    times.sort_by(f64::total_cmp);
    let judged = cpu[mid];
    println!(
        "{name}: {} runs, report with {resamples} resamples: wall median {:.3} s (min {:.3}, max {:.3}), CPU median {:.2} s over {} threads; tables only {:.3} s; load average {}",
        reg.rows.len(),
        times[mid],
        times[0],
        times[reps - 1],
        cpu[mid],
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        tables_only,
        load_average()
    );
    judged
}

fn main() -> ExitCode {
    let mode = if std::env::args().any(|a| a == "--bench") {
        Mode::Bench
    } else {
        println!(
            "test mode (no --bench): one small report each, no target; `cargo bench` judges it"
        );
        Mode::Smoke
    };
    let mut worst: f64 = 0.0;
    match faultbench_testkit::locate().map(|r| RunIndex::load(&r.manifest())) {
        Ok(Ok(reg)) => worst = worst.max(measure("release MANIFEST.csv", &reg, mode)),
        Ok(Err(e)) => println!("release registry not measured: {e}"),
        Err(e) => println!("release registry not measured: {e}"),
    }
    let reg = RunIndex {
        source: "synthetic".into(),
        rows: synthetic(),
        warnings: Vec::new(),
        notes: None,
    };
    assert_eq!(reg.rows.len(), 3960);
    worst = worst.max(measure("synthetic registry", &reg, mode));
    if matches!(mode, Mode::Smoke) {
        return ExitCode::SUCCESS;
    }
    if worst > TARGET_S {
        println!("MISSED: CPU {worst:.3} s > {TARGET_S} s");
        return ExitCode::FAILURE;
    }
    println!("target met: CPU ≤ {TARGET_S} s");
    ExitCode::SUCCESS
}
