//! The rate schedule (`rate`, `rate_iops`, `rate_process`): when each I/O of a direction
//! is due, relative to the start of the loop, as fio computes it:
//!
//! * linear: the I/O after `b` issued bytes is due at `b / rate` seconds;
//! * poisson: gaps are exponential with mean `1 / iops`, drawn from fio's Poisson stream
//!   (`gap_us = (1e6 / iops) * -ln(U)` with U in (0, 1]).
//!
//! The due time of every I/O is also its *scheduled start*: latency measured from it does
//! not hide the I/Os a stalled generator failed to issue (coordinated omission).

use crate::rng::Taus88;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Process {
    Linear,
    Poisson,
}

#[derive(Clone, Debug)]
pub struct Schedule {
    /// Bytes per second per direction (0 = unlimited).
    bps: [u64; 3],
    min_bs: [u64; 3],
    process: Process,
    rng: [Taus88; 3],
    issued_bytes: [u64; 3],
    last_us: [u64; 3],
    /// Shift applied to the schedule (thinktime with rate_ignore_thinktime).
    offset_us: [u64; 3],
    /// I/O rates whose linear schedule counts I/Os rather than bytes (the newest fio's
    /// `rate_iops`: mixed block sizes do not slow it down); 0 = by bytes.
    iops: [u64; 3],
    issued_ios: [u64; 3],
}

impl Schedule {
    /// `bps`: byte rates; `iops`: I/O rates (converted with the direction's smallest block
    /// size, as fio does); `seeds`: fio's Poisson stream seeds per direction.
    pub fn new(
        bps: [u64; 3],
        iops: [u64; 3],
        min_bs: [u64; 3],
        process: Process,
        seeds: [u64; 3],
    ) -> Self {
        let bps = [0, 1, 2].map(|d| {
            if bps[d] > 0 {
                bps[d]
            } else {
                iops[d] * min_bs[d]
            }
        });
        Schedule {
            bps,
            min_bs,
            process,
            rng: seeds.map(|s| Taus88::new(s as u32)),
            issued_bytes: [0; 3],
            last_us: [0; 3],
            offset_us: [0; 3],
            iops: [0; 3],
            issued_ios: [0; 3],
        }
    }

    /// The newest fio (3.42): a linear `rate_iops` schedule spaces I/Os by `1 / iops`
    /// whatever their size; fio 3.33 converts it to bytes with the smallest block size.
    pub fn count_ios(mut self, iops: [u64; 3]) -> Self {
        for (d, &r) in iops.iter().enumerate() {
            if r > 0 && self.bps[d] == r * self.min_bs[d] {
                self.iops[d] = r;
            }
        }
        self
    }

    pub fn limited(&self) -> bool {
        self.bps.iter().any(|b| *b > 0)
    }

    pub fn limited_dir(&self, d: usize) -> bool {
        self.bps[d] > 0
    }

    /// When the next I/O of direction `d` is due (µs since the loop started).
    #[inline]
    pub fn due_us(&self, d: usize) -> u64 {
        let bps = self.bps[d];
        if bps == 0 {
            return 0;
        }
        let t = match self.process {
            Process::Poisson => self.last_us[d],
            Process::Linear if self.iops[d] > 0 => {
                let (n, r) = (self.issued_ios[d], self.iops[d]);
                (n / r) * 1_000_000 + (n % r) * 1_000_000 / r
            }
            Process::Linear => {
                let b = self.issued_bytes[d];
                (b / bps) * 1_000_000 + (b % bps) * 1_000_000 / bps
            }
        };
        t + self.offset_us[d]
    }

    /// Record an issued I/O of `len` bytes (advances the schedule).
    #[inline]
    pub fn issued(&mut self, d: usize, len: u64) {
        if self.bps[d] == 0 {
            return;
        }
        self.issued_bytes[d] += len;
        self.issued_ios[d] += 1;
        if self.process == Process::Poisson {
            let iops = (self.bps[d] / self.min_bs[d].max(1)).max(1);
            // U in (0, 1]: (r + 1) / 2^32, as fio's __rand_0_1.
            let u = (self.rng[d].next_u32() as f64 + 1.0) / 4294967296.0;
            // fio: (int64_t)(1000000 / iops) * -logf(u), in single precision.
            let gap = ((1_000_000 / iops) as f32 * -(u as f32).ln()) as u64;
            self.last_us[d] += gap;
        }
    }

    /// Move the schedule later by `us` (a think-time pause that should not be caught up).
    pub fn shift(&mut self, us: u64) {
        for o in &mut self.offset_us {
            *o += us;
        }
    }

    /// Restart (a new loop).
    pub fn reset(&mut self) {
        self.issued_bytes = [0; 3];
        self.issued_ios = [0; 3];
        self.last_us = [0; 3];
        self.offset_us = [0; 3];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iops_schedule_by_count_or_by_bytes() {
        // rate_iops=1000 with 4k..16k blocks: fio 3.33 spaces by bytes at 4k per 1 ms, the
        // newest fio 1 ms per I/O.
        let mk = || Schedule::new([0; 3], [1000, 0, 0], [4096; 3], Process::Linear, [1, 2, 3]);
        let (mut old, mut new) = (mk(), mk().count_ios([1000, 0, 0]));
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for len in [16384, 4096, 8192, 4096] {
            a.push(old.due_us(0));
            b.push(new.due_us(0));
            old.issued(0, len);
            new.issued(0, len);
        }
        assert_eq!(a, vec![0, 4000, 5000, 7000]);
        assert_eq!(b, vec![0, 1000, 2000, 3000]);
    }

    #[test]
    fn linear_spacing() {
        let mut s = Schedule::new([0; 3], [1000, 0, 0], [4096; 3], Process::Linear, [1, 2, 3]);
        let mut due = Vec::new();
        for _ in 0..5 {
            due.push(s.due_us(0));
            s.issued(0, 4096);
        }
        assert_eq!(due, vec![0, 1000, 2000, 3000, 4000]);
        assert_eq!(s.due_us(1), 0);
        assert!(!s.limited_dir(1));
    }

    #[test]
    fn poisson_gaps_are_exponential() {
        // Kolmogorov–Smirnov against Exp(mean 10 ms) on 20,000 gaps.
        let mut s = Schedule::new(
            [0; 3],
            [100, 0, 0],
            [4096; 3],
            Process::Poisson,
            [12345, 0, 0],
        );
        let mut gaps = Vec::new();
        let mut prev = s.due_us(0);
        for _ in 0..20_000 {
            s.issued(0, 4096);
            let d = s.due_us(0);
            gaps.push((d - prev) as f64);
            prev = d;
        }
        gaps.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let n = gaps.len() as f64;
        let mean = 10_000.0;
        let dmax = gaps
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let f = 1.0 - (-g / mean).exp();
                (f - i as f64 / n).abs().max((f - (i + 1) as f64 / n).abs())
            })
            .fold(0.0, f64::max);
        // Critical value at the 0.1% level: 1.95 / sqrt(n).
        assert!(dmax < 1.95 / n.sqrt(), "KS distance {dmax}");
        // And clearly not the linear process (all gaps equal).
        let cv = {
            let m = gaps.iter().sum::<f64>() / n;
            (gaps.iter().map(|g| (g - m) * (g - m)).sum::<f64>() / n).sqrt() / m
        };
        assert!((cv - 1.0).abs() < 0.05, "coefficient of variation {cv}");
    }
}
