//! Live intervals: what each job thread did between two snapshots of its statistics
//! (`--interval-stream`, `--metrics-listen`, `--live`). Pure: the run engine hands in each
//! thread's cumulative [`ThreadStats`] every interval and at the end; [`Tracker`] keeps the
//! previous ones and answers the difference. Differences are exact: every interval's I/O
//! counts, bytes, latency sums and histogram buckets add up to the final statistics.

use crate::hist::{self, Hist};
use crate::stat::LatStat;
use crate::thread::ThreadStats;

/// One job thread's work in one direction over one interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DirDelta {
    /// I/Os (fio's `total_ios`) and bytes completed in the interval.
    pub ios: u64,
    pub bytes: u64,
    /// The reported latency's samples of the interval: their count and exact sum (ns).
    pub lat_n: u64,
    pub lat_sum_ns: u128,
    /// The interval's histogram, sparse: (bucket index, count), ascending.
    pub hist: Vec<(usize, u64)>,
}

impl DirDelta {
    /// The interval's histogram as a [`Hist`] (for percentiles with fio's rule).
    pub fn to_hist(&self) -> Hist {
        let mut c = vec![0u64; hist::NR];
        for &(i, n) in &self.hist {
            c[i] = n;
        }
        Hist::from_counts(c)
    }
}

/// One job thread's interval.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobDelta {
    pub dirs: [DirDelta; 3],
    /// Non-fatal errors counted in the interval (continue_on_error).
    pub errors: u64,
    /// The job's statistics restarted since the last sample (its ramp ended): the interval
    /// counts from the restart.
    pub restarted: bool,
}

/// The latency statistic and histogram the report's percentiles use: total latency with
/// `lat_percentiles`, else completion latency (fio's rule).
pub fn reported_latency(d: &crate::thread::DirStats, lat: bool) -> (&LatStat, &Hist) {
    if lat {
        (&d.lat, &d.lat_hist)
    } else {
        (&d.clat, &d.clat_hist)
    }
}

#[derive(Clone, Debug, Default)]
struct Base {
    job_start_ms: u64,
    ios: [u64; 3],
    bytes: [u64; 3],
    lat_n: [u64; 3],
    lat_sum: [u128; 3],
    hist: [Vec<u64>; 3],
    errors: u64,
}

/// The previous snapshot of every job thread, to difference the next against.
#[derive(Debug, Default)]
pub struct Tracker {
    prev: Vec<Option<Base>>,
}

impl Tracker {
    pub fn new(threads: usize) -> Tracker {
        Tracker {
            prev: vec![None; threads],
        }
    }

    /// Thread `i`'s interval up to `cur` (its cumulative statistics), with `lat` choosing
    /// the reported latency ([`reported_latency`]); `cur` becomes the next baseline. A
    /// thread whose statistics went back (a ramp that ended restarts them; its `job_start`
    /// moves) counts from zero.
    pub fn step(&mut self, i: usize, cur: &ThreadStats, lat: bool) -> JobDelta {
        if i >= self.prev.len() {
            self.prev.resize(i + 1, None);
        }
        let mut next = Base {
            job_start_ms: cur.job_start_ms,
            errors: cur.total_err,
            ..Base::default()
        };
        for d in 0..3 {
            let s = &cur.dirs[d];
            let (l, h) = reported_latency(s, lat);
            next.ios[d] = s.total_ios;
            next.bytes[d] = s.io_bytes;
            next.lat_n[d] = l.samples;
            next.lat_sum[d] = l.sum;
            next.hist[d] = h.counts().to_vec();
        }
        let prev = self.prev[i].take();
        let restarted = prev.as_ref().is_some_and(|p| went_back(p, &next));
        let zero = Base::default();
        let base = match &prev {
            Some(p) if !restarted => p,
            _ => &zero,
        };
        let mut out = JobDelta {
            errors: next.errors - base.errors,
            restarted,
            ..JobDelta::default()
        };
        for d in 0..3 {
            let o = &mut out.dirs[d];
            o.ios = next.ios[d] - base.ios[d];
            o.bytes = next.bytes[d] - base.bytes[d];
            o.lat_n = next.lat_n[d] - base.lat_n[d];
            o.lat_sum_ns = next.lat_sum[d] - base.lat_sum[d];
            let old = &base.hist[d];
            o.hist = next.hist[d]
                .iter()
                .enumerate()
                .filter_map(|(k, &n)| {
                    let dn = n - old.get(k).copied().unwrap_or(0);
                    (dn > 0).then_some((k, dn))
                })
                .collect();
        }
        self.prev[i] = Some(next);
        out
    }
}

