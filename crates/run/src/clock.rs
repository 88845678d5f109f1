//! The time source, in nanoseconds since the run started.
//!
//! * `cpu` (fio's `clocksource=cpu`): the CPU's time-stamp counter, scaled to ns with a
//!   factor calibrated against CLOCK_MONOTONIC at start. Used by default when it is
//!   trustworthy: the CPU says its TSC is invariant (`constant_tsc`, `nonstop_tsc`) and the
//!   kernel itself keeps time with it (current clocksource `tsc`, so it is synchronised
//!   across CPUs). About half the cost of a vDSO clock_gettime on the machines measured.
//! * `clock_gettime`: CLOCK_MONOTONIC (the fallback).
//! * `gettimeofday`: CLOCK_REALTIME with microsecond resolution, as fio's.
//!
//! The clock measures itself at start (read cost, resolution); both are reported in the
//! JSON output's `flexio` section.

use flexio_engine::os;
use flexio_engine::os::time::{clock_gettime, ClockId};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Tsc,
    Monotonic,
    Gettimeofday,
    /// `gtod_cpu`: a timekeeper thread on its own CPU keeps the time (read from the
    /// underlying source) in shared memory; readers load it ([`Timekeeper`]).
    Offloaded,
}

/// fio's `gtod_cpu`: one thread, pinned to a CPU set aside for it, does nothing but read
/// the clock and store the time; the job threads' clock then reads that stored value
/// instead of reading the clock themselves.
pub struct Timekeeper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Timekeeper {
    /// Start keeping `inner`'s time on `cpu`; returns the clock that reads it. A CPU the
    /// thread cannot be placed on gets fio's message, and the thread keeps time unpinned.
    pub fn start(inner: Clock, cpu: usize) -> (Clock, Timekeeper) {
        use crate::progress::AtomicU64;
        use std::sync::atomic::{AtomicBool, Ordering};
        // The published time, ns since the inner clock started: one cell per keeper (runs
        // of a server's sessions may overlap), 8 bytes kept for the life of the process.
        let cell: &'static AtomicU64 = Box::leak(Box::new(AtomicU64::new(inner.now())));
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("flexio-gtod".into())
            .spawn(move || {
                let mut set = os::thread::CpuSet::new();
                let pinned = cpu < os::thread::CpuSet::MAX_CPU && {
                    set.set(cpu);
                    os::thread::sched_setaffinity(None, &set).is_ok()
                };
                if !pinned {
                    eprintln!("gtod: setaffinity failed");
                }
                while !s.load(Ordering::Relaxed) {
                    cell.store(inner.now(), Ordering::Relaxed);
                    std::hint::spin_loop();
                }
            })
            .ok();
        (
            Clock {
                source: Source::Offloaded,
                gtod: Some(cell),
                ..inner
            },
            Timekeeper { stop, thread },
        )
    }
}

