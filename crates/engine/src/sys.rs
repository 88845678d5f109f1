//! Small system-call wrappers the core needs but rustix does not offer. The Linux-only ones
//! (per-thread descriptor table and resource usage, I/O priorities) live in `platform.rs`
//! with their fallbacks and are re-exported here.

pub use crate::platform::{ioprio_get_self, ioprio_set_self, private_fd_table, thread_usage};
#[cfg(not(target_os = "rtems"))]
use std::io;

/// The CPU's time-stamp counter (x86-64), or `None` on other architectures.
#[inline(always)]
pub fn rdtsc() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions: it reads a counter and touches no memory. It
        // is available on every x86-64 CPU.
        Some(unsafe { core::arch::x86_64::_rdtsc() })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Resource usage of the calling thread.
#[derive(Clone, Copy, Debug, Default)]
pub struct Usage {
    pub utime_us: u64,
    pub stime_us: u64,
    /// Voluntary + involuntary context switches.
    pub ctx: u64,
    pub majflt: u64,
    pub minflt: u64,
}

impl Usage {
    pub fn delta(&self, start: &Usage) -> Usage {
        Usage {
            utime_us: self.utime_us.saturating_sub(start.utime_us),
            stime_us: self.stime_us.saturating_sub(start.stime_us),
            ctx: self.ctx.saturating_sub(start.ctx),
            majflt: self.majflt.saturating_sub(start.majflt),
            minflt: self.minflt.saturating_sub(start.minflt),
        }
    }
}

/// End the process as a write into a closed pipe ends a program that keeps SIGPIPE's
/// default action, fio among them: killed by SIGPIPE (a shell shows status 141), nothing
/// printed. flexio keeps the Rust runtime's SIG_IGN for its whole life, so sockets and the
/// engines' pipes get EPIPE as an error, never a signal; only a reader of stdout that has
/// gone (`flexio --help | head -3`) comes here (`flexio_run::notes::stdout`).
pub fn die_of_sigpipe() -> ! {
    // SAFETY: signal(2) with SIG_DFL installs no handler, so no code of ours ever runs in
    // signal context; kill(2) of our own pid with a valid signal number touches no memory.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        libc::kill(libc::getpid(), libc::SIGPIPE);
    }
    // Only where every thread blocks SIGPIPE (none of flexio's does): the status a shell
    // would show for the signal.
    std::process::exit(128 + libc::SIGPIPE)
}

/// Configured CPUs (sysconf(_SC_NPROCESSORS_CONF)), fio's `$ncpus`.
pub fn cpus_configured() -> u64 {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_CONF) };
    if n > 0 {
        n as u64
    } else {
        1
    }
}