/// Whether `next` is not a continuation of `prev`: a moved epoch or any count lower.
fn went_back(prev: &Base, next: &Base) -> bool {
    if prev.job_start_ms != next.job_start_ms || next.errors < prev.errors {
        return true;
    }
    (0..3).any(|d| {
        next.ios[d] < prev.ios[d]
            || next.bytes[d] < prev.bytes[d]
            || next.lat_n[d] < prev.lat_n[d]
            || next.lat_sum[d] < prev.lat_sum[d]
            || next.hist[d].len() < prev.hist[d].len()
            || next.hist[d].iter().zip(&prev.hist[d]).any(|(a, b)| a < b)
    })
}

/// Cumulative histogram buckets with upper bounds `bounds` (ns, ascending) from flexio's
/// buckets: each bucket counts under the first bound at or above its representative value
/// (fio's reported value, so a bound's count agrees with the percentiles the report
/// prints); what lies above the last bound counts only in the total. Per-bound counts, not
/// cumulative.
pub fn rebucket(counts: &[u64], bounds: &[u64]) -> Vec<u64> {
    let mut out = vec![0u64; bounds.len()];
    for (i, &n) in counts.iter().enumerate().filter(|(_, n)| **n > 0) {
        let v = hist::idx_to_val(i);
        let k = bounds.partition_point(|&b| b < v);
        if k < bounds.len() {
            out[k] += n;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::StatsConfig;

    fn stats() -> ThreadStats {
        ThreadStats::new(StatsConfig {
            clat_hist: true,
            ..StatsConfig::default()
        })
    }

    fn io(s: &mut ThreadStats, d: usize, ns: u64) {
        let x = &mut s.dirs[d];
        x.total_ios += 1;
        x.io_bytes += 4096;
        x.clat.add(ns);
        x.clat_hist.add(ns);
    }

    #[test]
    fn intervals_add_up_to_the_total() {
        let mut t = Tracker::new(1);
        let mut s = stats();
        let mut sum = [0u64; 3];
        let mut merged = vec![0u64; hist::NR];
        let mut lat_sum = 0u128;
        for step in 0..5u64 {
            for k in 0..(step * 7 + 1) {
                io(&mut s, (k % 2) as usize, 1000 + k * 977 + step * 100_000);
            }
            let d = t.step(0, &s, false);
            assert!(!d.restarted);
            for (x, dd) in d.dirs.iter().enumerate() {
                sum[x] += dd.ios;
                lat_sum += dd.lat_sum_ns;
                for &(i, n) in &dd.hist {
                    merged[i] += n;
                }
            }
        }
        assert_eq!(sum[0], s.dirs[0].total_ios);
        assert_eq!(sum[1], s.dirs[1].total_ios);
        assert_eq!(lat_sum, s.dirs[0].clat.sum + s.dirs[1].clat.sum);
        let mut want = s.dirs[0].clat_hist.clone();
        want.merge(&s.dirs[1].clat_hist);
        assert_eq!(merged, want.counts());
        // Nothing more done: an empty interval.
        let d = t.step(0, &s, false);
        assert_eq!(d.dirs[0], DirDelta::default());
    }

    #[test]
    fn a_restart_counts_from_zero() {
        let mut t = Tracker::new(2);
        let mut s = stats();
        for _ in 0..10 {
            io(&mut s, 0, 5000);
        }
        t.step(1, &s, false);
        let mut fresh = stats();
        fresh.job_start_ms = 77;
        for _ in 0..20 {
            io(&mut fresh, 0, 7000);
        }
        let d = t.step(1, &fresh, false);
        assert!(d.restarted);
        assert_eq!(d.dirs[0].ios, 20);
        assert_eq!(d.dirs[0].to_hist().total(), 20);
    }

    #[test]
    fn rebucketing_keeps_every_sample_below_the_last_bound() {
        let mut h = Hist::enabled();
        for v in [50u64, 999, 1000, 1001, 2_500_000, 9_000_000_000] {
            h.add(v);
        }
        let b = rebucket(h.counts(), &[1000, 1_000_000, 1_000_000_000]);
        // 1001 falls in a bucket whose value is 1000 or above: the first bound at or
        // above its representative value.
        let at_most_1000 = [50u64, 999, 1000, 1001]
            .iter()
            .filter(|v| hist::idx_to_val(hist::val_to_idx(**v)) <= 1000)
            .count() as u64;
        assert_eq!(b[0], at_most_1000);
        assert_eq!(b.iter().sum::<u64>(), 5, "9 s lies above the last bound");
    }
}
