//! fio's compressed logs (`log_compression`, `log_store_compressed`, `--inflate-log`): the
//! samples in fio 3.33's binary layout, deflated as a series of independent zlib streams.
//!
//! A sample is 32 bytes, 40 with an offset: `u64 time`, `u64 value`, `u32 ddir` (bit 31: an
//! offset follows; bit 30: the priority is logged raw, `log_prio`), `u16 priority`, two
//! bytes of padding, `u64 bs`, then `u64 offset` when bit 31 is set. All little-endian.
//! `--inflate-log` prints each stream's samples as the text lines of the log.

use flexio_output::logs::sample_line;
use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZError, MZFlush, MZStatus};

pub const OFFSET_BIT: u32 = 0x8000_0000;
pub const PRIO_BIT: u32 = 0x4000_0000;

/// Size of one record.
pub fn record_size(offset: bool) -> usize {
    if offset {
        40
    } else {
        32
    }
}

/// Append one sample in fio's binary layout.
#[allow(clippy::too_many_arguments)]
pub fn encode(
    out: &mut Vec<u8>,
    time_ms: u64,
    value: u64,
    ddir: u8,
    bs: u64,
    offset: Option<u64>,
    prio: u16,
    prio_raw: bool,
) {
    let mut d = ddir as u32;
    if offset.is_some() {
        d |= OFFSET_BIT;
    }
    if prio_raw {
        d |= PRIO_BIT;
    }
    out.extend_from_slice(&time_ms.to_le_bytes());
    out.extend_from_slice(&value.to_le_bytes());
    out.extend_from_slice(&d.to_le_bytes());
    out.extend_from_slice(&prio.to_le_bytes());
    out.extend_from_slice(&[0, 0]);
    out.extend_from_slice(&bs.to_le_bytes());
    if let Some(o) = offset {
        out.extend_from_slice(&o.to_le_bytes());
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

/// The text lines of one stream's samples (fio's `flush_samples`).
pub fn text_of(raw: &[u8], out: &mut String) -> Result<(), String> {
    if raw.len() < 32 {
        return if raw.is_empty() {
            Ok(())
        } else {
            Err(format!("{} bytes are not a log sample", raw.len()))
        };
    }
    let u64_at = |b: &[u8], i: usize| {
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[i..i + 8]);
        u64::from_le_bytes(a)
    };
    let first = u32::from_le_bytes([raw[16], raw[17], raw[18], raw[19]]);
    let offset = first & OFFSET_BIT != 0;
    let prio_raw = first & PRIO_BIT != 0;
    let size = record_size(offset);
    for s in raw.chunks_exact(size) {
        let d = u32::from_le_bytes([s[16], s[17], s[18], s[19]]) & !(OFFSET_BIT | PRIO_BIT);
        let prio = u16::from_le_bytes([s[20], s[21]]);
        sample_line(
            out,
            u64_at(s, 0),
            u64_at(s, 8),
            d.min(u8::MAX as u32) as u8,
            u64_at(s, 24),
            offset.then(|| u64_at(s, 32)),
            prio,
            prio_raw,
        );
    }
    Ok(())
}

/// `--inflate-log`: the text of a `.log.fz` file.
pub fn inflate_file(path: &std::path::Path) -> Result<String, String> {
    let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut text = String::new();
    let mut at = 0;
    while at < data.len() {
        let (raw, used) = inflate_one(&data[at..])?;
        text_of(&raw, &mut text)?;
        at += used;
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_round_trip_through_streams() {
        let mut a = Vec::new();
        encode(&mut a, 0, 247823, 0, 4096, Some(0), 0, false);
        encode(&mut a, 1, 43391, 1, 4096, Some(4096), 0x2001, false);
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
        encode(&mut b, 7, 99, 2, 512, None, 0x4003, true);
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.log.fz");
        let mut file = deflate(&a);
        file.extend(deflate(&b));
        std::fs::write(&p, &file).unwrap();
        assert_eq!(
            inflate_file(&p).unwrap(),
            "0, 247823, 0, 4096, 0, 0\n1, 43391, 1, 4096, 4096, 1\n7, 99, 2, 512, 0x4003\n"
        );
        std::fs::write(&p, &file[..file.len() - 3]).unwrap();
        assert!(inflate_file(&p).is_err());
    }
}
