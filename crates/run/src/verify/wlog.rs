//! The written-block log (fio's io pieces) with the newest fio's semantics, and the rules
//! that decide which header checks a job makes.
//!
//! * A write is logged when issued (in flight) and marked complete when it completes.
//! * In offset order ([`Order::Offset`]), a newer write to the same or an overlapping range
//!   evicts every older entry it touches (last write wins: only the newest version of a
//!   byte is verified, so its numberio check passes). The evicted write is remembered as
//!   the new entry's `prev`, for torn-write reports.
//! * The verifier takes the first *completed* entry in order; in-flight ones are skipped.
//! * A failed write (error ignored) is removed and its numberio remembered.
//! * In write order ([`Order::Written`], random writes with a random map: no overlap) the
//!   entries are verified as written.
//!
//! Data seeds: fio draws the k-th write's seed as the k-th value of its verify generator
//! ([`SeedGen`]: two draws multiplied, from the job's verify seed slot), and the newest
//! fio replays that generator up to a block's numberio to know its seed. flexio draws the
//! same seeds (so fio's header-seed checks accept flexio's headers and the reverse) and
//! keeps each write's seed in its log entry, so the check needs no replay.

use super::format::WriteRef;
use super::header::Generation;
use std::collections::{BTreeMap, VecDeque};

/// fio's verify seed generator: each write's data seed is the product of two draws of
/// the job's verify stream (fio's `FIO_RAND_VER_OFF` slot, tausworthe or tausworthe64 as
/// `random_generator` says).
#[derive(Clone, Debug)]
pub enum SeedGen {
    T32(flexio_workload::rng::Taus88),
    T64(flexio_workload::rng::Taus258),
}

impl SeedGen {
    pub fn new(seed: u64, use64: bool) -> SeedGen {
        if use64 {
            SeedGen::T64(flexio_workload::rng::Taus258::new(seed))
        } else {
            SeedGen::T32(flexio_workload::rng::Taus88::new(seed as u32))
        }
    }

    /// The next write's data seed.
    pub fn next_seed(&mut self) -> u64 {
        match self {
            SeedGen::T32(r) => r.next_u32() as u64 * r.next_u32() as u64,
            SeedGen::T64(r) => r.next_u64().wrapping_mul(r.next_u64()),
        }
    }
}

/// A seed function of a base and a write number (for tests and tools that need distinct
/// seeds without a generator).
pub fn replay_seed(base: u64, numberio: u64) -> u64 {
    // splitmix64 of the base advanced by `numberio` golden-ratio steps.
    let mut z = base.wrapping_add(numberio.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// As written (fio: random writes with a random map).
    Written,
    /// By file and offset, newer writes evicting overlapped older ones.
    Offset,
}

/// One logged write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    pub file: u32,
    pub offset: u64,
    pub len: u64,
    pub seed: u64,
    pub numberio: u64,
    pub in_flight: bool,
    /// The most recent write this one evicted (offset order only).
    pub prev: Option<WriteRef>,
}

impl Entry {
    pub fn write(&self) -> WriteRef {
        WriteRef {
            offset: self.offset,
            len: self.len,
            seed: self.seed,
            numberio: self.numberio,
        }
    }
}

#[derive(Debug)]
pub struct WriteLog {
    order: Order,
    tree: BTreeMap<(u32, u64), Entry>,
    list: VecDeque<Entry>,
    failed: Vec<u64>,
    in_flight: usize,
}

impl WriteLog {
    pub fn new(order: Order) -> WriteLog {
        WriteLog {
            order,
            tree: BTreeMap::new(),
            list: VecDeque::new(),
            failed: Vec::new(),
            in_flight: 0,
        }
    }

    pub fn order(&self) -> Order {
        self.order
    }

