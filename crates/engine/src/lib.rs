//! flexio's I/O engines (fio's `ioengine_ops`) and the buffer and system-call code they need.
//! This crate holds all of flexio's `unsafe` code; every block carries a SAFETY comment.
//!
//! # The engine contract
//!
//! The core prepares an [`IoReq`] and calls [`Engine::queue`]:
//!
//! * [`Queued::Completed`]`(res)`: done synchronously; `res` is bytes moved or `-errno`.
//! * [`Queued::Queued`]: accepted; it completes later through [`Engine::reap`] after the
//!   core calls [`Engine::commit`] (engines may submit in `queue` already).
//! * [`Queued::Busy`]: no room now; the core commits, reaps, and retries the request.
//!
//! The request's buffer stays valid and unmoved until the request completes. Engines are
//! chosen once per job through [`with_engine`], which hands a concrete type to a generic
//! visitor, so the hot loop is monomorphised per engine (no dynamic dispatch per I/O).

pub mod buffer;
pub mod falloc;
pub mod fileops;
pub mod ftruncate;
pub mod libaio;
pub mod mmap;
pub mod null;
pub mod posixaio;
pub mod sync;
pub mod sys;
pub mod uring;

use std::io;
use std::os::fd::RawFd;
use std::path::Path;

/// What an I/O request asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Read = 0,
    Write = 1,
    Trim = 2,
    /// fsync(2)
    Sync = 3,
    /// fdatasync(2)
    Datasync = 4,
}

impl Op {
    pub fn from_ddir(d: usize) -> Op {
        match d {
            0 => Op::Read,
            1 => Op::Write,
            _ => Op::Trim,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::Trim => "trim",
            Op::Sync | Op::Datasync => "sync",
        }
    }
}

/// One I/O request.
#[derive(Clone, Copy, Debug)]
pub struct IoReq {
    /// Slot in the core's request pool; returned in [`Completion::idx`].
    pub idx: u32,
    pub op: Op,
    /// Index of the file in the job's file table.
    pub file: u32,
    /// Open descriptor of that file (-1 for engines that use no descriptors).
    pub fd: RawFd,
    pub offset: u64,
    /// Data buffer, `len` bytes, valid and unmoved until the request completes.
    pub buf: *mut u8,
    pub len: usize,
    /// I/O priority for this request (ioprio value: class << 13 | level; 0 = none).
    pub ioprio: u16,
}

// SAFETY: an IoReq is plain data; the buffer it points to is owned by the job thread that
// also owns the engine, and is only touched by that thread (or by the kernel on its behalf).
unsafe impl Send for IoReq {}

/// Result of [`Engine::queue`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Queued {
    /// Bytes transferred (>= 0) or `-errno`.
    Completed(i64),
    Queued,
    Busy,
}

/// A completed asynchronous request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub idx: u32,
    /// Bytes transferred or `-errno`.
    pub res: i64,
}

/// Engine capabilities (fio's engine flags).
#[derive(Clone, Copy, Debug, Default)]
pub struct Caps {
    /// Every request completes inside `queue` (fio's FIO_SYNCIO).
    pub syncio: bool,
    /// No disk behind it: no file layout, no disk statistics (FIO_DISKLESSIO).
    pub diskless: bool,
    /// Cannot extend files: they are laid out in full first (FIO_NOEXTEND).
    pub no_extend: bool,
    /// Each file open is the measured operation (filecreate/filestat/filedelete); the engine
    /// records nothing else (FIO_NOSTATS | FIO_FAKEIO).
    pub file_op: bool,
    /// The engine has a commit step (submit/complete distributions are its business).
    pub has_commit: bool,
    /// Trim requests are supported.
    pub trim: bool,
    /// The core opens no descriptors for this engine.
    pub no_fd: bool,
    /// Submission is not a measurable step (io_uring with a kernel polling thread):
    /// no slat is recorded.
    pub no_slat: bool,
}

/// What an engine is told about a file when the core opens it.
pub struct FileInfo<'a> {
    pub path: &'a Path,
    pub fd: RawFd,
    /// Bytes of the file the job may touch (from 0).
    pub size: u64,
    pub writable: bool,
    /// The access pattern is random (for madvise).
    pub random: bool,
}

