//! The bench's events on standard error: an total bar with status counts and one line per
//! job on a terminal; plain lines otherwise (CI logs).

use faultbench_bench::BenchEvent;
use faultbench_core::text::for_terminal;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::io::IsTerminal;
use std::sync::{Mutex, PoisonError};

const OVERALL: &str = "{elapsed_precise} [{bar:30.cyan/blue}] {pos}/{len} runs  eta {eta}  {msg}";

struct Bars {
    multi: MultiProgress,
    total: ProgressBar,
    jobs: Vec<ProgressBar>,
}

/// Renders [`BenchEvent`]s (bars only while runs run, on a terminal).
#[derive(Default)]
pub struct BenchProgress(Mutex<Option<Bars>>);

impl BenchProgress {
    /// Shows one event.
    pub fn show(&self, e: &BenchEvent) {
        let mut bars = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match (e, bars.as_mut()) {
            (BenchEvent::Started { runs, jobs }, _) if std::io::stderr().is_terminal() => {
                *bars = Some(Bars::new(*runs as u64, *jobs));
            }
            (BenchEvent::RunStarted { job, .. }, Some(b)) => {
                if let Some(j) = b.jobs.get(*job) {
                    j.set_message(for_terminal(&e.to_string()).into_owned());
                }
            }
            (BenchEvent::JobDone { job }, Some(b)) => {
                if let Some(j) = b.jobs.get(*job) {
                    j.finish_with_message("done");
                }
            }
            (BenchEvent::RunFinished { .. }, b) => {
                if let Some(b) = b {
                    b.total.set_message(e.tally_text().unwrap_or_default());
                    b.total.inc(1);
                }
                say(bars.as_ref(), &e.to_string());
            }
            (BenchEvent::Finished { .. }, Some(b)) => {
                b.total.finish();
                let _ = b.multi.clear();
                *bars = None;
            }
            (BenchEvent::Note(line), _) => say(bars.as_ref(), line),
            _ => {}
        }
    }
}

impl Bars {
    fn new(runs: u64, jobs: usize) -> Bars {
        let multi = MultiProgress::new();
        let total = multi.add(ProgressBar::new(runs));
        total.set_style(
            ProgressStyle::with_template(OVERALL)
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> "),
        );
        let job_style = ProgressStyle::with_template("  job {prefix}: {spinner} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let jobs = (0..jobs)
            .map(|i| {
                let bar = multi.add(ProgressBar::new_spinner());
                bar.set_style(job_style.clone());
                bar.set_prefix((i + 1).to_string());
                bar.enable_steady_tick(std::time::Duration::from_millis(200));
                bar
            })
            .collect();
        Bars { multi, total, jobs }
    }
}

/// Prints a line above the bars (or alone). Events quote scenario ids, agent names and errors,
/// so control characters are shown escaped.
fn say(bars: Option<&Bars>, line: &str) {
    let line = for_terminal(line);
    match bars {
        Some(b) => b.multi.println(line).unwrap_or(()),
        None => eprintln!("{line}"),
    }
}
