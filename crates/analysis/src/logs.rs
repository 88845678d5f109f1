//! fio's log files beside a result (`<prefix>_{lat,clat,slat,bw,iops}[.N].log` and
//! `<prefix>_clat_hist[.N].log`), read with a streaming parser: statistics stay exact
//! (integer sums, a histogram with fio's bucket layout for percentiles) while the time series
//! kept for drawing is bounded (at most [`MAX_BUCKETS`] time buckets of min/max/sum/count,
//! their width doubling as the log gets longer).
//!
//! Line formats (fio 3.33): `time_ms, value, ddir, bs[, offset][, prio]`, and for histogram
//! logs `time_ms, ddir, bs, c0, ..., cK` with `K = 1856 >> log_hist_coarseness` per-interval
//! bucket counts.

use crate::model::{Ddir, RunResult};
use flexio_stats::hist::{idx_to_val, val_to_idx, FIO_NR, NR};
use flexio_stats::stat::LatStat;
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Time buckets kept per series.
pub const MAX_BUCKETS: usize = 2048;

/// What a log records.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LogKind {
    Lat,
    Clat,
    Slat,
    Bw,
    Iops,
    ClatHist,
}

impl LogKind {
    pub fn suffix(self) -> &'static str {
        match self {
            LogKind::Lat => "lat",
            LogKind::Clat => "clat",
            LogKind::Slat => "slat",
            LogKind::Bw => "bw",
            LogKind::Iops => "iops",
            LogKind::ClatHist => "clat_hist",
        }
    }
    pub fn is_latency(self) -> bool {
        matches!(self, LogKind::Lat | LogKind::Clat | LogKind::Slat)
    }
    /// The job option that names this log's prefix.
    fn option(self) -> &'static str {
        match self {
            LogKind::Lat | LogKind::Clat | LogKind::Slat => "write_lat_log",
            LogKind::Bw => "write_bw_log",
            LogKind::Iops => "write_iops_log",
            LogKind::ClatHist => "write_hist_log",
        }
    }
}

/// A log file name split into prefix, kind and thread number (`None` with per_job_logs=0).
pub fn parse_name(name: &str) -> Option<(String, LogKind, Option<u32>)> {
    let stem = name.strip_suffix(".log")?;
    let (stem, thread) = match stem.rsplit_once('.') {
        Some((s, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) => {
            (s, Some(n.parse().ok()?))
        }
        _ => (stem, None),
    };
    for kind in [
        LogKind::ClatHist,
        LogKind::Clat,
        LogKind::Slat,
        LogKind::Lat,
        LogKind::Bw,
        LogKind::Iops,
    ] {
        if let Some(prefix) = stem.strip_suffix(&format!("_{}", kind.suffix())) {
            if !prefix.is_empty() {
                return Some((prefix.to_string(), kind, thread));
            }
        }
    }
    None
}

/// One time bucket.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bucket {
    pub count: u64,
    pub sum: f64,
    pub min: u64,
    pub max: u64,
    /// Sum of the lines' block sizes (bytes moved, for per-I/O logs).
    pub bytes: u64,
}

impl Default for Bucket {
    fn default() -> Self {
        Bucket {
            count: 0,
            sum: 0.0,
            min: u64::MAX,
            max: 0,
            bytes: 0,
        }
    }
}

impl Bucket {
    fn merge(&mut self, o: &Bucket) {
        self.count += o.count;
        self.sum += o.sum;
        self.min = self.min.min(o.min);
        self.max = self.max.max(o.max);
        self.bytes += o.bytes;
    }
    pub fn mean(&self) -> f64 {
        self.sum / self.count as f64
    }
}

/// A time series downsampled into at most [`MAX_BUCKETS`] buckets of `width_ms`.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeSeries {
    pub width_ms: u64,
    pub buckets: Vec<Bucket>,
}

impl Default for TimeSeries {
    fn default() -> Self {
        TimeSeries {
            width_ms: 1,
            buckets: Vec::new(),
        }
    }
}

impl TimeSeries {
    fn widen(&mut self) {
        let old = std::mem::take(&mut self.buckets);
        self.width_ms *= 2;
        self.buckets = old
            .chunks(2)
            .map(|c| {
                let mut b = c[0];
                if let Some(o) = c.get(1) {
                    b.merge(o);
                }
                b
            })
            .collect();
    }

