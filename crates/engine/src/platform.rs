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
//!
//! What the core reads from `/proc` and `/sys` (block devices, disk statistics, CPU
//! facts) is plain file reading that finds nothing elsewhere; those readers already treat
//! a missing file as "unknown".

use crate::sys::Usage;
use rustix::fd::BorrowedFd;
use std::io;
use std::path::Path;

/// Whether this build runs on Linux (the interfaces above are all there).
pub const LINUX: bool = cfg!(any(target_os = "linux", target_os = "android"));

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn unsupported(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        format!("{what} is not available on this system"),
    )
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
        rustix::process::getpid().as_raw_nonzero().get()
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
        (pages.max(0) as u64).saturating_mul(rustix::param::page_size() as u64)
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
        rustix::fs::stat(path).map(|_| ()).map_err(io::Error::from)
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

/// syncfs(2) on the file system holding `fd` (fio 3.40's end_syncfs). Elsewhere: sync(2),
/// which flushes every file system, a superset.
pub fn syncfs(fd: BorrowedFd<'_>) -> io::Result<()> {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        rustix::fs::syncfs(fd).map_err(io::Error::from)
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        let _ = fd;
        rustix::fs::sync();
        Ok(())
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

#[cfg(test)]
mod tests {
    use super::*;

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
