//! The operating-system interfaces flexio uses that only Linux has, each with the fallback
//! other Unix systems get. Everything here answers the same question on every system; where
//! the interface is missing the answer is an `Unsupported` error (the caller says so or does
//! without) or the portable equivalent. A port to another system starts here.
//!
//! | interface | Linux | elsewhere |
//! |---|---|---|
//! | private descriptor table per thread (`unshare(CLONE_FILES)`) | yes | no-op |
//! | per-thread resource usage (`RUSAGE_THREAD`) | yes | `Unsupported` (no CPU share) |
//! | I/O priorities (`ioprio_set`/`ioprio_get`) | yes | `Unsupported` |
//! | huge-page advice for I/O buffers (`MADV_HUGEPAGE`) | yes | nothing |
//! | `statx` (filestat/dirstat `stat_type=statx`) | yes | `stat` |
//! | `fallocate` keep-size and punch-hole modes | yes | `EOPNOTSUPP` |
//! | thread id (`gettid`) | yes | the process id |
//! | total memory (`sysinfo`) | yes | `sysconf` pages × page size |
//! | block device logical block size (`BLKSSZGET`) | yes | 512 |
//! | timer slack of 1 ns for paced sleeps (`PR_SET_TIMERSLACK`) | yes | nothing |
//! | per-thread NUMA memory policy (`set_mempolicy`/`get_mempolicy`) | yes | `Unsupported` |
//! | zoned block devices (`BLKREPORTZONE`, `BLKRESETZONE`) | yes | `Unsupported` |
//!
//! What the core reads from `/proc` and `/sys` (block devices, disk statistics, CPU
//! facts) is plain file reading that finds nothing elsewhere; those readers already treat
//! a missing file as "unknown".
//!
//! RTEMS gets the "elsewhere" column, with these differences: the `Unsupported` errors say
//! "not supported by flexio on RTEMS"; `fallocate` answers `EOPNOTSUPP` in every mode and
//! `syncfs` is `Unsupported` (its C library, as the libc crate binds it, has neither
//! posix_fallocate nor sync).

use crate::os::fd::BorrowedFd;
use crate::sys::Usage;
use std::io;
use std::path::Path;

/// `RWF_ATOMIC` (Linux 6.11+): the write is done whole or not at all.
pub const RWF_ATOMIC: u32 = 0x40;

/// Whether this build runs on Linux (the interfaces above are all there).
pub const LINUX: bool = cfg!(any(target_os = "linux", target_os = "android"));

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(crate) fn unsupported(what: &str) -> io::Error {
    let msg = if cfg!(target_os = "rtems") {
        format!("{what} is not supported by flexio on RTEMS")
    } else {
        format!("{what} is not available on this system")
    };
    io::Error::new(io::ErrorKind::Unsupported, msg)
}

/// Give the calling thread its own copy of the file-descriptor table (unshare(CLONE_FILES)).
///
/// In a multi-threaded process the kernel takes and drops a reference on the file for every
/// system call on a descriptor, because another thread could close it meanwhile; a table
/// used by one thread only skips that (about 5% of a 4 KiB pread on tmpfs, measured). Job
/// threads call this first and from then on open every descriptor they use themselves.
/// Elsewhere the threads share one table, which is correct, only a little slower.
pub fn private_fd_table() -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: after this call descriptors opened by this thread are not visible to
        // others and vice versa. flexio's job threads open their files, rings and logs
        // themselves after calling this, use the descriptors inherited in the copy (stdout,
        // stderr) only as the same open files, and hand no descriptor to another thread:
        // what they return is plain data (statistics).
        unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::FILES) }
            .map_err(io::Error::from)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        Ok(())
    }
}

