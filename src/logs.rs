//! Per-job log files with fio's names and line formats (`write_lat_log`, `write_bw_log`,
//! `write_iops_log`, `write_hist_log`), and flexio's per-interval JSON Lines stream.
//!
//! Samples are kept in memory as numbers and written in batches (every 64 Ki samples and at
//! the end), so the I/O path only appends to a vector. Lines:
//!
//! ```text
//! <time_ms>, <value>, <ddir>, <bs>, <prio>              default
//! <time_ms>, <value>, <ddir>, <bs>, <offset>, <prio>    log_offset=1
//! <time_ms>, <ddir>, <bs>, <bin0>, ..., <bin1855>       histogram log
//! ```

use flexio_job::JobOptions;
use flexio_stats::hist::{Hist, FIO_NR};
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::Mutex;

/// Samples kept before a batch is written out.
const BATCH: usize = 65536;

#[derive(Clone, Copy, Debug)]
pub struct Sample {
    pub time_ms: u64,
    pub value: u64,
    pub ddir: u8,
    pub bs: u64,
    pub offset: u64,
    pub prio: u16,
}

/// Log kinds and their file-name suffixes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Lat,
    Slat,
    Clat,
    Bw,
    Iops,
}

impl Kind {
    fn suffix(self) -> &'static str {
        match self {
            Kind::Lat => "lat",
            Kind::Slat => "slat",
            Kind::Clat => "clat",
            Kind::Bw => "bw",
            Kind::Iops => "iops",
        }
    }
}

/// fio's log file name: `<prefix>_<type>.<thread_number>.log` (`.log` only with
/// per_job_logs=0).
pub fn log_name(prefix: &str, kind: &str, thread_number: u32, per_job: bool) -> PathBuf {
    if per_job {
        PathBuf::from(format!("{prefix}_{kind}.{thread_number}.log"))
    } else {
        PathBuf::from(format!("{prefix}_{kind}.log"))
    }
}

/// A log's prefix: the option's value, or the job name for a bare option.
fn prefix_of(o: &JobOptions, p: &Option<String>) -> Option<String> {
    p.as_ref().map(|s| {
        if s.is_empty() {
            o.name.clone()
        } else {
            s.clone()
        }
    })
}

/// All log files a job thread writes (for creating them before the run).
pub fn files_of(o: &JobOptions, thread_number: u32) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let pj = o.per_job_logs;
    let prefix = |p: &Option<String>| prefix_of(o, p);
    if let Some(p) = prefix(&o.write_lat_log) {
        for k in ["lat", "slat", "clat"] {
            out.push(log_name(&p, k, thread_number, pj));
        }
    }
    if let Some(p) = prefix(&o.write_bw_log) {
        out.push(log_name(&p, "bw", thread_number, pj));
    }
    if let Some(p) = prefix(&o.write_iops_log) {
        out.push(log_name(&p, "iops", thread_number, pj));
    }
    if let Some(p) = prefix(&o.write_hist_log) {
        out.push(log_name(&p, "clat_hist", thread_number, pj));
    }
    if let Some(p) = &o.interval_log {
        out.push(PathBuf::from(p));
    }
    out
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

/// Everything a job thread logs.
pub struct JobLogs {
    logs: Vec<Log>,
    offset: bool,
    prio_raw: bool,
    avg_ms: u64,
    max_value: bool,
    /// Per-I/O bandwidth/IOPS logging (log_avg_msec=0): the job's bw/iops statistics switch
    /// to per-I/O samples as in fio.
    pub per_io_bw: bool,
    pub per_io_iops: bool,
    lat_windows: [[Window; 3]; 3],
    next_window_ms: u64,
    hist: Option<HistLog>,
    errors: Vec<String>,
}

struct HistLog {
    path: PathBuf,
    every_ms: u64,
    next_ms: u64,
    coarseness: u32,
    last: [Vec<u64>; 3],
    lines: Vec<String>,
}

impl JobLogs {
    pub fn new(o: &JobOptions, thread_number: u32) -> Option<JobLogs> {
        let pj = o.per_job_logs;
        let prefix = |p: &Option<String>| prefix_of(o, p);
        let mut logs = Vec::new();
        if let Some(p) = prefix(&o.write_lat_log) {
            for k in [Kind::Lat, Kind::Slat, Kind::Clat] {
                logs.push(Log {
                    kind: k,
                    path: log_name(&p, k.suffix(), thread_number, pj),
                    samples: Vec::new(),
                });
            }
        }
        if let Some(p) = prefix(&o.write_bw_log) {
            logs.push(Log {
                kind: Kind::Bw,
                path: log_name(&p, "bw", thread_number, pj),
                samples: Vec::new(),
            });
        }
        if let Some(p) = prefix(&o.write_iops_log) {
            logs.push(Log {
                kind: Kind::Iops,
                path: log_name(&p, "iops", thread_number, pj),
                samples: Vec::new(),
            });
        }
        let hist = prefix(&o.write_hist_log).map(|p| HistLog {
            path: log_name(&p, "clat_hist", thread_number, pj),
            every_ms: o.log_hist_msec.max(1),
            next_ms: o.log_hist_msec.max(1),
            coarseness: o.log_hist_coarseness,
            last: [vec![0; FIO_NR], vec![0; FIO_NR], vec![0; FIO_NR]],
            lines: Vec::new(),
        });
        if logs.is_empty() && hist.is_none() {
            return None;
        }
        let per_io = o.log_avg_msec == 0;
        Some(JobLogs {
            per_io_bw: per_io && o.write_bw_log.is_some(),
            per_io_iops: per_io && o.write_iops_log.is_some(),
            offset: o.log_offset,
            prio_raw: o.log_prio,
            avg_ms: o.log_avg_msec,
            max_value: o.log_max_value,
            lat_windows: [[Window::default(); 3]; 3],
            next_window_ms: o.log_avg_msec,
            logs,
            hist,
            errors: Vec::new(),
        })
    }

