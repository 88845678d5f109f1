//! The job thread: opens files, drives the engine through fio's `do_io` loop and records
//! statistics.
//!
//! Hot-path invariants (per I/O): no allocation (request slots, buffers and the completion
//! vector are sized once), no locking (statistics are thread-local; progress for the status
//! line is published with relaxed atomic stores at most every 100 ms), no formatting.
//! The loop is generic over the engine, so each engine gets its own compiled loop.

use crate::clock::Clock;
use crate::files;
use crate::plan::ThreadPlan;
use crate::progress::{Progress, RunState};
use flexio_engine::buffer::IoBuffers;
use flexio_engine::{
    Caps, Completion, Engine, EngineConfig, EngineVisitor, FileInfo, IoReq, Op, Queued, StatKind,
};
use flexio_job::options::{err_class, FadviseHint, StatType, Unified};
use flexio_stats::report::{self, ReportParams};
use flexio_stats::{JobResult, StatsConfig, ThreadStats};
use flexio_workload::fill::{fill, scramble, Fill};
use flexio_workload::{Generator, Taus88};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// What every job thread shares with the main thread.
pub struct RunCtx {
    /// Set on SIGINT/SIGTERM or exitall: stop as soon as possible.
    pub terminate: Arc<AtomicBool>,
    pub clock: Clock,
    /// Where notes ("fio: io_u error ...") go.
    pub notes: crate::out::Notes,
    /// --readonly: no layout writes either.
    pub readonly: bool,
    /// Raised by the main thread to ask every job for a copy of its statistics so far
    /// (--status-interval); answered at the next periodic check.
    pub snapshot_req: Arc<std::sync::atomic::AtomicU64>,
}

/// Per-request state.
#[derive(Clone, Copy, Default)]
struct Slot {
    op: u8,
    ddir: u8,
    file: u32,
    offset: u64,
    len: u64,
    done: u64,
    start_ns: u64,
    issue_ns: u64,
    /// I/O priority of the request (0 = the thread's).
    prio: u16,
    /// Rate-limited I/O: when it was due (0 = not rate limited).
    sched_ns: u64,
    /// Verification: VF_* flags, and the block's write number and seed.
    vflags: u8,
    vnum: u64,
    vseed: u64,
}

/// fio's error description `file:<source>:<line>, func=..., error=...`, with flexio's own
/// source location of the caller.
#[track_caller]
fn verror(errno: i32, func: &str) -> String {
    let at = std::panic::Location::caller();
    let file = at.file().rsplit('/').next().unwrap_or("worker.rs");
    let text = crate::out::strerror(errno);
    format!("file:{file}:{}, func={func}, error={text}", at.line())
}

/// Whether `errno` is in an ignore_error list (default: EIO and EILSEQ).
fn ignorable(list: &Option<Vec<i32>>, errno: i32) -> bool {
    match list {
        Some(l) => l.contains(&errno),
        None => errno == libc::EIO || errno == libc::EILSEQ,
    }
}

/// The read re-reads a logged block (verify phase or backlog).
const VF_PHASE: u8 = 1;
/// A verified write (log the block on completion).
const VF_WRITE: u8 = 2;

/// A job's verification state (verify= set).
struct VerState {
    v: crate::verify::Verifier,
    log: crate::verify::Log,
    seed_base: u64,
    /// Writes prepared so far (the next write's number).
    writes: u64,
    /// Writes in flight (their numbers), to know how many completed in order.
    inflight: Vec<u64>,
    /// A read-only job: every read is checked (header and checksum only).
    check_reads: bool,
    check_numberio: bool,
    random: bool,
    backlog: u64,
    batch: u64,
    since_backlog: u64,
    backlog_due: bool,
    /// verify_state_load: only writes below this number are checked.
    limit: Option<u64>,
    /// In the write phase (for verify_state_save).
    writing: bool,
}

impl VerState {
    fn new(p: &ThreadPlan) -> Option<Result<Box<VerState>, String>> {
        let o = &p.opts;
        if o.verify == flexio_job::options::verify_code::NONE {
            return None;
        }
        let writes = o.rw.writes();
        let fixed_bs = o.min_bs_dir(1) == o.max_bs_dir(1);
        let limit = if o.verify_state_load && o.verify_only {
            let path = std::path::PathBuf::from(crate::verify::state_file_name(
                &p.name,
                p.thread_number.saturating_sub(1),
            ));
            match crate::verify::load_state(&path) {
                Ok(n) => Some(n),
                Err(e) => return Some(Err(e)),
            }
        } else {
            None
        };
        Some(Ok(Box::new(VerState {
            v: crate::verify::Verifier {
                kind: o.verify,
                interval: o.verify_interval,
                hdr_offset: o.verify_offset,
                pattern: o.verify_pattern.clone(),
                thread: p.thread_number as u16,
            },
            log: Default::default(),
            seed_base: p.spec.seeds[3],
            writes: 0,
            inflight: Vec::new(),
            check_reads: !writes && o.rw.reads(),
            check_numberio: fixed_bs && !o.time_based && !o.verify_only,
            // fio: random writes without a random map may hit a block twice; they are
            // checked sorted, last write winning. Otherwise in write order.
            random: o.rw.is_random() && o.norandommap,
            backlog: o.verify_backlog,
            batch: if o.verify_backlog_batch > 0 {
                o.verify_backlog_batch
            } else {
                o.verify_backlog
            },
            since_backlog: 0,
            backlog_due: false,
            limit,
            writing: writes && !o.verify_only,
        })))
    }

    /// Writes completed in order (all writes below this number are done).
    fn completed_in_order(&self) -> u64 {
        self.inflight.iter().copied().min().unwrap_or(self.writes)
    }
}

const OP_SYNC: u8 = 3;
const OP_DSYNC: u8 = 4;

fn op_of(code: u8) -> Op {
    match code {
        0 => Op::Read,
        1 => Op::Write,
        2 => Op::Trim,
        OP_SYNC => Op::Sync,
        _ => Op::Datasync,
    }
}

/// Why do_io stopped.
#[derive(PartialEq, Eq, Clone, Copy)]
enum End {
    /// The loop's work is done.
    Done,
    /// Runtime over, terminated, number_ios reached, or error: no further loops.
    Stop,
}

/// Runs one thread plan with a concrete engine.
pub struct Runner<'a> {
    pub plan: &'a ThreadPlan,
    pub ctx: &'a RunCtx,
    pub progress: &'a Progress,
}

impl EngineVisitor for Runner<'_> {
    type Out = ThreadStats;
    fn visit<E: Engine>(self, engine: E) -> ThreadStats {
        let mut w = Worker::new(engine, self.plan, self.ctx, self.progress);
        w.run();
        w.stats
    }
}

/// Build the engine configuration of a plan.
pub fn engine_config(p: &ThreadPlan) -> EngineConfig {
    let o = &p.opts;
    EngineConfig {
        iodepth: p.depth,
        nfiles: p.files.len() as u32,
        fixedbufs: o.fixedbufs,
        registerfiles: o.registerfiles,
        sqthread_poll: o.sqthread_poll,
        sqthread_poll_cpu: o.sqthread_poll_cpu,
        nonvectored: o.nonvectored,
        force_async: o.force_async,
        userspace_reap: o.userspace_reap,
        null_stall: o.null_stall,
        hipri: o.hipri,
        hipri_percentage: o.hipri_percentage,
        nowait: o.nowait,
        uncached: o.uncached != 0,
        stat_type: match o.stat_type {
            StatType::Stat => StatKind::Stat,
            StatType::Lstat => StatKind::Lstat,
            StatType::Statx => StatKind::Statx,
        },
        advise: o.fadvise_hint != FadviseHint::Off,
        seed: p.spec.seeds[flexio_workload::rng::slot::PRIO] as u32,
    }
}

/// Report parameters of a plan.
pub fn report_params(p: &ThreadPlan) -> ReportParams {
    let o = &p.opts;
    // fio ends the percentile list at its first 0.
    let mut list: Vec<f64> = o
        .percentile_list
        .iter()
        .copied()
        .take_while(|v| *v != 0.0)
        .collect();
    list.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    ReportParams {
        kb_base: o.kb_base.value() as u32,
        unit_base: o.unit_base,
        sig_figs: o.significant_figures,
        percentile_list: list,
        percentile_precision: o.percentile_precision,
        clat_percentiles: o.clat_percentiles && !o.disable_clat,
        lat_percentiles: o.lat_percentiles && !o.disable_lat,
        slat_percentiles: o.slat_percentiles && !o.disable_slat,
        iodepth: o.iodepth,
        continue_on_error: o.continue_on_error != 0,
        unified: match o.unified_rw_reporting {
            Unified::None => report::Unified::None,
            Unified::Mixed => report::Unified::Mixed,
            Unified::Both => report::Unified::Both,
        },
        nostats_engine: p.caps.file_op,
        latency_target_ns: o.latency_target_ns,
        latency_window_us: o.latency_window_us,
        latency_percentile: o.latency_percentile,
    }
}

/// Package a thread's statistics as a job result.
pub fn result_of(plan: &ThreadPlan, pid: i32, stats: ThreadStats) -> JobResult {
    JobResult {
        name: plan.name.clone(),
        groupid: plan.groupid,
        pid,
        description: plan.opts.description.clone(),
        echo: plan.echo.clone(),
        group_reporting: plan.opts.group_reporting,
        stats_enabled: plan.opts.stats,
        params: report_params(plan),
        stats,
        steadystate: None,
    }
}

/// Apply CPU placement, nice value and I/O priority to the calling (job) thread.
fn place_thread(plan: &ThreadPlan) -> Result<(), (i32, String)> {
    let o = &plan.opts;
    if let Some(cpus) = &o.cpus_allowed {
        let mut set = rustix::thread::CpuSet::new();
        if o.cpus_split {
            // One CPU per thread, round robin over the set.
            set.set(cpus[(plan.thread_number as usize - 1) % cpus.len()]);
        } else {
            for c in cpus {
                set.set(*c);
            }
        }
        rustix::thread::sched_setaffinity(None, &set).map_err(|e| {
            (
                e.raw_os_error(),
                format!("cannot set CPU affinity to {cpus:?}: {e}"),
            )
        })?;
    }
    if o.nice != 0 {
        rustix::process::setpriority_process(None, o.nice)
            .map_err(|e| (e.raw_os_error(), format!("cannot set nice {}: {e}", o.nice)))?;
    }
    if o.prio.is_some() || o.prioclass.is_some() {
        let (class, level) = (o.prioclass.unwrap_or(2), o.prio.unwrap_or(4));
        flexio_engine::sys::ioprio_set_self(class, level).map_err(|e| {
            let hint = if e.raw_os_error() == Some(libc::EPERM) {
                " (the real-time class needs CAP_SYS_ADMIN)"
            } else {
                ""
            };
            (
                e.raw_os_error().unwrap_or(libc::EINVAL),
                format!("cannot set I/O priority class {class} level {level}: {e}{hint}"),
            )
        })?;
    }
    Ok(())
}

/// The I/O priority value requests carry by default (the thread's; 0 when not set).
pub fn default_ioprio(o: &flexio_job::JobOptions) -> u16 {
    match (o.prioclass, o.prio) {
        (None, None) => 0,
        (c, l) => ((c.unwrap_or(2) << 13) | l.unwrap_or(4)) as u16,
    }
}