/// getrusage(RUSAGE_THREAD): resource usage of the calling thread.
pub fn thread_usage() -> io::Result<Usage> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: ru points to writable memory of the right type; getrusage fills it.
        let r = unsafe { libc::getrusage(libc::RUSAGE_THREAD, ru.as_mut_ptr()) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: getrusage succeeded, so the structure is initialised (it was zeroed
        // anyway).
        let ru = unsafe { ru.assume_init() };
        let tv = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        Ok(Usage {
            utime_us: tv(ru.ru_utime),
            stime_us: tv(ru.ru_stime),
            ctx: (ru.ru_nvcsw as u64).wrapping_add(ru.ru_nivcsw as u64),
            majflt: ru.ru_majflt as u64,
            minflt: ru.ru_minflt as u64,
        })
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        Err(unsupported("per-thread resource usage (RUSAGE_THREAD)"))
    }
}

#[cfg(any(target_os = "linux", target_os = "android"))]
const IOPRIO_WHO_PROCESS: libc::c_long = 1;

/// ioprio_set(IOPRIO_WHO_PROCESS, 0 = the calling thread, class << 13 | hint << 3 | level);
/// the hint (fio 3.36's `priohint`, e.g. a command duration limit index) needs Linux 6.10.
pub fn ioprio_set_self(class: u32, level: u32, hint: u32) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let value = ((class as libc::c_long) << 13)
            | (((hint & 0x3ff) as libc::c_long) << 3)
            | (level & 7) as libc::c_long;
        // SAFETY: a plain system call with integer arguments, each passed as a C long
        // (the width the variadic syscall() reads on every architecture).
        let r = unsafe {
            libc::syscall(
                libc::SYS_ioprio_set,
                IOPRIO_WHO_PROCESS,
                0 as libc::c_long,
                value,
            )
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (class, level, hint);
        Err(unsupported("I/O priorities (ioprio_set)"))
    }
}

/// The calling thread's I/O priority as (class, level).
pub fn ioprio_get_self() -> io::Result<(u32, u32)> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: a plain system call with integer arguments passed as C longs.
        let r =
            unsafe { libc::syscall(libc::SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0 as libc::c_long) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(((r >> 13) as u32, (r & 0x1fff) as u32))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        Err(unsupported("I/O priorities (ioprio_get)"))
    }
}

/// The calling thread's id (Linux's tid; the process id elsewhere).
pub fn thread_id() -> i32 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        rustix::thread::gettid().as_raw_nonzero().get()
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        crate::os::process::getpid().as_raw_nonzero().get()
    }
}

/// Physical memory in bytes (fio's `$mb_memory`), 0 when the system does not say.
pub fn total_memory() -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let si = rustix::system::sysinfo();
        (si.totalram as u64).saturating_mul(si.mem_unit.max(1) as u64)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        // SAFETY: sysconf has no memory-safety preconditions.
        let pages = unsafe { libc::sysconf(libc::_SC_PHYS_PAGES) };
        (pages.max(0) as u64).saturating_mul(crate::os::param::page_size() as u64)
    }
}

/// A block device's logical block size (BLKSSZGET), 512 where it cannot be asked.
pub fn logical_block_size(fd: BorrowedFd<'_>) -> u32 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        rustix::fs::ioctl_blksszget(fd).unwrap_or(512)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = fd;
        512
    }
}

/// Wait until `word` is no longer 0 (set by [`wake_all`]). Linux: a futex wait, so one
/// call wakes every waiter; elsewhere a 1 ms poll.
pub fn wait_while_zero(word: &std::sync::atomic::AtomicU32) {
    use std::sync::atomic::Ordering;
    while word.load(Ordering::Acquire) == 0 {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        {
            // EAGAIN (already set) and EINTR loop back to the check.
            let _ =
                rustix::thread::futex::wait(word, rustix::thread::futex::Flags::PRIVATE, 0, None);
        }
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
}

/// Set `word` to 1 and wake every thread in [`wait_while_zero`] on it, in one call.
pub fn wake_all(word: &std::sync::atomic::AtomicU32) {
    word.store(1, std::sync::atomic::Ordering::Release);
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // The kernel reads the count as an int: u32::MAX would be -1, which wakes one.
        let _ = rustix::thread::futex::wake(
            word,
            rustix::thread::futex::Flags::PRIVATE,
            i32::MAX as u32,
        );
    }
}

