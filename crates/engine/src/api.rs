//! The engine contract (fio's `ioengine_ops`): requests, completions, capabilities and the
//! [`Engine`] trait every engine implements. Engines import this module; the registry
//! (`registry.rs`) imports the engines; neither imports the crate root.

use std::io;
use std::os::fd::RawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize};

/// Job threads of the running stonewall segment that do I/O (engines other than cpuio and
/// exec) and have not finished (fio's "running or pending I/O threads", which cpuio's
/// exit_on_io_done waits for). The core sets it before a segment starts and counts down.
pub static IO_JOBS_PENDING: AtomicUsize = AtomicUsize::new(0);

/// Set while the running stonewall segment is being stopped (signal, exitall, an error
/// with exitall_on_error): engines that wait on a peer (net) look at it between waits.
pub static STOP_WAITS: AtomicBool = AtomicBool::new(false);

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
    /// sync_file_range(2) of `offset`, `len` with [`IoReq::sync_flags`].
    SyncRange = 5,
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
            Op::Sync | Op::Datasync | Op::SyncRange => "sync",
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
    /// Data buffer, `len` bytes, valid and unmoved until the request completes. A trim
    /// moves no data: its buffer may be shorter than `len` (buffers are sized by reads and
    /// writes), so engines never touch `buf` for `Op::Trim`.
    pub buf: *mut u8,
    pub len: usize,
    /// I/O priority for this request (ioprio value: class << 13 | level; 0 = none).
    pub ioprio: u16,
    /// [`Op::SyncRange`]: the SYNC_FILE_RANGE_* flags (0 for other requests).
    pub sync_flags: u32,
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
    /// The engine has nothing more to do: the job ends here, without error (cpuio with
    /// exit_on_io_done once the I/O jobs are done; exec once its program exited).
    Finished,
    /// The engine finished this loop's work (mdtree's tree life cycle): the loop ends here,
    /// without error, and the next loop (`loops`) starts the engine's work again.
    LoopDone,
}

/// A completed asynchronous request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Completion {
    pub idx: u32,
    /// Bytes transferred or `-errno`.
    pub res: i64,
}

/// Engine capabilities (fio's engine flags).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
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
    /// Every request completes inside `queue` even though the engine has a commit step
    /// (null at depth 1): the core's plain synchronous loop may serve it, leaving the
    /// submit/complete distributions alone as [`Caps::has_commit`] asks.
    pub queue_completes: bool,
    /// Trim requests are supported.
    pub trim: bool,
    /// The core opens no descriptors for this engine.
    pub no_fd: bool,
    /// Submission is not a measurable step (io_uring with a kernel polling thread):
    /// no slat is recorded.
    pub no_slat: bool,
    /// The job's targets are directories (dircreate, dirstat, dirdelete).
    pub dirs: bool,
    /// The measured operation creates the target: it needs no size and must not exist
    /// (filecreate, dircreate).
    pub creates: bool,
    /// The operation adds or removes names in the file system (refused with --readonly).
    pub changes_names: bool,
    /// The engine transfers no data (fio's FIO_NOIO: cpuio, exec): the job needs no size
    /// (one pseudo-file without end; the job runs until its runtime or until the engine
    /// finishes), counts requests and their latency but no bytes, and prints no job header.
    pub noio: bool,
    /// The target is a stream, not a file (fio's FIO_PIPEIO: net, netsplice): one
    /// pseudo-file named by `filename` (or the engine), nothing on disk is looked at, the job's
    /// size is what it transfers.
    pub pipe: bool,
    /// Bandwidth is shown in bits unless unit_base says otherwise (fio's FIO_BIT_BASED: net).
    pub bit_based: bool,
    /// The engine paces itself: a pause of this many µs after every request (fio's engines
    /// set the job's thinktime: cpuio's idle share, exec's polling period). 0 = none.
    pub think_us: u64,
    /// The engine's requests are of several kinds, each reported with its own statistics
    /// (mdtree's operations; cmdtime's command): their names, in report order. After each
    /// completed request the core asks [`Engine::last_kind`]. Empty: one kind, no breakdown.
    pub op_kinds: &'static [&'static str],
    /// The engine has work between requests that is not part of their measured time: the
    /// core calls [`Engine::untimed`] before each request's start stamp.
    pub untimed: bool,
    /// sync_file_range(2) requests ([`Op::SyncRange`]) are supported.
    pub sync_range: bool,
    /// The engine only writes (ftruncate): a job that reads is refused while planning.
    pub write_only: bool,
    /// The engine does no work of its own (null): a job on it measures flexio itself, so
    /// the core's "time spent in flexio itself" warning does not apply.
    pub measures_tool: bool,
    /// `io_submit_mode=offload` works: a request can be queued, to completion, by another
    /// instance of the engine built from the same configuration in another thread (its
    /// `queue` needs nothing but the request: descriptor, buffer, offset).
    pub offload: bool,
    /// The engine needs read-write descriptors on character devices even for reads (fio's
    /// RO_NEEDS_RW_OPEN: sg sends its commands by writing to the device).
    pub rw_open: bool,
    /// Writes can be atomic (RWF_ATOMIC, [`EngineConfig::atomic`]; fio's ATOMICWRITES:
    /// pvsync2, libaio, io_uring).
    pub atomic_writes: bool,
    /// A diskless engine that takes sync requests all the same (fsync=N, fdatasync=N,
    /// sync_file_range: page_fault and null complete them at no cost, and they are counted,
    /// as fio counts them). Other diskless engines get none.
    pub diskless_syncs: bool,
    /// The engine's requests are carried out by threads the whole process shares (glibc's
    /// POSIX AIO helper threads, started by whichever job asked first and kept for the
    /// next): the job thread keeps the process's descriptor table rather than a private
    /// one ([`crate::platform::private_fd_table`]), so the helpers find its descriptors.
    pub shared_fd_table: bool,
    /// The engine pretends to move data (fio's FIO_FAKEIO: null, ftruncate and the file and
    /// directory operations): a verifying job's reads are taken as verified, unlooked at.
    pub fake_io: bool,
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

