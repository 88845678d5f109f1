//! A job's verification state: write numbering and seeding, the written-block log
//! (last write wins), the backlog trigger, the read-back phase, checks of read blocks and
//! the state file. Block formats, checksums, the log and the state files are
//! `crate::verify`'s (pure); this part keeps what one job thread knows while it runs.

use crate::plan::VerifyPlan;
use crate::verify::format::{Expect, Place, Stamp, WriteRef};
use crate::verify::state::{self, Decision, RandState, StateV3, StateV7, VerifyState, EMPTY};
use crate::verify::wlog::{self, Checks, Entry, WriteLog};
use crate::verify::{Format, Generation, Mismatch};

/// The read re-reads a logged block (verify phase or backlog).
pub const VF_PHASE: u8 = 1;
/// A verified write (log the block on completion).
pub const VF_WRITE: u8 = 2;
/// The re-read block was trimmed: it must read back as zeros.
pub const VF_TRIMMED: u8 = 4;
/// An fsync of a verify_policy=fsynced job: once it completes, the writes numbered below
/// the slot's `vnum` are verified.
pub const VF_FSYNC: u8 = 8;

pub struct VerState {
    fmt: Format,
    checks: Checks,
    log: WriteLog,
    seeds: wlog::SeedGen,
    /// Writes prepared so far (the next write's number).
    writes: u64,
    /// Writes in flight (their numbers), for the state file.
    inflight: Vec<u64>,
    /// fio 3.33's state: each file's last `depth` completed writes, a ring of offsets per
    /// file (`depth` slots from `file * depth`, 0 where none yet; only with
    /// verify_state_save under that generation), where each file's ring goes on, and the
    /// writes completed ([`Self::comps`]).
    rings: Vec<u64>,
    ring_at: Vec<u32>,
    writes_done: u64,
    /// The write before the one being re-read, per slot (torn-write reports).
    prev: Vec<Option<WriteRef>>,
    check_reads: bool,
    do_verify: bool,
    verify_only: bool,
    pub fatal: bool,
    pub dump: bool,
    /// `--aux-path`: verify_dump's directory.
    pub aux_path: Option<String>,
    backlog: u64,
    batch: u64,
    since_backlog: u64,
    backlog_due: bool,
    /// verify_state_load: the state of the interrupted run.
    loaded: Option<VerifyState>,
    /// Verify reads handed out (fio 3.33's stop rule counts them).
    reads_done: u64,
    state_save: bool,
    state_file: std::path::PathBuf,
    depth: u32,
    nfiles: u32,
    name: String,
    index: u64,
    /// When the state was last saved during the write phase (crash checkpoints).
    last_save_ns: u64,
    /// experimental_verify: no log; the read-back re-generates the writes.
    experimental: bool,
    replay: Option<Replay>,
    /// experimental_verify: where the current loop's writes start (its generators as the
    /// loop began, and the number of its first write).
    loop_start: Option<LoopStart>,
    seed_base: u64,
    seed64: bool,
    /// Trim verification (trim_percentage with trim_backlog).
    trims: Option<super::trims::TrimState>,
    /// The offset generator's state as the state file records it (fio's `random_state`):
    /// zeros where fio 3.33 leaves it unseeded, else the seeded state, moved on by each
    /// random write and seeded again when the read-back starts (as fio does).
    rand: RandState,
    rand_initial: Option<RandState>,
    rand_tracked: bool,
    rand_reseed: bool,
    /// verify_policy=fsynced: only writes numbered below `synced_below` are verified (the
    /// writes issued before the submission of the last fsync that completed; 0 until one
    /// has), and the state file's numberio is that threshold.
    fsynced: bool,
    synced_below: u64,
}

/// The generators as a loop of an experimental_verify job began.
struct LoopStart {
    gen: flexio_workload::Generator,
    seeds: wlog::SeedGen,
    first: u64,
}

/// experimental_verify's read-back: the job's offset and seed generators run again from
/// where the loop's writes began; its reads (a read/write mix) are passed over, its writes
/// are read back.
struct Replay {
    gen: flexio_workload::Generator,
    seeds: wlog::SeedGen,
    /// Writes still to re-generate, and the next one's number.
    left: u64,
    numberio: u64,
}

