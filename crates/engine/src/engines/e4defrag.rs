//! `e4defrag`: ext4 online defragmentation as the workload (fio's engine). Each write
//! request exchanges the request's blocks of the job's file with the same blocks of a
//! donor file (`EXT4_IOC_MOVE_EXT`), which moves the data to the donor's extents: the
//! data stays, the layout changes. Reads are refused (EINVAL), as in fio.
//!
//! The donor is `donorname` (in the job's `directory`, if set), created if missing. By
//! default its space is allocated once for the whole file; with `inplace=1` each request
//! allocates the donor's range first and the donor is truncated afterwards.

use crate::api::{Caps, Engine, EngineConfig, EngineDef, FileInfo, IoReq, Op, Queued};
use crate::sys::{ext4_move_ext, MoveExtent};
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{FallocateFlags, Mode, OFlags};
use std::io;
use std::path::PathBuf;

flexio_job::engine_options! {
    /// e4defrag's options.
    pub struct E4Opts; rows OPTIONS;
    /// The donor file's name.
    donorname: Option<String> = None,
        "donorname", Kind::Str, "", "File used as a block donor",
        |v, kb| parse::string(v, kb).map(Some);
    /// Allocate and free the donor's space per request.
    inplace: bool = false,
        "inplace", Kind::Int { min: 0, max: 1 }, "",
        "Alloc and free space inside defrag event",
        |v, kb| parse::int(v, kb, 0, 1).map(|n| n == 1);
}

pub struct E4Defrag {
    opts: E4Opts,
    donor_path: PathBuf,
    donor: Option<OwnedFd>,
    /// The file system's block size.
    bsz: u64,
}

fn rx(e: rustix::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

impl EngineDef for E4Defrag {
    const NAME: &'static str = "e4defrag";
    const HELP: &'static str = "ext4 online defragmentation (EXT4_IOC_MOVE_EXT) of the job's files";
    const OPTIONS: &'static [&'static [OptDef]] = &[OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        let opts = E4Opts::from_values(&cfg.values);
        let name = opts.donorname.clone().unwrap_or_default();
        let donor_path = match &cfg.directory {
            Some(d) => PathBuf::from(d).join(&name),
            None => PathBuf::from(&name),
        };
        E4Defrag {
            opts,
            donor_path,
            donor: None,
            bsz: 4096,
        }
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        match E4Opts::from_values(&cfg.values).donorname {
            Some(n) if !n.is_empty() => Ok(()),
            _ => Err("'donorname' options required".into()),
        }
    }
}

impl Engine for E4Defrag {
    fn caps(&self) -> Caps {
        Caps {
            syncio: true,
            ..Caps::default()
        }
    }
    fn init(&mut self) -> io::Result<()> {
        let fd = rustix::fs::open(
            &self.donor_path,
            OFlags::CREATE | OFlags::WRONLY | OFlags::CLOEXEC,
            Mode::from_raw_mode(0o644),
        )
        .map_err(|e| {
            io::Error::new(
                rx(e).kind(),
                format!("Can't open donor file {}: {}", self.donor_path.display(), rx(e)),
            )
        })?;
        self.bsz = rustix::fs::fstat(&fd).map_err(rx)?.st_blksize.max(512) as u64;
        self.donor = Some(fd);
        Ok(())
    }
    fn open_file(&mut self, _file: u32, f: &FileInfo) -> io::Result<()> {
        if self.opts.inplace || f.size == 0 {
            return Ok(());
        }
        if let Some(d) = &self.donor {
            rustix::fs::fallocate(d, FallocateFlags::empty(), 0, f.size).map_err(rx)?;
        }
        Ok(())
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        if io.op != Op::Write {
            // Defragmenting keeps the data but changes the layout: writes only.
            return Queued::Completed(-(libc::EINVAL as i64));
        }
        let Some(donor) = self.donor.as_ref() else {
            return Queued::Completed(-(libc::EBADF as i64));
        };
        let len = io.len as u64;
        if self.opts.inplace {
            if let Err(e) = rustix::fs::fallocate(donor, FallocateFlags::empty(), io.offset, len) {
                return Queued::Completed(-(e.raw_os_error() as i64));
            }
        }
        let start = io.offset / self.bsz;
        let mut me = MoveExtent {
            donor_fd: rustix::fd::AsRawFd::as_raw_fd(&donor.as_fd()) as u32,
            orig_start: start,
            donor_start: start,
            len: (io.offset + len).div_ceil(self.bsz) - start,
            ..MoveExtent::default()
        };
        // SAFETY: the core keeps the file open while a request on it is outstanding, and
        // the request's descriptor is that file's.
        let fd = unsafe { BorrowedFd::borrow_raw(io.fd) };
        let r = ext4_move_ext(fd, &mut me);
        let moved = (me.moved_len * self.bsz).min(len);
        if self.opts.inplace {
            let _ = rustix::fs::ftruncate(donor, 0);
        }
        Queued::Completed(match r {
            Err(e) => -(e.raw_os_error().unwrap_or(libc::EIO) as i64),
            // Nothing moved: beyond the file's end.
            Ok(()) if moved == 0 => -(libc::EINVAL as i64),
            Ok(()) => moved as i64,
        })
    }
}
