//! Little-endian field writers and bounds-checked readers, fixed-size strings and fio's
//! 16-byte floating-point slot (fio-protocol.md §3).

use crate::error::{Error, Result};

/// Encode a double as fio's packer does (§3.2). Normal finite values give their IEEE-754
/// bits; both zeros give 0. Values fio cannot send (infinities, NaN: its packer would loop)
/// and subnormals (its packer produces garbage) are sent as 0.
pub fn fp64_encode(v: f64) -> u64 {
    if v.is_normal() {
        v.to_bits()
    } else {
        0
    }
}

/// Decode fio's packed double (§3.2): 0 is 0.0; exponent field 2047 is ±infinity; a zero
/// exponent field with a non-zero fraction is read, as fio reads it, as a normal number
/// with exponent −1023; everything else is the IEEE-754 value.
pub fn fp64_decode(bits: u64) -> f64 {
    if bits == 0 {
        return 0.0;
    }
    let neg = bits >> 63 != 0;
    let exp = (bits >> 52) & 0x7ff;
    let frac = bits & ((1u64 << 52) - 1);
    let v = match exp {
        0x7ff => f64::INFINITY,
        0 => (1.0 + frac as f64 / (1u64 << 52) as f64) * 2f64.powi(-1023),
        _ => return f64::from_bits(bits),
    };
    if neg {
        -v
    } else {
        v
    }
}

/// Builds a payload field by field.
#[derive(Default)]
pub struct Writer {
    pub buf: Vec<u8>,
}

impl Writer {
    pub fn with_capacity(n: usize) -> Self {
        Writer {
            buf: Vec::with_capacity(n),
        }
    }
    pub fn pos(&self) -> usize {
        self.buf.len()
    }
    pub fn u8(&mut self, v: u8) {
        self.buf.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn i32(&mut self, v: i32) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.buf.extend_from_slice(&v.to_le_bytes());
    }
    pub fn u64s(&mut self, v: &[u64]) {
        for x in v {
            self.u64(*x);
        }
    }
    pub fn u32s(&mut self, v: &[u32]) {
        for x in v {
            self.u32(*x);
        }
    }
    /// fio's 16-byte floating-point slot: the packed value, then 8 zero bytes.
    pub fn fp64(&mut self, v: f64) {
        self.u64(fp64_encode(v));
        self.zeros(8);
    }
    pub fn zeros(&mut self, n: usize) {
        self.buf.resize(self.buf.len() + n, 0);
    }
    pub fn bytes(&mut self, b: &[u8]) {
        self.buf.extend_from_slice(b);
    }
    /// A fixed `n`-byte string field: the text cut (at a character boundary) so that a NUL
    /// always fits, then zero padding.
    pub fn str_fixed(&mut self, s: &str, n: usize) {
        let t = truncate(s, n.saturating_sub(1));
        self.buf.extend_from_slice(t.as_bytes());
        self.zeros(n - t.len());
    }
    /// Pad with zeros up to absolute offset `at` (no-op if already there).
    pub fn pad_to(&mut self, at: usize) {
        if self.buf.len() < at {
            self.buf.resize(at, 0);
        }
    }
}

/// `s` cut to at most `max` bytes at a character boundary.
pub fn truncate(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Reads a payload field by field; every read is bounds-checked.
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    what: &'static str,
}

