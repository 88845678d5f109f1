//! The live status line (fio's `Jobs: ... [eta ...]`), printed on stderr.

use crate::plan::ThreadPlan;
use crate::progress::Progress;
use flexio_output::num2str::{num2str, Unit};
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Render the run-state string: `R(2),w(1)`.
pub fn run_string(states: &[char]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < states.len() {
        let c = states[i];
        let mut n = 1;
        while i + n < states.len() && states[i + n] == c {
            n += 1;
        }
        parts.push(format!("{c}({n})"));
        i += n;
    }
    parts.join(",")
}

/// fio's eta text: `00m:05s`, `01h:02m:03s`, `1d:01h:02m:03s`.
pub fn eta_text(secs: u64) -> String {
    let d = secs / 86400;
    let h = (secs / 3600) % 24;
    let m = (secs / 60) % 60;
    let s = secs % 60;
    if d > 0 {
        format!("{d:02}d:{h:02}h:{m:02}m:{s:02}s")
    } else if h > 0 {
        format!("{h:02}h:{m:02}m:{s:02}s")
    } else {
        format!("{m:02}m:{s:02}s")
    }
}

/// The rate limits of the running jobs: minimum and maximum bytes/s, or IOPS.
#[derive(Default, Clone, Copy, Debug)]
pub struct RateLimits {
    pub min_bps: u64,
    pub max_bps: u64,
    pub min_iops: u64,
    pub max_iops: u64,
}

impl RateLimits {
    pub fn add(&mut self, o: &flexio_job::JobOptions) {
        self.min_bps += o.rate_min.iter().sum::<u64>();
        self.max_bps += o.rate.iter().sum::<u64>();
        self.min_iops += o.rate_iops_min.iter().sum::<u64>();
        self.max_iops += o.rate_iops.iter().sum::<u64>();
    }

    /// fio's `, <min>-<max>` or `, <min>-<max> IOPS` part (empty without limits).
    fn text(&self) -> String {
        if self.min_bps > 0 || self.max_bps > 0 {
            format!(
                ", {}-{}",
                num2str(self.min_bps, 4, 1, true, Unit::BytePerSec),
                num2str(self.max_bps, 4, 1, true, Unit::BytePerSec)
            )
        } else if self.min_iops > 0 || self.max_iops > 0 {
            format!(", {}-{} IOPS", self.min_iops, self.max_iops)
        } else {
            String::new()
        }
    }
}

/// One status line from the current state.
#[allow(clippy::too_many_arguments)]
pub fn line(
    running: usize,
    files: u32,
    states: &[char],
    pct: Option<f64>,
    rates: [u64; 3],
    iops: [u64; 3],
    eta: Option<u64>,
    limits: &RateLimits,
) -> String {
    let mut s = format!(
        "Jobs: {running} (f={files}){}: [{}]",
        limits.text(),
        run_string(states)
    );
    match pct {
        Some(p) => s.push_str(&format!("[{p:.1}%]")),
        None => s.push_str("[-.-%]"),
    }
    let names = ["r", "w", "t"];
    if rates.iter().any(|r| *r > 0) || iops.iter().any(|r| *r > 0) {
        let r: Vec<String> = (0..3)
            .filter(|d| rates[*d] > 0)
            .map(|d| {
                format!(
                    "{}={}",
                    names[d],
                    num2str(rates[d], 4, 1, true, Unit::BytePerSec)
                )
            })
            .collect();
        let i: Vec<String> = (0..3)
            .filter(|d| iops[*d] > 0)
            .map(|d| format!("{}={}", names[d], num2str(iops[d], 4, 1, false, Unit::None)))
            .collect();
        s.push_str(&format!("[{}][{} IOPS]", r.join(","), i.join(",")));
    }
    s.push_str(&format!(
        "[eta {}]",
        eta.map(eta_text).unwrap_or_else(|| "--m:--s".into())
    ));
    s
}

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
                    limits.add(&p.opts);
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
fn estimate(plans: &[ThreadPlan], progress: &[Progress], elapsed: u64) -> Option<u64> {
    let mut eta = 0u64;
    for (p, pr) in plans.iter().zip(progress) {
        if pr.state_char() == '_' {
            continue;
        }
        let o = &p.opts;
        let limit = (o.runtime_us + o.ramp_time_us + o.startdelay_us.1) / 1_000_000;
        let by_time = (o.runtime_us > 0).then(|| limit.saturating_sub(elapsed));
        let done: u64 = (0..3).map(|d| pr.bytes[d].load(Ordering::Relaxed)).sum();
        let total = p.io_budget.saturating_mul(o.loops as u64);
        let by_size = (p.io_budget != u64::MAX && done > 0 && elapsed > 0)
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
    fn formats() {
        assert_eq!(run_string(&['R', 'R', 'w']), "R(2),w(1)");
        assert_eq!(eta_text(5), "00m:05s");
        assert_eq!(eta_text(3723), "01h:02m:03s");
        let none = RateLimits::default();
        let l = line(
            1,
            1,
            &['r'],
            None,
            [8_196_096, 0, 0],
            [2001, 0, 0],
            Some(0),
            &none,
        );
        assert_eq!(
            l,
            "Jobs: 1 (f=1): [r(1)][-.-%][r=8004KiB/s][r=2001 IOPS][eta 00m:00s]"
        );
        // fio 3.33 with rate_iops=2000 (captured).
        let lim = RateLimits {
            max_iops: 2000,
            ..Default::default()
        };
        let l = line(
            1,
            1,
            &['r'],
            None,
            [8_196_096, 0, 0],
            [2001, 0, 0],
            Some(0),
            &lim,
        );
        assert_eq!(
            l,
            "Jobs: 1 (f=1), 0-2000 IOPS: [r(1)][-.-%][r=8004KiB/s][r=2001 IOPS][eta 00m:00s]"
        );
    }
}
