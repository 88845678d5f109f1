//! `io_uring`: submission and completion rings shared with the kernel.
//!
//! Requests are prepared into the submission queue by `queue` and handed to the kernel by
//! one `io_uring_enter` in `commit` (nothing is submitted from `queue`, so the core's
//! batching options apply). `reap` waits for at least `min` completions and drains at most
//! `max`. Options: `hipri` (IORING_SETUP_IOPOLL), `fixedbufs` (registered buffers,
//! READ_FIXED/WRITE_FIXED), `registerfiles` (registered descriptors), `sqthread_poll`
//! (+`sqthread_poll_cpu`: kernel submission thread), `nonvectored`, `force_async`
//! (IOSQE_ASYNC every N requests), `nowait` (RWF_NOWAIT), and per-request priorities.

use crate::api::{EngineDef, Caps, Completion, Engine, EngineConfig, FileInfo, IoReq, Op, Queued};
use crate::buffer::IoBuffers;
use flexio_job::engine_opts::parse;
use flexio_job::table::{Kind, OptDef};
use io_uring::{cqueue, opcode, squeue, types, IoUring};
use std::io;
use std::os::fd::RawFd;

const RWF_NOWAIT: i32 = 0x8;
/// `RWF_UNCACHED` (RWF_DONTCACHE since Linux 6.14).
const RWF_UNCACHED: i32 = 0x80;

/// `IORING_REGISTER_RING_FDS` / `IORING_UNREGISTER_RING_FDS` (Linux 5.18).
const REGISTER_RING_FDS: libc::c_uint = 20;
const UNREGISTER_RING_FDS: libc::c_uint = 21;
/// `IORING_ENTER_GETEVENTS` and `IORING_ENTER_REGISTERED_RING`.
const ENTER_GETEVENTS: libc::c_uint = 1;
const ENTER_REGISTERED_RING: libc::c_uint = 1 << 4;

/// `struct io_uring_rsrc_update`.
#[repr(C)]
struct RsrcUpdate {
    offset: u32,
    resv: u32,
    data: u64,
}

/// A ring and, where the kernel took it, its descriptor registered with the thread that
/// made it (REGISTER_RING_FDS, as t/io_uring does): that thread's enters then name the
/// ring by index and the kernel skips looking the descriptor up (`fget`/`fput`, 3 % of
/// the submitting thread at depth 1; +2.7 % IOPS there, bench/README). Only rings without
/// SQPOLL, whose one issuer is that thread, register it.
pub(crate) struct Ring<S: squeue::EntryMarker, C: cqueue::EntryMarker> {
    ring: IoUring<S, C>,
    registered: Option<u32>,
}

impl<S: squeue::EntryMarker, C: cqueue::EntryMarker> std::ops::Deref for Ring<S, C> {
    type Target = IoUring<S, C>;
    fn deref(&self) -> &IoUring<S, C> {
        &self.ring
    }
}

impl<S: squeue::EntryMarker, C: cqueue::EntryMarker> std::ops::DerefMut for Ring<S, C> {
    fn deref_mut(&mut self) -> &mut IoUring<S, C> {
        &mut self.ring
    }
}

