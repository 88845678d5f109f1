//! SIGINT / SIGTERM: the first one asks every job to stop (the report is still printed,
//! exit status 128 as fio's); a second SIGINT or SIGTERM ends the process at once.
//! SIGUSR1 (or a file `fio-dump-status` in $TMPDIR) prints the statistics so far.

use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR1};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

#[derive(Clone)]
pub struct Signals {
    int: Arc<AtomicBool>,
    term: Arc<AtomicBool>,
    usr1: Arc<AtomicBool>,
}

impl Signals {
    /// Whether SIGUSR1 arrived since the last call.
    pub fn take_usr1(&self) -> bool {
        self.usr1.swap(false, Ordering::Relaxed)
    }
    pub fn any(&self) -> bool {
        self.int.load(Ordering::Relaxed) || self.term.load(Ordering::Relaxed)
    }
    /// The signal number that arrived (0 if none).
    pub fn number(&self) -> i32 {
        if self.int.load(Ordering::Relaxed) {
            SIGINT
        } else if self.term.load(Ordering::Relaxed) {
            SIGTERM
        } else {
            0
        }
    }
}

/// Install the handlers. `terminate` is set on the first signal.
pub fn install(terminate: Arc<AtomicBool>) -> Signals {
    let s = Signals {
        int: Arc::new(AtomicBool::new(false)),
        term: Arc::new(AtomicBool::new(false)),
        usr1: Arc::new(AtomicBool::new(false)),
    };
    let _ = signal_hook::flag::register(SIGUSR1, s.usr1.clone());
    for (sig, flag) in [(SIGINT, &s.int), (SIGTERM, &s.term)] {
        // Registered first, so it sees the flag before this signal sets it: only a second
        // signal finds it set and exits.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, flag.clone());
        let _ = signal_hook::flag::register(sig, flag.clone());
        let _ = signal_hook::flag::register(sig, terminate.clone());
    }
    s
}

/// fio's status trigger file: `$TMPDIR/fio-dump-status` (else `$TEMP`, else /tmp). Checked
/// at most once a second; removed when found.
pub fn dump_file_requested(next_check_ns: &mut u64, now_ns: u64) -> bool {
    if now_ns < *next_check_ns {
        return false;
    }
    *next_check_ns = now_ns + 1_000_000_000;
    let dir = std::env::var_os("TMPDIR")
        .or_else(|| std::env::var_os("TEMP"))
        .unwrap_or_else(|| "/tmp".into());
    let path = std::path::Path::new(&dir).join("fio-dump-status");
    if path.exists() {
        let _ = std::fs::remove_file(&path);
        return true;
    }
    false
}