impl<'a> Reader<'a> {
    pub fn new(buf: &'a [u8], what: &'static str) -> Self {
        Reader { buf, pos: 0, what }
    }
    pub fn pos(&self) -> usize {
        self.pos
    }
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
    pub fn rest(&self) -> &'a [u8] {
        &self.buf[self.pos..]
    }
    pub fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.pos.checked_add(n).filter(|e| *e <= self.buf.len());
        match end {
            Some(end) => {
                let s = &self.buf[self.pos..end];
                self.pos = end;
                Ok(s)
            }
            None => Err(Error::Truncated {
                what: self.what,
                need: self.pos.saturating_add(n),
                have: self.buf.len(),
            }),
        }
    }
    pub fn skip(&mut self, n: usize) -> Result<()> {
        self.take(n).map(|_| ())
    }
    /// Move to absolute offset `at` (forward or back), checked.
    pub fn seek(&mut self, at: usize) -> Result<()> {
        if at > self.buf.len() {
            return Err(Error::Truncated {
                what: self.what,
                need: at,
                have: self.buf.len(),
            });
        }
        self.pos = at;
        Ok(())
    }
    fn arr<const N: usize>(&mut self) -> Result<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    pub fn u8(&mut self) -> Result<u8> {
        Ok(self.arr::<1>()?[0])
    }
    pub fn u16(&mut self) -> Result<u16> {
        Ok(u16::from_le_bytes(self.arr()?))
    }
    pub fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    pub fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.arr()?))
    }
    pub fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.arr()?))
    }
    pub fn u64s<const N: usize>(&mut self) -> Result<[u64; N]> {
        let mut a = [0u64; N];
        for x in &mut a {
            *x = self.u64()?;
        }
        Ok(a)
    }
    pub fn u32s<const N: usize>(&mut self) -> Result<[u32; N]> {
        let mut a = [0u32; N];
        for x in &mut a {
            *x = self.u32()?;
        }
        Ok(a)
    }
    pub fn u64_into(&mut self, out: &mut [u64]) -> Result<()> {
        let s = self.take(out.len() * 8)?;
        for (x, c) in out.iter_mut().zip(s.chunks_exact(8)) {
            let mut b = [0u8; 8];
            b.copy_from_slice(c);
            *x = u64::from_le_bytes(b);
        }
        Ok(())
    }
    pub fn fp64(&mut self) -> Result<f64> {
        let v = self.u64()?;
        self.skip(8)?;
        Ok(fp64_decode(v))
    }
    /// A fixed `n`-byte string field: the bytes up to the first NUL (or all of them), with
    /// invalid UTF-8 replaced (these are names and messages, shown, not interpreted).
    pub fn str_fixed(&mut self, n: usize) -> Result<String> {
        let s = self.take(n)?;
        Ok(cstr(s))
    }
}

/// The text before the first NUL of `b` (all of `b` without one), invalid UTF-8 replaced.
pub fn cstr(b: &[u8]) -> String {
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fp64_reference_values() {
        for (v, bits) in [
            (1.0f64, 0x3ff0000000000000u64),
            (-2.5, 0xc004000000000000),
            (0.1, 0x3fb999999999999a),
            (99.99, 0x4058ff5c28f5c28f),
            (37.621872084752404, 0x4042cf9981252749),
        ] {
            assert_eq!(fp64_encode(v), bits, "{v}");
            assert_eq!(fp64_decode(bits), v);
        }
        assert_eq!(fp64_encode(0.0), 0);
        assert_eq!(fp64_encode(-0.0), 0);
        assert_eq!(fp64_encode(f64::INFINITY), 0);
        assert_eq!(fp64_encode(f64::NAN), 0);
        assert_eq!(fp64_decode(0), 0.0);
        assert_eq!(fp64_decode(0x7ff0000000000001), f64::INFINITY);
        assert_eq!(fp64_decode(0xfff8000000000000), f64::NEG_INFINITY);
        // Zero exponent field: fio reads 1.f * 2^-1023, not an IEEE subnormal.
        assert_eq!(fp64_decode(0x0008000000000000), 1.5 * 2f64.powi(-1023));
    }

    #[test]
    fn strings_truncate_and_pad() {
        let mut w = Writer::default();
        w.str_fixed("abc", 4);
        w.str_fixed("abcdef", 4);
        w.str_fixed("é", 2); // two bytes do not fit with the NUL: cut before it
        assert_eq!(w.buf, b"abc\0abc\0\0\0");
        let mut r = Reader::new(&w.buf, "t");
        assert_eq!(r.str_fixed(4).unwrap(), "abc");
        assert_eq!(r.str_fixed(4).unwrap(), "abc");
        assert_eq!(r.str_fixed(2).unwrap(), "");
        assert!(matches!(
            r.u8(),
            Err(Error::Truncated {
                need: 11,
                have: 10,
                ..
            })
        ));
        assert!(r.take(usize::MAX).is_err());
    }
}
