//! flexio-faultfs: a fault-injecting FUSE file system for testing how a benchmark (flexio,
//! fio, anything) handles a failing target.
//!
//! It serves one file from memory and injects the faults it is told to: EIO on chosen
//! ranges, ENOSPC after N bytes written, short reads and writes, delayed replies. It speaks
//! the FUSE protocol itself over /dev/fuse (no libfuse) and needs root to mount.
//!
//! ```text
//! flexio-faultfs MOUNTPOINT [--name data] [--size 16m] [--eio-read OFF:LEN]...
//!     [--eio-write OFF:LEN]... [--enospc-after BYTES] [--short-read N] [--short-write N]
//!     [--delay OFF:LEN:MS]... [--delay-all MS] [--discard-keeps-data]
//!     [--slow-at SECS:US] [--slow-until SECS:US]
//! ```
//!
//! `--slow-at SECS:US` makes every read and write wait US microseconds from SECS seconds
//! after the first read or write on: a device whose speed steps down mid-run (an SLC
//! cache running out, throttling). `--slow-until SECS:US` is the reverse, slow for the
//! first SECS seconds: a warm-up. Neither is logged per request.
//!
//! `--discard-keeps-data` answers hole punches (a loop device's discards) with success but
//! keeps the data, like a device that acknowledges discards without zeroing; without it
//! fallocate is not implemented (ENOSYS).
//!
//! It prints `ready` when mounted, logs every injected fault on stderr
//! (`faultfs: EIO read offset=.. len=..`), and unmounts on SIGINT/SIGTERM. Files are opened
//! with FOPEN_DIRECT_IO so each application request reaches it with its own offset and
//! length (no page cache in between).

use std::io::Write;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const ROOT: u64 = 1;
const FILE: u64 = 2;

// Opcodes (linux/fuse.h).
const LOOKUP: u32 = 1;
const FORGET: u32 = 2;
const GETATTR: u32 = 3;
const SETATTR: u32 = 4;
const OPEN: u32 = 14;
const READ: u32 = 15;
const WRITE: u32 = 16;
const STATFS: u32 = 17;
const RELEASE: u32 = 18;
const FSYNC: u32 = 20;
const FLUSH: u32 = 25;
const INIT: u32 = 26;
const OPENDIR: u32 = 27;
const READDIR: u32 = 28;
const RELEASEDIR: u32 = 29;
const FSYNCDIR: u32 = 30;
const CREATE: u32 = 35;
const INTERRUPT: u32 = 36;
const DESTROY: u32 = 38;
const BATCH_FORGET: u32 = 42;
const FALLOCATE: u32 = 43;
const FALLOC_FL_PUNCH_HOLE: u32 = 2;

const FOPEN_DIRECT_IO: u32 = 1;
const FATTR_SIZE: u32 = 1 << 3;
const MAX_WRITE: u32 = 128 * 1024;

#[derive(Default, Debug)]
struct Faults {
    eio_read: Vec<(u64, u64)>,
    eio_write: Vec<(u64, u64)>,
    enospc_after: Option<u64>,
    short_read: Option<u32>,
    short_write: Option<u32>,
    delay: Vec<(u64, u64, u64)>,
    delay_all_ms: u64,
    discard_keeps_data: bool,
    /// (seconds after the first I/O, µs per request): slow from then on, or until then.
    slow_at: Option<(f64, u64)>,
    slow_until: Option<(f64, u64)>,
}

struct Fs {
    name: String,
    data: Vec<u8>,
    written: u64,
    faults: Faults,
    /// When the first read or write arrived.
    first_io: Option<std::time::Instant>,
}

fn overlaps(ranges: &[(u64, u64)], off: u64, len: u64) -> bool {
    ranges
        .iter()
        .any(|&(s, l)| off < s.saturating_add(l) && s < off.saturating_add(len.max(1)))
}

fn parse_size(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, mul) = match s.char_indices().last() {
        Some((i, c)) if c.is_ascii_alphabetic() => {
            let m = match c.to_ascii_lowercase() {
                'k' => 1u64 << 10,
                'm' => 1 << 20,
                'g' => 1 << 30,
                _ => return Err(format!("bad size '{s}'")),
            };
            (&s[..i], m)
        }
        _ => (s, 1),
    };
    num.parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mul))
        .ok_or_else(|| format!("bad size '{s}'"))
}

fn parse_list(s: &str, n: usize) -> Result<Vec<u64>, String> {
    let v: Result<Vec<u64>, String> = s.split(':').map(parse_size).collect();
    let v = v?;
    if v.len() != n {
        return Err(format!("'{s}': expected {n} ':'-separated values"));
    }
    Ok(v)
}