/// How often a writing job refreshes its state file while it runs, so that a run killed
/// without a chance to save (SIGKILL, a crash) leaves the state of at most this long ago:
/// a later `verify_state_load` checks the writes that checkpoint names, and the writes of
/// the last interval at most go unchecked. (Each refresh creates and renames a small file
/// on the job thread; once a second keeps that out of the measured I/O.)
pub const CHECKPOINT_NS: u64 = 1_000_000_000;

/// What a prepared write carries: its number and data seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteTag {
    pub numberio: u64,
    pub seed: u64,
}

/// The next block of the read-back.
#[derive(Debug, PartialEq, Eq)]
pub enum CheckNext {
    Block(Entry),
    /// Nothing (more) to check.
    Done,
    /// A loaded state ends the check here; fio's message, if it prints one.
    Stop(Option<String>),
}

impl VerState {
    /// The state of a verifying job; `Err` when its saved state cannot be loaded.
    pub fn new(p: &VerifyPlan, slots: usize) -> Result<Self, String> {
        let loaded = if p.state_load {
            Some(state::load(&p.state_file, p.format.gen, p.depth)?)
        } else {
            None
        };
        // fio 3.33's state keeps each file's last completions (a ring per file).
        let rings = if p.state_save && p.format.gen == Generation::Fio333 {
            p.nfiles as usize
        } else {
            0
        };
        Ok(VerState {
            fmt: p.format.clone(),
            checks: p.checks,
            log: WriteLog::new(p.order),
            seeds: wlog::SeedGen::new(p.seed_base, p.seed64),
            writes: 0,
            inflight: Vec::with_capacity(p.depth as usize),
            rings: vec![0; rings * p.depth.max(1) as usize],
            ring_at: vec![0; rings],
            writes_done: 0,
            prev: vec![None; slots],
            check_reads: p.check_reads,
            do_verify: p.do_verify,
            verify_only: p.verify_only,
            fatal: p.fatal,
            dump: p.dump,
            aux_path: p.aux_path.clone(),
            backlog: p.backlog,
            batch: p.backlog_batch,
            since_backlog: 0,
            backlog_due: false,
            loaded,
            reads_done: 0,
            state_save: p.state_save,
            state_file: p.state_file.clone(),
            depth: p.depth.max(1),
            nfiles: p.nfiles,
            name: p.name.clone(),
            index: p.format.thread.saturating_sub(1) as u64,
            last_save_ns: 0,
            experimental: p.experimental,
            replay: None,
            loop_start: None,
            seed_base: p.seed_base,
            seed64: p.seed64,
            trims: p.trim.as_ref().map(super::trims::TrimState::new),
            rand: p.rand_initial.unwrap_or_default(),
            rand_initial: p.rand_initial,
            rand_tracked: p.rand_tracked,
            rand_reseed: p.rand_reseed,
            fsynced: p.fsynced,
            synced_below: 0,
        })
    }

    /// Whether the state file follows the offset generator (the job's offsets are random).
    #[inline]
    pub fn tracks_rand(&self) -> bool {
        self.rand_tracked && self.state_save
    }

    /// The offset generator's state after drawing the last write's offset (a mixed job's
    /// reads after its last write are not seen here: its state file holds the state as of
    /// that write).
    #[inline]
    pub fn note_rand(&mut self, s: flexio_workload::rng::TausState) {
        self.rand = state::rand_state(s);
    }

    /// The format's generation (for the report lines).
    pub fn generation(&self) -> Generation {
        self.fmt.gen
    }

    /// A read-only job: every read is checked (header and checksum only).
    #[inline]
    pub fn checks_reads(&self) -> bool {
        self.check_reads
    }

    /// Whether a read-back block came from the written-block list (fio's flag 0x80 in
    /// its report: set for the logged blocks, not for experimental_verify's replay).
    #[inline]
    pub fn listed(&self, phase: bool) -> bool {
        phase && !self.experimental
    }

    /// verify_only: writes are not done, only remembered for the check.
    pub fn verify_only(&self) -> bool {
        self.verify_only
    }

