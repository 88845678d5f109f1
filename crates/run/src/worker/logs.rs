//! Collecting a job's log samples (fio's `write_lat_log`, `write_bw_log`,
//! `write_iops_log`, `write_hist_log`) and flexio's per-interval stream, and writing them to
//! their files. Samples are kept in memory as numbers and written in batches (every 64 Ki
//! samples and at the end) by a writer thread, so the I/O path only appends to a vector; a
//! per-I/O latency log keeps lat and clat of an I/O in one sample (one append per I/O for
//! both files). The lines come from `flexio_output::logs` (formatted by hand, the columns
//! that repeat kept formatted), the interval numbers from `flexio_stats::interval`.

use crate::plan::{CompressPlan, LogPlan};
use flexio_output::logs::{hist_line, interval_line, SampleWriter};
use flexio_stats::hist::Hist;
use flexio_stats::interval::{fio_log_bins, IntervalRecord, Tracker};
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Mutex;
use std::thread::JoinHandle;

/// Samples kept before a batch is written out.
const BATCH: usize = 65536;
/// Full batches that may wait for the writer thread before the job waits for it (memory
/// stays bounded when the disk is slower than the job).
const QUEUED: usize = 2;

/// One entry of a log (56 bytes).
#[derive(Clone, Copy, Debug)]
struct Sample {
    time_ms: u64,
    value: u64,
    /// log_window_value=both: the window maximum (0 for per-I/O entries). In a
    /// [`Kind::LatClat`] entry: the clat.
    value1: u64,
    /// log_issue_time: ns from the job's start to the issue (clat and slat entries).
    issue_ns: u64,
    bs: u64,
    offset: u64,
    prio: u16,
    ddir: u8,
}

/// Log kinds, in the order of `Logs::logs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Lat,
    Slat,
    Clat,
    Bw,
    Iops,
    /// Per-I/O lat and clat logs together: one sample per I/O (value: lat, value1: clat)
    /// written to both files.
    LatClat,
}

/// Where a log goes: its file (the lat file of a [`Kind::LatClat`] pair, `path2` its clat).
#[derive(Clone, Debug)]
struct Dest {
    kind: Kind,
    path: PathBuf,
    path2: Option<PathBuf>,
}

/// One log being collected.
struct Log {
    dest: Dest,
    samples: Vec<Sample>,
}

/// Running window accumulator per direction (log_avg_msec).
#[derive(Clone, Copy, Default)]
struct Window {
    sum: u64,
    samples: u64,
    max: u64,
}

struct HistLog {
    path: PathBuf,
    every_ms: u64,
    next_ms: u64,
    coarseness: u32,
    last: [Vec<u64>; 3],
    text: String,
    /// log_store_compressed: the lines as flexio's binary records (`logz::encode_hist`),
    /// and where each record ends.
    raw: Option<(Vec<u8>, Vec<usize>)>,
}

/// How samples become bytes (text lines or fio's compressed binary records).
#[derive(Clone)]
struct Fmt {
    offset: bool,
    prio_raw: bool,
    both_values: bool,
    issue_time: bool,
    compress: Option<CompressPlan>,
    /// The binary records' layout (fio 3.33's under `--compat=3.33`).
    layout: crate::logz::Layout,
}

/// A batch for the writer thread: the log (index in `Logs::logs`), the epoch offset in ms,
/// the samples.
type Batch = (usize, u64, Vec<Sample>);

/// The job's log writer thread: batches in, emptied vectors back, errors at the end.
struct Writer {
    tx: SyncSender<Batch>,
    back: Receiver<Vec<Sample>>,
    handle: JoinHandle<Vec<String>>,
}

impl Writer {
    fn start(fmt: Fmt, dests: Vec<Dest>) -> std::io::Result<Writer> {
        let (tx, rx) = mpsc::sync_channel::<Batch>(QUEUED);
        let (back_tx, back) = mpsc::channel();
        let handle = std::thread::Builder::new()
            .name("flexio-logw".into())
            .spawn(move || {
                let mut errors = Vec::new();
                let mut out = Output::default();
                for (i, epoch_ms, mut samples) in rx {
                    if let Err(e) = fmt.write(&mut out, &dests[i], epoch_ms, &samples) {
                        errors.push(e);
                    }
                    samples.clear();
                    let _ = back_tx.send(samples);
                }
                errors
            })?;
        Ok(Writer { tx, back, handle })
    }
}

/// The text of a batch (two buffers: a lat/clat pair writes two files), kept between
/// batches so writing allocates nothing once they have grown.
#[derive(Default)]
struct Output {
    text: Vec<u8>,
    text2: Vec<u8>,
}

