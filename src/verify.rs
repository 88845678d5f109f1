//! Data verification: block headers, checksums and their checks (fio 3.33's `verify=`).
//!
//! A verified write fills its buffer with data and then, every `verify_interval` bytes
//! (default: the whole block), writes a 40-byte header followed by the checksum field:
//!
//! ```text
//! u16 magic 0xacca | u16 type | u32 len | u64 rand_seed | u64 offset |
//! u32 time_sec | u32 time_nsec | u16 thread | u16 numberio | u32 crc32c(header[0..36])
//! ```
//!
//! all native endian, the same bytes fio 3.33 writes: the checksum of the data after
//! header and checksum field (md5, crc64, crc32, crc32c, xxhash, sha1) is computed as fio
//! computes it, so fio read-verifies blocks flexio wrote and the other way round. Two
//! exceptions: sha256 and sha512, where fio 3.33 stores its hash work buffer rather than
//! the digest; flexio stores the real digest there. `pattern` blocks hold only
//! `verify_pattern`; `meta` is the header alone; `null` checks nothing.
//!
//! This module is pure: it fills and checks byte slices. The worker decides which blocks
//! to check and reports the failures (see [`Failure`]).

use flexio_job::options::verify_code as code;
use flexio_job::options::VerifyPattern;

pub const MAGIC: u16 = 0xacca;
pub const HDR_LEN: usize = 40;

/// Checksum algorithms, bit-compatible with fio 3.33's.
pub mod sum {
    /// fio's crc32c: Castagnoli, initial value !0 and no final inversion.
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

    /// fio's crc32: polynomial 0x04C11DB7, most significant bit first, initial value 0,
    /// no final inversion.
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

    /// fio's crc64: the Jones polynomial, reflected, initial value 0, no final inversion.
    pub fn crc64(data: &[u8]) -> u64 {
        data.iter()
            .fold(0u64, |c, &b| CRC64[((c as u8) ^ b) as usize] ^ (c >> 8))
    }

    /// fio's xxhash: XXH32 with seed 1.
    pub fn xxhash(data: &[u8]) -> u32 {
        xxhash_rust::xxh32::xxh32(data, 1)
    }
}

/// Size of the checksum field that follows the header.
pub fn csum_len(kind: u16) -> usize {
    match kind {
        code::MD5 => 16,
        code::CRC64 => 8,
        code::CRC32 | code::CRC32C | code::XXHASH => 4,
        code::SHA1 => 20,
        code::SHA256 => 64,
        code::SHA512 => 128,
        _ => 0,
    }
}

/// The name fio prints in a failure line.
pub fn kind_name(kind: u16) -> &'static str {
    match kind {
        code::MD5 => "md5",
        code::CRC64 => "crc64",
        code::CRC32 => "crc32",
        code::CRC32C => "crc32c",
        code::SHA1 => "sha1",
        code::SHA256 => "sha256",
        code::SHA512 => "sha512",
        code::XXHASH => "xxhash",
        code::META => "meta",
        code::PATTERN => "pattern",
        code::NULL => "null",
        _ => "unknown",
    }
}

/// Checksum of `data` into `out` (`csum_len(kind)` bytes), in fio's byte order.
pub fn checksum(kind: u16, data: &[u8], out: &mut [u8]) {
    use md5::Digest;
    match kind {
        code::MD5 => out.copy_from_slice(&md5::Md5::digest(data)),
        code::CRC64 => out.copy_from_slice(&sum::crc64(data).to_ne_bytes()),
        code::CRC32 => out.copy_from_slice(&sum::crc32(data).to_ne_bytes()),
        code::CRC32C => out.copy_from_slice(&sum::crc32c(data).to_ne_bytes()),
        code::XXHASH => out.copy_from_slice(&sum::xxhash(data).to_ne_bytes()),
        code::SHA1 => {
            // fio keeps the digest as five native-endian 32-bit words.
            let d = sha1::Sha1::digest(data);
            for (o, w) in out.chunks_mut(4).zip(d.chunks(4)) {
                let v = u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
                o.copy_from_slice(&v.to_ne_bytes());
            }
        }
        code::SHA256 => {
            out.fill(0);
            out[..32].copy_from_slice(&sha2::Sha256::digest(data));
        }
        code::SHA512 => {
            out.fill(0);
            out[..64].copy_from_slice(&sha2::Sha512::digest(data));
        }
        _ => {}
    }
}

