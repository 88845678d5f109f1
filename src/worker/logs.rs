//! Collecting a job's log samples (fio's `write_lat_log`, `write_bw_log`,
//! `write_iops_log`, `write_hist_log`) and flexio's per-interval stream, and writing them to
//! their files. Samples are kept in memory as numbers and written in batches (every 64 Ki
//! samples and at the end), so the I/O path only appends to a vector; the lines come from
//! `flexio_output::logs`, the interval numbers from `flexio_stats::interval`.

use crate::plan::{CompressPlan, LogPlan};
use flexio_output::logs::{hist_line, interval_line, sample_line_ext};
use flexio_stats::hist::Hist;
use flexio_stats::interval::{fio_log_bins, IntervalRecord, Tracker};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Samples kept before a batch is written out.
const BATCH: usize = 65536;

#[derive(Clone, Copy, Debug)]
struct Sample {
    time_ms: u64,
    value: u64,
    /// log_window_value=both: the window maximum (0 for per-I/O entries).
    value1: u64,
    /// log_issue_time: ns from the job's start to the issue (clat and slat entries).
    issue_ns: u64,
    ddir: u8,
    bs: u64,
    offset: u64,
    prio: u16,
}

/// Log kinds, in the order of `Logs::logs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Lat,
    Slat,
    Clat,
    Bw,
    Iops,
}

/// One log being collected.
struct Log {
    kind: Kind,
    path: PathBuf,
    samples: Vec<Sample>,
}

/// Running window accumulator per direction (log_avg_msec).
#[derive(Clone, Copy, Default)]
struct Window {
    sum: u64,
    n: u64,
    max: u64,
}

struct HistLog {
    path: PathBuf,
    every_ms: u64,
    next_ms: u64,
    coarseness: u32,
    last: [Vec<u64>; 3],
    text: String,
}

/// Everything a job thread logs to fio's log files.
pub struct Logs {
    logs: Vec<Log>,
    offset: bool,
    prio_raw: bool,
    avg_ms: u64,
    max_value: bool,
    both_values: bool,
    issue_time: bool,
    epoch_clock: Option<i32>,
    /// ms of the epoch clock at the job's start, added to every time (log_unix_epoch).
    epoch_ms: u64,
    compress: Option<CompressPlan>,
    /// Per-I/O bandwidth/IOPS logging (log_avg_msec=0): the job's bw/iops statistics switch
    /// to per-I/O samples as in fio.
    pub per_io_bw: bool,
    pub per_io_iops: bool,
    lat_windows: [[Window; 3]; 3],
    next_window_ms: u64,
    hist: Option<HistLog>,
    errors: Vec<String>,
}

impl Logs {
    pub fn new(p: &LogPlan) -> Logs {
        let mut logs = Vec::new();
        let mut add = |kind, path: &PathBuf| {
            logs.push(Log {
                kind,
                path: path.clone(),
                samples: Vec::new(),
            })
        };
        if let Some([lat, slat, clat]) = &p.lat {
            add(Kind::Lat, lat);
            add(Kind::Slat, slat);
            add(Kind::Clat, clat);
        }
        if let Some(b) = &p.bw {
            add(Kind::Bw, b);
        }
        if let Some(i) = &p.iops {
            add(Kind::Iops, i);
        }
        let per_io = p.avg_ms == 0;
        Logs {
            per_io_bw: per_io && p.bw.is_some(),
            per_io_iops: per_io && p.iops.is_some(),
            offset: p.offset,
            prio_raw: p.prio_raw,
            avg_ms: p.avg_ms,
            max_value: p.max_value,
            both_values: p.both_values,
            issue_time: p.issue_time,
            epoch_clock: p.epoch_clock,
            epoch_ms: 0,
            compress: p.compress.clone(),
            lat_windows: [[Window::default(); 3]; 3],
            next_window_ms: p.avg_ms,
            logs,
            hist: p.hist.as_ref().map(|path| HistLog {
                path: path.clone(),
                every_ms: p.hist_ms.max(1),
                next_ms: p.hist_ms.max(1),
                coarseness: p.hist_coarseness,
                last: Default::default(),
                text: String::new(),
            }),
            errors: Vec::new(),
        }
    }

