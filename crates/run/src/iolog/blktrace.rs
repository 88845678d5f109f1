//! blktrace binary traces (`struct blk_io_trace`, 48 bytes, then `pdu_len` bytes of
//! payload), replayed as fio replays them:
//! * only queue events (`__BLK_TA_QUEUE`) become I/O: discards (trims), flushes (syncs),
//!   writes (the write category bit) and reads; notify events and zero-byte requests are
//!   skipped;
//! * the offset is `sector * 512` (then `replay_scale` and `replay_align`); with
//!   `replay_align` the length is rounded up to it;
//! * the delay of an I/O is the time since the previous queue event, in µs (scaled by
//!   `replay_time_scale`, none with `replay_no_stall`); skipped events still count as the
//!   previous one;
//! * with `--readonly` every write or discard event is dropped (counted in a message);
//! * each device (`dev_t`, 12-bit major and 20-bit minor) is the block device under /dev
//!   with that number (or `replay_redirect`); it is opened before its first I/O and closed
//!   at the end.

use super::{Act, Entry, ReplayOpts};
use std::collections::HashMap;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};

pub const MAGIC: u32 = 0x6561_7400;
pub const VERSION: u32 = 0x07;
pub const TRACE_SIZE: usize = 48;

const TA_QUEUE: u32 = 1;
const TC_READ: u32 = 1 << 0;
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;

const fn tc(c: u32) -> u32 {
    c << 16
}

/// Whether `head` starts with a blktrace event: `Some(swap)`.
pub fn magic(head: &[u8]) -> Option<bool> {
    if head.len() < TRACE_SIZE {
        return None;
    }
    let m = u32::from_le_bytes([head[0], head[1], head[2], head[3]]);
    if m & 0xffff_ff00 == MAGIC {
        return Some(false);
    }
    if m.swap_bytes() & 0xffff_ff00 == MAGIC {
        return Some(true);
    }
    None
}

/// One event's header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trace {
    pub magic: u32,
    pub sequence: u32,
    pub time: u64,
    pub sector: u64,
    pub bytes: u32,
    pub action: u32,
    pub pid: u32,
    pub device: u32,
    pub cpu: u32,
    pub error: u16,
    pub pdu_len: u16,
}

impl Trace {
    pub fn parse(b: &[u8; TRACE_SIZE], swap: bool) -> Trace {
        let u32_at = |i: usize| {
            let v = u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u64_at = |i: usize| {
            let mut a = [0u8; 8];
            a.copy_from_slice(&b[i..i + 8]);
            let v = u64::from_le_bytes(a);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        let u16_at = |i: usize| {
            let v = u16::from_le_bytes([b[i], b[i + 1]]);
            if swap {
                v.swap_bytes()
            } else {
                v
            }
        };
        Trace {
            magic: u32_at(0),
            sequence: u32_at(4),
            time: u64_at(8),
            sector: u64_at(16),
            bytes: u32_at(24),
            action: u32_at(28),
            pid: u32_at(32),
            device: u32_at(36),
            cpu: u32_at(40),
            error: u16_at(44),
            pdu_len: u16_at(46),
        }
    }

    /// The event in this machine's (little-endian) layout.
    pub fn to_bytes(&self) -> [u8; TRACE_SIZE] {
        let mut b = [0u8; TRACE_SIZE];
        b[0..4].copy_from_slice(&self.magic.to_le_bytes());
        b[4..8].copy_from_slice(&self.sequence.to_le_bytes());
        b[8..16].copy_from_slice(&self.time.to_le_bytes());
        b[16..24].copy_from_slice(&self.sector.to_le_bytes());
        b[24..28].copy_from_slice(&self.bytes.to_le_bytes());
        b[28..32].copy_from_slice(&self.action.to_le_bytes());
        b[32..36].copy_from_slice(&self.pid.to_le_bytes());
        b[36..40].copy_from_slice(&self.device.to_le_bytes());
        b[40..44].copy_from_slice(&self.cpu.to_le_bytes());
        b[44..46].copy_from_slice(&self.error.to_le_bytes());
        b[46..48].copy_from_slice(&self.pdu_len.to_le_bytes());
        b
    }

    fn is_notify(&self) -> bool {
        self.action & tc(TC_NOTIFY) != 0
    }

    fn is_queue(&self) -> bool {
        self.action & 0xffff == TA_QUEUE
    }

    /// fio's `t_get_ddir`: the direction by category (None: not a data request).
    fn ddir(&self) -> Option<usize> {
        if self.action & tc(TC_READ) != 0 {
            Some(0)
        } else if self.action & tc(TC_WRITE) != 0 {
            Some(1)
        } else if self.action & tc(TC_DISCARD) != 0 {
            Some(2)
        } else {
            None
        }
    }

    /// What a queue event replays as.
    fn act(&self) -> Act {
        if self.action & tc(TC_DISCARD) != 0 {
            Act::Trim
        } else if self.action & tc(TC_FLUSH) != 0 {
            Act::Sync
        } else if self.action & tc(TC_WRITE) != 0 {
            Act::Write
        } else {
            Act::Read
        }
    }
}

/// Read one event header and skip its payload; `Ok(None)` at the end.
pub fn read_event<R: Read>(r: &mut R, swap: bool) -> Result<Option<(Trace, Vec<u8>)>, String> {
    let mut b = [0u8; TRACE_SIZE];
    match read_full(r, &mut b)? {
        0 => return Ok(None),
        n if n < TRACE_SIZE => return Err("blktrace: short read (truncated event)".into()),
        _ => {}
    }
    let t = Trace::parse(&b, swap);
    if t.magic & 0xffff_ff00 != MAGIC {
        return Err(format!("bad magic in blktrace data: {:x}", t.magic));
    }
    if t.magic & 0xff != VERSION {
        return Err(format!("bad blktrace version {}", t.magic & 0xff));
    }
    let mut pdu = vec![0u8; t.pdu_len as usize];
    if read_full(r, &mut pdu)? < pdu.len() {
        return Err(format!(
            "blktrace: discarded less than {} payload bytes",
            t.pdu_len
        ));
    }
    Ok(Some((t, pdu)))
}

fn read_full<R: Read>(r: &mut R, buf: &mut [u8]) -> Result<usize, String> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("read blktrace file: {e}")),
        }
    }
    Ok(n)
}

