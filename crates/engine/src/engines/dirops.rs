//! Directory-operation engines (fio 3.37's `dircreate`, `dirstat`, `dirdelete`): each of the
//! job's "files" is a directory path, and the measured operation is its `mkdir`, `stat` or
//! `rmdir`. Like the file-operation engines, data requests complete at once without I/O,
//! and each directory counts as one operation of the job's block size.
//!
//! dircreate makes directories with mode 0700: fio 3.37+ passes `S_IFDIR` as the mode,
//! which leaves the permission bits at 0 (`d---------`), a directory nobody but root can
//! use; flexio keeps them usable. dirstat and dirdelete create their directories in
//! `setup` (mode 0700, existing ones are fine), as fio's engines do.

use crate::api::{EngineDef, Caps, Engine, EngineConfig, IoReq, Queued};
use crate::fileops::{FileStatOpts, StatKind};
use flexio_job::table::OptDef;
use crate::os::fs::Mode;
use std::io;
use std::path::Path;

const CREATE: u8 = 0;
const STAT: u8 = 1;
const DELETE: u8 = 2;

/// A directory-operation engine; `K` says which operation.
pub struct DirOp<const K: u8> {
    stat: StatKind,
}

/// `dircreate`: mkdir(2) is the measured operation.
pub type DirCreate = DirOp<CREATE>;
/// `dirstat`: the stat call is the measured operation.
pub type DirStat = DirOp<STAT>;
/// `dirdelete`: rmdir(2) is the measured operation.
pub type DirDelete = DirOp<DELETE>;

impl EngineDef for DirCreate {
    const NAME: &'static str = "dircreate";
    const SINCE: Option<&'static str> = Some("3.37");
    const HELP: &'static str = "Create directories; the mkdir(2) is the measured operation";
    fn build(_: &EngineConfig) -> Self {
        DirOp {
            stat: StatKind::Stat,
        }
    }
}

impl EngineDef for DirStat {
    const NAME: &'static str = "dirstat";
    const SINCE: Option<&'static str> = Some("3.37");
    const HELP: &'static str = "Stat directories; the stat call is the measured operation";
    const OPTIONS: &'static [&'static [OptDef]] = &[crate::fileops::OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        DirOp {
            stat: FileStatOpts::from_values(&cfg.values).stat_type,
        }
    }
}

impl EngineDef for DirDelete {
    const NAME: &'static str = "dirdelete";
    const SINCE: Option<&'static str> = Some("3.37");
    const HELP: &'static str = "Delete directories; the rmdir(2) is the measured operation";
    fn build(_: &EngineConfig) -> Self {
        DirOp {
            stat: StatKind::Stat,
        }
    }
}

fn io_err(e: crate::os::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

fn mkdir(path: &Path) -> io::Result<()> {
    crate::os::fs::mkdir(path, Mode::from_raw_mode(0o700)).map_err(io_err)
}

impl<const K: u8> Engine for DirOp<K> {
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            diskless: true,
            file_op: true,
            fake_io: true,
            no_fd: true,
            dirs: true,
            creates: K == CREATE,
            changes_names: K != STAT,
            ..Caps::default()
        }
    }
    fn setup(&mut self, paths: &[&Path]) -> io::Result<()> {
        if K == CREATE {
            return Ok(());
        }
        for p in paths {
            match mkdir(p) {
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                r => r?,
            }
        }
        Ok(())
    }
    #[inline]
    fn file_op(&mut self, path: &Path) -> io::Result<()> {
        match K {
            CREATE => mkdir(path),
            STAT => match self.stat {
                StatKind::Stat => crate::os::fs::stat(path).map(|_| ()).map_err(io_err),
                StatKind::Lstat => crate::os::fs::lstat(path).map(|_| ()).map_err(io_err),
                StatKind::Statx => crate::platform::statx_basic(path),
            },
            _ => crate::os::fs::rmdir(path).map_err(io_err),
        }
    }
    #[inline]
    fn queue(&mut self, io: &IoReq) -> Queued {
        Queued::Completed(io.len as i64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn create_stat_delete() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x");
        let mut c = DirCreate::build(&EngineConfig::default());
        c.file_op(&p).unwrap();
        assert!(p.is_dir());
        let e = c.file_op(&p).unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EEXIST));
        let mut s = DirStat::build(&EngineConfig::default());
        let q = d.path().join("y");
        s.setup(&[&p, &q]).unwrap();
        assert!(q.is_dir(), "setup creates what is missing");
        s.file_op(&q).unwrap();
        let mut r = DirDelete::build(&EngineConfig::default());
        r.file_op(&p).unwrap();
        assert!(!p.exists());
        assert!(r.caps().changes_names && !s.caps().changes_names && c.caps().creates);
    }
}
