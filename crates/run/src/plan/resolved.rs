//! The resolved plan of one job thread: every decision the worker, the headers and the
//! report need, computed once from the typed options and carried typed. After this stage
//! nothing reads [`JobOptions`]: each part of the worker gets its own section below.

use crate::progress::RunState;
use flexio_engine::os;
use flexio_engine::os::fs::OFlags;
use flexio_engine::{Caps, EngineConfig};
/// The error classes of [`ErrorPolicy::tolerates`] (fio's `continue_on_error` bits), for
/// the parts that classify a failed request.
pub use flexio_job::options::err_class;
use flexio_job::options::{FadviseHint, JobOptions, RwKind, SyncMode, Unified};
use flexio_stats::report::{self, ReportParams};
use flexio_stats::StatsConfig;
use flexio_workload::fill::Fill;
use flexio_workload::rate::{Process, Schedule};
use flexio_workload::rng::slot;
use std::path::PathBuf;

/// How the job loop runs: depth, batching, budget and stopping rules.
#[derive(Clone, Debug)]
pub struct IoPlan {
    /// Requests in flight at most (fio's iodepth after the "capped at 1" rule).
    pub depth: u32,
    /// Commit once this many requests are queued (iodepth_batch, within 1..=depth).
    pub submit_batch: u32,
    /// Completions to wait for when the queue is full (iodepth_batch_complete_min, ≥ 1).
    pub complete_min: u32,
    /// Completions to take at most per reap (iodepth_batch_complete_max; None = the minimum).
    pub complete_max: Option<u32>,
    /// iodepth_low: drain to this many before refilling a full queue.
    pub low: Option<u32>,
    /// Bytes to transfer per loop (u64::MAX when time based).
    pub budget: u64,
    /// block_error_percentiles: the block size its per-block states are kept in (the
    /// smallest trim size).
    pub block_errors: Option<u64>,
    /// Directions whose bytes count against the budget (fio's io_bytes_exceeded: reads and
    /// writes, else writes (trimwrite's trims are extra), else reads, else trims).
    pub budget_dirs: [bool; 3],
    /// Directions the job performs.
    pub dirs: [bool; 3],
    /// Stop after this many I/Os (0 = no limit).
    pub number_ios: u64,
    /// trimwrite: the limit doubles at every loop's start, as fio's do_io doubles
    /// number_ios each time it runs (`number_ios=5 loops=2`: 20 trims and 20 writes).
    pub number_ios_doubles: bool,
    /// Loops over the workload (u32::MAX when time based).
    pub loops: u32,
    /// The loops share [`Self::budget`] (fio's size × loops): each loop issues until its
    /// files are done or what the earlier loops left is spent; else each loop has it all.
    pub shared_budget: bool,
    /// Bytes all loops together may issue, where each loop has [`Self::budget`] to itself
    /// (u64::MAX: no limit): fio's loop on an engine that queues stops at `size` queued
    /// and also once the job's issued bytes reach size × loops, so a loop that ran past
    /// `size` (a mixed job's blocks not dividing it) leaves the last one less.
    pub issue_cap: u64,
    /// A job past its files' end (io_size beyond them) ends at a pass's end as fio's
    /// keep_running does: [`PassEnd`].
    pub pass_end: Option<PassEnd>,
    /// [`Self::pass_end`]'s passes are the worker's loops (an engine that queues), not
    /// the generator's inside one loop.
    pub pass_loops: bool,
    /// Runtime limit (ns; 0 = none) and ramp time (ns).
    pub runtime_ns: u64,
    pub ramp_ns: u64,
    /// `ramp_size`: the ramp also ends once the job moved this many bytes (0 = none).
    pub ramp_bytes: u64,
    /// The ramp's end is looked at on ticks this far apart from the job's start (the newest
    /// fio's helper thread: 1 s); 0 = continuously (fio 3.33).
    pub ramp_tick_ns: u64,
    /// ramp_size with group_reporting: the bytes the group's members moved while ramping,
    /// shared by them (the ramp ends for all once the sum reaches ramp_size).
    pub ramp_group: Option<std::sync::Arc<crate::progress::AtomicU64>>,
    /// `end_syncfs`: one syncfs per file system at the end of each write pass.
    pub end_syncfs: bool,
    /// startdelay range (µs) and the seed drawing from it.
    pub startdelay_us: (u64, u64),
    pub startdelay_seed: u32,
    /// An fsync, and an fdatasync, every this many writes (0 = never); where both are
    /// due at one write, the fsync.
    pub fsync_every: u64,
    pub fdatasync_every: u64,
    /// fsync every file at the end of a loop's writes.
    pub end_fsync: bool,
    /// The state letter of the status line while running.
    pub state: RunState,
    /// create_only: open (create) the files, do no I/O.
    pub create_only: bool,
    /// create_serialize=0: the job thread lays out its own files.
    pub layout_in_thread: bool,
    /// Remove the files at the end / before every further loop.
    pub unlink: bool,
    pub unlink_each_loop: bool,
    /// Drop the page cache of a file when a time-based job wraps around to its start.
    pub invalidate_on_wrap: bool,
    /// The job has a runtime or is time based (drives the status line's estimate).
    pub time_based: bool,
    /// fill_device: a write that finds the file system full (ENOSPC, EDQUOT) ends the job
    /// without error.
    pub fill_device: bool,
    /// io_submit_mode=offload: this many submitter threads issue the requests.
    pub offload: Option<u32>,
}

/// When a job whose I/O goes past its files' end (io_size beyond them) ends, in fio's
/// passes: each pass over the files is a loop of fio's own. The job does at least `loops`
/// passes (its loops, each a whole pass: the shared budget is io_size × loops), then more
/// while the bytes done are short of `io_size` by at least the largest block; the budget
/// ends the last one only with `loops=1`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PassEnd {
    pub loops: u64,
    pub io_size: u64,
    pub max_bs: u64,
}

impl PassEnd {
    /// Whether the job ends at the end of pass number `passes` (1-based), `done` bytes
    /// moved in all.
    pub fn ends(&self, passes: u64, done: u64) -> bool {
        passes >= self.loops && (done >= self.io_size || self.io_size - done < self.max_bs)
    }
}

/// The job thread's I/O buffers and how write data is made.
#[derive(Clone, Debug)]
pub struct BufferPlan {
    pub slots: usize,
    pub slot_size: usize,
    pub align: usize,
    /// Lay buffers of 1 MiB or more out on transparent huge pages.
    pub thp: bool,
    pub fill: Fill,
    pub fill_seed: u32,
    /// Fill every buffer once before the first I/O (jobs that write without verifying; fio's
    /// init_io_u_buffers): random data, the buffer_pattern, or zeros as the job asks.
    pub prefill: bool,
    /// refill_buffers: new data for every write.
    pub refill: bool,
    /// scramble_buffers: stamp every write so it is not deduplicated.
    pub scramble: bool,
    /// dedupe_percentage: how repeated contents are chosen (writes refill then).
    pub dedupe: Option<Dedupe>,
}