/// The bandwidth sample of one I/O (log_avg_msec=0) in KiB/s: its bytes over its clat in ns,
/// `bytes * 10^6 / clat`. An I/O that completed within the clock's resolution (clat 0: the
/// null engine does that often) is still one sample, of rate 0, as in fio; skipping it lost
/// lines from the bw log and samples from the bw statistics.
#[inline]
pub fn per_io_rate(bytes: u64, clat_ns: u64) -> u64 {
    (bytes as u128 * 1_000_000)
        .checked_div(clat_ns as u128)
        .map_or(0, |r| r as u64)
}

/// Everything a job thread logs to fio's log files.
pub struct Logs {
    logs: Vec<Log>,
    fmt: Fmt,
    avg_ms: u64,
    max_value: bool,
    epoch_clock: Option<i32>,
    /// ms of the epoch clock at the job's start, added to every time (log_unix_epoch).
    epoch_ms: u64,
    writer: Option<Writer>,
    /// Per-I/O bandwidth/IOPS logging (log_avg_msec=0): the job's bw/iops statistics switch
    /// to per-I/O samples as in fio.
    pub per_io_bw: bool,
    pub per_io_iops: bool,
    /// Per-I/O entries are taken (not under disable_bw_measurement / gtod_reduce:
    /// [`LogPlan::no_io_bw`]); without them the per-I/O log stays empty.
    pub io_bw: bool,
    pub io_iops: bool,
    lat_windows: [[Window; 3]; 3],
    next_window_ms: u64,
    hist: Option<HistLog>,
    errors: Vec<String>,
}

