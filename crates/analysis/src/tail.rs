//! Tests that see the tail, shared by `compare` and `rt-study`: a run-blocked bootstrap test
//! of a high quantile (p99, p99.9) on the pooled responses, the two-sample Kolmogorov-Smirnov
//! test of the whole distribution, the effect each test could have detected, and the
//! warnings a few runs deserve (bimodal runs, drift).
//!
//! The quantile test resamples in two stages, as the runs were made: first the runs of each
//! side (with replacement), then each chosen run's responses (Poisson weights on its
//! latency buckets). Its statistic is the log ratio of the pooled quantiles, B over A. A
//! difference that only some runs show (bimodal runs, one slow run) widens the interval
//! through the first stage, so it is not called significant on the strength of requests
//! that all came from one run; with one run per side only the second stage is left, the
//! per-request view, which the verdicts then say.

use crate::stats::{self, Bins, Rng};
use rand_distr::Poisson;

/// z for a two-sided 5% test and for 80% power: the detectable effect is (z_a + z_b) × SE.
const Z_ALPHA: f64 = 1.959_964;
const Z_POWER: f64 = 0.841_621;

/// A quantile of B against A.
#[derive(Clone, Debug, PartialEq)]
pub struct QuantileTest {
    /// The percentile tested (99.0, 99.9, ...).
    pub pct: f64,
    /// The pooled quantiles of each side (ns).
    pub a: f64,
    pub b: f64,
    /// (B - A) / A in percent, and its 95% bootstrap interval.
    pub diff_pct: f64,
    pub ci_pct: (f64, f64),
    /// Two-sided bootstrap p-value for "no change".
    pub p: f64,
    /// The smallest change (percent, either way) this design detects with 80% power: the
    /// bootstrap standard error of the log ratio times 2.8.
    pub detectable_pct: f64,
    /// Runs per side.
    pub runs: (usize, usize),
}

/// One side's runs over a common list of bucket values.
struct Pool {
    /// Bucket values, ascending, of every run of the side.
    values: Vec<u64>,
    /// Per run: (index into `values`, Poisson(count)) for its non-empty buckets.
    runs: Vec<Vec<(usize, Option<Poisson<f64>>)>>,
    counts: Vec<Vec<u64>>,
}

impl Pool {
    fn new(runs: &[Vec<(u64, u64)>]) -> Pool {
        let mut values: Vec<u64> = runs.iter().flatten().map(|b| b.0).collect();
        values.sort_unstable();
        values.dedup();
        let idx = |v: u64| values.binary_search(&v).unwrap_or(0);
        let r = runs
            .iter()
            .map(|run| {
                run.iter()
                    .filter(|b| b.1 > 0)
                    .map(|b| (idx(b.0), Poisson::new(b.1 as f64).ok()))
                    .collect()
            })
            .collect();
        let counts = runs
            .iter()
            .map(|run| run.iter().filter(|b| b.1 > 0).map(|b| b.1).collect())
            .collect();
        Pool {
            values,
            runs: r,
            counts,
        }
    }

    /// The pooled quantile of the runs as observed.
    fn observed(&self, pct: f64) -> f64 {
        let mut acc = vec![0u64; self.values.len()];
        for (run, counts) in self.runs.iter().zip(&self.counts) {
            for ((i, _), c) in run.iter().zip(counts) {
                acc[*i] += c;
            }
        }
        self.quantile(&acc, pct)
    }

    /// One replicate: runs drawn with replacement (when there are several), each run's
    /// buckets redrawn from Poisson(count); the pooled quantile.
    fn replicate(&self, rng: &mut Rng, acc: &mut [u64], pct: f64) -> f64 {
        acc.iter_mut().for_each(|c| *c = 0);
        let k = self.runs.len();
        for j in 0..k {
            let r = if k > 1 { rng.below(k) } else { j };
            for (i, d) in &self.runs[r] {
                if let Some(d) = d {
                    acc[*i] += rng.sample_poisson(d);
                }
            }
        }
        self.quantile(acc, pct)
    }

