//! File-operation engines: the measured operation is a file's creation (filecreate), stat
//! (filestat) or deletion (filedelete). Data requests complete at once without I/O.

use crate::api::{EngineDef, Caps, Engine, EngineConfig, IoReq, Queued};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use crate::os::fs::{Mode, OFlags};
use std::io;
use std::path::Path;

/// Which stat call filestat measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatKind {
    #[default]
    Stat,
    Lstat,
    Statx,
}

flexio_job::engine_options! {
    /// filestat's options.
    pub struct FileStatOpts; rows OPTIONS;
    /// The system call measured.
    stat_type: StatKind = StatKind::Stat,
        "stat_type",
        Kind::Choice(&[
            ("stat", "Use stat(2)"),
            ("lstat", "Use lstat(2)"),
            ("statx", "Use statx(2) if exists"),
        ]),
        "stat",
        "Specify stat system call type to measure lookup/getattr performance",
        |v, _| parse::choice(
            v,
            &[("stat", StatKind::Stat), ("lstat", StatKind::Lstat), ("statx", StatKind::Statx)],
        );
}

const CREATE: u8 = 0;
const STAT: u8 = 1;
const DELETE: u8 = 2;

/// A file-operation engine; `K` says which operation.
pub struct FileOp<const K: u8> {
    stat: StatKind,
}

/// `filecreate`: the open(O_CREAT) is the measured operation.
pub type FileCreate = FileOp<CREATE>;
/// `filestat`: the stat call is the measured operation.
pub type FileStat = FileOp<STAT>;
/// `filedelete`: the unlink(2) is the measured operation.
pub type FileDelete = FileOp<DELETE>;

impl EngineDef for FileCreate {
    const NAME: &'static str = "filecreate";
    const HELP: &'static str = "Create files; the open(2) is the measured operation";
    fn build(_: &EngineConfig) -> Self {
        FileOp {
            stat: StatKind::Stat,
        }
    }
}

impl EngineDef for FileStat {
    const NAME: &'static str = "filestat";
    const HELP: &'static str = "Stat files; the stat call is the measured operation";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        FileOp {
            stat: FileStatOpts::from_values(&cfg.values).stat_type,
        }
    }
}

impl EngineDef for FileDelete {
    const NAME: &'static str = "filedelete";
    const HELP: &'static str = "Delete files; the unlink(2) is the measured operation";
    fn build(_: &EngineConfig) -> Self {
        FileOp {
            stat: StatKind::Stat,
        }
    }
}

fn io_err(e: crate::os::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

impl<const K: u8> Engine for FileOp<K> {
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            diskless: K == CREATE,
            file_op: true,
            fake_io: true,
            creates: K == CREATE,
            changes_names: K != STAT,
            no_fd: true,
            ..Caps::default()
        }
    }
    #[inline]
    fn file_op(&mut self, path: &Path) -> io::Result<()> {
        match K {
            CREATE => {
                let fd = crate::os::fs::open(
                    path,
                    OFlags::CREATE | OFlags::RDWR | OFlags::CLOEXEC,
                    Mode::from_raw_mode(0o600),
                )
                .map_err(io_err)?;
                drop(fd);
                Ok(())
            }
            STAT => match self.stat {
                StatKind::Stat => crate::os::fs::stat(path).map(|_| ()).map_err(io_err),
                StatKind::Lstat => crate::os::fs::lstat(path).map(|_| ()).map_err(io_err),
                StatKind::Statx => crate::platform::statx_basic(path),
            },
            _ => crate::os::fs::unlink(path).map_err(io_err),
        }
    }
    #[inline]
    fn queue(&mut self, io: &IoReq) -> Queued {
        Queued::Completed(io.len as i64)
    }
}