/// Run a whole thread plan and package its result.
pub fn run_thread(plan: &ThreadPlan, ctx: &RunCtx, progress: &Progress) -> JobResult {
    let tid = rustix::thread::gettid().as_raw_nonzero().get();
    // A private descriptor table makes every system call on the job's files cheaper; a
    // kernel that refuses only costs that speed.
    let _ = flexio_engine::sys::private_fd_table();
    progress.tid.store(tid, Ordering::Relaxed);
    if let Err((errno, what)) = place_thread(plan) {
        ctx.notes.err(&format!("fio: {}: {what}", plan.name));
        let mut s = ThreadStats::default();
        s.set_error(
            errno,
            format!(
                "file:worker.rs, func=thread placement, error={}",
                crate::out::strerror(errno)
            ),
        );
        progress.set_state(RunState::Exited);
        return result_of(plan, tid, s);
    }
    let cfg = engine_config(plan);
    let stats = match flexio_engine::with_engine(
        &plan.opts.ioengine,
        &cfg,
        Runner {
            plan,
            ctx,
            progress,
        },
    ) {
        Ok(s) => s,
        Err(m) => {
            let mut s = ThreadStats::default();
            s.set_error(libc::EINVAL, m);
            s
        }
    };
    progress.set_state(RunState::Exited);
    result_of(plan, tid, stats)
}

/// If a sampling interval has passed (with fio's 1 ms slack), call `add(dir, delta, spent_ms)`
/// for every direction whose counter moved, and start the next interval.
#[inline]
fn sample_due(
    now: u64,
    interval_ms: u64,
    last_ns: &mut u64,
    last: &mut [u64; 3],
    cur: &[u64; 3],
    mut add: impl FnMut(usize, u64, u64),
) {
    if now + 1_000_000 < *last_ns + interval_ms * 1_000_000 {
        return;
    }
    let spent = (now - *last_ns) / 1_000_000;
    if spent == 0 {
        return;
    }
    for d in 0..3 {
        let delta = cur[d] - last[d];
        if delta > 0 {
            add(d, delta, spent);
        }
        last[d] = cur[d];
    }
    *last_ns = now;
}

/// latency_target: the search for the highest queue depth whose latency meets the target
/// (fio's semantics: start at depth 1, double while windows succeed, bisect after a failure,
/// and once the depth no longer changes run one clean window at it and stop, unless
/// latency_run keeps adjusting).
struct LatTarget {
    qd: u32,
    low: u32,
    high: u32,
    max: u32,
    window_start_ns: u64,
    window_ios: u64,
    fails: u64,
    /// The depth has converged; statistics were reset for a final window at it.
    end_run: bool,
    target_ns: u64,
    percentile: f64,
    window_ns: u64,
    /// latency_run: keep adjusting instead of stopping.
    keep_running: bool,
}

/// What a latency-target check decided.
#[derive(PartialEq, Eq, Debug)]
enum LatStep {
    Continue,
    /// The depth converged: reset statistics and run one more window.
    Quiesce,
    /// The final window succeeded: the job is done.
    Done,
    /// Failed at depth 1: the target cannot be met.
    Fatal,
}

impl LatTarget {
    fn new(max: u32, o: &flexio_job::JobOptions) -> Self {
        LatTarget {
            target_ns: o.latency_target_ns,
            percentile: o.latency_percentile,
            window_ns: o.latency_window_us * 1000,
            keep_running: o.latency_run,
            qd: 1,
            low: 1,
            high: max.max(1),
            max: max.max(1),
            window_start_ns: 0,
            window_ios: 0,
            fails: 0,
            end_run: false,
        }
    }

    fn new_window(&mut self, now: u64, completed: u64) {
        self.window_start_ns = now;
        self.window_ios = completed;
        self.fails = 0;
    }

    fn failed(&mut self, now: u64, completed: u64) -> LatStep {
        if self.qd == 1 {
            return LatStep::Fatal;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low = self.low.saturating_sub(1).max(1);
        }
        self.qd = ((self.qd + self.low) / 2).max(1);
        self.new_window(now, completed);
        LatStep::Continue
    }

    fn succeeded(&mut self, now: u64, completed: u64, keep_running: bool) -> LatStep {
        let before = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.qd = self.low;
            self.high = self.low;
        } else if self.high != self.max {
            self.qd = (self.qd + self.high) / 2;
        } else {
            self.qd *= 2;
        }
        self.qd = self.qd.clamp(1, self.max);
        self.new_window(now, completed);
        if !keep_running && self.qd == before {
            if self.end_run {
                return LatStep::Done;
            }
            self.end_run = true;
            return LatStep::Quiesce;
        }
        LatStep::Continue
    }

    /// One completion with total latency `lat_ns`; `completed` counts completions so far.
    fn on_complete(&mut self, lat_ns: u64, now: u64, completed: u64) -> LatStep {
        let (target_ns, percentile, window_ns) = (self.target_ns, self.percentile, self.window_ns);
        if lat_ns > target_ns {
            if percentile >= 100.0 {
                return self.failed(now, completed);
            }
            self.fails += 1;
        }
        if now.saturating_sub(self.window_start_ns) < window_ns {
            return LatStep::Continue;
        }
        let ios = completed - self.window_ios;
        if ios == 0 {
            return LatStep::Continue;
        }
        let ok = (ios - self.fails.min(ios)) as f64 * 100.0 / ios as f64;
        if ok >= percentile {
            self.succeeded(now, completed, self.keep_running)
        } else {
            self.failed(now, completed)
        }
    }
}

struct Worker<'a, E: Engine> {
    e: E,
    caps: Caps,
    p: &'a ThreadPlan,
    ctx: &'a RunCtx,
    progress: &'a Progress,
    clock: Clock,
    stats: ThreadStats,
    cfg: StatsConfig,
    gen: Generator,
    bufs: IoBuffers,
    slots: Vec<Slot>,
    free: Vec<u32>,
    /// Slots queued since the last commit.
    uncommitted: Vec<u32>,
    comps: Vec<Completion>,
    inflight: u32,
    fds: Vec<Option<OwnedFd>>,
    raw_fds: Vec<i32>,
    open_count: u32,
    /// Requests in flight per file (a file with I/O in flight is never closed).
    file_inflight: Vec<u32>,
    close_cursor: usize,
    /// File-op engines: which files had their operation in this loop.
    op_done: Vec<bool>,
    fill: Fill,
    fill_rng: Taus88,
    refill: bool,
    scramble: bool,
    need_lat: bool,
    need_clat: bool,
    need_slat: bool,
    accounting: bool,
    epoch_ns: u64,
    ramp_end_ns: u64,
    runtime_end_ns: u64,
    /// Per-direction elapsed µs over loops (fio's update_runtime).
    elapsed_us: [u64; 3],
    /// Completed bytes / I/Os per direction since accounting started.
    bytes: [u64; 3],
    ios: [u64; 3],
    bw_last_ns: u64,
    bw_last: [u64; 3],
    iops_last_ns: u64,
    iops_last: [u64; 3],
    next_check_ns: u64,
    next_publish_ns: u64,
    /// Earliest of the periodic deadlines (sample check, publish, ramp end).
    next_event_ns: u64,
    /// Set when ramp ends inside a loop: that loop's runtime counts from here.
    loop_reset_start: Option<u64>,
    /// Start of the current loop.
    loop_start_ns: u64,
    writes_since_sync: u64,
    last_write_file: u32,
    /// Priority of requests without a command priority.
    default_prio: u16,
    cmdprio_pct: [u32; 2],
    cmdprio_value: [u16; 2],
    prio_rng: Taus88,
    /// Keep per-priority latency statistics (the job varies priorities per request).
    track_prio: bool,
    logs: Option<crate::logs::JobLogs>,
    interval: Option<crate::logs::IntervalLog>,
    /// Totals at the previous averaged log window.
    log_last: ([u64; 3], [u64; 3], u64),
    next_log_ns: u64,
    log_tick_ns: u64,
    /// Length of the latest I/O per direction.
    last_bs: [u64; 3],
    /// Rate schedule (rate, rate_iops) and its time base (start of the loop).
    rate: Option<flexio_workload::rate::Schedule>,
    rate_base_ns: u64,
    /// Think time: next I/O count to pause at, and start of the current I/O period.
    next_think_at: u64,
    think_period_start_ns: u64,
    completed_total: u64,
    /// rate_min / rate_iops_min: totals at the start of the current cycle.
    ratemin_mark: (u64, [u64; 3], [u64; 3]),
    lat_target: Option<LatTarget>,
    /// Requests allowed in flight (latency_target lowers it).
    depth_limit: usize,
    /// Steady state: next sample time and the totals at the previous one.
    next_ss_ns: u64,
    ss_base: Option<(u64, u64, u64)>,
    /// Synchronous engines stamp one time for start and issue, so lat equals clat: it is
    /// recorded once, as clat, and folded into lat when statistics are taken.
    lat_from_clat: bool,
    /// Directions whose bytes count against the loop's budget (fio's io_bytes_exceeded:
    /// reads and writes, else writes (trimwrite's trims are extra), else reads, else trims).
    budget_dirs: [bool; 3],
    /// A latency-target search converged: drain, reset statistics, run a final window.
    lat_quiesce: bool,
    issued_total: u64,
    usage_start: flexio_engine::sys::Usage,
    stop: bool,
    first_direct_error_noted: bool,
    ver: Option<Box<VerState>>,
    /// The verification state could not be set up (verify_state_load).
    ver_err: Option<String>,
}

