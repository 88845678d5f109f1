//! The real-time interference study (`flexio rt-study`): the foreground job's response
//! times per case (I/O priority class × number of background jobs), and the tests that
//! answer the study's two questions:
//!
//! * **load**: within a class, does the foreground's response time change when background
//!   jobs load the device (no background against each background count)?
//! * **class**: under the same load, does the real-time class differ from best-effort?
//!
//! Each test is a two-sided Mann-Whitney U test on the per-I/O response times (from the
//! foreground's latency log, so every request counts), Holm-adjusted over all the tests of
//! the study, with Welch's t-test on the means beside it and Cliff's delta as the effect
//! size. Numbers in, numbers and text out: the runs are made by the subcommand.

use crate::fmt;
use crate::stats;
use serde_json::{json, Value};
use std::fmt::Write;

/// One case: the foreground's response times under one class and background load.
#[derive(Clone, Debug)]
pub struct Case {
    /// `rt` or `be` (or `idle`).
    pub class: String,
    /// Background I/O jobs running beside the foreground.
    pub background: u32,
    /// Exact statistics of the logged response times (ns).
    pub n: u64,
    pub mean: f64,
    pub stdev: f64,
    pub rms: f64,
    pub min: u64,
    pub max: u64,
    /// The response times binned (flexio's latency buckets: value ns, count).
    pub bins: Vec<(u64, u64)>,
    /// The background jobs' summed bandwidth (bytes/s) during the case (mean over runs).
    pub background_bw: f64,
    /// Exact sums behind the statistics (ns, ns²).
    pub sum: u128,
    pub sumsq: u128,
    /// Each run's median response time (ns), in run order: the unit of the run-level test.
    pub run_medians: Vec<f64>,
    /// Each run's response times binned, in run order: the runs the tail tests resample.
    pub run_bins: Vec<Vec<(u64, u64)>>,
}

impl Case {
    /// Build a case from exact sums (count, sum, sum of squares, min, max) and the bins.
    #[allow(clippy::too_many_arguments)]
    pub fn from_sums(
        class: &str,
        background: u32,
        n: u64,
        sum: u128,
        sumsq: u128,
        min: u64,
        max: u64,
        bins: Vec<(u64, u64)>,
        background_bw: f64,
    ) -> Case {
        let mut c = Case {
            class: class.to_string(),
            background,
            n,
            mean: f64::NAN,
            stdev: f64::NAN,
            rms: f64::NAN,
            min,
            max,
            bins,
            background_bw,
            sum,
            sumsq,
            run_medians: Vec::new(),
            run_bins: Vec::new(),
        };
        c.run_bins.push(c.bins.clone());
        c.derive();
        let med = stats::bins_percentile(&c.bins, 50.0);
        c.run_medians.push(med.clamp(min as f64, max as f64));
        c
    }

    fn derive(&mut self) {
        let (n, nf) = (self.n, self.n as f64);
        self.mean = if n > 0 {
            self.sum as f64 / nf
        } else {
            f64::NAN
        };
        let var = if n > 1 {
            ((self.sumsq as f64 - self.sum as f64 * self.sum as f64 / nf) / (nf - 1.0)).max(0.0)
        } else {
            f64::NAN
        };
        self.stdev = var.sqrt();
        self.rms = if n > 0 {
            (self.sumsq as f64 / nf).sqrt()
        } else {
            f64::NAN
        };
    }

    /// Pool another run of the same case into this one: the response times of all runs
    /// together, each run's median kept for the run-level test.
    pub fn absorb(&mut self, o: Case) {
        let runs = self.run_medians.len() as f64;
        self.background_bw = (self.background_bw * runs + o.background_bw) / (runs + 1.0);
        self.n += o.n;
        self.sum += o.sum;
        self.sumsq += o.sumsq;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        let mut all = std::mem::take(&mut self.bins);
        all.extend(o.bins);
        all.sort_unstable();
        for (v, c) in all {
            match self.bins.last_mut() {
                Some(l) if l.0 == v => l.1 += c,
                _ => self.bins.push((v, c)),
            }
        }
        self.run_medians.extend(o.run_medians);
        self.run_bins.extend(o.run_bins);
        self.derive();
    }

