//! The verify header of both fio generations, byte for byte (native endian, as fio):
//!
//! ```text
//! fio 3.33 (40 bytes):
//!   0 u16 magic 0xacca | 2 u16 verify_type | 4 u32 len | 8 u64 rand_seed | 16 u64 offset |
//!  24 u32 time_sec | 28 u32 time_nsec | 32 u16 thread | 34 u16 numberio |
//!  36 u32 crc32c(bytes 0..36)
//! newest fio (48 bytes):
//!   0 u16 magic 0xacca | 2 u8 version 0x81 | 3 u8 verify_type | 4 u32 len |
//!   8 u64 rand_seed | 16 u64 offset | 24 u32 time_sec | 28 u32 time_nsec |
//!  32 u64 numberio | 40 u16 thread | 42 2 pad bytes (left as they were) |
//!  44 u32 crc32c(bytes 0..44)
//! ```
//!
//! The checksum field of the verify type follows the header.

use super::sum;

/// Which fio's formats to read and write: fio 3.33's (`--compat=3.33`) or the newest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Generation {
    Fio333,
    #[default]
    Latest,
}

pub const MAGIC: u16 = 0xacca;
/// The newest header's version byte.
pub const VERSION: u8 = 0x81;

impl Generation {
    /// Bytes of the header (before the checksum field).
    pub fn header_len(self) -> usize {
        match self {
            Generation::Fio333 => 40,
            Generation::Latest => 48,
        }
    }

    /// Where the header's own crc32c sits (it covers the bytes before it).
    pub fn crc_at(self) -> usize {
        self.header_len() - 4
    }

    /// How a report names a writer of this generation.
    pub fn writer(self) -> &'static str {
        match self {
            Generation::Fio333 => "a 3.33-format writer (40-byte header)",
            Generation::Latest => "a newest-format writer (48-byte header, version 0x81)",
        }
    }

    pub fn other(self) -> Generation {
        match self {
            Generation::Fio333 => Generation::Latest,
            Generation::Latest => Generation::Fio333,
        }
    }
}

/// A decoded header (fields of both layouts; `version` is 0 in fio 3.33's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Header {
    pub magic: u16,
    pub version: u8,
    /// `verify_type` code.
    pub kind: u16,
    pub len: u32,
    pub rand_seed: u64,
    pub offset: u64,
    pub time_sec: u32,
    pub time_nsec: u32,
    pub thread: u16,
    /// Write sequence number (fio 3.33 keeps its low 16 bits).
    pub numberio: u64,
    pub crc32: u32,
}

fn u16_at(b: &[u8], i: usize) -> u16 {
    u16::from_ne_bytes([b[i], b[i + 1]])
}
fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}
fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    u64::from_ne_bytes(a)
}

impl Header {
    /// Decode the header at the start of `b` in `gen`'s layout (None if `b` is shorter).
    pub fn decode(gen: Generation, b: &[u8]) -> Option<Header> {
        if b.len() < gen.header_len() {
            return None;
        }
        let common = Header {
            magic: u16_at(b, 0),
            len: u32_at(b, 4),
            rand_seed: u64_at(b, 8),
            offset: u64_at(b, 16),
            time_sec: u32_at(b, 24),
            time_nsec: u32_at(b, 28),
            ..Header::default()
        };
        Some(match gen {
            Generation::Fio333 => Header {
                kind: u16_at(b, 2),
                thread: u16_at(b, 32),
                numberio: u16_at(b, 34) as u64,
                crc32: u32_at(b, 36),
                ..common
            },
            Generation::Latest => Header {
                version: b[2],
                kind: b[3] as u16,
                numberio: u64_at(b, 32),
                thread: u16_at(b, 40),
                crc32: u32_at(b, 44),
                ..common
            },
        })
    }

    /// Write this header at the start of `b` in `gen`'s layout; the magic, version and
    /// crc are set here (the crc is returned). fio 3.33 stores the numberio's low 16
    /// bits and the kind's code as u16; the newest's pad bytes keep what `b` held.
    pub fn encode(&self, gen: Generation, b: &mut [u8]) -> u32 {
        b[0..2].copy_from_slice(&MAGIC.to_ne_bytes());
        b[4..8].copy_from_slice(&self.len.to_ne_bytes());
        b[8..16].copy_from_slice(&self.rand_seed.to_ne_bytes());
        b[16..24].copy_from_slice(&self.offset.to_ne_bytes());
        b[24..28].copy_from_slice(&self.time_sec.to_ne_bytes());
        b[28..32].copy_from_slice(&self.time_nsec.to_ne_bytes());
        match gen {
            Generation::Fio333 => {
                b[2..4].copy_from_slice(&self.kind.to_ne_bytes());
                b[32..34].copy_from_slice(&self.thread.to_ne_bytes());
                b[34..36].copy_from_slice(&(self.numberio as u16).to_ne_bytes());
            }
            Generation::Latest => {
                b[2] = VERSION;
                b[3] = self.kind as u8;
                b[32..40].copy_from_slice(&self.numberio.to_ne_bytes());
                b[40..42].copy_from_slice(&self.thread.to_ne_bytes());
            }
        }
        let at = gen.crc_at();
        let crc = sum::crc32c(&b[..at]);
        b[at..at + 4].copy_from_slice(&crc.to_ne_bytes());
        crc
    }

    /// The crc32c of `b`'s header bytes in `gen`'s layout.
    pub fn computed_crc(gen: Generation, b: &[u8]) -> u32 {
        sum::crc32c(&b[..gen.crc_at()])
    }

