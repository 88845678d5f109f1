//! fio's compressed logs (`log_compression`, `log_store_compressed`, `--inflate-log`): the
//! samples in fio's binary layout, deflated as a series of independent zlib streams.
//!
//! Two layouts, both little-endian, the flags in the high bits of the direction word:
//!
//! * fio 3.33's (`--compat=3.33`): 32 bytes, 40 with an offset: `u64 time`, `u64 value`,
//!   `u32 ddir` (bit 31: an offset follows; bit 30: the priority is logged raw, `log_prio`),
//!   `u16 priority`, two bytes of padding, `u64 bs`, then `u64 offset` when bit 31 is set.
//! * the newest fio's (flexio's default): `u64 time`, `u64 value`, `u64 value1` (the
//!   window's maximum with `log_window_value=both`, bit 29; else 0), `u32 ddir`, `u16 priority`,
//!   padding, `u64 bs` (40 bytes), then `u64 offset` (bit 31) and `u64 issue time`
//!   (`log_issue_time`, bit 28).
//!
//! fio stores no histogram log compressed (its records hold a pointer to the histogram,
//! which it writes as is); flexio stores each histogram-log line as its own record, in the
//! newest layout's frame with bit 27 set: `u64 time`, `u64 bins`, `u64 0`, `u32 ddir`,
//! `u16 0`, padding, `u64 bs`, then `bins` counts of `u64`. Only flexio inflates those.
//!
//! `--inflate-log` prints each stream's samples as the text lines of the log. The layout is
//! the one the compatibility level writes, or, when a stream does not read as that one
//! (every record's direction and flags checked, the newest layout's unused second value 0,
//! the stream a whole number of records), the other: flexio inflates both fio 3.33's files
//! and the newest fio's.

use flexio_output::logs::{hist_line, sample_line_ext};
use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};

pub const OFFSET_BIT: u32 = 0x8000_0000;
pub const PRIO_BIT: u32 = 0x4000_0000;
/// The newest fio's: a second value (`log_window_value=both`).
pub const AVG_MAX_BIT: u32 = 0x2000_0000;
/// The newest fio's: an issue-time column (`log_issue_time`).
pub const ISSUE_TIME_BIT: u32 = 0x1000_0000;
/// flexio's: a histogram-log record.
pub const HIST_BIT: u32 = 0x0800_0000;
const FLAG_BITS: u32 = OFFSET_BIT | PRIO_BIT | AVG_MAX_BIT | ISSUE_TIME_BIT | HIST_BIT;
/// fio's histogram bins (FIO_IO_U_PLAT_NR): no record holds more.
const MAX_BINS: u64 = 1856;

/// Which fio's binary layout samples take.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Layout {
    /// fio 3.33's 32/40-byte records.
    Fio333,
    /// The newest fio's records: two values, offset and issue time after the block size.
    #[default]
    Newest,
}

impl Layout {
    /// The layout of a compatibility level.
    pub fn of(compat: flexio_job::Compat) -> Layout {
        if compat.is_fio333() {
            Layout::Fio333
        } else {
            Layout::Newest
        }
    }

    /// The layout a result's logs were written in, from the result's producer (`fio
    /// version`): fio 3.33's records for fio 3.33 (and flexio under `--compat=3.33`, which
    /// names itself so), the newest fio's otherwise.
    pub fn of_producer(producer: &str) -> Layout {
        if producer.starts_with("fio-3.33") {
            Layout::Fio333
        } else {
            Layout::Newest
        }
    }

    fn other(self) -> Layout {
        match self {
            Layout::Fio333 => Layout::Newest,
            Layout::Newest => Layout::Fio333,
        }
    }
}

/// The columns a log's lines carry (the same for every sample of a log).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Columns {
    /// `log_offset`.
    pub offset: bool,
    /// `log_prio`: the raw priority instead of 0/1.
    pub prio_raw: bool,
    /// `log_window_value=both`: a second value (the newest layout only).
    pub both: bool,
    /// `log_issue_time`: the issue time (the newest layout only).
    pub issue: bool,
}

/// One sample.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rec {
    pub time_ms: u64,
    pub value: u64,
    pub value1: u64,
    pub ddir: u8,
    pub bs: u64,
    pub offset: u64,
    pub prio: u16,
    pub issue_ns: u64,
}

