//! The results model: every number the formatters print, derived from the accumulators
//! with fio 3.33's formulas (`stat.c`). Formatters only lay these values out.
//!
//! Units are in the field names or docs: `_ns`, `_ms`, `_bytes`, `KiB/s`, percent.

use crate::hist::Hist;
use crate::stat::Stat;
use crate::thread::{DirStats, ThreadStats, DEPTH_BUCKETS};

/// Unified read/write reporting mode (`unified_rw_reporting`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Unified {
    #[default]
    None,
    Mixed,
    Both,
}

/// Which fio's report the formatters reproduce where fio 3.33 and the newest fio lay out
/// the same numbers differently (`--compat=3.33`; the newest fio by default).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Layout {
    /// fio 3.33's normal and JSON output (the installed oracle).
    Fio333,
    /// The newest fio's (3.42 and later; `fio-3.42-delta.md` §5).
    #[default]
    Latest,
}

impl Layout {
    pub fn is_fio333(self) -> bool {
        self == Layout::Fio333
    }
}

/// Report-relevant job settings (what fio keeps in `thread_stat` besides numbers).
#[derive(Clone, Debug)]
pub struct ReportParams {
    /// 1024 or 1000: unit preference of the output.
    pub kb_base: u32,
    /// 0/8 bytes, 1 bits.
    pub unit_base: u32,
    /// Significant figures of human-readable numbers.
    pub sig_figs: u32,
    /// Requested percentiles (as given).
    pub percentile_list: Vec<f64>,
    /// Decimals used to print percentiles.
    pub percentile_precision: usize,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    /// fio's `latency_depth` (JSON, and the normal output's `latency` line): the configured
    /// iodepth, or the depth a latency_target search found.
    pub latency_depth: u32,
    /// Whether continue_on_error is set (adds the errors line and JSON keys).
    pub continue_on_error: bool,
    pub unified: Unified,
    /// Whether the engine records its own latencies only (filecreate/filestat/filedelete):
    /// no `lat` statistics are shown.
    pub nostats_engine: bool,
    /// latency_target in ns, latency_window in µs, latency_percentile (fio's latency line).
    pub latency_target_ns: u64,
    pub latency_window_us: u64,
    pub latency_percentile: f64,
}

/// What the runner hands over for one job thread.
#[derive(Clone, Debug)]
pub struct JobResult {
    pub name: String,
    pub groupid: u32,
    /// Thread id of the worker (fio prints the pid; with threads that is the thread id).
    pub pid: i32,
    pub description: Option<String>,
    /// JSON `job options` echo.
    pub echo: Vec<(String, String)>,
    pub group_reporting: bool,
    /// `stats=0` jobs are left out of the report.
    pub stats_enabled: bool,
    pub params: ReportParams,
    pub stats: ThreadStats,
    /// Steady-state window and verdict (ss_dur set); a group's members all carry the group's.
    pub steadystate: Option<crate::steady::SteadyState>,
}

/// One latency statistic (slat, clat, lat or sync).
#[derive(Clone, Debug, Default)]
pub struct LatSummary {
    /// Minimum in ns (0 without samples).
    pub min_ns: u64,
    /// Maximum in ns.
    pub max_ns: u64,
    /// Mean in ns.
    pub mean_ns: f64,
    /// Sample standard deviation in ns.
    pub stddev_ns: f64,
    /// Number of samples.
    pub n: u64,
    /// (percentile, value in ns), ascending; `None` when this statistic's percentiles are
    /// not enabled or there are no samples.
    pub percentiles: Option<Vec<(f64, u64)>>,
    /// Non-empty histogram buckets (representative value ns, count), for json+; `None` as
    /// for `percentiles`.
    pub bins: Option<Vec<(u64, u64)>>,
    /// flexio's additions (not in fio's output); `None` for summaries flexio did not
    /// measure itself (e.g. rebuilt from fio's JSON).
    pub extra: Option<LatExtra>,
}

/// What flexio reports about a latency statistic beside fio's fields.
#[derive(Clone, Debug, Default)]
pub struct LatExtra {
    /// Root mean square in ns, sqrt(sum of squares / n), from the exact sums.
    pub rms_ns: f64,
    /// The reported percentiles that rest on too few samples: p needs at least
    /// 1/(1 - p/100) samples (p99.9: 1000), otherwise it is the maximum.
    pub few_samples: Vec<f64>,
}

/// Samples percentile `p` needs so that at least one lies beyond it (p99.9: 1000).
pub fn min_samples_for(p: f64) -> u64 {
    if p >= 100.0 {
        return 1;
    }
    // The tolerance keeps 100 / (100 - 99.9) = 1000.00000000006 at 1000.
    (100.0 / (100.0 - p) - 1e-6).ceil() as u64
}

