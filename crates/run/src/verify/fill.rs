//! Block data: `verify_pattern` laid over a block, or seeded random bytes.
//!
//! fio lays the pattern from the start of the block. `%o` holds the 8-byte (little
//! endian) offset of the block; with the newest fio's `verify_pattern_interval=N` the
//! pattern restarts every N bytes of the block and `%o` is the offset of that N-byte
//! chunk. In block coordinates the byte at position `x` is therefore
//! `pattern[(x % N) % len]` with `%o = block_offset + x / N * N` (N = 0: no restart).
//! The header (if any) is written over the pattern afterwards.

use flexio_job::options::VerifyPattern;

/// Small, fast generator for block data (xorshift64*), seeded per block: flexio's
/// data, which a report can rebuild from a header's seed.
pub struct DataRng(u64);

impl DataRng {
    pub fn new(seed: u64) -> Self {
        DataRng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// Seeded random bytes (the same bytes for the same seed).
pub fn random(buf: &mut [u8], seed: u64) {
    let mut r = DataRng::new(seed);
    flexio_workload::fill::fill_words(buf, || r.next_u64());
}

/// The data generator of a block's writer: flexio's ([`random`]) or fio's
/// ([`fio_random`]). A report rebuilds a block with the one that explains its bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Data {
    Flexio,
    Fio,
}

/// fio's multiplier for its data words (the 64-bit golden ratio).
const FIO_GOLDEN: u64 = 0x61C8_8646_80B5_83EB;

/// fio's seed buckets (its build default): the words of a block are dealt round-robin to
/// this many streams.
const FIO_BUCKETS: usize = 4;

/// The bytes fio writes as verify data for `seed` (fio 3.33 and the newest alike): the
/// words are dealt to `FIO_BUCKETS` streams, stream `p` starting at `seed` times the
/// `p`-th of 1, 2, 3, 5 and multiplied by the golden ratio after each word it gives; the
/// words after the last whole round come from the first stream alone, a partial last word
/// taking the leading bytes of its little-endian value. fio lays the headers over this.
pub fn fio_random(buf: &mut [u8], seed: u64) {
    const MUL: [u64; FIO_BUCKETS] = [1, 2, 3, 5];
    let mut s = MUL.map(|m| seed.wrapping_mul(m));
    let words = buf.len() / 8;
    let dealt = words / FIO_BUCKETS * FIO_BUCKETS * 8;
    let (head, tail) = buf.split_at_mut(dealt);
    for round in head.chunks_exact_mut(8 * FIO_BUCKETS) {
        for (w, v) in round.chunks_exact_mut(8).zip(s.iter_mut()) {
            w.copy_from_slice(&v.to_le_bytes());
            *v = v.wrapping_mul(FIO_GOLDEN);
        }
    }
    let mut v = s[0];
    let mut words = tail.chunks_exact_mut(8);
    for w in &mut words {
        w.copy_from_slice(&v.to_le_bytes());
        v = v.wrapping_mul(FIO_GOLDEN);
    }
    let rest = words.into_remainder();
    let n = rest.len();
    rest.copy_from_slice(&v.to_le_bytes()[..n]);
}

/// `out` from the pattern starting at pattern index `pos`, `%o` slots holding `off`.
fn from_pattern(out: &mut [u8], p: &VerifyPattern, mut pos: usize, off: u64) {
    let plen = p.bytes.len();
    if plen == 0 {
        out.fill(0);
        return;
    }
    let ob = off.to_le_bytes();
    let mut done = 0;
    while done < out.len() {
        let n = (out.len() - done).min(plen - pos);
        let dst = &mut out[done..done + n];
        dst.copy_from_slice(&p.bytes[pos..pos + n]);
        for &s in &p.offset_at {
            // The slot's bytes [s, s+8) that fall in pattern range [pos, pos+n).
            let lo = s.max(pos);
            let hi = (s + 8).min(pos + n);
            if lo < hi {
                dst[lo - pos..hi - pos].copy_from_slice(&ob[lo - s..hi - s]);
            }
        }
        done += n;
        pos = (pos + n) % plen;
    }
}

/// The pattern bytes of block positions `[x0, x0 + out.len())` of a block at
/// `block_offset`, restarting every `interval` bytes (0 = never).
pub fn pattern_range(out: &mut [u8], x0: u64, p: &VerifyPattern, block_offset: u64, interval: u64) {
    let plen = p.bytes.len().max(1) as u64;
    if interval == 0 {
        from_pattern(out, p, (x0 % plen) as usize, block_offset);
        return;
    }
    let mut x = x0;
    let mut done = 0usize;
    while done < out.len() {
        let in_chunk = x % interval;
        let n = ((interval - in_chunk) as usize).min(out.len() - done);
        let chunk_off = block_offset.wrapping_add(x - in_chunk);
        from_pattern(
            &mut out[done..done + n],
            p,
            (in_chunk % plen) as usize,
            chunk_off,
        );
        done += n;
        x += n as u64;
    }
}

/// The first byte of `got` (block positions from `x0`) that differs from the pattern:
/// (index in `got`, wanted byte). Compares through a stack buffer: no allocation.
pub fn pattern_mismatch(
    got: &[u8],
    x0: u64,
    p: &VerifyPattern,
    block_offset: u64,
    interval: u64,
) -> Option<(usize, u8)> {
    let mut tmp = [0u8; 256];
    let mut done = 0;
    while done < got.len() {
        let n = (got.len() - done).min(tmp.len());
        pattern_range(&mut tmp[..n], x0 + done as u64, p, block_offset, interval);
        let g = &got[done..done + n];
        if g != &tmp[..n] {
            let i = g.iter().zip(&tmp[..n]).position(|(a, b)| a != b)?;
            return Some((done + i, tmp[i]));
        }
        done += n;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pat(bytes: &[u8], slots: &[usize]) -> VerifyPattern {
        VerifyPattern {
            bytes: bytes.to_vec(),
            offset_at: slots.to_vec(),
        }
    }

    #[test]
    fn offset_token_and_pattern_interval() {
        // `verify_pattern=%o verify_pattern_interval=512` on a 4 KiB block at 0x10000:
        // bytes 0x200.. hold 0x10200, 0x400.. hold 0x10400 (the delta reference's example).
        let p = pat(&[0; 8], &[0]);
        let mut b = vec![0u8; 4096];
        pattern_range(&mut b, 0, &p, 0x10000, 512);
        for k in 0..8u64 {
            let at = (k * 512) as usize;
            assert_eq!(&b[at..at + 8], &(0x10000 + k * 512).to_le_bytes());
            assert_eq!(&b[at + 8..at + 16], &(0x10000 + k * 512).to_le_bytes());
        }
        // Without the interval every slot holds the block offset (fio 3.33).
        pattern_range(&mut b, 0, &p, 0x10000, 0);
        assert!(b.chunks(8).all(|c| c == 0x10000u64.to_le_bytes()));
        // A pattern whose length does not divide the interval restarts at each chunk.
        let p = pat(&[1, 2, 3], &[]);
        let mut c = vec![0u8; 16];
        pattern_range(&mut c, 0, &p, 0, 8);
        assert_eq!(c, vec![1, 2, 3, 1, 2, 3, 1, 2, 1, 2, 3, 1, 2, 3, 1, 2]);
        // Ranges that start mid-block agree with the whole.
        let mut part = vec![0u8; 7];
        pattern_range(&mut part, 5, &p, 0, 8);
        assert_eq!(&part[..], &c[5..12]);
    }

    #[test]
    fn slots_split_across_repetitions_and_mismatch() {
        // 0x12 %o "ab": an 11-byte pattern (fio 3.33 writes 12 <off8> 61 62 12 ...).
        let p = pat(&[0x12, 0, 0, 0, 0, 0, 0, 0, 0, b'a', b'b'], &[1]);
        let mut b = vec![0u8; 40];
        pattern_range(&mut b, 0, &p, 0x0102_0304, 0);
        assert_eq!(&b[..11], &[0x12, 4, 3, 2, 1, 0, 0, 0, 0, b'a', b'b']);
        assert_eq!(&b[11..22], &b[..11]);
        let mut tail = vec![0u8; 6];
        pattern_range(&mut tail, 14, &p, 0x0102_0304, 0);
        assert_eq!(&tail[..], &b[14..20]);
        assert_eq!(pattern_mismatch(&b, 0, &p, 0x0102_0304, 0), None);
        let mut big = vec![0u8; 1000];
        pattern_range(&mut big, 0, &p, 7, 0);
        big[700] ^= 0x40;
        assert_eq!(
            pattern_mismatch(&big, 0, &p, 7, 0),
            Some((700, big[700] ^ 0x40))
        );
    }

    #[test]
    fn fio_data_deals_words_to_four_streams() {
        let seed = 0x88bb_0a8c_f6db_562e_u64;
        // 1020 bytes: 31 rounds of 4 words, then 3 words and 4 bytes of the first stream.
        let mut b = vec![0u8; 1020];
        fio_random(&mut b, seed);
        let word = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap());
        let g = FIO_GOLDEN;
        assert_eq!(word(0), seed);
        assert_eq!(word(1), seed.wrapping_mul(2));
        assert_eq!(word(3), seed.wrapping_mul(5));
        assert_eq!(word(4), seed.wrapping_mul(g));
        assert_eq!(word(6), seed.wrapping_mul(3).wrapping_mul(g));
        let mut first = seed;
        for _ in 0..31 {
            first = first.wrapping_mul(g);
        }
        assert_eq!(word(124), first);
        assert_eq!(word(125), first.wrapping_mul(g));
        let last = first.wrapping_mul(g).wrapping_mul(g).wrapping_mul(g);
        assert_eq!(&b[1016..], &last.to_le_bytes()[..4]);
    }

    #[test]
    fn random_data_is_seeded() {
        let (mut a, mut b) = (vec![0u8; 100], vec![0u8; 100]);
        random(&mut a, 5);
        random(&mut b, 5);
        assert_eq!(a, b);
        random(&mut b, 6);
        assert_ne!(a, b);
    }
}
