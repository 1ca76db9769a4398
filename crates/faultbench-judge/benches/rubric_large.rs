//! Rubric judging time on very long answers (issue 19): external agents' output is kept up to
//! 8 MB, and the judge runs inline in the pipeline.
//!
//! `cargo bench -p faultbench-judge --bench rubric_large` prints, for answers of 450 KB, 900 KB,
//! 1.8 MB and 45 MB (override with `FAULTBENCH_RUBRIC_SIZES=450K,1.8M`), the time to
//! - analyse the whole text (`Doc::new`: tokens, clauses, polarities — the algorithm itself,
//!   uncapped), in two shapes: prose (sentences, device names, addresses) and one endless
//!   clause (no punctuation, the worst case for clause-scoped rules);
//! - score it with `RubricJudge::score` (which judges the first
//!   [`MAX_JUDGED_BYTES`](faultbench_judge::rubric::MAX_JUDGED_BYTES) and records the cut),
//!   in both shapes.
//!
//! The scenario is this project's own `kath2-exam-cell-gateway-typo`. Median of 3 runs each
//! (1 run at 45 MB).

use faultbench_core::{Diagnosis, ScenarioFile};
use faultbench_judge::RubricJudge;
use faultbench_judge::rubric::Doc;
use std::time::{Duration, Instant};

const PROSE: &str = "The default route of exam_cell points at 192.168.3.254 instead of router1's \
    192.168.3.1, so every packet for another subnet goes to a next hop that never answers ARP. \
    On-link traffic still works: office_pc and enquiry answer, and 192.168.3.1 replies to ping, \
    but 1.0.0.5 does not; router1 and switch2 are healthy, not the cause. ";

/// No punctuation and no contrast word (`but`, `while`, …): the whole answer is one clause.
const CLAUSE: &str = "exam_cell default gateway points at 192.168.3.254 not router1 so the \
    packets are dropped and enquiry works and switch2 is healthy and ";

fn sizes() -> Vec<(String, usize)> {
    let spec = std::env::var("FAULTBENCH_RUBRIC_SIZES").unwrap_or("450K,900K,1.8M,45M".into());
    spec.split(',')
        .map(|s| {
            let s = s.trim();
            let (num, mult) = match s.chars().last() {
                Some('K') => (&s[..s.len() - 1], 1_000.0),
                Some('M') => (&s[..s.len() - 1], 1_000_000.0),
                _ => (s, 1.0),
            };
            let n: f64 = num.parse().expect("a size such as 450K or 1.8M");
            (s.to_string(), (n * mult) as usize)
        })
        .collect()
}

fn text_of(unit: &str, bytes: usize) -> String {
    let mut t = unit.repeat(bytes / unit.len() + 1);
    t.truncate(bytes);
    t
}

fn median(mut f: impl FnMut() -> Duration, runs: usize) -> Duration {
    let mut v: Vec<Duration> = (0..runs).map(|_| f()).collect();
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../dataset/kath2_Q/base/kath2-exam-cell-gateway-typo.txt"
    );
    let scenario = ScenarioFile::load(path).expect("the project's own scenario");
    let judge = RubricJudge::new();
    println!(
        "{:>6}  {:>14}  {:>14}  {:>14}  {:>14}",
        "answer", "Doc::new prose", "Doc::new 1 cl.", "score prose", "score 1 cl."
    );
    for (label, bytes) in sizes() {
        let runs = std::env::var("FAULTBENCH_RUBRIC_RUNS")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(if bytes > 10_000_000 { 1 } else { 3 });
        let mut cells = Vec::new();
        for unit in [PROSE, CLAUSE] {
            let text = text_of(unit, bytes);
            cells.push(median(
                || {
                    let t = Instant::now();
                    std::hint::black_box(Doc::new(&text));
                    t.elapsed()
                },
                runs,
            ));
        }
        for unit in [PROSE, CLAUSE] {
            let d = Diagnosis {
                is_anomaly: Some(true),
                faulty_devices: vec!["exam_cell".into()],
                text: text_of(unit, bytes),
                parsed_ok: true,
            };
            cells.push(median(
                || {
                    let t = Instant::now();
                    std::hint::black_box(judge.score(&scenario, &d));
                    t.elapsed()
                },
                runs,
            ));
        }
        let cells: Vec<String> = cells
            .iter()
            .map(|c| format!("{:>12.3} s", c.as_secs_f64()))
            .collect();
        println!("{label:>6}  {}", cells.join("  "));
    }
}
