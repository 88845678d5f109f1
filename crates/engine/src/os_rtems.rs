//! RTEMS: the part of rustix's interface flexio's portable code uses, over libc (RTEMS's
//! newlib). Same module, type and function names as rustix, so callers are written once;
//! see `os.rs`. What RTEMS's C library (as the libc crate binds it) lacks answers
//! `Errno::NOSYS`; the features that need it are refused before a job runs.

/// File descriptors: rustix re-exports std's.
pub mod fd {
    pub use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
}

/// Errors and plain reads and writes.
pub mod io {
    use super::fd::{AsFd, AsRawFd};
    use std::fmt;

    /// An `errno` value.
    #[derive(Clone, Copy, PartialEq, Eq, Hash)]
    pub struct Errno(i32);

    impl Errno {
        pub const BUSY: Errno = Errno(libc::EBUSY);
        pub const DQUOT: Errno = Errno(libc::EDQUOT);
        pub const INVAL: Errno = Errno(libc::EINVAL);
        pub const NOSPC: Errno = Errno(libc::ENOSPC);
        pub const NOSYS: Errno = Errno(libc::ENOSYS);
        pub const OPNOTSUPP: Errno = Errno(libc::EOPNOTSUPP);

        pub const fn from_raw_os_error(raw: i32) -> Errno {
            Errno(raw)
        }

        pub const fn raw_os_error(self) -> i32 {
            self.0
        }

        /// The calling thread's `errno`.
        pub fn last() -> Errno {
            Errno(
                std::io::Error::last_os_error()
                    .raw_os_error()
                    .unwrap_or(libc::EIO),
            )
        }
    }