/// What one job verifies with.
#[derive(Clone, Debug)]
pub struct Verifier {
    pub kind: u16,
    /// Bytes per header (verify_interval); 0 = the whole block.
    pub interval: u64,
    /// verify_offset: the header is swapped to this offset within each interval.
    pub hdr_offset: u64,
    pub pattern: Option<VerifyPattern>,
    pub thread: u16,
}

/// What a verify read expects of a block beyond its own consistency.
#[derive(Clone, Copy, Debug, Default)]
pub struct Expect {
    pub seed: Option<u64>,
    pub numberio: Option<u16>,
}

/// Where a checked block came from, for the messages: its file and fio's io_u flags
/// (`8` for a read of a read job, `88` for a read-back of logged writes).
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    pub file: &'a str,
    pub flags: &'a str,
}

/// One failed check: fio's message lines, and where the bad data is.
#[derive(Clone, Debug)]
pub struct Failure {
    /// File offset and length of the interval that failed.
    pub offset: u64,
    pub len: u64,
    /// Message lines as fio prints them.
    pub lines: Vec<String>,
    /// Expected contents of the interval, when they can be rebuilt (for verify_dump).
    pub expected: Option<Vec<u8>>,
}

/// Small, fast generator for block data (xorshift64*), seeded per block.
struct DataRng(u64);
impl DataRng {
    fn new(seed: u64) -> Self {
        DataRng(seed ^ 0x9E37_79B9_7F4A_7C15 | 1)
    }
    #[inline]
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

impl Verifier {
    pub fn has_header(&self) -> bool {
        !matches!(self.kind, code::PATTERN | code::NULL)
    }

    /// Header interval for a block of `len` bytes.
    pub fn interval_for(&self, len: u64) -> u64 {
        if self.interval == 0 || self.interval > len {
            len
        } else {
            self.interval
        }
    }

    /// The header intervals of a block at `offset`: (file offset, bytes), as long as an
    /// interval has room for header and checksum.
    fn intervals<'b>(
        &self,
        buf: &'b mut [u8],
        offset: u64,
    ) -> impl Iterator<Item = (u64, &'b mut [u8])> {
        let step = self.interval_for(buf.len() as u64) as usize;
        let min = HDR_LEN + csum_len(self.kind);
        buf.chunks_mut(step.max(1))
            .enumerate()
            .take_while(move |(_, c)| c.len() >= min)
            .map(move |(i, c)| (offset + (i * step) as u64, c))
    }

    /// The data part: `verify_pattern` (with `%o` = `block_offset`) or seeded random bytes.
    fn fill_data(&self, buf: &mut [u8], block_offset: u64, seed: u64) {
        if let Some(p) = &self.pattern {
            fill_pattern(buf, p, block_offset);
        } else {
            let mut r = DataRng::new(seed);
            flexio_workload::fill::fill_words(buf, || r.next());
        }
    }

    /// Fill a block to be written at `offset`: data, then a header per interval.
    pub fn fill(&self, buf: &mut [u8], offset: u64, seed: u64, numberio: u16, time: (u32, u32)) {
        self.fill_data(buf, offset, seed);
        if !self.has_header() {
            return;
        }
        let csl = csum_len(self.kind);
        for (at, chunk) in self.intervals(buf, offset) {
            write_header(chunk, self.kind, seed, at, time, self.thread, numberio);
            if csl > 0 {
                let (head, data) = chunk.split_at_mut(HDR_LEN + csl);
                checksum(self.kind, data, &mut head[HDR_LEN..]);
            }
            if self.hdr_offset > 0 {
                swap_header(chunk, self.hdr_offset as usize);
            }
        }
    }

