//! The statistics flexio uses to compare runs: percentile bootstrap confidence intervals
//! (classic and Poisson for histograms), Welch's t-test, the Mann-Whitney U test (exact for
//! small untied samples, normal approximation with tie and continuity correction otherwise,
//! and a binned variant for latency histograms), effect sizes (Hedges' g, Cliff's delta) and
//! Holm's multiple-comparison adjustment.
//!
//! Distribution functions (normal, Student's t) come from `statrs`; random numbers from
//! `rand` (uniform indices), `rand_distr` (normal and Poisson samplers) and `rand_pcg` (the
//! seeded generator, whose stream is fixed for a seed). Everything here is deterministic for
//! a seed.

use rand::{Rng as _, SeedableRng};
use rand_distr::{Distribution, Poisson, StandardNormal};
use rand_pcg::Pcg64Mcg;
use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// The seeded generator of the bootstrap (and of the tests' synthetic data): PCG (64-bit
/// MCG, 128-bit state), seeded with `seed_from_u64`, so a seed gives the same resamples on
/// every platform. Reproducible, not cryptographic.
#[derive(Clone, Debug)]
pub struct Rng(Pcg64Mcg);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(Pcg64Mcg::seed_from_u64(seed))
    }
    /// Uniform in [0, 1).
    pub fn f64(&mut self) -> f64 {
        self.0.random()
    }
    /// Uniform integer in [0, n), n > 0.
    pub fn below(&mut self, n: usize) -> usize {
        self.0.random_range(0..n)
    }
    /// Standard normal.
    pub fn normal(&mut self) -> f64 {
        StandardNormal.sample(&mut self.0)
    }
    /// Poisson(lambda); 0 for lambda <= 0.
    pub fn poisson(&mut self, lambda: f64) -> u64 {
        match Poisson::new(lambda) {
            Ok(d) => self.sample_poisson(&d),
            Err(_) => 0,
        }
    }
    /// A draw from a prepared Poisson distribution (no per-draw set-up cost).
    pub(crate) fn sample_poisson(&mut self, d: &Poisson<f64>) -> u64 {
        d.sample(&mut self.0) as u64
    }
}