/// Deduplicable write data (fio's dedupe_*): `pct` percent of the writes repeat contents.
/// Every write's contents are the fill from one seed. New contents take the next seed of a
/// sequence (the job's own, or one shared by all jobs with dedupe_global); a repeat takes
/// the latest new seed (repeat mode) or one of the sequence's first `working_set` seeds,
/// which new writes have used or will use (working_set mode), as fio's pregenerated set.
#[derive(Clone, Debug)]
pub struct Dedupe {
    pub pct: u32,
    /// Seed of the repeat/unique draws.
    pub seed: u32,
    /// Base of the sequence of content seeds.
    pub base: u32,
    /// dedupe_mode=working_set: the set's size in blocks (a share of the file's blocks).
    pub working_set: Option<u64>,
    /// dedupe_global: the sequence is shared by every job of the run.
    pub global: bool,
}

/// How the job's files are opened, kept open and closed.
#[derive(Clone, Debug)]
pub struct OpenPlan {
    pub flags: OFlags,
    /// The job writes or trims (read-write open; engines get told).
    pub writable: bool,
    /// openfiles below the number of files: open on demand within this limit.
    pub limit: Option<u32>,
    /// Read the region into the page cache at open (through a buffered descriptor).
    pub pre_read: bool,
    /// Drop the region's page cache at open and again before each further loop.
    pub invalidate: bool,
    /// fadvise advice at open.
    pub advice: Option<os::fs::Advice>,
    /// The access pattern is random (for engines that map files).
    pub random: bool,
    /// fsync a written file when it is closed, and between loops.
    pub fsync_on_close: bool,
    /// Character devices of a read job are opened read-write (fio 3.33 opened every
    /// character device O_RDWR; fio 3.34 and later open them read-only for reads).
    pub char_rdwr: bool,
    /// write_hint: (RWH_WRITE_LIFE_* value, per open file) set on each file at open.
    pub write_hint: Option<(u64, bool)>,
}

impl OpenPlan {
    /// The flags file `f` is opened with: a character device of a read job is opened
    /// read-write under fio 3.33's rules.
    pub fn flags_for(&self, f: &crate::plan::FilePlan) -> OFlags {
        if self.char_rdwr && !self.writable && f.is_char_dev() {
            (self.flags - OFlags::RDONLY) | OFlags::RDWR
        } else {
            self.flags
        }
    }
}

/// Rate limits, minimum rates and think time.
#[derive(Clone, Debug)]
pub struct PacePlan {
    /// The rate schedule as it starts (cloned per thread run).
    pub schedule: Option<Schedule>,
    /// rate_min (bytes/s) and rate_iops_min per direction, judged every `cycle_ns`.
    pub rate_min: [u64; 3],
    pub rate_iops_min: [u64; 3],
    pub cycle_ns: u64,
    /// A mixed job may switch direction to the one that is due (fio's rate_ddir): the share
    /// of reads, and whether the job mixes reads and writes.
    pub rwmixread: u32,
    pub mixed: bool,
    /// `thinkcycles`: empty loop iterations after each submission.
    pub thinkcycles: u64,
    pub think: Option<ThinkPlan>,
}

/// Think time (fio's thinktime options).
#[derive(Clone, Copy, Debug)]
pub struct ThinkPlan {
    pub think_us: u64,
    pub spin_us: u64,
    /// Pause every this many I/Os (None: not set, counts as 1 unless only iotime is set).
    pub blocks: Option<u64>,
    /// Count issued (true) or completed I/Os.
    pub blocks_issue: bool,
    /// Pause after this much I/O time (µs; 0 = not used).
    pub iotime_us: u64,
    /// The rate schedule moves on by the time spent thinking.
    pub shift_rate: bool,
    /// Spins and sleeps end with the runtime (fio 3.34+; fio 3.33 thinks them out).
    pub clip_to_runtime: bool,
}

/// Data verification.
#[derive(Clone, Debug)]
pub struct VerifyPlan {
    /// Block layout: generation, type, interval, header offset, pattern.
    pub format: crate::verify::Format,
    /// Header seed and write-sequence checks (after their automatic rules).
    pub checks: crate::verify::wlog::Checks,
    /// How the written-block log orders and replaces its blocks.
    pub order: crate::verify::wlog::Order,
    /// Seed of fio's verify stream (slot 3) and whether it is tausworthe64.
    pub seed_base: u64,
    pub seed64: bool,
    /// experimental_verify: the read-back re-generates the writes' offsets and seeds
    /// from the job's generators instead of keeping a written-block log.
    pub experimental: bool,
    /// verify_async: verifier threads (0 = check in the job thread).
    pub async_threads: u32,
    /// verify_async_cpus: the CPUs the verifier threads run on (`None`: the job's).
    pub async_cpus: Option<Vec<usize>>,
    /// The offset generator's seeded state, which the state file records as `rand` (`None`:
    /// fio records zeros, as fio 3.33 does for a job without random offsets), and whether
    /// the job draws from it (random offsets: the state moves with the writes).
    pub rand_initial: Option<crate::verify::state::RandState>,
    pub rand_tracked: bool,
    /// randrepeat: the read-back seeds the generator again (so a job that verified saves
    /// the seeded state); without it the state after the writes stays.
    pub rand_reseed: bool,
    pub do_verify: bool,
    pub verify_only: bool,
    pub fatal: bool,
    pub dump: bool,
    pub backlog: u64,
    pub backlog_batch: u64,
    /// A read-only job: every read is checked (header and checksum only).
    pub check_reads: bool,
    /// The job writes (and is not verify_only).
    pub writes: bool,
    /// iodepth and file count, as the state file records them.
    pub depth: u32,
    pub nfiles: u32,
    /// Job name (state file record).
    pub name: String,
    /// verify_state_save / verify_state_load file.
    pub state_file: PathBuf,
    /// `--aux-path`: where verify_dump writes its files (and the state file lives).
    pub aux_path: Option<String>,
    pub state_save: bool,
    pub state_load: bool,
    /// verify_policy=fsynced: only writes issued before the submission of the last fsync
    /// that completed are verified, and the state file's numberio is that threshold.
    pub fsynced: bool,
    /// Trim verification (trim_percentage with trim_backlog), if the job does it.
    pub trim: Option<TrimPlan>,
}