impl LatSummary {
    pub(crate) fn from(raw: &crate::stat::LatStat, hist: &Hist, pct: bool, list: &[f64]) -> Self {
        let stat = &raw.to_stat();
        let show = pct && stat.samples > 0 && hist.is_enabled();
        LatSummary {
            min_ns: stat.min_or_zero(),
            max_ns: stat.max,
            mean_ns: stat.mean,
            stddev_ns: stat.stddev(),
            n: stat.samples,
            percentiles: show.then(|| hist.percentiles(list, stat.samples)),
            bins: show.then(|| hist.bins()),
            extra: (stat.samples > 0).then(|| LatExtra {
                rms_ns: (raw.sumsq as f64 / raw.samples as f64).sqrt(),
                few_samples: if show {
                    list.iter()
                        .copied()
                        .filter(|p| *p < 100.0 && stat.samples < min_samples_for(*p))
                        .collect()
                } else {
                    Vec::new()
                },
            }),
        }
    }
}

/// Bandwidth or IOPS sample statistics.
#[derive(Clone, Debug, Default)]
pub struct SampleSummary {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    pub samples: u64,
}

impl SampleSummary {
    fn from(s: &Stat) -> Self {
        if s.samples == 0 {
            return SampleSummary::default();
        }
        SampleSummary {
            min: s.min_or_zero(),
            max: s.max,
            mean: s.mean,
            stddev: s.stddev(),
            samples: s.samples,
        }
    }
}

/// Latency of the requests of one I/O priority.
#[derive(Clone, Debug, Default)]
pub struct PrioReport {
    /// ioprio class (0 none, 1 real-time, 2 best-effort, 3 idle), level (0-7) and hint
    /// (0-1023, fio 3.36's `priohint` / `cmdprio_hint`).
    pub class: u16,
    pub level: u16,
    pub hint: u16,
    /// Share of the direction's I/Os, percent.
    pub pct_of_ios: f64,
    pub lat: LatSummary,
}

/// One data direction of a job.
#[derive(Clone, Debug, Default)]
pub struct DirReport {
    /// Bytes transferred.
    pub io_bytes: u64,
    /// Runtime in ms.
    pub runtime_ms: u64,
    /// io_bytes * 1000 / runtime_ms (bytes/s, integer).
    pub bw_bytes: u64,
    /// 1000 * total_ios / runtime_ms (float, JSON `iops`).
    pub iops: f64,
    /// Integer IOPS as the normal output computes it.
    pub iops_int: u64,
    /// I/Os issued.
    pub total_ios: u64,
    pub short_ios: u64,
    pub drop_ios: u64,
    pub slat: LatSummary,
    pub clat: LatSummary,
    pub lat: LatSummary,
    /// Bandwidth samples in KiB/s.
    pub bw_samples: SampleSummary,
    /// Share of the group's aggregate bandwidth in percent (normal `per`, JSON `bw_agg`):
    /// trunc(mean) * 100 / (agg / 1024.0), capped at 100; 0 without samples.
    pub bw_agg_pct: f64,
    /// The terse variant: mean * 100 / trunc(agg / 1024).
    pub bw_agg_pct_terse: f64,
    /// IOPS samples.
    pub iops_samples: SampleSummary,
    /// Per-priority latency (clat, or lat with lat_percentiles); only when two or more
    /// priorities were used.
    pub prios: Vec<PrioReport>,
    /// Rate-limited directions: latency from the scheduled start (flexio's addition).
    pub sched: Option<SchedReport>,
}

/// How a rate-limited direction kept to its schedule.
#[derive(Clone, Debug, Default)]
pub struct SchedReport {
    /// Latency from each I/O's scheduled start to its completion (ns), with percentiles:
    /// free of coordinated omission.
    pub lat: LatSummary,
    /// How late each I/O was issued relative to its schedule (ns).
    pub lag: LatSummary,
    /// I/Os issued at least `late_threshold_ns` behind schedule.
    pub late_ios: u64,
    pub late_threshold_ns: u64,
}

/// fsync/fdatasync statistics.
#[derive(Clone, Debug, Default)]
pub struct SyncReport {
    pub total_ios: u64,
    /// The sync latencies, with their percentiles: fio's normal output always shows them.
    pub lat: LatSummary,
    /// JSON shows the percentiles only with clat or lat percentiles on (fio's rule there).
    pub json_percentiles: bool,
}