pub fn mean(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample variance (n - 1 denominator); 0 for fewer than two values.
pub fn variance(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (x.len() - 1) as f64
}

/// Median (mean of the two middle values for an even count).
pub fn median(x: &[f64]) -> f64 {
    if x.is_empty() {
        return f64::NAN;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Quantile of sorted data with linear interpolation (R's type 7), q in [0, 1].
pub fn quantile_sorted(v: &[f64], q: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    let h = (v.len() - 1) as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(v.len() - 1);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

fn std_normal() -> Normal {
    Normal::new(0.0, 1.0).expect("standard normal")
}

/// Two-sided p-value of a standard normal statistic.
pub fn normal_p(z: f64) -> f64 {
    if z.is_nan() {
        return 1.0;
    }
    (2.0 * std_normal().sf(z.abs())).min(1.0)
}

/// Result of a t-test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TTest {
    /// t statistic of (b - a).
    pub t: f64,
    /// Welch-Satterthwaite degrees of freedom.
    pub df: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Mean difference b - a and its 95% confidence interval.
    pub diff: f64,
    pub ci: (f64, f64),
}

/// Student's t distribution's 97.5% quantile for `df` degrees of freedom (the half-width
/// of a 95% confidence interval in standard errors); `None` for `df` <= 0.
pub fn t975(df: f64) -> Option<f64> {
    Some(StudentsT::new(0.0, 1.0, df).ok()?.inverse_cdf(0.975))
}

/// Two-sided p-value of Student's t statistic `t` with `df` degrees of freedom (1 when
/// undefined).
pub fn t_two_sided(t: f64, df: f64) -> f64 {
    match StudentsT::new(0.0, 1.0, df) {
        Ok(d) if t.is_finite() => (2.0 * d.sf(t.abs())).min(1.0),
        _ => 1.0,
    }
}

/// Welch's unequal-variance t-test from summaries (mean, sample standard deviation, n).
/// `None` with fewer than two values on a side.
pub fn welch_summary(ma: f64, sa: f64, na: f64, mb: f64, sb: f64, nb: f64) -> Option<TTest> {
    if na < 2.0 || nb < 2.0 || !(ma.is_finite() && mb.is_finite()) {
        return None;
    }
    let (va, vb) = (sa * sa / na, sb * sb / nb);
    let diff = mb - ma;
    let se2 = va + vb;
    if se2 <= 0.0 {
        // No variation at all: identical means are no difference, different ones are.
        let p = if diff == 0.0 { 1.0 } else { 0.0 };
        let t = if diff == 0.0 {
            0.0
        } else {
            diff.signum() * f64::INFINITY
        };
        return Some(TTest {
            t,
            df: na + nb - 2.0,
            p,
            diff,
            ci: (diff, diff),
        });
    }
    let se = se2.sqrt();
    let t = diff / se;
    let df = se2 * se2 / (va * va / (na - 1.0) + vb * vb / (nb - 1.0));
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = (2.0 * dist.sf(t.abs())).min(1.0);
    let q = dist.inverse_cdf(0.975);
    Some(TTest {
        t,
        df,
        p,
        diff,
        ci: (diff - q * se, diff + q * se),
    })
}

/// Welch's t-test of two samples.
pub fn welch(a: &[f64], b: &[f64]) -> Option<TTest> {
    welch_summary(
        mean(a),
        variance(a).sqrt(),
        a.len() as f64,
        mean(b),
        variance(b).sqrt(),
        b.len() as f64,
    )
}

/// Result of a Mann-Whitney U test.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct UTest {
    /// U of sample b: pairs (a, b) with b > a, ties counted one half.
    pub u_b: f64,
    /// Normal statistic (with continuity and tie correction); 0 for the exact test.
    pub z: f64,
    /// Two-sided p-value.
    pub p: f64,
    /// Whether `p` comes from the exact distribution of U.
    pub exact: bool,
    /// Cliff's delta, P(b > a) - P(b < a), in [-1, 1].
    pub cliffs_delta: f64,
}

impl UTest {
    /// Probability of superiority: P(b > a) + P(b = a) / 2.
    pub fn prob_superiority(&self) -> f64 {
        (self.cliffs_delta + 1.0) / 2.0
    }
}

/// Exact distribution of U for sizes m, n without ties: counts of each U value, from the
/// recurrence N(u; i, j) = N(u - j; i - 1, j) + N(u; i, j - 1).
fn exact_u_counts(m: usize, n: usize) -> Vec<f64> {
    let max = m * n;
    // row[j] = counts for (i, j) at the current i.
    let mut row: Vec<Vec<f64>> = (0..=n)
        .map(|_| {
            let mut v = vec![0.0; max + 1];
            v[0] = 1.0;
            v
        })
        .collect();
    for _i in 1..=m {
        let mut new: Vec<Vec<f64>> = Vec::with_capacity(n + 1);
        // j = 0: only U = 0.
        let mut first = vec![0.0; max + 1];
        first[0] = 1.0;
        new.push(first);
        for j in 1..=n {
            let mut v = vec![0.0; max + 1];
            for u in 0..=max {
                let a = if u >= j { row[j][u - j] } else { 0.0 };
                v[u] = a + new[j - 1][u];
            }
            new.push(v);
        }
        row = new;
    }
    row.swap_remove(n)
}

/// Mann-Whitney U test of two samples (two-sided). Exact when both samples have fewer than
/// 50 values and there are no ties (as R's `wilcox.test`), otherwise the normal
/// approximation with tie correction and continuity correction.
pub fn mann_whitney(a: &[f64], b: &[f64]) -> Option<UTest> {
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (na, nb) = (a.len(), b.len());
    let mut all: Vec<(f64, bool)> = a
        .iter()
        .map(|v| (*v, false))
        .chain(b.iter().map(|v| (*v, true)))
        .collect();
    all.sort_by(|x, y| x.0.total_cmp(&y.0));
    // Midranks; tie groups for the correction.
    let mut rank_b = 0.0;
    let mut tie_term = 0.0;
    let mut ties = false;
    let mut i = 0;
    while i < all.len() {
        let mut j = i;
        while j + 1 < all.len() && all[j + 1].0 == all[i].0 {
            j += 1;
        }
        let t = (j - i + 1) as f64;
        let r = (i + j) as f64 / 2.0 + 1.0;
        for x in &all[i..=j] {
            if x.1 {
                rank_b += r;
            }
        }
        if t > 1.0 {
            ties = true;
            tie_term += t * t * t - t;
        }
        i = j + 1;
    }
    let u_b = rank_b - (nb * (nb + 1)) as f64 / 2.0;
    let (fa, fb) = (na as f64, nb as f64);
    let cliffs_delta = 2.0 * u_b / (fa * fb) - 1.0;
    if !ties && na < 50 && nb < 50 {
        let counts = exact_u_counts(nb, na);
        let total: f64 = counts.iter().sum();
        let u = u_b.round() as usize;
        let le: f64 = counts[..=u].iter().sum::<f64>() / total;
        let ge: f64 = counts[u..].iter().sum::<f64>() / total;
        return Some(UTest {
            u_b,
            z: 0.0,
            p: (2.0 * le.min(ge)).min(1.0),
            exact: true,
            cliffs_delta,
        });
    }
    Some(u_normal(u_b, fa, fb, tie_term, cliffs_delta))
}

fn u_normal(u_b: f64, fa: f64, fb: f64, tie_term: f64, cliffs_delta: f64) -> UTest {
    let n = fa + fb;
    let mu = fa * fb / 2.0;
    let var = fa * fb / 12.0 * ((n + 1.0) - tie_term / (n * (n - 1.0)));
    let d = u_b - mu;
    let sign = if d > 0.0 {
        1.0
    } else if d < 0.0 {
        -1.0
    } else {
        0.0
    };
    let z = if var > 0.0 {
        (d - 0.5 * sign) / var.sqrt()
    } else {
        0.0
    };
    UTest {
        u_b,
        z,
        p: normal_p(z),
        exact: false,
        cliffs_delta,
    }
}

/// Mann-Whitney U test on two binned distributions (latency histograms with the same
/// bucket layout): `a` and `b` are (bucket value, count), ascending by value. Values in one
/// bucket are ties, so U and the tie correction are exact for the binned data, in
/// O(buckets). With millions of samples any shift is "significant": read the effect size
/// (Cliff's delta) with it.
pub fn mann_whitney_binned(a: &[(u64, u64)], b: &[(u64, u64)]) -> Option<UTest> {
    let na: u64 = a.iter().map(|x| x.1).sum();
    let nb: u64 = b.iter().map(|x| x.1).sum();
    if na == 0 || nb == 0 {
        return None;
    }
    let (mut i, mut j) = (0, 0);
    let mut below_a = 0u64; // a-values below the current bucket
    let mut u_b = 0.0;
    let mut tie_term = 0.0;
    while i < a.len() || j < b.len() {
        let va = a.get(i).map(|x| x.0).unwrap_or(u64::MAX);
        let vb = b.get(j).map(|x| x.0).unwrap_or(u64::MAX);
        let v = va.min(vb);
        let ca = if va == v {
            i += 1;
            a[i - 1].1
        } else {
            0
        };
        let cb = if vb == v {
            j += 1;
            b[j - 1].1
        } else {
            0
        };
        u_b += cb as f64 * (below_a as f64 + 0.5 * ca as f64);
        let t = (ca + cb) as f64;
        tie_term += t * t * t - t;
        below_a += ca;
    }
    let (fa, fb) = (na as f64, nb as f64);
    let cliffs_delta = 2.0 * u_b / (fa * fb) - 1.0;
    Some(u_normal(u_b, fa, fb, tie_term, cliffs_delta))
}

/// Cliff's delta of two samples: P(b > a) - P(b < a).
pub fn cliffs_delta(a: &[f64], b: &[f64]) -> f64 {
    mann_whitney(a, b).map(|u| u.cliffs_delta).unwrap_or(0.0)
}

/// Hedges' g (bias-corrected standardised mean difference of b - a) from summaries; 0 when
/// there is no spread to standardise by.
pub fn hedges_g_summary(ma: f64, sa: f64, na: f64, mb: f64, sb: f64, nb: f64) -> f64 {
    if na + nb < 3.0 {
        return 0.0;
    }
    let pooled = (((na - 1.0) * sa * sa + (nb - 1.0) * sb * sb) / (na + nb - 2.0)).sqrt();
    if pooled <= 0.0 || !pooled.is_finite() {
        return 0.0;
    }
    let j = 1.0 - 3.0 / (4.0 * (na + nb) - 9.0);
    j * (mb - ma) / pooled
}

pub fn hedges_g(a: &[f64], b: &[f64]) -> f64 {
    hedges_g_summary(
        mean(a),
        variance(a).sqrt(),
        a.len() as f64,
        mean(b),
        variance(b).sqrt(),
        b.len() as f64,
    )
}

/// A bootstrap estimate: the replicates' 2.5 % and 97.5 % quantiles (percentile bootstrap)
/// and a two-sided bootstrap p-value for "the statistic is 0".
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Boot {
    pub ci: (f64, f64),
    pub p: f64,
}

fn boot_from(mut reps: Vec<f64>) -> Boot {
    reps.retain(|v| v.is_finite());
    if reps.is_empty() {
        return Boot {
            ci: (f64::NAN, f64::NAN),
            p: 1.0,
        };
    }
    reps.sort_by(f64::total_cmp);
    let n = reps.len() as f64;
    let le = reps.iter().filter(|v| **v <= 0.0).count() as f64;
    let ge = reps.iter().filter(|v| **v >= 0.0).count() as f64;
    Boot {
        ci: (quantile_sorted(&reps, 0.025), quantile_sorted(&reps, 0.975)),
        p: ((2.0 * le.min(ge) + 1.0) / (n + 1.0)).min(1.0),
    }
}

/// Percentile bootstrap of `stat(b_resample, a_resample)` for two independent samples
/// (e.g. the relative difference of means in percent), `reps` replicates, seeded.
pub fn bootstrap2(
    a: &[f64],
    b: &[f64],
    reps: usize,
    seed: u64,
    stat: impl Fn(&[f64], &[f64]) -> f64,
) -> Boot {
    if a.is_empty() || b.is_empty() {
        return boot_from(Vec::new());
    }
    let mut rng = Rng::new(seed);
    let (mut ra, mut rb) = (vec![0.0; a.len()], vec![0.0; b.len()]);
    let out = (0..reps)
        .map(|_| {
            ra.iter_mut().for_each(|x| *x = a[rng.below(a.len())]);
            rb.iter_mut().for_each(|x| *x = b[rng.below(b.len())]);
            stat(&ra, &rb)
        })
        .collect();
    boot_from(out)
}

/// Relative difference (b - a) / a in percent.
pub fn rel_pct(a: f64, b: f64) -> f64 {
    (b - a) / a * 100.0
}

/// Relative difference of means, percent (a bootstrap statistic).
pub fn rel_mean_pct(a: &[f64], b: &[f64]) -> f64 {
    rel_pct(mean(a), mean(b))
}

/// Relative difference of medians, percent (a bootstrap statistic).
pub fn rel_median_pct(a: &[f64], b: &[f64]) -> f64 {
    rel_pct(median(a), median(b))
}

/// A binned distribution: bucket values (ascending) with counts.
pub type Bins = [(u64, u64)];

/// Mean of a binned distribution (bucket values stand for their samples).
pub fn bins_mean(b: &Bins) -> f64 {
    let n: u64 = b.iter().map(|x| x.1).sum();
    if n == 0 {
        return f64::NAN;
    }
    b.iter().map(|(v, c)| *v as f64 * *c as f64).sum::<f64>() / n as f64
}

/// fio's percentile rule on a binned distribution: the value of the first bucket whose
/// cumulative count reaches p/100 of the total.
pub fn bins_percentile(b: &Bins, p: f64) -> f64 {
    let n: u64 = b.iter().map(|x| x.1).sum();
    if n == 0 {
        return f64::NAN;
    }
    let target = p / 100.0 * n as f64;
    let mut sum = 0u64;
    for (v, c) in b {
        sum += c;
        if sum as f64 >= target {
            return *v as f64;
        }
    }
    b.last().map(|x| x.0 as f64).unwrap_or(f64::NAN)
}

/// Poisson bootstrap of a statistic of two binned distributions: each replicate draws every
/// bucket's count from Poisson(count), which resamples the underlying samples with
/// Poisson(1) weights (an approximation of the multinomial bootstrap that costs
/// O(buckets) per replicate instead of O(samples)). Assumes independent samples.
pub fn poisson_bootstrap2(
    a: &Bins,
    b: &Bins,
    reps: usize,
    seed: u64,
    stat: impl Fn(&Bins, &Bins) -> f64,
) -> Boot {
    if a.is_empty() || b.is_empty() {
        return boot_from(Vec::new());
    }
    let mut rng = Rng::new(seed);
    let (mut ra, mut rb) = (a.to_vec(), b.to_vec());
    // Every bucket's distribution once (None for an empty bucket, which stays empty).
    let dist = |x: &Bins| -> Vec<Option<Poisson<f64>>> {
        x.iter().map(|c| Poisson::new(c.1 as f64).ok()).collect()
    };
    let (da, db) = (dist(a), dist(b));
    let draw = |rng: &mut Rng, r: &mut [(u64, u64)], d: &[Option<Poisson<f64>>]| {
        for (x, d) in r.iter_mut().zip(d) {
            x.1 = d.as_ref().map_or(0, |d| rng.sample_poisson(d));
        }
    };
    let out = (0..reps)
        .map(|_| {
            draw(&mut rng, &mut ra, &da);
            draw(&mut rng, &mut rb, &db);
            stat(&ra, &rb)
        })
        .collect();
    boot_from(out)
}

/// Holm's step-down adjustment of p-values (family-wise error control), in input order.
pub fn holm(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let mut idx: Vec<usize> = (0..m).collect();
    idx.sort_by(|&x, &y| p[x].total_cmp(&p[y]));
    let mut out = vec![1.0; m];
    let mut running: f64 = 0.0;
    for (k, &i) in idx.iter().enumerate() {
        let adj = ((m - k) as f64 * p[i]).min(1.0);
        running = running.max(adj);
        out[i] = running;
    }
    out
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