/// What an engine is built from: the job's generic facts engines need, and the
/// engine-private options the job set (each engine turns them into its own option struct,
/// declared in its file with `flexio_job::engine_options!`).
#[derive(Clone, Debug, Default)]
pub struct EngineConfig {
    pub iodepth: u32,
    /// Number of files of the job (for registered-file tables).
    pub nfiles: u32,
    /// `fadvise_hint` allows madvise for mmap.
    pub advise: bool,
    /// Seed for per-I/O random decisions (hipri_percentage).
    pub seed: u32,
    /// The engine-private options the job set.
    pub values: flexio_job::EngineValues,
    /// The job's name (exec's `%n`, file names of its output).
    pub job_name: String,
    /// The job's runtime in µs (0 = none; exec's `%r`).
    pub runtime_us: u64,
    /// The job's direction set reads / writes (the net engines: reader or sender).
    pub reads: bool,
    pub writes: bool,
    /// The job's offsets are random.
    pub random: bool,
    /// The job's `filename` option as given (the net engines: host or socket path).
    pub filename: Option<String>,
    /// Which clone of its job definition this thread is (0-based; numjobs).
    pub subjob: u32,
    /// The job's `directory` option (e4defrag's donor file goes there).
    pub directory: Option<String>,
    /// The job's `number_ios` (0 = none; cmdtime's count of runs).
    pub number_ios: u64,
    /// `atomic` (fio 3.38+): writes carry RWF_ATOMIC (engines with
    /// [`Caps::atomic_writes`]).
    pub atomic: bool,
    /// fio before 3.41 (`--compat=3.33`): libaio does fsync and fdatasync at once, in
    /// `queue`, after the requests queued before them are submitted (answering
    /// [`Queued::Busy`] while any wait), instead of queueing them to the kernel;
    /// sync_file_range waits for them too.
    pub inline_syncs: bool,
    /// The job's `offset` in bytes (fio's start_offset; 0 for a percentage).
    pub offset: u64,
    /// Where this thread's I/O ends in its files (offset + size, the largest over its
    /// files): what a diskless engine that holds the data itself allocates (page_fault).
    /// 0 until the thread's files are planned (while options are checked).
    pub size: u64,
    /// The job's smallest block size over all directions (fio's `rw_min_bs`).
    pub min_bs: u64,
    /// The job syncs every N blocks (`fsync` or `fdatasync` set).
    pub sync_blocks: bool,
}

/// An engine's refusal at init that fio words itself: the line it prints, then fio's
/// "io engine NAME init failed." and the job fails with error 1 and no error text, as
/// fio's init functions that return 1 do.
#[derive(Debug)]
pub struct InitRefused(pub String);

