//! Rubric judging speed.
//!
//! `cargo bench -p faultbench-judge --bench rubric` — each iteration judges 1,000 runs:
//! - `thousand_runs`: one judge for all, cycling through 80 (scenario, diagnosis) pairs
//!   (scenarios are compiled once each, as in a benchmark where every scenario is run by
//!   several agents and passes);
//! - `thousand_runs_cold`: a fresh judge per run, so every run also compiles its scenario
//!   (the worst case: 1,000 distinct scenarios).
//!
//! Input, by default: 80 scenarios of the repository's `dataset/` (every 7th of the 560, so
//! every topology and layer is represented), each with a diagnosis written from its own
//! `[GROUND-TRUTH]` (verdict, injected devices, the ground-truth prose as the explanation).
//! `FAULTBENCH_RUBRIC_RUNS=DIR` judges saved runs instead — a runs root or the release's
//! `final_results/` (`$FAULTBENCH_RELEASE/final_results`), with the agents' real diagnoses.

use faultbench_core::Diagnosis;
use faultbench_core::dataset::Dataset;
use faultbench_core::scenario::{Scenario, ScenarioSpec};
use faultbench_judge::RubricJudge;
use faultbench_judge::saved::load_runs;
use std::path::Path;
use std::sync::LazyLock;

static RUNS: LazyLock<Vec<(ScenarioSpec, Diagnosis)>> = LazyLock::new(|| {
    let runs = match std::env::var_os("FAULTBENCH_RUBRIC_RUNS") {
        Some(dir) => saved_runs(Path::new(&dir)),
        None => from_dataset(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../dataset")),
    };
    assert!(!runs.is_empty(), "nothing to judge");
    eprintln!(
        "judging cycles of {} (scenario, diagnosis) pairs",
        runs.len()
    );
    runs
});

fn saved_runs(dir: &Path) -> Vec<(ScenarioSpec, Diagnosis)> {
    let (runs, errors) = load_runs(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    if !errors.is_empty() {
        eprintln!(
            "{} unreadable records under {} skipped",
            errors.len(),
            dir.display()
        );
    }
    runs.into_iter()
        .filter_map(|r| Some((r.scenario, r.diagnosis?)))
        .collect()
}

fn from_dataset(root: &Path) -> Vec<(ScenarioSpec, Diagnosis)> {
    let ds = Dataset::scan(root).unwrap_or_else(|e| panic!("{}: {e}", root.display()));
    ds.scenarios()
        .step_by(7)
        .map(|(_, s)| {
            let diagnosis = Diagnosis {
                is_anomaly: Some(s.category().has_fault()),
                faulty_devices: s
                    .injection()
                    .devices()
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
                text: s
                    .spec
                    .section("GROUND-TRUTH")
                    .unwrap_or_default()
                    .to_string(),
                parsed_ok: true,
            };
            (s.spec.clone(), diagnosis)
        })
        .collect()
}

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn thousand_runs() {
    let judge = RubricJudge::new();
    for (scenario, diagnosis) in RUNS.iter().cycle().take(1000) {
        divan::black_box(judge.score(scenario, diagnosis));
    }
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn thousand_runs_cold() {
    for (scenario, diagnosis) in RUNS.iter().cycle().take(1000) {
        let judge = RubricJudge::new();
        divan::black_box(judge.score(scenario, diagnosis));
    }
}
