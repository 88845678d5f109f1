//! The operations of `flexio matrix` (iozone's `-a` set) and how each one is run: a fio job
//! per cell through flexio's engine path (`super::super::inproc`), or, for the four stdio
//! tests, a user-space buffered stream over the same file.

use flexio_run::inproc;
use flexio_stats::stat::LatStat;
use flexio_stats::Hist;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// One operation of the sweep, in iozone's order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Write,
    Rewrite,
    Read,
    Reread,
    RandRead,
    RandWrite,
    BkwdRead,
    RecRewrite,
    StrideRead,
    Fwrite,
    Frewrite,
    Fread,
    Freread,
}

impl Op {
    pub const ALL: [Op; 13] = [
        Op::Write,
        Op::Rewrite,
        Op::Read,
        Op::Reread,
        Op::RandRead,
        Op::RandWrite,
        Op::BkwdRead,
        Op::RecRewrite,
        Op::StrideRead,
        Op::Fwrite,
        Op::Frewrite,
        Op::Fread,
        Op::Freread,
    ];

    /// The name on the command line and in the JSON.
    pub fn name(self) -> &'static str {
        match self {
            Op::Write => "write",
            Op::Rewrite => "rewrite",
            Op::Read => "read",
            Op::Reread => "reread",
            Op::RandRead => "randread",
            Op::RandWrite => "randwrite",
            Op::BkwdRead => "bkwdread",
            Op::RecRewrite => "recrewrite",
            Op::StrideRead => "strideread",
            Op::Fwrite => "fwrite",
            Op::Frewrite => "frewrite",
            Op::Fread => "fread",
            Op::Freread => "freread",
        }
    }

    /// iozone's title of the operation's report.
    pub fn title(self) -> &'static str {
        match self {
            Op::Write => "Writer report",
            Op::Rewrite => "Re-writer report",
            Op::Read => "Reader report",
            Op::Reread => "Re-reader report",
            Op::RandRead => "Random read report",
            Op::RandWrite => "Random write report",
            Op::BkwdRead => "Backward read report",
            Op::RecRewrite => "Record rewrite report",
            Op::StrideRead => "Stride read report",
            Op::Fwrite => "Fwrite report",
            Op::Frewrite => "Re-fwrite report",
            Op::Fread => "Fread report",
            Op::Freread => "Re-fread report",
        }
    }

    pub fn from_name(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == s)
    }

    /// iozone's test numbers (`-i N`): each names a pair (or one) of operations.
    pub fn iozone_test(n: u32) -> Option<&'static [Op]> {
        Some(match n {
            0 => &[Op::Write, Op::Rewrite],
            1 => &[Op::Read, Op::Reread],
            2 => &[Op::RandRead, Op::RandWrite],
            3 => &[Op::BkwdRead],
            4 => &[Op::RecRewrite],
            5 => &[Op::StrideRead],
            6 => &[Op::Fwrite, Op::Frewrite],
            7 => &[Op::Fread, Op::Freread],
            _ => return None,
        })
    }

    pub fn writes(self) -> bool {
        matches!(
            self,
            Op::Write | Op::Rewrite | Op::RandWrite | Op::RecRewrite | Op::Fwrite | Op::Frewrite
        )
    }

    /// Runs through a user-space buffered stream rather than a fio job.
    pub fn stdio(self) -> bool {
        matches!(self, Op::Fwrite | Op::Frewrite | Op::Fread | Op::Freread)
    }

    /// Starts from a new file (the file is removed first).
    fn new_file(self) -> bool {
        matches!(self, Op::Write | Op::Fwrite)
    }
}

/// How every cell is run.
#[derive(Clone, Debug)]
pub struct Settings {
    pub file: PathBuf,
    pub ioengine: String,
    pub direct: bool,
    /// Include an fsync of the file in each writing operation's time (iozone -e).
    pub fsync: bool,
    /// Drop the file's cached pages before each reading operation (fio's `invalidate=1`).
    pub cold: bool,
    /// Stride read: distance between consecutive reads, in records.
    pub stride: u64,
}

/// One measured cell.
#[derive(Clone, Debug)]
pub struct Cell {
    pub op: Op,
    pub file_size: u64,
    pub record: u64,
    pub bytes: u64,
    pub ios: u64,
    /// Time of the operation in ns (the I/O loop, and the fsync with `--fsync`).
    pub time_ns: u64,
    /// Per-record latency (clat of the fio job; one buffered call for stdio).
    pub lat: Option<LatSummary>,
    /// How the operation was run: `fio job (psync)` or `stdio buffer`.
    pub via: String,
    /// Whether the I/O bypassed the page cache.
    pub direct: bool,
    /// The `--repeat` round it was measured in (1-based).
    pub round: u32,
}

#[derive(Clone, Debug)]
/// Percentiles come from flexio's histogram (bucket values, within 0.8 %), kept within
/// the exact minimum and maximum.
pub struct LatSummary {
    pub n: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
}