impl Logs {
    pub fn new(p: &LogPlan) -> Logs {
        let mut logs = Vec::new();
        let mut add = |kind, path: &PathBuf, path2: Option<&PathBuf>| {
            logs.push(Log {
                dest: Dest {
                    kind,
                    path: path.clone(),
                    path2: path2.cloned(),
                },
                samples: Vec::new(),
            })
        };
        let per_io = p.avg_ms == 0;
        if let Some([lat, slat, clat]) = &p.lat {
            // Only the latencies the job measures get a file (fio's disable_lat/slat/clat).
            let [no_lat, no_slat, no_clat] = p.no_lat;
            let pair = per_io && !no_lat && !no_clat;
            if pair {
                add(Kind::LatClat, lat, Some(clat));
            } else if !no_lat {
                add(Kind::Lat, lat, None);
            }
            if !no_slat {
                add(Kind::Slat, slat, None);
            }
            if !pair && !no_clat {
                add(Kind::Clat, clat, None);
            }
        }
        if let Some(b) = &p.bw {
            add(Kind::Bw, b, None);
        }
        if let Some(i) = &p.iops {
            add(Kind::Iops, i, None);
        }
        Logs {
            per_io_bw: per_io && p.bw.is_some(),
            per_io_iops: per_io && p.iops.is_some(),
            io_bw: per_io && p.bw.is_some() && !p.no_io_bw,
            io_iops: per_io && p.iops.is_some() && !p.no_io_iops,
            fmt: Fmt {
                offset: p.offset,
                prio_raw: p.prio_raw,
                both_values: p.both_values,
                issue_time: p.issue_time,
                compress: p.compress.clone(),
                layout: p.layout,
            },
            avg_ms: p.avg_ms,
            max_value: p.max_value,
            epoch_clock: p.epoch_clock,
            epoch_ms: 0,
            writer: None,
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
                raw: p
                    .compress
                    .as_ref()
                    .is_some_and(|c| c.store)
                    .then(Default::default),
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

    #[inline]
    fn push(&mut self, kind: Kind, s: Sample) {
        if let Some(i) = self.logs.iter().position(|l| l.dest.kind == kind) {
            self.push_at(i, s);
        }
    }

    #[inline]
    fn push_at(&mut self, i: usize, s: Sample) {
        self.logs[i].samples.push(s);
        if self.logs[i].samples.len() >= BATCH {
            self.hand_over(i);
        }
    }

    /// Log `i`'s full batch goes to the writer thread (started now if need be; without one,
    /// written here), and a recycled vector takes its place.
    #[cold]
    fn hand_over(&mut self, i: usize) {
        if self.writer.is_none() {
            let dests = self.logs.iter().map(|l| l.dest.clone()).collect();
            match Writer::start(self.fmt.clone(), dests) {
                Ok(w) => self.writer = Some(w),
                Err(_) => {
                    let samples = std::mem::take(&mut self.logs[i].samples);
                    self.write_here(i, self.epoch_ms, &samples);
                    return;
                }
            }
        }
        let Some(w) = &self.writer else { return };
        let fresh = w
            .back
            .try_recv()
            .unwrap_or_else(|_| Vec::with_capacity(BATCH));
        let samples = std::mem::replace(&mut self.logs[i].samples, fresh);
        if let Err(mpsc::SendError((i, epoch_ms, samples))) = w.tx.send((i, self.epoch_ms, samples))
        {
            // The writer is gone (it panicked): write here.
            self.write_here(i, epoch_ms, &samples);
        }
    }

    /// Write samples of log `i` on this thread.
    fn write_here(&mut self, i: usize, epoch_ms: u64, samples: &[Sample]) {
        let mut out = Output::default();
        if let Err(e) = self
            .fmt
            .write(&mut out, &self.logs[i].dest, epoch_ms, samples)
        {
            self.errors.push(e);
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
                w.samples += 1;
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
        if self
            .logs
            .first()
            .is_some_and(|l| l.dest.kind == Kind::LatClat)
        {
            // Both latencies in one entry (the issue time is the clat entry's).
            self.push_at(
                0,
                Sample {
                    value1: clat,
                    ..s(lat, issue_ns)
                },
            );
        } else {
            // One of them is not measured: the other alone (a missing log takes nothing).
            self.push(Kind::Lat, s(lat, 0));
            self.push(Kind::Clat, s(clat, issue_ns));
        }
        if let Some(v) = slat {
            self.push(Kind::Slat, s(v, issue_ns));
        }
        let s = |value| s(value, 0);
        if self.io_bw {
            self.push(Kind::Bw, s(per_io_rate(bs, clat)));
        }
        if self.io_iops {
            self.push(Kind::Iops, s(1));
        }
    }

    /// A periodic bw (KiB/s) or IOPS sample of the job's statistics, at `time_ms`: the
    /// entry of an averaged bw or IOPS log (one rate per entry: its mean and maximum are the
    /// same). Per-I/O logs take their entries in [`Logs::io`] instead.
    pub fn rate_sample(&mut self, iops: bool, time_ms: u64, ddir: u8, value: u64) {
        if self.avg_ms == 0 {
            return;
        }
        let kind = if iops { Kind::Iops } else { Kind::Bw };
        self.push(
            kind,
            Sample {
                time_ms,
                value,
                value1: value,
                issue_ns: 0,
                ddir,
                bs: 0,
                offset: 0,
                prio: 0,
            },
        );
    }

    /// Periodic work: close latency averaging windows, write histogram rows. `hists` are
    /// the clat histograms; `last_bs` the length of the latest I/O per direction (the
    /// histogram log's bs column, as fio prints it).
    pub fn tick(&mut self, time_ms: u64, hists: [&Hist; 3], last_bs: &[u64; 3]) {
        if self.avg_ms > 0 && time_ms >= self.next_window_ms {
            self.close_window(time_ms);
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
                    let t = time_ms + self.epoch_ms;
                    match &mut h.raw {
                        Some((raw, ends)) => {
                            crate::logz::encode_hist(raw, t, d as u8, last_bs[d], &bins);
                            ends.push(raw.len());
                        }
                        None => hist_line(&mut h.text, t, d, last_bs[d], &bins),
                    }
                    h.last[d] = cur;
                }
                while h.next_ms <= time_ms {
                    h.next_ms += h.every_ms;
                }
            }
        }
    }

    /// log_avg_msec: one averaged latency entry per direction and latency log for the
    /// window ending now (bw and IOPS entries come from the job's samples:
    /// [`Logs::rate_sample`]).
    fn close_window(&mut self, time_ms: u64) {
        let t = self.next_window_ms;
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
            for (k, kind) in [(0, Kind::Lat), (1, Kind::Clat), (2, Kind::Slat)] {
                let w = std::mem::take(&mut self.lat_windows[k][di]);
                // Window mean rounded to nearest (or the maximum with log_max_value).
                if let Some(mean) = (w.sum + w.samples / 2).checked_div(w.samples) {
                    let v = if self.max_value { w.max } else { mean };
                    self.push(kind, sample(v, w.max, d));
                }
            }
        }
        while self.next_window_ms <= time_ms {
            self.next_window_ms += self.avg_ms;
        }
    }

