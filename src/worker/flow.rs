//! Flow control between jobs (`flow`, `flow_id`, `flow_sleep`): jobs sharing a `flow_id`
//! keep their numbers of I/Os in the ratio of their `flow` weights. As in fio, each job
//! counts its own I/Os and the group's in a shared counter; a job whose share of the
//! group's I/Os is above its share of the group's weight holds back (sleeping `flow_sleep`
//! µs, if set) until the others catch up.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// One flow group.
#[derive(Default)]
pub struct Flow {
    counter: AtomicU64,
    total_weight: AtomicU64,
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
        let mut g = FLOWS.lock().unwrap_or_else(|e| e.into_inner());
        let map = g.get_or_insert_with(HashMap::new);
        let flow = map
            .entry(id)
            .or_insert_with(|| {
                Arc::new(Flow {
                    // fio starts the shared counter at 1.
                    counter: AtomicU64::new(1),
                    total_weight: AtomicU64::new(0),
                })
            })
            .clone();
        flow.total_weight.fetch_add(weight, Ordering::Relaxed);
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
}
