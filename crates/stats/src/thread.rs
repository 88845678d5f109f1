//! Per-thread accumulators: everything a job records while it runs. Numbers only; the
//! report module derives what is printed.
//!
//! Recording methods are `#[inline]` and allocation-free: they are on the I/O hot path.

use crate::hist::Hist;
use crate::stat::{LatStat, Stat};

/// Which optional measurements a job records.
#[derive(Clone, Copy, Debug, Default)]
pub struct StatsConfig {
    pub clat_hist: bool,
    pub lat_hist: bool,
    pub slat_hist: bool,
    /// Scheduled-start latency histogram (rate-limited jobs).
    pub sched_hist: bool,
    /// Sync latency histogram: fio keeps it whenever it times syncs, and its normal output
    /// shows the sync percentiles whatever clat_percentiles says.
    pub sync_hist: bool,
}

/// Latency of the requests of one I/O priority (fio's clat_prio_stat).
#[derive(Clone, Debug, Default)]
pub struct PrioStat {
    /// ioprio value: class << 13 | hint << 3 | level.
    pub ioprio: u16,
    pub stat: LatStat,
    pub hist: Hist,
}

/// Statistics of one data direction.
#[derive(Clone, Debug, Default)]
pub struct DirStats {
    /// Bytes transferred (completed).
    pub io_bytes: u64,
    /// I/Os issued (fio's `total_io_u`).
    pub total_ios: u64,
    /// Short transfers that were requeued for their remainder.
    pub short_ios: u64,
    /// I/Os dropped (not issued because the job ended).
    pub drop_ios: u64,
    pub slat: LatStat,
    pub clat: LatStat,
    pub lat: LatStat,
    pub slat_hist: Hist,
    pub clat_hist: Hist,
    pub lat_hist: Hist,
    /// Bandwidth samples (KiB/s), one per `bwavgtime` interval with progress.
    pub bw: Stat,
    /// IOPS samples, one per `iopsavgtime` interval with progress.
    pub iops: Stat,
    /// Runtime of the direction in ms: per loop, the elapsed microseconds rounded up to
    /// whole milliseconds (fio's `update_runtime`).
    pub runtime_ms: u64,
    /// The same runtime in exact nanoseconds (flexio's addition, not rounded per loop):
    /// what `flexio matrix` divides by, where a cell lasts microseconds.
    pub runtime_ns: u64,
    /// Completion (or total, with lat_percentiles) latency per I/O priority; recorded only
    /// when the job varies priorities per request (cmdprio).
    pub prios: Vec<PrioStat>,
    /// Rate-limited jobs: latency measured from each I/O's scheduled start (free of
    /// coordinated omission), how late each I/O was issued, and how many were late by at
    /// least [`LATE_NS`].
    pub sched: LatStat,
    pub sched_hist: Hist,
    pub lag: LatStat,
    pub late: u64,
}

/// An I/O issued this much after its scheduled time counts as late.
pub const LATE_NS: u64 = 1_000_000;

impl DirStats {
    /// Add another direction's or member's numbers: counts summed, latency statistics and
    /// histograms merged, bandwidth and IOPS samples summed with fio's rule (`first`: this
    /// is the first member of a group), the longest runtime kept.
    pub fn merge(&mut self, s: &DirStats, first: bool) {
        self.io_bytes += s.io_bytes;
        self.total_ios += s.total_ios;
        self.short_ios += s.short_ios;
        self.drop_ios += s.drop_ios;
        self.slat.merge(&s.slat);
        self.clat.merge(&s.clat);
        self.lat.merge(&s.lat);
        self.slat_hist.merge(&s.slat_hist);
        self.clat_hist.merge(&s.clat_hist);
        self.lat_hist.merge(&s.lat_hist);
        self.bw.sum(&s.bw, first);
        self.iops.sum(&s.iops, first);
        self.runtime_ms = self.runtime_ms.max(s.runtime_ms);
        self.runtime_ns = self.runtime_ns.max(s.runtime_ns);
        self.merge_prios(&s.prios);
        self.sched.merge(&s.sched);
        self.sched_hist.merge(&s.sched_hist);
        self.lag.merge(&s.lag);
        self.late += s.late;
    }

