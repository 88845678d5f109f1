//! Log-linear latency histogram with fio's bucket layout, extended to the whole `u64` range.
//!
//! # Layout and error bound
//!
//! Values are nanoseconds. With `BITS = 6` (64 buckets per group):
//!
//! * values `0..128` have one bucket each (exact);
//! * a value `v >= 128` with most significant bit `m` (so `2^m <= v < 2^(m+1)`) falls in
//!   group `m - 5`, whose 64 buckets each span `2^(m-6)` ns; index
//!   `((m - 6 + 1) << 6) + ((v >> (m - 6)) & 63)`.
//!
//! A bucket reports its mid-point, so the reported value differs from any value in the
//! bucket by at most half a bucket width: `2^(m-7)`, which is at most `1/128` of the value
//! (**relative error <= 0.78 %**), at every magnitude.
//!
//! fio stops at 29 groups (1856 buckets), so every latency at or above 2^34 ns (about 17.2 s)
//! lands in its last bucket and is reported as ~17 s. Here the groups continue up to bit 63
//! (59 groups, [`NR`] = 3776 buckets), so a 60 s latency is reported as 60 s within the same
//! 0.78 % bound. Indexes below 1856 are identical to fio's, so for latencies under 17 s the
//! buckets, their reported values and therefore the percentiles agree with fio exactly.

/// Bits of linear resolution per group (fio's FIO_IO_U_PLAT_BITS).
pub const BITS: u32 = 6;
/// Buckets per group.
pub const VAL: usize = 1 << BITS;
/// Number of groups needed to cover all of u64.
pub const GROUPS: usize = (64 - BITS as usize) + 1;
/// Total number of buckets.
pub const NR: usize = GROUPS * VAL;
/// fio 3.33's bucket count (FIO_IO_U_PLAT_NR); used for its histogram log layout.
pub const FIO_NR: usize = 29 * VAL;

/// Bucket index of a value (ns).
#[inline]
pub fn val_to_idx(v: u64) -> usize {
    let msb = if v == 0 { 0 } else { 63 - v.leading_zeros() };
    if msb <= BITS {
        return v as usize;
    }
    let eb = msb - BITS;
    (((eb + 1) as usize) << BITS) + ((v >> eb) as usize & (VAL - 1))
}

/// Representative value (mid-point, truncated) of a bucket, as fio's `plat_idx_to_val`.
#[inline]
pub fn idx_to_val(idx: usize) -> u64 {
    if idx < (VAL << 1) {
        return idx as u64;
    }
    let eb = (idx >> BITS) as u32 - 1;
    let base = 1u64 << (eb + BITS);
    let k = (idx % VAL) as u64;
    // base + (k + 0.5) * 2^eb, computed in integers (exact, no overflow for eb <= 57).
    base + (k << eb) + ((1u64 << eb) >> 1)
}

/// Whether the cumulative count `sum` reaches `p` percent of `n`, i.e. `sum >= p/100 * n`,
/// evaluated exactly (fio uses long double; exact arithmetic agrees with it except when the
/// product lies within 2^-64 of an integer).
fn reaches(sum: u64, n: u64, p: f64) -> bool {
    if p <= 0.0 {
        return true;
    }
    // p = mant * 2^exp exactly.
    let bits = p.to_bits();
    let exp_bits = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    let (mant, exp) = if exp_bits == 0 {
        (frac, -1074)
    } else {
        (frac | (1u64 << 52), exp_bits - 1075)
    };
    // Compare sum * 100 >= mant * 2^exp * n.
    let lhs = sum as u128 * 100;
    let rhs = mant as u128 * n as u128; // < 2^117
    if exp >= 0 {
        if exp > 10 {
            return false; // p > 100 * 2^... cannot be reached
        }
        lhs >= rhs << exp
    } else {
        let sh = (-exp) as u32;
        if sh >= 128 || lhs.leading_zeros() < sh {
            // Shifting would overflow: fall back to floating point (only for tiny p).
            return (sum as f64) >= p / 100.0 * n as f64;
        }
        (lhs << sh) >= rhs
    }
}

