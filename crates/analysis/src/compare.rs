//! Comparing two configurations: A (one or more result files) against B.
//!
//! Jobs are matched by name (and occurrence, for repeated names) and direction; when no name
//! matches and both sides have the same number of jobs, they are matched by position and
//! the comparison says so.
//!
//! For every matched job and direction, the metrics IOPS, bandwidth, mean latency and the
//! p50/p99/p99.9 latencies get: the relative difference B vs A, a 95 % confidence interval,
//! a p-value, an effect size and a verdict. The method depends on the data:
//!
//! * **Trials** (at least two results per side): one value per trial. The test is Welch's t
//!   on the logarithms of the values (run-to-run noise of rates and latencies is
//!   multiplicative, and the question is a relative one) with fewer than 8 trials on a side
//!   (a rank test cannot reach p < 0.05 with 3 vs 3), or the Mann-Whitney U test from 8
//!   trials per side on (robust to one odd trial). The interval is a percentile bootstrap of
//!   the relative difference of the means. Effect size: Hedges' g of the logarithms (Welch)
//!   or Cliff's delta (Mann-Whitney).
//! * **One trial per side**: IOPS and bandwidth use fio's periodic samples (`iops_*`,
//!   `bw_*` summaries) with Welch's t and its t interval; latencies use the histograms
//!   (json+ `bins`, or the latency logs beside the result): a Poisson bootstrap of the mean
//!   and each percentile, and a Mann-Whitney U test on the binned distributions (ties per
//!   bucket) with Cliff's delta. These see only the variation *within* one run, so the
//!   output says to repeat runs.
//!
//! **Verdict.** A row is significant when its p-value, Holm-adjusted over the rows of its
//! job and direction, is below `alpha` (0.05), its interval excludes 0, and the difference
//! is at least `min_effect` percent (default 1 % across trials, 5 % for one trial each,
//! where millions of samples make any shift "significant"). The distribution row needs
//! |Cliff's delta| >= 0.147 (below that the overlap is "negligible", Romano et al. 2006).

use crate::model::{too_few_for, Ddir, DirResult, RunResult};
use crate::stats::{self, Boot};

/// Cliff's delta below which a distribution difference is negligible.
pub const NEGLIGIBLE_DELTA: f64 = 0.147;
/// Trials per side from which the rank test replaces Welch's t.
pub const RANK_TEST_FROM: usize = 8;

/// A compared metric.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Metric {
    Iops,
    Bw,
    LatMean,
    P50,
    P99,
    P999,
}

impl Metric {
    pub const ALL: [Metric; 6] = [
        Metric::Iops,
        Metric::Bw,
        Metric::LatMean,
        Metric::P50,
        Metric::P99,
        Metric::P999,
    ];
    pub fn name(self) -> &'static str {
        match self {
            Metric::Iops => "IOPS",
            Metric::Bw => "bw",
            Metric::LatMean => "mean",
            Metric::P50 => "p50",
            Metric::P99 => "p99",
            Metric::P999 => "p99.9",
        }
    }
    pub fn higher_is_better(self) -> bool {
        matches!(self, Metric::Iops | Metric::Bw)
    }
    pub fn percentile(self) -> Option<f64> {
        match self {
            Metric::P50 => Some(50.0),
            Metric::P99 => Some(99.0),
            Metric::P999 => Some(99.9),
            _ => None,
        }
    }
    pub fn is_latency(self) -> bool {
        !self.higher_is_better()
    }
}

/// Settings of a comparison.
#[derive(Clone, Debug)]
pub struct Options {
    pub alpha: f64,
    /// Smallest difference (percent) that counts; `None` for the defaults (1 % across
    /// trials, 5 % for one trial per side).
    pub min_effect_pct: Option<f64>,
    pub reps: usize,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            alpha: 0.05,
            min_effect_pct: None,
            reps: 2000,
            seed: 1,
        }
    }
}

