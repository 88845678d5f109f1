//! Typed job options: the result of applying option lines to a job (stage two of the
//! configuration; stage one is raw text, stage three is the resolved plan).
//!
//! Defaults are fio 3.33's (`fio --cmdhelp=<opt>`). Times are stored in microseconds.

pub use crate::bssplit::BsSplit;
pub use crate::pattern::VerifyPattern;
use crate::value::{KbBase, SizeVal};

/// I/O direction index used for per-direction arrays: read, write, trim.
pub const DDIR_READ: usize = 0;
pub const DDIR_WRITE: usize = 1;
pub const DDIR_TRIM: usize = 2;

/// The `rw` pattern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RwKind {
    Read,
    Write,
    Trim,
    RandRead,
    RandWrite,
    RandTrim,
    ReadWrite,
    RandRw,
    TrimWrite,
    RandTrimWrite,
}

impl RwKind {
    /// All accepted spellings, with fio's help text (order as in `fio --cmdhelp=rw`).
    pub const CHOICES: &'static [(&'static str, &'static str)] = &[
        ("read", "Sequential read"),
        ("write", "Sequential write"),
        ("trim", "Sequential trim"),
        ("randread", "Random read"),
        ("randwrite", "Random write"),
        ("randtrim", "Random trim"),
        ("rw", "Sequential read and write mix"),
        ("readwrite", "Sequential read and write mix"),
        ("randrw", "Random read and write mix"),
        ("trimwrite", "Trim and write mix, trims preceding writes"),
        (
            "randtrimwrite",
            "Randomly trim and write mix, trims preceding writes",
        ),
    ];

    pub fn from_name(s: &str) -> Option<RwKind> {
        Some(match s {
            "read" => RwKind::Read,
            "write" => RwKind::Write,
            "trim" => RwKind::Trim,
            "randread" => RwKind::RandRead,
            "randwrite" => RwKind::RandWrite,
            "randtrim" => RwKind::RandTrim,
            "rw" | "readwrite" => RwKind::ReadWrite,
            "randrw" => RwKind::RandRw,
            "trimwrite" => RwKind::TrimWrite,
            "randtrimwrite" => RwKind::RandTrimWrite,
            _ => return None,
        })
    }

    /// fio's `ddir_str()` (what the job header prints).
    pub fn as_str(self) -> &'static str {
        match self {
            RwKind::Read => "read",
            RwKind::Write => "write",
            RwKind::Trim => "trim",
            RwKind::RandRead => "randread",
            RwKind::RandWrite => "randwrite",
            RwKind::RandTrim => "randtrim",
            RwKind::ReadWrite => "rw",
            RwKind::RandRw => "randrw",
            RwKind::TrimWrite => "trimwrite",
            RwKind::RandTrimWrite => "randtrimwrite",
        }
    }

    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwKind::RandRead
                | RwKind::RandWrite
                | RwKind::RandTrim
                | RwKind::RandRw
                | RwKind::RandTrimWrite
        )
    }
    pub fn reads(self) -> bool {
        matches!(
            self,
            RwKind::Read | RwKind::RandRead | RwKind::ReadWrite | RwKind::RandRw
        )
    }
    pub fn writes(self) -> bool {
        matches!(
            self,
            RwKind::Write
                | RwKind::RandWrite
                | RwKind::ReadWrite
                | RwKind::RandRw
                | RwKind::TrimWrite
                | RwKind::RandTrimWrite
        )
    }
    pub fn trims(self) -> bool {
        matches!(
            self,
            RwKind::Trim | RwKind::RandTrim | RwKind::TrimWrite | RwKind::RandTrimWrite
        )
    }
    pub fn is_mixed_rw(self) -> bool {
        matches!(self, RwKind::ReadWrite | RwKind::RandRw)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sequencer {
    Sequential,
    Identical,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncMode {
    None,
    Sync,
    Dsync,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallocate {
    None,
    Native,
    Posix,
    Keep,
    Truncate,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FadviseHint {
    Off,
    /// `1`: sequential or random advice chosen from the workload.
    Auto,
    Sequential,
    Random,
    /// POSIX_FADV_NOREUSE (fio 3.35+).
    NoReuse,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FileService {
    Random,
    RoundRobin,
    Sequential,
    /// zipf, pareto, normal/gauss: fio's non-uniform file choice.
    Dist(flexio_workload::fileservice::FileDist),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unified {
    None,
    Mixed,
    Both,
}

/// Error classes for `continue_on_error` (bit set).
pub mod err_class {
    pub const READ: u8 = 1;
    pub const WRITE: u8 = 2;
    pub const VERIFY: u8 = 4;
    pub const IO: u8 = READ | WRITE;
    pub const ALL: u8 = READ | WRITE | VERIFY;
}

/// fio's verify header type codes (`verify_type` in the block header).
pub mod verify_code {
    pub const NONE: u16 = 0;
    pub const META: u16 = 1;
    pub const MD5: u16 = 2;
    pub const CRC64: u16 = 3;
    pub const CRC32: u16 = 4;
    pub const CRC32C: u16 = 5;
    pub const CRC16: u16 = 7;
    pub const CRC7: u16 = 8;
    pub const SHA256: u16 = 9;
    pub const SHA512: u16 = 10;
    pub const SHA3_224: u16 = 11;
    pub const SHA3_256: u16 = 12;
    pub const SHA3_384: u16 = 13;
    pub const SHA3_512: u16 = 14;
    pub const XXHASH: u16 = 15;
    pub const SHA1: u16 = 16;
    /// `pattern_hdr`: header, then `verify_pattern` (what `verify_pattern` alone selects).
    pub const PATTERN_HDR: u16 = 17;
    /// `pattern`: the block holds only `verify_pattern`, no header.
    pub const PATTERN: u16 = 18;
    pub const NULL: u16 = 19;
}

/// `random_generator`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RandGenOpt {
    Tausworthe,
    Lfsr,
    Tausworthe64,
}

/// `zonemode`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZoneMode {
    None,
    Strided,
    /// Zoned block devices (emulated on regular files).
    Zbd,
}

pub use flexio_workload::dist::Dist;

/// All options of one job (or of the global defaults a job is copied from).
#[derive(Clone, Debug)]
pub struct JobOptions {
    // --- job / process control
    pub name: String,
    pub description: Option<String>,
    pub numjobs: u32,
    pub loops: u32,
    pub thread: bool,
    pub stonewall: bool,
    pub new_group: bool,
    pub group_reporting: bool,
    pub exitall: bool,
    /// wait_for: the job (by name, defined before) whose threads must all end before this
    /// one starts.
    pub wait_for: Option<String>,
    /// flow / flow_id / flow_sleep: weighted flow control between jobs.
    pub flow: u64,
    pub flow_id: u32,
    pub flow_sleep_us: u64,
    /// exit_what: which jobs exitall stops.
    pub exit_what: ExitWhat,
    /// Shell commands run before and after the job (fio's exec_prerun / exec_postrun).
    pub exec_prerun: Option<String>,
    pub exec_postrun: Option<String>,
    pub exitall_on_error: bool,
    pub stats: bool,
    pub kb_base: KbBase,
    /// 0 = auto (bytes), 8 = bytes, 1 = bits.
    pub unit_base: u32,
    pub significant_figures: u32,

    // --- I/O type
    pub rw: RwKind,
    /// `:N` postfix of `rw` (0 = none).
    pub rw_nr: u64,
    /// `rw=read:-N`: sequential I/O steps back N bytes from the end of each I/O.
    pub rw_back: u64,
    pub rw_sequencer: Sequencer,
    /// Read share of a mixed workload, percent.
    pub rwmixread: u32,
    pub randrepeat: bool,
    pub randseed: Option<u64>,
    pub allrandrepeat: bool,
    /// Set when `allrandrepeat` was the last of `randrepeat`/`allrandrepeat` given: the
    /// newest fio makes it an alias of `randrepeat`, so its value then wins.
    pub allrandrepeat_last: bool,
    pub norandommap: bool,
    /// softrandommap: run without the random map when it cannot be allocated.
    pub softrandommap: bool,
    pub random_generator: RandGenOpt,
    /// Offset distribution per direction.
    pub random_distribution: [Dist; 3],
    /// Percent of random I/Os in random workloads, per direction.
    pub percentage_random: [u32; 3],
    pub zonemode: ZoneMode,
    pub zonesize: u64,
    pub zonerange: u64,
    pub zoneskip: u64,
    pub unified_rw_reporting: Unified,
    pub direct: bool,
    pub sync: SyncMode,
    pub number_ios: u64,

    // --- sizes and offsets
    pub size: Option<SizeVal>,
    pub io_size: Option<SizeVal>,
    pub filesize: Option<(u64, u64)>,
    pub offset: SizeVal,
    pub offset_increment: SizeVal,
    pub offset_align: u64,
    pub overwrite: bool,
    pub file_append: bool,
    pub fill_device: bool,

    // --- block sizes (read, write, trim)
    pub bs: [u64; 3],
    pub bsrange: Option<[(u64, u64); 3]>,
    pub bssplit: Option<[Vec<BsSplit>; 3]>,
    pub blockalign: Option<[u64; 3]>,
    pub bs_unaligned: bool,
    pub bs_is_seq_rand: bool,

    // --- buffers
    pub zero_buffers: bool,
    /// flexio: I/O buffers of 1 MiB or more on transparent huge pages.
    pub iomem_thp: bool,
    pub refill_buffers: bool,
    pub scramble_buffers: bool,
    /// dedupe_percentage: this share of the written buffers repeat earlier contents.
    pub dedupe_percentage: u32,
    /// dedupe_mode=working_set (else repeat).
    pub dedupe_working_set: bool,
    pub dedupe_working_set_percentage: u32,
    pub dedupe_global: bool,
    pub buffer_pattern: Option<Vec<u8>>,
    pub buffer_compress_percentage: Option<u32>,
    pub buffer_compress_chunk: u64,
    pub iomem_align: u64,

    // --- files
    pub filename: Option<String>,
    pub directory: Option<String>,
    pub filename_format: String,
    pub nrfiles: u32,
    pub openfiles: Option<u32>,
    pub file_service: FileService,
    /// `file_service_type=type:N`: switch files every N I/Os.
    pub file_service_nr: u64,
    pub create_serialize: bool,
    pub create_fsync: bool,
    pub create_on_open: bool,
    pub create_only: bool,
    pub allow_file_create: bool,
    pub allow_mounted_write: bool,
    pub pre_read: bool,
    pub unlink: bool,
    pub unlink_each_loop: bool,
    pub fallocate: Fallocate,
    pub fadvise_hint: FadviseHint,
    pub invalidate: bool,

    // --- engine and queue
    pub ioengine: String,
    pub iodepth: u32,
    pub iodepth_batch: u32,
    pub iodepth_batch_complete_min: u32,
    pub iodepth_batch_complete_max: Option<u32>,
    pub iodepth_low: Option<u32>,

    // --- time
    pub runtime_us: u64,
    pub time_based: bool,
    pub ramp_time_us: u64,
    pub startdelay_us: (u64, u64),

    // --- sync
    pub fsync: u64,
    pub fdatasync: u64,
    pub end_fsync: bool,
    pub fsync_on_close: bool,

    // --- reporting
    pub percentile_list: Vec<f64>,
    pub percentile_precision: usize,
    pub clat_percentiles: bool,
    pub lat_percentiles: bool,
    pub slat_percentiles: bool,
    pub disable_lat: bool,
    pub disable_clat: bool,
    pub disable_slat: bool,
    pub disable_bw: bool,
    pub gtod_reduce: bool,
    pub bwavgtime_ms: u64,
    pub iopsavgtime_ms: u64,
    /// bwavgtime / iopsavgtime were set (fio's fio_option_is_set): with a windowed bw or
    /// IOPS log, an unset one takes log_avg_msec.
    pub bwavgtime_set: bool,
    pub iopsavgtime_set: bool,
    pub disk_util: bool,

    // --- errors
    pub continue_on_error: u8,
    /// `ignore_error`: errnos treated as non-fatal per class (read, write, verify); `None`
    /// keeps fio's default (EIO and EILSEQ in every class).
    pub ignore_error: [Option<Vec<i32>>; 3],
    /// `error_dump`: log every error, including the ones continue_on_error ignores.
    pub error_dump: bool,

    // --- verification
    /// `verify`: fio's header type code (0 = none, see [`verify_code`]).
    pub verify: u16,
    pub do_verify: bool,
    pub verify_only: bool,
    /// Bytes covered by one header; 0 = the smallest write block size.
    pub verify_interval: u64,
    pub verify_offset: u64,
    pub verify_pattern: Option<VerifyPattern>,
    pub verify_fatal: bool,
    pub verify_dump: bool,
    pub verify_backlog: u64,
    pub verify_backlog_batch: u64,
    /// Trim verification: `trim_percentage` of the logged writes are trimmed, in batches
    /// of `trim_backlog_batch` (0 = `trim_backlog`) once `trim_backlog` blocks are logged;
    /// `trim_verify_zero`: a trimmed block must read back as zeros.
    pub trim_percentage: u32,
    pub trim_backlog: u64,
    pub trim_backlog_batch: u64,
    pub trim_verify_zero: bool,
    /// `trim_mode=punch` (flexio): trims are fallocate(PUNCH_HOLE|KEEP_SIZE), not
    /// BLKDISCARD.
    pub trim_punch: bool,
    pub verify_state_save: bool,
    pub verify_state_load: bool,
    /// `verify_pattern_interval` (bytes; 0 = the whole block).
    pub verify_pattern_interval: u64,
    /// `verify_header_seed` / `verify_write_sequence`: `None` = the automatic rule.
    pub verify_header_seed: Option<bool>,
    pub verify_write_sequence: Option<bool>,
    /// `experimental_verify`: the read-back re-generates the written offsets.
    pub experimental_verify: bool,
    /// `verify_async`: verifier threads.
    pub verify_async: u32,
    /// `verify_async_cpus`: CPUs the verifier threads may run on.
    pub verify_async_cpus: Option<Vec<usize>>,

    // --- engine-private options (typed, owned by the engines)
    pub engine: crate::engine_values::EngineValues,

    // --- priorities and placement
    /// I/O priority level 0-7 (ioprio_set), with `prioclass`.
    pub prio: Option<u32>,
    /// I/O priority class: 0 none, 1 real-time, 2 best-effort, 3 idle.
    pub prioclass: Option<u32>,
    pub nice: i32,
    /// `uid` / `gid`: the job thread's user and group ids (set before it does any work).
    pub uid: Option<u32>,
    pub gid: Option<u32>,
    /// `cgroup` (a blkio cgroup the job thread joins, created if need be), `cgroup_weight`,
    /// `cgroup_nodelete`.
    pub cgroup: Option<String>,
    pub cgroup_weight: Option<u32>,
    pub cgroup_nodelete: bool,
    /// `numa_cpu_nodes` / `numa_mem_policy`.
    pub numa_cpu_nodes: Option<crate::cpus::Nodes>,
    pub numa_mem_policy: Option<crate::cpus::MemPolicy>,
    /// CPUs the job may run on (cpus_allowed / cpumask).
    pub cpus_allowed: Option<Vec<usize>>,
    /// cpus_allowed_policy=split: each thread gets one CPU of the set.
    pub cpus_split: bool,

    // --- rate, think time, latency target
    /// Bytes/s caps and floors per direction.
    pub rate: [u64; 3],
    pub rate_min: [u64; 3],
    pub rate_iops: [u64; 3],
    pub rate_iops_min: [u64; 3],
    pub rate_poisson: bool,
    pub rate_cycle_ms: u64,
    pub rate_ignore_thinktime: bool,
    pub thinktime_us: u64,
    pub thinktime_spin_us: u64,
    /// None: not set (counts as 1, but thinktime_iotime alone then ignores it).
    pub thinktime_blocks: Option<u64>,
    /// thinktime_blocks counts issued (true) or completed (false) I/Os.
    pub thinktime_blocks_issue: bool,
    pub thinktime_iotime_us: u64,
    /// Latency target (ns), window (µs), percentile, keep adjusting.
    pub latency_target_ns: u64,
    pub latency_window_us: u64,
    pub latency_percentile: f64,
    pub latency_run: bool,
    /// Per-direction total-latency ceiling (µs; 0 = none).
    pub max_latency_us: [u64; 3],
    /// clocksource: None = the default (TSC where usable).
    pub clocksource: Option<ClockSourceOpt>,

    // --- steady state
    pub ss: SsCriterion,
    /// Window length, delay before collecting, sample period (µs). ss_dur 0 = off.
    pub ss_dur_us: u64,
    pub ss_ramp_us: u64,
    pub ss_interval_us: u64,
    /// flexio: `ss_ramp=auto`, the warm-up's end found from the data (MSER-5).
    pub ss_ramp_auto: bool,
    /// flexio: `ss_departure=flag|stop`, departures watched once attained.
    pub ss_departure: Option<SsDeparture>,
    /// flexio: `ss_band`, the steady band's half-width (% of the level).
    pub ss_band_pct: f64,
    /// flexio: `ss_departure_window`, how long outside the band makes a departure (µs; 0:
    /// `ss_dur`).
    pub ss_departure_window_us: u64,
    /// flexio: `ss_direction`, which direction's samples steady state judges.
    pub ss_direction: SsDirection,

    // --- logs
    /// Log prefixes (empty = the job name).
    pub write_bw_log: Option<String>,
    pub write_lat_log: Option<String>,
    pub write_iops_log: Option<String>,
    pub write_hist_log: Option<String>,
    pub log_avg_msec: u64,
    /// log_window_value (3.33's log_max_value): what a log_avg_msec window logs.
    pub log_window: LogWindow,
    /// log_issue_time: a trailing issue-time column in clat and slat logs.
    pub log_issue_time: bool,
    /// log_unix_epoch / log_alternate_epoch: log times from a clock's epoch.
    pub log_unix_epoch: bool,
    pub log_alternate_epoch: bool,
    pub log_alternate_epoch_clock_id: i32,
    /// log_compression: bytes of samples per compressed chunk (0 = off).
    pub log_compression: u64,
    pub log_store_compressed: bool,
    pub log_compression_cpus: Option<Vec<usize>>,
    pub log_offset: bool,
    pub log_prio: bool,
    pub per_job_logs: bool,
    pub log_hist_msec: u64,
    pub log_hist_coarseness: u32,
    pub log_entries: u64,
    /// flexio: per-interval JSON Lines stream (path) and its interval.
    pub interval_log: Option<String>,
    pub interval_log_msec: u64,

    // --- trace capture and replay
    pub iolog: IologOpts,
    /// unique_filename: prefix generated names with the client's address (client/server
    /// mode only).
    pub unique_filename: bool,
    /// opendir: every regular file below this directory is one of the job's files.
    pub opendir: Option<String>,
    /// serialize_overlap: no request is issued while an overlapping one is in flight.
    pub serialize_overlap: bool,
    /// lockfile: lock a file (by name, across jobs) around each request.
    pub lockfile: LockMode,
    /// Options fio added from 3.34 to 3.42.
    pub newest: crate::newest::NewestOptions,
    /// Buffer memory, lockmem, write_hint, ioscheduler, sync_file_range.
    pub sysio: crate::sysio::SysIoOptions,
    /// zonemode=zbd's options.
    pub zbd: crate::zbd::ZbdOptions,
    /// io_submit_mode=offload: requests are handed to a submitter thread.
    pub submit_offload: bool,
    /// write_barrier, atomic, gtod_cpu, block_error_percentiles, profile.
    pub extra: crate::extra::ExtraOptions,
    /// The fio the job is read for (set by the loader before any option): values fio
    /// added to an option after 3.33 are bad values under fio 3.33 (`steadystate=lat`,
    /// `fadvise_hint=noreuse`, hex `ignore_error`, patterns over 512 bytes, ...).
    pub compat: crate::Compat,
}

/// lockfile: how requests to a file shared by jobs are serialized.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LockMode {
    #[default]
    None,
    /// One request at a time.
    Exclusive,
    /// Reads together, writes alone.
    ReadWrite,
}

/// exit_what: which jobs a job with exitall stops when it finishes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ExitWhat {
    /// The jobs of its reporting group.
    #[default]
    Group,
    /// Every running job; the next stonewall segment still runs.
    Stonewall,
    /// Everything: no further segment runs.
    All,
}

/// What a windowed (log_avg_msec) log entry holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogWindow {
    Avg,
    Max,
    /// Both: the mean, then the maximum in a second value column.
    Both,
}

/// Trace capture (`write_iolog`) and replay (`read_iolog`, `replay_*`, `merge_blktrace_*`).
#[derive(Clone, Debug, PartialEq)]
pub struct IologOpts {
    pub write: Option<String>,
    /// `:`-separated per clone (fio's `get_name_by_idx`).
    pub read: Option<String>,
    pub chunked: bool,
    pub no_stall: bool,
    pub redirect: Option<String>,
    /// Offsets are aligned down to this (0 = off).
    pub align: u64,
    /// Offsets are divided by this (fio's default 1).
    pub scale: u64,
    /// Delays are scaled by 100 / this.
    pub time_scale: u64,
    /// Bit per direction skipped: read 0, write 1, trim 2, sync 3.
    pub skip: u8,
    pub merge_file: Option<String>,
    pub merge_scalars: Vec<f64>,
    pub merge_iters: Vec<f64>,
}

impl Default for IologOpts {
    fn default() -> Self {
        IologOpts {
            write: None,
            read: None,
            chunked: false,
            no_stall: false,
            redirect: None,
            align: 0,
            scale: 1,
            time_scale: 100,
            skip: 0,
            merge_file: None,
            merge_scalars: Vec::new(),
            merge_iters: Vec::new(),
        }
    }
}

/// fio 3.33's default percentile list.
pub const DEFAULT_PERCENTILES: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];