/// fio's trim verification: a share of the logged writes is trimmed while the job writes,
/// and the verify phase checks that those blocks read back as zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrimPlan {
    /// Percent of logged writes chosen for trimming (a draw per write, fio's trim_state).
    pub percentage: u32,
    /// A batch of trims starts once this many writes were logged since the last one
    /// started (fio 3.33: whenever the written-block log holds a multiple of this).
    pub backlog: u64,
    /// Trims per batch (trim_backlog_batch, else trim_backlog).
    pub batch: u64,
    /// trim_verify_zero: trimmed blocks are read back and must be zeros (else they are
    /// dropped from the check).
    pub zero: bool,
    /// The trim generator's seed (fio's FIO_RAND_TRIM_OFF slot) and width.
    pub seed: u64,
    pub seed64: bool,
    /// fio 3.33's rules (the log's length decides when a batch starts).
    pub fio333: bool,
}

/// Latency checks: the queue-depth search and the per-direction ceiling.
#[derive(Clone, Copy, Debug, Default)]
pub struct LatencyPlan {
    pub target: Option<LatTargetPlan>,
    /// max_latency per direction (ns; 0 = none).
    pub max_ns: [u64; 3],
}

/// latency_target, latency_window, latency_percentile, latency_run.
#[derive(Clone, Copy, Debug)]
pub struct LatTargetPlan {
    pub target_ns: u64,
    pub window_ns: u64,
    pub percentile: f64,
    pub keep_running: bool,
}

/// I/O priorities of requests.
#[derive(Clone, Debug, Default)]
pub struct PrioPlan {
    /// The thread's priority (ioprio value; 0 = not set).
    pub default: u16,
    /// cmdprio: share of requests (percent) with the command priority, per direction.
    pub cmdprio_pct: [u32; 2],
    pub cmdprio_value: [u16; 2],
    /// cmdprio_bssplit per direction: (block size, percent, priority value).
    pub cmdprio_bssplit: [Vec<(u64, u32, u16)>; 2],
    /// Record latency per priority (the job varies priorities per request), of the total
    /// latency (lat_percentiles) or the completion latency, with histograms or not.
    pub track: bool,
    pub by_total_lat: bool,
    pub hist: bool,
    pub seed: u32,
}

/// Where and how the job thread runs.
#[derive(Clone, Debug, Default)]
pub struct Placement {
    /// CPUs of this thread (one CPU with cpus_allowed_policy=split).
    pub cpus: Option<Vec<usize>>,
    pub nice: i32,
    /// `uid` / `gid`: set on the job thread first (the group while still privileged).
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// `cgroup`: the blkio cgroup the thread joins.
    pub cgroup: Option<CgroupPlan>,
    /// `numa_mem_policy`: the kernel's MPOL_* mode and its nodes.
    pub mem_policy: Option<(i32, Vec<usize>)>,
    /// I/O priority class and level (ioprio_set).
    /// `comm`: the thread's name.
    pub comm: Option<std::ffi::CString>,
    /// (class, level, hint).
    pub ioprio: Option<(u32, u32, u32)>,
}

/// A blkio cgroup (cgroup v1, as fio 3.33 uses): its name below the blkio mount, the
/// weight to set, and whether it stays after the run.
#[derive(Clone, Debug, Default)]
pub struct CgroupPlan {
    pub name: String,
    pub weight: Option<u32>,
    pub nodelete: bool,
}

/// What an I/O error does.
#[derive(Clone, Debug, Default)]
pub struct ErrorPolicy {
    /// continue_on_error classes (err_class bits).
    pub continue_on: u8,
    /// ignore_error per class (read, write, verify); None = EIO and EILSEQ.
    pub ignore: [Option<Vec<i32>>; 3],
    /// error_dump: print ignored errors too.
    pub dump: bool,
    /// Hints for the first failing request: O_DIRECT in use, polled I/O asked for.
    pub direct: bool,
    pub hipri: bool,
}

impl ErrorPolicy {
    /// Whether `errno` in error class `class` (read, write or verify) lets the job go on.
    pub fn tolerates(&self, class: u8, errno: i32) -> bool {
        let list = match class {
            err_class::READ => &self.ignore[0],
            err_class::WRITE => &self.ignore[1],
            _ => &self.ignore[2],
        };
        self.continue_on & class != 0
            && match list {
                Some(l) => l.contains(&errno),
                None => errno == libc::EIO || errno == libc::EILSEQ,
            }
    }
}

/// Which latencies the loop measures.
#[derive(Clone, Copy, Debug, Default)]
pub struct Timing {
    pub lat: bool,
    pub clat: bool,
    pub slat: bool,
    /// Synchronous engines stamp one time for start and issue, so lat equals clat: it is
    /// recorded once, as clat, and folded into lat when statistics are taken.
    pub lat_from_clat: bool,
    /// The clocks of the job's start stamp (JSON `job_start`): `job_start_clock_id`, and
    /// `log_alternate_epoch_clock_id`, whose reading fio keeps when the first id is invalid.
    pub job_start_clock: (i32, i32),
}

/// What the main thread needs of a job beyond the worker's parts.
#[derive(Clone, Debug, Default)]
pub struct Control {
    /// thread=1 (only changes the "Starting N processes" wording: jobs are threads).
    pub thread: bool,
    pub exitall: bool,
    pub exitall_on_error: bool,
    pub group_reporting: bool,
    pub disk_util: bool,
    /// The job sets a thread priority or command priorities (for scheduler notes).
    pub uses_prio: bool,
    /// Rate limits for the status line: sums of rate_min, rate, rate_iops_min, rate_iops
    /// over the job's directions.
    pub rate_sums: [u64; 4],
    /// Seconds the status line may expect: runtime + ramp + maximum start delay (µs).
    pub time_limit_us: Option<u64>,
    /// `time_based` without a runtime (fio warns).
    pub time_based_without_runtime: bool,
    /// lockfile: lock each file around its requests (None = off; Some(true) = reads share).
    pub lockfile: Option<bool>,
    /// serialize_overlap: wait for in-flight requests a new one overlaps.
    pub serialize_overlap: bool,
    /// flow control: (flow_id, weight, sleep µs) when `flow` is set.
    pub flow: Option<(u32, u64, u64)>,
    /// wait_for: the thread plans (indexes) that must end before this thread starts.
    pub wait_for: Vec<usize>,
    /// exit_what: which jobs exitall stops.
    pub exit_what: flexio_job::options::ExitWhat,
    /// exec_prerun / exec_postrun: shell commands around the job.
    pub exec_prerun: Option<String>,
    pub exec_postrun: Option<String>,
    /// clocksource: the clock the job asks for (the run takes the first job's that sets one).
    pub clocksource: Option<flexio_job::options::ClockSourceOpt>,
    /// gtod_cpu: a timekeeper thread on this CPU keeps the run's time (the first job's
    /// that sets one).
    pub gtod_cpu: Option<u32>,
}

