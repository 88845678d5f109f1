//! Per-request I/O priorities: a share of requests gets the command priority (cmdprio), the
//! others the thread's.

use crate::plan::PrioPlan;
use flexio_workload::Taus88;

pub struct Prio {
    plan: PrioPlan,
    rng: Taus88,
}

impl Prio {
    pub fn new(plan: PrioPlan) -> Self {
        Prio {
            rng: Taus88::new(plan.seed),
            plan,
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

    /// The priority of the next request of direction `ddir`.
    #[inline]
    pub fn pick(&mut self, ddir: usize) -> u16 {
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
        let high = (0..n).filter(|_| p.pick(0) == 0x2000).count();
        assert!((23_000..27_000).contains(&high), "{high}");
        assert!((0..1000).all(|_| p.pick(1) == 0x4004), "0% for writes");
        assert_eq!(p.pick(2), 0x4004, "trims keep the thread's priority");
    }
}
