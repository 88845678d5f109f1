//! The synchronous system-call engines: sync, psync, pvsync and vsync (pvsync2, Linux's
//! preadv2/pwritev2, is in `pvsync2.rs`).

use crate::api::{EngineDef, Caps, Completion, Engine, EngineConfig, FileInfo, IoReq, Op, Queued};
use crate::from_rustix;
use crate::os::fd::BorrowedFd;
use crate::os::io::{IoSlice, IoSliceMut};
use std::io;

pub(crate) const SYNC_CAPS: Caps = Caps {
    syncio: true,
    diskless: false,
    no_extend: false,
    file_op: false,
    has_commit: false,
    queue_completes: false,
    trim: true,
    no_fd: false,
    no_slat: false,
    dirs: false,
    creates: false,
    changes_names: false,
    noio: false,
    pipe: false,
    bit_based: false,
    think_us: 0,
    op_kinds: &[],
    untimed: false,
    sync_range: true,
    write_only: false,
    measures_tool: false,
    offload: true,
    rw_open: false,
    atomic_writes: false,
    diskless_syncs: false,
    shared_fd_table: false,
    fake_io: false,
};

/// Borrow the request's descriptor.
#[inline]
pub(crate) fn fd(io: &IoReq) -> BorrowedFd<'_> {
    // SAFETY: the core keeps the file open while any request on it is outstanding, and a
    // request's descriptor is the file's open descriptor.
    unsafe { BorrowedFd::borrow_raw(io.fd) }
}

/// The request's buffer as a mutable slice (for reads). The slice does not borrow from
/// `io` but from the buffer it points to, which the core owns and does not touch until the
/// request completes (inside `queue` for these engines).
#[inline]
#[allow(clippy::mut_from_ref)]
pub(crate) fn buf(io: &IoReq) -> &mut [u8] {
    // SAFETY: the core guarantees `buf` points to `len` bytes it owns, valid and not
    // otherwise referenced until this request completes.
    unsafe { std::slice::from_raw_parts_mut(io.buf, io.len) }
}

/// The request's buffer as a shared slice (for writes).
#[inline]
pub(crate) fn wbuf(io: &IoReq) -> &[u8] {
    // SAFETY: as for `buf`; only read here.
    unsafe { std::slice::from_raw_parts(io.buf, io.len) }
}

/// fsync / fdatasync / sync_file_range through the request's descriptor.
#[inline]
pub(crate) fn do_sync(io: &IoReq) -> i64 {
    let r = match io.op {
        Op::Sync => crate::os::fs::fsync(fd(io)),
        Op::SyncRange => {
            return match crate::platform::sync_file_range(
                fd(io),
                io.offset,
                io.len as u64,
                io.sync_flags,
            ) {
                Ok(()) => 0,
                Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
            }
        }
        _ => crate::os::fs::fdatasync(fd(io)),
    };
    match r {
        Ok(()) => 0,
        Err(e) => -(e.raw_os_error() as i64),
    }
}

/// A trim: BLKDISCARD of the request's range (block devices; files answer ENOTTY, as in
/// fio). Engines whose other requests are asynchronous do their trims this way too, at
/// once (fio's ASYNCIO_SYNC_TRIM).
#[inline]
pub(crate) fn do_trim(io: &IoReq) -> i64 {
    match crate::platform::discard(fd(io), io.offset, io.len as u64) {
        Ok(()) => io.len as i64,
        Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
    }
}

pub(crate) fn einval() -> i64 {
    -(libc::EINVAL as i64)
}

/// `psync`: pread(2)/pwrite(2).
pub struct Psync;

impl EngineDef for Psync {
    const NAME: &'static str = "psync";
    const HELP: &'static str = "Basic pread(2) or pwrite(2) I/O (default)";
    fn build(_: &EngineConfig) -> Self {
        Psync
    }
}