impl<S: squeue::EntryMarker, C: cqueue::EntryMarker> Ring<S, C> {
    /// Register the ring's descriptor for this thread; `None` where the kernel refuses.
    fn register_descriptor(ring: &IoUring<S, C>) -> Option<u32> {
        use std::os::fd::AsRawFd;
        let mut up = RsrcUpdate {
            offset: u32::MAX,
            resv: 0,
            data: ring.as_raw_fd() as u64,
        };
        // SAFETY: io_uring_register on the ring's own open descriptor, with one valid
        // `io_uring_rsrc_update` that lives across the call (the kernel writes `offset`).
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_register,
                ring.as_raw_fd(),
                REGISTER_RING_FDS,
                &mut up as *mut RsrcUpdate,
                1u32,
            )
        };
        (r == 1).then_some(up.offset)
    }

    /// Submit what is queued and wait for `want` completions (0: none), as the io-uring
    /// crate's `submit_and_wait` does, through the registered descriptor when there is
    /// one. Returns the requests submitted.
    fn enter(&mut self, want: usize) -> io::Result<usize> {
        let Some(index) = self.registered else {
            return self.ring.submitter().submit_and_wait(want);
        };
        let iopoll = self.ring.params().is_setup_iopoll();
        let sq = self.ring.submission();
        let to_submit = sq.len() as libc::c_uint;
        let events = want > 0 || iopoll || sq.cq_overflow() || sq.taskrun();
        drop(sq);
        if to_submit == 0 && !events {
            return Ok(0);
        }
        let flags = ENTER_REGISTERED_RING | if events { ENTER_GETEVENTS } else { 0 };
        // SAFETY: io_uring_enter on this thread's registered ring index with no argument
        // block (size 0); the submission queue's tail was published when its view dropped.
        let r = unsafe {
            libc::syscall(
                libc::SYS_io_uring_enter,
                index,
                to_submit,
                want as libc::c_uint,
                flags,
                std::ptr::null::<libc::c_void>(),
                0usize,
            )
        };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(r as usize)
        }
    }
}

impl<S: squeue::EntryMarker, C: cqueue::EntryMarker> Drop for Ring<S, C> {
    fn drop(&mut self) {
        if let Some(index) = self.registered {
            let mut up = RsrcUpdate {
                offset: index,
                resv: 0,
                data: 0,
            };
            // SAFETY: as in `register_descriptor`, on the ring's own descriptor (still
            // open: the ring is dropped after this). A thread other than the one that
            // registered gets EINVAL and nothing changes (the kernel drops the
            // registration when that thread exits).
            use std::os::fd::AsRawFd;
            unsafe {
                libc::syscall(
                    libc::SYS_io_uring_register,
                    self.ring.as_raw_fd(),
                    UNREGISTER_RING_FDS,
                    &mut up as *mut RsrcUpdate,
                    1u32,
                );
            }
        }
    }
}

flexio_job::engine_options! {
    /// io_uring's options (fio's io_uring option table).
    pub struct UringOpts; rows OPTIONS;
    /// IORING_SETUP_IOPOLL: polled completions.
    hipri: bool = false,
        "hipri", Kind::Flag, "0", "Use polled IO completions", parse::flag;
    /// Register the I/O buffers and use READ_FIXED/WRITE_FIXED.
    fixedbufs: bool = false,
        "fixedbufs", Kind::Flag, "0", "Pre map IO buffers", parse::flag;
    /// Register the files and address them by index.
    registerfiles: bool = false,
        "registerfiles", Kind::Flag, "0", "Pre-open/register files", parse::flag;
    /// Kernel submission-queue polling thread.
    sqthread_poll: bool = false,
        "sqthread_poll", Kind::Flag, "0", "Offload submission/completion to kernel thread",
        parse::flag;
    /// CPU of the polling thread.
    sqthread_poll_cpu: Option<u32> = None,
        "sqthread_poll_cpu", Kind::Int { min: 0, max: 65535 }, "",
        "What CPU to run SQ thread polling on",
        |v, kb| parse::int(v, kb, 0, 65535).map(|n| Some(n as u32));
    /// -1 auto, 0 vectored (READV/WRITEV), 1 non-vectored (READ/WRITE).
    nonvectored: i32 = -1,
        "nonvectored", Kind::Int { min: -1, max: 1 }, "-1", "Use non-vectored read/write commands",
        |v, kb| parse::int(v, kb, -1, 1).map(|n| n as i32);
    /// IOSQE_ASYNC on every N-th request (0 = never).
    force_async: u32 = 0,
        "force_async", Kind::Int { min: 0, max: u32::MAX as i64 }, "0",
        "Set IOSQE_ASYNC every N requests",
        |v, kb| parse::int(v, kb, 0, u32::MAX as i64).map(|n| n as u32);
    /// RWF_NOWAIT on reads and writes.
    nowait: bool = false,
        "nowait", Kind::Bool, "0", "Use RWF_NOWAIT for reads/writes", parse::boolean;
    /// RWF_UNCACHED on buffered reads and writes.
    uncached: bool = false,
        "uncached", Kind::Int { min: 0, max: 1 }, "0", "Use RWF_UNCACHED for buffered read/writes",
        |v, kb| parse::int(v, kb, 0, 1).map(|n| n == 1);
    /// The passthrough command set of io_uring_cmd (fio shares this table between
    /// io_uring and io_uring_cmd; only io_uring_cmd acts on it).
    cmd_type: CmdType = CmdType::Nvme,
        "cmd_type", Kind::Choice(&[
            ("nvme", "Issue nvme-uring-cmd"),
            ("bsg", "Issue bsg-uring-cmd (SCSI passthrough; newest fio)"),
        ]), "nvme", "Specify uring-cmd type",
        |v, _| parse::choice(v, &[("nvme", CmdType::Nvme), ("bsg", CmdType::Bsg)]),
        newer [("bsg", "post-3.42")];
}