/// A latency histogram. Memory is allocated only when the histogram is enabled.
#[derive(Clone, Debug, Default)]
pub struct Hist {
    counts: Option<Box<[u64]>>,
}

impl Hist {
    /// An enabled (allocated) histogram.
    pub fn enabled() -> Self {
        Hist {
            counts: Some(vec![0u64; NR].into_boxed_slice()),
        }
    }
    /// A histogram with the given bucket counts (e.g. an interval's delta).
    pub fn from_counts(mut counts: Vec<u64>) -> Self {
        counts.resize(NR, 0);
        Hist {
            counts: Some(counts.into_boxed_slice()),
        }
    }

    /// A disabled histogram: records nothing.
    pub fn disabled() -> Self {
        Hist { counts: None }
    }
    pub fn is_enabled(&self) -> bool {
        self.counts.is_some()
    }

    #[inline]
    pub fn add(&mut self, v: u64) {
        if let Some(c) = &mut self.counts {
            c[val_to_idx(v)] += 1;
        }
    }

    /// Add all counts of another histogram (group_reporting merge).
    pub fn merge(&mut self, other: &Hist) {
        if let Some(o) = &other.counts {
            let c = self
                .counts
                .get_or_insert_with(|| vec![0u64; NR].into_boxed_slice());
            for (a, b) in c.iter_mut().zip(o.iter()) {
                *a += *b;
            }
        }
    }

    pub fn total(&self) -> u64 {
        self.counts.as_ref().map(|c| c.iter().sum()).unwrap_or(0)
    }

    /// Raw bucket counts (empty if disabled).
    pub fn counts(&self) -> &[u64] {
        self.counts.as_deref().unwrap_or(&[])
    }

    /// Percentiles with fio's rule: each requested percentile is the representative value
    /// of the first bucket whose cumulative count reaches `p/100 * n` (no interpolation).
    /// `list` is answered in ascending order of percentile; the result pairs each percentile
    /// with its value. `n` is the sample count of the matching mean/stdev statistic.
    pub fn percentiles(&self, list: &[f64], n: u64) -> Vec<(f64, u64)> {
        let mut sorted: Vec<f64> = list.to_vec();
        sorted.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
        let mut out = Vec::with_capacity(sorted.len());
        let Some(c) = &self.counts else { return out };
        if sorted.is_empty() || n == 0 {
            return out;
        }
        let mut j = 0;
        let mut sum = 0u64;
        for (i, &cnt) in c.iter().enumerate() {
            sum += cnt;
            while j < sorted.len() && reaches(sum, n, sorted[j]) {
                out.push((sorted[j], idx_to_val(i)));
                j += 1;
            }
            if j == sorted.len() {
                break;
            }
        }
        out
    }

    /// Non-empty buckets as (representative value, count), ascending (json+ `bins`).
    pub fn bins(&self) -> Vec<(u64, u64)> {
        match &self.counts {
            Some(c) => c
                .iter()
                .enumerate()
                .filter(|(_, n)| **n > 0)
                .map(|(i, n)| (idx_to_val(i), *n))
                .collect(),
            None => Vec::new(),
        }
    }