/// One reporting unit: a job, or a whole group with group_reporting.
#[derive(Clone, Debug)]
pub struct JobReport {
    pub name: String,
    pub groupid: u32,
    /// Number of jobs merged into this report.
    pub members: u32,
    pub pid: i32,
    pub description: Option<String>,
    /// errno of the first error (0 = none) and its text.
    pub error: i32,
    pub verror: String,
    pub echo: Vec<(String, String)>,
    pub params: ReportParams,
    /// read, write, trim.
    pub dirs: [DirReport; 3],
    /// Unified (mixed) statistics when unified_rw_reporting is mixed or both.
    pub mixed: Option<DirReport>,
    pub sync: SyncReport,
    /// Milliseconds from epoch to end, summed over members (JSON `job_runtime`).
    pub job_runtime_ms: u64,
    /// User / system CPU in percent of job_runtime.
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    /// Percent of I/Os by depth: 1, 2, 4, 8, 16, 32, >=64.
    pub iodepth_level: [f64; DEPTH_BUCKETS],
    /// Percent of submit calls by batch size: 0, 4, 8, 16, 32, 64, >=64.
    pub iodepth_submit: [f64; DEPTH_BUCKETS],
    pub iodepth_complete: [f64; DEPTH_BUCKETS],
    /// clat distribution in percent of issued I/Os: below 1 µs (ns buckets), below 1 ms
    /// (µs buckets), and ms buckets.
    pub latency_ns: [f64; 10],
    pub latency_us: [f64; 10],
    pub latency_ms: [f64; 12],
    /// Terse output's first µs bucket: everything below 2 µs including the sub-µs I/Os,
    /// computed from the counts (fio's stat_calc_lat_nu), in percent.
    pub latency_us_terse0: f64,
    /// Issued read, write, trim and sync I/Os.
    pub issued: [u64; 4],
    pub short: [u64; 3],
    pub dropped: [u64; 3],
    pub total_err: u64,
    pub first_error: i32,
    /// block_error_percentiles: the blocks' trim counts and states.
    pub block: Option<crate::blocks::BlockReport>,
    pub steadystate: Option<crate::steady::SteadyState>,
    /// When the job's epoch was set, ms of its `job_start_clock_id` clock (JSON `job_start`).
    pub job_start_ms: u64,
    /// The issued syncs by kind: fsync, fdatasync, sync_file_range.
    pub sync_kinds: [u64; 3],
    /// Zone resets: `Some` for `zonemode=zbd` jobs only (the newest fio prints them then).
    pub zone_resets: Option<u64>,
    /// How much of the job's time was flexio's own (None without I/O).
    pub tool: Option<ToolReport>,
    /// Engines with several kinds of operation (mdtree, cmdtime): each kind's figures.
    pub ops: Vec<crate::ops::OpReport>,
}

/// flexio measuring itself: CPU per I/O, and the share of the job's time spent neither in
/// the engine nor sleeping on purpose (rate limits, think time), i.e. in flexio's code.
#[derive(Clone, Debug, Default)]
pub struct ToolReport {
    pub cpu_ns_per_io: f64,
    pub engine_pct: f64,
    pub wait_pct: f64,
    pub tool_pct: f64,
    /// Share of the I/Os issued by the plain synchronous loop.
    pub plain_loop_pct: f64,
    /// Share of the I/Os issued by the general loop's lean copy.
    pub lean_loop_pct: f64,
}

/// The clock a run used and what it costs.
#[derive(Clone, Debug, Default)]
pub struct ClockInfo {
    pub source: String,
    pub read_ns: f64,
    pub resolution_ns: u64,
}

/// One data direction of a reporting group.
#[derive(Clone, Debug, Default)]
pub struct GroupDir {
    /// Aggregate bandwidth: io_bytes * 1000 / max_run (bytes/s).
    pub agg_bw: u64,
    /// Slowest and fastest member bandwidth (bytes/s).
    pub min_bw: u64,
    pub max_bw: u64,
    pub io_bytes: u64,
    pub min_run_ms: u64,
    pub max_run_ms: u64,
}

#[derive(Clone, Debug)]
pub struct GroupReport {
    pub id: u32,
    pub kb_base: u32,
    pub unit_base: u32,
    pub sig_figs: u32,
    pub unified: Unified,
    pub dirs: [GroupDir; 3],
    /// Unified aggregate (mixed/both).
    pub mixed: Option<GroupDir>,
}

/// Disk utilisation of one block device over the run.
#[derive(Clone, Debug, Default)]
pub struct DiskReport {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    /// 512-byte sectors read and written (the newest fio's `sectors=`).
    pub read_sectors: u64,
    pub write_sectors: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    /// Percent of the run the device was busy.
    pub util: f64,
    /// For a device with slaves (md RAID, device-mapper): fio's aggregate over them.
    pub aggr: Option<DiskAggr>,
}

/// fio's aggregate of a device's direct slaves: sums of their deltas, shown as per-slave
/// averages (integer division), and the busiest slave's utilisation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DiskAggr {
    /// How many slaves were summed (never 0 in a report).
    pub slaves: u32,
    /// [read, write] sums.
    pub ios: [u64; 2],
    pub sectors: [u64; 2],
    pub merges: [u64; 2],
    pub ticks: [u64; 2],
    pub in_queue: u64,
    /// Highest slave utilisation, percent, capped at 100.
    pub max_util: f64,
}

impl DiskAggr {
    /// A sum as fio prints it: divided by the slave count, rounded down.
    pub fn avg(&self, sum: u64) -> u64 {
        sum.checked_div(u64::from(self.slaves)).unwrap_or(0)
    }
}

/// A fact of a result's provenance (where it came from): a value, or an object or list of
/// facts. Only what was read is recorded; what could not be read is left out.
#[derive(Clone, Debug, PartialEq)]
pub enum Fact {
    Str(String),
    Int(i64),
    Bool(bool),
    Obj(Vec<(String, Fact)>),
    List(Vec<Fact>),
}

