//! Files done and passes: a file with nothing more closes (or starts over under a
//! non-uniform file service), a pass over all files ends and the next starts them over, and
//! the events the worker takes from it (closes, pass ends, wraps); zonemode=zbd's end of a
//! file.

use super::*;

impl Generator {
    /// File `fi` has nothing more: done (closed), or started over under a non-uniform file
    /// service.
    pub(super) fn mark_done(&mut self, fi: usize) {
        if matches!(self.spec.select, FileSelect::Dist(_)) {
            // fio: with non-uniform file service a file that has nothing more starts over
            // (and is closed and opened again).
            self.restart_file(fi);
            return;
        }
        if !self.files[fi].done {
            self.files[fi].done = true;
            self.files_done += 1;
            self.file_closed(fi);
        }
    }

    /// A file starts over: positions back to its start, its random map cleared.
    #[cold]
    pub(super) fn restart_file(&mut self, fi: usize) {
        let f = &mut self.files[fi];
        f.rewind();
        if self.spec.strided.is_some() {
            // fio keeps the file in its zone.
            Self::strided_reset(f);
        }
        self.file_closed(fi);
    }

    /// fio closes file `fi` here (done, or starting over under non-uniform file service).
    #[cold]
    pub(super) fn file_closed(&mut self, fi: usize) {
        if self.is_open.get(fi) == Some(&true) {
            self.is_open[fi] = false;
            self.nr_open -= 1;
        }
        self.closed.push(fi as u32);
        self.events = true;
    }

    /// The files closed since the last call, in order, into `out` (cleared first): the
    /// worker closes them (fio's log shows `close` there, and `fsync_on_close` runs then).
    pub fn take_closed(&mut self, out: &mut Vec<u32>) {
        out.clear();
        out.append(&mut self.closed);
        self.events = self.wraps_due > 0 || self.pass_ended;
    }

    /// Whether a pass over the files ended since the last call (a job past its files' end,
    /// in fio's passes): the worker ends it as fio ends a loop (end_fsync's syncs, the
    /// files closed) before the next I/O.
    pub fn take_pass_end(&mut self) -> bool {
        let ended = std::mem::take(&mut self.pass_ended);
        self.events = self.wraps_due > 0 || !self.closed.is_empty();
        ended
    }

    /// The `wrapped` and `closed` of the I/O of file `fi` being handed out.
    #[inline]
    pub(super) fn take_events(&mut self, fi: usize) -> (bool, bool) {
        if !(self.wrapped | self.events) {
            return (false, false);
        }
        self.take_events_cold(fi)
    }

    #[cold]
    pub(super) fn take_events_cold(&mut self, fi: usize) -> (bool, bool) {
        let mut wrapped = std::mem::take(&mut self.wrapped);
        if std::mem::take(&mut self.files[fi].wrap_due) {
            wrapped = true;
            self.wraps_due -= 1;
        }
        let closed = !self.closed.is_empty() || self.pass_ended;
        self.events = self.wraps_due > 0 || closed;
        (wrapped, closed)
    }

    /// Whether sequential I/O at the end of file `fi` ends it rather than wrapping: the
    /// last file of [`Spec::zbd_last_file_ends`].
    pub(super) fn zbd_last_file_ends(&self, fi: usize) -> bool {
        self.spec.zbd_last_file_ends && fi + 1 == self.files.len()
    }

    /// The zones' adjustment of an I/O at `off` (relative to the region); `None` when the
    /// file has nothing more for it ([`Self::zone_eof`]).
    #[cold]
    pub(super) fn zoned<Z: Zoned>(
        &mut self,
        fi: usize,
        ddir: Ddir,
        off: u64,
        l: u64,
        z: &mut Z,
    ) -> Option<(u64, u64)> {
        let start = self.files[fi].region.start;
        let Some((o, l)) = z.adjust(fi, ddir, start + off, l) else {
            self.zone_eof(fi, z);
            return None;
        };
        Some((o.wrapping_sub(start), l))
    }