/// `dev_t` as blktrace records it: 12-bit major above a 20-bit minor.
pub fn dev_parts(device: u32) -> (u32, u32) {
    (device >> 20, device & ((1 << 20) - 1))
}

/// The block device under /dev with this number.
pub fn lookup_device(dir: &Path, major: u32, minor: u32) -> Option<PathBuf> {
    use std::os::unix::fs::FileTypeExt;
    let mut subdirs = Vec::new();
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            subdirs.push(e.path());
        } else if ft.is_block_device() {
            if let Ok(m) = std::fs::symlink_metadata(e.path()) {
                use std::os::unix::fs::MetadataExt;
                let rdev = m.rdev();
                if flexio_engine::os::fs::major(rdev) == major
                    && flexio_engine::os::fs::minor(rdev) == minor
                {
                    return Some(e.path());
                }
            }
        }
    }
    subdirs
        .into_iter()
        .find_map(|d| lookup_device(&d, major, minor))
}

/// Device numbers in order of first appearance, and the file each replays on.
struct Devices {
    redirect: Option<PathBuf>,
    index: HashMap<u32, u32>,
    paths: Vec<PathBuf>,
}

impl Devices {
    fn new(redirect: Option<PathBuf>) -> Self {
        Devices {
            redirect,
            index: HashMap::new(),
            paths: Vec::new(),
        }
    }

    /// (file index, first time seen); Err when no device has that number.
    fn resolve(&mut self, device: u32) -> Result<(u32, bool), String> {
        if let Some(i) = self.index.get(&device) {
            return Ok((*i, false));
        }
        let (maj, min) = dev_parts(device);
        let path = match &self.redirect {
            Some(r) => r.clone(),
            None => lookup_device(Path::new("/dev"), maj, min).ok_or_else(|| {
                format!("did not find replay device {maj}:{min} under /dev (use replay_redirect to name one)")
            })?,
        };
        if let Some(i) = self.paths.iter().position(|p| *p == path) {
            // With replay_redirect every device is the one file.
            self.index.insert(device, i as u32);
            return Ok((i as u32, false));
        }
        let i = self.paths.len() as u32;
        self.paths.push(path);
        self.index.insert(device, i);
        Ok((i, true))
    }
}