/// Engine options from the job (engine-private and generic ones engines care about).
#[derive(Clone, Debug, Default)]
pub struct EngineConfig {
    pub iodepth: u32,
    /// Number of files of the job (for registered-file tables).
    pub nfiles: u32,
    /// io_uring: register the I/O buffers and use READ_FIXED/WRITE_FIXED.
    pub fixedbufs: bool,
    /// io_uring: register the files and address them by index.
    pub registerfiles: bool,
    /// io_uring: kernel submission-queue polling thread.
    pub sqthread_poll: bool,
    /// io_uring: CPU of the polling thread.
    pub sqthread_poll_cpu: Option<u32>,
    /// io_uring: -1 auto, 0 vectored (READV/WRITEV), 1 non-vectored (READ/WRITE).
    pub nonvectored: i32,
    /// io_uring: set IOSQE_ASYNC on every N-th request (0 = never).
    pub force_async: u32,
    /// libaio: reap completions from the user-space ring without a system call.
    pub userspace_reap: bool,
    /// null: sleep this long (ns) once, in the given I/O (a test aid for schedule stalls).
    pub null_stall: Option<(u64, u64)>,
    pub hipri: bool,
    pub hipri_percentage: u32,
    pub nowait: bool,
    pub uncached: bool,
    pub stat_type: StatKind,
    /// `fadvise_hint` allows madvise for mmap.
    pub advise: bool,
    /// Seed for per-I/O random decisions (hipri_percentage).
    pub seed: u32,
}

/// Which stat call filestat measures.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum StatKind {
    #[default]
    Stat,
    Lstat,
    Statx,
}

