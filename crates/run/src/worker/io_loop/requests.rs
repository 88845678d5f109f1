//! Requests through the engine: submit, commit, reap, complete, account, and the error
//! and latency checks of a completion.

use super::*;

/// A job's empty statistics, with a slot per operation kind of its engine.
pub(super) fn fresh_stats(p: &ThreadPlan) -> ThreadStats {
    let mut s = ThreadStats::new(p.stats_cfg);
    s.init_ops(p.engine.caps.op_kinds);
    if let Some(unit) = p.io.block_errors {
        let regions: Vec<(u64, u64)> = p
            .files
            .iter()
            .map(|f| (f.region.start, f.region.len))
            .collect();
        s.block_infos = Some(flexio_stats::blocks::BlockInfos::new(unit, &regions));
    }
    s
}

impl<E: Engine> Worker<'_, E> {
    pub(super) fn request(&self, slot: u32) -> IoReq {
        let s = &self.slots[slot as usize];
        IoReq {
            idx: slot,
            op: op_of(s.op),
            file: s.file,
            fd: self.files.raw(s.file as usize),
            offset: s.offset + s.done,
            // Past the bytes already moved by a short transfer (pointer arithmetic only).
            buf: self.bufs.ptr(slot as usize).wrapping_add(s.done as usize),
            len: (s.len - s.done) as usize,
            ioprio: s.prio,
            sync_flags: match (s.op, self.plan.sysio.sync_range) {
                (OP_SFR, Some((flags, _))) => flags,
                _ => 0,
            },
        }
    }

    /// File-op engines: the measured operation happens at a file's first use per loop.
    pub(super) fn file_op(&mut self, slot: u32) -> bool {
        let s = &self.slots[slot as usize];
        self.file_op_at(s.file as usize, s.ddir as usize)
    }

    /// [`Self::file_op`] of a request in direction `ddir` to file `file`; false when the
    /// operation failed (the job's error is set).
    #[inline(always)]
    pub(super) fn file_op_at(&mut self, file: usize, ddir: usize) -> bool {
        if !self.files.first_use(file) {
            return true;
        }
        let path = &self.plan.files[file].path;
        let t0 = self.clock.now();
        let r = self.engine.file_op(path);
        let t1 = self.clock.now();
        self.stats.engine_ns += t1 - t0;
        match r {
            Ok(()) => {
                if self.accounting {
                    let d = &mut self.stats.dirs[ddir];
                    d.clat.add(t1 - t0);
                    d.clat_hist.add(t1 - t0);
                }
                true
            }
            Err(e) => {
                self.file_op_failed(file, e);
                false
            }
        }
    }

    #[cold]
    #[inline(never)]
    fn file_op_failed(&mut self, file: usize, e: std::io::Error) {
        let errno = e.raw_os_error().unwrap_or(libc::EIO);
        self.ctx.notes.err(&format!(
            "fio: {} of {} failed: {e}",
            self.plan.engine.name,
            self.plan.files[file].path.display()
        ));
        self.fail(errno, "file operation");
    }

    /// `--debug=io`: a request queued or completed (`res`), at `offset`/`len`.
    fn debug_io(&self, what: &str, slot: u32, offset: u64, len: u64, res: Option<i64>) {
        if crate::debug::on(crate::debug::Cat::Io) {
            self.debug_io_line(what, slot, offset, len, res);
        }
    }

    #[cold]
    fn debug_io_line(&self, what: &str, slot: u32, offset: u64, len: u64, res: Option<i64>) {
        let s = &self.slots[slot as usize];
        let res = res.map(|r| format!(",res={r}")).unwrap_or_default();
        crate::debug::log(
            crate::debug::Cat::Io,
            &format!(
                "{what}: io_u {slot}: off=0x{offset:x},len=0x{len:x},ddir={},file={}{res}",
                s.ddir,
                self.plan.files[s.file as usize].path.display()
            ),
        );
    }

    /// Submit a prepared request; returns the time after submission. `LEAN`: the job uses
    /// none of the features [`Self::lean`] rules out (their checks compile away).
    #[inline]
    pub(super) fn submit<const LEAN: bool>(&mut self, slot: u32, mut now: u64) -> u64 {
        if !LEAN && self.caps.file_op && !self.file_op(slot) {
            self.free.push(slot);
            return self.clock.now();
        }
        let s = self.slots[slot as usize];
        if !self.ensure_open(s.file as usize) {
            self.free.push(slot);
            return self.clock.now();
        }
        let is_sync = s.op >= OP_SYNC;
        if !LEAN {
            self.capture_io(slot);
        }
        if !LEAN && self.zones.is_some() && !is_sync {
            if let Some(t) = self.zoned_queue(slot) {
                return t;
            }
        }
        if !LEAN && self.caps.untimed {
            // The engine's unmeasured work before this request: not in the request's time,
            // but the engine's (self-measurement), not flexio's own.
            let t0 = self.clock.now();
            let r = self.engine.untimed();
            let t1 = self.clock.now();
            self.stats.engine_ns += t1.saturating_sub(t0);
            if let Err(e) = r {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.ctx.notes.err(&format!(
                    "flexio: {}: {}: {e}",
                    self.plan.name, self.plan.engine.name
                ));
                self.fail(errno, "engine preparation");
                self.free.push(slot);
                return self.clock.now();
            }
            now = t1;
        }
        let t = self.timing;
        if t.lat || (self.caps.syncio && (t.clat || is_sync)) {
            now = self.clock.now();
        }
        self.slots[slot as usize].start_ns = now;
        loop {
            let req = self.request(slot);
            if !LEAN {
                self.debug_io("queue", slot, req.offset, req.len as u64, None);
            }
            // Synchronous engines: the start stamp, taken just before the system call, is
            // also the issue time: one clock reading per request instead of two (lat then
            // equals clat; fio's lat adds its own preparation time). Engines that queue get
            // their issue time at submission.
            let issue = now;
            self.slots[slot as usize].issue_ns = issue;
            let lock = self.plan.control.lockfile.filter(|_| !LEAN).map(|rw| {
                // readwrite: reads share the lock.
                let shared = rw && s.op == 0;
                self.locks[s.file as usize].lock(shared);
                shared
            });
            let r = if !LEAN && s.op == 2 && self.plan.sysio.trim_punch {
                Queued::Completed(flexio_engine::platform::punch_trim(&req))
            } else {
                self.engine.queue(&req)
            };
            if let Some(shared) = lock {
                self.locks[s.file as usize].unlock(shared);
            }
            match r {
                Queued::Completed(res) => {
                    let t = self.clock.now();
                    self.stats.engine_ns += t.saturating_sub(issue);
                    if !self.caps.has_commit {
                        self.stats.mark_submit(1);
                        self.stats.mark_complete(1);
                    }
                    self.count_issue(s.ddir, s.op);
                    let depth = self.inflight as u64 + 1;
                    self.stats.mark_depth(depth, 1);
                    self.complete::<LEAN>(slot, res, t);
                    return t;
                }
                Queued::Queued => {
                    self.count_issue(s.ddir, s.op);
                    self.slots[slot as usize].queued = true;
                    self.inflight += 1;
                    self.files.started(s.file as usize);
                    self.uncommitted.push(slot);
                    self.queued_count += 1;
                    if !self.caps.has_commit {
                        self.stats.mark_submit(1);
                        let t = self.clock.now();
                        self.stats.engine_ns += t.saturating_sub(issue);
                        self.slots[slot as usize].issue_ns = t;
                        if self.timing.slat && self.accounting && !is_sync {
                            self.stats.add_slat(
                                s.ddir as usize,
                                t.saturating_sub(self.slots[slot as usize].start_ns),
                            );
                        }
                    }
                    if self.queued_count >= self.plan.io.submit_batch {
                        self.commit();
                        // The commit read the clock: without lat (no clock reading per
                        // request) a queue whose commit completes its requests (null)
                        // never fills, and this is the only time the loop gets to see.
                        return now.max(self.commit_ns);
                    }
                    return now;
                }
                Queued::Finished => {
                    // The engine is done (its program exited, the I/O jobs it waits for
                    // ended): the job ends here, without error.
                    self.stop = true;
                    self.free.push(slot);
                    return now;
                }
                Queued::LoopDone => {
                    self.loop_done = true;
                    self.free.push(slot);
                    return now;
                }
                Queued::Busy => {
                    if self.inflight == 0 && self.uncommitted.is_empty() {
                        self.fail(libc::EBUSY, "io_u queue");
                        self.free.push(slot);
                        return now;
                    }
                    self.commit_holding(1);
                    self.wait_busy::<LEAN>();
                    if self.stop {
                        self.free.push(slot);
                        return now;
                    }
                    if !LEAN {
                        // fio logs each attempt to queue a request.
                        self.capture_io(slot);
                    }
                }
            }
        }
    }

    /// The engine was busy: wait for completions as fio does then (its
    /// wait_for_completions), at least iodepth_batch_complete_min; where no other slot is
    /// free (the queue is full but for the held request) on down to iodepth_low.
    #[cold]
    fn wait_busy<const LEAN: bool>(&mut self) {
        let full = self.free.is_empty();
        let min = self.plan.io.complete_min.max(1) as usize;
        loop {
            self.reap::<LEAN>(min);
            let low = match self.plan.io.low {
                Some(low) if full => low,
                _ => return,
            };
            if self.stop || self.inflight <= low {
                return;
            }
        }
    }

    /// zonemode=zbd, as a request is queued: a write moves its zone's write pointer; a
    /// trim of a write-pointer zone resets the zone instead of reaching the engine (then
    /// the request is complete: returns the time after it).
    #[cold]
    fn zoned_queue(&mut self, slot: u32) -> Option<u64> {
        let s = self.slots[slot as usize];
        let z = self.zones.as_deref_mut()?;
        match s.op {
            1 => {
                z.queued(s.file as usize, 1, s.offset, s.len);
                None
            }
            2 => match z.trim(s.file as usize, s.offset) {
                Ok(false) => None,
                Ok(true) => {
                    self.stats.zone_resets = Some(z.resets());
                    let t = self.clock.now();
                    self.slots[slot as usize].start_ns = t;
                    self.slots[slot as usize].issue_ns = t;
                    self.count_issue(s.ddir, s.op);
                    self.stats.mark_submit(1);
                    self.stats.mark_complete(1);
                    self.stats.mark_depth(self.inflight as u64 + 1, 1);
                    if !self.zoned_before() {
                        self.free.push(slot);
                        return Some(t);
                    }
                    self.complete::<false>(slot, s.len as i64, t);
                    Some(t)
                }
                Err(msg) => {
                    self.ctx.notes.err(&msg);
                    self.fail(libc::EINVAL, "io_u error");
                    self.free.push(slot);
                    Some(self.clock.now())
                }
            },
            _ => None,
        }
    }

    #[inline]
    pub(super) fn count_issue(&mut self, ddir: u8, op: u8) {
        if op >= OP_SYNC {
            self.stats.sync_total += 1;
            // fsync, fdatasync, sync_file_range (fio 3.33 reports the last two apart).
            self.stats.sync_kinds[match op {
                OP_DSYNC => 1,
                OP_SFR => 2,
                _ => 0,
            }] += 1;
        } else {
            self.stats.dirs[ddir as usize].total_ios += 1;
            self.issued_total += 1;
        }
    }

    /// Commit the requests queued since the last commit: those not yet submitted go to
    /// the engine, and the depth they were queued at is counted.
    pub(super) fn commit(&mut self) {
        self.commit_holding(0);
    }

    /// [`Self::commit`] while `held` slots taken are not queued (a request the engine
    /// was too busy for: fio puts it back, out of its depth).
    fn commit_holding(&mut self, held: usize) {
        if self.queued_count == 0 {
            return;
        }
        // io_submit_mode=offload: each submitter has one request in flight (fio counts the
        // depth per submitter).
        let cur_depth = if self.plan.io.offload.is_some() {
            1
        } else {
            (self.slots.len() - self.free.len() - held) as u64
        };
        self.stats.mark_depth(cur_depth, self.queued_count as u64);
        self.queued_count = 0;
        self.commit_for_reap();
    }

    /// Submit the requests not yet submitted, before a reap that waits (fio's getevents
    /// submits them without counting a commit).
    pub(super) fn commit_for_reap(&mut self) {
        if self.uncommitted.is_empty() {
            return;
        }
        let t0 = self.clock.now();
        let r = self.engine.commit();
        let t = self.clock.now();
        self.commit_ns = t;
        self.stats.engine_ns += t - t0;
        match r {
            Ok(n) => {
                if self.caps.has_commit {
                    self.stats.mark_submit(n as u64);
                }
                // Engines that complete synchronously keep the issue time taken before queue()
                // and have no submission latency (fio's FIO_SYNCIO).
                if self.caps.has_commit && !self.caps.syncio {
                    for i in 0..self.uncommitted.len() {
                        let slot = self.uncommitted[i] as usize;
                        self.slots[slot].issue_ns = t;
                        let s = self.slots[slot];
                        if self.timing.slat && self.accounting && s.op < OP_SYNC {
                            self.stats
                                .add_slat(s.ddir as usize, t.saturating_sub(s.start_ns));
                        }
                    }
                }
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.fail(errno, "io commit");
            }
        }
        self.uncommitted.clear();
    }

    /// Reap at least `min` completions (`LEAN`: see [`Self::submit`]).
    pub(super) fn reap<const LEAN: bool>(&mut self, min: usize) {
        if self.inflight == 0 {
            return;
        }
        let io = &self.plan.io;
        let max = io
            .complete_max
            .map(|m| m as usize)
            // fio: the maximum defaults to the minimum, so completions are taken a few at a
            // time and the queue stays full.
            .unwrap_or(io.complete_min as usize)
            .max(min)
            .max(1);
        self.comps.clear();
        let t0 = self.clock.now();
        let r = self
            .engine
            .reap(min.min(self.inflight as usize), max, &mut self.comps);
        let t = self.clock.now();
        self.stats.engine_ns += t.saturating_sub(t0);
        match r {
            Ok(n) => {
                self.stats.mark_complete(n as u64);
                for i in 0..self.comps.len() {
                    let c = self.comps[i];
                    self.inflight -= 1;
                    let f = self.slots[c.idx as usize].file as usize;
                    let close_now = self.files.finished(f);
                    // io_submit_mode=offload: the submitter's own issue and completion times.
                    let stamps = if LEAN {
                        None
                    } else {
                        self.engine.stamps(c.idx)
                    };
                    let t = match stamps {
                        Some((issue, end)) => {
                            self.slots[c.idx as usize].issue_ns = issue;
                            end
                        }
                        None => t,
                    };
                    self.complete::<LEAN>(c.idx, c.res, t);
                    if close_now {
                        self.finish_deferred_close(f);
                    }
                }
            }
            Err(e) => {
                let errno = e.raw_os_error().unwrap_or(libc::EIO);
                self.fail(errno, "io getevents");
                self.inflight = 0;
            }
        }
        self.periodic(t);
    }

    /// Account a finished request (or requeue its remainder after a short transfer).
    /// `LEAN`: see [`Self::submit`].
    #[inline]
    pub(super) fn complete<const LEAN: bool>(&mut self, slot: u32, res: i64, t: u64) {
        let s = self.slots[slot as usize];
        if !LEAN {
            self.debug_io("complete", slot, s.offset, s.len, Some(res));
        }
        if s.op >= OP_SYNC {
            self.syncs.sync_completed();
            if res < 0 {
                self.io_error(slot, (-res) as i32);
            } else {
                if self.accounting && self.timing.clat {
                    self.stats.add_sync(t.saturating_sub(s.issue_ns));
                }
                if s.vflags & VF_FSYNC != 0 {
                    if let Some(v) = self.ver.as_mut() {
                        v.synced(s.vnum);
                    }
                }
            }
            self.free.push(slot);
            return;
        }
        self.last_done_trim = s.ddir == 2;
        if !LEAN {
            self.syncs.completed();
        }
        let want = s.len - s.done;
        if !LEAN && self.zones.is_some() && (res < 0 || res as u64 >= want || res == 0) {
            // The request is over (not requeued): a write that filled its zone closes it.
            if let Some(z) = self.zones.as_deref_mut() {
                z.completed(s.file as usize, s.ddir as usize, s.offset, s.len);
            }
        }
        let mut failed = false;
        if res == 0 && want > 0 && self.caps.syncio {
            // fio: a synchronous transfer that moved nothing (the rest of a short one
            // included) fails the job with EIO, "full resid", without an io_u error line
            // and whatever continue_on_error says.
            self.zero_transfer(slot);
            return;
        }
        if res < 0 || (res == 0 && want > 0) {
            let errno = if res < 0 { (-res) as i32 } else { libc::EIO };
            if !LEAN {
                self.block_outcome(&s, false);
            }
            if !self.io_error(slot, errno) {
                self.free.push(slot);
                return;
            }
            // Non-fatal (continue_on_error): the I/O counts as done.
            failed = true;
        } else if (res as u64) < want {
            // Short transfer: requeue the remainder.
            self.slots[slot as usize].done += res as u64;
            if self.accounting {
                self.stats.dirs[s.ddir as usize].short_ios += 1;
            }
            self.resubmit(slot);
            return;
        }
        let d = s.ddir as usize;
        if !LEAN && !failed {
            self.block_outcome(&s, true);
        }
        self.completed_total += 1;
        if !LEAN
            && self.timing.lat
            && (self.lat_target.is_some() || self.plan.latency.max_ns[d] > 0)
        {
            self.check_latency(slot, d, t.saturating_sub(s.start_ns), t);
        }
        if self.accounting && !failed {
            self.account::<LEAN>(&s, t);
        } else if !failed {
            self.ramp_moved(d, s.len);
        }
        if !LEAN && failed && s.vflags & VF_WRITE != 0 {
            if let Some(vs) = self.ver.as_mut() {
                vs.write_failed(s.file, s.offset, s.vnum);
            }
        }
        if !LEAN && self.ver.is_some() && !failed {
            if s.vflags & VF_WRITE != 0 {
                self.log_written(slot);
            } else if d == 0
                && (s.vflags & VF_PHASE != 0 || self.ver.as_ref().is_some_and(|v| v.checks_reads()))
            {
                self.verify_read(slot);
            }
        }
        self.free.push(slot);
    }

    /// block_error_percentiles: a trim or write changes its blocks' states.
    #[inline(always)]
    fn block_outcome(&mut self, s: &Slot, ok: bool) {
        if self.stats.block_infos.is_some() && s.ddir != 0 {
            self.block_outcome_slow(s, ok);
        }
    }

    #[inline(never)]
    fn block_outcome_slow(&mut self, s: &Slot, ok: bool) {
        if let Some(b) = self.stats.block_infos.as_mut() {
            match s.ddir {
                2 => b.trimmed(s.file, s.offset, s.len, ok),
                1 => b.written(s.file, s.offset, s.len, ok),
                _ => {}
            }
        }
    }

    /// The statistics of a completed request (`LEAN`: see [`Self::submit`]).
    #[inline]
    /// A request completed while the job ramps: fio counts its bytes as it always does
    /// (they are what a job that ends within its ramp reports, without latencies) until
    /// the ramp's end zeroes them; ramp_size looks at them too.
    #[cold]
    pub(super) fn ramp_moved(&mut self, d: usize, len: u64) {
        self.ramp.moved(len);
        let len = if self.caps.noio { 0 } else { len };
        self.bytes[d] += len;
        self.ios[d] += 1;
        self.stats.dirs[d].io_bytes += len;
    }

    pub(super) fn account<const LEAN: bool>(&mut self, s: &Slot, t: u64) {
        let d = s.ddir as usize;
        if !LEAN && s.sched_ns != 0 {
            self.stats.add_sched(
                d,
                t.saturating_sub(s.sched_ns),
                s.start_ns.saturating_sub(s.sched_ns),
            );
        }
        // Engines that move no data (cpuio, exec) count requests, not bytes (fio's NOIO).
        let len = if self.caps.noio { 0 } else { s.len };
        self.bytes[d] += len;
        self.ios[d] += 1;
        self.stats.dirs[d].io_bytes += len;
        if !LEAN && s.vflags & VF_PHASE != 0 {
            self.listed.0[d] += len;
            self.listed.1[d] += 1;
        }
        let clat = t.saturating_sub(s.issue_ns);
        let lat = t.saturating_sub(s.start_ns);
        if self.timing.clat && !self.caps.file_op {
            self.stats.add_clat(d, clat);
        }
        if !self.caps.op_kinds.is_empty() {
            // Engines with several kinds of operation: this one's own statistics too.
            self.stats.add_op(self.engine.last_kind(), clat, t);
        }
        if self.timing.lat && !(self.timing.lat_from_clat && s.issue_ns == s.start_ns) {
            self.stats.add_lat(d, lat);
        }
        if self.meter.logs.is_some() {
            let ms = t.saturating_sub(self.epoch_ns) / 1_000_000;
            let slat = (s.queued && !self.caps.syncio && self.timing.slat)
                .then(|| s.issue_ns.saturating_sub(s.start_ns));
            self.meter.io(
                &mut self.stats,
                ms,
                (s.ddir, s.len, s.offset, s.prio),
                lat,
                clat,
                slat,
                s.issue_ns.saturating_sub(self.epoch_ns),
            );
        }
        self.meter.last_bs[d] = s.len;
        if self.prio.varies() {
            let v = if self.prio.by_total_lat() { lat } else { clat };
            let hist = self.prio.hist();
            self.stats.dirs[d].add_prio(s.prio, v, hist);
        }
    }

    /// max_latency and latency_target checks of one completion (total latency `lat`).
    #[cold]
    pub(super) fn check_latency(&mut self, slot: u32, d: usize, lat: u64, t: u64) {
        let max = self.plan.latency.max_ns[d];
        if max > 0 && lat > max {
            self.lat_fatal(lat, max, slot);
            return;
        }
        let done = self.completed_total;
        if let Some(lt) = &mut self.lat_target {
            let step = lt.on_complete(lat, t, done);
            self.lat_step(step, lat, slot);
        }
    }

    /// A synchronous request moved no bytes: the job fails (fio's "full resid").
    #[cold]
    fn zero_transfer(&mut self, slot: u32) {
        let s = self.slots[slot as usize];
        self.block_outcome(&s, false);
        if self.stats.error == 0 {
            self.fail(libc::EIO, "full resid");
        }
        self.free.push(slot);
    }

    /// Re-issue the rest of a short request (same slot, start time kept); write_iolog logs
    /// it again, as fio logs its requeued request (at the offset it goes on from, with the
    /// request's whole length).
    pub(super) fn resubmit(&mut self, slot: u32) {
        self.capture_io(slot);
        let req = self.request(slot);
        // fio counts the requeued remainder as another issued request.
        let ddir = self.slots[slot as usize].ddir;
        self.count_issue(ddir, 0);
        self.slots[slot as usize].issue_ns = self.clock.now();
        match self.engine.queue(&req) {
            Queued::Completed(res) => {
                let t = self.clock.now();
                self.complete::<false>(slot, res, t);
            }
            Queued::Queued => {
                self.slots[slot as usize].queued = true;
                self.inflight += 1;
                self.files.started(self.slots[slot as usize].file as usize);
                self.uncommitted.push(slot);
                self.queued_count += 1;
                self.commit();
            }
            Queued::Finished => {
                self.stop = true;
                self.free.push(slot);
            }
            Queued::LoopDone => {
                self.loop_done = true;
                self.free.push(slot);
            }
            Queued::Busy => {
                self.fail(libc::EBUSY, "io_u requeue");
                self.free.push(slot);
            }
        }
    }

    /// fill_device: a write found the file system full. fio logs the error, then the job
    /// ends without it (the requests in flight finish, and are logged the same way).
    #[cold]
    fn device_full(&mut self, slot: u32, errno: i32) {
        let s = self.slots[slot as usize];
        let path = path_of(self.plan, s.file);
        self.ctx.notes.err(&format!(
            "fio: io_u error on file {path}: {}: write offset={}, buflen={}",
            crate::notes::strerror(errno),
            s.offset + s.done,
            s.len - s.done
        ));
        self.stop = true;
    }

    /// Handle an I/O error; returns true if it is non-fatal (continue_on_error).
    pub(super) fn io_error(&mut self, slot: u32, errno: i32) -> bool {
        let s = self.slots[slot as usize];
        if self.plan.io.fill_device && s.op == 1 && (errno == libc::ENOSPC || errno == libc::EDQUOT)
        {
            self.device_full(slot, errno);
            return false;
        }
        // fio's td_error.c: EILSEQ is a verify error; trims and syncs count as writes.
        let class = if errno == libc::EILSEQ {
            err_class::VERIFY
        } else if s.ddir == 0 {
            err_class::READ
        } else {
            err_class::WRITE
        };
        let plan = self.plan;
        // Formatted only when printed: an error continue_on_error counts costs no message.
        let failed_op = self.engine.failed_op();
        let line = || {
            if let Some(what) = &failed_op {
                return format!(
                    "flexio: {}: {what} failed: {}",
                    plan.name,
                    crate::notes::strerror(errno)
                );
            }
            let path = path_of(plan, s.file);
            format!(
                "fio: io_u error on file {path}: {}: {} offset={}, buflen={}",
                crate::notes::strerror(errno),
                op_of(s.op).name(),
                s.offset + s.done,
                s.len - s.done
            )
        };
        let policy = &self.plan.errors;
        if policy.tolerates(class, errno) {
            if policy.dump {
                self.ctx.notes.err(&line());
            }
            self.stats.count_error(errno);
            if policy.dump && !self.plan.compat.is_fio333() {
                // The newest fio (3.42) only logs a dumped non-fatal error; fio 3.33 also
                // kept it as the job's error (err= in the header).
                return true;
            }
            // fio: a synchronous engine's transfer error is recorded by its xfer step.
            let func = if self.caps.syncio {
                "xfer"
            } else {
                "io_u error"
            };
            self.stats.set_soft_error(errno, verror(errno, func));
            return true;
        }
        if errno == libc::EINVAL
            && policy.direct
            && !self.first_direct_error_noted
            && self.issued_total <= 1
        {
            self.first_direct_error_noted = true;
            self.ctx.notes.info(
                "fio: first direct IO errored. File system may not support direct IO, or iomem_align= is bad, or invalid block size. Try setting direct=0.",
            );
        }
        if self.stats.error != 0 {
            // Only the first fatal error is reported; the requests still in flight when the
            // job stops fail the same way.
            return false;
        }
        if errno == libc::EOPNOTSUPP && policy.hipri {
            self.ctx.notes.info("flexio: hipri asks for polled completions, which this file or device does not support (it needs a block device with poll queues, e.g. nvme poll_queues)");
        }
        self.ctx.notes.err(&line());
        self.fail(errno, "io_u error");
        false
    }
}
