//! `random_distribution=zoned` and `zoned_abs`, as fio draws them.
//!
//! fio's facts: a value from 1 to 100 from the job's zone stream (its own seed, 32-bit)
//! picks the zone whose cumulative access percentage first reaches it. The block is then
//! drawn as a uniform one over the zone's blocks from the offset stream: for `zoned` the
//! zone starts at `start% × blocks / 100` and holds `blocks × size% / 100` blocks (the
//! percentages cumulative, so the rounding is fio's); for `zoned_abs` at `start / align`
//! up to `end / align`. fio keeps no random map under these distributions (a block may
//! come again).

use super::*;
use crate::dist::Zone;

/// One direction's zones: (cumulative access %, start, end), in percent of the blocks
/// (`zoned`) or bytes (`zoned_abs`).
#[derive(Clone, Debug)]
pub(super) struct ZoneTable {
    abs: bool,
    zones: Vec<(u32, u64, u64)>,
}

impl ZoneTable {
    pub(super) fn new(dist: &Dist) -> Option<Box<ZoneTable>> {
        let (abs, list): (bool, &[Zone]) = match dist {
            Dist::Zoned(z) => (false, z),
            Dist::ZonedAbs(z) => (true, z),
            _ => return None,
        };
        let (mut access, mut start) = (0u32, 0u64);
        let zones = list
            .iter()
            .map(|z| {
                access += z.access_pct;
                let end = start.saturating_add(z.size);
                let e = (access, start, end);
                start = end;
                e
            })
            .collect();
        Some(Box::new(ZoneTable { abs, zones }))
    }
}

impl Generator {
    /// The next block of file `fi` for `ddir` under a zoned distribution over `nblocks`
    /// blocks; `None` where fio's draw fails (a zone past the file, the LFSR through).
    pub(super) fn zoned_block(&mut self, fi: usize, ddir: Ddir, nblocks: u64) -> Option<u64> {
        let v = self.zone_rng.between(1, 100) as u32;
        let t = self.zoned[ddir].as_deref()?;
        let &(_, start, end) = t.zones.iter().find(|z| v <= z.0).or(t.zones.last())?;
        let (first, count) = if t.abs {
            let align = self.spec.align[ddir].max(1);
            let (s, e) = (start / align, end / align);
            if e > nblocks {
                // fio: "zoned_abs sizes exceed file size"; the file is done.
                return None;
            }
            (s, e - s)
        } else {
            (
                start * nblocks / 100,
                nblocks * end.saturating_sub(start) / 100,
            )
        };
        let b = if self.spec.gen == RandGen::Lfsr {
            self.files[fi].lfsr.as_mut()?.next_value()?
        } else if let Some(t) = self.spec.trace {
            let (raw, b) = self.off_rng.below_raw(count);
            t(RandEvent::Draw(raw));
            b
        } else {
            self.off_rng.below(count)
        };
        Some(b + first)
    }
}
