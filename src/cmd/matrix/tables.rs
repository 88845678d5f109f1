//! What `flexio matrix` prints: one iozone-style table per operation (rows: file size in
//! KiB, columns: record size in KiB, values in KiB/s), and the JSON document (one object
//! per cell) that `flexio report` reads.

use super::ops::Cell;
#[cfg(test)]
use super::ops::Op;
use super::Args;
use crate::cmd::NOISY;
use serde_json::{json, Value};
use std::fmt::Write;

/// A cell is odd when it is this many times above, or below, both of its row neighbours
/// (the same file size, the next smaller and larger records).
pub const ODD: f64 = 3.0;

/// One cell of the matrix over its `--repeat` runs.
pub struct Summary<'a> {
    /// The run whose KiB/s is nearest the median (its latency and counts go with it).
    pub cell: &'a Cell,
    /// The median KiB/s, and every run's in round order.
    pub kib_s: f64,
    pub runs: Vec<f64>,
    /// Its runs disagree: (max - min) / median above [`NOISY`].
    pub noisy: bool,
    /// Far from both row neighbours ([`ODD`]): real when its runs agree, noise when not.
    pub odd: bool,
    /// The neighbours' medians, when it is odd.
    pub neighbours: Option<(f64, f64)>,
}

/// The cells grouped over their rounds, in the order they were first measured.
pub fn summarise(cells: &[Cell]) -> Vec<Summary<'_>> {
    let mut keys: Vec<(super::ops::Op, u64, u64)> = Vec::new();
    for c in cells {
        let k = (c.op, c.file_size, c.record);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let mut out: Vec<Summary> = keys
        .iter()
        .map(|&(op, f, r)| {
            let mine: Vec<&Cell> = cells
                .iter()
                .filter(|c| c.op == op && c.file_size == f && c.record == r)
                .collect();
            let runs: Vec<f64> = mine.iter().map(|c| c.kib_s()).collect();
            let mut sorted = runs.clone();
            sorted.sort_by(f64::total_cmp);
            let n = sorted.len();
            let med = if n % 2 == 1 {
                sorted[n / 2]
            } else {
                (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
            };
            let cell = mine
                .iter()
                .min_by(|x, y| (x.kib_s() - med).abs().total_cmp(&(y.kib_s() - med).abs()))
                .copied()
                .unwrap_or(mine[0]);
            Summary {
                cell,
                kib_s: med,
                noisy: crate::cmd::runs_disagree(n, sorted[0], sorted[n - 1], med),
                runs,
                odd: false,
                neighbours: None,
            }
        })
        .collect();
    // Odd cells: against the next smaller and larger records of the same row.
    let meds: Vec<((super::ops::Op, u64, u64), f64)> = out
        .iter()
        .map(|x| ((x.cell.op, x.cell.file_size, x.cell.record), x.kib_s))
        .collect();
    for x in out.iter_mut() {
        let (op, f, r) = (x.cell.op, x.cell.file_size, x.cell.record);
        let row: Vec<&((super::ops::Op, u64, u64), f64)> =
            meds.iter().filter(|(k, _)| k.0 == op && k.1 == f).collect();
        let below = row.iter().filter(|(k, _)| k.2 < r).max_by_key(|(k, _)| k.2);
        let above = row.iter().filter(|(k, _)| k.2 > r).min_by_key(|(k, _)| k.2);
        if let (Some(b), Some(a)) = (below, above) {
            let (lo, hi) = (b.1.min(a.1), b.1.max(a.1));
            if lo > 0.0 && (x.kib_s > hi * ODD || x.kib_s * ODD < lo) {
                x.odd = true;
                x.neighbours = Some((b.1, a.1));
            }
        }
    }
    out
}

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
    let sums = summarise(cells);
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
    if a.repeat > 1 {
        let _ = writeln!(
            o,
            "each cell: the median of {} runs; ~ its runs disagree (range over {:.0}% of the median), ! far from both row neighbours ({ODD}x)",
            a.repeat,
            NOISY * 100.0
        );
    }
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
                match sums
                    .iter()
                    .find(|x| x.cell.op == op && x.cell.file_size == *f && x.cell.record == *r)
                {
                    Some(x) if x.odd || x.noisy => {
                        let m = if x.odd { '!' } else { '~' };
                        let _ = write!(o, "{:>9.0}{m}", x.kib_s);
                    }
                    Some(x) => {
                        let _ = write!(o, "{:>10.0}", x.kib_s);
                    }
                    None => {
                        let _ = write!(o, "{:>10}", "");
                    }
                }
            }
            o.push('\n');
        }
    }
    let flagged: Vec<&Summary> = sums.iter().filter(|x| x.odd || x.noisy).collect();
    if !flagged.is_empty() {
        let _ = writeln!(o);
    }
    for x in flagged {
        let c = x.cell;
        let runs = if x.runs.len() > 1 {
            let (lo, hi) = x
                .runs
                .iter()
                .fold((f64::MAX, 0.0f64), |(l, h), v| (l.min(*v), h.max(*v)));
            format!(
                " (runs {lo:.0} to {hi:.0}: {})",
                if x.noisy {
                    "they disagree"
                } else {
                    "reproducible"
                }
            )
        } else {
            " (one run: --repeat tells a real cell from noise)".to_string()
        };
        let nb = x
            .neighbours
            .map(|(b, a)| format!(", against {b:.0} and {a:.0} beside it"))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "{} {}: {} KiB file, {} KiB records: {:.0} KiB/s{runs}{nb}",
            if x.odd { "odd cell" } else { "noisy cell" },
            c.op.name(),
            c.file_size >> 10,
            c.record >> 10,
            x.kib_s
        );
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