/// Local time as ctime(3) prints it, without the newline ("Sun Nov 22 04:38:15 2026").
pub fn ctime(secs: i64) -> String {
    // time_t is 32 bits in the libc bindings of 32-bit musl: a time it cannot hold has no
    // local-time text rather than a wrapped one.
    #[allow(clippy::useless_conversion)] // i64 -> i64 on 64-bit targets
    let Some(t) = secs.try_into().ok() else {
        return String::new();
    };
    let mut tm = std::mem::MaybeUninit::<libc::tm>::zeroed();
    // SAFETY: both pointers are valid; localtime_r writes the tm structure.
    let ok = unsafe { !libc::localtime_r(&t, tm.as_mut_ptr()).is_null() };
    if !ok {
        return String::new();
    }
    // SAFETY: localtime_r succeeded and initialised tm.
    let tm = unsafe { tm.assume_init() };
    const DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    format!(
        "{} {} {:2} {:02}:{:02}:{:02} {}",
        DAYS[tm.tm_wday.clamp(0, 6) as usize],
        MONTHS[tm.tm_mon.clamp(0, 11) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec,
        tm.tm_year + 1900
    )
}

/// setsockopt(TCP_MAXSEG): the TCP maximum segment size (rustix has no wrapper for it).
#[cfg(not(target_os = "rtems"))]
pub fn set_tcp_maxseg(fd: rustix::fd::BorrowedFd<'_>, mss: u32) -> io::Result<()> {
    use rustix::fd::AsRawFd;
    let v: libc::c_int = mss.min(i32::MAX as u32) as libc::c_int;
    // SAFETY: `fd` is an open descriptor borrowed for the call; the option value points to
    // a live c_int whose size is passed, and the kernel only reads it.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_MAXSEG,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(any(target_os = "linux", target_os = "android"))]
/// vmsplice(2) `buf` into the pipe whose write end is `pipe_w` (as much as fits, at least
/// one byte unless it fails).
pub fn vmsplice_from(pipe_w: &rustix::fd::OwnedFd, buf: &[u8]) -> io::Result<usize> {
    let iov = [rustix::pipe::IoSliceRaw::from_slice(buf)];
    // SAFETY: without SPLICE_F_GIFT the kernel copies (or references until consumed) the
    // pages of `buf`, which outlives the call; the caller consumes the pipe (splice to the
    // socket) before the buffer is used again.
    unsafe { rustix::pipe::vmsplice(pipe_w, &iov, rustix::pipe::SpliceFlags::empty()) }
        .map_err(|e| io::Error::from_raw_os_error(e.raw_os_error()))
}

#[cfg(any(target_os = "linux", target_os = "android"))]
/// vmsplice(2) from the pipe whose read end is `pipe_r` into `buf` (a copy out of the
/// pipe, as readv would).
pub fn vmsplice_to(pipe_r: &rustix::fd::OwnedFd, buf: &mut [u8]) -> io::Result<usize> {
    let iov = [rustix::pipe::IoSliceRaw::from_slice_mut(buf)];
    // SAFETY: `buf` is a live, exclusively borrowed slice of `len` bytes for the call; the
    // kernel writes at most that many bytes into it.
    unsafe { rustix::pipe::vmsplice(pipe_r, &iov, rustix::pipe::SpliceFlags::empty()) }
        .map_err(|e| io::Error::from_raw_os_error(e.raw_os_error()))
}

#[cfg(any(target_os = "linux", target_os = "android"))]
/// EXT4_IOC_MOVE_EXT's argument (linux/ext4.h `struct move_extent`).
#[repr(C)]
#[derive(Default)]
pub struct MoveExtent {
    pub reserved: u32,
    pub donor_fd: u32,
    pub orig_start: u64,
    pub donor_start: u64,
    pub len: u64,
    pub moved_len: u64,
}

#[cfg(any(target_os = "linux", target_os = "android"))]
/// `_IOWR('f', 15, struct move_extent)`.
const EXT4_IOC_MOVE_EXT: libc::c_ulong = (3 << 30)
    | ((std::mem::size_of::<MoveExtent>() as libc::c_ulong) << 16)
    | ((b'f' as libc::c_ulong) << 8)
    | 15;

#[cfg(any(target_os = "linux", target_os = "android"))]
/// ioctl(EXT4_IOC_MOVE_EXT): exchange `me.len` blocks of `fd` with the donor's (ext4's
/// online defragmentation step). `me.moved_len` says how many moved, also on failure.
pub fn ext4_move_ext(fd: rustix::fd::BorrowedFd<'_>, me: &mut MoveExtent) -> io::Result<()> {
    use rustix::fd::AsRawFd;
    // SAFETY: `fd` is open for the call; `me` is a live, exclusively borrowed struct with the
    // kernel's layout (repr(C), 40 bytes, the size encoded in the request number), which the
    // kernel reads and writes back (moved_len) within the call.
    let r = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            EXT4_IOC_MOVE_EXT as _,
            me as *mut MoveExtent,
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_and_time() {
        let u = thread_usage().unwrap();
        let mut x = 0u64;
        for i in 0..1_000_000u64 {
            x = x.wrapping_add(i * i);
        }
        assert!(x > 0);
        let v = thread_usage().unwrap();
        assert!(v.utime_us + v.stime_us >= u.utime_us + u.stime_us);
        assert!(cpus_configured() >= 1);
        let s = ctime(0);
        assert_eq!(s.len(), 24, "{s}");
    }
}