    /// Check a block read from `offset` (the buffer is modified: headers are swapped back
    /// when verify_offset is used). Returns the first failure.
    pub fn check(
        &self,
        buf: &mut [u8],
        offset: u64,
        expect: Expect,
        place: &Place,
    ) -> Result<(), Failure> {
        let (file, flags) = (place.file, place.flags);
        match self.kind {
            code::NULL => return Ok(()),
            code::PATTERN => return self.check_pattern(buf, offset, place),
            _ => {}
        }
        let len = buf.len() as u64;
        let step = self.interval_for(len) as usize;
        let csl = csum_len(self.kind);
        for (at, chunk) in self.intervals(buf, offset) {
            if self.hdr_offset > 0 {
                swap_header(chunk, self.hdr_offset as usize);
            }
            let fail = |lines: Vec<String>| Failure {
                offset: at,
                len: step as u64,
                lines,
                expected: None,
            };
            let h = Header::read(chunk);
            let hdr_line = |what: String| {
                vec![format!("verify: {what} at file {file} offset {at}, length {step} (requested block: offset={offset}, length={len})")]
            };
            // fio's order: magic, length, seed, offset, numberio (then the header crc).
            let bad = if h.magic != MAGIC {
                Some(format!("bad magic header {:x}, wanted {MAGIC:x}", h.magic))
            } else {
                [
                    ("length", h.len as u64, Some(step as u64)),
                    ("rand_seed", h.rand_seed, expect.seed),
                    ("offset", h.offset, Some(at)),
                    (
                        "numberio",
                        h.numberio as u64,
                        expect.numberio.map(u64::from),
                    ),
                ]
                .into_iter()
                .find_map(|(name, got, want)| {
                    want.filter(|w| *w != got)
                        .map(|w| format!("bad header {name} {got}, wanted {w}"))
                })
            };
            if let Some(b) = bad {
                return Err(fail(hdr_line(b)));
            }
            let crc = sum::crc32c(&chunk[..36]);
            if h.crc32 != crc {
                return Err(fail(hdr_line(format!(
                    "bad header crc {:x}, calculated {crc:x}",
                    h.crc32
                ))));
            }
            if csl == 0 {
                continue;
            }
            let mut got = [0u8; 128];
            // fio: the data starts after the checksum field of the type the block says it
            // has, and is checked with the configured type.
            let media_csl = if h.kind != self.kind && csum_len(h.kind) > 0 {
                csum_len(h.kind)
            } else {
                csl
            };
            let data = &chunk[(HDR_LEN + media_csl).min(chunk.len())..];
            checksum(self.kind, data, &mut got[..csl]);
            let stored = &chunk[HDR_LEN..HDR_LEN + csl];
            if stored != &got[..csl] {
                let mut lines = vec![format!(
                    "{}: verify failed at file {file} offset {at}, length {step} (requested block: offset={offset}, length={len}, flags={flags})",
                    kind_name(self.kind)
                )];
                lines.push(format!("       Expected CRC: {}", hex(stored)));
                lines.push(format!("       Received CRC: {}", hex(&got[..csl])));
                let expected = (self.pattern.is_none() && h.kind == self.kind).then(|| {
                    // The block as written: rebuilt from the header's seed.
                    let mut e = vec![0u8; step];
                    let v = Verifier {
                        interval: 0,
                        hdr_offset: 0,
                        ..self.clone()
                    };
                    v.fill(
                        &mut e,
                        at,
                        h.rand_seed,
                        h.numberio,
                        (h.time_sec, h.time_nsec),
                    );
                    e
                });
                if let Some(e) = &expected {
                    // flexio extension: the data can be rebuilt from the header's seed, so
                    // the first bad byte is known exactly.
                    if let Some(i) = chunk.iter().zip(e).position(|(a, b)| a != b) {
                        lines.push(format!(
                            "       flexio: first bad byte at offset {} (block offset +{}): received {:02x}, expected {:02x}",
                            at + i as u64,
                            at + i as u64 - offset,
                            chunk[i],
                            e[i]
                        ));
                    }
                }
                if h.kind != self.kind {
                    // fio checks with the configured type and then names the difference.
                    lines.push(format!(
                        "fio: verify type mismatch ({} media, {} given)",
                        h.kind, self.kind
                    ));
                }
                let mut f = fail(lines);
                f.expected = expected;
                return Err(f);
            }
        }
        Ok(())
    }

