//! The metering part of a thread's plan: bandwidth/IOPS sampling, the log files
//! (`write_lat_log`, `write_bw_log`, `write_iops_log`, `write_hist_log`) and what goes in
//! them, the interval stream and steady-state detection.

use flexio_engine::Caps;
use flexio_job::options::{JobOptions, LogWindow, SsCriterion};
use std::path::PathBuf;

/// What the job samples, logs and publishes on the way.
#[derive(Clone, Debug)]
pub struct MeterPlan {
    /// bw and IOPS statistics samples (bwavgtime / iopsavgtime, ms); off for file-op
    /// engines.
    pub sample: bool,
    pub bw_ms: u64,
    pub iops_ms: u64,
    /// How early a bw/IOPS sample may be taken (ms): the newest fio samples once an
    /// interval less 1 ms has passed; fio 3.33 (`--compat=3.33`) once the whole interval
    /// has (its samples stay on the interval's multiples: 500, 1000, 1500 ms).
    pub sample_slack_ms: u64,
    pub logs: Option<LogPlan>,
    /// flexio's interval JSON Lines stream: file and interval (ms).
    pub interval_log: Option<(PathBuf, u64)>,
    /// Steady state: window, ramp and check interval (µs).
    pub ss: Option<SsPlan>,
    /// How often log windows are looked at (ns): a tenth of the shortest log period, at
    /// least 1 ms.
    pub log_tick_ns: u64,
}

/// fio's per-job log files.
#[derive(Clone, Debug, Default)]
pub struct LogPlan {
    /// lat, slat and clat log files (write_lat_log).
    pub lat: Option<[PathBuf; 3]>,
    pub bw: Option<PathBuf>,
    pub iops: Option<PathBuf>,
    pub hist: Option<PathBuf>,
    /// log_avg_msec (0 = every I/O).
    pub avg_ms: u64,
    /// log_window_value: the window maximum instead of the mean (`max`), or both.
    pub max_value: bool,
    pub both_values: bool,
    /// log_issue_time: issue time column (clat and slat logs).
    pub issue_time: bool,
    /// log_unix_epoch / log_alternate_epoch: times count from this clock's epoch.
    pub epoch_clock: Option<i32>,
    /// log_compression / log_store_compressed / log_compression_cpus.
    pub compress: Option<CompressPlan>,
    pub offset: bool,
    /// log_prio: the raw priority value instead of 0/1.
    pub prio_raw: bool,
    /// log_hist_msec (0 = as often as the log is looked at).
    pub hist_ms: u64,
    pub hist_coarseness: u32,
    /// The compressed records' binary layout (fio 3.33's under `--compat=3.33`).
    pub layout: crate::logz::Layout,
    /// disable_bw_measurement: per-I/O bandwidth entries (log_avg_msec=0) are not taken,
    /// neither into the bw log nor into the bw statistics; the log is still made, and the
    /// periodic samples it replaces stay off (fio's account_io_completion).
    pub no_io_bw: bool,
    /// The same for per-I/O IOPS entries, under gtod_reduce (or disable_clat, disable_slat
    /// and disable_bw_measurement together: fio's gtod_reduce()).
    pub no_io_iops: bool,
    /// disable_lat / disable_slat / disable_clat: that file of write_lat_log is not made
    /// (lat, slat, clat order, as in [`LogPlan::lat`]), as fio sets up none for it.
    pub no_lat: [bool; 3],
}

/// Compressed logs.
#[derive(Clone, Debug, Default)]
pub struct CompressPlan {
    /// Bytes of binary samples per zlib stream (0: one stream per batch of samples).
    pub chunk: u64,
    /// Keep the file compressed (`.log.fz`); else the text is written as without compression.
    pub store: bool,
    /// CPUs the compression runs on.
    pub cpus: Option<Vec<usize>>,
}

impl LogPlan {
    /// Every file these logs write.
    pub fn paths(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self
            .lat
            .iter()
            .flat_map(|l| l.iter().zip(self.no_lat).filter(|(_, no)| !no))
            .map(|(p, _)| p.clone())
            .collect();
        v.extend(self.bw.iter().chain(&self.iops).chain(&self.hist).cloned());
        v
    }
}

/// Steady-state detection (fio's ss options).
#[derive(Clone, Copy, Debug)]
pub struct SsPlan {
    pub criterion: SsCriterion,
    pub dur_us: u64,
    pub ramp_us: u64,
    pub interval_us: u64,
    /// The newest fio's sample: `rate_time * delta / (I * I / 1000)` (I = interval in ms,
    /// rate_time = ms since the last sample); fio 3.33: `1000 * delta / rate_time`.
    pub scaled_samples: bool,
    /// flexio: `ss_ramp=auto` (MSER-5).
    pub auto_ramp: bool,
    /// flexio: `ss_departure`, `ss_band` (%), `ss_departure_window` (µs; 0: `dur_us`).
    pub departure: Option<flexio_stats::watch::OnDeparture>,
    pub band_pct: f64,
    pub departure_window_us: u64,
    /// flexio: `ss_direction`.
    pub direction: flexio_job::options::SsDirection,
}

