//! Comparisons on synthetic result sets with known differences.

use super::*;
use crate::model::{JobResult, Lat, Samples};
use crate::stats::Rng;
use flexio_stats::Hist;

/// One synthetic trial: `n` log-normal latencies (median `med` ns, sigma 0.4) scaled by a
/// run-to-run factor (CV `cv`); queue depth 1, so IOPS = 1e9 / mean latency.
fn trial(rng: &mut Rng, name: &str, med: f64, cv: f64, n: usize) -> RunResult {
    let factor = 1.0 + cv * rng.normal();
    let mut h = Hist::enabled();
    let mut st = flexio_stats::stat::LatStat::default();
    for _ in 0..n {
        let v = (med * factor * (0.4 * rng.normal()).exp()) as u64;
        h.add(v);
        st.add(v);
    }
    let s = st.to_stat();
    let lat = Lat {
        min: s.min,
        max: s.max,
        mean: s.mean,
        stddev: s.stddev(),
        n: s.samples,
        percentiles: h.percentiles(&[50.0, 99.0, 99.9], s.samples),
        bins: h.bins(),
    };
    let iops = 1e9 / s.mean;
    let dir = DirResult {
        ddir: Ddir::Read,
        io_bytes: n as u64 * 4096,
        bw_bytes: iops * 4096.0,
        iops,
        runtime_ms: (n as f64 * s.mean / 1e6) as u64,
        total_ios: n as u64,
        slat: Lat::default(),
        clat: lat,
        lat: Lat::default(),
        sched_lat: None,
        bw_samples: Samples {
            mean: iops * 4.0,
            stddev: iops * 4.0 * 0.03,
            n: 20,
            ..Default::default()
        },
        iops_samples: Samples {
            mean: iops,
            stddev: iops * 0.03,
            n: 20,
            ..Default::default()
        },
    };
    RunResult {
        path: format!("{name}.json").into(),
        label: name.into(),
        jobs: vec![JobResult {
            name: "j".into(),
            dirs: vec![dir],
            ..Default::default()
        }],
        ..Default::default()
    }
}

fn set(rng: &mut Rng, k: usize, med: f64, cv: f64) -> Vec<RunResult> {
    (0..k)
        .map(|i| trial(rng, &format!("t{i}"), med, cv, 4000))
        .collect()
}

fn row(d: &DirComparison, m: Metric) -> &Row {
    d.rows.iter().find(|r| r.metric == m).unwrap()
}

#[test]
fn a_known_ten_percent_difference_is_found_with_its_sign() {
    let mut rng = Rng::new(42);
    // B's latencies are 10 % lower, so its IOPS are 11.1 % higher: B is faster.
    let a = set(&mut rng, 5, 100_000.0, 0.02);
    let b = set(&mut rng, 5, 90_000.0, 0.02);
    let c = compare(&a, &b, &Options::default());
    assert_eq!(c.dirs.len(), 1);
    let d = &c.dirs[0];
    assert_eq!(
        d.verdict,
        Verdict::Faster,
        "{}",
        crate::compare_out::text(&c)
    );
    let iops = row(d, Metric::Iops);
    assert!(iops.significant && iops.b_better);
    assert!(iops.diff_pct > 5.0 && iops.diff_pct < 17.0, "{iops:?}");
    let (lo, hi) = iops.ci_pct.unwrap();
    assert!(lo > 0.0 && lo < iops.diff_pct && iops.diff_pct < hi);
    let mean = row(d, Metric::LatMean);
    assert!(mean.significant && mean.b_better && mean.diff_pct < 0.0);
    assert!(d.headline.starts_with("B is faster: +"), "{}", d.headline);
    assert!(d.headline.contains("IOPS"));
    assert!(c.regressions(5.0).is_empty());

    // The other way round: a significant regression, worse than 5 %.
    let c = compare(&b, &a, &Options::default());
    let d = &c.dirs[0];
    assert_eq!(d.verdict, Verdict::Slower);
    assert!(d.headline.starts_with("B is slower: -"), "{}", d.headline);
    let reg = c.regressions(5.0);
    assert!(
        reg.iter().any(|r| r.2 == Metric::Iops && r.3 < -5.0),
        "{reg:?}"
    );
    assert!(c.regressions(50.0).is_empty());
}