    fn check_pattern(&self, buf: &mut [u8], offset: u64, place: &Place) -> Result<(), Failure> {
        let (file, flags) = (place.file, place.flags);
        let Some(p) = &self.pattern else {
            return Ok(());
        };
        let len = buf.len() as u64;
        let mut want = vec![0u8; buf.len()];
        fill_pattern(&mut want, p, offset);
        if let Some(i) = buf.iter().zip(&want).position(|(a, b)| a != b) {
            let bad = buf[i] ^ want[i];
            let lines = vec![
                format!(
                    "fio: got pattern '{:02x}', wanted '{:02x}'. Bad bits {}",
                    buf[i],
                    want[i],
                    bad.count_ones()
                ),
                format!("fio: bad pattern block offset {i}"),
                format!(
                    "pattern: verify failed at file {file} offset {offset}, length {len} (requested block: offset={offset}, length={len}, flags={flags})"
                ),
            ];
            return Err(Failure {
                offset: offset + i as u64,
                len: 1,
                lines,
                expected: Some(want),
            });
        }
        Ok(())
    }
}

/// One written block, remembered for the read-back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub file: u32,
    pub offset: u64,
    pub len: u64,
    pub seed: u64,
    /// Write sequence number (the header holds its low 16 bits).
    pub numberio: u64,
}

/// The blocks written and not yet verified (fio's io piece log).
#[derive(Default, Debug)]
pub struct Log {
    pieces: Vec<Piece>,
    cursor: usize,
}

impl Log {
    pub fn push(&mut self, p: Piece) {
        self.pieces.push(p);
    }

    /// Blocks logged and not yet verified.
    pub fn pending(&self) -> usize {
        self.pieces.len() - self.cursor
    }

    /// Before the final read-back: random writes are checked in offset order, and a block
    /// written more than once (or overlapped by a later write) is checked as last written.
    pub fn settle(&mut self, random: bool) {
        if !random {
            return;
        }
        // Newest first: a block is checked only if no later write touched any of its bytes
        // (a later write that overlaps it partially leaves it neither old nor new).
        let rest: Vec<Piece> = self.pieces.drain(self.cursor..).collect();
        let mut covered: std::collections::BTreeMap<(u32, u64), u64> = Default::default();
        let mut kept: Vec<Piece> = Vec::with_capacity(rest.len());
        for p in rest.into_iter().rev() {
            let (start, end) = (p.offset, p.offset + p.len);
            // Ranges are kept disjoint and merged; find any that intersects [start, end).
            let mut lo = start;
            let mut hi = end;
            let mut overlaps = false;
            let mut merge = Vec::new();
            if let Some((&(f, s), &e)) = covered.range(..=(p.file, start)).next_back() {
                if f == p.file && e >= start {
                    overlaps |= e > start;
                    lo = lo.min(s);
                    hi = hi.max(e);
                    merge.push((f, s));
                }
            }
            for (&(f, s), &e) in covered.range((p.file, start)..(p.file, end.saturating_add(1))) {
                if f != p.file || s > end {
                    break;
                }
                overlaps |= s < end;
                hi = hi.max(e);
                merge.push((f, s));
            }
            for k in merge {
                covered.remove(&k);
            }
            covered.insert((p.file, lo), hi);
            if !overlaps {
                kept.push(p);
            }
        }
        kept.sort_by_key(|p| (p.file, p.offset));
        self.pieces.extend(kept);
    }

    pub fn next_piece(&mut self) -> Option<Piece> {
        let p = self.pieces.get(self.cursor).copied()?;
        self.cursor += 1;
        if self.cursor == self.pieces.len() {
            self.pieces.clear();
            self.cursor = 0;
        }
        Some(p)
    }

    pub fn clear(&mut self) {
        self.pieces.clear();
        self.cursor = 0;
    }
}

