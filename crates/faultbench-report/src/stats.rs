//! Bootstrap confidence intervals that follow the paper's estimators.
//!
//! **What is resampled.** A benchmark's runs are not independent: the same scenario is run by
//! every agent in every pass, and a persona rewrite shares its network with the standard
//! false-premise ticket it rewrites. The resampling unit is therefore the *scenario family* (a
//! core scenario together with its persona rewrites), drawn with replacement *within its
//! category* (Correct-Fault, False-Premise, Wrong-Device, Wrong-Cause), so that every replicate has
//! the dataset's composition. All runs of a drawn family come along: every agent, every pass,
//! every ticket style — which also makes differences between cells of one replicate (Δ vs
//! Correct-Fault, a persona vs the standard ticket, one agent vs another) paired.
//!
//! **What is recomputed.** Each statistic is recomputed on every replicate exactly as the table
//! computes it: for scores, per pass the mean over answered runs, then the mean over passes
//! ([`Kind::MeanOfPassMeans`]); for rates and per-run effort, one ratio pooled over passes
//! ([`Kind::Pooled`]). An [`Estimator`] keeps, per (family, pass), the sum and count of its
//! values, so a replicate costs one multiply-add per (family, pass) rather than per run.
//!
//! **Interval.** The percentile interval of the replicates (2.5 % and 97.5 % order statistics,
//! the indices 125/4875 of 5,000 that the release's analysis used). The generator is a seeded
//! xoshiro256** ([`Rng`]): the same rows, seed and number of resamples give the same bounds on
//! every machine.
//!
//! ```
//! use faultbench_report::stats::{Bootstrap, Design, Estimator, Kind};
//! // Ten families in one stratum, one pass; the value is 1.0 for families 0..=6, else 0.0.
//! let design = Design::from_keys((0..10).map(|i| (0u32, i as u32)));
//! let mut est = Estimator::new(Kind::Pooled);
//! for f in 0..10u32 {
//!     est.add(f, 0, if f < 7 { 1.0 } else { 0.0 }, 1.0);
//! }
//! let out = Bootstrap { resamples: 2000, seed: 0 }.run(&design, &[est], &[]);
//! let ci = out[0].unwrap();
//! assert!(ci.lo < 0.7 && ci.hi > 0.7 && ci.lo >= 0.2 && ci.hi <= 1.0);
//! ```

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// A 95 % interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// Lower bound.
    pub lo: f64,
    /// Upper bound.
    pub hi: f64,
}

impl Interval {
    /// Whether `x` lies inside (bounds included).
    pub fn contains(&self, x: f64) -> bool {
        self.lo - 1e-12 <= x && x <= self.hi + 1e-12
    }

    /// `[0.893, 0.931]` (three decimals) or, for percentages, `[20.1%, 28.9%]`.
    pub fn format(&self, percent: bool) -> String {
        if percent {
            format!("[{:.1}%, {:.1}%]", self.lo * 100.0, self.hi * 100.0)
        } else {
            format!("[{:.3}, {:.3}]", self.lo, self.hi)
        }
    }
}

/// xoshiro256** seeded through SplitMix64: small, fast, and identical everywhere.
#[derive(Debug, Clone)]
pub struct Rng {
    s: [u64; 4],
}

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        Rng {
            s: [next(), next(), next(), next()],
        }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let result = self.s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = self.s[1] << 17;
        self.s[2] ^= self.s[0];
        self.s[3] ^= self.s[1];
        self.s[1] ^= self.s[2];
        self.s[0] ^= self.s[3];
        self.s[2] ^= t;
        self.s[3] = self.s[3].rotate_left(45);
        result
    }

    /// A uniform integer in `0..n` (`n > 0`), without modulo bias (Lemire's method).
    pub fn below(&mut self, n: u32) -> u32 {
        let n64 = u64::from(n);
        let mut m = (self.next_u64() >> 32) * n64;
        let mut low = m as u32;
        if low < n {
            // Reject the few low products that would make some values more likely.
            let threshold = n.wrapping_neg() % n;
            while low < threshold {
                m = (self.next_u64() >> 32) * n64;
                low = m as u32;
            }
        }
        (m >> 32) as u32
    }
}

/// The resampling design: which families exist and which stratum each belongs to.
#[derive(Debug, Clone, Default)]
pub struct Design {
    /// Families per stratum (family indices).
    strata: Vec<Vec<u32>>,
    families: usize,
}