    impl fmt::Display for Errno {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            std::io::Error::from_raw_os_error(self.0).fmt(f)
        }
    }

    impl fmt::Debug for Errno {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "Errno({}: {self})", self.0)
        }
    }

    impl std::error::Error for Errno {}

    impl From<Errno> for std::io::Error {
        fn from(e: Errno) -> std::io::Error {
            std::io::Error::from_raw_os_error(e.0)
        }
    }

    pub type Result<T> = std::result::Result<T, Errno>;

    pub use std::io::{IoSlice, IoSliceMut};

    /// A C return value: -1 is the thread's `errno`, anything else a count.
    pub(crate) fn count(r: isize) -> Result<usize> {
        if r < 0 {
            Err(Errno::last())
        } else {
            Ok(r as usize)
        }
    }

    /// A C return value: -1 is the thread's `errno`, 0 success.
    pub(crate) fn unit(r: libc::c_int) -> Result<()> {
        if r < 0 {
            Err(Errno::last())
        } else {
            Ok(())
        }
    }

    /// An offset as `off_t` (64 bits on RTEMS).
    pub(crate) fn off(offset: u64) -> Result<libc::off_t> {
        libc::off_t::try_from(offset).map_err(|_| Errno::INVAL)
    }

    pub fn pread<Fd: AsFd>(fd: Fd, buf: &mut [u8], offset: u64) -> Result<usize> {
        let off = off(offset)?;
        // SAFETY: the descriptor is borrowed for the call; the pointer and length are those
        // of a live, exclusively borrowed slice the call writes at most `len` bytes into.
        count(unsafe {
            libc::pread(
                fd.as_fd().as_raw_fd(),
                buf.as_mut_ptr().cast(),
                buf.len(),
                off,
            )
        })
    }

    pub fn pwrite<Fd: AsFd>(fd: Fd, buf: &[u8], offset: u64) -> Result<usize> {
        let off = off(offset)?;
        // SAFETY: the descriptor is borrowed for the call; the pointer and length are those
        // of a live slice the call only reads.
        count(unsafe { libc::pwrite(fd.as_fd().as_raw_fd(), buf.as_ptr().cast(), buf.len(), off) })
    }

    pub fn read<Fd: AsFd>(fd: Fd, buf: &mut [u8]) -> Result<usize> {
        // SAFETY: as in `pread`.
        count(unsafe { libc::read(fd.as_fd().as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) })
    }

    pub fn write<Fd: AsFd>(fd: Fd, buf: &[u8]) -> Result<usize> {
        // SAFETY: as in `pwrite`.
        count(unsafe { libc::write(fd.as_fd().as_raw_fd(), buf.as_ptr().cast(), buf.len()) })
    }

    /// preadv: RTEMS's C library (as the libc crate binds it) has none (the pvsync engine
    /// is refused on RTEMS).
    pub fn preadv<Fd: AsFd>(fd: Fd, bufs: &mut [IoSliceMut<'_>], offset: u64) -> Result<usize> {
        let _ = (fd.as_fd(), bufs, offset);
        Err(Errno::NOSYS)
    }

    /// pwritev: none either.
    pub fn pwritev<Fd: AsFd>(fd: Fd, bufs: &[IoSlice<'_>], offset: u64) -> Result<usize> {
        let _ = (fd.as_fd(), bufs, offset);
        Err(Errno::NOSYS)
    }

    pub fn readv<Fd: AsFd>(fd: Fd, bufs: &mut [IoSliceMut<'_>]) -> Result<usize> {
        let n = libc::c_int::try_from(bufs.len()).map_err(|_| Errno::INVAL)?;
        // SAFETY: IoSliceMut has struct iovec's layout (std guarantees it on Unix); each
        // entry describes a live, exclusively borrowed buffer the call may fill.
        count(unsafe { libc::readv(fd.as_fd().as_raw_fd(), bufs.as_mut_ptr().cast(), n) })
    }

    pub fn writev<Fd: AsFd>(fd: Fd, bufs: &[IoSlice<'_>]) -> Result<usize> {
        let n = libc::c_int::try_from(bufs.len()).map_err(|_| Errno::INVAL)?;
        // SAFETY: IoSlice has struct iovec's layout; each entry describes a live buffer the
        // call only reads.
        count(unsafe { libc::writev(fd.as_fd().as_raw_fd(), bufs.as_ptr().cast(), n) })
    }
}

/// Files and directories.
pub mod fs {
    use super::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
    use super::io::{off, unit, Errno, Result};
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;

    pub use std::io::SeekFrom;

    /// Open flags, as rustix's bit set. `DIRECT` and `DSYNC` have no equivalent in RTEMS's
    /// C library: they are bits of their own that `open` refuses.
    #[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct OFlags(u32);

    impl OFlags {
        pub const RDONLY: OFlags = OFlags(libc::O_RDONLY as u32);
        pub const WRONLY: OFlags = OFlags(libc::O_WRONLY as u32);
        pub const RDWR: OFlags = OFlags(libc::O_RDWR as u32);
        pub const CREATE: OFlags = OFlags(libc::O_CREAT as u32);
        pub const TRUNC: OFlags = OFlags(libc::O_TRUNC as u32);
        pub const EXCL: OFlags = OFlags(libc::O_EXCL as u32);
        pub const SYNC: OFlags = OFlags(libc::O_SYNC as u32);
        pub const CLOEXEC: OFlags = OFlags(libc::O_CLOEXEC as u32);
        pub const DIRECT: OFlags = OFlags(1 << 31);
        pub const DSYNC: OFlags = OFlags(1 << 30);

        pub const fn empty() -> OFlags {
            OFlags(0)
        }
        pub const fn bits(self) -> u32 {
            self.0
        }
        pub const fn from_bits_retain(bits: u32) -> OFlags {
            OFlags(bits)
        }
        pub const fn contains(self, other: OFlags) -> bool {
            self.0 & other.0 == other.0
        }
    }

    impl std::ops::BitOr for OFlags {
        type Output = OFlags;
        fn bitor(self, o: OFlags) -> OFlags {
            OFlags(self.0 | o.0)
        }
    }

    impl std::ops::BitOrAssign for OFlags {
        fn bitor_assign(&mut self, o: OFlags) {
            self.0 |= o.0;
        }
    }

    impl std::ops::Sub for OFlags {
        type Output = OFlags;
        fn sub(self, o: OFlags) -> OFlags {
            OFlags(self.0 & !o.0)
        }
    }

    impl std::fmt::Debug for OFlags {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "OFlags({:#x})", self.0)
        }
    }

    /// File mode bits.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
    pub struct Mode(libc::mode_t);

    impl Mode {
        pub const fn empty() -> Mode {
            Mode(0)
        }
        pub const fn from_raw_mode(mode: u32) -> Mode {
            Mode(mode as libc::mode_t)
        }
    }

    /// posix_fadvise's advice.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
    pub enum Advice {
        Normal,
        Sequential,
        Random,
        NoReuse,
        WillNeed,
        DontNeed,
    }

    /// `struct stat`.
    pub type Stat = libc::stat;

    fn cpath(path: &Path) -> Result<CString> {
        CString::new(path.as_os_str().as_bytes()).map_err(|_| Errno::INVAL)
    }

    pub fn open<P: AsRef<Path>>(path: P, flags: OFlags, mode: Mode) -> Result<OwnedFd> {
        if flags.contains(OFlags::DIRECT) || flags.contains(OFlags::DSYNC) {
            return Err(Errno::INVAL);
        }
        let p = cpath(path.as_ref())?;
        // SAFETY: `p` is a NUL-terminated string alive for the call; the mode is passed as
        // the C int the variadic open reads.
        let fd = unsafe { libc::open(p.as_ptr(), flags.0 as libc::c_int, mode.0 as libc::c_int) };
        if fd < 0 {
            return Err(Errno::last());
        }
        // SAFETY: open returned a new descriptor that nothing else owns.
        Ok(unsafe { OwnedFd::from_raw_fd(fd) })
    }

    pub fn mkdir<P: AsRef<Path>>(path: P, mode: Mode) -> Result<()> {
        let p = cpath(path.as_ref())?;
        // SAFETY: `p` is a NUL-terminated string alive for the call.
        unit(unsafe { libc::mkdir(p.as_ptr(), mode.0) })
    }

    pub fn rmdir<P: AsRef<Path>>(path: P) -> Result<()> {
        let p = cpath(path.as_ref())?;
        // SAFETY: `p` is a NUL-terminated string alive for the call.
        unit(unsafe { libc::rmdir(p.as_ptr()) })
    }

    pub fn unlink<P: AsRef<Path>>(path: P) -> Result<()> {
        let p = cpath(path.as_ref())?;
        // SAFETY: `p` is a NUL-terminated string alive for the call.
        unit(unsafe { libc::unlink(p.as_ptr()) })
    }

    pub fn stat<P: AsRef<Path>>(path: P) -> Result<Stat> {
        let p = cpath(path.as_ref())?;
        let mut st = std::mem::MaybeUninit::<Stat>::zeroed();
        // SAFETY: `p` is NUL-terminated and `st` writable memory of `struct stat`'s type.
        unit(unsafe { libc::stat(p.as_ptr(), st.as_mut_ptr()) })?;
        // SAFETY: stat succeeded and filled the structure (zeroed before anyway).
        Ok(unsafe { st.assume_init() })
    }

    pub fn lstat<P: AsRef<Path>>(path: P) -> Result<Stat> {
        let p = cpath(path.as_ref())?;
        let mut st = std::mem::MaybeUninit::<Stat>::zeroed();
        // SAFETY: as in `stat`.
        unit(unsafe { libc::lstat(p.as_ptr(), st.as_mut_ptr()) })?;
        // SAFETY: lstat succeeded and filled the structure.
        Ok(unsafe { st.assume_init() })
    }

    pub fn fstat<Fd: AsFd>(fd: Fd) -> Result<Stat> {
        let mut st = std::mem::MaybeUninit::<Stat>::zeroed();
        // SAFETY: the descriptor is borrowed for the call; `st` is writable memory of
        // `struct stat`'s type.
        unit(unsafe { libc::fstat(fd.as_fd().as_raw_fd(), st.as_mut_ptr()) })?;
        // SAFETY: fstat succeeded and filled the structure.
        Ok(unsafe { st.assume_init() })
    }

    pub fn fsync<Fd: AsFd>(fd: Fd) -> Result<()> {
        // SAFETY: a plain call on a borrowed descriptor.
        unit(unsafe { libc::fsync(fd.as_fd().as_raw_fd()) })
    }

    /// fdatasync: RTEMS's C library (as the libc crate binds it) has none, so fsync, which
    /// writes the data and the metadata (what fio does where there is no fdatasync).
    pub fn fdatasync<Fd: AsFd>(fd: Fd) -> Result<()> {
        fsync(fd)
    }

    pub fn ftruncate<Fd: AsFd>(fd: Fd, len: u64) -> Result<()> {
        let len = off(len)?;
        // SAFETY: a plain call on a borrowed descriptor.
        unit(unsafe { libc::ftruncate(fd.as_fd().as_raw_fd(), len) })
    }

    pub fn seek<Fd: AsFd>(fd: Fd, pos: SeekFrom) -> Result<u64> {
        let (off, whence) = match pos {
            SeekFrom::Start(o) => (off(o)?, libc::SEEK_SET),
            SeekFrom::End(o) => (o, libc::SEEK_END),
            SeekFrom::Current(o) => (o, libc::SEEK_CUR),
        };
        // SAFETY: a plain call on a borrowed descriptor.
        let r = unsafe { libc::lseek(fd.as_fd().as_raw_fd(), off, whence) };
        if r < 0 {
            return Err(Errno::last());
        }
        Ok(r as u64)
    }

    /// posix_fadvise: RTEMS's C library (as the libc crate binds it) has none.
    pub fn fadvise<Fd: AsFd>(
        fd: Fd,
        offset: u64,
        len: Option<std::num::NonZeroU64>,
        advice: Advice,
    ) -> Result<()> {
        let _ = (fd.as_fd(), offset, len, advice);
        Err(Errno::NOSYS)
    }

    /// The major number of an RTEMS `dev_t` (libio.h: the high 32 bits).
    pub const fn major(dev: u64) -> u32 {
        (dev >> 32) as u32
    }

    /// The minor number of an RTEMS `dev_t` (libio.h: the low 32 bits).
    pub const fn minor(dev: u64) -> u32 {
        dev as u32
    }
}

/// System parameters.
pub mod param {
    /// The page size (RTEMS's `sysconf(_SC_PAGESIZE)`).
    pub fn page_size() -> usize {
        // SAFETY: sysconf has no memory-safety preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if n > 0 {
            n as usize
        } else {
            4096
        }
    }
}