    /// Write everything that is left; returns error messages (if any).
    pub fn finish(mut self) -> Vec<String> {
        let logs = std::mem::take(&mut self.logs);
        // The writer's batches first (they are older), then what is left, in log order.
        if let Some(w) = self.writer.take() {
            drop(w.tx);
            match w.handle.join() {
                Ok(errors) => self.errors.extend(errors),
                Err(_) => self.errors.push("the log writer thread failed".into()),
            }
        }
        let mut out = Output::default();
        for l in &logs {
            if let Err(e) = self.fmt.write(&mut out, &l.dest, self.epoch_ms, &l.samples) {
                self.errors.push(e);
            }
        }
        if let Some(h) = self.hist.take() {
            let r = match &h.raw {
                Some((raw, ends)) => {
                    // Streams of whole records, each within log_compression's bytes.
                    let chunk = self.fmt.compress.as_ref().map_or(0, |c| c.chunk as usize);
                    let (mut streams, mut start, mut prev) = (Vec::new(), 0, 0);
                    for &end in ends {
                        if chunk > 0 && end - start > chunk && prev > start {
                            streams.push(raw[start..prev].to_vec());
                            start = prev;
                        }
                        prev = end;
                    }
                    if prev > start {
                        streams.push(raw[start..prev].to_vec());
                    }
                    self.fmt.deflate_to(&h.path, streams)
                }
                None => append(&h.path, h.text.as_bytes()),
            };
            if let Err(e) = r {
                self.errors.push(e);
            }
        }
        self.errors
    }
}

impl Fmt {
    /// Append `samples` to the log's file(s) (times shifted by `epoch_ms`); `out` holds the
    /// text on its way.
    fn write(
        &self,
        out: &mut Output,
        dest: &Dest,
        epoch_ms: u64,
        samples: &[Sample],
    ) -> Result<(), String> {
        if self.compress.as_ref().is_some_and(|c| c.store) {
            let rec = |s: &Sample, value, value1, issue_ns| crate::logz::Rec {
                time_ms: s.time_ms,
                value,
                value1,
                ddir: s.ddir,
                bs: s.bs,
                offset: s.offset,
                prio: s.prio,
                issue_ns,
            };
            if dest.kind == Kind::LatClat {
                // As the text: no second value per I/O, the issue time on the clat log only.
                self.write_compressed(&dest.path, epoch_ms, samples, |s| rec(s, s.value, 0, 0))?;
                if let Some(p2) = &dest.path2 {
                    self.write_compressed(p2, epoch_ms, samples, |s| {
                        rec(s, s.value1, 0, s.issue_ns)
                    })?;
                }
                return Ok(());
            }
            return self.write_compressed(&dest.path, epoch_ms, samples, |s| {
                rec(s, s.value, s.value1, s.issue_ns)
            });
        }
        let mut w = SampleWriter::new(
            self.offset,
            self.prio_raw,
            self.both_values,
            self.issue_time,
        );
        let (text, text2) = (&mut out.text, &mut out.text2);
        text.clear();
        text2.clear();
        if dest.kind == Kind::LatClat {
            for s in samples {
                let t = s.time_ms + epoch_ms;
                let start = text.len();
                // Per-I/O entries have no second value; only the clat line has the issue
                // time.
                w.line(text, t, s.value, 0, s.ddir, s.bs, s.offset, s.prio, 0);
                if s.value1 == s.value && !self.issue_time {
                    // lat equal to clat (a synchronous engine): the same line.
                    text2.extend_from_slice(&text[start..]);
                } else {
                    w.line(
                        text2, t, s.value1, 0, s.ddir, s.bs, s.offset, s.prio, s.issue_ns,
                    );
                }
            }
            append(&dest.path, text)?;
            return match &dest.path2 {
                Some(p2) => append(p2, text2),
                None => Ok(()),
            };
        }
        for s in samples {
            w.line(
                text,
                s.time_ms + epoch_ms,
                s.value,
                s.value1,
                s.ddir,
                s.bs,
                s.offset,
                s.prio,
                s.issue_ns,
            );
        }
        append(&dest.path, text)
    }

    /// log_store_compressed: the samples in fio's binary layout (`self.layout`), one zlib
    /// stream per `log_compression` bytes of them. `pick` gives each sample's record for
    /// this file.
    fn write_compressed(
        &self,
        path: &Path,
        epoch_ms: u64,
        samples: &[Sample],
        pick: impl Fn(&Sample) -> crate::logz::Rec,
    ) -> Result<(), String> {
        if samples.is_empty() {
            return Ok(());
        }
        let c = self.compress.clone().unwrap_or_default();
        let cols = crate::logz::Columns {
            offset: self.offset,
            prio_raw: self.prio_raw,
            both: self.both_values,
            issue: self.issue_time,
        };
        let rec = crate::logz::record_size(self.layout, cols);
        let per = if c.chunk > 0 {
            (c.chunk as usize / rec).max(1)
        } else {
            samples.len()
        };
        let mut raws = Vec::new();
        for chunk in samples.chunks(per) {
            let mut raw = Vec::with_capacity(chunk.len() * rec);
            for s in chunk {
                let mut r = pick(s);
                r.time_ms += epoch_ms;
                if !self.both_values {
                    // The newest fio's records hold 0 where no second value is logged.
                    r.value1 = 0;
                }
                crate::logz::encode(&mut raw, self.layout, cols, &r);
            }
            raws.push(raw);
        }
        self.deflate_to(path, raws)
    }