    /// Number and seed the next write of `buf.len()` bytes at `offset` of `file`, log it
    /// as in flight and fill its buffer (data and headers) unless verify_only.
    /// `since_epoch_ns` stamps the header's time.
    pub fn next_write(
        &mut self,
        buf: &mut [u8],
        file: u32,
        offset: u64,
        since_epoch_ns: u64,
    ) -> WriteTag {
        let n = self.writes;
        self.writes += 1;
        // fio draws no seed for pattern data (the header then says 0).
        let seed = if self.fmt.pattern.is_some() {
            0
        } else {
            self.seeds.next_seed()
        };
        if !self.experimental {
            self.log.issue(file, offset, buf.len() as u64, seed, n);
            if let Some(t) = self.trims.as_mut() {
                t.logged(file, offset, n);
            }
        }
        if !self.verify_only {
            self.inflight.push(n);
            let t = since_epoch_ns;
            self.fmt.fill(
                buf,
                offset,
                Stamp {
                    seed,
                    numberio: n,
                    time: ((t / 1_000_000_000) as u32, (t % 1_000_000_000) as u32),
                },
            );
        }
        WriteTag { numberio: n, seed }
    }

    /// A verified write completed (or verify_only replays it).
    pub fn written(&mut self, file: u32, offset: u64, numberio: u64) {
        if let Some(i) = self.inflight.iter().position(|x| *x == numberio) {
            self.inflight.swap_remove(i);
        }
        if !self.log.complete(file, offset, numberio) {
            return;
        }
        self.writes_done += 1;
        if let Some(at) = self.ring_at.get_mut(file as usize) {
            let d = self.depth as usize;
            self.rings[file as usize * d + *at as usize] = offset;
            *at = (*at + 1) % self.depth;
        }
        if self.backlog > 0 {
            self.since_backlog += 1;
            if self.since_backlog >= self.backlog {
                self.since_backlog = 0;
                self.backlog_due = true;
            }
        }
    }

    /// verify_policy=fsynced: whether fsyncs decide which writes are verified.
    #[inline]
    pub fn fsync_policy(&self) -> bool {
        self.fsynced
    }

    /// The threshold an fsync submitted now covers: every write prepared so far.
    #[inline]
    pub fn sync_mark(&self) -> u64 {
        self.writes
    }

    /// An fsync submitted at `mark` ([`VerState::sync_mark`]) completed successfully: the
    /// writes below it are verified. fsyncs completing out of order never lower it.
    pub fn synced(&mut self, mark: u64) {
        if mark > self.synced_below {
            crate::debug_log!(
                crate::debug::Cat::Verify,
                "verify: fsync completed, writes below {mark} are verified"
            );
            self.synced_below = mark;
        }
    }

    /// The first write number not verified: verify_policy=fsynced's threshold (a
    /// verify_only job's writes are not done: a loaded state decides for it).
    fn verify_limit(&self) -> u64 {
        if self.fsynced && !self.verify_only {
            self.synced_below
        } else {
            u64::MAX
        }
    }

    /// The number a state file records: writes issued, or the fsync threshold.
    fn saved_numberio(&self) -> u64 {
        if self.fsynced {
            self.synced_below
        } else {
            self.writes
        }
    }

    /// fio 3.33's completions for the state: for each file in order, its last
    /// min(writes completed, depth) completed writes, newest first, read back around its
    /// ring (a file with fewer gives the ring's empty slots, offset 0), as fio 3.33 writes
    /// them.
    fn comps(&self) -> Vec<(u64, u64)> {
        let d = self.depth as usize;
        let n = (self.writes_done as usize).min(d);
        let mut out = Vec::with_capacity(n * self.ring_at.len());
        for (f, &at) in self.ring_at.iter().enumerate() {
            let ring = &self.rings[f * d..(f + 1) * d];
            for k in 1..=n {
                out.push((f as u64, ring[(at as usize + d - k) % d]));
            }
        }
        out
    }

    /// A verified write failed (and the job goes on): it will not be checked.
    pub fn write_failed(&mut self, file: u32, offset: u64, numberio: u64) {
        self.inflight.retain(|x| *x != numberio);
        self.log.fail(file, offset, numberio);
    }

    /// verify_backlog: a batch of logged blocks is due for checking (how many).
    #[inline]
    pub fn backlog_due(&mut self) -> Option<u64> {
        std::mem::take(&mut self.backlog_due).then_some(self.batch)
    }

    /// Trim verification: the logged block to trim before the next I/O, if one is due
    /// (`last_was_trim`: the last completed request was a trim).
    pub fn trim_due(&mut self, last_was_trim: bool) -> Option<Entry> {
        self.trims.as_mut()?.due(&mut self.log, last_was_trim)
    }

