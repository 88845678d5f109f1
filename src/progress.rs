//! Per-thread progress published for the status line (relaxed atomics, written by the job
//! thread at most every 100 ms, read by the status thread once per interval).

use flexio_stats::ThreadStats;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};
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
    /// Steady state: the job's (IOPS, bytes/s) sample of every check interval, appended by
    /// the job thread once per interval; and the main thread's request to stop.
    pub ss_samples: Mutex<Vec<(u64, u64)>>,
    pub ss_stop: std::sync::atomic::AtomicBool,
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
        self.state.store(s as u8, Ordering::Relaxed);
    }
    pub fn state_char(&self) -> char {
        self.state.load(Ordering::Relaxed) as char
    }
}
