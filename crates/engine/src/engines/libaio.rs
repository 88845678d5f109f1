//! `libaio`: Linux native AIO through its four system calls (io_setup, io_submit,
//! io_getevents, io_destroy) with the kernel's `struct iocb`; no C library needed.
//! `userspace_reap` reads completions straight from the ring the kernel maps into our
//! address space instead of calling io_getevents.
//!
//! Portability: the context id is the kernel's `aio_context_t`, an `unsigned long` (32 bits
//! on 32-bit targets), and every argument goes through the variadic `syscall()` as a C
//! long or a pointer, so no 64-bit value shifts the arguments after it on 32-bit ABIs.
//! `struct iocb` swaps `aio_key` and `aio_rw_flags` on big-endian machines; the layout
//! below follows the target's byte order and is checked against the kernel's offsets.

use crate::api::{EngineDef, Caps, Completion, Engine, EngineConfig, IoReq, Op, Queued};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use std::io;
use std::sync::atomic::{fence, Ordering};

const IOCB_CMD_PREAD: u16 = 0;
const IOCB_CMD_PWRITE: u16 = 1;
const IOCB_CMD_FSYNC: u16 = 2;
const IOCB_CMD_FDSYNC: u16 = 3;
const IOCB_CMD_PREADV: u16 = 7;
const IOCB_CMD_PWRITEV: u16 = 8;
const IOCB_FLAG_IOPRIO: u32 = 1 << 1;
const RWF_NOWAIT: i32 = 0x8;
const AIO_RING_MAGIC: u32 = 0xa10a10a1;

/// The kernel's `aio_context_t` (`__kernel_ulong_t`).
type AioContext = libc::c_ulong;

/// The kernel's `struct iocb` (64 bytes on every architecture; `key` and `rw_flags` trade
/// places with the byte order).
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Iocb {
    data: u64,
    #[cfg(target_endian = "little")]
    key: u32,
    rw_flags: i32,
    #[cfg(target_endian = "big")]
    key: u32,
    opcode: u16,
    reqprio: i16,
    fildes: u32,
    buf: u64,
    nbytes: u64,
    offset: i64,
    reserved2: u64,
    flags: u32,
    resfd: u32,
}

/// The kernel's `struct io_event`.
#[repr(C)]
#[derive(Clone, Copy, Default)]
struct IoEvent {
    data: u64,
    obj: u64,
    res: i64,
    res2: i64,
}

/// Header of the completion ring the kernel maps at the context address.
#[repr(C)]
struct AioRing {
    id: u32,
    nr: u32,
    head: u32,
    tail: u32,
    magic: u32,
    compat_features: u32,
    incompat_features: u32,
    header_length: u32,
}

pub struct Libaio {
    depth: usize,
    ctx: AioContext,
    iocbs: Vec<Iocb>,
    /// Prepared, not yet submitted (pointers into `iocbs`).
    pending: Vec<*mut Iocb>,
    events: Vec<IoEvent>,
    userspace_reap: bool,
    nowait: bool,
    /// libaio_vectored: one iovec per request slot (kept until its completion).
    vectored: bool,
    iovecs: Vec<libc::iovec>,
    /// RWF_ATOMIC on writes (`atomic`).
    atomic: bool,
    /// fsync and fdatasync done at once (fio 3.33's libaio, [`EngineConfig::inline_syncs`]).
    inline_syncs: bool,
}

flexio_job::engine_options! {
    /// libaio's options (fio's libaio option table).
    pub struct LibaioOpts; rows OPTIONS;
    /// Reap completions from the user-space ring without a system call.
    userspace_reap: bool = false,
        "userspace_reap", Kind::Flag, "0", "Use alternative user-space reap implementation",
        parse::flag;
    /// RWF_NOWAIT on reads and writes.
    nowait: bool = false,
        "nowait", Kind::Bool, "0", "Set RWF_NOWAIT for reads/writes", parse::boolean;
    /// PREADV/PWRITEV with one iovec instead of PREAD/PWRITE (fio 3.39+).
    libaio_vectored: bool = false,
        "libaio_vectored", Kind::Bool, "0", "Use libaio preadv,pwritev", parse::boolean,
        since "3.39";
}

