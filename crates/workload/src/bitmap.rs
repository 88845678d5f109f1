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
    /// First free block at or after `b`, wrapping around; `None` when all are used.
    pub fn next_free(&self, b: u64) -> Option<u64> {
        if self.full() {
            return None;
        }
        let n = self.words.len();
        let start = (b / 64) as usize;
        for k in 0..=n {
            let wi = (start + k) % n;
            let mut w = self.words[wi];
            if k == 0 {
                // Ignore bits below b in the first word.
                w |= (1u64 << (b % 64)) - 1;
            }
            if w != u64::MAX {
                let bit = (!w).trailing_zeros() as u64;
                let cand = wi as u64 * 64 + bit;
                if cand < self.nblocks {
                    return Some(cand);
                }
            }
            if k == n {
                break;
            }
        }
        // Wrapped: search from the beginning of the first word.
        (0..self.nblocks).find(|x| self.is_free(*x))
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
}