/// Size of one record.
pub fn record_size(layout: Layout, c: Columns) -> usize {
    match layout {
        Layout::Fio333 => 32 + 8 * usize::from(c.offset),
        Layout::Newest => 40 + 8 * usize::from(c.offset) + 8 * usize::from(c.issue),
    }
}

fn flag_word(layout: Layout, c: Columns, ddir: u8) -> u32 {
    let mut d = ddir as u32;
    if c.offset {
        d |= OFFSET_BIT;
    }
    if c.prio_raw {
        d |= PRIO_BIT;
    }
    if layout == Layout::Newest {
        if c.both {
            d |= AVG_MAX_BIT;
        }
        if c.issue {
            d |= ISSUE_TIME_BIT;
        }
    }
    d
}

/// Append one sample in `layout` (fio 3.33's has no second value and no issue time: the
/// options that add them are the newest fio's).
pub fn encode(out: &mut Vec<u8>, layout: Layout, c: Columns, r: &Rec) {
    out.extend_from_slice(&r.time_ms.to_le_bytes());
    out.extend_from_slice(&r.value.to_le_bytes());
    if layout == Layout::Newest {
        out.extend_from_slice(&r.value1.to_le_bytes());
    }
    out.extend_from_slice(&flag_word(layout, c, r.ddir).to_le_bytes());
    out.extend_from_slice(&r.prio.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&r.bs.to_le_bytes());
    if c.offset {
        out.extend_from_slice(&r.offset.to_le_bytes());
    }
    if layout == Layout::Newest && c.issue {
        out.extend_from_slice(&r.issue_ns.to_le_bytes());
    }
}

/// Append one histogram-log line (flexio's record).
pub fn encode_hist(out: &mut Vec<u8>, time_ms: u64, ddir: u8, bs: u64, bins: &[u64]) {
    out.extend_from_slice(&time_ms.to_le_bytes());
    out.extend_from_slice(&(bins.len() as u64).to_le_bytes());
    out.extend_from_slice(&0u64.to_le_bytes());
    out.extend_from_slice(&(ddir as u32 | HIST_BIT).to_le_bytes());
    out.extend_from_slice(&[0, 0, 0, 0]);
    out.extend_from_slice(&bs.to_le_bytes());
    for b in bins {
        out.extend_from_slice(&b.to_le_bytes());
    }
}

/// One zlib stream of `raw` (zlib's default level, as fio).
pub fn deflate(raw: &[u8]) -> Vec<u8> {
    miniz_oxide::deflate::compress_to_vec_zlib(raw, 6)
}

/// Inflate one zlib stream from the start of `data`: (its bytes, input consumed).
fn inflate_one(data: &[u8]) -> Result<(Vec<u8>, usize), String> {
    let mut st = InflateState::new_boxed(DataFormat::Zlib);
    let mut out = Vec::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut at = 0;
    loop {
        let r = inflate(&mut st, &data[at..], &mut buf, MZFlush::None);
        at += r.bytes_consumed;
        out.extend_from_slice(&buf[..r.bytes_written]);
        match r.status {
            Ok(MZStatus::StreamEnd) => return Ok((out, at)),
            Ok(_) => {
                if r.bytes_consumed == 0 && r.bytes_written == 0 {
                    return Err(format!("truncated zlib stream at byte {at}"));
                }
            }
            Err(MZError::Buf) if at >= data.len() => {
                return Err(format!("truncated zlib stream at byte {at}"));
            }
            Err(e) => return Err(format!("failed inflating log: {e:?} at byte {at}")),
        }
    }
}

fn u64_at(b: &[u8], i: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[i..i + 8]);
    u64::from_le_bytes(a)
}

