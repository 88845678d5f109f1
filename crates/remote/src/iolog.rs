//! `IOLOG` (§4.17): a finished log's samples, plain or zlib-compressed (§2.5), with fio
//! 3.33's quirks: the record size comes from bit 31 of the first sample's ddir field, and
//! a compressed stream may lack its last block and Adler-32 trailer.

use crate::bytes::{Reader, Writer};
use crate::error::{Error, Result};
use crate::frame::{encode_parts, Opcode};
use crate::msg::Payload;
use crate::ts::{Plat, PLAT_NR};
use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};

/// Size of the IOLOG header.
pub const HEADER_LEN: usize = 288;
/// Bytes of a sample record without / with its offset.
pub const SAMPLE_LEN: usize = 32;
pub const SAMPLE_OFFSET_LEN: usize = 40;
/// Bytes of a hist-log entry after each record (16 meaningless bytes, 1856 u64).
pub const HIST_ENTRY_LEN: usize = 16 + PLAT_NR * 8;
/// ddir flag bits.
pub const DDIR_OFFSET_FLAG: u32 = 0x8000_0000;
pub const DDIR_PRIO_FLAG: u32 = 0x4000_0000;
/// `compressed` values.
pub const PLAIN: u32 = 0;
pub const XMIT_COMPRESSED: u32 = 1;
pub const STORE_COMPRESSED: u32 = 2;
/// Log types.
pub const LOG_LAT: u32 = 1;
pub const LOG_CLAT: u32 = 2;
pub const LOG_SLAT: u32 = 3;
pub const LOG_BW: u32 = 4;
pub const LOG_IOPS: u32 = 5;
pub const LOG_HIST: u32 = 6;
/// Largest inflated log accepted.
pub const MAX_INFLATED: usize = 2048 << 20;

/// One sample.
#[derive(Clone, Debug, PartialEq)]
pub struct IoSample {
    /// ms since job start (or epoch ms with log_unix_epoch).
    pub time: u64,
    /// Latency ns, bw KiB/s or IOPS (meaningless for hist logs).
    pub value: u64,
    /// Direction (flag bits removed): 0 read, 1 write, 2 trim, 3 sync.
    pub ddir: u32,
    /// The priority field holds a logged priority (bit 30).
    pub prio_logged: bool,
    pub priority: u16,
    pub bs: u64,
    /// Present when bit 31 of the ddir field is set.
    pub offset: Option<u64>,
    /// Hist logs: the bucket counts since the previous sample.
    pub hist: Option<Box<Plat>>,
}

/// An IOLOG message.
#[derive(Clone, Debug, PartialEq)]
pub struct IoLog {
    /// As announced in the header (0 for store-compressed logs).
    pub nr_samples: u64,
    pub thread_number: u32,
    pub log_type: u32,
    pub compressed: u32,
    pub log_offset: u32,
    pub log_prio: u32,
    pub hist_coarseness: u32,
    /// The log file name, e.g. `bwlog_bw.1.log`.
    pub name: String,
    pub samples: Vec<IoSample>,
    /// The data ended inside a record, the zlib stream lacked its end (fio 3.33's usual
    /// quirk) or fewer samples than announced arrived: `samples` holds the whole records
    /// that did.
    pub incomplete: bool,
}

/// Inflate one zlib stream (or, with `multi`, consecutive streams) accepting a missing
/// end. Returns the output and whether every stream ended properly.
fn inflate_all(mut data: &[u8], limit: usize, multi: bool) -> Result<(Vec<u8>, bool)> {
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut complete = true;
    while !data.is_empty() {
        let mut st = InflateState::new_boxed(DataFormat::Zlib);
        let mut ended = false;
        loop {
            let r = inflate(&mut st, data, &mut buf, MZFlush::None);
            data = &data[r.bytes_consumed..];
            out.extend_from_slice(&buf[..r.bytes_written]);
            if out.len() > limit {
                return Err(Error::MessageTooLarge {
                    len: out.len() as u64,
                    limit: limit as u64,
                });
            }
            match r.status {
                Ok(MZStatus::StreamEnd) => {
                    ended = true;
                    break;
                }
                Ok(_) if r.bytes_consumed > 0 || r.bytes_written > 0 => {}
                Ok(_) | Err(MZError::Buf) => break, // input exhausted mid-stream
                Err(e) => {
                    return Err(Error::Field {
                        what: "IOLOG zlib stream",
                        detail: format!("corrupt deflate data ({e:?})"),
                    })
                }
            }
        }
        complete &= ended;
        if !ended || !multi {
            break;
        }
    }
    Ok((out, complete))
}

