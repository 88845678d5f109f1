//! Pacing: rate limits (when each I/O is due), think time, and minimum rates. The pacer
//! owns its schedule and answers questions ("which direction, and when?", "pause now?",
//! "is the rate below its minimum?"); the loop does the waiting.

use crate::plan::{PacePlan, ThinkPlan};
use flexio_workload::rate::Schedule;

/// Which direction goes next under a rate limit, and from when.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// This direction is due now.
    Go(usize),
    /// Nothing is due: wait until this time (ns), then issue this direction.
    WaitUntil(u64, usize),
}

/// A think-time pause that is due: spin, then sleep (µs); `count` is the I/O count it was
/// judged at (the next pause is due `thinktime_blocks` after it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pause {
    pub spin_us: u64,
    pub sleep_us: u64,
    pub count: u64,
}

pub struct Pacer {
    /// `thinkcycles`: empty loop iterations after each submission.
    thinkcycles: u64,
    schedule: Option<Schedule>,
    /// The schedule's time base: the start of the loop (or of the measured part).
    base_ns: u64,
    think: Option<ThinkPlan>,
    next_think_at: u64,
    think_start_ns: u64,
    rate_min: [u64; 3],
    rate_iops_min: [u64; 3],
    cycle_ns: u64,
    /// rate_min cycle: its start and the totals then.
    mark: (u64, [u64; 3], [u64; 3]),
    rwmixread: u32,
    mixed: bool,
}

impl Pacer {
    pub fn new(p: &PacePlan) -> Self {
        Pacer {
            schedule: p.schedule.clone(),
            base_ns: 0,
            think: p.think,
            thinkcycles: p.thinkcycles,
            next_think_at: p.think.and_then(|t| t.blocks).unwrap_or(1),
            think_start_ns: 0,
            rate_min: p.rate_min,
            rate_iops_min: p.rate_iops_min,
            cycle_ns: p.cycle_ns,
            mark: (0, [0; 3], [0; 3]),
            rwmixread: p.rwmixread,
            mixed: p.mixed,
        }
    }

    /// Whether a rate limit applies to some direction.
    #[inline]
    pub fn limited(&self) -> bool {
        self.schedule.is_some()
    }

    /// Whether the job thinks between I/Os.
    #[inline]
    pub fn thinks(&self) -> bool {
        self.think.is_some()
    }

    /// Whether think-time pauses end with the runtime.
    #[inline]
    pub fn clips_think(&self) -> bool {
        self.think.is_some_and(|t| t.clip_to_runtime)
    }

    /// Whether the job busy-loops after each submission (`thinkcycles`).
    #[inline]
    pub fn cycles(&self) -> u64 {
        self.thinkcycles
    }

    /// `thinkcycles`: `n` empty iterations, kept by the optimiser (fio's `nop` loop); its
    /// cost per iteration is the CPU's.
    #[inline(never)]
    pub fn spin_cycles(n: u64) {
        for i in 0..n {
            std::hint::black_box(i);
        }
    }

    /// Whether minimum rates are to be checked.
    pub fn has_minimum(&self) -> bool {
        self.rate_min
            .iter()
            .chain(self.rate_iops_min.iter())
            .any(|r| *r > 0)
    }

    /// Start the schedule, the think-time period and the rate_min cycle at `now`.
    pub fn restart(&mut self, now: u64, bytes: [u64; 3], ios: [u64; 3]) {
        self.base_ns = now;
        if let Some(r) = &mut self.schedule {
            r.reset();
        }
        self.think_start_ns = now;
        self.mark = (now, bytes, ios);
    }

    /// When the next I/O of direction `d` is due (ns), if that direction is rate limited.
    #[inline]
    pub fn due(&self, d: usize) -> Option<u64> {
        let r = self.schedule.as_ref()?;
        r.limited_dir(d).then(|| self.base_ns + r.due_us(d) * 1000)
    }

    /// Account an issued I/O of a rate-limited direction.
    #[inline]
    pub fn issued(&mut self, d: usize, len: u64) {
        if let Some(r) = &mut self.schedule {
            r.issued(d, len);
        }
    }

    /// fio's rate_ddir: a direction that is due goes now; a mixed job ahead of schedule in
    /// this direction switches to the other one if that is due, else waits until the
    /// earlier of the two.
    pub fn next(&self, d: usize, now: u64) -> Next {
        let Some(r) = &self.schedule else {
            return Next::Go(d);
        };
        let due = |x: usize| self.base_ns + r.due_us(x) * 1000;
        let dd = due(d);
        if dd <= now {
            return Next::Go(d);
        }
        let o = d ^ 1;
        let other_share = if o == 0 {
            self.rwmixread
        } else {
            100 - self.rwmixread
        };
        if self.mixed && other_share > 0 {
            let od = due(o);
            if od <= now {
                return Next::Go(o);
            }
            if dd <= od {
                Next::WaitUntil(dd, d)
            } else {
                Next::WaitUntil(od, o)
            }
        } else {
            Next::WaitUntil(dd, d)
        }
    }

    /// Whether a think-time pause is due after an I/O at `now`, given the I/Os issued and
    /// completed so far.
    pub fn pause(&self, now: u64, issued: u64, completed: u64) -> Option<Pause> {
        let t = self.think.as_ref()?;
        let mut stall = false;
        if t.iotime_us > 0 {
            if now.saturating_sub(self.think_start_ns) >= t.iotime_us * 1000 {
                stall = true;
            } else if t.blocks.is_none() {
                // thinktime_iotime alone: the default thinktime_blocks does not apply.
                return None;
            }
        }
        let count = if t.blocks_issue { issued } else { completed };
        if count >= self.next_think_at {
            stall = true;
        }
        stall.then_some(Pause {
            spin_us: t.spin_us,
            sleep_us: t.think_us - t.spin_us,
            count,
        })
    }