    pub fn label(&self) -> String {
        format!("{} bg={}", self.class, self.background)
    }

    /// A percentile of the binned response times, within the exact minimum and maximum
    /// (a bucket's value can lie a little beyond the samples it holds).
    pub fn percentile(&self, p: f64) -> f64 {
        let v = stats::bins_percentile(&self.bins, p);
        if v.is_finite() {
            v.clamp(self.min as f64, self.max as f64)
        } else {
            v
        }
    }
}

/// Which question a test answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Question {
    Load,
    Class,
}

impl Question {
    pub fn name(self) -> &'static str {
        match self {
            Question::Load => "load",
            Question::Class => "class",
        }
    }
}

/// One test between two cases (`a` is the reference, `b` the case compared with it).
#[derive(Clone, Debug)]
pub struct Test {
    pub question: Question,
    pub a: usize,
    pub b: usize,
    /// Mean of b over mean of a.
    pub mean_ratio: f64,
    /// Mann-Whitney U, two-sided, and its Holm-adjusted value.
    pub p: f64,
    pub p_adj: f64,
    /// Cliff's delta, P(b > a) - P(b < a): positive when b is slower.
    pub cliffs_delta: f64,
    /// Welch's t-test on the means (two-sided).
    pub p_welch: f64,
    /// With two or more runs per case: Welch's t-test on the runs' medians, and its
    /// Holm-adjusted value. This one decides, because it counts the variation from run to
    /// run that the per-request tests cannot see.
    pub p_runs: Option<f64>,
    pub p_runs_adj: Option<f64>,
    /// The middle moved: the per-request test and, with runs, the run-level one.
    pub middle: bool,
    /// The tail: p99 and p99.9 of b against a, each a run-blocked bootstrap test
    /// ([`crate::tail::quantile_test`]), Holm-adjusted over all the study's tail tests.
    pub tail: Vec<TailTest>,
    /// The whole distribution: Kolmogorov-Smirnov on the pooled responses, with the
    /// run-level permutation p-value when the cases have several runs.
    pub ks: Option<crate::tail::Ks>,
    pub ks_p_runs: Option<f64>,
    pub ks_p_adj: f64,
    pub ks_significant: bool,
    /// Any part moved: the middle, the tail or the whole distribution.
    pub significant: bool,
}

/// One tail quantile of a test.
#[derive(Clone, Debug)]
pub struct TailTest {
    pub q: crate::tail::QuantileTest,
    pub p_adj: f64,
    pub significant: bool,
}

/// Resamples of the tail tests (per test and quantile).
const TAIL_REPS: usize = 2000;

/// The study's tests: for each class, no background against each background count (or
/// the smallest count against the others when 0 is not among them); for each background
/// count, best-effort against real-time (and idle against best-effort when present).
pub fn tests(cases: &[Case], alpha: f64) -> Vec<Test> {
    tests_with(cases, alpha, TAIL_REPS)
}