    #[inline]
    pub fn add(&mut self, t_ms: u64, v: u64, bytes: u64) {
        let mut i = (t_ms / self.width_ms) as usize;
        while i >= MAX_BUCKETS {
            self.widen();
            i = (t_ms / self.width_ms) as usize;
        }
        if i >= self.buckets.len() {
            self.buckets.resize(i + 1, Bucket::default());
        }
        let b = &mut self.buckets[i];
        b.count += 1;
        b.sum += v as f64;
        b.min = b.min.min(v);
        b.max = b.max.max(v);
        b.bytes += bytes;
    }

    pub fn merge(&mut self, o: &TimeSeries) {
        let mut o = o.clone();
        while self.width_ms < o.width_ms {
            self.widen();
        }
        while o.width_ms < self.width_ms {
            o.widen();
        }
        if o.buckets.len() > self.buckets.len() {
            self.buckets.resize(o.buckets.len(), Bucket::default());
        }
        for (a, b) in self.buckets.iter_mut().zip(&o.buckets) {
            a.merge(b);
        }
    }

    /// Buckets as (start time in ms, bucket), empty ones included.
    pub fn points(&self) -> impl Iterator<Item = (u64, &Bucket)> {
        self.buckets
            .iter()
            .enumerate()
            .map(move |(i, b)| (i as u64 * self.width_ms, b))
    }

    pub fn end_ms(&self) -> u64 {
        self.buckets.len() as u64 * self.width_ms
    }
}

/// One log kind and direction of a job, over all its log files.
#[derive(Clone, Debug, PartialEq)]
pub struct DirLog {
    pub kind: LogKind,
    pub ddir: Ddir,
    /// Exact statistics of the values (ns for latencies, KiB/s for bw, IOPS for iops).
    pub stat: LatStat,
    /// Latency logs: bucket counts in flexio's layout (fio's, extended to 64 bits).
    pub hist: Option<Vec<u64>>,
    /// Whether lines are per I/O (block size given) rather than averaged windows.
    pub per_io: bool,
    pub series: TimeSeries,
}

