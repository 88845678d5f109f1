//! `--interval-stream=FILE|-`: one JSON object per line for each job thread, direction and
//! interval (docs/schema/interval-stream.schema.json). Each line is written with one
//! `write` of the whole line, so a run killed mid-stream leaves complete lines behind.

use super::JobInterval;
use std::fs::File;
use std::io::Write;
use std::sync::Mutex;

/// The stream's format version (`schema_version` on every line).
pub const SCHEMA_VERSION: u32 = 1;

pub struct Stream {
    out: Mutex<Out>,
    /// Where it goes, for error messages.
    name: String,
}

enum Out {
    Stdout,
    File(File),
}

impl Stream {
    /// `-` is standard output; a file is created (or truncated) now, before any I/O.
    pub fn open(path: &str) -> Result<Stream, String> {
        let out = if path == "-" {
            Out::Stdout
        } else {
            Out::File(
                File::create(path)
                    .map_err(|e| format!("--interval-stream: cannot create '{path}': {e}"))?,
            )
        };
        Ok(Stream {
            out: Mutex::new(out),
            name: if path == "-" {
                "standard output".into()
            } else {
                path.to_string()
            },
        })
    }

    /// The lines of one sample's intervals; `Err` names the stream.
    pub fn write(
        &self,
        time_unix_ms: u64,
        elapsed_ms: u64,
        ivs: &[JobInterval],
    ) -> Result<(), String> {
        let mut g = self.out.lock().unwrap_or_else(|e| e.into_inner());
        for iv in ivs {
            for d in 0..3 {
                if iv.result.stats.dirs[d].total_ios == 0 && iv.delta.dirs[d].ios == 0 {
                    continue;
                }
                let l = line(time_unix_ms, elapsed_ms, iv, d);
                let r = match &mut *g {
                    Out::Stdout => flexio_run::notes::stdout(l.as_bytes()),
                    Out::File(f) => f.write_all(l.as_bytes()),
                };
                r.map_err(|e| format!("--interval-stream: cannot write to {}: {e}", self.name))?;
            }
        }
        Ok(())
    }
}

const DIRS: [&str; 3] = ["read", "write", "trim"];

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// A number as JSON (finite; rounded to 3 decimals).
fn num(v: f64) -> String {
    if !v.is_finite() {
        return "0".into();
    }
    let r = (v * 1000.0).round() / 1000.0;
    if r == r.trunc() && r.abs() < 1e15 {
        format!("{}", r as i64)
    } else {
        format!("{r}")
    }
}

/// One line: job thread `iv`, direction `d`.
pub fn line(time_unix_ms: u64, elapsed_ms: u64, iv: &JobInterval, d: usize) -> String {
    let x = &iv.delta.dirs[d];
    let secs = iv.ms as f64 / 1000.0;
    let per_s = |v: u64| if secs > 0.0 { v as f64 / secs } else { 0.0 };
    let kind = if iv.result.params.lat_percentiles {
        "lat"
    } else {
        "clat"
    };
    let h = x.to_hist();
    let n = h.total();
    let mut pct = String::new();
    for (p, v) in h.percentiles(&iv.result.params.percentile_list, n) {
        if !pct.is_empty() {
            pct.push(',');
        }
        pct.push_str(&format!("\"{p:.6}\":{v}"));
    }
    let mut bins = String::new();
    for &(i, c) in &x.hist {
        if !bins.is_empty() {
            bins.push(',');
        }
        bins.push_str(&format!("\"{}\":{c}", flexio_stats::hist::idx_to_val(i)));
    }
    let mean = if x.lat_n > 0 {
        x.lat_sum_ns as f64 / x.lat_n as f64
    } else {
        0.0
    };
    format!(
        concat!(
            "{{\"schema_version\":{},\"time_unix_ms\":{},\"elapsed_ms\":{},\"interval_ms\":{},",
            "\"job\":{},\"thread\":{},\"group\":{},\"direction\":\"{}\",",
            "\"ios\":{},\"bytes\":{},\"iops\":{},\"bw_bytes\":{},\"job_errors\":{},",
            "\"latency\":{{\"kind\":\"{}\",\"n\":{},\"sum_ns\":{},\"mean_ns\":{},",
            "\"percentiles\":{{{}}},\"bins\":{{{}}}}},",
            "\"restarted\":{},\"last\":{}}}\n"
        ),
        SCHEMA_VERSION,
        time_unix_ms,
        elapsed_ms,
        iv.ms,
        json_str(&iv.result.name),
        iv.plan.thread_number,
        iv.result.groupid,
        DIRS[d],
        x.ios,
        x.bytes,
        num(per_s(x.ios)),
        num(per_s(x.bytes)),
        iv.delta.errors,
        kind,
        x.lat_n,
        x.lat_sum_ns,
        num(mean),
        pct,
        bins,
        iv.delta.restarted,
        iv.last,
    )
}