/// The per-block seed of write number `n` (deterministic, so `verify_only` replays it).
pub fn block_seed(base: u64, n: u64) -> u64 {
    let mut z = base.wrapping_add(n.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `verify_state_save` file name (fio's, for a local run).
pub fn state_file_name(job: &str, index: u32) -> String {
    format!("local-{job}-{index}-verify.state")
}

/// Save how many writes completed in order, so a later `verify_only` run with
/// `verify_state_load=1` checks only those. Written atomically.
pub fn save_state(path: &std::path::Path, completed: u64) -> std::io::Result<()> {
    crate::notes::write_atomic(
        path,
        format!("flexio-verify-state 1\ncompleted={completed}\n").as_bytes(),
    )
}

pub fn load_state(path: &std::path::Path) -> Result<u64, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read verify state {}: {e}", path.display()))?;
    let mut lines = text.lines();
    if lines.next() != Some("flexio-verify-state 1") {
        return Err(format!(
            "{}: not a flexio verify state file",
            path.display()
        ));
    }
    lines
        .find_map(|l| l.strip_prefix("completed="))
        .and_then(|v| v.trim().parse().ok())
        .ok_or_else(|| format!("{}: no completed= line", path.display()))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// The pattern repeated from the start of the block, `%o` slots holding `block_offset`.
pub fn fill_pattern(buf: &mut [u8], p: &VerifyPattern, block_offset: u64) {
    let mut pat = p.bytes.clone();
    for &at in &p.offset_at {
        pat[at..at + 8].copy_from_slice(&block_offset.to_ne_bytes());
    }
    for (i, b) in buf.iter_mut().enumerate() {
        *b = pat[i % pat.len()];
    }
}

/// Exchange the header with the bytes at `off` (verify_offset), both ways.
fn swap_header(chunk: &mut [u8], off: usize) {
    if off + HDR_LEN > chunk.len() {
        return;
    }
    let (a, b) = chunk.split_at_mut(off);
    a[..HDR_LEN].swap_with_slice(&mut b[..HDR_LEN]);
}

#[allow(clippy::too_many_arguments)]
fn write_header(
    chunk: &mut [u8],
    kind: u16,
    seed: u64,
    offset: u64,
    time: (u32, u32),
    thread: u16,
    numberio: u16,
) {
    let len = chunk.len() as u32;
    let h = &mut chunk[..HDR_LEN];
    h[0..2].copy_from_slice(&MAGIC.to_ne_bytes());
    h[2..4].copy_from_slice(&kind.to_ne_bytes());
    h[4..8].copy_from_slice(&len.to_ne_bytes());
    h[8..16].copy_from_slice(&seed.to_ne_bytes());
    h[16..24].copy_from_slice(&offset.to_ne_bytes());
    h[24..28].copy_from_slice(&time.0.to_ne_bytes());
    h[28..32].copy_from_slice(&time.1.to_ne_bytes());
    h[32..34].copy_from_slice(&thread.to_ne_bytes());
    h[34..36].copy_from_slice(&numberio.to_ne_bytes());
    let crc = sum::crc32c(&h[..36]);
    h[36..40].copy_from_slice(&crc.to_ne_bytes());
}

/// A decoded header.
#[derive(Clone, Copy, Debug)]
pub struct Header {
    pub magic: u16,
    pub kind: u16,
    pub len: u32,
    pub rand_seed: u64,
    pub offset: u64,
    pub time_sec: u32,
    pub time_nsec: u32,
    pub thread: u16,
    pub numberio: u16,
    pub crc32: u32,
}

impl Header {
    pub fn read(b: &[u8]) -> Header {
        let u16_at = |i: usize| u16::from_ne_bytes([b[i], b[i + 1]]);
        let u32_at = |i: usize| u32::from_ne_bytes(b[i..i + 4].try_into().unwrap_or([0; 4]));
        let u64_at = |i: usize| u64::from_ne_bytes(b[i..i + 8].try_into().unwrap_or([0; 8]));
        Header {
            magic: u16_at(0),
            kind: u16_at(2),
            len: u32_at(4),
            rand_seed: u64_at(8),
            offset: u64_at(16),
            time_sec: u32_at(24),
            time_nsec: u32_at(28),
            thread: u16_at(32),
            numberio: u16_at(34),
            crc32: u32_at(36),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const AT: Place = Place {
        file: "f",
        flags: "8",
    };

    fn v(kind: u16) -> Verifier {
        Verifier {
            kind,
            interval: 0,
            hdr_offset: 0,
            pattern: None,
            thread: 1,
        }
    }

    #[test]
    fn checksums_match_fio_reference_values() {
        // The standard check input; the expected values are those of the algorithms fio
        // 3.33 writes (established against blocks fio wrote; tests/verify.rs also
        // cross-checks with fio itself).
        assert_eq!(sum::crc32c(b"123456789"), 0x1cf9_6d7c);
        assert_eq!(sum::crc32(b"123456789"), 0x89a1_897f);
        assert_eq!(sum::xxhash(b"123456789"), 0xf261_918c);
        assert_eq!(sum::crc64(b"123456789"), 0xe9c6_d914_c4b8_d9ca);
    }

    #[test]
    fn every_kind_round_trips_and_detects_every_single_byte_flip() {
        for kind in [
            code::MD5,
            code::CRC64,
            code::CRC32,
            code::CRC32C,
            code::SHA1,
            code::SHA256,
            code::SHA512,
            code::XXHASH,
        ] {
            let ver = v(kind);
            let mut b = vec![0u8; 512];
            ver.fill(&mut b, 8192, 77, 3, (1, 2));
            let e = Expect {
                seed: Some(77),
                numberio: Some(3),
            };
            ver.check(&mut b.clone(), 8192, e, &AT).unwrap();
            for i in 0..b.len() {
                let mut c = b.clone();
                c[i] ^= 0x10;
                assert!(
                    ver.check(&mut c, 8192, e, &AT).is_err(),
                    "kind {kind} byte {i}"
                );
            }
        }
    }

    #[test]
    fn intervals_offsets_and_patterns() {
        let mut ver = v(code::CRC32C);
        ver.interval = 512;
        ver.hdr_offset = 100;
        let mut b = vec![0u8; 2048];
        ver.fill(&mut b, 4096, 5, 0, (0, 0));
        // The header of the third interval sits at 1024 + 100.
        assert_eq!(u16::from_ne_bytes([b[1124], b[1125]]), MAGIC);
        let mut c = b.clone();
        c[1024 + 300] ^= 1;
        let f = ver.check(&mut c, 4096, Expect::default(), &AT).unwrap_err();
        assert_eq!((f.offset, f.len), (4096 + 1024, 512));
        assert!(
            f.lines[0].starts_with("crc32c: verify failed"),
            "{:?}",
            f.lines
        );

        let mut p = v(code::PATTERN);
        p.pattern = Some(VerifyPattern {
            bytes: vec![0xaa, 0, 0, 0, 0, 0, 0, 0, 0],
            offset_at: vec![1],
        });
        let mut b = vec![0u8; 64];
        p.fill(&mut b, 4096, 0, 0, (0, 0));
        assert_eq!(&b[1..9], &4096u64.to_ne_bytes());
        p.check(&mut b.clone(), 4096, Expect::default(), &AT)
            .unwrap();
        b[20] = 0x11;
        let f = p.check(&mut b, 4096, Expect::default(), &AT).unwrap_err();
        assert_eq!(f.offset, 4096 + 20);
    }

    #[test]
    fn settle_keeps_only_blocks_no_later_write_touched() {
        let piece = |offset, len, n| Piece {
            file: 0,
            offset,
            len,
            seed: n,
            numberio: n,
        };
        let mut l = Log::default();
        l.push(piece(0, 8192, 0)); // overwritten in part by 1: dropped
        l.push(piece(1024, 1024, 1));
        l.push(piece(3072, 1024, 2)); // touched by nothing later: kept
        l.push(piece(16384, 4096, 3)); // rewritten whole by 4: dropped
        l.push(piece(16384, 4096, 4));
        l.push(piece(8192, 4096, 5)); // adjacent to 0's range, not overlapping: kept
        l.settle(true);
        let got: Vec<u64> = std::iter::from_fn(|| l.next_piece())
            .map(|p| p.numberio)
            .collect();
        assert_eq!(got, vec![1, 2, 5, 4]);
    }

    #[test]
    fn header_checks_in_fio_order() {
        let ver = v(code::MD5);
        let mut b = vec![0u8; 4096];
        ver.fill(&mut b, 0, 9, 1, (0, 0));
        let mut c = b.clone();
        c[0] = 0;
        let f = ver.check(&mut c, 0, Expect::default(), &AT).unwrap_err();
        assert!(
            f.lines[0].starts_with(
                "verify: bad magic header ac00, wanted acca at file f offset 0, length 4096"
            ),
            "{:?}",
            f.lines
        );
        let f = ver
            .check(
                &mut b.clone(),
                0,
                Expect {
                    seed: Some(8),
                    numberio: None,
                },
                &AT,
            )
            .unwrap_err();
        assert!(f.lines[0].contains("bad header rand_seed 9, wanted 8"));
        let f = ver
            .check(&mut b.clone(), 4096, Expect::default(), &AT)
            .unwrap_err();
        assert!(f.lines[0].contains("bad header offset 0, wanted 4096"));
    }
}