/// A whole run.
#[derive(Clone, Debug)]
pub struct RunReport {
    /// Version string printed in place of fio's.
    pub version: String,
    /// Report time, seconds and milliseconds since the epoch, and as ctime() text.
    pub timestamp: i64,
    pub timestamp_ms: i64,
    pub time: String,
    pub global_options: Vec<(String, String)>,
    pub jobs: Vec<JobReport>,
    pub groups: Vec<GroupReport>,
    pub disks: Vec<DiskReport>,
    /// Seconds since start (rounded up) and fio's eta (INT_MAX when shorter than 3 s).
    pub elapsed_s: u64,
    pub eta_s: i64,
    pub clock: ClockInfo,
    /// Where the result came from (the tool, the host, each target, the cgroup limits):
    /// the JSON's `flexio.provenance`; empty where it was not collected.
    pub provenance: Vec<(String, Fact)>,
    /// Whose layout the formatters follow ([`RunReport::set_layout`]).
    pub layout: Layout,
    /// fio's notes on the report (a group whose jobs differ in kb_base or unit_base),
    /// printed before it.
    pub notes: Vec<String>,
}

impl RunReport {
    /// Lay a freshly built report out as `layout` asks. Besides the formatters' choices,
    /// fio 3.33 counted each fdatasync in the read `short` counter and each
    /// sync_file_range in the write one (its counters ran past the sync slot), where the
    /// newest fio counts every sync in the fourth `issued rwts` total.
    pub fn set_layout(&mut self, layout: Layout) {
        if self.layout == Layout::Latest && layout == Layout::Fio333 {
            for j in &mut self.jobs {
                let [fsync, datasync, range] = j.sync_kinds;
                j.issued[3] = fsync;
                j.sync.total_ios = fsync;
                j.short[0] += datasync;
                j.short[1] += range;
                j.dirs[0].short_ios += datasync;
                j.dirs[1].short_ios += range;
                if let Some(m) = &mut j.mixed {
                    m.short_ios += datasync + range;
                }
            }
        }
        self.layout = layout;
    }
}

/// Percent of `total` per bucket, with fio's floor for a non-empty bucket that rounds below
/// it: 0.1 for the depth, submit and complete distributions (`stat_calc_dist`), 0.01 for
/// the latency ones (`stat_calc_lat`).
fn percent_with_floor<const N: usize>(src: &[u64; N], total: u64, floor: f64) -> [f64; N] {
    let mut out = [0.0; N];
    if total == 0 {
        return out;
    }
    for i in 0..N {
        out[i] = src[i] as f64 / total as f64 * 100.0;
        if out[i] < floor && src[i] > 0 {
            out[i] = floor;
        }
    }
    out
}

fn dist(map: &[u64; DEPTH_BUCKETS], total: u64) -> [f64; DEPTH_BUCKETS] {
    percent_with_floor(map, total, 0.1)
}

fn lat_dist<const N: usize>(src: &[u64; N], total: u64) -> [f64; N] {
    percent_with_floor(src, total, 0.01)
}

fn dir_report(d: &DirStats, p: &ReportParams, agg: u64) -> DirReport {
    let runtime = d.runtime_ms;
    let (bw_bytes, iops, iops_int) = if runtime > 0 {
        (
            (d.io_bytes as u128 * 1000 / runtime as u128) as u64,
            1000.0 * d.total_ios as f64 / runtime as f64,
            (1000u128 * d.total_ios as u128 / runtime as u128) as u64,
        )
    } else {
        (0, 0.0, 0)
    };
    let list = &p.percentile_list;
    let bw_samples = SampleSummary::from(&d.bw);
    let (bw_agg_pct, bw_agg_pct_terse) = if bw_samples.samples > 0 {
        let normal = if agg > 1024 {
            (bw_samples.mean.trunc() * 100.0 / (agg as f64 / 1024.0)).min(100.0)
        } else {
            100.0
        };
        let terse = if agg / 1024 > 0 {
            (bw_samples.mean * 100.0 / (agg / 1024) as f64).min(100.0)
        } else {
            100.0
        };
        (normal, terse)
    } else {
        (0.0, 0.0)
    };
    DirReport {
        io_bytes: d.io_bytes,
        runtime_ms: runtime,
        bw_bytes,
        iops,
        iops_int,
        total_ios: d.total_ios,
        short_ios: d.short_ios,
        drop_ios: d.drop_ios,
        slat: LatSummary::from(&d.slat, &d.slat_hist, p.slat_percentiles, list),
        clat: LatSummary::from(&d.clat, &d.clat_hist, p.clat_percentiles, list),
        lat: LatSummary::from(&d.lat, &d.lat_hist, p.lat_percentiles, list),
        bw_samples,
        bw_agg_pct,
        bw_agg_pct_terse,
        iops_samples: SampleSummary::from(&d.iops),
        prios: prio_reports(d, p),
        sched: (d.sched.samples > 0).then(|| SchedReport {
            lat: LatSummary::from(&d.sched, &d.sched_hist, true, list),
            lag: LatSummary::from(&d.lag, &Hist::disabled(), false, list),
            late_ios: d.late,
            late_threshold_ns: crate::thread::LATE_NS,
        }),
    }
}

fn prio_reports(d: &DirStats, p: &ReportParams) -> Vec<PrioReport> {
    let used: Vec<_> = d.prios.iter().filter(|x| x.stat.samples > 0).collect();
    if used.len() < 2 {
        return Vec::new();
    }
    let total: u64 = used.iter().map(|x| x.stat.samples).sum();
    let pct = p.clat_percentiles || p.lat_percentiles;
    used.iter()
        .map(|x| PrioReport {
            class: x.ioprio >> 13,
            level: x.ioprio & 7,
            hint: (x.ioprio >> 3) & 0x3ff,
            pct_of_ios: x.stat.samples as f64 * 100.0 / total as f64,
            lat: LatSummary::from(&x.stat, &x.hist, pct, &p.percentile_list),
        })
        .collect()
}

