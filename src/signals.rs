//! SIGINT / SIGTERM: the first one asks every job to stop (the report is still printed,
//! exit status 128 as fio's); a second SIGINT or SIGTERM ends the process at once.

use signal_hook::consts::{SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

pub struct Signals {
    int: Arc<AtomicBool>,
    term: Arc<AtomicBool>,
}

impl Signals {
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
    };
    for (sig, flag) in [(SIGINT, &s.int), (SIGTERM, &s.term)] {
        // Registered first, so it sees the flag before this signal sets it: only a second
        // signal finds it set and exits.
        let _ = signal_hook::flag::register_conditional_shutdown(sig, 130, flag.clone());
        let _ = signal_hook::flag::register(sig, flag.clone());
        let _ = signal_hook::flag::register(sig, terminate.clone());
    }
    s
}