    fn push(&mut self, kind: Kind, s: Sample) {
        if let Some(l) = self.logs.iter_mut().find(|l| l.kind == kind) {
            l.samples.push(s);
            if l.samples.len() >= BATCH {
                let (path, samples) = (l.path.clone(), std::mem::take(&mut l.samples));
                self.write(&path, &samples);
            }
        }
    }

    /// A completed I/O: latencies in ns (slat 0 = none).
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
        let s = |value| Sample {
            time_ms,
            value,
            ddir,
            bs,
            offset,
            prio,
        };
        self.push(Kind::Lat, s(lat));
        self.push(Kind::Clat, s(clat));
        if let Some(v) = slat {
            self.push(Kind::Slat, s(v));
        }
        if self.per_io_bw && clat > 0 {
            self.push(Kind::Bw, s((bs as u128 * 1_000_000 / clat as u128) as u64));
        }
        if self.per_io_iops {
            self.push(Kind::Iops, s(1));
        }
    }

    /// Periodic work (at most every few ms): close averaging windows, write histogram rows.
    /// `bytes`/`ios` are per-direction totals so far; `hists` the clat histograms.
    /// `last_bs` is the length of the latest I/O per direction (the histogram log's bs column,
    /// as fio prints it).
    #[allow(clippy::too_many_arguments)]
    pub fn tick(
        &mut self,
        time_ms: u64,
        bytes: &[u64; 3],
        ios: &[u64; 3],
        last: &mut ([u64; 3], [u64; 3], u64),
        hists: [&Hist; 3],
        last_bs: &[u64; 3],
    ) {
        if self.avg_ms > 0 && time_ms >= self.next_window_ms {
            let t = self.next_window_ms;
            let span = (time_ms - last.2).max(1);
            for d in 0..3u8 {
                let di = d as usize;
                let db = bytes[di] - last.0[di];
                let dn = ios[di] - last.1[di];
                if dn > 0 {
                    let bw = db * 1000 / span / 1024;
                    let iops = dn * 1000 / span;
                    self.push(
                        Kind::Bw,
                        Sample {
                            time_ms: t,
                            value: bw,
                            ddir: d,
                            bs: 0,
                            offset: 0,
                            prio: 0,
                        },
                    );
                    self.push(
                        Kind::Iops,
                        Sample {
                            time_ms: t,
                            value: iops,
                            ddir: d,
                            bs: 0,
                            offset: 0,
                            prio: 0,
                        },
                    );
                }
                for (k, kind) in [(0, Kind::Lat), (1, Kind::Clat), (2, Kind::Slat)] {
                    let w = std::mem::take(&mut self.lat_windows[k][di]);
                    // Window mean rounded to nearest (or the maximum with log_max_value).
                    let mean = (w.sum + w.n / 2).checked_div(w.n);
                    if let Some(mean) = mean {
                        let v = if self.max_value { w.max } else { mean };
                        self.push(
                            kind,
                            Sample {
                                time_ms: t,
                                value: v,
                                ddir: d,
                                bs: 0,
                                offset: 0,
                                prio: 0,
                            },
                        );
                    }
                }
            }
            *last = (*bytes, *ios, time_ms);
            while self.next_window_ms <= time_ms {
                self.next_window_ms += self.avg_ms;
            }
        }
        if let Some(h) = &mut self.hist {
            if time_ms >= h.next_ms {
                for (d, hist) in hists.iter().enumerate() {
                    let counts = hist.counts();
                    if counts.is_empty() {
                        continue;
                    }
                    // fio's layout has 1856 bins: everything above ~17 s goes to the last.
                    let mut cur = vec![0u64; FIO_NR];
                    for (i, c) in counts.iter().enumerate() {
                        cur[i.min(FIO_NR - 1)] += c;
                    }
                    let delta: Vec<u64> = cur.iter().zip(&h.last[d]).map(|(a, b)| a - b).collect();
                    if delta.iter().all(|x| *x == 0) {
                        continue;
                    }
                    let step = 1usize << h.coarseness;
                    let bins: Vec<String> = delta
                        .chunks(step)
                        .map(|c| c.iter().sum::<u64>().to_string())
                        .collect();
                    h.lines.push(format!(
                        "{time_ms}, {d}, {}, {}",
                        last_bs[d],
                        bins.join(", ")
                    ));
                    h.last[d] = cur;
                }
                while h.next_ms <= time_ms {
                    h.next_ms += h.every_ms;
                }
            }
        }
    }

    fn write(&mut self, path: &PathBuf, samples: &[Sample]) {
        let mut out = String::with_capacity(samples.len() * 32);
        for s in samples {
            use std::fmt::Write as _;
            let prio = if self.prio_raw {
                format!("0x{:04x}", s.prio)
            } else {
                u16::from(s.prio >> 13 == 1).to_string()
            };
            let _ = if self.offset {
                writeln!(
                    out,
                    "{}, {}, {}, {}, {}, {prio}",
                    s.time_ms, s.value, s.ddir, s.bs, s.offset
                )
            } else {
                writeln!(
                    out,
                    "{}, {}, {}, {}, {prio}",
                    s.time_ms, s.value, s.ddir, s.bs
                )
            };
        }
        if let Err(e) = append(path, out.as_bytes()) {
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
            let mut text = h.lines.join("\n");
            if !text.is_empty() {
                text.push('\n');
            }
            if let Err(e) = append(&h.path, text.as_bytes()) {
                self.errors
                    .push(format!("cannot write log {}: {e}", h.path.display()));
            }
        }
        self.errors
    }
}

