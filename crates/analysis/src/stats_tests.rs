//! Unit tests of the statistics against reference values. The references were computed
//! with SciPy 1.17 (`scipy.stats.ttest_ind(b, a, equal_var=False)`,
//! `scipy.stats.mannwhitneyu(b, a, alternative="two-sided", method=...)`), whose results
//! agree with R's `t.test` and `wilcox.test(correct=TRUE)`.

use super::*;

const A: [f64; 7] = [19.1, 21.3, 20.4, 22.8, 18.9, 20.0, 21.7];
const B: [f64; 6] = [23.4, 22.1, 25.0, 24.2, 21.9, 23.8];

fn close(x: f64, y: f64, rel: f64) -> bool {
    (x - y).abs() <= rel * y.abs().max(1e-300)
}

#[test]
fn welch_matches_reference() {
    let t = welch(&A, &B).unwrap();
    assert!(close(t.t, 3.842644829087285, 1e-9), "{t:?}");
    assert!(close(t.df, 10.999375959580115, 1e-9), "{t:?}");
    assert!(close(t.p, 0.0027342856424169546, 1e-6), "{t:?}");
    assert!(close(t.ci.0, 1.196208502022768, 1e-6), "{t:?}");
    assert!(close(t.ci.1, 4.403791497977241, 1e-6), "{t:?}");
    // The sign follows b - a.
    let r = welch(&B, &A).unwrap();
    assert!(close(r.t, -3.842644829087285, 1e-9));
    assert!(close(r.p, t.p, 1e-12));
    // Larger samples.
    let (xa, xb) = large();
    let t = welch(&xa, &xb).unwrap();
    assert!(close(t.t, -4.255300430505603, 1e-9), "{t:?}");
    assert!(close(t.df, 83.80991585196116, 1e-9), "{t:?}");
    assert!(close(t.p, 5.4111557818872274e-05, 1e-5), "{t:?}");
    assert!(welch(&[1.0], &B).is_none());
}

#[test]
fn welch_without_spread() {
    let same = welch(&[5.0, 5.0], &[5.0, 5.0, 5.0]).unwrap();
    assert_eq!(same.p, 1.0);
    let diff = welch(&[5.0, 5.0], &[6.0, 6.0]).unwrap();
    assert_eq!(diff.p, 0.0);
    assert!(diff.t > 0.0);
}

fn large() -> (Vec<f64>, Vec<f64>) {
    let xa = (1..=60).map(|i| (i * 7919 % 1000) as f64 / 100.0).collect();
    let xb = (1..=70)
        .map(|i| (i * 6007 % 1000) as f64 / 100.0 + 0.755)
        .collect();
    (xa, xb)
}

#[test]
fn mann_whitney_exact_matches_reference() {
    let u = mann_whitney(&A, &B).unwrap();
    assert!(u.exact);
    assert_eq!(u.u_b, 40.0);
    assert!(close(u.p, 0.004662004662004662, 1e-9), "{u:?}");
    let u = mann_whitney(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]).unwrap();
    assert!(close(u.p, 0.1, 1e-12), "{u:?}");
    assert_eq!(u.cliffs_delta, 1.0);
    let u = mann_whitney(&[5.0, 7.0, 8.0, 9.0], &[1.0, 2.5, 3.0, 4.0, 6.0]).unwrap();
    assert!(close(u.p, 0.031746031746031744, 1e-9), "{u:?}");
}

#[test]
fn mann_whitney_ties_and_large_match_reference() {
    let x = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0, 5.0, 6.0];
    let y = [3.0, 4.0, 4.0, 5.0, 6.0, 6.0, 7.0, 7.0, 8.0, 8.0, 9.0];
    let u = mann_whitney(&x, &y).unwrap();
    assert!(!u.exact);
    assert_eq!(u.u_b, 94.5);
    assert!(close(u.p, 0.005625214779700691, 1e-9), "{u:?}");
    let (xa, xb) = large();
    let u = mann_whitney(&xa, &xb).unwrap();
    assert!(!u.exact);
    assert_eq!(u.u_b, 1352.0);
    assert!(close(u.p, 0.0004813367512411929, 1e-9), "{u:?}");
}

