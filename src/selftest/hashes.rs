//! The three hashes fio's `--crctest` times that flexio's verification does not use:
//! MurmurHash3 (x86, 32-bit), Bob Jenkins' lookup3 `hashlittle` (fio's `jhash`) and a
//! 64-bit FNV-1 over 8-byte words with a byte-wise tail (fio's `fnv`). Written from the
//! published algorithms (MurmurHash3 and lookup3 are public domain); only `--crctest`
//! uses them.

/// MurmurHash3_x86_32.
pub fn murmur3_32(data: &[u8], seed: u32) -> u32 {
    const C1: u32 = 0xcc9e_2d51;
    const C2: u32 = 0x1b87_3593;
    let mix = |k: u32| k.wrapping_mul(C1).rotate_left(15).wrapping_mul(C2);
    let mut h = seed;
    let mut blocks = data.chunks_exact(4);
    for b in &mut blocks {
        h ^= mix(u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
        h = h.rotate_left(13).wrapping_mul(5).wrapping_add(0xe654_6b64);
    }
    let tail = blocks.remainder();
    if !tail.is_empty() {
        let mut k = 0u32;
        for (i, b) in tail.iter().enumerate() {
            k |= (*b as u32) << (8 * i);
        }
        h ^= mix(k);
    }
    h ^= data.len() as u32;
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

fn lookup3_mix(a: &mut u32, b: &mut u32, c: &mut u32) {
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(4);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(6);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(8);
    *b = b.wrapping_add(*a);
    *a = a.wrapping_sub(*c);
    *a ^= c.rotate_left(16);
    *c = c.wrapping_add(*b);
    *b = b.wrapping_sub(*a);
    *b ^= a.rotate_left(19);
    *a = a.wrapping_add(*c);
    *c = c.wrapping_sub(*b);
    *c ^= b.rotate_left(4);
    *b = b.wrapping_add(*a);
}

fn lookup3_final(a: &mut u32, b: &mut u32, c: &mut u32) {
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(14));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(11));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(25));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(16));
    *a ^= *c;
    *a = a.wrapping_sub(c.rotate_left(4));
    *b ^= *a;
    *b = b.wrapping_sub(a.rotate_left(14));
    *c ^= *b;
    *c = c.wrapping_sub(b.rotate_left(24));
}

/// lookup3's `hashlittle` (the bytes read as little-endian words).
pub fn jhash(data: &[u8], initval: u32) -> u32 {
    let init = 0xdead_beef_u32
        .wrapping_add(data.len() as u32)
        .wrapping_add(initval);
    let (mut a, mut b, mut c) = (init, init, init);
    let word = |s: &[u8], i: usize| -> u32 {
        let mut w = 0u32;
        for (k, byte) in s.iter().skip(i).take(4).enumerate() {
            w |= (*byte as u32) << (8 * k);
        }
        w
    };
    let mut rest = data;
    while rest.len() > 12 {
        a = a.wrapping_add(word(rest, 0));
        b = b.wrapping_add(word(rest, 4));
        c = c.wrapping_add(word(rest, 8));
        lookup3_mix(&mut a, &mut b, &mut c);
        rest = &rest[12..];
    }
    if rest.is_empty() {
        return c;
    }
    a = a.wrapping_add(word(rest, 0));
    b = b.wrapping_add(word(rest, 4));
    c = c.wrapping_add(word(rest, 8));
    lookup3_final(&mut a, &mut b, &mut c);
    c
}

/// 64-bit FNV-1 (multiply, then xor) over native 8-byte words; a shorter tail is folded in
/// as one big-endian value of its bytes.
pub fn fnv64(data: &[u8], mut hval: u64) -> u64 {
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let mut words = data.chunks_exact(8);
    for w in &mut words {
        hval = hval.wrapping_mul(PRIME);
        hval ^= u64::from_ne_bytes([w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7]]);
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        hval = hval.wrapping_mul(PRIME);
        hval ^= tail.iter().fold(0u64, |v, b| (v << 8) | *b as u64);
    }
    hval
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn published_test_vectors() {
        // MurmurHash3_x86_32 reference values.
        assert_eq!(murmur3_32(b"", 0), 0);
        assert_eq!(murmur3_32(b"", 1), 0x514e_28b7);
        assert_eq!(murmur3_32(b"", 0xffff_ffff), 0x81f1_6f39);
        assert_eq!(
            murmur3_32(b"The quick brown fox jumps over the lazy dog", 0),
            0x2e4f_f723
        );
        // lookup3.c's driver.
        assert_eq!(jhash(b"", 0), 0xdead_beef);
        assert_eq!(jhash(b"", 0xdead_beef), 0xbd5b_7dde);
        assert_eq!(jhash(b"Four score and seven years ago", 0), 0x1777_0551);
        assert_eq!(jhash(b"Four score and seven years ago", 1), 0xcd62_8161);
        // FNV-1 64 of one byte, from the offset basis.
        assert_eq!(fnv64(b"a", 0xcbf2_9ce4_8422_2325), 0xaf63_bd4c_8601_b7be);
        assert_eq!(fnv64(b"", 7), 7);
    }
}