#[test]
fn same_distribution_is_no_difference_in_at_least_95_of_100() {
    let mut false_positives = 0;
    for seed in 0..100u64 {
        let mut rng = Rng::new(1000 + seed);
        let a = set(&mut rng, 5, 100_000.0, 0.03);
        let b = set(&mut rng, 5, 100_000.0, 0.03);
        let o = Options {
            seed,
            reps: 1000,
            ..Default::default()
        };
        let c = compare(&a, &b, &o);
        if c.dirs[0].verdict != Verdict::NoDifference {
            false_positives += 1;
        }
    }
    eprintln!("false positives: {false_positives}/100");
    assert!(false_positives <= 5, "{false_positives} of 100");
}

#[test]
fn one_trial_each_uses_the_distributions() {
    let mut rng = Rng::new(7);
    let a = vec![trial(&mut rng, "a", 100_000.0, 0.0, 20_000)];
    let b = vec![trial(&mut rng, "b", 110_000.0, 0.0, 20_000)];
    let c = compare(&a, &b, &Options::default());
    let d = &c.dirs[0];
    assert_eq!(
        d.verdict,
        Verdict::Slower,
        "{}",
        crate::compare_out::text(&c)
    );
    let p99 = row(d, Metric::P99);
    assert!(p99.significant && !p99.b_better && p99.diff_pct > 5.0);
    assert_eq!(p99.ci_method, "Poisson bootstrap");
    let dist = d.dist.as_ref().unwrap();
    assert!(dist.p < 0.001 && dist.cliffs_delta > 0.1, "{dist:?}");
    // Same distribution: no verdict, and the distribution test sees a negligible effect.
    let a2 = vec![trial(&mut rng, "a2", 100_000.0, 0.0, 20_000)];
    let c = compare(&a, &a2, &Options::default());
    assert_eq!(
        c.dirs[0].verdict,
        Verdict::NoDifference,
        "{}",
        crate::compare_out::text(&c)
    );
    assert!(!c.dirs[0].dist.as_ref().unwrap().significant);
    // Output formats carry it.
    let j = crate::compare_out::to_json(&c);
    assert_eq!(j["comparisons"][0]["verdict"], "no significant difference");
    assert!(crate::compare_out::html(&c).contains("<table class=\"cmp\">"));
}

#[test]
fn one_result_each_finds_a_known_ten_percent_difference_with_its_sign() {
    let mut rng = Rng::new(21);
    // B's latencies are 10 % lower (IOPS 11.1 % higher): B is faster, on every row.
    let a = vec![trial(&mut rng, "a", 100_000.0, 0.0, 20_000)];
    let b = vec![trial(&mut rng, "b", 90_000.0, 0.0, 20_000)];
    let c = compare(&a, &b, &Options::default());
    let text = crate::compare_out::text(&c);
    let d = &c.dirs[0];
    assert_eq!(d.verdict, Verdict::Faster, "{text}");
    assert!(d.headline.starts_with("B is faster: "), "{}", d.headline);
    for m in [Metric::LatMean, Metric::P50, Metric::P99] {
        let r = row(d, m);
        assert_eq!(r.ci_method, "Poisson bootstrap");
        assert!(r.significant && r.b_better, "{m:?}: {text}");
        assert!(r.diff_pct > -16.0 && r.diff_pct < -5.0, "{m:?}: {r:?}");
        let (lo, hi) = r.ci_pct.unwrap();
        assert!(
            lo < r.diff_pct && r.diff_pct < hi && hi < 0.0,
            "{m:?}: {r:?}"
        );
    }
    let iops = row(d, Metric::Iops);
    assert!(iops.significant && iops.b_better, "{text}");
    assert!(iops.diff_pct > 5.0 && iops.diff_pct < 17.0, "{iops:?}");
    let dist = d.dist.as_ref().unwrap();
    assert!(dist.significant && dist.cliffs_delta < -0.147, "{dist:?}");
    // Swapped: the same difference with the opposite sign.
    let c = compare(&b, &a, &Options::default());
    let d = &c.dirs[0];
    assert_eq!(d.verdict, Verdict::Slower);
    let p50 = row(d, Metric::P50);
    assert!(
        p50.significant && !p50.b_better && p50.diff_pct > 5.0,
        "{p50:?}"
    );
    assert!(d.dist.as_ref().unwrap().cliffs_delta > 0.147);
    assert!(c.regressions(5.0).iter().any(|r| r.2 == Metric::P50));
}

