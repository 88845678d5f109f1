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
use crate::stats::{self, Bins};
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
    /// The background jobs' summed bandwidth (bytes/s) during the case.
    pub background_bw: f64,
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
        let nf = n as f64;
        let mean = if n > 0 { sum as f64 / nf } else { f64::NAN };
        let var = if n > 1 {
            ((sumsq as f64 - sum as f64 * sum as f64 / nf) / (nf - 1.0)).max(0.0)
        } else {
            f64::NAN
        };
        Case {
            class: class.to_string(),
            background,
            n,
            mean,
            stdev: var.sqrt(),
            rms: if n > 0 {
                (sumsq as f64 / nf).sqrt()
            } else {
                f64::NAN
            },
            min,
            max,
            bins,
            background_bw,
        }
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
    pub significant: bool,
}

/// The study's tests: for each class, no background against each background count (or
/// the smallest count against the others when 0 is not among them); for each background
/// count, best-effort against real-time (and idle against best-effort when present).
pub fn tests(cases: &[Case], alpha: f64) -> Vec<Test> {
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
                significant: false,
            })
        })
        .collect();
    let adj = stats::holm(&out.iter().map(|t| t.p).collect::<Vec<_>>());
    for (t, p) in out.iter_mut().zip(adj) {
        t.p_adj = p;
        t.significant = p < alpha;
    }
    out
}

/// What a test found, in words.
pub fn verdict(t: &Test, cases: &[Case]) -> String {
    let (a, b) = (&cases[t.a], &cases[t.b]);
    if !t.significant {
        return match t.question {
            Question::Load => format!("no significant change with {}", jobs(b.background)),
            Question::Class => format!("{} and {} do not differ significantly", b.class, a.class),
        };
    }
    let dir = if t.cliffs_delta > 0.0 {
        "slower"
    } else {
        "faster"
    };
    match t.question {
        Question::Load => format!(
            "{} {} the {} foreground {dir}",
            jobs(b.background),
            if b.background == 1 { "makes" } else { "make" },
            b.class
        ),
        Question::Class => format!(
            "{} is {dir} than {} under {}",
            b.class,
            a.class,
            jobs(b.background)
        ),
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
    let _ = writeln!(
        o,
        "\nTests: Mann-Whitney U on every response time, two-sided, Holm-adjusted over {} tests, alpha {}",
        tests.len(),
        alpha
    );
    for t in tests {
        let (a, b) = (&cases[t.a], &cases[t.b]);
        let _ = writeln!(
            o,
            "  {:<5} {:<10} -> {:<10} mean x{:<5} p {:>7}  adj {:>7}  Welch p {:>7}  Cliff's d {:+.2}: {}",
            t.question.name(),
            a.label(),
            b.label(),
            fmt::sig3(t.mean_ratio),
            pval(t.p),
            pval(t.p_adj),
            pval(t.p_welch),
            t.cliffs_delta,
            verdict(t, cases)
        );
    }
    o
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
                "cliffs_delta": num(t.cliffs_delta),
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
    })
}

/// Exact sums of a binned sample (for tests and callers without a log).
pub fn sums_of(bins: &Bins) -> (u64, u128, u128, u64, u64) {
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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!((c.stdev - 1290.994_448_735_805_6).abs() < 1e-6);
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
    fn one_case_has_no_tests() {
        let cases = vec![case("rt", 0, vec![(5, 3)])];
        assert!(tests(&cases, 0.05).is_empty());
        assert!(text("h", &cases, &[], 0.05).contains("No tests"));
    }
}