    /// fio's rule: the first bucket whose cumulative count reaches pct% of the total.
    fn quantile(&self, acc: &[u64], pct: f64) -> f64 {
        let n: u64 = acc.iter().sum();
        if n == 0 {
            return f64::NAN;
        }
        let target = pct / 100.0 * n as f64;
        let mut sum = 0u64;
        for (i, c) in acc.iter().enumerate() {
            sum += c;
            if sum as f64 >= target {
                return self.values[i] as f64;
            }
        }
        self.values.last().map(|v| *v as f64).unwrap_or(f64::NAN)
    }
}

/// The run-blocked bootstrap test of percentile `pct` of B's responses against A's, each
/// side given as its runs' latency buckets (value ns, count). `None` without data on a side.
pub fn quantile_test(
    a: &[Vec<(u64, u64)>],
    b: &[Vec<(u64, u64)>],
    pct: f64,
    reps: usize,
    seed: u64,
) -> Option<QuantileTest> {
    let nonempty = |s: &[Vec<(u64, u64)>]| -> Vec<Vec<(u64, u64)>> {
        s.iter()
            .filter(|r| r.iter().any(|x| x.1 > 0))
            .cloned()
            .collect()
    };
    let (a, b) = (nonempty(a), nonempty(b));
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let (pa, pb) = (Pool::new(&a), Pool::new(&b));
    let (qa, qb) = (pa.observed(pct), pb.observed(pct));
    if !(qa > 0.0 && qb > 0.0) {
        return None;
    }
    let mut rng = Rng::new(seed);
    let (mut acc_a, mut acc_b) = (vec![0u64; pa.values.len()], vec![0u64; pb.values.len()]);
    let mut reps_v: Vec<f64> = (0..reps.max(100))
        .map(|_| {
            let x = pa.replicate(&mut rng, &mut acc_a, pct);
            let y = pb.replicate(&mut rng, &mut acc_b, pct);
            (y / x).ln()
        })
        .filter(|v| v.is_finite())
        .collect();
    if reps_v.len() < 50 {
        return None;
    }
    reps_v.sort_by(f64::total_cmp);
    let n = reps_v.len() as f64;
    let le = reps_v.iter().filter(|v| **v <= 0.0).count() as f64;
    let ge = reps_v.iter().filter(|v| **v >= 0.0).count() as f64;
    let p = ((2.0 * le.min(ge) + 1.0) / (n + 1.0)).min(1.0);
    let lo = stats::quantile_sorted(&reps_v, 0.025);
    let hi = stats::quantile_sorted(&reps_v, 0.975);
    let se = stats::variance(&reps_v).sqrt();
    let pct_of = |l: f64| (l.exp() - 1.0) * 100.0;
    Some(QuantileTest {
        pct,
        a: qa,
        b: qb,
        diff_pct: (qb / qa - 1.0) * 100.0,
        ci_pct: (pct_of(lo), pct_of(hi)),
        p,
        detectable_pct: pct_of((Z_ALPHA + Z_POWER) * se),
        runs: (a.len(), b.len()),
    })
}

/// The two-sample Kolmogorov-Smirnov test on pooled, binned responses.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ks {
    /// The largest distance between the two empirical distribution functions.
    pub d: f64,
    /// Asymptotic p-value (Kolmogorov's series; conservative with the ties binning makes).
    pub p: f64,
    /// Where the distance is largest (ns): which part of the distribution moved.
    pub at: u64,
}

/// KS distance from which a significant difference counts as a change of the distribution
/// rather than a detail that millions of requests make "significant".
pub const KS_MIN_D: f64 = 0.1;

pub fn ks_binned(a: &Bins, b: &Bins) -> Option<Ks> {
    let na: u64 = a.iter().map(|x| x.1).sum();
    let nb: u64 = b.iter().map(|x| x.1).sum();
    if na == 0 || nb == 0 {
        return None;
    }
    let (mut i, mut j) = (0usize, 0usize);
    let (mut ca, mut cb) = (0u64, 0u64);
    let (mut d, mut at) = (0.0f64, 0u64);
    while i < a.len() || j < b.len() {
        let va = a.get(i).map(|x| x.0).unwrap_or(u64::MAX);
        let vb = b.get(j).map(|x| x.0).unwrap_or(u64::MAX);
        let v = va.min(vb);
        if va == v {
            ca += a[i].1;
            i += 1;
        }
        if vb == v {
            cb += b[j].1;
            j += 1;
        }
        let gap = (ca as f64 / na as f64 - cb as f64 / nb as f64).abs();
        if gap > d {
            d = gap;
            at = v;
        }
    }
    let ne = (na as f64 * nb as f64) / (na + nb) as f64;
    let lambda = (ne.sqrt() + 0.12 + 0.11 / ne.sqrt()) * d;
    Some(Ks {
        d,
        p: kolmogorov_q(lambda),
        at,
    })
}