fn usage(msg: &str) -> ! {
    eprintln!("flexio-faultfs: {msg}");
    eprintln!("usage: flexio-faultfs MOUNTPOINT [--name data] [--size 16m] [--eio-read OFF:LEN] [--eio-write OFF:LEN] [--enospc-after BYTES] [--short-read N] [--short-write N] [--delay OFF:LEN:MS] [--delay-all MS] [--slow-at SECS:US] [--slow-until SECS:US]");
    std::process::exit(2);
}

// --- field access: FUSE structures are in the machine's native byte order

fn u32_at(b: &[u8], i: usize) -> u32 {
    b.get(i..i + 4)
        .map(|x| u32::from_ne_bytes([x[0], x[1], x[2], x[3]]))
        .unwrap_or(0)
}
fn u64_at(b: &[u8], i: usize) -> u64 {
    b.get(i..i + 8)
        .map(|x| u64::from_ne_bytes(x.try_into().unwrap_or([0; 8])))
        .unwrap_or(0)
}

struct Out(Vec<u8>);
impl Out {
    fn new() -> Self {
        Out(Vec::with_capacity(256))
    }
    fn u16(&mut self, v: u16) -> &mut Self {
        self.0.extend_from_slice(&v.to_ne_bytes());
        self
    }
    fn u32(&mut self, v: u32) -> &mut Self {
        self.0.extend_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64(&mut self, v: u64) -> &mut Self {
        self.0.extend_from_slice(&v.to_ne_bytes());
        self
    }
    fn zeros(&mut self, n: usize) -> &mut Self {
        self.0.resize(self.0.len() + n, 0);
        self
    }
}

impl Fs {
    /// struct fuse_attr (88 bytes).
    fn attr(&self, o: &mut Out, node: u64) {
        let (size, mode, nlink) = if node == ROOT {
            (0u64, 0o040755u32, 2u32)
        } else {
            (self.data.len() as u64, 0o100644, 1)
        };
        o.u64(node)
            .u64(size)
            .u64(size.div_ceil(512))
            .u64(0)
            .u64(0)
            .u64(0)
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(mode)
            .u32(nlink)
            .u32(0)
            .u32(0)
            .u32(0)
            .u32(4096)
            .u32(0);
    }

    fn entry(&self, o: &mut Out, node: u64) {
        o.u64(node).u64(0).u64(0).u64(0).u32(0).u32(0);
        self.attr(o, node);
    }

    fn attr_out(&self, o: &mut Out, node: u64) {
        o.u64(0).u32(0).u32(0);
        self.attr(o, node);
    }

    /// The speed step's wait for a read or write now (µs).
    fn step_wait(&mut self) -> u64 {
        let t0 = *self.first_io.get_or_insert_with(std::time::Instant::now);
        let t = t0.elapsed().as_secs_f64();
        let mut us = 0;
        if let Some((at, w)) = self.faults.slow_at {
            if t >= at {
                us = us.max(w);
            }
        }
        if let Some((until, w)) = self.faults.slow_until {
            if t < until {
                us = us.max(w);
            }
        }
        us
    }

    fn delay_for(&self, off: u64, len: u64) -> u64 {
        let mut ms = self.faults.delay_all_ms;
        for &(s, l, d) in &self.faults.delay {
            if overlaps(&[(s, l)], off, len) {
                ms = ms.max(d);
            }
        }
        ms
    }

