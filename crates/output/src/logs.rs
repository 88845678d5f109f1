//! fio's log file lines (`write_lat_log`, `write_bw_log`, `write_iops_log`,
//! `write_hist_log`) and flexio's per-interval JSON Lines record. Numbers come in; bytes go
//! out:
//!
//! ```text
//! <time_ms>, <value>, <ddir>, <bs>, <prio>              default
//! <time_ms>, <value>, <ddir>, <bs>, <offset>, <prio>    log_offset=1
//! <time_ms>, <ddir>, <bs>, <bin0>, ..., <binN>          histogram log
//! ```

use flexio_stats::interval::IntervalRecord;
use std::fmt::Write as _;

/// One sample line of a lat/clat/slat/bw/iops log. `prio_raw` prints the priority value
/// (log_prio=1) as `0x....`; otherwise fio's 0/1 "high priority" flag.
#[allow(clippy::too_many_arguments)]
pub fn sample_line(
    out: &mut String,
    time_ms: u64,
    value: u64,
    ddir: u8,
    bs: u64,
    offset: Option<u64>,
    prio: u16,
    prio_raw: bool,
) {
    sample_line_ext(
        out,
        time_ms,
        (value, None),
        ddir,
        bs,
        offset,
        (prio, prio_raw),
        None,
    );
}

/// [`sample_line`] with fio 3.37's second value column (`log_window_value=both`) and fio
/// 3.38's trailing issue-time column (`log_issue_time`):
/// `time, value[, value1], ddir, bs[, offset], prio[, issue_time]`.
#[allow(clippy::too_many_arguments)]
pub fn sample_line_ext(
    out: &mut String,
    time_ms: u64,
    (value, value1): (u64, Option<u64>),
    ddir: u8,
    bs: u64,
    offset: Option<u64>,
    (prio, prio_raw): (u16, bool),
    issue_ns: Option<u64>,
) {
    let _ = write!(out, "{time_ms}, {value}, ");
    if let Some(v1) = value1 {
        let _ = write!(out, "{v1}, ");
    }
    let _ = write!(out, "{ddir}, {bs}, ");
    if let Some(off) = offset {
        let _ = write!(out, "{off}, ");
    }
    if prio_raw {
        let _ = write!(out, "0x{prio:04x}");
    } else {
        let _ = write!(out, "{}", u16::from(prio >> 13 == 1));
    }
    if let Some(t) = issue_ns {
        let _ = write!(out, ", {t}");
    }
    out.push('\n');
}

/// "00" to "99": two digits at a time.
const DIGITS: &[u8; 200] = b"\
0001020304050607080910111213141516171819\
2021222324252627282930313233343536373839\
4041424344454647484950515253545556575859\
6061626364656667686970717273747576777879\
8081828384858687888990919293949596979899";

/// The decimal digits of `v` appended to `out` (no `fmt` machinery: the log writer
/// formats millions of numbers a second).
#[inline]
pub fn push_u64(out: &mut Vec<u8>, mut v: u64) {
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    while v >= 100 {
        let d = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGITS[d..d + 2]);
    }
    if v >= 10 {
        let d = v as usize * 2;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&DIGITS[d..d + 2]);
    } else {
        at -= 1;
        buf[at] = b'0' + v as u8;
    }
    out.extend_from_slice(&buf[at..]);
}

/// Sample lines ([`sample_line_ext`]'s layout) written as bytes, fast: the columns that
/// rarely change from one line to the next (the time in ms, which thousands of I/Os share;
/// ddir, bs and the priority) are kept formatted and copied.
pub struct SampleWriter {
    offset: bool,
    prio_raw: bool,
    both: bool,
    issue: bool,
    /// The last time: its text with ", " (`time_len` bytes of `head`).
    time: u64,
    head: Vec<u8>,
    /// The last (ddir, bs, prio): `ddir, bs, ` and the priority column.
    key: (u8, u64, u16),
    mid: Vec<u8>,
    prio: Vec<u8>,
}

