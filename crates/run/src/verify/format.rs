//! Filling a verified block and checking a block read back, in either generation's
//! format, with fio's check order and messages.
//!
//! A block of `len` bytes at file offset `offset` is cut into header intervals of
//! `verify_interval` bytes (the whole block when the interval is 0, larger than the block
//! or does not divide it, as fio 3.33 does). Each interval holds a header, the checksum
//! field of the verify type and data; `verify_offset` exchanges header plus checksum
//! field with the bytes at that offset of the interval (the same exchange on the way
//! back). Checks, per interval, in fio's order:
//!
//! * fio 3.33: magic, length, rand_seed, offset, numberio, header crc, data.
//! * newest: magic, version, length, rand_seed (if `verify_header_seed`), offset,
//!   numberio (if `verify_write_sequence`), header crc, data.
//!
//! The first failing interval is reported (a [`Mismatch`]): fio's lines first, then
//! flexio's analysis. Neither filling nor a passing check allocates.

use super::fill;
use super::header::{Generation, Header, MAGIC, VERSION};
use super::kind::Kind;
use super::report::{self, Mismatch};
use super::sum;
use flexio_job::options::VerifyPattern;

/// What one job verifies with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Format {
    pub gen: Generation,
    pub kind: Kind,
    /// `verify_interval` in bytes; 0 = the whole block.
    pub interval: u64,
    /// `verify_offset`: where in each interval header and checksum field are moved.
    pub hdr_offset: u64,
    /// `verify_pattern`: the data, instead of seeded random bytes.
    pub pattern: Option<VerifyPattern>,
    /// `verify_pattern_interval` (newest fio only; ignored for fio 3.33).
    pub pattern_interval: u64,
    /// The job's thread number (header `thread`).
    pub thread: u16,
}

/// What a header records about one write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Stamp {
    /// Seed of the data (0 for pattern data, as fio).
    pub seed: u64,
    /// Write sequence number.
    pub numberio: u64,
    /// Issue time (seconds, nanoseconds).
    pub time: (u32, u32),
}

/// A write known from the written-block log.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WriteRef {
    pub offset: u64,
    pub len: u64,
    pub seed: u64,
    pub numberio: u64,
}

/// What a check expects of a block beyond its own consistency.
#[derive(Clone, Copy, Debug, Default)]
pub struct Expect {
    /// The write the log says was last at this block.
    pub last: Option<WriteRef>,
    /// The write before it at this place, when the log remembers it (torn-write reports).
    pub prev: Option<WriteRef>,
    /// Compare the header's rand_seed with `last.seed` (`verify_header_seed`).
    pub check_seed: bool,
    /// Compare the header's numberio with `last.numberio` (`verify_write_sequence`).
    pub check_numberio: bool,
}

/// Where a checked block came from, for the messages: its file and fio's io_u flags
/// (`8` for a read of a read job, `88` for a read-back of logged writes).
#[derive(Clone, Copy, Debug)]
pub struct Place<'a> {
    pub file: &'a str,
    pub flags: &'a str,
}

impl Format {
    /// A format without pattern, interval or offset.
    pub fn new(gen: Generation, kind: Kind, thread: u16) -> Format {
        Format {
            gen,
            kind,
            interval: 0,
            hdr_offset: 0,
            pattern: None,
            pattern_interval: 0,
            thread,
        }
    }

    /// Bytes of header plus checksum field at the start of each interval (0 without
    /// header).
    pub fn hdr_size(&self) -> usize {
        if self.kind.has_header() {
            self.gen.header_len() + self.kind.csum_len()
        } else {
            0
        }
    }

    /// Header interval for a block of `len` bytes.
    pub fn interval_for(&self, len: u64) -> u64 {
        let i = self.interval;
        if i == 0 || i > len || len % i != 0 {
            len
        } else {
            i
        }
    }

    fn pattern_interval(&self) -> u64 {
        match self.gen {
            Generation::Fio333 => 0,
            Generation::Latest => self.pattern_interval,
        }
    }

    /// Options that cannot work for blocks of `min_bs` bytes, in fio's words.
    pub fn validate(&self, min_bs: u64) -> Result<(), String> {
        let step = self.interval_for(min_bs);
        let hs = self.hdr_size() as u64;
        if self.hdr_offset > 0 && self.hdr_offset + hs > step {
            return Err("fio: cannot offset verify header beyond the verify interval.".into());
        }
        if hs > 0 && step <= hs {
            return Err(format!(
                "fio: verify header and checksum ({hs} bytes) do not fit a {step}-byte verify interval (Blocksize too small)"
            ));
        }
        if matches!(self.kind, Kind::Pattern | Kind::PatternHdr) && self.pattern.is_none() {
            return Err(format!(
                "fio: verify={} needs verify_pattern",
                self.kind.name()
            ));
        }
        Ok(())
    }

    /// The data seed a header records for a write with `seed` (0 with a pattern).
    pub fn header_seed(&self, seed: u64) -> u64 {
        if self.pattern.is_some() {
            0
        } else {
            seed
        }
    }