    /// Whether `b` starts with a complete, self-consistent header of `gen`: magic,
    /// version (newest) and header crc.
    pub fn intact(gen: Generation, b: &[u8]) -> bool {
        match Header::decode(gen, b) {
            Some(h) => {
                h.magic == MAGIC
                    && (gen == Generation::Fio333 || h.version == VERSION)
                    && h.crc32 == Header::computed_crc(gen, b)
            }
            None => false,
        }
    }
}

/// The generation whose layout `b` holds intact, if any (the newest is tried first).
pub fn detect(b: &[u8]) -> Option<Generation> {
    [Generation::Latest, Generation::Fio333]
        .into_iter()
        .find(|g| Header::intact(*g, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Header {
        Header {
            kind: 5,
            len: 4096,
            rand_seed: 0x1122_3344_5566_7788,
            offset: 0x10_2000,
            time_sec: 0x0a0b_0c0d,
            time_nsec: 0x0102_0304,
            thread: 1,
            numberio: 0x0000_0001_0000_0203,
            ..Header::default()
        }
    }

    #[test]
    fn newest_layout_field_by_field() {
        // The delta reference's dump for crc32c (type 5), thread 1:
        // caac 8105 0010 0000 <seed8> <off8> <sec4> <nsec4> <numberio8> 0100 xxxx <crc4>
        let mut b = [0x5au8; 48];
        let crc = sample().encode(Generation::Latest, &mut b);
        assert_eq!(
            &b[0..2],
            &[0xca, 0xac],
            "magic 0xacca, native (little) endian"
        );
        assert_eq!(b[2], 0x81, "version");
        assert_eq!(b[3], 0x05, "u8 verify_type");
        assert_eq!(&b[4..8], &[0x00, 0x10, 0x00, 0x00], "len 4096");
        assert_eq!(
            &b[8..16],
            &0x1122_3344_5566_7788u64.to_le_bytes(),
            "rand_seed"
        );
        assert_eq!(&b[16..24], &0x10_2000u64.to_le_bytes(), "offset");
        assert_eq!(&b[24..28], &0x0a0b_0c0du32.to_le_bytes(), "time_sec");
        assert_eq!(&b[28..32], &0x0102_0304u32.to_le_bytes(), "time_nsec");
        assert_eq!(
            &b[32..40],
            &0x0000_0001_0000_0203u64.to_le_bytes(),
            "u64 numberio"
        );
        assert_eq!(&b[40..42], &[0x01, 0x00], "thread");
        assert_eq!(
            &b[42..44],
            &[0x5a, 0x5a],
            "pad bytes keep the buffer's data"
        );
        assert_eq!(&b[44..48], &crc.to_le_bytes(), "crc");
        assert_eq!(
            crc,
            sum::crc32c(&b[..44]),
            "crc32c over 44 bytes, pad included"
        );
        // Changing a pad byte changes the crc: it is covered.
        let mut c = b;
        c[42] ^= 1;
        assert!(!Header::intact(Generation::Latest, &c));
        let h = Header::decode(Generation::Latest, &b).unwrap();
        assert_eq!(
            h,
            Header {
                magic: MAGIC,
                version: VERSION,
                crc32: crc,
                ..sample()
            }
        );
        assert_eq!(detect(&b), Some(Generation::Latest));
    }

    #[test]
    fn fio333_layout_field_by_field() {
        let mut b = [0u8; 40];
        let crc = sample().encode(Generation::Fio333, &mut b);
        assert_eq!(&b[0..4], &[0xca, 0xac, 0x05, 0x00], "magic, u16 type");
        assert_eq!(&b[32..34], &[0x01, 0x00], "thread");
        assert_eq!(&b[34..36], &[0x03, 0x02], "numberio's low 16 bits");
        assert_eq!(&b[36..40], &crc.to_le_bytes());
        assert_eq!(crc, sum::crc32c(&b[..36]));
        let h = Header::decode(Generation::Fio333, &b).unwrap();
        assert_eq!((h.kind, h.numberio, h.version), (5, 0x203, 0));
        assert_eq!(detect(&b), Some(Generation::Fio333));
        // Read in the other layout: 3.33's type 5 is the newest's version byte 5.
        let other = Header::decode(Generation::Latest, &[b.as_slice(), &[0; 8]].concat()).unwrap();
        assert_eq!(other.version, 5);
        assert!(!Header::intact(
            Generation::Latest,
            &[b.as_slice(), &[0; 8]].concat()
        ));
        assert_eq!(Header::decode(Generation::Latest, &b), None, "too short");
    }

    #[test]
    fn header_written_by_fio333_decodes() {
        // The first 40 bytes fio 3.33 wrote for `--verify=crc32c --bs=4k` at offset 0.
        let b: [u8; 40] = [
            0xca, 0xac, 0x05, 0x00, 0x00, 0x10, 0x00, 0x00, 0x3c, 0x54, 0x09, 0xc5, 0x01, 0xcc,
            0xa4, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x5c, 0x3c, 0x73, 0x06, 0x01, 0x00,
            0x00, 0x00, 0x8f, 0x14, 0x2d, 0x62,
        ];
        assert!(Header::intact(Generation::Fio333, &b));
        let h = Header::decode(Generation::Fio333, &b).unwrap();
        assert_eq!(
            (h.kind, h.len, h.offset, h.thread, h.numberio),
            (5, 4096, 0, 1, 0)
        );
    }
}