impl Engine for Psync {
    fn caps(&self) -> Caps {
        SYNC_CAPS
    }
    #[inline]
    fn queue(&mut self, io: &IoReq) -> Queued {
        Queued::Completed(match io.op {
            Op::Read => from_rustix(crate::os::io::pread(fd(io), buf(io), io.offset)),
            Op::Write => from_rustix(crate::os::io::pwrite(fd(io), wbuf(io), io.offset)),
            Op::Sync | Op::Datasync | Op::SyncRange => do_sync(io),
            Op::Trim => do_trim(io),
        })
    }
}

/// `sync`: lseek(2) (only when the position differs) then read(2)/write(2).
pub struct SyncRw {
    /// Current file position per file index (u64::MAX = unknown).
    pos: Vec<u64>,
}

impl SyncRw {
    pub fn new() -> Self {
        SyncRw { pos: Vec::new() }
    }
}

impl Default for SyncRw {
    fn default() -> Self {
        Self::new()
    }
}

impl EngineDef for SyncRw {
    const NAME: &'static str = "sync";
    const HELP: &'static str = "Basic read(2) or write(2) I/O, lseek(2) to position";
    fn build(_: &EngineConfig) -> Self {
        SyncRw::new()
    }
}

impl Engine for SyncRw {
    fn caps(&self) -> Caps {
        SYNC_CAPS
    }
    fn open_file(&mut self, file: u32, _f: &FileInfo) -> io::Result<()> {
        let i = file as usize;
        if self.pos.len() <= i {
            self.pos.resize(i + 1, u64::MAX);
        }
        self.pos[i] = 0;
        Ok(())
    }
    fn close_file(&mut self, file: u32) -> io::Result<()> {
        if let Some(p) = self.pos.get_mut(file as usize) {
            *p = u64::MAX;
        }
        Ok(())
    }
    #[inline]
    fn queue(&mut self, io: &IoReq) -> Queued {
        if matches!(io.op, Op::Sync | Op::Datasync | Op::SyncRange) {
            return Queued::Completed(do_sync(io));
        }
        if io.op == Op::Trim {
            // A positional ioctl: the file position stays where it was.
            return Queued::Completed(do_trim(io));
        }
        let i = io.file as usize;
        let known = self.pos.get(i).copied().unwrap_or(u64::MAX);
        if known != io.offset {
            if let Err(e) = crate::os::fs::seek(fd(io), crate::os::fs::SeekFrom::Start(io.offset)) {
                return Queued::Completed(-(e.raw_os_error() as i64));
            }
        }
        let r = match io.op {
            Op::Read => from_rustix(crate::os::io::read(fd(io), buf(io))),
            Op::Write => from_rustix(crate::os::io::write(fd(io), wbuf(io))),
            _ => einval(),
        };
        if let Some(p) = self.pos.get_mut(i) {
            *p = if r >= 0 {
                io.offset + r as u64
            } else {
                u64::MAX
            };
        }
        Queued::Completed(r)
    }
}

/// `pvsync`: preadv(2)/pwritev(2) with one vector.
pub struct Pvsync;

impl EngineDef for Pvsync {
    const NAME: &'static str = "pvsync";
    const HELP: &'static str = "Basic preadv(2) or pwritev(2) I/O";
    fn build(_: &EngineConfig) -> Self {
        Pvsync
    }
    #[cfg(target_os = "rtems")]
    fn probe(_: &EngineConfig) -> Result<(), String> {
        Err("ioengine 'pvsync' is not supported by flexio on RTEMS: its C library has no \
             preadv/pwritev (use psync)"
            .into())
    }
}

impl Engine for Pvsync {
    fn caps(&self) -> Caps {
        SYNC_CAPS
    }
    #[inline]
    fn queue(&mut self, io: &IoReq) -> Queued {
        Queued::Completed(match io.op {
            Op::Read => from_rustix(crate::os::io::preadv(
                fd(io),
                &mut [IoSliceMut::new(buf(io))],
                io.offset,
            )),
            Op::Write => from_rustix(crate::os::io::pwritev(
                fd(io),
                &[IoSlice::new(wbuf(io))],
                io.offset,
            )),
            Op::Sync | Op::Datasync | Op::SyncRange => do_sync(io),
            Op::Trim => do_trim(io),
        })
    }
}