    /// Log a write as it is issued.
    pub fn issue(&mut self, file: u32, offset: u64, len: u64, seed: u64, numberio: u64) {
        let mut e = Entry {
            file,
            offset,
            len,
            seed,
            numberio,
            in_flight: true,
            prev: None,
        };
        self.in_flight += 1;
        if self.order == Order::Written {
            self.list.push_back(e);
            return;
        }
        let end = offset.saturating_add(len);
        // Entries are disjoint: the one starting before `offset` may reach into it, and
        // every one starting inside [offset, end) overlaps. No allocation here.
        loop {
            let before = self
                .tree
                .range(..(file, offset))
                .next_back()
                .filter(|(k, p)| k.0 == file && p.offset + p.len > offset)
                .map(|(k, _)| *k);
            let k = match before {
                Some(k) => k,
                None => match self.tree.range((file, offset)..(file, end)).next() {
                    Some((k, _)) => *k,
                    None => break,
                },
            };
            if let Some(old) = self.tree.remove(&k) {
                if old.in_flight {
                    self.in_flight -= 1;
                }
                if e.prev.map_or(true, |p| p.numberio < old.numberio) {
                    e.prev = Some(old.write());
                }
            }
        }
        self.tree.insert((file, offset), e);
    }

    fn find(&mut self, file: u32, offset: u64, numberio: u64) -> Option<&mut Entry> {
        match self.order {
            Order::Offset => self
                .tree
                .get_mut(&(file, offset))
                .filter(|e| e.numberio == numberio),
            Order::Written => self
                .list
                .iter_mut()
                .rev()
                .find(|e| e.file == file && e.offset == offset && e.numberio == numberio),
        }
    }

    /// A logged write completed; false if it is no longer logged (evicted meanwhile).
    pub fn complete(&mut self, file: u32, offset: u64, numberio: u64) -> bool {
        let Some(e) = self.find(file, offset, numberio) else {
            return false;
        };
        if e.in_flight {
            e.in_flight = false;
            self.in_flight -= 1;
        }
        true
    }

    /// A logged write failed (its error ignored): it is not verified; its numberio is
    /// remembered (verify-state files list it).
    pub fn fail(&mut self, file: u32, offset: u64, numberio: u64) {
        self.remove(file, offset, numberio);
        if let Err(i) = self.failed.binary_search(&numberio) {
            self.failed.insert(i, numberio);
        }
    }

    /// The logged write `numberio` at `file`/`offset`, if it is still logged (not evicted
    /// by a newer write, verified or removed).
    pub fn get(&self, file: u32, offset: u64, numberio: u64) -> Option<&Entry> {
        match self.order {
            Order::Offset => self
                .tree
                .get(&(file, offset))
                .filter(|e| e.numberio == numberio),
            Order::Written => self
                .list
                .iter()
                .rev()
                .find(|e| e.file == file && e.offset == offset && e.numberio == numberio),
        }
    }

    /// Forget a logged write without checking it (fio: a trimmed block whose zeros are not
    /// checked leaves the verify list). False if it was not logged.
    pub fn remove(&mut self, file: u32, offset: u64, numberio: u64) -> bool {
        let was = match self.order {
            Order::Offset => match self.tree.get(&(file, offset)) {
                Some(e) if e.numberio == numberio => self.tree.remove(&(file, offset)),
                _ => None,
            },
            Order::Written => self
                .list
                .iter()
                .position(|e| e.file == file && e.offset == offset && e.numberio == numberio)
                .and_then(|i| self.list.remove(i)),
        };
        if was.is_some_and(|e| e.in_flight) {
            self.in_flight -= 1;
        }
        was.is_some()
    }

    /// Numberios of failed writes, ascending.
    pub fn failed(&self) -> &[u64] {
        &self.failed
    }

    pub fn is_failed(&self, numberio: u64) -> bool {
        self.failed.binary_search(&numberio).is_ok()
    }

    /// The next write to verify: the first completed entry in order (in-flight ones are
    /// skipped and stay logged). None when none is complete; see [`WriteLog::in_flight`].
    pub fn next_write(&mut self) -> Option<Entry> {
        self.next_write_below(u64::MAX)
    }

    /// [`WriteLog::next_write`] among the writes numbered below `limit` (verify_policy=
    /// fsynced: those an fsync covered); the others stay logged.
    pub fn next_write_below(&mut self, limit: u64) -> Option<Entry> {
        let due = |e: &Entry| !e.in_flight && e.numberio < limit;
        match self.order {
            Order::Offset => {
                let k = *self.tree.iter().find(|(_, e)| due(e))?.0;
                self.tree.remove(&k)
            }
            Order::Written => {
                let i = self.list.iter().position(due)?;
                self.list.remove(i)
            }
        }
    }