    /// Deflate each of `raws` as one zlib stream (on `log_compression_cpus` when given) and
    /// append them to `path`.
    fn deflate_to(&self, path: &Path, raws: Vec<Vec<u8>>) -> Result<(), String> {
        if raws.is_empty() {
            return Ok(());
        }
        let deflate_all =
            move || -> Vec<u8> { raws.iter().flat_map(|r| crate::logz::deflate(r)).collect() };
        let cpus = self.compress.as_ref().and_then(|c| c.cpus.clone());
        let out = match cpus {
            Some(cpus) => std::thread::scope(|sc| {
                sc.spawn(move || {
                    let mut set = flexio_engine::os::thread::CpuSet::new();
                    for c in cpus
                        .iter()
                        .filter(|c| **c < flexio_engine::os::thread::CpuSet::MAX_CPU)
                    {
                        set.set(*c);
                    }
                    let _ = flexio_engine::os::thread::sched_setaffinity(None, &set);
                    deflate_all()
                })
                .join()
                .unwrap_or_default()
            }),
            None => deflate_all(),
        };
        append(path, &out)
    }
}

/// Append `data` to `path` in one write.
fn append(path: &Path, data: &[u8]) -> Result<(), String> {
    // Threads sharing a log (per_job_logs=0) append whole batches one at a time.
    static LOCK: Mutex<()> = Mutex::new(());
    let _g = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .and_then(|mut f| f.write_all(data))
        .map_err(|e| format!("cannot write log {}: {e}", path.display()))
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

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(p: &Path) -> Vec<String> {
        std::fs::read_to_string(p)
            .unwrap()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn plan(d: &Path, avg_ms: u64) -> LogPlan {
        LogPlan {
            lat: Some([d.join("lat.log"), d.join("slat.log"), d.join("clat.log")]),
            bw: Some(d.join("bw.log")),
            iops: Some(d.join("iops.log")),
            avg_ms,
            ..Default::default()
        }
    }

    #[test]
    fn per_io_samples_become_fios_lines() {
        let d = tempfile::tempdir().unwrap();
        let p = LogPlan {
            offset: true,
            ..plan(d.path(), 0)
        };
        let mut l = Logs::new(&p);
        assert!(l.per_io_bw && l.per_io_iops);
        l.io(5, 0, 4096, 8192, 0, 3000, 2000, Some(1000), 7);
        l.io(6, 1, 8192, 0, 1 << 13, 4000, 4000, None, 9);
        assert!(l.finish().is_empty());
        let dp = d.path();
        assert_eq!(
            lines(&dp.join("lat.log")),
            ["5, 3000, 0, 4096, 8192, 0", "6, 4000, 1, 8192, 0, 1"]
        );
        assert_eq!(
            lines(&dp.join("clat.log")),
            ["5, 2000, 0, 4096, 8192, 0", "6, 4000, 1, 8192, 0, 1"]
        );
        // slat only where it was measured.
        assert_eq!(lines(&dp.join("slat.log")), ["5, 1000, 0, 4096, 8192, 0"]);
        // Per-I/O bandwidth: bs * 10^6 / clat (ns), fio's per-I/O sample.
        assert_eq!(
            lines(&dp.join("bw.log")),
            ["5, 2048000, 0, 4096, 8192, 0", "6, 2048000, 1, 8192, 0, 1"]
        );
        assert_eq!(
            lines(&dp.join("iops.log")),
            ["5, 1, 0, 4096, 8192, 0", "6, 1, 1, 8192, 0, 1"]
        );
    }

    #[test]
    fn an_io_within_the_clocks_resolution_is_still_one_line() {
        // clat 0 (the null engine, a coarse clock): fio's sample of rate 0, never a gap.
        assert_eq!(per_io_rate(131072, 0), 0);
        assert_eq!(per_io_rate(131072, 1), 131_072_000_000);
        assert_eq!(per_io_rate(4096, 2000), 2_048_000);
        let d = tempfile::tempdir().unwrap();
        let mut l = Logs::new(&plan(d.path(), 0));
        l.io(3, 1, 131072, 0, 0, 0, 0, None, 0);
        l.io(3, 1, 131072, 131072, 0, 5, 1, None, 0);
        l.io(3, 1, 131072, 262144, 0, 0, 0, None, 0);
        assert!(l.finish().is_empty());
        assert_eq!(
            lines(&d.path().join("bw.log")),
            [
                "3, 0, 1, 131072, 0",
                "3, 131072000000, 1, 131072, 0",
                "3, 0, 1, 131072, 0"
            ]
        );
        assert_eq!(lines(&d.path().join("iops.log")).len(), 3);
        assert_eq!(lines(&d.path().join("clat.log")).len(), 3);
    }

    #[test]
    fn one_entry_per_io_feeds_both_latency_logs() {
        let d = tempfile::tempdir().unwrap();
        let p = LogPlan {
            issue_time: true,
            both_values: true,
            lat: Some([
                d.path().join("lat.log"),
                d.path().join("slat.log"),
                d.path().join("clat.log"),
            ]),
            ..Default::default()
        };
        let mut l = Logs::new(&p);
        assert_eq!(l.logs[0].dest.kind, Kind::LatClat);
        // 56 bytes on 64-bit targets (52 where u64 aligns to 4, as on i686).
        assert!(std::mem::size_of::<Sample>() <= 56);
        // Enough entries for the writer thread to take batches, lat equal to clat in some.
        let n = BATCH as u64 + 5;
        for t in 0..n {
            l.io(
                t / 1000,
                1,
                4096,
                t * 4096,
                0,
                100 + t % 3,
                100,
                None,
                7 + t,
            );
        }
        assert!(l.finish().is_empty());
        let lat = lines(&d.path().join("lat.log"));
        let clat = lines(&d.path().join("clat.log"));
        assert_eq!((lat.len() as u64, clat.len() as u64), (n, n));
        for t in [0u64, 1, 2, 1000, n - 1] {
            let (i, ms) = (t as usize, t / 1000);
            // The second value of a per-I/O entry is 0; the issue time is clat's only.
            assert_eq!(lat[i], format!("{ms}, {}, 0, 1, 4096, 0, 0", 100 + t % 3));
            assert_eq!(clat[i], format!("{ms}, 100, 0, 1, 4096, 0, {}", 7 + t));
        }
    }

    #[test]
    fn full_batches_go_to_the_writer_and_keep_their_order() {
        let d = tempfile::tempdir().unwrap();
        let p = LogPlan {
            iops: Some(d.path().join("iops.log")),
            ..Default::default()
        };
        let mut l = Logs::new(&p);
        let n = 2 * BATCH as u64 + 3;
        for t in 0..n {
            l.io(t, 0, 512, 0, 0, 1, 1, None, 0);
            if t == BATCH as u64 {
                assert!(l.writer.is_some(), "a full batch starts the writer thread");
                assert_eq!(l.logs[0].samples.len(), 1);
            }
        }
        assert!(l.finish().is_empty());
        let got = lines(&d.path().join("iops.log"));
        assert_eq!(got.len() as u64, n);
        for (t, line) in got.iter().enumerate() {
            assert_eq!(line, &format!("{t}, 1, 0, 512, 0"));
        }
    }

    #[test]
    fn windows_average_latency() {
        let d = tempfile::tempdir().unwrap();
        let mut l = Logs::new(&plan(d.path(), 100));
        assert!(!l.per_io_bw && !l.per_io_iops);
        l.io(10, 0, 4096, 0, 0, 10, 10, None, 0);
        l.io(20, 0, 4096, 0, 0, 21, 11, None, 0);
        let none = Hist::disabled();
        let hists = [&none, &none, &none];
        // Not yet at the window's end: nothing.
        l.tick(99, hists, &[0; 3]);
        assert!(l.logs.iter().all(|g| g.samples.is_empty()));
        l.tick(100, hists, &[0; 3]);
        // A second window with no I/O writes no entry; the third one does.
        l.tick(200, hists, &[0; 3]);
        l.io(250, 0, 4096, 0, 0, 7, 7, None, 0);
        l.tick(300, hists, &[0; 3]);
        assert!(l.finish().is_empty());
        let dp = d.path();
        // Mean rounded to nearest: (10 + 21 + 1) / 2 = 16; (10 + 11 + 1) / 2 = 11.
        assert_eq!(
            lines(&dp.join("lat.log")),
            ["100, 16, 0, 0, 0", "300, 7, 0, 0, 0"]
        );
        assert_eq!(
            lines(&dp.join("clat.log")),
            ["100, 11, 0, 0, 0", "300, 7, 0, 0, 0"]
        );
        assert!(lines(&dp.join("slat.log")).is_empty());
        // The windows make no bw or IOPS entries: those are the job's samples (metering).
        assert!(lines(&dp.join("bw.log")).is_empty());
        assert!(lines(&dp.join("iops.log")).is_empty());
    }

    #[test]
    fn window_maximum_and_both_values() {
        let d = tempfile::tempdir().unwrap();
        let p = LogPlan {
            max_value: true,
            both_values: true,
            ..plan(d.path(), 50)
        };
        let mut l = Logs::new(&p);
        for v in [5, 40, 9] {
            l.io(1, 1, 4096, 0, 0, v, v, Some(1), 0);
        }
        let none = Hist::disabled();
        l.tick(60, [&none, &none, &none], &[0; 3]);
        assert!(l.finish().is_empty());
        // The window closes at its own end (50), whatever the tick's time.
        assert_eq!(lines(&d.path().join("lat.log")), ["50, 40, 40, 1, 0, 0"]);
        assert_eq!(lines(&d.path().join("slat.log")), ["50, 1, 1, 1, 0, 0"]);
    }

    #[test]
    fn histogram_log_writes_each_intervals_delta() {
        let d = tempfile::tempdir().unwrap();
        let p = LogPlan {
            hist: Some(d.path().join("hist.log")),
            hist_ms: 100,
            ..Default::default()
        };
        let mut l = Logs::new(&p);
        let mut h = Hist::enabled();
        let none = Hist::disabled();
        let total = |line: &str| -> u64 {
            line.split(", ")
                .skip(3)
                .map(|b| b.parse::<u64>().unwrap())
                .sum()
        };
        for v in [1000, 2000, 3000] {
            h.add(v);
        }
        l.tick(50, [&h, &none, &none], &[4096, 0, 0]);
        l.tick(120, [&h, &none, &none], &[4096, 0, 0]);
        // Nothing new in the next interval: no line.
        l.tick(210, [&h, &none, &none], &[4096, 0, 0]);
        h.add(1_000_000);
        h.add(1_000_000);
        l.tick(300, [&h, &none, &none], &[512, 0, 0]);
        assert!(l.finish().is_empty());
        let got = lines(&d.path().join("hist.log"));
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(got[0].starts_with("120, 0, 4096, "), "{}", got[0]);
        assert!(got[1].starts_with("300, 0, 512, "), "{}", got[1]);
        assert_eq!(total(&got[0]), 3);
        assert_eq!(total(&got[1]), 2, "only the interval's delta");
        assert_eq!(got[0].split(", ").count(), got[1].split(", ").count());
    }

    /// The same samples through a plain plan and through `log_store_compressed` (streams
    /// of `chunk` bytes) in `layout`: every log file of the compressed run, inflated, is
    /// the plain run's file byte for byte.
    fn same_samples_both_ways(base: LogPlan, layout: crate::logz::Layout, chunk: u64) {
        let feed = |p: &LogPlan| {
            let mut l = Logs::new(p);
            let mut h = Hist::enabled();
            let none = Hist::disabled();
            let (mut bytes, mut ios) = ([0u64; 3], [0u64; 3]);
            for i in 0..3000u64 {
                let (d, t) = ((i % 3) as u8 % 2, i / 10);
                let lat = 1000 + (i * 7919) % 50_000;
                let slat = (i % 4 != 0).then_some(i % 300);
                l.io(
                    t,
                    d,
                    4096 << (i % 2),
                    i * 4096,
                    (i % 3) as u16 * 0x2001,
                    lat,
                    lat - 100,
                    slat,
                    i * 1000 + 17,
                );
                h.add(lat - 100);
                bytes[d as usize] += 4096;
                ios[d as usize] += 1;
                if i % 50 == 49 {
                    l.tick(t, [&h, &none, &none], &[4096, 8192, 0]);
                    for d in 0..2u8 {
                        l.rate_sample(false, t, d, bytes[d as usize] / 1024);
                        l.rate_sample(true, t, d, ios[d as usize]);
                    }
                }
            }
            assert!(l.finish().is_empty());
        };
        let plain = tempfile::tempdir().unwrap();
        let packed = tempfile::tempdir().unwrap();
        let at = |d: &Path, p: &LogPlan, fz: bool| {
            let name = |k: &str| {
                d.join(if fz {
                    format!("{k}.log.fz")
                } else {
                    format!("{k}.log")
                })
            };
            LogPlan {
                lat: p
                    .lat
                    .as_ref()
                    .map(|_| [name("lat"), name("slat"), name("clat")]),
                bw: p.bw.as_ref().map(|_| name("bw")),
                iops: p.iops.as_ref().map(|_| name("iops")),
                hist: p.hist.as_ref().map(|_| name("hist")),
                layout,
                ..p.clone()
            }
        };
        let pp = at(plain.path(), &base, false);
        let zp = LogPlan {
            compress: Some(CompressPlan {
                chunk,
                store: true,
                cpus: None,
            }),
            ..at(packed.path(), &base, true)
        };
        create_all(&pp.paths()).unwrap();
        create_all(&zp.paths()).unwrap();
        feed(&pp);
        feed(&zp);
        let mut checked = 0;
        for (a, b) in pp.paths().iter().zip(zp.paths()) {
            let text = std::fs::read_to_string(a).unwrap();
            let z = std::fs::read(&b).unwrap();
            assert!(!text.is_empty(), "{}", a.display());
            assert!(z.len() < text.len(), "{}: compressed", b.display());
            for prefer in [crate::logz::Layout::Fio333, crate::logz::Layout::Newest] {
                let back = crate::logz::inflate_file(&b, prefer).unwrap();
                assert!(
                    back == text,
                    "{layout:?} {chunk} {}: {prefer:?}",
                    a.display()
                );
            }
            checked += 1;
        }
        assert_eq!(checked, pp.paths().len());
    }

    fn every_log(d: &Path) -> LogPlan {
        LogPlan {
            lat: Some([d.join("a"), d.join("b"), d.join("c")]),
            bw: Some(d.join("d")),
            iops: Some(d.join("e")),
            hist: Some(d.join("f")),
            hist_ms: 20,
            hist_coarseness: 2,
            ..Default::default()
        }
    }

    #[test]
    fn compressed_logs_of_every_kind_inflate_to_the_plain_text() {
        use crate::logz::Layout;
        let d = tempfile::tempdir().unwrap();
        let all = every_log(d.path());
        // Per-I/O logs with every column of the newest fio, in one stream and in many.
        let newest = LogPlan {
            offset: true,
            prio_raw: true,
            both_values: true,
            issue_time: true,
            ..all.clone()
        };
        for chunk in [0, 4096] {
            same_samples_both_ways(newest.clone(), Layout::Newest, chunk);
        }
        // Windows (mean and maximum), with and without the offset column.
        for offset in [false, true] {
            let windowed = LogPlan {
                avg_ms: 25,
                both_values: true,
                offset,
                ..all.clone()
            };
            same_samples_both_ways(windowed, Layout::Newest, 1024);
        }
        // fio 3.33's records: its columns.
        for (offset, prio_raw, avg_ms) in [(false, false, 0), (true, true, 0), (true, false, 25)] {
            let p = LogPlan {
                offset,
                prio_raw,
                avg_ms,
                max_value: avg_ms > 0,
                ..all.clone()
            };
            same_samples_both_ways(p, Layout::Fio333, 2048);
        }
    }

    #[test]
    fn unwritable_logs_are_reported() {
        let d = tempfile::tempdir().unwrap();
        let p = LogPlan {
            iops: Some(d.path().join("missing/iops.log")),
            ..Default::default()
        };
        let mut l = Logs::new(&p);
        l.io(1, 0, 512, 0, 0, 1, 1, None, 0);
        let e = l.finish();
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("cannot write log ") && e[0].contains("missing/iops.log"));
    }

    #[test]
    fn create_all_makes_parents_and_truncates() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("a/b/x.log");
        create_all(std::slice::from_ref(&p)).unwrap();
        std::fs::write(&p, "old").unwrap();
        create_all(std::slice::from_ref(&p)).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"");
    }

    #[test]
    fn interval_stream_is_one_line_per_direction_and_interval() {
        let d = tempfile::tempdir().unwrap();
        let path = d.path().join("iv.jsonl");
        let mut iv = IntervalLog::new(&path, 100, "job", 3).unwrap();
        let mut h = Hist::enabled();
        let none = Hist::disabled();
        h.add(5000);
        iv.emit(
            50,
            (&[4096, 0, 0], &[1, 0, 0]),
            [&h, &none, &none],
            [&none; 3],
            false,
        );
        iv.emit(
            100,
            (&[8192, 0, 0], &[2, 0, 0]),
            [&h, &none, &none],
            [&none; 3],
            false,
        );
        iv.emit(
            150,
            (&[8192, 0, 0], &[2, 0, 0]),
            [&h, &none, &none],
            [&none; 3],
            true,
        );
        let got = lines(&path);
        assert_eq!(got.len(), 1, "{got:?}");
        let v: serde_json::Value = serde_json::from_str(&got[0]).unwrap();
        assert_eq!(v["job"], "job");
        assert_eq!(v["thread"], 3);
        assert_eq!(v["ios"], 2);
        assert_eq!(v["bytes"], 8192);
        assert_eq!(v["end_ms"], 100);
    }
}
