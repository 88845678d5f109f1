//! I/O traces: fio's iolog text formats (version 2 and 3) and blktrace binary traces, read
//! for replay (`read_iolog`) and written for capture (`write_iolog`). Pure parsing and
//! formatting; the job loop drives them through `worker::replay` and `worker::capture`.
//!
//! fio's semantics, kept here:
//! * version 2 lines: `<file> add|open|close` and `<file> read|write|trim|sync|datasync|wait
//!   <offset> <len>`; a `wait` waits until `<offset>` ms after the job started;
//! * version 3 lines start with a timestamp in µs; the gap to the previous line is the delay
//!   before the entry (scaled by 100 / `replay_time_scale`, none with `replay_no_stall`);
//!   `wait` is ignored with a message;
//! * offsets are divided by `replay_scale` (when non-zero) and then masked with
//!   `~(replay_align - 1)` (when non-zero); `replay_skip` drops whole directions, and the
//!   timestamps of dropped lines still count as the previous time (fio 3.33, `--compat=3.33`,
//!   skips in blktrace input only);
//! * `replay_redirect` sends every I/O to one file: the first `add` adds it, later ones are
//!   ignored;
//! * with `--readonly`, writes and trims are dropped with a message.

pub mod blktrace;
pub mod text;

use std::path::{Path, PathBuf};

/// What an entry does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Act {
    Add,
    Open,
    Close,
    Read,
    Write,
    Trim,
    Sync,
    Datasync,
    /// `sync_file_range` (fio logs it as such; replayed with the job's flags).
    SyncRange,
    /// Version 2 `wait`: until `offset` ms after the job started.
    Wait,
}

impl Act {
    /// The I/O direction (0 read, 1 write, 2 trim) of a data entry.
    pub fn ddir(self) -> Option<usize> {
        match self {
            Act::Read => Some(0),
            Act::Write => Some(1),
            Act::Trim => Some(2),
            _ => None,
        }
    }
}

/// One trace entry, resolved against the job's files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub act: Act,
    /// Index into [`TraceInfo::files`].
    pub file: u32,
    pub offset: u64,
    pub len: u64,
    /// µs to wait after the previous issue before this entry (0 = none).
    pub delay_us: u64,
}

/// How a trace is replayed (the `replay_*` options).
#[derive(Clone, Debug, PartialEq)]
pub struct ReplayOpts {
    pub no_stall: bool,
    pub time_scale: u64,
    pub scale: u64,
    pub align: u64,
    /// Bits: read 0, write 1, trim 2, sync 3.
    pub skip: u8,
    pub redirect: Option<PathBuf>,
    /// --readonly: writes and trims are dropped.
    pub readonly: bool,
    /// replay_skip applies to iologs too (fio 3.34 on); fio 3.33 honours it for blktrace
    /// input only.
    pub skip_in_iologs: bool,
}

impl Default for ReplayOpts {
    fn default() -> Self {
        ReplayOpts {
            no_stall: false,
            time_scale: 100,
            scale: 1,
            align: 0,
            skip: 0,
            redirect: None,
            readonly: false,
            skip_in_iologs: true,
        }
    }
}

impl ReplayOpts {
    /// The offset as fio places it: divided by replay_scale, aligned down by replay_align.
    pub fn place(&self, offset: u64) -> u64 {
        let mut o = offset.checked_div(self.scale).unwrap_or(offset);
        if self.align > 0 {
            o &= !(self.align - 1);
        }
        o
    }

    /// A timestamp gap as a replay delay.
    pub fn delay(&self, gap: u64) -> u64 {
        if self.no_stall {
            0
        } else if self.time_scale == 100 {
            gap
        } else {
            (gap as f64 * (100.0 / self.time_scale as f64)) as u64
        }
    }

    fn skips(&self, act: Act) -> bool {
        let bit = match act {
            Act::Read => 0,
            Act::Write => 1,
            Act::Trim => 2,
            Act::Sync => 3,
            _ => return false,
        };
        self.skip & (1 << bit) != 0
    }
}

/// The trace formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// fio iolog, version 2 or 3.
    Text(u8),
    /// blktrace binary; `swap`: written on a machine of the other byte order.
    Blktrace { swap: bool },
}

