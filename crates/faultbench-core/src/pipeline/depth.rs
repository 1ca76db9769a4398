//! `--prestart auto`: how many labs a job prepares ahead, chosen from measured times.
//!
//! The model: a job with depth `d` starts preparing the lab of run `k + d` when run `k` takes
//! its own lab, so that lab has the time of `d` runs to deploy and pass its baseline. It is
//! ready when its run asks for it if `d × run ≥ bring-up`; a deeper queue only costs memory
//! (each lab waiting holds its devices) and CPU early. So the depth is
//! `⌈margin × bring-up / run⌉`, at least 1 and at most what memory allows
//! ([`super::prestart_limit`]), from the medians of the last [`WINDOW`] runs of the bench
//! (every job's, since they share the machine). Until a run has been measured the depth is 1.
//!
//! The decision in effect when a run took its lab is recorded in its `phases.deploy.prestart`
//! and shown in the progress line, so a slow bench can be read back: how deep, and why.
//!
//! ```
//! use faultbench_core::pipeline::{PrestartTuner, adaptive_depth};
//! use std::time::Duration;
//! let s = Duration::from_secs;
//! // Bring-ups twice as long as runs need two labs in preparation per job.
//! assert_eq!(adaptive_depth(s(20), s(10), 4), 3); // 1.25 × 20 / 10 = 2.5 → 3
//! assert_eq!(adaptive_depth(s(5), s(10), 4), 1);
//! let mut t = PrestartTuner::auto(4);
//! assert_eq!(t.decision().depth, 1); // nothing measured yet
//! t.observe(s(16), s(10));
//! assert_eq!(t.decision().depth, 2);
//! ```

use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::time::Duration;

/// Runs whose times the decision is the median of.
pub const WINDOW: usize = 8;

/// Head room on the bring-up: a lab that is ready just in time leaves no slack for a slower
/// one (bring-ups vary by a third between runs of one topology under load).
pub const MARGIN: f64 = 1.25;

/// The deepest `--prestart auto` goes (before the memory bound).
pub const AUTO_MAX: usize = 4;

/// The prestart depth for labs taking `bring_up` to prepare and runs taking `run`, within
/// `1..=max` (0 when `max` is 0: memory allows no lab ahead).
pub fn adaptive_depth(bring_up: Duration, run: Duration, max: usize) -> usize {
    if max == 0 {
        return 0;
    }
    let run = run.as_secs_f64();
    if run <= 0.0 {
        return max;
    }
    let need = (MARGIN * bring_up.as_secs_f64() / run).ceil();
    // `need` is finite and non-negative here; the cast saturates for absurd ratios.
    (need as usize).clamp(1, max)
}

/// The depth in effect for a run, as recorded (`phases.deploy.prestart`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrestartDecision {
    /// Labs the job prepares ahead of the run that takes one.
    pub depth: u32,
    /// Chosen from measured times (`--prestart auto`); false when fixed by `--prestart N`.
    pub auto: bool,
    /// The median bring-up (deploy + baseline) it was based on, in ms (0 before any).
    #[serde(default)]
    pub bring_up_ms: u64,
    /// The median run it was based on, in ms (0 before any).
    #[serde(default)]
    pub run_ms: u64,
}

impl std::fmt::Display for PrestartDecision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.auto {
            return write!(f, "prestart {}", self.depth);
        }
        if self.run_ms == 0 {
            return write!(f, "prestart {} (auto, nothing measured yet)", self.depth);
        }
        write!(
            f,
            "prestart {} (auto: bring-up {:.1} s, run {:.1} s)",
            self.depth,
            self.bring_up_ms as f64 / 1000.0,
            self.run_ms as f64 / 1000.0
        )
    }
}

/// Keeps the recent bring-up and run times of a bench and decides the prestart depth.
#[derive(Debug, Clone)]
pub struct PrestartTuner {
    auto: bool,
    max: usize,
    bring_ups: VecDeque<Duration>,
    runs: VecDeque<Duration>,
}

impl PrestartTuner {
    /// A fixed depth (`--prestart N`): observations are kept but never change it.
    pub fn fixed(depth: usize) -> Self {
        PrestartTuner {
            auto: false,
            max: depth,
            bring_ups: VecDeque::new(),
            runs: VecDeque::new(),
        }
    }

    /// An adaptive depth of at most `max` (the memory bound).
    pub fn auto(max: usize) -> Self {
        PrestartTuner {
            auto: true,
            ..PrestartTuner::fixed(max)
        }
    }