/// Let the calling thread's sleeps end on time rather than up to 50 µs late (Linux's
/// default timer slack); nothing elsewhere.
pub fn tight_timer_slack() {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
    }
}

/// Ask for transparent huge pages behind a fresh allocation, before its first touch. A
/// kernel without them (or another system) leaves 4 KiB pages, which work the same.
///
/// # Safety
/// `[ptr, ptr + len)` must be a mapping the caller owns.
pub(crate) unsafe fn advise_hugepages(ptr: *mut u8, len: usize) {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: the caller owns the range; the advice changes how it is backed, not what
        // it holds.
        let _ = unsafe { rustix::mm::madvise(ptr.cast(), len, rustix::mm::Advice::LinuxHugepage) };
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (ptr, len);
    }
}

/// MADV_HUGEPAGE on a mapping, its refusal returned (mmap's `thp`); ENOSYS where the
/// system has no transparent huge pages.
#[cfg(not(target_os = "rtems"))]
///
/// # Safety
/// `[ptr, ptr + len)` must be a mapping the caller owns.
pub(crate) unsafe fn madvise_hugepages(ptr: *mut std::ffi::c_void, len: usize) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        // SAFETY: the caller owns the range; the advice changes how it is backed, not what
        // it holds.
        unsafe { rustix::mm::madvise(ptr, len, rustix::mm::Advice::LinuxHugepage) }
            .map_err(|e| io::Error::from_raw_os_error(e.raw_os_error()))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (ptr, len);
        Err(io::Error::from_raw_os_error(libc::ENOSYS))
    }
}

/// statx(path) for the basic fields (`stat_type=statx`); `stat` where there is no statx.
pub fn statx_basic(path: &Path) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fs::{AtFlags, StatxFlags, CWD};
        rustix::fs::statx(CWD, path, AtFlags::empty(), StatxFlags::BASIC_STATS)
            .map(|_| ())
            .map_err(io::Error::from)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        crate::os::fs::stat(path)
            .map(|_| ())
            .map_err(io::Error::from)
    }
}

/// What `fallocate` should do with a range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FallocMode {
    /// Allocate and extend the file (mode 0; posix_fallocate elsewhere).
    Extend,
    /// Allocate without changing the file size (FALLOC_FL_KEEP_SIZE).
    KeepSize,
    /// Deallocate the range (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE).
    PunchHole,
}

/// fallocate(2) in one of its modes; the keep-size and punch-hole modes are Linux's.
#[cfg(target_os = "rtems")]
pub fn fallocate(
    fd: BorrowedFd<'_>,
    mode: FallocMode,
    offset: u64,
    len: u64,
) -> crate::os::io::Result<()> {
    let _ = (fd, mode, offset, len);
    Err(crate::os::io::Errno::OPNOTSUPP)
}

/// fallocate(2) in one of its modes; the keep-size and punch-hole modes are Linux's.
#[cfg(not(target_os = "rtems"))]
pub fn fallocate(
    fd: BorrowedFd<'_>,
    mode: FallocMode,
    offset: u64,
    len: u64,
) -> rustix::io::Result<()> {
    use rustix::fs::FallocateFlags;
    #[cfg(any(target_os = "linux", target_os = "android"))]
    let flags = match mode {
        FallocMode::Extend => FallocateFlags::empty(),
        FallocMode::KeepSize => FallocateFlags::KEEP_SIZE,
        FallocMode::PunchHole => FallocateFlags::KEEP_SIZE | FallocateFlags::PUNCH_HOLE,
    };
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    let flags = match mode {
        FallocMode::Extend => FallocateFlags::empty(),
        FallocMode::KeepSize | FallocMode::PunchHole => return Err(rustix::io::Errno::OPNOTSUPP),
    };
    rustix::fs::fallocate(fd, flags, offset, len)
}