/// io_uring_cmd's command set (`cmd_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmdType {
    Nvme,
    Bsg,
}

flexio_job::engine_options! {
    /// Metadata and end-to-end protection information, one group for io_uring (fio 3.41)
    /// and io_uring_cmd (fio 3.36, which adds `apptag_mask`: `crate::uring_cmd::PI_MASK`).
    /// The rows say 3.36, the first fio that has them; fio 3.33 has them for neither.
    pub struct PiOpts; rows PI_OPTIONS;
    /// Bytes of the metadata buffer of each request.
    md_per_io_size: u64 = 0,
        "md_per_io_size", Kind::Int { min: 0, max: u32::MAX as i64 }, "0",
        "Size of separate metadata buffer per IO",
        |v, kb| parse::int(v, kb, 0, u32::MAX as i64).map(|n| n as u64), since "3.36";
    /// PRACT: the device generates (writes) and strips (reads) the protection information.
    pi_act: bool = true,
        "pi_act", Kind::Bool, "1", "Protection information action", parse::boolean,
        since "3.36";
    /// Which protection information fields the device checks.
    pi_chk: PiChecks = PiChecks::default(),
        "pi_chk", Kind::Str, "", "Protection information check fields (GUARD,REFTAG,APPTAG)",
        |v, _| PiChecks::parse(flexio_job::table::req(v)?), since "3.36";
    /// The application tag.
    apptag: u16 = 0x1234,
        "apptag", Kind::Int { min: 0, max: 0xffff }, "0x1234",
        "Application tag for protection information",
        |v, kb| parse::int(v, kb, 0, 0xffff).map(|n| n as u16), since "3.36";
}

/// `pi_chk`: which protection information fields the device checks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PiChecks {
    pub guard: bool,
    pub reftag: bool,
    pub apptag: bool,
}

impl PiChecks {
    /// fio's `GUARD,REFTAG,APPTAG` list (any subset, any order).
    pub fn parse(s: &str) -> Result<PiChecks, String> {
        let mut c = PiChecks::default();
        for f in s.split(',').map(str::trim).filter(|f| !f.is_empty()) {
            match f {
                "GUARD" => c.guard = true,
                "REFTAG" => c.reftag = true,
                "APPTAG" => c.apptag = true,
                _ => {
                    return Err(format!(
                        "'{f}' is not a protection information field (GUARD, REFTAG, APPTAG)"
                    ))
                }
            }
        }
        Ok(c)
    }

    pub fn any(&self) -> bool {
        self.guard || self.reftag || self.apptag
    }
}

/// Whether a job asks for metadata or protection information.
pub fn pi_asked(md_per_io_size: u64, chk: &PiChecks) -> bool {
    md_per_io_size > 0 || chk.any()
}

