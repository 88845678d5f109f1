//! Interval statistics: what happened between two moments of a job (flexio's interval
//! stream, fio's histogram log), computed from cumulative counters and histograms.

use crate::hist::{Hist, FIO_NR};

/// Percentiles reported per interval.
pub const INTERVAL_PERCENTILES: [f64; 4] = [50.0, 90.0, 99.0, 99.9];

/// An interval's latency distribution: percentiles (percentile, ns) and non-empty buckets
/// (value ns, count).
pub type IntervalDist = (Vec<(f64, u64)>, Vec<(u64, u64)>);

/// One job thread, direction and interval.
#[derive(Clone, Debug, PartialEq)]
pub struct IntervalRecord {
    pub job: String,
    pub thread: u32,
    /// 0 read, 1 write, 2 trim.
    pub ddir: usize,
    pub start_ms: u64,
    pub end_ms: u64,
    pub ios: u64,
    pub bytes: u64,
    pub iops: f64,
    /// Bytes per second over the interval.
    pub bw_bytes: u64,
    /// Completion latency percentiles and non-empty buckets (value ns, count).
    pub clat_pct: Vec<(f64, u64)>,
    pub clat_bins: Vec<(u64, u64)>,
    /// The same for latency from the scheduled start (rate-limited directions).
    pub sched: Option<IntervalDist>,
}

/// A cumulative histogram's progress since the last look: call [`Tracker::take`] at each
/// interval end.
#[derive(Clone, Debug, Default)]
pub struct Tracker {
    prev: Vec<u64>,
}

impl Tracker {
    /// The interval's histogram (counts since the previous call), and move on.
    pub fn take(&mut self, h: &Hist) -> Hist {
        let cur = h.counts();
        let delta: Vec<u64> = cur
            .iter()
            .enumerate()
            .map(|(i, c)| c - self.prev.get(i).copied().unwrap_or(0))
            .collect();
        self.prev = cur.to_vec();
        Hist::from_counts(delta)
    }

    /// The interval's percentiles and non-empty buckets.
    pub fn summary(&mut self, h: &Hist) -> IntervalDist {
        let d = self.take(h);
        (d.percentiles(&INTERVAL_PERCENTILES, d.total()), d.bins())
    }
}

/// fio's histogram-log buckets: flexio's counts folded into fio's 1856 buckets (everything
/// above ~17 s in the last, as fio has it), then `2^coarseness` buckets summed per column.
pub fn fio_log_bins(counts: &[u64], coarseness: u32) -> Vec<u64> {
    let mut fio = vec![0u64; FIO_NR];
    for (i, c) in counts.iter().enumerate() {
        fio[i.min(FIO_NR - 1)] += c;
    }
    fio.chunks(1usize << coarseness)
        .map(|c| c.iter().sum())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_histograms_are_deltas() {
        let mut h = Hist::enabled();
        let mut t = Tracker::default();
        for v in [1000, 2000, 3000] {
            h.add(v);
        }
        assert_eq!(t.take(&h).total(), 3);
        h.add(5000);
        let d = t.take(&h);
        assert_eq!(d.total(), 1);
        assert_eq!(d.bins().len(), 1);
        let (p, bins) = t.summary(&h);
        assert!(p.is_empty() && bins.is_empty(), "nothing new");
    }

    #[test]
    fn log_bins_fold_and_coarsen() {
        let mut counts = vec![0u64; FIO_NR + 10];
        counts[0] = 1;
        counts[1] = 2;
        counts[FIO_NR + 5] = 7;
        let b = fio_log_bins(&counts, 0);
        assert_eq!(b.len(), FIO_NR);
        assert_eq!((b[0], b[1], b[FIO_NR - 1]), (1, 2, 7));
        let c = fio_log_bins(&counts, 1);
        assert_eq!(c.len(), FIO_NR / 2);
        assert_eq!(c[0], 3);
    }
}
