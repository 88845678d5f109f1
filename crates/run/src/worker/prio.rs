//! Per-request I/O priorities: a share of requests gets the command priority (cmdprio), the
//! others the thread's.

use crate::plan::PrioPlan;
use flexio_workload::Taus88;

pub struct Prio {
    plan: PrioPlan,
    rng: Taus88,
    /// Some requests may get a command priority (cmdprio_percentage or cmdprio_bssplit):
    /// without, every request has the thread's, and [`Prio::pick`] draws nothing.
    draws: bool,
}

impl Prio {
    pub fn new(plan: PrioPlan) -> Self {
        let draws = plan.cmdprio_pct.iter().any(|&p| p > 0)
            || plan.cmdprio_bssplit.iter().any(|l| !l.is_empty());
        Prio {
            rng: Taus88::new(plan.seed),
            plan,
            draws,
        }
    }

    /// The thread's priority (requests without a command priority).
    #[inline]
    pub fn default(&self) -> u16 {
        self.plan.default
    }

    /// Whether requests vary in priority (per-priority statistics are kept).
    pub fn varies(&self) -> bool {
        self.plan.track
    }

    /// The priority of the next request of direction `ddir` and `bs` bytes.
    #[inline(always)]
    pub fn pick(&mut self, ddir: usize, bs: u64) -> u16 {
        if !self.draws {
            return self.plan.default;
        }
        self.draw(ddir, bs)
    }

    #[inline(never)]
    fn draw(&mut self, ddir: usize, bs: u64) -> u16 {
        if ddir < 2 && !self.plan.cmdprio_bssplit[ddir].is_empty() {
            // cmdprio_bssplit: the entries of this block size share the draw in order
            // (64k/25/1/1:64k/75/3/2: a quarter at 1/1, the rest at 3/2).
            let list = &self.plan.cmdprio_bssplit[ddir];
            if !list.iter().any(|e| e.0 == bs && e.1 > 0) {
                return self.plan.default;
            }
            let v = self.rng.between(1, 100);
            let mut upto = 0u64;
            for &(_, pct, value) in list.iter().filter(|e| e.0 == bs) {
                upto += u64::from(pct);
                if pct > 0 && v <= upto {
                    return value;
                }
            }
            return self.plan.default;
        }
        if ddir < 2
            && self.plan.cmdprio_pct[ddir] > 0
            && self.rng.between(1, 100) <= self.plan.cmdprio_pct[ddir] as u64
        {
            self.plan.cmdprio_value[ddir]
        } else {
            self.plan.default
        }
    }

    /// The latency recorded per priority (total or completion) and whether with histograms.
    pub fn by_total_lat(&self) -> bool {
        self.plan.by_total_lat
    }
    pub fn hist(&self) -> bool {
        self.plan.hist
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_of_requests_gets_the_command_priority() {
        let mut p = Prio::new(PrioPlan {
            default: 0x4004,
            cmdprio_pct: [25, 0],
            cmdprio_value: [0x2000, 0x2001],
            track: true,
            seed: 7,
            ..Default::default()
        });
        let n = 100_000;
        let high = (0..n).filter(|_| p.pick(0, 4096) == 0x2000).count();
        assert!((23_000..27_000).contains(&high), "{high}");
        assert!(
            (0..1000).all(|_| p.pick(1, 4096) == 0x4004),
            "0% for writes"
        );
        assert_eq!(p.pick(2, 4096), 0x4004, "trims keep the thread's priority");
    }

    #[test]
    fn bssplit_decides_by_block_size() {
        let mut p = Prio::new(PrioPlan {
            default: 0,
            cmdprio_bssplit: [vec![(4096, 100, 0x6005), (65536, 30, 0x2001)], vec![]],
            track: true,
            seed: 3,
            ..Default::default()
        });
        assert!((0..1000).all(|_| p.pick(0, 4096) == 0x6005));
        assert!(
            (0..1000).all(|_| p.pick(0, 8192) == 0),
            "no entry: the thread's"
        );
        let high = (0..100_000).filter(|_| p.pick(0, 65536) == 0x2001).count();
        assert!((28_000..32_000).contains(&high), "{high}");
        // Entries of one size share the draw: 25% one priority, 75% another.
        let mut p = Prio::new(PrioPlan {
            cmdprio_bssplit: [vec![(65536, 25, 0x2001), (65536, 75, 0x6002)], vec![]],
            track: true,
            seed: 5,
            ..Default::default()
        });
        let picks: Vec<u16> = (0..100_000).map(|_| p.pick(0, 65536)).collect();
        let a = picks.iter().filter(|v| **v == 0x2001).count();
        assert!((23_000..27_000).contains(&a), "{a}");
        assert!(picks.iter().all(|v| *v == 0x2001 || *v == 0x6002));
    }
}
