//! `zonemode=strided`: where the I/O of a file with strided zones goes, as fio places it.
//!
//! The rules (fio 3.33's, and the newest fio's):
//! - One count of bytes for the whole job (every file, every direction): when it reaches
//!   `zonesize`, the file of the next I/O moves its zone on by `zonerange + zoneskip` (back
//!   to the region's start where that passes the file's size) and the count starts again.
//!   Other files stay in their zones.
//! - Each time the count is a multiple of `zonerange` (0 included) the file of the next
//!   I/O starts its zone over: positions at the zone's start, its random map and LFSR
//!   reset.
//! - A direction whose position has reached the zone's end (`zonerange`) goes back to the
//!   zone's start.
//! - Offsets are relative to the zone's start and must stay below the region's length;
//!   absolute, below the file's size; a block must end within the region and the file.
//!   An I/O that does not fit ends the file (or starts it over under non-uniform file
//!   service).
//! - Random blocks are drawn from the first `zonerange` bytes of the zone; the random map
//!   and LFSR cover that range.

use super::*;

impl Generator {
    /// The file's size less the region's start (where an I/O of the file must end).
    fn strided_file_end(&self, fi: usize) -> u64 {
        self.file_size(fi)
            .saturating_sub(self.files[fi].region.start)
    }

    /// Before each I/O of file `fi` in direction `ddir`: the zone switch and resets.
    pub(super) fn strided_setup(&mut self, fi: usize, ddir: Ddir) {
        let Some(z) = self.spec.strided else {
            return;
        };
        let file_end = self.strided_file_end(fi);
        let f = &mut self.files[fi];
        if self.zone_bytes >= z.size {
            self.zone_bytes = 0;
            f.zone_start = f.zone_start.saturating_add(z.range + z.skip);
            if f.zone_start >= file_end {
                // fio wraps to the start offset it computes now.
                f.zone_start = match self.spec.start_later.get(fi) {
                    Some(s) => s.saturating_sub(f.region.start),
                    None => 0,
                };
            }
            f.pos[ddir] = f.zone_start;
        }
        if f.pos[ddir] >= f.zone_start.saturating_add(z.range) {
            f.pos[ddir] = f.zone_start;
        }
        if self.zone_bytes % z.range.max(1) == 0 {
            Self::strided_reset(f);
        }
    }

    /// The file starts its zone over (fio's fio_file_reset): positions at the zone's
    /// start, no I/O started yet, the random map and LFSR from the beginning.
    pub(super) fn strided_reset(f: &mut FileState) {
        f.pos = [f.zone_start; 3];
        f.last_start = [u64::MAX; 3];
        if let Some(m) = &mut f.map {
            m.clear();
        }
        if let Some(l) = &mut f.lfsr {
            l.reset();
        }
    }

    /// A sequential I/O: after the direction's last one, `hole` bytes further (holed
    /// sequential I/O, not for the zone's first block).
    pub(super) fn strided_seq(&mut self, fi: usize, ddir: Ddir, hole: u64) -> Option<(u64, u64)> {
        let file_end = self.strided_file_end(fi);
        let f = &self.files[fi];
        let last = f.pos[ddir];
        if last >= file_end {
            self.mark_done(fi);
            return None;
        }
        let mut rel = last.wrapping_sub(f.zone_start);
        if rel != 0 && hole > 0 {
            rel = rel.saturating_add(hole);
            // fio compares the zone-relative position with the file's size and puts the
            // zone's absolute start in its place.
            let abs_size = f.region.start + file_end;
            if rel >= abs_size {
                rel = f.region.start + f.zone_start;
            }
        }
        self.strided_place(fi, ddir, rel, false)
    }

    /// A sequential I/O of a random job (`percentage_random`, `rw=randread:N`): after the
    /// direction's last one, or a random block once that is past the file's end.
    pub(super) fn strided_seq_in_random<Z: Zoned>(
        &mut self,
        fi: usize,
        ddir: Ddir,
        z: &mut Z,
    ) -> Option<(u64, u64)> {
        if self.files[fi].pos[ddir] >= self.strided_file_end(fi) {
            return self.random_io(fi, ddir, true, z);
        }
        let f = &self.files[fi];
        let rel = f.pos[ddir].wrapping_sub(f.zone_start);
        self.strided_place(fi, ddir, rel, false)
    }

    /// `rw_sequencer=identical`: where the direction's last I/O started, as an offset in
    /// the current zone (its start when none has started since the zone began).
    pub(super) fn strided_identical(&mut self, fi: usize, ddir: Ddir) -> Option<(u64, u64)> {
        let f = &self.files[fi];
        let rel = match f.last_start[ddir] {
            u64::MAX => 0,
            s => s.wrapping_sub(f.zone_start),
        };
        self.strided_place(fi, ddir, rel, false)
    }

    /// An I/O at `rel` bytes into the zone, if it fits (see the module's rules); its
    /// offset relative to the region and its length.
    fn strided_place(
        &mut self,
        fi: usize,
        ddir: Ddir,
        rel: u64,
        random: bool,
    ) -> Option<(u64, u64)> {
        let l = self.strided_fit(fi, ddir, rel, random)?;
        let f = &mut self.files[fi];
        let off = f.zone_start + rel;
        f.pos[ddir] = off + l;
        Some((off, l))
    }

    /// The length of an I/O at `rel` bytes into the zone, or `None` (the file done) where
    /// it does not fit.
    pub(super) fn strided_fit(
        &mut self,
        fi: usize,
        ddir: Ddir,
        rel: u64,
        random: bool,
    ) -> Option<u64> {
        let file_end = self.strided_file_end(fi);
        let f = &self.files[fi];
        let off = f.zone_start.saturating_add(rel);
        let fits = rel < f.region.len && off < file_end;
        let l = if fits {
            self.draw_len_at(fi, off, ddir, random)
                .filter(|l| off + l <= file_end)
        } else {
            None
        };
        if l.is_none() {
            // The failed attempt's offset, as fio's request holds it: relative to the zone
            // where it is past the region's length (fio's check before the zone's offset
            // is added), else the file's.
            let r = self.files[fi].region;
            self.failed_off = if rel >= r.len { rel } else { r.start + off };
            self.strided_done(fi);
        }
        l
    }

    /// File `fi` has no I/O that fits: done. A job that goes on past its files' end
    /// (io_size given, not time based) ends the pass there as fio ends a loop: when every
    /// file is done, the next pass starts them over from their first zone.
    #[cold]
    fn strided_done(&mut self, fi: usize) {
        self.mark_done(fi);
        let again = self.spec.wrap
            && !self.spec.time_based
            && !matches!(self.spec.select, FileSelect::Dist(_));
        if again && self.files_done == self.files.len() {
            self.restart_pass(&mut NoZones);
            for f in &mut self.files {
                f.zone_start = 0;
            }
            self.zone_bytes = 0;
        }
    }
}