impl<'a, E: Engine> Worker<'a, E> {
    fn new(e: E, p: &'a ThreadPlan, ctx: &'a RunCtx, progress: &'a Progress) -> Self {
        let o = &p.opts;
        let depth = p.depth.max(1) as usize;
        let cfg = StatsConfig {
            clat_hist: !o.disable_clat
                && (o.clat_percentiles || o.write_hist_log.is_some() || o.interval_log.is_some()),
            lat_hist: o.lat_percentiles && !o.disable_lat,
            slat_hist: o.slat_percentiles && !o.disable_slat,
            sched_hist: o.rate.iter().chain(o.rate_iops.iter()).any(|r| *r > 0),
        };
        let align = (o.iomem_align as usize).max(rustix::param::page_size());
        let slot_size = o.max_bs().max(1) as usize;
        let bufs = match IoBuffers::new(depth, slot_size, align, o.iomem_thp) {
            Ok(b) => b,
            Err(_) => {
                IoBuffers::new(1, 4096, 4096, false).expect("a 4 KiB buffer can be allocated")
            }
        };
        let caps = e.caps();
        let nfiles = p.files.len();
        let writes = o.rw.writes();
        let (ver, ver_err) = match VerState::new(p) {
            None => (None, None),
            Some(Ok(v)) => (Some(v), None),
            Some(Err(e)) => (None, Some(e)),
        };
        let verifying = ver.is_some();
        Worker {
            caps,
            p,
            ctx,
            progress,
            clock: ctx.clock,
            stats: ThreadStats::new(cfg),
            cfg,
            gen: Generator::new(p.spec.clone()),
            bufs,
            slots: vec![Slot::default(); depth],
            free: (0..depth as u32).rev().collect(),
            uncommitted: Vec::with_capacity(depth),
            comps: Vec::with_capacity(depth),
            inflight: 0,
            fds: (0..nfiles).map(|_| None).collect(),
            raw_fds: vec![-1; nfiles],
            open_count: 0,
            file_inflight: vec![0; nfiles],
            close_cursor: 0,
            op_done: vec![false; nfiles],
            fill: files::fill_mode(o),
            fill_rng: Taus88::new(p.spec.seeds[flexio_workload::rng::slot::BUF] as u32),
            refill: writes && o.refill_buffers && !verifying,
            scramble: writes
                && o.scramble_buffers
                && !o.zero_buffers
                && o.buffer_pattern.is_none()
                && !verifying,
            need_lat: !o.disable_lat && !caps.file_op,
            need_clat: !o.disable_clat,
            need_slat: !o.disable_slat && !caps.no_slat,
            accounting: true,
            epoch_ns: 0,
            ramp_end_ns: 0,
            runtime_end_ns: u64::MAX,
            elapsed_us: [0; 3],
            bytes: [0; 3],
            ios: [0; 3],
            bw_last_ns: 0,
            bw_last: [0; 3],
            iops_last_ns: 0,
            iops_last: [0; 3],
            next_check_ns: 0,
            next_publish_ns: 0,
            next_event_ns: 0,
            loop_reset_start: None,
            loop_start_ns: 0,
            writes_since_sync: 0,
            last_write_file: 0,
            default_prio: default_ioprio(o),
            cmdprio_pct: o.cmdprio_percentage,
            cmdprio_value: [0, 1].map(|d| ((o.cmdprio_class[d] << 13) | o.cmdprio[d]) as u16),
            prio_rng: Taus88::new(p.spec.seeds[flexio_workload::rng::slot::PRIO] as u32),
            track_prio: o.cmdprio_percentage.iter().any(|x| *x > 0),
            logs: crate::logs::JobLogs::new(o, p.thread_number),
            interval: o.interval_log.as_deref().and_then(|path| {
                crate::logs::IntervalLog::new(path, o.interval_log_msec, &p.name, p.thread_number)
                    .ok()
            }),
            log_last: ([0; 3], [0; 3], 0),
            next_log_ns: u64::MAX,
            log_tick_ns: {
                // Often enough for the shortest log period (windows are closed on time).
                let periods = [
                    o.log_avg_msec,
                    o.log_hist_msec,
                    if o.interval_log.is_some() {
                        o.interval_log_msec
                    } else {
                        0
                    },
                ];
                let p = periods
                    .iter()
                    .filter(|x| **x > 0)
                    .min()
                    .copied()
                    .unwrap_or(1000);
                (p * 1_000_000 / 10).max(1_000_000)
            },
            last_bs: [0; 3],
            rate: {
                let any = o.rate.iter().chain(o.rate_iops.iter()).any(|r| *r > 0);
                any.then(|| {
                    let min_bs = [0, 1, 2].map(|d| o.min_bs_dir(d));
                    use flexio_workload::rng::slot;
                    let sd = &p.spec.seeds;
                    let process = if o.rate_poisson {
                        flexio_workload::rate::Process::Poisson
                    } else {
                        flexio_workload::rate::Process::Linear
                    };
                    flexio_workload::rate::Schedule::new(
                        o.rate,
                        o.rate_iops,
                        min_bs,
                        process,
                        [sd[slot::POISSON], sd[slot::POISSON2], sd[slot::POISSON3]],
                    )
                })
            },
            rate_base_ns: 0,
            next_think_at: o.thinktime_blocks.unwrap_or(1),
            think_period_start_ns: 0,
            completed_total: 0,
            ratemin_mark: (0, [0; 3], [0; 3]),
            lat_target: (o.latency_target_ns > 0).then(|| LatTarget::new(depth as u32, o)),
            depth_limit: if o.latency_target_ns > 0 { 1 } else { depth },
            lat_quiesce: false,
            lat_from_clat: !o.disable_lat
                && !o.disable_clat
                && caps.syncio
                && !caps.file_op
                && (!cfg.lat_hist || cfg.clat_hist),
            budget_dirs: {
                let rw = o.rw;
                match (rw.reads(), rw.writes()) {
                    (true, true) => [true, true, false],
                    (false, true) => [false, true, false],
                    (true, false) => [true, false, false],
                    _ => [false, false, true],
                }
            },
            next_ss_ns: u64::MAX,
            ss_base: None,
            issued_total: 0,
            usage_start: Default::default(),
            stop: false,
            first_direct_error_noted: false,
            ver,
            ver_err,
            e,
        }
    }

    fn terminated(&self) -> bool {
        self.ctx.terminate.load(Ordering::Relaxed)
    }

    /// Record a fatal error, named like fio's `file:<source>:<line>, func=..., error=...`
    /// with flexio's own source location of the failing step.
    #[track_caller]
    fn fail(&mut self, errno: i32, func: &str) {
        self.stats.set_error(errno, verror(errno, func));
        self.stop = true;
    }

    /// Sleep in small steps so termination is noticed.
    fn sleep_us(&self, us: u64) {
        let end = self.clock.now() + us * 1000;
        while !self.terminated() {
            let now = self.clock.now();
            if now >= end {
                break;
            }
            std::thread::sleep(std::time::Duration::from_nanos((end - now).min(50_000_000)));
        }
    }

    /// Whether files are opened on demand (openfiles below the number of files).
    fn on_demand(&self) -> bool {
        self.p
            .opts
            .openfiles
            .is_some_and(|n| (n as usize) < self.p.files.len())
    }

    /// Open file `i`: descriptor, cache invalidation or pre-read, fadvise, engine hook.
    fn open_one(&mut self, i: usize) -> Result<(), (i32, String)> {
        let o = &self.p.opts;
        let f = &self.p.files[i];
        let writes = (o.rw.writes() && !o.verify_only) || o.rw.trims();
        let fd = files::open(&f.path, files::open_flags(o, writes)).map_err(|e| {
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            (errno, format!("open '{}': {e}", f.path.display()))
        })?;
        if o.pre_read {
            // Pre-read through a buffered descriptor (O_DIRECT would bypass the cache).
            let buffered = files::open_flags(&flexio_job::JobOptions::default(), false);
            if let Ok(b) = files::open(&f.path, buffered) {
                let _ = files::pre_read(&b, f.region.start, f.region.len);
            }
        } else if o.invalidate {
            if let Err(e) = files::invalidate(&fd, f.region.start, f.region.len) {
                self.ctx.notes.warn(&format!(
                    "fio: cache invalidation of {} failed: {e}",
                    f.path.display()
                ));
            }
        }
        if o.fadvise_hint != FadviseHint::Off && !o.pre_read {
            let adv = match o.fadvise_hint {
                FadviseHint::Random => rustix::fs::Advice::Random,
                FadviseHint::Sequential => rustix::fs::Advice::Sequential,
                _ if o.rw.is_random() => rustix::fs::Advice::Random,
                _ => rustix::fs::Advice::Sequential,
            };
            let _ = rustix::fs::fadvise(
                &fd,
                f.region.start,
                std::num::NonZeroU64::new(f.region.len),
                adv,
            );
        }
        let info = FileInfo {
            path: &f.path,
            fd: fd.as_raw_fd(),
            size: f.region.start + f.region.len,
            writable: writes,
            random: o.rw.is_random(),
        };
        self.e.open_file(i as u32, &info).map_err(|e| {
            (
                e.raw_os_error().unwrap_or(libc::EIO),
                format!(
                    "ioengine {} open of '{}': {e}",
                    o.ioengine,
                    f.path.display()
                ),
            )
        })?;
        self.raw_fds[i] = fd.as_raw_fd();
        self.fds[i] = Some(fd);
        self.open_count += 1;
        self.progress
            .files
            .store(self.open_count, Ordering::Relaxed);
        Ok(())
    }

    fn close_one(&mut self, i: usize) {
        if let Some(fd) = self.fds[i].take() {
            let _ = self.e.close_file(i as u32);
            let o = &self.p.opts;
            if o.fsync_on_close && o.rw.writes() {
                let _ = rustix::fs::fsync(&fd);
            }
            drop(fd);
            self.raw_fds[i] = -1;
            self.open_count -= 1;
            self.progress
                .files
                .store(self.open_count, Ordering::Relaxed);
        }
    }

    fn open_files(&mut self) -> Result<(), (i32, String)> {
        if self.caps.no_fd || self.caps.diskless {
            // fio counts a diskless job's files as open in the status line.
            self.progress
                .files
                .store(self.p.files.len() as u32, Ordering::Relaxed);
            return Ok(());
        }
        if self.on_demand() {
            return Ok(());
        }
        for i in 0..self.p.files.len() {
            self.open_one(i)?;
        }
        Ok(())
    }

    /// With `openfiles` below the number of files: make sure file `i` is open, closing the
    /// longest-open idle file when the limit is reached (waiting for its I/O if needed).
    fn ensure_open(&mut self, i: usize) -> bool {
        if self.fds[i].is_some() || self.caps.no_fd || self.caps.diskless {
            return true;
        }
        let limit = self.p.opts.openfiles.unwrap_or(u32::MAX);
        while self.open_count >= limit {
            let n = self.fds.len();
            let victim = (0..n)
                .map(|k| (self.close_cursor + k) % n)
                .find(|k| self.fds[*k].is_some() && self.file_inflight[*k] == 0);
            match victim {
                Some(v) => {
                    self.close_cursor = (v + 1) % n;
                    self.close_one(v);
                }
                None if self.inflight > 0 => {
                    self.commit();
                    self.reap(1);
                }
                None => break,
            }
        }
        match self.open_one(i) {
            Ok(()) => true,
            Err((errno, what)) => {
                self.ctx.notes.err(&format!("fio: {what}"));
                self.fail(errno, "open file");
                false
            }
        }
    }

    fn close_files(&mut self) {
        for i in 0..self.fds.len() {
            self.close_one(i);
        }
        self.progress.files.store(0, Ordering::Relaxed);
    }