    /// Record a latency for priority `ioprio` (linear search: a job uses one or two).
    #[inline]
    pub fn add_prio(&mut self, ioprio: u16, ns: u64, hist: bool) {
        let i = match self.prios.iter().position(|p| p.ioprio == ioprio) {
            Some(i) => i,
            None => {
                self.prios.push(PrioStat {
                    ioprio,
                    stat: LatStat::default(),
                    hist: if hist {
                        Hist::enabled()
                    } else {
                        Hist::disabled()
                    },
                });
                self.prios.sort_by_key(|p| p.ioprio);
                self.prios
                    .iter()
                    .position(|p| p.ioprio == ioprio)
                    .expect("just inserted")
            }
        };
        let p = &mut self.prios[i];
        p.stat.add(ns);
        p.hist.add(ns);
    }

    fn merge_prios(&mut self, other: &[PrioStat]) {
        for o in other {
            match self.prios.iter_mut().find(|p| p.ioprio == o.ioprio) {
                Some(p) => {
                    p.stat.merge(&o.stat);
                    p.hist.merge(&o.hist);
                }
                None => self.prios.push(o.clone()),
            }
        }
        self.prios.sort_by_key(|p| p.ioprio);
    }
}

/// Number of IO depth / submit / complete buckets.
pub const DEPTH_BUCKETS: usize = 7;

/// Everything one job thread (or, after merging, one reporting unit) measured.
#[derive(Clone, Debug, Default)]
pub struct ThreadStats {
    pub dirs: [DirStats; 3],
    /// fsync/fdatasync latencies.
    pub sync: LatStat,
    pub sync_hist: Hist,
    pub sync_total: u64,
    /// The issued syncs by kind: fsync, fdatasync, sync_file_range (they add up to
    /// `sync_total`; fio 3.33's report counts the last two elsewhere).
    pub sync_kinds: [u64; 3],
    /// When the job's epoch was set (its start, or the end of its ramp), in ms of the
    /// `job_start_clock_id` clock (the newest fio's JSON `job_start`); 0 when unknown.
    pub job_start_ms: u64,
    /// Zone resets of a `zonemode=zbd` job (`None` for every other job: the newest fio
    /// prints the count only for zbd jobs).
    pub zone_resets: Option<u64>,
    /// Milliseconds from the job's epoch (after ramp) to its end (fio's total_run_time).
    pub total_run_time_ms: u64,
    /// The same in exact nanoseconds (flexio's addition): the window the CPU times cover.
    pub total_run_time_ns: u64,
    pub usr_time_us: u64,
    pub sys_time_us: u64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    /// I/Os by queue depth at submission: 1, 2-3, 4-7, 8-15, 16-31, 32-63, >=64.
    pub depth_map: [u64; DEPTH_BUCKETS],
    /// Submit calls by number of I/Os submitted: 0, 1-4, 5-8, 9-16, 17-32, 33-64, >64.
    pub submit_map: [u64; DEPTH_BUCKETS],
    pub complete_map: [u64; DEPTH_BUCKETS],
    pub total_submit: u64,
    pub total_complete: u64,
    /// clat distribution buckets: <1 µs (in ns), <1 ms (in µs), and ms.
    pub lat_n: [u64; 10],
    pub lat_u: [u64; 10],
    pub lat_m: [u64; 12],
    /// Error state: errno of the first fatal error (0 = none) and its description.
    pub error: i32,
    pub verror: String,
    /// The error above is a non-fatal one (continue_on_error): reported in the job header
    /// like fio, but the job did not fail.
    pub error_soft: bool,
    /// Non-fatal errors counted under continue_on_error.
    pub total_err: u64,
    pub first_error: i32,
    /// Queue depth found by latency_target (None without a target).
    pub latency_depth: Option<u32>,
    /// Self-measurement: ns the job thread spent inside the engine (system calls that do or
    /// wait for I/O) and sleeping on purpose (rate limits, think time).
    pub engine_ns: u64,
    pub wait_ns: u64,
    /// I/Os issued by the plain synchronous loop (one request at a time, no per-request
    /// features) rather than the general one.
    pub plain_ios: u64,
    /// I/Os issued by the general loop's lean copy (a job using none of the features it
    /// leaves out).
    pub lean_ios: u64,
    /// Engines with several kinds of operation (mdtree, cmdtime): each kind's statistics,
    /// in the engine's order (empty for other engines).
    pub ops: Vec<crate::ops::OpStats>,
    /// block_error_percentiles: each trim-sized block's trims and state.
    pub block_infos: Option<crate::blocks::BlockInfos>,
}