impl IoLog {
    fn header(&self, w: &mut Writer) {
        w.u64(self.samples.len() as u64);
        w.u32s(&[
            self.thread_number,
            self.log_type,
            self.compressed,
            self.log_offset,
            self.log_prio,
            self.hist_coarseness,
        ]);
        w.str_fixed(&self.name, 256);
    }

    fn records(&self) -> Vec<u8> {
        let mut w = Writer::default();
        for s in &self.samples {
            w.u64(s.time);
            w.u64(s.value);
            let mut ddir = s.ddir & !(DDIR_OFFSET_FLAG | DDIR_PRIO_FLAG);
            if s.offset.is_some() {
                ddir |= DDIR_OFFSET_FLAG;
            }
            if s.prio_logged {
                ddir |= DDIR_PRIO_FLAG;
            }
            w.u32(ddir);
            w.u16(s.priority);
            w.u16(0);
            w.u64(s.bs);
            if let Some(o) = s.offset {
                w.u64(o);
            }
            if self.log_type == LOG_HIST && self.compressed == XMIT_COMPRESSED {
                w.zeros(16);
                match &s.hist {
                    Some(h) => w.u64s(&h[..]),
                    None => w.zeros(PLAT_NR * 8),
                }
            }
        }
        w.buf
    }

    /// The data part as sent: raw records, or one zlib stream with `compressed` = 1.
    /// (Store-compressed logs are not produced.)
    fn data(&self) -> Vec<u8> {
        let raw = self.records();
        if self.compressed == XMIT_COMPRESSED {
            miniz_oxide::deflate::compress_to_vec_zlib(&raw, 6)
        } else {
            raw
        }
    }

    /// The message's frames as fio sends them: the header and the data fragmented
    /// separately.
    pub fn encode_frames(&self, tag: u64) -> Vec<u8> {
        let mut h = Writer::with_capacity(HEADER_LEN);
        self.header(&mut h);
        encode_parts(Opcode::IoLog as u16, tag, &[&h.buf, &self.data()])
    }
}

impl Payload for IoLog {
    const OPCODE: Opcode = Opcode::IoLog;
    fn encode(&self) -> Vec<u8> {
        let mut w = Writer::default();
        self.header(&mut w);
        w.bytes(&self.data());
        w.buf
    }