    fn run(&mut self) {
        let o = &self.p.opts;
        let (d0, d1) = o.startdelay_us;
        if d1 > 0 {
            let d = if d1 > d0 {
                d0 + Taus88::new(self.p.spec.seeds[flexio_workload::rng::slot::START_DELAY] as u32)
                    .below(d1 - d0 + 1)
            } else {
                d0
            };
            self.progress.set_state(RunState::NotStarted);
            self.sleep_us(d);
        }
        if self.terminated() {
            return;
        }
        self.progress.set_state(RunState::Initialized);
        if let Err(e) = self.e.init().and_then(|_| self.e.post_init(&self.bufs)) {
            let errno = e.raw_os_error().unwrap_or(libc::EIO);
            let extra = if self.p.depth > 1 && errno == libc::ENOMEM {
                " Perhaps try reducing io depth?"
            } else {
                ""
            };
            // One clear line: which engine, and why.
            self.ctx.notes.err(&format!(
                "fio: io engine {} init failed: {e}.{extra}",
                o.ioengine
            ));
            self.fail(errno, "io engine init");
            return;
        }
        if !o.create_serialize {
            // create_serialize=0: every job lays out its own files, in parallel.
            let which = files::files_to_lay_out(self.p);
            if !which.is_empty() {
                self.ctx.notes.info(&files::layout_message(self.p, &which));
                if let Err(e) = files::lay_out(self.p, &which, self.ctx.readonly) {
                    self.ctx
                        .notes
                        .err(&format!("flexio: {}: file layout failed: {e}", self.p.name));
                    self.fail(e.raw_os_error().unwrap_or(libc::EIO), "file layout");
                    return;
                }
            }
        }
        if let Some(e) = self.ver_err.take() {
            self.ctx.notes.err(&format!("fio: {e}"));
            self.fail(libc::ENOENT, "verify_state_load");
            return;
        }
        if let Err((errno, what)) = self.open_files() {
            self.ctx.notes.err(&format!("fio: {what}"));
            self.fail(errno, "open file");
            self.close_files();
            return;
        }
        if o.create_only {
            self.close_files();
            return;
        }
        if self.rate.is_some() || o.thinktime_us > 0 {
            // Sleeps end on schedule, not up to 50 µs late (the default timer slack).
            let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
        }
        let now = self.clock.now();
        self.start_epoch(now);
        if o.ramp_time_us > 0 {
            self.accounting = false;
            // Steady-state sampling starts with the measured part (end_ramp restarts it).
            self.next_ss_ns = u64::MAX;
            self.ramp_end_ns = now + o.ramp_time_us * 1000;
            self.runtime_end_ns = u64::MAX;
            self.next_event_ns = self.next_event();
            self.progress.set_state(RunState::Ramp);
        }
        let time_based = o.time_based && o.runtime_us > 0;
        let loops = if time_based { u32::MAX } else { o.loops };
        for l in 0..loops {
            let loop_start = self.clock.now();
            self.loop_start_ns = loop_start;
            self.restart_schedule(loop_start);
            if l == 0 {
                let done = self.completed_total;
                if let Some(lt) = &mut self.lat_target {
                    lt.new_window(loop_start, done);
                }
            }
            self.progress.set_state(self.running_state());
            let end = self.do_io();
            self.end_of_loop(loop_start);
            if self.ver.is_some() && !self.stop && !self.terminated() {
                // fio: the read-back's time is the job's read runtime.
                let t0 = self.clock.now();
                self.verify_phase();
                self.add_runtime(0, t0);
            }
            if end == End::Stop || self.stop || self.terminated() {
                break;
            }
            if l + 1 < loops {
                self.next_loop_files();
                self.gen.reset();
                self.op_done.iter_mut().for_each(|d| *d = false);
                if o.unlink_each_loop {
                    self.unlink_files();
                }
            }
        }
        self.save_verify_state();
        let now = self.clock.now();
        self.fold_lat();
        self.stats.total_run_time_ms = (now.saturating_sub(self.epoch_ns)) / 1_000_000;
        if let Some(lt) = &self.lat_target {
            self.stats.latency_depth = Some(lt.qd);
        }
        if let Ok(u) = flexio_engine::sys::thread_usage() {
            let d = u.delta(&self.usage_start);
            self.stats.usr_time_us = d.utime_us;
            self.stats.sys_time_us = d.stime_us;
            self.stats.ctx = d.ctx;
            self.stats.majf = d.majflt;
            self.stats.minf = d.minflt;
        }
        self.progress.set_state(RunState::Finishing);
        if let Some(iv) = &mut self.interval {
            let ms = now.saturating_sub(self.epoch_ns) / 1_000_000;
            let hists = [
                &self.stats.dirs[0].clat_hist,
                &self.stats.dirs[1].clat_hist,
                &self.stats.dirs[2].clat_hist,
            ];
            let sched = [
                &self.stats.dirs[0].sched_hist,
                &self.stats.dirs[1].sched_hist,
                &self.stats.dirs[2].sched_hist,
            ];
            iv.emit(ms, &self.bytes, &self.ios, hists, sched, true);
        }
        if let Some(l) = self.logs.take() {
            for e in l.finish() {
                self.ctx.notes.err(&format!("flexio: {e}"));
            }
        }
        self.close_files();
        if o.unlink || o.unlink_each_loop {
            self.unlink_files();
        }
        self.publish();
    }

    /// fio closes and reopens a job's files between loops (and between passes of a
    /// time-based job): the page cache is dropped again (`invalidate`) and `fsync_on_close`
    /// syncs again. flexio keeps the descriptors and does those two steps.
    fn next_loop_files(&mut self) {
        let o = &self.p.opts;
        let writes = o.rw.writes();
        for (i, fd) in self.fds.iter().enumerate() {
            let Some(fd) = fd else { continue };
            if o.fsync_on_close && writes {
                let _ = rustix::fs::fsync(fd);
            }
            if o.invalidate && !o.pre_read {
                let r = &self.p.files[i].region;
                let _ = files::invalidate(fd, r.start, r.len);
            }
        }
    }

    /// Drop the page cache of one file again (a time-based job starting over, as fio's
    /// loop_cache_invalidate).
    #[cold]
    fn invalidate_file(&self, i: usize) {
        if let Some(Some(fd)) = self.fds.get(i) {
            let r = &self.p.files[i].region;
            let _ = files::invalidate(fd, r.start, r.len);
        }
    }

    fn unlink_files(&self) {
        if self.caps.diskless && !self.caps.file_op {
            return;
        }
        for f in self.p.files.iter().filter(|f| f.block.is_none()) {
            let _ = std::fs::remove_file(&f.path);
        }
    }

    fn running_state(&self) -> RunState {
        let rw = self.p.opts.rw;
        match (rw.reads(), rw.writes(), rw.trims(), rw.is_random()) {
            (true, true, _, false) => RunState::MixedSeq,
            (true, true, _, true) => RunState::MixedRand,
            (true, false, _, false) => RunState::ReadSeq,
            (true, false, _, true) => RunState::ReadRand,
            (false, true, false, false) => RunState::WriteSeq,
            (false, true, false, true) => RunState::WriteRand,
            (_, _, true, false) => RunState::TrimSeq,
            _ => RunState::TrimRand,
        }
    }

    fn start_epoch(&mut self, now: u64) {
        self.epoch_ns = now;
        self.runtime_end_ns = if self.p.opts.runtime_us > 0 {
            now + self.p.opts.runtime_us * 1000
        } else {
            u64::MAX
        };
        self.bw_last_ns = now;
        self.iops_last_ns = now;
        self.bw_last = [0; 3];
        self.iops_last = [0; 3];
        self.next_check_ns = now + self.check_interval_ns();
        self.next_publish_ns = now;
        self.next_event_ns = now;
        self.log_last = ([0; 3], [0; 3], 0);
        self.next_log_ns = if self.logs.is_some() || self.interval.is_some() {
            now + self.log_tick_ns
        } else {
            u64::MAX
        };
        if let Ok(u) = flexio_engine::sys::thread_usage() {
            self.usage_start = u;
        }
        let o = &self.p.opts;
        self.ss_base = None;
        self.next_ss_ns = if o.ss_dur_us > 0 {
            // fio: without ss_ramp the first interval starts with the job; with it, the
            // baseline is taken one check interval after ss_ramp has passed.
            if o.ss_ramp_us > 0 {
                now + (o.ss_ramp_us + o.ss_interval_us) * 1000
            } else {
                now
            }
        } else {
            u64::MAX
        };
    }

    /// Steady state: close one check interval and hand its IOPS and bytes/s to the main
    /// thread (fio's per-job `1000 * delta / ms`).
    fn ss_tick(&mut self, now: u64) {
        let bytes: u64 = self.bytes.iter().sum();
        let ios: u64 = self.ios.iter().sum();
        if let Some((t0, b0, i0)) = self.ss_base {
            let ms = (now - t0) / 1_000_000;
            let iops = ((ios - i0) * 1000).checked_div(ms);
            let bw = ((bytes - b0) * 1000).checked_div(ms);
            if let Some(sample) = iops.zip(bw) {
                if let Ok(mut v) = self.progress.ss_samples.lock() {
                    v.push(sample);
                }
            }
        }
        self.ss_base = Some((now, bytes, ios));
        let iv = self.p.opts.ss_interval_us * 1000;
        self.next_ss_ns = if self.next_ss_ns + iv > now {
            self.next_ss_ns + iv
        } else {
            now + iv
        };
    }

    fn check_interval_ns(&self) -> u64 {
        let o = &self.p.opts;
        // Sample slightly early, as fio's helper thread does (1 ms slack).
        (o.bwavgtime_ms.min(o.iopsavgtime_ms).saturating_sub(1)).max(1) * 1_000_000
    }

    /// End of ramp_time: discard everything measured so far and restart the clock.
    fn end_ramp(&mut self, now: u64) {
        self.stats = ThreadStats::new(self.cfg);
        self.bytes = [0; 3];
        self.ios = [0; 3];
        self.elapsed_us = [0; 3];
        self.issued_total = 0;
        self.accounting = true;
        self.ramp_end_ns = 0;
        self.start_epoch(now);
        self.loop_reset_start = Some(now);
        self.restart_schedule(now);
        self.progress.set_state(self.running_state());
    }

    /// Start the rate schedule, the think-time period and the rate_min cycle at `now`.
    fn restart_schedule(&mut self, now: u64) {
        self.rate_base_ns = now;
        if let Some(r) = &mut self.rate {
            r.reset();
        }
        self.think_period_start_ns = now;
        self.ratemin_mark = (now, self.bytes, self.ios);
    }

    /// rate_min / rate_iops_min: after a 2 s settling period, every rate_cycle the rate of
    /// each direction over the cycle must reach its floor, or the job fails (fio's
    /// check_min_rate).
    fn check_min_rate(&mut self, now: u64) {
        let o = &self.p.opts;
        let (mark_ns, mb, mi) = self.ratemin_mark;
        if now.saturating_sub(self.epoch_ns) < 2_000_000_000
            || now.saturating_sub(mark_ns) < o.rate_cycle_ms * 1_000_000
        {
            return;
        }
        let spent_ms = (now - mark_ns) / 1_000_000;
        for d in 0..3 {
            if o.rate_min[d] > 0 {
                let rate = (self.bytes[d] - mb[d]) * 1000 / spent_ms.max(1);
                if rate < o.rate_min[d] {
                    self.ctx.notes.err(&format!(
                        "{}: rate_min={}B/s not met, got {}B/s",
                        self.p.name, o.rate_min[d], rate
                    ));
                    self.fail(libc::EIO, "check_min_rate");
                    return;
                }
            } else if o.rate_iops_min[d] > 0 {
                let rate = (self.ios[d] - mi[d]) * 1000 / spent_ms.max(1);
                if rate < o.rate_iops_min[d] {
                    self.ctx.notes.err(&format!(
                        "{}: rate_iops_min={} not met, got {} IOPS",
                        self.p.name, o.rate_iops_min[d], rate
                    ));
                    self.fail(libc::EIO, "check_min_rate");
                    return;
                }
            }
        }
        self.ratemin_mark = (now, self.bytes, self.ios);
    }

    /// Wait for in-flight requests to finish (before sleeping: fio's io_u_quiesce).
    fn quiesce(&mut self) {
        self.commit();
        while self.inflight > 0 && !self.stop {
            let n = self.inflight as usize;
            self.reap(n);
        }
    }

    /// Sleep until `due` (rate limit), keeping periodic work going; false when the job
    /// should stop instead.
    fn wait_until(&mut self, due: u64) -> bool {
        self.quiesce();
        let start = self.clock.now();
        let r = self.wait_loop(due);
        self.stats.wait_ns += self.clock.now().saturating_sub(start);
        r
    }

    fn wait_loop(&mut self, due: u64) -> bool {
        loop {
            let now = self.clock.now();
            self.periodic(now);
            if self.should_stop(now) {
                return false;
            }
            if now >= due {
                return true;
            }
            let step = (due - now)
                .min(self.next_event_ns.saturating_sub(now).max(20_000))
                .min(50_000_000);
            std::thread::sleep(std::time::Duration::from_nanos(step));
        }
    }

