//! `block_error_percentiles`: the life of each trim-sized block of a job's files — how many
//! trims it took and how it last ended (trimmed, written, or failed) — and, at the end, the
//! distribution of the trim counts (fio's "block lifetime percentiles").
//!
//! A trim counts one trim cycle for every block it covers and leaves them trimmed (or
//! failed to trim); a write changes only blocks a trim has touched (the state of a block
//! is about its trim cycles; a job that never trims reports every block unwritten, and then,
//! as fio 3.33 does, all states as 0). The percentiles are taken over the blocks a trim
//! touched, ordered failures last and by trim count: the p-th percentile is the trim count
//! of the block at position ⌊p·n/100⌋ of those n blocks.

/// fio's names of the states, in its order.
pub const STATE_NAMES: [&str; 5] = [
    "unwritten",
    "trimmed",
    "written",
    "trim failure",
    "write failure",
];

const UNINIT: u32 = 0;
const TRIMMED: u32 = 1;
const WRITTEN: u32 = 2;
const TRIM_FAILURE: u32 = 3;
const WRITE_FAILURE: u32 = 4;
/// State in the top three bits of a block's word, trims below.
const SHIFT: u32 = 29;
const TRIMS: u32 = (1 << SHIFT) - 1;

/// The blocks of one job.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BlockInfos {
    /// Bytes per block (the job's smallest trim size).
    unit: u64,
    /// Per file: where its region starts and the index of its first block.
    files: Vec<(u64, u64)>,
    infos: Vec<u32>,
}

/// What the report shows.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockReport {
    /// (percentile, trim count), in ascending percentile order; empty when no block was
    /// trimmed (fio then prints no percentiles and no JSON `block` object).
    pub percentiles: Vec<(f64, u32)>,
    /// Blocks per state, in [`STATE_NAMES`] order (all 0 when no block was trimmed).
    pub states: [u64; 5],
}

impl BlockInfos {
    /// Blocks of `unit` bytes over files given as (region start, region length).
    pub fn new(unit: u64, regions: &[(u64, u64)]) -> BlockInfos {
        let unit = unit.max(1);
        let mut files = Vec::with_capacity(regions.len());
        let mut n = 0u64;
        for (start, len) in regions {
            files.push((*start, n));
            n += len / unit;
        }
        BlockInfos {
            unit,
            files,
            infos: vec![UNINIT; n as usize],
        }
    }

    pub fn len(&self) -> usize {
        self.infos.len()
    }

    pub fn is_empty(&self) -> bool {
        self.infos.is_empty()
    }

    /// The blocks a request covers, as indexes.
    #[inline]
    fn range(&self, file: u32, offset: u64, len: u64) -> std::ops::Range<usize> {
        let Some(&(start, base)) = self.files.get(file as usize) else {
            return 0..0;
        };
        let first = base + offset.saturating_sub(start) / self.unit;
        let last = base + (offset.saturating_sub(start) + len.max(1) - 1) / self.unit;
        let end = (last + 1).min(self.infos.len() as u64);
        (first.min(end) as usize)..(end as usize)
    }

    /// A completed trim (`ok`: without error).
    #[inline]
    pub fn trimmed(&mut self, file: u32, offset: u64, len: u64, ok: bool) {
        let r = self.range(file, offset, len);
        for b in &mut self.infos[r] {
            let trims = ((*b & TRIMS) + 1).min(TRIMS);
            *b = (if ok { TRIMMED } else { TRIM_FAILURE }) << SHIFT | trims;
        }
    }

    /// A completed write (`ok`: without error): only blocks a trim has touched change.
    #[inline]
    pub fn written(&mut self, file: u32, offset: u64, len: u64, ok: bool) {
        let r = self.range(file, offset, len);
        for b in &mut self.infos[r] {
            if *b >> SHIFT != UNINIT {
                *b = (if ok { WRITTEN } else { WRITE_FAILURE }) << SHIFT | (*b & TRIMS);
            }
        }
    }

    /// Another job's blocks beside these (group_reporting).
    pub fn merge(&mut self, o: &BlockInfos) {
        let base = self.infos.len() as u64;
        if self.infos.is_empty() {
            self.unit = o.unit;
        }
        self.files
            .extend(o.files.iter().map(|(s, b)| (*s, b + base)));
        self.infos.extend_from_slice(&o.infos);
    }

    /// The report, for percentile list `plist`.
    pub fn report(&self, plist: &[f64]) -> BlockReport {
        let category = |b: u32| match b >> SHIFT {
            UNINIT => 0,
            TRIMMED | WRITTEN => 1,
            _ => 2,
        };
        let mut sorted = self.infos.clone();
        sorted.sort_unstable_by_key(|b| (category(*b), *b & TRIMS));
        let uninit = sorted.iter().take_while(|b| category(**b) == 0).count();
        let touched = sorted.len() - uninit;
        let mut pl: Vec<f64> = plist.iter().copied().filter(|p| *p != 0.0).collect();
        pl.sort_by(|a, b| a.total_cmp(b));
        if touched == 0 || pl.is_empty() {
            return BlockReport {
                percentiles: Vec::new(),
                states: [0; 5],
            };
        }
        let percentiles = pl
            .iter()
            .map(|p| {
                let i = ((p * touched as f64 / 100.0) as usize + uninit).min(sorted.len() - 1);
                (*p, sorted[i] & TRIMS)
            })
            .collect();
        let mut states = [0u64; 5];
        for b in &self.infos {
            states[((b >> SHIFT) as usize).min(4)] += 1;
        }
        BlockReport {
            percentiles,
            states,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trims_count_and_writes_follow_trims() {
        // Two files of 4 blocks of 16 KiB (the second's region starts at 64 KiB).
        let mut b = BlockInfos::new(16384, &[(0, 65536), (65536, 65536)]);
        assert_eq!(b.len(), 8);
        b.written(0, 0, 16384, true);
        assert_eq!(
            b.report(&[50.0]).states,
            [0; 5],
            "writes alone change nothing: all unwritten, shown as 0"
        );
        for _ in 0..3 {
            b.trimmed(0, 0, 32768, true); // blocks 0, 1
        }
        b.trimmed(1, 65536 + 16384, 16384, true); // block 5
        b.written(0, 16384, 16384, true); // block 1 -> written
        b.trimmed(1, 65536 + 2 * 16384, 16384, false); // block 6: trim failure
        b.written(0, 49152, 16384, false); // block 3: untouched by trims, stays unwritten
        let r = b.report(&[1.0, 50.0, 99.0]);
        // 4 touched blocks: trims 3 (0), 3 (1), 1 (5) ordered first, then the failure (1).
        assert_eq!(r.states, [4, 2, 1, 1, 0]);
        assert_eq!(r.percentiles, vec![(1.0, 1), (50.0, 3), (99.0, 1)]);
        let mut g = b.clone();
        g.merge(&b);
        assert_eq!(g.report(&[50.0]).states, [8, 4, 2, 2, 0]);
    }

    #[test]
    fn ranges_stay_inside() {
        let mut b = BlockInfos::new(4096, &[(0, 8192)]);
        b.trimmed(0, 4096, 1 << 20, true);
        b.trimmed(7, 0, 4096, true);
        assert_eq!(b.report(&[100.0]).states, [1, 1, 0, 0, 0]);
        assert_eq!(b.report(&[100.0]).percentiles, vec![(100.0, 1)]);
    }
}