    fn decode(p: &[u8]) -> Result<Self> {
        let mut r = Reader::new(p, "IOLOG header");
        let nr_samples = r.u64()?;
        let [thread_number, log_type, compressed, log_offset, log_prio, hist_coarseness] =
            r.u32s()?;
        let name = r.str_fixed(256)?;
        let body = r.rest();
        let (data, mut incomplete) = match compressed {
            PLAIN => (body.to_vec(), false),
            XMIT_COMPRESSED | STORE_COMPRESSED => {
                // A stream sent for nr_samples records cannot legitimately inflate to more
                // than that many of the largest records (store-compressed logs announce 0).
                let limit = match compressed {
                    XMIT_COMPRESSED => nr_samples
                        .saturating_mul((SAMPLE_OFFSET_LEN + HIST_ENTRY_LEN) as u64)
                        .min(MAX_INFLATED as u64) as usize,
                    _ => MAX_INFLATED,
                };
                let (d, ok) = inflate_all(body, limit, compressed == STORE_COMPRESSED)?;
                (d, !ok)
            }
            c => {
                return Err(Error::Field {
                    what: "IOLOG compressed",
                    detail: format!("unknown value {c}"),
                })
            }
        };
        let rec = match data.get(16..20) {
            Some(b) if u32::from_le_bytes([b[0], b[1], b[2], b[3]]) & DDIR_OFFSET_FLAG != 0 => {
                SAMPLE_OFFSET_LEN
            }
            _ => SAMPLE_LEN,
        };
        let hist = log_type == LOG_HIST && compressed == XMIT_COMPRESSED;
        let step = rec + if hist { HIST_ENTRY_LEN } else { 0 };
        let mut samples = Vec::with_capacity(data.len() / step);
        for chunk in data.chunks(step) {
            if chunk.len() < step {
                incomplete = true;
                break;
            }
            let mut s = Reader::new(chunk, "IOLOG sample");
            let time = s.u64()?;
            let value = s.u64()?;
            let ddir = s.u32()?;
            let priority = s.u16()?;
            s.skip(2)?;
            let bs = s.u64()?;
            let offset = if rec == SAMPLE_OFFSET_LEN {
                Some(s.u64()?)
            } else {
                None
            };
            let hist = if hist {
                s.skip(16)?;
                let mut h = Box::new([0u64; PLAT_NR]);
                s.u64_into(&mut h[..])?;
                Some(h)
            } else {
                None
            };
            samples.push(IoSample {
                time,
                value,
                ddir: ddir & !(DDIR_OFFSET_FLAG | DDIR_PRIO_FLAG),
                prio_logged: ddir & DDIR_PRIO_FLAG != 0,
                priority,
                bs,
                offset,
                hist,
            });
        }
        if compressed != STORE_COMPRESSED && (samples.len() as u64) < nr_samples {
            incomplete = true;
        }
        Ok(IoLog {
            nr_samples,
            thread_number,
            log_type,
            compressed,
            log_offset,
            log_prio,
            hist_coarseness,
            name,
            samples,
            incomplete,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::read_message;

    fn log(compressed: u32, offsets: bool) -> IoLog {
        IoLog {
            nr_samples: 3,
            thread_number: 1,
            log_type: LOG_BW,
            compressed,
            log_offset: 0,
            log_prio: 0,
            hist_coarseness: 0,
            name: "bwlog_bw.1.log".into(),
            samples: (0..3)
                .map(|i| IoSample {
                    time: 1000 * i,
                    value: 5000 + i,
                    ddir: (i % 2) as u32,
                    prio_logged: i == 2,
                    priority: 0,
                    bs: 4096,
                    offset: offsets.then_some(i * 4096),
                    hist: None,
                })
                .collect(),
            incomplete: false,
        }
    }

    #[test]
    fn plain_and_compressed_round_trip() {
        for c in [PLAIN, XMIT_COMPRESSED] {
            for off in [false, true] {
                let l = log(c, off);
                let b = l.encode();
                if c == PLAIN {
                    let rec = if off { 40 } else { 32 };
                    assert_eq!(b.len(), HEADER_LEN + 3 * rec);
                    assert_eq!(b[HEADER_LEN + rec + 16], 1);
                    assert_eq!(b[HEADER_LEN + rec + 19] & 0x80 != 0, off);
                } else {
                    assert_eq!(b[HEADER_LEN], 0x78);
                }
                assert_eq!(IoLog::decode(&b).unwrap(), l);
                let frames = l.encode_frames(7);
                let m = read_message(&mut &frames[..]).unwrap();
                assert_eq!(m.payload, b);
            }
        }
    }

    #[test]
    fn truncated_zlib_stream_is_accepted() {
        // A long log, compressed, with the trailer (and more) cut off as fio 3.33 does.
        let mut l = log(XMIT_COMPRESSED, false);
        l.samples = (0..2000)
            .map(|i| IoSample {
                time: i,
                value: i * 3,
                ddir: 0,
                prio_logged: false,
                priority: 0,
                bs: 4096,
                offset: None,
                hist: None,
            })
            .collect();
        let mut b = l.encode();
        b.truncate(b.len() - 4);
        let d = IoLog::decode(&b).unwrap();
        assert!(d.incomplete);
        assert!(d.samples.len() <= 2000);
        assert_eq!(d.samples[..], l.samples[..d.samples.len()]);
        // The 8-byte empty stream of a log without samples.
        let mut h = Writer::default();
        log(XMIT_COMPRESSED, false).header(&mut h);
        let mut b = h.buf.clone();
        b[0] = 0;
        b.extend_from_slice(&[0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]);
        let d = IoLog::decode(&b).unwrap();
        assert!(d.samples.is_empty() && !d.incomplete);
        // Garbage is an error, not a panic.
        let mut bad = h.buf;
        bad.extend_from_slice(&[0x78, 0x9c, 0xff, 0xff, 0xff, 0xff, 0x12]);
        assert!(IoLog::decode(&bad).is_err());
        assert!(IoLog::decode(&[0u8; 100]).is_err());
    }

    #[test]
    fn hist_log_and_store_compressed() {
        let mut l = log(XMIT_COMPRESSED, false);
        l.log_type = LOG_HIST;
        for (i, s) in l.samples.iter_mut().enumerate() {
            let mut h = Box::new([0u64; PLAT_NR]);
            h[i * 10] = i as u64 + 1;
            s.hist = Some(h);
        }
        let b = l.encode();
        assert_eq!(IoLog::decode(&b).unwrap(), l);
        // compressed = 2: independent streams of raw records, nr_samples 0.
        let raw = log(PLAIN, false).records();
        let mut p = Writer::default();
        let mut s = log(STORE_COMPRESSED, false);
        s.samples.clear();
        s.header(&mut p);
        let mut b = p.buf;
        b.extend(miniz_oxide::deflate::compress_to_vec_zlib(&raw[..64], 6));
        b.extend(miniz_oxide::deflate::compress_to_vec_zlib(&raw[64..], 6));
        let d = IoLog::decode(&b).unwrap();
        assert_eq!(d.samples, log(PLAIN, false).samples);
        assert!(!d.incomplete);
    }
}
