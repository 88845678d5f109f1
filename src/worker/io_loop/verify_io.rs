//! The loop's side of verification: numbering verified writes, logging completed ones,
//! reading blocks back and checking them (the state is `super::super::verify`'s).

use super::*;

impl<E: EngineDef> Worker<'_, E> {
    /// A write of a verifying job: number it, seed it, fill data and headers.
    #[cold]
    pub(super) fn prepare_verified_write(&mut self, slot: u32) {
        let since = self.clock.now().saturating_sub(self.epoch_ns);
        let Some(vs) = self.ver.as_mut() else { return };
        let s = &mut self.slots[slot as usize];
        let buf = &mut self.bufs.slot_mut(slot as usize)[..s.len as usize];
        let t = vs.next_write(buf, s.offset, since);
        s.vflags = VF_WRITE;
        s.vnum = t.numberio;
        s.vseed = t.seed;
    }

    /// Log a verified block (its write completed, or verify_only replays it).
    #[cold]
    pub(super) fn log_written(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        if let Some(vs) = self.ver.as_mut() {
            vs.written(crate::verify::Piece {
                file: s.file,
                offset: s.offset,
                len: s.len,
                seed: s.vseed,
                numberio: s.vnum,
            });
        }
    }

    /// Re-read and check up to `max` logged blocks (the verify phase, or a backlog batch).
    pub(super) fn verify_blocks(&mut self, max: u64) {
        let mut left = max;
        let mut now = self.clock.now();
        while left > 0 && !self.stop && !self.terminated() {
            let Some(piece) = self.ver.as_mut().and_then(|v| v.next_check()) else {
                break;
            };
            left -= 1;
            let slot = loop {
                if let Some(s) = self.free.pop() {
                    break Some(s);
                }
                self.commit();
                self.reap(1);
                if self.stop {
                    break None;
                }
            };
            let Some(slot) = slot else { break };
            self.slots[slot as usize] = Slot {
                op: 0,
                ddir: 0,
                file: piece.file,
                offset: piece.offset,
                len: piece.len,
                prio: self.prio.default(),
                vflags: VF_PHASE,
                vnum: piece.numberio,
                vseed: piece.seed,
                ..Slot::default()
            };
            now = self.submit(slot, now);
            self.periodic(now);
        }
        self.quiesce();
    }

    /// After a loop's writes: read back everything logged (fio's do_verify).
    pub(super) fn verify_phase(&mut self) {
        let Some(vs) = self.ver.as_mut() else { return };
        if !vs.begin_phase() {
            return;
        }
        self.progress.set_state(RunState::Verifying);
        self.verify_blocks(u64::MAX);
        if let Some(vs) = self.ver.as_mut() {
            vs.end_phase();
        }
    }

    /// Check a completed read of a verifying job; a failure is EILSEQ in the verify class.
    #[cold]
    pub(super) fn verify_read(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        let Some(vs) = self.ver.as_ref() else { return };
        let tag = (s.vflags & VF_PHASE != 0).then_some(WriteTag {
            numberio: s.vnum,
            seed: s.vseed,
        });
        // No allocation per verified read: a UTF-8 path is borrowed.
        let plan = self.p;
        let path = plan
            .files
            .get(s.file as usize)
            .map(|f| f.path.to_string_lossy())
            .unwrap_or_default();
        let buf = &mut self.bufs.slot_mut(slot as usize)[..s.len as usize];
        let Err(f) = vs.check(buf, s.offset, tag, &path) else {
            return;
        };
        for l in &f.lines {
            self.ctx.notes.err(l);
        }
        let (fatal, dump) = (vs.fatal, vs.dump);
        if dump {
            let received = &self.bufs.slot_mut(slot as usize)[..s.len as usize];
            for l in super::super::verify::dump(&f, s.offset, received, &path) {
                self.ctx.notes.err(&l);
            }
        }
        let func = if self.caps.syncio {
            "io_u_sync_complete"
        } else {
            "io_u_queued_complete"
        };
        if self.p.errors.tolerates(err_class::VERIFY, libc::EILSEQ) {
            self.stats.count_error(libc::EILSEQ);
            self.stats.set_soft_error(libc::EILSEQ, String::new());
            if fatal {
                self.stop = true;
            }
            return;
        }
        self.fail(libc::EILSEQ, func);
    }
}
