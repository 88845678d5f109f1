//! `ramp_time` and `ramp_size`: when the job's warm-up ends. The ramp ends once ramp_time
//! has passed since it began or the job moved ramp_size bytes; its end is first looked at
//! at ramp_time (or, with ramp_size alone, at the first tick) and then on every tick.

pub struct Ramp {
    ramp_ns: u64,
    ramp_bytes: u64,
    tick_ns: u64,
    /// When the ramp began.
    start_ns: u64,
    /// The next look at the ramp's end (0 = not ramping).
    end_ns: u64,
    /// Bytes moved during the ramp.
    moved: u64,
    /// ramp_size with group_reporting: the group's bytes, which this job adds to and
    /// judges by.
    group: Option<std::sync::Arc<crate::progress::AtomicU64>>,
}

impl Ramp {
    /// `ramp_ns` (ramp_time) and `ramp_bytes` (ramp_size), 0 = none; `tick_ns`: how often
    /// the end is looked at after the first look (0 = once a second).
    pub fn new(ramp_ns: u64, ramp_bytes: u64, tick_ns: u64) -> Ramp {
        Ramp {
            ramp_ns,
            ramp_bytes,
            // The newest fio's helper tick; ramp_size, which fio 3.33 does not have, is
            // looked at once a second too.
            tick_ns: match tick_ns {
                0 => crate::plan::newest::RAMP_TICK_NS,
                t => t,
            },
            start_ns: 0,
            end_ns: 0,
            moved: 0,
            group: None,
        }
    }

    /// ramp_size counts the bytes of all the jobs sharing `group` (a reporting group).
    pub fn shared(mut self, group: Option<std::sync::Arc<crate::progress::AtomicU64>>) -> Ramp {
        self.group = group;
        self
    }

    /// Whether the job ramps at all.
    pub fn wanted(&self) -> bool {
        self.ramp_ns > 0 || self.ramp_bytes > 0
    }

    /// The ramp begins at `now`.
    pub fn begin(&mut self, now: u64) {
        self.start_ns = now;
        self.end_ns = now
            + if self.ramp_ns > 0 {
                self.ramp_ns
            } else {
                self.tick_ns
            };
    }

    /// When the ramp's end is looked at next (`u64::MAX` when not ramping).
    #[inline]
    pub fn next_look(&self) -> u64 {
        if self.end_ns != 0 {
            self.end_ns
        } else {
            u64::MAX
        }
    }

    /// Bytes moved while ramping (for ramp_size).
    #[inline]
    pub fn moved(&mut self, bytes: u64) {
        self.moved += bytes;
        if let Some(g) = &self.group {
            g.fetch_add(bytes, std::sync::atomic::Ordering::Relaxed);
        }
    }

    /// Whether the ramp ends at `now` (then it is over; otherwise, when not yet over, it is
    /// looked at again a tick later).
    pub fn ends(&mut self, now: u64) -> bool {
        if self.end_ns == 0 || now < self.end_ns {
            return false;
        }
        let moved = match &self.group {
            Some(g) => g.load(std::sync::atomic::Ordering::Relaxed),
            None => self.moved,
        };
        let over = (self.ramp_ns > 0 && now.saturating_sub(self.start_ns) >= self.ramp_ns)
            || (self.ramp_bytes > 0 && moved >= self.ramp_bytes);
        if over {
            self.end_ns = 0;
        } else {
            self.end_ns += self.tick_ns;
        }
        over
    }

    /// The ramp is over (or was never on): nothing more to look at.
    pub fn over(&mut self) {
        self.end_ns = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_leaves_its_ramp_on_the_sum_of_its_bytes() {
        let g = std::sync::Arc::new(crate::progress::AtomicU64::new(0));
        let mut a = Ramp::new(0, 1000, 100).shared(Some(g.clone()));
        let mut b = Ramp::new(0, 1000, 100).shared(Some(g.clone()));
        a.begin(0);
        b.begin(0);
        a.moved(600);
        assert!(!a.ends(100), "600 of 1000");
        b.moved(400);
        // Each alone moved less than ramp_size; together they reached it.
        assert!(a.ends(200));
        assert!(b.ends(100));
        let mut alone = Ramp::new(0, 1000, 100);
        alone.begin(0);
        alone.moved(600);
        assert!(!alone.ends(100));
    }

    #[test]
    fn no_ramp_looks_at_nothing() {
        let mut r = Ramp::new(0, 0, 0);
        assert!(!r.wanted());
        assert_eq!(r.next_look(), u64::MAX);
        assert!(!r.ends(u64::MAX - 1));
    }

    #[test]
    fn ramp_time_ends_at_its_time() {
        let mut r = Ramp::new(1000, 0, 300);
        assert!(r.wanted());
        r.begin(50);
        assert_eq!(r.next_look(), 1050);
        assert!(!r.ends(1049));
        assert!(r.ends(1050));
        assert_eq!(r.next_look(), u64::MAX);
        assert!(!r.ends(5000), "ends once");
    }

    #[test]
    fn ramp_size_is_looked_at_every_tick() {
        let mut r = Ramp::new(0, 4096, 100);
        r.begin(0);
        assert_eq!(r.next_look(), 100);
        r.moved(2048);
        assert!(!r.ends(100));
        assert_eq!(r.next_look(), 200, "a tick later");
        r.moved(2048);
        assert!(!r.ends(150), "not before the look");
        assert!(r.ends(200));
    }

    #[test]
    fn either_limit_ends_the_ramp() {
        let mut r = Ramp::new(1000, 1 << 30, 250);
        r.begin(0);
        r.moved(1 << 30);
        // ramp_size reached early, but the first look is at ramp_time.
        assert!(!r.ends(999));
        assert!(r.ends(1000));
        let mut r = Ramp::new(1000, 1 << 30, 250);
        r.begin(0);
        assert!(r.ends(1000), "ramp_time passed first");
        let mut r = Ramp::new(0, 1, 0);
        r.begin(0);
        assert_eq!(r.next_look(), crate::plan::newest::RAMP_TICK_NS);
        r.over();
        assert_eq!(r.next_look(), u64::MAX);
    }
}