    /// Difference `self - earlier` bucket by bucket (interval histograms).
    pub fn delta(&self, earlier: &Hist) -> Vec<u64> {
        let a = self.counts();
        let b = earlier.counts();
        a.iter()
            .enumerate()
            .map(|(i, v)| v - b.get(i).copied().unwrap_or(0))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_fio_layout() {
        // Values from fio: 2480 ns -> index 397 -> 2480.
        assert_eq!(val_to_idx(2480), 397);
        assert_eq!(idx_to_val(397), 2480);
        // Exact region.
        for v in 0..128 {
            assert_eq!(idx_to_val(val_to_idx(v)), v);
        }
        // fio's last bucket index for values just under 2^34.
        assert_eq!(val_to_idx((1 << 34) - 1), FIO_NR - 1);
        assert_eq!(val_to_idx(u64::MAX), NR - 1);
        // Buckets captured from fio 3.33's json+ output.
        for v in [
            1581056u64, 2244608, 6782976, 7438336, 9502720, 14221312, 21889024, 22937600,
        ] {
            assert_eq!(idx_to_val(val_to_idx(v)), v, "{v} is a fio bucket value");
        }
    }

    #[test]
    fn error_bound_holds_everywhere() {
        let mut v = 1u64;
        while v < u64::MAX / 3 {
            for x in [v, v + v / 3, v * 2 - 1] {
                let r = idx_to_val(val_to_idx(x));
                let err = (r as f64 - x as f64).abs() / x as f64;
                assert!(
                    err <= 1.0 / 128.0 + 1e-12,
                    "value {x} reported as {r}, error {err}"
                );
            }
            v = v * 2 + 1;
        }
    }

    #[test]
    fn indexes_are_monotonic() {
        let mut last = 0;
        let mut v = 0u64;
        while v < 1 << 40 {
            let i = val_to_idx(v);
            assert!(i >= last);
            last = i;
            v = v + 1 + v / 97;
        }
    }

    #[test]
    fn sixty_seconds_is_reported_as_sixty_seconds() {
        let mut h = Hist::enabled();
        h.add(60_000_000_000);
        let p = h.percentiles(&[50.0, 99.0], 1);
        let v = p[0].1 as f64;
        assert!((v - 60e9).abs() / 60e9 < 1.0 / 128.0, "got {v}");
        assert_eq!(p[1].1, p[0].1);
    }

    #[test]
    fn percentiles_on_a_known_uniform_set() {
        // 1..=100000 ns uniformly: the p-th percentile is p*1000 ns, within the error bound.
        let mut h = Hist::enabled();
        for v in 1..=100_000u64 {
            h.add(v);
        }
        let list = [1.0, 5.0, 10.0, 50.0, 90.0, 99.0, 99.9];
        for (p, v) in h.percentiles(&list, 100_000) {
            let exact = p * 1000.0;
            let err = (v as f64 - exact).abs() / exact;
            assert!(err <= 1.0 / 128.0 + 1.0 / exact, "p{p}: {v} vs {exact}");
        }
    }

    #[test]
    fn percentile_rule_is_first_bucket_reaching_the_rank() {
        // 10 samples: 9 of 100 ns and one of 1000 ns.
        let mut h = Hist::enabled();
        for _ in 0..9 {
            h.add(100);
        }
        h.add(1000);
        let p = h.percentiles(&[50.0, 90.0, 90.000001, 100.0], 10);
        assert_eq!(p[0].1, 100);
        assert_eq!(p[1].1, 100); // 9 >= 0.9 * 10 exactly
        assert_eq!(p[2].1, idx_to_val(val_to_idx(1000)));
        assert_eq!(p[3].1, idx_to_val(val_to_idx(1000)));
    }

    #[test]
    fn exact_threshold_comparison() {
        assert!(reaches(9999, 10000, 99.99));
        assert!(!reaches(9998, 10000, 99.99));
        assert!(reaches(1, 100, 1.0));
        assert!(!reaches(0, 100, 1.0));
        assert!(reaches(5, 10, 50.0));
        assert!(!reaches(4, 10, 50.0));
        assert!(reaches(u64::MAX / 200, u64::MAX / 100, 49.0));
    }

    #[test]
    fn merge_and_bins() {
        let mut a = Hist::enabled();
        let mut b = Hist::enabled();
        a.add(5);
        b.add(5);
        b.add(2480);
        a.merge(&b);
        assert_eq!(a.bins(), vec![(5, 2), (2480, 1)]);
        assert_eq!(a.total(), 3);
        let mut d = Hist::disabled();
        d.add(1);
        assert_eq!(d.total(), 0);
        assert!(d.percentiles(&[50.0], 1).is_empty());
    }
}
