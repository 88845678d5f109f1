//! Conversions between fio's wire results (`thread_stat`, `group_run_stats`, disk util)
//! and flexio's results model (`flexio_stats`).
//!
//! # What survives the trip
//!
//! * **Histograms**: fio's 1856 buckets are flexio's first 1856 buckets, bucket for bucket.
//!   flexio keeps resolving above 2^34 ns (about 17.2 s); fio's last bucket collects
//!   everything from 2^34 − 2^27 ns up, so those latencies are **folded into bucket 1855**
//!   on the way out: their count is kept (percentile ranks stay right) but fio reports
//!   them as about 17.1 s. min/max/mean/stddev are unaffected (they travel in `io_stat`).
//! * **Latency statistics**: flexio keeps exact integer sums (`LatStat`), fio mean and S
//!   as doubles. Out: mean and S computed once (`LatStat::to_stat`). Back: the sum is
//!   recovered exactly (rounded from mean × n with exact integer arithmetic) while it is
//!   below 2^52 ns (52 days of summed latency); the sum of squares to within 0.5 of S,
//!   so the standard deviation agrees to double precision. min, max, n exact.
//! * **bw/IOPS samples** (`Stat`): the same five numbers on both sides (a −0.0 mean
//!   becomes 0.0).
//! * CPU times: flexio's µs are sent as fio's ms (truncated, as fio's own report
//!   truncates them), so the printed CPU percentages are unchanged.
//! * `unit_base`: flexio's 0/8 (bytes) become fio's 4 (bytes/s), 1 (bits) becomes 5;
//!   back, 5 and 3 become 1 and everything else 0.
//! * Not carried by fio's structures and left at their defaults on the way back: the
//!   schedule-latency statistics (`sched`, `lag`, `late`), flexio's self-measurement
//!   (`engine_ns`, `wait_ns`, `plain_ios`), whether an error was non-fatal (rebuilt as
//!   "continue_on_error is set and errors were counted"), the JSON option echo (it travels
//!   as JOB_OPT messages instead), `nostats_engine`, and disk sectors / merged-slave counts.
//! * `unified_rw_reporting=mixed`: fio folds every direction into index 0 before sending;
//!   so does the conversion out. Back, the folded numbers are read as direction 0.

use crate::msg::{DiskCounters, DiskUtil, JobOpt};
use crate::ts::{
    ClatPrio, GroupStats, IoStat, Plat, ThreadStat, KIND_CLAT, KIND_LAT, KIND_SLAT, LIST_MAX,
    PLAT_NR, SS_ATTAINED, SS_BUFFER_FULL, SS_BW, SS_DATA, SS_IOPS, SS_PCT, SS_RAMP_OVER, SS_SLOPE,
};
use flexio_stats::hist::Hist;
use flexio_stats::report::{
    DiskAggr, DiskReport, GroupDir, GroupReport, ReportParams, RunReport, Unified,
};
use flexio_stats::stat::{LatStat, Stat};
use flexio_stats::steady::{Criterion, SteadyState};
use flexio_stats::thread::{DirStats, PrioStat, ThreadStats};
use flexio_stats::JobResult;

/// fio's `continue_on_error=all` (ERROR_TYPE_ANY); flexio keeps only whether it is set.
pub const CONTINUE_ON_ERROR_ALL: u16 = 0xffff;

/// A flexio histogram in fio's layout: buckets 0..1855 copied, everything above folded
/// into fio's last bucket.
pub fn plat_of(h: &Hist) -> Box<Plat> {
    let mut p = Box::new([0u64; PLAT_NR]);
    let c = h.counts();
    let n = c.len().min(PLAT_NR);
    p[..n].copy_from_slice(&c[..n]);
    if c.len() > PLAT_NR {
        p[PLAT_NR - 1] += c[PLAT_NR..].iter().sum::<u64>();
    }
    p
}

/// fio's histogram as a flexio histogram (enabled when it has counts or `enabled`).
pub fn hist_of(p: &Plat, enabled: bool) -> Hist {
    if !enabled && p.iter().all(|c| *c == 0) {
        return Hist::disabled();
    }
    Hist::from_counts(p.to_vec())
}

