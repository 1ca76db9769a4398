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

/// Most replicate values the bootstrap holds at once (16 MiB of `f64`), whatever the number of
/// statistics: they are bootstrapped in batches that fit, so a report over a thousand agents
/// needs no more memory for its intervals than one over three. (With more resamples than a
/// third of this, a batch is one statistic and the buffer is three resamples' worth.)
pub const BOOTSTRAP_BUFFER_VALUES: usize = 1 << 21;

/// Most resamples a bootstrap draws (`--resamples`): the percentile of one statistic needs all
/// of its replicates in memory, 8 MB at this cap. Larger settings are drawn at this number.
pub const MAX_RESAMPLES: usize = 1_000_000;

/// The estimators of one batch laid out for the replicate loop: per statistic its passes, per
/// pass its families and values, all in flat arrays (one allocation each, read in order).
struct FrozenBatch {
    /// Per statistic, its range in `passes`.
    stats: Vec<(usize, usize)>,
    /// Per pass, its range in the entry arrays.
    passes: Vec<(usize, usize)>,
    fam: Vec<u32>,
    sum: Vec<f64>,
    cnt: Vec<f64>,
}

impl FrozenBatch {
    fn of<'e>(estimators: impl Iterator<Item = &'e Estimator>) -> FrozenBatch {
        let mut b = FrozenBatch {
            stats: Vec::new(),
            passes: Vec::new(),
            fam: Vec::new(),
            sum: Vec::new(),
            cnt: Vec::new(),
        };
        for e in estimators {
            let first_pass = b.passes.len();
            let mut entries = e.entries.clone();
            entries.sort_by_key(|x| (x.1, x.0));
            let mut rest = entries.as_slice();
            // Every pass up to the last one seen, empty ones included (they add nothing).
            for p in 0..e.passes.max(1) {
                let start = b.fam.len();
                let here = rest.iter().take_while(|x| x.1 as usize == p).count();
                for &(f, _, s, c) in &rest[..here] {
                    b.fam.push(f);
                    b.sum.push(s);
                    b.cnt.push(c);
                }
                rest = &rest[here..];
                b.passes.push((start, b.fam.len()));
            }
            b.stats.push((first_pass, b.passes.len()));
        }
        b
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

    /// Statistic `k` under the family weights `w` (NaN when no pass has a value). A pooled
    /// estimator has one pass (all passes were added to pass 0), so this is its ratio.
    fn eval(&self, k: usize, w: &[f64]) -> f64 {
        let (p0, p1) = self.stats[k];
        let mut total = 0.0;
        let mut n = 0usize;
        for &(a, b) in &self.passes[p0..p1] {
            let (s, c) = FrozenBatch::sums(&self.fam[a..b], &self.sum[a..b], &self.cnt[a..b], w);
            if c > 0.0 {
                total += s / c;
                n += 1;
            }
        }
        if n == 0 { f64::NAN } else { total / n as f64 }
    }
}

/// Where a batch keeps a statistic's replicates.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// The `k`-th evaluated estimator.
    Evaluated(usize),
    /// The `k`-th difference (stored after the evaluated estimators).
    Difference(usize),
}

/// One batch: the estimators it evaluates (its own and the operands of its differences), the
/// differences as pairs of those slots, and the statistics it reports with their slots.
#[derive(Default)]
struct Batch {
    evaluated: Vec<usize>,
    /// `(slot of b, slot of a)` among the evaluated: the difference is `b − a`.
    differences: Vec<(usize, usize)>,
    /// `(statistic index, slot)`.
    reported: Vec<(usize, Slot)>,
}

impl Batch {
    fn slots(&self) -> usize {
        self.evaluated.len() + self.differences.len()
    }

    /// The row of a slot in the batch's replicate buffer.
    fn row(&self, slot: Slot) -> usize {
        match slot {
            Slot::Evaluated(k) => k,
            Slot::Difference(d) => self.evaluated.len() + d,
        }
    }
}