impl Cell {
    /// KiB per second: bytes / 1024 over the time in seconds.
    pub fn kib_s(&self) -> f64 {
        if self.time_ns == 0 {
            return 0.0;
        }
        self.bytes as f64 / 1024.0 / (self.time_ns as f64 / 1e9)
    }
}

/// The trace of a backward read: every record once, from the last to the first.
fn backward_offsets(file_size: u64, record: u64) -> Vec<u64> {
    let n = file_size / record;
    (0..n).rev().map(|i| i * record).collect()
}

/// The trace of a stride read: every record once, `stride` records apart, in `stride`
/// passes (pass k reads records k, k + stride, k + 2 stride, ...).
pub fn stride_offsets(file_size: u64, record: u64, stride: u64) -> Vec<u64> {
    let n = file_size / record;
    let s = stride.clamp(1, n.max(1));
    (0..s)
        .flat_map(|k| (k..n).step_by(s as usize))
        .map(|i| i * record)
        .collect()
}

/// A fio version 2 iolog that reads `offsets` of `file`, `record` bytes each.
fn trace_text(file: &Path, offsets: &[u64], record: u64) -> String {
    let f = file.display();
    let mut t = format!("fio version 2 iolog\n{f} add\n{f} open\n");
    for o in offsets {
        t.push_str(&format!("{f} read {o} {record}\n"));
    }
    t.push_str(&format!("{f} close\n"));
    t
}

impl Settings {
    fn trace_path(&self) -> PathBuf {
        let mut p = self.file.clone().into_os_string();
        p.push(".iolog");
        PathBuf::from(p)
    }

    /// The fio job of `op` on a file of `file_size` bytes in `record`-byte records, and
    /// the trace it replays (backward and stride reads).
    pub fn job(&self, op: Op, file_size: u64, record: u64) -> (String, Option<String>) {
        let mut j = format!(
            "[global]\nioengine={}\nfilename={}\nbs={record}\nsize={file_size}\ndirect={}\n\
             invalidate={}\nfallocate=none\ndisk_util=0\n",
            self.ioengine,
            self.file.display(),
            self.direct as u8,
            (self.cold && !op.writes()) as u8,
        );
        if self.fsync && op.writes() {
            j.push_str("end_fsync=1\n");
        }
        let mut trace = None;
        let rw = match op {
            Op::Write | Op::Rewrite => "write",
            Op::Read | Op::Reread => "read",
            Op::RandRead => "randread",
            Op::RandWrite => "randwrite",
            Op::RecRewrite => {
                // One record's region, written over file_size / record times.
                j = j.replace(&format!("size={file_size}\n"), &format!("size={record}\n"));
                j.push_str(&format!("io_size={}\n", file_size / record * record));
                "write"
            }
            Op::BkwdRead | Op::StrideRead => {
                let offs = if op == Op::BkwdRead {
                    backward_offsets(file_size, record)
                } else {
                    stride_offsets(file_size, record, self.stride)
                };
                trace = Some(trace_text(&self.file, &offs, record));
                j.push_str(&format!("read_iolog={}\n", self.trace_path().display()));
                "read"
            }
            Op::Fwrite | Op::Frewrite | Op::Fread | Op::Freread => unreachable!(),
        };
        j.push_str(&format!("[{}]\nrw={rw}\n", op.name()));
        (j, trace)
    }

    /// Run `op` on the cell; the file is left for the next operation.
    pub fn run(&self, op: Op, file_size: u64, record: u64) -> Result<Cell, String> {
        if op.new_file() {
            remove(&self.file)?;
        }
        if op.stdio() {
            return self.run_stdio(op, file_size, record);
        }
        let (job, trace) = self.job(op, file_size, record);
        if let Some(t) = &trace {
            std::fs::write(self.trace_path(), t)
                .map_err(|e| format!("{}: {e}", self.trace_path().display()))?;
        }
        let r = inproc::run_job(&job);
        if trace.is_some() {
            let _ = std::fs::remove_file(self.trace_path());
        }
        let r = r?;
        let d = usize::from(op.writes());
        let st = &r.result.stats.dirs[d];
        let c = &r.report.dirs[d].clat;
        let pct = |p: f64| {
            c.percentiles
                .as_ref()
                .and_then(|v| v.iter().find(|x| x.0 == p).map(|x| x.1))
                .unwrap_or(c.max_ns)
                .clamp(c.min_ns, c.max_ns)
        };
        Ok(Cell {
            op,
            file_size,
            record,
            bytes: st.io_bytes,
            ios: st.total_ios,
            time_ns: st.runtime_ns,
            lat: (c.n > 0).then(|| LatSummary {
                n: c.n,
                min_ns: c.min_ns,
                mean_ns: c.mean_ns,
                p50_ns: pct(50.0),
                p99_ns: pct(99.0),
                max_ns: c.max_ns,
            }),
            via: format!("fio job ({})", self.ioengine),
            direct: self.direct,
            round: 1,
        })
    }

