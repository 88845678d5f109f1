//! MD5 (RFC 1321), written for the verify path: a 64 KiB block is hashed once when it is
//! written and once when it is read back, so the hash's speed is the verify job's speed.
//!
//! MD5 is a chain: each of the 64 steps of a block needs the previous step's result, so its
//! speed is the latency of one step, not the number of instructions. Every step is
//! `a = b + rotl(a + f(b, c, d) + K + M, s)`, and the work that does not depend on `b` (the
//! newest value) is done before `b` is ready:
//!
//! * `a + K + M` first (`a`, the constant and the message word are known steps ahead);
//! * F as `d ^ (b & (c ^ d))`: `c ^ d` is ready early, two operations wait for `b`;
//! * G in its add form `(b & d) + (c & !d)`: the two halves never have a bit in common, so
//!   `+` equals `|`, and `c & !d` joins the early sum: one AND and one add wait for `b`;
//! * H as `b ^ (c ^ d)`; I as `c ^ (b | !d)` with `!d` ready early.
//!
//! The state stays in registers across all the blocks of a buffer (one call for the whole
//! buffer, not one per block). tests check it against the md-5 crate on random inputs.

/// K[i] = floor(|sin(i + 1)| * 2^32), RFC 1321.
const K: [u32; 64] = [
    0xd76a_a478,
    0xe8c7_b756,
    0x2420_70db,
    0xc1bd_ceee,
    0xf57c_0faf,
    0x4787_c62a,
    0xa830_4613,
    0xfd46_9501,
    0x6980_98d8,
    0x8b44_f7af,
    0xffff_5bb1,
    0x895c_d7be,
    0x6b90_1122,
    0xfd98_7193,
    0xa679_438e,
    0x49b4_0821,
    0xf61e_2562,
    0xc040_b340,
    0x265e_5a51,
    0xe9b6_c7aa,
    0xd62f_105d,
    0x0244_1453,
    0xd8a1_e681,
    0xe7d3_fbc8,
    0x21e1_cde6,
    0xc337_07d6,
    0xf4d5_0d87,
    0x455a_14ed,
    0xa9e3_e905,
    0xfcef_a3f8,
    0x676f_02d9,
    0x8d2a_4c8a,
    0xfffa_3942,
    0x8771_f681,
    0x6d9d_6122,
    0xfde5_380c,
    0xa4be_ea44,
    0x4bde_cfa9,
    0xf6bb_4b60,
    0xbebf_bc70,
    0x289b_7ec6,
    0xeaa1_27fa,
    0xd4ef_3085,
    0x0488_1d05,
    0xd9d4_d039,
    0xe6db_99e5,
    0x1fa2_7cf8,
    0xc4ac_5665,
    0xf429_2244,
    0x432a_ff97,
    0xab94_23a7,
    0xfc93_a039,
    0x655b_59c3,
    0x8f0c_cc92,
    0xffef_f47d,
    0x8584_5dd1,
    0x6fa8_7e4f,
    0xfe2c_e6e0,
    0xa301_4314,
    0x4e08_11a1,
    0xf753_7e82,
    0xbd3a_f235,
    0x2ad7_d2bb,
    0xeb86_d391,
];

const IV: [u32; 4] = [0x6745_2301, 0xefcd_ab89, 0x98ba_dcfe, 0x1032_5476];