/// The process (RTEMS runs one program: the application linked with the kernel).
pub mod process {
    use super::io::{Errno, Result};

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Pid(std::num::NonZeroI32);

    impl Pid {
        pub const fn as_raw_nonzero(self) -> std::num::NonZeroI32 {
            self.0
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct Uid(u32);

    impl Uid {
        pub const fn as_raw(self) -> u32 {
            self.0
        }
    }

    pub fn getpid() -> Pid {
        // SAFETY: getpid has no preconditions.
        let pid = unsafe { libc::getpid() };
        Pid(std::num::NonZeroI32::new(pid as i32).unwrap_or(std::num::NonZeroI32::MIN))
    }

    pub fn geteuid() -> Uid {
        // SAFETY: geteuid has no preconditions.
        Uid(unsafe { libc::geteuid() } as u32)
    }

    /// setpriority(2): RTEMS has no process priorities (`nice` is refused on RTEMS).
    pub fn setpriority_process(pid: Option<Pid>, prio: i32) -> Result<()> {
        let _ = (pid, prio);
        Err(Errno::NOSYS)
    }
}

/// The system's name.
pub mod system {
    use std::ffi::CStr;

    /// RTEMS's `struct utsname` (cpukit/include/sys/utsname.h): five fields of SYS_NMLN =
    /// 48 bytes. The libc crate's newlib `utsname` (six fields of 65, "unverified") is
    /// not RTEMS's layout; it only serves as storage larger than RTEMS writes.
    const SYS_NMLN: usize = 48;

