//! A job's verification state: write numbering and seeding, the written-block log, the
//! backlog trigger, the read-back phase, checks of read blocks and the state file. The
//! block formats and checksums are `crate::verify`'s (pure); this part keeps what one job
//! thread knows while it runs.

use crate::plan::VerifyPlan;
use crate::verify::{self, Expect, Failure, Log, Piece, Place, Verifier};

/// The read re-reads a logged block (verify phase or backlog).
pub const VF_PHASE: u8 = 1;
/// A verified write (log the block on completion).
pub const VF_WRITE: u8 = 2;

pub struct VerState {
    v: Verifier,
    log: Log,
    seed_base: u64,
    /// Writes prepared so far (the next write's number).
    writes: u64,
    /// Writes in flight (their numbers), to know how many completed in order.
    inflight: Vec<u64>,
    check_reads: bool,
    check_numberio: bool,
    overlap: bool,
    do_verify: bool,
    verify_only: bool,
    pub fatal: bool,
    pub dump: bool,
    backlog: u64,
    batch: u64,
    since_backlog: u64,
    backlog_due: bool,
    /// verify_state_load: only writes below this number are checked.
    limit: Option<u64>,
    /// In the write phase (for verify_state_save).
    writing: bool,
    state_save: bool,
    state_file: std::path::PathBuf,
}

/// What a prepared write carries: its number and data seed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteTag {
    pub numberio: u64,
    pub seed: u64,
}

impl VerState {
    /// The state of a verifying job; `Err` when its saved state cannot be loaded.
    pub fn new(p: &VerifyPlan) -> Result<Self, String> {
        let limit = if p.state_load {
            Some(verify::load_state(&p.state_file)?)
        } else {
            None
        };
        Ok(VerState {
            v: p.verifier.clone(),
            log: Log::default(),
            seed_base: p.seed_base,
            writes: 0,
            inflight: Vec::new(),
            check_reads: p.check_reads,
            check_numberio: p.check_numberio,
            overlap: p.overlap,
            do_verify: p.do_verify,
            verify_only: p.verify_only,
            fatal: p.fatal,
            dump: p.dump,
            backlog: p.backlog,
            batch: p.backlog_batch,
            since_backlog: 0,
            backlog_due: false,
            limit,
            writing: p.writes,
            state_save: p.state_save,
            state_file: p.state_file.clone(),
        })
    }

    /// A read-only job: every read is checked (header and checksum only).
    #[inline]
    pub fn checks_reads(&self) -> bool {
        self.check_reads
    }

    /// verify_only: writes are not done, only remembered for the check.
    pub fn verify_only(&self) -> bool {
        self.verify_only
    }

    /// Number and seed the next write; fill its buffer (data and headers) unless
    /// verify_only. `since_epoch_ns` stamps the header's time.
    pub fn next_write(&mut self, buf: &mut [u8], offset: u64, since_epoch_ns: u64) -> WriteTag {
        let n = self.writes;
        self.writes += 1;
        let seed = verify::block_seed(self.seed_base, n);
        if !self.verify_only {
            self.inflight.push(n);
            let t = since_epoch_ns;
            self.v.fill(
                buf,
                offset,
                seed,
                n as u16,
                ((t / 1_000_000_000) as u32, (t % 1_000_000_000) as u32),
            );
        }
        WriteTag { numberio: n, seed }
    }

    /// A verified write completed (or verify_only replays it): log the block.
    pub fn written(&mut self, p: Piece) {
        if let Some(i) = self.inflight.iter().position(|x| *x == p.numberio) {
            self.inflight.swap_remove(i);
        }
        if self.limit.is_some_and(|l| p.numberio >= l) {
            return;
        }
        self.log.push(p);
        if self.backlog > 0 {
            self.since_backlog += 1;
            if self.since_backlog >= self.backlog {
                self.since_backlog = 0;
                self.backlog_due = true;
            }
        }
    }

    /// A verified write failed (and the job goes on): it will not be checked.
    pub fn write_failed(&mut self, numberio: u64) {
        self.inflight.retain(|x| *x != numberio);
    }

    /// verify_backlog: a batch of logged blocks is due for checking (how many).
    #[inline]
    pub fn backlog_due(&mut self) -> Option<u64> {
        std::mem::take(&mut self.backlog_due).then_some(self.batch)
    }

    /// The next logged block to check.
    pub fn next_check(&mut self) -> Option<Piece> {
        self.log.next_piece()
    }

    /// After a loop's writes: whether a read-back phase runs (it does unless the job only
    /// reads or do_verify=0); the log is put in checking order.
    pub fn begin_phase(&mut self) -> bool {
        if self.check_reads || !self.do_verify {
            self.log.clear();
            return false;
        }
        self.writing = false;
        self.log.settle(self.overlap);
        true
    }

    pub fn end_phase(&mut self) {
        self.log.clear();
        self.writing = !self.verify_only;
    }

    /// Check a read block; `phase` (with `tag`) for a read-back of a logged write.
    pub fn check(
        &self,
        buf: &mut [u8],
        offset: u64,
        tag: Option<WriteTag>,
        file: &str,
    ) -> Result<(), Failure> {
        let expect = match tag {
            Some(t) => Expect {
                seed: Some(t.seed),
                numberio: self.check_numberio.then_some(t.numberio as u16),
            },
            None => Expect::default(),
        };
        let place = Place {
            file,
            flags: if tag.is_some() { "88" } else { "8" },
        };
        crate::debug_log!(
            crate::debug::Cat::Verify,
            "verify: off=0x{offset:x},len=0x{:x},file={file},seed={:?}",
            buf.len(),
            expect.seed
        );
        let r = self.v.check(buf, offset, expect, &place);
        if let Err(f) = &r {
            crate::debug_log!(
                crate::debug::Cat::Verify,
                "verify failed at 0x{offset:x}: {f:?}"
            );
        }
        r
    }

