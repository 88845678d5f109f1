//! blktrace binary traces (`struct blk_io_trace`, 48 bytes, then `pdu_len` bytes of
//! payload), replayed as fio replays them:
//! * only queue events (`__BLK_TA_QUEUE`) of file-system requests become I/O: reads,
//!   writes (the write category bit), discards (trims) and empty flushes (syncs);
//!   notify and SCSI pass-through events are skipped;
//! * the offset is `sector * 512` (then `replay_scale` and `replay_align`);
//! * the delay of an I/O is the time since the previous event on the same CPU (any action),
//!   in µs;
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
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_PC: u32 = 1 << 9;
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

    /// What a queue event replays as (None: not replayed).
    fn act(&self) -> Option<Act> {
        if self.action & 0xffff != TA_QUEUE || self.action & tc(TC_PC) != 0 || self.is_notify() {
            return None;
        }
        Some(if self.action & tc(TC_DISCARD) != 0 {
            Act::Trim
        } else if self.action & tc(TC_FLUSH) != 0 && self.bytes == 0 {
            Act::Sync
        } else if self.action & tc(TC_WRITE) != 0 {
            Act::Write
        } else {
            Act::Read
        })
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
                if rustix::fs::major(rdev) == major && rustix::fs::minor(rdev) == minor {
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
    last_cpu: u32,
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
            last_cpu: 0,
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
            if t.is_notify() {
                continue;
            }
            if self.last_time == 0 {
                self.last_time = t.time;
                self.last_cpu = t.cpu;
            }
            let gap = if t.cpu == self.last_cpu {
                t.time.saturating_sub(self.last_time)
            } else {
                0
            };
            self.last_time = t.time;
            self.last_cpu = t.cpu;
            let Some(act) = t.act() else { continue };
            if self.opts.skips(act) {
                continue;
            }
            if self.opts.readonly && matches!(act, Act::Write | Act::Trim) {
                self.readonly_dropped += 1;
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
                len: if act == Act::Sync { 0 } else { t.bytes as u64 },
                delay_us: self.opts.delay(gap / 1000),
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
                (Act::Write, 8192, 8192, 1500),
                (Act::Sync, 0, 0, 1000),
                (Act::Trim, 16384, 4096, 1000),
                (Act::Close, 0, 0, 0),
            ]
        );
        let mut sw = bytes[..48].to_vec();
        sw[..4].reverse();
        assert_eq!(magic(&sw), Some(true));
    }
}
