//! Mismatch reports: fio's lines, then what flexio can tell about the block: the header
//! found and the header expected, the first differing byte with its neighbourhood, and
//! one classification:
//!
//! * **stale**: a complete, consistent earlier write of this block (its header names
//!   this offset and an older write); the last write never reached the media;
//! * **torn**: the block is part one write, part another (the tear is reported, on a
//!   512-byte boundary when the bytes allow);
//! * **foreign**: a consistent header of another offset or another job/thread;
//! * **other generation**: a consistent header of the other fio generation's format;
//! * **corrupt**: anything else (a damaged byte, data nobody wrote).
//!
//! The data of a write is rebuilt from its seed (flexio's generator or fio's, whichever
//! explains the bytes read: blocks fio wrote are rebuilt too) or its pattern; a
//! header damaged in one byte is repaired through its crc to recover the write it names
//! and its time stamp. Data that cannot be rebuilt (another program's generator) is
//! reported from the headers alone. Only failures come here: allocation is fine.

use super::fill::Data;
use super::format::{Expect, Format, Place, Stamp, WriteRef};
use super::header::{Generation, Header, MAGIC, VERSION};
use super::kind::Kind;
use super::sum;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Stale,
    Torn,
    Foreign,
    Corrupt,
    OtherGeneration,
}

impl Class {
    pub fn name(self) -> &'static str {
        match self {
            Class::Stale => "stale",
            Class::Torn => "torn",
            Class::Foreign => "foreign",
            Class::Corrupt => "corrupt",
            Class::OtherGeneration => "other generation",
        }
    }
}

/// The first byte that differs from what was written, with 16 bytes either side.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FirstBad {
    /// File offset of the byte.
    pub offset: u64,
    pub found: u8,
    pub expected: u8,
    /// File offset of the first context byte.
    pub ctx_start: u64,
    pub found_ctx: Vec<u8>,
    pub expected_ctx: Vec<u8>,
}

/// One failed check.
#[derive(Clone, Debug)]
pub struct Mismatch {
    pub file: String,
    /// File offset and length of the failing header interval.
    pub offset: u64,
    pub len: u64,
    /// The block that was read.
    pub block_offset: u64,
    pub block_len: u64,
    /// fio's message lines, as fio prints them.
    pub fio_lines: Vec<String>,
    /// The header found in the interval (moved back from `verify_offset`), if any.
    pub found: Option<Header>,
    /// The header flexio expected there, when the write is known.
    pub expected: Option<Header>,
    pub first_bad: Option<FirstBad>,
    pub class: Class,
    /// One sentence on why the block is classified so.
    pub why: String,
    /// File offset where a torn block switches from one write to the other.
    pub tear: Option<u64>,
    /// The interval as it was written (bytes as on the media), when it can be rebuilt.
    pub expected_data: Option<Vec<u8>>,
}

pub fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn show(h: &Header, gen: Generation) -> String {
    let v = match gen {
        Generation::Latest => format!("version={:x} ", h.version),
        Generation::Fio333 => String::new(),
    };
    format!(
        "magic={:x} {v}type={} len={} offset={} seed={} numberio={} thread={} time={}.{:09}",
        h.magic,
        h.kind,
        h.len,
        h.offset,
        h.rand_seed,
        h.numberio,
        h.thread,
        h.time_sec,
        h.time_nsec
    )
}

