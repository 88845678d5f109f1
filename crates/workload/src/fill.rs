//! Write-buffer contents: random (default), zeroes, a repeated pattern, or data of a given
//! compressibility; plus the light per-I/O scramble that defeats de-duplication.

use crate::rng::Taus88;

#[derive(Clone, Debug, PartialEq)]
pub enum Fill {
    Random,
    Zero,
    Pattern(Vec<u8>),
    /// `pct` percent of every `chunk` bytes compress away (zeroes), the rest is random.
    Compress {
        pct: u32,
        chunk: u64,
    },
}

fn random_bytes(buf: &mut [u8], rng: &mut Taus88) {
    fill_words(buf, || rng.next_u64());
}

/// `buf` from successive 64-bit words in native byte order; a partial last word takes its
/// leading bytes (one more word is drawn for it).
pub fn fill_words(buf: &mut [u8], mut next: impl FnMut() -> u64) {
    let mut chunks = buf.chunks_exact_mut(8);
    for c in &mut chunks {
        c.copy_from_slice(&next().to_ne_bytes());
    }
    let rest = chunks.into_remainder();
    let v = next().to_ne_bytes();
    let n = rest.len();
    rest.copy_from_slice(&v[..n]);
}

/// Fill a whole buffer.
pub fn fill(buf: &mut [u8], how: &Fill, rng: &mut Taus88) {
    match how {
        Fill::Random => random_bytes(buf, rng),
        Fill::Zero => buf.fill(0),
        Fill::Pattern(p) => {
            if p.is_empty() {
                buf.fill(0);
            } else {
                for (i, b) in buf.iter_mut().enumerate() {
                    *b = p[i % p.len()];
                }
            }
        }
        Fill::Compress { pct, chunk } => {
            // A chunk larger than the address space is larger than any buffer: one chunk
            // (not the low bits of its size, on 32-bit targets).
            let chunk = usize::try_from(*chunk).unwrap_or(usize::MAX).max(1);
            for c in buf.chunks_mut(chunk) {
                let random_len = c.len() * (100 - (*pct).min(100) as usize) / 100;
                let (r, z) = c.split_at_mut(random_len);
                random_bytes(r, rng);
                z.fill(0);
            }
        }
    }
}

/// Lightly change a buffer before each write so that no two blocks are identical: the
/// offset and a stamp are written into every 512-byte sector.
#[inline]
pub fn scramble(buf: &mut [u8], offset: u64, stamp: u64) {
    let mut off = offset;
    for sector in buf.chunks_exact_mut(512) {
        sector[..8].copy_from_slice(&off.to_ne_bytes());
        sector[8..16].copy_from_slice(&stamp.to_ne_bytes());
        off = off.wrapping_add(512);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fills() {
        let mut r = Taus88::new(3);
        let mut b = vec![1u8; 1000];
        fill(&mut b, &Fill::Zero, &mut r);
        assert!(b.iter().all(|x| *x == 0));
        fill(&mut b, &Fill::Pattern(vec![0xde, 0xad]), &mut r);
        assert_eq!(&b[..4], &[0xde, 0xad, 0xde, 0xad]);
        fill(&mut b, &Fill::Random, &mut r);
        assert!(b.iter().filter(|x| **x == 0).count() < 20);
        let mut c = vec![1u8; 4096];
        fill(
            &mut c,
            &Fill::Compress {
                pct: 75,
                chunk: 512,
            },
            &mut r,
        );
        let zeros = c.iter().filter(|x| **x == 0).count();
        assert!((3072..3200).contains(&zeros), "{zeros}");
    }

    /// A chunk of 4 GiB and more (buffer_compress_chunk=4g) covers the whole buffer on
    /// 32-bit targets as on 64-bit ones: the first quarter random, the rest zeroes.
    #[test]
    fn huge_compress_chunks_are_one_chunk() {
        let mut r = Taus88::new(5);
        for chunk in [1u64 << 32, (1 << 32) + 1, u64::MAX] {
            let mut c = vec![1u8; 8192];
            fill(&mut c, &Fill::Compress { pct: 75, chunk }, &mut r);
            assert!(c[2048..].iter().all(|x| *x == 0), "chunk {chunk}");
            assert!(
                c[..2048].iter().filter(|x| **x != 0).count() > 1900,
                "chunk {chunk}"
            );
        }
    }

    #[test]
    fn scramble_marks_sectors() {
        let mut b = vec![0u8; 1024];
        scramble(&mut b, 4096, 7);
        assert_eq!(u64::from_ne_bytes(b[512..520].try_into().unwrap()), 4608);
        assert_eq!(u64::from_ne_bytes(b[8..16].try_into().unwrap()), 7);
    }
}