/// One metric's comparison.
#[derive(Clone, Debug)]
pub struct Row {
    pub metric: Metric,
    /// Latency statistic the latency rows use (`lat` or `clat`).
    pub a: f64,
    pub b: f64,
    pub diff_pct: f64,
    pub ci_pct: Option<(f64, f64)>,
    pub ci_method: &'static str,
    pub test: &'static str,
    pub p: Option<f64>,
    pub p_adj: Option<f64>,
    /// (name, value), e.g. ("g", 1.9).
    pub effect: Option<(&'static str, f64)>,
    pub significant: bool,
    /// Whether B is better on this metric (by the sign of the difference).
    pub b_better: bool,
    pub note: Option<String>,
    /// The smallest change (percent) the test detects with 80% power, where it is known
    /// (the run-blocked quantile tests).
    pub detectable_pct: Option<f64>,
}

/// The Mann-Whitney test on the latency distributions of one trial each.
#[derive(Clone, Debug)]
pub struct DistTest {
    pub p: f64,
    pub p_adj: f64,
    pub cliffs_delta: f64,
    pub prob_superiority: f64,
    pub significant: bool,
    pub n_a: u64,
    pub n_b: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Faster,
    Slower,
    Mixed,
    NoDifference,
}

/// One matched job and direction.
#[derive(Clone, Debug)]
pub struct DirComparison {
    pub job_a: String,
    pub job_b: String,
    pub ddir: Ddir,
    pub trials_a: usize,
    pub trials_b: usize,
    /// `lat` or `clat`: the latency statistic compared.
    pub lat_kind: &'static str,
    /// Where the latency distributions came from (one-trial mode).
    pub dist_source: Option<String>,
    pub rows: Vec<Row>,
    pub dist: Option<DistTest>,
    /// The two-sample Kolmogorov-Smirnov test of the pooled latency distributions.
    pub ks: Option<KsTest>,
    pub verdict: Verdict,
    pub headline: String,
    pub min_effect_pct: f64,
    /// What the verdict must be read with: too few runs for the effects seen, bimodal or
    /// drifting runs, metrics that disagree.
    pub warnings: Vec<String>,
}

/// The whole-distribution test, Holm-adjusted with the rows.
#[derive(Clone, Debug)]
pub struct KsTest {
    pub ks: crate::tail::Ks,
    pub p_adj: f64,
    /// Significant and at least [`crate::tail::KS_MIN_D`] apart.
    pub significant: bool,
    /// The part of the distribution where the distance is largest.
    pub part: &'static str,
    /// With several runs a side: the run-level permutation p-value of the distance
    /// ([`crate::tail::ks_runs`]), which must hold too.
    pub p_runs: Option<f64>,
}

/// A whole comparison.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub a: Vec<String>,
    pub b: Vec<String>,
    pub dirs: Vec<DirComparison>,
    /// Jobs or directions found on one side only, and matching notes.
    pub notes: Vec<String>,
    pub options: Options,
}

impl Comparison {
    /// Significant rows where B is worse by at least `pct` percent: (job, dir, metric, %).
    pub fn regressions(&self, pct: f64) -> Vec<(String, Ddir, Metric, f64)> {
        let mut out = Vec::new();
        for d in &self.dirs {
            for r in &d.rows {
                if r.significant && !r.b_better && r.diff_pct.abs() >= pct {
                    out.push((d.job_b.clone(), d.ddir, r.metric, r.diff_pct));
                }
            }
        }
        out
    }
}

/// Jobs keyed by name and occurrence ("j", "j#2", ...).
pub fn job_keys(run: &RunResult) -> Vec<(String, usize)> {
    let mut seen: Vec<(String, usize)> = Vec::new();
    let mut out = Vec::new();
    for (i, j) in run.jobs.iter().enumerate() {
        let n = seen.iter().filter(|(s, _)| *s == j.name).count();
        seen.push((j.name.clone(), i));
        let key = if n == 0 {
            j.name.clone()
        } else {
            format!("{}#{}", j.name, n + 1)
        };
        out.push((key, i));
    }
    out
}

/// One side's data for a job and direction: per trial.
struct Side<'a> {
    jobs: Vec<&'a crate::model::JobResult>,
    dirs: Vec<&'a DirResult>,
    bins: Vec<Vec<(u64, u64)>>,
    bins_from: Vec<String>,
}