#[test]
fn binned_mann_whitney_equals_the_tied_sample_test() {
    let x = [1.0, 2.0, 2.0, 3.0, 3.0, 3.0, 4.0, 5.0, 5.0, 6.0];
    let y = [3.0, 4.0, 4.0, 5.0, 6.0, 6.0, 7.0, 7.0, 8.0, 8.0, 9.0];
    let bins = |v: &[f64]| {
        let mut out: Vec<(u64, u64)> = Vec::new();
        for x in v {
            let k = *x as u64;
            match out.last_mut() {
                Some(l) if l.0 == k => l.1 += 1,
                _ => out.push((k, 1)),
            }
        }
        out
    };
    let u = mann_whitney_binned(&bins(&x), &bins(&y)).unwrap();
    assert_eq!(u.u_b, 94.5);
    assert!(close(u.p, 0.005625214779700691, 1e-9), "{u:?}");
    // Identical distributions: no shift at all.
    let same = mann_whitney_binned(&bins(&x), &bins(&x)).unwrap();
    assert_eq!(same.cliffs_delta, 0.0);
    assert!(same.p > 0.99);
    assert!(mann_whitney_binned(&[], &bins(&x)).is_none());
}

#[test]
fn effect_sizes() {
    assert!(close(hedges_g(&A, &B), 1.9623163541044981, 1e-9));
    assert!(close(hedges_g(&B, &A), -1.9623163541044981, 1e-9));
    // Cliff's delta from U: 40 of 42 pairs have b > a.
    assert!(close(cliffs_delta(&A, &B), 2.0 * 40.0 / 42.0 - 1.0, 1e-12));
    let u = mann_whitney(&A, &B).unwrap();
    assert!(close(u.prob_superiority(), 40.0 / 42.0, 1e-12));
    assert_eq!(hedges_g(&[1.0, 1.0], &[1.0, 1.0]), 0.0);
}

#[test]
fn holm_adjustment() {
    let adj = holm(&[0.01, 0.04, 0.03, 0.005]);
    let want = [0.03, 0.06, 0.06, 0.02];
    for (a, w) in adj.iter().zip(want) {
        assert!(close(*a, w, 1e-12), "{adj:?}");
    }
    assert_eq!(holm(&[0.9, 0.4]), vec![0.9, 0.8]);
}

#[test]
fn bootstrap_is_seeded_and_covers_the_truth() {
    let a: Vec<f64> = (0..40).map(|i| 100.0 + (i % 7) as f64).collect();
    let b: Vec<f64> = a.iter().map(|v| v * 1.1).collect();
    let r1 = bootstrap2(&a, &b, 2000, 7, rel_mean_pct);
    let r2 = bootstrap2(&a, &b, 2000, 7, rel_mean_pct);
    assert_eq!(r1, r2);
    assert!(r1.ci.0 > 5.0 && r1.ci.1 < 15.0, "{r1:?}");
    assert!(r1.ci.0 < 10.0 && r1.ci.1 > 10.0, "{r1:?}");
    assert!(r1.p < 0.001);
    let same = bootstrap2(&a, &a, 2000, 7, rel_median_pct);
    assert!(same.ci.0 <= 0.0 && same.ci.1 >= 0.0);
    assert!(same.p > 0.5);
}

#[test]
fn bootstrap_coverage_is_near_nominal() {
    // 200 seeded experiments of normal samples with a true difference of 0: the 95 %
    // interval of the mean difference must contain 0 in roughly 95 % of them.
    let mut rng = Rng::new(11);
    let mut covered = 0;
    for k in 0..200 {
        let a: Vec<f64> = (0..30).map(|_| 50.0 + 5.0 * rng.normal()).collect();
        let b: Vec<f64> = (0..30).map(|_| 50.0 + 5.0 * rng.normal()).collect();
        let r = bootstrap2(&a, &b, 1000, k, |x, y| mean(y) - mean(x));
        if r.ci.0 <= 0.0 && r.ci.1 >= 0.0 {
            covered += 1;
        }
    }
    assert!((180..=199).contains(&covered), "covered {covered}/200");
}