fn u32_at(b: &[u8], i: usize) -> u32 {
    u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Where the direction word sits.
fn word_at(layout: Layout) -> usize {
    match layout {
        Layout::Fio333 => 16,
        Layout::Newest => 24,
    }
}

/// The text of a stream of histogram records; `None` if it is not one.
fn hist_text(raw: &[u8]) -> Option<String> {
    let mut out = String::new();
    let mut at = 0;
    let mut bins = Vec::new();
    while at < raw.len() {
        let r = raw.get(at..at + 40)?;
        let word = u32_at(r, 24);
        let n = u64_at(r, 8);
        if word & FLAG_BITS != HIST_BIT || word & !FLAG_BITS > 2 || n > MAX_BINS {
            return None;
        }
        let end = at + 40 + 8 * n as usize;
        let counts = raw.get(at + 40..end)?;
        bins.clear();
        bins.extend(counts.chunks_exact(8).map(|c| u64_at(c, 0)));
        hist_line(
            &mut out,
            u64_at(r, 0),
            (word & !FLAG_BITS) as usize,
            u64_at(r, 32),
            &bins,
        );
        at = end;
    }
    Some(out)
}

/// The text of one stream's samples read as `layout` (fio's `flush_samples`); with `strict`,
/// `None` unless every record reads as that layout.
fn samples_text(raw: &[u8], layout: Layout, strict: bool) -> Option<String> {
    let wat = word_at(layout);
    let first = u32_at(raw.get(..wat + 4)?, wat);
    let allowed = match layout {
        Layout::Fio333 => OFFSET_BIT | PRIO_BIT,
        Layout::Newest => OFFSET_BIT | PRIO_BIT | AVG_MAX_BIT | ISSUE_TIME_BIT,
    };
    let c = Columns {
        offset: first & OFFSET_BIT != 0,
        prio_raw: first & PRIO_BIT != 0,
        both: layout == Layout::Newest && first & AVG_MAX_BIT != 0,
        issue: layout == Layout::Newest && first & ISSUE_TIME_BIT != 0,
    };
    let size = record_size(layout, c);
    if strict && (raw.len() % size != 0 || first & FLAG_BITS & !allowed != 0) {
        return None;
    }
    let mut out = String::with_capacity(raw.len());
    for s in raw.chunks_exact(size) {
        let word = u32_at(s, wat);
        let ddir = word
            & !(match layout {
                Layout::Fio333 => OFFSET_BIT | PRIO_BIT,
                Layout::Newest => FLAG_BITS,
            });
        // (Without a second value the newest fio's records hold 0 there.)
        if strict
            && (word & FLAG_BITS != first & FLAG_BITS
                || ddir > 2
                || (layout == Layout::Newest && !c.both && u64_at(s, 16) != 0))
        {
            return None;
        }
        let prio = u16::from_le_bytes([s[wat + 4], s[wat + 5]]);
        let (value1, bs_at) = match layout {
            Layout::Fio333 => (None, 24),
            Layout::Newest => (c.both.then(|| u64_at(s, 16)), 32),
        };
        let offset = c.offset.then(|| u64_at(s, bs_at + 8));
        let issue = c
            .issue
            .then(|| u64_at(s, bs_at + 8 + 8 * usize::from(c.offset)));
        sample_line_ext(
            &mut out,
            u64_at(s, 0),
            (u64_at(s, 8), value1),
            ddir.min(u8::MAX as u32) as u8,
            u64_at(s, bs_at),
            offset,
            (prio, c.prio_raw),
            issue,
        );
    }
    Some(out)
}

/// The text lines of one stream's records, read as `prefer` or else as the other layout
/// (histogram records in either).
pub fn text_of(raw: &[u8], prefer: Layout, out: &mut String) -> Result<(), String> {
    if raw.is_empty() {
        return Ok(());
    }
    if raw.len() >= 40 && u32_at(raw, 24) & HIST_BIT != 0 {
        if let Some(t) = hist_text(raw) {
            out.push_str(&t);
            return Ok(());
        }
    }
    for (layout, strict) in [(prefer, true), (prefer.other(), true), (prefer, false)] {
        if let Some(t) = samples_text(raw, layout, strict) {
            out.push_str(&t);
            return Ok(());
        }
    }
    Err(format!("{} bytes are not a log sample", raw.len()))
}

/// `--inflate-log`: the text of a `.log.fz` file, its samples read as `prefer` where they
/// can be (see the module's documentation).
pub fn inflate_file(path: &std::path::Path, prefer: Layout) -> Result<String, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    let mut at = 0;
    while at < data.len() {
        let (raw, used) = inflate_one(&data[at..])?;
        text_of(&raw, prefer, &mut text)?;
        at += used;
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(time_ms: u64, value: u64, ddir: u8, bs: u64, offset: u64, prio: u16) -> Rec {
        Rec {
            time_ms,
            value,
            ddir,
            bs,
            offset,
            prio,
            ..Rec::default()
        }
    }

    #[test]
    fn fio333_samples_round_trip_through_streams() {
        let l = Layout::Fio333;
        let off = Columns {
            offset: true,
            ..Columns::default()
        };
        let mut a = Vec::new();
        encode(&mut a, l, off, &rec(0, 247823, 0, 4096, 0, 0));
        encode(&mut a, l, off, &rec(1, 43391, 1, 4096, 4096, 0x2001));
        assert_eq!(a.len(), 80);
        // fio 3.33's bytes for the first sample.
        assert_eq!(
            &a[..40],
            &[
                0, 0, 0, 0, 0, 0, 0, 0, 0x0f, 0xc8, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0x80, 0, 0, 0, 0, 0,
                0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
            ]
        );
        let mut b = Vec::new();
        let raw = Columns {
            prio_raw: true,
            ..Columns::default()
        };
        encode(&mut b, l, raw, &rec(7, 99, 2, 512, 0, 0x4003));
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.log.fz");
        let mut file = deflate(&a);
        file.extend(deflate(&b));
        std::fs::write(&p, &file).unwrap();
        let want = "0, 247823, 0, 4096, 0, 0\n1, 43391, 1, 4096, 4096, 1\n7, 99, 2, 512, 0x4003\n";
        // Whichever layout is preferred, fio 3.33's records read as fio 3.33's.
        assert_eq!(inflate_file(&p, Layout::Fio333).unwrap(), want);
        assert_eq!(inflate_file(&p, Layout::Newest).unwrap(), want);
        std::fs::write(&p, &file[..file.len() - 3]).unwrap();
        assert!(inflate_file(&p, Layout::Fio333).is_err());
    }

    #[test]
    fn newest_records_carry_both_values_and_the_issue_time() {
        let l = Layout::Newest;
        let all = Columns {
            offset: true,
            prio_raw: true,
            both: true,
            issue: true,
        };
        let mut a = Vec::new();
        let r = Rec {
            value1: 62938,
            issue_ns: 102373,
            ..rec(500, 54, 0, 4096, 61440, 0x2001)
        };
        encode(&mut a, l, all, &r);
        assert_eq!(a.len(), 56);
        assert_eq!(record_size(l, all), 56);
        assert_eq!(
            u32_at(&a, 24),
            OFFSET_BIT | PRIO_BIT | AVG_MAX_BIT | ISSUE_TIME_BIT
        );
        let mut t = String::new();
        text_of(&a, l, &mut t).unwrap();
        assert_eq!(t, "500, 54, 62938, 0, 4096, 61440, 0x2001, 102373\n");
        // Read preferring fio 3.33's layout: not one, so the newest.
        let mut t2 = String::new();
        text_of(&a, Layout::Fio333, &mut t2).unwrap();
        assert_eq!(t2, t);
        // Plain records: 40 bytes, no flag.
        let mut b = Vec::new();
        for i in 0..5 {
            encode(&mut b, l, Columns::default(), &rec(i, 1, 1, 4096, 0, 0));
        }
        assert_eq!(b.len(), 200);
        for prefer in [Layout::Newest, Layout::Fio333] {
            let mut t = String::new();
            text_of(&b, prefer, &mut t).unwrap();
            assert_eq!(t.lines().count(), 5, "{prefer:?}: {t}");
            assert_eq!(t.lines().nth(4), Some("4, 1, 1, 4096, 0"));
        }
    }

    #[test]
    fn histogram_records_give_the_histogram_lines() {
        let mut a = Vec::new();
        encode_hist(&mut a, 120, 0, 4096, &[1, 0, 2]);
        encode_hist(&mut a, 240, 1, 512, &[0, 5, 0]);
        let mut t = String::new();
        text_of(&a, Layout::Fio333, &mut t).unwrap();
        assert_eq!(t, "120, 0, 4096, 1, 0, 2\n240, 1, 512, 0, 5, 0\n");
        // A record cut short is not a histogram record.
        assert!(hist_text(&a[..a.len() - 8]).is_none());
    }
}