#[test]
fn one_result_each_same_distribution_is_no_difference_in_at_least_95_of_100() {
    // The one-result-each path: IOPS and bandwidth by Welch on the periodic samples, the
    // latency rows by the Poisson bootstrap of the histograms, the whole distribution by the
    // binned Mann-Whitney test. Two runs from the same distribution, 100 seeded repetitions.
    let mut false_positives = 0;
    let mut any_row = 0;
    let mut raw = 0;
    for seed in 0..100u64 {
        let mut rng = Rng::new(5000 + seed);
        let a = vec![trial(&mut rng, "a", 100_000.0, 0.0, 4_000)];
        let b = vec![trial(&mut rng, "b", 100_000.0, 0.0, 4_000)];
        let o = Options {
            seed,
            reps: 300,
            ..Default::default()
        };
        let c = compare(&a, &b, &o);
        let d = &c.dirs[0];
        assert!(d.dist.is_some(), "the distribution test ran");
        assert_eq!(row(d, Metric::P99).ci_method, "Poisson bootstrap");
        if d.verdict != Verdict::NoDifference {
            false_positives += 1;
        }
        if d.rows.iter().any(|r| r.significant) || d.dist.as_ref().unwrap().significant {
            any_row += 1;
        }
        // Without the minimum effect the p-values and intervals alone decide.
        let o0 = Options {
            min_effect_pct: Some(0.0),
            ..o
        };
        if compare(&a, &b, &o0).dirs[0].verdict != Verdict::NoDifference {
            raw += 1;
        }
    }
    eprintln!(
        "one result each: false positives {false_positives}/100 (any significant test: {any_row}; without the minimum effect: {raw})"
    );
    assert!(false_positives <= 5, "{false_positives} of 100");
    assert!(any_row <= 5, "{any_row} of 100");
    assert!(raw <= 5, "{raw} of 100 without the minimum effect");
}

#[test]
fn per_io_rate_samples_are_not_tested_as_periodic_ones() {
    // A wrote per-I/O IOPS and bandwidth logs (log_avg_msec 0): its "samples" are one per
    // I/O (IOPS samples all 1, bandwidth per I/O), which a Welch test against B's periodic
    // samples would turn into a huge, "significant" difference.
    let mut rng = Rng::new(8);
    let mut a = vec![trial(&mut rng, "a", 100_000.0, 0.0, 4_000)];
    let b = vec![trial(&mut rng, "b", 100_000.0, 0.0, 4_000)];
    {
        let j = &mut a[0].jobs[0];
        j.options = vec![
            ("write_iops_log".into(), "a".into()),
            ("write_bw_log".into(), "a".into()),
        ];
        let d = &mut j.dirs[0];
        d.iops_samples = Samples {
            mean: 1.0,
            stddev: 0.0,
            n: 4000,
            ..Default::default()
        };
        d.bw_samples.mean *= 50.0;
        d.bw_samples.n = 4000;
    }
    assert!(a[0].jobs[0].per_io_samples(true) && a[0].jobs[0].per_io_samples(false));
    let c = compare(&a, &b, &Options::default());
    let text = crate::compare_out::text(&c);
    let d = &c.dirs[0];
    for m in [Metric::Iops, Metric::Bw] {
        let r = row(d, m);
        assert!(r.p.is_none() && !r.significant, "{m:?}: {text}");
        assert!(r.note.as_deref().unwrap().contains("one per I/O"), "{text}");
    }
    assert_eq!(d.verdict, Verdict::NoDifference, "{text}");
    // log_avg_msec > 0: periodic samples, tested as usual.
    a[0].jobs[0]
        .options
        .push(("log_avg_msec".into(), "500".into()));
    assert!(!a[0].jobs[0].per_io_samples(true));
    let c = compare(&a, &b, &Options::default());
    // ... but these samples do not average to the result's IOPS: still no test.
    let r = row(&c.dirs[0], Metric::Iops);
    assert!(r.p.is_none(), "{r:?}");
    assert!(r.note.as_deref().unwrap().contains("do not match"), "{r:?}");
    // Genuine periodic samples on both sides are tested.
    let c = compare(&b, &b, &Options::default());
    assert!(row(&c.dirs[0], Metric::Iops).p.is_some());
}

#[test]
fn jobs_are_matched_by_name_or_position() {
    let mut rng = Rng::new(3);
    let a = set(&mut rng, 2, 100_000.0, 0.02);
    let mut b = set(&mut rng, 2, 100_000.0, 0.02);
    for r in &mut b {
        r.jobs[0].name = "other".into();
    }
    let c = compare(&a, &b, &Options::default());
    assert_eq!(c.dirs.len(), 1);
    assert!(c.notes[0].contains("by position"), "{:?}", c.notes);
    assert!(crate::compare_out::text(&c).contains("A 'j' vs B 'other' (read)"));
    // Two jobs in A, one named like B's: the other is reported as unmatched.
    let mut a2 = a.clone();
    for r in &mut a2 {
        let mut extra = r.jobs[0].clone();
        extra.name = "other".into();
        r.jobs.push(extra);
    }
    let c = compare(&a2, &b, &Options::default());
    assert_eq!(c.dirs.len(), 1);
    assert!(
        c.notes.iter().any(|n| n.contains("'j' is only in A")),
        "{:?}",
        c.notes
    );
    let empty = compare(&a, &[], &Options::default());
    assert!(empty.dirs.is_empty() && !empty.notes.is_empty());
}