    /// The zones have nothing more in file `fi` (fio's io_u_eof): the file is done, unless
    /// the job goes on ([`Spec::zone_eof_pass`]: io_size given, or time_based) and did I/O
    /// in this pass: fio then starts another pass (positions and random map back to the
    /// start, the streams seeded again, the zone accounting reset). With several files the
    /// pass ends when the last of them is done, and the next one starts them all again; a
    /// pass that found nothing ends the job's I/O, as fio's does.
    #[cold]
    pub(super) fn zone_eof<Z: Zoned>(&mut self, fi: usize, z: &mut Z) {
        let n = self.files.len();
        if !self.spec.zone_eof_pass {
            self.mark_done(fi);
            return;
        }
        if n > 1 {
            self.mark_done(fi);
            if self.files_done < n || self.files.iter().all(|f| f.zoned_ios == 0) {
                return;
            }
        } else if self.files[fi].zoned_ios == 0 {
            self.mark_done(fi);
            return;
        }
        self.restart_pass(z);
    }

    /// Whether a job that goes past its files' end ([`Spec::wrap`]: io_size beyond them;
    /// with several files a time_based job's sequential I/O too) does so in passes, as fio
    /// does: a file at its end (sequential) or with its random map full is done, and when
    /// all are done another pass starts them all over ([`Self::restart_pass`]), which the
    /// worker ends as fio ends a loop. Files of different sizes then do not keep pace:
    /// `f:g` of 16 and 8 MiB write f, g, f, g... to 8 MiB, f alone to 16, then both again.
    /// A time_based job's random I/O, and a single file's, start over where they are
    /// instead (fio resets the random map or position inside its loop), as do
    /// non-uniform file service and strided zones.
    pub(super) fn passes(&self, random: bool) -> bool {
        self.spec.wrap
            && self.spec.strided.is_none()
            && !matches!(self.spec.select, FileSelect::Dist(_))
            && if self.files.len() > 1 {
                !(random && self.spec.time_based)
            } else {
                !self.spec.time_based
            }
    }

    /// File `fi` is done for this pass ([`Self::passes`]); the last one to be done starts
    /// the next pass.
    #[cold]
    pub(super) fn pass_done<Z: Zoned>(&mut self, fi: usize, z: &mut Z) {
        self.mark_done(fi);
        // A pass that handed out no I/O ends the job's I/O (fio marks a job whose loop did
        // none done).
        if self.files_done == self.files.len() && self.issued() > self.pass_start_issues {
            self.restart_pass(z);
        }
    }

    /// The I/Os handed out so far, every direction.
    fn issued(&self) -> u64 {
        self.issues.iter().sum()
    }

    /// Another pass over all files (fio closes them at the end of a pass and opens them for
    /// the next): positions and random maps back to the start, the zone accounting reset,
    /// the streams seeded again (io_size beyond the files, not time_based).
    pub(super) fn restart_pass<Z: Zoned>(&mut self, z: &mut Z) {
        let n = self.files.len();
        for i in 0..n {
            let f = &mut self.files[i];
            f.rewind();
            // A pass is one of fio's loops: it starts where fio's start offset is now.
            if let Some(s) = self.spec.start_later.get(i) {
                f.region.start = *s;
            }
            f.zoned_ios = 0;
            f.done = f.region.len == 0;
            f.wrap_due = true;
            z.restarted(i);
        }
        self.files_done = self.files.iter().filter(|f| f.done).count();
        self.all_closed();
        if n > 1 {
            // The next I/O picks a file afresh: round robin and random service move on as
            // at a switch, sequential service goes on with the file after the last one.
            self.file_ios = self.spec.select_nr.max(1);
            self.seq_moves_on();
        }
        if self.spec.repeatable && !self.spec.time_based {
            self.reseed();
        }
        self.wraps_due = n;
        self.pass_start_issues = self.issued();
        self.pass_ended = true;
        self.events = true;
    }
}