/// [`tests`] with `reps` resamples per tail test.
fn tests_with(cases: &[Case], alpha: f64, reps: usize) -> Vec<Test> {
    let mut pairs: Vec<(Question, usize, usize)> = Vec::new();
    let mut classes: Vec<&str> = Vec::new();
    for c in cases {
        if !classes.contains(&c.class.as_str()) {
            classes.push(&c.class);
        }
    }
    let mut loads: Vec<u32> = cases.iter().map(|c| c.background).collect();
    loads.sort_unstable();
    loads.dedup();
    let find = |class: &str, bg: u32| {
        cases
            .iter()
            .position(|c| c.class == class && c.background == bg)
    };
    for class in &classes {
        let Some(base) = loads.first().and_then(|l| find(class, *l)) else {
            continue;
        };
        for l in loads.iter().skip(1) {
            if let Some(b) = find(class, *l) {
                pairs.push((Question::Load, base, b));
            }
        }
    }
    // Best-effort is the reference the other classes are held against.
    let reference = ["be", "rt", "idle"]
        .into_iter()
        .find(|c| classes.contains(c));
    if let Some(r) = reference {
        for l in &loads {
            let Some(a) = find(r, *l) else { continue };
            for class in &classes {
                if *class != r {
                    if let Some(b) = find(class, *l) {
                        pairs.push((Question::Class, a, b));
                    }
                }
            }
        }
    }
    let mut out: Vec<Test> = pairs
        .into_iter()
        .filter_map(|(q, a, b)| {
            let (ca, cb) = (&cases[a], &cases[b]);
            let u = stats::mann_whitney_binned(&ca.bins, &cb.bins)?;
            let w = stats::welch_summary(
                ca.mean,
                ca.stdev,
                ca.n as f64,
                cb.mean,
                cb.stdev,
                cb.n as f64,
            );
            Some(Test {
                question: q,
                a,
                b,
                mean_ratio: cb.mean / ca.mean,
                p: u.p,
                p_adj: u.p,
                cliffs_delta: u.cliffs_delta,
                p_welch: w.map(|t| t.p).unwrap_or(f64::NAN),
                p_runs: run_level(ca, cb),
                p_runs_adj: None,
                middle: false,
                tail: [99.0, 99.9]
                    .iter()
                    .enumerate()
                    .filter_map(|(k, p)| {
                        let seed = ((a as u64) << 32) ^ ((b as u64) << 8) ^ k as u64;
                        crate::tail::quantile_test(&ca.run_bins, &cb.run_bins, *p, reps, seed)
                    })
                    .map(|q| TailTest {
                        p_adj: q.p,
                        q,
                        significant: false,
                    })
                    .collect(),
                ks: crate::tail::ks_binned(&ca.bins, &cb.bins),
                ks_p_runs: (ca.run_bins.len() >= 2 && cb.run_bins.len() >= 2)
                    .then(|| crate::tail::ks_runs(&ca.run_bins, &cb.run_bins, 2000, 1))
                    .flatten(),
                ks_p_adj: 1.0,
                ks_significant: false,
                significant: false,
            })
        })
        .collect();
    let adj = stats::holm(&out.iter().map(|t| t.p).collect::<Vec<_>>());
    for (t, p) in out.iter_mut().zip(adj) {
        t.p_adj = p;
        // A negligible shift (|Cliff's delta| under 0.147) is not the middle moving, however
        // many requests make it significant: a tail that moved shifts the ranks a little.
        t.middle = p < alpha && t.cliffs_delta.abs() >= crate::compare::NEGLIGIBLE_DELTA;
    }
    if out.iter().all(|t| t.p_runs.is_some()) && !out.is_empty() {
        let runs: Vec<f64> = out.iter().map(|t| t.p_runs.unwrap_or(1.0)).collect();
        for (t, p) in out.iter_mut().zip(stats::holm(&runs)) {
            t.p_runs_adj = Some(p);
            // Both must hold: the shift is there request by request and it outlasts the
            // variation between runs.
            t.middle = t.middle && p < alpha;
        }
    }
    // The tail tests, Holm over all of them; the distribution tests, Holm over theirs.
    let tail_p: Vec<f64> = out
        .iter()
        .flat_map(|t| t.tail.iter().map(|x| x.q.p))
        .collect();
    let mut adj = stats::holm(&tail_p).into_iter();
    for t in out.iter_mut() {
        for x in t.tail.iter_mut() {
            x.p_adj = adj.next().unwrap_or(1.0);
            x.significant = x.p_adj < alpha;
        }
    }
    let ks_p: Vec<f64> = out.iter().map(|t| t.ks.map_or(1.0, |k| k.p)).collect();
    for (t, p) in out.iter_mut().zip(stats::holm(&ks_p)) {
        t.ks_p_adj = p;
        t.ks_significant = p < alpha
            && t.ks.is_some_and(|k| k.d >= crate::tail::KS_MIN_D)
            && t.ks_p_runs.map_or(true, |p| p < alpha);
    }
    for t in out.iter_mut() {
        t.significant = t.middle || t.ks_significant || t.tail.iter().any(|x| x.significant);
    }
    out
}