impl Design {
    /// A design from `(stratum, family)` pairs (duplicates are ignored; family indices must be
    /// dense from 0).
    pub fn from_keys(keys: impl IntoIterator<Item = (u32, u32)>) -> Design {
        let mut by_stratum: HashMap<u32, Vec<u32>> = HashMap::new();
        let mut families = 0usize;
        let mut seen = std::collections::HashSet::new();
        for (s, f) in keys {
            if seen.insert(f) {
                by_stratum.entry(s).or_default().push(f);
                families = families.max(f as usize + 1);
            }
        }
        let mut strata: Vec<(u32, Vec<u32>)> = by_stratum.into_iter().collect();
        strata.sort();
        for (_, fs) in &mut strata {
            fs.sort_unstable();
        }
        Design {
            strata: strata.into_iter().map(|(_, f)| f).collect(),
            families,
        }
    }

    /// Number of families.
    pub fn families(&self) -> usize {
        self.families
    }

    /// Draws one replicate: `w[f]` = how many times family `f` was drawn.
    fn draw(&self, rng: &mut Rng, w: &mut [f64]) {
        w.iter_mut().for_each(|x| *x = 0.0);
        for fs in &self.strata {
            let k = fs.len() as u32;
            for _ in 0..k {
                w[fs[rng.below(k) as usize] as usize] += 1.0;
            }
        }
    }
}

/// How an estimator combines its values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Per pass Σsum/Σcount, then the mean over the passes that have values (the score cells).
    MeanOfPassMeans,
    /// One ratio Σsum/Σcount pooled over passes (rates and per-run effort).
    Pooled,
}

/// A statistic's sufficient data: per (family, pass), the sum and count of its values.
#[derive(Debug, Clone)]
pub struct Estimator {
    kind: Kind,
    index: HashMap<(u32, u16), usize>,
    entries: Vec<(u32, u16, f64, f64)>,
    passes: usize,
    adds: usize,
}

impl Estimator {
    /// An empty estimator.
    pub fn new(kind: Kind) -> Estimator {
        Estimator {
            kind,
            index: HashMap::new(),
            entries: Vec::new(),
            passes: 0,
            adds: 0,
        }
    }

    /// How many values were added.
    pub fn adds(&self) -> usize {
        self.adds
    }

    /// Adds `sum` and `count` to the (family, pass) entry (for a plain mean: `value, 1.0`).
    pub fn add(&mut self, family: u32, pass: u16, sum: f64, count: f64) {
        let pass = if self.kind == Kind::Pooled { 0 } else { pass };
        self.passes = self.passes.max(pass as usize + 1);
        self.adds += 1;
        match self.index.get(&(family, pass)) {
            Some(&i) => {
                self.entries[i].2 += sum;
                self.entries[i].3 += count;
            }
            None => {
                self.index.insert((family, pass), self.entries.len());
                self.entries.push((family, pass, sum, count));
            }
        }
    }

    /// Whether no value was added.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The families that have values.
    pub fn families(&self) -> impl Iterator<Item = u32> + '_ {
        self.entries.iter().map(|e| e.0)
    }

    /// Keeps only the entries of families for which `keep` is true.
    pub fn retain_families(&mut self, keep: impl Fn(u32) -> bool) {
        self.entries.retain(|e| keep(e.0));
        self.index = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| ((e.0, e.1), i))
            .collect();
    }

    /// The statistic with every family weighted 1 (the point estimate).
    pub fn point(&self) -> Option<f64> {
        let p = self.passes.max(1);
        let mut sums = vec![0.0; p];
        let mut counts = vec![0.0; p];
        for &(_, pass, s, c) in &self.entries {
            sums[pass as usize] += s;
            counts[pass as usize] += c;
        }
        let mut total = 0.0;
        let mut n = 0usize;
        for (s, c) in sums.iter().zip(counts.iter()) {
            if *c > 0.0 {
                total += s / c;
                n += 1;
            }
        }
        (n > 0).then(|| total / n as f64)
    }
}

/// A statistic derived from two estimators of the same replicate: `b − a`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Difference {
    /// Index of the subtrahend estimator.
    pub a: usize,
    /// Index of the minuend estimator.
    pub b: usize,
}

/// Bootstrap settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Bootstrap {
    /// Number of replicates (0 = no intervals).
    pub resamples: usize,
    /// Generator seed.
    pub seed: u64,
}

impl Default for Bootstrap {
    fn default() -> Self {
        Bootstrap {
            resamples: 10_000,
            seed: 0,
        }
    }
}

