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
//! A deeper queue only helps while bring-ups wait (on protocol timers); once the cores are
//! busy it only starts more bring-ups at once, each slower, and the measured bring-up grows
//! with the depth that caused it (on 2 cores Kath1 went to depth 3, 8 labs in flight, load
//! 23–32). So where the backend tells the CPU a bring-up used, the depth is also capped by
//! what the cores can prepare in one run's time: `⌊cores × run / (jobs × bring-up CPU)⌋`, at
//! least 1 — the bring-ups of all jobs together get at most the whole machine, never more
//! labs at once than that would finish.
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

/// How many labs per job the cores can prepare at once: `⌊cores × run / (jobs × cpu)⌋`, at
/// least 1, where `cpu` is the CPU one bring-up uses (see the module docs). `None` when
/// nothing was measured.
pub fn cpu_cap(cores: usize, jobs: usize, cpu: Duration, run: Duration) -> Option<usize> {
    let need = jobs.max(1) as f64 * cpu.as_secs_f64();
    if need <= 0.0 {
        return None;
    }
    let can = (cores.max(1) as f64 * run.as_secs_f64() / need).floor();
    // Finite and non-negative here; the cast saturates for absurd ratios.
    Some((can as usize).max(1))
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
    /// The median CPU of a bring-up, in ms (0 when the backend does not tell).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bring_up_cpu_ms: u64,
    /// The CPU cap in effect when it was lower than the depth the times asked for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub capped_by_cpu: Option<u32>,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
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
            "prestart {} (auto: bring-up {:.1} s",
            self.depth,
            self.bring_up_ms as f64 / 1000.0
        )?;
        if self.bring_up_cpu_ms > 0 {
            write!(
                f,
                " using {:.1} s CPU",
                self.bring_up_cpu_ms as f64 / 1000.0
            )?;
        }
        write!(f, ", run {:.1} s", self.run_ms as f64 / 1000.0)?;
        if self.capped_by_cpu.is_some() {
            write!(f, "; capped by CPU")?;
        }
        write!(f, ")")
    }
}

/// Keeps the recent bring-up and run times of a bench and decides the prestart depth.
#[derive(Debug, Clone)]
pub struct PrestartTuner {
    auto: bool,
    max: usize,
    /// `(cores, jobs)` for the CPU cap; `None`: no cap.
    cpu_budget: Option<(usize, usize)>,
    bring_ups: VecDeque<Duration>,
    runs: VecDeque<Duration>,
    cpus: VecDeque<Duration>,
}

impl PrestartTuner {
    /// A fixed depth (`--prestart N`): observations are kept but never change it.
    pub fn fixed(depth: usize) -> Self {
        PrestartTuner {
            auto: false,
            max: depth,
            cpu_budget: None,
            bring_ups: VecDeque::new(),
            runs: VecDeque::new(),
            cpus: VecDeque::new(),
        }
    }

    /// Caps the adaptive depth by what `cores` can prepare for `jobs` (see the module docs),
    /// once bring-ups' CPU is known.
    pub fn with_cpu_budget(mut self, cores: usize, jobs: usize) -> Self {
        self.cpu_budget = Some((cores, jobs));
        self
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
            push(q, v);
        }
    }

    /// Notes the CPU one fresh lab's bring-up used (where the backend tells it).
    pub fn observe_cpu(&mut self, cpu: Duration) {
        push(&mut self.cpus, cpu);
    }

    /// The depth to use now, and what it rests on.
    pub fn decision(&self) -> PrestartDecision {
        let bring_up = median(&self.bring_ups);
        let run = median(&self.runs);
        let cpu = median(&self.cpus);
        let mut capped_by_cpu = None;
        let depth = match (self.auto, bring_up, run) {
            (false, ..) => self.max,
            (true, Some(b), Some(r)) => {
                let want = adaptive_depth(b, r, self.max);
                let cap = match (self.cpu_budget, cpu) {
                    (Some((cores, jobs)), Some(c)) => cpu_cap(cores, jobs, c, r),
                    _ => None,
                };
                match cap {
                    Some(c) if c < want => {
                        capped_by_cpu = Some(c.try_into().unwrap_or(u32::MAX));
                        c
                    }
                    _ => want,
                }
            }
            (true, ..) => self.max.min(1),
        };
        PrestartDecision {
            depth: depth.try_into().unwrap_or(u32::MAX),
            auto: self.auto,
            bring_up_ms: bring_up.map_or(0, |d| d.as_millis() as u64),
            run_ms: run.map_or(0, |d| d.as_millis() as u64),
            bring_up_cpu_ms: cpu.map_or(0, |d| d.as_millis() as u64),
            capped_by_cpu,
        }
    }
}

fn push(q: &mut VecDeque<Duration>, v: Duration) {
    if q.len() == WINDOW {
        q.pop_front();
    }
    q.push_back(v);
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
    fn cpu_cap_is_what_the_cores_prepare_in_one_run() {
        // Kath1-like on 2 cores, 2 jobs: 8.3 s of CPU per bring-up, 16 s runs → 1.
        assert_eq!(cpu_cap(2, 2, s(8.3), s(16.0)), Some(1));
        // A light lab: 0.5 s of CPU, 4.5 s runs → 9.
        assert_eq!(cpu_cap(2, 2, s(0.5), s(4.5)), Some(9));
        // Never below 1, and nothing measured is no cap.
        assert_eq!(cpu_cap(2, 8, s(30.0), s(1.0)), Some(1));
        assert_eq!(cpu_cap(2, 2, Duration::ZERO, s(10.0)), None);
    }

    #[test]
    fn tuner_caps_the_depth_by_cpu_and_says_so() {
        // Bring-ups twice as long as runs ask for 3 …
        let mut t = PrestartTuner::auto(4).with_cpu_budget(2, 2);
        t.observe(s(30.0), s(16.0));
        assert_eq!(t.decision().depth, 3);
        // … but each uses 8.3 s of CPU: two cores prepare one lab per job per run.
        t.observe_cpu(s(8.3));
        let d = t.decision();
        assert_eq!(
            (d.depth, d.capped_by_cpu, d.bring_up_cpu_ms),
            (1, Some(1), 8300)
        );
        assert_eq!(
            d.to_string(),
            "prestart 1 (auto: bring-up 30.0 s using 8.3 s CPU, run 16.0 s; capped by CPU)"
        );
        // A cap above what the times ask for changes nothing and is not recorded.
        let mut t = PrestartTuner::auto(4).with_cpu_budget(8, 1);
        t.observe(s(30.0), s(16.0));
        t.observe_cpu(s(2.0));
        let d = t.decision();
        assert_eq!((d.depth, d.capped_by_cpu), (3, None));
        // Without a budget the CPU is noted but caps nothing.
        let mut t = PrestartTuner::auto(4);
        t.observe(s(30.0), s(16.0));
        t.observe_cpu(s(8.3));
        assert_eq!(t.decision().depth, 3);
    }

    #[test]
    fn decision_round_trips_through_json() {
        let d = PrestartDecision {
            depth: 3,
            auto: true,
            bring_up_ms: 12_000,
            run_ms: 5_000,
            bring_up_cpu_ms: 4_000,
            capped_by_cpu: Some(3),
        };
        let back: PrestartDecision =
            serde_json::from_str(&serde_json::to_string(&d).unwrap()).unwrap();
        assert_eq!(back, d);
    }
}
