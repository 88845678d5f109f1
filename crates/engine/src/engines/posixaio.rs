//! `posixaio`: POSIX asynchronous I/O (aio_read/aio_write/aio_fsync), completions found
//! with aio_error and waited for with aio_suspend. Portable to systems without io_uring or
//! libaio. There is no commit step: each request is handed over in `queue` (so slat is the
//! aio_read/aio_write call, as in fio).

use crate::api::{EngineDef, Caps, Completion, Engine, EngineConfig, IoReq, Op, Queued};
use std::io;

pub struct Posixaio {
    cbs: Vec<libc::aiocb>,
    /// Slots with a request in flight.
    inflight: Vec<u32>,
    /// Scratch list of control-block pointers for aio_suspend.
    list: Vec<*const libc::aiocb>,
}

impl Posixaio {
    pub fn new(cfg: &EngineConfig) -> Self {
        let depth = cfg.iodepth.max(1) as usize;
        Posixaio {
            // SAFETY: aiocb is a plain C struct for which all-zero bytes are a valid value.
            cbs: (0..depth).map(|_| unsafe { std::mem::zeroed() }).collect(),
            inflight: Vec::with_capacity(depth),
            list: Vec::with_capacity(depth),
        }
    }
}

impl EngineDef for Posixaio {
    const NAME: &'static str = "posixaio";
    const HELP: &'static str = "POSIX asynchronous I/O (aio_read/aio_write)";
    fn build(cfg: &EngineConfig) -> Self {
        Posixaio::new(cfg)
    }
}

impl Engine for Posixaio {
    fn caps(&self) -> Caps {
        Caps {
            trim: true,
            // glibc's AIO helper threads do the I/O with the descriptor numbers they are
            // given, in the descriptor table of the thread that started them.
            shared_fd_table: true,
            ..Caps::default()
        }
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        // off_t is 32 bits in 32-bit glibc's aiocb: an offset it cannot hold is an error,
        // not a write somewhere else.
        let Ok(offset) = libc::off_t::try_from(io.offset) else {
            return Queued::Completed(-(libc::EOVERFLOW as i64));
        };
        let cb = &mut self.cbs[io.idx as usize];
        // SAFETY: all-zero is a valid aiocb (no notification: SIGEV_NONE is 1, set below).
        *cb = unsafe { std::mem::zeroed() };
        cb.aio_fildes = io.fd;
        cb.aio_buf = io.buf.cast();
        cb.aio_nbytes = io.len;
        cb.aio_offset = offset;
        cb.aio_sigevent.sigev_notify = libc::SIGEV_NONE;
        // SAFETY: cb lives in self.cbs at the request's slot and is not touched again until
        // the request completes; the buffer is kept valid by the core until then.
        let r = unsafe {
            match io.op {
                Op::Read => libc::aio_read(cb),
                Op::Write => libc::aio_write(cb),
                Op::Sync => libc::aio_fsync(libc::O_SYNC, cb),
                Op::Datasync => libc::aio_fsync(libc::O_DSYNC, cb),
                // The plan refuses sync_file_range for engines without Caps::sync_range.
                Op::SyncRange => return Queued::Completed(-(libc::EINVAL as i64)),
                Op::Trim => return Queued::Completed(crate::sync::do_trim(io)),
            }
        };
        if r != 0 {
            let e = io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO);
            if e == libc::EAGAIN && !self.inflight.is_empty() {
                return Queued::Busy;
            }
            return Queued::Completed(-(e as i64));
        }
        self.inflight.push(io.idx);
        Queued::Queued
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let mut got = 0usize;
        loop {
            let mut i = 0;
            while i < self.inflight.len() && got < max {
                let slot = self.inflight[i];
                let cb = &mut self.cbs[slot as usize];
                // SAFETY: cb is an in-flight control block of ours.
                let err = unsafe { libc::aio_error(cb) };
                if err == libc::EINPROGRESS {
                    i += 1;
                    continue;
                }
                // SAFETY: the request has finished (aio_error is not EINPROGRESS), so
                // aio_return may (and must) be called once.
                let ret = unsafe { libc::aio_return(cb) };
                let res = if err == 0 { ret as i64 } else { -(err as i64) };
                out.push(Completion { idx: slot, res });
                self.inflight.swap_remove(i);
                got += 1;
            }
            if got >= min || self.inflight.is_empty() || got >= max {
                return Ok(got);
            }
            self.list.clear();
            for &s in &self.inflight {
                self.list.push(&self.cbs[s as usize]);
            }
            // SAFETY: list holds pointers to our in-flight control blocks; null timeout.
            let r = unsafe {
                libc::aio_suspend(
                    self.list.as_ptr(),
                    self.list.len() as libc::c_int,
                    std::ptr::null(),
                )
            };
            if r != 0 {
                let e = io::Error::last_os_error();
                if !matches!(e.raw_os_error(), Some(libc::EINTR) | Some(libc::EAGAIN)) {
                    return Err(e);
                }
            }
        }
    }
}