fn side<'a>(runs: &'a [RunResult], key: &str, pos: usize, by_pos: bool, d: Ddir) -> Side<'a> {
    let mut s = Side {
        jobs: Vec::new(),
        dirs: Vec::new(),
        bins: Vec::new(),
        bins_from: Vec::new(),
    };
    for r in runs {
        let job = if by_pos {
            r.jobs.get(pos)
        } else {
            job_keys(r)
                .into_iter()
                .find(|(k, _)| k == key)
                .map(|(_, i)| &r.jobs[i])
        };
        let Some(job) = job else { continue };
        let Some(dr) = job.dir(d) else { continue };
        s.jobs.push(job);
        s.dirs.push(dr);
    }
    s
}

impl Side<'_> {
    /// The latency distributions of statistic `kind` (`lat` or `clat`) per result: its
    /// per-I/O log (exact for every I/O), else the histogram log (clat), else json+ bins.
    /// Results without one are left out.
    fn load_bins(&mut self, kind: &str) {
        use crate::logs::LogKind;
        let lk = if kind == "lat" {
            LogKind::Lat
        } else {
            LogKind::Clat
        };
        for (job, dr) in self.jobs.iter().zip(&self.dirs) {
            let d = dr.ddir;
            let l = if kind == "lat" { &dr.lat } else { &dr.clat };
            if let Some(log) = job
                .logs
                .get(lk, d)
                .filter(|l| l.per_io && l.stat.samples > 0)
            {
                self.bins.push(log.bins());
                self.bins_from.push(format!("{} log", lk.suffix()));
            } else if let Some(h) = job.logs.hist(d).filter(|_| kind == "clat") {
                let b: Vec<(u64, u64)> = h
                    .counts
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(i, c)| (flexio_stats::hist::idx_to_val(i), *c))
                    .collect();
                self.bins.push(b);
                self.bins_from.push("clat histogram log".into());
            } else if !l.bins.is_empty() {
                self.bins.push(l.bins.clone());
                self.bins_from.push(format!("json+ {kind} bins"));
            }
        }
    }
}

/// The value of metric `m` of a direction, with latency statistic `kind` (`lat` or `clat`).
pub fn metric_value(d: &DirResult, m: Metric, kind: &str) -> Option<f64> {
    let l = if kind == "lat" { &d.lat } else { &d.clat };
    match m {
        Metric::Iops => Some(d.iops),
        Metric::Bw => Some(d.bw_bytes),
        Metric::LatMean => (l.n > 0).then_some(l.mean),
        _ => {
            let p = m.percentile()?;
            l.percentile(p)
                .map(|v| v as f64)
                .or_else(|| (!l.bins.is_empty()).then(|| stats::bins_percentile(&l.bins, p)))
        }
    }
}

fn merge_bins(all: &[Vec<(u64, u64)>]) -> Vec<(u64, u64)> {
    let mut m = std::collections::BTreeMap::new();
    for b in all {
        for (v, c) in b {
            *m.entry(*v).or_insert(0u64) += c;
        }
    }
    m.into_iter().collect()
}

fn new_row(m: Metric, a: f64, b: f64) -> Row {
    let diff_pct = stats::rel_pct(a, b);
    Row {
        metric: m,
        a,
        b,
        diff_pct,
        ci_pct: None,
        ci_method: "",
        test: "",
        p: None,
        p_adj: None,
        effect: None,
        significant: false,
        b_better: if m.higher_is_better() {
            diff_pct > 0.0
        } else {
            diff_pct < 0.0
        },
        note: None,
        detectable_pct: None,
    }
}

fn seed_for(o: &Options, job: usize, m: Metric) -> u64 {
    o.seed
        .wrapping_mul(0x100_0000_01b3)
        .wrapping_add((job as u64) << 8 | m as u64)
}