/// A group's direction from each member's (bytes, runtime ms) contributions: with
/// `unified_rw_reporting=both` each direction of a member is one (fio's MIXED line shows
/// the slowest and fastest of them).
fn group_dir_of<T>(members: &[T], f: impl Fn(&T) -> Vec<(u64, u64)>) -> GroupDir {
    let mut g = GroupDir {
        min_bw: u64::MAX,
        ..Default::default()
    };
    for (bytes, run) in members.iter().flat_map(f) {
        if run == 0 {
            continue;
        }
        if g.min_run_ms == 0 || run < g.min_run_ms {
            g.min_run_ms = run;
        }
        g.max_run_ms = g.max_run_ms.max(run);
        let bw = (bytes as u128 * 1000 / run as u128) as u64;
        g.min_bw = g.min_bw.min(bw);
        g.max_bw = g.max_bw.max(bw);
        g.io_bytes += bytes;
    }
    if g.min_bw == u64::MAX {
        g.min_bw = 0;
    }
    if g.max_run_ms > 0 {
        g.agg_bw = (g.io_bytes as u128 * 1000 / g.max_run_ms as u128) as u64;
    }
    g
}

fn tool_report(ts: &ThreadStats) -> Option<ToolReport> {
    let ios = ts.issued_rwt();
    let wall = ts.run_time_ns() as f64;
    if ios == 0 || wall <= 0.0 {
        return None;
    }
    let pct = |x: u64| (x as f64 * 100.0 / wall).min(100.0);
    let (engine_pct, wait_pct) = (pct(ts.engine_ns), pct(ts.wait_ns));
    Some(ToolReport {
        cpu_ns_per_io: (ts.usr_time_us + ts.sys_time_us) as f64 * 1000.0 / ios as f64,
        engine_pct,
        wait_pct,
        tool_pct: (100.0 - engine_pct - wait_pct).max(0.0),
        plain_loop_pct: (ts.plain_ios as f64 * 100.0 / ios as f64).min(100.0),
        lean_loop_pct: (ts.lean_ios as f64 * 100.0 / ios as f64).min(100.0),
    })
}

/// Whether job `r` joins the reporting unit of the (stats-enabled) job before it, of group
/// `prev_group`: fio's __show_run_stats starts a new unit for a job without
/// group_reporting or of another group, so a group_reporting job joins the job before it
/// even when that one does not ask for group reporting.
pub fn joins_unit(prev_group: Option<u32>, r: &JobResult) -> bool {
    r.group_reporting && prev_group == Some(r.groupid)
}

/// Merge job results into reporting units (group_reporting) in fio's order
/// ([`joins_unit`]).
pub fn merge_units(results: &[JobResult]) -> Vec<(JobResult, u32)> {
    merge_units_noting(results).0
}

/// fio's code for a unit_base (its num2str unit: bytes per second 4 for 0 and 8, bits per
/// second 5 for 1): what its note prints and its client/server protocol carries.
pub fn fio_unit(unit_base: u32) -> u32 {
    if unit_base == 1 {
        5
    } else {
        4
    }
}

/// [`merge_units`], and fio's notes on the merge: a joining job whose kb_base (else
/// unit_base) differs from its unit's first job's, once per run each.
fn merge_units_noting(results: &[JobResult]) -> (Vec<(JobResult, u32)>, Vec<String>) {
    let mut units: Vec<(JobResult, u32)> = Vec::new();
    let mut notes = Vec::new();
    let (mut kb_warned, mut unit_warned) = (false, false);
    let mut last: Option<u32> = None;
    for r in results.iter().filter(|r| r.stats_enabled) {
        if joins_unit(last, r) {
            let (u, n) = units.last_mut().expect("a unit exists when joining");
            u.stats.merge(&r.stats, false);
            u.echo = r.echo.clone();
            if r.steadystate.is_some() {
                u.steadystate = r.steadystate.clone();
            }
            // The unit keeps its first job's name, units and unified reporting; these
            // come from each joining job in turn, as in fio.
            let (p, q) = (&mut u.params, &r.params);
            p.clat_percentiles = q.clat_percentiles;
            p.lat_percentiles = q.lat_percentiles;
            p.slat_percentiles = q.slat_percentiles;
            p.percentile_list = q.percentile_list.clone();
            p.percentile_precision = q.percentile_precision;
            p.continue_on_error = q.continue_on_error;
            p.latency_depth = q.latency_depth;
            p.latency_target_ns = q.latency_target_ns;
            p.latency_window_us = q.latency_window_us;
            p.latency_percentile = q.latency_percentile;
            if p.kb_base != q.kb_base && !kb_warned {
                notes.push(format!(
                    "fio: kb_base differs for jobs in group, using {} as the base",
                    p.kb_base
                ));
                kb_warned = true;
            } else if fio_unit(p.unit_base) != fio_unit(q.unit_base) && !unit_warned {
                notes.push(format!(
                    "fio: unit_base differs for jobs in group, using {} as the base",
                    fio_unit(p.unit_base)
                ));
                unit_warned = true;
            }
            *n += 1;
        } else {
            let mut first = r.clone();
            let mut merged = ThreadStats::default();
            merged.merge(&r.stats, true);
            first.stats = merged;
            units.push((first, 1));
        }
        last = Some(r.groupid);
    }
    (units, notes)
}