/// Splits the statistics to compute into batches of at most `max_slots` slots each (a slot is
/// one statistic's replicates; a difference whose operands are in another batch evaluates them
/// again, at most two more slots).
fn batches(
    wanted: &[usize],
    n_estimators: usize,
    differences: &[Difference],
    max_slots: usize,
) -> Vec<Batch> {
    let mut out = Vec::new();
    let mut cur = Batch::default();
    let mut slot_of: HashMap<usize, usize> = HashMap::new();
    for &i in wanted {
        let operands = match i.checked_sub(n_estimators) {
            None => [i, i],
            Some(j) => [differences[j].a, differences[j].b],
        };
        let mut new_slots = usize::from(i >= n_estimators);
        for (n, e) in operands.iter().enumerate() {
            let repeat = n == 1 && operands[0] == operands[1];
            new_slots += usize::from(!repeat && !slot_of.contains_key(e));
        }
        if cur.slots() > 0 && cur.slots() + new_slots > max_slots {
            out.push(std::mem::take(&mut cur));
            slot_of.clear();
        }
        for e in operands {
            slot_of.entry(e).or_insert_with(|| {
                cur.evaluated.push(e);
                cur.evaluated.len() - 1
            });
        }
        let slot = match i.checked_sub(n_estimators) {
            None => Slot::Evaluated(slot_of[&i]),
            Some(j) => {
                let d = differences[j];
                cur.differences.push((slot_of[&d.b], slot_of[&d.a]));
                Slot::Difference(cur.differences.len() - 1)
            }
        };
        cur.reported.push((i, slot));
    }
    if cur.slots() > 0 {
        out.push(cur);
    }
    out
}

/// The largest replicate buffer a bootstrap of this process held (for the tests of the bound).
#[cfg(test)]
static LARGEST_BUFFER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

impl Bootstrap {
    /// The generator of replicate `rep`: each replicate has its own stream, so the result does
    /// not depend on how replicates are split over threads or statistics over batches.
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
    ///
    /// Statistics are bootstrapped in batches whose replicates fit in
    /// [`BOOTSTRAP_BUFFER_VALUES`]; every batch draws the same replicates again (replicate
    /// `k` has its own generator), so the intervals are those of one pass over all of them.
    /// Replicates are spread over the machine's cores; the result is the same on any number.
    /// At most [`MAX_RESAMPLES`] resamples are drawn.
    pub fn run(
        &self,
        design: &Design,
        estimators: &[Estimator],
        differences: &[Difference],
    ) -> Vec<Option<Interval>> {
        self.run_in(design, estimators, differences, BOOTSTRAP_BUFFER_VALUES)
    }