fn trial_rows(a: &Side, b: &Side, kind: &str, o: &Options, job: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    for m in Metric::ALL {
        let va: Vec<f64> = a
            .dirs
            .iter()
            .filter_map(|d| metric_value(d, m, kind))
            .collect();
        let vb: Vec<f64> = b
            .dirs
            .iter()
            .filter_map(|d| metric_value(d, m, kind))
            .collect();
        if va.len() < 2 || vb.len() < 2 {
            continue;
        }
        // The tail: a run-blocked bootstrap of the pooled quantile, where every trial has
        // its latency distribution.
        let all_bins = a.bins.len() == a.dirs.len() && b.bins.len() == b.dirs.len();
        if let (Some(p @ (99.0 | 99.9)), true) = (m.percentile(), all_bins) {
            if let Some(t) =
                crate::tail::quantile_test(&a.bins, &b.bins, p, o.reps, seed_for(o, job, m))
            {
                let mut r = new_row(m, t.a, t.b);
                r.ci_pct = Some(t.ci_pct);
                r.ci_method = "run-blocked bootstrap";
                r.test = "quantile bootstrap";
                r.p = Some(t.p);
                r.detectable_pct = Some(t.detectable_pct);
                rows.push(r);
                continue;
            }
        }
        let mut r = new_row(m, stats::mean(&va), stats::mean(&vb));
        let boot: Boot =
            stats::bootstrap2(&va, &vb, o.reps, seed_for(o, job, m), stats::rel_mean_pct);
        r.ci_pct = Some(boot.ci);
        r.ci_method = "bootstrap";
        if va.len() >= RANK_TEST_FROM && vb.len() >= RANK_TEST_FROM {
            if let Some(u) = stats::mann_whitney(&va, &vb) {
                r.test = "Mann-Whitney U";
                r.p = Some(u.p);
                r.effect = Some(("delta", u.cliffs_delta));
            }
        } else {
            // Run-to-run noise of rates and latencies is multiplicative: test the logarithms
            // (a relative difference, as reported), raw values only if one is not positive.
            let positive = va.iter().chain(&vb).all(|v| *v > 0.0);
            let (la, lb): (Vec<f64>, Vec<f64>) = if positive {
                (
                    va.iter().map(|v| v.ln()).collect(),
                    vb.iter().map(|v| v.ln()).collect(),
                )
            } else {
                (va.clone(), vb.clone())
            };
            if let Some(t) = stats::welch(&la, &lb) {
                r.test = if positive { "Welch t (log)" } else { "Welch t" };
                r.p = Some(t.p);
                r.effect = Some(("g", stats::hedges_g(&la, &lb)));
            }
        }
        if let Some(p) = m.percentile() {
            let few = a
                .dirs
                .iter()
                .chain(&b.dirs)
                .filter(|d| too_few_for(p, if kind == "lat" { d.lat.n } else { d.clat.n }))
                .count();
            if few > 0 {
                r.note = Some(format!(
                    "{few} trial(s) with fewer than {} samples: {} is their maximum",
                    crate::model::min_samples_for(p),
                    m.name()
                ));
            }
        }
        rows.push(r);
    }
    rows
}