/// Which statistics the thread keeps (histograms).
pub fn stats_config(o: &JobOptions) -> StatsConfig {
    StatsConfig {
        clat_hist: !o.disable_clat
            && (o.clat_percentiles || o.write_hist_log.is_some() || o.interval_log.is_some()),
        lat_hist: o.lat_percentiles && !o.disable_lat,
        slat_hist: o.slat_percentiles && !o.disable_slat,
        sched_hist: rate_limited(o),
        sync_hist: !o.disable_clat,
    }
}

fn rate_limited(o: &JobOptions) -> bool {
    o.rate.iter().chain(o.rate_iops.iter()).any(|r| *r > 0)
}

/// Report parameters.
pub fn report_params(o: &JobOptions, caps: &Caps) -> ReportParams {
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
        // fio: engines that count bits (net) show bits unless unit_base says otherwise.
        unit_base: if o.unit_base == 0 && caps.bit_based {
            1
        } else {
            o.unit_base
        },
        sig_figs: o.significant_figures,
        percentile_list: list,
        percentile_precision: o.percentile_precision,
        clat_percentiles: o.clat_percentiles && !o.disable_clat,
        lat_percentiles: o.lat_percentiles && !o.disable_lat,
        slat_percentiles: o.slat_percentiles && !o.disable_slat,
        // fio reports the configured depth; a latency_target search replaces it with the
        // depth it found (set from the thread's statistics when the job ends).
        latency_depth: o.iodepth,
        continue_on_error: o.continue_on_error != 0,
        unified: match o.unified_rw_reporting {
            Unified::None => report::Unified::None,
            Unified::Mixed => report::Unified::Mixed,
            Unified::Both => report::Unified::Both,
        },
        nostats_engine: caps.file_op,
        latency_target_ns: o.latency_target_ns,
        latency_window_us: o.latency_window_us,
        latency_percentile: o.latency_percentile,
    }
}

/// The job thread's engine: its name, the configuration it is built from and its
/// capabilities. The planner resolves them once per job definition ([`EnginePlan::of_job`],
/// from the job's options) and each thread adds what is its own (depth, files, seeds, clone
/// number, size). The worker builds the engine from `cfg` and reads `caps`; nothing asks an
/// engine for its capabilities again.
#[derive(Clone, Debug)]
pub struct EnginePlan {
    /// `ioengine` as given.
    pub name: String,
    pub cfg: EngineConfig,
    /// The engine's capabilities, for the job's options. An engine's capabilities depend on
    /// its own options and the job's `iodepth` only (never on what a thread adds), and the
    /// depth the "capped at 1" rule gives from them gives them again: the planner's
    /// `caps_hold_at_the_thread_depth` test holds every engine to that.
    pub caps: Caps,
}

impl EnginePlan {
    /// The engine of a job whose options name `nfiles` files (engines that take one file
    /// check it): the configured depth, no seeds yet. An engine flexio knows but does not
    /// run, or an unknown name, is refused here.
    pub fn of_job(o: &JobOptions, nfiles: u32) -> Result<EnginePlan, String> {
        flexio_engine::registry::CATALOG.check_engine(&o.ioengine)?;
        let cfg = engine_config(o, o.iodepth, nfiles, &[0; slot::COUNT]);
        let caps = flexio_engine::caps_of(&o.ioengine, &cfg)
            .ok_or_else(|| format!("unknown ioengine '{}'", o.ioengine))?;
        Ok(EnginePlan {
            name: o.ioengine.clone(),
            cfg,
            caps,
        })
    }
}

/// The engine's configuration from a job's options.
pub fn engine_config(o: &JobOptions, depth: u32, nfiles: u32, seeds: &[u64]) -> EngineConfig {
    EngineConfig {
        iodepth: depth,
        nfiles,
        advise: o.fadvise_hint != FadviseHint::Off,
        seed: seeds[slot::PRIO] as u32,
        values: o.engine.clone(),
        job_name: o.name.clone(),
        runtime_us: o.runtime_us,
        reads: o.rw.reads(),
        writes: o.rw.writes(),
        random: o.rw.is_random(),
        filename: o.filename.clone(),
        subjob: 0,
        directory: o.directory.clone(),
        number_ios: o.number_ios,
        // Set per thread by the planner (it depends on the compatibility level).
        atomic: false,
        // Set per thread by the planner (fio 3.33's libaio).
        inline_syncs: false,
        offset: match o.offset {
            flexio_job::value::SizeVal::Bytes(n) => n,
            flexio_job::value::SizeVal::Percent(_) => 0,
        },
        // Set per thread by the planner, from the thread's files.
        size: 0,
        min_bs: o.min_bs(),
        sync_blocks: o.fsync > 0 || o.fdatasync > 0,
    }
}

/// Directions a job performs.
pub fn job_dirs(o: &JobOptions) -> [bool; 3] {
    [o.rw.reads(), o.rw.writes(), o.rw.trims()]
}

