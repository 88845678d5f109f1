//! Running min/max/mean/variance (fio's `struct io_stat` with Welford's update) and fio's
//! two merge rules.

/// Running statistic of unsigned samples (latencies in ns, bandwidth in KiB/s, IOPS).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stat {
    pub min: u64,
    pub max: u64,
    pub samples: u64,
    pub mean: f64,
    /// Sum of squared deviations from the mean (Welford's S, fio's `S`).
    pub sum_sq_dev: f64,
}

impl Default for Stat {
    fn default() -> Self {
        Stat {
            min: u64::MAX,
            max: 0,
            samples: 0,
            mean: 0.0,
            sum_sq_dev: 0.0,
        }
    }
}

impl Stat {
    /// Add one sample (fio's `add_stat_sample`).
    #[inline]
    pub fn add(&mut self, v: u64) {
        if v > self.max {
            self.max = v;
        }
        if v < self.min {
            self.min = v;
        }
        let x = v as f64;
        let delta = x - self.mean;
        if delta != 0.0 {
            self.mean += delta / (self.samples as f64 + 1.0);
            self.sum_sq_dev += delta * (x - self.mean);
        }
        self.samples += 1;
    }

    /// Minimum, or 0 without samples (as fio reports it).
    pub fn min_or_zero(&self) -> u64 {
        if self.samples == 0 {
            0
        } else {
            self.min
        }
    }

    /// Sample standard deviation: sqrt(S / (n - 1)), 0 for n < 2.
    pub fn stddev(&self) -> f64 {
        if self.samples > 1 {
            (self.sum_sq_dev / (self.samples as f64 - 1.0)).sqrt()
        } else {
            0.0
        }
    }

    /// Merge another statistic as if all its samples had been added here (parallel
    /// variance; fio's `sum_stat` for latencies).
    pub fn merge(&mut self, o: &Stat) {
        if o.samples == 0 {
            return;
        }
        if self.samples == 0 {
            *self = *o;
            return;
        }
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        let n1 = self.samples as f64;
        let n2 = o.samples as f64;
        let delta = o.mean - self.mean;
        let mean = (o.mean * n2 + self.mean * n1) / (n1 + n2);
        let s = o.sum_sq_dev + self.sum_sq_dev + delta * delta * (n1 * n2) / (n1 + n2);
        self.samples += o.samples;
        self.mean = mean;
        self.sum_sq_dev = s;
    }

    /// fio's "pure sum" merge used for bandwidth and IOPS samples under group_reporting:
    /// min, max, mean, S and sample counts are each added, so a group's bw min/avg/max is
    /// the sum of its members' values.
    pub fn sum(&mut self, o: &Stat, first: bool) {
        if first {
            *self = *o;
            if o.samples == 0 {
                self.min = 0;
            }
            return;
        }
        let omin = if o.samples == 0 { 0 } else { o.min };
        if self.min == u64::MAX {
            self.min = 0;
        }
        self.min += omin;
        self.max += o.max;
        self.mean += o.mean;
        self.sum_sq_dev += o.sum_sq_dev;
        self.samples += o.samples;
    }
}

/// A latency statistic on the I/O path: exact integer sums instead of Welford's update (no
/// division per sample). [`LatStat::to_stat`] gives the mean and S of the same samples
/// (computed exactly, then rounded once), and merging two is adding their sums, which is
/// what fio's parallel-variance merge computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LatStat {
    pub min: u64,
    pub max: u64,
    pub samples: u64,
    pub sum: u128,
    pub sumsq: u128,
}

impl Default for LatStat {
    fn default() -> Self {
        LatStat {
            min: u64::MAX,
            max: 0,
            samples: 0,
            sum: 0,
            sumsq: 0,
        }
    }
}

impl LatStat {
    #[inline(always)]
    pub fn add(&mut self, v: u64) {
        self.max = self.max.max(v);
        self.min = self.min.min(v);
        self.samples += 1;
        self.sum += v as u128;
        self.sumsq = self.sumsq.wrapping_add(v as u128 * v as u128);
    }

    pub fn merge(&mut self, o: &LatStat) {
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.samples += o.samples;
        self.sum += o.sum;
        self.sumsq = self.sumsq.wrapping_add(o.sumsq);
    }

