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