pub struct Uring {
    opts: UringOpts,
    depth: u32,
    nfiles: u32,
    ring: Option<Ring<squeue::Entry, cqueue::Entry>>,
    /// One iovec per request slot for the vectored opcodes (must live until completion).
    iovecs: Vec<libc::iovec>,
    /// Prepared but not yet submitted.
    pending: u32,
    /// In the kernel.
    inflight: u32,
    vectored: bool,
    fixed: bool,
    counter: u32,
    /// RWF_ATOMIC on writes (`atomic`).
    atomic: bool,
}

impl EngineDef for Uring {
    const NAME: &'static str = "io_uring";
    const HELP: &'static str = "Linux io_uring submission/completion rings";
    const OPTIONS: &'static [&'static [OptDef]] =
        &[OPTIONS, crate::cmdprio::OPTIONS, PI_OPTIONS];
    fn build(cfg: &EngineConfig) -> Self {
        Uring::new(cfg)
    }
    fn probe(cfg: &EngineConfig) -> Result<(), String> {
        let pi = PiOpts::from_values(&cfg.values);
        if pi_asked(pi.md_per_io_size, &pi.pi_chk) {
            crate::device::each_target(
                cfg,
                "io_uring",
                "a block device with protection information for md_per_io_size/pi_chk",
                |path| match crate::device::integrity(path) {
                    Err(why) => Err(format!(
                        "{path}: no protection information: {why}; md_per_io_size/pi_chk need a block device formatted with metadata"
                    )),
                    Ok(format) => Err(format!(
                        "{path} has protection information ({format}), but metadata and protection information with ioengine=io_uring are not supported by flexio"
                    )),
                },
            )?;
        }
        // A one-entry ring with the job's setup flags, no registered files.
        let mut u = Uring::new(&EngineConfig {
            iodepth: 1,
            nfiles: 0,
            ..cfg.clone()
        });
        u.opts.registerfiles = false;
        u.init()
            .map_err(|e| format!("ioengine io_uring is not available on this system: {e}"))
    }
}

impl Uring {
    pub fn new(cfg: &EngineConfig) -> Self {
        let depth = cfg.iodepth.max(1) as usize;
        let o = UringOpts::from_values(&cfg.values);
        Uring {
            depth: cfg.iodepth,
            nfiles: cfg.nfiles,
            ring: None,
            iovecs: vec![
                libc::iovec {
                    iov_base: std::ptr::null_mut(),
                    iov_len: 0
                };
                depth
            ],
            pending: 0,
            inflight: 0,
            vectored: o.nonvectored == 0,
            opts: o,
            fixed: false,
            counter: 0,
            atomic: cfg.atomic,
        }
    }
}

/// A clear one-line reason for a failed io_uring setup.
fn setup_error(e: io::Error, cfg: &UringOpts) -> io::Error {
    let why = match e.raw_os_error() {
        Some(libc::ENOSYS) => "this kernel has no io_uring (ENOSYS)".to_string(),
        Some(libc::EPERM) => {
            let sysctl =
                std::fs::read_to_string("/proc/sys/kernel/io_uring_disabled").unwrap_or_default();
            match sysctl.trim() {
                "2" => "io_uring is disabled by sysctl kernel.io_uring_disabled=2 (EPERM)".to_string(),
                "1" => "io_uring is restricted to the io_uring group by sysctl kernel.io_uring_disabled=1 (EPERM)".to_string(),
                _ => "io_uring setup not permitted (EPERM; seccomp or a security policy)".to_string(),
            }
        }
        Some(libc::EINVAL) if cfg.sqthread_poll || cfg.hipri => {
            "the kernel rejected the ring setup flags (EINVAL) for sqthread_poll/hipri".to_string()
        }
        Some(libc::ENOMEM) => {
            "not enough locked memory for the rings (ENOMEM; see ulimit -l)".to_string()
        }
        _ => format!("io_uring_setup failed: {e}"),
    };
    io::Error::new(e.kind(), why)
}