    /// The same samples as a [`Stat`] (mean and sum of squared deviations).
    pub fn to_stat(&self) -> Stat {
        if self.samples == 0 {
            return Stat::default();
        }
        let n = self.samples as u128;
        let mean = self.sum as f64 / n as f64;
        // S = sumsq - sum^2 / n, exactly while sum^2 fits in 128 bits.
        let s = match self.sum.checked_mul(self.sum) {
            Some(sq) => {
                let q = sq / n;
                let r = sq % n;
                let whole = self.sumsq.saturating_sub(q);
                whole as f64 - r as f64 / n as f64
            }
            None => self.sumsq as f64 - (self.sum as f64) * (self.sum as f64) / n as f64,
        };
        Stat {
            min: self.min,
            max: self.max,
            samples: self.samples,
            mean,
            sum_sq_dev: s.max(0.0),
        }
    }

    pub fn mean(&self) -> f64 {
        self.to_stat().mean
    }

    pub fn stddev(&self) -> f64 {
        self.to_stat().stddev()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sums_equal_welford() {
        let vals = [2u64, 4, 4, 4, 5, 5, 7, 9, 1_000_000_007, 13];
        let (mut w, mut e) = (Stat::default(), LatStat::default());
        vals.iter().for_each(|v| {
            w.add(*v);
            e.add(*v);
        });
        let s = e.to_stat();
        assert_eq!((s.min, s.max, s.samples), (w.min, w.max, w.samples));
        assert!((s.mean - w.mean).abs() <= 1e-9 * w.mean);
        assert!((s.stddev() - w.stddev()).abs() <= 1e-9 * w.stddev());
        // Merging sums equals fio's parallel merge of the two halves.
        let (mut a, mut b, mut wa, mut wb) = (
            LatStat::default(),
            LatStat::default(),
            Stat::default(),
            Stat::default(),
        );
        for (i, v) in vals.iter().enumerate() {
            if i % 3 == 0 {
                a.add(*v);
                wa.add(*v);
            } else {
                b.add(*v);
                wb.add(*v);
            }
        }
        a.merge(&b);
        wa.merge(&wb);
        let s = a.to_stat();
        assert!((s.stddev() - wa.stddev()).abs() <= 1e-9 * wa.stddev());
        assert_eq!(LatStat::default().to_stat(), Stat::default());
    }

    #[test]
    fn known_set() {
        let mut s = Stat::default();
        for v in [2u64, 4, 4, 4, 5, 5, 7, 9] {
            s.add(v);
        }
        assert_eq!(s.min, 2);
        assert_eq!(s.max, 9);
        assert!((s.mean - 5.0).abs() < 1e-12);
        // Sample stdev of this set: sqrt(32/7).
        assert!((s.stddev() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
    }

    #[test]
    fn merge_equals_sequential() {
        let a_vals = [10u64, 20, 30, 1000];
        let b_vals = [5u64, 7, 9000, 11, 12];
        let (mut a, mut b, mut all) = (Stat::default(), Stat::default(), Stat::default());
        a_vals.iter().for_each(|v| a.add(*v));
        b_vals.iter().for_each(|v| b.add(*v));
        a_vals.iter().chain(b_vals.iter()).for_each(|v| all.add(*v));
        a.merge(&b);
        assert_eq!(a.samples, all.samples);
        assert_eq!((a.min, a.max), (all.min, all.max));
        assert!((a.mean - all.mean).abs() < 1e-9);
        assert!((a.stddev() - all.stddev()).abs() < 1e-9);
        let mut e = Stat::default();
        e.merge(&Stat::default());
        assert_eq!(e.samples, 0);
        assert_eq!(e.min_or_zero(), 0);
    }

    #[test]
    fn pure_sum() {
        let mut a = Stat::default();
        a.add(100);
        a.add(200);
        let mut b = Stat::default();
        b.add(10);
        let mut g = Stat::default();
        g.sum(&a, true);
        g.sum(&b, false);
        assert_eq!((g.min, g.max, g.samples), (110, 210, 3));
        assert!((g.mean - 160.0).abs() < 1e-12);
    }
}