/// The MD5 state after `blocks` (a whole number of 64-byte blocks).
#[inline]
fn compress(state: &mut [u32; 4], blocks: &[u8]) {
    let [mut a, mut b, mut c, mut d] = *state;
    // The constants read through an opaque reference: as immediates, LLVM moves them to
    // the end of each step's sum, after f(b, c, d), one more addition on the chain.
    let k: &[u32; 64] = std::hint::black_box(&K);
    for block in blocks.chunks_exact(64) {
        let block: &[u8; 64] = block.try_into().expect("a 64-byte block");
        let m = |i: usize| {
            u32::from_le_bytes([
                block[4 * i],
                block[4 * i + 1],
                block[4 * i + 2],
                block[4 * i + 3],
            ])
        };
        let (aa, bb, cc, dd) = (a, b, c, d);
        macro_rules! f {
            ($a:ident, $b:ident, $c:ident, $d:ident, $i:expr, $s:expr) => {
                $a = $a.wrapping_add(k[$i]).wrapping_add(m($i));
                $a = $a.wrapping_add($d ^ ($b & ($c ^ $d)));
                $a = $a.rotate_left($s).wrapping_add($b);
            };
        }
        macro_rules! g {
            ($a:ident, $b:ident, $c:ident, $d:ident, $i:expr, $s:expr) => {
                $a = $a
                    .wrapping_add(k[$i])
                    .wrapping_add(m((5 * $i + 1) % 16))
                    .wrapping_add($c & !$d);
                $a = $a.wrapping_add($b & $d);
                $a = $a.rotate_left($s).wrapping_add($b);
            };
        }
        macro_rules! h {
            ($a:ident, $b:ident, $c:ident, $d:ident, $i:expr, $s:expr) => {
                $a = $a.wrapping_add(k[$i]).wrapping_add(m((3 * $i + 5) % 16));
                $a = $a.wrapping_add($b ^ ($c ^ $d));
                $a = $a.rotate_left($s).wrapping_add($b);
            };
        }
        macro_rules! i {
            ($a:ident, $b:ident, $c:ident, $d:ident, $i:expr, $s:expr) => {
                $a = $a.wrapping_add(k[$i]).wrapping_add(m((7 * $i) % 16));
                $a = $a.wrapping_add($c ^ ($b | !$d));
                $a = $a.rotate_left($s).wrapping_add($b);
            };
        }
        f!(a, b, c, d, 0, 7);
        f!(d, a, b, c, 1, 12);
        f!(c, d, a, b, 2, 17);
        f!(b, c, d, a, 3, 22);
        f!(a, b, c, d, 4, 7);
        f!(d, a, b, c, 5, 12);
        f!(c, d, a, b, 6, 17);
        f!(b, c, d, a, 7, 22);
        f!(a, b, c, d, 8, 7);
        f!(d, a, b, c, 9, 12);
        f!(c, d, a, b, 10, 17);
        f!(b, c, d, a, 11, 22);
        f!(a, b, c, d, 12, 7);
        f!(d, a, b, c, 13, 12);
        f!(c, d, a, b, 14, 17);
        f!(b, c, d, a, 15, 22);

        g!(a, b, c, d, 16, 5);
        g!(d, a, b, c, 17, 9);
        g!(c, d, a, b, 18, 14);
        g!(b, c, d, a, 19, 20);
        g!(a, b, c, d, 20, 5);
        g!(d, a, b, c, 21, 9);
        g!(c, d, a, b, 22, 14);
        g!(b, c, d, a, 23, 20);
        g!(a, b, c, d, 24, 5);
        g!(d, a, b, c, 25, 9);
        g!(c, d, a, b, 26, 14);
        g!(b, c, d, a, 27, 20);
        g!(a, b, c, d, 28, 5);
        g!(d, a, b, c, 29, 9);
        g!(c, d, a, b, 30, 14);
        g!(b, c, d, a, 31, 20);

        h!(a, b, c, d, 32, 4);
        h!(d, a, b, c, 33, 11);
        h!(c, d, a, b, 34, 16);
        h!(b, c, d, a, 35, 23);
        h!(a, b, c, d, 36, 4);
        h!(d, a, b, c, 37, 11);
        h!(c, d, a, b, 38, 16);
        h!(b, c, d, a, 39, 23);
        h!(a, b, c, d, 40, 4);
        h!(d, a, b, c, 41, 11);
        h!(c, d, a, b, 42, 16);
        h!(b, c, d, a, 43, 23);
        h!(a, b, c, d, 44, 4);
        h!(d, a, b, c, 45, 11);
        h!(c, d, a, b, 46, 16);
        h!(b, c, d, a, 47, 23);

        i!(a, b, c, d, 48, 6);
        i!(d, a, b, c, 49, 10);
        i!(c, d, a, b, 50, 15);
        i!(b, c, d, a, 51, 21);
        i!(a, b, c, d, 52, 6);
        i!(d, a, b, c, 53, 10);
        i!(c, d, a, b, 54, 15);
        i!(b, c, d, a, 55, 21);
        i!(a, b, c, d, 56, 6);
        i!(d, a, b, c, 57, 10);
        i!(c, d, a, b, 58, 15);
        i!(b, c, d, a, 59, 21);
        i!(a, b, c, d, 60, 6);
        i!(d, a, b, c, 61, 10);
        i!(c, d, a, b, 62, 15);
        i!(b, c, d, a, 63, 21);

        a = a.wrapping_add(aa);
        b = b.wrapping_add(bb);
        c = c.wrapping_add(cc);
        d = d.wrapping_add(dd);
    }
    *state = [a, b, c, d];
}

/// The MD5 digest of `data`.
pub fn digest(data: &[u8]) -> [u8; 16] {
    let mut state = IV;
    let full = data.len() / 64 * 64;
    compress(&mut state, &data[..full]);
    let tail = &data[full..];
    let mut last = [0u8; 128];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    let end = if tail.len() < 56 { 64 } else { 128 };
    last[end - 8..end].copy_from_slice(&((data.len() as u64) << 3).to_le_bytes());
    compress(&mut state, &last[..end]);
    let mut out = [0u8; 16];
    for (o, w) in out.chunks_exact_mut(4).zip(state) {
        o.copy_from_slice(&w.to_le_bytes());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use flexio_workload::Taus88;

    fn md5_crate(data: &[u8]) -> [u8; 16] {
        use md5::Digest;
        md5::Md5::digest(data).into()
    }

    #[test]
    fn rfc_1321_test_suite() {
        let hex = |d: [u8; 16]| d.iter().map(|b| format!("{b:02x}")).collect::<String>();
        for (input, want) in [
            ("", "d41d8cd98f00b204e9800998ecf8427e"),
            ("a", "0cc175b9c0f1b6a831c399e269772661"),
            ("abc", "900150983cd24fb0d6963f7d28e17f72"),
            ("message digest", "f96b697d7cb7938d525a2f31aaf161d0"),
            (
                "abcdefghijklmnopqrstuvwxyz",
                "c3fcd3d76192e4007dfb496cca67e13b",
            ),
            (
                "12345678901234567890123456789012345678901234567890123456789012345678901234567890",
                "57edf4a22be3c955ac49da2e2107b67a",
            ),
        ] {
            assert_eq!(hex(digest(input.as_bytes())), want, "{input:?}");
        }
    }

    #[test]
    fn agrees_with_the_md5_crate_on_random_inputs() {
        let mut rng = Taus88::new(0x5eed);
        let mut data = vec![0u8; 70_000];
        for b in data.iter_mut() {
            *b = rng.below(256) as u8;
        }
        // Every tail length around the padding boundaries, and long buffers.
        for len in (0..200).chain([4096, 65_536 - 1, 65_536, 65_536 + 55, 70_000]) {
            let start = rng.below(64) as usize;
            let end = (start + len).min(data.len());
            let d = &data[start..end];
            assert_eq!(digest(d), md5_crate(d), "length {}", d.len());
        }
    }
}