/// Sample summaries of several trials merged (n, mean, sd).
fn pooled(s: &[&crate::model::Samples], scale: f64) -> (f64, f64, f64) {
    let n: f64 = s.iter().map(|x| x.n as f64).sum();
    if n == 0.0 {
        return (0.0, 0.0, 0.0);
    }
    let mean = s.iter().map(|x| x.n as f64 * x.mean).sum::<f64>() / n;
    let ss: f64 = s
        .iter()
        .map(|x| {
            let k = x.n as f64;
            (k - 1.0).max(0.0) * x.stddev * x.stddev + k * (x.mean - mean).powi(2)
        })
        .sum();
    let sd = if n > 1.0 {
        (ss / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    (n, mean * scale, sd * scale)
}

fn single_rows(a: &Side, b: &Side, kind: &str, o: &Options, job: usize) -> Vec<Row> {
    let mut rows = Vec::new();
    let avg = |s: &Side, m: Metric| {
        let v: Vec<f64> = s
            .dirs
            .iter()
            .filter_map(|d| metric_value(d, m, kind))
            .collect();
        (!v.is_empty()).then(|| stats::mean(&v))
    };
    let (ba, bb) = (merge_bins(&a.bins), merge_bins(&b.bins));
    let have_bins = !a.bins.is_empty() && !b.bins.is_empty();
    for m in Metric::ALL {
        let (Some(pa), Some(pb)) = (avg(a, m), avg(b, m)) else {
            continue;
        };
        let mut r = new_row(m, pa, pb);
        match m {
            Metric::Iops | Metric::Bw => {
                fn pick<'a>(s: &Side<'a>, m: Metric) -> Vec<&'a crate::model::Samples> {
                    s.dirs
                        .iter()
                        .map(|d| {
                            if m == Metric::Iops {
                                &d.iops_samples
                            } else {
                                &d.bw_samples
                            }
                        })
                        .collect()
                }
                let scale = if m == Metric::Bw { 1024.0 } else { 1.0 };
                let (na, ma, sa) = pooled(&pick(a, m), scale);
                let (nb, mb, sb) = pooled(&pick(b, m), scale);
                let iops = m == Metric::Iops;
                let per_io: Vec<&str> = [("A's", a), ("B's", b)]
                    .into_iter()
                    .filter(|(_, s)| s.jobs.iter().any(|j| j.per_io_samples(iops)))
                    .map(|(n, _)| n)
                    .collect();
                // Periodic samples average to about the result's rate; anything else (a
                // factor of 2 away) is not a sample of that rate.
                let off = |n: f64, mean: f64, rate: f64| {
                    n > 0.0 && rate > 0.0 && !(0.5..=2.0).contains(&(mean / rate))
                };
                if !per_io.is_empty() {
                    r.note = Some(format!(
                        "{} samples are one per I/O ({} with log_avg_msec=0), not periodic: no test (log with log_avg_msec > 0, or repeat with --trials)",
                        per_io.join(" and "),
                        if iops { "write_iops_log" } else { "write_bw_log" }
                    ));
                } else if off(na, ma, pa) || off(nb, mb, pb) {
                    r.note = Some(format!(
                        "the {} samples' means ({} and {}) do not match the results' rates: no test",
                        m.name(),
                        crate::fmt::count(ma),
                        crate::fmt::count(mb)
                    ));
                } else if let Some(t) = stats::welch_summary(ma, sa, na, mb, sb, nb) {
                    r.test = "Welch t (samples)";
                    r.p = Some(t.p);
                    r.ci_pct = Some((t.ci.0 / ma * 100.0, t.ci.1 / ma * 100.0));
                    r.ci_method = "t interval";
                    r.effect = Some(("g", stats::hedges_g_summary(ma, sa, na, mb, sb, nb)));
                } else {
                    r.note = Some(format!(
                        "fewer than 2 {} samples on a side: run longer than bwavgtime (500 ms)",
                        m.name()
                    ));
                }
            }
            _ if have_bins => {
                let stat = |x: &stats::Bins| match m.percentile() {
                    Some(p) => stats::bins_percentile(x, p),
                    None => stats::bins_mean(x),
                };
                let boot =
                    stats::poisson_bootstrap2(&ba, &bb, o.reps, seed_for(o, job, m), |x, y| {
                        stats::rel_pct(stat(x), stat(y))
                    });
                // The bootstrap runs on bucket values; shift its interval by the difference
                // between the exact and the binned point estimate.
                let shift = r.diff_pct - stats::rel_pct(stat(&ba), stat(&bb));
                r.ci_pct = Some((boot.ci.0 + shift, boot.ci.1 + shift));
                r.ci_method = "Poisson bootstrap";
                r.test = "bootstrap";
                r.p = Some(boot.p);
                if m == Metric::LatMean {
                    let l = |s: &Side| {
                        s.dirs
                            .first()
                            .map(|d| if kind == "lat" { &d.lat } else { &d.clat })
                            .map(|l| (l.mean, l.stddev, l.n as f64))
                    };
                    if let (Some(x), Some(y)) = (l(a), l(b)) {
                        r.effect =
                            Some(("g", stats::hedges_g_summary(x.0, x.1, x.2, y.0, y.1, y.2)));
                    }
                }
                if let Some(p) = m.percentile() {
                    let (na, nb): (u64, u64) =
                        (ba.iter().map(|x| x.1).sum(), bb.iter().map(|x| x.1).sum());
                    if too_few_for(p, na.min(nb)) {
                        r.note = Some(format!(
                            "fewer than {} samples: {} is the maximum",
                            crate::model::min_samples_for(p),
                            m.name()
                        ));
                    }
                }
            }
            _ => {
                r.note =
                    Some("no latency histogram: use --output-format=json+ or write_lat_log".into());
            }
        }
        rows.push(r);
    }
    rows
}

