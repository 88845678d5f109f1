//! What `flexio matrix` prints: one iozone-style table per operation (rows: file size in
//! KiB, columns: record size in KiB, values in KiB/s), and the JSON document (one object
//! per cell) that `flexio report` reads.

use super::ops::Cell;
#[cfg(test)]
use super::ops::Op;
use super::Args;
use serde_json::{json, Value};
use std::fmt::Write;

/// The file and record sizes that occur in `cells`, ascending.
fn axes(cells: &[Cell]) -> (Vec<u64>, Vec<u64>) {
    let mut f: Vec<u64> = cells.iter().map(|c| c.file_size).collect();
    let mut r: Vec<u64> = cells.iter().map(|c| c.record).collect();
    f.sort_unstable();
    f.dedup();
    r.sort_unstable();
    r.dedup();
    (f, r)
}

/// One table per operation, as iozone's `-R` report lays them out.
pub fn text(a: &Args, cells: &[Cell]) -> String {
    let (files, recs) = axes(cells);
    let mut o = String::new();
    let _ = writeln!(
        o,
        "flexio matrix: {} ({}{}{}{}), KiB/s; rows: file size KiB, columns: record size KiB",
        a.file.display(),
        a.ioengine,
        if a.direct {
            ", O_DIRECT"
        } else {
            ", page cache"
        },
        if a.fsync { ", fsync timed" } else { "" },
        if a.cold { ", cold reads" } else { "" },
    );
    for op in a.ops.iter().copied() {
        if !cells.iter().any(|c| c.op == op) {
            continue;
        }
        let how = if op.stdio() {
            "stdio buffer of one record"
        } else {
            "fio job"
        };
        let _ = writeln!(o, "\n\"{}\" ({}, {how})", op.title(), op.name());
        let _ = write!(o, "{:>10}", "KiB");
        for r in &recs {
            let _ = write!(o, "{:>10}", r >> 10);
        }
        o.push('\n');
        for f in &files {
            let _ = write!(o, "{:>10}", f >> 10);
            for r in &recs {
                match cells
                    .iter()
                    .find(|c| c.op == op && c.file_size == *f && c.record == *r)
                {
                    Some(c) => {
                        let _ = write!(o, "{:>10.0}", c.kib_s());
                    }
                    None => {
                        let _ = write!(o, "{:>10}", "");
                    }
                }
            }
            o.push('\n');
        }
    }
    o
}

fn cell_json(c: &Cell) -> Value {
    let lat = match &c.lat {
        Some(l) => json!({
            "n": l.n,
            "min_ns": l.min_ns,
            "mean_ns": (l.mean_ns * 10.0).round() / 10.0,
            "p50_ns": l.p50_ns,
            "p99_ns": l.p99_ns,
            "max_ns": l.max_ns,
        }),
        None => Value::Null,
    };
    json!({
        "operation": c.op.name(),
        "file_kib": c.file_size >> 10,
        "record_kib": c.record >> 10,
        "kib_s": (c.kib_s() * 100.0).round() / 100.0,
        "bytes": c.bytes,
        "ios": c.ios,
        "time_ns": c.time_ns,
        "via": c.via,
        "direct": c.direct,
        "lat": lat,
    })
}

/// The JSON document: settings, then one object per cell. `error` is why the sweep stopped
/// early, if it did.
pub fn json(a: &Args, cells: &[Cell], error: Option<&str>) -> String {
    let (files, recs) = axes(cells);
    let doc = json!({
        "flexio matrix": 1,
        "flexio version": env!("CARGO_PKG_VERSION"),
        "timestamp": std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0),
        "file": a.file.display().to_string(),
        "ioengine": a.ioengine,
        "direct": a.direct,
        "fsync": a.fsync,
        "cold": a.cold,
        "stride_records": a.stride,
        "operations": a.ops.iter().map(|o| o.name()).collect::<Vec<_>>(),
        "file_sizes_kib": files.iter().map(|f| f >> 10).collect::<Vec<_>>(),
        "record_sizes_kib": recs.iter().map(|r| r >> 10).collect::<Vec<_>>(),
        "complete": error.is_none(),
        "error": error,
        "cells": cells.iter().map(cell_json).collect::<Vec<_>>(),
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

/// Only the operations in `Op::ALL` order appear; used by the tests.
#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    #[test]
    fn table_layout() {
        let cell = |op, f: u64, r: u64, ns| Cell {
            op,
            file_size: f << 10,
            record: r << 10,
            bytes: f << 10,
            ios: f / r,
            time_ns: ns,
            lat: None,
            via: "fio job (psync)".into(),
            direct: false,
        };
        let cells = vec![
            cell(Op::Write, 64, 4, 1_000_000),
            cell(Op::Write, 64, 8, 500_000),
            cell(Op::Write, 128, 4, 1_000_000),
        ];
        let a = super::super::Args {
            file: PathBuf::from("/t/f"),
            min_file: 0,
            max_file: 0,
            min_record: 0,
            max_record: 0,
            all_records: false,
            ops: vec![Op::Write, Op::Read],
            direct: false,
            fsync: false,
            cold: false,
            stride: 17,
            ioengine: "psync".into(),
            json: None,
            json_stdout: false,
        };
        let t = text(&a, &cells);
        assert!(t.contains("\"Writer report\" (write, fio job)"), "{t}");
        assert!(!t.contains("Reader report"));
        let lines: Vec<&str> = t.lines().collect();
        let hdr = lines
            .iter()
            .position(|l| l.trim_start().starts_with("KiB"))
            .unwrap();
        assert_eq!(lines[hdr], "       KiB         4         8");
        assert_eq!(lines[hdr + 1], "        64     64000    128000");
        assert_eq!(lines[hdr + 2], "       128    128000          ");
        let j: Value = serde_json::from_str(&json(&a, &cells, None)).unwrap();
        assert_eq!(j["cells"].as_array().unwrap().len(), 3);
        assert_eq!(j["cells"][1]["kib_s"], 128000.0);
        assert_eq!(j["record_sizes_kib"], json!([4, 8]));
    }
}