/// Welch's t-test on the per-run medians of two cases (two or more runs each).
fn run_level(a: &Case, b: &Case) -> Option<f64> {
    if a.run_medians.len() < 2 || b.run_medians.len() < 2 {
        return None;
    }
    stats::welch(&a.run_medians, &b.run_medians).map(|t| t.p)
}

/// What a test found, in words: whether b is slower or faster, and which part of the
/// distribution moved (the middle, the tail, the whole distribution).
pub fn verdict(t: &Test, cases: &[Case]) -> String {
    let (a, b) = (&cases[t.a], &cases[t.b]);
    if !t.significant {
        return match t.question {
            Question::Load => format!("no significant change with {}", jobs(b.background)),
            Question::Class => format!("{} and {} do not differ significantly", b.class, a.class),
        };
    }
    let tail: Vec<&TailTest> = t.tail.iter().filter(|x| x.significant).collect();
    // The direction: the middle's when it moved, else the tail's, else the distribution's.
    let slower = if t.middle {
        t.cliffs_delta > 0.0
    } else if let Some(x) = tail.first() {
        x.q.diff_pct > 0.0
    } else {
        t.cliffs_delta > 0.0
    };
    let dir = if slower { "slower" } else { "faster" };
    let mut parts: Vec<String> = Vec::new();
    if t.middle {
        parts.push("the middle".into());
    }
    if !tail.is_empty() {
        let names: Vec<String> = tail
            .iter()
            .map(|x| {
                let name = if x.q.pct == 99.0 { "p99" } else { "p99.9" };
                format!("{name} x{}", ratio(x.q.b / x.q.a))
            })
            .collect();
        parts.push(format!("the tail ({})", names.join(", ")));
    }
    if parts.is_empty() && t.ks_significant {
        parts.push("the distribution".into());
    }
    let mut what = parts.join(" and ");
    if !t.middle && !tail.is_empty() {
        what.push_str("; the middle did not change significantly");
    } else if t.middle && tail.is_empty() && !t.tail.is_empty() {
        what.push_str("; the tail did not change significantly");
    }
    match t.question {
        Question::Load => format!(
            "{} {} the {} foreground {dir} in {what}",
            jobs(b.background),
            if b.background == 1 { "makes" } else { "make" },
            b.class
        ),
        Question::Class => format!(
            "{} is {dir} than {} under {} in {what}",
            b.class,
            a.class,
            jobs(b.background)
        ),
    }
}

/// A ratio of means: three significant digits, four decimals when it is small.
fn ratio(r: f64) -> String {
    if r.is_finite() && r > 0.0 && r < 0.1 {
        format!("{r:.4}")
    } else {
        fmt::sig3(r)
    }
}

fn jobs(n: u32) -> String {
    match n {
        0 => "no background jobs".into(),
        1 => "1 background job".into(),
        n => format!("{n} background jobs"),
    }
}

const PCTS: [f64; 3] = [50.0, 99.0, 99.9];

/// A p-value: three decimals, or the exponent when it is tiny (its size says how sure).
fn pval(v: f64) -> String {
    if !v.is_finite() {
        "-".into()
    } else if v < 1e-300 {
        "<1e-300".into()
    } else if v < 0.001 {
        format!("{v:.1e}")
    } else {
        format!("{v:.3}")
    }
}