    /// The job's epoch starts (or restarts after ramp_time): with log_unix_epoch or
    /// log_alternate_epoch, times count from the clock's epoch from here on.
    pub fn start_epoch(&mut self) {
        if let Some(id) = self.epoch_clock {
            match crate::clock::clock_ms(id) {
                Ok(ms) => self.epoch_ms = ms,
                Err(e) => self.errors.push(e),
            }
        }
    }

    fn push(&mut self, kind: Kind, s: Sample) {
        if let Some(i) = self.logs.iter().position(|l| l.kind == kind) {
            self.logs[i].samples.push(s);
            if self.logs[i].samples.len() >= BATCH {
                let samples = std::mem::take(&mut self.logs[i].samples);
                let path = self.logs[i].path.clone();
                self.write(&path, &samples);
            }
        }
    }

    /// A completed I/O: latencies in ns (slat `None` = not measured).
    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub fn io(
        &mut self,
        time_ms: u64,
        ddir: u8,
        bs: u64,
        offset: u64,
        prio: u16,
        lat: u64,
        clat: u64,
        slat: Option<u64>,
        issue_ns: u64,
    ) {
        if self.avg_ms > 0 {
            let d = ddir as usize;
            for (k, v) in [(0, lat), (1, clat)]
                .into_iter()
                .chain(slat.map(|s| (2, s)))
            {
                let w = &mut self.lat_windows[k][d];
                w.sum += v;
                w.n += 1;
                w.max = w.max.max(v);
            }
            return;
        }
        let s = |value, issue_ns| Sample {
            time_ms,
            value,
            value1: 0,
            issue_ns,
            ddir,
            bs,
            offset,
            prio,
        };
        // fio fills the issue time in clat and slat entries only.
        self.push(Kind::Lat, s(lat, 0));
        self.push(Kind::Clat, s(clat, issue_ns));
        if let Some(v) = slat {
            self.push(Kind::Slat, s(v, issue_ns));
        }
        let s = |value| s(value, 0);
        if self.per_io_bw && clat > 0 {
            self.push(Kind::Bw, s((bs as u128 * 1_000_000 / clat as u128) as u64));
        }
        if self.per_io_iops {
            self.push(Kind::Iops, s(1));
        }
    }

    /// Periodic work: close averaging windows, write histogram rows. `bytes`/`ios` are
    /// per-direction totals so far, `last` their values at the previous window (advanced
    /// here); `hists` the clat histograms; `last_bs` the length of the latest I/O per
    /// direction (the histogram log's bs column, as fio prints it).
    pub fn tick(
        &mut self,
        time_ms: u64,
        (bytes, ios): (&[u64; 3], &[u64; 3]),
        last: &mut ([u64; 3], [u64; 3], u64),
        hists: [&Hist; 3],
        last_bs: &[u64; 3],
    ) {
        if self.avg_ms > 0 && time_ms >= self.next_window_ms {
            self.close_window(time_ms, bytes, ios, last);
        }
        if let Some(h) = &mut self.hist {
            if time_ms >= h.next_ms {
                for (d, hist) in hists.iter().enumerate() {
                    let counts = hist.counts();
                    if counts.is_empty() {
                        continue;
                    }
                    let cur = fio_log_bins(counts, 0);
                    let prev = &h.last[d];
                    let delta: Vec<u64> = cur
                        .iter()
                        .enumerate()
                        .map(|(i, c)| c - prev.get(i).copied().unwrap_or(0))
                        .collect();
                    if delta.iter().all(|x| *x == 0) {
                        continue;
                    }
                    let bins = fio_log_bins(&delta, h.coarseness);
                    hist_line(&mut h.text, time_ms + self.epoch_ms, d, last_bs[d], &bins);
                    h.last[d] = cur;
                }
                while h.next_ms <= time_ms {
                    h.next_ms += h.every_ms;
                }
            }
        }
    }

