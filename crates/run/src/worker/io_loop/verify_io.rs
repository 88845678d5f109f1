//! The loop's side of verification: numbering verified writes, logging completed ones,
//! reading blocks back and checking them (the state is `super::super::verify`'s).

use super::*;

impl<E: Engine> Worker<'_, E> {
    /// A write of a verifying job: number it, seed it, fill data and headers.
    #[cold]
    pub(super) fn prepare_verified_write(&mut self, slot: u32) {
        let since = self.clock.now().saturating_sub(self.epoch_ns);
        let Some(vs) = self.ver.as_mut() else { return };
        let s = &mut self.slots[slot as usize];
        let buf = &mut self.bufs.slot_mut(slot as usize)[..s.len as usize];
        let t = vs.next_write(buf, s.file, s.offset, since);
        if vs.tracks_rand() {
            vs.note_rand(self.gen.offset_state());
        }
        s.vflags = VF_WRITE;
        s.vnum = t.numberio;
        s.vseed = t.seed;
    }

    /// Log a verified block (its write completed, or verify_only replays it).
    #[cold]
    /// verify_only: a write the job's workload would have done, not done. fio counts it as
    /// issued and completes it at once (its bytes and a near-zero latency: the newest
    /// fio reports the workload's write direction beside the reads, "phantom" writes).
    pub(super) fn phantom_write(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        self.count_issue(s.ddir, s.op);
        self.completed_total += 1;
        if !self.accounting {
            return;
        }
        let t = self.clock.now();
        let s = Slot {
            start_ns: t,
            issue_ns: t,
            sched_ns: 0,
            ..s
        };
        self.account::<false>(&s, t);
    }

    pub(super) fn log_written(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        if let Some(vs) = self.ver.as_mut() {
            vs.written(s.file, s.offset, s.vnum);
        }
    }

    /// Re-read and check up to `max` logged blocks (the verify phase, or a backlog batch).
    pub(super) fn verify_blocks(&mut self, max: u64) {
        let mut left = max;
        let mut now = self.clock.now();
        // fio's do_verify stops once the job's runtime is up, as its I/O loop does.
        while left > 0 && !self.stop && !self.terminated() && now < self.runtime_end_ns {
            let Some(vs) = self.ver.as_mut() else { break };
            let piece = match vs.next_check() {
                CheckNext::Block(e) => e,
                CheckNext::Done => break,
                CheckNext::Stop(msg) => {
                    if let Some(m) = msg {
                        self.ctx.notes.info(&m);
                    }
                    break;
                }
            };
            left -= 1;
            let slot = loop {
                if let Some(s) = self.free.pop() {
                    break Some(s);
                }
                self.commit();
                self.reap::<false>(1);
                if self.stop {
                    break None;
                }
            };
            let Some(slot) = slot else { break };
            let mut vflags = VF_PHASE;
            if let Some(vs) = self.ver.as_mut() {
                vs.set_prev(slot as usize, piece.prev);
                if vs.take_trimmed(piece.numberio) {
                    vflags |= VF_TRIMMED;
                }
            }
            self.slots[slot as usize] = Slot {
                op: 0,
                ddir: 0,
                file: piece.file,
                offset: piece.offset,
                len: piece.len,
                prio: self.prio.default(),
                vflags,
                vnum: piece.numberio,
                vseed: piece.seed,
                ..Slot::default()
            };
            now = self.submit::<false>(slot, now);
            self.periodic(now);
        }
        self.quiesce();
        self.drain_async(true);
    }

    /// Trim verification: before the next I/O, trim a logged block if one is due (after
    /// the write it trims has completed). The trim's length, if one was issued.
    #[inline]
    pub(super) fn issue_due_trim(&mut self) -> Option<u64> {
        let last = self.last_done_trim;
        let e = self.ver.as_mut()?.trim_due(last)?;
        self.issue_trim(e)
    }

    #[cold]
    fn issue_trim(&mut self, e: crate::verify::wlog::Entry) -> Option<u64> {
        if e.in_flight {
            // Never discard a block while its write may still land after the discard.
            self.quiesce();
        }
        let slot = loop {
            if let Some(s) = self.free.pop() {
                break s;
            }
            self.commit();
            self.reap::<false>(1);
            if self.stop {
                return None;
            }
        };
        self.slots[slot as usize] = Slot {
            op: 2,
            ddir: 2,
            file: e.file,
            offset: e.offset,
            len: e.len,
            prio: self.prio.default(),
            ..Slot::default()
        };
        let now = self.clock.now();
        self.submit::<false>(slot, now);
        Some(e.len)
    }

    /// A re-read block that was trimmed: it must be zeros (fio's trim_verify_zero check).
    #[cold]
    fn verify_zeros(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        let buf = &self.bufs.slot_mut(slot as usize)[..s.len as usize];
        let Some(at) = super::super::trims::first_nonzero(buf) else {
            return;
        };
        let Some(vs) = self.ver.as_ref() else { return };
        let path = path_of(self.plan, s.file);
        let gen_333 = vs.generation() == crate::verify::Generation::Fio333;
        self.ctx.notes.err(&super::super::trims::zero_failure(
            gen_333, &path, s.offset, s.len, at,
        ));
        let fatal = vs.fatal;
        self.verify_failed(fatal);
    }

    /// After a loop's writes: read back everything logged (fio's do_verify).
    pub(super) fn verify_phase(&mut self) {
        let Some(vs) = self.ver.as_mut() else { return };
        if !vs.begin_phase(Some(&self.plan.spec)) {
            return;
        }
        self.progress.set_state(RunState::Verifying);
        self.reading_back = true;
        self.verify_blocks(u64::MAX);
        self.reading_back = false;
        if let Some(vs) = self.ver.as_mut() {
            vs.end_phase();
        }
    }

    /// Check a completed read of a verifying job (inline, or handed to the verify_async
    /// threads); a failure is EILSEQ in the verify class.
    #[cold]
    pub(super) fn verify_read(&mut self, slot: u32) {
        // An engine that only pretends to read (null) is taken at its word, as fio's
        // verify_io_u returns at once for FIO_FAKEIO engines (trimmed blocks included).
        if self.caps.fake_io {
            return;
        }
        let s = self.slots[slot as usize];
        if s.vflags & VF_TRIMMED != 0 {
            self.verify_zeros(slot);
            return;
        }
        let Some(vs) = self.ver.as_ref() else { return };
        let tag = (s.vflags & VF_PHASE != 0).then_some(WriteTag {
            numberio: s.vnum,
            seed: s.vseed,
        });
        if self.vasync.is_some() {
            let exp = vs.expectation(slot as usize, s.offset, s.len, tag);
            let listed = vs.listed(tag.is_some());
            while !self.vasync.as_ref().is_some_and(|a| a.has_room()) {
                if !self.drain_one(true) {
                    break;
                }
            }
            let data = &self.bufs.slot_mut(slot as usize)[..s.len as usize];
            if let Some(a) = self.vasync.as_mut() {
                a.submit(data, s.offset, s.file, exp, listed);
            }
            self.drain_async(false);
            return;
        }
        // No allocation per verified read: a UTF-8 path is borrowed.
        let path = path_of(self.plan, s.file);
        let buf = &mut self.bufs.slot_mut(slot as usize)[..s.len as usize];
        let Err(m) = vs.check(buf, slot as usize, s.offset, tag, &path) else {
            return;
        };
        let received = &self.bufs.slot_mut(slot as usize)[..s.len as usize];
        let fatal = report(vs, &self.ctx.notes, &m, received, &path);
        self.verify_failed(fatal);
    }

    /// A failed check: EILSEQ, tolerated (and counted) or fatal as the job says.
    #[cold]
    fn verify_failed(&mut self, fatal: bool) {
        let func = if self.vasync.is_some() {
            "async_verify"
        } else if self.caps.syncio {
            "io_u_sync_complete"
        } else {
            "io_u_queued_complete"
        };
        if self.plan.errors.tolerates(err_class::VERIFY, libc::EILSEQ) {
            self.stats.count_error(libc::EILSEQ);
            self.stats.set_soft_error(libc::EILSEQ, String::new());
            if fatal {
                self.stop = true;
            }
            return;
        }
        self.fail(libc::EILSEQ, func);
    }

    /// Take one finished asynchronous check (waiting for it when `wait`); false when none.
    fn drain_one(&mut self, wait: bool) -> bool {
        let Some(d) = self.vasync.as_mut().and_then(|a| a.next_done(wait)) else {
            return false;
        };
        if d.panicked && !self.stop {
            self.ctx
                .notes
                .err("flexio: a verify_async thread failed (panicked) while checking a block; the job stops");
            self.fail(libc::EIO, "verify");
        }
        // A job already stopped by a failure reports no more (fio's async threads stop
        // checking once the job has an error).
        if let Some(m) = d.mismatch.as_ref().filter(|_| !self.stop) {
            let path = path_of(self.plan, d.file);
            let fatal = match self.ver.as_ref() {
                Some(vs) => report(vs, &self.ctx.notes, m, &d.buf, &path),
                None => false,
            };
            self.verify_failed(fatal);
        }
        if let Some(a) = self.vasync.as_mut() {
            a.recycle(d.buf);
        }
        true
    }

    /// Report the asynchronous checks that finished (all outstanding ones when `all`).
    pub(super) fn drain_async(&mut self, all: bool) {
        while self.vasync.is_some() && self.drain_one(all) {}
    }
}

/// fio's lines and flexio's analysis of a failed check, and the verify_dump files;
/// whether verify_fatal stops the job.
#[cold]
fn report(
    vs: &VerState,
    notes: &crate::notes::Notes,
    m: &crate::verify::Mismatch,
    received: &[u8],
    path: &str,
) -> bool {
    for l in m.lines(vs.generation()) {
        notes.err(&l);
    }
    if vs.dump {
        for l in super::super::verify::dump(m, received, path, vs.aux_path.as_deref()) {
            notes.err(&l);
        }
    }
    vs.fatal
}
