//! One model for fio's and flexio's results: runs, jobs, directions, latency summaries,
//! histogram bins, job options, CPU and disk statistics, and the log data found beside a
//! result.

use crate::logs::JobLogs;
use std::path::PathBuf;

/// A data direction as fio reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ddir {
    Read,
    Write,
    Trim,
    /// `unified_rw_reporting`: all directions together.
    Mixed,
}

impl Ddir {
    pub fn name(self) -> &'static str {
        match self {
            Ddir::Read => "read",
            Ddir::Write => "write",
            Ddir::Trim => "trim",
            Ddir::Mixed => "mixed",
        }
    }
    /// The direction of a log line's `ddir` field (0 read, 1 write, 2 trim).
    pub fn from_log(v: u64) -> Option<Ddir> {
        match v {
            0 => Some(Ddir::Read),
            1 => Some(Ddir::Write),
            2 => Some(Ddir::Trim),
            _ => None,
        }
    }
    pub fn index(self) -> usize {
        self as usize
    }
}

/// Sample count below which the percentile `p` rests on fewer than one sample beyond it
/// (p99.9 needs 1000 samples): such a percentile is the maximum, not a tail estimate.
pub fn min_samples_for(p: f64) -> u64 {
    if p >= 100.0 {
        return 1;
    }
    // The small tolerance keeps 100 / (100 - 99.9) = 1000.00000000006 at 1000.
    (100.0 / (100.0 - p) - 1e-6).ceil() as u64
}

/// Whether percentile `p` of `n` samples rests on too few samples (see [`min_samples_for`]).
pub fn too_few_for(p: f64, n: u64) -> bool {
    p < 100.0 && n < min_samples_for(p)
}

/// A latency statistic (ns).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Lat {
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    /// Sample standard deviation.
    pub stddev: f64,
    pub n: u64,
    /// (percentile, ns), ascending.
    pub percentiles: Vec<(f64, u64)>,
    /// json+ histogram bins (bucket value ns, count), ascending; empty without json+.
    pub bins: Vec<(u64, u64)>,
}

impl Lat {
    /// Root mean square: sqrt(mean² + variance·(n−1)/n).
    pub fn rms(&self) -> f64 {
        if self.n == 0 {
            return 0.0;
        }
        let n = self.n as f64;
        (self.mean * self.mean + self.stddev * self.stddev * (n - 1.0) / n).sqrt()
    }
    pub fn percentile(&self, p: f64) -> Option<u64> {
        self.percentiles
            .iter()
            .find(|(q, _)| (q - p).abs() < 1e-9)
            .map(|x| x.1)
    }
}

/// Bandwidth (KiB/s) or IOPS samples fio takes every `bwavgtime`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Samples {
    pub min: f64,
    pub max: f64,
    pub mean: f64,
    pub stddev: f64,
    pub n: u64,
}

/// One direction of one job.
#[derive(Clone, Debug, PartialEq)]
pub struct DirResult {
    pub ddir: Ddir,
    pub io_bytes: u64,
    /// Bytes per second.
    pub bw_bytes: f64,
    pub iops: f64,
    pub runtime_ms: u64,
    pub total_ios: u64,
    pub slat: Lat,
    pub clat: Lat,
    pub lat: Lat,
    /// flexio's latency from the scheduled start (rate-limited jobs).
    pub sched_lat: Option<Lat>,
    /// Bandwidth samples in KiB/s and IOPS samples.
    pub bw_samples: Samples,
    pub iops_samples: Samples,
}

impl DirResult {
    /// The latency statistic that describes response time best: total latency when it was
    /// measured, else completion latency. Returns its name too.
    pub fn response(&self) -> (&'static str, &Lat) {
        if self.lat.n > 0 && (!self.lat.percentiles.is_empty() || self.clat.n == 0) {
            ("lat", &self.lat)
        } else {
            ("clat", &self.clat)
        }
    }
}

