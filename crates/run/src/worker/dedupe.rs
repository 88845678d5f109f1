//! `dedupe_percentage` (with `dedupe_mode` and `dedupe_global`): which content seed a
//! write's data comes from. A write repeats earlier content with the job's percentage —
//! the latest new content (repeat mode) or one of the first `working_set` contents of the
//! sequence (working-set mode, fio's pregenerated set) — and otherwise takes the next new
//! content of the sequence (the job's own, or the run's with `dedupe_global`).

use crate::plan::Dedupe as DedupePlan;
use crate::progress::AtomicU64;
use flexio_workload::Taus88;
use std::sync::atomic::Ordering;

/// dedupe_global: the run's count of new write contents, shared by its jobs.
static GLOBAL_NEXT: AtomicU64 = AtomicU64::new(0);

/// The job's dedupe state: the repeat/unique draws, the latest new content seed, and the
/// job's count of new contents (its position in the sequence).
pub struct Dedupe {
    plan: DedupePlan,
    rng: Taus88,
    last: u32,
    next: u64,
}

impl Dedupe {
    pub fn new(plan: &DedupePlan) -> Dedupe {
        Dedupe {
            rng: Taus88::new(plan.seed),
            plan: plan.clone(),
            last: 0,
            next: 0,
        }
    }

    /// The content seed of the next write's data.
    #[inline]
    pub fn next_seed(&mut self) -> u32 {
        let d = &self.plan;
        if self.rng.below(100) < u64::from(d.pct) {
            return match d.working_set {
                Some(n) => content_seed(d.base, self.rng.below(n)),
                None => self.last,
            };
        }
        let k = if d.global {
            GLOBAL_NEXT.fetch_add(1, Ordering::Relaxed)
        } else {
            self.next += 1;
            self.next - 1
        };
        self.last = content_seed(d.base, k);
        self.last
    }
}

/// The `k`-th content seed of the sequence `base` (a 64-bit mix, so neighbours differ).
fn content_seed(base: u32, k: u64) -> u32 {
    let mut z = (u64::from(base) << 32 | 0x9e37) ^ k.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    (z ^ (z >> 31)) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(pct: u32, working_set: Option<u64>, global: bool) -> DedupePlan {
        DedupePlan {
            pct,
            seed: 7,
            base: 42,
            working_set,
            global,
        }
    }

    #[test]
    fn none_repeat_or_all_repeat() {
        // 0%: every write is new content, in sequence order.
        let mut d = Dedupe::new(&plan(0, None, false));
        let seeds: Vec<u32> = (0..50).map(|_| d.next_seed()).collect();
        let want: Vec<u32> = (0..50).map(|k| content_seed(42, k)).collect();
        assert_eq!(seeds, want);
        // 100%: every write repeats the latest new content (none yet: seed 0).
        let mut d = Dedupe::new(&plan(100, None, false));
        assert!((0..20).all(|_| d.next_seed() == 0));
    }

    #[test]
    fn repeats_follow_the_percentage_and_repeat_the_latest() {
        let mut d = Dedupe::new(&plan(30, None, false));
        let (mut repeats, mut last) = (0, None);
        for _ in 0..10_000 {
            let s = d.next_seed();
            if Some(s) == last {
                repeats += 1;
            }
            last = Some(s);
        }
        // 30% drawn: between 27% and 33% over 10,000 writes.
        assert!((2700..3300).contains(&repeats), "{repeats}");
        // New contents were taken in order: the count is the sequence position.
        assert_eq!(d.last, content_seed(42, d.next - 1));
    }

    #[test]
    fn working_set_repeats_stay_in_the_set() {
        let set: Vec<u32> = (0..8).map(|k| content_seed(42, k)).collect();
        let mut d = Dedupe::new(&plan(100, Some(8), false));
        for _ in 0..1000 {
            assert!(set.contains(&d.next_seed()));
        }
        assert_eq!(d.next, 0, "no new content drawn");
    }

    #[test]
    fn global_sequence_is_shared_by_jobs() {
        let mut a = Dedupe::new(&plan(0, None, true));
        let mut b = Dedupe::new(&plan(0, None, true));
        let (x, y) = (a.next_seed(), b.next_seed());
        assert_ne!(
            x, y,
            "two jobs take different positions of the run's sequence"
        );
        assert_eq!(a.next + b.next, 0, "the jobs' own counts stay untouched");
    }

    #[test]
    fn neighbouring_seeds_differ() {
        let s: std::collections::HashSet<u32> = (0..10_000).map(|k| content_seed(1, k)).collect();
        assert_eq!(s.len(), 10_000);
        assert_ne!(content_seed(1, 0), content_seed(2, 0));
    }
}