/// Build the report of a run.
pub fn build(
    results: &[JobResult],
    disks: Vec<DiskReport>,
    global_options: Vec<(String, String)>,
    version: &str,
    now: (i64, i64, String),
    elapsed_s: u64,
) -> RunReport {
    let (units, notes) = merge_units_noting(results);
    // Groups.
    let mut gids: Vec<u32> = units.iter().map(|(u, _)| u.groupid).collect();
    gids.dedup();
    gids.sort_unstable();
    gids.dedup();
    let mut groups = Vec::new();
    for gid in gids {
        let members: Vec<&JobResult> = units
            .iter()
            .map(|(u, _)| u)
            .filter(|u| u.groupid == gid)
            .collect();
        let stats: Vec<&ThreadStats> = members.iter().map(|m| &m.stats).collect();
        // fio ORs its units' unified_rw_reporting (none 0, mixed 1, both 2): mixed and
        // both together print plain direction lines and no MIXED line.
        let code = members.iter().fold(0u8, |acc, m| {
            acc | match m.params.unified {
                Unified::None => 0,
                Unified::Mixed => 1,
                Unified::Both => 2,
            }
        });
        let unified = match code {
            1 => Unified::Mixed,
            2 => Unified::Both,
            _ => Unified::None,
        };
        // A mixed unit's figures sit in the read slot (fio folds them there), the others'
        // in their own directions.
        let dirs = [0, 1, 2].map(|d| {
            group_dir_of(&members, |u| {
                if u.params.unified != Unified::Mixed {
                    vec![(u.stats.dirs[d].io_bytes, u.stats.dirs[d].runtime_ms)]
                } else if d == 0 {
                    let m = u.stats.fold_mixed();
                    vec![(m.io_bytes, m.runtime_ms)]
                } else {
                    Vec::new()
                }
            })
        });
        let mixed = match unified {
            Unified::None => None,
            Unified::Mixed => Some(dirs[0].clone()),
            Unified::Both => Some(group_dir_of(&stats, |ts| {
                ts.dirs.iter().map(|d| (d.io_bytes, d.runtime_ms)).collect()
            })),
        };
        // fio's group figures take each unit's units in turn: the last unit's stay (and
        // its units' direction lines use them too).
        let last = members[members.len() - 1];
        groups.push(GroupReport {
            id: gid,
            kb_base: last.params.kb_base,
            unit_base: last.params.unit_base,
            sig_figs: last.params.sig_figs,
            unified,
            dirs,
            mixed,
        });
    }
    let mut jobs = Vec::new();
    for (u, members) in &units {
        let g = groups
            .iter()
            .find(|g| g.id == u.groupid)
            .expect("group of a unit exists");
        let ts = &u.stats;
        let p = &u.params;
        let dirs = [0, 1, 2].map(|d| dir_report(&ts.dirs[d], p, g.dirs[d].agg_bw));
        let mixed = (p.unified != Unified::None).then(|| {
            // A mixed unit's share is of the group's read slot, where its figures sit.
            let agg = if p.unified == Unified::Mixed {
                g.dirs[0].agg_bw
            } else {
                g.mixed.as_ref().map_or(0, |m| m.agg_bw)
            };
            dir_report(&ts.fold_mixed(), p, agg)
        });
        let issued_rwt = ts.issued_rwt();
        let runt = ts.total_run_time_ms;
        let (usr_cpu, sys_cpu) = if runt > 0 {
            (
                (ts.usr_time_us / 1000) as f64 * 100.0 / runt as f64,
                (ts.sys_time_us / 1000) as f64 * 100.0 / runt as f64,
            )
        } else {
            (0.0, 0.0)
        };
        jobs.push(JobReport {
            name: u.name.clone(),
            groupid: u.groupid,
            members: *members,
            pid: u.pid,
            description: u.description.clone(),
            error: ts.error,
            verror: ts.verror.clone(),
            echo: u.echo.clone(),
            params: p.clone(),
            dirs,
            mixed,
            sync: SyncReport {
                total_ios: ts.sync_total,
                lat: LatSummary::from(&ts.sync, &ts.sync_hist, true, &p.percentile_list),
                json_percentiles: p.clat_percentiles || p.lat_percentiles,
            },
            job_runtime_ms: runt,
            usr_cpu,
            sys_cpu,
            ctx: ts.ctx,
            majf: ts.majf,
            minf: ts.minf,
            iodepth_level: dist(&ts.depth_map, issued_rwt),
            iodepth_submit: dist(&ts.submit_map, ts.total_submit),
            iodepth_complete: dist(&ts.complete_map, ts.total_complete),
            latency_ns: lat_dist(&ts.lat_n, issued_rwt),
            latency_us: lat_dist(&ts.lat_u, issued_rwt),
            latency_ms: lat_dist(&ts.lat_m, issued_rwt),
            latency_us_terse0: {
                let mut u = ts.lat_u;
                u[0] += ts.lat_n.iter().sum::<u64>();
                lat_dist(&u, issued_rwt)[0]
            },
            issued: [
                ts.dirs[0].total_ios,
                ts.dirs[1].total_ios,
                ts.dirs[2].total_ios,
                ts.sync_total,
            ],
            job_start_ms: ts.job_start_ms,
            // Results without the split (a fio server's) count every sync as an fsync.
            sync_kinds: if ts.sync_kinds.iter().sum::<u64>() == ts.sync_total {
                ts.sync_kinds
            } else {
                [ts.sync_total, 0, 0]
            },
            zone_resets: ts.zone_resets,
            short: [
                ts.dirs[0].short_ios,
                ts.dirs[1].short_ios,
                ts.dirs[2].short_ios,
            ],
            dropped: [
                ts.dirs[0].drop_ios,
                ts.dirs[1].drop_ios,
                ts.dirs[2].drop_ios,
            ],
            total_err: ts.total_err,
            first_error: ts.first_error,
            block: ts
                .block_infos
                .as_ref()
                .map(|b| b.report(&p.percentile_list)),
            steadystate: u.steadystate.clone(),
            tool: tool_report(ts),
            ops: crate::ops::reports(&ts.ops, p),
        });
    }
    let eta_s = if elapsed_s < 3 { i32::MAX as i64 } else { 0 };
    RunReport {
        version: version.to_string(),
        timestamp: now.0,
        timestamp_ms: now.1,
        time: now.2,
        global_options,
        jobs,
        groups,
        disks,
        elapsed_s,
        eta_s,
        clock: ClockInfo::default(),
        provenance: Vec::new(),
        layout: Layout::Latest,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::thread::StatsConfig;

    fn params() -> ReportParams {
        ReportParams {
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
            unified: Unified::None,
            nostats_engine: false,
            latency_target_ns: 0,
            latency_window_us: 0,
            latency_percentile: 100.0,
        }
    }

    fn job(name: &str, gid: u32, gr: bool, bytes: u64, run: u64, bw_means: &[u64]) -> JobResult {
        let mut s = ThreadStats::new(StatsConfig {
            clat_hist: true,
            ..Default::default()
        });
        s.dirs[0].io_bytes = bytes;
        s.dirs[0].total_ios = bytes / 4096;
        s.dirs[0].runtime_ms = run;
        for b in bw_means {
            s.dirs[0].bw.add(*b);
        }
        s.add_clat(0, 1000);
        JobResult {
            name: name.into(),
            groupid: gid,
            pid: 1,
            description: None,
            echo: vec![],
            group_reporting: gr,
            stats_enabled: true,
            params: params(),
            stats: s,
            steadystate: None,
        }
    }

    #[test]
    fn bw_agg_uses_fio_truncation() {
        // Two jobs: agg = (40955904*2)*1000/3001 bytes/s; fio printed bw_agg 50.054184 for
        // a job whose bw_mean was 13342.4 KiB/s.
        let mut a = job("a", 0, false, 40955904, 3001, &[13342]);
        a.stats.dirs[0].bw = Stat::default();
        for v in [13344u64, 13344, 13336, 13344, 13344] {
            a.stats.dirs[0].bw.add(v);
        }
        let b = job("b", 0, false, 40955904, 3001, &[13340]);
        let r = build(&[a, b], vec![], vec![], "v", (0, 0, String::new()), 3);
        assert!(
            (r.jobs[0].dirs[0].bw_agg_pct - 50.054184).abs() < 1e-6,
            "{}",
            r.jobs[0].dirs[0].bw_agg_pct
        );
        assert_eq!(r.groups[0].dirs[0].io_bytes, 81911808);
        assert_eq!(r.groups[0].dirs[0].agg_bw, 27294837);
    }

    #[test]
    fn group_reporting_merges_consecutive_members() {
        let jobs = vec![
            job("a", 0, true, 4096, 10, &[]),
            job("a", 0, true, 8192, 20, &[]),
            job("c", 1, true, 4096, 5, &[]),
        ];
        let r = build(&jobs, vec![], vec![], "v", (0, 0, String::new()), 1);
        assert_eq!(r.jobs.len(), 2);
        assert_eq!(r.jobs[0].members, 2);
        assert_eq!(r.jobs[0].dirs[0].io_bytes, 12288);
        assert_eq!(r.jobs[0].dirs[0].runtime_ms, 20);
        assert_eq!(r.groups.len(), 2);
        assert_eq!(r.eta_s, i32::MAX as i64);
    }

    #[test]
    fn terse_first_us_bucket_is_computed_from_counts() {
        // 3 I/Os under 1 us in three ns buckets, 9997 in [1, 2) us: each ns bucket alone
        // floors to 0.01 %, but the folded bucket is 100 % of 10000, not 99.97 + 0.03.
        let mut j = job("a", 0, false, 4096 * 10000, 10, &[]);
        j.stats.lat_n = [1, 0, 1, 0, 1, 0, 0, 0, 0, 0];
        j.stats.lat_u = [9997, 0, 0, 0, 0, 0, 0, 0, 0, 0];
        let r = build(&[j], vec![], vec![], "v", (0, 0, String::new()), 1);
        assert!((r.jobs[0].latency_us_terse0 - 100.0).abs() < 1e-9);
        assert!((r.jobs[0].latency_us[0] - 99.97).abs() < 1e-9);
    }

    #[test]
    fn rms_and_few_samples() {
        let mut st = crate::stat::LatStat::default();
        let mut h = Hist::enabled();
        for v in [3u64, 4] {
            st.add(v);
            h.add(v);
        }
        let l = LatSummary::from(&st, &h, true, &[50.0, 99.0, 99.9, 100.0]);
        let x = l.extra.unwrap();
        // sqrt((9 + 16) / 2), equal to sqrt(mean^2 + var (n-1)/n).
        assert!((x.rms_ns - 12.5f64.sqrt()).abs() < 1e-12);
        let alt = (l.mean_ns.powi(2) + l.stddev_ns.powi(2) * 0.5).sqrt();
        assert!((x.rms_ns - alt).abs() < 1e-12);
        assert_eq!(x.few_samples, vec![99.0, 99.9]);
        assert_eq!(min_samples_for(99.9), 1000);
        assert_eq!(min_samples_for(50.0), 2);
        let none = LatSummary::from(&crate::stat::LatStat::default(), &h, true, &[50.0]);
        assert!(none.extra.is_none());
    }

    #[test]
    fn layouts_file_the_sync_counts_and_groups_keep_the_first_start() {
        let mut a = job("a", 0, true, 4096, 10, &[]);
        a.stats.sync_total = 7;
        a.stats.sync_kinds = [2, 4, 1];
        a.stats.job_start_ms = 111;
        a.stats.zone_resets = Some(2);
        let mut b = job("a", 0, true, 4096, 10, &[]);
        b.stats.job_start_ms = 222;
        b.stats.zone_resets = Some(3);
        let r = build(&[a, b], vec![], vec![], "v", (0, 0, String::new()), 1);
        let j = &r.jobs[0];
        assert_eq!((j.job_start_ms, j.zone_resets), (111, Some(5)));
        assert_eq!((j.issued[3], j.short, j.sync.total_ios), (7, [0, 0, 0], 7));
        let mut old = r.clone();
        old.set_layout(Layout::Fio333);
        let j = &old.jobs[0];
        // fio 3.33: fdatasyncs counted as short reads, sync_file_ranges as short writes.
        assert_eq!((j.issued[3], j.short, j.sync.total_ios), (2, [4, 1, 0], 2));
        assert_eq!((j.dirs[0].short_ios, j.dirs[1].short_ios), (4, 1));
        // A second call does not count them twice.
        old.set_layout(Layout::Fio333);
        assert_eq!(old.jobs[0].short, [4, 1, 0]);
        // Results without the split (a fio server's) count every sync as an fsync.
        let mut c = job("c", 0, false, 4096, 10, &[]);
        c.stats.sync_total = 5;
        let r = build(&[c], vec![], vec![], "v", (0, 0, String::new()), 1);
        assert_eq!(r.jobs[0].sync_kinds, [5, 0, 0]);
    }

    #[test]
    fn unified_both_group_line_spans_the_directions() {
        let mut j = job("a", 0, false, 540_672, 1, &[]);
        j.stats.dirs[1].io_bytes = 507_904;
        j.stats.dirs[1].total_ios = 124;
        j.stats.dirs[1].runtime_ms = 1;
        j.params.unified = Unified::Both;
        let r = build(&[j], vec![], vec![], "v", (0, 0, String::new()), 1);
        let m = r.groups[0].mixed.as_ref().unwrap();
        // fio 3.33 (captured): `484MiB/s-516MiB/s`, io 1024KiB over 1 ms.
        assert_eq!((m.min_bw, m.max_bw), (507_904_000, 540_672_000));
        assert_eq!((m.io_bytes, m.agg_bw), (1 << 20, 1_048_576_000));
    }

    #[test]
    fn priority_hint_is_its_own_field() {
        let mut j = job("a", 0, false, 4096, 10, &[]);
        j.stats.dirs[0].add_prio((1 << 13) | 3, 100, false);
        j.stats.dirs[0].add_prio((2 << 13) | (1023 << 3) | 7, 100, false);
        let r = build(&[j], vec![], vec![], "v", (0, 0, String::new()), 1);
        let p: Vec<(u16, u16, u16)> = r.jobs[0].dirs[0]
            .prios
            .iter()
            .map(|p| (p.class, p.level, p.hint))
            .collect();
        assert_eq!(p, [(1, 3, 0), (2, 7, 1023)]);
    }

    #[test]
    fn distributions_have_fio_floors() {
        let mut m = [0u64; 7];
        m[0] = 1;
        m[2] = 9999;
        let d = dist(&m, 10000);
        assert_eq!(d[0], 0.1);
        assert!((d[2] - 99.99).abs() < 1e-9);
        let l = lat_dist(&[1u64, 0, 0, 0, 0, 0, 0, 0, 0, 0], 100_000);
        assert_eq!(l[0], 0.01);
    }
}
