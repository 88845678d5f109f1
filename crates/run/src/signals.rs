//! SIGINT / SIGTERM: the first one asks every job to stop (the report is still printed,
//! exit status 128 as fio's). Another one within [`GRACE`] of the first is part of the same
//! interrupt (`timeout -s INT` signals the process and then its process group, so two arrive
//! at once; fio never gives up its report for that); one after it ends the process at once
//! (exit status 130), for a user who does not want to wait for the jobs to stop.
//! SIGUSR1 (or a file `fio-dump-status` in $TMPDIR) prints the statistics so far.
//!
//! RTEMS: no handlers are installed (signal-hook does not build there, and an RTEMS
//! application gets no signals from a terminal); the program that embeds the run stops it
//! through `session::interrupt`, and the status file still works.

#[cfg(target_os = "rtems")]
use libc::{SIGINT, SIGTERM};
#[cfg(not(target_os = "rtems"))]
use signal_hook::consts::{SIGINT, SIGTERM, SIGUSR1};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[derive(Clone, Default)]
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

/// RTEMS: no handlers (see the module's text); `terminate` is left to the caller.
#[cfg(target_os = "rtems")]
pub fn install(terminate: Arc<AtomicBool>) -> Signals {
    let _ = terminate;
    Signals::default()
}

/// Install the handlers. `terminate` is set on the first signal.
#[cfg(not(target_os = "rtems"))]
pub fn install(terminate: Arc<AtomicBool>) -> Signals {
    let s = Signals {
        int: Arc::new(AtomicBool::new(false)),
        term: Arc::new(AtomicBool::new(false)),
        usr1: Arc::new(AtomicBool::new(false)),
    };
    let _ = signal_hook::flag::register(SIGUSR1, s.usr1.clone());
    for (sig, flag) in [(SIGINT, &s.int), (SIGTERM, &s.term)] {
        let _ = signal_hook::flag::register(sig, flag.clone());
        let _ = signal_hook::flag::register(sig, terminate.clone());
    }
    // Repeats are judged outside the handler, by a thread that sees each delivery.
    if let Ok(mut it) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) {
        let _ = std::thread::Builder::new()
            .name("flexio-signals".into())
            .spawn(move || {
                let mut first: Option<Instant> = None;
                for _ in it.forever() {
                    let now = Instant::now();
                    if repeat_aborts(&mut first, now) {
                        eprintln!("flexio: interrupted again: exiting without the report");
                        std::process::exit(130);
                    }
                }
            });
    }
    s
}

/// A second SIGINT/SIGTERM within this time of the first belongs to the same interrupt.
pub const GRACE: Duration = Duration::from_secs(1);

/// Whether an interrupt arriving at `now` ends the process: not the first one (which is
/// recorded), nor one within [`GRACE`] of the first.
pub fn repeat_aborts(first: &mut Option<Instant>, now: Instant) -> bool {
    match *first {
        None => {
            *first = Some(now);
            false
        }
        Some(t) => now.saturating_duration_since(t) > GRACE,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_late_repeat_aborts() {
        let t0 = Instant::now();
        let mut first = None;
        assert!(!repeat_aborts(&mut first, t0));
        assert!(!repeat_aborts(&mut first, t0 + Duration::from_millis(1)));
        assert!(!repeat_aborts(&mut first, t0 + GRACE));
        assert!(repeat_aborts(
            &mut first,
            t0 + GRACE + Duration::from_millis(1)
        ));
    }
}