/// The text table and the tests.
pub fn text(header: &str, cases: &[Case], tests: &[Test], alpha: f64) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "{header}");
    let _ = writeln!(
        o,
        "{:<12} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>12}",
        "case", "n", "mean", "stdev", "rms", "p50", "p99", "p99.9", "max", "background"
    );
    for c in cases {
        let _ = write!(
            o,
            "{:<12} {:>7} {:>9} {:>9} {:>9}",
            c.label(),
            c.n,
            fmt::ns(c.mean),
            fmt::ns(c.stdev),
            fmt::ns(c.rms)
        );
        for p in PCTS {
            let _ = write!(o, " {:>9}", fmt::ns(c.percentile(p)));
        }
        let bg = if c.background == 0 {
            "-".to_string()
        } else {
            fmt::bw(c.background_bw)
        };
        let _ = writeln!(o, " {:>9} {:>12}", fmt::ns(c.max as f64), bg);
    }
    if tests.is_empty() {
        let _ = writeln!(o, "\nNo tests: the study needs two cases to compare.");
        return o;
    }
    let runs = cases.iter().map(|c| c.run_medians.len()).min().unwrap_or(0);
    let _ = writeln!(
        o,
        "\nTests, two-sided, Holm-adjusted over the {} tests, alpha {alpha}: per request, Mann-Whitney U on every response time;",
        tests.len()
    );
    if runs >= 2 {
        let _ = writeln!(
            o,
            "per run, Welch's t on the {runs} runs' medians. A difference counts when both are significant."
        );
    } else {
        let _ = writeln!(
            o,
            "one run per case: the per-request test alone cannot tell a shift from drift between runs (--repeat 3)."
        );
    }
    let _ = writeln!(
        o,
        "the tail: p99 and p99.9 by a run-blocked bootstrap (runs, then requests, resampled), Holm over the tail tests;"
    );
    let _ = writeln!(
        o,
        "the distribution: Kolmogorov-Smirnov (D >= {}, and across runs when there are several). A test counts when any part moved.",
        crate::tail::KS_MIN_D
    );
    let _ = writeln!(
        o,
        "  {:<5} {:<10}    {:<10} {:>7} {:>9} {:>9} {:>9} {:>9} {:>9} {:>7} {:>9} {:>6}  verdict",
        "test",
        "A",
        "B",
        "mean",
        "Cliff d",
        "p req",
        "adj",
        "p runs",
        "adj",
        "p99",
        "p tail",
        "KS D"
    );
    for t in tests {
        let (a, b) = (&cases[t.a], &cases[t.b]);
        let p99 = t.tail.iter().find(|x| x.q.pct == 99.0);
        let p_tail =
            t.tail
                .iter()
                .map(|x| x.p_adj)
                .fold(f64::NAN, |m, v| if m.is_nan() || v < m { v } else { m });
        let _ = writeln!(
            o,
            "  {:<5} {:<10} -> {:<10} {:>7} {:>+9.2} {:>9} {:>9} {:>9} {:>9} {:>7} {:>9} {:>6}  {}",
            t.question.name(),
            a.label(),
            b.label(),
            format!("x{}", ratio(t.mean_ratio)),
            t.cliffs_delta,
            pval(t.p),
            pval(t.p_adj),
            t.p_runs.map(pval).unwrap_or_else(|| "-".into()),
            t.p_runs_adj.map(pval).unwrap_or_else(|| "-".into()),
            p99.map(|x| format!("x{}", ratio(x.q.b / x.q.a)))
                .unwrap_or_else(|| "-".into()),
            pval(p_tail),
            t.ks.map(|k| format!("{:.2}", k.d))
                .unwrap_or_else(|| "-".into()),
            verdict(t, cases)
        );
    }
    for w in power_warnings(cases, tests) {
        let _ = writeln!(o, "warning: {w}");
    }
    o
}