impl std::fmt::Display for InitRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InitRefused {}

/// The engine interface.
pub trait Engine {
    /// The engine's capabilities. The planner asks once per job, with the job's options
    /// (see [`crate::registry::caps_of`]), and the job loop reads its answer: they may
    /// depend on the engine's own options and on `iodepth`, never on what differs between
    /// a job's threads (files, size, seeds, clone number), and the depth the "capped at 1"
    /// rule gives from them must give them again.
    fn caps(&self) -> Caps;
    /// Per-job setup in the job thread. Errors are reported as "init failed".
    fn init(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Prepare the job's targets before the first open (fio's `setup`): e.g. dirstat and
    /// dirdelete create the directories they then measure.
    fn setup(&mut self, _paths: &[&Path]) -> io::Result<()> {
        Ok(())
    }
    /// Requests per direction that the peer sent but that never arrived (UDP sequence
    /// gaps: fio's "dropped" count), read once when the job ends.
    fn lost(&self) -> [u64; 3] {
        [0; 3]
    }
    /// Lines the engine prints once its init is done (fio's engines say what they run).
    fn init_notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// Called once the I/O buffers exist (fio's post_init): engines that register memory
    /// with the kernel do it here.
    fn post_init(&mut self, _bufs: &crate::buffer::IoBuffers) -> io::Result<()> {
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
    /// With [`Caps::op_kinds`]: the kind of the request `queue` just completed (an index
    /// into `op_kinds`).
    #[inline]
    fn last_kind(&self) -> usize {
        0
    }
    /// With [`Caps::untimed`]: unmeasured work before the next request (mdtree opens the
    /// directory it is about to list; cmdtime runs the previous run's untimed command). An
    /// error ends the job with it.
    #[inline]
    fn untimed(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Called once when the job ends, however it ends (after an error too), before the core
    /// closes its files: the engine's last untimed work (mdtree removes what is left of its
    /// tree; cmdtime runs the last untimed command). An error is reported as the job's.
    fn wrap_up(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// What a request that just failed was doing, in words, when the engine knows better
    /// than "offset, length" (mdtree: `create of <path>`); asked on errors only.
    fn failed_op(&self) -> Option<String> {
        None
    }
    /// When another thread issued the request of slot `idx` just reaped (the core's
    /// io_submit_mode=offload): its issue and completion times on the core's clock (ns).
    /// `None`: the core's own stamps stand.
    #[inline]
    fn stamps(&self, _idx: u32) -> Option<(u64, u64)> {
        None
    }
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

/// What an engine declares about itself (fio's `ioengine_ops` name and options).
pub trait EngineDef: Engine + Sized + 'static {
    const NAME: &'static str;
    const ALIASES: &'static [&'static str] = &[];
    /// One line for `--enghelp`.
    const HELP: &'static str;
    /// The fio release that added the engine, if later than 3.33 (`"3.37"`, `"post-3.42"`):
    /// under `--compat=3.33` its name is unknown, as in fio 3.33.
    const SINCE: Option<&'static str> = None;
    /// The engine's private option rows (groups, so engines can share one).
    const OPTIONS: &'static [&'static [flexio_job::table::OptDef]] = &[];
    /// Build the engine for one job thread.
    fn build(cfg: &EngineConfig) -> Self;
    /// Check, before any job runs, that this system provides what the engine needs with
    /// these options; the error is one line saying what is missing.
    fn probe(_cfg: &EngineConfig) -> Result<(), String> {
        Ok(())
    }
    /// For engines whose target is not a file (`Caps::pipe`): the target's size when the
    /// engine can tell it (an NBD export), asked while planning; `None` = the job's size.
    fn target_size(_cfg: &EngineConfig) -> Result<Option<u64>, String> {
        Ok(None)
    }
    /// The size of a character device the engine drives (an sg device's capacity by READ
    /// CAPACITY, an MTD device's by MEMGETINFO), asked while planning; `None`: the device
    /// has no size the engine knows (the job's size= gives it).
    fn device_size(_path: &Path, _cfg: &EngineConfig) -> Result<Option<u64>, String> {
        Ok(None)
    }
}

/// Receives the concrete engine chosen by `registry::with_engine`.
pub trait EngineVisitor {
    type Out;
    fn visit<E: EngineDef>(self, engine: E) -> Self::Out;
}