/// What a whole pass over a trace tells the planner.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TraceInfo {
    pub path: PathBuf,
    pub format: Option<Format>,
    /// The files the trace adds, in order (one with `replay_redirect`).
    pub files: Vec<PathBuf>,
    /// I/Os and bytes per direction (read, write, trim).
    pub ios: [u64; 3],
    pub bytes: [u64; 3],
    pub max_bs: [u64; 3],
    pub syncs: u64,
    pub waits: u64,
    /// End of the furthest I/O per file.
    pub max_end: Vec<u64>,
    /// Messages fio prints while reading (bad lines, skipped writes), in order.
    pub notes: Vec<String>,
}

impl TraceInfo {
    fn count(&mut self, e: &Entry) {
        if let Some(d) = e.act.ddir() {
            self.ios[d] += 1;
            self.bytes[d] += e.len;
            self.max_bs[d] = self.max_bs[d].max(e.len);
            let end = &mut self.max_end[e.file as usize];
            *end = (*end).max(e.offset + e.len);
        } else if matches!(e.act, Act::Sync | Act::Datasync | Act::SyncRange) {
            self.syncs += 1;
        } else if e.act == Act::Wait {
            self.waits += 1;
        }
    }

    /// Directions the trace does.
    pub fn dirs(&self) -> [bool; 3] {
        self.ios.map(|n| n > 0)
    }
}

/// A trace being read, entry by entry (constant memory: `read_iolog_chunked` or not).
pub enum Reader {
    Text(text::TextReader),
    Blk(blktrace::BlkReader),
}

impl Reader {
    /// The next entry; `Ok(None)` at the end. Bad lines are skipped (with a note in
    /// `notes` where fio prints one).
    pub fn next_entry(&mut self, notes: &mut Vec<String>) -> Result<Option<Entry>, String> {
        match self {
            Reader::Text(r) => r.next_entry(notes),
            Reader::Blk(r) => {
                let e = r.next_entry();
                notes.append(&mut r.notes);
                e
            }
        }
    }
}

/// Which format the file at `path` has.
pub fn detect(path: &Path) -> Result<Format, String> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)
        .map_err(|e| format!("cannot open iolog '{}': {e}", path.display()))?;
    let mut head = [0u8; 64];
    let mut n = 0;
    while n < head.len() {
        match f.read(&mut head[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) => return Err(format!("cannot read iolog '{}': {e}", path.display())),
        }
    }
    if let Some(swap) = blktrace::magic(&head[..n]) {
        return Ok(Format::Blktrace { swap });
    }
    text::version(&head[..n]).map(Format::Text).ok_or_else(|| {
        format!(
            "iolog '{}': iolog version 1 is no longer supported (the first line must be 'fio version 2 iolog' or 'fio version 3 iolog', or the file a blktrace)",
            path.display()
        )
    })
}

/// Open a trace for reading.
pub fn open(path: &Path, opts: &ReplayOpts, files: &[PathBuf]) -> Result<Reader, String> {
    match detect(path)? {
        Format::Text(v) => text::TextReader::open(path, v, opts.clone(), files).map(Reader::Text),
        Format::Blktrace { swap } => {
            blktrace::BlkReader::open(path, swap, opts.clone(), files).map(Reader::Blk)
        }
    }
}

/// Read a whole trace once: its files (in order), directions and sizes.
pub fn scan(path: &Path, opts: &ReplayOpts) -> Result<TraceInfo, String> {
    let format = detect(path)?;
    let files = match format {
        Format::Text(v) => text::files(path, v, opts)?,
        Format::Blktrace { swap } => blktrace::files(path, swap, opts)?,
    };
    let mut info = TraceInfo {
        path: path.to_path_buf(),
        format: Some(format),
        max_end: vec![0; files.len()],
        files,
        ..TraceInfo::default()
    };
    let mut r = open(path, opts, &info.files)?;
    let mut notes = Vec::new();
    let mut dropped = 0u64;
    while let Some(e) = r.next_entry(&mut notes)? {
        info.count(&e);
    }
    if let Reader::Text(t) = &r {
        dropped = t.readonly_dropped;
    }
    if let Reader::Blk(b) = &r {
        dropped = b.readonly_dropped;
    }
    info.notes = notes;
    if dropped > 0 {
        info.notes
            .push(format!("skips replay of {dropped} writes due to read-only"));
    }
    Ok(info)
}