/// The engine interface.
pub trait Engine {
    fn name(&self) -> &'static str;
    fn caps(&self) -> Caps;
    /// Per-job setup in the job thread. Errors are reported as "init failed".
    fn init(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Called once the I/O buffers exist (fio's post_init): engines that register memory
    /// with the kernel do it here.
    fn post_init(&mut self, _bufs: &buffer::IoBuffers) -> io::Result<()> {
        Ok(())
    }
    /// Called after the core opened a file.
    fn open_file(&mut self, _file: u32, _f: &FileInfo) -> io::Result<()> {
        Ok(())
    }
    /// Called before the core closes a file.
    fn close_file(&mut self, _file: u32) -> io::Result<()> {
        Ok(())
    }
    /// For `file_op` engines: the measured operation on one file.
    fn file_op(&mut self, _path: &Path) -> io::Result<()> {
        Err(io::Error::from_raw_os_error(libc::EINVAL))
    }
    fn queue(&mut self, io: &IoReq) -> Queued;
    /// Submit what `queue` accepted. Returns the number of requests submitted.
    fn commit(&mut self) -> io::Result<usize> {
        Ok(0)
    }
    /// Collect at least `min` (at most `max`) completions into `out` (which has room for the
    /// queue depth; pushing never allocates). Returns the number added.
    fn reap(&mut self, _min: usize, _max: usize, _out: &mut Vec<Completion>) -> io::Result<usize> {
        Ok(0)
    }
}

/// Receives the concrete engine chosen by [`with_engine`].
pub trait EngineVisitor {
    type Out;
    fn visit<E: Engine>(self, engine: E) -> Self::Out;
}

/// An engine flexio provides.
pub struct EngineInfo {
    pub name: &'static str,
    pub help: &'static str,
}

/// Engines flexio implements, in `--enghelp` order.
pub static ENGINES: &[EngineInfo] = &[
    EngineInfo {
        name: "sync",
        help: "Basic read(2) or write(2) I/O, lseek(2) to position",
    },
    EngineInfo {
        name: "psync",
        help: "Basic pread(2) or pwrite(2) I/O (default)",
    },
    EngineInfo {
        name: "vsync",
        help: "Basic readv(2) or writev(2) I/O, contiguous requests coalesced",
    },
    EngineInfo {
        name: "pvsync",
        help: "Basic preadv(2) or pwritev(2) I/O",
    },
    EngineInfo {
        name: "pvsync2",
        help: "Basic preadv2(2) or pwritev2(2) I/O with RWF flags",
    },
    EngineInfo {
        name: "mmap",
        help: "File is memory mapped and data copied to/from it",
    },
    EngineInfo {
        name: "null",
        help: "Doesn't transfer any data, just pretends to (tool overhead)",
    },
    EngineInfo {
        name: "ftruncate",
        help: "Truncate the file to the offset of each write",
    },
    EngineInfo {
        name: "filecreate",
        help: "Create files; the open(2) is the measured operation",
    },
    EngineInfo {
        name: "filestat",
        help: "Stat files; the stat call is the measured operation",
    },
    EngineInfo {
        name: "filedelete",
        help: "Delete files; the unlink(2) is the measured operation",
    },
    EngineInfo {
        name: "falloc",
        help: "fallocate(2): read = keep size, write = allocate, trim = punch hole",
    },
    EngineInfo {
        name: "io_uring",
        help: "Linux io_uring submission/completion rings",
    },
    EngineInfo {
        name: "libaio",
        help: "Linux native asynchronous I/O (io_submit/io_getevents)",
    },
    EngineInfo {
        name: "posixaio",
        help: "POSIX asynchronous I/O (aio_read/aio_write)",
    },
];

/// fio engines flexio does not implement (they get a clear error, not "unknown").
pub static FIO_ONLY_ENGINES: &[&str] = &[
    "io_uring_cmd",
    "cpuio",
    "net",
    "netsplice",
    "exec",
    "e4defrag",
    "splice",
    "gfapi",
    "gfapi_async",
    "mtd",
    "sg",
    "nbd",
    "rdma",
    "rados",
    "rbd",
    "pmemblk",
    "dev-dax",
    "libpmem",
    "http",
    "nfs",
    "xnvme",
    "libcufile",
    "dfs",
    "windowsaio",
    "solarisaio",
    "libhdfs",
    "ime_psync",
    "ime_psyncv",
    "ime_aio",
];

/// Whether flexio can run `name`.
pub fn check_engine(name: &str) -> Result<(), String> {
    if ENGINES.iter().any(|e| e.name == name) {
        return Ok(());
    }
    if name.starts_with("external:") || FIO_ONLY_ENGINES.contains(&name) {
        return Err(format!("ioengine '{name}' is not supported by flexio"));
    }
    Err(format!("unknown ioengine '{name}'"))
}

/// Build the named engine and hand it to `v`.
pub fn with_engine<V: EngineVisitor>(
    name: &str,
    cfg: &EngineConfig,
    v: V,
) -> Result<V::Out, String> {
    check_engine(name)?;
    Ok(match name {
        "sync" => v.visit(sync::SyncRw::new()),
        "psync" => v.visit(sync::Psync),
        "vsync" => v.visit(sync::Vsync::new(cfg.iodepth as usize)),
        "pvsync" => v.visit(sync::Pvsync),
        "pvsync2" => v.visit(sync::Pvsync2::new(cfg)),
        "mmap" => v.visit(mmap::Mmap::new(cfg)),
        "null" => v.visit(null::Null::new(cfg.iodepth as usize).with_stall(cfg.null_stall)),
        "ftruncate" => v.visit(ftruncate::Ftruncate),
        "filecreate" => v.visit(fileops::FileOp::new(fileops::Kind::Create, cfg.stat_type)),
        "filestat" => v.visit(fileops::FileOp::new(fileops::Kind::Stat, cfg.stat_type)),
        "filedelete" => v.visit(fileops::FileOp::new(fileops::Kind::Delete, cfg.stat_type)),
        "falloc" => v.visit(falloc::Falloc),
        "io_uring" => v.visit(uring::Uring::new(cfg)),
        "libaio" => v.visit(libaio::Libaio::new(cfg)),
        "posixaio" => v.visit(posixaio::Posixaio::new(cfg)),
        _ => return Err(format!("unknown ioengine '{name}'")),
    })
}

/// Capabilities of an engine by name, without building it.
pub fn caps_of(name: &str, iodepth: u32) -> Option<Caps> {
    struct C;
    impl EngineVisitor for C {
        type Out = Caps;
        fn visit<E: Engine>(self, e: E) -> Caps {
            e.caps()
        }
    }
    with_engine(
        name,
        &EngineConfig {
            iodepth,
            ..Default::default()
        },
        C,
    )
    .ok()
}

pub(crate) fn from_rustix(r: rustix::io::Result<usize>) -> i64 {
    match r {
        Ok(n) => n as i64,
        Err(e) => -(e.raw_os_error() as i64),
    }
}

/// Check, before any job runs, that the kernel provides what an engine needs (io_uring with
/// the job's ring flags, native AIO). The error is one line saying what is missing.
pub fn probe(name: &str, cfg: &EngineConfig) -> Result<(), String> {
    match name {
        "io_uring" => {
            let mut u = uring::Uring::new(&EngineConfig {
                iodepth: 1,
                nfiles: 0,
                registerfiles: false,
                ..cfg.clone()
            });
            u.init()
                .map_err(|e| format!("ioengine io_uring is not available on this system: {e}"))
        }
        "libaio" => {
            let mut a = libaio::Libaio::new(&EngineConfig {
                iodepth: 1,
                ..cfg.clone()
            });
            a.init()
                .map_err(|e| format!("ioengine libaio is not available on this system: {e}"))
        }
        _ => Ok(()),
    }
}