    /// Whether the logged block `numberio` the read-back is about to check was trimmed
    /// (it must then read back as zeros).
    pub fn take_trimmed(&mut self, numberio: u64) -> bool {
        self.trims
            .as_mut()
            .is_some_and(|t| t.take_trimmed(numberio))
    }

    /// Forget every logged block (and the trims waiting for them).
    fn clear_log(&mut self) {
        self.log.clear();
        if let Some(t) = self.trims.as_mut() {
            t.clear();
        }
    }

    /// The next logged block to check (completed writes only, last write winning), as a
    /// loaded state and verify_policy allow (writes no completed fsync covered stay
    /// logged: a later fsync may still cover them before the backlog's next batch).
    pub fn next_check(&mut self) -> CheckNext {
        let limit = self.verify_limit();
        loop {
            let next = match self.replay.as_mut() {
                // The replay gives the writes in their order: the first not covered ends it.
                Some(r) => r
                    .next(self.fmt.pattern.is_some())
                    .filter(|e| e.numberio < limit),
                None => self.log.next_write_below(limit),
            };
            let Some(e) = next else {
                return CheckNext::Done;
            };
            match &self.loaded {
                None => return CheckNext::Block(e),
                Some(VerifyState::V7(s)) => match state::decide(s, e.numberio) {
                    Decision::Verify => return CheckNext::Block(e),
                    Decision::Skip => continue,
                    Decision::Stop(m) => {
                        self.clear_log();
                        self.replay = None;
                        return CheckNext::Stop(m);
                    }
                },
                Some(VerifyState::V3(s)) => {
                    let stop = state::should_stop(s, self.reads_done, e.file as u64, e.offset);
                    if stop {
                        self.clear_log();
                        self.replay = None;
                        return CheckNext::Stop(None);
                    }
                    self.reads_done += 1;
                    return CheckNext::Block(e);
                }
            }
        }
    }

    /// Remember the write before the one slot `slot` re-reads.
    pub fn set_prev(&mut self, slot: usize, prev: Option<WriteRef>) {
        if let Some(p) = self.prev.get_mut(slot) {
            *p = prev;
        }
    }

    /// A loop's writes begin with the job's generator `gen` as it is now. With randrepeat
    /// fio seeds its verify stream again for every loop (so each loop's k-th write has the
    /// first loop's k-th seed; numbers go on). experimental_verify's read-back replays the
    /// loop from here.
    pub fn loop_begins(&mut self, gen: &flexio_workload::Generator) {
        if self.rand_reseed {
            self.seeds = wlog::SeedGen::new(self.seed_base, self.seed64);
        }
        if self.experimental {
            self.loop_start = Some(LoopStart {
                gen: gen.clone(),
                seeds: self.seeds.clone(),
                first: self.writes,
            });
        }
    }

    /// After a loop's writes: whether a read-back phase runs (it does unless the job only
    /// reads or do_verify=0). `spec` is the job's workload: experimental_verify replays
    /// the loop from where [`VerState::loop_begins`] saw it, or from the start of `spec`.
    pub fn begin_phase(&mut self, spec: Option<&flexio_workload::Spec>) -> bool {
        if self.check_reads || !self.do_verify {
            self.clear_log();
            return false;
        }
        // With randrepeat fio seeds its generators again for the read-back (the state file
        // of a job that ended after verifying holds the seeded state).
        if let Some(r) = self.rand_initial.filter(|_| self.rand_reseed) {
            self.rand = r;
        }
        if self.experimental {
            let start = match self.loop_start.take() {
                Some(l) => Some(l),
                None => spec.map(|spec| LoopStart {
                    gen: flexio_workload::Generator::new(spec.clone()),
                    seeds: wlog::SeedGen::new(self.seed_base, self.seed64),
                    first: 0,
                }),
            };
            if let Some(l) = start {
                self.replay = Some(Replay {
                    gen: l.gen,
                    seeds: l.seeds,
                    left: self.writes.saturating_sub(l.first),
                    numberio: l.first,
                });
            }
        }
        true
    }

    pub fn end_phase(&mut self) {
        self.clear_log();
        self.replay = None;
    }

    /// What a read of `len` bytes at `offset` in `slot` is checked against; with `tag` it
    /// re-reads that logged write.
    pub fn expectation(&self, slot: usize, offset: u64, len: u64, tag: Option<WriteTag>) -> Expect {
        match tag {
            Some(t) => Expect {
                last: Some(WriteRef {
                    offset,
                    len,
                    seed: t.seed,
                    numberio: t.numberio,
                }),
                prev: self.prev.get(slot).copied().flatten(),
                check_seed: self.checks.header_seed,
                check_numberio: self.checks.write_sequence,
            },
            None => Expect::default(),
        }
    }

