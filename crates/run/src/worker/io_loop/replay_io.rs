//! The job loop's side of trace replay and capture: requests from the trace instead of
//! the generator, file actions, the trace's pacing, and the capture hooks.

use super::*;
use crate::iolog::Act;

impl<E: Engine> Worker<'_, E> {
    /// Replay: the next request of the trace into `slot`, doing the file actions and waits
    /// before it; `None` at the end of the trace (or when the job must stop).
    pub(super) fn prepare_replay(&mut self, slot: u32) -> Option<u8> {
        let e = self.replay_next()?;
        let (op, ddir) = match e.act {
            Act::Read => (0, 0),
            Act::Write => (1, 1),
            Act::Trim => (2, 2),
            Act::Sync => (OP_SYNC, OP_SYNC),
            Act::Datasync => (OP_DSYNC, OP_SYNC),
            Act::SyncRange => (OP_SFR, OP_SYNC),
            // replay_next returns requests only.
            Act::Add | Act::Open | Act::Close | Act::Wait => return None,
        };
        let s = &mut self.slots[slot as usize];
        *s = Slot {
            op,
            ddir,
            file: e.file,
            offset: e.offset,
            len: e.len,
            ..Slot::default()
        };
        if op == 1 && self.ver.is_some() {
            // verify: the trace's writes are numbered, seeded and logged like the
            // generator's, and read back after the trace.
            self.prepare_verified_write(slot);
        } else if op == 1 {
            self.fill_write(slot, e.offset, e.len);
        }
        self.replay_issued();
        Some(op)
    }

    /// The trace's next request (a read, write, trim or sync), after the file actions,
    /// waits and delays before it; `None` at the end of the trace (or when the job must
    /// stop).
    #[inline(never)]
    pub(super) fn replay_next(&mut self) -> Option<crate::iolog::Entry> {
        loop {
            if self.stop || self.terminated() {
                return None;
            }
            let e = match self.replay.as_mut()?.next_entry() {
                Ok(Some(e)) => e,
                Ok(None) => return None,
                Err(m) => {
                    self.ctx.notes.err(&format!("fio: {}: {m}", self.plan.name));
                    self.fail(libc::EINVAL, "iolog read");
                    return None;
                }
            };
            if e.delay_us > 0 && !self.replay_delay(e.delay_us) {
                return None;
            }
            match e.act {
                Act::Add => continue,
                Act::Open => {
                    let redirect = self.replay.as_ref().is_some_and(|r| r.redirect);
                    // With replay_redirect a re-open of the one file is ignored.
                    let open = (redirect && self.files.is_open(e.file as usize))
                        || self.ensure_open(e.file as usize);
                    if !open {
                        return None;
                    }
                    self.replay_issued();
                }
                Act::Close => {
                    if self.files.is_open(e.file as usize) {
                        self.quiesce();
                        let t0 = self.clock.now();
                        self.files.close(
                            e.file as usize,
                            &mut self.engine,
                            self.plan.open.fsync_on_close,
                        );
                        self.target_since(t0);
                        self.publish_files();
                    }
                    self.replay_issued();
                }
                Act::Wait => {
                    // Version 2: until this many ms after the job started.
                    let due = self.epoch_ns + e.delay_us.saturating_mul(1_000_000);
                    if due > self.clock.now() && !self.wait_until(due) {
                        return None;
                    }
                }
                _ => return Some(e),
            }
        }
    }

    /// The plain loop's request of the trace is issued at `now`.
    #[inline]
    pub(super) fn replay_stamp(&mut self, now: u64) {
        if let Some(r) = self.replay.as_mut() {
            r.issued(now);
        }
    }

    /// A request or file action of the trace is issued now.
    fn replay_issued(&mut self) {
        let now = self.clock.now();
        self.replay_stamp(now);
    }

    /// fio's iolog_delay: sleep what is left of `delay` µs since the last issue, keeping
    /// periodic work going; false when the job must stop instead.
    ///
    /// As fio's usec_sleep, the last stretch of a wait shorter than the system's sleep
    /// granularity is spun: a sleep of a few µs takes tens, and a trace's short gaps would
    /// otherwise be lost (the oversleep is taken off the next delays, which then pass
    /// before they are reached).
    fn replay_delay(&mut self, delay: u64) -> bool {
        let now = self.clock.now();
        let Some(us) = self.replay.as_mut().and_then(|r| r.sleep_for(delay, now)) else {
            return true;
        };
        let t0 = self.clock.now();
        let due = t0 + us * 1000;
        let gran = super::super::sleep_granularity_ns();
        let mut go_on = true;
        if us * 1000 > gran {
            go_on = self.sleep_until(t0, due - gran).0;
        }
        if go_on {
            let t1 = self.clock.now();
            go_on = self.spin_until(due);
            self.stats.wait_ns += self.clock.now().saturating_sub(t1);
        }
        let slept = self.clock.now().saturating_sub(t0);
        if let Some(rp) = self.replay.as_mut() {
            rp.slept(delay, slept / 1000);
        }
        go_on
    }

    /// Busy-wait until `due`; false when the job must stop instead.
    fn spin_until(&mut self, due: u64) -> bool {
        loop {
            let now = self.clock.now();
            if now >= due {
                return true;
            }
            if self.should_stop(now) {
                return false;
            }
            std::hint::spin_loop();
        }
    }

    /// Capture: a file action.
    pub(super) fn capture_file(&mut self, i: usize, act: Act) {
        if self.capture.is_some() {
            let now = self.clock.now();
            if let Some(c) = self.capture.as_mut() {
                c.file(now, i as u32, act);
            }
        }
    }

    /// Capture: a request as it is queued (fio logs sync requests with the offset of the
    /// previous request its slot held: fio's free requests are a stack, as the slots'
    /// free list is). The rest of a short request queued again is logged at the offset it
    /// goes on from, with the request's whole length (fio's requeued request), and its
    /// slot keeps that offset.
    #[inline]
    pub(super) fn capture_io(&mut self, slot: u32) {
        if self.capture.is_none() {
            return;
        }
        let s = self.slots[slot as usize];
        let act = act_of(s.op);
        let now = self.clock.now();
        if let Some(c) = self.capture.as_mut() {
            let last = c.slot_offset(slot);
            let offset = if s.op >= OP_SYNC {
                // The request's slot keeps its offset (fio's io_u).
                *last
            } else {
                *last = s.offset + s.done;
                *last
            };
            let len = if s.op >= OP_SYNC { 0 } else { s.len };
            c.io(now, s.file, act, offset, len);
        }
    }

    /// Set-up of replay and capture before the files are opened; false when the job
    /// cannot run.
    pub(super) fn setup_trace(&mut self) -> bool {
        if let Some(rp) = &self.plan.replay {
            for n in &rp.notes {
                self.ctx.notes.err(&format!("fio: {}: {n}", self.plan.name));
            }
            match super::super::replay::Replay::open(rp) {
                Ok(r) => self.replay = Some(Box::new(r)),
                Err(m) => {
                    self.ctx.notes.err(&format!("fio: {m}"));
                    self.fail(libc::EINVAL, "failed initializing iolog");
                    return false;
                }
            }
        }
        if let Some(cp) = &self.plan.capture {
            let paths: Vec<&std::path::Path> =
                self.plan.files.iter().map(|f| f.path.as_path()).collect();
            match super::super::capture::Capture::create(&cp.path, &paths, self.clock.now()) {
                Ok(c) => self.capture = Some(Box::new(c)),
                Err(m) => {
                    self.ctx.notes.err(&format!("fio: {m}"));
                    self.fail(libc::EINVAL, "failed initializing iolog");
                    return false;
                }
            }
        }
        true
    }

    /// The end of capture: flush the log.
    pub(super) fn finish_trace(&mut self) {
        if let Some(c) = self.capture.as_mut() {
            if let Some(e) = c.finish() {
                self.ctx.notes.err(&format!("fio: {e}"));
            }
        }
    }
}

/// The write_iolog action of a request's operation.
fn act_of(op: u8) -> Act {
    match op {
        0 => Act::Read,
        1 => Act::Write,
        2 => Act::Trim,
        OP_SYNC => Act::Sync,
        OP_SFR => Act::SyncRange,
        _ => Act::Datasync,
    }
}
