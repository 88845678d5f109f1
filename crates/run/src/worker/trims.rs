//! Trim verification (fio's `trim_percentage`, `trim_backlog`, `trim_backlog_batch`,
//! `trim_verify_zero`): while a verifying job writes, a share of the blocks it logs is
//! trimmed; the verify phase then reads those blocks back and requires zeros (or, without
//! `trim_verify_zero`, leaves them out of the check).
//!
//! The rules are fio's (the newest fio's, where fio 3.33 aborts at the first trim):
//!
//! * Each logged write draws once from the trim generator (32-bit tausworthe seeded from
//!   the job's trim seed slot): it is chosen when the draw is at most
//!   `(max / 100) * trim_percentage`. Chosen writes queue up oldest first.
//! * Before each new I/O: inside a batch, the next chosen write is trimmed. A batch lasts
//!   until it has trimmed `trim_backlog_batch` blocks (default `trim_backlog`): when no
//!   chosen write is waiting it stays open, and the next chosen write is trimmed as soon as
//!   it is logged, so the trims keep up with `trim_percentage` of the writes. Otherwise a
//!   batch starts, with a chosen write waiting and the last completed request not a trim,
//!   once `trim_backlog` writes have been logged since the last batch started (the first
//!   after `trim_backlog` writes). fio 3.33 started one whenever the log held a multiple of
//!   `trim_backlog` entries (trims without `trim_verify_zero` take entries away, so a
//!   batch could restart after a single write); it aborts at its first trim anyway, which
//!   both rules put at the same place.
//! * A chosen write that is no longer logged (a newer write replaced it, a verify_backlog
//!   check took it) is not trimmed.
//! * With `trim_verify_zero` the trimmed block stays logged and is checked for zeros;
//!   without it, it leaves the log (and the log's length that `trim_backlog` counts).

use crate::plan::TrimPlan;
use crate::verify::wlog::{Entry, WriteLog};
use flexio_workload::rng::{Taus258, Taus88};
use std::collections::{HashSet, VecDeque};

/// The trim generator (fio's trim_state).
#[derive(Debug)]
enum Draw {
    T32(Taus88),
    T64(Taus258),
}

/// One job's trim-verify state.
#[derive(Debug)]
pub struct TrimState {
    plan: TrimPlan,
    draw: Draw,
    /// Logged writes chosen for trimming, oldest first: (file, offset, numberio).
    queue: VecDeque<(u32, u64, u64)>,
    /// Trims left in the current batch.
    batch: u64,
    /// Writes logged so far, and that count when the last batch started.
    writes: u64,
    started_at: Option<u64>,
    /// Write numbers of trimmed blocks still logged (checked for zeros).
    trimmed: HashSet<u64>,
}

impl TrimState {
    pub fn new(p: &TrimPlan) -> TrimState {
        TrimState {
            plan: *p,
            draw: if p.seed64 {
                Draw::T64(Taus258::new(p.seed))
            } else {
                Draw::T32(Taus88::new(p.seed as u32))
            },
            queue: VecDeque::new(),
            batch: 0,
            writes: 0,
            started_at: None,
            trimmed: HashSet::new(),
        }
    }

    /// fio's io_u_should_trim: whether the write just logged will be trimmed.
    fn chosen(&mut self) -> bool {
        let pct = self.plan.percentage as u64;
        match &mut self.draw {
            Draw::T32(r) => r.next_u32() as u64 <= (u32::MAX as u64 / 100) * pct,
            Draw::T64(r) => r.next_u64() <= (u64::MAX / 100) * pct,
        }
    }

    /// A write was logged (as it is issued): draw whether it is to be trimmed.
    pub fn logged(&mut self, file: u32, offset: u64, numberio: u64) {
        self.writes += 1;
        if self.chosen() {
            self.queue.push_back((file, offset, numberio));
        }
    }

    /// The oldest chosen write still logged, taken off the queue (and off the log without
    /// trim_verify_zero).
    fn take(&mut self, log: &mut WriteLog) -> Option<Entry> {
        while let Some((file, offset, numberio)) = self.queue.pop_front() {
            let Some(e) = log.get(file, offset, numberio).copied() else {
                continue;
            };
            if self.plan.zero {
                self.trimmed.insert(numberio);
            } else {
                log.remove(file, offset, numberio);
            }
            return Some(e);
        }
        None
    }

    /// fio's check_get_trim, before each new I/O: the block to trim now, if one is due.
    /// `last_was_trim`: the last completed request was a trim.
    pub fn due(&mut self, log: &mut WriteLog, last_was_trim: bool) -> Option<Entry> {
        if self.queue.is_empty() {
            // An open batch stays open for the next chosen write.
            return None;
        }
        if self.batch > 0 {
            let e = self.take(log);
            if e.is_some() {
                self.batch -= 1;
            }
            return e;
        }
        let start = if self.plan.fio333 {
            (log.len() as u64) % self.plan.backlog == 0
        } else {
            self.writes - self.started_at.unwrap_or(0) >= self.plan.backlog
        };
        if start && !last_was_trim {
            let e = self.take(log)?;
            self.started_at = Some(self.writes);
            self.batch = self.plan.batch.saturating_sub(1);
            return Some(e);
        }
        None
    }