/// Submit the entries queued since the last call (io_uring and io_uring_cmd): moves what the
/// kernel took from `pending` to `inflight` and returns how many. With SQPOLL the kernel
/// thread takes entries on its own, so all of them count. EAGAIN/EBUSY submit nothing now.
pub(crate) fn submit_pending<S: squeue::EntryMarker, C: io_uring::cqueue::EntryMarker>(
    ring: &mut Ring<S, C>,
    pending: &mut u32,
    inflight: &mut u32,
    sqpoll: bool,
) -> io::Result<usize> {
    if *pending == 0 {
        return Ok(0);
    }
    loop {
        match ring.enter(0) {
            Ok(n) => {
                let n = if sqpoll { *pending as usize } else { n };
                *pending -= n as u32;
                *inflight += n as u32;
                return Ok(n);
            }
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => continue,
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EBUSY)) => {
                return Ok(0)
            }
            Err(e) => return Err(e),
        }
    }
}

/// A ring for `depth` requests (entries rounded up to a power of two, twice as many
/// completion entries) with the job's setup flags (`hipri`: IOPOLL; `sqthread_poll` and its
/// CPU) and, with `registerfiles`, a table of `nfiles` empty descriptor slots that
/// [`register_file`] fills as the core opens files: io_uring's and io_uring_cmd's rings.
/// `setup_err` words a failed setup.
pub(crate) fn setup_ring<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    o: &UringOpts,
    depth: u32,
    nfiles: u32,
    setup_err: fn(io::Error, &UringOpts) -> io::Error,
) -> io::Result<Ring<S, C>> {
    let entries = depth.max(1).next_power_of_two();
    let mut b = IoUring::<S, C>::builder();
    if o.hipri {
        b.setup_iopoll();
    }
    if o.sqthread_poll {
        b.setup_sqpoll(1000);
        if let Some(cpu) = o.sqthread_poll_cpu {
            b.setup_sqpoll_cpu(cpu);
        }
    }
    b.setup_cqsize(entries * 2);
    // Without SQPOLL the job thread alone submits and reaps, so completions can wait for
    // it (DEFER_TASKRUN: the kernel's worker threads hand a finished request back without
    // waking anyone or interrupting the thread; the thread finishes it when it next asks
    // for completions, and TASKRUN_FLAG tells it when one is waiting). At depth 1 on the
    // page cache this is 9 % more reads a second (bench/README). Kernels before 6.1 lack
    // DEFER_TASKRUN, before 5.19 COOP_TASKRUN: each refusal (EINVAL) retries without.
    let ring = if o.sqthread_poll {
        b.build(entries)
    } else {
        let mut deferred = b.clone();
        deferred
            .setup_coop_taskrun()
            .setup_taskrun_flag()
            .setup_single_issuer()
            .setup_defer_taskrun();
        let mut coop = b.clone();
        coop.setup_coop_taskrun().setup_taskrun_flag();
        [deferred, coop]
            .iter()
            .find_map(|d| match d.build(entries) {
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) => None,
                r => Some(r),
            })
            .unwrap_or_else(|| b.build(entries))
    }
    .map_err(|e| setup_err(e, o))?;
    if o.registerfiles {
        let n = nfiles.max(1) as usize;
        ring.submitter()
            .register_files(&vec![-1; n])
            .map_err(|e| io::Error::new(e.kind(), format!("registerfiles: {e}")))?;
    }
    let registered = if o.sqthread_poll {
        None
    } else {
        Ring::register_descriptor(&ring)
    };
    Ok(Ring { ring, registered })
}

/// `registerfiles`: descriptor `fd` (-1: none) into the ring's slot `file`.
pub(crate) fn register_file<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: Option<&Ring<S, C>>,
    file: u32,
    fd: RawFd,
) -> io::Result<()> {
    if let Some(ring) = ring {
        ring.submitter()
            .register_files_update(file, &[fd])
            .map_err(|e| io::Error::new(e.kind(), format!("registerfiles: {e}")))?;
    }
    Ok(())
}