pub fn io_of_stat(s: &Stat) -> IoStat {
    IoStat {
        max: s.max,
        min: s.min,
        samples: s.samples,
        mean: s.mean,
        s: s.sum_sq_dev,
    }
}

pub fn stat_of_io(s: &IoStat) -> Stat {
    Stat {
        min: s.min,
        max: s.max,
        samples: s.samples,
        mean: s.mean,
        sum_sq_dev: s.s,
    }
}

pub fn io_of_lat(l: &LatStat) -> IoStat {
    io_of_stat(&l.to_stat())
}

/// round(m × 2^e × n) for a double's mantissa m and exponent e, saturating.
fn scaled_round(x: f64, n: u64) -> u128 {
    if x.is_nan() || x <= 0.0 || !x.is_finite() {
        return 0;
    }
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let (mant, e) = if exp == 0 {
        (bits & ((1 << 52) - 1), -1074)
    } else {
        ((bits & ((1 << 52) - 1)) | (1 << 52), exp - 1075)
    };
    let prod = mant as u128 * n as u128; // < 2^117
    if e >= 0 {
        if e >= 11 || prod.leading_zeros() < e as u32 {
            return u128::MAX;
        }
        prod << e
    } else {
        let sh = (-e) as u32;
        if sh >= 128 {
            return 0;
        }
        let q = prod >> sh;
        let half = 1u128 << (sh - 1);
        let r = prod & ((1u128 << sh) - 1);
        q + (r >= half) as u128
    }
}

/// fio's `io_stat` as flexio's exact-sum statistic (see the module notes).
pub fn lat_of_io(s: &IoStat) -> LatStat {
    if s.samples == 0 {
        return LatStat::default();
    }
    let n = s.samples;
    let sum = scaled_round(s.mean, n);
    let extra = if s.s > 0.0 && s.s.is_finite() {
        s.s
    } else {
        0.0
    };
    let sumsq = match sum.checked_mul(sum) {
        Some(sq) => {
            let (q, r) = (sq / n as u128, sq % n as u128);
            q.saturating_add((extra + r as f64 / n as f64).round() as u128)
        }
        None => {
            let m = s.mean;
            ((m * m * n as f64) + extra) as u128
        }
    };
    LatStat {
        min: s.min,
        max: s.max,
        samples: n,
        sum,
        sumsq,
    }
}

fn unit_base_in(fio: u32) -> u32 {
    if fio == 5 || fio == 3 {
        1
    } else {
        0
    }
}

fn unified_out(u: Unified) -> u32 {
    match u {
        Unified::None => 0,
        Unified::Mixed => 1,
        Unified::Both => 2,
    }
}

fn unified_in(u: u32) -> Unified {
    match u {
        1 => Unified::Mixed,
        2 => Unified::Both,
        _ => Unified::None,
    }
}

/// A flexio reporting group as fio's group stats (unused directions hold 2^64−1 in
/// min_run and min_bw, as fio leaves them).
pub fn group_stats_of(g: &GroupReport) -> GroupStats {
    let mut gs = GroupStats {
        kb_base: g.kb_base,
        unit_base: flexio_stats::report::fio_unit(g.unit_base),
        sig_figs: g.sig_figs,
        groupid: g.id,
        unified_rw_rep: unified_out(g.unified),
        ..Default::default()
    };
    // A mixed group's figures are in its read slot already, as in fio's group stats.
    for (d, x) in g.dirs.iter().enumerate() {
        gs.max_run[d] = x.max_run_ms;
        gs.max_bw[d] = x.max_bw;
        gs.iobytes[d] = x.io_bytes;
        gs.agg[d] = x.agg_bw;
        if x.max_run_ms > 0 {
            gs.min_run[d] = x.min_run_ms;
            gs.min_bw[d] = x.min_bw;
        }
    }
    gs
}

