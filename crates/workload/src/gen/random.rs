//! Random placement: where the next random I/O of a file goes (the random map, fio's
//! uniform generators, distributions, `percentage_random`'s sequential runs).

use super::*;

impl Generator {
    /// The next random block of file `fi` for `ddir` within `nblocks`.
    pub(super) fn random_block(&mut self, fi: usize, ddir: Ddir, nblocks: u64) -> Option<u64> {
        if ddir == 1 {
            if let Some(s) = &mut self.spr {
                return s.next_block().filter(|b| *b < nblocks);
            }
        }
        if let Dist::Sequence(seq) = &self.spec.dist[ddir] {
            // The n-th I/O of the direction (n = issued so far); past the end the file is
            // done (the planner rejects a base pattern that does not fit).
            let n = self.issues[ddir];
            let len = seq.len().max(1) as u64;
            let base = seq.get((n % len) as usize).copied().unwrap_or(0);
            let idx = if self.spec.seq_stride {
                (n / len).saturating_mul(len).saturating_add(base)
            } else {
                base
            };
            return (idx < nblocks).then_some(idx);
        }
        if self.zoned[ddir].is_some() {
            return self.zoned_block(fi, ddir, nblocks);
        }
        if let Some(s) = &mut self.files[fi].samplers[self.sampler_of[ddir]] {
            let rng = &mut self.off_rng;
            let scale = self.range_scale[ddir];
            // Not bounded by the blocks: fio's generators draw over the region's ranges
            // rounded up, so the last one can start a block that does not fit the file,
            // which ends the file (or starts it over) as any block that does not fit.
            return Some(s.next(scale, || rng.unit()));
        }
        if self.spec.gen == RandGen::Lfsr {
            // Non-uniform file service starts the file over too (fio's fio_file_reset); a
            // job in passes ends the file's pass instead ([`Self::random_io`]).
            let wrap = (self.spec.wrap && !self.passes(true))
                || matches!(self.spec.select, FileSelect::Dist(_));
            let strided = self.spec.strided.is_some();
            let restart = self.spec.time_based || matches!(self.spec.select, FileSelect::Dist(_));
            let l = self.files[fi].lfsr.as_mut()?;
            return match l.next_value() {
                Some(v) => Some(v),
                // fio: a strided zone starts over in place where the job is time based or
                // the file service non-uniform; otherwise the file is done.
                None if strided && restart => {
                    l.reset();
                    l.next_value()
                }
                None if strided => None,
                None if wrap => {
                    self.wrapped = true;
                    l.reset();
                    l.next_value()
                }
                None => None,
            };
        }
        if let Some(t) = self.spec.trace {
            let (raw, b) = self.off_rng.below_raw(nblocks);
            t(RandEvent::Draw(raw));
            return Some(b);
        }
        Some(self.off_rng.below(nblocks))
    }

    /// `rw_sequencer=identical`: an I/O of a `:N` run that is not its random one repeats
    /// where the file's last I/O of its direction started (or takes a random block when
    /// that no longer fits).
    pub(super) fn repeat_last<Z: Zoned>(
        &mut self,
        fi: usize,
        ddir: Ddir,
        z: &mut Z,
    ) -> Option<(u64, u64)> {
        if self.spec.strided.is_some() {
            return self.strided_identical(fi, ddir);
        }
        let off = self.files[fi].last_start[ddir];
        match self.len_at(fi, off, ddir, false) {
            Some(l) => {
                self.files[fi].pos[ddir] = off + l;
                Some((off, l))
            }
            None => self.seq_ran_out(fi, ddir, off, z),
        }
    }

    /// percentage_random chose a sequential I/O in a random job: it continues after the
    /// previous I/O, or takes a random block at the end of the file (fio's get_next_block).
    pub(super) fn next_seq_in_random<Z: Zoned>(
        &mut self,
        fi: usize,
        ddir: Ddir,
        z: &mut Z,
    ) -> Option<(u64, u64)> {
        if self.spec.strided.is_some() {
            return self.strided_seq_in_random(fi, ddir, z);
        }
        let mut off = self.files[fi].pos[ddir];
        if self.spec.time_based && off >= self.files[fi].region.len {
            // fio's get_next_seq_offset: a time_based job's sequential position at the
            // region's end goes back to its start (the cache dropped again).
            off = 0;
            self.wrapped = true;
        }
        match self.len_at(fi, off, ddir, false) {
            Some(l) => {
                let (off, l) = if Z::ON {
                    self.zoned(fi, ddir, off, l, z)?
                } else {
                    (off, l)
                };
                self.files[fi].pos[ddir] = off.wrapping_add(l);
                Some((off, l))
            }
            None => self.seq_ran_out(fi, ddir, off, z),
        }
    }

    /// A sequential I/O of a random job found no room at `off`: at the end of the file a
    /// random block takes its place; before it (a tail shorter than a block, or the end of
    /// a region shorter than its file) fio's I/O does not fit and the file is done.
    fn seq_ran_out<Z: Zoned>(
        &mut self,
        fi: usize,
        ddir: Ddir,
        off: u64,
        z: &mut Z,
    ) -> Option<(u64, u64)> {
        let start = self.files[fi].region.start;
        if start.saturating_add(off) < self.file_size(fi) {
            self.failed_at(fi, off);
            self.random_file_done(fi, z);
            return None;
        }
        self.random_io(fi, ddir, true, z)
    }