fn finish(dc: &mut DirComparison, o: &Options) {
    // Holm over all tests of this job and direction.
    let mut ps: Vec<f64> = dc.rows.iter().filter_map(|r| r.p).collect();
    if let Some(d) = &dc.dist {
        ps.push(d.p);
    }
    if let Some(k) = &dc.ks {
        ps.push(k.ks.p);
    }
    let adj = stats::holm(&ps);
    let mut k = 0;
    for r in dc.rows.iter_mut() {
        if r.p.is_some() {
            r.p_adj = Some(adj[k]);
            k += 1;
        }
        let ci_ok = r.ci_pct.map_or(true, |(lo, hi)| lo > 0.0 || hi < 0.0);
        r.significant = r.p_adj.is_some_and(|p| p < o.alpha)
            && ci_ok
            && r.diff_pct.abs() >= dc.min_effect_pct
            && r.diff_pct.is_finite();
    }
    if let Some(d) = &mut dc.dist {
        d.p_adj = adj[k];
        d.significant = d.p_adj < o.alpha && d.cliffs_delta.abs() >= NEGLIGIBLE_DELTA;
        k += 1;
    }
    if let Some(t) = &mut dc.ks {
        t.p_adj = adj[k];
        t.significant = t.p_adj < o.alpha
            && t.ks.d >= crate::tail::KS_MIN_D
            && t.p_runs.map_or(true, |p| p < o.alpha);
    }
    let better = dc
        .rows
        .iter()
        .filter(|r| r.significant && r.b_better)
        .count();
    let worse = dc
        .rows
        .iter()
        .filter(|r| r.significant && !r.b_better)
        .count();
    dc.verdict = match (better > 0, worse > 0) {
        (false, false) => Verdict::NoDifference,
        (true, false) => Verdict::Faster,
        (false, true) => Verdict::Slower,
        (true, true) => Verdict::Mixed,
    };
    let desc = |r: &Row| {
        let unit = if r.metric.is_latency() {
            format!("{} latency", r.metric.name())
        } else {
            r.metric.name().to_string()
        };
        let ci = r
            .ci_pct
            .map(|(lo, hi)| format!(" [{}, {}]", crate::fmt::pct(lo), crate::fmt::pct(hi)))
            .unwrap_or_default();
        format!(
            "{} {unit}{ci}, p {}",
            crate::fmt::pct(r.diff_pct),
            crate::fmt::p(r.p_adj.unwrap_or(1.0))
        )
    };
    let first = |want_better: bool| {
        dc.rows
            .iter()
            .find(|r| r.significant && r.b_better == want_better)
    };
    dc.headline = match dc.verdict {
        Verdict::NoDifference => match &dc.ks {
            Some(t) if t.significant => format!(
                "no significant difference in the metrics, but the latency distributions differ (KS D={:.2}, largest at {} in {})",
                t.ks.d,
                crate::fmt::ns(t.ks.at as f64),
                t.part
            ),
            _ => "no significant difference".into(),
        },
        Verdict::Faster => format!("B is faster: {}", desc(first(true).expect("a better row"))),
        Verdict::Slower => format!("B is slower: {}", desc(first(false).expect("a worse row"))),
        Verdict::Mixed => format!(
            "mixed: B is better on {} but worse on {}",
            desc(first(true).expect("a better row")),
            desc(first(false).expect("a worse row"))
        ),
    };
    explain(dc);
}

/// Which part of the performance a metric describes.
fn part(m: Metric) -> &'static str {
    match m {
        Metric::Iops | Metric::Bw => "throughput",
        Metric::LatMean => "mean",
        Metric::P50 => "median",
        Metric::P99 | Metric::P999 => "tail",
    }
}

