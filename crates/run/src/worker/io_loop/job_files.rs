//! The job's files through a run: opening them (at once, or on demand under `openfiles`
//! and for write_iolog's order), closing those the generator found done, the ends of
//! passes and loops (end_fsync and fsync_on_close syncs, every file closed), and
//! unlinking them.

use super::*;

impl<E: Engine> Worker<'_, E> {
    pub(super) fn publish_files(&self) {
        self.progress
            .files
            .store(self.files.open_count(), Ordering::Relaxed);
    }

    /// Open file `i`, or fail the job.
    /// Open file `i`; the error is (errno, what happened, fio's function: `open(<name>)`).
    fn open_file(&mut self, i: usize) -> Result<(), (i32, String, String)> {
        let p = self.plan;
        let w = self
            .files
            .open(i, &p.files[i], &p.open, &mut self.engine, &p.engine.name)
            .map_err(|(e, what)| (e, what, format!("open({})", p.files[i].path.display())))?;
        if let Some(w) = w {
            self.ctx.notes.warn(&w);
        }
        self.capture_file(i, crate::iolog::Act::Open);
        self.publish_files();
        Ok(())
    }

    pub(super) fn open_files(&mut self) -> Result<(), (i32, String, String)> {
        if self.caps.no_fd || self.caps.diskless {
            // fio counts a diskless job's files as open in the status line.
            self.progress
                .files
                .store(self.plan.files.len() as u32, Ordering::Relaxed);
            return Ok(());
        }
        if self.plan.open.limit.is_some() || self.replay.is_some() || self.capture.is_some() {
            // Opened on demand (a replay opens what its trace opens; a captured job opens
            // each file at its first use, as fio does, so the log shows fio's order).
            return Ok(());
        }
        for i in 0..self.plan.files.len() {
            self.open_file(i)?;
        }
        Ok(())
    }

    /// With `openfiles` below the number of files: make sure file `i` is open, closing the
    /// longest-open idle file when the limit is reached (waiting for its I/O if needed).
    #[inline]
    pub(super) fn ensure_open(&mut self, i: usize) -> bool {
        if self.files.is_open(i) {
            return true;
        }
        if self.caps.no_fd || self.caps.diskless {
            if self.capture.as_ref().is_some_and(|c| !c.opened(i)) {
                self.capture_open_once(i);
            }
            return true;
        }
        self.open_on_demand(i)
    }

    /// Capture: the `open` line of a file without a descriptor, at its first use.
    #[cold]
    fn capture_open_once(&mut self, i: usize) {
        let now = self.clock.now();
        if let Some(c) = self.capture.as_mut() {
            c.open_once(now, i as u32);
        }
    }

    #[inline(never)]
    fn open_on_demand(&mut self, i: usize) -> bool {
        let limit = if self.reading_back {
            u32::MAX
        } else {
            self.plan.open.limit.unwrap_or(u32::MAX)
        };
        loop {
            match self.files.room(limit) {
                Room::Free => break,
                Room::Close(v) => self.close_file(v, self.plan.open.fsync_on_close),
                Room::Wait if self.inflight > 0 => {
                    self.commit();
                    self.reap::<false>(1);
                }
                Room::Wait => break,
            }
        }
        self.open_now(i)
    }

    /// Open file `i` whatever `openfiles` allows (fio's end_fsync opens a closed file
    /// beside the open ones); an error fails the job.
    fn open_now(&mut self, i: usize) -> bool {
        let t0 = self.clock.now();
        let opened = self.open_file(i);
        self.target_since(t0);
        match opened {
            Ok(()) => true,
            Err((errno, what, func)) => {
                self.ctx.notes.err(&format!("fio: {what}"));
                self.fail(errno, &func);
                false
            }
        }
    }

    pub(super) fn close_files(&mut self) {
        if self.capture.is_some() {
            for i in 0..self.plan.files.len() {
                // (A file whose close was deferred logged it already.)
                if (self.files.is_open(i) && !self.files.closing(i))
                    || self.capture.as_ref().is_some_and(|c| c.opened(i))
                {
                    self.capture_file(i, crate::iolog::Act::Close);
                    if let Some(c) = self.capture.as_mut() {
                        c.closed_once(i as u32);
                    }
                }
            }
        }
        let fsync = self.plan.open.fsync_on_close && !self.end_synced;
        self.files.close_all(&mut self.engine, fsync);
        self.progress.files.store(0, Ordering::Relaxed);
    }

    /// Files the generator found done (or starting over under non-uniform file service)
    /// since the last I/O: fio closes each when it finds it done, syncing it first with
    /// fsync_on_close, and logs the `close`; its next use opens it again (another pass,
    /// the next loop, the end's sync).
    ///
    /// A pass of a job that goes past its files' end ended with them (io_size beyond
    /// them, or a time_based job's sequential I/O over several files): fio ends it as it
    /// ends a loop, and so does this before the next pass's first I/O ([`Self::end_pass`]).
    #[cold]
    pub(super) fn close_done_files(&mut self) {
        // The request of the attempt that found the file done keeps its offset: a sync
        // next logs it, as fio's does.
        // fio's attempt takes the free request on top of its stack and puts it back.
        if let Some(off) = self.gen.take_failed_offset() {
            if let (Some(&top), Some(c)) = (self.free.last(), self.capture.as_mut()) {
                *c.slot_offset(top) = off;
            }
        }
        let mut done = std::mem::take(&mut self.closed_buf);
        self.gen.take_closed(&mut done);
        for &i in &done {
            self.close_done_file(i as usize);
        }
        self.closed_buf = done;
        if self.gen.take_pass_end() {
            self.end_pass();
        }
    }

    /// [`Self::close_done_files`] while `slot` is being prepared. With write_iolog the
    /// slot goes back to the free list first, as fio puts back the request of the attempt
    /// that found the file done (it logs the offsets requests keep), and the next request
    /// takes the slot on top then, which is another one where completions came meanwhile:
    /// `slot` takes that one's place (their logged offsets change places).
    #[cold]
    pub(super) fn close_done_files_holding(&mut self, slot: u32) {
        if self.capture.is_none() {
            self.close_done_files();
            return;
        }
        self.free.push(slot);
        self.close_done_files();
        let Some(top) = self.free.pop() else { return };
        if top != slot {
            if let Some(c) = self.capture.as_mut() {
                c.swap_slots(top, slot);
            }
            if let Some(p) = self.free.iter().position(|&s| s == slot) {
                self.free[p] = top;
            }
        }
    }

    /// write_iolog: the attempt that ended the loop in `slot` found its file done; the
    /// slot keeps the attempt's offset (fio's request does) and goes back to the free list
    /// before the requests in flight complete.
    #[cold]
    pub(super) fn capture_failed_attempt(&mut self, slot: u32) {
        if let Some(off) = self.gen.take_failed_offset() {
            if let Some(c) = self.capture.as_mut() {
                *c.slot_offset(slot) = off;
            }
        }
    }

    /// The end of a pass, as fio ends each of its passes (a loop of its own in fio): what
    /// is in flight completes, end_fsync's (or fsync_on_close's) syncs, every file closed
    /// (each opens again at its next use, its cache dropped then with `invalidate`).
    fn end_pass(&mut self) {
        self.drain();
        self.end_synced = false;
        let t0 = self.clock.now();
        // fio's should_fsync: no end sync right after a periodic one.
        if (self.plan.io.end_fsync || self.plan.open.fsync_on_close) && !self.syncs.last_was_sync()
        {
            self.end_synced = self.end_sync_pass();
        }
        self.close_files();
        self.passes_done += 1;
        if let Some(pe) = self.plan.io.pass_end {
            // fio's keep_running: another pass only while the job's bytes are short.
            self.passes_over = pe.ends(self.passes_done, self.bytes.iter().sum());
        }
        if self.plan.io.unlink_each_loop && !self.passes_over {
            // fio unlinks a job's files as each further pass starts; a write job makes
            // them again at their next open. A file it cannot unlink ends the job there.
            self.passes_over = !self.unlink_files(true);
        }
        self.end_synced = false;
        // fio 3.33's sync rule starts the next pass with no sync as the last request.
        self.syncs.reset();
        self.target_since(t0);
    }

    /// Passes inside one loop of the worker (an engine that completes each request in the
    /// call): where the bytes ended the job within a pass before `loops` passes, fio's
    /// next loop still runs, empty: it closes the files and unlinks them (unlink_each_loop,
    /// a failure ending the job) and does its end syncs; a loop without I/O ends the job.
    #[cold]
    pub(super) fn empty_loop_after_passes(&mut self) {
        let Some(pe) = self.plan.io.pass_end else {
            return;
        };
        if self.plan.io.pass_loops || self.passes_over || self.passes_done + 1 >= pe.loops {
            return;
        }
        let t0 = self.clock.now();
        self.close_files();
        self.files.next_loop();
        self.syncs.reset();
        if self.plan.io.unlink_each_loop && !self.unlink_files(true) {
            return;
        }
        if self.plan.io.end_fsync || self.plan.open.fsync_on_close {
            self.end_synced = self.end_sync_pass();
        }
        self.target_since(t0);
    }

    fn close_done_file(&mut self, i: usize) {
        if self.caps.no_fd || self.caps.diskless {
            if let Some(opened) = self.capture.as_ref().map(|c| c.opened(i)) {
                // fio opens the file it picks before it looks for an offset there: a
                // first attempt that found none logs the open and the close.
                if !opened {
                    self.capture_open_once(i);
                }
                self.capture_file(i, crate::iolog::Act::Close);
                if let Some(c) = self.capture.as_mut() {
                    c.closed_once(i as u32);
                }
            }
            if self.files.busy(i) && !self.stop && self.plan.open.limit.is_none() {
                self.files.defer_close(i);
                self.gen.close_deferred(i);
            }
            return;
        }
        if !self.files.is_open(i) {
            // fio opens the file it picks before it looks for an offset there: where the
            // first attempt finds none (a random block past the end), the log shows the
            // open and the close.
            if self.capture.is_none() || !self.open_now(i) {
                return;
            }
        }
        // A descriptor with requests in flight is not closed yet: as fio, the close is
        // logged now and happens when they complete ([`Self::finish_deferred_close`]);
        // meanwhile the other files go on, and the service does not pick this one.
        // Under `openfiles` they complete first: fio's service finds no room for the next
        // file and waits for completions (EBUSY) before it goes on.
        if self.files.busy(i) && self.inflight > 0 && !self.stop {
            if self.plan.open.limit.is_none() {
                self.capture_file(i, crate::iolog::Act::Close);
                self.files.defer_close(i);
                self.gen.close_deferred(i);
                return;
            }
            while self.files.busy(i) && self.inflight > 0 && !self.stop {
                self.commit_for_reap();
                self.reap::<false>(1);
            }
        }
        self.close_file(i, self.plan.open.fsync_on_close);
    }

    /// The last request in flight of a file whose close was deferred completed: close it
    /// (its `close` was logged when it was found done; fsync_on_close syncs it now, as
    /// fio's last reference does).
    #[cold]
    pub(super) fn finish_deferred_close(&mut self, i: usize) {
        if self.files.is_open(i) {
            let t0 = self.clock.now();
            self.files
                .close(i, &mut self.engine, self.plan.open.fsync_on_close);
            self.target_since(t0);
            self.publish_files();
        } else {
            self.files.close(i, &mut self.engine, false);
        }
        self.gen.close_finished(i);
    }

    /// Close open file `i` (fsync first when `fsync`), its `close` logged; the target's
    /// time.
    fn close_file(&mut self, i: usize, fsync: bool) {
        self.capture_file(i, crate::iolog::Act::Close);
        let t0 = self.clock.now();
        self.files.close(i, &mut self.engine, fsync);
        self.target_since(t0);
        self.publish_files();
    }

    /// The end of a loop's I/O with end_fsync or fsync_on_close (fio syncs there for
    /// both): every file in order, a file closed as done opened again for its fsync and
    /// closed after it; each `sync` logged as fio logs it (the offset of the last request,
    /// length 0). Whether every file was synced.
    pub(super) fn end_sync_pass(&mut self) -> bool {
        let mut all = true;
        for i in 0..self.plan.files.len() {
            if self.caps.no_fd || self.caps.diskless {
                // No descriptor to sync: the log's lines only.
                let Some(opened) = self.capture.as_ref().map(|c| c.opened(i)) else {
                    continue;
                };
                if !opened {
                    self.capture_open_once(i);
                }
                self.capture_sync(i);
                if !opened {
                    self.close_done_file(i);
                }
                continue;
            }
            // A closed file is opened for its sync beside the open ones (openfiles does
            // not close one for it).
            let reopen = !self.files.is_open(i);
            if reopen && !self.open_now(i) {
                all = false;
                continue;
            }
            self.capture_sync(i);
            all &= self.files.fsync(i);
            if reopen {
                self.close_file(i, false);
            }
        }
        all
    }

    /// Capture: the end's `sync` of file `i`.
    fn capture_sync(&mut self, i: usize) {
        if self.capture.is_some() {
            let now = self.clock.now();
            // fio takes the free request on top of its stack for the sync.
            let top = self.free.last().map_or(0, |&s| s);
            if let Some(c) = self.capture.as_mut() {
                let off = *c.slot_offset(top);
                c.io(now, i as u32, crate::iolog::Act::Sync, off, 0);
            }
        }
    }

    /// Unlink the job's files (fio's unlink_all_files between loops, `strict`: the first
    /// that fails ends the job with its error; the last unlink of `unlink=1` ignores
    /// failures). As in fio, a diskless engine's files are unlinked too where the path
    /// is (or names nothing but could be) a regular file; devices and directories stay.
    pub(super) fn unlink_files(&mut self, strict: bool) -> bool {
        let diskless = self.caps.diskless && !self.caps.file_op;
        for i in 0..self.plan.files.len() {
            let f = &self.plan.files[i];
            if f.block.is_some() {
                continue;
            }
            if diskless {
                match std::fs::symlink_metadata(&f.path) {
                    Ok(m) if !m.file_type().is_file() => continue,
                    _ => {}
                }
            }
            let r = if self.caps.dirs {
                std::fs::remove_dir(&f.path)
            } else {
                std::fs::remove_file(&f.path)
            };
            if let Err(e) = r {
                if strict {
                    self.fail(e.raw_os_error().unwrap_or(libc::EIO), "unlink_all_files");
                    return false;
                }
            }
        }
        true
    }
}