    /// A random job's file has nothing more (an I/O that does not fit): done, or done for
    /// this pass where the job goes in passes (io_size beyond the files).
    fn random_file_done<Z: Zoned>(&mut self, fi: usize, z: &mut Z) {
        if self.passes(true) {
            self.pass_done(fi, z);
        } else {
            self.mark_done(fi);
        }
    }

    /// A random block. `fallback`: in place of a sequential I/O that ran off the end; as in
    /// fio, such I/Os are left out of the random map.
    pub(super) fn random_io<Z: Zoned>(
        &mut self,
        fi: usize,
        ddir: Ddir,
        fallback: bool,
        z: &mut Z,
    ) -> Option<(u64, u64)> {
        let align = self.spec.align[ddir].max(1);
        let (zstart, zlen) = self.zone(fi);
        let nblocks = if self.spec.strided.is_none() {
            self.files[fi].nblocks[ddir]
        } else {
            Self::nblocks(&self.spec, zlen, ddir)
        };
        if nblocks == 0 {
            self.mark_done(fi);
            return None;
        }
        let was_wrapped = self.wrapped;
        let Some(mut b) = self.random_block(fi, ddir, nblocks) else {
            if self.spec.gen == RandGen::Lfsr && self.passes(true) {
                // The LFSR's sequence is through: the file is done for this pass.
                self.pass_done(fi, z);
            } else {
                self.mark_done(fi);
            }
            return None;
        };
        if self.files[fi].map.as_ref().is_some_and(|m| m.full()) {
            // Non-uniform file service: the file starts over without a new pass.
            let restart = matches!(self.spec.select, FileSelect::Dist(_));
            if self.spec.strided.is_some() {
                // Strided zones: the zone starts over in place (time based, non-uniform
                // file service) or the file is done.
                if !(restart || self.spec.time_based) {
                    self.mark_done(fi);
                    return None;
                }
                Self::strided_reset(&mut self.files[fi]);
                b = self.random_block(fi, ddir, nblocks)?;
            } else {
                if !self.spec.wrap && !restart {
                    self.mark_done(fi);
                    return None;
                }
                if self.passes(true) {
                    // Several files: done for this pass (the last one starts the next).
                    self.pass_done(fi, z);
                    return None;
                }
                // The draw found the map full: the file starts over (its cache dropped again,
                // fio's loop_cache_invalidate) and fio draws again. fio's fio_file_reset
                // also puts every direction's sequential position back at the start.
                self.wrapped = true;
                let f = &mut self.files[fi];
                if let Some(map) = &mut f.map {
                    map.clear();
                }
                f.pos = [0; 3];
                f.last_start = [0; 3];
                if self.spec.repeatable && !self.spec.time_based && !restart {
                    // io_size beyond size: another pass over the files, with the streams
                    // seeded again (fio's clear_io_state).
                    self.reseed();
                }
                b = self.random_block(fi, ddir, nblocks)?;
            }
        }
        if let Some(map) = &mut self.files[fi].map {
            if !map.is_free(b) {
                if let Some(t) = self.spec.trace {
                    t(RandEvent::Busy(b));
                }
                b = map.next_free(b)?;
            }
        }
        if Z::ON && self.wrapped && !was_wrapped {
            z.restarted(fi);
        }
        let off = zstart + b * align;
        let mut l = if self.spec.strided.is_some() {
            self.strided_fit(fi, ddir, b * align, !fallback)?
        } else {
            let Some(l) = self.len_at(fi, off, ddir, !fallback) else {
                // fio: a block that does not fit (a free map entry past the last block,
                // with mixed block sizes) fails to produce an I/O: the file is done.
                self.failed_at(fi, off);
                self.random_file_done(fi, z);
                return None;
            };
            l
        };
        // zonemode=zbd: the I/O goes where the zones say; the random map marks the block
        // drawn with the length that goes (fio's order).
        let drawn = off;
        let off = if Z::ON {
            let (o, len) = self.zoned(fi, ddir, off, l, z)?;
            l = len;
            o
        } else {
            off
        };
        let min_bs = self.spec.bs[ddir].min().max(1);
        let shift = self.bs_shift[ddir];
        let unmarked = fallback || self.busy_ok;
        if let Some(map) = self.files[fi].map.as_mut().filter(|_| !unmarked) {
            // Mark the blocks the I/O covers, in units of the direction's smallest block
            // size, up to the first one already done; the I/O is cut to that free run (fio's
            // mark_random_map).
            let (first, want) = match shift {
                // Power-of-two block sizes: shifts instead of divisions.
                Some(sh) => ((drawn - zstart) >> sh, ((l + min_bs - 1) >> sh).max(1)),
                None => ((drawn - zstart) / min_bs, l.div_ceil(min_bs).max(1)),
            };
            let total = map.len();
            let mut n = 0;
            while n < want && first + n < total && map.is_free(first + n) {
                map.set(first + n);
                n += 1;
            }
            if n < want && first + n == total {
                // fio keeps its map in 64-bit words and marks on past the last block to
                // the end of its word: such an I/O is not cut there (strided zones, whose
                // map covers one zone of a larger region).
                n = want.min(total.next_multiple_of(64).saturating_sub(first));
            }
            if n > 0 && n * min_bs < l {
                l = n * min_bs;
            }
        }
        // A sequential I/O (percentage_random) continues after this one, as in fio.
        self.files[fi].pos[ddir] = off.wrapping_add(l);
        Some((off, l))
    }
}