impl SampleWriter {
    /// Lines with an offset column (`log_offset`), the priority raw (`log_prio`), a second
    /// value (`log_window_value=both`) and the issue time (`log_issue_time`).
    pub fn new(offset: bool, prio_raw: bool, both: bool, issue: bool) -> Self {
        let mut w = SampleWriter {
            offset,
            prio_raw,
            both,
            issue,
            time: 0,
            head: Vec::with_capacity(24),
            key: (0, 0, 0),
            mid: Vec::with_capacity(32),
            prio: Vec::with_capacity(8),
        };
        w.set_time(0);
        w.set_key((0, 0, 0));
        w
    }

    #[cold]
    fn set_time(&mut self, t: u64) {
        self.time = t;
        self.head.clear();
        push_u64(&mut self.head, t);
        self.head.extend_from_slice(b", ");
    }

    #[cold]
    fn set_key(&mut self, key: (u8, u64, u16)) {
        let (ddir, bs, prio) = key;
        self.key = key;
        self.mid.clear();
        push_u64(&mut self.mid, ddir as u64);
        self.mid.extend_from_slice(b", ");
        push_u64(&mut self.mid, bs);
        self.mid.extend_from_slice(b", ");
        self.prio.clear();
        if self.prio_raw {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            self.prio.extend_from_slice(b"0x");
            for k in (0..4).rev() {
                self.prio.push(HEX[(prio >> (4 * k)) as usize & 15]);
            }
        } else {
            self.prio.push(if prio >> 13 == 1 { b'1' } else { b'0' });
        }
    }

    /// One line: `time, value[, value1], ddir, bs[, offset], prio[, issue]`.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub fn line(
        &mut self,
        out: &mut Vec<u8>,
        time_ms: u64,
        value: u64,
        value1: u64,
        ddir: u8,
        bs: u64,
        offset: u64,
        prio: u16,
        issue_ns: u64,
    ) {
        if time_ms != self.time {
            self.set_time(time_ms);
        }
        if (ddir, bs, prio) != self.key {
            self.set_key((ddir, bs, prio));
        }
        out.extend_from_slice(&self.head);
        push_u64(out, value);
        out.extend_from_slice(b", ");
        if self.both {
            push_u64(out, value1);
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(&self.mid);
        if self.offset {
            push_u64(out, offset);
            out.extend_from_slice(b", ");
        }
        out.extend_from_slice(&self.prio);
        if self.issue {
            out.extend_from_slice(b", ");
            push_u64(out, issue_ns);
        }
        out.push(b'\n');
    }
}

/// One histogram-log line: the interval's bucket counts (already coarsened).
pub fn hist_line(out: &mut String, time_ms: u64, ddir: usize, bs: u64, bins: &[u64]) {
    let _ = write!(out, "{time_ms}, {ddir}, {bs}");
    for b in bins {
        let _ = write!(out, ", {b}");
    }
    out.push('\n');
}

fn percentile_members(out: &mut String, pct: &[(f64, u64)]) {
    for (i, (p, v)) in pct.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "\"p{p}\":{v}");
    }
}

fn bin_members(out: &mut String, bins: &[(u64, u64)]) {
    for (i, (v, c)) in bins.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        let _ = write!(out, "\"{v}\":{c}");
    }
}

