//! Small system-call wrappers the core needs but rustix does not offer. The Linux-only ones
//! (per-thread descriptor table and resource usage, I/O priorities) live in `platform.rs`
//! with their fallbacks and are re-exported here.

pub use crate::platform::{ioprio_get_self, ioprio_set_self, private_fd_table, thread_usage};

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