/// `fixedbufs`: register the job's I/O buffers, every slot as one region, so requests can
/// name them by index (READ_FIXED/WRITE_FIXED, or io_uring_cmd's fixed buffers).
pub(crate) fn register_buffers<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: Option<&Ring<S, C>>,
    bufs: &IoBuffers,
) -> io::Result<()> {
    let ring = ring.ok_or_else(|| io::Error::from_raw_os_error(libc::EINVAL))?;
    let iov = libc::iovec {
        iov_base: bufs.ptr(0).cast(),
        iov_len: bufs.slot_size() * bufs.count(),
    };
    // SAFETY: the buffers outlive the ring's use of them: the core keeps `bufs` alive
    // until after the engine is dropped, and the ring unregisters on drop.
    unsafe { ring.submitter().register_buffers(&[iov]) }.map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("fixedbufs: cannot register the I/O buffers: {e}"),
        )
    })
}

/// Collect at least `min` and at most `max` completions into `out` (io_uring's and
/// io_uring_cmd's reap), each completion entry turned into a [`Completion`] by `complete`;
/// waits in the kernel while fewer than `min` arrived and more are in flight. `inflight`
/// counts the ones taken out. Generic over `complete`, so each engine's conversion is
/// compiled into its own copy: no call through a pointer per request.
#[inline]
pub(crate) fn reap_ring<S: squeue::EntryMarker, C: cqueue::EntryMarker>(
    ring: &mut Ring<S, C>,
    inflight: &mut u32,
    min: usize,
    max: usize,
    out: &mut Vec<Completion>,
    mut complete: impl FnMut(C) -> Completion,
) -> io::Result<usize> {
    let mut got = 0usize;
    loop {
        for cqe in ring.completion().take(max - got) {
            out.push(complete(cqe));
            got += 1;
        }
        if got >= max || (*inflight as usize) <= got {
            break;
        }
        if got >= min {
            // Completions the kernel holds back for this thread (TASKRUN_FLAG): one
            // enter without waiting posts them, then they are taken.
            if !ring.submission().taskrun() {
                break;
            }
            match ring.enter(0) {
                Ok(_) => {}
                Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
                Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EBUSY)) => {}
                Err(e) => return Err(e),
            }
            for cqe in ring.completion().take(max - got) {
                out.push(complete(cqe));
                got += 1;
            }
            break;
        }
        match ring.enter(min - got) {
            Ok(_) => {}
            Err(e) if e.raw_os_error() == Some(libc::EINTR) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::EAGAIN) | Some(libc::EBUSY)) => {}
            Err(e) => return Err(e),
        }
    }
    *inflight -= got as u32;
    Ok(got)
}