/// A trim done as fallocate(PUNCH_HOLE | KEEP_SIZE) of the request's range (flexio's
/// `trim_mode=punch`, where fio's trim is BLKDISCARD): a regular file gets a hole that
/// reads back as zeros, a block device has the range zeroed (the kernel answers
/// EOPNOTSUPP where it cannot). The result is an engine's: the bytes trimmed, or -errno.
pub fn punch_trim(io: &crate::IoReq) -> i64 {
    match fallocate(
        crate::sync::fd(io),
        FallocMode::PunchHole,
        io.offset,
        io.len as u64,
    ) {
        Ok(()) => io.len as i64,
        Err(e) => -(e.raw_os_error() as i64),
    }
}

/// syncfs(2) on the file system holding `fd` (fio 3.40's end_syncfs). Elsewhere: sync(2),
/// which flushes every file system, a superset.
pub fn syncfs(fd: BorrowedFd<'_>) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        rustix::fs::syncfs(fd).map_err(io::Error::from)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "rtems")))]
    {
        let _ = fd;
        rustix::fs::sync();
        Ok(())
    }
    #[cfg(target_os = "rtems")]
    {
        let _ = fd;
        Err(unsupported("syncfs or sync (end_syncfs)"))
    }
}

/// Name the calling thread (fio's `comm`; the kernel keeps the first 15 bytes).
pub fn set_thread_name(name: &std::ffi::CStr) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        rustix::thread::set_name(name).map_err(io::Error::from)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = name;
        Err(unsupported("naming a thread (comm)"))
    }
}

/// BLKDISCARD, `_IO(0x12, 119)` of linux/fs.h. `_IO`'s direction bits differ between
/// architectures: "no data" is 0 on x86, ARM, RISC-V and most others (0x1277), but 1 in a
/// 3-bit field at bit 29 on MIPS, PowerPC and SPARC (0x2000_1277); rustix composes it per
/// architecture as the kernel's headers do.
#[cfg(any(target_os = "linux", target_os = "android"))]
const BLKDISCARD: rustix::ioctl::Opcode = rustix::ioctl::opcode::none(0x12, 119);

/// BLKDISCARD on `[off, off + len)` of the device behind `fd` (fio's `os_trim`, the trim
/// of the system-call engines). A regular file answers ENOTTY, as it does to fio.
pub fn discard(fd: BorrowedFd<'_>, off: u64, len: u64) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fd::AsRawFd;
        let range: [u64; 2] = [off, len];
        // SAFETY: `fd` is open for the call; BLKDISCARD reads two u64 (start, length) from
        // the pointer, which points to a live array of exactly that.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), BLKDISCARD as _, range.as_ptr()) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (fd, off, len);
        Err(io::Error::from_raw_os_error(libc::EOPNOTSUPP))
    }
}

/// A zone of a zoned block device as BLKREPORTZONE reports it, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlkZone {
    pub start: u64,
    pub len: u64,
    pub wp: u64,
    /// 1 conventional, 2 sequential write required, 3 sequential write preferred.
    pub kind: u8,
    /// 0 not write pointer, 1 empty, 2/3 implicitly/explicitly open, 4 closed,
    /// 0xd read-only, 0xe full, 0xf offline.
    pub cond: u8,
    /// Writable bytes from the start (the zone's length when the kernel does not say).
    pub capacity: u64,
}