    /// Notes one fresh lab's bring-up (deploy + baseline) and one run's duration (without the
    /// wait for its lab).
    pub fn observe(&mut self, bring_up: Duration, run: Duration) {
        for (q, v) in [(&mut self.bring_ups, bring_up), (&mut self.runs, run)] {
            if q.len() == WINDOW {
                q.pop_front();
            }
            q.push_back(v);
        }
    }

    /// The depth to use now, and what it rests on.
    pub fn decision(&self) -> PrestartDecision {
        let bring_up = median(&self.bring_ups);
        let run = median(&self.runs);
        let depth = match (self.auto, bring_up, run) {
            (false, ..) => self.max,
            (true, Some(b), Some(r)) => adaptive_depth(b, r, self.max),
            (true, ..) => self.max.min(1),
        };
        PrestartDecision {
            depth: depth.try_into().unwrap_or(u32::MAX),
            auto: self.auto,
            bring_up_ms: bring_up.map_or(0, |d| d.as_millis() as u64),
            run_ms: run.map_or(0, |d| d.as_millis() as u64),
        }
    }
}

fn median(xs: &VecDeque<Duration>) -> Option<Duration> {
    let mut v: Vec<Duration> = xs.iter().copied().collect();
    v.sort_unstable();
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(x: f64) -> Duration {
        Duration::from_secs_f64(x)
    }

    #[test]
    fn depth_covers_the_bring_up_with_margin() {
        // Runs longer than bring-ups: one lab ahead is enough.
        assert_eq!(adaptive_depth(s(7.5), s(20.0), 4), 1);
        // Exactly as long: the margin asks for a second one.
        assert_eq!(adaptive_depth(s(10.0), s(10.0), 4), 2);
        // Kath1-like under load: bring-up 19.7 s, run 23.7 s → 1.04 → 2.
        assert_eq!(adaptive_depth(s(19.7), s(23.7), 4), 2);
        // A quick agent on a big lab: 16 s bring-up, 2 s runs → 10, capped.
        assert_eq!(adaptive_depth(s(16.0), s(2.0), 4), 4);
    }

    #[test]
    fn depth_stays_within_memory() {
        assert_eq!(adaptive_depth(s(16.0), s(2.0), 2), 2);
        assert_eq!(adaptive_depth(s(16.0), s(2.0), 0), 0);
        assert_eq!(adaptive_depth(s(1.0), s(100.0), 0), 0);
        // A run measured as taking no time at all: as deep as allowed.
        assert_eq!(adaptive_depth(s(1.0), Duration::ZERO, 3), 3);
        // An absurd ratio saturates instead of overflowing.
        assert_eq!(adaptive_depth(s(1e12), s(1e-9), 5), 5);
    }

    #[test]
    fn tuner_starts_at_one_and_follows_the_median() {
        let mut t = PrestartTuner::auto(4);
        let d = t.decision();
        assert_eq!((d.depth, d.auto, d.run_ms), (1, true, 0));
        assert!(d.to_string().contains("nothing measured"));
        t.observe(s(20.0), s(5.0));
        assert_eq!(t.decision().depth, 4);
        // One outlier does not move the median of three.
        t.observe(s(4.0), s(10.0));
        t.observe(s(4.0), s(10.0));
        let d = t.decision();
        assert_eq!((d.depth, d.bring_up_ms, d.run_ms), (1, 4000, 10000));
        assert_eq!(
            d.to_string(),
            "prestart 1 (auto: bring-up 4.0 s, run 10.0 s)"
        );
    }

    #[test]
    fn tuner_forgets_runs_older_than_the_window() {
        let mut t = PrestartTuner::auto(4);
        for _ in 0..WINDOW {
            t.observe(s(30.0), s(10.0));
        }
        assert_eq!(t.decision().depth, 4);
        for _ in 0..WINDOW {
            t.observe(s(5.0), s(10.0));
        }
        assert_eq!(t.decision().depth, 1);
    }

    #[test]
    fn fixed_depth_never_moves() {
        let mut t = PrestartTuner::fixed(2);
        t.observe(s(60.0), s(1.0));
        let d = t.decision();
        assert_eq!((d.depth, d.auto), (2, false));
        assert_eq!(d.to_string(), "prestart 2");
        assert_eq!(PrestartTuner::fixed(0).decision().depth, 0);
        // Auto within a memory bound of 0: nothing ahead, even before measuring.
        assert_eq!(PrestartTuner::auto(0).decision().depth, 0);
    }

    #[test]
    fn decision_round_trips_through_json() {
        let d = PrestartDecision {
            depth: 3,
            auto: true,
            bring_up_ms: 12_000,
            run_ms: 5_000,
        };
        let back: PrestartDecision =
            serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
        assert_eq!(back, d);
    }
}
