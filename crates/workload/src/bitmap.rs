//! The random map: one bit per block, so random I/O covers every block once before any
//! block repeats (fio's axmap, without its multi-level layout).

#[derive(Clone, Debug)]
pub struct BlockMap {
    words: Vec<u64>,
    nblocks: u64,
    used: u64,
}

impl BlockMap {
    pub fn new(nblocks: u64) -> Self {
        BlockMap {
            words: vec![0; nblocks.div_ceil(64) as usize],
            nblocks,
            used: 0,
        }
    }
    /// A map of `nblocks`, or `None` when its memory cannot be had (fio's "failed
    /// allocating random map").
    pub fn try_new(nblocks: u64) -> Option<Self> {
        let words = usize::try_from(nblocks.div_ceil(64)).ok()?;
        let mut v: Vec<u64> = Vec::new();
        v.try_reserve_exact(words).ok()?;
        v.resize(words, 0);
        Some(BlockMap {
            words: v,
            nblocks,
            used: 0,
        })
    }
    /// Whether block `b` is unused (blocks beyond the map never are).
    pub fn is_free(&self, b: u64) -> bool {
        b < self.nblocks && self.words[(b / 64) as usize] & (1 << (b % 64)) == 0
    }
    /// Mark block `b` used (ignored beyond the map).
    pub fn set(&mut self, b: u64) {
        if b >= self.nblocks {
            return;
        }
        let w = &mut self.words[(b / 64) as usize];
        let bit = 1 << (b % 64);
        if *w & bit == 0 {
            *w |= bit;
            self.used += 1;
        }
    }
    /// Number of blocks covered.
    pub fn len(&self) -> u64 {
        self.nblocks
    }
    pub fn is_empty(&self) -> bool {
        self.nblocks == 0
    }
    pub fn full(&self) -> bool {
        self.used >= self.nblocks
    }
    pub fn clear(&mut self) {
        self.words.iter_mut().for_each(|w| *w = 0);
        self.used = 0;
    }
    /// First free block at or after `b`, wrapping around; `None` when all are used. (Bits
    /// past the last block are never set, so the words hold every free block.)
    pub fn next_free(&self, b: u64) -> Option<u64> {
        if self.full() {
            return None;
        }
        let n = self.words.len();
        let start = ((b / 64) as usize).min(n.saturating_sub(1));
        // The free bits of word `wi` (all of it, or from bit `from` on), as a block number.
        let first = |wi: usize, w: u64| -> Option<u64> {
            if w == u64::MAX {
                return None;
            }
            let cand = wi as u64 * 64 + (!w).trailing_zeros() as u64;
            (cand < self.nblocks).then_some(cand)
        };
        // The word of b without the bits below b, the words after it, then from the
        // beginning up to and including b's word again.
        let masked = self.words[start] | ((1u64 << (b % 64)) - 1);
        first(start, masked)
            .or_else(|| (start + 1..n).find_map(|wi| first(wi, self.words[wi])))
            .or_else(|| (0..=start).find_map(|wi| first(wi, self.words[wi])))
    }

    /// Take block `b` if it is free, else the next free one as [`BlockMap::next_free`]
    /// finds it; mark it used and return it (`None` when all blocks are used). `b` must be
    /// inside the map.
    #[inline]
    pub fn take(&mut self, b: u64) -> Option<u64> {
        let wi = (b / 64) as usize;
        let bit = 1u64 << (b % 64);
        match self.words.get_mut(wi) {
            Some(w) if b < self.nblocks && *w & bit == 0 => {
                *w |= bit;
                self.used += 1;
                Some(b)
            }
            _ => {
                let c = self.next_free(b)?;
                self.set(c);
                Some(c)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_next_and_wraps() {
        let mut m = BlockMap::new(130);
        m.set(5);
        assert_eq!(m.next_free(5), Some(6));
        for b in 100..130 {
            m.set(b);
        }
        assert_eq!(m.next_free(100), Some(0));
        for b in 0..130 {
            m.set(b);
        }
        assert!(m.full());
        assert_eq!(m.next_free(0), None);
    }

    /// The word-wise search against a bit-by-bit one, on random maps of odd sizes.
    #[test]
    fn next_free_and_take_match_a_linear_search() {
        let mut seed = 0x2545f4914f6cdd1du64;
        let mut rnd = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for &n in &[1u64, 63, 64, 65, 130, 1000] {
            let mut m = BlockMap::new(n);
            let mut tm = m.clone();
            loop {
                let b = rnd() % n;
                let linear = (b..n).chain(0..b).find(|x| m.is_free(*x));
                assert_eq!(m.next_free(b), linear, "n={n} b={b}");
                let Some(got) = tm.take(b) else {
                    assert!(linear.is_none());
                    break;
                };
                assert_eq!(Some(got), linear);
                m.set(got);
                assert!(!tm.is_free(got));
            }
            assert!(m.full() && tm.full());
        }
    }

    #[test]
    fn a_map_too_large_for_memory_is_none() {
        assert!(BlockMap::try_new(u64::MAX).is_none());
        let m = BlockMap::try_new(130).unwrap();
        assert!(m.is_free(129) && !m.is_free(130));
    }
}