impl Engine for Uring {
    fn caps(&self) -> Caps {
        Caps {
            has_commit: true,
            no_slat: self.opts.sqthread_poll,
            trim: true,
            sync_range: true,
            atomic_writes: true,
            ..Caps::default()
        }
    }
    fn init(&mut self) -> io::Result<()> {
        let ring = setup_ring(&self.opts, self.depth, self.nfiles, setup_error)?;
        if self.opts.nonvectored < 0 {
            // Auto: plain READ/WRITE where the kernel has them (5.6+), as fio does.
            let mut probe = io_uring::Probe::new();
            let vectored = ring.submitter().register_probe(&mut probe).is_err()
                || !probe.is_supported(opcode::Read::CODE);
            self.vectored = vectored;
        }
        self.ring = Some(ring);
        Ok(())
    }
    fn post_init(&mut self, bufs: &IoBuffers) -> io::Result<()> {
        if self.opts.fixedbufs {
            register_buffers(self.ring.as_ref(), bufs)?;
            self.fixed = true;
        }
        Ok(())
    }
    fn open_file(&mut self, file: u32, f: &FileInfo) -> io::Result<()> {
        if self.opts.registerfiles {
            register_file(self.ring.as_ref(), file, f.fd)?;
        }
        Ok(())
    }
    fn close_file(&mut self, file: u32) -> io::Result<()> {
        if self.opts.registerfiles {
            let _ = register_file(self.ring.as_ref(), file, -1);
        }
        Ok(())
    }
    fn queue(&mut self, io: &IoReq) -> Queued {
        let Some(ring) = self.ring.as_mut() else {
            return Queued::Completed(-(libc::EINVAL as i64));
        };
        let reg = self.opts.registerfiles;
        let rw_flags = if self.opts.nowait { RWF_NOWAIT } else { 0 }
            | if self.opts.uncached { RWF_UNCACHED } else { 0 }
            | if self.atomic && io.op == Op::Write {
                crate::platform::RWF_ATOMIC as i32
            } else {
                0
            };
        let len = io.len as u32;
        macro_rules! target {
            ($build:expr) => {
                if reg {
                    $build(types::Fixed(io.file))
                } else {
                    $build(types::Fd(io.fd))
                }
            };
        }
        let entry = match io.op {
            Op::Read if self.fixed => target!(|fd| opcode::ReadFixed::new(fd, io.buf, len, 0)
                .offset(io.offset)
                .ioprio(io.ioprio)
                .rw_flags(rw_flags)
                .build()),
            Op::Write if self.fixed => target!(|fd| opcode::WriteFixed::new(fd, io.buf, len, 0)
                .offset(io.offset)
                .ioprio(io.ioprio)
                .rw_flags(rw_flags)
                .build()),
            Op::Read | Op::Write if self.vectored => {
                let v = &mut self.iovecs[io.idx as usize];
                *v = libc::iovec {
                    iov_base: io.buf.cast(),
                    iov_len: io.len,
                };
                let v: *const libc::iovec = v;
                if io.op == Op::Read {
                    target!(|fd| opcode::Readv::new(fd, v, 1)
                        .offset(io.offset)
                        .ioprio(io.ioprio)
                        .rw_flags(rw_flags)
                        .build())
                } else {
                    target!(|fd| opcode::Writev::new(fd, v, 1)
                        .offset(io.offset)
                        .ioprio(io.ioprio)
                        .rw_flags(rw_flags)
                        .build())
                }
            }
            Op::Read => target!(|fd| opcode::Read::new(fd, io.buf, len)
                .offset(io.offset)
                .ioprio(io.ioprio)
                .rw_flags(rw_flags)
                .build()),
            Op::Write => target!(|fd| opcode::Write::new(fd, io.buf.cast_const(), len)
                .offset(io.offset)
                .ioprio(io.ioprio)
                .rw_flags(rw_flags)
                .build()),
            Op::Sync => target!(|fd| opcode::Fsync::new(fd).build()),
            Op::Datasync => target!(|fd| opcode::Fsync::new(fd)
                .flags(types::FsyncFlags::DATASYNC)
                .build()),
            Op::SyncRange => target!(|fd| opcode::SyncFileRange::new(fd, len)
                .offset(io.offset)
                .flags(io.sync_flags)
                .build()),
            Op::Trim => return Queued::Completed(crate::sync::do_trim(io)),
        };
        let mut entry = entry.user_data(io.idx as u64);
        if self.opts.force_async > 0 {
            self.counter += 1;
            if self.counter % self.opts.force_async == 0 {
                entry = entry.flags(squeue::Flags::ASYNC);
            }
        }
        // SAFETY: every pointer in the entry (buffer, iovec) stays valid until the request
        // completes: buffers are owned by the core for the request's lifetime and the iovec
        // lives in self.iovecs at the request's slot, untouched until its completion.
        let pushed = unsafe { ring.submission().push(&entry) };
        match pushed {
            Ok(()) => {
                self.pending += 1;
                Queued::Queued
            }
            Err(_) => Queued::Busy,
        }
    }
    fn commit(&mut self) -> io::Result<usize> {
        match self.ring.as_mut() {
            Some(ring) => submit_pending(
                ring,
                &mut self.pending,
                &mut self.inflight,
                self.opts.sqthread_poll,
            ),
            None => Ok(0),
        }
    }
    fn reap(&mut self, min: usize, max: usize, out: &mut Vec<Completion>) -> io::Result<usize> {
        let Some(ring) = self.ring.as_mut() else {
            return Ok(0);
        };
        reap_ring(ring, &mut self.inflight, min, max, out, |cqe| Completion {
            idx: cqe.user_data() as u32,
            res: cqe.result() as i64,
        })
    }
}