/// fio's group stats as a flexio group.
pub fn group_report_of(gs: &GroupStats) -> GroupReport {
    let unmax = |v: u64| if v == u64::MAX { 0 } else { v };
    let dirs = [0, 1, 2].map(|d| GroupDir {
        agg_bw: gs.agg[d],
        min_bw: unmax(gs.min_bw[d]),
        max_bw: gs.max_bw[d],
        io_bytes: gs.iobytes[d],
        min_run_ms: unmax(gs.min_run[d]),
        max_run_ms: gs.max_run[d],
    });
    let unified = unified_in(gs.unified_rw_rep);
    GroupReport {
        id: gs.groupid,
        kb_base: gs.kb_base,
        unit_base: unit_base_in(gs.unit_base),
        sig_figs: gs.sig_figs,
        unified,
        mixed: (unified != Unified::None).then(|| dirs[0].clone()),
        dirs,
    }
}

/// A disk as fio's DU. flexio keeps the utilisation, not the busy time: `io_ticks` is
/// rebuilt as util × `msec` (the run's wall time in ms) so that fio prints the same util.
/// The slave aggregate stays zero, as a fio server sends it (it sums the slaves only when
/// it prints the disk block itself, which a server never does).
pub fn disk_util_of(d: &DiskReport, msec: u64) -> DiskUtil {
    DiskUtil {
        name: d.name.clone(),
        s: DiskCounters {
            ios: [d.read_ios, d.write_ios],
            merges: [d.read_merges, d.write_merges],
            sectors: [d.read_sectors, d.write_sectors],
            ticks: [d.read_ticks, d.write_ticks],
            io_ticks: (d.util / 100.0 * msec as f64).round() as u64,
            time_in_queue: d.in_queue,
        },
        msec,
        ..Default::default()
    }
}

/// fio's DU as a flexio disk (util = io_ticks / msec, capped at 100 %, as fio).
pub fn disk_report_of(du: &DiskUtil) -> DiskReport {
    let util = if du.msec > 0 {
        (100.0 * du.s.io_ticks as f64 / du.msec as f64).min(100.0)
    } else {
        0.0
    };
    DiskReport {
        name: du.name.clone(),
        read_ios: du.s.ios[0],
        write_ios: du.s.ios[1],
        read_sectors: du.s.sectors[0],
        write_sectors: du.s.sectors[1],
        read_merges: du.s.merges[0],
        write_merges: du.s.merges[1],
        read_ticks: du.s.ticks[0],
        write_ticks: du.s.ticks[1],
        in_queue: du.s.time_in_queue,
        util,
        aggr: (du.slavecount > 0).then_some(DiskAggr {
            slaves: du.slavecount,
            ios: du.agg.ios,
            sectors: du.agg.sectors,
            merges: du.agg.merges,
            ticks: du.agg.ticks,
            in_queue: du.agg.time_in_queue,
            max_util: du.max_util,
        }),
    }
}