/// The loop's plan.
pub fn io_plan(o: &JobOptions, caps: &Caps, depth: u32, budget: u64, seeds: &[u64]) -> IoPlan {
    let rw = o.rw;
    let time_based = o.time_based && o.runtime_us > 0;
    let writes = rw.writes();
    IoPlan {
        depth: depth.max(1),
        submit_batch: o.iodepth_batch.max(1).min(depth.max(1)),
        complete_min: o.iodepth_batch_complete_min.max(1),
        complete_max: o.iodepth_batch_complete_max,
        low: o.iodepth_low,
        budget,
        block_errors: o
            .extra
            .block_error_percentiles
            .then(|| o.min_bs_dir(2).max(1)),
        budget_dirs: match (rw.reads(), writes) {
            (true, true) => [true, true, false],
            (false, true) => [false, true, false],
            (true, false) => [true, false, false],
            _ => [false, false, true],
        },
        dirs: job_dirs(o),
        // fio's loop goes on while a job is time_based, whatever the counts say: a
        // time_based job runs to its runtime past number_ios. Its loops share number_ios
        // × loops I/Os, as they share size × loops bytes.
        number_ios: if time_based {
            0
        } else {
            o.number_ios.saturating_mul(o.loops.max(1) as u64)
        },
        number_ios_doubles: matches!(o.rw, RwKind::TrimWrite | RwKind::RandTrimWrite),
        loops: if time_based { u32::MAX } else { o.loops },
        shared_budget: false,
        issue_cap: u64::MAX,
        pass_end: None,
        pass_loops: false,
        runtime_ns: o.runtime_us * 1000,
        ramp_ns: o.ramp_time_us * 1000,
        ramp_bytes: o.newest.ramp_size.unwrap_or(0),
        ramp_tick_ns: 0,
        ramp_group: None,
        end_syncfs: o.newest.end_syncfs && writes && !caps.diskless,
        startdelay_us: o.startdelay_us,
        startdelay_seed: seeds[slot::START_DELAY] as u32,
        fsync_every: o.fsync,
        fdatasync_every: o.fdatasync,
        // A diskless engine's files have nothing to sync; the end's `sync` lines of
        // write_iolog are still written, as fio writes them.
        end_fsync: o.end_fsync && writes,
        state: match (rw.reads(), writes, rw.trims(), rw.is_random()) {
            (true, true, _, false) => RunState::MixedSeq,
            (true, true, _, true) => RunState::MixedRand,
            (true, false, _, false) => RunState::ReadSeq,
            (true, false, _, true) => RunState::ReadRand,
            (false, true, false, false) => RunState::WriteSeq,
            (false, true, false, true) => RunState::WriteRand,
            (_, _, true, false) => RunState::TrimSeq,
            _ => RunState::TrimRand,
        },
        create_only: o.create_only,
        layout_in_thread: !o.create_serialize,
        unlink: o.unlink,
        unlink_each_loop: o.unlink_each_loop,
        invalidate_on_wrap: o.invalidate && !o.direct && !o.pre_read,
        time_based,
        fill_device: o.fill_device,
        offload: o.submit_offload.then_some(depth.max(1)),
    }
}

/// How write buffers are filled.
pub fn fill_mode(o: &JobOptions) -> Fill {
    if let Some(p) = &o.buffer_pattern {
        return Fill::Pattern(p.clone());
    }
    if o.zero_buffers {
        return Fill::Zero;
    }
    match o.buffer_compress_percentage {
        Some(100) => Fill::Zero,
        Some(p) if p > 0 => Fill::Compress {
            pct: p,
            chunk: o.buffer_compress_chunk,
        },
        _ => Fill::Random,
    }
}

/// The I/O buffers.
/// `region` is the bytes of the job's file regions (the working set's share is of that).
pub fn buffer_plan(
    o: &JobOptions,
    depth: u32,
    seeds: &[u64],
    verifying: bool,
    region: u64,
) -> BufferPlan {
    let writes = o.rw.writes();
    let dedupe = (writes && o.dedupe_percentage > 0 && !verifying).then(|| Dedupe {
        pct: o.dedupe_percentage,
        seed: (seeds[slot::BUF] >> 32) as u32 ^ 0x6465_6475,
        base: if o.dedupe_global {
            0x6762_6c64
        } else {
            seeds[slot::BUF] as u32 ^ 0x7773_6574
        },
        working_set: o.dedupe_working_set.then(|| {
            (region / o.min_bs().max(1) * u64::from(o.dedupe_working_set_percentage) / 100).max(1)
        }),
        global: o.dedupe_global,
    });
    BufferPlan {
        slots: depth.max(1) as usize,
        // Trims move no data: the largest read or write sizes the slots (a replayed
        // trace's 2 GiB trim at iodepth 128 must not ask for 256 GiB). trimwrite's
        // writes cover the blocks just trimmed, at the trim's length.
        slot_size: {
            let rw = o.max_bs_dir(0).max(o.max_bs_dir(1));
            let tw = matches!(
                o.rw,
                flexio_job::options::RwKind::TrimWrite | flexio_job::options::RwKind::RandTrimWrite
            );
            if tw { rw.max(o.max_bs_dir(2)) } else { rw }.max(1) as usize
        },
        align: (o.iomem_align as usize).max(os::param::page_size()),
        thp: o.iomem_thp,
        fill: fill_mode(o),
        fill_seed: seeds[slot::BUF] as u32,
        prefill: writes && !verifying,
        // dedupe_percentage implies refill_buffers, as in fio.
        refill: writes && (o.refill_buffers || dedupe.is_some()) && !verifying,
        scramble: writes
            && o.scramble_buffers
            && !o.zero_buffers
            && o.buffer_pattern.is_none()
            && !verifying,
        dedupe,
    }
}

/// Open flags for a job's files.
pub fn open_flags(o: &JobOptions, writes: bool) -> OFlags {
    let mut f = OFlags::CLOEXEC;
    f |= if writes { OFlags::RDWR } else { OFlags::RDONLY };
    if writes && o.allow_file_create {
        f |= OFlags::CREATE;
    }
    if o.direct {
        f |= OFlags::DIRECT;
    }
    match o.sync {
        SyncMode::Sync => f |= OFlags::SYNC,
        SyncMode::Dsync => f |= OFlags::DSYNC,
        SyncMode::None => {}
    }
    f
}

/// How files are opened.
pub fn open_plan(o: &JobOptions, nfiles: usize) -> OpenPlan {
    // verify_only replays a write job without writing.
    let writable = (o.rw.writes() && !o.verify_only) || o.rw.trims();
    let advice = match o.fadvise_hint {
        _ if o.pre_read => None,
        FadviseHint::Off => None,
        FadviseHint::Random => Some(os::fs::Advice::Random),
        FadviseHint::Sequential => Some(os::fs::Advice::Sequential),
        FadviseHint::NoReuse => Some(os::fs::Advice::NoReuse),
        FadviseHint::Auto if o.rw.is_random() => Some(os::fs::Advice::Random),
        FadviseHint::Auto => Some(os::fs::Advice::Sequential),
    };
    OpenPlan {
        flags: open_flags(o, writable),
        writable,
        limit: o.openfiles.filter(|n| (*n as usize) < nfiles),
        pre_read: o.pre_read,
        invalidate: o.invalidate && !o.pre_read,
        advice,
        random: o.rw.is_random(),
        fsync_on_close: o.fsync_on_close && o.rw.writes(),
        char_rdwr: false,
        write_hint: None,
    }
}