    /// The next I/O of a rate-limited job: file, then direction, where the rate may switch
    /// a mixed job to the other direction or sleep until one is due (fio's rate_ddir).
    /// `None` when the files are done or the job must stop while waiting.
    fn next_io_rated(&mut self) -> Option<flexio_workload::NextIo> {
        for _ in 0..(self.gen.nfiles() * 2 + 2) {
            let fi = self.gen.pick_file()?;
            let mut d = self.gen.next_ddir();
            if d < 2 {
                d = self.rate_ddir(d)?;
                self.gen.set_mix_ddir(d);
            }
            if let Some(io) = self.gen.attempt(fi, d) {
                return Some(io);
            }
        }
        None
    }

    /// fio's rate_ddir: a direction that is due goes now; a mixed job ahead of schedule in
    /// this direction switches to the other one if that is due, else sleeps until the
    /// earlier of the two.
    fn rate_ddir(&mut self, d: usize) -> Option<usize> {
        let r = self.rate.as_ref()?;
        let now = self.clock.now();
        let due = |x: usize| self.rate_base_ns + r.due_us(x) * 1000;
        let dd = due(d);
        if dd <= now {
            return Some(d);
        }
        let o = d ^ 1;
        let opts = &self.p.opts;
        let other_share = if o == 0 {
            opts.rwmixread
        } else {
            100 - opts.rwmixread
        };
        let (until, dir) = if opts.rw.reads() && opts.rw.writes() && other_share > 0 {
            let od = due(o);
            if od <= now {
                return Some(o);
            }
            if dd <= od {
                (dd, d)
            } else {
                (od, o)
            }
        } else {
            (dd, d)
        };
        self.wait_until(until).then_some(dir)
    }

    /// Think time after an I/O, if one is due; returns the time after it.
    fn think(&mut self, now: u64) -> u64 {
        let o = &self.p.opts;
        let mut stall = false;
        if o.thinktime_iotime_us > 0 {
            if now.saturating_sub(self.think_period_start_ns) >= o.thinktime_iotime_us * 1000 {
                stall = true;
            } else if o.thinktime_blocks.is_none() {
                // thinktime_iotime alone: the default thinktime_blocks does not apply.
                return now;
            }
        }
        let b = if o.thinktime_blocks_issue {
            self.issued_total
        } else {
            self.completed_total
        };
        if b >= self.next_think_at {
            stall = true;
        }
        if !stall {
            return now;
        }
        let (think, spin) = (o.thinktime_us, o.thinktime_spin_us.min(o.thinktime_us));
        let blocks = o.thinktime_blocks.unwrap_or(1);
        let ignore = o.rate_ignore_thinktime;
        self.quiesce();
        let t0 = self.clock.now();
        while self.clock.now() < t0 + spin * 1000 && !self.terminated() {
            std::hint::spin_loop();
        }
        if think > spin {
            self.sleep_us(think - spin);
        }
        let t1 = self.clock.now();
        self.stats.wait_ns += t1 - t0;
        if ignore {
            if let Some(r) = &mut self.rate {
                r.shift((t1 - t0) / 1000);
            }
        }
        self.next_think_at = b + blocks;
        self.think_period_start_ns = t1;
        t1
    }

    /// Apply a latency-target decision.
    #[cold]
    fn lat_step(&mut self, step: LatStep, lat: u64, slot: u32) {
        match step {
            LatStep::Continue => {}
            LatStep::Quiesce => self.lat_quiesce = true,
            LatStep::Done => self.stop = true,
            LatStep::Fatal => {
                let target = self.p.opts.latency_target_ns;
                self.lat_fatal(lat, target, slot);
            }
        }
        if let Some(lt) = &self.lat_target {
            self.depth_limit = lt.qd as usize;
        }
    }

    /// A request's total latency exceeded max_latency (or an unattainable latency_target).
    #[cold]
    fn lat_fatal(&mut self, lat: u64, max: u64, slot: u32) {
        if self.stats.error != 0 {
            return;
        }
        let s = self.slots[slot as usize];
        let path = self
            .p
            .files
            .get(s.file as usize)
            .map(|f| f.path.display().to_string())
            .unwrap_or_default();
        let dir = ["read", "write", "trim"][(s.ddir as usize).min(2)];
        self.ctx.notes.err(&format!(
            "fio: latency of {lat} nsec exceeds specified max ({max} nsec): {path} {dir} {} {}",
            s.offset, s.len
        ));
        self.fail(libc::ETIMEDOUT, "max latency exceeded");
    }

    /// Add the time since `start` to direction `d`'s runtime (if it moved data).
    fn add_runtime(&mut self, d: usize, start: u64) {
        if self.accounting {
            let el_us = self.clock.now().saturating_sub(start) / 1000;
            self.add_elapsed(d, el_us);
        }
    }

    /// fio's update_runtime: µs accumulate, the reported runtime is their ceiling in ms.
    fn add_elapsed(&mut self, d: usize, el_us: u64) {
        if self.stats.dirs[d].io_bytes == 0 {
            return;
        }
        let before = self.elapsed_us[d].div_ceil(1000);
        self.elapsed_us[d] += el_us;
        let after = self.elapsed_us[d].div_ceil(1000);
        self.stats.dirs[d].runtime_ms =
            self.stats.dirs[d].runtime_ms - before.min(self.stats.dirs[d].runtime_ms) + after;
    }

    fn end_of_loop(&mut self, loop_start: u64) {
        let start = self
            .loop_reset_start
            .take()
            .unwrap_or(loop_start)
            .max(loop_start);
        if !self.accounting {
            return;
        }
        let now = self.clock.now();
        let el_us = now.saturating_sub(start) / 1000;
        let dirs = crate::plan::job_dirs(self.p.opts.rw);
        for (d, on) in dirs.into_iter().enumerate() {
            if on {
                self.add_elapsed(d, el_us);
            }
        }
    }

    /// Fold the clat samples that stand for lat into lat (see `lat_from_clat`), in the
    /// job's statistics or a copy of them.
    fn fold_lat_into(&self, s: &mut ThreadStats) {
        if !self.lat_from_clat {
            return;
        }
        for d in &mut s.dirs {
            d.lat.merge(&d.clat);
            if self.cfg.lat_hist {
                let h = d.clat_hist.clone();
                d.lat_hist.merge(&h);
            }
        }
    }

    fn fold_lat(&mut self) {
        let mut s = std::mem::take(&mut self.stats);
        self.fold_lat_into(&mut s);
        self.stats = s;
        self.lat_from_clat = false;
    }

    /// The statistics as they would be reported if the job ended now.
    fn snapshot(&self, now: u64) -> ThreadStats {
        let mut s = self.stats.clone();
        self.fold_lat_into(&mut s);
        if self.accounting {
            let start = self
                .loop_reset_start
                .unwrap_or(self.loop_start_ns)
                .max(self.loop_start_ns);
            let el_us = now.saturating_sub(start) / 1000;
            for d in 0..3 {
                if s.dirs[d].io_bytes > 0 {
                    let before = self.elapsed_us[d].div_ceil(1000);
                    let after = (self.elapsed_us[d] + el_us).div_ceil(1000);
                    s.dirs[d].runtime_ms =
                        s.dirs[d].runtime_ms - before.min(s.dirs[d].runtime_ms) + after;
                }
            }
        }
        s.total_run_time_ms = now.saturating_sub(self.epoch_ns) / 1_000_000;
        if let Ok(u) = flexio_engine::sys::thread_usage() {
            let d = u.delta(&self.usage_start);
            s.usr_time_us = d.utime_us;
            s.sys_time_us = d.stime_us;
            s.ctx = d.ctx;
            s.majf = d.majflt;
            s.minf = d.minflt;
        }
        s
    }

    fn publish(&mut self) {
        for d in 0..3 {
            self.progress.bytes[d].store(self.bytes[d], Ordering::Relaxed);
            self.progress.ios[d].store(self.ios[d], Ordering::Relaxed);
        }
    }

    /// Periodic work: ramp end, bandwidth/IOPS samples, progress.
    #[inline]
    fn periodic(&mut self, now: u64) {
        if now >= self.next_event_ns {
            self.periodic_slow(now);
        }
    }

    fn next_event(&self) -> u64 {
        let ramp = if self.ramp_end_ns != 0 {
            self.ramp_end_ns
        } else {
            u64::MAX
        };
        self.next_check_ns
            .min(self.next_publish_ns)
            .min(ramp)
            .min(self.next_log_ns)
            .min(self.next_ss_ns)
    }

    #[cold]
    fn periodic_slow(&mut self, now: u64) {
        self.periodic_work(now);
        self.next_event_ns = self.next_event();
    }

    fn periodic_work(&mut self, now: u64) {
        if self.ramp_end_ns != 0 && now >= self.ramp_end_ns {
            self.end_ramp(now);
        }
        if self.accounting && now >= self.next_ss_ns {
            self.ss_tick(now);
        }
        if now >= self.next_publish_ns {
            self.publish();
            self.next_publish_ns = now + 100_000_000;
            if self.terminated() {
                self.stop = true;
            }
            if self.next_ss_ns != u64::MAX && self.progress.ss_stop.load(Ordering::Relaxed) {
                // Steady state attained: end the job normally.
                self.stop = true;
            }
            let req = self.ctx.snapshot_req.load(Ordering::Acquire);
            if req != self.progress.snap_gen.load(Ordering::Relaxed) {
                let snap = self.snapshot(now);
                if let Ok(mut slot) = self.progress.snapshot.lock() {
                    *slot = Some(snap);
                }
                self.progress.snap_gen.store(req, Ordering::Release);
            }
        }
        if self.accounting && now >= self.next_log_ns {
            let ms = now.saturating_sub(self.epoch_ns) / 1_000_000;
            let hists = [
                &self.stats.dirs[0].clat_hist,
                &self.stats.dirs[1].clat_hist,
                &self.stats.dirs[2].clat_hist,
            ];
            if let Some(l) = &mut self.logs {
                l.tick(
                    ms,
                    &self.bytes,
                    &self.ios,
                    &mut self.log_last,
                    hists,
                    &self.last_bs,
                );
            }
            if let Some(iv) = &mut self.interval {
                let sched = [
                    &self.stats.dirs[0].sched_hist,
                    &self.stats.dirs[1].sched_hist,
                    &self.stats.dirs[2].sched_hist,
                ];
                iv.emit(ms, &self.bytes, &self.ios, hists, sched, false);
            }
            // Ticks stay on multiples of the tick length, so intervals end on time.
            let t = self.log_tick_ns;
            self.next_log_ns = self.epoch_ns + ((now - self.epoch_ns) / t + 1) * t;
        }
        if now < self.next_check_ns || !self.accounting {
            return;
        }
        let o = &self.p.opts;
        if o.rate_min
            .iter()
            .chain(o.rate_iops_min.iter())
            .any(|r| *r > 0)
        {
            self.check_min_rate(now);
        }
        let o = &self.p.opts;
        if !o.disable_bw && !self.caps.file_op {
            let (bw_ms, iops_ms) = (o.bwavgtime_ms, o.iopsavgtime_ms);
            let (per_io_bw, per_io_iops) = self
                .logs
                .as_ref()
                .map(|l| (l.per_io_bw, l.per_io_iops))
                .unwrap_or((false, false));
            let dirs = &mut self.stats.dirs;
            // bw in KiB/s and IOPS over the time since the previous sample, for every
            // direction that made progress (fio's calc_log_samples). With per-I/O bw/iops
            // logs the samples are taken per I/O instead, as in fio.
            if !per_io_bw {
                sample_due(
                    now,
                    bw_ms,
                    &mut self.bw_last_ns,
                    &mut self.bw_last,
                    &self.bytes,
                    |d, delta, spent| dirs[d].bw.add(delta * 1000 / spent / 1024),
                );
            }
            if !per_io_iops {
                sample_due(
                    now,
                    iops_ms,
                    &mut self.iops_last_ns,
                    &mut self.iops_last,
                    &self.ios,
                    |d, delta, spent| dirs[d].iops.add(delta * 1000 / spent),
                );
            }
        }
        self.next_check_ns = now + self.check_interval_ns();
    }