/// A log's prefix: the option's value, or the job name for a bare option.
fn log_prefix(o: &JobOptions, p: &Option<String>) -> Option<String> {
    p.as_ref().map(|s| {
        if s.is_empty() {
            o.name.clone()
        } else {
            s.clone()
        }
    })
}

/// fio's log file name: `<prefix>_<type>.<thread_number>.log` (`<prefix>_<type>.log` with
/// per_job_logs=0; `.log.fz` when stored compressed).
pub fn log_name(prefix: &str, kind: &str, thread_number: u32, per_job: bool, fz: bool) -> PathBuf {
    let ext = if fz { "log.fz" } else { "log" };
    if per_job {
        PathBuf::from(format!("{prefix}_{kind}.{thread_number}.{ext}"))
    } else {
        PathBuf::from(format!("{prefix}_{kind}.{ext}"))
    }
}

/// Sampling, logs and steady state.
pub fn meter_plan(o: &JobOptions, caps: &Caps, thread_number: u32) -> MeterPlan {
    let pj = o.per_job_logs;
    let fz = o.log_store_compressed;
    let name = |p: &str, kind: &str| log_name(p, kind, thread_number, pj, fz);
    let logs = LogPlan {
        lat: log_prefix(o, &o.write_lat_log)
            .map(|p| [name(&p, "lat"), name(&p, "slat"), name(&p, "clat")]),
        bw: log_prefix(o, &o.write_bw_log).map(|p| name(&p, "bw")),
        iops: log_prefix(o, &o.write_iops_log).map(|p| name(&p, "iops")),
        hist: log_prefix(o, &o.write_hist_log).map(|p| name(&p, "clat_hist")),
        avg_ms: o.log_avg_msec,
        max_value: o.log_window == LogWindow::Max,
        both_values: o.log_window == LogWindow::Both,
        issue_time: o.log_issue_time,
        epoch_clock: (o.log_unix_epoch || o.log_alternate_epoch)
            .then_some(o.log_alternate_epoch_clock_id),
        compress: (o.log_compression > 0 || o.log_store_compressed).then(|| CompressPlan {
            chunk: o.log_compression,
            store: o.log_store_compressed,
            cpus: o.log_compression_cpus.clone(),
        }),
        offset: o.log_offset,
        prio_raw: o.log_prio,
        hist_ms: o.log_hist_msec,
        hist_coarseness: o.log_hist_coarseness,
        layout: crate::logz::Layout::of(o.compat),
        no_io_bw: o.disable_bw,
        no_io_iops: o.gtod_reduce || (o.disable_clat && o.disable_slat && o.disable_bw),
        no_lat: [o.disable_lat, o.disable_slat, o.disable_clat],
    };
    let any_log =
        logs.lat.is_some() || logs.bw.is_some() || logs.iops.is_some() || logs.hist.is_some();
    MeterPlan {
        // disable_bw_measurement leaves fio's periodic bw/IOPS samples alone: only the
        // per-I/O entries go (LogPlan::no_io_bw).
        sample: !caps.file_op,
        // fio: a bw (IOPS) log averaged over log_avg_msec gets one entry per bw (IOPS)
        // sample, and without bwavgtime (iopsavgtime) set the samples come every
        // log_avg_msec; so `write_bw_log log_avg_msec=1000` samples the normal output's bw
        // once a second.
        bw_ms: if logs.bw.is_some() && o.log_avg_msec > 0 && !o.bwavgtime_set {
            o.log_avg_msec
        } else {
            o.bwavgtime_ms
        },
        iops_ms: if logs.iops.is_some() && o.log_avg_msec > 0 && !o.iopsavgtime_set {
            o.log_avg_msec
        } else {
            o.iopsavgtime_ms
        },
        sample_slack_ms: if o.compat.is_fio333() { 0 } else { 1 },
        logs: any_log.then_some(logs),
        interval_log: o
            .interval_log
            .as_ref()
            .map(|p| (PathBuf::from(p), o.interval_log_msec.max(1))),
        log_tick_ns: {
            // Often enough for the shortest log period (windows are closed on time).
            let interval = if o.interval_log.is_some() {
                o.interval_log_msec
            } else {
                0
            };
            let shortest = [o.log_avg_msec, o.log_hist_msec, interval]
                .into_iter()
                .filter(|x| *x > 0)
                .min()
                .unwrap_or(1000);
            (shortest * 1_000_000 / 10).max(1_000_000)
        },
        ss: (o.ss_dur_us > 0).then_some(SsPlan {
            criterion: o.ss,
            dur_us: o.ss_dur_us,
            ramp_us: o.ss_ramp_us,
            interval_us: o.ss_interval_us,
            scaled_samples: false,
            auto_ramp: o.ss_ramp_auto,
            departure: o.ss_departure.map(|d| match d {
                flexio_job::options::SsDeparture::Flag => flexio_stats::watch::OnDeparture::Flag,
                flexio_job::options::SsDeparture::Stop => flexio_stats::watch::OnDeparture::Stop,
            }),
            band_pct: o.ss_band_pct,
            departure_window_us: o.ss_departure_window_us,
            direction: o.ss_direction,
        }),
    }
}