/// Up to `max` zones of the zoned block device behind `fd`, from the one holding byte
/// `offset` (BLKREPORTZONE). A device that is not zoned, or a kernel without zoned block
/// device support, answers an error (ENOTTY / EOPNOTSUPP).
pub fn report_zones(fd: BorrowedFd<'_>, offset: u64, max: u32) -> io::Result<Vec<BlkZone>> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fd::AsRawFd;
        // _IOWR(0x12, 130, struct blk_zone_report): 16-byte header, 64-byte zones.
        const BLKREPORTZONE: libc::c_ulong = 0xc010_1282;
        const HDR: usize = 16;
        const ZONE: usize = 64;
        let max = max.max(1);
        // u64 words: the header and each zone are multiples of 8 bytes.
        let mut buf = vec![0u64; (HDR + ZONE * max as usize) / 8];
        buf[0] = offset >> 9;
        buf[1] = max as u64; // nr_zones (low 32 bits), flags 0 (little and big endian: see below)
        if cfg!(target_endian = "big") {
            buf[1] = (max as u64) << 32;
        }
        // SAFETY: `fd` is open for the call; the buffer is a live, writable allocation of
        // the header plus `max` zone records, the size the header's nr_zones announces, and
        // the kernel writes no more than that.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), BLKREPORTZONE as _, buf.as_mut_ptr()) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let words = &buf[1];
        let (nr, flags) = if cfg!(target_endian = "big") {
            ((words >> 32) as u32, *words as u32)
        } else {
            (*words as u32, (words >> 32) as u32)
        };
        let has_capacity = flags & 1 != 0;
        let mut out = Vec::with_capacity(nr as usize);
        for i in 0..nr.min(max) as usize {
            let w = &buf[(HDR + i * ZONE) / 8..(HDR + (i + 1) * ZONE) / 8];
            let bytes = w[3].to_ne_bytes();
            let len = w[1] << 9;
            out.push(BlkZone {
                start: w[0] << 9,
                len,
                wp: w[2] << 9,
                kind: bytes[0],
                cond: bytes[1],
                capacity: if has_capacity { w[4] << 9 } else { len },
            });
        }
        Ok(out)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (fd, offset, max);
        Err(unsupported("zoned block devices"))
    }
}

/// Reset the write pointers of the zones in `[offset, offset + len)` (BLKRESETZONE).
pub fn reset_zones(fd: BorrowedFd<'_>, offset: u64, len: u64) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use rustix::fd::AsRawFd;
        // _IOW(0x12, 131, struct blk_zone_range)
        const BLKRESETZONE: libc::c_ulong = 0x4010_1283;
        let range: [u64; 2] = [offset >> 9, len >> 9];
        // SAFETY: `fd` is open for the call; BLKRESETZONE reads two u64 (sector, number of
        // sectors) from the pointer, which points to a live array of exactly that.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), BLKRESETZONE as _, range.as_ptr()) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (fd, offset, len);
        Err(unsupported("zoned block devices"))
    }
}

/// sync_file_range(2): start and/or wait for write-out of a file range (`flags`:
/// SYNC_FILE_RANGE_WAIT_BEFORE = 1, WRITE = 2, WAIT_AFTER = 4; a length of 0 means to the
/// end of the file).
pub fn sync_file_range(fd: BorrowedFd<'_>, off: u64, len: u64, flags: u32) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: a plain system call on a descriptor we borrow, with integer arguments.
        let r = unsafe {
            libc::sync_file_range(fd.as_raw_fd(), off as _, len as _, flags as libc::c_uint)
        };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (fd, off, len, flags);
        Err(unsupported("sync_file_range"))
    }
}

/// fcntl F_SET_RW_HINT (the inode's write life-time hint) or, with `per_file`,
/// F_SET_FILE_RW_HINT (the open file's; Linux 4.13 to 5.16 only).
pub fn set_write_hint(fd: BorrowedFd<'_>, hint: u64, per_file: bool) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::AsRawFd;
        // F_LINUX_SPECIFIC_BASE (1024) + 12 / + 14.
        let cmd = if per_file { 1024 + 14 } else { 1024 + 12 };
        let v: u64 = hint;
        // SAFETY: the command reads one u64 through the pointer, which points to `v`.
        let r = unsafe { libc::fcntl(fd.as_raw_fd(), cmd, &v as *const u64) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (fd, hint, per_file);
        Err(unsupported("write life-time hints (F_SET_RW_HINT)"))
    }
}