/// The KS distance tested across runs: the runs' side labels permuted (every split when
/// there are at most `max_splits`, else that many random ones, seeded), the pooled distance
/// of each split against the observed one. The p-value of the whole-distribution test when
/// each side has several runs: a difference carried by one or two runs is not significant.
/// Its smallest possible value is 1 / (number of splits), and 2 / (number of splits) with
/// as many runs on each side (a split and its mirror give the same distance): 0.1 with 3
/// runs a side, 0.029 with 4, so the whole distribution is called different across runs
/// from 4 runs a side.
pub fn ks_runs(
    a: &[Vec<(u64, u64)>],
    b: &[Vec<(u64, u64)>],
    max_splits: usize,
    seed: u64,
) -> Option<f64> {
    let all: Vec<&Vec<(u64, u64)>> = a.iter().chain(b).collect();
    let (n, k) = (all.len(), a.len());
    if a.is_empty() || b.is_empty() {
        return None;
    }
    let pool = |pick: &[bool], want: bool| -> Vec<(u64, u64)> {
        let mut m = std::collections::BTreeMap::new();
        for (r, p) in all.iter().zip(pick) {
            if *p == want {
                for (v, c) in r.iter() {
                    *m.entry(*v).or_insert(0u64) += c;
                }
            }
        }
        m.into_iter().collect()
    };
    let dist = |pick: &[bool]| ks_binned(&pool(pick, true), &pool(pick, false)).map(|x| x.d);
    let observed: Vec<bool> = (0..n).map(|i| i < k).collect();
    let d0 = dist(&observed)?;
    // The number of splits, C(n, k), capped.
    let mut total = 1f64;
    for i in 0..k {
        total = total * (n - i) as f64 / (i + 1) as f64;
    }
    let mut splits: Vec<Vec<bool>> = Vec::new();
    if total <= max_splits as f64 {
        for mask in 0u64..(1u64 << n) {
            if mask.count_ones() as usize == k {
                splits.push((0..n).map(|i| mask >> i & 1 == 1).collect());
            }
        }
    } else {
        let mut rng = Rng::new(seed);
        splits.push(observed.clone());
        for _ in 1..max_splits {
            let mut idx: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                idx.swap(i, rng.below(i + 1));
            }
            let mut pick = vec![false; n];
            for &i in &idx[..k] {
                pick[i] = true;
            }
            splits.push(pick);
        }
    }
    let ge = splits
        .iter()
        .filter(|p| dist(p).is_some_and(|d| d >= d0 - 1e-12))
        .count();
    Some(ge as f64 / splits.len() as f64)
}

/// Q_KS(λ) = 2 Σ (-1)^(k-1) exp(-2 k² λ²), the asymptotic tail of Kolmogorov's distribution.
fn kolmogorov_q(lambda: f64) -> f64 {
    if lambda < 0.3 {
        return 1.0;
    }
    let mut sum = 0.0;
    let mut sign = 1.0;
    for k in 1..=100 {
        let kf = k as f64;
        let term = sign * 2.0 * (-2.0 * kf * kf * lambda * lambda).exp();
        sum += term;
        if term.abs() < 1e-12 {
            break;
        }
        sign = -sign;
    }
    sum.clamp(0.0, 1.0)
}

