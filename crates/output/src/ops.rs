//! flexio's per-operation table (engines with several kinds of operation: mdtree's
//! mkdir, create, ...; cmdtime's command) for the normal output, after the job's block.
//! Lines start with words fio never prints there, so parsers of fio's lines skip them.
//!
//! Columns: the count; `ops/s`, operations per second of time spent in the operation
//! (fileop's figure); `phase ops/s`, the count over the span from the first to the last
//! operation of the kind (mdtest's phase rate); mean, stdev, min, percentiles, max.

use flexio_stats::ops::OpReport;
use flexio_stats::report::JobReport;
use std::fmt::Write as _;

/// fio's default percentile list: with it the table shows four of them (all are in JSON).
const FIO_DEFAULT_LIST: [f64; 17] = [
    1.0, 5.0, 10.0, 20.0, 30.0, 40.0, 50.0, 60.0, 70.0, 80.0, 90.0, 95.0, 99.0, 99.5, 99.9, 99.95,
    99.99,
];
const TABLE_DEFAULT: [f64; 4] = [50.0, 95.0, 99.0, 99.9];

/// A duration in a table cell: ns, us, ms or s with two decimals.
pub fn cell_ns(ns: f64) -> String {
    if ns >= 1e9 {
        format!("{:.2}s", ns / 1e9)
    } else if ns >= 1e6 {
        format!("{:.2}ms", ns / 1e6)
    } else if ns >= 1e3 {
        format!("{:.2}us", ns / 1e3)
    } else {
        format!("{ns:.0}ns")
    }
}

/// `99.9` → `p99.9`, `50` → `p50`.
fn pct_label(p: f64) -> String {
    let s = format!("{p:.4}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("p{s}")
}

/// Which percentiles of the job's list the table shows.
fn shown(list: &[f64]) -> Vec<f64> {
    if list == FIO_DEFAULT_LIST {
        TABLE_DEFAULT.to_vec()
    } else {
        list.to_vec()
    }
}

/// The table of a job's operations (nothing for jobs without kinds of operation). Kinds
/// that ran no operation (an operation the job left out) are not listed here.
pub fn table(out: &mut String, j: &JobReport) {
    let rows: Vec<&OpReport> = j.ops.iter().filter(|o| o.count > 0).collect();
    if rows.is_empty() {
        return;
    }
    let pcts = shown(&j.params.percentile_list);
    let _ = write!(
        out,
        "  per operation (flexio):\n    {:<10} {:>10} {:>12} {:>12} {:>9} {:>9} {:>9}",
        "operation", "count", "ops/s", "phase ops/s", "mean", "stdev", "min"
    );
    for p in &pcts {
        let _ = write!(out, " {:>9}", pct_label(*p));
    }
    let _ = writeln!(out, " {:>9}", "max");
    for o in rows {
        let l = &o.lat;
        let _ = write!(
            out,
            "    {:<10} {:>10} {:>12.1} {:>12.1} {:>9} {:>9} {:>9}",
            o.name,
            o.count,
            o.ops_per_s,
            o.span_ops_per_s,
            cell_ns(l.mean_ns),
            cell_ns(l.stddev_ns),
            cell_ns(l.min_ns as f64)
        );
        for p in &pcts {
            let v = l
                .percentiles
                .as_ref()
                .and_then(|v| v.iter().find(|(q, _)| q == p))
                .map(|(_, v)| cell_ns(*v as f64))
                .unwrap_or_else(|| "-".into());
            let _ = write!(out, " {v:>9}");
        }
        let _ = writeln!(out, " {:>9}", cell_ns(l.max_ns as f64));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_and_cells() {
        assert_eq!(pct_label(99.9), "p99.9");
        assert_eq!(pct_label(50.0), "p50");
        assert_eq!(pct_label(99.99), "p99.99");
        assert_eq!(cell_ns(1500.0), "1.50us");
        assert_eq!(shown(&FIO_DEFAULT_LIST), TABLE_DEFAULT.to_vec());
        assert_eq!(shown(&[90.0]), vec![90.0]);
    }
}