/// The percentile interval of `values` (NaN = no value in that replicate). `None` when fewer
/// than half of the replicates produced a value.
fn percentile_interval(values: &mut [f64], resamples: usize) -> Option<Interval> {
    let mut n = 0;
    for i in 0..values.len() {
        if !values[i].is_nan() {
            values[n] = values[i];
            n += 1;
        }
    }
    if n == 0 || n * 2 < resamples {
        return None;
    }
    let v = &mut values[..n];
    let lo_i = ((0.025 * n as f64).floor() as usize).min(n - 1);
    let hi_i = ((0.975 * n as f64).floor() as usize).min(n - 1);
    let cmp = |a: &f64, b: &f64| a.total_cmp(b);
    let (_, lo, _) = v.select_nth_unstable_by(lo_i, cmp);
    let lo = *lo;
    let (_, hi, _) = v.select_nth_unstable_by(hi_i, cmp);
    Some(Interval { lo, hi: *hi })
}

/// An estimator laid out for the replicate loop: per pass, its families and values in
/// parallel arrays, summed with register accumulators.
struct Frozen {
    pooled: bool,
    passes: Vec<(Vec<u32>, Vec<f64>, Vec<f64>)>,
}

impl Frozen {
    fn of(e: &Estimator) -> Frozen {
        let mut passes: Vec<(Vec<u32>, Vec<f64>, Vec<f64>)> =
            vec![Default::default(); e.passes.max(1)];
        let mut entries = e.entries.clone();
        entries.sort_by_key(|x| (x.1, x.0));
        for (f, p, s, c) in entries {
            let slot = &mut passes[p as usize];
            slot.0.push(f);
            slot.1.push(s);
            slot.2.push(c);
        }
        Frozen {
            pooled: e.kind == Kind::Pooled,
            passes,
        }
    }

    /// Σ w·sum and Σ w·count over one pass.
    fn sums(fam: &[u32], sum: &[f64], cnt: &[f64], w: &[f64]) -> (f64, f64) {
        let (mut s0, mut s1, mut c0, mut c1) = (0.0, 0.0, 0.0, 0.0);
        let mut i = 0;
        while i + 1 < fam.len() {
            let (w0, w1) = (w[fam[i] as usize], w[fam[i + 1] as usize]);
            s0 += w0 * sum[i];
            c0 += w0 * cnt[i];
            s1 += w1 * sum[i + 1];
            c1 += w1 * cnt[i + 1];
            i += 2;
        }
        if i < fam.len() {
            let w0 = w[fam[i] as usize];
            s0 += w0 * sum[i];
            c0 += w0 * cnt[i];
        }
        (s0 + s1, c0 + c1)
    }

    fn eval(&self, w: &[f64]) -> f64 {
        let mut total = 0.0;
        let mut n = 0usize;
        for (fam, sum, cnt) in &self.passes {
            let (s, c) = Frozen::sums(fam, sum, cnt, w);
            if c > 0.0 {
                total += s / c;
                n += 1;
            }
        }
        // A pooled estimator has one pass (all passes were added to pass 0).
        debug_assert!(!self.pooled || self.passes.len() == 1);
        if n == 0 { f64::NAN } else { total / n as f64 }
    }
}

impl Bootstrap {
    /// The generator of replicate `rep`: each replicate has its own stream, so the result does
    /// not depend on how replicates are split over threads.
    fn rng(&self, rep: usize) -> Rng {
        Rng::new(
            self.seed
                ^ (rep as u64)
                    .wrapping_add(1)
                    .wrapping_mul(0xD1B5_4A32_D192_ED03),
        )
    }