/// fcntl F_GET_RW_HINT: the inode's write life-time hint.
pub fn get_write_hint(fd: BorrowedFd<'_>) -> io::Result<u64> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        use std::os::fd::AsRawFd;
        let mut v: u64 = 0;
        // SAFETY: F_GET_RW_HINT (F_LINUX_SPECIFIC_BASE + 11) writes one u64 to `v`.
        let r = unsafe { libc::fcntl(fd.as_raw_fd(), 1024 + 11, &mut v as *mut u64) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(v)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = fd;
        Err(unsupported("write life-time hints (F_GET_RW_HINT)"))
    }
}

/// Nodes as the kernel's node mask: one bit per node, in words of the C `unsigned long`.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn node_mask(nodes: &[usize]) -> Vec<libc::c_ulong> {
    let bits = libc::c_ulong::BITS as usize;
    let top = nodes.iter().max().map_or(0, |m| m + 1);
    let mut mask = vec![0 as libc::c_ulong; top.div_ceil(bits).max(1)];
    for &n in nodes {
        mask[n / bits] |= 1 << (n % bits);
    }
    mask
}

/// Set the calling thread's NUMA memory policy: `mode` is the kernel's MPOL_* value,
/// `nodes` its node numbers (none for MPOL_DEFAULT and MPOL_LOCAL).
pub fn set_mempolicy(mode: i32, nodes: &[usize]) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let mask = node_mask(nodes);
        let maxnode = if nodes.is_empty() {
            0
        } else {
            (mask.len() * libc::c_ulong::BITS as usize + 1) as libc::c_ulong
        };
        let ptr = if nodes.is_empty() {
            std::ptr::null()
        } else {
            mask.as_ptr()
        };
        // SAFETY: set_mempolicy reads at most maxnode - 1 bits from `ptr`, which points at
        // `mask` (alive for the call) of that many bits, or is null with maxnode 0.
        let r = unsafe { libc::syscall(libc::SYS_set_mempolicy, mode, ptr, maxnode) };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = (mode, nodes);
        Err(unsupported("a NUMA memory policy"))
    }
}

/// The calling thread's NUMA memory policy: its MPOL_* mode and nodes (of the first 1024).
pub fn get_mempolicy() -> io::Result<(i32, Vec<usize>)> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let bits = libc::c_ulong::BITS as usize;
        let mut mode: libc::c_int = 0;
        let mut mask = vec![0 as libc::c_ulong; 1024 / bits];
        // SAFETY: the kernel writes one int to `mode` and at most maxnode bits into `mask`,
        // which holds 1024 bits; addr is null and flags 0 (the thread's policy).
        let r = unsafe {
            libc::syscall(
                libc::SYS_get_mempolicy,
                &mut mode as *mut libc::c_int,
                mask.as_mut_ptr(),
                1024 as libc::c_ulong,
                std::ptr::null::<libc::c_void>(),
                0 as libc::c_ulong,
            )
        };
        if r < 0 {
            return Err(io::Error::last_os_error());
        }
        let nodes = (0..1024)
            .filter(|n| mask[n / bits] & (1 << (n % bits)) != 0)
            .collect();
        Ok((mode, nodes))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        Err(unsupported("a NUMA memory policy"))
    }
}

/// Set the calling thread's group id (Linux: per thread, as fio's job process; other
/// systems have no per-thread credentials and refuse with ENOSYS).
pub fn set_thread_gid(gid: u32) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        rustix::thread::set_thread_gid(rustix::process::Gid::from_raw(gid))
            .map_err(|e| io::Error::from_raw_os_error(e.raw_os_error()))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = gid;
        Err(io::Error::from_raw_os_error(libc::ENOSYS))
    }
}