/// Rates and think time.
pub fn pace_plan(o: &JobOptions, seeds: &[u64]) -> PacePlan {
    let schedule = rate_limited(o).then(|| {
        let min_bs = [0, 1, 2].map(|d| o.min_bs_dir(d));
        let process = if o.rate_poisson {
            Process::Poisson
        } else {
            Process::Linear
        };
        Schedule::new(
            o.rate,
            o.rate_iops,
            min_bs,
            process,
            [
                seeds[slot::POISSON],
                seeds[slot::POISSON2],
                seeds[slot::POISSON3],
            ],
        )
    });
    PacePlan {
        schedule,
        rate_min: o.rate_min,
        rate_iops_min: o.rate_iops_min,
        cycle_ns: o.rate_cycle_ms * 1_000_000,
        rwmixread: o.rwmixread,
        mixed: o.rw.reads() && o.rw.writes(),
        thinkcycles: o.newest.thinkcycles,
        think: (o.thinktime_us > 0).then_some(ThinkPlan {
            think_us: o.thinktime_us,
            spin_us: o.thinktime_spin_us.min(o.thinktime_us),
            blocks: o.thinktime_blocks,
            blocks_issue: o.thinktime_blocks_issue,
            iotime_us: o.thinktime_iotime_us,
            shift_rate: o.rate_ignore_thinktime,
            clip_to_runtime: true,
        }),
    }
}

/// What verification needs to know of the job beyond its options.
#[derive(Clone, Copy, Debug)]
pub struct VerifyCtx {
    pub thread_number: u32,
    pub depth: u32,
    pub nfiles: u32,
    /// The engine completes asynchronously (not a sync engine).
    pub async_engine: bool,
    /// io_size larger than the files' regions (blocks get written again).
    pub io_size_over_size: bool,
    /// A rate schedule paces the job.
    pub rate_limited: bool,
    pub gen: crate::verify::Generation,
}

/// Verification, if the job verifies; `Err` for a layout that cannot work.
pub fn verify_plan(
    o: &JobOptions,
    seeds: &[u64],
    c: &VerifyCtx,
) -> Result<Option<VerifyPlan>, String> {
    use crate::verify::{wlog, Format, Kind};
    use flexio_job::options::verify_code;
    if o.verify == verify_code::NONE {
        return Ok(None);
    }
    let kind = Kind::from_code(o.verify)
        .ok_or_else(|| format!("verify type {} is not supported by flexio", o.verify))?;
    let writes = o.rw.writes();
    let fixed_bs = o.min_bs_dir(1) == o.max_bs_dir(1);
    let random = o.rw.is_random();
    let facts = wlog::JobFacts {
        writes,
        mixed: writes && o.rw.reads(),
        random,
        verify_only: o.verify_only,
        verify_backlog: o.verify_backlog > 0,
        zone_reset_frequency: false,
        norandommap: random && o.norandommap,
        softrandommap: random && o.softrandommap,
        seq_holes: !random && o.rw_nr > 0,
        rand_multi: random && o.rw_nr > 1,
        io_size_over_size: c.io_size_over_size,
        async_depth: c.async_engine && c.depth > 1,
        experimental_verify: o.experimental_verify,
        fixed_bs,
        time_based: o.time_based,
        header_seed: o.verify_header_seed,
        write_sequence: o.verify_write_sequence,
    };
    let format = Format {
        gen: c.gen,
        kind,
        // fio: verify_interval defaults to the smallest write block size (one header per
        // block with a fixed size, one per smallest block with bsrange or bssplit).
        interval: if o.verify_interval > 0 {
            o.verify_interval
        } else {
            o.min_bs_dir(1)
        },
        hdr_offset: o.verify_offset,
        pattern: o.verify_pattern.clone(),
        pattern_interval: o.verify_pattern_interval,
        thread: c.thread_number as u16,
    };
    if o.experimental_verify {
        // The read-back replays each loop's generators from where the loop began (reads
        // of a mix passed over): it gives the writes again unless something outside the
        // generators chose them (a rate schedule switching a mix's direction, a backlog
        // verifying between writes).
        let why = if o.verify_backlog > 0 {
            Some("verify_backlog")
        } else if c.rate_limited && o.rw.reads() && writes {
            Some("a rate limit on a read/write mix")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(format!(
                "experimental_verify with {why} is not supported by flexio"
            ));
        }
    }
    if let Some(cpus) = &o.verify_async_cpus {
        if let Ok(set) = os::thread::sched_getaffinity(None) {
            let usable: Vec<usize> = (0..os::thread::CpuSet::MAX_CPU)
                .filter(|c| set.is_set(*c))
                .collect();
            if let Some(bad) = cpus.iter().find(|c| !usable.contains(c)) {
                return Err(format!(
                    "verify_async_cpus: CPU {bad} is not available to flexio (usable CPUs: {usable:?})"
                ));
            }
        }
    }
    let min_bs = o.min_bs_dir(1).max(1);
    if writes || o.rw.reads() {
        format.validate(if writes {
            min_bs
        } else {
            o.min_bs_dir(0).max(1)
        })?;
    }
    Ok(Some(VerifyPlan {
        format,
        checks: wlog::checks(c.gen, &facts),
        order: wlog::order(c.gen, &facts),
        seed_base: seeds[3],
        seed64: o.random_generator == flexio_job::options::RandGenOpt::Tausworthe64,
        experimental: o.experimental_verify,
        async_threads: o.verify_async,
        async_cpus: o.verify_async_cpus.clone(),
        rand_initial: (random || c.gen == crate::verify::Generation::Latest).then(|| {
            let seed = seeds[flexio_workload::rng::slot::BLOCK];
            if o.random_generator == flexio_job::options::RandGenOpt::Tausworthe64 {
                crate::verify::state::RandState::Taus258(
                    flexio_workload::rng::Taus258::new(seed).state(),
                )
            } else {
                crate::verify::state::RandState::Taus88(
                    flexio_workload::rng::Taus88::new(seed as u32).state(),
                )
            }
        }),
        rand_tracked: random,
        rand_reseed: o.randrepeat,
        do_verify: o.do_verify,
        verify_only: o.verify_only,
        fatal: o.verify_fatal,
        dump: o.verify_dump,
        backlog: o.verify_backlog,
        backlog_batch: if o.verify_backlog_batch > 0 {
            o.verify_backlog_batch
        } else {
            o.verify_backlog
        },
        check_reads: !writes && o.rw.reads(),
        writes: writes && !o.verify_only,
        depth: c.depth,
        nfiles: c.nfiles,
        name: o.name.clone(),
        state_file: crate::verify::state::path(None, &o.name, c.thread_number.saturating_sub(1)),
        aux_path: None,
        state_save: o.verify_state_save,
        state_load: o.verify_state_load,
        fsynced: o.extra.verify_fsynced,
        trim: trim_plan(o, seeds, c.gen),
    }))
}

