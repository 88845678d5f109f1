//! `flexio matrix` results (the iozone-style sweep): the JSON document read back, and its
//! section of the HTML report: per operation a heat map of KiB/s over file size x record
//! size (the page-cache, CPU-cache and device tiers show as colour bands) and the same
//! numbers as lines, one per record size.

use crate::charts;
use crate::fmt::esc;
use crate::input::InputError;
use serde_json::Value;
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// One measured cell.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixCell {
    pub op: String,
    pub file_kib: u64,
    pub record_kib: u64,
    pub kib_s: f64,
    /// p99 of the per-record latency in ns, when measured.
    pub p99_ns: Option<u64>,
}

/// A whole sweep.
#[derive(Clone, Debug, Default)]
pub struct Matrix {
    pub path: PathBuf,
    pub label: String,
    /// The scratch file the sweep ran on, and how (engine, O_DIRECT, fsync, cold reads).
    pub file: String,
    pub how: String,
    pub complete: bool,
    pub ops: Vec<String>,
    pub files_kib: Vec<u64>,
    pub records_kib: Vec<u64>,
    pub cells: Vec<MatrixCell>,
}

/// Whether a JSON document is a `flexio matrix` result.
pub fn is_matrix(doc: &Value) -> bool {
    doc.get("flexio matrix").is_some()
}

fn list(v: &Value) -> Vec<u64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// Read a matrix document (see `flexio matrix --json`).
pub fn from_value(doc: &Value, path: &Path) -> Result<Matrix, InputError> {
    if !is_matrix(doc) {
        return Err(InputError("not a flexio matrix result".into()));
    }
    let bad = |what: &str| InputError(format!("flexio matrix result: {what}"));
    let cells = doc["cells"]
        .as_array()
        .ok_or_else(|| bad("no \"cells\" array"))?
        .iter()
        .map(|c| {
            Ok(MatrixCell {
                op: c["operation"]
                    .as_str()
                    .ok_or_else(|| bad("a cell without \"operation\""))?
                    .to_string(),
                file_kib: c["file_kib"]
                    .as_u64()
                    .ok_or_else(|| bad("a cell without \"file_kib\""))?,
                record_kib: c["record_kib"]
                    .as_u64()
                    .ok_or_else(|| bad("a cell without \"record_kib\""))?,
                kib_s: c["kib_s"]
                    .as_f64()
                    .ok_or_else(|| bad("a cell without \"kib_s\""))?,
                p99_ns: c["lat"]["p99_ns"].as_u64(),
            })
        })
        .collect::<Result<Vec<_>, InputError>>()?;
    let mut ops: Vec<String> = doc["operations"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|o| o.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    for c in &cells {
        if !ops.contains(&c.op) {
            ops.push(c.op.clone());
        }
    }
    let mut how = doc["ioengine"].as_str().unwrap_or("?").to_string();
    for (k, text) in [
        ("direct", "O_DIRECT"),
        ("fsync", "fsync timed"),
        ("cold", "cold reads"),
    ] {
        if doc[k].as_bool() == Some(true) {
            how.push_str(", ");
            how.push_str(text);
        }
    }
    Ok(Matrix {
        path: path.to_path_buf(),
        label: path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| path.display().to_string()),
        file: doc["file"].as_str().unwrap_or("").to_string(),
        how,
        complete: doc["complete"].as_bool().unwrap_or(true),
        ops,
        files_kib: list(&doc["file_sizes_kib"]),
        records_kib: list(&doc["record_sizes_kib"]),
        cells,
    })
}

/// Read a file that may be a matrix result: `Ok(None)` when it is valid JSON of another
/// kind (a fio or flexio run result).
pub fn read(path: &Path) -> Result<Option<Matrix>, InputError> {
    let bytes = std::fs::read(path)
        .map_err(|e| InputError(format!("cannot read {}: {e}", path.display())))?;
    // A matrix result is one JSON document (flexio matrix writes nothing else).
    let Ok(doc) = serde_json::from_slice::<Value>(&bytes) else {
        return Ok(None);
    };
    if !is_matrix(&doc) {
        return Ok(None);
    }
    from_value(&doc, path)
        .map(Some)
        .map_err(|e| InputError(format!("{}: {e}", path.display())))
}

impl Matrix {
    /// The cell of `op` at a file and record size.
    pub fn cell(&self, op: &str, file_kib: u64, record_kib: u64) -> Option<&MatrixCell> {
        self.cells
            .iter()
            .find(|c| c.op == op && c.file_kib == file_kib && c.record_kib == record_kib)
    }
}

/// The report's section of one sweep.
pub fn section_html(m: &Matrix) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<h2>Matrix {}: file size x record size ({})</h2><p class=\"method\">Scratch file {} ({} cells{}). KiB/s per operation; colour on a log scale. Small files are served from the CPU and page caches, large ones show the file system and device: the bands of colour are the cache tiers.</p>",
        esc(&m.label),
        esc(&m.how),
        esc(&m.file),
        m.cells.len(),
        if m.complete { "" } else { ", stopped early" }
    );
    o.push_str("<div class=\"charts\">");
    for op in &m.ops {
        if let Some(s) = charts::matrix_heatmap(m, op).render() {
            o.push_str(&s);
        }
        if let Some(s) = charts::matrix_lines(m, op).render() {
            o.push_str(&s);
        }
    }
    o.push_str("</div>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_draws_a_sweep() {
        let doc: Value = serde_json::from_str(
            r#"{"flexio matrix": 1, "file": "/t/f", "ioengine": "psync", "direct": false,
            "operations": ["write", "read"], "file_sizes_kib": [64, 128],
            "record_sizes_kib": [4, 8], "complete": true, "cells": [
            {"operation": "write", "file_kib": 64, "record_kib": 4, "kib_s": 1000.0, "lat": null},
            {"operation": "write", "file_kib": 64, "record_kib": 8, "kib_s": 2000.0,
             "lat": {"p99_ns": 5000}},
            {"operation": "write", "file_kib": 128, "record_kib": 4, "kib_s": 4000.0, "lat": null},
            {"operation": "read", "file_kib": 64, "record_kib": 4, "kib_s": 9000.0, "lat": null}]}"#,
        )
        .unwrap();
        let m = from_value(&doc, Path::new("/r/m.json")).unwrap();
        assert_eq!(m.label, "m.json");
        assert_eq!(m.cells.len(), 4);
        assert_eq!(m.cell("write", 64, 8).unwrap().p99_ns, Some(5000));
        let h = section_html(&m);
        // Two heat maps with 3 and 1 coloured cells, two line charts.
        assert_eq!(h.matches("<svg class=\"chart heatmap\"").count(), 2);
        assert_eq!(h.matches("class=\"hc\"").count(), 4);
        assert_eq!(h.matches("<svg class=\"chart\"").count(), 2);
        // The fastest cell is at the top of the ramp, the slowest at the bottom.
        assert!(h.contains("fill=\"#fde725\""));
        assert!(h.contains("fill=\"#440154\""));
        let bad: Value = serde_json::from_str(r#"{"flexio matrix": 1, "cells": [{}]}"#).unwrap();
        assert!(from_value(&bad, Path::new("x"))
            .unwrap_err()
            .0
            .contains("operation"));
        assert!(!is_matrix(&serde_json::json!({"jobs": []})));
    }
}