/// fio's `clocksource`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClockSourceOpt {
    Gettimeofday,
    ClockGettime,
    Cpu,
}

/// Which samples steady state judges (flexio's `ss_direction`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SsDirection {
    /// Every direction pooled (fio).
    #[default]
    All,
    /// One direction's own (0 read, 1 write, 2 trim).
    One(usize),
    /// Every direction that does I/O, each in its own window; attained when all are.
    Each,
}

/// What leaving steady state does (flexio's `ss_departure`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsDeparture {
    /// Record it, keep running.
    Flag,
    /// Record it and stop the job.
    Stop,
}

/// A steady-state criterion, `metric[_slope]:limit[%]` (fio's `ss`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SsCriterion {
    /// IOPS (true) or bandwidth in bytes/s (false); see `lat`.
    pub iops: bool,
    /// Mean completion latency in ns (fio 3.42's `lat`, `lat_slope`; `iops` is then false).
    pub lat: bool,
    /// Least-squares slope (true) or maximum deviation from the mean (false).
    pub slope: bool,
    pub limit: f64,
    /// The limit is a percentage of the window's mean.
    pub pct: bool,
}

impl Default for SsCriterion {
    fn default() -> Self {
        SsCriterion {
            iops: true,
            lat: false,
            slope: true,
            limit: 0.01,
            pct: true,
        }
    }
}