    /// Entries logged (in flight or complete).
    pub fn len(&self) -> usize {
        self.tree.len() + self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The entries in verification order.
    pub fn entries(&self) -> Vec<Entry> {
        self.tree
            .values()
            .chain(self.list.iter())
            .copied()
            .collect()
    }

    /// Forget every entry (failed numberios stay).
    pub fn clear(&mut self) {
        self.tree.clear();
        self.list.clear();
        self.in_flight = 0;
    }
}

/// What decides a job's header checks and log order.
#[derive(Clone, Copy, Debug, Default)]
pub struct JobFacts {
    /// The job writes (`td_write`).
    pub writes: bool,
    /// The job reads as well as writes (`rw`, `randrw`).
    pub mixed: bool,
    pub random: bool,
    pub verify_only: bool,
    pub verify_backlog: bool,
    pub zone_reset_frequency: bool,
    pub norandommap: bool,
    pub softrandommap: bool,
    /// `rw=…:N` on sequential I/O (holes).
    pub seq_holes: bool,
    /// `rw=rand…:N` with N > 1.
    pub rand_multi: bool,
    pub io_size_over_size: bool,
    /// A non-sync engine with iodepth > 1.
    pub async_depth: bool,
    pub experimental_verify: bool,
    pub fixed_bs: bool,
    pub time_based: bool,
    /// `verify_header_seed` / `verify_write_sequence` when set by the user.
    pub header_seed: Option<bool>,
    pub write_sequence: Option<bool>,
}

impl JobFacts {
    /// fio's "offset overlap risk": a block may be written more than once.
    pub fn overlap_risk(&self) -> bool {
        self.norandommap
            || self.softrandommap
            || self.seq_holes
            || self.rand_multi
            || self.io_size_over_size
    }
}

/// The header checks a job makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Checks {
    /// Compare the header's rand_seed with the replayed seed.
    pub header_seed: bool,
    /// Compare the header's numberio with the logged write's.
    pub write_sequence: bool,
}

/// Which checks are in force (delta §1.6, §6.2; fio 3.33: the seed check only ever runs
/// for jobs that mix reads and writes without `verify_backlog`, since fio 3.33 copies
/// the header's seed otherwise, and `verify_only` skips the write-sequence check: fio 3.33
/// replays a job that verified after each pass over its files against the last pass's
/// data without complaint).
pub fn checks(gen: Generation, f: &JobFacts) -> Checks {
    let numberio_possible = f.writes && f.fixed_bs && !f.time_based;
    match gen {
        Generation::Fio333 => Checks {
            header_seed: f.writes && f.mixed && !f.verify_backlog,
            write_sequence: numberio_possible && !f.verify_only,
        },
        Generation::Latest => {
            let seed_default = f.writes
                && !f.verify_backlog
                && !f.zone_reset_frequency
                && !f.overlap_risk()
                && !f.verify_only;
            let seq_off = f.verify_only
                || (f.norandommap && f.async_depth)
                || (f.experimental_verify && f.overlap_risk());
            let seq_default = !seq_off;
            Checks {
                header_seed: f.header_seed.unwrap_or(seed_default),
                write_sequence: f.write_sequence.unwrap_or(seq_default) && numberio_possible,
            }
        }
    }
}

/// The log's order: fio 3.33 keeps random writes with a random map in write order and
/// sorts everything else; the newest also sorts random writes at overlap risk.
///
/// With `io_size` larger than the files, fio 3.33 verifies after each pass over the random
/// map (its verify reads counting towards `io_size`), and so does flexio under
/// `--compat=3.33` (the plan's passes; `io_size_over_size` is then false): the write-order
/// list never holds a block twice. Where the job still writes `io_size` in one go, the log
/// is sorted and each block checked against its last write.
pub fn order(gen: Generation, f: &JobFacts) -> Order {
    let mapped_random = f.random && !f.norandommap;
    match gen {
        Generation::Fio333 if mapped_random && !f.io_size_over_size => Order::Written,
        Generation::Latest if mapped_random && !f.overlap_risk() => Order::Written,
        _ => Order::Offset,
    }
}

#[cfg(test)]
#[path = "wlog_tests.rs"]
mod tests;
