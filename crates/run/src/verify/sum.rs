//! The checksums fio stores after a verify header, bit for bit as each generation stores
//! them (established against blocks written by fio 3.33 and, for the newest fio, the
//! layouts in the delta reference):
//!
//! * crc7: polynomial x^7+x^3+1, most significant bit first, initial value 0, one byte.
//! * crc16: polynomial 0x8005 reflected (0xA001), initial value 0, no final inversion.
//! * crc32: 0x04C11DB7 most significant bit first, initial value 0, no inversion.
//! * crc32c: Castagnoli, initial value !0 and no final inversion.
//! * crc64: the Jones polynomial, reflected, initial value 0, no inversion.
//! * xxhash: XXH32 with seed 1. md5 (flexio's own core, `md5.rs`) and the sha3 family: the
//!   digest. sha1: the five state words in native byte order.
//! * sha256 (both generations): fio's 64-byte work buffer after its final step: the last
//!   padded block, padded with the bit count in native byte order (not big endian), whose
//!   first eight bytes are then overwritten with the low byte of each of the eight state
//!   words. The state is a SHA-256 compression over that non-standard padding.
//! * sha512, fio 3.33: the final step is missing; the 128-byte field is the work buffer
//!   after the data: the first 128 data bytes with the last `len % 128` data bytes copied
//!   over their start (a data length under 128 leaves the field's old bytes after it).
//! * sha512, newest: the real digest followed by bytes 64..128 of the last padded block.
//!
//! Everything stores into a caller's slice: nothing here allocates.

use super::header::Generation;
use super::kind::Kind;

/// fio's crc32c.
pub fn crc32c(data: &[u8]) -> u32 {
    !crc32c::crc32c(data)
}

const fn crc32_table() -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u32) << 24;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x8000_0000 != 0 {
                (c << 1) ^ 0x04C1_1DB7
            } else {
                c << 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}
static CRC32: [u32; 256] = crc32_table();

/// fio's crc32.
pub fn crc32(data: &[u8]) -> u32 {
    data.iter().fold(0u32, |c, &b| {
        (c << 8) ^ CRC32[((c >> 24) as u8 ^ b) as usize]
    })
}

const fn crc64_table() -> [u64; 256] {
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u64;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0x95AC_9329_AC4B_C9B5
            } else {
                c >> 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}
static CRC64: [u64; 256] = crc64_table();

/// fio's crc64.
pub fn crc64(data: &[u8]) -> u64 {
    data.iter()
        .fold(0u64, |c, &b| CRC64[((c as u8) ^ b) as usize] ^ (c >> 8))
}

/// fio's crc16 is CRC-16/ARC, the same function fio's wire protocol frames use.
pub use flexio_remote::crc::crc16;

const fn crc7_table() -> [u8; 256] {
    // The 7-bit register kept in the top bits of a byte: polynomial 0x09 << 1.
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let mut c = i as u8;
        let mut k = 0;
        while k < 8 {
            c = if c & 0x80 != 0 {
                (c << 1) ^ 0x12
            } else {
                c << 1
            };
            k += 1;
        }
        t[i] = c;
        i += 1;
    }
    t
}
static CRC7: [u8; 256] = crc7_table();

/// fio's crc7 (a 7-bit value).
pub fn crc7(data: &[u8]) -> u8 {
    data.iter().fold(0u8, |c, &b| CRC7[(c ^ b) as usize]) >> 1
}

/// fio's xxhash.
pub fn xxhash(data: &[u8]) -> u32 {
    xxhash_rust::xxh32::xxh32(data, 1)
}

const SHA256_IV: [u32; 8] = [
    0x6a09_e667,
    0xbb67_ae85,
    0x3c6e_f372,
    0xa54f_f53a,
    0x510e_527f,
    0x9b05_688c,
    0x1f83_d9ab,
    0x5be0_cd19,
];

fn compress256(state: &mut [u32; 8], block: &[u8]) {
    let b = sha2::digest::generic_array::GenericArray::from_slice(block);
    sha2::compress256(state, std::slice::from_ref(b));
}