/// A blktrace read event by event.
pub struct BlkReader {
    src: BufReader<std::fs::File>,
    swap: bool,
    opts: ReplayOpts,
    devs: Devices,
    last_time: u64,
    zero_noted: bool,
    /// Messages fio prints while reading.
    pub notes: Vec<String>,
    /// An I/O waiting behind the open event of its device.
    pending: Option<Entry>,
    /// Close events still to give at the end.
    closing: u32,
    ended: bool,
    pub readonly_dropped: u64,
}

impl BlkReader {
    pub fn open(
        path: &Path,
        swap: bool,
        opts: ReplayOpts,
        _files: &[PathBuf],
    ) -> Result<Self, String> {
        let f = std::fs::File::open(path)
            .map_err(|e| format!("cannot open blktrace '{}': {e}", path.display()))?;
        Ok(BlkReader {
            src: BufReader::with_capacity(64 * 1024, f),
            swap,
            devs: Devices::new(opts.redirect.clone()),
            opts,
            last_time: 0,
            zero_noted: false,
            notes: Vec::new(),
            pending: None,
            closing: 0,
            ended: false,
            readonly_dropped: 0,
        })
    }

    pub fn next_entry(&mut self) -> Result<Option<Entry>, String> {
        if let Some(e) = self.pending.take() {
            return Ok(Some(e));
        }
        loop {
            if self.ended {
                if self.closing < self.devs.paths.len() as u32 {
                    self.closing += 1;
                    return Ok(Some(Entry {
                        act: Act::Close,
                        file: self.closing - 1,
                        offset: 0,
                        len: 0,
                        delay_us: 0,
                    }));
                }
                return Ok(None);
            }
            let Some((t, _)) = read_event(&mut self.src, self.swap)? else {
                self.ended = true;
                continue;
            };
            if !t.is_notify() && self.opts.readonly && t.action & tc(TC_WRITE | TC_DISCARD) != 0 {
                self.readonly_dropped += 1;
                continue;
            }
            if !t.is_queue() || t.is_notify() {
                continue;
            }
            let gap = if self.last_time != 0 && t.time >= self.last_time {
                t.time - self.last_time
            } else {
                0
            };
            self.last_time = t.time;
            let act = t.act();
            if self.opts.skips(act) {
                continue;
            }
            let mut bytes = t.bytes as u64;
            if self.opts.align > 0 {
                bytes = (bytes + self.opts.align - 1) & !(self.opts.align - 1);
            }
            if bytes == 0 && matches!(act, Act::Read | Act::Write) {
                if !self.zero_noted {
                    self.zero_noted = true;
                    self.notes.push(format!(
                        "blktrace: ignoring zero byte trace: action={:x}",
                        t.action
                    ));
                }
                continue;
            }
            let (file, first) = self.devs.resolve(t.device)?;
            let io = Entry {
                act,
                file,
                offset: if act == Act::Sync {
                    0
                } else {
                    self.opts.place(t.sector.saturating_mul(512))
                },
                len: if act == Act::Sync { 0 } else { bytes },
                delay_us: self.opts.delay(gap) / 1000,
            };
            if first {
                self.pending = Some(io);
                return Ok(Some(Entry {
                    act: Act::Open,
                    file,
                    offset: 0,
                    len: 0,
                    delay_us: 0,
                }));
            }
            return Ok(Some(io));
        }
    }
}

/// The devices a trace replays on, in order of first appearance.
pub fn files(path: &Path, swap: bool, opts: &ReplayOpts) -> Result<Vec<PathBuf>, String> {
    let mut r = BlkReader::open(path, swap, opts.clone(), &[])?;
    while r.next_entry()?.is_some() {}
    if r.devs.paths.is_empty() {
        return Err("did not find replay device(s) in the blktrace".into());
    }
    Ok(r.devs.paths)
}

/// One input of a merge (fio's `blktrace_cursor`).
struct Cursor {
    path: PathBuf,
    src: BufReader<std::fs::File>,
    swap: bool,
    /// The current event, its time already shifted and scaled.
    cur: Trace,
    iter: u32,
    nr_iter: u32,
    scalar: u64,
    /// The time of the last event of the first pass (as recorded).
    length: u64,
    last_raw: u64,
}

impl Cursor {
    fn open(path: &Path, swap: bool, scalar: u64, nr_iter: u32) -> Result<Cursor, String> {
        let f = std::fs::File::open(path)
            .map_err(|e| format!("could not open file: {}: {e}", path.display()))?;
        Ok(Cursor {
            path: path.to_path_buf(),
            src: BufReader::with_capacity(64 * 1024, f),
            swap,
            cur: Trace::default(),
            iter: 0,
            nr_iter,
            scalar,
            length: 0,
            last_raw: 0,
        })
    }