#[inline]
fn depth_bucket(d: u64) -> usize {
    match d {
        0..=1 => 0,
        2..=3 => 1,
        4..=7 => 2,
        8..=15 => 3,
        16..=31 => 4,
        32..=63 => 5,
        _ => 6,
    }
}

#[inline]
fn batch_bucket(n: u64) -> usize {
    match n {
        0 => 0,
        1..=4 => 1,
        5..=8 => 2,
        9..=16 => 3,
        17..=32 => 4,
        33..=64 => 5,
        _ => 6,
    }
}

/// fio's latency bucket for a value in its unit (ns below 1 µs, µs below 1 ms, ms above).
#[inline]
fn lat_bucket(v: u64) -> usize {
    match v {
        0..=1 => 0,
        2..=3 => 1,
        4..=9 => 2,
        10..=19 => 3,
        20..=49 => 4,
        50..=99 => 5,
        100..=249 => 6,
        250..=499 => 7,
        500..=749 => 8,
        750..=999 => 9,
        1000..=1999 => 10,
        _ => 11,
    }
}

impl ThreadStats {
    pub fn new(cfg: StatsConfig) -> Self {
        let mut t = ThreadStats::default();
        for d in &mut t.dirs {
            if cfg.sched_hist {
                d.sched_hist = Hist::enabled();
            }
            if cfg.clat_hist {
                d.clat_hist = Hist::enabled();
            }
            if cfg.lat_hist {
                d.lat_hist = Hist::enabled();
            }
            if cfg.slat_hist {
                d.slat_hist = Hist::enabled();
            }
        }
        if cfg.sync_hist || cfg.clat_hist || cfg.lat_hist {
            t.sync_hist = Hist::enabled();
        }
        t
    }

    #[inline]
    pub fn add_slat(&mut self, ddir: usize, ns: u64) {
        let d = &mut self.dirs[ddir];
        d.slat.add(ns);
        d.slat_hist.add(ns);
    }

    /// Completion latency; also feeds the `lat (nsec/usec/msec)` distribution.
    #[inline]
    pub fn add_clat(&mut self, ddir: usize, ns: u64) {
        let d = &mut self.dirs[ddir];
        d.clat.add(ns);
        d.clat_hist.add(ns);
        self.mark_latency(ns);
    }

    #[inline]
    pub fn add_lat(&mut self, ddir: usize, ns: u64) {
        let d = &mut self.dirs[ddir];
        d.lat.add(ns);
        d.lat_hist.add(ns);
    }

    #[inline]
    pub fn add_sync(&mut self, ns: u64) {
        self.sync.add(ns);
        self.sync_hist.add(ns);
    }

    #[inline]
    pub fn mark_latency(&mut self, ns: u64) {
        if ns < 1000 {
            self.lat_n[lat_bucket(ns).min(9)] += 1;
        } else if ns < 1_000_000 {
            self.lat_u[lat_bucket(ns / 1000).min(9)] += 1;
        } else {
            self.lat_m[lat_bucket(ns / 1_000_000)] += 1;
        }
    }

    /// `nr` I/Os were queued while `depth` were in flight (after adding them).
    #[inline]
    pub fn mark_depth(&mut self, depth: u64, nr: u64) {
        self.depth_map[depth_bucket(depth)] += nr;
    }

    #[inline]
    pub fn mark_submit(&mut self, nr: u64) {
        self.submit_map[batch_bucket(nr)] += 1;
        self.total_submit += 1;
    }

    #[inline]
    pub fn mark_complete(&mut self, nr: u64) {
        self.complete_map[batch_bucket(nr)] += 1;
        self.total_complete += 1;
    }

    /// `times` submissions of `nr` requests each.
    #[inline]
    pub fn mark_submit_n(&mut self, nr: u64, times: u64) {
        self.submit_map[batch_bucket(nr)] += times;
        self.total_submit += times;
    }