/// One reporting unit (a job, or a group with group_reporting).
#[derive(Clone, Debug, Default)]
pub struct JobResult {
    pub name: String,
    pub groupid: u64,
    pub error: i64,
    /// The job's own options, then the global ones it inherits (as fio echoes them).
    pub options: Vec<(String, String)>,
    pub dirs: Vec<DirResult>,
    pub job_runtime_ms: u64,
    pub usr_cpu: f64,
    pub sys_cpu: f64,
    pub ctx: u64,
    pub majf: u64,
    pub minf: u64,
    /// Log files read for this job.
    pub logs: JobLogs,
    /// Engines with several kinds of operation (mdtree, cmdtime): each kind's figures, from
    /// the job's `flexio.ops` (empty for other engines).
    pub ops: Vec<OpFigures>,
    /// flexio's steady-state additions (`flexio.steadystate`: ss_ramp=auto, ss_departure).
    pub steady: Option<SteadyWatch>,
    /// The job's sync calls (fsync, fdatasync, sync_file_range), when it made any: fio
    /// reports their count and latency only.
    pub sync: Option<SyncResult>,
}

/// A job's sync calls (the JSON's `sync`: `total_ios` and `lat_ns`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SyncResult {
    pub total_ios: u64,
    pub lat: Lat,
}

/// A job's steady-state series with what flexio found in it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SteadyWatch {
    /// The criterion's metric: `iops`, `bw` (bytes/s) or `lat` (ns).
    pub metric: String,
    /// Seconds per sample, and where the first sample starts (from the job's start).
    pub interval_s: f64,
    pub offset_s: f64,
    pub series: Vec<f64>,
    /// Samples MSER-5 found to be the warm-up (ss_ramp=auto).
    pub ramp_samples: Option<usize>,
    pub attained_sample: Option<usize>,
    pub level: Option<f64>,
    pub band_pct: Option<f64>,
    /// (seconds from the job's start, level left, new level).
    pub departures: Vec<(f64, f64, f64)>,
}

/// One kind of operation of a job (`flexio.ops` in flexio's JSON).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpFigures {
    pub name: String,
    pub count: u64,
    /// Operations per second of time spent in the operation, and over its phases' spans.
    pub ops_per_s: f64,
    pub phase_ops_per_s: f64,
    pub mean_ns: f64,
    pub p50_ns: Option<f64>,
    pub p99_ns: Option<f64>,
    pub p999_ns: Option<f64>,
}

impl JobResult {
    pub fn dir(&self, d: Ddir) -> Option<&DirResult> {
        self.dirs.iter().find(|x| x.ddir == d)
    }
    /// A job option (its own, else the global one).
    pub fn option(&self, k: &str) -> Option<&str> {
        self.options
            .iter()
            .find(|(key, _)| key == k)
            .map(|(_, v)| v.as_str())
    }
    /// Whether the result's bandwidth (`iops` false) or IOPS (`iops` true) samples are one
    /// per I/O rather than periodic: fio (and flexio, as fio) fill them from the log when
    /// the job writes that log (`write_bw_log` / `write_iops_log`) with `log_avg_msec` 0
    /// (the default). Such samples are per-I/O rates (IOPS samples are all 1), so they
    /// cannot be tested against the periodic samples of another run.
    pub fn per_io_samples(&self, iops: bool) -> bool {
        let log = if iops {
            "write_iops_log"
        } else {
            "write_bw_log"
        };
        if self.option(log).is_none() {
            return false;
        }
        match self.option("log_avg_msec") {
            None => true,
            Some(v) => {
                let digits: String = v.trim().chars().take_while(char::is_ascii_digit).collect();
                !digits.is_empty() && digits.chars().all(|c| c == '0')
            }
        }
    }
}

/// A block device's utilisation.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Disk {
    pub name: String,
    pub read_ios: u64,
    pub write_ios: u64,
    pub read_merges: u64,
    pub write_merges: u64,
    pub read_ticks: u64,
    pub write_ticks: u64,
    pub in_queue: u64,
    pub util: f64,
}

/// One result file.
#[derive(Clone, Debug, Default)]
pub struct RunResult {
    pub path: PathBuf,
    /// Short name for legends (the file name unless given).
    pub label: String,
    /// `fio-3.33`, or flexio's version when the file says so.
    pub producer: String,
    pub time: String,
    pub global_options: Vec<(String, String)>,
    pub jobs: Vec<JobResult>,
    pub disks: Vec<Disk>,
    /// Problems met while reading (skipped log lines, logs that matched no job).
    pub warnings: Vec<String>,
    /// flexio's `flexio.provenance` (where the result came from), when the file has it.
    pub provenance: Option<serde_json::Value>,
}