    /// Whether the logged write `numberio` was trimmed (its block must read back as zeros);
    /// asked once per block, when the verify phase reads it.
    pub fn take_trimmed(&mut self, numberio: u64) -> bool {
        self.trimmed.remove(&numberio)
    }

    /// The log was emptied: nothing is waiting any more.
    pub fn clear(&mut self) {
        self.queue.clear();
        self.trimmed.clear();
        self.batch = 0;
    }

    /// Trims left in the open batch.
    #[cfg(test)]
    pub fn open_batch(&self) -> u64 {
        self.batch
    }

    /// Chosen writes not trimmed (yet).
    #[cfg(test)]
    pub fn waiting(&self) -> usize {
        self.queue.len()
    }
}

/// The first byte of `buf` that is not zero.
pub fn first_nonzero(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|b| *b != 0)
}

/// fio's message for a trimmed block that did not read back as zeros (`gen_333`: fio
/// 3.33's wording).
pub fn zero_failure(gen_333: bool, file: &str, offset: u64, len: u64, at: usize) -> String {
    let what = if gen_333 {
        "trim: verify failed at"
    } else {
        "verify failed for zeroed data at"
    };
    format!("{what} file {file} offset {offset}, length {len}, block offset {at}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::wlog::Order;

    fn plan(pct: u32, backlog: u64, batch: u64, zero: bool) -> TrimPlan {
        TrimPlan {
            percentage: pct,
            backlog,
            // The plan resolves 0 to trim_backlog.
            batch: if batch == 0 { backlog } else { batch },
            zero,
            seed: 12345,
            seed64: false,
            fio333: false,
        }
    }

    /// Writes blocks 0.. one at a time (each completes at once), asking before each new
    /// write whether a trim is due; returns the I/O sequence ('w' offset / 't' offset).
    fn run(t: &mut TrimState, log: &mut WriteLog, writes: u64) -> Vec<(char, u64)> {
        let mut seq = Vec::new();
        let mut last_trim = false;
        let mut n = 0;
        while n < writes {
            if let Some(e) = t.due(log, last_trim) {
                seq.push(('t', e.offset / 4096));
                last_trim = true;
                continue;
            }
            log.issue(0, n * 4096, 4096, 0, n);
            t.logged(0, n * 4096, n);
            log.complete(0, n * 4096, n);
            seq.push(('w', n));
            last_trim = false;
            n += 1;
        }
        seq
    }

    #[test]
    fn every_write_trimmed_right_after_it_at_backlog_1() {
        let mut t = TrimState::new(&plan(100, 1, 0, true));
        let mut log = WriteLog::new(Order::Written);
        let seq = run(&mut t, &mut log, 4);
        let want: Vec<(char, u64)> = (0..4).flat_map(|i| [('w', i), ('t', i)]).collect();
        // The last write's trim comes before the next write, which never happens here.
        assert_eq!(seq, want[..7]);
        assert_eq!(
            log.len(),
            4,
            "trimmed blocks stay logged for the zero check"
        );
        assert!(t.take_trimmed(0) && !t.take_trimmed(0), "asked once");
    }

    /// Checks the batches of a write/trim sequence: a batch opens only `backlog` writes
    /// or more after the last one opened (the first after `backlog` writes), holds at most
    /// `batch` trims, and stays open while no chosen write waits. Returns the number of
    /// batches.
    fn check_batches(seq: &[(char, u64)], backlog: u64, batch: u64) -> usize {
        let (mut writes, mut left, mut batches, mut last_start) = (0, 0, 0, None);
        for (k, _) in seq {
            if *k == 'w' {
                writes += 1;
                continue;
            }
            if left == 0 {
                let since = writes - last_start.unwrap_or(0);
                assert!(since >= backlog, "batch opened at {writes} writes: {seq:?}");
                last_start = Some(writes);
                left = batch;
                batches += 1;
            }
            left -= 1;
        }
        batches
    }

    #[test]
    fn batches_start_at_multiples_of_the_backlog_and_stay_open_when_dry() {
        let p = plan(50, 8, 3, true);
        let mut t = TrimState::new(&p);
        let mut log = WriteLog::new(Order::Written);
        let seq = run(&mut t, &mut log, 64);
        assert!(check_batches(&seq, 8, 3) >= 5, "{seq:?}");
        // Trims follow write order.
        let offs: Vec<u64> = seq.iter().filter(|(k, _)| *k == 't').map(|x| x.1).collect();
        assert!(offs.windows(2).all(|w| w[0] < w[1]), "{offs:?}");
        // A batch that ran dry takes the next chosen write right after it is logged.
        let p = plan(50, 16, 0, true);
        let mut t = TrimState::new(&p);
        let mut log = WriteLog::new(Order::Written);
        let seq = run(&mut t, &mut log, 17);
        let trims = seq.iter().filter(|(k, _)| *k == 't').count() as u64;
        assert!(trims < 16 && t.open_batch() == 16 - trims, "{seq:?}");
        let seq2 = run(&mut t, &mut log, 8);
        let pairs = seq2.windows(2).filter(|w| w[0].0 == 'w' && w[1].0 == 't');
        assert!(pairs.count() > 0, "{seq2:?}");
    }

    /// Without the zero check the log shrinks with every trim; a batch still opens only
    /// after `trim_backlog` more writes (fio 3.33 opened another as soon as a write
    /// brought the log back to a multiple).
    #[test]
    fn trims_leaving_the_log_do_not_reopen_batches() {
        let p = plan(100, 4, 1, false);
        let mut t = TrimState::new(&p);
        let mut log = WriteLog::new(Order::Written);
        let seq = run(&mut t, &mut log, 64);
        // One batch at each of 4, 8, ..., 60 writes (the check at 64 never comes).
        assert_eq!(check_batches(&seq, 4, 1), 15, "{seq:?}");
    }

    /// fio's own check (t/verify-trim.py, number_ios=64): the trims are within 10% of
    /// trim_percentage of the writes, for every backlog and batch that keeps up.
    #[test]
    fn trims_keep_up_with_the_percentage() {
        for (pct, backlog, batch) in [
            (100, 1, 0),
            (50, 1, 0),
            (50, 16, 0),
            (50, 8, 8),
            (25, 32, 0),
        ] {
            for zero in [true, false] {
                let mut t = TrimState::new(&plan(pct, backlog, batch, zero));
                let mut log = WriteLog::new(Order::Written);
                let (mut w, mut tr, mut last_trim) = (0u64, 0u64, false);
                while w + tr < 64 * 16 {
                    if t.due(&mut log, last_trim).is_some() {
                        tr += 1;
                        last_trim = true;
                        continue;
                    }
                    log.issue(0, w * 4096, 4096, 0, w);
                    t.logged(0, w * 4096, w);
                    log.complete(0, w * 4096, w);
                    w += 1;
                    last_trim = false;
                }
                // What waits is at most one backlog's worth: the batches keep up.
                assert!(
                    t.waiting() as u64 <= backlog,
                    "{pct} {backlog}: {}",
                    t.waiting()
                );
                let want = (w * pct as u64) as f64 / 100.0;
                assert!(
                    (tr as f64 - want).abs() <= 0.1 * want,
                    "{pct}% backlog {backlog} batch {batch} zero {zero}: {tr} trims, {w} writes"
                );
            }
        }
    }

    #[test]
    fn without_the_zero_check_trimmed_blocks_leave_the_log() {
        let mut t = TrimState::new(&plan(100, 1, 0, false));
        let mut log = WriteLog::new(Order::Written);
        run(&mut t, &mut log, 5);
        assert_eq!(
            log.len(),
            1,
            "only the last write (its trim not yet due) is logged"
        );
        assert!(!t.take_trimmed(0));
    }

    #[test]
    fn a_replaced_write_is_not_trimmed() {
        let mut t = TrimState::new(&plan(100, 1, 0, true));
        let mut log = WriteLog::new(Order::Offset);
        log.issue(0, 0, 4096, 0, 0);
        t.logged(0, 0, 0);
        log.complete(0, 0, 0);
        // The same block written again: the first write is gone from the log.
        log.issue(0, 0, 4096, 0, 1);
        t.logged(0, 0, 1);
        log.complete(0, 0, 1);
        assert_eq!(log.len(), 1);
        let e = t.due(&mut log, false).expect("a trim is due");
        assert_eq!(e.numberio, 1, "{e:?}");
    }

    #[test]
    fn the_share_follows_the_percentage() {
        for pct in [10u32, 50, 90] {
            let mut t = TrimState::new(&plan(pct, 1_000_000, 0, true));
            for n in 0..10_000 {
                t.logged(0, n * 4096, n);
            }
            let share = t.waiting() as f64 / 100.0;
            assert!((share - pct as f64).abs() < 2.0, "{pct}: {share}");
        }
    }

    #[test]
    fn messages_of_both_generations() {
        assert_eq!(
            zero_failure(true, "/dev/loop0", 8192, 4096, 40),
            "trim: verify failed at file /dev/loop0 offset 8192, length 4096, block offset 40"
        );
        assert!(zero_failure(false, "f", 0, 1, 0).starts_with("verify failed for zeroed data"));
        assert_eq!(first_nonzero(&[0, 0, 3]), Some(2));
        assert_eq!(first_nonzero(&[0; 8]), None);
    }
}
