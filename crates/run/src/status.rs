//! The live status line (fio's `Jobs: ... [eta ...]`), printed on stderr.

use crate::plan::ThreadPlan;
use crate::progress::Progress;
use flexio_output::status::{line, RateLimits};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `--bandwidth-log[=NAME]`: fio's aggregate bandwidth logs (`NAME-read_bw.log`,
/// `NAME-write_bw.log`, `NAME-trim_bw.log` in the current directory, NAME `agg` by
/// default): one line per status interval and direction, `<ms since start>, <KiB/s over the
/// interval>, <ddir>, 0, 0`, the whole run's rate summed over its jobs. Created empty at the
/// start, written (atomically) when the run ends.
pub struct AggLog {
    dir: std::path::PathBuf,
    name: String,
    lines: [String; 3],
}

impl AggLog {
    pub fn create(dir: &std::path::Path, name: &str) -> std::io::Result<AggLog> {
        if !dir.is_dir() {
            return Err(std::io::Error::from(std::io::ErrorKind::NotFound));
        }
        let log = AggLog {
            dir: dir.to_path_buf(),
            name: name.to_string(),
            lines: Default::default(),
        };
        for p in log.paths() {
            crate::notes::write_atomic(&p, b"")?;
        }
        Ok(log)
    }

    fn paths(&self) -> [std::path::PathBuf; 3] {
        ["read", "write", "trim"].map(|d| self.dir.join(format!("{}-{d}_bw.log", self.name)))
    }

    fn sample(&mut self, ms: u64, bytes_per_s: [u64; 3]) {
        for (d, l) in self.lines.iter_mut().enumerate() {
            let kib_s = bytes_per_s[d] / 1024;
            flexio_output::logs::sample_line(l, ms, kib_s, d as u8, 0, None, 0, false);
        }
    }

    fn finish(&self) {
        for (d, p) in self.paths().iter().enumerate() {
            if let Err(e) = crate::notes::write_atomic(p, self.lines[d].as_bytes()) {
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
        let mut eta_good = false;
        let mut err = std::io::stderr();
        while !done.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
            if last_t.elapsed() < interval {
                continue;
            }
            let dt = last_t.elapsed().as_secs_f64();
            last_t = Instant::now();
            let states: Vec<char> = progress.iter().map(|p| p.state_char()).collect();
            let running = states
                .iter()
                .filter(|c| !matches!(c, '_' | 'P' | 'E'))
                .count();
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
            // Nothing running and nothing to start: fio draws no line.
            if !draw || (running == 0 && !states.contains(&'P')) {
                continue;
            }
            // fio counts started seconds and knows no ETA before the third: the line is
            // then `Jobs: N (f=N)` and the limits only.
            let elapsed = start.elapsed().as_millis().div_ceil(1000) as u64;
            let eta = (elapsed >= 3)
                .then(|| estimate(&plans, &progress, elapsed))
                .flatten();
            let ramping = states.iter().filter(|c| **c == '/').count() == running;
            let pct = match eta {
                Some(e) if !ramping && (e > 0 || eta_good) => {
                    eta_good = true;
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

/// Remaining seconds: time-based jobs by their runtime, size-based ones by progress.
pub fn estimate(plans: &[ThreadPlan], progress: &[Progress], elapsed: u64) -> Option<u64> {
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
        let total = if p.io.shared_budget {
            budget
        } else {
            budget.saturating_mul(p.io.loops as u64)
        };
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregate_bandwidth_log_lines() {
        let d = tempfile::tempdir().unwrap();
        let mut a = AggLog::create(d.path(), "agg").unwrap();
        a.sample(500, [2048 * 1024, 1023, 0]);
        a.sample(1000, [0, 4096, 8192]);
        a.finish();
        let read = |n: &str| std::fs::read_to_string(d.path().join(n)).unwrap();
        assert_eq!(
            read("agg-read_bw.log"),
            "500, 2048, 0, 0, 0\n1000, 0, 0, 0, 0\n"
        );
        assert_eq!(
            read("agg-write_bw.log"),
            "500, 0, 1, 0, 0\n1000, 4, 1, 0, 0\n"
        );
        assert_eq!(
            read("agg-trim_bw.log"),
            "500, 0, 2, 0, 0\n1000, 8, 2, 0, 0\n"
        );
        assert!(AggLog::create(&d.path().join("none"), "agg").is_err());
        // --bandwidth-log=NAME: the newest fio's names.
        let b = AggLog::create(d.path(), "run1").unwrap();
        assert_eq!(read("run1-write_bw.log"), "", "created empty at the start");
        b.finish();
        assert_eq!(read("run1-trim_bw.log"), "");
    }
}