    /// uname(2)'s answer, as RTEMS lays it out.
    pub struct Uname([u8; 5 * SYS_NMLN]);

    impl Uname {
        fn field(&self, i: usize) -> &CStr {
            CStr::from_bytes_until_nul(&self.0[i * SYS_NMLN..(i + 1) * SYS_NMLN]).unwrap_or(c"")
        }
        /// The second field (after sysname).
        pub fn nodename(&self) -> &CStr {
            self.field(1)
        }
    }

    pub fn uname() -> Uname {
        const _: () = assert!(std::mem::size_of::<libc::utsname>() >= 5 * SYS_NMLN);
        let mut u = std::mem::MaybeUninit::<libc::utsname>::zeroed();
        // SAFETY: `u` is zeroed, writable memory larger than RTEMS's 240-byte structure,
        // which is all uname writes; on failure it stays zeroed (empty strings).
        unsafe { libc::uname(u.as_mut_ptr()) };
        let mut out = [0u8; 5 * SYS_NMLN];
        // SAFETY: `u` holds at least `out.len()` initialised (zeroed or written) bytes.
        let bytes = unsafe { std::slice::from_raw_parts(u.as_ptr().cast::<u8>(), out.len()) };
        out.copy_from_slice(bytes);
        Uname(out)
    }
}

/// Threads: CPU affinity, which RTEMS's C library (as the libc crate binds it) does not
/// offer (`cpus_allowed` and the like are refused on RTEMS).
pub mod thread {
    use super::io::{Errno, Result};

    /// A set of CPUs.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
    pub struct CpuSet([u64; 16]);

    impl CpuSet {
        pub const MAX_CPU: usize = 1024;

