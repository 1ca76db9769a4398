//! Rubric judging speed on the 80 release run records (`/work/shared/upstream/runs`).
//!
//! `cargo bench -p faultbench-judge --bench rubric` — each iteration judges 1,000 runs:
//! - `thousand_runs`: one judge for all, cycling through the 80 real diagnoses (scenarios are
//!   compiled once each, as in a benchmark where every scenario is run by several agents and
//!   passes);
//! - `thousand_runs_cold`: a fresh judge per run, so every run also compiles its scenario
//!   (the worst case: 1,000 distinct scenarios).

use faultbench_judge::RubricJudge;
use faultbench_judge::saved::{SavedRun, load_runs};
use std::path::Path;
use std::sync::LazyLock;

static RUNS: LazyLock<Vec<SavedRun>> = LazyLock::new(|| {
    let (runs, _) = load_runs(Path::new("/work/shared/upstream/runs")).expect("release runs");
    assert!(!runs.is_empty());
    runs
});

fn main() {
    divan::main();
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn thousand_runs() {
    let judge = RubricJudge::new();
    for r in RUNS.iter().cycle().take(1000) {
        divan::black_box(judge.score(&r.scenario, r.diagnosis.as_ref().unwrap()));
    }
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn thousand_runs_cold() {
    for r in RUNS.iter().cycle().take(1000) {
        let judge = RubricJudge::new();
        divan::black_box(judge.score(&r.scenario, r.diagnosis.as_ref().unwrap()));
    }
}