/// One reporting unit (a job, or a group_reporting group already merged) as fio's TS.
/// `thread_number` is the 1-based number of its first job, `members` the jobs merged
/// into it, `rs` its group's stats.
pub fn thread_stat_of(
    job: &JobResult,
    members: u32,
    thread_number: u32,
    rs: &GroupStats,
) -> ThreadStat {
    let s = &job.stats;
    let p = &job.params;
    let mut ts = ThreadStat {
        name: job.name.clone(),
        verror: s.verror.clone(),
        error: s.error as u32,
        thread_number,
        groupid: job.groupid,
        pid: job.pid as u32,
        description: job.description.clone().unwrap_or_default(),
        members,
        unified_rw_rep: unified_out(p.unified),
        disable_prio_stat: s.dirs.iter().all(|d| d.prios.is_empty()) as u32,
        sync_stat: io_of_lat(&s.sync),
        usr_time: s.usr_time_us / 1000,
        sys_time: s.sys_time_us / 1000,
        ctx: s.ctx,
        minf: s.minf,
        majf: s.majf,
        clat_percentiles: p.clat_percentiles,
        lat_percentiles: p.lat_percentiles,
        slat_percentiles: p.slat_percentiles,
        percentile_precision: p.percentile_precision as u64,
        io_u_map: s.depth_map,
        io_u_submit: s.submit_map,
        io_u_complete: s.complete_map,
        io_u_lat_n: s.lat_n,
        io_u_lat_u: s.lat_u,
        io_u_lat_m: s.lat_m,
        sync_plat: plat_of(&s.sync_hist),
        total_submit: s.total_submit,
        total_complete: s.total_complete,
        total_run_time: s.total_run_time_ms,
        continue_on_error: if p.continue_on_error {
            CONTINUE_ON_ERROR_ALL
        } else {
            0
        },
        first_error: s.first_error as u32,
        total_err_count: s.total_err,
        kb_base: p.kb_base,
        unit_base: flexio_stats::report::fio_unit(p.unit_base),
        latency_depth: s.latency_depth.unwrap_or(p.latency_depth),
        latency_target: p.latency_target_ns,
        latency_percentile: p.latency_percentile,
        latency_window: p.latency_window_us,
        sig_figs: p.sig_figs,
        rs: rs.clone(),
        ..Default::default()
    };
    ts.percentile_list = [0.0; LIST_MAX];
    for (slot, v) in ts.percentile_list.iter_mut().zip(&p.percentile_list) {
        *slot = *v;
    }
    let folded;
    let dirs: Vec<&DirStats> = if p.unified == Unified::Mixed {
        folded = s.fold_mixed();
        vec![&folded]
    } else {
        s.dirs.iter().collect()
    };
    for (d, x) in dirs.into_iter().enumerate() {
        ts.clat_stat[d] = io_of_lat(&x.clat);
        ts.slat_stat[d] = io_of_lat(&x.slat);
        ts.lat_stat[d] = io_of_lat(&x.lat);
        ts.bw_stat[d] = io_of_stat(&x.bw);
        ts.iops_stat[d] = io_of_stat(&x.iops);
        ts.plat[KIND_SLAT][d] = *plat_of(&x.slat_hist);
        ts.plat[KIND_CLAT][d] = *plat_of(&x.clat_hist);
        ts.plat[KIND_LAT][d] = *plat_of(&x.lat_hist);
        ts.total_io_u[d] = x.total_ios;
        ts.short_io_u[d] = x.short_ios;
        ts.drop_io_u[d] = x.drop_ios;
        ts.io_bytes[d] = x.io_bytes;
        ts.runtime[d] = x.runtime_ms;
        ts.clat_prio[d] = x
            .prios
            .iter()
            .map(|q| ClatPrio {
                hist: plat_of(&q.hist),
                stat: io_of_lat(&q.stat),
                ioprio: q.ioprio as u32,
            })
            .collect();
    }
    ts.total_io_u[3] = s.sync_total;
    if let Some(ss) = &job.steadystate {
        steady_out(ss, &mut ts);
    }
    ts
}

fn steady_out(ss: &SteadyState, ts: &mut ThreadStat) {
    let c = &ss.crit;
    let full = ss.samples >= ss.window as u64;
    let mut state = SS_RAMP_OVER | SS_DATA;
    state |= if c.iops { SS_IOPS } else { SS_BW };
    if c.slope {
        state |= SS_SLOPE;
    }
    if c.pct {
        state |= SS_PCT;
    }
    if ss.attained {
        state |= SS_ATTAINED;
    }
    if full {
        state |= SS_BUFFER_FULL;
    }
    ts.ss_dur = ss.window as u64;
    ts.ss_state = state;
    // The data is sent oldest first; fio finds the oldest at ss_head, or at ss_head − 1
    // when the buffer is full and the criterion not attained.
    ts.ss_head = if full && !ss.attained && ss.window > 1 {
        1
    } else {
        0
    };
    ts.ss_limit = c.limit;
    ts.ss_slope = ss.slope;
    ts.ss_deviation = ss.max_deviation;
    ts.ss_criterion = ss.criterion;
    ts.ss_iops = ss.iops_data();
    ts.ss_bw = ss.bw_data();
}