    /// The block format (verify_async hands it to its threads).
    pub fn format(&self) -> &Format {
        &self.fmt
    }

    /// Check a read block of `slot`; with `tag` it re-reads that logged write.
    pub fn check(
        &self,
        buf: &mut [u8],
        slot: usize,
        offset: u64,
        tag: Option<WriteTag>,
        file: &str,
    ) -> Result<(), Box<Mismatch>> {
        let exp = self.expectation(slot, offset, buf.len() as u64, tag);
        let place = Place {
            file,
            flags: if self.listed(tag.is_some()) {
                "88"
            } else {
                "8"
            },
        };
        crate::debug_log!(
            crate::debug::Cat::Verify,
            "verify: off=0x{offset:x},len=0x{:x},file={file},seed={:?}",
            buf.len(),
            exp.last.map(|w| w.seed)
        );
        let r = self.fmt.check(buf, offset, &exp, &place);
        if let Err(f) = &r {
            crate::debug_log!(
                crate::debug::Cat::Verify,
                "verify failed at 0x{offset:x}: {f:?}"
            );
        }
        r
    }

    /// flexio: while writing, refresh the state file every [`CHECKPOINT_NS`] (fio saves
    /// only when the job ends or is stopped; a killed fio leaves no state).
    pub fn checkpoint(&mut self, now: u64) -> Option<Result<(), String>> {
        if now.saturating_sub(self.last_save_ns) < CHECKPOINT_NS || self.log.is_empty() {
            return None;
        }
        self.last_save_ns = now;
        self.save_state()
    }

    /// verify_state_save: a writing job records what it wrote, for a later run with
    /// `verify_state_load` (fio saves at the end of every verifying write job, and when
    /// stopped). `None` when there is nothing to save.
    pub fn save_state(&self) -> Option<Result<(), String>> {
        if !self.state_save || self.writes == 0 {
            return None;
        }
        let s = match self.fmt.gen {
            Generation::Fio333 => VerifyState::V3(StateV3 {
                depth: self.depth,
                nofiles: self.nfiles,
                numberio: self.saved_numberio(),
                index: self.index,
                rand: self.rand,
                name: self.name.clone(),
                comps: self.comps(),
            }),
            Generation::Latest => {
                let mut inflight: Vec<u64> = self.inflight.clone();
                inflight.sort_unstable();
                inflight.resize(self.depth as usize, EMPTY);
                VerifyState::V7(StateV7 {
                    numberio: self.saved_numberio(),
                    index: self.index,
                    rand: self.rand,
                    name: self.name.clone(),
                    inflight,
                    failed: self.log.failed().to_vec(),
                })
            }
        };
        Some(state::save(&self.state_file, &s).map_err(|e| {
            format!(
                "fio: failed to save verify state {}: {e}",
                self.state_file.display()
            )
        }))
    }
}

impl Replay {
    /// The next write as the job's generators give it again.
    fn next(&mut self, pattern: bool) -> Option<Entry> {
        while self.left > 0 {
            let io = self.gen.next_io()?;
            if io.ddir != 1 {
                continue;
            }
            self.left -= 1;
            let numberio = self.numberio;
            self.numberio += 1;
            return Some(Entry {
                file: io.file as u32,
                offset: io.offset,
                len: io.len,
                seed: if pattern { 0 } else { self.seeds.next_seed() },
                numberio,
                in_flight: false,
                prev: None,
            });
        }
        None
    }
}