        pub const fn new() -> CpuSet {
            CpuSet([0; 16])
        }
        pub fn set(&mut self, cpu: usize) {
            if cpu < Self::MAX_CPU {
                self.0[cpu / 64] |= 1 << (cpu % 64);
            }
        }
        pub fn is_set(&self, cpu: usize) -> bool {
            cpu < Self::MAX_CPU && self.0[cpu / 64] & (1 << (cpu % 64)) != 0
        }
    }

    pub fn sched_getaffinity(pid: Option<super::process::Pid>) -> Result<CpuSet> {
        let _ = pid;
        Err(Errno::NOSYS)
    }

    pub fn sched_setaffinity(pid: Option<super::process::Pid>, set: &CpuSet) -> Result<()> {
        let _ = (pid, set);
        Err(Errno::NOSYS)
    }
}

/// Clocks.
pub mod time {
    use super::io::{Errno, Result};

    /// rustix's `Timespec`.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct Timespec {
        pub tv_sec: i64,
        pub tv_nsec: i64,
    }

    /// The clocks every POSIX system has.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub enum ClockId {
        Realtime,
        Monotonic,
        ProcessCPUTime,
        ThreadCPUTime,
    }

    /// newlib's time.h (the libc crate binds only CLOCK_REALTIME and CLOCK_MONOTONIC, 4).
    const CLOCK_PROCESS_CPUTIME_ID: libc::clockid_t = 2;
    const CLOCK_THREAD_CPUTIME_ID: libc::clockid_t = 3;

    impl ClockId {
        fn raw(self) -> libc::clockid_t {
            match self {
                ClockId::Realtime => libc::CLOCK_REALTIME,
                ClockId::Monotonic => libc::CLOCK_MONOTONIC,
                ClockId::ProcessCPUTime => CLOCK_PROCESS_CPUTIME_ID,
                ClockId::ThreadCPUTime => CLOCK_THREAD_CPUTIME_ID,
            }
        }
    }

    /// A clock named at run time (rustix's has more kinds; RTEMS has only these).
    #[derive(Clone, Copy, Debug)]
    pub enum DynamicClockId<'a> {
        Known(ClockId),
        #[doc(hidden)]
        _Lifetime(std::marker::PhantomData<&'a ()>),
    }

    // tv_nsec is a C long: 32 bits on RTEMS's ARM, 64 on Linux (where the tests build this).
    #[allow(clippy::unnecessary_cast)]
    fn gettime(id: libc::clockid_t) -> Result<Timespec> {
        let mut t = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `t` is a live, writable timespec.
        if unsafe { libc::clock_gettime(id, &mut t) } != 0 {
            return Err(Errno::last());
        }
        Ok(Timespec {
            tv_sec: t.tv_sec as i64,
            tv_nsec: t.tv_nsec as i64,
        })
    }

    /// clock_gettime of a clock every system has (it cannot fail; zero if it did).
    pub fn clock_gettime(id: ClockId) -> Timespec {
        gettime(id.raw()).unwrap_or_default()
    }