fn steady_in(ts: &ThreadStat) -> Option<SteadyState> {
    if ts.ss_state & SS_DATA == 0 || ts.ss_dur == 0 {
        return None;
    }
    let n = ts.ss_dur as usize;
    let oldest = if ts.ss_state & SS_BUFFER_FULL != 0 && ts.ss_state & SS_ATTAINED == 0 {
        (ts.ss_head as usize + n - 1) % n
    } else {
        ts.ss_head as usize % n
    };
    let ring = |v: &[u64]| -> Vec<u64> {
        (0..n)
            .map(|i| v.get((oldest + i) % n).copied().unwrap_or(0))
            .collect()
    };
    Some(SteadyState::from_parts(
        Criterion {
            iops: ts.ss_state & SS_IOPS != 0,
            // fio 3.33's protocol has no latency criteria.
            lat: false,
            slope: ts.ss_state & SS_SLOPE != 0,
            limit: ts.ss_limit,
            pct: ts.ss_state & SS_PCT != 0,
        },
        ts.ss_dur,
        ts.ss_state & SS_ATTAINED != 0,
        ts.ss_criterion,
        ts.ss_slope,
        ts.ss_deviation,
        ring(&ts.ss_iops),
        ring(&ts.ss_bw),
    ))
}

/// fio's report parameters.
pub fn params_of(ts: &ThreadStat) -> ReportParams {
    ReportParams {
        kb_base: ts.kb_base,
        unit_base: unit_base_in(ts.unit_base),
        sig_figs: ts.sig_figs,
        percentile_list: ts.percentiles(),
        percentile_precision: ts.percentile_precision.min(10) as usize,
        clat_percentiles: ts.clat_percentiles,
        lat_percentiles: ts.lat_percentiles,
        slat_percentiles: ts.slat_percentiles,
        latency_depth: ts.latency_depth,
        continue_on_error: ts.continue_on_error != 0,
        unified: unified_in(ts.unified_rw_rep),
        nostats_engine: false,
        latency_target_ns: ts.latency_target,
        latency_window_us: ts.latency_window,
        latency_percentile: ts.latency_percentile,
    }
}

/// A TS as a flexio job result (one reporting unit: `group_reporting` is false so that
/// building a report does not merge it again; `ts.members` says how many jobs it holds).
pub fn job_result_of(ts: &ThreadStat) -> JobResult {
    let mut s = ThreadStats::default();
    for d in 0..3 {
        let x = &mut s.dirs[d];
        x.io_bytes = ts.io_bytes[d];
        x.total_ios = ts.total_io_u[d];
        x.short_ios = ts.short_io_u[d];
        x.drop_ios = ts.drop_io_u[d];
        x.slat = lat_of_io(&ts.slat_stat[d]);
        x.clat = lat_of_io(&ts.clat_stat[d]);
        x.lat = lat_of_io(&ts.lat_stat[d]);
        x.slat_hist = hist_of(&ts.plat[KIND_SLAT][d], ts.slat_percentiles);
        x.clat_hist = hist_of(&ts.plat[KIND_CLAT][d], ts.clat_percentiles);
        x.lat_hist = hist_of(&ts.plat[KIND_LAT][d], ts.lat_percentiles);
        x.bw = stat_of_io(&ts.bw_stat[d]);
        x.iops = stat_of_io(&ts.iops_stat[d]);
        x.runtime_ms = ts.runtime[d];
        x.prios = ts.clat_prio[d]
            .iter()
            .map(|q| PrioStat {
                ioprio: q.ioprio as u16,
                stat: lat_of_io(&q.stat),
                hist: hist_of(&q.hist, true),
            })
            .collect();
    }
    s.sync = lat_of_io(&ts.sync_stat);
    s.sync_hist = hist_of(&ts.sync_plat, ts.clat_percentiles || ts.lat_percentiles);
    s.sync_total = ts.total_io_u[3];
    s.total_run_time_ms = ts.total_run_time;
    s.usr_time_us = ts.usr_time.saturating_mul(1000);
    s.sys_time_us = ts.sys_time.saturating_mul(1000);
    s.ctx = ts.ctx;
    s.majf = ts.majf;
    s.minf = ts.minf;
    s.depth_map = ts.io_u_map;
    s.submit_map = ts.io_u_submit;
    s.complete_map = ts.io_u_complete;
    s.total_submit = ts.total_submit;
    s.total_complete = ts.total_complete;
    s.lat_n = ts.io_u_lat_n;
    s.lat_u = ts.io_u_lat_u;
    s.lat_m = ts.io_u_lat_m;
    s.error = ts.error as i32;
    s.verror = ts.verror.clone();
    s.error_soft = ts.error != 0 && ts.continue_on_error != 0 && ts.total_err_count > 0;
    s.total_err = ts.total_err_count;
    s.first_error = ts.first_error as i32;
    s.latency_depth = (ts.latency_target > 0).then_some(ts.latency_depth);
    JobResult {
        name: ts.name.clone(),
        groupid: ts.groupid,
        pid: ts.pid as i32,
        description: (!ts.description.is_empty()).then(|| ts.description.clone()),
        echo: Vec::new(),
        group_reporting: false,
        stats_enabled: true,
        params: params_of(ts),
        stats: s,
        steadystate: steady_in(ts),
    }
}