    /// Handle one request; `Ok(None)` = no reply, `Err(errno)` = error reply.
    fn handle(&mut self, op: u32, node: u64, body: &[u8]) -> Result<Option<Out>, i32> {
        let mut o = Out::new();
        match op {
            INIT => {
                let major = u32_at(body, 0);
                let minor = u32_at(body, 4);
                if major != 7 {
                    return Err(libc::EPROTO);
                }
                o.u32(7)
                    .u32(minor.min(31))
                    .u32(0) // max_readahead
                    .u32(0) // flags
                    .u16(16)
                    .u16(12)
                    .u32(MAX_WRITE)
                    .u32(1)
                    .u16(0)
                    .u16(0)
                    .u32(0)
                    .zeros(28);
            }
            LOOKUP => {
                let name = body.split(|b| *b == 0).next().unwrap_or(&[]);
                if node == ROOT && name == self.name.as_bytes() {
                    self.entry(&mut o, FILE);
                } else {
                    return Err(libc::ENOENT);
                }
            }
            FORGET | BATCH_FORGET | INTERRUPT => return Ok(None),
            GETATTR => self.attr_out(&mut o, node),
            SETATTR => {
                let valid = u32_at(body, 0);
                if node == FILE && valid & FATTR_SIZE != 0 {
                    let size = u64_at(body, 16);
                    if size > 1 << 34 {
                        return Err(libc::EFBIG);
                    }
                    self.data.resize(size as usize, 0);
                }
                self.attr_out(&mut o, node);
            }
            OPEN | OPENDIR => {
                o.u64(0)
                    .u32(if op == OPEN { FOPEN_DIRECT_IO } else { 0 })
                    .u32(0);
            }
            CREATE => {
                // Only the served file exists; creating it again opens it.
                let name = body[16.min(body.len())..]
                    .split(|b| *b == 0)
                    .next()
                    .unwrap_or(&[]);
                if name != self.name.as_bytes() {
                    return Err(libc::EACCES);
                }
                self.entry(&mut o, FILE);
                o.u64(0).u32(FOPEN_DIRECT_IO).u32(0);
            }
            READ => {
                let off = u64_at(body, 8);
                let mut size = u32_at(body, 16) as u64;
                let us = self.step_wait();
                if us > 0 {
                    std::thread::sleep(Duration::from_micros(us));
                }
                let ms = self.delay_for(off, size);
                if ms > 0 {
                    eprintln!("faultfs: delay {ms} ms read offset={off} len={size}");
                    std::thread::sleep(Duration::from_millis(ms));
                }
                if overlaps(&self.faults.eio_read, off, size) {
                    eprintln!("faultfs: EIO read offset={off} len={size}");
                    return Err(libc::EIO);
                }
                if let Some(s) = self.faults.short_read {
                    if size > s as u64 {
                        eprintln!("faultfs: short read offset={off} len={size} -> {s}");
                        size = s as u64;
                    }
                }
                let len = self.data.len() as u64;
                let start = off.min(len) as usize;
                let end = off.saturating_add(size).min(len) as usize;
                o.0.extend_from_slice(&self.data[start..end]);
            }
            WRITE => {
                let off = u64_at(body, 8);
                let size = u32_at(body, 16) as u64;
                let payload = body.get(40..).unwrap_or(&[]);
                let mut n = size.min(payload.len() as u64);
                let us = self.step_wait();
                if us > 0 {
                    std::thread::sleep(Duration::from_micros(us));
                }
                let ms = self.delay_for(off, n);
                if ms > 0 {
                    eprintln!("faultfs: delay {ms} ms write offset={off} len={n}");
                    std::thread::sleep(Duration::from_millis(ms));
                }
                if overlaps(&self.faults.eio_write, off, n) {
                    eprintln!("faultfs: EIO write offset={off} len={n}");
                    return Err(libc::EIO);
                }
                if let Some(limit) = self.faults.enospc_after {
                    let room = limit.saturating_sub(self.written);
                    if room == 0 {
                        eprintln!("faultfs: ENOSPC write offset={off} len={n}");
                        return Err(libc::ENOSPC);
                    }
                    if n > room {
                        eprintln!("faultfs: short write (space) offset={off} len={n} -> {room}");
                        n = room;
                    }
                }
                if let Some(s) = self.faults.short_write {
                    if n > s as u64 {
                        eprintln!("faultfs: short write offset={off} len={n} -> {s}");
                        n = s as u64;
                    }
                }
                let end = off.saturating_add(n);
                if end > 1 << 34 {
                    return Err(libc::EFBIG);
                }
                if end as usize > self.data.len() {
                    self.data.resize(end as usize, 0);
                }
                self.data[off as usize..end as usize].copy_from_slice(&payload[..n as usize]);
                self.written += n;
                o.u32(n as u32).u32(0);
            }
            STATFS => {
                let blocks = 1u64 << 22;
                o.u64(blocks)
                    .u64(blocks)
                    .u64(blocks)
                    .u64(16)
                    .u64(14)
                    .u32(4096)
                    .u32(255)
                    .u32(4096)
                    .u32(0)
                    .zeros(24);
            }
            FALLOCATE if self.faults.discard_keeps_data => {
                let off = u64_at(body, 8);
                let len = u64_at(body, 16);
                let mode = u32_at(body, 24);
                if mode & FALLOC_FL_PUNCH_HOLE == 0 {
                    return Err(libc::EOPNOTSUPP);
                }
                eprintln!("faultfs: discard kept data offset={off} len={len}");
            }
            RELEASE | RELEASEDIR | FLUSH | FSYNC | FSYNCDIR => {}
            READDIR => {}
            DESTROY => return Ok(None),
            _ => return Err(libc::ENOSYS),
        }
        Ok(Some(o))
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut mnt: Option<String> = None;
    let mut name = "data".to_string();
    let mut size = 16u64 << 20;
    let mut faults = Faults::default();
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let val = || {
            args.get(i + 1)
                .cloned()
                .unwrap_or_else(|| usage(&format!("{a} needs a value")))
        };
        let r: Result<(), String> = (|| {
            match a {
                "--name" => name = val(),
                "--size" => size = parse_size(&val())?,
                "--eio-read" => {
                    let v = parse_list(&val(), 2)?;
                    faults.eio_read.push((v[0], v[1]));
                }
                "--eio-write" => {
                    let v = parse_list(&val(), 2)?;
                    faults.eio_write.push((v[0], v[1]));
                }
                "--enospc-after" => faults.enospc_after = Some(parse_size(&val())?),
                "--short-read" => faults.short_read = Some(parse_size(&val())?.max(1) as u32),
                "--short-write" => faults.short_write = Some(parse_size(&val())?.max(1) as u32),
                "--delay" => {
                    let v = parse_list(&val(), 3)?;
                    faults.delay.push((v[0], v[1], v[2]));
                }
                "--delay-all" => faults.delay_all_ms = parse_size(&val())?,
                "--slow-at" | "--slow-until" => {
                    let v = val();
                    let (t, us) = v
                        .split_once(':')
                        .ok_or_else(|| format!("{a} wants SECS:US, got '{v}'"))?;
                    let t: f64 = t.parse().map_err(|_| format!("bad seconds '{t}'"))?;
                    let step = Some((t, parse_size(us)?));
                    if a == "--slow-at" {
                        faults.slow_at = step;
                    } else {
                        faults.slow_until = step;
                    }
                }
                "--discard-keeps-data" => faults.discard_keeps_data = true,
                _ if !a.starts_with("--") && mnt.is_none() => {
                    mnt = Some(a.to_string());
                    return Ok(());
                }
                _ => return Err(format!("unknown argument {a}")),
            }
            Ok(())
        })();
        if let Err(e) = r {
            usage(&e);
        }
        i += if !a.starts_with("--") || a == "--discard-keeps-data" {
            1
        } else {
            2
        };
    }
    let Some(mnt) = mnt else {
        usage("no mount point")
    };
    if size > 1 << 32 {
        usage("--size is limited to 4 GiB (the file lives in memory)");
    }