/// fio 3.33's loop for a write job that verifies with `io_size` beyond its files' size (or
/// with holes, `rw=write:N`, whose pass moves less than `size`), when its offsets end at
/// the files' end (sequential with a last block at the end, or random with a random map):
/// each loop writes one pass over the files, then reads it back, and loops go on while the
/// bytes written and read back stay at least a block below `io_size` (with `do_verify=0`
/// it writes one pass). The newest fio wraps to the start within one loop instead.
/// `(bytes of one pass, loops)`, or `None` when the rule does not apply. `spec` is the
/// job's workload without wrapping at the files' end.
pub fn fio333_verify_passes(
    o: &JobOptions,
    spec: &flexio_workload::Spec,
    region_total: u64,
    io_size: u64,
) -> Option<(u64, u32)> {
    let applies = o.verify != flexio_job::options::verify_code::NONE
        && o.rw.writes()
        && !o.rw.reads()
        && !o.rw.trims()
        && !(o.rw.is_random() && o.norandommap)
        && o.loops == 1
        && (io_size > region_total || (o.rw_nr > 0 && !o.rw.is_random()));
    if !applies {
        return None;
    }
    // One pass: what the offsets give before the files' end. Offsets that never reach it
    // (holes that step past the end start over) make one loop of io_size bytes, as the
    // job runs anyway.
    let mut g = flexio_workload::Generator::new(spec.clone());
    let mut pass = 0u64;
    while pass < io_size {
        match g.next_io() {
            Some(io) if io.ddir == 1 => pass += io.len,
            Some(_) => {}
            None => break,
        }
    }
    if pass == 0 || pass >= io_size {
        return None;
    }
    if !o.do_verify && !o.verify_only {
        return Some((pass, 1));
    }
    // Loop r (writes and read-back, 2 x pass each) is the last once the bytes moved exceed
    // io_size - max_bs.
    let per_loop = pass.saturating_mul(2);
    let loops = io_size.saturating_sub(o.max_bs()) / per_loop + 1;
    if loops == 1 && io_size <= region_total {
        // One loop, as the job would run anyway.
        return None;
    }
    Some((pass, u32::try_from(loops).unwrap_or(u32::MAX)))
}

/// Trim verification: fio issues trims when the job verifies with both trim_percentage and
/// trim_backlog set, for the writes it logs (not verify_only or experimental_verify's
/// replay; fio 3.33 logs only with do_verify, the newest fio also without).
fn trim_plan(o: &JobOptions, seeds: &[u64], gen: crate::verify::Generation) -> Option<TrimPlan> {
    let logged = o.rw.writes()
        && !o.verify_only
        && !o.experimental_verify
        && (o.do_verify || gen == crate::verify::Generation::Latest);
    (o.trim_backlog > 0 && o.trim_percentage > 0 && logged).then(|| TrimPlan {
        percentage: o.trim_percentage,
        backlog: o.trim_backlog,
        batch: if o.trim_backlog_batch > 0 {
            o.trim_backlog_batch
        } else {
            o.trim_backlog
        },
        zero: o.trim_verify_zero,
        seed: seeds[flexio_workload::rng::slot::TRIM],
        // The newest fio's trim generator is always 32-bit tausworthe.
        seed64: gen == crate::verify::Generation::Fio333
            && o.random_generator == flexio_job::options::RandGenOpt::Tausworthe64,
        fio333: gen == crate::verify::Generation::Fio333,
    })
}

/// Latency target and ceilings.
pub fn latency_plan(o: &JobOptions) -> LatencyPlan {
    LatencyPlan {
        target: (o.latency_target_ns > 0).then_some(LatTargetPlan {
            target_ns: o.latency_target_ns,
            window_ns: o.latency_window_us * 1000,
            percentile: o.latency_percentile,
            keep_running: o.latency_run,
        }),
        max_ns: o.max_latency_us.map(|us| us * 1000),
    }
}

/// The I/O priority value requests carry by default (the thread's; 0 when not set).
pub fn default_ioprio(o: &JobOptions) -> u16 {
    let hint = o.newest.priohint.unwrap_or(0) << 3;
    match (o.prioclass, o.prio) {
        (None, None) => hint as u16,
        (c, l) => ((c.unwrap_or(2) << 13) | hint | l.unwrap_or(4)) as u16,
    }
}

/// Request priorities.
pub fn prio_plan(o: &JobOptions, seeds: &[u64]) -> PrioPlan {
    let cmd = flexio_engine::cmdprio::CmdprioOpts::from_values(&o.engine);
    PrioPlan {
        default: default_ioprio(o),
        cmdprio_pct: cmd.cmdprio_percentage,
        cmdprio_value: cmd.values(),
        cmdprio_bssplit: cmd.bssplit_values(),
        track: cmd.active(),
        by_total_lat: o.lat_percentiles,
        hist: o.clat_percentiles || o.lat_percentiles,
        seed: seeds[slot::PRIO] as u32,
    }
}

/// CPU placement and thread priorities of thread `thread_number` (1-based).
pub fn placement(o: &JobOptions, thread_number: u32) -> Placement {
    Placement {
        cpus: o.cpus_allowed.as_ref().map(|cpus| {
            if o.cpus_split && !cpus.is_empty() {
                // One CPU per thread, round robin over the set.
                vec![cpus[(thread_number as usize - 1) % cpus.len()]]
            } else {
                cpus.clone()
            }
        }),
        nice: o.nice,
        uid: o.uid,
        gid: o.gid,
        mem_policy: None,
        cgroup: o.cgroup.as_ref().map(|name| CgroupPlan {
            name: name.clone(),
            weight: o.cgroup_weight,
            nodelete: o.cgroup_nodelete,
        }),
        comm: o
            .newest
            .comm
            .as_deref()
            .and_then(|c| std::ffi::CString::new(c.as_bytes()).ok()),
        // fio: a priority hint alone also sets the priority (class 0 is best effort).
        ioprio: (o.prio.is_some() || o.prioclass.is_some() || o.newest.priohint.is_some()).then(
            || {
                (
                    o.prioclass.unwrap_or(if o.prio.is_some() { 2 } else { 0 }),
                    o.prio.unwrap_or(if o.prioclass.is_some() { 4 } else { 0 }),
                    o.newest.priohint.unwrap_or(0),
                )
            },
        ),
    }
}

/// Error handling.
pub fn error_policy(o: &JobOptions) -> ErrorPolicy {
    ErrorPolicy {
        continue_on: o.continue_on_error,
        ignore: o.ignore_error.clone(),
        dump: o.error_dump,
        direct: o.direct,
        hipri: o.engine.get::<bool>("hipri").copied().unwrap_or(false),
    }
}