/// fio's sha256 field (64 bytes), the same in both generations.
fn sha256_field(data: &[u8], out: &mut [u8]) {
    use sha2::digest::block_buffer::{BlockBuffer, Eager};
    let mut state = SHA256_IV;
    let full = data.len() / 64 * 64;
    // Every full block in one call (the SHA-NI core keeps its state in registers across
    // them); the block buffer hands the data over as blocks without copying it.
    BlockBuffer::<sha2::digest::consts::U64, Eager>::default()
        .digest_blocks(&data[..full], |blocks| {
            sha2::compress256(&mut state, blocks)
        });
    let tail = &data[full..];
    // fio counts bytes in 32 bits and stores the bit count natively.
    let bits = ((data.len() as u32 as u64) << 3).to_ne_bytes();
    let mut last = [0u8; 64];
    last[..tail.len()].copy_from_slice(tail);
    last[tail.len()] = 0x80;
    if tail.len() >= 56 {
        compress256(&mut state, &last);
        last = [0u8; 64];
    }
    last[56..].copy_from_slice(&bits);
    compress256(&mut state, &last);
    for (i, w) in state.iter().enumerate() {
        last[i] = *w as u8;
    }
    out[..64].copy_from_slice(&last);
}

/// fio 3.33's sha512 field: the work buffer after the data, without a final step.
fn sha512_field_333(data: &[u8], out: &mut [u8]) {
    let n = data.len();
    if n >= 128 {
        out[..128].copy_from_slice(&data[..128]);
        let r = n % 128;
        out[..r].copy_from_slice(&data[n - r..]);
    } else {
        out[..n].copy_from_slice(data);
    }
}

/// The newest fio's sha512 field: digest, then bytes 64..128 of the last padded block.
fn sha512_field_latest(data: &[u8], out: &mut [u8]) {
    use sha2::Digest;
    let n = data.len();
    let r = n % 128;
    let mut last = [0u8; 128];
    if r < 112 {
        last[..r].copy_from_slice(&data[n - r..]);
        last[r] = 0x80;
    }
    let bits = ((n as u32 as u128) << 3).to_be_bytes();
    last[112..].copy_from_slice(&bits);
    out[..64].copy_from_slice(&sha2::Sha512::digest(data));
    out[64..128].copy_from_slice(&last[64..]);
}

/// The checksum field of `kind` over `data`, as generation `gen` stores it, into
/// `out[..kind.csum_len()]`. For fio 3.33's sha512 with less than 128 data bytes the
/// field's bytes after the data keep their previous contents.
pub fn field(gen: Generation, kind: Kind, data: &[u8], out: &mut [u8]) {
    use sha1::Digest;
    let n = kind.csum_len();
    let out = &mut out[..n];
    match kind {
        Kind::Md5 => out.copy_from_slice(&super::md5::digest(data)),
        Kind::Crc64 => out.copy_from_slice(&crc64(data).to_ne_bytes()),
        Kind::Crc32 => out.copy_from_slice(&crc32(data).to_ne_bytes()),
        Kind::Crc32c => out.copy_from_slice(&crc32c(data).to_ne_bytes()),
        Kind::Crc16 => out.copy_from_slice(&crc16(data).to_ne_bytes()),
        Kind::Crc7 => out[0] = crc7(data),
        Kind::Xxhash => out.copy_from_slice(&xxhash(data).to_ne_bytes()),
        Kind::Sha1 => {
            // fio keeps the digest as five native-endian 32-bit words.
            let d = sha1::Sha1::digest(data);
            for (o, w) in out.chunks_mut(4).zip(d.chunks(4)) {
                let v = u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
                o.copy_from_slice(&v.to_ne_bytes());
            }
        }
        Kind::Sha256 => sha256_field(data, out),
        Kind::Sha512 => match gen {
            Generation::Fio333 => sha512_field_333(data, out),
            Generation::Latest => sha512_field_latest(data, out),
        },
        Kind::Sha3_224 => out.copy_from_slice(&sha3::Sha3_224::digest(data)),
        Kind::Sha3_256 => out.copy_from_slice(&sha3::Sha3_256::digest(data)),
        Kind::Sha3_384 => out.copy_from_slice(&sha3::Sha3_384::digest(data)),
        Kind::Sha3_512 => out.copy_from_slice(&sha3::Sha3_512::digest(data)),
        Kind::Meta | Kind::PatternHdr | Kind::Pattern | Kind::Null => {}
    }
}

