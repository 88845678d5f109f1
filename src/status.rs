//! The live status line (fio's `Jobs: ... [eta ...]`), printed on stderr.

use crate::plan::ThreadPlan;
use crate::progress::Progress;
use flexio_output::status::{line, RateLimits};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Runs until `done` is set, redrawing the line every `interval`.
pub fn spawn(
    plans: Vec<ThreadPlan>,
    progress: Arc<Vec<Progress>>,
    done: Arc<AtomicBool>,
    interval: Duration,
    newline_every: Option<Duration>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let start = Instant::now();
        let mut last_len = 0usize;
        let mut last_bytes = [0u64; 3];
        let mut last_ios = [0u64; 3];
        let mut last_t = Instant::now();
        let mut last_newline = Instant::now();
        let mut err = std::io::stderr();
        while !done.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
            if last_t.elapsed() < interval {
                continue;
            }
            let dt = last_t.elapsed().as_secs_f64();
            last_t = Instant::now();
            let states: Vec<char> = progress.iter().map(|p| p.state_char()).collect();
            let running = states.iter().filter(|c| !matches!(c, '_' | 'P')).count();
            let files: u32 = progress
                .iter()
                .map(|p| p.files.load(Ordering::Relaxed))
                .sum();
            let mut bytes = [0u64; 3];
            let mut ios = [0u64; 3];
            for p in progress.iter() {
                for d in 0..3 {
                    bytes[d] += p.bytes[d].load(Ordering::Relaxed);
                    ios[d] += p.ios[d].load(Ordering::Relaxed);
                }
            }
            let mut rates = [0u64; 3];
            let mut iops = [0u64; 3];
            for d in 0..3 {
                rates[d] = (bytes[d].saturating_sub(last_bytes[d]) as f64 / dt) as u64;
                iops[d] = (ios[d].saturating_sub(last_ios[d]) as f64 / dt) as u64;
            }
            last_bytes = bytes;
            last_ios = ios;
            let elapsed = start.elapsed().as_secs();
            let eta = estimate(&plans, &progress, elapsed);
            let pct = match eta {
                Some(e) if elapsed >= 3 => {
                    Some(100.0 * elapsed as f64 / (elapsed + e).max(1) as f64)
                }
                _ => None,
            };
            let mut limits = RateLimits::default();
            for (p, st) in plans.iter().zip(&states) {
                if !matches!(st, '_' | 'P' | 'E') {
                    limits.add(p.control.rate_sums);
                }
            }
            let l = line(running, files, &states, pct, rates, iops, eta, &limits);
            let pad = last_len.saturating_sub(l.len());
            let _ = write!(err, "{l}{}\r", " ".repeat(pad));
            if let Some(nl) = newline_every {
                if last_newline.elapsed() >= nl {
                    let _ = writeln!(err);
                    last_newline = Instant::now();
                }
            }
            let _ = err.flush();
            last_len = l.len();
        }
        if last_len > 0 {
            let _ = write!(err, "{}\r", " ".repeat(last_len));
            let _ = err.flush();
        }
    })
}

/// Remaining seconds: time-based jobs by their runtime, size-based ones by progress.
pub(crate) fn estimate(plans: &[ThreadPlan], progress: &[Progress], elapsed: u64) -> Option<u64> {
    let mut eta = 0u64;
    for (p, pr) in plans.iter().zip(progress) {
        if pr.state_char() == '_' {
            continue;
        }
        let by_time = p
            .control
            .time_limit_us
            .map(|us| (us / 1_000_000).saturating_sub(elapsed));
        let done: u64 = (0..3).map(|d| pr.bytes[d].load(Ordering::Relaxed)).sum();
        let budget = p.io.budget;
        let total = budget.saturating_mul(p.io.loops as u64);
        let by_size = (budget != u64::MAX && done > 0 && elapsed > 0)
            .then(|| (elapsed as f64 * (total.saturating_sub(done)) as f64 / done as f64) as u64);
        let e = match (by_time, by_size) {
            (Some(t), Some(s)) => t.min(s),
            (Some(t), None) => t,
            (None, Some(s)) => s,
            (None, None) => return None,
        };
        eta = eta.max(e);
    }
    Some(eta)
}