    /// The next queue event with a direction; false at the end of the file.
    fn read(&mut self) -> Result<bool, String> {
        loop {
            let Some((t, _)) = read_event(&mut self.src, self.swap)? else {
                if self.length == 0 {
                    self.length = self.last_raw;
                }
                return Ok(false);
            };
            if !t.is_queue() || t.ddir().is_none() {
                continue;
            }
            self.last_raw = t.time;
            let time = (t.time as u128 + self.iter as u128 * self.length as u128)
                * self.scalar as u128
                / 100;
            self.cur = Trace {
                time: time.min(u64::MAX as u128) as u64,
                pdu_len: 0,
                ..t
            };
            return Ok(true);
        }
    }

    /// Start the next pass; false when all passes are done.
    fn rewind(&mut self) -> Result<bool, String> {
        self.iter += 1;
        if self.iter >= self.nr_iter {
            return Ok(false);
        }
        let f = std::fs::File::open(&self.path)
            .map_err(|e| format!("could not open file: {}: {e}", self.path.display()))?;
        self.src = BufReader::with_capacity(64 * 1024, f);
        Ok(true)
    }
}

/// fio's list parameters of a merge: none (the default for every trace) or one per trace.
fn per_trace(vals: &[f64], n: usize, def: u64, what: &str) -> Result<Vec<u64>, String> {
    let len = vals.iter().take_while(|v| **v != 0.0).count();
    if len == 0 {
        return Ok(vec![def; n]);
    }
    if len != n {
        return Err(format!("{what}({len}) != nr_logs({n})"));
    }
    Ok(vals[..n].iter().map(|v| *v as u64).collect())
}