    /// log_avg_msec: one averaged sample per direction and log for the window ending now.
    fn close_window(
        &mut self,
        time_ms: u64,
        bytes: &[u64; 3],
        ios: &[u64; 3],
        last: &mut ([u64; 3], [u64; 3], u64),
    ) {
        let t = self.next_window_ms;
        let span = (time_ms - last.2).max(1);
        let sample = |value, value1, ddir| Sample {
            time_ms: t,
            value,
            value1,
            issue_ns: 0,
            ddir,
            bs: 0,
            offset: 0,
            prio: 0,
        };
        for d in 0..3u8 {
            let di = d as usize;
            let db = bytes[di] - last.0[di];
            let dn = ios[di] - last.1[di];
            if dn > 0 {
                // One rate per window: its mean and its maximum are the same.
                let bw = db * 1000 / span / 1024;
                let iops = dn * 1000 / span;
                self.push(Kind::Bw, sample(bw, bw, d));
                self.push(Kind::Iops, sample(iops, iops, d));
            }
            for (k, kind) in [(0, Kind::Lat), (1, Kind::Clat), (2, Kind::Slat)] {
                let w = std::mem::take(&mut self.lat_windows[k][di]);
                // Window mean rounded to nearest (or the maximum with log_max_value).
                if let Some(mean) = (w.sum + w.n / 2).checked_div(w.n) {
                    let v = if self.max_value { w.max } else { mean };
                    self.push(kind, sample(v, w.max, d));
                }
            }
        }
        *last = (*bytes, *ios, time_ms);
        while self.next_window_ms <= time_ms {
            self.next_window_ms += self.avg_ms;
        }
    }

    fn write(&mut self, path: &Path, samples: &[Sample]) {
        if self.compress.as_ref().is_some_and(|c| c.store) {
            return self.write_compressed(path, samples);
        }
        let mut out = String::with_capacity(samples.len() * 32);
        for s in samples {
            let off = self.offset.then_some(s.offset);
            sample_line_ext(
                &mut out,
                s.time_ms + self.epoch_ms,
                (s.value, self.both_values.then_some(s.value1)),
                s.ddir,
                s.bs,
                off,
                (s.prio, self.prio_raw),
                self.issue_time.then_some(s.issue_ns),
            );
        }
        if let Err(e) = append(path, out.as_bytes()) {
            self.errors
                .push(format!("cannot write log {}: {e}", path.display()));
        }
    }

    /// log_store_compressed: the samples in fio's binary layout, one zlib stream per
    /// `log_compression` bytes of them, deflated on `log_compression_cpus` when given.
    fn write_compressed(&mut self, path: &Path, samples: &[Sample]) {
        if samples.is_empty() {
            return;
        }
        let c = self.compress.clone().unwrap_or_default();
        let rec = crate::logz::record_size(self.offset);
        let per = if c.chunk > 0 {
            (c.chunk as usize / rec).max(1)
        } else {
            samples.len()
        };
        let mut raws = Vec::new();
        for chunk in samples.chunks(per) {
            let mut raw = Vec::with_capacity(chunk.len() * rec);
            for s in chunk {
                crate::logz::encode(
                    &mut raw,
                    s.time_ms + self.epoch_ms,
                    s.value,
                    s.ddir,
                    s.bs,
                    self.offset.then_some(s.offset),
                    s.prio,
                    self.prio_raw,
                );
            }
            raws.push(raw);
        }
        let deflate_all =
            move || -> Vec<u8> { raws.iter().flat_map(|r| crate::logz::deflate(r)).collect() };
        let out = match &c.cpus {
            Some(cpus) => {
                let cpus = cpus.clone();
                std::thread::scope(|sc| {
                    sc.spawn(move || {
                        let mut set = rustix::thread::CpuSet::new();
                        for c in cpus
                            .iter()
                            .filter(|c| **c < rustix::thread::CpuSet::MAX_CPU)
                        {
                            set.set(*c);
                        }
                        let _ = rustix::thread::sched_setaffinity(None, &set);
                        deflate_all()
                    })
                    .join()
                    .unwrap_or_default()
                })
            }
            None => deflate_all(),
        };
        if let Err(e) = append(path, &out) {
            self.errors
                .push(format!("cannot write log {}: {e}", path.display()));
        }
    }

