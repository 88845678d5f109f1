//! File-operation engines: the measured operation is a file's creation (filecreate), stat
//! (filestat) or deletion (filedelete). Data requests complete at once without I/O.

use crate::{Caps, Engine, IoReq, Queued, StatKind};
use rustix::fs::{AtFlags, Mode, OFlags, StatxFlags, CWD};
use std::io;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Create,
    Stat,
    Delete,
}

pub struct FileOp {
    kind: Kind,
    stat: StatKind,
}

impl FileOp {
    pub fn new(kind: Kind, stat: StatKind) -> Self {
        FileOp { kind, stat }
    }
}

fn io_err(e: rustix::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

impl Engine for FileOp {
    fn name(&self) -> &'static str {
        match self.kind {
            Kind::Create => "filecreate",
            Kind::Stat => "filestat",
            Kind::Delete => "filedelete",
        }
    }
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            diskless: self.kind == Kind::Create,
            file_op: true,
            no_fd: true,
            ..Caps::default()
        }
    }
    fn file_op(&mut self, path: &Path) -> io::Result<()> {
        match self.kind {
            Kind::Create => {
                let fd = rustix::fs::open(
                    path,
                    OFlags::CREATE | OFlags::RDWR | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o600),
                )
                .map_err(io_err)?;
                drop(fd);
                Ok(())
            }
            Kind::Stat => match self.stat {
                StatKind::Stat => rustix::fs::stat(path).map(|_| ()).map_err(io_err),
                StatKind::Lstat => rustix::fs::lstat(path).map(|_| ()).map_err(io_err),
                StatKind::Statx => {
                    rustix::fs::statx(CWD, path, AtFlags::empty(), StatxFlags::BASIC_STATS)
                        .map(|_| ())
                        .map_err(io_err)
                }
            },
            Kind::Delete => rustix::fs::unlink(path).map_err(io_err),
        }
    }
    #[inline]
    fn queue(&mut self, io: &IoReq) -> Queued {
        Queued::Completed(io.len as i64)
    }
}
