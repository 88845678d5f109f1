//! Per-operation statistics of engines whose requests are of several kinds (`mdtree`: mkdir,
//! create, stat, ...; `cmdtime`: one kind, the command): each kind keeps its own exact
//! latency sums and log-linear histogram, recorded beside the job's fio statistics (which
//! see every request), and reported with its count, rate, mean, deviation and percentiles.
//!
//! Recording is allocation-free: the kinds are fixed when the job starts.

use crate::hist::Hist;
use crate::report::{LatSummary, ReportParams};
use crate::stat::LatStat;

/// What one kind of operation measured.
#[derive(Clone, Debug)]
pub struct OpStats {
    /// The operation's name (the engine's, e.g. `mkdir`).
    pub name: &'static str,
    /// Its time per operation, ns (exact sums).
    pub lat: LatStat,
    pub hist: Hist,
    /// Clock time (ns) at the start of the first and the end of the last operation of the
    /// kind (0 = none yet): its span, over which mdtest states its phase rates.
    pub first_ns: u64,
    pub last_ns: u64,
}

impl OpStats {
    pub fn new(name: &'static str) -> Self {
        OpStats {
            name,
            lat: LatStat::default(),
            hist: Hist::enabled(),
            first_ns: 0,
            last_ns: 0,
        }
    }

    /// One operation of `ns` that ended at clock time `end`.
    #[inline]
    pub fn add(&mut self, ns: u64, end: u64) {
        self.lat.add(ns);
        self.hist.add(ns);
        if self.first_ns == 0 {
            self.first_ns = end.saturating_sub(ns).max(1);
        }
        self.last_ns = end;
    }
}

/// One operation kind in the report.
#[derive(Clone, Debug, Default)]
pub struct OpReport {
    pub name: String,
    /// Operations done (`lat.n`), their summed time and the rate it gives: operations per
    /// second of time spent in the operation (fileop's figure; the system's limit).
    pub count: u64,
    pub total_ns: u64,
    pub ops_per_s: f64,
    /// From the start of the first to the end of the last operation of the kind, and the
    /// count over it: mdtest's rate for a phase (e.g. `create` over the file-creation
    /// phase); wall time between the operations (the tool's own, other kinds interleaved)
    /// included. With several jobs: the union of their spans (an aggregate rate).
    pub span_ns: u64,
    pub span_ops_per_s: f64,
    /// min, max, mean, sample stddev, percentiles (the job's list), json+ bins, RMS.
    pub lat: LatSummary,
}

/// The report of each kind (in the engine's order; kinds without operations included, so
/// a reader sees every operation the engine has).
pub fn reports(ops: &[OpStats], p: &ReportParams) -> Vec<OpReport> {
    ops.iter()
        .map(|o| {
            let total = o.lat.sum.min(u64::MAX as u128) as u64;
            let span = o.last_ns.saturating_sub(o.first_ns);
            OpReport {
                span_ns: span,
                span_ops_per_s: if span > 0 {
                    o.lat.samples as f64 * 1e9 / span as f64
                } else {
                    0.0
                },
                name: o.name.to_string(),
                count: o.lat.samples,
                total_ns: total,
                ops_per_s: if total > 0 {
                    o.lat.samples as f64 * 1e9 / total as f64
                } else {
                    0.0
                },
                lat: LatSummary::from(&o.lat, &o.hist, true, &p.percentile_list),
            }
        })
        .collect()
}

/// Merge another member's kinds into `into` (by name; kinds it lacks are appended).
pub fn merge(into: &mut Vec<OpStats>, other: &[OpStats]) {
    for o in other {
        match into.iter_mut().find(|x| x.name == o.name) {
            Some(x) => {
                x.lat.merge(&o.lat);
                x.hist.merge(&o.hist);
                if o.first_ns != 0 && (x.first_ns == 0 || o.first_ns < x.first_ns) {
                    x.first_ns = o.first_ns;
                }
                x.last_ns = x.last_ns.max(o.last_ns);
            }
            None => into.push(o.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rates_and_merge() {
        let mut a = vec![OpStats::new("mkdir"), OpStats::new("rmdir")];
        a[0].add(1000, 11_000);
        a[0].add(3000, 20_000);
        let mut b = vec![OpStats::new("mkdir"), OpStats::new("stat")];
        b[0].add(2000, 32_000);
        merge(&mut a, &b);
        assert_eq!(a.len(), 3);
        let p = ReportParams {
            kb_base: 1024,
            unit_base: 0,
            sig_figs: 4,
            percentile_list: vec![50.0, 99.0],
            percentile_precision: 2,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            latency_depth: 1,
            continue_on_error: false,
            unified: crate::report::Unified::None,
            nostats_engine: false,
            latency_target_ns: 0,
            latency_window_us: 0,
            latency_percentile: 100.0,
        };
        let r = reports(&a, &p);
        assert_eq!(r[0].count, 3);
        assert_eq!(r[0].total_ns, 6000);
        assert!((r[0].ops_per_s - 500_000.0).abs() < 1e-6);
        // Spans 10 us .. 32 us: 3 operations in 22 us.
        assert_eq!(r[0].span_ns, 22_000);
        assert!((r[0].span_ops_per_s - 3e9 / 22_000.0).abs() < 1e-6);
        assert!((r[0].lat.mean_ns - 2000.0).abs() < 1e-9);
        assert_eq!(r[0].lat.percentiles.as_ref().unwrap().len(), 2);
        assert_eq!(
            (r[1].name.as_str(), r[1].count, r[1].ops_per_s),
            ("rmdir", 0, 0.0)
        );
        assert!(r[1].lat.percentiles.is_none());
    }
}