    /// Runs the bootstrap: one interval per estimator, then one per difference. An estimator
    /// without values, or with too few replicates that produce a value, gets `None`.
    /// Replicates are spread over the machine's cores; the result is the same on any number.
    pub fn run(
        &self,
        design: &Design,
        estimators: &[Estimator],
        differences: &[Difference],
    ) -> Vec<Option<Interval>> {
        let n_stats = estimators.len() + differences.len();
        if self.resamples == 0 || design.families() == 0 || n_stats == 0 {
            return vec![None; n_stats];
        }
        let r = self.resamples;
        let frozen: Vec<Frozen> = estimators.iter().map(Frozen::of).collect();
        // values[rep * n_stats + stat]
        let mut values = vec![f64::NAN; n_stats * r];
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 8)
            .min(r);
        let per = r.div_ceil(threads);
        std::thread::scope(|scope| {
            for (t, chunk) in values.chunks_mut(per * n_stats).enumerate() {
                let frozen = &frozen;
                scope.spawn(move || {
                    let mut w = vec![0.0; design.families()];
                    for (k, row) in chunk.chunks_mut(n_stats).enumerate() {
                        let rep = t * per + k;
                        design.draw(&mut self.rng(rep), &mut w);
                        for (i, e) in frozen.iter().enumerate() {
                            row[i] = e.eval(&w);
                        }
                        for (j, d) in differences.iter().enumerate() {
                            row[frozen.len() + j] = row[d.b] - row[d.a];
                        }
                    }
                });
            }
        });
        let mut column = vec![0.0; r];
        let mut out = Vec::with_capacity(n_stats);
        for i in 0..n_stats {
            let empty = match i.checked_sub(estimators.len()) {
                None => estimators[i].is_empty(),
                Some(j) => {
                    let d = differences[j];
                    estimators[d.a].is_empty() || estimators[d.b].is_empty()
                }
            };
            if empty {
                out.push(None);
                continue;
            }
            for (rep, x) in column.iter_mut().enumerate() {
                *x = values[rep * n_stats + i];
            }
            out.push(percentile_interval(&mut column, r));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_reproducible_and_uniform_enough() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<u32> = (0..1000).map(|_| a.below(10)).collect();
        let ys: Vec<u32> = (0..1000).map(|_| b.below(10)).collect();
        assert_eq!(xs, ys);
        let mut counts = [0usize; 10];
        let mut c = Rng::new(1);
        for _ in 0..100_000 {
            counts[c.below(10) as usize] += 1;
        }
        for n in counts {
            assert!((9_500..10_500).contains(&n), "{counts:?}");
        }
        assert_ne!(Rng::new(1).next_u64(), Rng::new(2).next_u64());
    }

    #[test]
    fn mean_of_pass_means_matches_the_table_rule() {
        // Pass 0: family 0 has 1.0 and 0.0 (two runs), family 1 has 1.0 → mean 2/3.
        // Pass 1: family 0 has 0.0 → mean 0. Mean over passes: 1/3.
        let mut e = Estimator::new(Kind::MeanOfPassMeans);
        e.add(0, 0, 1.0, 1.0);
        e.add(0, 0, 0.0, 1.0);
        e.add(1, 0, 1.0, 1.0);
        e.add(0, 1, 0.0, 1.0);
        assert!((e.point().unwrap() - 1.0 / 3.0).abs() < 1e-12);
        let mut p = Estimator::new(Kind::Pooled);
        p.add(0, 0, 1.0, 1.0);
        p.add(0, 0, 0.0, 1.0);
        p.add(1, 0, 1.0, 1.0);
        p.add(0, 1, 0.0, 1.0);
        assert!((p.point().unwrap() - 0.5).abs() < 1e-12);
    }

    #[test]
    fn interval_covers_the_estimate_and_shrinks_with_more_families() {
        let run = |k: u32| {
            let design = Design::from_keys((0..k).map(|f| (0, f)));
            let mut e = Estimator::new(Kind::Pooled);
            for f in 0..k {
                e.add(f, 0, f64::from(f % 2), 1.0);
            }
            let ci = Bootstrap {
                resamples: 4000,
                seed: 3,
            }
            .run(&design, &[e], &[])[0]
                .unwrap();
            assert!(ci.contains(0.5), "{ci:?}");
            ci.hi - ci.lo
        };
        let narrow = run(400);
        let wide = run(20);
        assert!(narrow < wide / 2.0, "{narrow} vs {wide}");
        // Binomial SE sqrt(.25/400) = 0.025 → 95 % width ≈ 0.098.
        assert!((0.08..0.12).contains(&narrow), "{narrow}");
    }

    #[test]
    fn same_seed_same_interval_and_a_constant_has_a_point_interval() {
        let design = Design::from_keys((0..30).map(|f| (f % 3, f)));
        let mut e = Estimator::new(Kind::MeanOfPassMeans);
        let mut c = Estimator::new(Kind::MeanOfPassMeans);
        for f in 0..30u32 {
            e.add(f, (f % 2) as u16, f64::from(f).sin().abs(), 1.0);
            c.add(f, 0, 0.5, 1.0);
        }
        let b = Bootstrap {
            resamples: 500,
            seed: 11,
        };
        let d = [Difference { a: 0, b: 1 }];
        let x = b.run(&design, &[e.clone(), c.clone()], &d);
        let y = b.run(&design, &[e, c], &d);
        assert_eq!(x, y);
        assert_eq!(x[1], Some(Interval { lo: 0.5, hi: 0.5 }));
        assert!(x[2].is_some());
        let none = b.run(&design, &[Estimator::new(Kind::Pooled)], &[]);
        assert_eq!(none, vec![None]);
    }
}
