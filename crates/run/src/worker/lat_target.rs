//! latency_target: fio's search for the deepest queue whose latency meets a target. A
//! pure state machine: it is told about completions and answers what to do.

use crate::plan::LatTargetPlan;

/// latency_target: the search for the highest queue depth whose latency meets the target
/// (fio's semantics: start at depth 1, double while windows succeed, bisect after a failure,
/// and once the depth no longer changes run one clean window at it and stop, unless
/// latency_run keeps adjusting).
pub struct LatTarget {
    /// The depth being tried (the final one when the search ends).
    pub qd: u32,
    low: u32,
    high: u32,
    max: u32,
    window_start_ns: u64,
    window_ios: u64,
    fails: u64,
    /// The depth has converged; statistics were reset for a final window at it.
    end_run: bool,
    target_ns: u64,
    percentile: f64,
    window_ns: u64,
    /// latency_run: keep adjusting instead of stopping.
    keep_running: bool,
}

/// What a latency-target check decided.
#[derive(PartialEq, Eq, Debug)]
pub enum LatStep {
    Continue,
    /// The depth converged: reset statistics and run one more window.
    Quiesce,
    /// The final window succeeded: the job is done.
    Done,
    /// Failed at depth 1: the target cannot be met.
    Fatal,
}

impl LatTarget {
    pub fn new(max: u32, p: &LatTargetPlan) -> Self {
        LatTarget {
            target_ns: p.target_ns,
            percentile: p.percentile,
            window_ns: p.window_ns,
            keep_running: p.keep_running,
            qd: 1,
            low: 1,
            high: max.max(1),
            max: max.max(1),
            window_start_ns: 0,
            window_ios: 0,
            fails: 0,
            end_run: false,
        }
    }

    pub fn new_window(&mut self, now: u64, completed: u64) {
        self.window_start_ns = now;
        self.window_ios = completed;
        self.fails = 0;
    }

    fn failed(&mut self, now: u64, completed: u64) -> LatStep {
        if self.qd == 1 {
            return LatStep::Fatal;
        }
        self.high = self.qd;
        if self.qd == self.low {
            self.low = self.low.saturating_sub(1).max(1);
        }
        self.qd = ((self.qd + self.low) / 2).max(1);
        self.new_window(now, completed);
        LatStep::Continue
    }

    fn succeeded(&mut self, now: u64, completed: u64, keep_running: bool) -> LatStep {
        let before = self.qd;
        self.low = self.qd;
        if self.qd + 1 == self.high {
            self.qd = self.low;
            self.high = self.low;
        } else if self.high != self.max {
            self.qd = (self.qd + self.high) / 2;
        } else {
            self.qd *= 2;
        }
        self.qd = self.qd.clamp(1, self.max);
        self.new_window(now, completed);
        if !keep_running && self.qd == before {
            if self.end_run {
                return LatStep::Done;
            }
            self.end_run = true;
            return LatStep::Quiesce;
        }
        LatStep::Continue
    }

    /// One completion with total latency `lat_ns`; `completed` counts completions so far.
    pub fn on_complete(&mut self, lat_ns: u64, now: u64, completed: u64) -> LatStep {
        let (target_ns, percentile, window_ns) = (self.target_ns, self.percentile, self.window_ns);
        if lat_ns > target_ns {
            if percentile >= 100.0 {
                return self.failed(now, completed);
            }
            self.fails += 1;
        }
        if now.saturating_sub(self.window_start_ns) < window_ns {
            return LatStep::Continue;
        }
        let ios = completed - self.window_ios;
        if ios == 0 {
            return LatStep::Continue;
        }
        let ok = (ios - self.fails.min(ios)) as f64 * 100.0 / ios as f64;
        if ok >= percentile {
            self.succeeded(now, completed, self.keep_running)
        } else {
            self.failed(now, completed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drive the search with a device whose latency is 100 µs per request in flight.
    fn search(target_us: u64, percentile: f64, max: u32, keep: bool) -> (u32, Vec<u32>, LatStep) {
        let p = LatTargetPlan {
            target_ns: target_us * 1000,
            percentile,
            window_ns: 1_000_000,
            keep_running: keep,
        };
        let mut lt = LatTarget::new(max, &p);
        let (mut now, mut done) = (0u64, 0u64);
        lt.new_window(now, done);
        let mut depths = vec![lt.qd];
        for _ in 0..100_000 {
            let lat = lt.qd as u64 * 100_000;
            now += 10_000;
            done += 1;
            let step = lt.on_complete(lat, now, done);
            if depths.last() != Some(&lt.qd) {
                depths.push(lt.qd);
            }
            if matches!(step, LatStep::Done | LatStep::Fatal) {
                return (lt.qd, depths, step);
            }
        }
        (lt.qd, depths, LatStep::Continue)
    }

    #[test]
    fn latency_target_finds_the_deepest_queue_meeting_it() {
        // 1 ms target at 100 µs per request: depth 10.
        let (qd, path, step) = search(1000, 100.0, 64, false);
        assert_eq!(step, LatStep::Done);
        assert_eq!(qd, 10, "search path {path:?}");
        // Doubling first, then bisecting.
        assert_eq!(&path[..5], &[1, 2, 4, 8, 16]);
        // A percentile below 100 judges whole windows: same answer here.
        let (qd, _, step) = search(1000, 90.0, 64, false);
        assert_eq!((qd, step), (10, LatStep::Done));
        // Capped by iodepth.
        let (qd, _, _) = search(10_000, 100.0, 8, false);
        assert_eq!(qd, 8);
        // Unattainable even at depth 1.
        let (_, _, step) = search(50, 100.0, 8, false);
        assert_eq!(step, LatStep::Fatal);
        // latency_run keeps adjusting (never done), staying around the answer.
        let (qd, _, step) = search(1000, 100.0, 64, true);
        assert_eq!(step, LatStep::Continue);
        assert!((9..=11).contains(&qd), "{qd}");
    }
}
