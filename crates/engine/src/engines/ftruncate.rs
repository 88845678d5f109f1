//! `ftruncate`: each write truncates the file to the write's offset (the block size only
//! counts as transferred bytes); reads are invalid.

use crate::api::{EngineDef, Caps, Engine, EngineConfig, IoReq, Op, Queued};
use crate::os::fd::BorrowedFd;

pub struct Ftruncate;

impl EngineDef for Ftruncate {
    const NAME: &'static str = "ftruncate";
    const HELP: &'static str = "Truncate the file to the offset of each write";
    fn build(_: &EngineConfig) -> Self {
        Ftruncate
    }
}

impl Engine for Ftruncate {
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            write_only: true,
            fake_io: true,
            ..Caps::default()
        }
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        // SAFETY: the core keeps the descriptor open while the request is outstanding.
        let fd = unsafe { BorrowedFd::borrow_raw(io.fd) };
        let r = match io.op {
            Op::Write => crate::os::fs::ftruncate(fd, io.offset).map(|_| io.len as i64),
            Op::Sync => crate::os::fs::fsync(fd).map(|_| 0),
            Op::Datasync => crate::os::fs::fdatasync(fd).map(|_| 0),
            _ => return Queued::Completed(-(libc::EINVAL as i64)),
        };
        Queued::Completed(r.unwrap_or_else(|e| -(e.raw_os_error() as i64)))
    }
}
