//! Per-thread progress published for the status line (relaxed atomics, written by the job
//! thread at most every 100 ms, read by the status thread once per interval).

use flexio_stats::ThreadStats;
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

#[cfg(not(target_has_atomic = "64"))]
pub use counter64::AtomicU64;
/// A 64-bit counter shared between threads: the standard atomic where the target has 64-bit
/// atomics, a small lock where it does not (32-bit MIPS and PowerPC). The values are
/// published at most every 100 ms, never per I/O, so the lock costs nothing measurable.
#[cfg(target_has_atomic = "64")]
pub use std::sync::atomic::AtomicU64;

#[cfg(not(target_has_atomic = "64"))]
mod counter64 {
    use std::sync::atomic::Ordering;
    use std::sync::Mutex;

    /// `std::sync::atomic::AtomicU64`'s methods that flexio uses, over a mutex.
    #[derive(Debug, Default)]
    pub struct AtomicU64(Mutex<u64>);

    impl AtomicU64 {
        pub const fn new(v: u64) -> Self {
            AtomicU64(Mutex::new(v))
        }
        fn get(&self) -> std::sync::MutexGuard<'_, u64> {
            // A panicking holder cannot leave a u64 half-written.
            self.0.lock().unwrap_or_else(|e| e.into_inner())
        }
        pub fn load(&self, _: Ordering) -> u64 {
            *self.get()
        }
        pub fn store(&self, v: u64, _: Ordering) {
            *self.get() = v;
        }
        pub fn fetch_add(&self, v: u64, _: Ordering) -> u64 {
            let mut g = self.get();
            let old = *g;
            *g = old.wrapping_add(v);
            old
        }
        pub fn fetch_sub(&self, v: u64, _: Ordering) -> u64 {
            let mut g = self.get();
            let old = *g;
            *g = old.wrapping_sub(v);
            old
        }
    }
}
use std::sync::Mutex;

/// fio's run-state letters for the status line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum RunState {
    NotStarted = b'P',
    Initialized = b'I',
    Ramp = b'/',
    ReadSeq = b'R',
    ReadRand = b'r',
    WriteSeq = b'W',
    WriteRand = b'w',
    MixedSeq = b'M',
    MixedRand = b'm',
    TrimSeq = b'D',
    TrimRand = b'd',
    Verifying = b'V',
    Finishing = b'f',
    Exited = b'_',
}

/// fio's name of the run state a status letter stands for (`--debug=process`).
fn fio_runstate(c: u8) -> &'static str {
    match c {
        b'P' => "NOT_CREATED",
        b'I' => "INITIALIZED",
        b'/' => "RAMP",
        b'V' => "VERIFYING",
        b'f' => "FINISHING",
        b'_' => "EXITED",
        _ => "RUNNING",
    }
}

#[repr(align(64))]
pub struct Progress {
    pub bytes: [AtomicU64; 3],
    pub ios: [AtomicU64; 3],
    pub state: AtomicU8,
    pub files: AtomicU32,
    /// Thread id of the job thread (0 until it starts).
    pub tid: std::sync::atomic::AtomicI32,
    /// Last snapshot generation this thread answered (see RunCtx::snapshot_req).
    pub snap_gen: AtomicU64,
    /// The statistics so far, copied on request (status reports); locked only then.
    pub snapshot: Mutex<Option<ThreadStats>>,
    /// Steady state: the job's sample of every check interval, appended by the job thread
    /// once per interval; and the main thread's request to stop.
    pub ss_samples: Mutex<Vec<SsSample>>,
    pub ss_stop: std::sync::atomic::AtomicBool,
}

/// One steady-state check interval of one job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SsSample {
    pub iops: u64,
    /// Bytes/s.
    pub bw: u64,
    /// Completion latencies of the interval's I/Os: their sum (ns) and count.
    pub lat_sum: u64,
    pub lat_n: u64,
    /// The same IOPS and bytes/s per direction (read, write, trim), for flexio's
    /// `ss_direction`.
    pub dirs: [(u64, u64); 3],
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            bytes: Default::default(),
            ios: Default::default(),
            state: AtomicU8::new(RunState::NotStarted as u8),
            files: AtomicU32::new(0),
            tid: std::sync::atomic::AtomicI32::new(0),
            snap_gen: AtomicU64::new(0),
            snapshot: Mutex::new(None),
            ss_samples: Mutex::new(Vec::new()),
            ss_stop: std::sync::atomic::AtomicBool::new(false),
        }
    }
}

impl Progress {
    pub fn set_state(&self, s: RunState) {
        let old = self.state.swap(s as u8, Ordering::Relaxed);
        if crate::debug::on(crate::debug::Cat::Process) {
            let (a, b) = (fio_runstate(old), fio_runstate(s as u8));
            if a != b {
                let tid = self.tid.load(Ordering::Relaxed);
                crate::debug::log(
                    crate::debug::Cat::Process,
                    &format!("pid={tid}: runstate {a} -> {b}"),
                );
            }
        }
    }
    pub fn state_char(&self) -> char {
        self.state.load(Ordering::Relaxed) as char
    }
}