#[test]
#[ignore]
fn print_example() {
    let mut rng = Rng::new(42);
    let a = set(&mut rng, 5, 100_000.0, 0.02);
    let b = set(&mut rng, 5, 90_000.0, 0.02);
    println!(
        "{}",
        crate::compare_out::text(&compare(&a, &b, &Options::default()))
    );
    let a = vec![trial(&mut rng, "a", 100_000.0, 0.0, 20_000)];
    let b = vec![trial(&mut rng, "b", 110_000.0, 0.0, 20_000)];
    println!(
        "{}",
        crate::compare_out::text(&compare(&a, &b, &Options::default()))
    );
}

/// The readahead case: every run falls near one of two speeds whatever the setting; A got
/// 1 slow run of 3, B got 2 of 3. compare warns that the runs are bimodal and does not call
/// the p99 difference significant.
#[test]
fn bimodal_trials_are_flagged_and_not_called_different() {
    let mut rng = Rng::new(21);
    let t = |rng: &mut Rng, name: &str, slow: bool| {
        trial(
            rng,
            name,
            if slow { 270_000.0 } else { 100_000.0 },
            0.01,
            20_000,
        )
    };
    let a = vec![
        t(&mut rng, "a1", false),
        t(&mut rng, "a2", true),
        t(&mut rng, "a3", false),
    ];
    let b = vec![
        t(&mut rng, "b1", true),
        t(&mut rng, "b2", false),
        t(&mut rng, "b3", true),
    ];
    let c = compare(&a, &b, &Options::default());
    let d = &c.dirs[0];
    let p99 = row(d, Metric::P99);
    assert_eq!(p99.test, "quantile bootstrap");
    assert!(!p99.significant, "{p99:?}");
    assert!(
        d.warnings.iter().any(|w| w.contains("bimodal")),
        "{:?}",
        d.warnings
    );
    let text = crate::compare_out::text(&c);
    eprintln!("{text}");
    assert!(
        text.contains("warning: A's runs are bimodal")
            || text.contains("warning: B's runs are bimodal"),
        "{text}"
    );
    assert!(text.contains("Kolmogorov-Smirnov"), "{text}");
}

/// A tail-only change across trials: 2% of B's requests 25 times slower. The verdict is
/// "slower", names the tail, and says that the middle did not move.
#[test]
fn a_tail_only_change_is_named() {
    let mut rng = Rng::new(5);
    let mk = |rng: &mut Rng, name: &str, slow: f64| {
        let mut r = trial(rng, name, 100_000.0, 0.0, 20_000);
        // Rebuild the distribution with a slow share.
        let mut h = Hist::enabled();
        let mut st = flexio_stats::stat::LatStat::default();
        for _ in 0..20_000 {
            let mut v = 100_000.0 * (0.4 * rng.normal()).exp();
            if rng.f64() < slow {
                v *= 25.0;
            }
            h.add(v as u64);
            st.add(v as u64);
        }
        let s = st.to_stat();
        let d = &mut r.jobs[0].dirs[0];
        d.clat.bins = h.bins();
        d.clat.percentiles = h.percentiles(&[50.0, 99.0, 99.9], s.samples);
        d.clat.mean = s.mean;
        d.clat.n = s.samples;
        r
    };
    let a: Vec<RunResult> = (0..3)
        .map(|i| mk(&mut rng, &format!("a{i}"), 0.0))
        .collect();
    let b: Vec<RunResult> = (0..3)
        .map(|i| mk(&mut rng, &format!("b{i}"), 0.02))
        .collect();
    let c = compare(&a, &b, &Options::default());
    eprintln!("{}", crate::compare_out::text(&c));
    let d = &c.dirs[0];
    assert_eq!(d.verdict, Verdict::Slower, "{}", d.headline);
    assert!(row(d, Metric::P99).significant, "{:?}", row(d, Metric::P99));
    assert!(
        !row(d, Metric::P50).significant,
        "{:?}",
        row(d, Metric::P50)
    );
    assert!(
        d.headline.contains("moved: ") && d.headline.contains("tail"),
        "{}",
        d.headline
    );
    assert!(
        d.headline.contains("not significantly: ") && d.headline.contains("median"),
        "{}",
        d.headline
    );
}
