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
    /// kind (0 = none yet).
    pub first_ns: u64,
    pub last_ns: u64,
    /// The kind's phases, one per loop of the job (each loop of mdtree runs every phase
    /// once; the worker closes them at each loop's end): the closed phases' summed spans,
    /// their number, and where the open one started (0: none open). The phase rate is over
    /// these spans, not over first..last, which with `loops>1` would include every other
    /// phase of every loop.
    pub closed_ns: u64,
    pub phases: u32,
    pub open_ns: u64,
}

impl OpStats {
    pub fn new(name: &'static str) -> Self {
        OpStats {
            name,
            lat: LatStat::default(),
            hist: Hist::enabled(),
            first_ns: 0,
            last_ns: 0,
            closed_ns: 0,
            phases: 0,
            open_ns: 0,
        }
    }

    /// One operation of `ns` that ended at clock time `end`.
    #[inline]
    pub fn add(&mut self, ns: u64, end: u64) {
        self.lat.add(ns);
        self.hist.add(ns);
        let start = end.saturating_sub(ns).max(1);
        if self.first_ns == 0 {
            self.first_ns = start;
        }
        if self.open_ns == 0 {
            self.open_ns = start;
            self.phases += 1;
        }
        self.last_ns = end;
    }

    /// The loop ended: this kind's phase (if one is open) ends.
    #[inline]
    pub fn close_phase(&mut self) {
        if self.open_ns != 0 {
            self.closed_ns += self.last_ns.saturating_sub(self.open_ns);
            self.open_ns = 0;
        }
    }

    /// The phases' summed spans (the open one up to the last operation).
    pub fn span_ns(&self) -> u64 {
        let open = if self.open_ns != 0 {
            self.last_ns.saturating_sub(self.open_ns)
        } else {
            0
        };
        self.closed_ns + open
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
    /// The kind's phases, each from the start of its first to the end of its last operation,
    /// summed (one phase per loop), and the count over them: mdtest's rate for a phase
    /// (e.g. `create` over the file-creation phase); wall time between the operations of a
    /// phase (the tool's own) included, other phases not. With several jobs: the union of
    /// their spans where each had one phase (an aggregate rate), else the longest.
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
            let span = o.span_ns();
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
                let single = x.phases <= 1 && o.phases <= 1;
                let longest = x.span_ns().max(o.span_ns());
                if o.first_ns != 0 && (x.first_ns == 0 || o.first_ns < x.first_ns) {
                    x.first_ns = o.first_ns;
                }
                x.last_ns = x.last_ns.max(o.last_ns);
                // One phase each (jobs side by side): the union of their spans. Several
                // phases: the longest member's (their phases overlap only loop by loop).
                x.closed_ns = if single {
                    x.last_ns.saturating_sub(x.first_ns)
                } else {
                    longest
                };
                x.open_ns = 0;
                x.phases = x.phases.max(o.phases).max(1);
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

    #[test]
    fn phase_rates_count_each_loops_phase_only() {
        // Two loops of mkdir then rmdir: 10 ops of 1 us each per phase, back to back; the
        // rmdir phase of a loop lasts about 1 ms. mkdir's phase rate is over its two 10 us
        // phases, not over 0 .. the end of loop 2.
        let mut t = crate::thread::ThreadStats::default();
        t.init_ops(&["mkdir", "rmdir"]);
        let mut now = 1_000u64;
        for _ in 0..2 {
            for _ in 0..10 {
                now += 1_000;
                t.add_op(0, 1_000, now);
            }
            for _ in 0..10 {
                now += 100_000;
                t.add_op(1, 1_000, now);
            }
            t.close_op_phases();
        }
        assert_eq!(t.ops[0].phases, 2);
        assert_eq!(t.ops[0].span_ns(), 20_000);
        assert_eq!(t.ops[1].span_ns(), 2 * (1_000 + 9 * 100_000));
    }
}