    /// `times` completions of `nr` requests each.
    #[inline]
    pub fn mark_complete_n(&mut self, nr: u64, times: u64) {
        self.complete_map[batch_bucket(nr)] += times;
        self.total_complete += times;
    }

    /// Give the job one statistics slot per operation kind of its engine (before it runs:
    /// recording then never allocates).
    pub fn init_ops(&mut self, kinds: &[&'static str]) {
        self.ops = kinds.iter().map(|k| crate::ops::OpStats::new(k)).collect();
    }

    /// Record one operation of kind `k` (an index into the kinds given to `init_ops`) that
    /// took `ns` and ended at clock time `end`.
    #[inline]
    pub fn add_op(&mut self, k: usize, ns: u64, end: u64) {
        if let Some(o) = self.ops.get_mut(k) {
            o.add(ns, end);
        }
    }

    /// A loop of the job ended: every operation kind's phase of that loop is closed, so a
    /// kind's phase rate is over its own phases, not over the loops between them.
    pub fn close_op_phases(&mut self) {
        for o in &mut self.ops {
            o.close_phase();
        }
    }

    /// Record the first fatal error (later ones are ignored, as in fio).
    pub fn set_error(&mut self, errno: i32, what: String) {
        if self.error == 0 || self.error_soft {
            self.error = errno;
            self.verror = what;
            self.error_soft = false;
        }
    }

    /// Record a non-fatal error for the job header (fio keeps the first error in the
    /// thread's error state even when continue_on_error lets the job go on).
    pub fn set_soft_error(&mut self, errno: i32, what: String) {
        if self.error == 0 {
            self.error = errno;
            self.verror = what;
            self.error_soft = true;
        }
    }

    /// The job ended with a fatal error.
    pub fn failed(&self) -> bool {
        self.error != 0 && !self.error_soft
    }

    /// Count a non-fatal error (continue_on_error).
    pub fn count_error(&mut self, errno: i32) {
        if self.total_err == 0 {
            self.first_error = errno;
        }
        self.total_err += 1;
    }

    /// The job's run time in nanoseconds: the exact figure where there is one (results
    /// from a remote server carry only the milliseconds).
    /// The share (0 to 1) of the job's run time spent in flexio itself: neither in the
    /// engine nor in deliberate waits (rate limits, think time). `None` without run time
    /// or issued I/O.
    pub fn tool_share(&self) -> Option<f64> {
        let wall = self.run_time_ns() as f64;
        (wall > 0.0 && self.issued_rwt() > 0)
            .then(|| (1.0 - (self.engine_ns + self.wait_ns) as f64 / wall).clamp(0.0, 1.0))
    }

    pub fn run_time_ns(&self) -> u64 {
        if self.total_run_time_ns > 0 {
            self.total_run_time_ns
        } else {
            self.total_run_time_ms * 1_000_000
        }
    }

    /// Sum of issued read, write and trim I/Os.
    pub fn issued_rwt(&self) -> u64 {
        self.dirs.iter().map(|d| d.total_ios).sum()
    }

    /// Record an I/O of a rate-limited job against its schedule.
    #[inline]
    pub fn add_sched(&mut self, ddir: usize, from_sched_ns: u64, lag_ns: u64) {
        let d = &mut self.dirs[ddir];
        d.sched.add(from_sched_ns);
        d.sched_hist.add(from_sched_ns);
        d.lag.add(lag_ns);
        if lag_ns >= LATE_NS {
            d.late += 1;
        }
    }

    /// Merge another member of a reporting group (fio's `sum_thread_stats`).
    pub fn merge(&mut self, o: &ThreadStats, first: bool) {
        if self.latency_depth.is_none() {
            self.latency_depth = o.latency_depth;
        }
        for (d, s) in self.dirs.iter_mut().zip(o.dirs.iter()) {
            d.merge(s, first);
        }
        self.sync.merge(&o.sync);
        self.sync_hist.merge(&o.sync_hist);
        self.sync_total += o.sync_total;
        for k in 0..3 {
            self.sync_kinds[k] += o.sync_kinds[k];
        }
        if first {
            // A group's start is its first member's (fio's job_start).
            self.job_start_ms = o.job_start_ms;
        }
        if let Some(n) = o.zone_resets {
            self.zone_resets = Some(self.zone_resets.unwrap_or(0) + n);
        }
        self.total_run_time_ms += o.total_run_time_ms;
        self.total_run_time_ns += o.total_run_time_ns;
        self.engine_ns += o.engine_ns;
        self.wait_ns += o.wait_ns;
        self.plain_ios += o.plain_ios;
        self.lean_ios += o.lean_ios;
        self.usr_time_us += o.usr_time_us;
        self.sys_time_us += o.sys_time_us;
        self.ctx += o.ctx;
        self.majf += o.majf;
        self.minf += o.minf;
        for i in 0..DEPTH_BUCKETS {
            self.depth_map[i] += o.depth_map[i];
            self.submit_map[i] += o.submit_map[i];
            self.complete_map[i] += o.complete_map[i];
        }
        self.total_submit += o.total_submit;
        self.total_complete += o.total_complete;
        for i in 0..10 {
            self.lat_n[i] += o.lat_n[i];
            self.lat_u[i] += o.lat_u[i];
        }
        for i in 0..12 {
            self.lat_m[i] += o.lat_m[i];
        }
        if (self.error == 0 || (self.error_soft && !o.error_soft)) && o.error != 0 {
            self.error = o.error;
            self.verror = o.verror.clone();
            self.error_soft = o.error_soft;
        }
        if self.total_err == 0 {
            self.first_error = o.first_error;
        }
        self.total_err += o.total_err;
        crate::ops::merge(&mut self.ops, &o.ops);
        if let Some(b) = &o.block_infos {
            self.block_infos
                .get_or_insert_with(Default::default)
                .merge(b);
        }
    }

    /// Fold write and trim into read (unified_rw_reporting=mixed).
    pub fn fold_mixed(&self) -> DirStats {
        let mut m = self.dirs[0].clone();
        for s in &self.dirs[1..] {
            m.merge(s, false);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn latency_buckets_match_fio_boundaries() {
        let mut t = ThreadStats::default();
        for ns in [
            1,
            750,
            999,
            1000,
            2000,
            99_999,
            1_000_000,
            1_999_999,
            2_000_000_000,
            60_000_000_000,
        ] {
            t.mark_latency(ns);
        }
        assert_eq!(t.lat_n[0], 1); // 1 ns -> "2="
        assert_eq!(t.lat_n[9], 2); // 750, 999 -> "1000="
        assert_eq!(t.lat_u[0], 1); // 1000 ns = 1 us -> "2="
        assert_eq!(t.lat_u[1], 1); // 2 us -> "4="
        assert_eq!(t.lat_u[5], 1); // 99.999 us -> "100="
        assert_eq!(t.lat_m[0], 2); // 1 ms, 1.999 ms -> "2="
        assert_eq!(t.lat_m[11], 2); // 2 s, 60 s -> ">=2000="
    }

    #[test]
    fn depth_and_batch_buckets() {
        let mut t = ThreadStats::default();
        t.mark_depth(1, 1);
        t.mark_depth(4, 1);
        t.mark_depth(64, 3);
        t.mark_submit(1);
        t.mark_submit(65);
        assert_eq!(t.depth_map, [1, 0, 1, 0, 0, 0, 3]);
        assert_eq!(t.submit_map, [0, 1, 0, 0, 0, 0, 1]);
        assert_eq!(t.total_submit, 2);
    }

    #[test]
    fn merge_sums_counts_and_keeps_max_runtime() {
        let cfg = StatsConfig {
            clat_hist: true,
            ..Default::default()
        };
        let mut a = ThreadStats::new(cfg);
        let mut b = ThreadStats::new(cfg);
        a.dirs[0].io_bytes = 10;
        a.dirs[0].runtime_ms = 5;
        a.add_clat(0, 100);
        b.dirs[0].io_bytes = 20;
        b.dirs[0].runtime_ms = 9;
        b.add_clat(0, 300);
        let mut g = ThreadStats::default();
        g.merge(&a, true);
        g.merge(&b, false);
        assert_eq!(g.dirs[0].io_bytes, 30);
        assert_eq!(g.dirs[0].runtime_ms, 9);
        assert_eq!(g.dirs[0].clat.samples, 2);
        assert_eq!(g.dirs[0].clat_hist.total(), 2);
        assert!((g.dirs[0].clat.mean() - 200.0).abs() < 1e-9);
    }
}
