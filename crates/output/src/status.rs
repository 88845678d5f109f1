//! fio's live status line (`Jobs: 1 (f=1): [R(1)][12.5%][r=8004KiB/s][r=2001 IOPS][eta
//! 00m:07s]`) from the numbers the status thread gathers.

use crate::num2str::{num2str, Unit};

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
    /// Add a job's limits: sums of rate_min, rate, rate_iops_min and rate_iops.
    pub fn add(&mut self, [min_bps, max_bps, min_iops, max_iops]: [u64; 4]) {
        self.min_bps += min_bps;
        self.max_bps += max_bps;
        self.min_iops += min_iops;
        self.max_iops += max_iops;
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

/// One status line from the current state. Without a known ETA (fio's first 3 s of
/// elapsed time, counted in started seconds) or with nothing running, fio shows only
/// `Jobs: N (f=N)` and the rate limits.
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
    let mut s = format!("Jobs: {running} (f={files}){}", limits.text());
    let Some(eta) = eta.filter(|_| running > 0) else {
        return s;
    };
    s.push_str(&format!(": [{}]", run_string(states)));
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
    s.push_str(&format!("[eta {}]", eta_text(eta)));
    s
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
        // ETA not yet known (fio 3.33, rate=100m, first 2 s): the limits only.
        let lim = RateLimits {
            max_bps: 100 << 20,
            ..Default::default()
        };
        let l = line(1, 1, &['R'], None, [1 << 20, 0, 0], [256, 0, 0], None, &lim);
        assert_eq!(l, "Jobs: 1 (f=1), 0B/s-100MiB/s");
        assert_eq!(
            line(0, 0, &[], None, [0; 3], [0; 3], Some(1), &none),
            "Jobs: 0 (f=0)"
        );
    }
}
