//! Progress display: an overall bar with status counts and one line per job; plain lines when
//! standard error is not a terminal (CI logs).

use faultbench_core::RunStatus;
use faultbench_core::record::RunRecord;
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::sync::Mutex;

/// The bench's progress display.
pub struct Progress {
    multi: Option<MultiProgress>,
    overall: ProgressBar,
    jobs: Vec<ProgressBar>,
    counts: Mutex<BTreeMap<RunStatus, usize>>,
    total: u64,
    done: Mutex<u64>,
}

impl Progress {
    /// A display for `total` runs on `jobs` workers.
    pub fn new(total: u64, jobs: usize) -> Progress {
        let tty = std::io::stderr().is_terminal();
        let multi = tty.then(MultiProgress::new);
        let overall = match &multi {
            Some(m) => {
                let bar = m.add(ProgressBar::new(total));
                bar.set_style(
                    ProgressStyle::with_template(
                        "{elapsed_precise} [{bar:30.cyan/blue}] {pos}/{len} runs  eta {eta}  {msg}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
                bar
            }
            None => ProgressBar::hidden(),
        };
        let jobs = (0..jobs)
            .map(|i| match &multi {
                Some(m) => {
                    let bar = m.add(ProgressBar::new_spinner());
                    bar.set_style(
                        ProgressStyle::with_template("  job {prefix}: {spinner} {msg}")
                            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
                    );
                    bar.set_prefix((i + 1).to_string());
                    bar.enable_steady_tick(std::time::Duration::from_millis(200));
                    bar
                }
                None => ProgressBar::hidden(),
            })
            .collect();
        Progress {
            multi,
            overall,
            jobs,
            counts: Mutex::new(BTreeMap::new()),
            total,
            done: Mutex::new(0),
        }
    }

    /// A job starts a run.
    pub fn start(&self, job: usize, what: &str) {
        if let Some(bar) = self.jobs.get(job) {
            bar.set_message(what.to_string());
        }
    }

    /// A job is idle.
    pub fn idle(&self, job: usize) {
        if let Some(bar) = self.jobs.get(job) {
            bar.finish_with_message("done");
        }
    }

    /// A run finished.
    pub fn finish(&self, rec: &RunRecord) {
        let mut counts = self.counts.lock().unwrap_or_else(|e| e.into_inner());
        *counts.entry(rec.status).or_default() += 1;
        let summary: Vec<String> = counts.iter().map(|(s, n)| format!("{s} {n}")).collect();
        self.overall.set_message(summary.join(", "));
        self.overall.inc(1);
        let mut done = self.done.lock().unwrap_or_else(|e| e.into_inner());
        *done += 1;
        let outcome = rec
            .scores
            .as_ref()
            .map(|s| format!(" outcome {:.3}", s.outcome))
            .unwrap_or_default();
        let line = format!(
            "[{}/{}] {} {} {} p{}: {}{} ({:.1} s){}",
            *done,
            self.total,
            rec.key.topology,
            rec.key.scenario_id,
            rec.key.agent,
            rec.key.pass,
            rec.status,
            outcome,
            rec.wall_seconds,
            rec.error
                .as_deref()
                .map(|e| format!(" — {}", e.chars().take(160).collect::<String>()))
                .unwrap_or_default()
        );
        self.println(&line);
    }

    /// Prints a line above the bars (or plainly).
    pub fn println(&self, line: &str) {
        match &self.multi {
            Some(m) => {
                let _ = m.println(line);
            }
            None => eprintln!("{line}"),
        }
    }

    /// Removes the bars.
    pub fn clear(&self) {
        self.overall.finish();
        if let Some(m) = &self.multi {
            let _ = m.clear();
        }
    }
}