    #[inline]
    fn should_stop(&self, now: u64) -> bool {
        // Termination requests are picked up by the periodic work (at least every 100 ms).
        self.stop || now >= self.runtime_end_ns
    }

    /// Pick the next request into `slot`; `None` when the loop's work is done.
    #[inline]
    fn prepare(&mut self, slot: u32) -> Option<u8> {
        let o = &self.p.opts;
        let fsync_every = if o.fsync > 0 { o.fsync } else { o.fdatasync };
        if fsync_every > 0 && self.writes_since_sync >= fsync_every && !self.p.caps.diskless {
            self.writes_since_sync = 0;
            let file = self.last_write_file;
            let s = &mut self.slots[slot as usize];
            *s = Slot {
                op: if o.fsync > 0 { OP_SYNC } else { OP_DSYNC },
                ddir: OP_SYNC,
                file,
                ..Slot::default()
            };
            return Some(s.op);
        }
        let n = if self.rate.is_some() {
            self.next_io_rated()?
        } else {
            self.gen.next_io()?
        };
        let ddir = n.ddir;
        if n.wrapped && o.invalidate && !o.direct && !o.pre_read {
            self.invalidate_file(n.file);
        }
        if ddir == 1 {
            self.writes_since_sync += 1;
            self.last_write_file = n.file as u32;
        }
        // Per-request priority (cmdprio): that share of requests gets the command priority,
        // the others the thread's.
        let prio = if ddir < 2
            && self.cmdprio_pct[ddir] > 0
            && self.prio_rng.between(1, 100) <= self.cmdprio_pct[ddir] as u64
        {
            self.cmdprio_value[ddir]
        } else {
            self.default_prio
        };
        let s = &mut self.slots[slot as usize];
        *s = Slot {
            op: ddir as u8,
            ddir: ddir as u8,
            file: n.file as u32,
            offset: n.offset,
            len: n.len,
            prio,
            ..Slot::default()
        };
        if ddir == 1 && self.ver.is_some() {
            self.prepare_verified_write(slot);
        } else if ddir == 1 {
            self.fill_write(slot, n.offset, n.len);
        }
        Some(ddir as u8)
    }

    /// The data of a (non-verifying) write: refilled or scrambled as the job asks.
    #[inline]
    fn fill_write(&mut self, slot: u32, offset: u64, len: u64) {
        let buf = &mut self.bufs.slot_mut(slot as usize)[..len as usize];
        if self.refill {
            fill(buf, &self.fill, &mut self.fill_rng);
        } else if self.scramble {
            scramble(buf, offset, self.issued_total);
        }
    }

    /// A write of a verifying job: number it, seed it, fill data and headers.
    #[cold]
    fn prepare_verified_write(&mut self, slot: u32) {
        let epoch = self.epoch_ns;
        let now = self.clock.now().saturating_sub(epoch);
        let verify_only = self.p.opts.verify_only;
        let Some(vs) = self.ver.as_mut() else { return };
        let n = vs.writes;
        vs.writes += 1;
        let seed = crate::verify::block_seed(vs.seed_base, n);
        let s = &mut self.slots[slot as usize];
        s.vflags = VF_WRITE;
        s.vnum = n;
        s.vseed = seed;
        if verify_only {
            return;
        }
        vs.inflight.push(n);
        let (offset, len) = (s.offset, s.len as usize);
        let buf = &mut self.bufs.slot_mut(slot as usize)[..len];
        vs.v.fill(
            buf,
            offset,
            seed,
            n as u16,
            ((now / 1_000_000_000) as u32, (now % 1_000_000_000) as u32),
        );
    }

    /// Log a verified block (its write completed, or verify_only replays it).
    #[cold]
    fn log_written(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        let Some(vs) = self.ver.as_mut() else { return };
        if let Some(i) = vs.inflight.iter().position(|x| *x == s.vnum) {
            vs.inflight.swap_remove(i);
        }
        if vs.limit.is_some_and(|l| s.vnum >= l) {
            return;
        }
        vs.log.push(crate::verify::Piece {
            file: s.file,
            offset: s.offset,
            len: s.len,
            seed: s.vseed,
            numberio: s.vnum,
        });
        if vs.backlog > 0 {
            vs.since_backlog += 1;
            if vs.since_backlog >= vs.backlog {
                vs.since_backlog = 0;
                vs.backlog_due = true;
            }
        }
    }

    /// Re-read and check up to `max` logged blocks (the verify phase, or a backlog batch).
    fn verify_blocks(&mut self, max: u64) {
        let mut left = max;
        let mut now = self.clock.now();
        while left > 0 && !self.stop && !self.terminated() {
            let Some(piece) = self.ver.as_mut().and_then(|v| v.log.next_piece()) else {
                break;
            };
            left -= 1;
            let slot = loop {
                if let Some(s) = self.free.pop() {
                    break Some(s);
                }
                self.commit();
                self.reap(1);
                if self.stop {
                    break None;
                }
            };
            let Some(slot) = slot else { break };
            self.slots[slot as usize] = Slot {
                op: 0,
                ddir: 0,
                file: piece.file,
                offset: piece.offset,
                len: piece.len,
                prio: self.default_prio,
                vflags: VF_PHASE,
                vnum: piece.numberio,
                vseed: piece.seed,
                ..Slot::default()
            };
            now = self.submit(slot, now);
            self.periodic(now);
        }
        self.quiesce();
    }

    /// verify_state_save: a verifying write job stopped before its read-back records how
    /// many writes completed in order, for a later `verify_only` + `verify_state_load`.
    fn save_verify_state(&mut self) {
        let o = &self.p.opts;
        let Some(vs) = self.ver.as_ref() else { return };
        if !o.verify_state_save || !vs.writing || !(self.terminated() || self.stop) {
            return;
        }
        let name = crate::verify::state_file_name(&self.p.name, self.p.thread_number - 1);
        let done = vs.completed_in_order();
        if let Err(e) = crate::verify::save_state(std::path::Path::new(&name), done) {
            self.ctx
                .notes
                .err(&format!("fio: failed to save verify state {name}: {e}"));
        }
    }

    /// After a loop's writes: read back everything logged (fio's do_verify).
    fn verify_phase(&mut self) {
        let Some(vs) = self.ver.as_mut() else { return };
        if vs.check_reads || !self.p.opts.do_verify {
            vs.log.clear();
            return;
        }
        vs.writing = false;
        let random = vs.random;
        vs.log.settle(random);
        self.progress.set_state(RunState::Verifying);
        self.verify_blocks(u64::MAX);
        if let Some(vs) = self.ver.as_mut() {
            vs.log.clear();
            vs.writing = !self.p.opts.verify_only;
        }
    }