impl Drop for Timekeeper {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Source {
    pub fn name(self) -> &'static str {
        match self {
            Source::Tsc => "cpu",
            Source::Monotonic => "clock_gettime",
            Source::Gettimeofday => "gettimeofday",
            Source::Offloaded => "gtod_cpu",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    source: Source,
    /// Raw reading at the start (TSC ticks or ns).
    base: u64,
    /// TSC: ns per tick as a 32.32 fixed-point factor.
    mult: u64,
    /// [`Source::Offloaded`]: where the timekeeper publishes the time.
    gtod: Option<&'static crate::progress::AtomicU64>,
}

#[inline]
fn mono_ns() -> u64 {
    let t = clock_gettime(ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

#[inline]
fn realtime_us_as_ns() -> u64 {
    let t = clock_gettime(ClockId::Realtime);
    (t.tv_sec as u64 * 1_000_000 + t.tv_nsec as u64 / 1000) * 1000
}

/// Whether the TSC can serve as the clock (see the module documentation); `Err` says why
/// not.
pub fn tsc_usable() -> Result<(), String> {
    flexio_engine::sys::rdtsc().ok_or("this CPU architecture has no TSC")?;
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let flags = cpuinfo
        .lines()
        .find(|l| l.starts_with("flags"))
        .unwrap_or("");
    for f in ["constant_tsc", "nonstop_tsc"] {
        if !flags.split_whitespace().any(|x| x == f) {
            return Err(format!("the CPU does not report {f}"));
        }
    }
    let cs =
        std::fs::read_to_string("/sys/devices/system/clocksource/clocksource0/current_clocksource")
            .unwrap_or_default();
    if cs.trim() != "tsc" {
        return Err(format!(
            "the kernel keeps time with '{}', not the TSC",
            cs.trim()
        ));
    }
    Ok(())
}

impl Clock {
    /// The default clock: the TSC where usable, else CLOCK_MONOTONIC.
    pub fn new() -> Self {
        Self::with_source(if tsc_usable().is_ok() {
            Source::Tsc
        } else {
            Source::Monotonic
        })
    }

    pub fn with_source(source: Source) -> Self {
        match source {
            Source::Tsc => {
                let mult = calibrate_tsc();
                Clock {
                    source,
                    base: flexio_engine::sys::rdtsc().unwrap_or(0),
                    mult,
                    gtod: None,
                }
            }
            Source::Monotonic => Clock {
                source,
                base: mono_ns(),
                mult: 0,
                gtod: None,
            },
            Source::Gettimeofday => Clock {
                source,
                base: realtime_us_as_ns(),
                mult: 0,
                gtod: None,
            },
            // Only a Timekeeper makes one; by itself, the monotonic clock.
            Source::Offloaded => Self::with_source(Source::Monotonic),
        }
    }

    pub fn source(&self) -> Source {
        self.source
    }

    /// Nanoseconds since the clock was created.
    #[inline(always)]
    pub fn now(&self) -> u64 {
        match self.source {
            Source::Tsc => {
                let t = flexio_engine::sys::rdtsc().unwrap_or(0);
                ((t.saturating_sub(self.base) as u128 * self.mult as u128) >> 32) as u64
            }
            Source::Monotonic => mono_ns().saturating_sub(self.base),
            Source::Gettimeofday => realtime_us_as_ns().saturating_sub(self.base),
            Source::Offloaded => self
                .gtod
                .map_or(0, |c| c.load(std::sync::atomic::Ordering::Relaxed)),
        }
    }

    /// The clock's own cost: average ns per reading, and the smallest step it shows.
    pub fn self_test(&self) -> (f64, u64) {
        let n = 20_000u64;
        let t0 = mono_ns();
        let mut last = self.now();
        let mut step = u64::MAX;
        for _ in 0..n {
            let v = self.now();
            if v > last {
                step = step.min(v - last);
            }
            last = v;
        }
        let cost = (mono_ns() - t0) as f64 / n as f64;
        (cost, if step == u64::MAX { 0 } else { step })
    }
}

/// ns per TSC tick (32.32 fixed point), measured against CLOCK_MONOTONIC over ~5 ms; each
/// end is bracketed by two TSC readings so that a preemption cannot skew it.
fn calibrate_tsc() -> u64 {
    let sample = || loop {
        let a = flexio_engine::sys::rdtsc().unwrap_or(0);
        let m = mono_ns();
        let b = flexio_engine::sys::rdtsc().unwrap_or(0);
        if b.wrapping_sub(a) < 10_000 {
            return (a / 2 + b / 2, m);
        }
    };
    let (t0, m0) = sample();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let (t1, m1) = sample();
    let ticks = t1.saturating_sub(t0).max(1);
    (((m1 - m0) as u128) << 32)
        .checked_div(ticks as u128)
        .unwrap_or(0) as u64
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}

/// A clock by its `clock_gettime` id (fio's `log_alternate_epoch_clock_id`); Linux's
/// numbering (the ids fio documents).
#[cfg(any(target_os = "linux", target_os = "android"))]
fn clock_by_id(id: i32) -> Option<os::time::DynamicClockId<'static>> {
    use os::time::{ClockId, DynamicClockId as D};
    Some(match id {
        0 => D::Known(ClockId::Realtime),
        1 => D::Known(ClockId::Monotonic),
        2 => D::Known(ClockId::ProcessCPUTime),
        3 => D::Known(ClockId::ThreadCPUTime),
        4 => D::Known(ClockId::MonotonicRaw),
        5 => D::Known(ClockId::RealtimeCoarse),
        6 => D::Known(ClockId::MonotonicCoarse),
        7 => D::Boottime,
        8 => D::RealtimeAlarm,
        9 => D::BoottimeAlarm,
        11 => D::Tai,
        _ => return None,
    })
}

/// Elsewhere only the portable clocks, by Linux's ids.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn clock_by_id(id: i32) -> Option<os::time::DynamicClockId<'static>> {
    use os::time::{ClockId, DynamicClockId as D};
    Some(match id {
        0 => D::Known(ClockId::Realtime),
        1 => D::Known(ClockId::Monotonic),
        2 => D::Known(ClockId::ProcessCPUTime),
        3 => D::Known(ClockId::ThreadCPUTime),
        _ => return None,
    })
}

/// Milliseconds since the epoch of clock `id`.
pub fn clock_ms(id: i32) -> Result<u64, String> {
    let c = clock_by_id(id).ok_or_else(|| format!("unknown clock id {id}"))?;
    let t = os::time::clock_gettime_dynamic(c)
        .map_err(|e| format!("clock_gettime of clock id {id}: {e}"))?;
    Ok(t.tv_sec.max(0) as u64 * 1000 + t.tv_nsec.max(0) as u64 / 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_source_tracks_monotonic_time() {
        for s in [Source::Tsc, Source::Monotonic, Source::Gettimeofday] {
            if s == Source::Tsc && tsc_usable().is_err() {
                eprintln!("SKIP: TSC not usable here: {:?}", tsc_usable());
                continue;
            }
            let c = Clock::with_source(s);
            let m0 = mono_ns();
            let c0 = c.now();
            std::thread::sleep(std::time::Duration::from_millis(200));
            let dm = mono_ns() - m0;
            let dc = c.now() - c0;
            let err = (dc as f64 - dm as f64).abs() / dm as f64;
            assert!(err < 0.002, "{s:?}: {dc} ns vs {dm} ns");
            let (cost, res) = c.self_test();
            // A reading costs well under a microsecond natively and a few under qemu-user;
            // a tenth of a millisecond would mean a broken clock (an emulated CPU on a busy
            // machine reached 11.5 µs).
            assert!(cost > 0.0 && cost < 100_000.0, "{s:?}: {cost}");
            if cost > 500.0 {
                // Two readings a microsecond apart cannot be taken: the smallest step seen
                // is the reading's cost, not the clock's resolution (emulated CPUs).
                eprintln!("SKIP: {s:?} resolution check: a reading costs {cost:.0} ns here");
            } else {
                assert!(res <= 1000, "{s:?}: resolution {res}");
            }
        }
    }

    #[test]
    fn an_offloaded_clock_reads_the_keepers_time() {
        let inner = Clock::with_source(Source::Monotonic);
        // A CPU that does not exist: the keeper says so and keeps time unpinned (a pinned
        // one could wait behind the other tests on a busy machine).
        let (c, keeper) = Timekeeper::start(inner, os::thread::CpuSet::MAX_CPU + 1);
        assert_eq!(c.source(), Source::Offloaded);
        let a = c.now();
        let t = std::time::Instant::now();
        // The published time moves with the clock, and stays close to it.
        while c.now() < a + 40_000_000 || inner.now().saturating_sub(c.now()) > 20_000_000 {
            assert!(
                t.elapsed() < std::time::Duration::from_secs(5),
                "the keeper publishes no current time: {} vs {}",
                c.now(),
                inner.now()
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        drop(keeper);
        let frozen = c.now();
        std::thread::sleep(std::time::Duration::from_millis(5));
        assert_eq!(c.now(), frozen, "no keeper, no new time");
    }
}