/// One line of the interval stream (compact JSON, one object per line).
pub fn interval_line(r: &IntervalRecord) -> String {
    let mut s = String::with_capacity(256);
    s.push_str("{\"job\":");
    crate::json::quote(&r.job, &mut s);
    let _ = write!(
        s,
        ",\"thread\":{},\"ddir\":\"{}\",\"start_ms\":{},\"end_ms\":{},\"ios\":{},\"bytes\":{},\"iops\":{:.3},\"bw_bytes\":{},\"clat_ns\":{{",
        r.thread,
        ["read", "write", "trim"][r.ddir.min(2)],
        r.start_ms,
        r.end_ms,
        r.ios,
        r.bytes,
        r.iops,
        r.bw_bytes
    );
    percentile_members(&mut s, &r.clat_pct);
    s.push_str("},\"hist_ns\":{");
    bin_members(&mut s, &r.clat_bins);
    s.push('}');
    if let Some((pct, bins)) = &r.sched {
        s.push_str(",\"sched_lat_ns\":{");
        percentile_members(&mut s, pct);
        s.push_str("},\"sched_hist_ns\":{");
        bin_members(&mut s, bins);
        s.push('}');
    }
    s.push_str("}\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fio_line_layouts() {
        let mut s = String::new();
        sample_line(&mut s, 5, 1234, 0, 4096, None, 0, false);
        sample_line(&mut s, 6, 99, 1, 8192, Some(65536), 0x2001, false);
        sample_line(&mut s, 7, 99, 1, 8192, None, 0x2001, true);
        assert_eq!(
            s,
            "5, 1234, 0, 4096, 0\n6, 99, 1, 8192, 65536, 1\n7, 99, 1, 8192, 0x2001\n"
        );
        let mut h = String::new();
        hist_line(&mut h, 1000, 1, 4096, &[0, 3, 1]);
        let mut x = String::new();
        sample_line_ext(
            &mut x,
            500,
            (54, Some(62938)),
            0,
            0,
            Some(0),
            (0, false),
            None,
        );
        sample_line_ext(
            &mut x,
            0,
            (271199, None),
            0,
            4096,
            Some(61440),
            (0, true),
            Some(102373),
        );
        assert_eq!(
            x,
            "500, 54, 62938, 0, 0, 0, 0\n0, 271199, 0, 4096, 61440, 0x0000, 102373\n"
        );
        assert_eq!(h, "1000, 1, 4096, 0, 3, 1\n");
    }

    #[test]
    fn fast_lines_are_the_reference_lines() {
        // Every column combination, and values around the digit boundaries.
        let values = [
            0u64,
            1,
            9,
            10,
            99,
            100,
            12345,
            999_999,
            u32::MAX as u64,
            u64::MAX,
        ];
        for flags in 0..16u8 {
            let (offset, raw, both, issue) = (
                flags & 1 != 0,
                flags & 2 != 0,
                flags & 4 != 0,
                flags & 8 != 0,
            );
            let mut w = SampleWriter::new(offset, raw, both, issue);
            let (mut fast, mut slow) = (Vec::new(), String::new());
            for (i, &v) in values.iter().enumerate() {
                let t = (i as u64 / 3) * 7; // some lines share their time
                let (ddir, bs, prio) = ((i % 3) as u8, values[(i + 4) % values.len()], 0x2001);
                let prio = if i % 2 == 0 { prio } else { 0 };
                let off = values[(i + 1) % values.len()];
                let v1 = values[(i + 2) % values.len()];
                w.line(&mut fast, t, v, v1, ddir, bs, off, prio, v / 3);
                sample_line_ext(
                    &mut slow,
                    t,
                    (v, both.then_some(v1)),
                    ddir,
                    bs,
                    offset.then_some(off),
                    (prio, raw),
                    issue.then_some(v / 3),
                );
            }
            assert_eq!(String::from_utf8(fast).unwrap(), slow, "flags {flags:04b}");
        }
    }

    #[test]
    fn interval_record_is_one_json_line() {
        let r = IntervalRecord {
            job: "a\"b".into(),
            thread: 2,
            ddir: 1,
            start_ms: 0,
            end_ms: 1000,
            ios: 10,
            bytes: 40960,
            iops: 10.0,
            bw_bytes: 40960,
            clat_pct: vec![(50.0, 1000), (99.9, 2000)],
            clat_bins: vec![(1000, 9), (2000, 1)],
            sched: None,
        };
        let l = interval_line(&r);
        assert_eq!(
            l,
            "{\"job\":\"a\\\"b\",\"thread\":2,\"ddir\":\"write\",\"start_ms\":0,\"end_ms\":1000,\"ios\":10,\"bytes\":40960,\"iops\":10.000,\"bw_bytes\":40960,\"clat_ns\":{\"p50\":1000,\"p99.9\":2000},\"hist_ns\":{\"1000\":9,\"2000\":1}}\n"
        );
    }
}