/// Which latencies are measured.
pub fn timing(o: &JobOptions, caps: &Caps, cfg: &StatsConfig) -> Timing {
    Timing {
        lat: !o.disable_lat && !caps.file_op,
        clat: !o.disable_clat,
        slat: !o.disable_slat && !caps.no_slat,
        lat_from_clat: !o.disable_lat
            && !o.disable_clat
            && caps.syncio
            && !caps.file_op
            && (!cfg.lat_hist || cfg.clat_hist),
        job_start_clock: (o.newest.job_start_clock_id, o.log_alternate_epoch_clock_id),
    }
}

/// The main thread's view of the job.
pub fn control(o: &JobOptions) -> Control {
    let cmd = flexio_engine::cmdprio::CmdprioOpts::from_values(&o.engine);
    // fio's status line adds the limits of the directions the job does (`rate=100m` sets
    // all three, a read job is limited to 100 MiB/s, not 300).
    let dirs = [o.rw.reads(), o.rw.writes(), o.rw.trims()];
    let sum = |a: &[u64; 3]| {
        a.iter()
            .zip(dirs)
            .filter(|(_, on)| *on)
            .map(|(v, _)| *v)
            .sum::<u64>()
    };
    Control {
        thread: o.thread,
        exitall: o.exitall,
        exitall_on_error: o.exitall_on_error,
        group_reporting: o.group_reporting,
        disk_util: o.disk_util,
        uses_prio: o.prio.is_some() || o.prioclass.is_some() || cmd.active(),
        rate_sums: [
            sum(&o.rate_min),
            sum(&o.rate),
            sum(&o.rate_iops_min),
            sum(&o.rate_iops),
        ],
        time_limit_us: (o.runtime_us > 0)
            .then_some(o.runtime_us + o.ramp_time_us + o.startdelay_us.1),
        time_based_without_runtime: o.time_based && o.runtime_us == 0,
        lockfile: match o.lockfile {
            flexio_job::options::LockMode::None => None,
            flexio_job::options::LockMode::Exclusive => Some(false),
            flexio_job::options::LockMode::ReadWrite => Some(true),
        },
        serialize_overlap: o.serialize_overlap,
        flow: (o.flow > 0).then_some((o.flow_id, o.flow, o.flow_sleep_us)),
        wait_for: Vec::new(),
        exit_what: o.exit_what,
        exec_prerun: o.exec_prerun.clone(),
        exec_postrun: o.exec_postrun.clone(),
        clocksource: o.clocksource,
        gtod_cpu: o.extra.gtod_cpu,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_line_rate_limits_count_the_job_directions() {
        // rate=100m (all three directions) on a read job: 100 MiB/s (fio 3.33's line).
        let o = JobOptions {
            rate: [100 << 20; 3],
            rate_iops_min: [10; 3],
            ..Default::default()
        };
        assert_eq!(control(&o).rate_sums, [0, 100 << 20, 10, 0]);
        let o = JobOptions {
            rw: flexio_job::options::RwKind::RandRw,
            rate: [100 << 20, 50 << 20, 7],
            ..Default::default()
        };
        assert_eq!(control(&o).rate_sums[1], 150 << 20);
        let o = JobOptions {
            rw: flexio_job::options::RwKind::TrimWrite,
            rate_iops: [1, 2, 4],
            ..Default::default()
        };
        assert_eq!(control(&o).rate_sums[3], 6);
    }

    #[test]
    fn open_plan_decides_flags_and_limits() {
        let o = JobOptions {
            direct: true,
            openfiles: Some(4),
            ..Default::default()
        };
        let p = open_plan(&o, 10);
        assert!(p.flags.contains(OFlags::DIRECT) && !p.writable);
        assert_eq!(p.limit, Some(4));
        // A limit at or above the number of files opens everything up front.
        assert_eq!(open_plan(&o, 4).limit, None);
        let o = JobOptions {
            rw: flexio_job::options::RwKind::Write,
            verify_only: true,
            ..Default::default()
        };
        assert!(!open_plan(&o, 1).writable, "verify_only writes nothing");
    }

    #[test]
    fn character_devices_of_read_jobs_open_read_write_under_fio_3_33() {
        let file = |block| crate::plan::FilePlan {
            path: "/dev/zero".into(),
            need: 0,
            region: flexio_workload::Region {
                start: 0,
                len: 4096,
            },
            block,
            seen: None,
        };
        let chr = file(Some(crate::blockdev::BlockInfo::char_device(
            std::path::Path::new("/dev/zero"),
        )));
        let reg = file(None);
        let newest = open_plan(&JobOptions::default(), 1);
        assert!(newest.flags_for(&chr).contains(OFlags::RDONLY));
        assert!(!newest.flags_for(&chr).contains(OFlags::RDWR));
        let old = OpenPlan {
            char_rdwr: true,
            ..newest
        };
        assert!(old.flags_for(&chr).contains(OFlags::RDWR));
        assert!(
            !old.flags_for(&reg).contains(OFlags::RDWR),
            "regular files stay"
        );
    }

    #[test]
    fn io_plan_budget_directions_and_loops() {
        let o = JobOptions {
            rw: flexio_job::options::RwKind::TrimWrite,
            time_based: true,
            runtime_us: 1_000_000,
            iodepth_batch: 64,
            ..Default::default()
        };
        let p = io_plan(&o, &Caps::default(), 8, u64::MAX, &[0; slot::COUNT]);
        assert_eq!(p.budget_dirs, [false, true, false]);
        assert_eq!(p.loops, u32::MAX);
        assert_eq!(p.submit_batch, 8, "batch capped by the depth");
    }

    #[test]
    fn errors_tolerated_per_class() {
        let mut o = JobOptions {
            continue_on_error: err_class::READ,
            ..Default::default()
        };
        let p = error_policy(&o);
        assert!(p.tolerates(err_class::READ, libc::EIO));
        assert!(!p.tolerates(err_class::WRITE, libc::EIO));
        assert!(!p.tolerates(err_class::READ, libc::ENOSPC));
        o.ignore_error[0] = Some(vec![libc::ENOSPC]);
        assert!(error_policy(&o).tolerates(err_class::READ, libc::ENOSPC));
    }

    #[test]
    fn split_placement_gives_each_thread_one_cpu() {
        let o = JobOptions {
            cpus_allowed: Some(vec![0, 1]),
            cpus_split: true,
            ..Default::default()
        };
        assert_eq!(placement(&o, 1).cpus, Some(vec![0]));
        assert_eq!(placement(&o, 2).cpus, Some(vec![1]));
        assert_eq!(placement(&o, 3).cpus, Some(vec![0]));
    }
}
