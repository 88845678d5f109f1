//! `falloc`: fallocate(2) as the I/O. Reads allocate keeping the size, writes allocate
//! (extending), trims punch holes.

use crate::api::{EngineDef, Caps, Engine, EngineConfig, IoReq, Op, Queued};
use rustix::fd::BorrowedFd;
use crate::platform::{fallocate, FallocMode};

pub struct Falloc;

impl EngineDef for Falloc {
    const NAME: &'static str = "falloc";
    const HELP: &'static str =
        "fallocate(2): read = keep size, write = allocate, trim = punch hole";
    fn build(_: &EngineConfig) -> Self {
        Falloc
    }
}

impl Engine for Falloc {
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            trim: true,
            ..Caps::default()
        }
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        // SAFETY: the core keeps the descriptor open while the request is outstanding.
        let fd = unsafe { BorrowedFd::borrow_raw(io.fd) };
        let len = io.len as u64;
        let r = match io.op {
            Op::Read => fallocate(fd, FallocMode::KeepSize, io.offset, len),
            Op::Write => fallocate(fd, FallocMode::Extend, io.offset, len),
            Op::Trim => fallocate(fd, FallocMode::PunchHole, io.offset, len),
            Op::Sync => rustix::fs::fsync(fd),
            Op::Datasync => rustix::fs::fdatasync(fd),
            // The plan refuses sync_file_range for engines without Caps::sync_range.
            Op::SyncRange => Err(rustix::io::Errno::INVAL),
        };
        Queued::Completed(match (r, io.op) {
            (Ok(()), Op::Sync | Op::Datasync) => 0,
            (Ok(()), _) => io.len as i64,
            (Err(e), _) => -(e.raw_os_error() as i64),
        })
    }
}