impl EngineDef for Libaio {
    const NAME: &'static str = "libaio";
    const HELP: &'static str = "Linux native asynchronous I/O (io_submit/io_getevents)";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS, crate::cmdprio::OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        Libaio::new(cfg)
    }
    fn probe(_: &EngineConfig) -> Result<(), String> {
        let mut a = Libaio::new(&EngineConfig {
            iodepth: 1,
            ..Default::default()
        });
        a.init()
            .map_err(|e| format!("ioengine libaio is not available on this system: {e}"))
    }
}

impl Libaio {
    pub fn new(cfg: &EngineConfig) -> Self {
        let depth = cfg.iodepth.max(1) as usize;
        let o = LibaioOpts::from_values(&cfg.values);
        Libaio {
            depth,
            ctx: 0,
            iocbs: vec![Iocb::default(); depth],
            pending: Vec::with_capacity(depth),
            events: vec![IoEvent::default(); depth],
            userspace_reap: o.userspace_reap,
            nowait: o.nowait,
            vectored: o.libaio_vectored,
            atomic: cfg.atomic,
            inline_syncs: cfg.inline_syncs,
            iovecs: vec![
                libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0
                };
                if o.libaio_vectored { depth } else { 0 }
            ],
        }
    }

    /// Completions waiting in the user-space ring, copied into `events`.
    fn reap_ring(&mut self, max: usize) -> usize {
        let ring = self.ctx as *mut AioRing;
        // SAFETY: ctx is the address of the kernel-mapped aio ring returned by io_setup; it
        // stays mapped until io_destroy (in Drop). The header fields are plain u32s the
        // kernel updates; head is ours to advance, tail is read after an acquire fence.
        unsafe {
            if (*ring).magic != AIO_RING_MAGIC {
                return 0;
            }
            let nr = (*ring).nr;
            let mut head = std::ptr::read_volatile(&(*ring).head);
            let tail = std::ptr::read_volatile(&(*ring).tail);
            fence(Ordering::Acquire);
            let first = (ring as *mut u8).add(std::mem::size_of::<AioRing>()) as *const IoEvent;
            let mut n = 0;
            while head != tail && n < max {
                self.events[n] = std::ptr::read_volatile(first.add(head as usize));
                head = (head + 1) % nr;
                n += 1;
            }
            fence(Ordering::Release);
            std::ptr::write_volatile(&mut (*ring).head, head);
            n
        }
    }
}

impl Drop for Libaio {
    fn drop(&mut self) {
        if self.ctx != 0 {
            // SAFETY: io_destroy on our own context; waits for outstanding requests.
            unsafe { libc::syscall(libc::SYS_io_destroy, self.ctx) };
        }
    }
}

fn last_err() -> io::Error {
    io::Error::last_os_error()
}