    pub fn clock_gettime_dynamic(id: DynamicClockId<'_>) -> Result<Timespec> {
        match id {
            DynamicClockId::Known(c) => gettime(c.raw()),
            DynamicClockId::_Lifetime(_) => Err(Errno::INVAL),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::fd::AsFd;
    use super::fs::{self, Mode, OFlags, SeekFrom};
    use super::io::{self, Errno, IoSlice, IoSliceMut};

    #[test]
    fn files_read_write_seek_and_refuse_what_rtems_lacks() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        let rw = OFlags::RDWR | OFlags::CREATE | OFlags::CLOEXEC;
        let fd = fs::open(&p, rw, Mode::from_raw_mode(0o600)).unwrap();
        assert_eq!(io::pwrite(&fd, b"hello world", 4).unwrap(), 11);
        let mut buf = [0u8; 5];
        assert_eq!(io::pread(&fd, &mut buf, 10).unwrap(), 5);
        assert_eq!(&buf, b"world");
        assert_eq!(fs::fstat(&fd).unwrap().st_size, 15);
        assert_eq!(fs::seek(&fd, SeekFrom::End(0)).unwrap(), 15);
        assert_eq!(fs::seek(&fd, SeekFrom::Start(4)).unwrap(), 4);
        let (mut a, mut b) = ([0u8; 2], [0u8; 3]);
        let n = io::readv(&fd, &mut [IoSliceMut::new(&mut a), IoSliceMut::new(&mut b)]).unwrap();
        assert_eq!((n, &a, &b), (5, b"he", b"llo"));
        fs::seek(&fd, SeekFrom::Start(0)).unwrap();
        assert_eq!(
            io::writev(&fd, &[IoSlice::new(b"ab"), IoSlice::new(b"cd")]).unwrap(),
            4
        );
        let mut c = [0u8; 4];
        assert_eq!(io::read(&fd, &mut c).unwrap(), 4);
        assert_eq!(&c, b"hell");
        assert_eq!(io::write(fd.as_fd(), b"!").unwrap(), 1);
        fs::fsync(&fd).unwrap();
        fs::fdatasync(&fd).unwrap();
        fs::ftruncate(&fd, 2).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"ab");
        // What RTEMS's C library (as bound) lacks answers ENOSYS or EINVAL, not success.
        assert_eq!(
            io::preadv(&fd, &mut [IoSliceMut::new(&mut a)], 0),
            Err(Errno::NOSYS)
        );
        assert_eq!(
            fs::fadvise(&fd, 0, None, fs::Advice::DontNeed),
            Err(Errno::NOSYS)
        );
        assert_eq!(
            fs::open(&p, OFlags::RDONLY | OFlags::DIRECT, Mode::empty()).err(),
            Some(Errno::INVAL)
        );
        assert_eq!(
            fs::open(&p, OFlags::WRONLY | OFlags::DSYNC, Mode::empty()).err(),
            Some(Errno::INVAL)
        );
        // Errors carry errno and read as the system's text.
        let missing = fs::open(d.path().join("no"), OFlags::RDONLY, Mode::empty()).unwrap_err();
        assert_eq!(missing.raw_os_error(), libc::ENOENT);
        assert_eq!(
            std::io::Error::from(missing).kind(),
            std::io::ErrorKind::NotFound
        );
    }

    #[test]
    fn directories_and_names() {
        let d = tempfile::tempdir().unwrap();
        let sub = d.path().join("sub");
        fs::mkdir(&sub, Mode::from_raw_mode(0o700)).unwrap();
        assert_eq!(
            fs::mkdir(&sub, Mode::empty())
                .err()
                .map(|e| e.raw_os_error()),
            Some(libc::EEXIST)
        );
        assert!(fs::stat(&sub).is_ok() && fs::lstat(&sub).is_ok());
        let f = sub.join("f");
        drop(
            fs::open(
                &f,
                OFlags::WRONLY | OFlags::CREATE,
                Mode::from_raw_mode(0o600),
            )
            .unwrap(),
        );
        assert_eq!(
            fs::rmdir(&sub).err().map(|e| e.raw_os_error()),
            Some(libc::ENOTEMPTY)
        );
        fs::unlink(&f).unwrap();
        fs::rmdir(&sub).unwrap();
        assert!(fs::stat(&sub).is_err());
        assert_eq!(fs::stat("a\0b").err(), Some(Errno::INVAL));
    }

    #[test]
    fn process_clock_and_cpus() {
        assert_eq!(
            super::process::getpid().as_raw_nonzero().get() as u32,
            std::process::id()
        );
        // SAFETY: geteuid has no preconditions.
        assert_eq!(super::process::geteuid().as_raw(), unsafe {
            libc::geteuid()
        });
        assert!(super::param::page_size() >= 4096);
        use super::time::{clock_gettime, clock_gettime_dynamic, ClockId, DynamicClockId};
        let a = clock_gettime(ClockId::Monotonic);
        let b = clock_gettime_dynamic(DynamicClockId::Known(ClockId::Monotonic)).unwrap();
        assert!((b.tv_sec, b.tv_nsec) >= (a.tv_sec, a.tv_nsec) && a.tv_sec > 0);
        let cpu = clock_gettime_dynamic(DynamicClockId::Known(ClockId::ThreadCPUTime)).unwrap();
        assert!(cpu.tv_sec >= 0 && (0..1_000_000_000).contains(&cpu.tv_nsec));
        let mut set = super::thread::CpuSet::new();
        set.set(3);
        set.set(super::thread::CpuSet::MAX_CPU);
        assert!(set.is_set(3) && !set.is_set(2) && !set.is_set(super::thread::CpuSet::MAX_CPU));
        assert_eq!(super::thread::sched_getaffinity(None), Err(Errno::NOSYS));
        assert_eq!(fs::major(0x0000_0005_0000_0007), 5);
        assert_eq!(fs::minor(0x0000_0005_0000_0007), 7);
    }
}