impl SsCriterion {
    /// Parse fio's `ss` value, e.g. `iops_slope:0.1%`, `bw:10M`, `iops:2%`, and (fio 3.42,
    /// not under `compat` 3.33) `lat:250`, `lat_slope:5%`.
    pub fn parse(s: &str, kb: KbBase, compat: crate::Compat) -> Result<SsCriterion, String> {
        let (metric, limit) = s
            .split_once(':')
            .ok_or_else(|| format!("'{s}': expected <metric>:<limit>, e.g. iops_slope:0.1%"))?;
        let (iops, lat, slope) = match metric {
            "iops" => (true, false, false),
            "iops_slope" => (true, false, true),
            "bw" => (false, false, false),
            "bw_slope" => (false, false, true),
            "lat" | "lat_slope" if compat.is_fio333() => {
                return Err(format!(
                    "'{metric}' is not a valid value in fio 3.33 (fio 3.42 added it); valid values: iops, iops_slope, bw, bw_slope"
                ))
            }
            "lat" => (false, true, false),
            "lat_slope" => (false, true, true),
            _ => {
                return Err(format!(
                    "'{metric}' is not a valid value; valid values: iops, iops_slope, bw, bw_slope, lat, lat_slope"
                ))
            }
        };
        let (num, pct) = match limit.strip_suffix('%') {
            Some(n) => (n, true),
            None => (limit, false),
        };
        // fio 3.42 reads a latency limit as a time with microseconds as its bare unit and
        // compares the number with nanoseconds (lat:250 = 250 ns, lat:1ms = 1000 ns).
        if lat && !pct {
            let us = crate::value::parse_time_us(num.trim(), false)?;
            return Ok(SsCriterion {
                iops,
                lat,
                slope,
                limit: us as f64,
                pct,
            });
        }
        let limit = if pct || iops {
            num.trim()
                .parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v >= 0.0)
                .ok_or_else(|| format!("'{num}' is not a valid limit"))?
        } else {
            crate::value::parse_size(num.trim(), kb)? as f64
        };
        Ok(SsCriterion {
            iops,
            lat,
            slope,
            limit,
            pct,
        })
    }
}

