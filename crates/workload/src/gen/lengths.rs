//! Block lengths: how long the next I/O at an offset is, as fio's get_next_buflen draws
//! and bounds it (a drawn size within the region from fio's start offset, a fixed size
//! within the file), and the file's size fio measures against.

use super::*;

impl Generator {
    /// fio's get_next_buflen, drawn after the offset: redraw until the block fits in the
    /// `avail` bytes left from the offset; `None` when even the smallest does not.
    ///
    /// Range: `min + (u32)(max * r / 2^32)`, aligned down to `min` (a mask when it is a
    /// power of two), capped at `max`. Split: the first entry (in the given order) whose
    /// cumulative percentage `p` satisfies `r / p <= u32::MAX / 100` and that fits.
    #[inline]
    pub(super) fn draw_len(&mut self, ddir: Ddir, random: bool, avail: u64) -> Option<u64> {
        // bs_is_seq_rand: the read settings (and random state) for sequential I/O, the
        // write ones for random I/O.
        let slot = if self.spec.bs_by_pattern {
            usize::from(random)
        } else {
            ddir
        };
        let pol = &self.spec.bs[slot];
        let (min, max) = (pol.min(), pol.max());
        if min == max {
            return (min <= avail).then_some(min);
        }
        if min > avail {
            return None;
        }
        let rng = &mut self.bs_rng[slot];
        // fio draws until a size fits, however many draws that takes (a size range always
        // has one, its minimum: at the file's last `min` bytes a 4k-16k range takes some
        // 16,000 draws), and the draws it took move its block-size stream on.
        let tries: u64 = if matches!(pol, BsPolicy::Split(_)) {
            10_000
        } else {
            1 << 40
        };
        for _ in 0..tries {
            let (r, scale, rmax) = rng.raw();
            let (mut len, unaligned) = match pol {
                BsPolicy::Fixed(b) => (*b, false),
                BsPolicy::Range { unaligned, .. } => (
                    min + ((max as f64 * (r as f64 / scale)) as u32) as u64,
                    *unaligned,
                ),
                BsPolicy::Split(list) => {
                    let mut perc = 0u64;
                    let mut b = min;
                    for (bs, p) in list {
                        if *p == 0 {
                            continue;
                        }
                        b = *bs;
                        perc += *p as u64;
                        if r / perc <= rmax / 100 && b <= avail {
                            break;
                        }
                    }
                    (b, false)
                }
            };
            if !unaligned {
                if min.is_power_of_two() {
                    len &= !(min - 1);
                } else {
                    len -= len % min;
                }
            }
            len = len.min(max);
            if len <= avail {
                return Some(len);
            }
        }
        // Only reachable with split entries of 0% covering every fitting size.
        Some(min)
    }

    /// A block at `off` (below the region's end) of file `fi`: its length, drawn to fit
    /// before the region's end ([`Self::draw_len_at`]).
    pub(super) fn len_at(&mut self, fi: usize, off: u64, ddir: Ddir, random: bool) -> Option<u64> {
        let end = self.files[fi].region.len;
        if off >= end {
            return None;
        }
        let l = self.draw_len_at(fi, off, ddir, random)?;
        if !self.spec.start_later.is_empty() && !self.within_file(fi, off, l) {
            return None;
        }
        Some(l)
    }

    /// fio's real_file_size of file `fi` ([`Spec::file_sizes`]): at least the region's end,
    /// unless the region moved past the file's end ([`Spec::start_later`]).
    pub(super) fn file_size(&self, fi: usize) -> u64 {
        let r = self.files[fi].region;
        let end = r.start.saturating_add(r.len);
        let size = self.spec.file_sizes.get(fi).copied().unwrap_or(end);
        if self.spec.start_later.is_empty() {
            size.max(end)
        } else {
            size
        }
    }

    /// Whether a block at `off` (relative to the region) ends within the file (fio's
    /// real_file_size, [`Self::file_size`]): a fixed block size past the region's end, or a
    /// region moved to [`Spec::start_later`], may reach past it, where fio's I/O fails and
    /// the file is done.
    #[cold]
    pub(super) fn within_file(&self, fi: usize, off: u64, l: u64) -> bool {
        let start = self.files[fi].region.start;
        start.saturating_add(off).saturating_add(l) <= self.file_size(fi)
    }

    /// The region-relative end a drawn block size must stay within (fio's io_u_fits: the
    /// region's length from the start offset fio computes now, [`Spec::start_later`]).
    #[inline]
    pub(super) fn fits_end(&self, fi: usize) -> u64 {
        let r = self.files[fi].region;
        match self.spec.start_later.get(fi) {
            Some(s) => r.len.saturating_add(s.saturating_sub(r.start)),
            None => r.len,
        }
    }

    /// The length of a block at `off` (relative to the region, maybe past its end) of file
    /// `fi`. As fio's get_next_buflen: a drawn size (bsrange, bssplit) must end within the
    /// region; a fixed size is not held to the region, only to the file's end.
    pub(super) fn draw_len_at(
        &mut self,
        fi: usize,
        off: u64,
        ddir: Ddir,
        random: bool,
    ) -> Option<u64> {
        let end = self.fits_end(fi);
        match self.draw_len(ddir, random, end.saturating_sub(off)) {
            Some(l) => Some(l),
            None => self.fixed_len_past_region(fi, off, ddir, random),
        }
    }

    /// A fixed block size that does not fit before the region's end: the block still goes
    /// where it ends within the file (a region shorter than a file that exists).
    #[cold]
    pub(super) fn fixed_len_past_region(
        &self,
        fi: usize,
        off: u64,
        ddir: Ddir,
        random: bool,
    ) -> Option<u64> {
        let slot = if self.spec.bs_by_pattern {
            usize::from(random)
        } else {
            ddir
        };
        let BsPolicy::Fixed(l) = self.spec.bs[slot] else {
            return None;
        };
        self.within_file(fi, off, l).then_some(l)
    }
}