/// `vsync`: contiguous requests of one file and direction are gathered (up to the queue
/// depth) and moved with one lseek(2) + readv(2)/writev(2) at commit.
pub struct Vsync {
    pending: Vec<IoReq>,
    done: Vec<Completion>,
    max: usize,
}

impl Vsync {
    pub fn new(depth: usize) -> Self {
        let d = depth.max(1);
        Vsync {
            pending: Vec::with_capacity(d),
            done: Vec::with_capacity(d),
            max: d,
        }
    }

    fn appendable(&self, io: &IoReq) -> bool {
        match self.pending.last() {
            None => true,
            Some(last) => {
                last.file == io.file
                    && last.op == io.op
                    && matches!(io.op, Op::Read | Op::Write)
                    && last.offset + last.len as u64 == io.offset
                    && self.pending.len() < self.max
            }
        }
    }
}

impl EngineDef for Vsync {
    const NAME: &'static str = "vsync";
    const HELP: &'static str = "Basic readv(2) or writev(2) I/O, contiguous requests coalesced";
    fn build(cfg: &EngineConfig) -> Self {
        Vsync::new(cfg.iodepth as usize)
    }
}

impl Engine for Vsync {
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            has_commit: true,
            ..SYNC_CAPS
        }
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        if matches!(io.op, Op::Sync | Op::Datasync | Op::SyncRange) {
            if !self.pending.is_empty() {
                return Queued::Busy;
            }
            return Queued::Completed(do_sync(io));
        }
        if io.op == Op::Trim {
            // After the gathered requests, like a sync.
            if !self.pending.is_empty() {
                return Queued::Busy;
            }
            return Queued::Completed(do_trim(io));
        }
        if !self.done.is_empty() || !self.appendable(io) {
            return Queued::Busy;
        }
        self.pending.push(*io);
        Queued::Queued
    }
    fn commit(&mut self) -> io::Result<usize> {
        if self.pending.is_empty() {
            return Ok(0);
        }
        let first = self.pending[0];
        let n = self.pending.len();
        let res = match crate::os::fs::seek(fd(&first), crate::os::fs::SeekFrom::Start(first.offset)) {
            Err(e) => -(e.raw_os_error() as i64),
            Ok(_) => {
                // At most the queue depth of vectors, kept on the stack for small depths.
                const STACK: usize = 64;
                if n <= STACK {
                    if first.op == Op::Read {
                        let mut v: [IoSliceMut; STACK] =
                            std::array::from_fn(|_| IoSliceMut::new(&mut []));
                        for (slot, r) in v.iter_mut().zip(&self.pending) {
                            *slot = IoSliceMut::new(buf(r));
                        }
                        from_rustix(crate::os::io::readv(fd(&first), &mut v[..n]))
                    } else {
                        let mut v: [IoSlice; STACK] = std::array::from_fn(|_| IoSlice::new(&[]));
                        for (slot, r) in v.iter_mut().zip(&self.pending) {
                            *slot = IoSlice::new(wbuf(r));
                        }
                        from_rustix(crate::os::io::writev(fd(&first), &v[..n]))
                    }
                } else if first.op == Op::Read {
                    let mut v: Vec<IoSliceMut> = self
                        .pending
                        .iter()
                        .map(|r| IoSliceMut::new(buf(r)))
                        .collect();
                    from_rustix(crate::os::io::readv(fd(&first), &mut v))
                } else {
                    let v: Vec<IoSlice> =
                        self.pending.iter().map(|r| IoSlice::new(wbuf(r))).collect();
                    from_rustix(crate::os::io::writev(fd(&first), &v))
                }
            }
        };
        // Hand back each request's share of the transfer (short transfers end early).
        let mut left = if res >= 0 { res as u64 } else { 0 };
        for r in &self.pending {
            let got = if res < 0 {
                res
            } else {
                let g = left.min(r.len as u64);
                left -= g;
                g as i64
            };
            self.done.push(Completion {
                idx: r.idx,
                res: got,
            });
        }
        self.pending.clear();
        Ok(n)
    }
    fn reap(&mut self, _min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let n = self.done.len().min(max.max(1));
        out.extend(self.done.drain(..n));
        Ok(n)
    }
}