/// verify_dump: write what fio writes for a failed check, as `<aux>/<file>.<offset>.<what>`
/// (`<aux>/` only with `--aux-path`, joined as fio joins it), and fio's message lines: a
/// failed header check dumps the interval as read (`hdr_fail`); a failed checksum or
/// pattern the interval as read (`received`) and, when it can be rebuilt, as written
/// (`expected`).
pub fn dump(m: &Mismatch, received: &[u8], file: &str, aux: Option<&str>) -> Vec<String> {
    let base = std::path::Path::new(file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "block".into());
    let lo = (m.offset.saturating_sub(m.block_offset)) as usize;
    let hi = (lo + m.len as usize).min(received.len());
    let chunk = &received[lo.min(hi)..hi];
    let mut lines = Vec::new();
    let mut write = |what: &str, data: &[u8]| {
        let name = match aux {
            Some(a) => format!("{a}/{base}.{}.{what}", m.offset),
            None => format!("{base}.{}.{what}", m.offset),
        };
        lines.push(
            match crate::notes::write_atomic(std::path::Path::new(&name), data) {
                Ok(()) => format!("       {what} data dumped as {name}"),
                Err(e) => format!(
                    "open verify buf file: {}",
                    crate::notes::strerror(e.raw_os_error().unwrap_or(libc::EIO))
                ),
            },
        );
    };
    let header_fault = m
        .fio_lines
        .first()
        .is_some_and(|l| l.starts_with("verify: "));
    if header_fault {
        write("hdr_fail", chunk);
        return lines;
    }
    write("received", chunk);
    if let Some(e) = &m.expected_data {
        write("expected", e);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::wlog::Order;
    use crate::verify::{Class, Kind};

    fn plan(dir: &std::path::Path, gen: Generation, order: Order) -> VerifyPlan {
        VerifyPlan {
            format: Format::new(gen, Kind::Crc32c, 1),
            checks: Checks {
                header_seed: true,
                write_sequence: true,
            },
            order,
            seed_base: 42,
            seed64: false,
            experimental: false,
            async_threads: 0,
            async_cpus: None,
            rand_initial: None,
            rand_tracked: false,
            rand_reseed: true,
            do_verify: true,
            verify_only: false,
            fatal: false,
            dump: false,
            aux_path: None,
            backlog: 2,
            backlog_batch: 2,
            check_reads: false,
            writes: true,
            depth: 4,
            nfiles: 1,
            name: "j".into(),
            state_file: dir.join("local-j-0-verify.state"),
            state_save: true,
            state_load: false,
            fsynced: false,
            trim: None,
        }
    }

    fn block(v: &CheckNext) -> Entry {
        match v {
            CheckNext::Block(e) => *e,
            other => panic!("expected a block, got {other:?}"),
        }
    }

    #[test]
    fn writes_are_logged_checked_and_the_backlog_triggers() {
        let d = tempfile::tempdir().unwrap();
        let mut v = VerState::new(&plan(d.path(), Generation::Latest, Order::Offset), 4).unwrap();
        let mut blocks = vec![vec![0u8; 4096]; 3];
        let tags: Vec<WriteTag> = (0..3)
            .map(|i| v.next_write(&mut blocks[i], 0, i as u64 * 4096, 1000))
            .collect();
        assert_eq!(tags[2].numberio, 2);
        v.written(0, 0, 0);
        assert_eq!(v.backlog_due(), None);
        v.written(0, 4096, 1);
        assert_eq!(v.backlog_due(), Some(2));
        assert_eq!(v.backlog_due(), None, "taken once");
        // Saved with write 2 in flight: v7 names it.
        assert!(v.save_state().unwrap().is_ok());
        let st = state::load(
            &d.path().join("local-j-0-verify.state"),
            Generation::Latest,
            4,
        )
        .unwrap();
        let VerifyState::V7(s7) = st else { panic!() };
        assert_eq!(s7.numberio, 3);
        assert_eq!(s7.inflight, vec![2, EMPTY, EMPTY, EMPTY]);
        // The read-back finds good blocks good and a changed byte bad (in flight: skipped).
        assert!(v.begin_phase(None));
        let e = block(&v.next_check());
        let tag = Some(WriteTag {
            numberio: e.numberio,
            seed: e.seed,
        });
        assert!(v.check(&mut blocks[0], 0, 0, tag, "f").is_ok());
        blocks[1][100] ^= 1;
        let e = block(&v.next_check());
        let tag = Some(WriteTag {
            numberio: e.numberio,
            seed: e.seed,
        });
        let m = v.check(&mut blocks[1], 0, 4096, tag, "f").unwrap_err();
        assert_eq!(m.offset, 4096);
        assert_eq!(m.class, Class::Corrupt);
        assert_eq!(v.next_check(), CheckNext::Done, "write 2 never completed");
        v.end_phase();
    }

    #[test]
    fn a_block_written_twice_is_checked_against_its_last_write() {
        let d = tempfile::tempdir().unwrap();
        let mut v = VerState::new(&plan(d.path(), Generation::Latest, Order::Offset), 4).unwrap();
        let mut old = vec![0u8; 4096];
        let mut new = vec![0u8; 4096];
        v.next_write(&mut old, 0, 8192, 0);
        v.written(0, 8192, 0);
        let t = v.next_write(&mut new, 0, 8192, 0);
        v.written(0, 8192, 1);
        assert!(v.begin_phase(None));
        let e = block(&v.next_check());
        assert_eq!((e.numberio, e.prev.map(|p| p.numberio)), (1, Some(0)));
        v.set_prev(0, e.prev);
        assert_eq!(v.next_check(), CheckNext::Done, "one entry per block");
        let tag = Some(t);
        assert!(v.check(&mut new.clone(), 0, 8192, tag, "f").is_ok());
        // The older write found there instead: stale, not a seed mismatch of nowhere.
        let m = v.check(&mut old, 0, 8192, tag, "f").unwrap_err();
        assert_eq!(m.class, Class::Stale, "{:?}", m.lines(Generation::Latest));
    }

    #[test]
    fn the_state_file_records_the_offset_generators_state() {
        use flexio_workload::rng::{Taus88, TausState};
        let d = tempfile::tempdir().unwrap();
        let load = |p: &VerifyPlan| match state::load(&p.state_file, p.format.gen, 4).unwrap() {
            VerifyState::V3(s) => s.rand,
            VerifyState::V7(s) => s.rand,
        };
        let mut g = Taus88::new(0xb189_9bed);
        let initial = RandState::Taus88(g.state());
        for gen in [Generation::Fio333, Generation::Latest] {
            for reseed in [true, false] {
                let mut p = plan(d.path(), gen, Order::Written);
                p.rand_initial = Some(initial);
                p.rand_tracked = true;
                p.rand_reseed = reseed;
                let mut v = VerState::new(&p, 4).unwrap();
                let mut b = vec![0u8; 4096];
                // Three random writes, each after its offset's draw.
                for i in 0..3u64 {
                    g.next_u32();
                    v.next_write(&mut b, 0, i * 4096, 0);
                    assert!(v.tracks_rand());
                    v.note_rand(TausState::T32(g.state()));
                    v.written(0, i * 4096, i);
                }
                let moved = RandState::Taus88(g.state());
                assert_ne!(moved, initial);
                v.save_state().unwrap().unwrap();
                assert_eq!(load(&p), moved, "{gen:?}: interrupted before the read-back");
                // The read-back seeds the generator again with randrepeat (fio's saved
                // state of a job that verified), keeps it without.
                assert!(v.begin_phase(None));
                v.end_phase();
                v.save_state().unwrap().unwrap();
                let want = if reseed { initial } else { moved };
                assert_eq!(load(&p), want, "{gen:?} randrepeat={reseed}");
                g = Taus88::new(0xb189_9bed);
            }
        }
        // fio 3.33 leaves the state of a job without random offsets zeroed.
        let p = plan(d.path(), Generation::Fio333, Order::Offset);
        let mut v = VerState::new(&p, 4).unwrap();
        let mut b = vec![0u8; 4096];
        v.next_write(&mut b, 0, 0, 0);
        assert!(!v.tracks_rand());
        v.save_state().unwrap().unwrap();
        assert_eq!(load(&p), RandState::Taus88([0; 3]));
    }

    #[test]
    fn fsynced_verifies_the_writes_the_last_completed_fsync_covered() {
        let d = tempfile::tempdir().unwrap();
        for order in [Order::Offset, Order::Written] {
            let mut p = plan(d.path(), Generation::Latest, order);
            p.fsynced = true;
            p.backlog = 0;
            let mut v = VerState::new(&p, 4).unwrap();
            assert!(v.fsync_policy());
            let mut b = vec![0u8; 4096];
            let mut marks = Vec::new();
            // Six writes, an fsync submitted after the 2nd and after the 5th; the 6th
            // stays in flight.
            for i in 0..6u64 {
                v.next_write(&mut b, 0, (5 - i) * 4096, 0);
                if i < 5 {
                    v.written(0, (5 - i) * 4096, i);
                }
                if i == 1 || i == 4 {
                    marks.push(v.sync_mark());
                }
            }
            assert_eq!(marks, vec![2, 5]);
            let drain = |v: &mut VerState| {
                let mut got = Vec::new();
                assert!(v.begin_phase(None));
                while let CheckNext::Block(e) = v.next_check() {
                    got.push(e.numberio);
                }
                v.end_phase();
                got.sort_unstable();
                got
            };
            // No fsync completed: nothing is verified, and the state says so.
            v.save_state().unwrap().unwrap();
            let VerifyState::V7(s) = state::load(&p.state_file, p.format.gen, 4).unwrap() else {
                panic!()
            };
            assert_eq!(s.numberio, 0);
            assert_eq!(drain(&mut v), Vec::<u64>::new(), "{order:?}");
            // The later fsync completes first, the earlier one after it: the threshold
            // stays at the later one's.
            let mut v = VerState::new(&p, 4).unwrap();
            for i in 0..6u64 {
                v.next_write(&mut b, 0, (5 - i) * 4096, 0);
                if i < 5 {
                    v.written(0, (5 - i) * 4096, i);
                }
            }
            v.synced(5);
            v.synced(2);
            v.save_state().unwrap().unwrap();
            let VerifyState::V7(s) = state::load(&p.state_file, p.format.gen, 4).unwrap() else {
                panic!()
            };
            assert_eq!(s.numberio, 5, "the state's numberio is the fsync threshold");
            assert_eq!(drain(&mut v), vec![0, 1, 2, 3, 4], "{order:?}");
            // Only the first fsync completed.
            let mut v = VerState::new(&p, 4).unwrap();
            for i in 0..6u64 {
                v.next_write(&mut b, 0, (5 - i) * 4096, 0);
                v.written(0, (5 - i) * 4096, i);
            }
            v.synced(2);
            assert_eq!(drain(&mut v), vec![0, 1], "{order:?}");
        }
    }

    #[test]
    fn the_completed_policy_verifies_every_completed_write() {
        let d = tempfile::tempdir().unwrap();
        let mut p = plan(d.path(), Generation::Latest, Order::Offset);
        p.backlog = 0;
        let mut v = VerState::new(&p, 4).unwrap();
        let mut b = vec![0u8; 4096];
        for i in 0..3u64 {
            v.next_write(&mut b, 0, i * 4096, 0);
            v.written(0, i * 4096, i);
        }
        v.synced(1);
        v.save_state().unwrap().unwrap();
        let VerifyState::V7(s) = state::load(&p.state_file, p.format.gen, 4).unwrap() else {
            panic!()
        };
        assert_eq!(s.numberio, 3);
        assert!(v.begin_phase(None));
        let mut n = 0;
        while let CheckNext::Block(_) = v.next_check() {
            n += 1;
        }
        assert_eq!(n, 3);
    }

    #[test]
    fn a_saved_state_limits_the_replay_in_both_generations() {
        let d = tempfile::tempdir().unwrap();
        // Writer: writes 0 and 1 complete, 2 in flight when it stops.
        for gen in [Generation::Latest, Generation::Fio333] {
            let mut p = plan(d.path(), gen, Order::Written);
            p.depth = 1;
            let mut w = VerState::new(&p, 1).unwrap();
            let mut b = vec![0u8; 4096];
            for i in 0..3u64 {
                w.next_write(&mut b, 0, i * 4096, 0);
            }
            w.written(0, 0, 0);
            w.written(0, 4096, 1);
            w.save_state().unwrap().unwrap();
            // Reader: verify_only replays the same writes.
            p.state_load = true;
            p.verify_only = true;
            let mut r = VerState::new(&p, 1).unwrap();
            let mut z = vec![0u8; 4096];
            for i in 0..3u64 {
                r.next_write(&mut z, 0, i * 4096, 0);
                r.written(0, i * 4096, i);
            }
            assert!(z.iter().all(|x| *x == 0), "verify_only writes no data");
            assert!(r.begin_phase(None));
            assert_eq!(block(&r.next_check()).numberio, 0, "{gen:?}");
            assert_eq!(block(&r.next_check()).numberio, 1, "{gen:?}");
            assert!(
                matches!(r.next_check(), CheckNext::Stop(_)),
                "{gen:?}: write 2 had not completed"
            );
            // The other generation's reader refuses the file, naming why.
            let mut q = p.clone();
            q.format.gen = gen.other();
            let e = VerState::new(&q, 1).err().unwrap();
            assert!(e.contains("version in verify state header"), "{e}");
            std::fs::remove_file(&p.state_file).unwrap();
            assert!(VerState::new(&p, 1).is_err(), "a missing file is an error");
        }
    }
}
