//! Sequential placement: where the next in-order I/O of a file goes (holed `rw=read:N`,
//! backwards `rw=read:-N`, the end of the file: done, wrapped, or the pass over).

use super::*;

impl Generator {
    pub(super) fn next_seq<Z: Zoned>(
        &mut self,
        fi: usize,
        ddir: Ddir,
        z: &mut Z,
    ) -> Option<(u64, u64)> {
        if self.spec.strided.is_some() {
            let hole = if self.spec.rw_back > 0 {
                0
            } else {
                self.spec.rw_nr
            };
            return self.strided_seq(fi, ddir, hole);
        }
        let mut off = self.files[fi].pos[ddir];
        // Holed sequential I/O (rw=read:N) whose hole steps past the end starts over, as in
        // fio; one whose previous I/O ended at the end has done its pass (fio's
        // get_next_seq_offset: nothing more unless the job wraps).
        let len = self.files[fi].region.len;
        if self.spec.rw_nr > 0 && off >= len {
            let next = self.holed_end(fi, off);
            if next.is_none() {
                // (Under a non-uniform file service the file starts over, closed first.)
                if !self.spec.wrap || matches!(self.spec.select, FileSelect::Dist(_)) {
                    self.mark_done(fi);
                    return None;
                }
                // io_size beyond the files: the file is done for this pass.
                if !self.spec.zbd_last_file_ends && self.passes(false) {
                    self.pass_done(fi, z);
                    return None;
                }
            }
            off = next.unwrap_or(0);
        }
        if self.spec.rw_back > 0 {
            off = self.step_back(fi, off);
        }
        let got = if Z::ON {
            let end = z.seq_end(fi, len);
            if off >= end {
                None
            } else {
                self.draw_len(ddir, false, end - off)
            }
        } else {
            self.len_at(fi, off, ddir, false)
        };
        // fio's get_next_seq_offset puts the request there only while the position is
        // within the file.
        if got.is_none() && self.files[fi].region.start.saturating_add(off) < self.file_size(fi) {
            self.failed_at(fi, off);
        }
        let l = match got {
            Some(l) => l,
            // zonemode=zbd over whole files: the last file is done at its end while the
            // others start over, as in fio (`f:g` with io_size three times a file writes
            // f, g, f, g... to their ends, then f alone; regions smaller than the files
            // start over together).
            None if Z::ON && self.zbd_last_file_ends(fi) => {
                // Done; when the others are done too, another pass starts them all.
                self.zone_eof(fi, z);
                return None;
            }
            // Several files past their end: the file is done for this pass.
            None if !self.spec.zbd_last_file_ends && self.passes(false) => {
                self.pass_done(fi, z);
                return None;
            }
            // A non-uniform file service closes the file at its end and starts it over
            // (fio's fio_file_reset), then picks a file again.
            None if self.spec.wrap && !matches!(self.spec.select, FileSelect::Dist(_)) => {
                self.wrapped |= self.spec.wrap;
                off = 0;
                self.len_at(fi, 0, ddir, false)?
            }
            None => {
                self.mark_done(fi);
                return None;
            }
        };
        let hole = if self.spec.rw_back > 0 {
            0
        } else {
            self.spec.rw_nr
        };
        let (off, l) = if Z::ON {
            self.zoned(fi, ddir, off, l, z)?
        } else {
            (off, l)
        };
        self.files[fi].pos[ddir] = off.wrapping_add(l).wrapping_add(hole);
        Some((off, l))
    }

    /// Holed sequential I/O (`rw=read:N`) whose next position `off` (relative to the
    /// region, the hole added) is at or past the region's end, as fio's
    /// get_next_seq_offset and its checks after it decide: the file is done (`None`) where
    /// the previous I/O ended at the file's end, or where the position, wrapped to the
    /// region's start offset only once it passes the file's whole size (fio compares the
    /// region-relative position with the file's size and wraps it to the absolute start),
    /// is still past the region. A region at the file's start and as long as the file
    /// starts over at 0; one at an offset, or in a larger file, ends. A position fio
    /// put its request at before finding it past the region is the failed attempt's
    /// offset ([`Self::failed_at`]).
    #[cold]
    pub(super) fn holed_end(&mut self, fi: usize, off: u64) -> Option<u64> {
        let r = self.files[fi].region;
        let size = self.file_size(fi);
        let prev_end = off.saturating_sub(self.spec.rw_nr);
        if r.start.saturating_add(prev_end) >= size {
            return None;
        }
        let next = if off >= size { r.start } else { off };
        let fits = next < r.len && r.start.saturating_add(next) < size;
        if !fits {
            self.failed_at(fi, next);
        }
        fits.then_some(next)
    }

    /// fio's backwards sequential I/O (`rw=read:-N`): `end` is where the previous I/O ended
    /// (relative to the region, 0 before the first). The first I/O of a region not at the
    /// file's start begins at the region's length, less its start, stepped back; later ones
    /// N bytes back from the end of the previous one; stepping back past the start wraps to
    /// the region's end, stepped back.
    pub(super) fn step_back(&self, fi: usize, end: u64) -> u64 {
        let r = &self.files[fi].region;
        let back = self.spec.rw_back;
        let pos = if end == 0 && r.start != 0 {
            r.len.wrapping_sub(r.start)
        } else {
            end
        };
        if pos == 0 {
            return 0;
        }
        pos.checked_sub(back)
            .unwrap_or_else(|| r.len.wrapping_sub(back))
    }
}