impl Mismatch {
    /// fio's lines, then flexio's (each marked `flexio:`).
    pub fn lines(&self, gen: Generation) -> Vec<String> {
        let mut l = self.fio_lines.clone();
        if let Some(h) = &self.found {
            l.push(format!("flexio: found header:    {}", show(h, gen)));
        }
        if let Some(h) = &self.expected {
            l.push(format!("flexio: expected header: {}", show(h, gen)));
        }
        if let Some(b) = &self.first_bad {
            l.push(format!(
                "flexio: first bad byte at offset {} (block offset +{}): received {:02x}, expected {:02x}",
                b.offset,
                b.offset - self.block_offset,
                b.found,
                b.expected
            ));
            let mark = |v: &[u8]| -> String {
                v.iter()
                    .enumerate()
                    .map(|(k, x)| {
                        if b.ctx_start + k as u64 == b.offset {
                            format!("[{x:02x}]")
                        } else {
                            format!("{x:02x}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            l.push(format!(
                "flexio:   {:>12} received: {}",
                b.ctx_start,
                mark(&b.found_ctx)
            ));
            l.push(format!(
                "flexio:   {:>12} expected: {}",
                b.ctx_start,
                mark(&b.expected_ctx)
            ));
        }
        l.push(format!(
            "flexio: classification: {}: {}",
            self.class.name(),
            self.why
        ));
        l
    }
}

/// The logical view (header moved back) of interval `i` of a block as read.
fn logical(fmt: &Format, block: &[u8], i: usize, step: usize) -> Vec<u8> {
    let mut v = block[i * step..(i + 1) * step].to_vec();
    fmt.swap(&mut v);
    v
}

/// A header damaged in one byte, or in its crc alone, repaired through the crc: the
/// header whose magic, version, length and offset also fit this interval.
pub fn repair(gen: Generation, c: &[u8], at: u64, step: usize) -> Option<Header> {
    let hl = gen.header_len();
    if c.len() < hl {
        return None;
    }
    let fits = |h: &Header| {
        h.magic == MAGIC
            && (gen == Generation::Fio333 || h.version == VERSION)
            && h.len as usize == step
            && h.offset == at
    };
    let ca = gen.crc_at();
    let mut b = c[..hl].to_vec();
    let stored = u32::from_ne_bytes([b[ca], b[ca + 1], b[ca + 2], b[ca + 3]]);
    for p in 0..ca {
        let orig = b[p];
        for v in 0..=255u8 {
            if v == orig {
                continue;
            }
            b[p] = v;
            if sum::crc32c(&b[..ca]) == stored {
                if let Some(h) = Header::decode(gen, &b).filter(fits) {
                    return Some(h);
                }
            }
        }
        b[p] = orig;
    }
    // No one-byte repair of the fields: the crc itself may be what is damaged.
    let mut h = Header::decode(gen, &b).filter(fits)?;
    h.crc32 = sum::crc32c(&b[..ca]);
    Some(h)
}

/// Whether `older` precedes `newer` as write sequence numbers of the generation.
fn precedes(gen: Generation, older: u64, newer: u64) -> bool {
    match gen {
        Generation::Latest => older < newer,
        Generation::Fio333 => {
            let d = (newer as u16).wrapping_sub(older as u16);
            d != 0 && d < 0x8000
        }
    }
}

fn same_write(fmt: &Format, h: &Header, w: &WriteRef) -> bool {
    let n = match fmt.gen {
        Generation::Fio333 => w.numberio as u16 as u64,
        Generation::Latest => w.numberio,
    };
    h.numberio == n && h.rand_seed == fmt.header_seed(w.seed)
}

/// A write's bytes over the block `[offset, offset+len)`, with the range it covers. The
/// data comes from flexio's generator or fio's, whichever explains more of `block` (the
/// bytes as read): a block fio wrote is rebuilt as fio wrote it.
fn rebuild(
    fmt: &Format,
    w: &WriteRef,
    st: Stamp,
    offset: u64,
    block: &[u8],
) -> (Vec<u8>, usize, usize) {
    let len = block.len();
    let lo = w.offset.max(offset);
    let hi = (w.offset + w.len).min(offset + len as u64);
    if hi <= lo {
        return (vec![0u8; len], 0, 0);
    }
    let (a, b) = ((lo - offset) as usize, (hi - offset) as usize);
    let build = |data: Data| {
        let full = fmt.regenerate_with(w.len as usize, w.offset, st, data);
        let mut out = vec![0u8; len];
        out[a..b].copy_from_slice(&full[(lo - w.offset) as usize..(hi - w.offset) as usize]);
        out
    };
    let ours = build(Data::Flexio);
    if fmt.pattern.is_some() {
        return (ours, a, b);
    }
    let same = |o: &[u8]| (a..b).filter(|&x| o[x] == block[x]).count();
    let fios = build(Data::Fio);
    if same(&fios) > same(&ours) {
        (fios, a, b)
    } else {
        (ours, a, b)
    }
}

struct Rebuilt {
    bytes: Vec<u8>,
    lo: usize,
    hi: usize,
}

impl Rebuilt {
    fn at(&self, x: usize) -> Option<u8> {
        (self.lo..self.hi).contains(&x).then(|| self.bytes[x])
    }
}

/// Torn or corrupt, from the block's bytes against the write `a` (whose bytes come first)
/// and another write `b`.
fn torn_or_corrupt(
    block: &[u8],
    iv: (usize, usize),
    a: &Rebuilt,
    b: Option<&Rebuilt>,
) -> (Class, Option<usize>, bool) {
    let ma = |x: usize| a.at(x) == Some(block[x]);
    let mb = |x: usize| b.and_then(|r| r.at(x)) == Some(block[x]);
    // Rebuilt data must explain most of the failing interval, or it is not ours.
    let explained = (iv.0..iv.1).filter(|&x| ma(x) || mb(x)).count();
    let rebuilt = explained * 2 >= iv.1 - iv.0;
    if b.is_some() && rebuilt {
        let all = (0..block.len()).all(|x| ma(x) || mb(x));
        let only_b = (0..block.len()).filter(|&x| mb(x) && !ma(x)).count();
        let only_a = (0..block.len()).filter(|&x| ma(x) && !mb(x)).count();
        if all && only_b >= 8 && only_a >= 8 {
            // Between the last byte `b` cannot explain and the first `a` cannot.
            let first_not_a = (0..block.len()).find(|&x| !ma(x)).unwrap_or(0);
            let last_not_b = (0..block.len())
                .rev()
                .find(|&x| !mb(x))
                .map_or(0, |x| x + 1);
            let (lo, hi) = (last_not_b.min(first_not_a), first_not_a.max(last_not_b));
            let sector = lo.div_ceil(512) * 512;
            let tear = if sector <= hi { sector } else { first_not_a };
            return (Class::Torn, Some(tear), true);
        }
    }
    (Class::Corrupt, None, rebuilt)
}

/// A write as a header names it: (numberio, seed, time).
type Id = (u64, u64, (u32, u32));

/// The report for interval `i` of the block as read (`block`: bytes as on the media).
pub fn analyse(
    fmt: &Format,
    block: &[u8],
    offset: u64,
    i: usize,
    fio_lines: Vec<String>,
    exp: &Expect,
    place: &Place,
) -> Mismatch {
    let len = block.len();
    let step = fmt.interval_for(len as u64) as usize;
    let at = offset + (i * step) as u64;
    let gen = fmt.gen;
    let lc = logical(fmt, block, i, step);
    let has_hdr = fmt.kind.has_header();
    let mut m = Mismatch {
        file: place.file.to_string(),
        offset: at,
        len: step as u64,
        block_offset: offset,
        block_len: len as u64,
        fio_lines,
        found: None,
        expected: None,
        first_bad: None,
        class: Class::Corrupt,
        why: String::new(),
        tear: None,
        expected_data: None,
    };
    let intact = has_hdr && Header::intact(gen, &lc);
    if has_hdr {
        m.found = Header::decode(gen, &lc);
    }
    // A consistent header of the other generation.
    if has_hdr && !intact {
        let other = Format {
            gen: gen.other(),
            ..fmt.clone()
        };
        let mut oc = block[i * step..(i + 1) * step].to_vec();
        other.swap(&mut oc);
        if Header::intact(gen.other(), &oc) || Header::intact(gen.other(), &block[i * step..]) {
            m.found = Header::decode(gen.other(), &oc);
            m.class = Class::OtherGeneration;
            m.why = format!(
                "the header was written by {}; this job reads {} (the format switch: --compat=3.33 for fio 3.33's)",
                gen.other().writer(),
                match gen {
                    Generation::Fio333 => "fio 3.33's format",
                    Generation::Latest => "the newest format",
                }
            );
            return m;
        }
    }
    let hdr = if intact {
        m.found
    } else if has_hdr {
        repair(gen, &lc, at, step)
    } else {
        None
    };
    let block_write = |w: Option<&WriteRef>| WriteRef {
        offset,
        len: len as u64,
        ..w.copied().unwrap_or_default()
    };
    let stamp_of = |h: &Header| Stamp {
        seed: h.rand_seed,
        numberio: h.numberio,
        time: (h.time_sec, h.time_nsec),
    };
    // The write the log expects, stamped with the header's time when the header is it.
    let last: Option<(WriteRef, Stamp)> = match (exp.last, hdr) {
        (Some(w), Some(h)) if same_write(fmt, &h, &w) => Some((
            block_write(Some(&w)),
            Stamp {
                seed: w.seed,
                numberio: w.numberio,
                time: (h.time_sec, h.time_nsec),
            },
        )),
        (Some(w), _) => Some((
            block_write(Some(&w)),
            Stamp {
                seed: w.seed,
                numberio: w.numberio,
                time: (0, 0),
            },
        )),
        (None, Some(h)) => Some((
            WriteRef {
                offset,
                len: len as u64,
                seed: h.rand_seed,
                numberio: h.numberio,
            },
            stamp_of(&h),
        )),
        (None, None) if !has_hdr => Some((block_write(None), Stamp::default())),
        (None, None) => None,
    };
    if let Some((w, st)) = &last {
        let mut e = vec![0u8; gen.header_len().max(64)];
        let h = Header {
            kind: fmt.kind.code(),
            len: step as u32,
            rand_seed: fmt.header_seed(w.seed),
            offset: at,
            time_sec: st.time.0,
            time_nsec: st.time.1,
            thread: fmt.thread,
            numberio: st.numberio,
            ..Header::default()
        };
        if has_hdr {
            h.encode(gen, &mut e);
            m.expected = Header::decode(gen, &e);
        }
    }
    // Foreign: a consistent header of another place or another job.
    if let Some(h) = hdr.filter(|_| intact) {
        if h.offset != at || h.thread != fmt.thread {
            m.class = Class::Foreign;
            m.why = if h.offset != at {
                format!(
                    "a consistent header of offset {} (thread {}, write #{}): data of another place",
                    h.offset, h.thread, h.numberio
                )
            } else {
                format!(
                    "a consistent header of thread {} (write #{}), not this job's thread {}",
                    h.thread, h.numberio, fmt.thread
                )
            };
            return m;
        }
    }
    let iv = (i * step, (i + 1) * step);
    // Consistent headers of this block's intervals: (numberio, seed, time).
    let ids: Vec<Option<Id>> = (0..len / step.max(1))
        .map(|j| {
            let c = logical(fmt, block, j, step);
            let at_j = offset + (j * step) as u64;
            Header::decode(gen, &c)
                .filter(|h| has_hdr && Header::intact(gen, &c) && h.offset == at_j)
                .map(|h| (h.numberio, h.rand_seed, (h.time_sec, h.time_nsec)))
        })
        .collect();
    // A write's time stamp, from a consistent header of it in this block.
    let time_of = |w: &WriteRef| {
        ids.iter()
            .flatten()
            .find(|id| {
                let h = Header {
                    numberio: id.0,
                    rand_seed: id.1,
                    ..Header::default()
                };
                same_write(fmt, &h, w)
            })
            .map_or((0, 0), |id| id.2)
    };
    let rb = |w: &WriteRef, st: Stamp| {
        let (bytes, lo, hi) = rebuild(fmt, w, st, offset, block);
        Rebuilt { bytes, lo, hi }
    };
    // Torn across intervals: consistent headers of two different writes in one block.
    let first = ids.iter().flatten().next().copied();
    if let Some(j) = ids
        .iter()
        .position(|id| id.is_some() && id.map(|x| (x.0, x.1)) != first.map(|x| (x.0, x.1)))
    {
        let (f, o) = (first.unwrap_or_default(), ids[j].unwrap_or_default());
        let w = |id: Id| {
            let wr = WriteRef {
                offset,
                len: len as u64,
                seed: id.1,
                numberio: id.0,
            };
            rb(
                &wr,
                Stamp {
                    seed: id.1,
                    numberio: id.0,
                    time: id.2,
                },
            )
        };
        let (a, b) = (w(f), w(o));
        let (class, tear, _) = torn_or_corrupt(block, (0, len), &a, Some(&b));
        let tear = match (class, tear) {
            (Class::Torn, Some(t)) => t,
            _ => j * step,
        };
        m.class = Class::Torn;
        m.tear = Some(offset + tear as u64);
        m.why = format!(
            "header intervals of two writes: #{} up to offset {}, #{} from there",
            f.0,
            offset + tear as u64,
            o.0
        );
        return m;
    }
    // The header names another write of this block.
    if let (Some(h), Some(lw)) = (hdr, exp.last.as_ref()) {
        if intact && !same_write(fmt, &h, lw) {
            let hw = WriteRef {
                offset,
                len: len as u64,
                seed: h.rand_seed,
                numberio: h.numberio,
            };
            let a = rb(&hw, stamp_of(&h));
            let hs = fmt.hdr_size();
            // Every interval consistent with its own header: a whole earlier write.
            let consistent = (0..len / step).all(|j| {
                let c = logical(fmt, block, j, step);
                let Some(hj) = Header::decode(gen, &c).filter(|_| Header::intact(gen, &c)) else {
                    return false;
                };
                match fmt.kind {
                    k if k.has_checksum() => {
                        let mut s = [0u8; 128];
                        let media = Kind::from_code(hj.kind).unwrap_or(k);
                        let start = (gen.header_len() + media.csum_len()).min(c.len());
                        sum::matches(gen, k, &c[start..], &c[gen.header_len()..], &mut s)
                    }
                    _ => fmt.pattern.as_ref().map_or(true, |p| {
                        let pi = match gen {
                            Generation::Fio333 => 0,
                            Generation::Latest => fmt.pattern_interval,
                        };
                        let x0 = (j * step + hs) as u64;
                        super::fill::pattern_mismatch(&c[hs..], x0, p, offset, pi).is_none()
                    }),
                }
            });
            if consistent {
                if precedes(gen, h.numberio, lw.numberio) {
                    m.class = Class::Stale;
                    m.why = format!(
                        "a complete earlier write (#{}) of this block; the last write (#{}) is not on the media",
                        h.numberio, lw.numberio
                    );
                } else {
                    m.class = Class::Foreign;
                    m.why = format!(
                        "a consistent write (#{}) that is not the last one this job logged here (#{})",
                        h.numberio, lw.numberio
                    );
                }
                return m;
            }
            let Some((lw2, mut lst)) = last else {
                return m;
            };
            if lst.time == (0, 0) {
                lst.time = time_of(&lw2);
            }
            let b = rb(&lw2, lst);
            return finish(
                m,
                block,
                iv,
                &a,
                Some(&b),
                "the header's write",
                "the last write",
            );
        }
    }
    let Some((lw, mut lst)) = last else {
        m.why = "no readable header and no log entry: nothing to compare the bytes with".into();
        return m;
    };
    if lst.time == (0, 0) {
        lst.time = time_of(&lw);
    }
    let a = rb(&lw, lst);
    let prev = exp.prev.map(|p| {
        rb(
            &p,
            Stamp {
                seed: p.seed,
                numberio: p.numberio,
                time: time_of(&p),
            },
        )
    });
    finish(
        m,
        block,
        iv,
        &a,
        prev.as_ref(),
        "the last write",
        "the write before it",
    )
}

fn finish(
    mut m: Mismatch,
    block: &[u8],
    iv: (usize, usize),
    a: &Rebuilt,
    b: Option<&Rebuilt>,
    a_name: &str,
    b_name: &str,
) -> Mismatch {
    let (class, tear, rebuilt) = torn_or_corrupt(block, iv, a, b);
    if rebuilt {
        m.expected_data = Some(a.bytes[iv.0..iv.1].to_vec());
    }
    m.class = class;
    if let Some(t) = tear {
        m.tear = Some(m.block_offset + t as u64);
        m.why = format!(
            "bytes before offset {} are {a_name}'s, from there {b_name}'s",
            m.block_offset + t as u64
        );
        return m;
    }
    if !rebuilt {
        m.why =
            "the data cannot be rebuilt (neither flexio's generator nor fio's): damaged bytes cannot be located"
                .into();
        return m;
    }
    let Some(x) = (iv.0..iv.1).find(|&x| a.at(x) != Some(block[x])) else {
        m.why = "the bytes equal the rebuilt write: the checksum field itself disagrees".into();
        return m;
    };
    let (lo, hi) = (x.saturating_sub(16), (x + 17).min(block.len()));
    let o = m.block_offset;
    m.first_bad = Some(FirstBad {
        offset: o + x as u64,
        found: block[x],
        expected: a.bytes[x],
        ctx_start: o + lo as u64,
        found_ctx: block[lo..hi].to_vec(),
        expected_ctx: a.bytes[lo..hi].to_vec(),
    });
    let bad = (iv.0..iv.1).filter(|&y| a.at(y) != Some(block[y])).count();
    m.why = format!(
        "{bad} byte(s) of this interval differ from {a_name}, which no other write explains"
    );
    m
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