/// The JSON document: settings, then one object per cell (the median of its runs, with
/// every run's KiB/s and the flags), and with `--repeat` every run. `error` is why the
/// sweep stopped early, if it did.
pub fn json(a: &Args, cells: &[Cell], error: Option<&str>) -> String {
    let (files, recs) = axes(cells);
    let sums: Vec<Value> = summarise(cells)
        .iter()
        .map(|x| {
            let mut v = cell_json(x.cell);
            v["kib_s"] = json!((x.kib_s * 100.0).round() / 100.0);
            v["runs_kib_s"] = json!(x
                .runs
                .iter()
                .map(|r| (r * 100.0).round() / 100.0)
                .collect::<Vec<_>>());
            v["noisy"] = json!(x.noisy);
            v["odd"] = json!(x.odd);
            v
        })
        .collect();
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
        "repeat": a.repeat,
        "complete": error.is_none(),
        "error": error,
        "cells": sums,
        "runs": if a.repeat > 1 {
            json!(cells
                .iter()
                .map(|c| {
                    let mut v = cell_json(c);
                    v["round"] = json!(c.round);
                    v
                })
                .collect::<Vec<_>>())
        } else {
            Value::Null
        },
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

    fn args(ops: Vec<Op>, repeat: u32) -> super::super::Args {
        super::super::Args {
            scratch: Default::default(),
            file: PathBuf::from("/t/f"),
            min_file: 0,
            max_file: 0,
            min_record: 0,
            max_record: 0,
            all_records: false,
            tests: None,
            ops,
            direct: false,
            fsync: false,
            cold: false,
            stride: 17,
            ioengine: "psync".into(),
            repeat,
            json: None,
            html: None,
            output: Default::default(),
        }
    }

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
            round: 1,
        };
        let cells = vec![
            cell(Op::Write, 64, 4, 1_000_000),
            cell(Op::Write, 64, 8, 500_000),
            cell(Op::Write, 128, 4, 1_000_000),
        ];
        let a = args(vec![Op::Write, Op::Read], 1);
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

    #[test]
    fn repeats_give_medians_and_flag_noisy_and_odd_cells() {
        // Three rounds of a row of four records: 8 KiB is odd in every round (a real
        // cell); 16 KiB's runs disagree.
        let cell = |f: u64, r: u64, kib_s: u64, round| Cell {
            op: Op::Write,
            file_size: f << 10,
            record: r << 10,
            bytes: kib_s << 10,
            ios: 1,
            time_ns: 1_000_000_000,
            lat: None,
            via: "fio job (psync)".into(),
            direct: false,
            round,
        };
        let mut cells = Vec::new();
        for (round, noisy) in [(1, 5000), (2, 9000), (3, 5200)] {
            cells.push(cell(64, 4, 5000, round));
            cells.push(cell(64, 8, 354 + round as u64, round));
            cells.push(cell(64, 16, noisy, round));
            cells.push(cell(64, 32, 5100, round));
        }
        let s = summarise(&cells);
        assert_eq!(s.len(), 4);
        assert_eq!(s[0].kib_s, 5000.0);
        assert!(s[1].odd && !s[1].noisy, "8 KiB: odd and reproducible");
        assert_eq!(s[1].kib_s, 356.0);
        assert!(s[2].noisy && !s[2].odd, "16 KiB: noisy");
        assert_eq!(s[2].kib_s, 5200.0);
        assert!(
            !s[0].odd && !s[3].odd,
            "edge cells have one neighbour: never odd"
        );
        let mut a = args(vec![Op::Write], 3);
        let t = text(&a, &cells);
        assert!(t.contains("      356!"), "{t}");
        assert!(t.contains("     5200~"), "{t}");
        assert!(t.contains("odd cell write: 64 KiB file, 8 KiB records: 356 KiB/s (runs 355 to 357: reproducible), against 5000 and 5200 beside it"), "{t}");
        assert!(t.contains("noisy cell write: 64 KiB file, 16 KiB records: 5200 KiB/s (runs 5000 to 9000: they disagree)"), "{t}");
        let j: Value = serde_json::from_str(&json(&a, &cells, None)).unwrap();
        assert_eq!(j["cells"].as_array().unwrap().len(), 4);
        assert_eq!(j["runs"].as_array().unwrap().len(), 12);
        assert_eq!(j["cells"][1]["odd"], true);
        assert_eq!(j["cells"][2]["runs_kib_s"], json!([5000.0, 9000.0, 5200.0]));
        a.repeat = 1;
        let j: Value = serde_json::from_str(&json(&a, &cells[..4], None)).unwrap();
        assert!(j["runs"].is_null());
    }
}