    /// A pause ran from `t0` to `t1` (ns).
    pub fn paused(&mut self, p: Pause, t0: u64, t1: u64) {
        let Some(t) = self.think else { return };
        if t.shift_rate {
            if let Some(r) = &mut self.schedule {
                r.shift((t1 - t0) / 1000);
            }
        }
        self.next_think_at = p.count + t.blocks.unwrap_or(1);
        self.think_start_ns = t1;
    }

    /// rate_min / rate_iops_min: after a 2 s settling period, every rate_cycle the rate of
    /// each direction over the cycle must reach its floor (fio's check_min_rate). `Err` says
    /// which floor was missed.
    pub fn check_minimum(
        &mut self,
        now: u64,
        epoch: u64,
        bytes: [u64; 3],
        ios: [u64; 3],
    ) -> Result<(), String> {
        let (mark_ns, mb, mi) = self.mark;
        if now.saturating_sub(epoch) < 2_000_000_000 || now.saturating_sub(mark_ns) < self.cycle_ns
        {
            return Ok(());
        }
        let spent_ms = ((now - mark_ns) / 1_000_000).max(1);
        for d in 0..3 {
            if self.rate_min[d] > 0 {
                let rate = (bytes[d] - mb[d]) * 1000 / spent_ms;
                if rate < self.rate_min[d] {
                    return Err(format!(
                        "rate_min={}B/s not met, got {rate}B/s",
                        self.rate_min[d]
                    ));
                }
            } else if self.rate_iops_min[d] > 0 {
                let rate = (ios[d] - mi[d]) * 1000 / spent_ms;
                if rate < self.rate_iops_min[d] {
                    return Err(format!(
                        "rate_iops_min={} not met, got {rate} IOPS",
                        self.rate_iops_min[d]
                    ));
                }
            }
        }
        self.mark = (now, bytes, ios);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use flexio_workload::rate::Process;

    fn plan(rate: [u64; 3], mixed: bool) -> PacePlan {
        PacePlan {
            schedule: Some(Schedule::new(
                rate,
                [0; 3],
                [4096; 3],
                Process::Linear,
                [1, 2, 3],
            )),
            rate_min: [0; 3],
            rate_iops_min: [0; 3],
            cycle_ns: 1_000_000_000,
            rwmixread: 50,
            mixed,
            thinkcycles: 0,
            think: None,
        }
    }

    #[test]
    fn schedule_says_when_each_io_is_due() {
        // 4096 B/s: one 4 KiB I/O per second.
        let mut p = Pacer::new(&plan([4096, 0, 0], false));
        p.restart(1_000, [0; 3], [0; 3]);
        assert_eq!(p.due(0), Some(1_000));
        assert_eq!(p.due(1), None, "writes are not limited");
        assert_eq!(p.next(0, 1_000), Next::Go(0));
        p.issued(0, 4096);
        assert_eq!(p.due(0), Some(1_000 + 1_000_000_000));
        assert_eq!(p.next(0, 5_000), Next::WaitUntil(1_000 + 1_000_000_000, 0));
    }

    #[test]
    fn mixed_job_switches_to_the_direction_that_is_due() {
        let mut p = Pacer::new(&plan([4096, 8192, 0], true));
        p.restart(0, [0; 3], [0; 3]);
        p.issued(0, 4096);
        assert_eq!(p.next(0, 10), Next::Go(1), "writes are due, reads are not");
        p.issued(1, 8192);
        // Reads due at 1 s, writes at 1 s too: the asked direction wins a tie.
        assert_eq!(p.next(0, 10), Next::WaitUntil(1_000_000_000, 0));
        p.issued(1, 8192);
        assert_eq!(
            p.next(1, 10),
            Next::WaitUntil(1_000_000_000, 0),
            "reads come first"
        );
    }

    #[test]
    fn think_time_every_n_blocks() {
        let mut p = Pacer::new(&PacePlan {
            schedule: None,
            think: Some(ThinkPlan {
                think_us: 100,
                spin_us: 30,
                blocks: Some(3),
                blocks_issue: false,
                iotime_us: 0,
                shift_rate: false,
                clip_to_runtime: true,
            }),
            ..plan([0; 3], false)
        });
        p.restart(0, [0; 3], [0; 3]);
        assert_eq!(p.pause(10, 1, 1), None);
        assert_eq!(p.pause(10, 2, 2), None);
        let pause = p.pause(10, 3, 3).unwrap();
        assert_eq!((pause.spin_us, pause.sleep_us), (30, 70));
        p.paused(pause, 10, 110_000);
        assert_eq!(p.pause(200_000, 5, 5), None);
        assert!(p.pause(200_000, 6, 6).is_some());
    }

    #[test]
    fn minimum_rate_judged_per_cycle_after_settling() {
        let mut p = Pacer::new(&PacePlan {
            rate_min: [1_000_000, 0, 0],
            ..plan([0; 3], false)
        });
        p.restart(0, [0; 3], [0; 3]);
        let s = 1_000_000_000;
        // Settling: not judged before 2 s.
        assert!(p.check_minimum(s, 0, [0; 3], [0; 3]).is_ok());
        // 3 MB in 3 s meets 1 MB/s.
        assert!(p.check_minimum(3 * s, 0, [3_000_000, 0, 0], [0; 3]).is_ok());
        // 0.5 MB in the next second does not.
        let e = p
            .check_minimum(4 * s, 0, [3_500_000, 0, 0], [0; 3])
            .unwrap_err();
        assert_eq!(e, "rate_min=1000000B/s not met, got 500000B/s");
    }
}