/// What the study could not have seen: few runs, and the smallest p99 / p99.9 changes its
/// tail tests detect (the median over the tests that found none), with bimodal or drifting
/// runs in a case.
pub fn power_warnings(cases: &[Case], tests: &[Test]) -> Vec<String> {
    let mut out = Vec::new();
    let runs = cases.iter().map(|c| c.run_bins.len()).min().unwrap_or(0);
    if (1..3).contains(&runs) {
        out.push(if runs == 1 {
            "1 run per case: the variation between runs is not measured, so no test can tell a change from drift; use --repeat 5 or more".to_string()
        } else {
            format!(
                "{runs} runs per case: the run-level tests have almost no power (the variation between runs rests on {runs} values per case); use --repeat 5 or more"
            )
        });
    }
    for (pct, name) in [(99.0, "p99"), (99.9, "p99.9")] {
        let mut d: Vec<f64> = tests
            .iter()
            .flat_map(|t| t.tail.iter())
            .filter(|x| x.q.pct == pct && !x.significant && x.q.detectable_pct.is_finite())
            .map(|x| x.q.detectable_pct)
            .collect();
        if d.is_empty() {
            continue;
        }
        d.sort_by(f64::total_cmp);
        let med = d[d.len() / 2];
        out.push(format!(
            "with {runs} run{} per case, a change in {name} under {} cannot be seen by the tests that found none (their median; 80% power at 5%)",
            if runs == 1 { "" } else { "s" },
            fmt::pct(med).trim_start_matches('+')
        ));
    }
    for c in cases {
        let p99: Vec<f64> = c
            .run_bins
            .iter()
            .map(|b| stats::bins_percentile(b, 99.0))
            .collect();
        out.extend(crate::tail::run_warnings("p99", &c.label(), &p99, true));
    }
    out
}