#[test]
fn poisson_bootstrap_of_histograms() {
    let a: Vec<(u64, u64)> = (100..200).map(|v| (v, 1000)).collect();
    let b: Vec<(u64, u64)> = (110..220).map(|v| (v, 1000)).collect();
    let r = poisson_bootstrap2(&a, &b, 500, 3, |x, y| {
        rel_pct(bins_percentile(x, 50.0), bins_percentile(y, 50.0))
    });
    let point = rel_pct(bins_percentile(&a, 50.0), bins_percentile(&b, 50.0));
    assert!(r.ci.0 <= point && point <= r.ci.1, "{r:?} {point}");
    assert!(r.p < 0.01);
    let s = poisson_bootstrap2(&a, &a, 500, 3, |x, y| rel_pct(bins_mean(x), bins_mean(y)));
    assert!(s.ci.0 < 0.0 && s.ci.1 > 0.0, "{s:?}");
}

#[test]
fn generator_is_reproducible_by_seed_and_wired_to_the_samplers() {
    // The samplers are rand_distr's; what is ours is the seeding and the wiring.
    let draw = |seed: u64| {
        let mut r = Rng::new(seed);
        (0..64)
            .map(|i| match i % 3 {
                0 => r.below(1000) as f64,
                1 => r.normal(),
                _ => r.poisson(7.5) as f64,
            })
            .collect::<Vec<f64>>()
    };
    assert_eq!(draw(5), draw(5), "a seed gives the same stream");
    assert_ne!(draw(5), draw(6), "another seed another stream");
    let mut r = Rng::new(1);
    // below(n): every index of a small range, none outside it.
    let mut seen = [0u32; 7];
    for _ in 0..7000 {
        seen[r.below(7)] += 1;
    }
    assert!(seen.iter().all(|c| (800..1200).contains(c)), "{seen:?}");
    assert_eq!(r.below(1), 0);
    // poisson(lambda) draws with that lambda (the bootstrap passes each bucket's count),
    // normal() is the standard normal; an empty bucket stays empty.
    let n = 20000;
    let m = (0..n).map(|_| r.poisson(4.0) as f64).sum::<f64>() / n as f64;
    assert!((m - 4.0).abs() < 0.1, "{m}");
    let m = (0..n).map(|_| r.poisson(1000.0) as f64).sum::<f64>() / n as f64;
    assert!((m - 1000.0).abs() < 2.0, "{m}");
    assert_eq!(r.poisson(0.0), 0);
    assert_eq!(r.poisson(-1.0), 0);
    let v: Vec<f64> = (0..n).map(|_| r.normal()).collect();
    assert!(mean(&v).abs() < 0.05 && (variance(&v) - 1.0).abs() < 0.05);
    let u: Vec<f64> = (0..n).map(|_| r.f64()).collect();
    assert!(u.iter().all(|x| (0.0..1.0).contains(x)) && (mean(&u) - 0.5).abs() < 0.01);
}

#[test]
fn poisson_bootstrap_is_seeded_and_keeps_empty_buckets_empty() {
    let a: Vec<(u64, u64)> = vec![(10, 500), (20, 0), (30, 40)];
    let b: Vec<(u64, u64)> = vec![(10, 450), (20, 0), (30, 60)];
    let mean_diff = |x: &Bins, y: &Bins| {
        assert_eq!((x[1].1, y[1].1), (0, 0), "an empty bucket was filled");
        rel_pct(bins_mean(x), bins_mean(y))
    };
    let r1 = poisson_bootstrap2(&a, &b, 300, 9, mean_diff);
    assert_eq!(r1, poisson_bootstrap2(&a, &b, 300, 9, mean_diff));
    assert_ne!(r1, poisson_bootstrap2(&a, &b, 300, 10, mean_diff));
}

#[test]
fn median_and_quantiles() {
    assert_eq!(median(&[3.0, 1.0, 2.0, 10.0]), 2.5);
    assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
    assert!(median(&[]).is_nan());
    assert!(close(
        quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 0.5),
        2.5,
        1e-12
    ));
    assert_eq!(quantile_sorted(&[1.0, 2.0, 3.0, 4.0], 1.0), 4.0);
}