/// A run as a server sends it: global JOB_OPTs, then per report its JOB_OPTs and TS, then
/// one GS per group id from 0 to the highest, then one DU per disk.
#[derive(Clone, Debug)]
pub struct WireRun {
    pub global_opts: Vec<JobOpt>,
    /// (the report's options, its stats)
    pub reports: Vec<(Vec<JobOpt>, ThreadStat)>,
    pub groups: Vec<GroupStats>,
    pub disks: Vec<DiskUtil>,
}

/// A finished run (the job results and the report built from them) as the messages a
/// fio server sends. `disk_msec` is the run's wall time in ms (see [`disk_util_of`]).
pub fn wire_run_of(results: &[JobResult], report: &RunReport, disk_msec: u64) -> WireRun {
    let max_gid = report.groups.iter().map(|g| g.id).max();
    let groups: Vec<GroupStats> = match max_gid {
        Some(m) => (0..=m)
            .map(|id| match report.groups.iter().find(|g| g.id == id) {
                Some(g) => group_stats_of(g),
                None => GroupStats {
                    groupid: id,
                    ..Default::default()
                },
            })
            .collect(),
        None => Vec::new(),
    };
    // The 1-based number of each unit's first job (units as report::merge_units makes them).
    let mut firsts = Vec::new();
    let mut last: Option<u32> = None;
    for (i, r) in results.iter().enumerate().filter(|(_, r)| r.stats_enabled) {
        if !flexio_stats::report::joins_unit(last, r) {
            firsts.push(i as u32 + 1);
        }
        last = Some(r.groupid);
    }
    let units = flexio_stats::report::merge_units(results);
    let reports = units
        .iter()
        .enumerate()
        .map(|(i, (u, members))| {
            let rs = groups.get(u.groupid as usize).cloned().unwrap_or_default();
            let tn = firsts.get(i).copied().unwrap_or(i as u32 + 1);
            let opts = u
                .echo
                .iter()
                .map(|(k, v)| JobOpt::new(false, i as u32, k, v))
                .collect();
            (opts, thread_stat_of(u, *members, tn, &rs))
        })
        .collect();
    WireRun {
        global_opts: report
            .global_options
            .iter()
            .map(|(k, v)| JobOpt::new(true, 0, k, v))
            .collect(),
        reports,
        groups,
        disks: report
            .disks
            .iter()
            .map(|d| disk_util_of(d, disk_msec))
            .collect(),
    }
}

/// The results a client received from one server as a flexio report: each TS is one
/// reporting unit (its `members` kept), the groups are the server's GS (empty group ids
/// left out), the disks its DUs. `now` is (seconds, ms, ctime text) as for
/// `report::build`.
pub fn run_report_of(
    ts: &[ThreadStat],
    gs: &[GroupStats],
    du: &[DiskUtil],
    version: &str,
    now: (i64, i64, String),
    elapsed_s: u64,
) -> RunReport {
    let results: Vec<JobResult> = ts.iter().map(job_result_of).collect();
    let disks = du.iter().map(disk_report_of).collect();
    let mut r = flexio_stats::report::build(&results, disks, Vec::new(), version, now, elapsed_s);
    for (j, t) in r.jobs.iter_mut().zip(ts) {
        j.members = t.members;
    }
    let wire_groups: Vec<GroupReport> = gs
        .iter()
        .filter(|g| r.jobs.iter().any(|j| j.groupid == g.groupid))
        .map(group_report_of)
        .collect();
    if !wire_groups.is_empty() {
        r.groups = wire_groups;
    }
    r
}
