//! The tail tests on synthetic runs with known differences.

use super::*;
use flexio_stats::Hist;

/// One run: `n` log-normal latencies (median `med` ns, sigma 0.3); a share `slow` of
/// them `factor` times slower (the tail).
fn run(rng: &mut Rng, n: usize, med: f64, slow: f64, factor: f64) -> Vec<(u64, u64)> {
    let mut h = Hist::enabled();
    for _ in 0..n {
        let mut v = med * (0.3 * rng.normal()).exp();
        if rng.f64() < slow {
            v *= factor;
        }
        h.add(v as u64);
    }
    h.bins()
}

fn side(rng: &mut Rng, runs: usize, slow: f64, factor: f64) -> Vec<Vec<(u64, u64)>> {
    (0..runs)
        .map(|_| run(rng, 20_000, 100_000.0, slow, factor))
        .collect()
}

fn pooled(s: &[Vec<(u64, u64)>]) -> Vec<(u64, u64)> {
    let mut m = std::collections::BTreeMap::new();
    for r in s {
        for (v, c) in r {
            *m.entry(*v).or_insert(0u64) += c;
        }
    }
    m.into_iter().collect()
}

#[test]
fn a_tail_only_shift_is_found_and_the_median_is_not() {
    let mut rng = Rng::new(7);
    // 2% of B's requests are 25 times slower: p99 moves about 10x, the median does not.
    let a = side(&mut rng, 3, 0.0, 1.0);
    let b = side(&mut rng, 3, 0.02, 25.0);
    let p99 = quantile_test(&a, &b, 99.0, 1000, 1).unwrap();
    eprintln!("tail shift: {p99:?}");
    assert!(p99.p < 0.01, "{p99:?}");
    assert!(p99.diff_pct > 800.0, "{p99:?}");
    assert!(p99.ci_pct.0 > 0.0, "{p99:?}");
    let p50 = quantile_test(&a, &b, 50.0, 1000, 1).unwrap();
    assert!(p50.diff_pct.abs() < 5.0, "{p50:?}");
    // The whole-distribution test sees it too, where the distribution functions part.
    let ks = ks_binned(&pooled(&a), &pooled(&b)).unwrap();
    assert!(
        ks.p < 0.001 && ks.d < 0.05,
        "{ks:?}: a 2% share moves the CDF by 2%"
    );
}

#[test]
fn no_change_raises_at_most_five_percent_false_alarms() {
    // 100 seeded repetitions of two sides drawn alike: p99 and p99.9 called different at
    // 5% no more than 5 times each.
    let (mut alarms99, mut alarms999) = (0, 0);
    for seed in 0..100u64 {
        let mut rng = Rng::new(1000 + seed);
        let a = side(&mut rng, 2, 0.01, 5.0);
        let b = side(&mut rng, 2, 0.01, 5.0);
        if quantile_test(&a, &b, 99.0, 400, seed).unwrap().p < 0.05 {
            alarms99 += 1;
        }
        if quantile_test(&a, &b, 99.9, 400, seed).unwrap().p < 0.05 {
            alarms999 += 1;
        }
    }
    eprintln!("false alarms in 100: p99 {alarms99}, p99.9 {alarms999}");
    assert!(alarms99 <= 5, "{alarms99} false alarms in p99");
    assert!(alarms999 <= 5, "{alarms999} false alarms in p99.9");
}

#[test]
fn bimodal_runs_do_not_make_a_tail_difference() {
    // The readahead case: each run falls in one of two modes (the slow one 2.7 times
    // slower), whatever the setting. A got 1 slow run of 3, B 2 of 3: pooled p99 differs,
    // the runs do not support it.
    let mut rng = Rng::new(11);
    let mode = |rng: &mut Rng, slow: bool| {
        run(
            rng,
            20_000,
            if slow { 270_000.0 } else { 100_000.0 },
            0.0,
            1.0,
        )
    };
    let a = vec![
        mode(&mut rng, false),
        mode(&mut rng, true),
        mode(&mut rng, false),
    ];
    let b = vec![
        mode(&mut rng, true),
        mode(&mut rng, false),
        mode(&mut rng, true),
    ];
    let t = quantile_test(&a, &b, 99.0, 2000, 3).unwrap();
    eprintln!("bimodal: {t:?}");
    assert!(t.p > 0.05, "{t:?}");
    let per_run: Vec<f64> = b.iter().map(|r| stats::bins_percentile(r, 99.0)).collect();
    let w = run_warnings("p99", "B", &per_run, true);
    assert!(w.iter().any(|s| s.contains("bimodal")), "{w:?}");
    // Alike runs raise no warning.
    let alike: Vec<f64> = a
        .iter()
        .take(1)
        .chain(a.iter().skip(2))
        .map(|r| stats::bins_percentile(r, 99.0))
        .collect();
    assert!(run_warnings("p99", "A", &[alike[0], alike[1], alike[0] * 1.01], true).is_empty());
}

#[test]
fn drift_and_detectable_effects() {
    let w = run_warnings(
        "IOPS",
        "A",
        &[100.0, 110.0, 121.0, 133.0, 146.0, 161.0],
        false,
    );
    assert!(w.iter().any(|s| s.contains("drifts")), "{w:?}");
    let mut rng = Rng::new(5);
    let a = side(&mut rng, 2, 0.01, 5.0);
    let b = side(&mut rng, 2, 0.01, 5.0);
    let t = quantile_test(&a, &b, 99.0, 500, 9).unwrap();
    assert!(t.detectable_pct > 0.0 && t.detectable_pct < 200.0, "{t:?}");
    let note = power_note(&t, "p99");
    assert!(
        note.starts_with("with 2 runs per side, a change in p99 under "),
        "{note}"
    );
}

#[test]
fn kolmogorov_tail() {
    assert_eq!(kolmogorov_q(0.1), 1.0);
    // Q(1.36) is about 0.049, the 5% point.
    assert!((kolmogorov_q(1.36) - 0.0494).abs() < 0.002);
    let same = vec![(10u64, 5u64), (20, 5)];
    let k = ks_binned(&same, &same).unwrap();
    assert_eq!(k.d, 0.0);
    assert_eq!(k.p, 1.0);
}