/// Whether `stored` is the field of `kind` over `data` (fio's comparison; for fio 3.33's
/// sha512 over less than 128 bytes only the determined bytes are compared, since fio
/// compares against uninitialised memory there).
pub fn matches(
    gen: Generation,
    kind: Kind,
    data: &[u8],
    stored: &[u8],
    scratch: &mut [u8],
) -> bool {
    let n = kind.csum_len();
    scratch[..n].copy_from_slice(&stored[..n]);
    field(gen, kind, data, scratch);
    scratch[..n] == stored[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reference_values() {
        // The standard check input; values of the variants named in the module doc.
        assert_eq!(crc32c(b"123456789"), 0x1cf9_6d7c);
        assert_eq!(crc32(b"123456789"), 0x89a1_897f);
        assert_eq!(xxhash(b"123456789"), 0xf261_918c);
        assert_eq!(crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
        // CRC-16/ARC and CRC-7/MMC check values.
        assert_eq!(crc16(b"123456789"), 0xbb3d);
        assert_eq!(crc7(b"123456789"), 0x75);
    }

    #[test]
    fn sha256_field_is_fios_work_buffer() {
        // Built independently: pad by hand with a little-endian bit count, compress with
        // a from-scratch loop over sha2's block function, keep the state's low bytes.
        for len in [
            0usize,
            1,
            24,
            55,
            56,
            60,
            63,
            64,
            100,
            3992,
            65536,
            65536 + 71,
        ] {
            let data: Vec<u8> = (0..len).map(|i| (i * 7 + 3) as u8).collect();
            let mut out = [0u8; 64];
            field(Generation::Fio333, Kind::Sha256, &data, &mut out);
            let mut msg = data.clone();
            msg.push(0x80);
            while msg.len() % 64 != 56 {
                msg.push(0);
            }
            msg.extend_from_slice(&((len as u64) * 8).to_le_bytes());
            let mut st = SHA256_IV;
            for b in msg.chunks(64) {
                compress256(&mut st, b);
            }
            let last = &msg[msg.len() - 64..];
            assert_eq!(&out[8..], &last[8..], "len {len}");
            let low: Vec<u8> = st.iter().map(|w| *w as u8).collect();
            assert_eq!(&out[..8], &low[..], "len {len}");
        }
    }

    #[test]
    fn sha512_fields_of_both_generations() {
        use sha2::Digest;
        let data: Vec<u8> = (0..3928u32).map(|i| (i * 13) as u8).collect();
        let mut old = [0u8; 128];
        field(Generation::Fio333, Kind::Sha512, &data, &mut old);
        // 3928 = 30*128 + 88: the tail over the first 128 bytes.
        assert_eq!(&old[..88], &data[3840..]);
        assert_eq!(&old[88..], &data[88..128]);
        let mut new = [0u8; 128];
        field(Generation::Latest, Kind::Sha512, &data, &mut new);
        assert_eq!(&new[..64], &sha2::Sha512::digest(&data)[..]);
        // Bytes 64..128 of the last padded block: the data tail's bytes 64..88, 0x80,
        // zeros, then the bit count (big endian).
        assert_eq!(&new[64..88], &data[3840 + 64..]);
        assert_eq!(new[88], 0x80);
        assert!(new[89..112].iter().all(|&b| b == 0));
        assert_eq!(&new[112..], &((3928u128) * 8).to_be_bytes());
        // A multiple of 128: 48 zero bytes and the count (the delta reference's case).
        let d1 = vec![9u8; 1024];
        field(Generation::Latest, Kind::Sha512, &d1, &mut new);
        assert!(new[64..112].iter().all(|&b| b == 0));
        assert_eq!(&new[112..], &(1024u128 * 8).to_be_bytes());
        // A length whose tail spills into a second padding block.
        let d2 = vec![5u8; 128 + 120];
        field(Generation::Latest, Kind::Sha512, &d2, &mut new);
        assert!(new[64..112].iter().all(|&b| b == 0));
        // Short data: only the data bytes are determined in fio 3.33's form.
        let mut f = [0xeeu8; 128];
        field(Generation::Fio333, Kind::Sha512, &[1, 2, 3], &mut f);
        assert_eq!(&f[..4], &[1, 2, 3, 0xee]);
        let mut scratch = [0u8; 128];
        assert!(matches(
            Generation::Fio333,
            Kind::Sha512,
            &[1, 2, 3],
            &f,
            &mut scratch
        ));
    }

    #[test]
    fn sha3_digests() {
        use sha3::Digest;
        let mut out = [0u8; 64];
        field(Generation::Latest, Kind::Sha3_224, b"", &mut out);
        assert_eq!(
            out[..28],
            sha3::Sha3_224::digest(b"")[..],
            "sha3-224 of nothing"
        );
        assert_eq!(out[0], 0x6b);
    }
}