    /// fwrite/frewrite/fread/freread: the file through a user-space buffered stream whose
    /// buffer is one record (as iozone's `setvbuf(..., reclen)`), one record per call.
    /// Timed from the first call to the flush (and the fsync with `--fsync`); opening and
    /// closing are outside the time, as for the fio jobs. Never O_DIRECT.
    fn run_stdio(&self, op: Op, file_size: u64, record: u64) -> Result<Cell, String> {
        let n = file_size / record;
        let err = |e: std::io::Error| format!("{}: {e}", self.file.display());
        let mut buf = vec![0u8; record as usize];
        fill(&mut buf);
        let mut lat = LatStat::default();
        let mut hist = Hist::enabled();
        let cap = record as usize;
        let time_ns;
        if op.writes() {
            let f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&self.file)
                .map_err(err)?;
            let mut w = std::io::BufWriter::with_capacity(cap, f);
            let t0 = Instant::now();
            let mut last = t0;
            for _ in 0..n {
                w.write_all(&buf).map_err(err)?;
                let t = Instant::now();
                let ns = t.duration_since(last).as_nanos() as u64;
                lat.add(ns);
                hist.add(ns);
                last = t;
            }
            w.flush().map_err(err)?;
            if self.fsync {
                w.get_ref().sync_all().map_err(err)?;
            }
            time_ns = t0.elapsed().as_nanos() as u64;
        } else {
            let f = std::fs::File::open(&self.file).map_err(err)?;
            let mut r = std::io::BufReader::with_capacity(cap, f);
            let t0 = Instant::now();
            let mut last = t0;
            for _ in 0..n {
                r.read_exact(&mut buf).map_err(err)?;
                let t = Instant::now();
                let ns = t.duration_since(last).as_nanos() as u64;
                lat.add(ns);
                hist.add(ns);
                last = t;
            }
            time_ns = t0.elapsed().as_nanos() as u64;
        }
        let s = lat.to_stat();
        let p = hist.percentiles(&[50.0, 99.0], n);
        Ok(Cell {
            op,
            file_size,
            record,
            bytes: n * record,
            ios: n,
            time_ns: time_ns.max(1),
            lat: (n > 0).then(|| LatSummary {
                n,
                min_ns: s.min,
                mean_ns: s.mean,
                p50_ns: p.first().map_or(s.max, |x| x.1).clamp(s.min, s.max),
                p99_ns: p.get(1).map_or(s.max, |x| x.1).clamp(s.min, s.max),
                max_ns: s.max,
            }),
            via: "stdio buffer".into(),
            direct: false,
            round: 1,
        })
    }

    /// Remove the scratch file (and a trace left by an interrupted cell).
    pub fn cleanup(&self) -> Result<(), String> {
        let _ = std::fs::remove_file(self.trace_path());
        remove(&self.file)
    }
}

fn remove(p: &Path) -> Result<(), String> {
    match std::fs::remove_file(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(format!("cannot remove {}: {e}", p.display())),
    }
}

/// Incompressible, non-zero bytes (xorshift64).
fn fill(buf: &mut [u8]) {
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    for c in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        c.copy_from_slice(&b[..c.len()]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_cover_every_record_once() {
        let mut b = backward_offsets(64 << 10, 4096);
        assert_eq!(b[0], 60 << 10);
        assert_eq!(*b.last().unwrap(), 0);
        b.sort();
        assert_eq!(b, (0..16).map(|i| i * 4096).collect::<Vec<_>>());
        let s = stride_offsets(64 << 10, 4096, 5);
        assert_eq!(&s[..5], &[0, 5 * 4096, 10 * 4096, 15 * 4096, 4096]);
        let mut s2 = s.clone();
        s2.sort();
        assert_eq!(s2, (0..16).map(|i| i * 4096).collect::<Vec<_>>());
        // A stride longer than the file is one record per pass.
        assert_eq!(stride_offsets(16384, 4096, 17), vec![0, 4096, 8192, 12288]);
    }

    #[test]
    fn jobs() {
        let s = Settings {
            file: PathBuf::from("/x/f"),
            ioengine: "psync".into(),
            direct: false,
            fsync: true,
            cold: false,
            stride: 17,
        };
        let (j, t) = s.job(Op::RecRewrite, 1 << 20, 65536);
        assert!(j.contains("size=65536\n") && j.contains("io_size=1048576\n"));
        assert!(j.contains("end_fsync=1\n") && j.contains("rw=write\n") && t.is_none());
        let (j, t) = s.job(Op::BkwdRead, 1 << 20, 65536);
        assert!(j.contains("read_iolog=/x/f.iolog\n") && !j.contains("end_fsync"));
        assert!(t.unwrap().contains("/x/f read 983040 65536\n"));
    }
}