    /// verify_state_save: a verifying write job stopped before its read-back records how
    /// many writes completed in order, for a later `verify_only` + `verify_state_load`.
    /// `None` when there is nothing to save.
    pub fn save_state(&self, stopped: bool) -> Option<Result<(), String>> {
        if !self.state_save || !self.writing || !stopped {
            return None;
        }
        let done = self.inflight.iter().copied().min().unwrap_or(self.writes);
        Some(verify::save_state(&self.state_file, done).map_err(|e| {
            format!(
                "fio: failed to save verify state {}: {e}",
                self.state_file.display()
            )
        }))
    }
}

/// verify_dump: write the received block (and the expected one, when it can be rebuilt)
/// next to the job as `<file>.<offset>.received|expected`; returns fio's message lines.
pub fn dump(f: &Failure, block_offset: u64, received: &[u8], file: &str) -> Vec<String> {
    let base = std::path::Path::new(file)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "block".into());
    let lo = (f.offset - block_offset) as usize;
    let hi = (lo + f.len as usize).min(received.len());
    let chunk = if f
        .expected
        .as_ref()
        .is_some_and(|e| e.len() == received.len())
    {
        received
    } else {
        &received[lo.min(hi)..hi]
    };
    let mut lines = Vec::new();
    let mut write = |what: &str, data: &[u8]| {
        let name = format!("{base}.{}.{what}", f.offset);
        lines.push(
            match crate::notes::write_atomic(std::path::Path::new(&name), data) {
                Ok(()) => format!("       {what} data dumped as {name}"),
                Err(e) => format!("fio: dump {name}: {e}"),
            },
        );
    };
    write("received", chunk);
    if let Some(e) = &f.expected {
        write("expected", e);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use flexio_job::options::verify_code;

    fn plan(dir: &std::path::Path) -> VerifyPlan {
        VerifyPlan {
            verifier: Verifier {
                kind: verify_code::CRC32C,
                interval: 0,
                hdr_offset: 0,
                pattern: None,
                thread: 1,
            },
            seed_base: 42,
            do_verify: true,
            verify_only: false,
            fatal: false,
            dump: false,
            backlog: 2,
            backlog_batch: 2,
            check_reads: false,
            check_numberio: true,
            overlap: false,
            writes: true,
            state_file: dir.join("local-j-0-verify.state"),
            state_save: true,
            state_load: false,
        }
    }

    fn piece(t: WriteTag, offset: u64) -> Piece {
        Piece {
            file: 0,
            offset,
            len: 4096,
            seed: t.seed,
            numberio: t.numberio,
        }
    }

    #[test]
    fn writes_are_logged_checked_and_the_backlog_triggers() {
        let d = tempfile::tempdir().unwrap();
        let mut v = VerState::new(&plan(d.path())).unwrap();
        let mut blocks = vec![vec![0u8; 4096]; 3];
        let tags: Vec<WriteTag> = (0..3)
            .map(|i| v.next_write(&mut blocks[i], i as u64 * 4096, 1000))
            .collect();
        assert_eq!(tags[2].numberio, 2);
        v.written(piece(tags[0], 0));
        assert_eq!(v.backlog_due(), None);
        v.written(piece(tags[1], 4096));
        assert_eq!(v.backlog_due(), Some(2));
        assert_eq!(v.backlog_due(), None, "taken once");
        // Stopped with write 2 in flight: the saved state says 2 completed in order.
        assert!(v.save_state(true).unwrap().is_ok());
        assert_eq!(verify::load_state(&plan(d.path()).state_file).unwrap(), 2);
        // The read-back finds good blocks good and a changed byte bad.
        assert!(v.begin_phase());
        let p = v.next_check().unwrap();
        let tag = Some(WriteTag {
            numberio: p.numberio,
            seed: p.seed,
        });
        assert!(v.check(&mut blocks[0], 0, tag, "f").is_ok());
        blocks[1][100] ^= 1;
        let p = v.next_check().unwrap();
        let tag = Some(WriteTag {
            numberio: p.numberio,
            seed: p.seed,
        });
        let f = v.check(&mut blocks[1], 4096, tag, "f").unwrap_err();
        assert_eq!(f.offset, 4096);
        assert!(v.next_check().is_none());
        v.end_phase();
        assert!(v.save_state(false).is_none(), "not stopped: nothing saved");
    }

    #[test]
    fn a_saved_state_limits_the_replay() {
        let d = tempfile::tempdir().unwrap();
        let mut p = plan(d.path());
        verify::save_state(&p.state_file, 1).unwrap();
        p.state_load = true;
        p.verify_only = true;
        let mut v = VerState::new(&p).unwrap();
        let mut b = vec![0u8; 4096];
        let t0 = v.next_write(&mut b, 0, 0);
        assert!(b.iter().all(|x| *x == 0), "verify_only writes no data");
        let t1 = v.next_write(&mut b, 4096, 0);
        v.written(piece(t0, 0));
        v.written(piece(t1, 4096));
        assert!(v.begin_phase());
        assert_eq!(v.next_check().map(|p| p.numberio), Some(0));
        assert!(v.next_check().is_none(), "write 1 had not completed");
        // A missing state file is an error, not an empty check.
        std::fs::remove_file(&p.state_file).unwrap();
        assert!(VerState::new(&p).is_err());
    }
}