    /// Fill a block to be written at `offset`: data, then per interval header and
    /// checksum, moved to `verify_offset` if set.
    pub fn fill(&self, buf: &mut [u8], offset: u64, st: Stamp) {
        self.fill_with(buf, offset, st, fill::Data::Flexio);
    }

    /// [`Format::fill`] with the random data of `data`'s generator (fio's, to rebuild a
    /// block fio wrote).
    pub fn fill_with(&self, buf: &mut [u8], offset: u64, st: Stamp, data: fill::Data) {
        if self.kind == Kind::Null {
            return;
        }
        match (&self.pattern, data) {
            (Some(p), _) => fill::pattern_range(buf, 0, p, offset, self.pattern_interval()),
            (None, fill::Data::Flexio) => fill::random(buf, st.seed),
            (None, fill::Data::Fio) => fill::fio_random(buf, st.seed),
        }
        if !self.kind.has_header() {
            return;
        }
        let step = self.interval_for(buf.len() as u64) as usize;
        let (hl, hs) = (self.gen.header_len(), self.hdr_size());
        for (i, chunk) in buf.chunks_mut(step.max(1)).enumerate() {
            if chunk.len() <= hs {
                continue;
            }
            let h = Header {
                kind: self.kind.code(),
                len: step as u32,
                rand_seed: self.header_seed(st.seed),
                offset: offset + (i * step) as u64,
                time_sec: st.time.0,
                time_nsec: st.time.1,
                thread: self.thread,
                numberio: st.numberio,
                ..Header::default()
            };
            h.encode(self.gen, chunk);
            let (head, data) = chunk.split_at_mut(hs);
            sum::field(self.gen, self.kind, data, &mut head[hl..]);
            self.swap(chunk);
        }
    }

    /// fio's exchange of header + checksum field with the bytes at `verify_offset`.
    pub(crate) fn swap(&self, chunk: &mut [u8]) {
        let off = self.hdr_offset as usize;
        let n = self.hdr_size();
        if off == 0 || n == 0 || off + n > chunk.len() {
            return;
        }
        let mut tmp = [0u8; 256];
        let n = n.min(tmp.len());
        tmp[..n].copy_from_slice(&chunk[..n]);
        chunk.copy_within(off..off + n, 0);
        chunk[off..off + n].copy_from_slice(&tmp[..n]);
    }

    /// Check a block read from `offset`. The buffer is modified (headers are moved back
    /// when `verify_offset` is set). Returns the first failing interval's report.
    pub fn check(
        &self,
        buf: &mut [u8],
        offset: u64,
        exp: &Expect,
        place: &Place,
    ) -> Result<(), Box<Mismatch>> {
        if self.kind == Kind::Null {
            return Ok(());
        }
        let len = buf.len() as u64;
        let step = self.interval_for(len) as usize;
        let n = buf.len() / step.max(1);
        for i in 0..n {
            let chunk = &mut buf[i * step..(i + 1) * step];
            if chunk.len() <= self.hdr_size() {
                continue;
            }
            self.swap(chunk);
            if let Some(lines) = self.check_interval(chunk, i, offset, len, exp, place) {
                // Back to the bytes as read (intervals 0..=i were moved back).
                for c in buf.chunks_mut(step).take(i + 1) {
                    self.swap(c);
                }
                return Err(Box::new(report::analyse(
                    self, buf, offset, i, lines, exp, place,
                )));
            }
        }
        Ok(())
    }

    /// fio's checks of one interval (header moved back); fio's lines on failure.
    fn check_interval(
        &self,
        c: &[u8],
        i: usize,
        offset: u64,
        len: u64,
        exp: &Expect,
        place: &Place,
    ) -> Option<Vec<String>> {
        let step = c.len() as u64;
        let at = offset + i as u64 * step;
        if self.kind == Kind::Pattern {
            return self.check_pattern(c, i, 0, offset, len, place);
        }
        if let Some(what) = self.header_fault(c, at, offset, exp) {
            return Some(vec![format!(
                "{what} at file {} offset {at}, length {step} (requested block: offset={offset}, length={len})",
                place.file
            )]);
        }
        let h = Header::decode(self.gen, c)?;
        let hs = self.hdr_size();
        let mut lines = match self.kind {
            Kind::Meta | Kind::PatternHdr => match self.pattern {
                Some(_) => self.check_pattern(c, i, hs, offset, len, place)?,
                None => return None,
            },
            _ => {
                let hl = self.gen.header_len();
                // The data starts after the checksum field of the type the header names.
                let media = Kind::from_code(h.kind).unwrap_or(self.kind);
                let start = (hl + media.csum_len()).min(c.len());
                let stored = &c[hl..hl + self.kind.csum_len()];
                let mut got = [0u8; 128];
                if sum::matches(self.gen, self.kind, &c[start..], stored, &mut got) {
                    return None;
                }
                let n = self.kind.csum_len();
                vec![
                    format!(
                        "{:.8}: verify failed at file {} offset {at}, length {} (requested block: offset={offset}, length={len}, flags={})",
                        self.kind.name(),
                        place.file,
                        h.len,
                        place.flags
                    ),
                    format!("       Expected CRC: {}", report::hex(stored)),
                    format!("       Received CRC: {}", report::hex(&got[..n])),
                ]
            }
        };
        if h.kind != self.kind.code() {
            lines.push(format!(
                "fio: verify type mismatch ({} media, {} given)",
                h.kind,
                self.kind.code()
            ));
        }
        Some(lines)
    }