    let dev = match rustix::fs::open(
        "/dev/fuse",
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    ) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("flexio-faultfs: cannot open /dev/fuse: {e} (is the fuse module loaded?)");
            std::process::exit(3);
        }
    };
    let opts = format!(
        "fd={},rootmode=40000,user_id=0,group_id=0,allow_other",
        std::os::fd::AsRawFd::as_raw_fd(&dev)
    );
    let copts = std::ffi::CString::new(opts).unwrap_or_default();
    if let Err(e) = rustix::mount::mount(
        "faultfs",
        mnt.as_str(),
        "fuse.faultfs",
        rustix::mount::MountFlags::NOSUID | rustix::mount::MountFlags::NODEV,
        copts.as_c_str(),
    ) {
        eprintln!("flexio-faultfs: mount on {mnt} failed: {e} (needs root)");
        std::process::exit(3);
    }
    // Unmount on SIGINT/SIGTERM: a detached unmount ends the request loop.
    let stop = Arc::new(AtomicBool::new(false));
    {
        let mnt = mnt.clone();
        let stop = stop.clone();
        let mut signals = signal_hook::iterator::Signals::new([
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGTERM,
        ])
        .expect("signal handler");
        std::thread::spawn(move || {
            if signals.forever().next().is_some() {
                stop.store(true, Ordering::SeqCst);
                let _ = rustix::mount::unmount(mnt.as_str(), rustix::mount::UnmountFlags::DETACH);
            }
        });
    }
    let mut fs = Fs {
        name,
        data: vec![0; size as usize],
        written: 0,
        faults,
        first_io: None,
    };
    println!("ready");
    let _ = std::io::stdout().flush();

    let mut buf = vec![0u8; MAX_WRITE as usize + 64 * 1024];
    loop {
        let n = match rustix::io::read(dev.as_fd(), &mut buf) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) | Err(rustix::io::Errno::AGAIN) => continue,
            // ENOENT: the request was interrupted; ENODEV: unmounted.
            Err(rustix::io::Errno::NOENT) => continue,
            Err(rustix::io::Errno::NODEV) => break,
            Err(e) => {
                if !stop.load(Ordering::SeqCst) {
                    eprintln!("flexio-faultfs: read /dev/fuse: {e}");
                }
                break;
            }
        };
        if n < 40 {
            continue;
        }
        let req = &buf[..n];
        let op = u32_at(req, 4);
        let unique = u64_at(req, 8);
        let node = u64_at(req, 16);
        let body = &req[40..];
        let (err, payload) = match fs.handle(op, node, body) {
            Ok(None) => continue,
            Ok(Some(o)) => (0i32, o.0),
            Err(e) => (-e, Vec::new()),
        };
        let mut reply = Out::new();
        reply
            .u32(16 + payload.len() as u32)
            .u32(err as u32)
            .u64(unique);
        reply.0.extend_from_slice(&payload);
        // ENOENT here means the request was interrupted meanwhile: nothing to do.
        let _ = rustix::io::write(dev.as_fd(), &reply.0);
    }
    let _ = rustix::mount::unmount(mnt.as_str(), rustix::mount::UnmountFlags::DETACH);
}