/// `merge_blktrace_file`: merge the traces into one, event by event in time order, each
/// trace's times scaled by its `merge_blktrace_scalars` percentage and the trace repeated
/// `merge_blktrace_iters` times: an event of pass `k` is at `(time + k * last) * scalar /
/// 100`, `last` being the time of the trace's last event. (fio 3.33's merge reads short and
/// writes an empty file; later fio uses this formula with `last` already scaled, which
/// lets a scaled trace's next pass start before its previous one ended. flexio scales once.)
/// Only queue events of reads, writes and discards are kept, without payload. Returns the
/// number of events written.
pub fn merge(
    inputs: &[PathBuf],
    scalars: &[f64],
    iters: &[f64],
    out: &Path,
) -> Result<u64, String> {
    let n = inputs.len();
    let scal = per_trace(scalars, n, 100, "merge_blktrace_scalars")?;
    let its = per_trace(iters, n, 1, "merge_blktrace_iters")?;
    let mut cursors: Vec<Cursor> = Vec::with_capacity(n);
    for (i, p) in inputs.iter().enumerate() {
        let mut head = [0u8; TRACE_SIZE];
        let got = std::fs::File::open(p)
            .and_then(|mut f| read_full(&mut f, &mut head).map_err(std::io::Error::other))
            .map_err(|e| format!("could not open file: {}: {e}", p.display()))?;
        let Some(swap) = magic(&head[..got]) else {
            return Err(format!("file is not a blktrace: {}", p.display()));
        };
        let mut c = Cursor::open(p, swap, scal[i], its[i].min(u32::MAX as u64) as u32)?;
        // A trace without a single replayable event adds nothing, in any pass.
        if c.read()? {
            cursors.push(c);
        }
    }
    let mut buf = Vec::new();
    let mut count = 0u64;
    while !cursors.is_empty() {
        // The earliest event (the first of equal times).
        let mut i = 0;
        for (k, c) in cursors.iter().enumerate() {
            if c.cur.time < cursors[i].cur.time {
                i = k;
            }
        }
        buf.extend_from_slice(&cursors[i].cur.to_bytes());
        count += 1;
        let c = &mut cursors[i];
        let mut more = c.read()?;
        while !more && c.rewind()? {
            more = c.read()?;
            if !more {
                // An empty pass: nothing more will come.
                break;
            }
        }
        if !more {
            // fio keeps the active traces contiguous by moving the last into the gap.
            cursors.swap_remove(i);
        }
    }
    crate::notes::write_atomic(out, &buf)
        .map_err(|e| format!("cannot write merged blktrace '{}': {e}", out.display()))?;
    Ok(count)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub fn event(time: u64, sector: u64, bytes: u32, action: u32, device: u32) -> Trace {
        Trace {
            magic: MAGIC | VERSION,
            time,
            sector,
            bytes,
            action,
            device,
            ..Trace::default()
        }
    }

    #[test]
    fn queue_events_replay_with_their_gaps() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("t.bin");
        let dev = (7 << 20) | 99;
        let q = TA_QUEUE;
        let mut bytes = Vec::new();
        for t in [
            event(1_000_000, 8, 4096, q | tc(1), dev),
            event(1_500_000, 8, 4096, 8 | tc(1), dev), // complete: not replayed
            event(3_000_000, 16, 8192, q | tc(TC_WRITE), dev),
            event(4_000_000, 0, 0, q | tc(TC_FLUSH | TC_WRITE), dev),
            event(5_000_000, 32, 4096, q | tc(TC_DISCARD | TC_WRITE), dev),
            event(6_000_000, 0, 0, tc(TC_NOTIFY), dev),
        ] {
            let mut t = t;
            if t.is_notify() {
                t.pdu_len = 5;
            }
            bytes.extend_from_slice(&t.to_bytes());
            bytes.extend(std::iter::repeat(b'x').take(t.pdu_len as usize));
        }
        std::fs::write(&p, &bytes).unwrap();
        assert_eq!(magic(&bytes), Some(false));
        let opts = ReplayOpts {
            redirect: Some("/tmp/x".into()),
            ..ReplayOpts::default()
        };
        let mut r = BlkReader::open(&p, false, opts, &[]).unwrap();
        let mut got = Vec::new();
        while let Some(e) = r.next_entry().unwrap() {
            got.push((e.act, e.offset, e.len, e.delay_us));
        }
        assert_eq!(
            got,
            vec![
                (Act::Open, 0, 0, 0),
                (Act::Read, 4096, 4096, 0),
                (Act::Write, 8192, 8192, 2000),
                (Act::Sync, 0, 0, 1000),
                (Act::Trim, 16384, 4096, 1000),
                (Act::Close, 0, 0, 0),
            ]
        );
        let mut sw = bytes[..48].to_vec();
        sw[..4].reverse();
        assert_eq!(magic(&sw), Some(true));
    }

    fn write_trace(p: &Path, evs: &[Trace]) {
        let mut b = Vec::new();
        for e in evs {
            b.extend_from_slice(&e.to_bytes());
        }
        std::fs::write(p, b).unwrap();
    }

    fn times(p: &Path) -> Vec<(u64, u64)> {
        let mut f = std::fs::File::open(p).unwrap();
        let mut v = Vec::new();
        while let Some((t, _)) = read_event(&mut f, false).unwrap() {
            v.push((t.time, t.sector));
        }
        v
    }

    #[test]
    fn merge_orders_scales_and_repeats() {
        let d = tempfile::tempdir().unwrap();
        let (a, b, m) = (d.path().join("a"), d.path().join("b"), d.path().join("m"));
        let q = TA_QUEUE;
        write_trace(
            &a,
            &[
                event(1000, 1, 512, q | tc(TC_READ), 1),
                event(1500, 1, 512, 8 | tc(TC_READ), 1), // completion: dropped
                event(3000, 2, 512, q | tc(TC_WRITE), 1),
            ],
        );
        write_trace(&b, &[event(2000, 10, 512, q | tc(TC_READ), 1)]);
        let inputs = vec![a.clone(), b.clone()];
        assert_eq!(merge(&inputs, &[], &[], &m).unwrap(), 3);
        assert_eq!(times(&m), vec![(1000, 1), (2000, 10), (3000, 2)]);
        // a at half time, twice; b once.
        merge(&inputs, &[50.0, 100.0], &[2.0, 1.0], &m).unwrap();
        // Pass 2 of a: (t + 3000) / 2, 3000 being the time of a's last event.
        assert_eq!(
            times(&m),
            vec![(500, 1), (1500, 2), (2000, 1), (2000, 10), (3000, 2)]
        );
        let e = merge(&inputs, &[50.0], &[], &m).unwrap_err();
        assert!(e.contains("merge_blktrace_scalars(1) != nr_logs(2)"), "{e}");
        std::fs::write(d.path().join("text"), "fio version 2 iolog\n").unwrap();
        let e = merge(&[d.path().join("text")], &[], &[], &m).unwrap_err();
        assert!(e.contains("not a blktrace"), "{e}");
    }
}