    /// The first header check that fails, in the generation's order and words.
    fn header_fault(&self, c: &[u8], at: u64, offset: u64, exp: &Expect) -> Option<String> {
        let h = Header::decode(self.gen, c)?;
        if h.magic != MAGIC {
            return Some(format!(
                "verify: bad magic header {:x}, wanted {MAGIC:x}",
                h.magic
            ));
        }
        if self.gen == Generation::Latest && h.version != VERSION {
            return Some(format!(
                "verify: unsupported header version {:x}, wanted {VERSION:x}. Are you trying to verify across versions of fio?",
                h.version
            ));
        }
        if h.len as usize != c.len() {
            return Some(format!(
                "verify: bad header length {}, wanted {}",
                h.len,
                c.len()
            ));
        }
        if let Some(w) = exp.last.filter(|_| exp.check_seed) {
            let want = self.header_seed(w.seed);
            if h.rand_seed != want {
                return Some(format!(
                    "verify: bad header rand_seed {}, wanted {want}",
                    h.rand_seed
                ));
            }
        }
        if h.offset != at {
            // fio names the block's offset as the wanted one.
            return Some(format!(
                "verify: bad header offset {}, wanted {offset}",
                h.offset
            ));
        }
        if let Some(w) = exp.last.filter(|_| exp.check_numberio) {
            let (got, want) = match self.gen {
                Generation::Fio333 => (h.numberio, w.numberio as u16 as u64),
                Generation::Latest => (h.numberio, w.numberio),
            };
            if got != want {
                return Some(format!("verify: bad header numberio {got}, wanted {want}"));
            }
        }
        let crc = Header::computed_crc(self.gen, c);
        if h.crc32 != crc {
            return Some(format!(
                "verify: bad header crc {:x}, calculated {crc:x}",
                h.crc32
            ));
        }
        None
    }

    /// The pattern check of interval `i` from byte `hs`; fio's lines on failure.
    fn check_pattern(
        &self,
        c: &[u8],
        i: usize,
        hs: usize,
        offset: u64,
        len: u64,
        place: &Place,
    ) -> Option<Vec<String>> {
        let p = self.pattern.as_ref()?;
        let step = c.len() as u64;
        let x0 = i as u64 * step + hs as u64;
        let (k, want) = fill::pattern_mismatch(&c[hs..], x0, p, offset, self.pattern_interval())?;
        let got = c[hs + k];
        let no_hdr = self.kind == Kind::Pattern;
        let mut lines = vec![
            format!(
                "fio: got pattern '{got:02x}', wanted '{want:02x}'. Bad bits {}",
                (got ^ want).count_ones()
            ),
            // fio 3.33 counts from the data start; the newest from the interval start.
            format!(
                "fio: bad pattern block offset {}",
                match self.gen {
                    Generation::Fio333 => k,
                    Generation::Latest => k + hs,
                }
            ),
        ];
        let (at, l) = match (self.gen, no_hdr) {
            (Generation::Latest, true) => (offset, len),
            // fio 3.33 takes offset and length from a header even where there is none.
            _ => {
                let at = |k: usize| c.get(k).copied().unwrap_or(0);
                let hl = u32::from_ne_bytes([at(4), at(5), at(6), at(7)]);
                let at = offset.wrapping_add((i as u32).wrapping_mul(hl) as u64);
                (at, hl as u64)
            }
        };
        lines.push(format!(
            "pattern: verify failed at file {} offset {at}, length {l} (requested block: offset={offset}, length={len}, flags={})",
            place.file, place.flags
        ));
        if no_hdr && self.gen == Generation::Fio333 {
            let media = u16::from_ne_bytes([
                c.get(2).copied().unwrap_or(0),
                c.get(3).copied().unwrap_or(0),
            ]);
            if media != Kind::Pattern.code() {
                lines.push(format!(
                    "fio: verify type mismatch ({media} media, {} given)",
                    Kind::Pattern.code()
                ));
            }
        }
        Some(lines)
    }

    /// The bytes of a whole block of `len` bytes at `offset` as write `st` left it
    /// (what [`Format::fill`] writes).
    pub fn regenerate(&self, len: usize, offset: u64, st: Stamp) -> Vec<u8> {
        self.regenerate_with(len, offset, st, fill::Data::Flexio)
    }

    /// [`Format::regenerate`] with `data`'s generator.
    pub fn regenerate_with(&self, len: usize, offset: u64, st: Stamp, data: fill::Data) -> Vec<u8> {
        let mut b = vec![0u8; len];
        self.fill_with(&mut b, offset, st, data);
        b
    }
}

#[cfg(test)]
#[path = "format_tests.rs"]
mod tests;
