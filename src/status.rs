//! The live status line (fio's `Jobs: ... [eta ...]`), printed on stderr.

use crate::plan::ThreadPlan;
use crate::progress::Progress;
use flexio_output::status::{line, RateLimits};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `--bandwidth-log`: fio's aggregate bandwidth logs (`agg-read_bw.log`, `agg-write_bw.log`,
/// `agg-trim_bw.log` in the current directory): one line per status interval and direction,
/// `<ms since start>, <KiB/s over the interval>, <ddir>, 0, 0`, the whole run's rate summed
/// over its jobs. Written (atomically) when the run ends.
pub struct AggLog {
    dir: std::path::PathBuf,
    lines: [String; 3],
}

impl AggLog {
    pub fn create(dir: &std::path::Path) -> std::io::Result<AggLog> {
        if !dir.is_dir() {
            return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
        }
        Ok(AggLog {
            dir: dir.to_path_buf(),
            lines: Default::default(),
        })
    }

    fn sample(&mut self, ms: u64, bytes_per_s: [u64; 3]) {
        for (d, l) in self.lines.iter_mut().enumerate() {
            l.push_str(&format!("{ms}, {}, {d}, 0, 0\n", bytes_per_s[d] / 1024));
        }
    }

    fn finish(&self) {
        for (d, name) in ["read", "write", "trim"].iter().enumerate() {
            let p = self.dir.join(format!("agg-{name}_bw.log"));
            if let Err(e) = crate::notes::write_atomic(&p, self.lines[d].as_bytes()) {
                eprintln!("flexio: cannot write {}: {e}", p.display());
            }
        }
    }
}

/// What the status thread does.
pub struct Show {
    /// Draw the status line on stderr.
    pub line: bool,
    pub interval: Duration,
    pub newline_every: Option<Duration>,
    pub agg_log: Option<AggLog>,
}

/// Runs until `done` is set, redrawing the line (and sampling the aggregate bandwidth log)
/// every `interval`.
pub fn spawn(
    plans: Vec<ThreadPlan>,
    progress: Arc<Vec<Progress>>,
    done: Arc<AtomicBool>,
    show: Show,
) -> std::thread::JoinHandle<()> {
    let Show {
        line: draw,
        interval,
        newline_every,
        mut agg_log,
    } = show;
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
            if let Some(a) = &mut agg_log {
                a.sample(start.elapsed().as_millis() as u64, rates);
            }
            if !draw {
                continue;
            }
            let elapsed = start.elapsed().as_secs();
            let eta = estimate(&plans, &progress, elapsed);
            // A size-based estimate settles after 3 s; a time-based one is known at once
            // (fio shows the share of the runtime), except while ramping.
            let ramping = states.contains(&'/');
            let pct = match eta {
                Some(e) if elapsed >= 3 || (by_time_only(&plans, &progress) && !ramping) => {
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
        if let Some(a) = &agg_log {
            a.finish();
        }
    })
}

/// Whether every job still to finish ends by time (`runtime` with `time_based`): its ETA
/// does not depend on progress.
fn by_time_only(plans: &[ThreadPlan], progress: &[Progress]) -> bool {
    plans
        .iter()
        .zip(progress)
        .filter(|(_, pr)| pr.state_char() != '_')
        .all(|(p, _)| p.control.time_limit_us.is_some() && p.io.budget == u64::MAX)
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
