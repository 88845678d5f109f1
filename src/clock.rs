//! The time source: CLOCK_MONOTONIC in nanoseconds since the run started.

use rustix::time::{clock_gettime, ClockId};

#[derive(Clone, Copy, Debug)]
pub struct Clock {
    base: u64,
}

#[inline]
fn raw_ns() -> u64 {
    let t = clock_gettime(ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

impl Clock {
    pub fn new() -> Self {
        Clock { base: raw_ns() }
    }
    /// Nanoseconds since the clock was created.
    #[inline]
    pub fn now(&self) -> u64 {
        raw_ns().saturating_sub(self.base)
    }
}

impl Default for Clock {
    fn default() -> Self {
        Self::new()
    }
}