/// Set the calling thread's user id (as [`set_thread_gid`]).
pub fn set_thread_uid(uid: u32) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        rustix::thread::set_thread_uid(rustix::process::Uid::from_raw(uid))
            .map_err(|e| io::Error::from_raw_os_error(e.raw_os_error()))
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = uid;
        Err(io::Error::from_raw_os_error(libc::ENOSYS))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel's value of BLKDISCARD on this architecture (asm-generic/ioctl.h, and
    /// arch/{mips,powerpc,sparc}/include/uapi/asm/ioctl.h where _IOC_NONE is 1 << 29).
    #[cfg(any(target_os = "linux", target_os = "android"))]
    #[test]
    fn blkdiscard_has_this_architectures_number() {
        let want: u32 = if cfg!(any(
            target_arch = "mips",
            target_arch = "mips32r6",
            target_arch = "mips64",
            target_arch = "mips64r6",
            target_arch = "powerpc",
            target_arch = "powerpc64",
            target_arch = "sparc",
            target_arch = "sparc64"
        )) {
            0x2000_1277
        } else {
            0x1277
        };
        // (The opcode's type is the C library's ioctl request type: unsigned long, or int
        // with musl through rustix's libc backend.)
        assert_eq!(format!("{BLKDISCARD:#x}"), format!("{want:#x}"));
    }

    #[test]
    fn memory_policy_is_the_threads_own() {
        if !LINUX {
            assert!(set_mempolicy(3, &[0]).is_err());
            return;
        }
        let before = match get_mempolicy() {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                // qemu-user does not emulate the NUMA system calls.
                eprintln!("SKIP: get_mempolicy: {e}");
                return;
            }
            r => r.unwrap(),
        };
        let got = std::thread::spawn(|| {
            set_mempolicy(3, &[0]).unwrap();
            let interleave = get_mempolicy().unwrap();
            set_mempolicy(2, &[0]).unwrap();
            let bind = get_mempolicy().unwrap();
            set_mempolicy(0, &[]).unwrap();
            (interleave, bind, get_mempolicy().unwrap().0)
        })
        .join()
        .unwrap();
        assert_eq!(got, ((3, vec![0]), (2, vec![0]), 0));
        // A node the machine does not have.
        let e = std::thread::spawn(|| set_mempolicy(2, &[1000]))
            .join()
            .unwrap();
        assert!(e.is_err());
        assert_eq!(
            get_mempolicy().unwrap(),
            before,
            "other threads keep theirs"
        );
    }

    #[test]
    fn answers_on_this_system() {
        // Each interface answers, or says it is missing, without failing otherwise.
        private_fd_table().unwrap();
        match thread_usage() {
            Ok(u) => assert!(u.utime_us < u64::MAX),
            Err(e) => assert!(!LINUX && e.kind() == io::ErrorKind::Unsupported, "{e}"),
        }
        match ioprio_get_self() {
            Ok((class, _)) => assert!(class <= 3, "class {class}"),
            Err(e) => assert!(!LINUX && e.kind() == io::ErrorKind::Unsupported, "{e}"),
        }
        assert!(thread_id() > 0);
        assert!(total_memory() > 0);
        let d = tempfile::tempdir().unwrap();
        statx_basic(d.path()).unwrap();
        assert!(statx_basic(&d.path().join("missing")).is_err());
        let f = std::fs::File::create(d.path().join("f")).unwrap();
        use std::os::fd::AsFd;
        fallocate(f.as_fd(), FallocMode::Extend, 0, 8192).unwrap();
        assert_eq!(f.metadata().unwrap().len(), 8192);
        // Keep-size allocation past the end leaves the size alone where it is supported.
        if fallocate(f.as_fd(), FallocMode::KeepSize, 8192, 8192).is_ok() {
            assert_eq!(f.metadata().unwrap().len(), 8192);
        }
    }
}