fn num(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

/// The study as JSON: settings (given by the caller), cases and tests.
pub fn to_json(settings: Value, cases: &[Case], tests: &[Test], alpha: f64) -> Value {
    let cases_v: Vec<Value> = cases
        .iter()
        .map(|c| {
            let mut pct = serde_json::Map::new();
            for p in [1.0, 5.0, 10.0, 50.0, 90.0, 95.0, 99.0, 99.9, 99.99] {
                pct.insert(format!("{p:.6}"), num(c.percentile(p)));
            }
            json!({
                "case": c.label(),
                "class": c.class,
                "background_jobs": c.background,
                "n": c.n,
                "min_ns": c.min,
                "max_ns": c.max,
                "mean_ns": num(c.mean),
                "stdev_ns": num(c.stdev),
                "rms_ns": num(c.rms),
                "percentiles_ns": Value::Object(pct),
                "background_bw_bytes": num(c.background_bw),
                "runs": c.run_medians.len(),
                "run_medians_ns": c.run_medians,
            })
        })
        .collect();
    let tests_v: Vec<Value> = tests
        .iter()
        .map(|t| {
            json!({
                "question": t.question.name(),
                "a": cases[t.a].label(),
                "b": cases[t.b].label(),
                "mean_ratio": num(t.mean_ratio),
                "p_mann_whitney": num(t.p),
                "p_adjusted": num(t.p_adj),
                "p_welch": num(t.p_welch),
                "p_runs": t.p_runs.map(num),
                "p_runs_adjusted": t.p_runs_adj.map(num),
                "cliffs_delta": num(t.cliffs_delta),
                "middle_significant": t.middle,
                "tail_tests": t.tail.iter().map(|x| json!({
                    "percentile": x.q.pct,
                    "a_ns": num(x.q.a),
                    "b_ns": num(x.q.b),
                    "diff_pct": num(x.q.diff_pct),
                    "ci_pct": [num(x.q.ci_pct.0), num(x.q.ci_pct.1)],
                    "p": num(x.q.p),
                    "p_adjusted": num(x.p_adj),
                    "detectable_pct": num(x.q.detectable_pct),
                    "significant": x.significant,
                })).collect::<Vec<_>>(),
                "ks_test": t.ks.map(|k| json!({
                    "d": num(k.d),
                    "at_ns": k.at,
                    "p": num(k.p),
                    "p_adjusted": num(t.ks_p_adj),
                    "p_runs": t.ks_p_runs.map(num),
                    "significant": t.ks_significant,
                })),
                "significant": t.significant,
                "verdict": verdict(t, cases),
            })
        })
        .collect();
    json!({
        "study": "rt-study",
        "settings": settings,
        "alpha": alpha,
        "cases": cases_v,
        "tests": tests_v,
        "warnings": power_warnings(cases, tests),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Exact sums of a binned sample.
    fn sums_of(bins: &crate::stats::Bins) -> (u64, u128, u128, u64, u64) {
        let n: u64 = bins.iter().map(|b| b.1).sum();
        let sum: u128 = bins.iter().map(|(v, c)| *v as u128 * *c as u128).sum();
        let sumsq: u128 = bins
            .iter()
            .map(|(v, c)| *v as u128 * *v as u128 * *c as u128)
            .sum();
        let min = bins.iter().find(|b| b.1 > 0).map(|b| b.0).unwrap_or(0);
        let max = bins
            .iter()
            .rev()
            .find(|b| b.1 > 0)
            .map(|b| b.0)
            .unwrap_or(0);
        (n, sum, sumsq, min, max)
    }

    fn case(class: &str, bg: u32, bins: Vec<(u64, u64)>) -> Case {
        let (n, s, sq, mi, ma) = sums_of(&bins);
        Case::from_sums(class, bg, n, s, sq, mi, ma, bins, 0.0)
    }

    #[test]
    fn statistics_from_sums_are_exact() {
        // 1, 2, 3, 4 (µs): mean 2.5, sample stdev 1.29099, rms sqrt(7.5).
        let c = case("rt", 0, vec![(1000, 1), (2000, 1), (3000, 1), (4000, 1)]);
        assert_eq!(c.n, 4);
        assert!((c.mean - 2500.0).abs() < 1e-9);
        assert!((c.stdev - 1_290.994_448_735_805_6).abs() < 1e-6);
        assert!((c.rms - (7.5e6f64).sqrt()).abs() < 1e-6);
        assert_eq!((c.min, c.max), (1000, 4000));
    }

    #[test]
    fn tests_cover_both_questions_and_find_a_real_difference() {
        let fast: Vec<(u64, u64)> = (0..50).map(|i| (100_000 + i * 100, 20)).collect();
        let slow: Vec<(u64, u64)> = (0..50).map(|i| (400_000 + i * 100, 20)).collect();
        let cases = vec![
            case("rt", 0, fast.clone()),
            case("be", 0, fast.clone()),
            case("rt", 4, fast.clone()),
            case("be", 4, slow),
        ];
        let t = tests(&cases, 0.05);
        // load: rt 0→4, be 0→4; class: be→rt at 0 and at 4.
        assert_eq!(t.len(), 4);
        let by = |q: Question, a: usize, b: usize| {
            t.iter()
                .find(|x| x.question == q && x.a == a && x.b == b)
                .unwrap()
        };
        assert!(!by(Question::Load, 0, 2).significant);
        let l = by(Question::Load, 1, 3);
        assert!(l.significant && l.cliffs_delta > 0.9 && l.mean_ratio > 3.0);
        assert!(!by(Question::Class, 1, 0).significant);
        let c = by(Question::Class, 3, 2);
        assert!(c.significant && c.cliffs_delta < -0.9);
        assert!(verdict(c, &cases).contains("rt is faster than be under 4 background jobs"));
        let txt = text("h", &cases, &t, 0.05);
        assert!(txt.contains("be bg=4"), "{txt}");
        let j = to_json(json!({}), &cases, &t, 0.05);
        assert_eq!(j["cases"].as_array().unwrap().len(), 4);
        assert_eq!(j["tests"][0]["question"], "load");
    }

    #[test]
    fn runs_pool_exactly_and_the_run_level_test_decides() {
        let mut a = case("rt", 0, vec![(1000, 2), (3000, 2)]);
        a.absorb(case("rt", 0, vec![(1000, 1), (2000, 1)]));
        assert_eq!(a.n, 6);
        assert!((a.mean - 11000.0 / 6.0).abs() < 1e-9);
        assert_eq!(a.bins, vec![(1000, 3), (2000, 1), (3000, 2)]);
        assert_eq!(a.run_medians.len(), 2);
        // Two runs per case whose medians scatter as much as the cases differ: the
        // per-request test finds a shift, the run-level test does not, so no verdict.
        let run = |base: u64| -> Vec<(u64, u64)> { (0..40).map(|i| (base + i * 10, 5)).collect() };
        let mut x = case("be", 0, run(100_000));
        x.absorb(case("be", 0, run(130_000)));
        let mut y = case("be", 4, run(110_000));
        y.absorb(case("be", 4, run(140_000)));
        let t = tests(&[x, y], 0.05);
        assert_eq!(t.len(), 1);
        assert!(t[0].p_adj < 0.05, "per request: {:?}", t[0]);
        assert!(t[0].p_runs_adj.unwrap() >= 0.05, "per run: {:?}", t[0]);
        assert!(!t[0].significant);
    }

    /// A run of `n` log-normal response times (median 50 µs, sigma 0.3), a share `slow` of
    /// them 250 times slower (about 12.5 ms): the tail under background load.
    fn lognormal_run(
        rng: &mut crate::stats::Rng,
        class: &str,
        bg: u32,
        n: usize,
        slow: f64,
    ) -> Case {
        let mut h = flexio_stats::Hist::enabled();
        for _ in 0..n {
            let mut v = 50_000.0 * (0.3 * rng.normal()).exp();
            if rng.f64() < slow {
                v *= 250.0;
            }
            h.add(v as u64);
        }
        case(class, bg, h.bins())
    }

    fn two_runs(rng: &mut crate::stats::Rng, class: &str, bg: u32, slow: f64) -> Case {
        let mut c = lognormal_run(rng, class, bg, 5_000, slow);
        c.absorb(lognormal_run(rng, class, bg, 5_000, slow));
        c
    }

    #[test]
    fn a_tail_only_change_under_load_is_found_and_named() {
        // --repeat 2; the median stays, p99 goes from about 100 µs to about 12 ms.
        let mut rng = crate::stats::Rng::new(3);
        let cases = vec![
            two_runs(&mut rng, "rt", 0, 0.0),
            two_runs(&mut rng, "rt", 4, 0.02),
        ];
        let t = tests(&cases, 0.05);
        assert_eq!(t.len(), 1);
        let v = verdict(&t[0], &cases);
        assert!(t[0].significant, "{t:?}");
        assert!(
            v.contains("4 background jobs make the rt foreground slower in the tail (p99 x"),
            "{v}"
        );
        assert!(v.contains("the middle did not change significantly"), "{v}");
        let txt = text("h", &cases, &t, 0.05);
        assert!(
            txt.contains("warning: 2 runs per case: the run-level tests have almost no power"),
            "{txt}"
        );
    }

    #[test]
    fn no_change_is_called_a_change_in_at_most_5_of_100_studies() {
        let mut alarms = 0;
        for seed in 0..100u64 {
            let mut rng = crate::stats::Rng::new(500 + seed);
            let cases = vec![
                two_runs(&mut rng, "rt", 0, 0.01),
                two_runs(&mut rng, "rt", 4, 0.01),
            ];
            let t = &tests_with(&cases, 0.05, 500)[0];
            if t.significant {
                eprintln!(
                    "seed {seed}: middle {} tail {:?} ks {}",
                    t.middle,
                    t.tail.iter().map(|x| x.p_adj).collect::<Vec<_>>(),
                    t.ks_significant
                );
                alarms += 1;
            }
        }
        eprintln!("false alarms: {alarms} of 100");
        assert!(alarms <= 5, "{alarms} of 100");
    }

    #[test]
    fn one_case_has_no_tests() {
        let cases = vec![case("rt", 0, vec![(5, 3)])];
        assert!(tests(&cases, 0.05).is_empty());
        assert!(text("h", &cases, &[], 0.05).contains("No tests"));
    }
}