    /// Check a completed read of a verifying job; a failure is EILSEQ in the verify class.
    #[cold]
    fn verify_read(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        let Some(vs) = self.ver.as_ref() else { return };
        let phase = s.vflags & VF_PHASE != 0;
        let expect = if phase {
            crate::verify::Expect {
                seed: Some(s.vseed),
                numberio: vs.check_numberio.then_some(s.vnum as u16),
            }
        } else {
            crate::verify::Expect::default()
        };
        // No allocation per verified read: a UTF-8 path is borrowed.
        let plan = self.p;
        let path = plan
            .files
            .get(s.file as usize)
            .map(|f| f.path.to_string_lossy())
            .unwrap_or_default();
        let place = crate::verify::Place {
            file: &path,
            flags: if phase { "88" } else { "8" },
        };
        let buf = &mut self.bufs.slot_mut(slot as usize)[..s.len as usize];
        let Err(f) = vs.v.check(buf, s.offset, expect, &place) else {
            return;
        };
        for l in &f.lines {
            self.ctx.notes.err(l);
        }
        if self.p.opts.verify_dump {
            let base = std::path::Path::new(path.as_ref())
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "block".into());
            let received = &self.bufs.slot_mut(slot as usize)[..s.len as usize];
            let lo = (f.offset - s.offset) as usize;
            let hi = (lo + f.len as usize).min(received.len());
            let chunk = if f
                .expected
                .as_ref()
                .is_some_and(|e| e.len() == received.len())
            {
                received
            } else {
                &received[lo..hi.max(lo)]
            };
            let dump = |what: &str, data: &[u8]| {
                let name = format!("{base}.{}.{what}", f.offset);
                match crate::out::write_atomic(std::path::Path::new(&name), data) {
                    Ok(()) => self
                        .ctx
                        .notes
                        .err(&format!("       {what} data dumped as {name}")),
                    Err(e) => self.ctx.notes.err(&format!("fio: dump {name}: {e}")),
                }
            };
            dump("received", chunk);
            if let Some(e) = &f.expected {
                dump("expected", e);
            }
        }
        let o = &self.p.opts;
        let nonfatal = o.continue_on_error & err_class::VERIFY != 0
            && ignorable(&o.ignore_error[2], libc::EILSEQ);
        let func = if self.caps.syncio {
            "io_u_sync_complete"
        } else {
            "io_u_queued_complete"
        };
        if nonfatal {
            self.stats.count_error(libc::EILSEQ);
            self.stats.set_soft_error(libc::EILSEQ, String::new());
            if o.verify_fatal {
                self.stop = true;
            }
            return;
        }
        self.fail(libc::EILSEQ, func);
    }

    fn request(&self, slot: u32) -> IoReq {
        let s = &self.slots[slot as usize];
        IoReq {
            idx: slot,
            op: op_of(s.op),
            file: s.file,
            fd: self.raw_fds.get(s.file as usize).copied().unwrap_or(-1),
            offset: s.offset + s.done,
            // Past the bytes already moved by a short transfer (pointer arithmetic only).
            buf: self.bufs.ptr(slot as usize).wrapping_add(s.done as usize),
            len: (s.len - s.done) as usize,
            ioprio: s.prio,
        }
    }

    /// File-op engines: the measured operation happens at a file's first use per loop.
    fn file_op(&mut self, slot: u32) -> bool {
        let file = self.slots[slot as usize].file as usize;
        if self.op_done[file] {
            return true;
        }
        self.op_done[file] = true;
        let path = &self.p.files[file].path;
        let t0 = self.clock.now();
        let r = self.e.file_op(path);
        let t1 = self.clock.now();
        match r {
            Ok(()) => {
                if self.accounting {
                    let d = &mut self.stats.dirs[self.slots[slot as usize].ddir as usize];
                    d.clat.add(t1 - t0);
                    d.clat_hist.add(t1 - t0);
                }
                true
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.ctx.notes.err(&format!(
                    "fio: {} of {} failed: {e}",
                    self.e.name(),
                    path.display()
                ));
                self.fail(errno, "file operation");
                false
            }
        }
    }

    /// Submit a prepared request; returns the time after submission.
    #[inline]
    fn submit(&mut self, slot: u32, mut now: u64) -> u64 {
        if self.caps.file_op && !self.file_op(slot) {
            self.free.push(slot);
            return self.clock.now();
        }
        let s = self.slots[slot as usize];
        if !self.ensure_open(s.file as usize) {
            self.free.push(slot);
            return self.clock.now();
        }
        let is_sync = s.op >= OP_SYNC;
        if self.need_lat || (self.caps.syncio && (self.need_clat || is_sync)) {
            now = self.clock.now();
        }
        self.slots[slot as usize].start_ns = now;
        loop {
            let req = self.request(slot);
            // Synchronous engines: the start stamp, taken just before the system call, is
            // also the issue time: one clock reading per request instead of two (lat then
            // equals clat; fio's lat adds its own preparation time). Engines that queue get
            // their issue time at submission.
            let issue = now;
            self.slots[slot as usize].issue_ns = issue;
            let r = self.e.queue(&req);
            match r {
                Queued::Completed(res) => {
                    let t = self.clock.now();
                    self.stats.engine_ns += t.saturating_sub(issue);
                    if !self.caps.has_commit {
                        self.stats.mark_submit(1);
                        self.stats.mark_complete(1);
                    }
                    self.count_issue(s.ddir, is_sync);
                    let depth = self.inflight as u64 + 1;
                    self.stats.mark_depth(depth, 1);
                    self.complete(slot, res, t);
                    return t;
                }
                Queued::Queued => {
                    self.count_issue(s.ddir, is_sync);
                    self.inflight += 1;
                    self.file_inflight[self.slots[slot as usize].file as usize] += 1;
                    self.uncommitted.push(slot);
                    if !self.caps.has_commit {
                        self.stats.mark_submit(1);
                        let t = self.clock.now();
                        self.stats.engine_ns += t.saturating_sub(issue);
                        self.slots[slot as usize].issue_ns = t;
                        if self.need_slat && self.accounting && !is_sync {
                            self.stats.add_slat(
                                s.ddir as usize,
                                t.saturating_sub(self.slots[slot as usize].start_ns),
                            );
                        }
                    }
                    if self.uncommitted.len() as u32
                        >= self.p.opts.iodepth_batch.max(1).min(self.p.depth)
                    {
                        self.commit();
                    }
                    return now;
                }
                Queued::Busy => {
                    if self.inflight == 0 && self.uncommitted.is_empty() {
                        self.fail(libc::EBUSY, "io_u queue");
                        self.free.push(slot);
                        return now;
                    }
                    self.commit();
                    self.reap(1);
                    if self.stop {
                        self.free.push(slot);
                        return now;
                    }
                }
            }
        }
    }

    #[inline]
    fn count_issue(&mut self, ddir: u8, is_sync: bool) {
        if is_sync {
            self.stats.sync_total += 1;
        } else {
            self.stats.dirs[ddir as usize].total_ios += 1;
            self.issued_total += 1;
        }
    }

    fn commit(&mut self) {
        if self.uncommitted.is_empty() {
            return;
        }
        let cur_depth = (self.slots.len() - self.free.len()) as u64;
        self.stats
            .mark_depth(cur_depth, self.uncommitted.len() as u64);
        let t0 = self.clock.now();
        let r = self.e.commit();
        let t = self.clock.now();
        self.stats.engine_ns += t - t0;
        match r {
            Ok(n) => {
                if self.caps.has_commit {
                    self.stats.mark_submit(n as u64);
                }
                // Engines that complete synchronously keep the issue time taken before queue()
                // and have no submission latency (fio's FIO_SYNCIO).
                if self.caps.has_commit && !self.caps.syncio {
                    for i in 0..self.uncommitted.len() {
                        let slot = self.uncommitted[i] as usize;
                        self.slots[slot].issue_ns = t;
                        let s = self.slots[slot];
                        if self.need_slat && self.accounting && s.op < OP_SYNC {
                            self.stats
                                .add_slat(s.ddir as usize, t.saturating_sub(s.start_ns));
                        }
                    }
                }
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.fail(errno, "io commit");
            }
        }
        self.uncommitted.clear();
    }

    /// Reap at least `min` completions.
    fn reap(&mut self, min: usize) {
        if self.inflight == 0 {
            return;
        }
        let max = self
            .p
            .opts
            .iodepth_batch_complete_max
            .map(|m| m as usize)
            // fio: the maximum defaults to the minimum, so completions are taken a few at a
            // time and the queue stays full.
            .unwrap_or(self.p.opts.iodepth_batch_complete_min as usize)
            .max(min)
            .max(1);
        self.comps.clear();
        let t0 = self.clock.now();
        let r = self
            .e
            .reap(min.min(self.inflight as usize), max, &mut self.comps);
        let t = self.clock.now();
        self.stats.engine_ns += t.saturating_sub(t0);
        match r {
            Ok(n) => {
                self.stats.mark_complete(n as u64);
                for i in 0..self.comps.len() {
                    let c = self.comps[i];
                    self.inflight -= 1;
                    let f = self.slots[c.idx as usize].file as usize;
                    self.file_inflight[f] = self.file_inflight[f].saturating_sub(1);
                    self.complete(c.idx, c.res, t);
                }
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.fail(errno, "io getevents");
                self.inflight = 0;
            }
        }
        self.periodic(t);
    }

    /// Account a finished request (or requeue its remainder after a short transfer).
    #[inline]
    fn complete(&mut self, slot: u32, res: i64, t: u64) {
        let s = self.slots[slot as usize];
        if s.op >= OP_SYNC {
            if res < 0 {
                self.io_error(slot, (-res) as i32);
            } else if self.accounting && self.need_clat {
                self.stats.add_sync(t.saturating_sub(s.issue_ns));
            }
            self.free.push(slot);
            return;
        }
        let want = s.len - s.done;
        let mut failed = false;
        if res < 0 || (res == 0 && want > 0) {
            let errno = if res < 0 { (-res) as i32 } else { libc::EIO };
            if !self.io_error(slot, errno) {
                self.free.push(slot);
                return;
            }
            // Non-fatal (continue_on_error): the I/O counts as done.
            failed = true;
        } else if (res as u64) < want {
            // Short transfer: requeue the remainder.
            self.slots[slot as usize].done += res as u64;
            if self.accounting {
                self.stats.dirs[s.ddir as usize].short_ios += 1;
            }
            let now = self.clock.now();
            self.resubmit(slot, now);
            return;
        }
        let d = s.ddir as usize;
        self.completed_total += 1;
        if self.need_lat && (self.lat_target.is_some() || self.p.opts.max_latency_us[d] > 0) {
            self.check_latency(slot, d, t.saturating_sub(s.start_ns), t);
        }
        if self.accounting && !failed {
            if s.sched_ns != 0 {
                self.stats.add_sched(
                    d,
                    t.saturating_sub(s.sched_ns),
                    s.start_ns.saturating_sub(s.sched_ns),
                );
            }
            self.bytes[d] += s.len;
            self.ios[d] += 1;
            self.stats.dirs[d].io_bytes += s.len;
            if self.need_clat && !self.caps.file_op {
                self.stats.add_clat(d, t.saturating_sub(s.issue_ns));
            }
            if self.need_lat && !(self.lat_from_clat && s.issue_ns == s.start_ns) {
                self.stats.add_lat(d, t.saturating_sub(s.start_ns));
            }
            if let Some(l) = &mut self.logs {
                let ms = t.saturating_sub(self.epoch_ns) / 1_000_000;
                let slat = (!self.caps.syncio && self.need_slat)
                    .then(|| s.issue_ns.saturating_sub(s.start_ns));
                let clat = t.saturating_sub(s.issue_ns);
                l.io(
                    ms,
                    s.ddir,
                    s.len,
                    s.offset,
                    s.prio,
                    t.saturating_sub(s.start_ns),
                    clat,
                    slat,
                );
                if l.per_io_bw && clat > 0 {
                    self.stats.dirs[d]
                        .bw
                        .add((s.len as u128 * 1_000_000 / clat as u128) as u64);
                }
                if l.per_io_iops {
                    self.stats.dirs[d].iops.add(1);
                }
            }
            self.last_bs[d] = s.len;
            if self.track_prio {
                let v = if self.p.opts.lat_percentiles {
                    t.saturating_sub(s.start_ns)
                } else {
                    t.saturating_sub(s.issue_ns)
                };
                let hist = self.p.opts.clat_percentiles || self.p.opts.lat_percentiles;
                self.stats.dirs[d].add_prio(s.prio, v, hist);
            }
        }
        if failed && s.vflags & VF_WRITE != 0 {
            if let Some(vs) = self.ver.as_mut() {
                vs.inflight.retain(|x| *x != s.vnum);
            }
        }
        if self.ver.is_some() && !failed {
            if s.vflags & VF_WRITE != 0 {
                self.log_written(slot);
            } else if d == 0
                && (s.vflags & VF_PHASE != 0 || self.ver.as_ref().is_some_and(|v| v.check_reads))
            {
                self.verify_read(slot);
            }
        }
        self.free.push(slot);
    }

    /// max_latency and latency_target checks of one completion (total latency `lat`).
    #[cold]
    fn check_latency(&mut self, slot: u32, d: usize, lat: u64, t: u64) {
        let o = &self.p.opts;
        let max = o.max_latency_us[d] * 1000;
        if max > 0 && lat > max {
            self.lat_fatal(lat, max, slot);
            return;
        }
        let done = self.completed_total;
        if let Some(lt) = &mut self.lat_target {
            let step = lt.on_complete(lat, t, done);
            self.lat_step(step, lat, slot);
        }
    }

    /// Re-issue the rest of a short request (same slot, start time kept).
    fn resubmit(&mut self, slot: u32, _now: u64) {
        let req = self.request(slot);
        // fio counts the requeued remainder as another issued request.
        let ddir = self.slots[slot as usize].ddir;
        self.count_issue(ddir, false);
        self.slots[slot as usize].issue_ns = self.clock.now();
        match self.e.queue(&req) {
            Queued::Completed(res) => {
                let t = self.clock.now();
                self.complete(slot, res, t);
            }
            Queued::Queued => {
                self.inflight += 1;
                self.file_inflight[self.slots[slot as usize].file as usize] += 1;
                self.uncommitted.push(slot);
                self.commit();
            }
            Queued::Busy => {
                self.fail(libc::EBUSY, "io_u requeue");
                self.free.push(slot);
            }
        }
    }

    /// Handle an I/O error; returns true if it is non-fatal (continue_on_error).
    fn io_error(&mut self, slot: u32, errno: i32) -> bool {
        let s = self.slots[slot as usize];
        let o = &self.p.opts;
        // fio's td_error.c: EILSEQ is a verify error; trims and syncs count as writes.
        let (class, list) = if errno == libc::EILSEQ {
            (err_class::VERIFY, 2)
        } else if s.ddir == 0 {
            (err_class::READ, 0)
        } else {
            (err_class::WRITE, 1)
        };
        let plan = self.p;
        // Formatted only when printed: an error continue_on_error counts costs no message.
        let line = || {
            let path = plan
                .files
                .get(s.file as usize)
                .map(|f| f.path.display().to_string())
                .unwrap_or_default();
            format!(
                "fio: io_u error on file {path}: {}: {} offset={}, buflen={}",
                crate::out::strerror(errno),
                op_of(s.op).name(),
                s.offset + s.done,
                s.len - s.done
            )
        };
        if o.continue_on_error & class != 0 && ignorable(&o.ignore_error[list], errno) {
            if o.error_dump {
                self.ctx.notes.err(&line());
            }
            self.stats.count_error(errno);
            // fio: a synchronous engine's transfer error is recorded by its xfer step.
            let func = if self.caps.syncio {
                "xfer"
            } else {
                "io_u error"
            };
            self.stats.set_soft_error(errno, verror(errno, func));
            return true;
        }
        if errno == libc::EINVAL
            && o.direct
            && !self.first_direct_error_noted
            && self.issued_total <= 1
        {
            self.first_direct_error_noted = true;
            self.ctx.notes.info(
                "fio: first direct IO errored. File system may not support direct IO, or iomem_align= is bad, or invalid block size. Try setting direct=0.",
            );
        }
        if self.stats.error != 0 {
            // Only the first fatal error is reported; the requests still in flight when the
            // job stops fail the same way.
            return false;
        }
        if errno == libc::EOPNOTSUPP && o.hipri {
            self.ctx.notes.info("flexio: hipri asks for polled completions, which this file or device does not support (it needs a block device with poll queues, e.g. nvme poll_queues)");
        }
        self.ctx.notes.err(&line());
        self.fail(errno, "io_u error");
        false
    }

    /// fio's do_io for one loop.
    fn do_io(&mut self) -> End {
        if self.plain_sync() {
            let end = self.plain_loop();
            return self.finish_io(end);
        }
        let budget = self.p.io_budget;
        let number_ios = self.p.opts.number_ios;
        let mut issued: u64 = 0;
        let mut now = self.clock.now();
        let mut end = End::Done;
        loop {
            self.periodic(now);
            if self.should_stop(now) {
                end = End::Stop;
                break;
            }
            if issued >= budget {
                break;
            }
            if number_ios > 0 && self.issued_total >= number_ios {
                end = End::Stop;
                break;
            }
            if self.lat_quiesce {
                // latency_target converged: measure a clean window at the found depth.
                self.lat_quiesce = false;
                self.quiesce();
                now = self.clock.now();
                if self.accounting {
                    self.end_ramp(now);
                }
                let done = self.completed_total;
                if let Some(lt) = &mut self.lat_target {
                    lt.new_window(now, done);
                }
                continue;
            }
            if self.ver.as_ref().is_some_and(|v| v.backlog_due) {
                // verify_backlog: check the oldest written blocks before writing on.
                let batch = self.ver.as_ref().map_or(0, |v| v.batch);
                if let Some(v) = self.ver.as_mut() {
                    v.backlog_due = false;
                }
                self.quiesce();
                self.verify_blocks(batch);
                self.progress.set_state(self.running_state());
                now = self.clock.now();
                continue;
            }
            let in_use = self.slots.len() - self.free.len();
            let slot = if in_use < self.depth_limit {
                self.free.pop()
            } else {
                None
            };
            let Some(slot) = slot else {
                // Queue full (or at the latency target's depth): commit what is pending and
                // wait for completions.
                self.commit();
                let min = (self.p.opts.iodepth_batch_complete_min as usize).max(1);
                self.reap(min);
                now = self.clock.now();
                continue;
            };
            let Some(op) = self.prepare(slot) else {
                self.free.push(slot);
                break;
            };
            if op < OP_SYNC {
                let len = self.slots[slot as usize].len;
                if self.budget_dirs[op as usize] {
                    issued += len;
                }
                if op == 1 && self.p.opts.verify_only && self.ver.is_some() {
                    // verify_only: the write is not done, only remembered for the check.
                    self.log_written(slot);
                    self.free.push(slot);
                    continue;
                }
                if let Some(r) = &self.rate {
                    let d = op as usize;
                    if r.limited_dir(d) {
                        let due = self.rate_base_ns + r.due_us(d) * 1000;
                        // Normally already waited for in rate_ddir.
                        if due > now && due > self.clock.now() {
                            if !self.wait_until(due) {
                                self.free.push(slot);
                                end = End::Stop;
                                break;
                            }
                            now = self.clock.now();
                        }
                        self.slots[slot as usize].sched_ns = due.max(1);
                        if let Some(r) = &mut self.rate {
                            r.issued(d, len);
                        }
                    }
                }
            }
            now = self.submit(slot, now);
            if self.p.opts.thinktime_us > 0 && op < OP_SYNC {
                now = self.think(now);
            }
            if self.p.opts.iodepth_low.is_some() && self.free.is_empty() {
                // Drain down to the low-water mark before refilling.
                let low = self.p.opts.iodepth_low.unwrap_or(0) as usize;
                while self.slots.len() - self.free.len() > low && self.inflight > 0 && !self.stop {
                    self.commit();
                    self.reap(1);
                }
                now = self.clock.now();
            }
        }
        self.finish_io(end)
    }

    /// The end of a loop's I/O: drain what is in flight, end_fsync, a last periodic pass.
    fn finish_io(&mut self, end: End) -> End {
        // Drain what is in flight.
        self.commit();
        while self.inflight > 0 {
            let n = self.inflight as usize;
            self.reap(n);
            if self.stop && self.inflight > 0 && self.comps.is_empty() {
                break;
            }
        }
        if self.p.opts.end_fsync && self.p.opts.rw.writes() && !self.p.caps.diskless {
            for fd in self.fds.iter().flatten() {
                let _ = rustix::fs::fsync(fd);
            }
        }
        self.periodic(self.clock.now());
        end
    }

    /// Whether a loop can take the plain synchronous path: one request at a time on an
    /// engine that completes it in the call, and none of the per-request features (rate,
    /// think time, verify, logs, latency checks, priorities, periodic syncs).
    fn plain_sync(&self) -> bool {
        // FLEXIO_GENERAL_PATH=1 keeps every job on the general loop (tests compare the two).
        static FORCED_GENERAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
        let forced = *FORCED_GENERAL
            .get_or_init(|| std::env::var("FLEXIO_GENERAL_PATH").as_deref() == Ok("1"));
        let o = &self.p.opts;
        !forced
            && self.caps.syncio
            && !self.caps.has_commit
            && !self.caps.file_op
            && self.slots.len() == 1
            && self.depth_limit == 1
            && self.rate.is_none()
            && o.thinktime_us == 0
            && o.iodepth_low.is_none()
            && o.number_ios == 0
            && self.ver.is_none()
            && self.lat_target.is_none()
            && !self.lat_quiesce
            && o.max_latency_us == [0; 3]
            && self.logs.is_none()
            && !self.track_prio
            && self.cmdprio_pct == [0, 0]
            && o.fsync == 0
            && o.fdatasync == 0
    }

    /// [`Self::do_io`] for [`Self::plain_sync`] jobs: the same requests, statistics and
    /// stopping rules with none of the queue bookkeeping. A request that does not move all
    /// its bytes (error, short transfer) or is not a read or write goes through the
    /// general completion.
    fn plain_loop(&mut self) -> End {
        let budget = self.p.io_budget;
        let o = &self.p.opts;
        let invalidate = o.invalidate && !o.direct && !o.pre_read;
        let timed = self.need_lat || self.need_clat;
        let lat_too = self.need_lat && !self.lat_from_clat;
        let mut now = self.clock.now();
        let mut issued: u64 = 0;
        let first = self.issued_total;
        let end = loop {
            self.periodic(now);
            if self.should_stop(now) {
                break End::Stop;
            }
            if issued >= budget {
                break End::Done;
            }
            let Some(n) = self.gen.next_io() else {
                break End::Done;
            };
            if n.wrapped && invalidate {
                self.invalidate_file(n.file);
            }
            let d = n.ddir;
            if self.budget_dirs[d] {
                issued += n.len;
            }
            if d == 1 {
                self.writes_since_sync += 1;
                self.last_write_file = n.file as u32;
                self.fill_write(0, n.offset, n.len);
            }
            if !self.ensure_open(n.file) {
                continue;
            }
            let req = IoReq {
                idx: 0,
                op: op_of(d as u8),
                file: n.file as u32,
                fd: self.raw_fds.get(n.file).copied().unwrap_or(-1),
                offset: n.offset,
                buf: self.bufs.ptr(0),
                len: n.len as usize,
                ioprio: self.default_prio,
            };
            if timed {
                now = self.clock.now();
            }
            let r = self.e.queue(&req);
            let t = self.clock.now();
            self.stats.engine_ns += t.saturating_sub(now);
            self.stats.mark_submit(1);
            self.stats.mark_complete(1);
            self.stats.dirs[d].total_ios += 1;
            self.issued_total += 1;
            self.stats.mark_depth(1, 1);
            match r {
                Queued::Completed(res) if d < 2 && res as u64 == n.len => {
                    self.completed_total += 1;
                    if self.accounting {
                        self.bytes[d] += n.len;
                        self.ios[d] += 1;
                        self.stats.dirs[d].io_bytes += n.len;
                        if self.need_clat {
                            self.stats.add_clat(d, t.saturating_sub(now));
                        }
                        if lat_too {
                            self.stats.add_lat(d, t.saturating_sub(now));
                        }
                        self.last_bs[d] = n.len;
                    }
                }
                r => {
                    let res = match r {
                        Queued::Completed(res) => res,
                        // Engines with `syncio` complete every request in the call; one
                        // that does not breaks that contract.
                        _ => -(libc::EINVAL as i64),
                    };
                    let Some(slot) = self.free.pop() else {
                        break End::Stop;
                    };
                    self.slots[slot as usize] = Slot {
                        op: d as u8,
                        ddir: d as u8,
                        file: n.file as u32,
                        offset: n.offset,
                        len: n.len,
                        prio: self.default_prio,
                        start_ns: now,
                        issue_ns: now,
                        ..Slot::default()
                    };
                    self.complete(slot, res, t);
                }
            }
            now = t;
        };
        self.stats.plain_ios += self.issued_total - first;
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drive the search with a device whose latency is 100 µs per request in flight.
    fn search(target_us: u64, percentile: f64, max: u32, keep: bool) -> (u32, Vec<u32>, LatStep) {
        let o = flexio_job::JobOptions {
            latency_target_ns: target_us * 1000,
            latency_percentile: percentile,
            latency_window_us: 1000,
            latency_run: keep,
            ..Default::default()
        };
        let mut lt = LatTarget::new(max, &o);
        let (mut now, mut done) = (0u64, 0u64);
        lt.new_window(now, done);
        let mut depths = vec![lt.qd];
        for _ in 0..100_000 {
            let lat = lt.qd as u64 * 100_000;
            now += 10_000;
            done += 1;
            let step = lt.on_complete(lat, now, done);
            if depths.last() != Some(&lt.qd) {
                depths.push(lt.qd);
            }
            if matches!(step, LatStep::Done | LatStep::Fatal) {
                return (lt.qd, depths, step);
            }
        }
        (lt.qd, depths, LatStep::Continue)
    }

    #[test]
    fn latency_target_finds_the_deepest_queue_meeting_it() {
        // 1 ms target at 100 µs per request: depth 10.
        let (qd, path, step) = search(1000, 100.0, 64, false);
        assert_eq!(step, LatStep::Done);
        assert_eq!(qd, 10, "search path {path:?}");
        // Doubling first, then bisecting.
        assert_eq!(&path[..5], &[1, 2, 4, 8, 16]);
        // A percentile below 100 judges whole windows: same answer here.
        let (qd, _, step) = search(1000, 90.0, 64, false);
        assert_eq!((qd, step), (10, LatStep::Done));
        // Capped by iodepth.
        let (qd, _, _) = search(10_000, 100.0, 8, false);
        assert_eq!(qd, 8);
        // Unattainable even at depth 1.
        let (_, _, step) = search(50, 100.0, 8, false);
        assert_eq!(step, LatStep::Fatal);
        // latency_run keeps adjusting (never done), staying around the answer.
        let (qd, _, step) = search(1000, 100.0, 64, true);
        assert_eq!(step, LatStep::Continue);
        assert!((9..=11).contains(&qd), "{qd}");
    }
}