impl Engine for Libaio {
    fn caps(&self) -> Caps {
        Caps {
            has_commit: true,
            trim: true,
            sync_range: true,
            atomic_writes: true,
            ..Caps::default()
        }
    }
    fn init(&mut self) -> io::Result<()> {
        let mut ctx: AioContext = 0;
        // SAFETY: io_setup writes the new context id into `ctx`, an aio_context_t.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_setup,
                self.depth as libc::c_long,
                &mut ctx as *mut AioContext,
            )
        };
        if r != 0 {
            let e = last_err();
            let why = match e.raw_os_error() {
                Some(libc::ENOSYS) => "this kernel has no native AIO (ENOSYS)".to_string(),
                Some(libc::EAGAIN) => format!("io_setup({}): too many AIO events system-wide (EAGAIN; see /proc/sys/fs/aio-max-nr)", self.depth),
                _ => format!("io_setup failed: {e}"),
            };
            return Err(io::Error::new(e.kind(), why));
        }
        self.ctx = ctx;
        Ok(())
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        if self.pending.len() >= self.depth {
            return Queued::Busy;
        }
        if self.inline_syncs && matches!(io.op, Op::Sync | Op::Datasync | Op::SyncRange) {
            // fio 3.33: the requests queued before the sync go to the kernel first (Busy
            // makes the core submit them and reap), then the sync runs here, blocking.
            if !self.pending.is_empty() {
                return Queued::Busy;
            }
            return Queued::Completed(crate::sync::do_sync(io));
        }
        let (opcode, buf, nbytes) = match io.op {
            Op::Read | Op::Write if self.vectored => {
                let v = &mut self.iovecs[io.idx as usize];
                *v = libc::iovec {
                    iov_base: io.buf.cast(),
                    iov_len: io.len,
                };
                let op = if io.op == Op::Read {
                    IOCB_CMD_PREADV
                } else {
                    IOCB_CMD_PWRITEV
                };
                (op, v as *const libc::iovec as usize as u64, 1)
            }
            Op::Read => (IOCB_CMD_PREAD, io.buf as usize as u64, io.len as u64),
            Op::Write => (IOCB_CMD_PWRITE, io.buf as usize as u64, io.len as u64),
            Op::Sync => (IOCB_CMD_FSYNC, 0, 0),
            Op::Datasync => (IOCB_CMD_FDSYNC, 0, 0),
            Op::Trim => return Queued::Completed(crate::sync::do_trim(io)),
            // The kernel's AIO has no sync_file_range: done at once, synchronously.
            Op::SyncRange => return Queued::Completed(crate::sync::do_sync(io)),
        };
        let cb = &mut self.iocbs[io.idx as usize];
        *cb = Iocb {
            data: io.idx as u64,
            rw_flags: if self.nowait && matches!(io.op, Op::Read | Op::Write) {
                RWF_NOWAIT
            } else {
                0
            } | if self.atomic && io.op == Op::Write {
                crate::platform::RWF_ATOMIC as i32
            } else {
                0
            },
            opcode,
            reqprio: io.ioprio as i16,
            fildes: io.fd as u32,
            buf,
            nbytes,
            offset: io.offset as i64,
            flags: if io.ioprio != 0 { IOCB_FLAG_IOPRIO } else { 0 },
            ..Iocb::default()
        };
        let p: *mut Iocb = cb;
        self.pending.push(p);
        Queued::Queued
    }
    fn commit(&mut self) -> io::Result<usize> {
        let mut done = 0usize;
        while done < self.pending.len() {
            let left = self.pending.len() - done;
            // SAFETY: the pointers refer to iocbs in self.iocbs (stable: never resized),
            // each describing a buffer the core keeps valid until completion (with
            // libaio_vectored, an iovec in self.iovecs at the request's slot, untouched
            // until its completion).
            let r = unsafe {
                libc::syscall(
                    libc::SYS_io_submit,
                    self.ctx,
                    left as libc::c_long,
                    self.pending.as_ptr().add(done),
                )
            };
            if r < 0 {
                let e = last_err();
                match e.raw_os_error() {
                    Some(libc::EINTR) => continue,
                    Some(libc::EAGAIN) if done > 0 => break,
                    Some(libc::EAGAIN) => break,
                    _ => {
                        self.pending.clear();
                        return Err(e);
                    }
                }
            }
            if r == 0 {
                break;
            }
            done += r as usize;
        }
        self.pending.drain(..done);
        Ok(done)
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let max = max.min(self.depth).max(1);
        let mut got = 0usize;
        loop {
            let n = if self.userspace_reap {
                let n = self.reap_ring(max - got);
                if n == 0 && got < min {
                    std::hint::spin_loop();
                }
                n
            } else {
                let want = min.saturating_sub(got);
                // SAFETY: `events` has room for `max - got` entries; a null timeout waits.
                let r = unsafe {
                    libc::syscall(
                        libc::SYS_io_getevents,
                        self.ctx,
                        want as libc::c_long,
                        (max - got) as libc::c_long,
                        self.events.as_mut_ptr(),
                        std::ptr::null::<libc::timespec>(),
                    )
                };
                if r < 0 {
                    let e = last_err();
                    if e.raw_os_error() == Some(libc::EINTR) {
                        continue;
                    }
                    return Err(e);
                }
                if r == 0 && want > 0 {
                    // A blocking wait that returns nothing (it cannot, unless the arguments
                    // are wrong): hand control back so the core can check its stop flags
                    // instead of spinning here.
                    return Ok(got);
                }
                r as usize
            };
            for ev in &self.events[..n] {
                out.push(Completion {
                    idx: ev.data as u32,
                    res: ev.res,
                });
            }
            got += n;
            if got >= min || got >= max {
                return Ok(got);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn kernel_layouts() {
        // include/uapi/linux/aio_abi.h: the same sizes and offsets on every architecture,
        // except that key (bytes 8..12 on little-endian) and rw_flags (12..16) swap on
        // big-endian.
        assert_eq!(size_of::<Iocb>(), 64);
        assert_eq!(size_of::<IoEvent>(), 32);
        assert_eq!(size_of::<AioRing>(), 32);
        let (key, rw) = if cfg!(target_endian = "little") {
            (8, 12)
        } else {
            (12, 8)
        };
        assert_eq!(offset_of!(Iocb, key), key);
        assert_eq!(offset_of!(Iocb, rw_flags), rw);
        assert_eq!(offset_of!(Iocb, opcode), 16);
        assert_eq!(offset_of!(Iocb, reqprio), 18);
        assert_eq!(offset_of!(Iocb, fildes), 20);
        assert_eq!(offset_of!(Iocb, buf), 24);
        assert_eq!(offset_of!(Iocb, nbytes), 32);
        assert_eq!(offset_of!(Iocb, offset), 40);
        assert_eq!(offset_of!(Iocb, flags), 56);
        assert_eq!(offset_of!(Iocb, resfd), 60);
        assert_eq!(offset_of!(IoEvent, res), 16);
        assert_eq!(size_of::<AioContext>(), size_of::<usize>());
    }

    #[test]
    fn reads_back_what_it_wrote_and_stops() {
        // A round trip through the kernel at a depth above one, and an idle reap that
        // returns instead of spinning (the 32-bit livelock: a 64-bit context passed through
        // the variadic syscall() shifted every argument after it).
        let mut a = Libaio::new(&EngineConfig {
            iodepth: 4,
            ..Default::default()
        });
        if let Err(e) = a.init() {
            println!("SKIP: native AIO unavailable: {e}");
            return;
        }
        let d = tempfile::tempdir().unwrap();
        let f = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(d.path().join("f"))
            .unwrap();
        use std::os::fd::AsRawFd;
        let mut bufs = vec![[0u8; 4096]; 4];
        for (i, b) in bufs.iter_mut().enumerate() {
            b.fill(i as u8 + 1);
        }
        let req = |idx: u32, op: Op, buf: *mut u8| IoReq {
            idx,
            op,
            fd: f.as_raw_fd(),
            file: 0,
            offset: idx as u64 * 4096,
            buf,
            len: 4096,
            ioprio: 0,
            sync_flags: 0,
        };
        for (i, b) in bufs.iter_mut().enumerate() {
            assert!(matches!(a.queue(&req(i as u32, Op::Write, b.as_mut_ptr())), Queued::Queued));
        }
        assert_eq!(a.commit().unwrap(), 4);
        let mut out = Vec::new();
        assert_eq!(a.reap(4, 4, &mut out).unwrap(), 4);
        assert!(out.iter().all(|c| c.res == 4096), "{:?}", out.iter().map(|c| c.res).collect::<Vec<_>>());
        // Nothing in flight: a reap with min 0 returns at once with nothing.
        out.clear();
        assert_eq!(a.reap(0, 4, &mut out).unwrap(), 0);
        let mut back = [0u8; 4096];
        assert!(matches!(a.queue(&req(2, Op::Read, back.as_mut_ptr())), Queued::Queued));
        assert_eq!(a.commit().unwrap(), 1);
        assert_eq!(a.reap(1, 1, &mut out).unwrap(), 1);
        assert_eq!(out[0].idx, 2);
        assert_eq!(back, [3u8; 4096]);
    }
}