impl DirLog {
    fn new(kind: LogKind, ddir: Ddir) -> Self {
        DirLog {
            kind,
            ddir,
            stat: LatStat::default(),
            hist: kind.is_latency().then(|| vec![0u64; NR]),
            per_io: true,
            series: TimeSeries::default(),
        }
    }
    fn merge(&mut self, o: &DirLog) {
        self.stat.merge(&o.stat);
        if let (Some(a), Some(b)) = (&mut self.hist, &o.hist) {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        }
        self.per_io &= o.per_io;
        self.series.merge(&o.series);
    }
    /// Non-empty histogram buckets (value ns, count).
    pub fn bins(&self) -> Vec<(u64, u64)> {
        self.hist
            .as_ref()
            .map(|h| {
                h.iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(i, c)| (idx_to_val(i), *c))
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// A histogram log of one direction: the summed counts and per-interval percentiles.
#[derive(Clone, Debug, PartialEq)]
pub struct HistLog {
    pub ddir: Ddir,
    pub counts: Vec<u64>,
    pub intervals: u64,
    /// Per-interval median and 99th percentile (ns) over time.
    pub p50: TimeSeries,
    pub p99: TimeSeries,
}

impl HistLog {
    fn new(ddir: Ddir) -> Self {
        HistLog {
            ddir,
            counts: vec![0; NR],
            intervals: 0,
            p50: TimeSeries::default(),
            p99: TimeSeries::default(),
        }
    }
    fn merge(&mut self, o: &HistLog) {
        self.counts
            .iter_mut()
            .zip(&o.counts)
            .for_each(|(x, y)| *x += y);
        self.intervals += o.intervals;
        self.p50.merge(&o.p50);
        self.p99.merge(&o.p99);
    }
}

/// The logs of one job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JobLogs {
    pub files: Vec<PathBuf>,
    /// Compressed logs of the job (`log_store_compressed`, `.log.fz`) that were found and
    /// not read: [`attach`] keeps them all here (the Python package inflates them itself),
    /// [`attach_with`] those it could not inflate.
    pub compressed: Vec<(PathBuf, LogKind)>,
    pub series: Vec<DirLog>,
    pub hists: Vec<HistLog>,
    /// Lines that could not be read.
    pub bad_lines: u64,
    pub lines: u64,
}

impl JobLogs {
    pub fn get(&self, kind: LogKind, ddir: Ddir) -> Option<&DirLog> {
        self.series
            .iter()
            .find(|s| s.kind == kind && (s.ddir == ddir || ddir == Ddir::Mixed))
    }
    pub fn hist(&self, ddir: Ddir) -> Option<&HistLog> {
        self.hists
            .iter()
            .find(|h| h.ddir == ddir || ddir == Ddir::Mixed)
    }
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    fn add_series(&mut self, s: DirLog) {
        match self
            .series
            .iter_mut()
            .find(|x| x.kind == s.kind && x.ddir == s.ddir)
        {
            Some(x) => x.merge(&s),
            None => self.series.push(s),
        }
    }
    fn add_hist(&mut self, h: HistLog) {
        match self.hists.iter_mut().find(|x| x.ddir == h.ddir) {
            Some(x) => x.merge(&h),
            None => self.hists.push(h),
        }
    }
}

/// Leading unsigned number of a field (digits; a fraction is dropped, hex `0x..` read).
#[inline]
fn num(f: &[u8]) -> Option<u64> {
    let f = trim(f);
    if f.len() > 2 && f[0] == b'0' && (f[1] | 0x20) == b'x' {
        let s = std::str::from_utf8(&f[2..]).ok()?;
        return u64::from_str_radix(s, 16).ok();
    }
    let mut v: u64 = 0;
    let mut any = false;
    for &c in f {
        match c {
            b'0'..=b'9' => {
                v = v.checked_mul(10)?.checked_add((c - b'0') as u64)?;
                any = true;
            }
            b'.' => break,
            _ => return None,
        }
    }
    any.then_some(v)
}

#[inline]
fn trim(mut f: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'\r', rest @ ..] = f {
        f = rest;
    }
    while let [rest @ .., b' ' | b'\t' | b'\r'] = f {
        f = rest;
    }
    f
}

/// Call `line` for every line of a file (or an inflated log's text), reading it in large
/// blocks.
fn for_each_line(mut file: impl Read, mut line: impl FnMut(&[u8])) -> std::io::Result<()> {
    let mut buf = vec![0u8; 1 << 20];
    let mut filled = 0;
    loop {
        let n = file.read(&mut buf[filled..])?;
        if n == 0 {
            if filled > 0 {
                line(&buf[..filled]);
            }
            return Ok(());
        }
        filled += n;
        let mut start = 0;
        while let Some(off) = buf[start..filled].iter().position(|&b| b == b'\n') {
            line(&buf[start..start + off]);
            start += off + 1;
        }
        buf.copy_within(start..filled, 0);
        filled -= start;
        if filled == buf.len() {
            // A single line longer than the buffer (a histogram log line): grow.
            buf.resize(buf.len() * 2, 0);
        }
    }
}

/// What one file contributed.
#[derive(Default)]
struct FileData {
    series: BTreeMap<Ddir, DirLog>,
    hists: BTreeMap<Ddir, HistLog>,
    lines: u64,
    bad: u64,
}

fn read_sample_log(src: impl Read, kind: LogKind) -> std::io::Result<FileData> {
    let mut d = FileData::default();
    for_each_line(src, |l| {
        if trim(l).is_empty() {
            return;
        }
        d.lines += 1;
        let mut it = l.split(|&b| b == b',');
        let (Some(t), Some(v), Some(dd)) = (
            it.next().and_then(num),
            it.next().and_then(num),
            it.next().and_then(num).and_then(Ddir::from_log),
        ) else {
            d.bad += 1;
            return;
        };
        let bs = it.next().and_then(num).unwrap_or(0);
        let s = d.series.entry(dd).or_insert_with(|| DirLog::new(kind, dd));
        s.stat.add(v);
        if let Some(h) = &mut s.hist {
            h[val_to_idx(v)] += 1;
        }
        if bs == 0 {
            s.per_io = false;
        }
        s.series.add(t, v, bs);
    })?;
    Ok(d)
}

/// How many histogram buckets each of a histogram log line's `k` bins holds: bins of
/// 2^log_hist_coarseness of fio's 1856 buckets, or flexio's own 3776 (one each); `None`
/// for any other count.
fn hist_ratio(k: usize) -> Option<usize> {
    if k == NR {
        Some(1)
    } else if k > 0 && FIO_NR % k == 0 && (FIO_NR / k).is_power_of_two() {
        Some(FIO_NR / k)
    } else {
        None
    }
}

/// The latency (ns) each of a histogram log line's `k` bins stands for (the middle bucket
/// of the bin, valued as fio values a bucket); `None` when `k` is no histogram log's count.
pub fn hist_bin_ns(k: usize) -> Option<Vec<u64>> {
    let ratio = hist_ratio(k)?;
    Some((0..k).map(|i| idx_to_val(i * ratio + ratio / 2)).collect())
}

fn read_hist_log(src: impl Read) -> std::io::Result<FileData> {
    let mut d = FileData::default();
    let mut counts: Vec<u64> = Vec::new();
    for_each_line(src, |l| {
        if trim(l).is_empty() {
            return;
        }
        d.lines += 1;
        let mut it = l.split(|&b| b == b',');
        let (Some(t), Some(dd), Some(_bs)) = (
            it.next().and_then(num),
            it.next().and_then(num).and_then(Ddir::from_log),
            it.next().and_then(num),
        ) else {
            d.bad += 1;
            return;
        };
        counts.clear();
        for f in it {
            match num(f) {
                Some(c) => counts.push(c),
                None if trim(f).is_empty() => {}
                None => {
                    d.bad += 1;
                    return;
                }
            }
        }
        let Some(ratio) = hist_ratio(counts.len()) else {
            d.bad += 1;
            return;
        };
        let h = d.hists.entry(dd).or_insert_with(|| HistLog::new(dd));
        let total: u64 = counts.iter().sum();
        let (mut cum, mut p50, mut p99) = (0u64, None, None);
        for (i, &c) in counts.iter().enumerate() {
            if c == 0 {
                continue;
            }
            let idx = i * ratio + ratio / 2;
            h.counts[idx] += c;
            cum += c;
            if p50.is_none() && cum * 2 >= total {
                p50 = Some(idx_to_val(idx));
            }
            if p99.is_none() && cum * 100 >= total * 99 {
                p99 = Some(idx_to_val(idx));
            }
        }
        h.intervals += 1;
        if let (Some(a), Some(b)) = (p50, p99) {
            h.p50.add(t, a, 0);
            h.p99.add(t, b, 0);
        }
    })?;
    Ok(d)
}

/// Turns a compressed log (`.log.fz`) into its text; the program that links the run engine
/// supplies it (`flexio_run::logz::inflate_file`), this crate does not decode them.
pub type Inflate<'a> = &'a (dyn Fn(&Path) -> Result<String, String> + Sync);

/// One log's data: a text log read from its file, a compressed one inflated first.
fn read_one(p: &Path, k: LogKind, inflate: Option<Inflate>) -> std::io::Result<FileData> {
    let compressed = p.extension().is_some_and(|e| e == "fz");
    match (compressed, inflate) {
        (true, Some(f)) => {
            let text = f(p).map_err(std::io::Error::other)?;
            read_text(text.as_bytes(), k)
        }
        (true, None) => Err(std::io::Error::other(
            "a compressed log and nothing to inflate it",
        )),
        (false, _) => read_text(std::fs::File::open(p)?, k),
    }
}

fn read_text(src: impl Read, k: LogKind) -> std::io::Result<FileData> {
    if k == LogKind::ClatHist {
        read_hist_log(src)
    } else {
        read_sample_log(src, k)
    }
}

/// Read log files (in parallel, one thread per file up to the CPU count) into one job's logs.
pub fn read_logs(files: &[(PathBuf, LogKind)]) -> JobLogs {
    let (mut out, failed) = read_logs_with(files, None);
    out.bad_lines += failed.len() as u64;
    out
}

/// [`read_logs`], compressed logs inflated by `inflate`; the files that could not be read
/// are returned apart (with their kind and why), not counted.
fn read_logs_with(
    files: &[(PathBuf, LogKind)],
    inflate: Option<Inflate>,
) -> (JobLogs, Vec<(PathBuf, LogKind, String)>) {
    let mut failed = Vec::new();
    let mut out = JobLogs::default();
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .max(1);
    for chunk in files.chunks(threads) {
        let results: Vec<(PathBuf, LogKind, std::io::Result<FileData>)> = std::thread::scope(|s| {
            let hs: Vec<_> = chunk
                .iter()
                .map(|(p, k)| s.spawn(move || (p.clone(), *k, read_one(p, *k, inflate))))
                .collect();
            hs.into_iter()
                .map(|h| h.join().expect("log reader thread"))
                .collect()
        });
        for (p, k, r) in results {
            match r {
                Ok(d) => {
                    out.lines += d.lines;
                    out.bad_lines += d.bad;
                    d.series.into_values().for_each(|s| out.add_series(s));
                    d.hists.into_values().for_each(|h| out.add_hist(h));
                    out.files.push(p);
                }
                Err(e) => failed.push((p, k, e.to_string())),
            }
        }
    }
    (out, failed)
}

/// A log file and its thread number (`None` with per_job_logs=0).
type ThreadLog = (Option<u32>, PathBuf);

/// Find the log files in the result's folder and attach them to the jobs they belong to: a
/// job owns the logs whose prefix is its job name or the value of its `write_*_log` option.
/// When several jobs share a prefix, thread numbers are handed out in job order (one per
/// job); when they cannot be told apart, they all go to the first job, with a warning.
pub fn attach(run: &mut RunResult) {
    attach_with(run, None)
}

/// [`attach`], compressed logs (`log_store_compressed`) inflated by `inflate` and read with
/// the others; without it they are kept apart in [`JobLogs::compressed`]. One that cannot
/// be inflated stays there too, with a warning.
pub fn attach_with(run: &mut RunResult, inflate: Option<Inflate>) {
    let dir = match run.path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return;
    };
    // prefix -> kind -> [(thread, path)]
    let mut found: BTreeMap<String, BTreeMap<LogKind, Vec<ThreadLog>>> = BTreeMap::new();
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some((prefix, kind, thread)) = parse_name(name.strip_suffix(".fz").unwrap_or(&name))
        {
            let p = e.path();
            if p.metadata().map(|m| m.len() > 0).unwrap_or(false) {
                found
                    .entry(prefix)
                    .or_default()
                    .entry(kind)
                    .or_default()
                    .push((thread, p));
            }
        }
    }
    if found.is_empty() {
        return;
    }
    let mut per_job: Vec<Vec<(PathBuf, LogKind)>> = vec![Vec::new(); run.jobs.len()];
    for (prefix, kinds) in &found {
        for (kind, files) in kinds {
            let owners: Vec<usize> = run
                .jobs
                .iter()
                .enumerate()
                .filter(|(_, j)| {
                    // A prefix given as a path names its files by its last part.
                    let v = j
                        .option(kind.option())
                        .filter(|v| !v.is_empty() && *v != "1")
                        .unwrap_or(&j.name);
                    Path::new(v)
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy() == prefix.as_str())
                })
                .map(|(i, _)| i)
                .collect();
            let mut files = files.clone();
            files.sort();
            match owners.len() {
                // Another run's logs in the same folder.
                0 => {}
                1 => per_job[owners[0]].extend(files.into_iter().map(|(_, p)| (p, *kind))),
                n if n == files.len() => {
                    for (o, (_, p)) in owners.iter().zip(files) {
                        per_job[*o].push((p, *kind));
                    }
                }
                n => {
                    run.warnings.push(format!(
                        "{n} jobs share the log prefix {prefix} with {} {} logs: all given to the first",
                        files.len(),
                        kind.suffix()
                    ));
                    per_job[owners[0]].extend(files.into_iter().map(|(_, p)| (p, *kind)));
                }
            }
        }
    }
    for (job, files) in run.jobs.iter_mut().zip(per_job) {
        if files.is_empty() {
            continue;
        }
        let (compressed, files): (Vec<_>, Vec<_>) = match inflate {
            Some(_) => (Vec::new(), files),
            None => files
                .into_iter()
                .partition(|(p, _)| p.extension().is_some_and(|e| e == "fz")),
        };
        let (logs, failed) = read_logs_with(&files, inflate);
        job.logs = logs;
        job.logs.compressed = compressed;
        for (p, k, why) in failed {
            if p.extension().is_some_and(|e| e == "fz") {
                run.warnings.push(format!(
                    "job {}: {} could not be inflated ({why}); not drawn",
                    job.name,
                    p.display()
                ));
                job.logs.compressed.push((p, k));
            } else {
                // An unreadable text log counts as one bad line, as before.
                job.logs.bad_lines += 1;
            }
        }
        if job.logs.bad_lines > 0 {
            run.warnings.push(format!(
                "job {}: {} of {} log lines could not be read and were skipped",
                job.name, job.logs.bad_lines, job.logs.lines
            ));
        }
    }
}

#[cfg(test)]
#[path = "logs_tests.rs"]
mod tests;