fn append(path: &PathBuf, data: &[u8]) -> std::io::Result<()> {
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
    last_hist: [Vec<u64>; 3],
    last_sched: [Vec<u64>; 3],
    job: String,
    thread: u32,
}

impl IntervalLog {
    /// Appends to `path` (created beforehand by `create_all`); each interval is one write of
    /// whole lines to an O_APPEND file, so threads sharing the file do not interleave lines.
    pub fn new(path: &str, every_ms: u64, job: &str, thread: u32) -> std::io::Result<Self> {
        let file = OpenOptions::new().append(true).create(true).open(path)?;
        Ok(IntervalLog {
            file,
            every_ms: every_ms.max(1),
            next_ms: every_ms.max(1),
            start_ms: 0,
            last_bytes: [0; 3],
            last_ios: [0; 3],
            last_hist: [Vec::new(), Vec::new(), Vec::new()],
            last_sched: [Vec::new(), Vec::new(), Vec::new()],
            job: job.to_string(),
            thread,
        })
    }

    /// Emit the records of the interval ending at `time_ms`.
    pub fn emit(
        &mut self,
        time_ms: u64,
        bytes: &[u64; 3],
        ios: &[u64; 3],
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
            let (pstr, bins) = interval_hist(hists[d], &mut self.last_hist[d]);
            // Rate-limited directions: the same for latency from the scheduled start.
            let sched_part = if sched[d].is_enabled() && sched[d].total() > 0 {
                let (p, b) = interval_hist(sched[d], &mut self.last_sched[d]);
                format!(",\"sched_lat_ns\":{{{p}}},\"sched_hist_ns\":{{{b}}}")
            } else {
                String::new()
            };
            text.push_str(&format!(
                "{{\"job\":{},\"thread\":{},\"ddir\":\"{}\",\"start_ms\":{},\"end_ms\":{},\"ios\":{},\"bytes\":{},\"iops\":{:.3},\"bw_bytes\":{},\"clat_ns\":{{{}}},\"hist_ns\":{{{}}}{}}}\n",
                json_str(&self.job),
                self.thread,
                ["read", "write", "trim"][d],
                self.start_ms,
                time_ms,
                n,
                b,
                n as f64 * 1000.0 / span as f64,
                b * 1000 / span,
                pstr,
                bins,
                sched_part
            ));
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

/// The interval's part of a cumulative histogram: its percentiles and non-empty bins as
/// JSON members; `prev` (the counts at the previous interval) is advanced.
fn interval_hist(h: &Hist, prev: &mut Vec<u64>) -> (String, String) {
    let counts = h.counts();
    let delta: Vec<u64> = counts
        .iter()
        .enumerate()
        .map(|(i, c)| c - prev.get(i).copied().unwrap_or(0))
        .collect();
    let bins: Vec<String> = delta
        .iter()
        .enumerate()
        .filter(|(_, c)| **c > 0)
        .map(|(i, dc)| format!("\"{}\":{dc}", flexio_stats::hist::idx_to_val(i)))
        .collect();
    let delta = Hist::from_counts(delta);
    let pct = delta.percentiles(&[50.0, 90.0, 99.0, 99.9], delta.total());
    let pstr: Vec<String> = pct.iter().map(|(p, v)| format!("\"p{p}\":{v}")).collect();
    *prev = counts.to_vec();
    (pstr.join(","), bins.join(","))
}

fn json_str(s: &str) -> String {
    let mut o = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}
