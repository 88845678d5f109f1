//! Flow control between jobs (`flow`, `flow_id`, `flow_sleep`): jobs sharing a `flow_id`
//! keep their numbers of I/Os in the ratio of their `flow` weights. As in fio, each job
//! counts its own I/Os and the group's in a shared counter; a job whose share of the
//! group's I/Os is above its share of the group's weight holds back (sleeping `flow_sleep`
//! µs, if set) until the others catch up.

use crate::progress::AtomicU64;
use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

/// One flow group.
#[derive(Default)]
pub struct Flow {
    counter: AtomicU64,
    total_weight: AtomicU64,
    /// Members started together (set by [`expect`] before their threads start) and how
    /// many of them have joined: a member waits for the others before its first I/O.
    expected: AtomicU64,
    arrived: AtomicU64,
}

/// The longest a member waits for the rest of its group to join (a member whose setup
/// failed never joins).
const GATHER_LIMIT: std::time::Duration = std::time::Duration::from_secs(2);

fn group(map: &mut HashMap<u32, Arc<Flow>>, id: u32) -> Arc<Flow> {
    map.entry(id)
        .or_insert_with(|| {
            Arc::new(Flow {
                // fio starts the shared counter at 1.
                counter: AtomicU64::new(1),
                ..Flow::default()
            })
        })
        .clone()
}

/// Before starting `n` job threads of group `id` together: each waits, once set up, for
/// the others to join before its first I/O. fio sets all of a run's jobs up before any
/// starts, so the members of a group start within microseconds of each other; flexio's
/// threads set up one after the other, and the first (at millions of I/Os per second on a
/// fast target) would otherwise run ahead unchecked, and end, and leave the last to run
/// alone, by the milliseconds between their starts.
pub fn expect(id: u32, n: u64) {
    let mut g = FLOWS.lock().unwrap_or_else(|e| e.into_inner());
    let flow = group(g.get_or_insert_with(HashMap::new), id);
    flow.expected.fetch_add(n, Ordering::Relaxed);
}

static FLOWS: Mutex<Option<HashMap<u32, Arc<Flow>>>> = Mutex::new(None);

/// A job's membership in its flow group (left when dropped).
pub struct Member {
    flow: Arc<Flow>,
    id: u32,
    weight: u64,
    own: u64,
}

impl Member {
    /// Join group `id` with `weight`.
    pub fn join(id: u32, weight: u64) -> Member {
        let flow = {
            let mut g = FLOWS.lock().unwrap_or_else(|e| e.into_inner());
            group(g.get_or_insert_with(HashMap::new), id)
        };
        flow.total_weight.fetch_add(weight, Ordering::Relaxed);
        flow.arrived.fetch_add(1, Ordering::Relaxed);
        let t0 = std::time::Instant::now();
        while flow.arrived.load(Ordering::Relaxed) < flow.expected.load(Ordering::Relaxed)
            && t0.elapsed() < GATHER_LIMIT
        {
            std::thread::sleep(std::time::Duration::from_micros(20));
        }
        Member {
            flow,
            id,
            weight,
            own: 0,
        }
    }

    /// Before an I/O: true when the job must hold back; otherwise the I/O is counted.
    #[inline]
    pub fn exceeded(&mut self) -> bool {
        let total = self.flow.counter.load(Ordering::Relaxed).max(1) as f64;
        let weights = self.flow.total_weight.load(Ordering::Relaxed).max(1) as f64;
        if self.own as f64 / total > self.weight as f64 / weights {
            return true;
        }
        self.flow.counter.fetch_add(1, Ordering::Relaxed);
        self.own += 1;
        false
    }
}

impl Drop for Member {
    fn drop(&mut self) {
        self.flow
            .total_weight
            .fetch_sub(self.weight, Ordering::Relaxed);
        let mut g = FLOWS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(map) = g.as_mut() {
            // The last member removes the group (fio's flow_put).
            if Arc::strong_count(&self.flow) <= 2 {
                map.remove(&self.id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn weights_set_the_ratio() {
        let mut a = Member::join(9001, 3);
        let mut b = Member::join(9001, 1);
        let (mut na, mut nb) = (0u32, 0u32);
        for _ in 0..4000 {
            if !a.exceeded() {
                na += 1;
            }
            if !b.exceeded() {
                nb += 1;
            }
        }
        let r = na as f64 / nb as f64;
        assert!((2.9..3.1).contains(&r), "{na} {nb}");
        drop(a);
        // Alone in the group, b is never held back.
        assert!((0..100).all(|_| !b.exceeded()));
    }

    #[test]
    fn members_started_together_wait_for_each_other() {
        expect(9002, 2);
        let t0 = std::time::Instant::now();
        let late = std::thread::spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(30));
            Member::join(9002, 1)
        });
        let first = Member::join(9002, 3);
        assert!(t0.elapsed() >= std::time::Duration::from_millis(30));
        let second = late.join().unwrap();
        assert_eq!(first.flow.total_weight.load(Ordering::Relaxed), 4);
        drop((first, second));
        // Without an expectation nobody waits.
        let t0 = std::time::Instant::now();
        let _alone = Member::join(9003, 1);
        assert!(t0.elapsed() < std::time::Duration::from_millis(30));
    }
}