/// Name the parts that moved and those that did not in the headline, and say what else
/// the verdict must be read with: where the distributions part, and the effects too small
/// for these runs to see.
fn explain(dc: &mut DirComparison) {
    let tested: Vec<&Row> = dc.rows.iter().filter(|r| r.p.is_some()).collect();
    let mut moved: Vec<&str> = Vec::new();
    let mut still: Vec<&str> = Vec::new();
    for r in &tested {
        let p = part(r.metric);
        if r.significant {
            if !moved.contains(&p) {
                moved.push(p);
            }
        } else if !still.contains(&p) {
            still.push(p);
        }
    }
    // A part with one metric moved and another not counts as moved.
    still.retain(|p| !moved.contains(p));
    if !moved.is_empty() {
        dc.headline
            .push_str(&format!(" (moved: {}", moved.join(", ")));
        if !still.is_empty() {
            dc.headline
                .push_str(&format!("; not significantly: {}", still.join(", ")));
        }
        dc.headline.push(')');
    }
    if let Some(t) = &dc.ks {
        if t.significant && dc.verdict != Verdict::NoDifference {
            dc.warnings.push(format!(
                "the latency distributions differ most in {} (KS D={:.2} at {})",
                t.part,
                t.ks.d,
                crate::fmt::ns(t.ks.at as f64)
            ));
        }
    }
    let runs = if dc.trials_a == dc.trials_b {
        format!(
            "{} run{} per side",
            dc.trials_a,
            if dc.trials_a == 1 { "" } else { "s" }
        )
    } else {
        format!("{} and {} runs", dc.trials_a, dc.trials_b)
    };
    for r in dc.rows.iter().filter(|r| !r.significant) {
        if let Some(d) = r.detectable_pct {
            if d > dc.min_effect_pct && d.is_finite() {
                dc.warnings.push(format!(
                    "with {runs}, a change in {} under {} cannot be seen (80% power at 5%)",
                    r.metric.name(),
                    crate::fmt::pct(d).trim_start_matches('+')
                ));
            }
        }
    }
}