    /// [`Bootstrap::run`] holding at most `buffer_values` replicates at once.
    fn run_in(
        &self,
        design: &Design,
        estimators: &[Estimator],
        differences: &[Difference],
        buffer_values: usize,
    ) -> Vec<Option<Interval>> {
        let n_est = estimators.len();
        let n_stats = n_est + differences.len();
        let mut out = vec![None; n_stats];
        if self.resamples == 0 || design.families() == 0 || n_stats == 0 {
            return out;
        }
        let r = self.resamples.min(MAX_RESAMPLES);
        let empty = |i: usize| match i.checked_sub(n_est) {
            None => estimators[i].is_empty(),
            Some(j) => {
                estimators[differences[j].a].is_empty() || estimators[differences[j].b].is_empty()
            }
        };
        let wanted: Vec<usize> = (0..n_stats).filter(|&i| !empty(i)).collect();
        let max_slots = (buffer_values / r).max(3);
        let threads = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
            .clamp(1, 8)
            .min(r);
        let per = r.div_ceil(threads);
        // Two buffers for the whole run, reused by every batch: the replicates of a batch
        // (per thread, statistic by statistic) and one statistic's column.
        let mut values: Vec<f64> = Vec::new();
        let mut column: Vec<f64> = Vec::with_capacity(r);
        for batch in batches(&wanted, n_est, differences, max_slots) {
            let frozen = FrozenBatch::of(batch.evaluated.iter().map(|&i| &estimators[i]));
            let slots = batch.slots();
            values.clear();
            values.reserve_exact(slots * r);
            values.resize(slots * r, f64::NAN);
            #[cfg(test)]
            LARGEST_BUFFER.fetch_max(
                values.capacity() + column.capacity(),
                std::sync::atomic::Ordering::Relaxed,
            );
            std::thread::scope(|scope| {
                for (t, chunk) in values.chunks_mut(per * slots).enumerate() {
                    let (frozen, batch) = (&frozen, &batch);
                    scope.spawn(move || {
                        // This thread's replicates, statistic by statistic: chunk[s * len + k].
                        let len = chunk.len() / slots;
                        let mut w = vec![0.0; design.families()];
                        let n_eval = batch.evaluated.len();
                        for k in 0..len {
                            design.draw(&mut self.rng(t * per + k), &mut w);
                            for s in 0..n_eval {
                                chunk[s * len + k] = frozen.eval(s, &w);
                            }
                            for (d, &(b, a)) in batch.differences.iter().enumerate() {
                                chunk[(n_eval + d) * len + k] =
                                    chunk[b * len + k] - chunk[a * len + k];
                            }
                        }
                    });
                }
            });
            for &(stat, slot) in &batch.reported {
                let row = batch.row(slot);
                column.clear();
                for chunk in values.chunks(per * slots) {
                    let len = chunk.len() / slots;
                    column.extend_from_slice(&chunk[row * len..(row + 1) * len]);
                }
                out[stat] = percentile_interval(&mut column, r);
            }
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

    /// Many estimators over 40 families in 4 strata, two passes, and differences between them.
    fn many(n: usize) -> (Design, Vec<Estimator>, Vec<Difference>) {
        let design = Design::from_keys((0..40u32).map(|f| (f % 4, f)));
        let mut rng = Rng::new(5);
        let estimators: Vec<Estimator> = (0..n)
            .map(|i| {
                let kind = if i % 2 == 0 {
                    Kind::Pooled
                } else {
                    Kind::MeanOfPassMeans
                };
                let mut e = Estimator::new(kind);
                // Some estimators are empty: they get no interval.
                if i % 17 != 3 {
                    for _ in 0..=(i % 5) {
                        let v = f64::from(rng.below(100)) / 100.0;
                        e.add(rng.below(40), rng.below(2) as u16, v, 1.0);
                    }
                }
                e
            })
            .collect();
        let differences = (0..n / 3)
            .map(|j| Difference {
                a: (j * 7) % n,
                b: (j * 13 + 1) % n,
            })
            .collect();
        (design, estimators, differences)
    }

    /// The intervals of one statistic computed alone, replicate by replicate (the definition).
    fn one_by_one(
        b: Bootstrap,
        design: &Design,
        es: &[Estimator],
        ds: &[Difference],
    ) -> Vec<Option<Interval>> {
        let stat = |i: usize, w: &[f64]| -> f64 {
            let frozen = FrozenBatch::of(std::iter::once(&es[i]));
            frozen.eval(0, w)
        };
        (0..es.len() + ds.len())
            .map(|i| {
                let (a, b2) = match i.checked_sub(es.len()) {
                    None => (i, None),
                    Some(j) => (ds[j].a, Some(ds[j].b)),
                };
                if es[a].is_empty() || b2.is_some_and(|x| es[x].is_empty()) {
                    return None;
                }
                let mut w = vec![0.0; design.families()];
                let mut column: Vec<f64> = (0..b.resamples)
                    .map(|rep| {
                        design.draw(&mut b.rng(rep), &mut w);
                        match b2 {
                            None => stat(a, &w),
                            Some(x) => stat(x, &w) - stat(a, &w),
                        }
                    })
                    .collect();
                percentile_interval(&mut column, b.resamples)
            })
            .collect()
    }

    #[test]
    fn batches_give_the_intervals_of_each_statistic_alone() {
        let (design, es, ds) = many(60);
        let b = Bootstrap {
            resamples: 300,
            seed: 9,
        };
        let want = one_by_one(b, &design, &es, &ds);
        assert!(want.iter().filter(|x| x.is_some()).count() > 50);
        // Whole run in one batch, and in batches of three slots (differences whose operands
        // sit in other batches included).
        assert_eq!(b.run(&design, &es, &ds), want);
        assert_eq!(b.run_in(&design, &es, &ds, 3 * 300), want);
        assert_eq!(b.run_in(&design, &es, &ds, 7 * 300), want);
    }

    /// Issue 30: every statistic's replicates were held at once (2.5 GB for 300 agents). The
    /// buffer is now bounded by [`BOOTSTRAP_BUFFER_VALUES`] (plus one column) however many
    /// statistics there are.
    #[test]
    fn the_replicate_buffer_does_not_grow_with_the_number_of_statistics() {
        let (design, es, ds) = many(6_000);
        let r = 2_000;
        let all_at_once = (es.len() + ds.len()) * r;
        assert!(all_at_once > 4 * BOOTSTRAP_BUFFER_VALUES);
        let out = Bootstrap {
            resamples: r,
            seed: 1,
        }
        .run(&design, &es, &ds);
        assert_eq!(out.len(), es.len() + ds.len());
        assert!(out.iter().filter(|x| x.is_some()).count() > 7_000);
        let largest = LARGEST_BUFFER.load(std::sync::atomic::Ordering::Relaxed);
        // Other tests of this crate bootstrap at the same time, with at most the default
        // 10,000 resamples: one batch and one column of theirs fit the same bound.
        assert!(
            largest <= BOOTSTRAP_BUFFER_VALUES + 10_000,
            "{largest} values held at once"
        );
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