impl Default for JobOptions {
    fn default() -> Self {
        JobOptions {
            name: String::new(),
            description: None,
            numjobs: 1,
            loops: 1,
            thread: false,
            stonewall: false,
            new_group: false,
            group_reporting: false,
            exitall: false,
            exitall_on_error: false,
            stats: true,
            kb_base: KbBase::K1024,
            unit_base: 0,
            significant_figures: 4,
            rw: RwKind::Read,
            rw_nr: 0,
            rw_back: 0,
            rw_sequencer: Sequencer::Sequential,
            rwmixread: 50,
            randrepeat: true,
            randseed: None,
            allrandrepeat: false,
            allrandrepeat_last: false,
            norandommap: false,
            softrandommap: false,
            random_generator: RandGenOpt::Tausworthe,
            random_distribution: [Dist::Uniform, Dist::Uniform, Dist::Uniform],
            percentage_random: [100; 3],
            zonemode: ZoneMode::None,
            zonesize: 0,
            zonerange: 0,
            zoneskip: 0,
            unified_rw_reporting: Unified::None,
            direct: false,
            sync: SyncMode::None,
            number_ios: 0,
            size: None,
            io_size: None,
            filesize: None,
            offset: SizeVal::Bytes(0),
            offset_increment: SizeVal::Bytes(0),
            offset_align: 0,
            overwrite: false,
            file_append: false,
            fill_device: false,
            bs: [4096; 3],
            bsrange: None,
            bssplit: None,
            blockalign: None,
            bs_unaligned: false,
            bs_is_seq_rand: false,
            zero_buffers: false,
            iomem_thp: true,
            refill_buffers: false,
            dedupe_percentage: 0,
            dedupe_working_set: false,
            dedupe_working_set_percentage: 5,
            dedupe_global: false,
            scramble_buffers: true,
            buffer_pattern: None,
            buffer_compress_percentage: None,
            buffer_compress_chunk: 512,
            iomem_align: 0,
            filename: None,
            directory: None,
            filename_format: "$jobname.$jobnum.$filenum".into(),
            nrfiles: 1,
            openfiles: None,
            file_service: FileService::RoundRobin,
            file_service_nr: 1,
            create_serialize: true,
            create_fsync: true,
            create_on_open: false,
            create_only: false,
            allow_file_create: true,
            allow_mounted_write: false,
            pre_read: false,
            unlink: false,
            unlink_each_loop: false,
            fallocate: Fallocate::Native,
            fadvise_hint: FadviseHint::Auto,
            invalidate: true,
            ioengine: "psync".into(),
            iodepth: 1,
            iodepth_batch: 1,
            iodepth_batch_complete_min: 1,
            iodepth_batch_complete_max: None,
            iodepth_low: None,
            runtime_us: 0,
            time_based: false,
            ramp_time_us: 0,
            startdelay_us: (0, 0),
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            fsync_on_close: false,
            percentile_list: DEFAULT_PERCENTILES.to_vec(),
            percentile_precision: 2,
            clat_percentiles: true,
            lat_percentiles: false,
            slat_percentiles: false,
            disable_lat: false,
            disable_clat: false,
            disable_slat: false,
            disable_bw: false,
            gtod_reduce: false,
            bwavgtime_ms: 500,
            iopsavgtime_ms: 500,
            bwavgtime_set: false,
            iopsavgtime_set: false,
            disk_util: true,
            continue_on_error: 0,
            ignore_error: [None, None, None],
            error_dump: false,
            verify: 0,
            do_verify: true,
            verify_only: false,
            verify_interval: 0,
            verify_offset: 0,
            verify_pattern: None,
            verify_fatal: false,
            verify_dump: false,
            verify_backlog: 0,
            verify_backlog_batch: 0,
            trim_percentage: 0,
            trim_backlog: 0,
            trim_backlog_batch: 0,
            trim_verify_zero: true,
            trim_punch: false,
            verify_state_save: true,
            verify_state_load: false,
            verify_pattern_interval: 0,
            verify_header_seed: None,
            verify_write_sequence: None,
            experimental_verify: false,
            verify_async: 0,
            verify_async_cpus: None,
            engine: Default::default(),
            prio: None,
            prioclass: None,
            nice: 0,
            uid: None,
            gid: None,
            cgroup: None,
            cgroup_weight: None,
            cgroup_nodelete: false,
            numa_cpu_nodes: None,
            numa_mem_policy: None,
            cpus_allowed: None,
            cpus_split: false,
            rate: [0; 3],
            rate_min: [0; 3],
            rate_iops: [0; 3],
            rate_iops_min: [0; 3],
            rate_poisson: false,
            rate_cycle_ms: 1000,
            rate_ignore_thinktime: false,
            thinktime_us: 0,
            thinktime_spin_us: 0,
            thinktime_blocks: None,
            thinktime_blocks_issue: false,
            thinktime_iotime_us: 0,
            latency_target_ns: 0,
            latency_window_us: 0,
            latency_percentile: 100.0,
            latency_run: false,
            max_latency_us: [0; 3],
            clocksource: None,
            ss: SsCriterion::default(),
            ss_dur_us: 0,
            ss_ramp_us: 0,
            ss_interval_us: 1_000_000,
            ss_ramp_auto: false,
            ss_departure: None,
            ss_band_pct: 20.0,
            ss_departure_window_us: 0,
            ss_direction: SsDirection::All,
            write_bw_log: None,
            write_lat_log: None,
            write_iops_log: None,
            write_hist_log: None,
            log_avg_msec: 0,
            log_window: LogWindow::Avg,
            log_issue_time: false,
            log_unix_epoch: false,
            log_alternate_epoch: false,
            log_alternate_epoch_clock_id: 0,
            log_compression: 0,
            log_store_compressed: false,
            log_compression_cpus: None,
            log_offset: false,
            log_prio: false,
            per_job_logs: true,
            log_hist_msec: 0,
            log_hist_coarseness: 0,
            log_entries: 1024,
            interval_log: None,
            interval_log_msec: 1000,
            iolog: IologOpts::default(),
            unique_filename: true,
            opendir: None,
            serialize_overlap: false,
            lockfile: LockMode::None,
            exec_prerun: None,
            exit_what: ExitWhat::Group,
            wait_for: None,
            flow: 0,
            flow_id: 0,
            flow_sleep_us: 0,
            exec_postrun: None,
            newest: crate::newest::NewestOptions::default(),
            sysio: crate::sysio::SysIoOptions::default(),
            zbd: crate::zbd::ZbdOptions::default(),
            submit_offload: false,
            extra: crate::extra::ExtraOptions::default(),
            compat: crate::Compat::default(),
        }
    }
}

impl JobOptions {
    /// Smallest block size over the active directions (fio's `td_min_bs`).
    pub fn min_bs(&self) -> u64 {
        (0..3).map(|d| self.min_bs_dir(d)).min().unwrap_or(4096)
    }
    /// Largest block size over all directions (fio's `td_max_bs`).
    pub fn max_bs(&self) -> u64 {
        (0..3).map(|d| self.max_bs_dir(d)).max().unwrap_or(4096)
    }
    pub fn min_bs_dir(&self, d: usize) -> u64 {
        if let Some(split) = &self.bssplit {
            if !split[d].is_empty() {
                return split[d].iter().map(|e| e.bs).min().unwrap_or(self.bs[d]);
            }
        }
        if let Some(r) = &self.bsrange {
            return r[d].0;
        }
        self.bs[d]
    }
    pub fn max_bs_dir(&self, d: usize) -> u64 {
        if let Some(split) = &self.bssplit {
            if !split[d].is_empty() {
                return split[d].iter().map(|e| e.bs).max().unwrap_or(self.bs[d]);
            }
        }
        if let Some(r) = &self.bsrange {
            return r[d].1;
        }
        self.bs[d]
    }
}