/// Compare result sets A and B.
pub fn compare(a: &[RunResult], b: &[RunResult], o: &Options) -> Comparison {
    let mut cmp = Comparison {
        a: a.iter().map(|r| r.path.display().to_string()).collect(),
        b: b.iter().map(|r| r.path.display().to_string()).collect(),
        dirs: Vec::new(),
        notes: Vec::new(),
        options: o.clone(),
    };
    let (Some(a0), Some(b0)) = (a.first(), b.first()) else {
        cmp.notes
            .push("nothing to compare: a side has no result".into());
        return cmp;
    };
    let (ka, kb) = (job_keys(a0), job_keys(b0));
    let common: Vec<&(String, usize)> = ka
        .iter()
        .filter(|x| kb.iter().any(|y| y.0 == x.0))
        .collect();
    let by_pos = common.is_empty() && ka.len() == kb.len() && !ka.is_empty();
    if by_pos {
        for ((x, _), (y, _)) in ka.iter().zip(&kb) {
            cmp.notes.push(format!(
                "no job names match: A's job '{x}' is compared with B's job '{y}' by position"
            ));
        }
    } else {
        for (k, _) in &ka {
            if !kb.iter().any(|y| &y.0 == k) {
                cmp.notes
                    .push(format!("job '{k}' is only in A: not compared"));
            }
        }
        for (k, _) in &kb {
            if !ka.iter().any(|y| &y.0 == k) {
                cmp.notes
                    .push(format!("job '{k}' is only in B: not compared"));
            }
        }
    }
    let pairs: Vec<(String, String, usize)> = if by_pos {
        ka.iter()
            .zip(&kb)
            .enumerate()
            .map(|(i, (x, y))| (x.0.clone(), y.0.clone(), i))
            .collect()
    } else {
        common
            .iter()
            .map(|(k, i)| (k.clone(), k.clone(), *i))
            .collect()
    };
    for (job_idx, (key_a, key_b, pos)) in pairs.into_iter().enumerate() {
        for d in [Ddir::Read, Ddir::Write, Ddir::Trim, Ddir::Mixed] {
            let mut sa = side(a, &key_a, pos, by_pos, d);
            let mut sb = side(b, &key_b, pos, by_pos, d);
            match (sa.dirs.is_empty(), sb.dirs.is_empty()) {
                (true, true) => continue,
                (false, true) | (true, false) => {
                    let which = if sa.dirs.is_empty() { "B" } else { "A" };
                    cmp.notes.push(format!(
                        "job '{key_a}' has {} I/O only in {which}: not compared",
                        d.name()
                    ));
                    continue;
                }
                _ => {}
            }
            for (s, side_name, n) in [(&sa, "A", a.len()), (&sb, "B", b.len())] {
                if s.dirs.len() < n {
                    cmp.notes.push(format!(
                        "job '{key_a}' {}: missing from {} of {n} {side_name} results",
                        d.name(),
                        n - s.dirs.len()
                    ));
                }
            }
            // The latency statistic both sides have percentiles for.
            let all_lat = sa
                .dirs
                .iter()
                .chain(&sb.dirs)
                .all(|x| x.response().0 == "lat");
            let kind = if all_lat { "lat" } else { "clat" };
            sa.load_bins(kind);
            sb.load_bins(kind);
            let trials = sa.dirs.len() >= 2 && sb.dirs.len() >= 2;
            let min_effect = o.min_effect_pct.unwrap_or(if trials { 1.0 } else { 5.0 });
            let rows = if trials {
                trial_rows(&sa, &sb, kind, o, job_idx)
            } else {
                single_rows(&sa, &sb, kind, o, job_idx)
            };
            let dist = (!trials && !sa.bins.is_empty() && !sb.bins.is_empty())
                .then(|| {
                    let (ba, bb) = (merge_bins(&sa.bins), merge_bins(&sb.bins));
                    stats::mann_whitney_binned(&ba, &bb).map(|u| DistTest {
                        p: u.p,
                        p_adj: u.p,
                        cliffs_delta: u.cliffs_delta,
                        prob_superiority: u.prob_superiority(),
                        significant: false,
                        n_a: ba.iter().map(|x| x.1).sum(),
                        n_b: bb.iter().map(|x| x.1).sum(),
                    })
                })
                .flatten();
            // The whole distribution, pooled over the trials.
            let ks = (!sa.bins.is_empty() && !sb.bins.is_empty())
                .then(|| crate::tail::ks_binned(&merge_bins(&sa.bins), &merge_bins(&sb.bins)))
                .flatten()
                .map(|k| {
                    let pooled = merge_bins(&sa.bins);
                    let n: u64 = pooled.iter().map(|x| x.1).sum();
                    let below: u64 = pooled.iter().filter(|x| x.0 <= k.at).map(|x| x.1).sum();
                    let share = below as f64 / n.max(1) as f64;
                    KsTest {
                        ks: k,
                        p_adj: k.p,
                        significant: false,
                        p_runs: trials
                            .then(|| crate::tail::ks_runs(&sa.bins, &sb.bins, 2000, o.seed))
                            .flatten(),
                        part: if share >= 0.9 {
                            "the tail"
                        } else if share >= 0.1 {
                            "the middle"
                        } else {
                            "the fastest requests"
                        },
                    }
                });
            let mut warnings = Vec::new();
            if trials {
                for (s, name) in [(&sa, "A"), (&sb, "B")] {
                    for m in [Metric::Iops, Metric::Bw, Metric::P99] {
                        let v: Vec<f64> = s
                            .dirs
                            .iter()
                            .filter_map(|d| metric_value(d, m, kind))
                            .collect();
                        warnings.extend(crate::tail::run_warnings(
                            m.name(),
                            name,
                            &v,
                            m.is_latency(),
                        ));
                    }
                }
            }
            let dist_source = (!trials && !sa.bins_from.is_empty() && !sb.bins_from.is_empty())
                .then(|| format!("A: {}; B: {}", sa.bins_from[0], sb.bins_from[0]));
            let mut dc = DirComparison {
                job_a: key_a.clone(),
                job_b: key_b.clone(),
                ddir: d,
                trials_a: sa.dirs.len(),
                trials_b: sb.dirs.len(),
                lat_kind: kind,
                dist_source,
                rows,
                dist,
                ks,
                verdict: Verdict::NoDifference,
                headline: String::new(),
                min_effect_pct: min_effect,
                warnings,
            };
            finish(&mut dc, o);
            cmp.dirs.push(dc);
        }
    }
    cmp
}

#[cfg(test)]
#[path = "compare_tests.rs"]
mod tests;