    /// Write everything that is left; returns error messages (if any).
    pub fn finish(mut self) -> Vec<String> {
        let logs = std::mem::take(&mut self.logs);
        for l in &logs {
            self.write(&l.path, &l.samples);
        }
        if let Some(h) = self.hist.take() {
            if let Err(e) = append(&h.path, h.text.as_bytes()) {
                self.errors
                    .push(format!("cannot write log {}: {e}", h.path.display()));
            }
        }
        self.errors
    }
}

fn append(path: &Path, data: &[u8]) -> std::io::Result<()> {
    // Threads sharing a log (per_job_logs=0) append whole batches one at a time.
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let f = OpenOptions::new().append(true).create(true).open(path)?;
    let mut w = BufWriter::new(f);
    w.write_all(data)?;
    w.flush()
}

/// Create (truncate) every log file of the run before the jobs start.
pub fn create_all(paths: &[PathBuf]) -> std::io::Result<()> {
    for p in paths {
        if let Some(parent) = p.parent() {
            if !parent.as_os_str().is_empty() {
                std::fs::create_dir_all(parent)?;
            }
        }
        File::create(p)?;
    }
    Ok(())
}

/// flexio's per-interval stream: one JSON object per line, per job thread, direction and
/// interval (not cumulative), with the interval's clat histogram delta.
pub struct IntervalLog {
    file: File,
    every_ms: u64,
    next_ms: u64,
    start_ms: u64,
    last_bytes: [u64; 3],
    last_ios: [u64; 3],
    clat: [Tracker; 3],
    sched: [Tracker; 3],
    job: String,
    thread: u32,
}

impl IntervalLog {
    /// Appends to `path` (created beforehand by `create_all`); each interval is one write of
    /// whole lines to an O_APPEND file, so threads sharing the file do not interleave lines.
    pub fn new(path: &Path, every_ms: u64, job: &str, thread: u32) -> std::io::Result<Self> {
        let file = OpenOptions::new().append(true).create(true).open(path)?;
        Ok(IntervalLog {
            file,
            every_ms: every_ms.max(1),
            next_ms: every_ms.max(1),
            start_ms: 0,
            last_bytes: [0; 3],
            last_ios: [0; 3],
            clat: Default::default(),
            sched: Default::default(),
            job: job.to_string(),
            thread,
        })
    }

    /// Emit the records of the interval ending at `time_ms` (if one ended, or `force`).
    pub fn emit(
        &mut self,
        time_ms: u64,
        (bytes, ios): (&[u64; 3], &[u64; 3]),
        hists: [&Hist; 3],
        sched: [&Hist; 3],
        force: bool,
    ) {
        if !force && time_ms < self.next_ms {
            return;
        }
        let mut text = String::new();
        for d in 0..3 {
            let n = ios[d] - self.last_ios[d];
            if n == 0 {
                continue;
            }
            let span = (time_ms - self.start_ms).max(1);
            let b = bytes[d] - self.last_bytes[d];
            let (clat_pct, clat_bins) = self.clat[d].summary(hists[d]);
            // Rate-limited directions: the same for latency from the scheduled start.
            let sched = (sched[d].is_enabled() && sched[d].total() > 0)
                .then(|| self.sched[d].summary(sched[d]));
            text.push_str(&interval_line(&IntervalRecord {
                job: self.job.clone(),
                thread: self.thread,
                ddir: d,
                start_ms: self.start_ms,
                end_ms: time_ms,
                ios: n,
                bytes: b,
                iops: n as f64 * 1000.0 / span as f64,
                bw_bytes: b * 1000 / span,
                clat_pct,
                clat_bins,
                sched,
            }));
        }
        self.last_bytes = *bytes;
        self.last_ios = *ios;
        self.start_ms = time_ms;
        while self.next_ms <= time_ms {
            self.next_ms += self.every_ms;
        }
        if !text.is_empty() {
            let _ = self.file.write_all(text.as_bytes());
        }
    }
}