/// What one side's per-run values (a rate, or a latency in ns with `latency`, in run order)
/// say about the runs: two modes far apart, or a drift with the run order. Empty when
/// neither.
pub fn run_warnings(what: &str, side: &str, values: &[f64], latency: bool) -> Vec<String> {
    let show = |v: f64| {
        if latency {
            crate::fmt::ns(v)
        } else {
            crate::fmt::count(v)
        }
    };
    let mut out = Vec::new();
    let v: Vec<f64> = values.iter().copied().filter(|x| *x > 0.0).collect();
    if v.len() >= 3 {
        let mut l: Vec<f64> = v.iter().map(|x| x.ln()).collect();
        l.sort_by(f64::total_cmp);
        // The largest gap between neighbours against the spread on either side of it.
        let (k, gap) = l
            .windows(2)
            .enumerate()
            .map(|(i, w)| (i, w[1] - w[0]))
            .max_by(|x, y| x.1.total_cmp(&y.1))
            .unwrap_or((0, 0.0));
        let within = (l[k] - l[0]).max(l[l.len() - 1] - l[k + 1]);
        if gap > 1.3f64.ln() && gap > 2.0 * within {
            let lo = v.iter().filter(|x| x.ln() <= l[k]).count();
            out.push(format!(
                "{side}'s runs are bimodal in {what}: {lo} near {} and {} near {}; a difference between the sides may be which mode each run fell in",
                show(l[k].exp()),
                v.len() - lo,
                show(l[k + 1].exp())
            ));
        }
    }
    if v.len() >= 4 {
        let order: Vec<f64> = (0..v.len()).map(|i| i as f64).collect();
        let (s, p) = spearman(&order, &v);
        if p < 0.05 {
            out.push(format!(
                "{side}'s {what} drifts with the run order (Spearman rho {s:+.2}, p {}): the runs are not alike",
                crate::fmt::p(p)
            ));
        }
    }
    out
}

/// Spearman's rank correlation and its two-sided p-value (t approximation; exact enough
/// to flag a drift over a handful of runs, conservative below 4).
fn spearman(x: &[f64], y: &[f64]) -> (f64, f64) {
    let rank = |v: &[f64]| -> Vec<f64> {
        let mut idx: Vec<usize> = (0..v.len()).collect();
        idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
        let mut r = vec![0.0; v.len()];
        let mut i = 0;
        while i < idx.len() {
            let mut j = i;
            while j + 1 < idx.len() && v[idx[j + 1]] == v[idx[i]] {
                j += 1;
            }
            let avg = (i + j) as f64 / 2.0 + 1.0;
            for k in i..=j {
                r[idx[k]] = avg;
            }
            i = j + 1;
        }
        r
    };
    let (rx, ry) = (rank(x), rank(y));
    let (mx, my) = (stats::mean(&rx), stats::mean(&ry));
    let cov: f64 = rx.iter().zip(&ry).map(|(a, b)| (a - mx) * (b - my)).sum();
    let vx: f64 = rx.iter().map(|a| (a - mx).powi(2)).sum();
    let vy: f64 = ry.iter().map(|b| (b - my).powi(2)).sum();
    if vx == 0.0 || vy == 0.0 {
        return (0.0, 1.0);
    }
    let rho = cov / (vx * vy).sqrt();
    let n = x.len() as f64;
    if rho.abs() >= 1.0 {
        // A perfect order: the exact probability of it under no drift, both directions.
        let fact: f64 = (1..=x.len()).map(|k| k as f64).product();
        return (rho, (2.0 / fact).min(1.0));
    }
    let t = rho * ((n - 2.0) / (1.0 - rho * rho)).sqrt();
    let p = stats::t_two_sided(t, n - 2.0);
    (rho, p)
}

/// "With 2 runs per side, a change under 35% in p99 cannot be seen" (80% power at 5%).
pub fn power_note(t: &QuantileTest, name: &str) -> String {
    let runs = if t.runs.0 == t.runs.1 {
        format!(
            "{} run{} per side",
            t.runs.0,
            if t.runs.0 == 1 { "" } else { "s" }
        )
    } else {
        format!("{} and {} runs", t.runs.0, t.runs.1)
    };
    format!(
        "with {runs}, a change in {name} under {} cannot be seen (80% power at 5%)",
        crate::fmt::pct(t.detectable_pct).trim_start_matches('+')
    )
}

#[cfg(test)]
#[path = "tail_tests.rs"]
mod tests;
